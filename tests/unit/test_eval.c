/*
 * test_eval.c — the evaluator with the cpu backend: statistics, fingerprints,
 * output verification, and every CPU fault kind in an isolated runner.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <dlfcn.h>
#include <unistd.h>

#include <cmocka.h>

#include "muh/eval.h"
#include "eval_int.h"
#include "muh/muh.h"
#include "muh/stats.h"

static int sanitized(void)
{
	return getenv("MUH_SANITIZED") != NULL;
}

static void target_for(muh_target *t, const char *source)
{
	eval_target_defaults(t);
	snprintf(t->source, sizeof(t->source), "%s/%s", MUH_SOURCE_DIR, source);
	snprintf(t->cache_dir, sizeof(t->cache_dir), "%s/test-cache", MUH_BINARY_DIR);
	t->max_time_s = 0.3;
	t->timeout_s = 5;
	t->mem_limit_mb = 512;
}

static void variant1(muh_variant *v, const char *name, int64_t val, const char *sym, int64_t symval)
{
	const char *names[2] = {name, sym};
	muh_value vals[2] = {value_int(val), value_int(symval)};
	char key[64];
	snprintf(key, sizeof(key), "%s=%lld", name, (long long)val);
	assert_int_equal(eval_variant_make(v, key, 1, sym ? 1 : 0, names, vals), MUH_OK);
}

/* Measures the variant name=val once on an evaluator of t opened for it
 * alone, into *m (the caller frees it); opening and measuring must succeed. */
static void measure_once(const muh_target *t, const char *name, int64_t val, muh_measurement *m)
{
	muh_evaluator *ev;
	muh_diag d;
	assert_int_equal(eval_open(t, &ev, &d), MUH_OK);
	muh_variant v;
	variant1(&v, name, val, NULL, 0);
	assert_int_equal(eval_measure(ev, &v, m, &d), MUH_OK);
	eval_variant_free(&v);
	eval_close(ev);
}

static void test_stats(void **st)
{
	(void)st;
	double x[21];
	for (int i = 0; i < 21; i++)
		x[i] = 1.0 + (i % 7) * 0.01;
	stats_summary s;
	assert_int_equal(stats_summarize(x, 21, &s), 0);
	assert_true(s.min == 1.0);
	assert_true(s.ci_lo <= s.median && s.median <= s.ci_hi);
	assert_true(s.mad >= 0);
	double y[3] = {3, 1, 2};
	assert_true(stats_median_inplace(y, 3) == 2);
	double same[12] = {5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5};
	stats_summarize(same, 12, &s);
	assert_true(stats_converged(&s, 0.01));
	/* paired ratios: a drift shared by each round's pair cancels, where
	 * the two medians' CIs (each spread by the drift) overlap */
	double a[20], b[20];
	for (int i = 0; i < 20; i++) {
		a[i] = 1.0 + 0.02 * i;    /* a clock that falls over the rounds */
		b[i] = 1.01 * a[i];       /* b 1% slower in every round */
	}
	a[3] = 0; /* a pair without a time: left out */
	assert_int_equal(stats_paired_ratio(a, b, 20, &s), 0);
	assert_int_equal(s.n, 19);
	assert_true(fabs(s.median - 1.01) < 1e-9 && s.ci_lo > 1.0);
	stats_summary sa, sb;
	stats_summarize(a + 4, 16, &sa);
	stats_summarize(b + 4, 16, &sb);
	assert_true(sb.ci_lo < sa.ci_hi); /* unpaired: the CIs overlap */
}

static void test_json_roundtrip(void **st)
{
	(void)st;
	muh_measurement m, r;
	measurement_init(&m);
	m.status = EVAL_WRONG_RESULT;
	m.samples = malloc(2 * sizeof(double));
	m.samples[0] = 1e-3;
	m.samples[1] = 2e-3;
	m.nsamples = 2;
	m.median = 1.5e-3;
	snprintf(m.fingerprint, sizeof(m.fingerprint), "00ff00ff00ff00ff");
	snprintf(m.error, sizeof(m.error), "C[3] is \"NaN\"");
	char *j = measurement_to_json(&m);
	assert_non_null(j);
	assert_int_equal(measurement_from_json(j, &r), MUH_OK);
	assert_int_equal(r.status, EVAL_WRONG_RESULT);
	assert_int_equal(r.nsamples, 2);
	assert_true(r.samples[1] == 2e-3);
	assert_string_equal(r.error, m.error);
	assert_string_equal(r.fingerprint, m.fingerprint);
	assert_true(isnan(r.power_w));
	assert_false(r.noisy);
	assert_null(r.log);
	free(j);
	measurement_free(&r);
	/* the log and the noisy flag travel too */
	m.noisy = 1;
	m.ci_target = 0.01;
	m.log = strdup("line 1\n{\"result\":{}}\n");
	j = measurement_to_json(&m);
	assert_int_equal(measurement_from_json(j, &r), MUH_OK);
	assert_true(r.noisy);
	assert_true(r.ci_target == 0.01);
	assert_string_equal(r.log, m.log);
	free(j);
	measurement_free(&m);
	measurement_free(&r);
}

/* Every backend's samples pass one check in the pipeline: a command that
 * prints a negative, zero, infinite, absurd or hex time gives a wrong_result
 * variant that says why, isolated or in process; a good one is ok. */
