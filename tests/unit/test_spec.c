/*
 * test_spec.c — reading specs: muh's format, BAT CAFF (both schemas),
 * Kernel Tuner T1, and errors placed at file:line:col.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "muh/muh.h"

static int parse(const char *text, muh_spec **s, muh_diag *d)
{
	return spec_parse("t.yaml", text, strlen(text), s, d);
}

static int64_t ival(const muh_param *p, size_t i)
{
	assert_int_equal(p->values[i].t, MUH_INT);
	return p->values[i].u.i;
}

static void test_value_forms(void **state)
{
	muh_spec *s;
	muh_diag d;
	assert_int_equal(parse("params:\n"
			       "  L: [3, 1, 3, 2]\n"
			       "  R: {from: 10, to: 1, step: -4}\n"
			       "  P: {pow2: [4, 64]}\n"
			       "  Y: \"[2**i for i in range(0, 6)] + list(range(100, 103))\"\n"
			       "  S: ['ld', 'ldg', \"cs\"]\n"
			       "  F: [0.5, 1e3]\n",
			       &s, &d),
			 MUH_OK);
	assert_int_equal(s->format, SPEC_MUH);
	assert_int_equal(s->nparams, 6);
	assert_int_equal(s->params[0].nvalues, 3); /* duplicates removed, order kept */
	assert_int_equal(ival(&s->params[0], 0), 3);
	assert_int_equal(ival(&s->params[0], 2), 2);
	assert_int_equal(s->params[1].nvalues, 3); /* 10, 6, 2 */
	assert_int_equal(ival(&s->params[1], 2), 2);
	assert_int_equal(s->params[2].nvalues, 5); /* 4..64 */
	assert_int_equal(ival(&s->params[2], 4), 64);
	assert_int_equal(s->params[3].nvalues, 9);
	assert_int_equal(ival(&s->params[3], 5), 32);
	assert_int_equal(ival(&s->params[3], 8), 102);
	assert_int_equal(s->params[4].values[1].t, MUH_STR);
	assert_string_equal(s->params[4].values[1].u.s, "ldg");
	assert_string_equal(s->params[4].values[2].u.s, "cs");
	assert_int_equal(s->params[5].values[1].t, MUH_FLOAT);
	assert_true(s->params[5].values[1].u.f == 1000.0);
	assert_int_equal(s->params[0].line, 2);
	assert_int_equal(s->params[0].col, 3);
	spec_free(s);
}

static void test_sections(void **state)
{
	muh_spec *s;
	muh_diag d;
	const char *t = "name: moe\n"
			"target:\n"
			"  backend: cpu\n"
			"  grid: [\"M // BM\", 1]\n"
			"params:\n"
			"  - {name: BM, values: [16, 32], default: 32}\n"
			"  - {name: W, values: [4, 8]}\n"
			"constraints:\n"
			"  - BM * W <= 256\n"
			"problem: {M: [1, 16, 256], N: 768}\n"
			"hw: h200\n"
			"defaults: {W: 8}\n"
			"seeds:\n"
			"  - {BM: 16, W: 4}\n";
	assert_int_equal(parse(t, &s, &d), MUH_OK);
	assert_string_equal(s->name, "moe");
	assert_string_equal(spec_kv(s, "target.backend")->value, "cpu");
	const muh_kv *g = spec_kv(s, "target.grid.0");
	assert_non_null(g);
	assert_string_equal(g->value, "M // BM");
	assert_int_equal(g->line, 4);
	assert_int_equal(g->col, 11); /* inside the quotes */
	assert_null(spec_kv(s, "target.nothing"));
	assert_true(s->params[0].has_default && s->params[0].default_idx == 1);
	assert_true(s->params[1].has_default && s->params[1].default_idx == 1);
	assert_int_equal(s->nconstraints, 1);
	assert_int_equal(s->constraints[0].line, 9);
	assert_int_equal(s->constraints[0].col, 5);
	assert_int_equal(spec_ninstances(s), 3);
	assert_int_equal(spec_problem_value(s, 0, 2).u.i, 256);
	assert_int_equal(spec_problem_value(s, 1, 2).u.i, 768);
	assert_string_equal(s->hw_ref, "h200");
	assert_int_equal(s->nseeds, 1);
	assert_int_equal(s->seeds[0].idx[0], 0);
	assert_int_equal(s->seeds[0].idx[1], 0);
	spec_free(s);
}

