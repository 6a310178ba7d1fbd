/*
 * test_space.c — the space engine against brute force written in plain C
 * (the predicates below are C code, not muh expressions), and the space API
 * the strategies rely on: index <-> config, sampling, neighbours, keys.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "muh/muh.h"

static muh_spec *parse(const char *text)
{
	muh_spec *s = NULL;
	muh_diag d;
	int rc = spec_parse("t.yaml", text, strlen(text), &s, &d);
	if (rc)
		fail_msg("spec_parse: %s at %d:%d", d.msg, d.line, d.col);
	return s;
}

static const char linked[] = "params:\n"
			     "  A: [1, 2, 3, 4, 5, 6, 7, 8]\n"
			     "  B: [0, 1, 2, 3, 4, 5]\n"
			     "  C: {pow2: [1, 64]}\n"
			     "  D: [1, 2, 3]\n"
			     "  E: [10, 20]\n"
			     "constraints:\n"
			     "  - A * C <= 64\n"
			     "  - (A + B) % D == 0 or B == 5\n"
			     "  - 3 <= C // D <= 40\n";

static int linked_ok(int64_t a, int64_t b, int64_t c, int64_t d)
{
	return a * c <= 64 && ((a + b) % d == 0 || b == 5) && 3 <= c / d && c / d <= 40;
}

static void test_counts_match_brute_force(void **state)
{
	muh_spec *s = parse(linked);
	muh_space *sp;
	muh_diag d;
	assert_int_equal(space_build(s, NULL, 0, &sp, &d), MUH_OK);
	static const int64_t A[] = {1, 2, 3, 4, 5, 6, 7, 8}, B[] = {0, 1, 2, 3, 4, 5},
			     C[] = {1, 2, 4, 8, 16, 32, 64}, D[] = {1, 2, 3};
	uint64_t want = 0;
	for (int a = 0; a < 8; a++)
		for (int b = 0; b < 6; b++)
			for (int c = 0; c < 7; c++)
				for (int dd = 0; dd < 3; dd++)
					want += linked_ok(A[a], B[b], C[c], D[dd]);
	want *= 2; /* E is free */
	assert_int_equal(space_valid(sp), want);
	assert_true(space_cartesian(sp) == 8.0 * 6 * 7 * 3 * 2);
	double rej = 0;
	for (size_t c = 0; c < space_nconstraints(sp); c++)
		rej += space_rejected(sp, c);
	assert_true(rej + (double)space_valid(sp) == space_cartesian(sp));
	assert_int_equal(space_ngroups(sp), 2); /* {A,B,C,D} and {E} */
	space_free(sp);
	spec_free(s);
}

static void test_index_roundtrip_and_order(void **state)
{
	muh_spec *s = parse(linked);
	muh_space *sp;
	assert_int_equal(space_build(s, NULL, 0, &sp, NULL), MUH_OK);
	uint32_t cfg[5];
	char seen[4096] = {0};
	for (uint64_t i = 0; i < space_valid(sp); i++) {
		assert_int_equal(space_config_at(sp, i, cfg), MUH_OK);
		assert_true(space_is_valid(sp, cfg));
		int64_t a = space_value(sp, cfg, 0).u.i, b = space_value(sp, cfg, 1).u.i;
		int64_t c = space_value(sp, cfg, 2).u.i, dd = space_value(sp, cfg, 3).u.i;
		assert_true(linked_ok(a, b, c, dd));
		uint64_t j = 99999;
		assert_int_equal(space_index_of(sp, cfg, &j), 0);
		assert_int_equal(j, i);
		/* each configuration appears once */
		unsigned code = ((((cfg[0] * 6 + cfg[1]) * 7 + cfg[2]) * 3 + cfg[3]) * 2 + cfg[4]);
		assert_int_equal(seen[code], 0);
		seen[code] = 1;
	}
	assert_int_equal(space_config_at(sp, space_valid(sp), cfg), MUH_EINPUT);
	/* an invalid configuration has no index */
	uint32_t bad[5] = {7, 0, 6, 0, 0}; /* A=8, C=64: 512 > 64 */
	uint64_t j;
	assert_int_equal(space_index_of(sp, bad, &j), -1);
	assert_false(space_is_valid(sp, bad));
	space_free(sp);
	spec_free(s);
}