static void test_bad_times(void **st)
{
	(void)st;
	static const struct {
		const char *print;
		enum eval_status want;
		const char *text;
	} cases[] = {
		{"muh-time: -0.5", EVAL_WRONG_RESULT, "must be positive"},
		{"muh-time: 0", EVAL_WRONG_RESULT, "must be positive"},
		{"muh-time: inf", EVAL_WRONG_RESULT, "is inf"},
		{"muh-time: -nan", EVAL_WRONG_RESULT, "is nan"},
		{"muh-time: 1e308", EVAL_WRONG_RESULT, "longer than measure.timeout"},
		{"muh-time: 3", EVAL_WRONG_RESULT, "longer than the"}, /* printed at once: no 3 s went by */
		{"muh-time: 0x10", EVAL_WRONG_RESULT, "not a decimal number"},
		{"muh-time: 1e", EVAL_WRONG_RESULT, "not a decimal number"},
		{"muh-time: .5e-3", EVAL_OK, ""},
		{"muh-time: 0.0005 s", EVAL_OK, ""},
	};
	for (int isolate = 1; isolate >= 0; isolate--)
		for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
			muh_target t;
			target_for(&t, "");
			snprintf(t.backend, sizeof(t.backend), "command");
			snprintf(t.command, sizeof(t.command), "[ \"$MUH_STEP\" = time ] && echo '%s'; exit 0",
				 cases[i].print);
			t.warmups = 0;
			t.min_samples = t.max_samples = 2;
			t.isolate = isolate;
			muh_measurement m;
			measure_once(&t, "A", 1, &m);
			fprintf(stderr, "%s (isolate %d): %s: %s\n", cases[i].print, isolate, eval_status_name(m.status),
				m.error);
			assert_int_equal(m.status, cases[i].want);
			assert_non_null(strstr(m.error, cases[i].text));
			if (m.status == EVAL_OK)
				assert_true(m.median == 5e-4);
			else
				assert_true(isnan(m.median));
			measurement_free(&m);
		}
}

/* Engine-tree overlays come from the maker the evaluator's caller hands it
 * (eval_set_overlay): made before each variant, removed after, the maker
 * freed with the evaluator; without one, or when it fails, the variant is
 * invalid and nothing runs. */
struct fake_maker {
	int made, removed, freed, fail;
	char last[64];
};

static int fake_make(void *ctx, const muh_target *t, const muh_variant *v, char *dir, size_t n, muh_diag *d)
{
	struct fake_maker *f = ctx;
	(void)t;
	if (f->fail)
		return diag_errorf(d, "knob k123 is not in the tree");
	f->made++;
	snprintf(dir, n, "/overlay-of-%s", v->key);
	return MUH_OK;
}

static void fake_remove(void *ctx, const char *dir)
{
	struct fake_maker *f = ctx;
	f->removed++;
	snprintf(f->last, sizeof(f->last), "%s", dir);
}

static void fake_free(void *ctx)
{
	((struct fake_maker *)ctx)->freed++;
}

static void test_overlay_maker(void **st)
{
	(void)st;
	static const eval_overlay_ops ops = {fake_make, fake_remove, fake_free};
	for (int isolate = 1; isolate >= 0; isolate--) {
		muh_target t;
		target_for(&t, "");
		snprintf(t.backend, sizeof(t.backend), "command");
		snprintf(t.command, sizeof(t.command), "[ \"$MUH_STEP\" = time ] && echo 'muh-time: 0.001'; exit 0");
		snprintf(t.engine_tree, sizeof(t.engine_tree), "/no/such/tree");
		t.warmups = 0;
		t.min_samples = t.max_samples = 2;
		t.isolate = isolate;
		muh_evaluator *ev;
		muh_diag d;
		muh_variant v;
		muh_measurement m;
		variant1(&v, "A", 1, NULL, 0);
		assert_int_equal(eval_open(&t, &ev, &d), MUH_OK);
		assert_int_equal(eval_measure(ev, &v, &m, &d), MUH_OK); /* no maker */
		assert_int_equal(m.status, EVAL_INVALID);
		assert_non_null(strstr(m.error, "no overlay maker"));
		measurement_free(&m);
		struct fake_maker f = {0};
		eval_set_overlay(ev, &ops, &f);
		assert_int_equal(eval_measure(ev, &v, &m, &d), MUH_OK);
		assert_int_equal(m.status, EVAL_OK);
		measurement_free(&m);
		assert_int_equal(f.made, 1);
		assert_int_equal(f.removed, 1);
		assert_string_equal(f.last, "/overlay-of-A=1");
		f.fail = 1;
		assert_int_equal(eval_measure(ev, &v, &m, &d), MUH_OK);
		assert_int_equal(m.status, EVAL_INVALID);
		assert_non_null(strstr(m.error, "overlay: knob k123 is not in the tree"));
		measurement_free(&m);
		assert_int_equal(f.removed, 1); /* nothing made, nothing removed */
		eval_variant_free(&v);
		eval_close(ev);
		assert_int_equal(f.freed, 1);
	}
}

/* A command's muh-time line is found wherever it is: after 300 KB of
 * output, after a NUL byte, and as the last line without its newline; what
 * the command printed is the variant's log (capped, with a note). */
