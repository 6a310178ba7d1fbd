/*
 * strategy.c — the search driver: budgets, the defaults-then-seeds start,
 * the no-repeat and validity guarantees, events, and the "auto" bandit.
 *
 * The driver owns everything every strategy must obey, so that a technique
 * (strategy_tech.c and the strategy_METHOD.c files) only has to be good at
 * proposing:
 *   - the evaluated set (a map from space index to record), which is how
 *     "never repeat" is checked for every proposal;
 *   - the budget count and the clock, checked before every objective call;
 *   - the start: defaults, then the spec's seeds, then the transfer seeds,
 *     each once;
 *   - the best-so-far and the event stream.
 *
 * "auto" is a multi-armed bandit over the techniques in strategy_bandit_arms,
 * as OpenTuner's AUCBanditMetaTechnique: over a sliding window of recent
 * proposals, each arm's exploitation term is the area under its curve of
 * "how much this proposal improved the best so far" (later successes weigh
 * more), normalised to [0, 1], plus an exploration term C * sqrt(2 log2 n /
 * uses). An arm that has never been used is chosen first. Every arm
 * observes every result, and the local ones follow a better configuration
 * found by another.
 *
 * How much (strategy_bandit_gain, session 29): OpenTuner credits every
 * improvement 1. muh credits a gain (best / t - 1) of BANDIT_GAIN_FULL or
 * more 1 and a smaller one in proportion, so that ils stepping 0.5% at a
 * time from mediocre defaults does not outbid a model that jumps 10%.
 * Measured by replay (bench/search_score.py --no-kt --muh-strategies auto, 33 spaces,
 * mean score over the spaces and the budgets 1/2/5/10%, as users run it),
 * every improvement 1 -> in proportion, on two samples of 30 seeds:
 *   - the 27 GPU spaces: seeds 1-30 +0.613 -> +0.630, 31-60 +0.615 -> +0.630;
 *   - the convolution and dedispersion spaces (the outside spaces'
 *     families): +0.683 -> +0.695 and +0.684 -> +0.710 (at 1%: +0.420 ->
 *     +0.416 and +0.416 -> +0.454);
 *   - the reductions, flat spaces where ils's small steps won the bandit
 *     and the score stayed below random search's: h100_reduce_inst1 -0.223
 *     -> +0.048 and -0.170 -> -0.006;
 *   - all 33: +0.513 -> +0.548 and +0.537 -> +0.533, the second sample's
 *     loss one flat CPU sweep timed on a busy machine (cpu_matmul_O2, +0.383
 *     on the first sample and -0.732 on the second).
 * The bandit now reads how far apart times are, not only their order; a
 * change of the times' unit changes nothing (test_strategy's
 * test_auto_sees_ratios_only). docs/results/strategies-s27-experiments.md
 * has the tables.
 *
 * The arms are model (a surrogate, an additive one with pairwise terms when
 * these arms were chosen and a random forest since session 19; it finds the
 * good region in few evaluations) and ils (which descends from the best
 * found and wins at larger budgets). Measured by replay over the
 * repository's nine full sweeps at 2%, 5% and 10% of each space, 30 seeds,
 * no spec seeds (docs/results/strategies.md): the mean of median and p10
 * over those 27 cells was 0.859 with the earlier arms ils and annealing
 * (C = 0.05), 0.879 with model and ils; alone, model gave 0.878, ils 0.850
 * and annealing 0.854. C = 0.2 lets the bandit come back to the model when
 * ils stalls. genetic, random and annealing stay strategies of their own.
 *
 * It never prints, never exits, and never calls the objective with an
 * invalid or already evaluated configuration (asserted).
 */
#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "muh/muh.h"
#include "muh/strategy.h"
#include "strategy_int.h"
#include "strbuf.h"
#include "u64map.h"

const char *const strategy_names[] = {"auto", "brute", "random", "annealing",
                                      "genetic", "ils", "model", NULL};
const char *const strategy_bandit_arms[] = {"model", "ils", NULL};

#define NARMS         4
#define BANDIT_WINDOW 500
#define BANDIT_C      0.2
/* a gain (best / t - 1) of this much or more is credited 1 */
#define BANDIT_GAIN_FULL 0.05

