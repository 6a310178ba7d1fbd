/*
 * test_session.c — the session's ask and tell, on a fully measured space
 * replayed from real measurements (tests/fixtures/spaces/cpu_matmul.csv,
 * every valid configuration of cpu_matmul.yaml timed once):
 *   - next with k = 1 and results told in order proposes exactly the
 *     variants session_tune measures, for every strategy and several seeds;
 *   - a batch (k > 1) holds distinct variants, never one pending or told,
 *     and results told out of order are taken;
 *   - the budget holds exactly, session_done says so, and the best is the
 *     best told;
 *   - session_record (the caller's own timing) drives the same search;
 *   - --problem values, lists and all (session_parse_problem);
 *   - a second session_tune of one session reports its own device-busy
 *     figures and re-timing, not the first's added to them (stdlib worker,
 *     simulated SM clock).
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "muh/muh.h"
#include "muh/replay.h"
#include "muh/session.h"

#define SPEC "tests/fixtures/spaces/cpu_matmul.yaml"
#define CSV "tests/fixtures/spaces/cpu_matmul.csv"

static muh_session *open_replay(const char *strategy, uint64_t seed, uint64_t budget)
{
	muh_session_opts o = {.replay = CSV};
	o.search.strategy = strategy;
	o.search.seed = seed;
	o.search.budget = budget;
	muh_session *s;
	muh_diag d;
	int rc = session_open(SPEC, &o, &s, &d);
	if (rc)
		fail_msg("session_open: %s", d.msg);
	if ((rc = session_start(s, &d)))
		fail_msg("session_start: %s", d.msg);
	return s;
}

static void test_next_is_tune(void **state)
{
	(void)state;
	static const char *const strategies[] = {"auto", "brute", "random", "annealing", "genetic", "ils"};
	for (size_t k = 0; k < sizeof(strategies) / sizeof(*strategies); k++) {
		for (uint64_t seed = 0; seed < 3; seed++) {
			muh_session *a = open_replay(strategies[k], seed, 40);
			strategy_result r;
			muh_diag d;
			assert_int_equal(session_tune(a, NULL, NULL, &r, &d), MUH_OK);
			assert_int_equal(r.nrecords, 40);
			muh_session *b = open_replay(strategies[k], seed, 40);
			size_t np = space_nparams(session_space(b));
			uint32_t *cfg = calloc(np + 1, sizeof(uint32_t));
			uint64_t n = 0, idx;
			long got;
			while ((got = session_next(b, cfg, 1, &d)) == 1) {
				assert_true(n < r.nrecords);
				assert_int_equal(space_index_of(session_space(b), cfg, &idx), 0);
				if (idx != r.records[n].index)
					fail_msg("%s seed %llu: proposal %llu differs", strategies[k], (unsigned long long)seed,
						 (unsigned long long)n);
				session_result res;
				assert_int_equal(session_measure(b, cfg, &res, &d), MUH_OK);
				assert_string_equal(res.source, "replay");
				n++;
			}
			assert_int_equal(got, 0);
			assert_int_equal(n, 40);
			assert_true(session_done(b));
			double best_a = r.records[r.best].time_s, best_b;
			assert_int_equal(session_best(b, NULL, &best_b), 1);
			assert_true(best_a == best_b);
			free(cfg);
			strategy_result_free(&r);
			session_close(a);
			session_close(b);
		}
	}
}

static void test_batches_out_of_order(void **state)
{
	(void)state;
	muh_session *s = open_replay("ils", 5, 30);
	const muh_space *sp = session_space(s);
	size_t np = space_nparams(sp);
	uint32_t *cfgs = calloc(8 * np + 1, sizeof(uint32_t));
	unsigned char *seen = calloc(space_valid(sp) + 1, 1);
	muh_diag d;
	size_t told = 0;
	long got;
	while (!session_done(s)) {
		got = session_next(s, cfgs, 6, &d);
		assert_true(got >= 0 && got <= 6);
		assert_int_equal(session_pending(s), (size_t)got);
		if (got == 0)
			break;
		for (long i = 0; i < got; i++) {
			uint64_t idx;
			assert_int_equal(space_index_of(sp, cfgs + i * np, &idx), 0);
			assert_false(seen[idx]); /* never proposed twice */
			seen[idx] = 1;
		}
		/* a pool: the results come back last first */
		for (long i = got - 1; i >= 0; i--) {
			assert_int_equal(session_measure(s, cfgs + i * np, NULL, &d), MUH_OK);
			told++;
		}
		assert_int_equal(session_pending(s), 0);
	}
	assert_int_equal(told, 30); /* the budget, exactly */
	assert_true(session_done(s));
	assert_int_equal(session_next(s, cfgs, 6, &d), 0);
	/* the best told is the best of the told variants in the replay table */
	double best;
	uint32_t *bc = calloc(np + 1, sizeof(uint32_t));
	assert_int_equal(session_best(s, bc, &best), 1);
	for (uint64_t i = 0; i < space_valid(sp); i++) {
		if (!seen[i])
			continue;
		strategy_measurement m;
		space_config_at(sp, i, cfgs);
		muh_replay *unused = NULL;
		(void)unused;
		session_result r;
		assert_int_equal(session_measure(s, cfgs, &r, &d), MUH_OK); /* told: answered, not again */
		assert_string_equal(r.source, "history");
		m = r.score;
		if (m.status == 0)
			assert_true(best <= m.time_s);
	}
	free(bc);
	free(seen);
	free(cfgs);
	session_close(s);
}

