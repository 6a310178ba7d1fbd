/*
 * test_best.c — the best result of a run (best.h), from a store written
 * through the store API: the search's ranking; the winner at sustained
 * clocks whether the run's re-timing says the SM clock fell or held; the
 * ranking standing when nothing passed; a later re-timing replacing an earlier one;
 * the defaults, the statuses and the best-so-far series; a fresh run
 * dropping its re-timing; the params that did not change the compiled
 * artifact (best_inert_params).
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "muh/best.h"
#include "muh/muh.h"
#include "muh/store.h"
#include "unit_store.h"

static char dbpath[512];

static const char spec_text[] = "name: best_test\n"
				"params:\n"
				"  BLOCK: [1, 2, 3, 4, 5]\n"
				"defaults: {BLOCK: 5}\n";

static store_run_info info = {.spec_hash = "00000000b0b0b0b0",
			      .spec_name = "best_test",
			      .backend = "worker",
			      .hw_profile = "test",
			      .spec_text = spec_text};

/* BLOCK=i timed at ms milliseconds (status ok), or crashed when ms < 0. */
static void put(muh_store *s, int64_t run, int i, double ms)
{
	const char *names[1] = {"BLOCK"};
	muh_value vals[1] = {value_int(i)};
	char key[32];
	snprintf(key, sizeof(key), "BLOCK=%d", i);
	muh_variant v;
	assert_int_equal(eval_variant_make(&v, key, 1, 0, names, vals), MUH_OK);
	muh_measurement m;
	measurement_init(&m);
	if (ms < 0) {
		m.status = EVAL_CRASH;
		snprintf(m.error, sizeof(m.error), "SIGSEGV");
	} else {
		m.status = EVAL_OK;
		m.median = m.min = ms * 1e-3;
		m.sm_clock_mhz = 1980;
	}
	muh_diag d;
	assert_int_equal(store_put(s, run, &v, &m, &d), MUH_OK);
	measurement_free(&m);
	eval_variant_free(&v);
}

/* A store with one run: BLOCK=1 2.0 ms, 2 crash, 3 1.0 ms, 4 1.5 ms, 5 (the
 * defaults) 3.0 ms; burst ranking 3, 4, 1, 5. */
static muh_store *make_store(const char *name, int64_t *run)
{
	snprintf(dbpath, sizeof(dbpath), "%s/%s", MUH_BINARY_DIR, name);
	unit_rm_store(dbpath);
	muh_store *s;
	muh_diag d;
	diag_clear(&d);
	assert_int_equal(store_open(dbpath, &s, &d), MUH_OK);
	assert_int_equal(store_begin_run(s, &info, 0, run, NULL, &d), MUH_OK);
	put(s, *run, 1, 2.0);
	put(s, *run, 2, -1);
	put(s, *run, 3, 1.0);
	put(s, *run, 4, 1.5);
	put(s, *run, 5, 3.0);
	return s;
}

/* best_of_run of the store's only run. */
static void rank_run(muh_store *s, int64_t run, muh_best *b)
{
	store_run r = {.id = run, .backend = info.backend, .spec_text = spec_text};
	muh_diag d;
	diag_clear(&d);
	assert_int_equal(best_of_run(s, &r, b, &d), MUH_OK);
}