static void test_sample_uniform_and_valid(void **state)
{
	muh_spec *s = parse(linked);
	muh_space *sp;
	assert_int_equal(space_build(s, NULL, 0, &sp, NULL), MUH_OK);
	uint64_t n = space_valid(sp), rng = 42;
	uint32_t *hits = calloc(n, sizeof(uint32_t));
	uint32_t cfg[5];
	const int draws = 200000;
	for (int k = 0; k < draws; k++) {
		assert_int_equal(space_sample(sp, &rng, cfg), MUH_OK);
		uint64_t i;
		assert_int_equal(space_index_of(sp, cfg, &i), 0);
		hits[i]++;
	}
	/* every valid configuration is drawn, none wildly over or under */
	double mean = (double)draws / (double)n;
	for (uint64_t i = 0; i < n; i++) {
		assert_true(hits[i] > 0);
		assert_true(hits[i] > mean * 0.5 && hits[i] < mean * 1.5);
	}
	free(hits);
	space_free(sp);
	spec_free(s);
}

static void test_neighbours(void **state)
{
	muh_spec *s = parse(linked);
	muh_space *sp;
	assert_int_equal(space_build(s, NULL, 0, &sp, NULL), MUH_OK);
	uint32_t cfg[5], out[64 * 5];
	assert_int_equal(space_config_at(sp, space_valid(sp) / 2, cfg), MUH_OK);
	size_t nh = space_neighbours(sp, cfg, SPACE_HAMMING, out, 64);
	size_t na = space_neighbours(sp, cfg, SPACE_ADJACENT, out + 0, 64);
	assert_true(na <= nh);
	nh = space_neighbours(sp, cfg, SPACE_HAMMING, out, 64);
	for (size_t k = 0; k < nh; k++) {
		uint32_t *c = out + k * 5;
		int diff = 0;
		for (int p = 0; p < 5; p++)
			diff += c[p] != cfg[p];
		assert_int_equal(diff, 1);
		assert_true(space_is_valid(sp, c));
	}
	/* E's other value is always a Hamming neighbour (E is unconstrained) */
	int has_e = 0;
	for (size_t k = 0; k < nh; k++)
		has_e |= out[k * 5 + 4] != cfg[4];
	assert_true(has_e);
	space_free(sp);
	spec_free(s);
}

static void test_keys_roundtrip(void **state)
{
	muh_spec *s = parse(linked);
	muh_space *sp;
	assert_int_equal(space_build(s, NULL, 0, &sp, NULL), MUH_OK);
	uint32_t cfg[5], back[5];
	char key[256];
	assert_int_equal(space_config_at(sp, 3, cfg), MUH_OK);
	space_key(sp, cfg, key, sizeof(key));
	assert_non_null(strstr(key, "A="));
	assert_non_null(strstr(key, ",E="));
	muh_diag d;
	assert_int_equal(space_parse_key(sp, key, back, &d), MUH_OK);
	assert_memory_equal(cfg, back, sizeof(cfg));
	assert_int_equal(space_parse_key(sp, "A=1,B=0,C=1,D=1,Z=3", back, &d), MUH_EINPUT);
	assert_non_null(strstr(d.msg, "'Z'"));
	assert_int_equal(space_parse_key(sp, "A=9,B=0,C=1,D=1,E=10", back, &d), MUH_EINPUT);
	space_free(sp);
	spec_free(s);
}

static void test_defaults_and_hw(void **state)
{
	muh_spec *s = parse("params:\n  T: [64, 128, 256]\n  S: [1, 2, 4]\n"
			    "constraints: ['T * S * 192 <= hw.smem_per_block']\n"
			    "defaults: {T: 128, S: 2}\n");
	muh_hw h200, bi;
	assert_int_equal(hw_builtin("h200", &h200, NULL), MUH_OK);
	assert_int_equal(hw_builtin("bi-v100", &bi, NULL), MUH_OK);
	muh_space *a, *b;
	assert_int_equal(space_build(s, &h200, 0, &a, NULL), MUH_OK);
	assert_int_equal(space_build(s, &bi, 0, &b, NULL), MUH_OK);
	/* 49152 vs 32768 bytes: T*S <= 256 vs T*S <= 170 */
	assert_int_equal(space_valid(a), 6); /* 64x{1,2,4},128x{1,2},256x{1} */
	assert_int_equal(space_valid(b), 3); /* 64x{1,2},128x{1} */
	uint32_t cfg[2];
	assert_int_equal(space_default(a, cfg), 1);
	assert_int_equal(cfg[0], 1);
	assert_int_equal(cfg[1], 1);
	muh_space *none;
	muh_diag d;
	assert_int_equal(space_build(s, NULL, 0, &none, &d), MUH_EINPUT);
	assert_non_null(strstr(d.msg, "hw.smem_per_block"));
	space_free(a);
	space_free(b);
	spec_free(s);
}

