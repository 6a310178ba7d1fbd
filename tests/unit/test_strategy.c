/*
 * test_strategy.c — the search driver and every strategy, on fully measured
 * spaces replayed from real measurements:
 *   - tests/fixtures/spaces/cpu_matmul.csv: a tiled CPU matmul, every valid
 *     configuration of tests/fixtures/spaces/cpu_matmul.yaml measured once
 *     (bench/cpu_space/measure.sh);
 *   - corpora/h200-fused-moe/sweep_M256.csv with specs/fused_moe.yaml:
 *     all 1,920 fused-MoE configs measured on an H200 (corpora/, in the repository).
 * Acceptance (issue 7): every strategy finds a variant within 5% of the
 * exhaustive best within 25% of the space, for each of 5 seeds; budgets are
 * exact; no configuration is proposed twice; none is invalid. Plus the
 * rules around them: defaults first, seeds, failures, time budgets,
 * determinism, stopping, and the replay CSV reader.
 */
#include <errno.h>
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
#include "muh/stats.h"
#include "muh/strategy.h"
#include "duration.h"
#include "strategy_int.h"

#define H200_SWEEP "corpora/h200-fused-moe/sweep_M256.csv"

/* An objective that checks the rules on every call, around another one. */
struct checked {
	const muh_space *sp;
	strategy_objective inner;
	void *inner_ctx;
	uint8_t *seen; /* by space index */
	uint64_t calls;
	double *clock; /* advanced by 1 per call when set */
};

static int checked_objective(void *ctx, const uint32_t *cfg, strategy_measurement *m)
{
	struct checked *c = ctx;
	uint64_t i;
	assert_true(space_is_valid(c->sp, cfg));
	assert_int_equal(space_index_of(c->sp, cfg, &i), 0);
	assert_int_equal(c->seen[i], 0);
	c->seen[i] = 1;
	c->calls++;
	if (c->clock)
		*c->clock += 1.0;
	return c->inner(c->inner_ctx, cfg, m);
}

static void checked_init(struct checked *c, const muh_space *sp, strategy_objective f, void *ctx)
{
	memset(c, 0, sizeof(*c));
	c->sp = sp;
	c->inner = f;
	c->inner_ctx = ctx;
	c->seen = calloc(space_valid(sp), 1);
	assert_non_null(c->seen);
}

struct measured {
	muh_spec *spec;
	muh_space *sp;
	muh_replay *rp;
	double best;
};

static int load_measured(struct measured *ms, const char *spec, const char *hw, const char *csv)
{
	muh_diag d;
	memset(ms, 0, sizeof(*ms));
	if (access(csv, R_OK))
		return -1;
	assert_int_equal(spec_load(spec, &ms->spec, &d), 0);
	muh_hw h;
	if (hw)
		assert_int_equal(hw_resolve(hw, &h, &d), 0);
	assert_int_equal(space_build(ms->spec, hw ? &h : NULL, 0, &ms->sp, &d), 0);
	int rc = replay_load_csv(ms->sp, csv, NULL, &ms->rp, &d);
	if (rc)
		fail_msg("%s:%d: %s", d.file, d.line, d.msg);
	replay_stats st;
	replay_get_stats(ms->rp, &st);
	assert_int_equal(st.covered, space_valid(ms->sp)); /* fully measured */
	uint64_t bi;
	assert_true(replay_best(ms->rp, &bi, &ms->best));
	return 0;
}

static void free_measured(struct measured *ms)
{
	replay_free(ms->rp);
	space_free(ms->sp);
	spec_free(ms->spec);
}

/* The acceptance test on one fully measured space. With near_optimal == 0
 * only the rules are checked (exact budget, no repeats, validity, defaults
 * first): on a space where very few configurations lie near the optimum no
 * strategy can promise 5% within 25% of the space (random search misses two
 * needles in a quarter of the space with probability 0.75^2). */
static void acceptance(struct measured *ms, int near_optimal)
{
	uint64_t budget = space_valid(ms->sp) / 4;
	for (size_t k = 0; strategy_names[k]; k++) {
		if (!strcmp(strategy_names[k], "brute"))
			continue; /* index order: no promise before the end; checked below */
		for (uint64_t seed = 1; seed <= 5; seed++) {
			struct checked c;
			checked_init(&c, ms->sp, replay_objective, ms->rp);
			strategy_opts o = {.strategy = strategy_names[k],
			                   .budget = budget,
			                   .seed = seed,
			                   .objective = checked_objective,
			                   .objective_ctx = &c};
			strategy_result r;
			muh_diag d;
			assert_int_equal(strategy_run(ms->sp, &o, &r, &d), 0);
			assert_int_equal(c.calls, budget);
			assert_int_equal(r.nrecords, budget);
			assert_int_equal(r.stop, STRATEGY_STOP_BUDGET);
			assert_true(r.have_default);
			assert_string_equal(r.records[0].source, "default");
			assert_true(r.have_best);
			double found = r.records[r.best].time_s;
			if (near_optimal && !(found <= 1.05 * ms->best))
				fail_msg("%s seed %llu: best %.6g after %llu, optimum %.6g (%.3f)",
				         strategy_names[k], (unsigned long long)seed, found,
				         (unsigned long long)budget, ms->best, ms->best / found);
			strategy_result_free(&r);
			free(c.seen);
		}
	}
	/* brute force: the whole space, each once, finds the optimum exactly */
	struct checked c;
	checked_init(&c, ms->sp, replay_objective, ms->rp);
	strategy_opts o = {
	    .strategy = "brute", .objective = checked_objective, .objective_ctx = &c};
	strategy_result r;
	assert_int_equal(strategy_run(ms->sp, &o, &r, NULL), 0);
	assert_int_equal(c.calls, space_valid(ms->sp));
	assert_int_equal(r.stop, STRATEGY_STOP_EXHAUSTED);
	assert_true(r.records[r.best].time_s == ms->best);
	strategy_result_free(&r);
	free(c.seen);
}

static uint64_t middle_by_hand(const muh_space *sp);

/* The spread rule's score of x against the points seen (model_spread): its
 * Hamming distance from the nearest minus 4 x its distance from the middle. */