static void test_command_output(void **st)
{
	(void)st;
	static const char *const progs[] = {
		"head -c 300000 /dev/zero | tr '\\0' n; echo; echo 'muh-time: 0.0005'",
		"printf 'a\\0b\\n\\0muh-time: 0.0005\\n'",
		"printf 'muh-time: 0.0005'",
	};
	for (size_t i = 0; i < sizeof(progs) / sizeof(progs[0]); i++) {
		muh_target t;
		target_for(&t, "");
		snprintf(t.backend, sizeof(t.backend), "command");
		snprintf(t.command, sizeof(t.command), "[ \"$MUH_STEP\" = time ] || exit 0; %s", progs[i]);
		t.warmups = 0;
		t.min_samples = t.max_samples = 2;
		muh_measurement m;
		measure_once(&t, "A", 1, &m);
		fprintf(stderr, "output %zu: %s: %s\n", i, eval_status_name(m.status), m.error);
		assert_int_equal(m.status, EVAL_OK);
		assert_true(m.median == 5e-4);
		assert_non_null(m.log);
		assert_true(strlen(m.log) <= EVAL_LOG + 200);
		assert_non_null(strstr(m.log, "muh-time: 0.0005"));
		if (i == 0)
			assert_non_null(strstr(m.log, "earlier bytes of output dropped"));
		if (i == 1)
			assert_non_null(strstr(m.log, "a?b\n?muh-time")); /* a NUL is shown, not a terminator */
		measurement_free(&m);
	}
}

static void test_cpu_matmul(void **st)
{
	(void)st;
	muh_target t;
	target_for(&t, "kernels/cpu/matmul.c");
	muh_evaluator *ev;
	muh_diag d;
	diag_clear(&d);
	assert_int_equal(eval_open(&t, &ev, &d), MUH_OK);
	const char *names[3] = {"BLOCK", "UNROLL", "N"};
	muh_value a[3] = {value_int(8), value_int(1), value_int(128)};
	muh_value b[3] = {value_int(32), value_int(1), value_int(128)};
	muh_variant va, vb, va2;
	assert_int_equal(eval_variant_make(&va, "BLOCK=8,UNROLL=1", 2, 1, names, a), MUH_OK);
	assert_int_equal(eval_variant_make(&vb, "BLOCK=32,UNROLL=1", 2, 1, names, b), MUH_OK);
	assert_int_equal(eval_variant_make(&va2, "BLOCK=8,UNROLL=1", 2, 1, names, a), MUH_OK);
	muh_measurement ma, mb, ma2;
	assert_int_equal(eval_measure(ev, &va, &ma, &d), MUH_OK);
	if (ma.status != EVAL_OK)
		fprintf(stderr, "error: %s\n", ma.error);
	assert_int_equal(ma.status, EVAL_OK);
	assert_true(ma.nsamples >= 10);
	assert_true(ma.median > 0 && ma.min <= ma.median);
	assert_true(ma.ci_lo <= ma.median && ma.median <= ma.ci_hi);
	assert_true(ma.rel_l2_err < 1e-4);
	assert_int_equal(strlen(ma.fingerprint), 16);
	assert_int_equal(eval_measure(ev, &vb, &mb, &d), MUH_OK);
	assert_int_equal(mb.status, EVAL_OK);
	assert_string_not_equal(ma.fingerprint, mb.fingerprint);
	assert_int_equal(eval_fingerprint(ev, &va2, &ma2, &d), MUH_OK);
	assert_string_equal(ma.fingerprint, ma2.fingerprint);
	assert_int_equal(ma2.nsamples, 0);
	double noise = -1;
	assert_int_equal(eval_noise(ev, &vb, &noise, &d), MUH_OK);
	assert_true(noise >= 0 && isfinite(noise)); /* may be large on a busy machine */
	assert_int_equal(eval_compare(&ma, &ma, 0.0), 0);
	assert_int_equal(eval_restarts(ev), 0);
	measurement_free(&ma);
	measurement_free(&mb);
	measurement_free(&ma2);
	eval_variant_free(&va);
	eval_variant_free(&vb);
	eval_variant_free(&va2);
	eval_close(ev);
}

static void test_cpu_wrong_result(void **st)
{
	(void)st;
	muh_target t;
	target_for(&t, "kernels/cpu/matmul_wrong.c");
	muh_evaluator *ev;
	muh_diag d;
	assert_int_equal(eval_open(&t, &ev, &d), MUH_OK);
	int64_t blocks[3] = {16, 32, 64};
	enum eval_status want[3] = {EVAL_OK, EVAL_WRONG_RESULT, EVAL_WRONG_RESULT};
	for (int i = 0; i < 3; i++) {
		muh_variant v;
		muh_measurement m;
		variant1(&v, "BLOCK", blocks[i], NULL, 0);
		assert_int_equal(eval_measure(ev, &v, &m, &d), MUH_OK);
		if (m.status != want[i])
			fprintf(stderr, "BLOCK=%lld: %s %s\n", (long long)blocks[i], eval_status_name(m.status), m.error);
		assert_int_equal(m.status, want[i]);
		if (blocks[i] == 64)
			assert_non_null(strstr(m.error, "NaN"));
		measurement_free(&m);
		eval_variant_free(&v);
	}
	eval_close(ev);
}

static void test_cpu_reference_variant(void **st)
{
	(void)st;
	muh_target t;
	target_for(&t, "kernels/cpu/matmul_wrong.c");
	snprintf(t.reference, sizeof(t.reference), "BLOCK=16");
	muh_measurement m;
	measure_once(&t, "BLOCK", 32, &m);
	assert_int_equal(m.status, EVAL_WRONG_RESULT);
	measurement_free(&m);
}