static void test_constant_constraint_and_problem(void **state)
{
	muh_spec *s = parse("params:\n  X: [1, 2, 3]\nproblem:\n  M: [1, 100]\n"
			    "constraints: ['M >= 10', 'X <= 2']\n");
	muh_space *sp;
	assert_int_equal(spec_ninstances(s), 2);
	assert_int_equal(space_build(s, NULL, 0, &sp, NULL), MUH_OK);
	assert_int_equal(space_valid(sp), 0); /* M=1 fails the constant constraint */
	assert_true(space_rejected(sp, 0) == 3);
	assert_int_equal(space_check_order(sp, 0), 0);
	space_free(sp);
	assert_int_equal(space_build(s, NULL, 1, &sp, NULL), MUH_OK);
	assert_int_equal(space_valid(sp), 2);
	space_free(sp);
	spec_free(s);
}

static void test_large_unconstrained_is_a_product(void **state)
{
	/* 40^8 = 6.5e12 combinations: counted, not enumerated */
	char text[2048] = "params:\n";
	for (int p = 0; p < 8; p++) {
		char line[128];
		snprintf(line, sizeof(line), "  P%d: {from: 1, to: 40}\n", p);
		strcat(text, line);
	}
	muh_spec *s = parse(text);
	muh_space *sp;
	assert_int_equal(space_build(s, NULL, 0, &sp, NULL), MUH_OK);
	assert_int_equal(space_valid(sp), UINT64_C(6553600000000));
	uint32_t cfg[8];
	assert_int_equal(space_config_at(sp, UINT64_C(6553599999999), cfg), MUH_OK);
	for (int p = 0; p < 8; p++)
		assert_int_equal(cfg[p], 39);
	space_free(sp);
	spec_free(s);
}

/* A hotspot-like group whose big constraints are not tabulated and fall
 * (expr_falls), so the walk stops loops early and charges the rest in bulk:
 * the valid count and every constraint's rejected count (first failure in
 * muh's check order) must equal a brute force in C. */
static const char falling[] = "params:\n"
			      "  X: {from: 1, to: 40}\n"
			      "  Y: [1, 2, 4, 8]\n"
			      "  T: {from: 1, to: 10}\n"
			      "  TX: {from: 1, to: 10}\n"
			      "  TY: {from: 1, to: 6}\n"
			      "  S: [0, 1]\n"
			      "  P: [0, 1, 2, 3, 4]\n"
			      "  U: {from: 1, to: 10}\n"
			      "  N: [3, -2, 5]\n"
			      "constraints:\n"
			      "  - 4 <= X * Y <= 128\n"
			      "  - T % U == 0\n"
			      "  - (X * TX + T * 2) * (Y * TY + T * 2) * (2 + S) * 4 <= 6000\n"
			      "  - P == 0 or (X * TX + T * 2) * (Y * TY + T * 2) * (2 + S) * 4 * P <= 9000\n"
			      "  - N * TX <= 20\n";

static int falling_holds(int c, const int64_t *v)
{
	int64_t X = v[0], Y = v[1], T = v[2], TX = v[3], TY = v[4], S = v[5], P = v[6], U = v[7],
		N = v[8];
	int64_t e = (X * TX + T * 2) * (Y * TY + T * 2) * (2 + S) * 4;
	switch (c) {
	case 0: return 4 <= X * Y && X * Y <= 128;
	case 1: return T % U == 0;
	case 2: return e <= 6000;
	case 3: return P == 0 || e * P <= 9000;
	default: return N * TX <= 20;
	}
}

static void test_falling_constraints_match_brute_force(void **state)
{
	muh_spec *s = parse(falling);
	muh_space *sp;
	assert_int_equal(space_build(s, NULL, 0, &sp, NULL), MUH_OK);
	size_t order[5];
	for (size_t k = 0; k < 5; k++)
		order[k] = space_check_order(sp, k);
	double rejected[5] = {0};
	uint64_t valid = 0;
	uint32_t cfg[9];
	int64_t v[9];
	size_t nv[9];
	for (size_t p = 0; p < 9; p++)
		nv[p] = s->params[p].nvalues;
	memset(cfg, 0, sizeof(cfg));
	for (;;) {
		for (size_t p = 0; p < 9; p++)
			v[p] = s->params[p].values[cfg[p]].u.i;
		size_t k;
		for (k = 0; k < 5 && falling_holds((int)order[k], v); k++)
			;
		if (k == 5)
			valid++;
		else
			rejected[order[k]] += 1;
		size_t p = 9;
		while (p-- > 0 && ++cfg[p] == nv[p])
			cfg[p] = 0;
		if (p == (size_t)-1)
			break;
	}
	assert_int_equal(space_valid(sp), valid);
	for (size_t c = 0; c < 5; c++)
		if (space_rejected(sp, c) != rejected[c])
			fail_msg("constraint %zu: rejected %.0f, brute force %.0f", c,
				 space_rejected(sp, c), rejected[c]);
	/* every indexed configuration is valid by brute force */
	for (uint64_t i = 0; i < space_valid(sp); i += 97) {
		assert_int_equal(space_config_at(sp, i, cfg), MUH_OK);
		for (size_t p = 0; p < 9; p++)
			v[p] = s->params[p].values[cfg[p]].u.i;
		for (int c = 0; c < 5; c++)
			assert_true(falling_holds(c, v));
	}
	space_free(sp);
	spec_free(s);
}