static double spread_score(const muh_space *sp, const uint32_t *x, uint32_t seen[][4], size_t nseen)
{
	const muh_spec *spec = space_spec(sp);
	size_t near = SIZE_MAX;
	for (size_t j = 0; j < nseen; j++) {
		size_t dist = 0;
		for (size_t p = 0; p < 4; p++)
			dist += x[p] != seen[j][p];
		if (dist < near)
			near = dist;
	}
	double cd = 0;
	for (size_t p = 0; p < 4; p++) {
		double n = (double)spec->params[p].nvalues;
		cd += fabs((double)x[p] - (n - 1) / 2) / (n - 1);
	}
	return (double)near - 4.0 * cd;
}

/* The model's first points after the defaults: evaluation 2 is the middle
 * of the space (found here by brute force), and evaluation 3 scores above
 * the median of the spread rule over every unseen valid configuration (the
 * best of 32 draws does so unless all 32 fall below it, 2^-32; one random
 * draw fails half the time, so a random spread fails this over 30 seeds).
 * The proposals are deterministic for a seed, so the test is too. */
static void test_model_spreads_first_points(void **state)
{
	struct measured ms;
	assert_int_equal(load_measured(&ms, "tests/fixtures/spaces/cpu_matmul.yaml", NULL,
	                               "tests/fixtures/spaces/cpu_matmul.csv"),
	                 0);
	size_t np = space_nparams(ms.sp);
	assert_true(np == 4);
	uint64_t middle = middle_by_hand(ms.sp), nvalid = space_valid(ms.sp);
	double *scores = malloc(nvalid * sizeof(double));
	assert_non_null(scores);
	for (uint64_t seed = 1; seed <= 30; seed++) {
		strategy_opts o = {.strategy = "model",
		                   .budget = 3,
		                   .seed = seed,
		                   .objective = replay_objective,
		                   .objective_ctx = ms.rp};
		strategy_result r;
		assert_int_equal(strategy_run(ms.sp, &o, &r, NULL), 0);
		assert_int_equal(r.nrecords, 3);
		assert_string_equal(r.records[0].source, "default");
		assert_true(r.records[0].index != middle); /* cpu_matmul's defaults are not its middle */
		assert_int_equal(r.records[1].index, middle);
		uint32_t x[3][4];
		for (size_t i = 0; i < 3; i++)
			assert_int_equal(space_config_at(ms.sp, r.records[i].index, x[i]), 0);
		size_t n = 0;
		uint32_t c[4];
		for (uint64_t i = 0; i < nvalid; i++)
			if (i != r.records[0].index && i != r.records[1].index) {
				assert_int_equal(space_config_at(ms.sp, i, c), 0);
				scores[n++] = spread_score(ms.sp, c, x, 2);
			}
		stats_sort(scores, n);
		double got = spread_score(ms.sp, x[2], x, 2);
		if (!(got > scores[n / 2]))
			fail_msg("seed %llu: evaluation 3 scores %.3f, the median of the unseen is %.3f",
			         (unsigned long long)seed, got, scores[n / 2]);
		strategy_result_free(&r);
	}
	free(scores);
	free_measured(&ms);
}

static void test_acceptance_cpu_matmul(void **state)
{
	struct measured ms;
	assert_int_equal(load_measured(&ms, "tests/fixtures/spaces/cpu_matmul.yaml", NULL,
	                               "tests/fixtures/spaces/cpu_matmul.csv"),
	                 0);
	acceptance(&ms, 1);
	free_measured(&ms);
}

static void test_acceptance_h200_fused_moe(void **state)
{
	struct measured ms;
	/* the sweep is in the repository (corpora/): missing, it is a failure */
	assert_int_equal(load_measured(&ms, "specs/fused_moe.yaml", "h200", H200_SWEEP), 0);
	assert_int_equal(space_valid(ms.sp), 1304);
	assert_true(fabs(ms.best - 290.6e-6) < 0.1e-6);
	acceptance(&ms, 1);
	free_measured(&ms);
}

/* A memory-bound transpose: 2 of 244 configurations within 5% of the best. */
static void test_rules_cpu_transpose(void **state)
{
	struct measured ms;
	assert_int_equal(load_measured(&ms, "tests/fixtures/spaces/cpu_transpose.yaml", NULL,
	                               "tests/fixtures/spaces/cpu_transpose.csv"),
	                 0);
	acceptance(&ms, 0);
	free_measured(&ms);
}

/* ---- a small synthetic space for the rules -------------------------------- */

static muh_spec *parse(const char *text)
{
	muh_spec *s = NULL;
	muh_diag d;
	if (spec_parse("t.yaml", text, strlen(text), &s, &d))
		fail_msg("spec_parse: %s at %d:%d", d.msg, d.line, d.col);
	return s;
}

static const char small[] = "params:\n"
                            "  A: [1, 2, 3, 4, 5, 6, 7, 8]\n"
                            "  B: [1, 2, 4, 8, 16]\n"
                            "  C: [0, 1, 2]\n"
                            "constraints:\n"
                            "  - A * B <= 40\n"
                            "defaults: {A: 2, B: 2, C: 0}\n"
                            "seeds:\n"
                            "  - {A: 8, B: 16}\n" /* invalid */
                            "  - {A: 3, B: 4, C: 1}\n"
                            "  - {A: 2, B: 2}\n" /* the defaults again */
                            "  - {A: 5}\n";

/* A smooth bowl with a minimum at A=5, B=4, C=2; C == 1 with A odd fails. */
static int bowl(void *ctx, const uint32_t *cfg, strategy_measurement *m)
{
	if (cfg[2] == 1 && cfg[0] % 2 == 0) {
		m->status = 7;
		m->status_text = "crash";
		return 0;
	}
	double a = (double)cfg[0] - 4, b = (double)cfg[1] - 2, c = (double)cfg[2] - 2;
	m->time_s = 1.0 + a * a + 0.5 * b * b + 0.25 * c * c;
	return 0;
}

struct events {
	int variants, skipped, stop_after;
	size_t skipped_seed[8];
	const char *sources[256];
};