static void test_burst(void **st)
{
	(void)st;
	int64_t run;
	muh_store *s = make_store("test_best_burst.db", &run);
	muh_best b;
	rank_run(s, run, &b);
	assert_int_equal(b.regime, BEST_BURST);
	assert_int_equal(b.nmeasured, 5);
	assert_int_equal(b.nok, 4);
	assert_int_equal(b.status[EVAL_CRASH], 1);
	assert_int_equal(b.nranked, 4);
	const char *want[] = {"BLOCK=3", "BLOCK=4", "BLOCK=1", "BLOCK=5"};
	for (size_t i = 0; i < 4; i++) {
		assert_string_equal(b.ranked[i].key, want[i]);
		assert_int_equal(b.ranked[i].sustained, 0);
	}
	assert_true(fabs(b.ranked[0].score - 1e-3) < 1e-12);
	assert_true(fabs(b.ranked[0].sm_clock_mhz - 1980) < 1e-9);
	assert_string_equal(b.default_key, "BLOCK=5");
	assert_true(fabs(b.default_score - 3e-3) < 1e-12);
	assert_string_equal(b.any_key, "BLOCK=3");
	/* best so far, in measurement order: 2, 2 (a crash), 1, 1, 1 ms */
	const double so_far[] = {2e-3, 2e-3, 1e-3, 1e-3, 1e-3};
	for (size_t i = 0; i < 5; i++)
		assert_true(fabs(b.so_far[i] - so_far[i]) < 1e-12);
	/* the speedup over the defaults (3 ms over 1 ms), and the tie rule */
	assert_true(fabs(best_speedup(&b) - 3.0) < 1e-9);
	assert_int_equal(best_is_tie(best_speedup(&b), 0.05), 0);
	assert_int_equal(best_is_tie(1.04, 0.05), 1);
	assert_int_equal(best_is_tie(0.96, 0.05), 1);
	assert_int_equal(best_is_tie(1.06, 0.05), 0);
	assert_int_equal(best_is_tie(1.0, NAN), 0);
	assert_int_equal(best_is_tie(NAN, 0.05), 0);
	/* twins: a and c built one artifact (2 vs 1.5: 1.333x), b and e another
	 * (1 vs 1.1), d none; a failed twin (NAN) counts for nothing */
	const char *fps[] = {"a1", "b2", "a1", "d4", "b2", "a1", ""};
	const double sc[] = {2.0, 1.0, 1.5, 9.0, 1.1, NAN, 5.0};
	size_t twins, slow, fast;
	double r = best_twin_spread(fps, sc, 7, &twins, &slow, &fast);
	assert_true(fabs(r - 2.0 / 1.5) < 1e-12);
	assert_int_equal(twins, 4);
	assert_int_equal(slow, 0);
	assert_int_equal(fast, 2);
	assert_true(isnan(best_twin_spread(fps + 3, sc + 3, 1, &twins, &slow, &fast)));
	assert_int_equal(twins, 0);
	/* the twins line says what its figure is and that the noise is another
	 * (report printed 1.20% noise beside "up to 1.819x apart ... this
	 * machine's noise", two figures for one word) */
	char note[2048];
	best_twins_note(note, sizeof(note), 4, 1.819, "X=1,Y=2", "X=1,Y=1", 0.012, 1);
	assert_non_null(strstr(note, "twins: 4 variants built the same artifact as another (fingerprint); the same "
				     "code timed up to 1.819x apart (X=1,Y=2 against X=1,Y=1): the spread between "
				     "identical builds over the whole run, drift included"));
	assert_non_null(strstr(note, "the noise (1.20%) is only the defaults timed twice, back to back"));
	assert_non_null(strstr(note, "less than 1.819x apart may differ by this machine"));
	assert_non_null(strstr(note, "paired in alternating rounds"));
	assert_null(strstr(note, "machine's noise"));
	best_twins_note(note, sizeof(note), 4, 1.819, "X=1,Y=2", "X=1,Y=1", NAN, 0);
	assert_null(strstr(note, "the noise ("));
	assert_null(strstr(note, "paired"));
	best_free(&b);
	store_close(s);
}

