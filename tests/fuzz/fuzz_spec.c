/*
 * fuzz_spec.c — libFuzzer harness for the spec reader (spec_parse).
 *
 * Feeds arbitrary text to spec_parse as a .yaml and as a .json file (muh
 * YAML/JSON, BAT CAFF and Kernel Tuner T1 are told apart by content), touches
 * every string and value it returns, and, when the cartesian product is
 * small, builds the space so that the constraints are compiled and evaluated
 * too. Built only with clang (-DMUH_FUZZ=ON, see cmake/fuzz.cmake).
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "muh/space.h"
#include "muh/spec.h"

static size_t touch(const char *s)
{
	return s ? strlen(s) : 0;
}

static size_t touch_values(const muh_value *v, size_t n)
{
	size_t sum = 0;
	for (size_t i = 0; i < n; i++)
		if (v[i].t == MUH_STR)
			sum += touch(v[i].u.s);
		else if (v[i].t != MUH_INT && v[i].t != MUH_FLOAT)
			__builtin_trap();
	return sum;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const paths[] = {"f.yaml", "f.json"};
	for (int p = 0; p < 2; p++) {
		muh_spec *s = NULL;
		muh_diag d;
		memset(&d, 0, sizeof d);
		if (spec_parse(paths[p], (const char *)data, size, &s, &d) != 0 || !s) {
			spec_free(s);
			continue;
		}
		size_t sum = touch(s->path) + touch(s->name) + touch(s->hw_ref) +
			     touch(spec_format_name(s->format));
		double cart = 1;
		for (size_t i = 0; i < s->nparams; i++) {
			const muh_param *pa = &s->params[i];
			sum += touch(pa->name) + touch_values(pa->values, pa->nvalues);
			if (pa->has_default && pa->default_idx >= pa->nvalues)
				__builtin_trap();
			cart *= (double)pa->nvalues;
		}
		for (size_t i = 0; i < s->nconstraints; i++)
			sum += touch(s->constraints[i].src);
		for (size_t i = 0; i < s->nproblem; i++)
			sum += touch(s->problem[i].name) +
			       touch_values(s->problem[i].values, s->problem[i].nvalues);
		for (size_t i = 0; i < s->nkv; i++)
			sum += touch(s->kv[i].key) + touch(s->kv[i].value);
		for (size_t i = 0; i < s->nseeds; i++)
			for (size_t j = 0; j < s->nparams; j++)
				if (s->seeds[i].idx[j] != SIZE_MAX &&
				    s->seeds[i].idx[j] >= s->params[j].nvalues)
					__builtin_trap();
		size_t ni = spec_ninstances(s);
		for (size_t k = 0; k < s->nproblem && ni; k++) {
			muh_value v = spec_problem_value(s, k, ni - 1);
			sum += touch_values(&v, 1);
		}
		(void)spec_kv(s, "target.backend");
		if (s->nparams && cart <= 4096 && ni) {
			muh_space *sp = NULL;
			muh_diag d2;
			memset(&d2, 0, sizeof d2);
			if (space_build(s, NULL, 0, &sp, &d2) == 0 && sp) {
				sum += (size_t)space_valid(sp);
				space_free(sp);
			}
		}
		(void)sum;
		spec_free(s);
	}
	return 0;
}