/* The fast leaf loop stops at a falling table too (A * B <= 50 over
 * ascending B); counts against brute force, in muh's check order. */
static void test_falling_leaf_table(void **state)
{
	muh_spec *s = parse("params:\n  A: {from: 1, to: 30}\n  B: {from: 1, to: 30}\n"
			    "constraints:\n  - A * B <= 50\n  - A + B >= 5\n");
	muh_space *sp;
	assert_int_equal(space_build(s, NULL, 0, &sp, NULL), MUH_OK);
	size_t first = space_check_order(sp, 0);
	double rej[2] = {0};
	uint64_t valid = 0;
	for (int a = 1; a <= 30; a++)
		for (int b = 1; b <= 30; b++) {
			int ok[2] = {a * b <= 50, a + b >= 5};
			if (!ok[first])
				rej[first]++;
			else if (!ok[1 - first])
				rej[1 - first]++;
			else
				valid++;
		}
	assert_int_equal(space_valid(sp), valid);
	assert_true(space_rejected(sp, 0) == rej[0]);
	assert_true(space_rejected(sp, 1) == rej[1]);
	space_free(sp);
	spec_free(s);
}

/* value_list_fmt: every value when they fit; else as many as fit and the
 * count, never past the buffer. */
static void test_value_list_fmt(void **state)
{
	(void)state;
	muh_value v[40];
	for (int i = 0; i < 40; i++)
		v[i] = value_int(1000 + i);
	char b[64];
	assert_string_equal(value_list_fmt(b, sizeof(b), v, 3), "1000, 1001, 1002");
	value_list_fmt(b, sizeof(b), v, 40);
	assert_true(strlen(b) < sizeof(b));
	assert_non_null(strstr(b, ", ... (40 values)"));
	assert_int_equal(strncmp(b, "1000, 1001, ", 12), 0);
	/* exactly full: the last value needs no room for the tail */
	char c[17];
	assert_string_equal(value_list_fmt(c, sizeof(c), v, 3), "1000, 1001, 1002");
	muh_value s[2] = {{.t = MUH_STR, .u.s = "a"}, {.t = MUH_STR, .u.s = "bb"}};
	assert_string_equal(value_list_fmt(b, sizeof(b), s, 2), "a, bb");
	/* a value longer than its cell says it was cut, and where */
	char lng[2001], big[256], want[128];
	memset(lng, 'x', 2000);
	lng[2000] = 0;
	muh_value l[2] = {{.t = MUH_STR, .u.s = "a"}, {.t = MUH_STR, .u.s = lng}};
	snprintf(want, sizeof(want), "a, %.63s... (1937 more characters)", lng);
	assert_string_equal(value_list_fmt(big, sizeof(big), l, 2), want);
	lng[111] = 0; /* 111 bytes fit whole */
	snprintf(want, sizeof(want), "a, %.111s", lng);
	assert_string_equal(value_list_fmt(big, sizeof(big), l, 2), want);
	char tiny[8];
	value_list_fmt(tiny, sizeof(tiny), v, 40); /* not even the tail fits */
	assert_true(strlen(tiny) < sizeof(tiny));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_counts_match_brute_force),
		cmocka_unit_test(test_index_roundtrip_and_order),
		cmocka_unit_test(test_sample_uniform_and_valid),
		cmocka_unit_test(test_neighbours),
		cmocka_unit_test(test_keys_roundtrip),
		cmocka_unit_test(test_defaults_and_hw),
		cmocka_unit_test(test_constant_constraint_and_problem),
		cmocka_unit_test(test_large_unconstrained_is_a_product),
		cmocka_unit_test(test_falling_constraints_match_brute_force),
		cmocka_unit_test(test_falling_leaf_table),
		cmocka_unit_test(test_value_list_fmt),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