/* The caller times its own function: here a made-up cost with a known
 * optimum, reported through session_record. */
static void test_record_external(void **state)
{
	(void)state;
	muh_session_opts o = {0};
	o.search.strategy = "brute";
	muh_session *s;
	muh_diag d;
	assert_int_equal(session_open(SPEC, &o, &s, &d), MUH_OK);
	assert_int_equal(session_start(s, &d), MUH_OK);
	const muh_space *sp = session_space(s);
	size_t np = space_nparams(sp);
	uint32_t *cfg = calloc(np + 1, sizeof(uint32_t));
	uint64_t target = space_valid(sp) / 2, n = 0;
	/* measuring needs an evaluator or a replay: an error, not a crash */
	assert_true(space_default(sp, cfg));
	assert_int_not_equal(session_measure(s, cfg, NULL, &d), MUH_OK);
	while (session_next(s, cfg, 1, &d) == 1) {
		uint64_t idx;
		space_index_of(sp, cfg, &idx);
		double t = 1.0 + fabs((double)idx - (double)target);
		assert_int_equal(session_record(s, cfg, t, 0, &d), MUH_OK);
		n++;
	}
	assert_int_equal(n, space_valid(sp));
	double best;
	uint64_t bidx;
	assert_int_equal(session_best(s, cfg, &best), 1);
	space_index_of(sp, cfg, &bidx);
	assert_int_equal(bidx, target);
	assert_true(best == 1.0);
	free(cfg);
	session_close(s);
}

static void test_parse_problem(void **state)
{
	(void)state;
	muh_spec *s;
	muh_diag d;
	assert_int_equal(spec_load("specs/triton_fused_moe.yaml", &s, &d), MUH_OK);
	size_t ni = spec_ninstances(s), out[64];
	assert_true(ni >= 2 && ni <= 64);
	assert_int_equal(session_parse_problem(s, "all", out, 64, &d), (long)ni);
	assert_int_equal(session_parse_problem(s, "1", out, 64, &d), 1);
	assert_int_equal(out[0], 1);
	assert_int_equal(session_parse_problem(s, "0,2", out, 64, &d), 2);
	assert_int_equal(out[1], 2);
	char name[64], v1[64], v2[64], text[256];
	snprintf(name, sizeof(name), "%s", s->problem[0].name);
	value_fmt(v1, sizeof(v1), spec_problem_value(s, 0, 1));
	value_fmt(v2, sizeof(v2), spec_problem_value(s, 0, ni - 1));
	snprintf(text, sizeof(text), "%s=%s", name, v1);
	assert_true(session_parse_problem(s, text, out, 64, &d) >= 1);
	char pt[512];
	session_problem_text(s, out[0], pt, sizeof(pt));
	assert_non_null(strstr(pt, text));
	snprintf(text, sizeof(text), "%s=%s,%s=%s", name, v1, name, v2);
	assert_true(session_parse_problem(s, text, out, 64, &d) >= 2);
	assert_int_equal(session_parse_problem(s, "NOPE=1", out, 64, &d), -1);
	assert_non_null(strstr(d.msg, "no problem symbol 'NOPE'"));
	snprintf(text, sizeof(text), "%s=123456789", name);
	assert_int_equal(session_parse_problem(s, text, out, 64, &d), -1);
	assert_non_null(strstr(d.msg, "is not a problem instance"));
	assert_int_equal(session_parse_problem(s, "99", out, 64, &d), -1);
	assert_int_equal(session_parse_problem(s, "x", out, 64, &d), -1);
	spec_free(s);
}

