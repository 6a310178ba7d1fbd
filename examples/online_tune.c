/*
 * online_tune.c — an engine tuning its own CPU function online with libmuh.
 *
 * The program owns the kernel (a blocked, unrolled sum) and times it
 * itself; libmuh's session owns the space (examples/online.yaml), the
 * strategy and the bookkeeping: session_next proposes a configuration,
 * the program runs and times it, session_record tells the session, and
 * session_best names the winner. Nothing is compiled or launched by muh.
 *
 * Built against the installed library only:
 *     cc online_tune.c $(pkg-config --cflags --libs muh) -o online_tune
 *     ./online_tune online.yaml [BUDGET]
 * Prints one line per configuration and "best BLOCK=.. UNROLL=.. TIME";
 * exits 0 when every configuration's sum was right and a best was found.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <muh/session.h>

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
	const muh_spec *s = space_spec(sp);
	for (size_t p = 0; p < s->nparams; p++)
		if (!strcmp(s->params[p].name, name))
			return (int)space_value(sp, cfg, p).u.i;
	fprintf(stderr, "online_tune: the spec has no param %s\n", name);
	exit(2);
}

int main(int argc, char **argv)
{
	const char *spec = argc > 1 ? argv[1] : "online.yaml";
	muh_session_opts o;
	memset(&o, 0, sizeof(o));
	o.search.budget = argc > 2 ? strtoull(argv[2], NULL, 10) : 12;
	o.search.seed = 1;
	muh_session *s;
	muh_diag d;
	if (session_open(spec, &o, &s, &d) || session_start(s, &d)) {
		fprintf(stderr, "online_tune: %s\n", d.msg);
		return 2;
	}
	const muh_space *sp = session_space(s);
	size_t n = 1 << 20, np = space_nparams(sp);
	float *x = malloc(n * sizeof(float));
	uint32_t *cfg = calloc(np + 1, sizeof(uint32_t));
	double want = 0;
	for (size_t i = 0; i < n; i++) {
		x[i] = (float)(i % 7) - 3.0f;
		want += x[i];
	}
	int wrong = 0, measured = 0;
	while (session_next(s, cfg, 1, &d) == 1) {
		int block = param(sp, cfg, "BLOCK"), unroll = param(sp, cfg, "UNROLL");
		double best = INFINITY, got = 0;
		for (int rep = 0; rep < 5; rep++) { /* the fastest of 5 runs */
			double t0 = now_s();
			got = blocked_sum(x, n, block, unroll);
			double t = now_s() - t0;
			best = t < best ? t : best;
		}
		wrong += got != want;
		if (session_record(s, cfg, best, got != want, &d)) {
			fprintf(stderr, "online_tune: %s\n", d.msg);
			return 3;
		}
		measured++;
		printf("BLOCK=%d UNROLL=%d %.1f us%s\n", block, unroll, best * 1e6, got != want ? " WRONG" : "");
	}
	double t;
	if (!session_best(s, cfg, &t)) {
		fprintf(stderr, "online_tune: no configuration was measured\n");
		return 1;
	}
	printf("best BLOCK=%d UNROLL=%d %.1f us (%d measured, problem %s)\n", param(sp, cfg, "BLOCK"),
	       param(sp, cfg, "UNROLL"), t * 1e6, measured, session_problem(s));
	free(x);
	free(cfg);
	session_close(s);
	return wrong ? 1 : 0;
}
