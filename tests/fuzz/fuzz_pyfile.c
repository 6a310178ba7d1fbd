/*
 * fuzz_pyfile.c — libFuzzer harness for muh scan's per-file analysis.
 *
 * Feeds arbitrary bytes to pyfile_analyze() as a module and as a package,
 * and touches every fact it returns so that ASan sees any bad pointer. Built
 * only with clang (-DMUH_FUZZ=ON, see cmake/fuzz.cmake).
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "pyfile.h"

static size_t touch(const char *s)
{
	return s ? strlen(s) : 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	for (int pkg = 0; pkg < 2; pkg++) {
		pyfile *f = pyfile_analyze((const char *)data, size, pkg ? "a.b" : "a.b.c", pkg);
		if (!f)
			continue;
		size_t sum = 0;
		for (int i = 0; i < f->nscopes; i++)
			sum += touch(f->scopes[i].qual) + (size_t)f->scopes[i].nconstexprs;
		for (int i = 0; i < f->nimports; i++)
			sum += touch(f->imports[i].alias) + touch(f->imports[i].module) + touch(f->imports[i].attr);
		for (int i = 0; i < f->nrefs; i++)
			sum += touch(f->refs[i].name) + touch(f->refs[i].obj);
		for (int i = 0; i < f->ncalls; i++)
			sum += touch(f->calls[i].callee) + touch(f->calls[i].fname);
		for (int i = 0; i < f->nknobs; i++) {
			const pf_knob *k = &f->knobs[i];
			sum += touch(k->name) + touch(k->text) + touch(k->eval);
			if (k->start > k->end || k->end > size)
				__builtin_trap();
			for (int j = 0; j < k->nalts; j++)
				if (k->alts[j].end > size || k->alts[j].start > k->alts[j].end)
					__builtin_trap();
		}
		for (int i = 0; i < f->njsons; i++)
			sum += touch(f->jsons[i].glob);
		(void)sum;
		pyfile_free(f);
	}
	return 0;
}
