/*
 * test_kb_cccl.c — CUB tuning policies: the lexical reader on synthetic
 * headers (every shape the CCCL headers use), on the real installed headers
 * (sm_90 reduce must be found with plausible values), finding, selection by
 * architecture, and seeds through a spec's kb.map.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "muh/kb.h"
#include "muh/muh.h"

static const char synthetic[] =
	"// comment with struct Fake { static constexpr int threads = 1; };\n"
	"/* block comment: using X = AgentReducePolicy<1, 1, T, 1, BLOCK_REDUCE_RAKING, LOAD_CS>; */\n"
	"#define MACRO { struct Nope {}; }\n"
	"#include <cub/config.cuh>\n"
	"namespace cub { namespace detail { namespace reduce {\n"
	"enum class op_type { plus, unknown };\n"
	"template <class T, class OffsetT, op_type O> struct sm100_tuning;\n"
	"template <class T, class OffsetT>\n"
	"struct sm100_tuning<float, OffsetT, op_type::plus>\n"
	"{\n"
	"  static constexpr int items              = 16;\n"
	"  static constexpr int threads            = 512;\n"
	"  static constexpr int items_per_vec_load = 2;\n"
	"  static constexpr BlockLoadAlgorithm load_algorithm = BLOCK_LOAD_DIRECT;\n"
	"};\n"
	"template <typename AccumT>\n"
	"struct policy_hub\n"
	"{\n"
	"  struct Policy500 : ChainedPolicy<500, Policy500, Policy500>\n"
	"  {\n"
	"    static constexpr int threads_per_block  = 256;\n"
	"    static constexpr int items_per_thread   = 20;\n"
	"    static constexpr int items_per_vec_load = 4;\n"
	"    using ReducePolicy = AgentReducePolicy<threads_per_block, items_per_thread, AccumT,\n"
	"                                           items_per_vec_load, BLOCK_REDUCE_WARP_REDUCTIONS, LOAD_LDG>;\n"
	"    using SingleTilePolicy = ReducePolicy;\n"
	"  };\n"
	"  struct Policy900\n"
	"      : DefaultPolicy<AccumT>\n"
	"      , ChainedPolicy<900, Policy900, Policy500>\n"
	"  {\n"
	"    using ScanPolicyT = cub::AgentScanPolicy<128, 12, AccumT, BLOCK_LOAD_WARP_TRANSPOSE, LOAD_DEFAULT,\n"
	"                                        BLOCK_STORE_WARP_TRANSPOSE, BLOCK_SCAN_WARP_SCANS,\n"
	"                                        MemBoundScaling<128, 12, AccumT>>;\n"
	"  };\n"
	"  struct Policy1000 : ChainedPolicy<1000, Policy1000, Policy900>\n"
	"  {\n"
	"    template <typename Tuning>\n"
	"    static auto select(int) -> AgentReducePolicy<Tuning::threads, Tuning::items, AccumT, 1,\n"
	"                                                 BLOCK_REDUCE_WARP_REDUCTIONS, LOAD_LDG>;\n"
	"    using ReducePolicy = decltype(select<sm100_tuning<AccumT, int, op_type::plus>>(0));\n"
	"  };\n"
	"};\n"
	"}}}\n";

static const kb_policy *find(const kb_cccl *kb, const char *policy, const char *agent)
{
	for (size_t i = 0; i < kb->n; i++)
		if (!strcmp(kb->v[i].policy, policy) && !strcmp(kb->v[i].agent, agent))
			return &kb->v[i];
	return NULL;
}