/* One evaluator of kernels/cpu/faults/fault.c with the given timeout over
 * the FAULT values in cases: each gets its status and error text, and the
 * runner was restarted once per variant that did not come out ok. */
struct fault_case {
	int fault;
	enum eval_status want;
	const char *text;
};

static void cpu_fault_cases(double timeout_s, const struct fault_case *cases, size_t n)
{
	muh_target t;
	target_for(&t, "kernels/cpu/faults/fault.c");
	t.timeout_s = timeout_s;
	muh_evaluator *ev;
	muh_diag d;
	assert_int_equal(eval_open(&t, &ev, &d), MUH_OK);
	int crashes = 0;
	for (size_t i = 0; i < n; i++) {
		if (cases[i].fault == 4 && sanitized())
			continue; /* no RLIMIT_AS under ASan: its shadow memory needs the address space */
		muh_variant v;
		muh_measurement m;
		variant1(&v, "FAULT", cases[i].fault, NULL, 0);
		assert_int_equal(eval_measure(ev, &v, &m, &d), MUH_OK);
		fprintf(stderr, "FAULT=%d: %s: %s\n", cases[i].fault, eval_status_name(m.status), m.error);
		assert_int_equal(m.status, cases[i].want);
		assert_non_null(strstr(m.error, cases[i].text));
		crashes += m.status != EVAL_OK;
		measurement_free(&m);
		eval_variant_free(&v);
	}
	assert_int_equal(eval_restarts(ev), crashes);
	eval_close(ev);
}

static void test_cpu_faults(void **st)
{
	(void)st;
	/* the build is timed too, and a loaded machine's compiler took over 2 s
	 * for one: the faults that end by themselves get a generous timeout */
	static const struct fault_case ends[] = {
		{1, EVAL_CRASH, "SIGSEGV"},       {0, EVAL_OK, ""},
		{3, EVAL_CRASH, "SIGABRT"},       {4, EVAL_CRASH, "out of memory"},
		{5, EVAL_CRASH, "SIGSEGV"},       {6, EVAL_CRASH, "exited with status"},
		{0, EVAL_OK, ""},
	};
	cpu_fault_cases(60, ends, sizeof(ends) / sizeof(ends[0]));
	/* the endless loop a short one, and the runner goes on after it (FAULT=0
	 * is built already: the cache answers) */
	static const struct fault_case hangs[] = {{2, EVAL_TIMEOUT, "timed out"}, {0, EVAL_OK, ""}};
	cpu_fault_cases(2, hangs, sizeof(hangs) / sizeof(hangs[0]));
}

static void test_compile_error(void **st)
{
	(void)st;
	char path[256];
	snprintf(path, sizeof(path), "%s/bad-kernel.c", MUH_BINARY_DIR);
	FILE *f = fopen(path, "w");
	fprintf(f, "#include \"muh_kernel.h\"\nint muh_setup(struct muh_args *a) { return BROKEN; }\n"
		   "void muh_run(struct muh_args *a) {}\n");
	fclose(f);
	muh_target t;
	target_for(&t, "");
	snprintf(t.source, sizeof(t.source), "%s", path);
	muh_measurement m;
	measure_once(&t, "X", 1, &m);
	assert_int_equal(m.status, EVAL_COMPILE_ERROR);
	assert_non_null(strstr(m.error, "BROKEN"));
	measurement_free(&m);
}

static void test_command_backend(void **st)
{
	(void)st;
	muh_target t;
	target_for(&t, "");
	snprintf(t.backend, sizeof(t.backend), "command");
	snprintf(t.command, sizeof(t.command), "python3 %s/kernels/command/chunked_sum.py --block {BLOCK}",
		 MUH_SOURCE_DIR);
	t.warmups = 1;
	t.timeout_s = 60; /* nothing here hangs; a loaded machine took over 5 s for the samples */
	muh_evaluator *ev;
	muh_diag d;
	assert_int_equal(eval_open(&t, &ev, &d), MUH_OK);
	const char *names[3] = {"BLOCK", "FAULT", "N"};
	muh_value a[3] = {value_int(100), value_int(0), value_int(20000)};
	muh_variant v;
	muh_measurement m, m2;
	assert_int_equal(eval_variant_make(&v, "BLOCK=100,FAULT=0", 2, 1, names, a), MUH_OK);
	assert_int_equal(eval_measure(ev, &v, &m, &d), MUH_OK);
	if (m.status != EVAL_OK)
		fprintf(stderr, "command: %s\n", m.error);
	assert_int_equal(m.status, EVAL_OK);
	assert_true(m.nsamples >= 10 && m.median > 0);
	eval_variant_free(&v);
	a[1] = value_int(1);
	assert_int_equal(eval_variant_make(&v, "BLOCK=100,FAULT=1", 2, 1, names, a), MUH_OK);
	assert_int_equal(eval_measure(ev, &v, &m2, &d), MUH_OK);
	assert_int_equal(m2.status, EVAL_WRONG_RESULT);
	assert_non_null(strstr(m2.error, "expected"));
	assert_string_equal(m.fingerprint, m2.fingerprint); /* FAULT does not reach the build */
	measurement_free(&m);
	measurement_free(&m2);
	eval_variant_free(&v);
	eval_close(ev);
}

/* An evaluator of the stdlib worker (workers/py_worker.py), 3 s a step. */
static void worker_open(muh_target *t, muh_evaluator **ev, muh_diag *d)
{
	target_for(t, "");
	snprintf(t->backend, sizeof(t->backend), "worker");
	snprintf(t->worker, sizeof(t->worker), "python3 %s/workers/py_worker.py", MUH_SOURCE_DIR);
	t->timeout_s = 3;
	diag_clear(d);
	assert_int_equal(eval_open(t, ev, d), MUH_OK);
}