static int count_events(void *ctx, const strategy_event *ev)
{
	struct events *e = ctx;
	if (ev->kind == STRATEGY_EV_SEED_SKIPPED) {
		e->skipped_seed[e->skipped++] = ev->seed;
		return 0;
	}
	if (ev->kind == STRATEGY_EV_VARIANT) {
		assert_int_equal(ev->evaluated, (uint64_t)e->variants + 1);
		if (e->variants < 256)
			e->sources[e->variants] = ev->source;
		e->variants++;
		assert_true(ev->best_cfg == NULL || isfinite(ev->best_s));
		if (ev->m->status)
			assert_true(ev->best_cfg == NULL || ev->improved == 0);
	}
	return e->stop_after && e->variants >= e->stop_after;
}

static void test_defaults_then_seeds(void **state)
{
	muh_spec *s = parse(small);
	muh_space *sp;
	muh_diag d;
	assert_int_equal(space_build(s, NULL, 0, &sp, &d), 0);
	for (size_t k = 0; strategy_names[k]; k++) {
		struct checked c;
		checked_init(&c, sp, bowl, NULL);
		struct events e = {0};
		strategy_opts o = {.strategy = strategy_names[k],
		                   .budget = 10,
		                   .seed = 3,
		                   .objective = checked_objective,
		                   .objective_ctx = &c,
		                   .on_event = count_events,
		                   .event_ctx = &e};
		strategy_result r;
		assert_int_equal(strategy_run(sp, &o, &r, &d), 0);
		assert_int_equal(r.nrecords, 10);
		assert_int_equal(e.variants, 10);
		assert_int_equal(e.skipped, 2);
		assert_int_equal(e.skipped_seed[0], 0); /* invalid */
		assert_int_equal(e.skipped_seed[1], 2); /* duplicate of the defaults */
		assert_string_equal(e.sources[0], "default");
		assert_string_equal(e.sources[1], "seed");
		assert_string_equal(e.sources[2], "seed");
		uint32_t want[3] = {2, 2, 1}, cfg[3]; /* seed 2: A=3, B=4, C=1 */
		space_config_at(sp, r.records[1].index, cfg);
		assert_memory_equal(cfg, want, sizeof(want));
		uint32_t want2[3] = {4, 1, 0}; /* seed 4: A=5, the rest defaults */
		space_config_at(sp, r.records[2].index, cfg);
		assert_memory_equal(cfg, want2, sizeof(want2));
		strategy_result_free(&r);
		free(c.seen);
	}
	/* without seeds: the defaults, then the strategy */
	struct checked c;
	checked_init(&c, sp, bowl, NULL);
	strategy_opts o = {
	    .budget = 3, .skip_spec_seeds = 1, .objective = checked_objective, .objective_ctx = &c};
	strategy_result r;
	assert_int_equal(strategy_run(sp, &o, &r, &d), 0);
	assert_string_equal(r.records[0].source, "default");
	assert_string_not_equal(r.records[1].source, "seed");
	strategy_result_free(&r);
	free(c.seen);
	space_free(sp);
	spec_free(s);
}

/* The middle of the space by brute force: the valid configuration with the
 * least sum over params of |index - (n - 1) / 2| / (n - 1), the first in
 * index order among ties. */
static uint64_t middle_by_hand(const muh_space *sp)
{
	const muh_spec *spec = space_spec(sp);
	uint32_t cfg[16];
	double best = INFINITY;
	uint64_t at = UINT64_MAX;
	for (uint64_t i = 0; i < space_valid(sp); i++) {
		assert_int_equal(space_config_at(sp, i, cfg), 0);
		double d = 0;
		for (size_t p = 0; p < spec->nparams; p++) {
			double n = (double)spec->params[p].nvalues;
			d += fabs((double)cfg[p] - (n - 1) / 2) / (n - 1);
		}
		if (d < best) {
			best = d;
			at = i;
		}
	}
	return at;
}

/* skip_defaults: the first evaluation is the search's own start, not the
 * defaults (none in the result): for a search, the middle of the space, the
 * same on every seed; for random, a random valid configuration, which
 * differs over seeds. The spec's seeds still follow. */
static void test_skip_defaults(void **state)
{
	muh_spec *s = parse(small);
	muh_space *sp;
	muh_diag d;
	assert_int_equal(space_build(s, NULL, 0, &sp, &d), 0);
	uint64_t middle = middle_by_hand(sp);
	const char *strategies[] = {NULL, "model", "ils", "genetic", "annealing", "random"};
	for (size_t k = 0; k < sizeof(strategies) / sizeof(strategies[0]); k++) {
		int is_random = strategies[k] && !strcmp(strategies[k], "random");
		uint64_t firsts[8];
		size_t distinct = 0;
		for (uint64_t seed = 0; seed < 8; seed++) {
			struct checked c;
			checked_init(&c, sp, bowl, NULL);
			strategy_opts o = {.budget = 4,
			                   .seed = seed,
			                   .strategy = strategies[k],
			                   .skip_defaults = 1,
			                   .objective = checked_objective,
			                   .objective_ctx = &c};
			strategy_result r;
			assert_int_equal(strategy_run(sp, &o, &r, &d), 0);
			assert_int_equal(r.nrecords, 4);
			assert_int_equal(c.calls, 4);
			assert_false(r.have_default);
			assert_string_equal(r.records[0].source, is_random ? "random" : "center");
			if (!is_random)
				assert_int_equal(r.records[0].index, middle);
			assert_string_equal(r.records[1].source, "seed"); /* the spec's seeds still come next */
			int dup = 0;
			for (size_t j = 0; j < distinct; j++)
				dup |= firsts[j] == r.records[0].index;
			if (!dup)
				firsts[distinct++] = r.records[0].index;
			strategy_result_free(&r);
			free(c.seen);
		}
		if (is_random)
			assert_true(distinct >= 3); /* random, not one fixed start */
		else
			assert_int_equal(distinct, 1);
	}
	space_free(sp);
	spec_free(s);
}