static void test_synthetic(void **state)
{
	kb_cccl kb;
	memset(&kb, 0, sizeof(kb));
	assert_int_equal(kb_cccl_parse(synthetic, strlen(synthetic), "reduce", "tuning_reduce.cuh", &kb), MUH_OK);
	assert_int_equal(kb.n, 3); /* the tuning struct, Policy500's and Policy900's agents; nothing from comments */

	const kb_policy *t = find(&kb, "sm100_tuning", "");
	assert_non_null(t);
	assert_int_equal(t->cc, 100);
	assert_int_equal(t->threads, 512);
	assert_int_equal(t->items_per_thread, 16);
	assert_int_equal(t->vector_load_length, 2);
	assert_string_equal(t->load_algorithm, "BLOCK_LOAD_DIRECT");
	assert_string_equal(t->variant, "float, OffsetT, op_type::plus");

	const kb_policy *p = find(&kb, "Policy500", "ReducePolicy");
	assert_non_null(p);
	assert_int_equal(p->cc, 50);
	assert_int_equal(p->threads, 256);
	assert_int_equal(p->items_per_thread, 20);
	assert_int_equal(p->vector_load_length, 4);
	assert_string_equal(p->load_modifier, "LOAD_LDG");
	assert_string_equal(p->block_algorithm, "BLOCK_REDUCE_WARP_REDUCTIONS");
	assert_string_equal(p->variant, "");

	const kb_policy *s = find(&kb, "Policy900", "ScanPolicyT");
	assert_non_null(s);
	assert_int_equal(s->cc, 90);
	assert_int_equal(s->threads, 128);
	assert_int_equal(s->items_per_thread, 12);
	assert_int_equal(s->vector_load_length, -1);
	assert_string_equal(s->load_algorithm, "BLOCK_LOAD_WARP_TRANSPOSE");
	assert_string_equal(s->load_modifier, "LOAD_DEFAULT");
	assert_string_equal(s->store_algorithm, "BLOCK_STORE_WARP_TRANSPOSE");
	assert_string_equal(s->block_algorithm, "BLOCK_SCAN_WARP_SCANS");

	/* ChainedPolicy dispatch: the greatest cc <= target with known threads */
	assert_ptr_equal(kb_cccl_select(&kb, "reduce", "ReducePolicy", 90), p);
	assert_ptr_equal(kb_cccl_select(&kb, "reduce", "ReducePolicy", 50), p);
	assert_null(kb_cccl_select(&kb, "reduce", "ReducePolicy", 35));
	assert_true(kb_cccl_applies(&kb, t, 100));
	assert_false(kb_cccl_applies(&kb, t, 90));
	kb_cccl_free(&kb);
}

/* CUDA 13's scan: specializations that derive from a template whose
 * constants are its template parameters. */
static void test_vals_template(void **state)
{
	static const char text[] =
		"template <class AccumT, primitive_op P, accum_size S = classify<AccumT>()> struct sm90_tuning;\n"
		"template <class AccumT, int Threads, int Items, int L2B, int L2W>\n"
		"struct sm90_tuning_vals\n"
		"{\n"
		"  static constexpr int threads = Threads;\n"
		"  static constexpr int items   = Items;\n"
		"  using delay_constructor      = fixed_delay_constructor_t<L2B, L2W>;\n"
		"  static constexpr bool large_values = sizeof(AccumT) > 128;\n"
		"  static constexpr BlockLoadAlgorithm load_algorithm =\n"
		"    large_values ? BLOCK_LOAD_WARP_TRANSPOSE_TIMESLICED : BLOCK_LOAD_WARP_TRANSPOSE;\n"
		"};\n"
		"template <class T> struct sm90_tuning<T, primitive_op::yes, accum_size::_1> "
		": sm90_tuning_vals<T, 192, 22, 168, 1140> {};\n"
		"template <> struct sm90_tuning<double, primitive_op::yes, accum_size::_8> "
		": sm90_tuning_vals<double, 224, 24, 632, 1290> {};\n";
	kb_cccl kb;
	memset(&kb, 0, sizeof(kb));
	assert_int_equal(kb_cccl_parse(text, strlen(text), "scan", "tuning_scan.cuh", &kb), MUH_OK);
	assert_int_equal(kb.n, 2);
	assert_string_equal(kb.v[0].policy, "sm90_tuning");
	assert_int_equal(kb.v[0].cc, 90);
	assert_int_equal(kb.v[0].threads, 192);
	assert_int_equal(kb.v[0].items_per_thread, 22);
	assert_string_equal(kb.v[0].variant, "T, primitive_op::yes, accum_size::_1");
	assert_int_equal(kb.v[1].threads, 224);
	assert_int_equal(kb.v[1].items_per_thread, 24);
	assert_string_equal(kb.v[1].variant, "double, primitive_op::yes, accum_size::_8");
	kb_cccl_free(&kb);
}

static void test_garbage_is_harmless(void **state)
{
	static const char *const inputs[] = {
		"", "}}}}", "{{{{", "struct", "struct A {", "using X = AgentFooPolicy<", "static constexpr int = ;",
		"struct A { using X = AgentReducePolicy<>; static constexpr int threads = 0x; };",
		"/* unterminated", "\"unterminated string", "#define X \\\n struct B { };",
	};
	for (size_t i = 0; i < sizeof(inputs) / sizeof(inputs[0]); i++) {
		kb_cccl kb;
		memset(&kb, 0, sizeof(kb));
		assert_int_equal(kb_cccl_parse(inputs[i], strlen(inputs[i]), "x", "x.cuh", &kb), MUH_OK);
		kb_cccl_free(&kb);
	}
	/* deep nesting beyond the scope stack */
	char deep[400];
	memset(deep, '{', 200);
	memset(deep + 200, '}', 199);
	deep[399] = '\0';
	kb_cccl kb;
	memset(&kb, 0, sizeof(kb));
	assert_int_equal(kb_cccl_parse(deep, strlen(deep), "x", "x.cuh", &kb), MUH_OK);
	assert_int_equal(kb.n, 0);
	kb_cccl_free(&kb);
}