/* Two session_tune calls on one live session (specs/dot_worker.yaml, the
 * stdlib worker, its simulated SM clock falling 1980 -> 700 MHz): the
 * second finds every variant in the store, so it measures none and its
 * device-busy count is 0 (it was 4 when the first's figures carried
 * over); each re-times its own top 3. */
static void test_tune_twice(void **state)
{
	(void)state;
	char db[] = "/tmp/muh-test-session-XXXXXX";
	int fd = mkstemp(db);
	assert_true(fd >= 0);
	close(fd);
	unlink(db);
	setenv("MUH_PY_WORKER_SM_CLOCK", "1980,700", 1);
	muh_session_opts o = {.measure = 1, .db = db};
	o.search.strategy = "brute";
	o.search.budget = 4;
	muh_session *s;
	muh_diag d;
	if (session_open("specs/dot_worker.yaml", &o, &s, &d) || session_start(s, &d))
		fail_msg("session: %s", d.msg);
	for (int k = 0; k < 2; k++) {
		strategy_result r;
		assert_int_equal(session_tune(s, NULL, NULL, &r, &d), MUH_OK);
		assert_int_equal(r.nrecords, 4);
		session_busy_info b;
		session_busy(s, &b);
		if (b.measured != (k ? 0 : 4))
			fail_msg("tune %d: %lld variants measured, want %d", k + 1, b.measured, k ? 0 : 4);
		session_sustained_info u;
		session_sustained(s, &u);
		assert_true(u.ran);
		assert_int_equal(u.n, 3);
		assert_true(u.fell);
		assert_true(u.rows[0].burst_rank == 1 && u.rows[2].burst_rank == 3);
		strategy_result_free(&r);
	}
	session_close(s);
	unsetenv("MUH_PY_WORKER_SM_CLOCK");
	char side[sizeof(db) + 8];
	unlink(db);
	snprintf(side, sizeof(side), "%s-wal", db);
	unlink(side);
	snprintf(side, sizeof(side), "%s-shm", db);
	unlink(side);
}

/* session_judge_noise: a new run's ties by this tune's noise; a resumed
 * run with stored variants by the larger of it and the stored noise (the
 * stored one alone when this tune timed none). */
static void test_judge_noise(void **state)
{
	(void)state;
	session_store_info L = {.noise = 0.02, .stored_noise = NAN};
	assert_true(session_judge_noise(&L) == 0.02);
	L.resumed = 1, L.rows = 5, L.stored_noise = 0.09;
	assert_true(session_judge_noise(&L) == 0.09);
	L.noise = 0.2;
	assert_true(session_judge_noise(&L) == 0.2);
	L.noise = NAN;
	assert_true(session_judge_noise(&L) == 0.09);
	L.rows = 0; /* resumed, nothing stored: the stored noise judges nothing */
	assert_true(isnan(session_judge_noise(&L)));
	L.rows = 5, L.stored_noise = NAN, L.noise = 0.03;
	assert_true(session_judge_noise(&L) == 0.03);
	session_store_info fresh = {.noise = 0.01, .stored_noise = 0.5}; /* not resumed */
	assert_true(session_judge_noise(&fresh) == 0.01);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_next_is_tune),
		cmocka_unit_test(test_batches_out_of_order),
		cmocka_unit_test(test_record_external),
		cmocka_unit_test(test_parse_problem),
		cmocka_unit_test(test_tune_twice),
		cmocka_unit_test(test_judge_noise),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