static void test_worker_backend(void **st)
{
	(void)st;
	muh_target t, th;
	muh_evaluator *ev, *hang_ev;
	muh_diag d;
	/* the hang (FAULT=2) on an evaluator of its own with worker_open's short
	 * timeout; the others a generous one, whatever the machine's load */
	worker_open(&th, &hang_ev, &d);
	t = th;
	t.timeout_s = 60;
	assert_int_equal(eval_open(&t, &ev, &d), MUH_OK);
	assert_int_equal(eval_probe(ev, &d), MUH_OK);
	const char *names[5] = {"UNROLL", "BLOCK", "IGNORED", "FAULT", "N"};
	struct {
		int unroll, block, ignored, fault;
		enum eval_status want;
	} cases[] = {
		{1, 64, 0, 0, EVAL_OK}, {4, 64, 0, 0, EVAL_OK}, {1, 64, 1, 0, EVAL_OK},
		{1, 64, 0, 3, EVAL_WRONG_RESULT}, {1, 64, 0, 1, EVAL_CRASH}, {1, 64, 0, 2, EVAL_TIMEOUT},
		{2, 128, 0, 0, EVAL_OK},
	};
	char fps[8][EVAL_FP_HEX];
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		muh_value vals[5] = {value_int(cases[i].unroll), value_int(cases[i].block), value_int(cases[i].ignored),
				     value_int(cases[i].fault), value_int(2000)};
		char key[96];
		snprintf(key, sizeof(key), "UNROLL=%d,BLOCK=%d,IGNORED=%d,FAULT=%d", cases[i].unroll, cases[i].block,
			 cases[i].ignored, cases[i].fault);
		muh_variant v;
		muh_measurement m;
		assert_int_equal(eval_variant_make(&v, key, 4, 1, names, vals), MUH_OK);
		assert_int_equal(eval_measure(cases[i].want == EVAL_TIMEOUT ? hang_ev : ev, &v, &m, &d), MUH_OK);
		fprintf(stderr, "worker %s: %s %s median %.3g s n=%zu\n", key, eval_status_name(m.status), m.error,
			m.median, m.nsamples);
		assert_int_equal(m.status, cases[i].want);
		snprintf(fps[i], sizeof(fps[i]), "%s", m.fingerprint);
		if (m.status == EVAL_OK)
			assert_non_null(strstr(m.fp_detail, "kernel_hash"));
		measurement_free(&m);
		eval_variant_free(&v);
	}
	assert_string_not_equal(fps[0], fps[1]); /* UNROLL reaches the code */
	assert_string_equal(fps[0], fps[2]);     /* IGNORED does not */
	assert_int_equal(eval_restarts(hang_ev), 1); /* the hang */
	assert_int_equal(eval_restarts(ev), 0);      /* a dead worker is restarted in the runner */
	eval_close(hang_ev);
	eval_close(ev);
}

/* The order of interleaved rounds: each a permutation; over 2n rounds every
 * variant takes every position twice; in each pair of rounds the positions
 * of a variant add up to n - 1 (a drift linear in time cancels). */
static void test_interleave_order(void **st)
{
	(void)st;
	size_t o[8];
	const char *want2 = "01101001", *want3 = "012210120021201102";
	char got[32] = "";
	for (size_t r = 0; r < 4; r++) {
		eval_interleave_order(2, r, o);
		for (size_t k = 0; k < 2; k++)
			got[2 * r + k] = (char)('0' + o[k]);
	}
	assert_string_equal(got, want2); /* AB BA BA AB */
	for (size_t r = 0; r < 6; r++) {
		eval_interleave_order(3, r, o);
		for (size_t k = 0; k < 3; k++)
			got[3 * r + k] = (char)('0' + o[k]);
	}
	got[18] = '\0';
	assert_string_equal(got, want3); /* ABC CBA BCA ACB CAB BAC */
	for (size_t n = 1; n <= 8; n++) {
		int at[8][8] = {{0}};
		for (size_t r = 0; r < 2 * n; r += 2) {
			size_t pos[8] = {0};
			for (size_t h = 0; h < 2; h++) {
				eval_interleave_order(n, r + h, o);
				int seen[8] = {0};
				for (size_t k = 0; k < n; k++) {
					assert_true(o[k] < n);
					assert_int_equal(seen[o[k]]++, 0);
					at[o[k]][k]++;
					pos[o[k]] += k;
				}
			}
			for (size_t i = 0; i < n; i++)
				assert_int_equal(pos[i], n - 1);
		}
		for (size_t i = 0; i < n; i++)
			for (size_t k = 0; k < n; k++)
				assert_int_equal(at[i][k], 2);
	}
}

/* Interleaved through the worker: a variant that hangs times out and is
 * dropped (the runner killed), the others are timed again without it, each
 * kept built, `rounds` samples each; a set over EVAL_INTERLEAVE_MAX and the
 * engine backend are refused. */