static void test_sustained_winner(void **st)
{
	(void)st;
	int64_t run;
	muh_store *s = make_store("test_best_sustained.db", &run);
	muh_diag d;
	/* the clock fell: BLOCK=4 (burst rank 2) is the fastest at sustained clocks;
	 * BLOCK=1 failed there */
	store_retime rows[] = {
		{"BLOCK=3", 1, 1.0e-3, 1980, 1.6e-3, 1500, 5},
		{"BLOCK=4", 2, 1.5e-3, 1980, 1.4e-3, 1500, 5},
		{"BLOCK=1", 3, 2.0e-3, 1980, NAN, NAN, 5},
	};
	assert_int_equal(store_set_retimes(s, run, rows, 3, &d), MUH_OK);
	size_t w = 99;
	assert_int_equal(best_retime_verdict(rows, 3, &w), 1);
	assert_int_equal(w, 1);
	muh_best b;
	rank_run(s, run, &b);
	assert_int_equal(b.regime, BEST_SUSTAINED);
	assert_int_equal(b.nretimes, 3);
	assert_int_equal(b.retime_winner, 1);
	assert_int_equal(b.nranked, 4);
	/* the re-timed that passed first, by sustained time; then the rest by burst */
	const char *want[] = {"BLOCK=4", "BLOCK=3", "BLOCK=1", "BLOCK=5"};
	const int sus[] = {1, 1, 0, 0};
	for (size_t i = 0; i < 4; i++) {
		assert_string_equal(b.ranked[i].key, want[i]);
		assert_int_equal(b.ranked[i].sustained, sus[i]);
	}
	assert_true(fabs(b.ranked[0].score - 1.4e-3) < 1e-12);
	assert_true(fabs(b.ranked[0].burst_score - 1.5e-3) < 1e-12);
	assert_true(fabs(b.ranked[0].sm_clock_mhz - 1500) < 1e-9);
	best_free(&b);

	/* a later re-timing replaces the earlier whole: the clock held this time
	 * (the best's within 1%), and the re-timing still names the winner:
	 * BLOCK=4, second at burst clocks, is faster timed interleaved (the
	 * H200 at M=4096, session 8: the search ranked under a clock already
	 * down, and "held" set the faster one aside) */
	store_retime held[] = {{"BLOCK=3", 1, 1.0e-3, 1980, 1.02e-3, 1975, 5},
			       {"BLOCK=4", 2, 1.5e-3, 1980, 1.0e-3, 1978, 5}};
	assert_int_equal(best_retime_verdict(held, 2, &w), 1);
	assert_int_equal(w, 1);
	assert_int_equal(store_set_retimes(s, run, held, 2, &d), MUH_OK);
	rank_run(s, run, &b);
	assert_int_equal(b.regime, BEST_SUSTAINED);
	assert_int_equal(b.nretimes, 2);
	assert_int_equal(b.retime_winner, 1);
	assert_string_equal(b.ranked[0].key, "BLOCK=4");
	assert_int_equal(b.ranked[0].sustained, 1);
	assert_string_equal(b.ranked[1].key, "BLOCK=3");
	best_free(&b);

	/* nothing passed there: the ranking stands */
	store_retime none[] = {{"BLOCK=3", 1, 1.0e-3, 1980, NAN, NAN, 5}, {"BLOCK=4", 2, 1.5e-3, 1980, NAN, NAN, 5}};
	assert_int_equal(best_retime_verdict(none, 2, &w), 0);
	assert_int_equal(best_retime_verdict(NULL, 0, &w), 0);

	/* a fresh run of the same identity drops the old re-timing with it */
	int64_t run2;
	assert_int_equal(store_set_retimes(s, run, rows, 3, &d), MUH_OK);
	assert_int_equal(store_begin_run(s, &info, 1, &run2, NULL, &d), MUH_OK);
	put(s, run2, 3, 1.0);
	rank_run(s, run, &b); /* the old run's rows are gone, its re-timing too */
	assert_int_equal(b.nmeasured, 0);
	assert_int_equal(b.nretimes, 0);
	best_free(&b);
	rank_run(s, run2, &b);
	assert_int_equal(b.nretimes, 0);
	assert_int_equal(b.regime, BEST_BURST);
	best_free(&b);
	store_close(s);

	/* readers see the same through a read-only open */
	assert_int_equal(store_open_ro(dbpath, &s, &d), MUH_OK);
	rank_run(s, run2, &b);
	assert_int_equal(b.nranked, 1);
	best_free(&b);
	store_close(s);
}