struct search {
	const muh_space *sp;
	const strategy_opts *o;
	const char *name; /* the strategy: o->strategy, or "auto" */
	size_t np;
	uint64_t valid;
	uint64_t budget;
	uint64_t rng;
	u64map seen; /* space index -> record number */
	strategy_result *r;
	size_t cap;
	uint32_t *best_cfg;
	double best;
	double t0;
	/* the bandit */
	technique arms[NARMS];
	size_t narms;
	unsigned char win_arm[BANDIT_WINDOW];
	double win_gain[BANDIT_WINDOW]; /* strategy_bandit_gain, in [0, 1] */
	size_t win_n, win_pos;
	uint64_t uses[NARMS];
};

const char *strategy_doc(const char *name)
{
	static const char *const docs[][2] = {
	    {"auto", "a bandit over model and ils (OpenTuner's AUC bandit), credited by the area "
	             "under the curve of each proposal's gain over the best"},
	    {"brute", "every valid configuration, in index order"},
	    {"random", "uniform over the valid configurations, never repeating"},
	    {"annealing", "simulated annealing over neighbours, cooling with the budget, restarts "
	                  "when stuck"},
	    {"genetic", "a genetic algorithm: tournament selection, uniform crossover, mutation"},
	    {"ils", "iterated local search: first-improvement over neighbours, perturbation at "
	            "local optima"},
	    {"model", "a random forest over the times' ranks (48 regression trees on bootstrap "
	              "samples); proposes the unseen configuration it predicts fastest, with a "
	              "bonus for rarely seen values"},
	};
	for (size_t i = 0; i < sizeof(docs) / sizeof(docs[0]); i++)
		if (name && !strcmp(name, docs[i][0]))
			return docs[i][1];
	return NULL;
}

/* ---- services for the techniques ------------------------------------------ */

const muh_space *search_space(const search *s)
{
	return s->sp;
}

size_t search_nparams(const search *s)
{
	return s->np;
}

uint64_t search_rand(search *s)
{
	return space_rand(&s->rng);
}

double search_unif(search *s)
{
	return (double)(search_rand(s) >> 11) * (1.0 / 9007199254740992.0);
}

uint64_t search_below(search *s, uint64_t n)
{
	assert(n > 0);
	return search_rand(s) % n;
}

int search_seen(const search *s, const uint32_t *cfg, double *time)
{
	uint64_t i, rec;
	if (space_index_of(s->sp, cfg, &i))
		return -1;
	if (!u64map_get(&s->seen, i, &rec))
		return 0;
	if (time)
		*time = s->r->records[rec].time_s;
	return 1;
}

int search_random_unseen(search *s, uint32_t *cfg)
{
	uint64_t left = s->valid - s->r->nrecords;
	if (!left)
		return 0;
	for (int tries = 0; tries < 64; tries++) {
		if (space_sample(s->sp, &s->rng, cfg))
			break;
		if (search_seen(s, cfg, NULL) == 0)
			return 1;
	}
	/* Most of the space is evaluated: draw uniformly among what is left. */
	uint64_t k = search_below(s, left);
	for (uint64_t i = 0; i < s->valid; i++) {
		if (u64map_get(&s->seen, i, NULL))
			continue;
		if (k-- == 0)
			return space_config_at(s->sp, i, cfg) == 0;
	}
	return 0;
}

/* ---- the middle of the space ------------------------------------------- */

/* How far cfg lies from the middle of every param's value list: the sum
 * over params of |index - (nvalues - 1) / 2| / (nvalues - 1). */
static double center_distance(const muh_spec *spec, const uint32_t *cfg, size_t np)
{
	double d = 0;
	for (size_t p = 0; p < np; p++) {
		size_t nv = spec->params[p].nvalues;
		if (nv > 1)
			d += fabs((double)cfg[p] - (double)(nv - 1) / 2.0) / (double)(nv - 1);
	}
	return d;
}

/* Spaces of at most CENTER_SCAN valid configurations are scanned whole;
 * larger ones are sampled CENTER_SAMPLES times from a fixed generator, so
 * the answer is the same on every call. */
#define CENTER_SCAN    20000
#define CENTER_SAMPLES 4096

double search_center_distance(const search *s, const uint32_t *cfg)
{
	return center_distance(space_spec(s->sp), cfg, s->np);
}