static void test_worker_interleaved(void **st)
{
	(void)st;
	muh_target t;
	muh_evaluator *ev;
	muh_diag d;
	worker_open(&t, &ev, &d);
	const char *names[5] = {"UNROLL", "BLOCK", "IGNORED", "FAULT", "N"};
	int cases[3][2] = {{1, 0}, {1, 2}, {4, 0}}; /* UNROLL, FAULT (2: hangs) */
	muh_variant vs[3];
	muh_measurement ms[EVAL_INTERLEAVE_MAX + 1];
	for (size_t i = 0; i < 3; i++) {
		muh_value vals[5] = {value_int(cases[i][0]), value_int(64), value_int(0), value_int(cases[i][1]),
				     value_int(2000)};
		char key[96];
		snprintf(key, sizeof(key), "UNROLL=%d,BLOCK=64,IGNORED=0,FAULT=%d", cases[i][0], cases[i][1]);
		assert_int_equal(eval_variant_make(&vs[i], key, 4, 1, names, vals), MUH_OK);
	}
	assert_int_equal(eval_measure_interleaved(ev, vs, 3, 6, ms, &d), MUH_OK);
	assert_int_equal(ms[0].status, EVAL_OK);
	assert_int_equal(ms[1].status, EVAL_TIMEOUT);
	assert_non_null(strstr(ms[1].error, "interleaved"));
	assert_int_equal(ms[2].status, EVAL_OK);
	assert_int_equal(ms[0].nsamples, 6);
	assert_int_equal(ms[2].nsamples, 6);
	assert_true(ms[0].median > 0 && ms[0].ci_lo <= ms[0].median && ms[0].median <= ms[0].ci_hi);
	assert_string_not_equal(ms[0].fingerprint, ms[2].fingerprint);
	assert_int_equal(eval_restarts(ev), 1);
	for (size_t i = 0; i < 3; i++)
		measurement_free(&ms[i]);
	diag_clear(&d);
	assert_int_equal(eval_measure_interleaved(ev, vs, EVAL_INTERLEAVE_MAX + 1, 0, ms, &d), MUH_EINPUT);
	assert_non_null(strstr(d.msg, "at most"));
	for (size_t i = 0; i < 3; i++)
		eval_variant_free(&vs[i]);
	eval_close(ev);
}

/* The bundled specs read into targets, and their launch geometry compiles
 * over params and problem symbols (the cuda backend evaluates it on the GPU). */
static void test_bundled_specs(void **st)
{
	(void)st;
	const char *specs[] = {"specs/matmul_cpu.yaml", "specs/matmul_cpu_broken.yaml", "specs/faults_cpu.yaml",
			       "specs/rowsum_cuda.yaml", "specs/rowsum_cuda_broken.yaml", "specs/faults_cuda.yaml",
			       "specs/dot_worker.yaml", "specs/chunked_sum_command.yaml"};
	for (size_t i = 0; i < sizeof(specs) / sizeof(specs[0]); i++) {
		char path[512];
		snprintf(path, sizeof(path), "%s/%s", MUH_SOURCE_DIR, specs[i]);
		muh_spec *s = NULL;
		muh_diag d;
		diag_clear(&d);
		int rc = spec_load(path, &s, &d);
		if (rc)
			diag_print(stderr, "test_eval", &d);
		assert_int_equal(rc, MUH_OK);
		muh_target t;
		rc = eval_target_from_spec(s, &t, &d);
		if (rc)
			diag_print(stderr, "test_eval", &d);
		assert_int_equal(rc, MUH_OK);
		const char *names[64];
		int n = 0;
		for (size_t p = 0; p < s->nparams; p++)
			names[n++] = s->params[p].name;
		for (size_t k = 0; k < s->nproblem; k++)
			names[n++] = s->problem[k].name;
		const char *exprs[16];
		int ne = 0;
		for (int k = 0; k < 3; k++) {
			exprs[ne++] = t.grid[k];
			exprs[ne++] = t.block[k];
		}
		exprs[ne++] = t.smem;
		char counts[8][EVAL_STR];
		for (int b = 0; b < 8 && t.buffers[b][0]; b++) {
			eval_buffer eb;
			char why[256];
			if (eval_parse_buffer(t.buffers[b], &eb, why, sizeof(why)))
				fail_msg("%s: %s", specs[i], why);
			snprintf(counts[b], sizeof(counts[b]), "%s", eb.count);
			exprs[ne++] = counts[b];
		}
		for (int e = 0; e < ne; e++) {
			if (!exprs[e][0])
				continue;
			muh_expr *x = expr_compile(exprs[e], names, n, &d);
			if (!x)
				fprintf(stderr, "%s: '%s': %s\n", specs[i], exprs[e], d.msg);
			assert_non_null(x);
			expr_free(x);
		}
		spec_free(s);
	}
}

static void test_compare_ties(void **st)
{
	(void)st;
	muh_measurement a, b;
	measurement_init(&a);
	measurement_init(&b);
	a.median = 1.00, a.ci_lo = 0.99, a.ci_hi = 1.01;
	b.median = 1.05, b.ci_lo = 1.04, b.ci_hi = 1.06;
	assert_int_equal(eval_compare(&a, &b, 0.01), -1);
	assert_int_equal(eval_compare(&b, &a, 0.01), 1);
	assert_int_equal(eval_compare(&a, &b, 0.10), 0); /* below the noise: a tie */
	b.ci_lo = 1.0;                                     /* CIs overlap: a tie */
	assert_int_equal(eval_compare(&a, &b, 0.0), 0);
}