/* Grows one tree on every point (no bootstrap, every param a candidate). */
static int32_t grow_all(model_node **nodes, size_t *nn, size_t *cap, const uint32_t *x,
                        const double *y, size_t np, const size_t *nv, size_t n)
{
	size_t idx[64];
	assert_true(n <= 64);
	for (size_t i = 0; i < n; i++)
		idx[i] = i;
	return technique_model_tree(nodes, nn, cap, NULL, x, y, np, nv, idx, n);
}

/* A regression tree of the model: a step along one param is found at its
 * edge and nothing else is split; an interaction (slow only where both
 * params are low, which an additive fit spreads over both params' effects)
 * is fitted exactly; points alike in every param make one leaf of their
 * mean; a node under three points is a leaf. */
static void test_model_tree(void **state)
{
	const size_t nv[2] = {4, 3};
	uint32_t x[12 * 2];
	double step[12], inter[12];
	for (uint32_t a = 0, i = 0; a < 4; a++)
		for (uint32_t b = 0; b < 3; b++, i++) {
			x[i * 2] = a;
			x[i * 2 + 1] = b;
			step[i] = a <= 1 ? 1.0 : 5.0;
			inter[i] = a == 0 && b == 0 ? 9.0 : 2.0;
		}
	model_node *nodes = NULL;
	size_t nn = 0, cap = 0;
	int32_t root = grow_all(&nodes, &nn, &cap, x, step, 2, nv, 12);
	assert_true(root >= 0);
	assert_int_equal(nn, 3); /* one split, two leaves */
	assert_int_equal(nodes[root].f, 0);
	assert_int_equal(nodes[root].thr, 1);
	for (size_t i = 0; i < 12; i++)
		assert_true(technique_model_tree_pred(nodes, root, x + i * 2) == step[i]);
	nn = 0;
	root = grow_all(&nodes, &nn, &cap, x, inter, 2, nv, 12);
	assert_true(root >= 0);
	for (size_t i = 0; i < 12; i++)
		assert_true(fabs(technique_model_tree_pred(nodes, root, x + i * 2) - inter[i]) < 1e-12);
	/* the same configuration three times: nothing to split on */
	uint32_t same[3 * 2] = {2, 1, 2, 1, 2, 1};
	double ys[3] = {1.0, 2.0, 6.0};
	nn = 0;
	root = grow_all(&nodes, &nn, &cap, same, ys, 2, nv, 3);
	assert_int_equal(nn, 1);
	assert_true(fabs(nodes[root].v - 3.0) < 1e-12);
	/* two points: a leaf however far apart they are */
	uint32_t two[2 * 2] = {0, 0, 3, 2};
	double y2[2] = {1.0, 9.0};
	nn = 0;
	root = grow_all(&nodes, &nn, &cap, two, y2, 2, nv, 2);
	assert_int_equal(nn, 1);
	assert_true(nodes[root].f == -1 && nodes[root].v == 5.0);
	free(nodes);
}

/* The model where a slow point would mislead an additive fit: Kernel
 * Tuner's convolution measured on an RTX 2080 Ti (corpora/kt-convolution),
 * whose defaults (16 x 16 threads, one output per thread) are slow though
 * the optimum also has one output per thread in x. With the defaults first
 * and 52 evaluations (1% of the 5,256 valid times), seeds 1-10: the forest
 * reached the optimum on 5 and its median best was 0.969 of it; the
 * additive model it replaced reached it on none, median 0.78. Since the
 * trees fit ranks (session 27): on 4, median 0.945; the bound is the
 * lesson's (the optimum found, and no median near the additive fit's), not
 * the best number seen. */
static void test_model_convolution(void **state)
{
	struct measured ms;
	assert_int_equal(load_measured(&ms, "corpora/kt-convolution/convolution_2080ti.yaml", NULL,
	                               "corpora/kt-convolution/convolution_2080ti.csv"),
	                 0);
	double ratio[10];
	int optimum = 0;
	for (uint64_t seed = 1; seed <= 10; seed++) {
		strategy_opts o = {.strategy = "model",
		                   .budget = 52,
		                   .seed = seed,
		                   .objective = replay_objective,
		                   .objective_ctx = ms.rp};
		strategy_result r;
		assert_int_equal(strategy_run(ms.sp, &o, &r, NULL), 0);
		assert_int_equal(r.nrecords, 52);
		assert_string_equal(r.records[0].source, "default");
		ratio[seed - 1] = ms.best / r.records[r.best].time_s;
		optimum += r.records[r.best].time_s == ms.best;
		strategy_result_free(&r);
	}
	stats_sort(ratio, 10);
	double median = (ratio[4] + ratio[5]) / 2;
	if (optimum < 3 || median < 0.93)
		fail_msg("model on the convolution: the optimum on %d of 10 seeds, median best %.3f of it",
		         optimum, median);
	free_measured(&ms);
}

/* A replay whose times are left as they are (how 0) or changed by a
 * strictly increasing function: how 1 adds 4 x the optimum, how 2 takes
 * them to the power 1.8 (in units of the optimum), how 3 multiplies them by
 * 7.3 (a change of unit). All keep every time within the model's outlier
 * bound (1000 x the fastest) on Kernel Tuner's convolution (40.7 x at
 * most). */
struct warped {
	muh_replay *rp;
	double opt;
	int how;
};

static int warped_objective(void *ctx, const uint32_t *cfg, strategy_measurement *m)
{
	struct warped *w = ctx;
	int rc = replay_objective(w->rp, cfg, m);
	if (!rc && m->status == 0 && isfinite(m->time_s))
		m->time_s = w->how == 0   ? m->time_s
		            : w->how == 1 ? m->time_s + 4 * w->opt
		            : w->how == 2 ? w->opt * pow(m->time_s / w->opt, 1.8)
		                          : m->time_s * 7.3;
	return rc;
}

/* Runs strategy name (NULL: auto) on the convolution's replay with the
 * times unchanged (how 0) and changed as `warped` says (hows), for seeds
 * 1-3, 80 evaluations each; returns how many (seed, how) runs differ from
 * the unchanged one at some evaluation. */