int search_center(search *s, uint32_t *cfg, int unseen_only)
{
	const muh_spec *spec = space_spec(s->sp);
	uint32_t tmp[64];
	uint32_t *c = s->np <= 64 ? tmp : malloc(s->np * sizeof(uint32_t));
	if (!c)
		return -MUH_ENOMEM;
	double best = INFINITY;
	int got = 0;
	uint64_t rng = 0x9e3779b97f4a7c15ULL;
	uint64_t n = s->valid <= CENTER_SCAN ? s->valid : CENTER_SAMPLES;
	for (uint64_t i = 0; i < n; i++) {
		int bad = s->valid <= CENTER_SCAN ? space_config_at(s->sp, i, c) : space_sample(s->sp, &rng, c);
		if (bad || (unseen_only && search_seen(s, c, NULL) != 0))
			continue;
		double d = center_distance(spec, c, s->np);
		if (d < best) {
			best = d;
			memcpy(cfg, c, s->np * sizeof(uint32_t));
			got = 1;
		}
	}
	if (c != tmp)
		free(c);
	return got;
}

const uint32_t *search_best(const search *s, double *time)
{
	if (!s->r->have_best)
		return NULL;
	if (time)
		*time = s->best;
	return s->best_cfg;
}

double search_progress(const search *s)
{
	return s->budget ? (double)(s->r->nrecords - s->r->predicted) / (double)s->budget : 1.0;
}

uint64_t search_budget(const search *s)
{
	return s->budget;
}

uint64_t search_evaluated(const search *s)
{
	return s->r->nrecords;
}

/* ---- the bandit ----------------------------------------------------------- */

/* OpenTuner's AUC credit of arm a over the window, in [0, 1]. */
static double bandit_auc(const search *s, size_t a)
{
	double pos = 0, auc = 0;
	size_t start = (s->win_pos + BANDIT_WINDOW - s->win_n) % BANDIT_WINDOW;
	for (size_t k = 0; k < s->win_n; k++) {
		size_t j = (start + k) % BANDIT_WINDOW;
		if (s->win_arm[j] != a)
			continue;
		pos += 1;
		auc += pos * s->win_gain[j];
	}
	return pos ? auc * 2.0 / (pos * (pos + 1.0)) : 0.0;
}

/* Arms in the order the bandit would try them now, best score first. */
static size_t bandit_order(const search *s, size_t *order)
{
	double score[NARMS];
	for (size_t a = 0; a < s->narms; a++) {
		if (!s->uses[a] || !s->win_n)
			score[a] = INFINITY;
		else
			score[a] = bandit_auc(s, a) + BANDIT_C * sqrt(2.0 * log2((double)s->win_n) /
			                                              (double)s->uses[a]);
		order[a] = a;
	}
	/* insertion sort, stable: ties keep the arm order */
	for (size_t i = 1; i < s->narms; i++)
		for (size_t j = i; j > 0 && score[order[j]] > score[order[j - 1]]; j--) {
			size_t t = order[j];
			order[j] = order[j - 1];
			order[j - 1] = t;
		}
	return s->narms;
}

double strategy_bandit_gain(double best, double t)
{
	if (!(t < best))
		return 0; /* no improvement, or a failure (INFINITY, NaN) */
	if (!isfinite(best) || !(t > 0))
		return 1; /* the first ok result, or a time the ratio cannot weigh */
	double g = (best / t - 1.0) / BANDIT_GAIN_FULL;
	return g < 1 ? g : 1;
}

static void bandit_credit(search *s, size_t arm, double gain)
{
	s->win_arm[s->win_pos] = (unsigned char)arm;
	s->win_gain[s->win_pos] = gain;
	s->win_pos = (s->win_pos + 1) % BANDIT_WINDOW;
	if (s->win_n < BANDIT_WINDOW)
		s->win_n++;
	s->uses[arm]++;
}

/* ---- the driver ----------------------------------------------------------- */