static void test_target_errors(void **st)
{
	(void)st;
	static const char *const bad[] = {
		"target: {backend: cpu, sorce: x.c}\nparams: {A: [1, 2]}\n",
		"target: {backend: gpu}\nparams: {A: [1, 2]}\n",
		"target: {backend: cpu}\nparams: {A: [1, 2]}\n",
		"target: {backend: cpu, source: /nonexistent/k.c}\nparams: {A: [1, 2]}\n",
		"target: {backend: command, command: true}\nmeasure: {ci: 7}\nparams: {A: [1, 2]}\n",
		"target: {backend: worker}\nparams: {A: [1, 2]}\n",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		muh_spec *s = NULL;
		muh_diag d;
		diag_clear(&d);
		assert_int_equal(spec_parse("t.yaml", bad[i], strlen(bad[i]), &s, &d), MUH_OK);
		muh_target t;
		diag_clear(&d);
		assert_int_equal(eval_target_from_spec(s, &t, &d), MUH_EINPUT);
		assert_true(d.line >= 1);
		spec_free(s);
	}
	const char *good = "target: {backend: command, command: 'echo {A}'}\nmeasure: {ci: 0.05, warmups: 0}\n"
			   "verify: {rtol: 1e-3}\nparams: {A: [1, 2]}\n";
	muh_spec *s = NULL;
	muh_diag d;
	assert_int_equal(spec_parse("t.yaml", good, strlen(good), &s, &d), MUH_OK);
	muh_target t;
	assert_int_equal(eval_target_from_spec(s, &t, &d), MUH_OK);
	assert_true(t.ci_frac == 0.05 && t.warmups == 0 && t.rtol == 1e-3);
	assert_string_equal(t.command, "echo {A}");
	spec_free(s);
}

static int count_cubins(const char *dir)
{
	DIR *d = opendir(dir);
	int n = 0;
	struct dirent *e;
	while (d && (e = readdir(d)))
		n += strstr(e->d_name, ".cubin") && !strstr(e->d_name, ".tmp");
	if (d)
		closedir(d);
	return n;
}

/* The cuda backend's prepare step (the compile pool) needs no device: NVRTC
 * compiles for the arch the runner recorded. Skipped without NVRTC. */
static void test_cuda_prepare_nodevice(void **st)
{
	(void)st;
	if (sanitized()) {
		fprintf(stderr, "skipped under sanitizers: libnvrtc leaks 72 KB at load (LSan)\n");
		return;
	}
	void *h = dlopen("libnvrtc.so", RTLD_NOW);
	if (!h)
		h = dlopen("/usr/local/cuda/lib64/libnvrtc.so", RTLD_NOW);
	if (!h) {
		fprintf(stderr, "skipped: no NVRTC here\n");
		return;
	}
	dlclose(h);
	muh_target t;
	target_for(&t, "kernels/cuda/rowsum.cu");
	snprintf(t.backend, sizeof(t.backend), "cuda");
	snprintf(t.cache_dir, sizeof(t.cache_dir), "%s/test-cuda-cache-%d", MUH_BINARY_DIR, (int)getpid());
	assert_int_equal(eval_mkdirs(t.cache_dir), 0);
	const char *names[4] = {"BLOCK", "ITEMS", "M", "N"};
	muh_value vals[4] = {value_int(128), value_int(2), value_int(1024), value_int(1024)};
	muh_variant v;
	assert_int_equal(eval_variant_make(&v, "BLOCK=128,ITEMS=2", 2, 2, names, vals), MUH_OK);
	assert_int_not_equal(backend_cuda.prepare(&t, &v), MUH_OK); /* no arch recorded yet */
	char p[EVAL_PATH + 64];
	snprintf(p, sizeof(p), "%s/cuda-arch-0", t.cache_dir);
	FILE *f = fopen(p, "w");
	fputs("9 0\n", f);
	fclose(f);
	assert_int_equal(backend_cuda.prepare(&t, &v), MUH_OK);
	assert_int_equal(count_cubins(t.cache_dir), 1);
	assert_int_equal(backend_cuda.prepare(&t, &v), MUH_OK); /* a cache hit */
	assert_int_equal(count_cubins(t.cache_dir), 1);
	eval_variant_free(&v);
	vals[1] = value_int(8);
	assert_int_equal(eval_variant_make(&v, "BLOCK=128,ITEMS=8", 2, 2, names, vals), MUH_OK);
	assert_int_equal(backend_cuda.prepare(&t, &v), MUH_OK);
	assert_int_equal(count_cubins(t.cache_dir), 2);
	eval_variant_free(&v);
}

/* The input range of a cuda buffer, "lo..hi": a number's own dot (0.5) is
 * not the separator; three dots in a row are refused. */
static void test_parse_range(void **state)
{
	(void)state;
	static const struct {
		const char *text;
		int ok;
		double lo, hi;
	} cases[] = {
		{"0..1", 1, 0, 1},       {"-1..1", 1, -1, 1},     {"0.5..1", 1, 0.5, 1},
		{"-8..8", 1, -8, 8},     {"1e-3..2.5", 1, 1e-3, 2.5}, {"1..0", 0, 0, 0},
		{"1..1", 0, 0, 0},       {"0.1", 0, 0, 0},        {"..1", 0, 0, 0},
		{"0..", 0, 0, 0},        {"a..b", 0, 0, 0},       {"0..1x", 0, 0, 0},
		{"nan..1", 0, 0, 0},     {"", 0, 0, 0},           {"0...1", 0, 0, 0},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		double lo = -99, hi = -99;
		int rc = eval_parse_range(cases[i].text, &lo, &hi);
		if ((rc == 0) != cases[i].ok)
			fail_msg("'%s': rc %d, expected %s", cases[i].text, rc, cases[i].ok ? "ok" : "an error");
		if (cases[i].ok) {
			assert_true(lo == cases[i].lo);
			assert_true(hi == cases[i].hi);
		}
	}
}