static int runs_that_differ(const char *name, const int *hows, size_t nhows)
{
	struct measured ms;
	assert_int_equal(load_measured(&ms, "corpora/kt-convolution/convolution_2080ti.yaml", NULL,
	                               "corpora/kt-convolution/convolution_2080ti.csv"),
	                 0);
	int differ = 0;
	assert_true(nhows <= 3);
	for (uint64_t seed = 1; seed <= 3; seed++) {
		strategy_result r[4];
		for (size_t h = 0; h <= nhows; h++) {
			struct warped w = {.rp = ms.rp, .opt = ms.best, .how = h ? hows[h - 1] : 0};
			strategy_opts o = {.budget = 80,
			                   .seed = seed,
			                   .strategy = name,
			                   .objective = warped_objective,
			                   .objective_ctx = &w};
			assert_int_equal(strategy_run(ms.sp, &o, &r[h], NULL), 0);
			assert_int_equal(r[h].nrecords, 80);
		}
		for (size_t h = 1; h <= nhows; h++)
			for (size_t i = 0; i < 80; i++)
				if (r[h].records[i].index != r[0].records[i].index) {
					differ++;
					break;
				}
		for (size_t h = 0; h <= nhows; h++)
			strategy_result_free(&r[h]);
	}
	free_measured(&ms);
	return differ;
}

/* The model proposes the same configurations whatever strictly increasing
 * change of the times it is given: its forest fits the times' ranks. A
 * forest over log times (before session 27) fails this: a shift squeezes
 * the slow end. So the model's search depends on the order of the
 * variants' times, not on how far apart the slow ones are. */
static void test_model_sees_only_order(void **state)
{
	(void)state;
	static const int hows[] = {1, 2, 3};
	assert_int_equal(runs_that_differ("model", hows, 3), 0);
}

/* auto's bandit credits an arm by how much its proposal improved the best
 * (strategy_bandit_gain), a ratio: a change of the times' unit changes no
 * proposal, and a change that moves the ratios (the power 1.8) changes
 * some run of the three, or the bandit would not be reading them. */
static void test_auto_sees_ratios_only(void **state)
{
	(void)state;
	static const int unit[] = {3}, power[] = {2};
	assert_int_equal(runs_that_differ(NULL, unit, 1), 0);
	assert_true(runs_that_differ(NULL, power, 1) > 0);
}

/* The bandit's credit: nothing for no improvement or a failure, 1 for the
 * first ok result, for a gain of 5% or more and for a time the ratio cannot
 * weigh (0), in proportion below. */
static void test_bandit_gain(void **state)
{
	(void)state;
	assert_true(strategy_bandit_gain(1.0, 1.0) == 0);
	assert_true(strategy_bandit_gain(1.0, 1.2) == 0);
	assert_true(strategy_bandit_gain(1.0, INFINITY) == 0);
	assert_true(strategy_bandit_gain(INFINITY, INFINITY) == 0);
	assert_true(strategy_bandit_gain(INFINITY, 3e-6) == 1);
	assert_true(strategy_bandit_gain(1.0, 1.0 / 1.06) == 1);
	assert_true(strategy_bandit_gain(1.0, NAN) == 0);
	assert_true(strategy_bandit_gain(1.0, 0.0) == 1);
	assert_true(strategy_bandit_gain(1.0, 0.5) == 1);
	assert_float_equal(strategy_bandit_gain(1.0, 1.0 / 1.01), 0.2, 1e-12);
	assert_float_equal(strategy_bandit_gain(2e-3, 2e-3 / 1.025), 0.5, 1e-12);
	/* the unit does not matter */
	assert_float_equal(strategy_bandit_gain(2e-6, 2e-6 / 1.025), 0.5, 1e-12);
}

/* With the defaults measured first, the model's first proposal is the middle
 * of the space, and it never proposes the middle again. */
static void test_model_middle_after_defaults(void **state)
{
	muh_spec *s = parse(small);
	muh_space *sp;
	muh_diag d;
	assert_int_equal(space_build(s, NULL, 0, &sp, &d), 0);
	uint64_t middle = middle_by_hand(sp);
	struct checked c;
	checked_init(&c, sp, bowl, NULL);
	strategy_opts o = {.budget = 6,
	                   .seed = 3,
	                   .strategy = "model",
	                   .skip_spec_seeds = 1,
	                   .objective = checked_objective,
	                   .objective_ctx = &c};
	strategy_result r;
	assert_int_equal(strategy_run(sp, &o, &r, &d), 0);
	assert_string_equal(r.records[0].source, "default");
	assert_true(r.records[0].index != middle);
	assert_string_equal(r.records[1].source, "model");
	assert_int_equal(r.records[1].index, middle);
	for (size_t i = 2; i < r.nrecords; i++)
		assert_true(r.records[i].index != middle);
	strategy_result_free(&r);
	free(c.seen);
	space_free(sp);
	spec_free(s);
}

static void test_exhaust_with_failures(void **state)
{
	muh_spec *s = parse(small);
	muh_space *sp;
	muh_diag d;
	assert_int_equal(space_build(s, NULL, 0, &sp, &d), 0);
	for (size_t k = 0; strategy_names[k]; k++)
		for (uint64_t budget = 1; budget <= space_valid(sp) + 5; budget += 7) {
			struct checked c;
			checked_init(&c, sp, bowl, NULL);
			strategy_opts o = {.strategy = strategy_names[k],
			                   .budget = budget,
			                   .seed = budget,
			                   .objective = checked_objective,
			                   .objective_ctx = &c};
			strategy_result r;
			assert_int_equal(strategy_run(sp, &o, &r, &d), 0);
			uint64_t want = budget < space_valid(sp) ? budget : space_valid(sp);
			assert_int_equal(c.calls, want);
			assert_int_equal(r.nrecords, want);
			uint64_t failed = 0;
			for (uint64_t i = 0; i < r.nrecords; i++)
				failed += r.records[i].status != 0;
			assert_int_equal(failed, r.failed);
			if (r.have_best)
				assert_int_equal(r.records[r.best].status, 0);
			if (want == space_valid(sp)) {
				assert_int_equal(r.stop, STRATEGY_STOP_EXHAUSTED);
				assert_true(r.failed > 0);
				assert_true(fabs(r.records[r.best].time_s - 1.0) <
				            1e-12); /* A=5,B=4,C=2 */
			}
			strategy_result_free(&r);
			free(c.seen);
		}
	space_free(sp);
	spec_free(s);
}