static void test_caff_schemas(void **state)
{
	muh_spec *s;
	muh_diag d;
	const char *newer = "{\"General\": {\"BenchmarkName\": \"GEMM\"},\n"
			    " \"ConfigurationSpace\": {\"TuningParameters\": [\n"
			    "  {\"Name\": \"A\", \"Type\": \"int\", \"Values\": \"[1, 2, 4]\", \"Default\": 2},\n"
			    "  {\"Name\": \"T\", \"Type\": \"boolean\"}],\n"
			    " \"Conditions\": [{\"Expression\": \"A > T\", \"Parameters\": [\"A\", \"T\"]}]}}\n";
	assert_int_equal(spec_parse("x.json", newer, strlen(newer), &s, &d), MUH_OK);
	assert_int_equal(s->format, SPEC_CAFF);
	assert_string_equal(s->name, "GEMM");
	assert_int_equal(s->nparams, 2);
	assert_int_equal(s->params[1].nvalues, 2); /* boolean without values: 0, 1 */
	assert_true(s->params[0].has_default && s->params[0].default_idx == 1);
	assert_string_equal(s->constraints[0].src, "A > T");
	assert_int_equal(s->constraints[0].line, 5);
	assert_int_equal(s->constraints[0].col, 33);
	spec_free(s);

	const char *older = "{\"configuration_space\": {\"tuning_parameters\": [\n"
			    "  {\"name\": \"B\", \"type\": \"int32\", \"values\": \"list(range(32, 128+1, 32))\","
			    " \"default\": \"Runs all\"}], \"constraints\": []}}\n";
	assert_int_equal(spec_parse("y.json", older, strlen(older), &s, &d), MUH_OK);
	assert_int_equal(s->format, SPEC_CAFF);
	assert_int_equal(s->params[0].nvalues, 4);
	assert_false(s->params[0].has_default); /* prose default is not a value */
	spec_free(s);

	const char *t1 = "{\"ConfigurationSpace\": {\"TuningParameters\": [{\"Name\": \"X\", "
			 "\"Type\": \"int\", \"Values\": [1, 2]}], \"Conditions\": []},\n"
			 " \"KernelSpecification\": {\"Language\": \"CUDA\", \"KernelName\": \"k\","
			 " \"LocalSize\": {\"X\": \"X\", \"Y\": \"1\"}}}\n";
	assert_int_equal(spec_parse("z.json", t1, strlen(t1), &s, &d), MUH_OK);
	assert_int_equal(s->format, SPEC_KT_T1);
	assert_string_equal(spec_kv(s, "KernelSpecification.LocalSize.X")->value, "X");
	spec_free(s);
}

static void test_errors(void **state)
{
	muh_spec *s;
	muh_diag d;
	assert_int_equal(parse("params:\n  A: [1, 2]\n  B: []\n", &s, &d), MUH_EINPUT);
	assert_null(s);
	assert_int_equal(d.line, 3);
	assert_non_null(strstr(d.msg, "'B' has no values"));
	assert_string_equal(d.file, "t.yaml");

	assert_int_equal(parse("params:\n  A: {from: 1}\n", &s, &d), MUH_EINPUT);
	assert_int_equal(d.line, 2);
	assert_non_null(strstr(d.msg, "'from' and 'to'"));

	assert_int_equal(parse("params:\n  A: [1]\n  A: [2]\n", &s, &d), MUH_EINPUT);

	assert_int_equal(parse("nothing: here\n", &s, &d), MUH_EINPUT);
	assert_non_null(strstr(d.msg, "params"));

	assert_int_equal(parse("params:\n  A: \"[1, 2,, 3]\"\n", &s, &d), MUH_EINPUT);
	assert_int_equal(d.line, 2);
	assert_true(d.col > 7); /* inside the string, past its opening quote */

	assert_int_equal(parse("params:\n  A: [1, 2]\nseeds:\n  - {A: 5}\n", &s, &d), MUH_EINPUT);
	assert_int_equal(d.line, 4);
	assert_int_equal(d.col, 9);

	assert_int_equal(parse("params: [1, 2\n", &s, &d), MUH_EINPUT);
	assert_true(d.line >= 1);
	assert_non_null(strstr(d.msg, "malformed"));

	assert_int_equal(spec_load("/nonexistent/x.yaml", &s, &d), MUH_EINPUT);
	assert_non_null(strstr(d.msg, "cannot read"));
}

static void test_bat_corpus_loads(void **state)
{
	static const char *const ok[] = {"GEMM", "FFT", "MD", "MD5Hash", "Reduction", "SPMV",
					 "TRIAD", "builtin_vectors", "convolution", "nbody"};
	char path[256];
	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		muh_spec *s;
		muh_diag d;
		snprintf(path, sizeof(path), "corpora/bat/%s-CAFF.json", ok[i]);
		int rc = spec_load(path, &s, &d);
		if (rc)
			fail_msg("%s: %s (%d:%d)", path, d.msg, d.line, d.col);
		assert_true(s->nparams > 0);
		spec_free(s);
	}
	static const char *const bad[] = {"Scan", "Sort"};
	for (size_t i = 0; i < 2; i++) {
		muh_spec *s;
		muh_diag d;
		snprintf(path, sizeof(path), "corpora/bat/%s-CAFF.json", bad[i]);
		assert_int_equal(spec_load(path, &s, &d), MUH_EINPUT);
		assert_true(d.line > 1 && d.col >= 1);
		assert_true(d.src[0] != '\0');
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_value_forms),
		cmocka_unit_test(test_sections),
		cmocka_unit_test(test_caff_schemas),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_bat_corpus_loads),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