static void test_find_missing(void **state)
{
	char dir[1024];
	muh_diag d;
	diag_clear(&d);
	assert_int_equal(kb_cccl_find("/nonexistent/muh", dir, sizeof(dir), &d), MUH_EENV);
	assert_non_null(strstr(d.msg, "no CCCL tuning headers"));
	kb_cccl kb;
	memset(&kb, 0, sizeof(kb));
	diag_clear(&d);
	assert_int_equal(kb_cccl_read("/nonexistent/muh", &kb, &d), MUH_EENV);
	kb_cccl_free(&kb);
}

/* The real headers of the installed toolkit. Skipped only where there is no
 * toolkit at all; a toolkit whose headers parse to nothing fails. */
static void test_installed_headers(void **state)
{
	char dir[1024];
	muh_diag d;
	diag_clear(&d);
	if (kb_cccl_find(NULL, dir, sizeof(dir), &d) != MUH_OK) {
		if (access("/usr/local/cuda/bin/nvcc", X_OK) == 0)
			fail_msg("a CUDA toolkit is installed but its CCCL headers were not found: %s", d.msg);
		print_message("no CCCL headers on this machine: %s\n", d.msg);
		skip();
	}
	kb_cccl kb;
	memset(&kb, 0, sizeof(kb));
	assert_int_equal(kb_cccl_read(dir, &kb, &d), MUH_OK);
	assert_true(kb.nfiles >= 5);
	assert_true(kb.n >= 20); /* CUDA 13: about 500 */

	const kb_policy *r = kb_cccl_select(&kb, "reduce", "ReducePolicy", 90);
	assert_non_null(r);
	assert_true(r->cc <= 90 && r->cc >= 50);
	assert_true(r->threads >= 64 && r->threads <= 1024 && r->threads % 32 == 0);
	assert_true(r->items_per_thread >= 1 && r->items_per_thread <= 64);
	assert_true(r->vector_load_length == 1 || r->vector_load_length == 2 || r->vector_load_length == 4);
	assert_true(!strncmp(r->load_modifier, "LOAD_", 5));
	print_message("sm_90 reduce: %s %d threads, %d items, vec %d, %s\n", r->policy, r->threads,
		      r->items_per_thread, r->vector_load_length, r->load_modifier);

	/* scan's sm_90 tunings derive from sm90_tuning_vals<...> */
	int scan90 = 0;
	for (size_t i = 0; i < kb.n; i++)
		scan90 += !strcmp(kb.v[i].algorithm, "scan") && kb.v[i].cc == 90 && kb.v[i].threads > 0;
	assert_true(scan90 >= 1);

	/* every algorithm with a hub has a policy for sm_90 with plausible threads */
	const char *algs[] = {"reduce", "scan", "radix_sort", "histogram", "merge_sort", NULL};
	for (int i = 0; algs[i]; i++) {
		const kb_policy *p = kb_cccl_select(&kb, algs[i], NULL, 90);
		assert_non_null(p);
		assert_true(p->threads >= 32 && p->threads <= 1024);
	}
	kb_cccl_free(&kb);
}