/* Replay answers, with every third configuration (by space index) failing. */
struct failing {
	const muh_space *sp;
	muh_replay *rp;
	uint64_t failed;
};

static int failing_objective(void *ctx, const uint32_t *cfg, strategy_measurement *m)
{
	struct failing *f = ctx;
	uint64_t i;
	assert_int_equal(space_index_of(f->sp, cfg, &i), 0);
	if (i % 3 == 1) {
		f->failed++;
		m->status = 5;
		m->status_text = "compile_error";
		return 0;
	}
	return replay_objective(f->rp, cfg, m);
}

/* Every fifth configuration is predicted to fail (hidden constraints). */
static int predict_every_fifth(void *ctx, const uint32_t *cfg, char *why, size_t n)
{
	uint64_t i;
	assert_int_equal(space_index_of(ctx, cfg, &i), 0);
	if (i % 5 != 2)
		return 0;
	snprintf(why, n, "index %llu", (unsigned long long)i);
	return 1;
}

/* Budget semantics, the same for every strategy, auto and model included
 * (docs/tune.md): the objective is called exactly `budget` times for
 * distinct valid configurations; the defaults are call 1; the spec's seeds
 * come next and count; failed variants count; a configuration predicted to
 * fail is recorded but not measured and does not count. On the measured
 * cpu_matmul space, budgets 1 to 60, with and without seeds and hidden
 * constraints. */
static void test_budget_semantics(void **state)
{
	struct measured ms;
	assert_int_equal(load_measured(&ms, "tests/fixtures/spaces/cpu_matmul.yaml", NULL,
	                               "tests/fixtures/spaces/cpu_matmul.csv"),
	                 0);
	size_t nnames = 0;
	int have_auto = 0, have_model = 0;
	for (size_t k = 0; strategy_names[k]; k++, nnames++) {
		have_auto |= !strcmp(strategy_names[k], "auto");
		have_model |= !strcmp(strategy_names[k], "model");
	}
	assert_true(have_auto && have_model && nnames >= 7);
	/* two seeds: a valid one and the defaults again (skipped) */
	muh_seed seeds[2];
	uint32_t def[16];
	size_t np = space_nparams(ms.sp);
	assert_true(np <= 16);
	assert_true(space_default(ms.sp, def));
	uint32_t other[16];
	assert_int_equal(space_config_at(ms.sp, 8, other), 0);
	size_t idx0[16], idx1[16];
	for (size_t p = 0; p < np; p++)
		idx0[p] = other[p], idx1[p] = def[p];
	seeds[0] = (muh_seed){.idx = idx0, .line = 1};
	seeds[1] = (muh_seed){.idx = idx1, .line = 2};
	size_t saved_n = ms.spec->nseeds;
	muh_seed *saved = ms.spec->seeds;
	ms.spec->seeds = seeds;
	ms.spec->nseeds = 2;
	static const uint64_t budgets[] = {1, 2, 9, 60};
	for (size_t k = 0; strategy_names[k]; k++)
		for (size_t b = 0; b < sizeof(budgets) / sizeof(budgets[0]); b++)
			for (int variant = 0; variant < 3; variant++) {
				/* 0: no seeds; 1: seeds; 2: seeds and hidden constraints */
				struct failing f = {.sp = ms.sp, .rp = ms.rp};
				struct checked c;
				checked_init(&c, ms.sp, failing_objective, &f);
				strategy_opts o = {.strategy = strategy_names[k],
				                   .budget = budgets[b],
				                   .seed = 11 + b,
				                   .skip_spec_seeds = variant == 0,
				                   .objective = checked_objective,
				                   .objective_ctx = &c,
				                   .predict_fail = variant == 2 ? predict_every_fifth : NULL,
				                   .predict_ctx = ms.sp};
				strategy_result r;
				muh_diag d;
				assert_int_equal(strategy_run(ms.sp, &o, &r, &d), 0);
				const char *name = strategy_names[k];
				if (c.calls != budgets[b])
					fail_msg("%s: %llu objective calls for a budget of %llu", name,
					         (unsigned long long)c.calls, (unsigned long long)budgets[b]);
				assert_int_equal(r.nrecords - r.predicted, budgets[b]);
				assert_int_equal(r.budget, budgets[b]);
				assert_int_equal(r.stop, STRATEGY_STOP_BUDGET);
				assert_int_equal(r.failed, f.failed);
				if (budgets[b] >= 60)
					assert_true(f.failed > 0);
				if (variant == 2 && budgets[b] >= 60)
					assert_true(r.predicted > 0);
				if (variant != 2)
					assert_int_equal(r.predicted, 0);
				/* the defaults come first; measured, they are evaluation
				 * 1 and count; predicted to fail (this space's defaults
				 * are, under predict_every_fifth), they are recorded
				 * first and do not count */
				uint64_t di;
				assert_int_equal(space_index_of(ms.sp, def, &di), 0);
				assert_true(r.have_default);
				assert_string_equal(r.records[0].source, "default");
				assert_int_equal(r.records[0].index, di);
				if (variant == 2) {
					assert_int_equal(di % 5, 2);
					assert_int_equal(r.records[0].status, STRATEGY_PREDICTED);
				} else {
					assert_true(r.records[0].status != STRATEGY_PREDICTED);
				}
				/* the seeds next, once each, counted */
				uint64_t seeds_seen = 0;
				for (uint64_t i = 0; i < r.nrecords; i++)
					seeds_seen += !strcmp(r.records[i].source, "seed");
				if (variant == 0)
					assert_int_equal(seeds_seen, 0);
				else if (budgets[b] >= 2) {
					assert_int_equal(seeds_seen, 1);
					assert_string_equal(r.records[1].source, "seed");
					assert_int_equal(r.records[1].index, 8);
				}
				/* no repeats among the records either (predicted ones included) */
				for (uint64_t i = 0; i < r.nrecords; i++)
					for (uint64_t j = i + 1; j < r.nrecords; j++)
						assert_true(r.records[i].index != r.records[j].index);
				strategy_result_free(&r);
				free(c.seen);
			}
	ms.spec->seeds = saved;
	ms.spec->nseeds = saved_n;
	free_measured(&ms);
}