/* A buffer's text: its fields, the defaults of its input range, and the
 * errors; a bad buffer is refused when the spec loads, at its file:line:col. */
static void test_parse_buffer(void **state)
{
	(void)state;
	eval_buffer b;
	char why[256];
	assert_int_equal(eval_parse_buffer("in:f32:in:N:0..1", &b, why, sizeof(why)), 0);
	assert_string_equal(b.name, "in");
	assert_int_equal(b.dtype, 0);
	assert_int_equal(b.role, 0);
	assert_string_equal(b.count, "N");
	assert_true(b.lo == 0 && b.hi == 1);
	assert_int_equal(eval_parse_buffer("x:i32:inout:M*ceil_div(N, 4)", &b, why, sizeof(why)), 0);
	assert_string_equal(b.count, "M*ceil_div(N, 4)");
	assert_true(b.lo == -8 && b.hi == 8);
	assert_int_equal(eval_parse_buffer("out:f64:out:1", &b, why, sizeof(why)), 0);
	assert_true(b.lo == -1 && b.hi == 1 && b.role == 1);
	static const char *const bad[] = {"in:f32:in",       "in:f16:in:N",     "in:f32:both:N",
					  "in:f32:in:N:1..0", "in:f32:in:N:0..1:x", ":f32:in:N",
					  "in:f32:in:",      "in:i32:in:N:0..1e12"};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (eval_parse_buffer(bad[i], &b, why, sizeof(why)) == 0)
			fail_msg("'%s' was accepted", bad[i]);
	const char *text = "name: t\ntarget:\n  backend: cuda\n  source: kernels/cuda/rowsum.cu\n"
			   "  buffers: [\"x:f32:in:N:0..1\", \"y:f32:out:N:1..0\"]\n"
			   "params:\n  B: [1, 2]\nproblem:\n  N: 4\n";
	char path[] = "/tmp/muh-buf-XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_true(write(fd, text, strlen(text)) == (ssize_t)strlen(text));
	close(fd);
	muh_spec *sp = NULL;
	muh_diag d;
	diag_clear(&d);
	assert_int_equal(spec_load(path, &sp, &d), MUH_OK);
	muh_target t;
	assert_int_not_equal(eval_target_from_spec(sp, &t, &d), MUH_OK);
	assert_non_null(strstr(d.msg, "y:f32:out:N:1..0"));
	assert_int_equal(d.line, 5);
	spec_free(sp);
	unlink(path);
}

/* eval_backend_is: each backend's traits, and no trait for a name that no
 * backend has (NULL, "none", a store's "external", a typo). */
static void test_backend_traits(void **state)
{
	(void)state;
	assert_true(eval_backend_is("engine", EVAL_SERVER));
	assert_true(eval_backend_is("engine", EVAL_SERVER | EVAL_HOST_TIMED));
	assert_false(eval_backend_is("engine", EVAL_DEVICE));
	assert_true(eval_backend_is("cuda", EVAL_DEVICE | EVAL_SOURCE));
	assert_true(eval_backend_is("worker", EVAL_DEVICE));
	assert_false(eval_backend_is("worker", EVAL_SOURCE));
	assert_true(eval_backend_is("cpu", EVAL_HOST_TIMED | EVAL_SOURCE));
	assert_true(eval_backend_is("command", EVAL_HOST_TIMED));
	assert_false(eval_backend_is("command", EVAL_SERVER));
	const char *none[] = {NULL, "none", "external", "cpuu", ""};
	for (size_t i = 0; i < sizeof(none) / sizeof(none[0]); i++) {
		assert_false(eval_backend_is(none[i], EVAL_SERVER));
		assert_false(eval_backend_is(none[i], EVAL_HOST_TIMED));
		assert_false(eval_backend_is(none[i], 0)); /* even no trait asked: no backend */
	}
	/* exactly one of host-timed and device per backend */
	const char *all[] = {"cpu", "cuda", "worker", "command", "engine"};
	for (size_t i = 0; i < 5; i++)
		assert_int_equal(eval_backend_is(all[i], EVAL_HOST_TIMED) + eval_backend_is(all[i], EVAL_DEVICE), 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_stats),
		cmocka_unit_test(test_json_roundtrip),
		cmocka_unit_test(test_bad_times),
		cmocka_unit_test(test_command_output),
		cmocka_unit_test(test_cpu_matmul),
		cmocka_unit_test(test_cpu_wrong_result),
		cmocka_unit_test(test_cpu_reference_variant),
		cmocka_unit_test(test_cpu_faults),
		cmocka_unit_test(test_compile_error),
		cmocka_unit_test(test_command_backend),
		cmocka_unit_test(test_worker_backend),
		cmocka_unit_test(test_bundled_specs),
		cmocka_unit_test(test_compare_ties),
		cmocka_unit_test(test_target_errors),
		cmocka_unit_test(test_cuda_prepare_nodevice),
		cmocka_unit_test(test_parse_range),
		cmocka_unit_test(test_overlay_maker),
		cmocka_unit_test(test_parse_buffer),
		cmocka_unit_test(test_interleave_order),
		cmocka_unit_test(test_worker_interleaved),
		cmocka_unit_test(test_backend_traits),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