static void test_seeds(void **state)
{
	kb_cccl kb;
	memset(&kb, 0, sizeof(kb));
	assert_int_equal(kb_cccl_parse(synthetic, strlen(synthetic), "reduce", "tuning_reduce.cuh", &kb), MUH_OK);
	for (size_t i = 0; i < kb.n; i++) /* the synthetic header mixes in a scan policy */
		if (!strcmp(kb.v[i].agent, "ScanPolicyT"))
			strcpy(kb.v[i].algorithm, "scan");
	static const char spec_text[] =
		"params:\n"
		"  THREADS: [128, 256, 512]\n"
		"  ITEMS: [4, 16, 20]\n"
		"  VEC: [1, 2, 4]\n"
		"  MOD: [0, 1, 2]\n"
		"  OTHER: [7, 8]\n"
		"defaults: {THREADS: 128, ITEMS: 4, VEC: 1, MOD: 0, OTHER: 8}\n"
		"kb:\n"
		"  cccl: reduce\n"
		"  map:\n"
		"    THREADS: threads\n"
		"    ITEMS: {field: items_per_thread}\n"
		"    VEC: vector_load_length\n"
		"    MOD: {field: load_modifier, values: {LOAD_DEFAULT: 0, LOAD_LDG: 1, LOAD_CS: 2}}\n";
	muh_spec *s;
	muh_diag d;
	assert_int_equal(spec_parse("k.yaml", spec_text, strlen(spec_text), &s, &d), MUH_OK);
	kb_seed *v;
	size_t n;
	assert_int_equal(kb_cccl_seeds(&kb, s, 90, &v, &n, &d), MUH_OK);
	assert_int_equal(n, 2);
	/* Policy500 applies on sm_90 and comes first: 256/20/4/LDG, OTHER at its default */
	assert_true(v[0].ok && v[0].applies);
	assert_string_equal(v[0].from->policy, "Policy500");
	assert_int_equal(v[0].idx[0], 1);
	assert_int_equal(v[0].idx[1], 2);
	assert_int_equal(v[0].idx[2], 2);
	assert_int_equal(v[0].idx[3], 1);
	assert_int_equal(v[0].idx[4], 1);
	/* sm100_tuning: 512/16/2, the modifier it does not set from the default */
	assert_true(v[1].ok && !v[1].applies);
	assert_int_equal(v[1].idx[0], 2);
	assert_int_equal(v[1].idx[1], 1);
	assert_int_equal(v[1].idx[2], 1);
	assert_int_equal(v[1].idx[3], 0);
	assert_non_null(strstr(v[1].why, "default MOD"));
	kb_seeds_free(v, n);
	spec_free(s);

	/* values outside the space: not a seed, and why */
	static const char narrow[] = "params:\n  THREADS: [128]\nkb: {cccl: reduce, map: {THREADS: threads}}\n";
	assert_int_equal(spec_parse("k.yaml", narrow, strlen(narrow), &s, &d), MUH_OK);
	assert_int_equal(kb_cccl_seeds(&kb, s, 90, &v, &n, &d), MUH_OK);
	assert_int_equal(n, 2);
	assert_false(v[0].ok);
	assert_non_null(strstr(v[0].why, "256 is not one of its values"));
	kb_seeds_free(v, n);
	spec_free(s);

	/* mapping errors are input errors at their place */
	static const char bad_param[] = "params:\n  T: [1]\nkb:\n  cccl: reduce\n  map: {NOPE: threads}\n";
	assert_int_equal(spec_parse("k.yaml", bad_param, strlen(bad_param), &s, &d), MUH_OK);
	diag_clear(&d);
	assert_int_equal(kb_cccl_seeds(&kb, s, 90, &v, &n, &d), MUH_EINPUT);
	assert_non_null(strstr(d.msg, "'NOPE' is not a param"));
	assert_int_equal(d.line, 5);
	spec_free(s);
	static const char bad_field[] = "params:\n  T: [1]\nkb: {cccl: reduce, map: {T: colour}}\n";
	assert_int_equal(spec_parse("k.yaml", bad_field, strlen(bad_field), &s, &d), MUH_OK);
	assert_int_equal(kb_cccl_seeds(&kb, s, 90, &v, &n, &d), MUH_EINPUT);
	assert_non_null(strstr(d.msg, "unknown policy field 'colour'"));
	spec_free(s);
	static const char no_kb[] = "params:\n  T: [1]\n";
	assert_int_equal(spec_parse("k.yaml", no_kb, strlen(no_kb), &s, &d), MUH_OK);
	assert_int_equal(kb_cccl_seeds(&kb, s, 90, &v, &n, &d), MUH_EINPUT);
	spec_free(s);
	static const char other_alg[] = "params:\n  T: [1]\nkb: {cccl: histogram, map: {T: threads}}\n";
	assert_int_equal(spec_parse("k.yaml", other_alg, strlen(other_alg), &s, &d), MUH_OK);
	assert_int_equal(kb_cccl_seeds(&kb, s, 90, &v, &n, &d), MUH_EINPUT);
	assert_non_null(strstr(d.msg, "no policies of algorithm 'histogram'"));
	spec_free(s);
	kb_cccl_free(&kb);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_synthetic),
		cmocka_unit_test(test_vals_template),
		cmocka_unit_test(test_garbage_is_harmless),
		cmocka_unit_test(test_find_missing),
		cmocka_unit_test(test_installed_headers),
		cmocka_unit_test(test_seeds),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