static double wall(const search *s)
{
	if (s->o->clock)
		return s->o->clock(s->o->clock_ctx);
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int emit(search *s, const strategy_event *ev)
{
	return s->o->on_event ? s->o->on_event(s->o->event_ctx, ev) : 0;
}

/* Evaluates cfg (valid, unseen): objective, record, best, observers, event.
 * *stop is set when the event callback asks to stop. */
static int evaluate(search *s, const uint32_t *cfg, const char *source, int own_arm, int *stop)
{
	uint64_t idx;
	int rc = space_index_of(s->sp, cfg, &idx);
	assert(rc == 0);
	assert(!u64map_get(&s->seen, idx, NULL));
	if (rc)
		return MUH_EINPUT;
	strategy_result *r = s->r;
	if (array_grow(&r->records, &s->cap, r->nrecords, sizeof(*r->records), 64))
		return MUH_ENOMEM;
	if (u64map_put(&s->seen, idx, r->nrecords))
		return MUH_ENOMEM;
	strategy_measurement m = {.time_s = 0, .status = 0, .status_text = NULL};
	char why[512];
	if (s->o->predict_fail && s->o->predict_fail(s->o->predict_ctx, cfg, why, sizeof(why))) {
		strategy_record *rec = &r->records[r->nrecords++];
		rec->index = idx;
		rec->time_s = INFINITY;
		rec->status = STRATEGY_PREDICTED;
		rec->source = source;
		r->predicted++;
		if (own_arm >= 0)
			bandit_credit(s, (size_t)own_arm, 0);
		for (size_t a = 0; a < s->narms; a++)
			s->arms[a].observe(&s->arms[a], s, cfg, INFINITY, (int)a == own_arm);
		strategy_event ev = {.kind = STRATEGY_EV_PREDICTED, .cfg = cfg, .index = idx, .source = source,
				     .reason = why, .evaluated = r->nrecords - r->predicted, .failed = r->failed,
				     .budget = s->budget, .elapsed_s = wall(s) - s->t0};
		if (emit(s, &ev)) {
			*stop = 1;
			r->stop = STRATEGY_STOP_CALLER;
		}
		return MUH_OK;
	}
	rc = s->o->objective(s->o->objective_ctx, cfg, &m);
	if (rc) {
		/* not a finished variant: forget it so that a resumed run retries it */
		r->stop = STRATEGY_STOP_ERROR;
		return rc;
	}
	int ok = m.status == 0 && isfinite(m.time_s);
	double t = ok ? m.time_s : INFINITY;
	strategy_record *rec = &r->records[r->nrecords];
	rec->index = idx;
	rec->time_s = t;
	rec->status = m.status ? m.status : (ok ? 0 : -1);
	rec->source = source;
	int improved = ok && (!r->have_best || t < s->best);
	double gain = strategy_bandit_gain(r->have_best ? s->best : INFINITY, t);
	if (improved) {
		r->have_best = 1;
		r->best = r->nrecords;
		s->best = t;
		memcpy(s->best_cfg, cfg, s->np * sizeof(uint32_t));
	}
	r->nrecords++;
	if (!ok)
		r->failed++;
	if (own_arm >= 0)
		bandit_credit(s, (size_t)own_arm, gain);
	for (size_t a = 0; a < s->narms; a++)
		s->arms[a].observe(&s->arms[a], s, cfg, t, (int)a == own_arm);
	strategy_event ev = {
	    .kind = STRATEGY_EV_VARIANT,
	    .cfg = cfg,
	    .index = idx,
	    .source = source,
	    .m = &m,
	    .evaluated = r->nrecords - r->predicted,
	    .failed = r->failed,
	    .budget = s->budget,
	    .improved = improved,
	    .best_s = r->have_best ? s->best : INFINITY,
	    .best_cfg = r->have_best ? s->best_cfg : NULL,
	    .elapsed_s = wall(s) - s->t0,
	};
	if (emit(s, &ev)) {
		*stop = 1;
		r->stop = STRATEGY_STOP_CALLER;
	}
	return MUH_OK;
}

/* 1 when no further evaluation may start (and r->stop says why). */
static int out_of_budget(search *s)
{
	if (s->r->nrecords >= s->valid) {
		s->r->stop = STRATEGY_STOP_EXHAUSTED;
		return 1;
	}
	if (s->r->nrecords - s->r->predicted >= s->budget) {
		s->r->stop = STRATEGY_STOP_BUDGET;
		return 1;
	}
	if (s->o->time_budget_s > 0 && wall(s) - s->t0 >= s->o->time_budget_s) {
		s->r->stop = STRATEGY_STOP_TIME;
		return 1;
	}
	return 0;
}

/* Seed number k from source ("seed": line is its line in the spec;
 * "transfer": 0): skipped with an event when reason says why, else
 * evaluated while the budget lasts. Returns a status; *stop when done. */
static int try_seed(search *s, const uint32_t *cfg, const char *source, size_t k, int line, const char *reason,
		    int *stop)
{
	if (reason) {
		strategy_event ev = {.kind = STRATEGY_EV_SEED_SKIPPED,
		                     .cfg = cfg,
		                     .index = UINT64_MAX,
		                     .source = source,
		                     .seed = k,
		                     .seed_line = line,
		                     .reason = reason};
		if (emit(s, &ev))
			return *stop = 1, s->r->stop = STRATEGY_STOP_CALLER, MUH_OK;
		return MUH_OK;
	}
	if (out_of_budget(s))
		return *stop = 1, MUH_OK;
	return evaluate(s, cfg, source, -1, stop);
}

/* The defaults, then the spec's seeds. Returns a status; *stop when done. */
static int start(search *s, uint32_t *cfg, int *stop)
{
	const muh_spec *spec = space_spec(s->sp);
	int rc;
	if (s->o->skip_defaults) {
		/* the search alone: its own start stands where the defaults would,
		 * the middle of the space for a search, a random configuration
		 * for random and brute force */
		if (out_of_budget(s))
			return *stop = 1, MUH_OK;
		int mid = strcmp(s->name, "random") && strcmp(s->name, "brute");
		rc = mid ? search_center(s, cfg, 1) : search_random_unseen(s, cfg);
		if (rc < 0)
			return -rc;
		if (!rc)
			return MUH_OK;
		if ((rc = evaluate(s, cfg, mid ? "center" : "random", -1, stop)) || *stop)
			return rc;
	} else if (space_default(s->sp, cfg)) {
		if (out_of_budget(s))
			return *stop = 1, MUH_OK;
		uint64_t before = s->r->nrecords;
		rc = evaluate(s, cfg, "default", -1, stop);
		/* recorded: the defaults count even when the caller stops right
		 * after them (Ctrl-C during the first evaluation's report) */
		if (s->r->nrecords > before)
			s->r->have_default = 1;
		if (rc || *stop)
			return rc;
	} else {
		strategy_event ev = {.kind = STRATEGY_EV_DEFAULT_INVALID,
		                     .cfg = cfg,
		                     .index = UINT64_MAX,
		                     .source = "default",
		                     .reason = "the defaults break a constraint in this space"};
		if (emit(s, &ev))
			return *stop = 1, s->r->stop = STRATEGY_STOP_CALLER, MUH_OK;
	}
	if (s->o->baseline_cfg) {
		memcpy(cfg, s->o->baseline_cfg, s->np * sizeof(uint32_t));
		int seen = search_seen(s, cfg, NULL);
		if (seen) {
			strategy_event ev = {.kind = STRATEGY_EV_SEED_SKIPPED,
			                     .cfg = cfg,
			                     .index = UINT64_MAX,
			                     .source = "baseline",
			                     .reason = seen < 0 ? "breaks a constraint in this space"
			                                        : "already evaluated (it is the defaults)"};
			if (emit(s, &ev))
				return *stop = 1, s->r->stop = STRATEGY_STOP_CALLER, MUH_OK;
		} else { /* always measured, like the defaults: what a result is judged against */
			if ((rc = evaluate(s, cfg, "baseline", -1, stop)) || *stop)
				return rc;
		}
	}
	for (size_t k = 0; k < spec->nseeds && !s->o->skip_spec_seeds; k++) {
		const muh_seed *sd = &spec->seeds[k];
		const char *reason = NULL;
		/* omitted params take their defaults */
		space_default(s->sp, cfg);
		for (size_t p = 0; p < s->np; p++)
			if (sd->idx[p] != SIZE_MAX)
				cfg[p] = (uint32_t)sd->idx[p];
		int seen = search_seen(s, cfg, NULL);
		if (seen < 0)
			reason = "breaks a constraint in this space";
		else if (seen > 0)
			reason = "already evaluated (the defaults or an earlier seed)";
		if ((rc = try_seed(s, cfg, "seed", k, sd->line, reason, stop)) || *stop)
			return rc;
	}
	for (size_t k = 0; k < s->o->ntransfer_seeds; k++) {
		memcpy(cfg, s->o->transfer_seeds + k * s->np, s->np * sizeof(uint32_t));
		int seen = search_seen(s, cfg, NULL);
		const char *reason = !seen    ? NULL
		                     : seen < 0 ? "breaks a constraint in this space"
		                                : "already evaluated (the defaults or a seed)";
		if ((rc = try_seed(s, cfg, "transfer", k, 0, reason, stop)) || *stop)
			return rc;
	}
	return MUH_OK;
}

static int is_name(const char *name)
{
	for (size_t i = 0; strategy_names[i]; i++)
		if (!strcmp(name, strategy_names[i]))
			return 1;
	return 0;
}

int strategy_check_name(const char *name, muh_diag *d)
{
	char known[256] = "";
	size_t n = 0;
	if (name && is_name(name))
		return MUH_OK;
	for (size_t i = 0; strategy_names[i] && n < sizeof(known); i++)
		n += (size_t)snprintf(known + n, sizeof(known) - n, "%s%s", i ? ", " : "", strategy_names[i]);
	if (d)
		diag_clear(d);
	return diag_errorf(d, "unknown strategy '%s'; known: %s", name ? name : "", known);
}

int strategy_run(const muh_space *sp, const strategy_opts *o, strategy_result *r, muh_diag *d)
{
	memset(r, 0, sizeof(*r));
	const char *name = o->strategy ? o->strategy : "auto";
	if (strategy_check_name(name, d))
		return MUH_EINPUT;
	if (!o->objective) {
		if (d)
			diag_clear(d);
		return diag_errorf(d, "no objective to measure variants with");
	}
	search s;
	memset(&s, 0, sizeof(s));
	s.sp = sp;
	s.o = o;
	s.name = name;
	s.np = space_nparams(sp);
	s.valid = space_valid(sp);
	s.budget = o->budget && o->budget < s.valid ? o->budget : s.valid;
	s.rng = o->seed * 0x9e3779b97f4a7c15ULL + 0x2545f4914f6cdd1dULL;
	if (!s.rng)
		s.rng = 1;
	s.r = r;
	s.best = INFINITY;
	r->budget = s.budget;
	int rc = MUH_OK;
	uint32_t *cfg = malloc((s.np + 1) * sizeof(uint32_t));
	s.best_cfg = calloc(s.np + 1, sizeof(uint32_t));
	if (!cfg || !s.best_cfg) {
		rc = MUH_ENOMEM;
		goto out;
	}
	if (!strcmp(name, "auto")) {
		/* an arm counts as soon as it is made, whole or not: technique_new
		 * always sets its destroy, which frees a half-made one */
		for (size_t a = 0; strategy_bandit_arms[a] && a < NARMS; a++) {
			rc = technique_new(strategy_bandit_arms[a], &s, &s.arms[a]);
			s.narms++;
			if (rc)
				goto out;
		}
	} else {
		rc = technique_new(name, &s, &s.arms[0]);
		s.narms = 1;
		if (rc)
			goto out;
	}
	s.t0 = wall(&s);
	int stop = 0;
	if ((rc = start(&s, cfg, &stop)) || stop)
		goto out;
	int bandit = !strcmp(name, "auto");
	while (!out_of_budget(&s)) {
		size_t order[NARMS];
		size_t n = bandit ? bandit_order(&s, order) : (order[0] = 0, 1);
		int got = 0, arm = -1;
		for (size_t k = 0; k < n && !got; k++) {
			technique *t = &s.arms[order[k]];
			got = t->propose(t, &s, cfg);
			if (got < 0) {
				rc = -got;
				goto out;
			}
			arm = (int)order[k];
		}
		if (!got) /* no technique can propose: take any unevaluated one */
			got = search_random_unseen(&s, cfg), arm = -1;
		if (!got) {
			r->stop = STRATEGY_STOP_EXHAUSTED;
			break;
		}
		rc = evaluate(&s, cfg, arm >= 0 ? s.arms[arm].name : "random", arm, &stop);
		if (rc || stop)
			goto out;
	}
out:
	for (size_t a = 0; a < s.narms && a < 8; a++)
		r->bandit_uses[a] = s.uses[a];
	for (size_t a = 0; a < s.narms; a++)
		s.arms[a].destroy(&s.arms[a]);
	r->seconds = s.t0 ? wall(&s) - s.t0 : 0;
	u64map_free(&s.seen);
	free(cfg);
	free(s.best_cfg);
	return rc;
}

void strategy_result_free(strategy_result *r)
{
	free(r->records);
	r->records = NULL;
	r->nrecords = 0;
}

/* Faster first; ties by space index, so the order is reproducible. */
static int cmp_rec(const void *a, const void *b, void *ctx)
{
	const strategy_record *base = ctx;
	const strategy_record *x = &base[*(const uint64_t *)a], *y = &base[*(const uint64_t *)b];
	if (x->time_s != y->time_s)
		return x->time_s < y->time_s ? -1 : 1;
	return (x->index > y->index) - (x->index < y->index);
}

size_t strategy_top(const strategy_result *r, size_t k, uint64_t *out)
{
	uint64_t n = 0;
	uint64_t *all = malloc((r->nrecords + 1) * sizeof(uint64_t));
	if (!all)
		return 0;
	for (uint64_t i = 0; i < r->nrecords; i++)
		if (r->records[i].status == 0)
			all[n++] = i;
	qsort_r(all, n, sizeof(uint64_t), cmp_rec, r->records);
	if (k > n)
		k = n;
	memcpy(out, all, k * sizeof(uint64_t));
	free(all);
	return k;
}