static double fake_clock(void *ctx)
{
	return *(double *)ctx;
}

static void test_time_budget(void **state)
{
	muh_spec *s = parse(small);
	muh_space *sp;
	muh_diag d;
	assert_int_equal(space_build(s, NULL, 0, &sp, &d), 0);
	double now = 100;
	struct checked c;
	checked_init(&c, sp, bowl, NULL);
	c.clock = &now;
	strategy_opts o = {.time_budget_s = 9.5,
	                   .objective = checked_objective,
	                   .objective_ctx = &c,
	                   .clock = fake_clock,
	                   .clock_ctx = &now};
	strategy_result r;
	assert_int_equal(strategy_run(sp, &o, &r, &d), 0);
	assert_int_equal(c.calls, 10); /* started at 0..9 s; none at 10 s */
	assert_int_equal(r.stop, STRATEGY_STOP_TIME);
	strategy_result_free(&r);
	free(c.seen);
	space_free(sp);
	spec_free(s);
}

static void test_deterministic_and_stop(void **state)
{
	muh_spec *s = parse(small);
	muh_space *sp;
	muh_diag d;
	assert_int_equal(space_build(s, NULL, 0, &sp, &d), 0);
	for (size_t k = 0; strategy_names[k]; k++) {
		strategy_result r1, r2;
		strategy_opts o = {
		    .strategy = strategy_names[k], .budget = 25, .seed = 42, .objective = bowl};
		assert_int_equal(strategy_run(sp, &o, &r1, &d), 0);
		assert_int_equal(strategy_run(sp, &o, &r2, &d), 0);
		assert_int_equal(r1.nrecords, r2.nrecords);
		for (uint64_t i = 0; i < r1.nrecords; i++)
			assert_int_equal(r1.records[i].index, r2.records[i].index);
		strategy_result_free(&r1);
		strategy_result_free(&r2);
		/* the event callback stops the run after the variant in flight */
		struct events e = {.stop_after = 5};
		o.on_event = count_events;
		o.event_ctx = &e;
		assert_int_equal(strategy_run(sp, &o, &r1, &d), 0);
		assert_int_equal(r1.nrecords, 5);
		assert_int_equal(r1.stop, STRATEGY_STOP_CALLER);
		strategy_result_free(&r1);
	}
	strategy_opts o = {.strategy = "nosuch", .objective = bowl};
	strategy_result r;
	assert_int_equal(strategy_run(sp, &o, &r, &d), MUH_EINPUT);
	assert_non_null(strstr(d.msg, "unknown strategy 'nosuch'; known: "));
	/* the list is the table's: every strategy, model too */
	for (size_t i = 0; strategy_names[i]; i++)
		assert_non_null(strstr(d.msg, strategy_names[i]));
	assert_non_null(strstr(d.msg, ", model"));
	assert_int_equal(strategy_check_name("model", &d), MUH_OK);
	strategy_result_free(&r);
	space_free(sp);
	spec_free(s);
}

/* Resume, as the store will do it: an interrupted run, then the same run
 * again with an objective that answers finished variants from what was
 * stored. The second run proposes the same configurations, measures only
 * the ones the first did not finish, and ends exactly at the budget. */
struct store_sim {
	uint64_t idx[512];
	double t[512];
	int status[512];
	size_t n;
	size_t measured; /* calls that were not answered from the store */
	const muh_space *sp;
};

static int stored_or_measure(void *ctx, const uint32_t *cfg, strategy_measurement *m)
{
	struct store_sim *st = ctx;
	uint64_t i;
	space_index_of(st->sp, cfg, &i);
	for (size_t k = 0; k < st->n; k++)
		if (st->idx[k] == i) {
			m->time_s = st->t[k];
			m->status = st->status[k];
			return 0;
		}
	bowl(NULL, cfg, m);
	st->measured++;
	st->idx[st->n] = i;
	st->t[st->n] = m->time_s;
	st->status[st->n++] = m->status;
	return 0;
}

static int stop_at_15(void *ctx, const strategy_event *ev)
{
	return ev->kind == STRATEGY_EV_VARIANT && ev->evaluated == 15;
}

static void test_resume_by_determinism(void **state)
{
	muh_spec *s = parse(small);
	muh_space *sp;
	muh_diag d;
	assert_int_equal(space_build(s, NULL, 0, &sp, &d), 0);
	for (size_t k = 0; strategy_names[k]; k++) {
		struct store_sim st = {.sp = sp};
		strategy_opts o = {.strategy = strategy_names[k],
		                   .budget = 40,
		                   .seed = 5,
		                   .objective = stored_or_measure,
		                   .objective_ctx = &st,
		                   .on_event = stop_at_15};
		strategy_result r1, r2, r3;
		assert_int_equal(strategy_run(sp, &o, &r1, &d), 0); /* Ctrl-C after 15 */
		assert_int_equal(r1.nrecords, 15);
		assert_int_equal(st.measured, 15);
		o.on_event = NULL;
		assert_int_equal(strategy_run(sp, &o, &r2, &d), 0); /* resumed */
		assert_int_equal(r2.nrecords, 40);
		assert_int_equal(st.measured, 40); /* only 25 new measurements */
		for (uint64_t i = 0; i < 15; i++)
			assert_int_equal(r1.records[i].index, r2.records[i].index);
		struct store_sim fresh = {.sp = sp};
		o.objective_ctx = &fresh;
		assert_int_equal(strategy_run(sp, &o, &r3, &d), 0); /* never interrupted */
		for (uint64_t i = 0; i < 40; i++)
			assert_int_equal(r2.records[i].index, r3.records[i].index);
		strategy_result_free(&r1);
		strategy_result_free(&r2);
		strategy_result_free(&r3);
	}
	space_free(sp);
	spec_free(s);
}

static int env_error(void *ctx, const uint32_t *cfg, strategy_measurement *m)
{
	int *n = ctx;
	if (++*n == 4)
		return MUH_EENV;
	m->time_s = 1;
	return 0;
}

