/*
 * online_tune.c — an engine tuning its own CPU function online with libmuh.
 *
 * The program owns the kernel (a blocked, unrolled sum) and times it
 * itself; libmuh's session owns the space (examples/online.yaml), the
 * strategy and the bookkeeping: muh_session_next proposes a configuration,
 * the program runs and times it, muh_session_record tells the session, and
 * muh_session_best names the winner. Nothing is compiled or launched by
 * muh. Only the public API (<muh/libmuh.h>) is used.
 *
 * Built against the installed library only:
 *     cc online_tune.c $(pkg-config --cflags --libs muh) -o online_tune
 *     ./online_tune online.yaml [BUDGET [DB]]
 * Prints one line per configuration and "best BLOCK=.. UNROLL=.. TIME";
 * with DB, the session stores every time there (a rerun resumes: the
 * store answers, nothing is timed again), and the program then reads the
 * run's best back from the store: "stored best KEY TIME (N measured)".
 * Exits 0 when every configuration's sum was right and a best was found.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <muh/libmuh.h>

/* The function being tuned: the sum of x in blocks of `block`, each block
 * summed `unroll` elements at a time. */
static double blocked_sum(const float *x, size_t n, int block, int unroll)
{
	double total = 0;
	for (size_t b = 0; b < n; b += (size_t)block) {
		size_t end = b + (size_t)block < n ? b + (size_t)block : n;
		double acc[8] = {0};
		size_t i = b;
		for (; i + (size_t)unroll <= end; i += (size_t)unroll)
			for (int u = 0; u < unroll; u++)
				acc[u] += x[i + (size_t)u];
		for (; i < end; i++)
			acc[0] += x[i];
		for (int u = 0; u < 8; u++)
			total += acc[u];
	}
	return total;
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* The value of param `name` in configuration cfg, as an integer. */
static int param(const muh_space *sp, const uint32_t *cfg, const char *name)
{
	long p = muh_space_param_index(sp, name);
	long long v;
	if (p < 0 || muh_space_value_int(sp, cfg, (size_t)p, &v)) {
		fprintf(stderr, "online_tune: the spec has no integer param %s\n", name);
		exit(2);
	}
	return (int)v;
}

int main(int argc, char **argv)
{
	const char *spec = argc > 1 ? argv[1] : "online.yaml";
	muh_session_options o = MUH_SESSION_OPTIONS_INIT;
	o.budget = argc > 2 ? strtoull(argv[2], NULL, 10) : 12;
	o.seed = 1;
	o.db = argc > 3 ? argv[3] : NULL;
	muh_session *s;
	if (muh_session_open(spec, &o, &s)) {
		fprintf(stderr, "online_tune: %s\n", muh_last_error());
		return 2;
	}
	const muh_space *sp = muh_session_space(s);
	size_t n = 1 << 20, np = muh_space_nparams(sp);
	float *x = malloc(n * sizeof(float));
	uint32_t *cfg = calloc(np + 1, sizeof(uint32_t));
	double want = 0;
	for (size_t i = 0; i < n; i++) {
		x[i] = (float)(i % 7) - 3.0f;
		want += x[i];
	}
	int wrong = 0, measured = 0;
	size_t got_n;
	while (!muh_session_next(s, cfg, 1, &got_n) && got_n == 1) {
		int answered;
		if (muh_session_lookup(s, cfg, &answered)) {
			fprintf(stderr, "online_tune: %s\n", muh_last_error());
			return 3;
		}
		if (answered) /* the store's run had it: not timed again */
			continue;
		int block = param(sp, cfg, "BLOCK"), unroll = param(sp, cfg, "UNROLL");
		double best = INFINITY, got = 0;
		for (int rep = 0; rep < 5; rep++) { /* the fastest of 5 runs */
			double t0 = now_s();
			got = blocked_sum(x, n, block, unroll);
			double t = now_s() - t0;
			best = t < best ? t : best;
		}
		wrong += got != want;
		if (muh_session_record(s, cfg, best, got != want)) {
			fprintf(stderr, "online_tune: %s\n", muh_last_error());
			return 3;
		}
		measured++;
		printf("BLOCK=%d UNROLL=%d %.1f us%s\n", block, unroll, best * 1e6, got != want ? " WRONG" : "");
	}
	double t;
	if (muh_session_best(s, cfg, &t)) {
		fprintf(stderr, "online_tune: no configuration was measured\n");
		return 1;
	}
	printf("best BLOCK=%d UNROLL=%d %.1f us (%d measured, problem %s)\n", param(sp, cfg, "BLOCK"),
	       param(sp, cfg, "UNROLL"), t * 1e6, measured, muh_session_problem(s));
	free(x);
	free(cfg);
	char problem[256];
	snprintf(problem, sizeof(problem), "%s", muh_session_problem(s));
	muh_session_close(s);
	if (o.db) { /* what the store kept, as `muh report` would name it */
		muh_store *st;
		int64_t run;
		char key[256];
		size_t nmeasured;
		if (muh_store_open(o.db, &st) || muh_store_find_run(st, NULL, problem, &run) ||
		    muh_store_best(st, run, key, sizeof(key), &t, &nmeasured)) {
			fprintf(stderr, "online_tune: %s\n", muh_last_error());
			muh_store_close(st);
			return 3;
		}
		printf("stored best %s %.1f us (%zu measured)\n", key, t * 1e6, nmeasured);
		muh_store_close(st);
	}
	return wrong ? 1 : 0;
}
