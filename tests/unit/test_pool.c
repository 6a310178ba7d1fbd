/*
 * test_pool.c — the evaluator pool (pool.h) with local workers: every
 * submitted variant comes back once, measured by a worker of the pool; a
 * worker killed while it measures is started again and its variant
 * requeued once; a variant that kills its worker every time is a crash
 * after two attempts, and the others still finish; mixed options refused.
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

#include "muh/eval.h"
#include "muh/muh.h"
#include "muh/pool.h"

static const char *const worker_argv[] = {MUH_BINARY_DIR "/muh", "pool-worker", NULL};

static muh_pool *open_pool(const char *spec, size_t n)
{
	pool_opts o = {.spec_path = spec, .nparams = 1, .nworkers = n, .worker_argv = worker_argv};
	muh_pool *p = NULL;
	muh_diag d;
	diag_clear(&d);
	int rc = pool_open(&o, &p, &d);
	if (rc)
		fprintf(stderr, "pool_open: %s\n", d.msg);
	assert_int_equal(rc, MUH_OK);
	return p;
}

/* Submits X = 1..12 (value indices 0..11), waits for all; seen[i] counts
 * the results of index i, status[i] and attempts[i] keep the last. */
static void run_all(muh_pool *p, int *seen, int *status, int *attempts, double *median)
{
	for (uint32_t i = 0; i < 12; i++)
		assert_int_equal(pool_submit(p, &i, 100 + i), MUH_OK);
	assert_int_equal(pool_pending(p), 12);
	pool_result r;
	muh_diag d;
	int rc, n = 0;
	while ((rc = pool_wait(p, &r, NULL, &d)) == MUH_OK) {
		assert_true(r.tag >= 100 && r.tag < 112);
		size_t i = (size_t)(r.tag - 100);
		assert_int_equal(r.cfg[0], i);
		seen[i]++;
		status[i] = r.m.status;
		attempts[i] = r.attempts;
		median[i] = r.m.median;
		measurement_free(&r.m);
		n++;
	}
	assert_int_equal(rc, MUH_EFINDING); /* nothing left */
	assert_int_equal(n, 12);
	assert_int_equal(pool_pending(p), 0);
}

static void test_two_workers_measure_each_once(void **state)
{
	(void)state;
	setenv("MUH_CACHE_DIR", MUH_BINARY_DIR "/test_pool_cache", 1);
	muh_pool *p = open_pool(MUH_SOURCE_DIR "/specs/matmul_cpu.yaml", 2);
	assert_int_equal(pool_size(p), 2);
	assert_string_equal(pool_device(p), "cpu");
	/* matmul_cpu has two params; a second pool for the one-param spec */
	pool_close(p);
	setenv("MUH_POOL_KILL_ONCE", MUH_BINARY_DIR "/test_pool_once", 1);
	rmdir(MUH_BINARY_DIR "/test_pool_once");
	p = open_pool(MUH_SOURCE_DIR "/tests/fixtures/pool/killer.yaml", 2);
	int seen[12] = {0}, status[12], attempts[12];
	double median[12];
	run_all(p, seen, status, attempts, median);
	for (int i = 0; i < 12; i++) {
		assert_int_equal(seen[i], 1);
		assert_int_equal(status[i], EVAL_OK);
		assert_true(median[i] > (i + 1) * 0.5e-6 && median[i] < (i + 1) * 2e-6);
	}
	/* X=7 (index 6) killed its worker once: restarted, requeued, measured */
	assert_int_equal(attempts[6], 2);
	assert_int_equal(pool_restarts(p), 1);
	assert_int_equal(pool_size(p), 2);
	pool_close(p);
	unsetenv("MUH_POOL_KILL_ONCE");
	rmdir(MUH_BINARY_DIR "/test_pool_once");
}

static void test_a_variant_that_always_kills_is_a_crash(void **state)
{
	(void)state;
	muh_pool *p = open_pool(MUH_SOURCE_DIR "/tests/fixtures/pool/killer.yaml", 2);
	int seen[12] = {0}, status[12], attempts[12];
	double median[12];
	run_all(p, seen, status, attempts, median);
	for (int i = 0; i < 12; i++) {
		assert_int_equal(seen[i], 1);
		assert_int_equal(status[i], i == 6 ? EVAL_CRASH : EVAL_OK);
	}
	assert_int_equal(attempts[6], 2);
	assert_int_equal(pool_restarts(p), 2);
	pool_close(p);
}

static void test_bad_options(void **state)
{
	(void)state;
	pool_opts o = {.spec_path = MUH_SOURCE_DIR "/specs/matmul_cpu.yaml", .nparams = 2, .nworkers = 0,
		       .worker_argv = worker_argv};
	muh_pool *p = (muh_pool *)1;
	muh_diag d;
	diag_clear(&d);
	assert_int_equal(pool_open(&o, &p, &d), MUH_EINPUT);
	assert_null(p);
	o.nworkers = 1;
	o.spec_path = MUH_SOURCE_DIR "/specs/no-such-spec.yaml";
	assert_int_equal(pool_open(&o, &p, &d), MUH_EENV);
	assert_non_null(strstr(d.msg, "worker 0"));
	assert_non_null(strstr(d.msg, "no-such-spec.yaml"));
	if (!pool_mpi_available()) {
		o.mpi = 1;
		o.spec_path = MUH_SOURCE_DIR "/specs/matmul_cpu.yaml";
		assert_int_equal(pool_open(&o, &p, &d), MUH_EINPUT);
		assert_non_null(strstr(d.msg, "without MPI"));
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_two_workers_measure_each_once),
	    cmocka_unit_test(test_a_variant_that_always_kills_is_a_crash),
	    cmocka_unit_test(test_bad_options),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