/* A,B,C=a,b,c measured ok in ms milliseconds with fingerprint fp ("" none). */
static void put3(muh_store *s, int64_t run, int a, int b, int c, double ms, const char *fp)
{
	const char *names[3] = {"A", "B", "C"};
	muh_value vals[3] = {value_int(a), value_int(b), value_int(c)};
	char key[64];
	snprintf(key, sizeof(key), "A=%d,B=%d,C=%d", a, b, c);
	muh_variant v;
	assert_int_equal(eval_variant_make(&v, key, 3, 0, names, vals), MUH_OK);
	muh_measurement m;
	measurement_init(&m);
	m.status = EVAL_OK;
	m.median = m.min = ms * 1e-3;
	snprintf(m.fingerprint, sizeof(m.fingerprint), "%s", fp);
	muh_diag d;
	assert_int_equal(store_put(s, run, &v, &m, &d), MUH_OK);
	measurement_free(&m);
	eval_variant_free(&v);
}

/* Params that did not change the compiled artifact: a variant differing in
 * one param alone with the same fingerprint marks that param; one differing
 * in two at once marks neither; another fingerprint, no fingerprint or an
 * unmeasured key mark nothing. */
static void test_inert(void **st)
{
	(void)st;
	snprintf(dbpath, sizeof(dbpath), "%s/%s", MUH_BINARY_DIR, "test_best_inert.db");
	unit_rm_store(dbpath);
	muh_store *s;
	muh_diag d;
	diag_clear(&d);
	assert_int_equal(store_open(dbpath, &s, &d), MUH_OK);
	int64_t run;
	store_run_info ri = info;
	ri.spec_hash = "00000000c0c0c0c0";
	assert_int_equal(store_begin_run(s, &ri, 0, &run, NULL, &d), MUH_OK);
	put3(s, run, 1, 1, 1, 1.0, "f1");  /* the best */
	put3(s, run, 1, 1, 2, 1.1, "f1");  /* C alone: same artifact -> C did nothing */
	put3(s, run, 1, 2, 1, 1.2, "f2");  /* B alone: another artifact */
	put3(s, run, 2, 2, 1, 1.3, "f1");  /* A and B at once: proves nothing */
	put3(s, run, 3, 3, 3, 1.4, "");    /* no fingerprint */
	put3(s, run, 3, 3, 4, 1.5, "");
	muh_best b;
	store_run r = {.id = run, .backend = "worker"};
	assert_int_equal(best_of_run(s, &r, &b, &d), MUH_OK);
	assert_string_equal(b.ranked[0].key, "A=1,B=1,C=1");
	assert_int_equal(b.nfps, 4);
	best_inert in[8];
	assert_int_equal(best_inert_params(&b, "A=1,B=1,C=1", in, 8), 1);
	assert_string_equal(in[0].name, "C");
	assert_string_equal(in[0].witness, "A=1,B=1,C=2");
	assert_int_equal(in[0].value_len, 1);
	assert_memory_equal(in[0].value, "2", 1);
	assert_string_equal(in[0].fingerprint, "f1");
	char note[240];
	best_inert_note(&in[0], note, sizeof(note));
	assert_string_equal(note, "did not change the compiled artifact: C=2 built the same (fingerprint f1)");
	/* and the other way round */
	assert_int_equal(best_inert_params(&b, "A=1,B=1,C=2", in, 8), 1);
	assert_string_equal(in[0].name, "C");
	assert_string_equal(in[0].witness, "A=1,B=1,C=1");
	/* B changed the artifact; A=2,B=2 differs in two */
	assert_int_equal(best_inert_params(&b, "A=1,B=2,C=1", in, 8), 0);
	assert_int_equal(best_inert_params(&b, "A=2,B=2,C=1", in, 8), 0);
	/* no fingerprint, not measured, max 0 */
	assert_int_equal(best_inert_params(&b, "A=3,B=3,C=3", in, 8), 0);
	assert_int_equal(best_inert_params(&b, "A=9,B=9,C=9", in, 8), 0);
	assert_int_equal(best_inert_params(&b, "A=1,B=1,C=1", in, 0), 0);
	best_free(&b);
	store_close(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_burst),
		cmocka_unit_test(test_sustained_winner),
		cmocka_unit_test(test_inert),
	};
	return cmocka_run_group_tests(tests, 0, 0);
}