static void test_objective_error(void **state)
{
	muh_spec *s = parse(small);
	muh_space *sp;
	muh_diag d;
	assert_int_equal(space_build(s, NULL, 0, &sp, &d), 0);
	int n = 0;
	strategy_opts o = {.strategy = "random", .objective = env_error, .objective_ctx = &n};
	strategy_result r;
	assert_int_equal(strategy_run(sp, &o, &r, &d), MUH_EENV);
	assert_int_equal(r.nrecords, 3);
	assert_int_equal(r.stop, STRATEGY_STOP_ERROR);
	strategy_result_free(&r);
	space_free(sp);
	spec_free(s);
}

static void test_replay_csv(void **state)
{
	muh_spec *s = parse(small);
	muh_space *sp;
	muh_diag d;
	assert_int_equal(space_build(s, NULL, 0, &sp, &d), 0);
	char path[] = "/tmp/muh_replay_XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	FILE *f = fdopen(fd, "w");
	fputs("# a comment\n"
	      "alpha,B,C,status,time_ms,msg\r\n"
	      "1,1,0,ok,2.5,\r\n"
	      "2,1.0,0,ok,1.5,\"quoted, with comma\"\n"
	      "3,1,0,compile_error,,\"line\nbreak\"\n"
	      "8,16,0,ok,1,\n" /* invalid: A * B > 40 */
	      "9,1,0,ok,1,\n"  /* outside: A has no 9 */
	      "1,1,0,ok,9,\n"  /* duplicate: the first wins */
	      "4,1,0,ok,,\n",  /* ok without a time */
	      f);
	fclose(f);
	const char *map[] = {"A=alpha", NULL};
	muh_replay *rp;
	int rc = replay_load_csv(sp, path, map, &rp, &d);
	if (rc)
		fail_msg("%s:%d: %s", d.file, d.line, d.msg);
	replay_stats st;
	replay_get_stats(rp, &st);
	assert_int_equal(st.rows, 7);
	assert_int_equal(st.used, 4);
	assert_int_equal(st.failed, 2);
	assert_int_equal(st.invalid, 1);
	assert_int_equal(st.outside, 1);
	assert_int_equal(st.duplicate, 1);
	assert_int_equal(st.covered, 4);
	strategy_measurement m;
	uint32_t cfg[3] = {0, 0, 0};
	assert_int_equal(replay_lookup(rp, cfg, &m), 1);
	assert_true(fabs(m.time_s - 2.5e-3) < 1e-15);
	assert_int_equal(m.status, REPLAY_OK);
	cfg[0] = 2;
	assert_int_equal(replay_lookup(rp, cfg, &m), 1);
	assert_int_equal(m.status, REPLAY_FAILED);
	assert_string_equal(m.status_text, "compile_error");
	cfg[0] = 3;
	assert_int_equal(replay_lookup(rp, cfg, &m), 1);
	assert_string_equal(m.status_text, "no_time");
	cfg[0] = 4;
	assert_int_equal(replay_lookup(rp, cfg, &m), 0);
	assert_int_equal(m.status, REPLAY_NOT_MEASURED);
	uint64_t bi;
	double bt;
	assert_true(replay_best(rp, &bi, &bt));
	assert_true(fabs(bt - 1.5e-3) < 1e-15);
	replay_free(rp);
	/* a missing column is an input error at the header line */
	assert_int_equal(replay_load_csv(sp, path, NULL, &rp, &d), MUH_EINPUT);
	assert_non_null(strstr(d.msg, "no column 'A'"));
	assert_int_equal(d.line, 2);
	assert_null(rp);
	/* a malformed time */
	f = fopen(path, "w");
	fputs("A,B,C,time_s\n1,1,0,fast\n", f);
	fclose(f);
	assert_int_equal(replay_load_csv(sp, path, NULL, &rp, &d), MUH_EINPUT);
	assert_int_equal(d.line, 2);
	unlink(path);
	assert_int_equal(replay_load_csv(sp, path, NULL, &rp, &d), MUH_EENV);
	/* a directory: the message gives the read's own cause, not EIO's */
	assert_int_equal(replay_load_csv(sp, ".", NULL, &rp, &d), MUH_EENV);
	assert_non_null(strstr(d.msg, strerror(EISDIR)));
	space_free(sp);
	spec_free(s);
}

static void test_parse_duration(void **state)
{
	double s;
	assert_int_equal(duration_parse("90", &s), 0);
	assert_true(s == 90);
	assert_int_equal(duration_parse("15m", &s), 0);
	assert_true(s == 900);
	assert_int_equal(duration_parse("1h30m", &s), 0);
	assert_true(s == 5400);
	assert_int_equal(duration_parse("2.5h", &s), 0);
	assert_true(s == 9000);
	assert_int_equal(duration_parse("500ms", &s), 0);
	assert_true(fabs(s - 0.5) < 1e-12);
	assert_int_equal(duration_parse("", &s), -1);
	assert_int_equal(duration_parse("0", &s), -1);
	assert_int_equal(duration_parse("5x", &s), -1);
	assert_int_equal(duration_parse("-3s", &s), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_defaults_then_seeds),
	    cmocka_unit_test(test_skip_defaults),
	    cmocka_unit_test(test_model_middle_after_defaults),
	    cmocka_unit_test(test_model_sees_only_order),
	    cmocka_unit_test(test_auto_sees_ratios_only),
	    cmocka_unit_test(test_bandit_gain),
	    cmocka_unit_test(test_model_tree),
	    cmocka_unit_test(test_model_convolution),
	    cmocka_unit_test(test_exhaust_with_failures),
	    cmocka_unit_test(test_budget_semantics),
	    cmocka_unit_test(test_time_budget),
	    cmocka_unit_test(test_deterministic_and_stop),
	    cmocka_unit_test(test_resume_by_determinism),
	    cmocka_unit_test(test_objective_error),
	    cmocka_unit_test(test_replay_csv),
	    cmocka_unit_test(test_parse_duration),
	    cmocka_unit_test(test_model_spreads_first_points),
	    cmocka_unit_test(test_acceptance_cpu_matmul),
	    cmocka_unit_test(test_acceptance_h200_fused_moe),
	    cmocka_unit_test(test_rules_cpu_transpose),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
