/*
 * strategy_model.c — the model-based search: a random forest over the
 * evaluated points, and a bonus for the values it has seen least.
 *
 * Every finished variant is a point (cfg, y = log time). The trees fit an
 * ok point's rank among the ok points over their number less one, 0 for
 * the fastest and 1 for the slowest (model_rank); a failure, or an ok
 * point more than MODEL_OUTLIER above the fastest, fits 1 +
 * MODEL_FAIL_RANK. So nothing but the times' order (and which points are
 * failures or outliers) reaches the model: its proposals are the same
 * under any strictly increasing change of the times (test_strategy's
 * test_model_sees_only_order; auto's bandit also reads how much a proposal
 * improved the best, strategy.c). The surrogate is a forest of
 * MODEL_TREES regression trees, each grown on a bootstrap sample of the
 * points (technique_model_tree): a node splits on "this param's value index
 * <= t" where that most reduces the squared error, over a random part of
 * the params, down to nodes of MODEL_TREE_MIN_SPLIT points. A split on the
 * index is a split on the value for a list in order (block sizes, tile
 * counts) and a split of a set of names in list order otherwise. A proposal
 * is the unseen valid configuration with the lowest forest mean minus
 * MODEL_EXPLORE x sum_p 1 / sqrt(1 + times value seen), the bonus the
 * additive model had (there times the range of the log times; the ranks'
 * range is 1). The trees' disagreement is not
 * used: scored as mean - k x sd (k 1, 2) or as expected improvement, the
 * search lost to the bonus on the replay set (below).
 *
 * Why a forest: it was an additive model (main effects and pairs, fitted by
 * ridge backfitting) until session 19. An additive fit takes a slow point's
 * time as the sum of its values' effects, so one slow point can mark a value
 * slow everywhere: on Kernel Tuner's convolution the defaults (16 x 16
 * threads, one output per thread) are slow, and the fit then avoided one
 * output per thread, which the optimum has with other block shapes. A tree
 * keeps that effect to the points beside it. Measured by replay
 * (bench/search_score.py --no-kt, auto, 22 spaces and the engine's second
 * grid, mean score over the spaces and the budgets 1/2/5/10%, as users run
 * it / without the defaults and the baseline), forest against the additive
 * model on three samples of 30 seeds:
 *   - the 17 GPU kernel spaces: seeds 1-30 +0.652 / +0.485 against +0.616 /
 *     +0.470; 31-60 +0.638 / +0.483 against +0.627 / +0.449; 61-90 +0.654 /
 *     +0.469 against +0.629 / +0.455 (ahead in both halves on every sample);
 *   - all 23 spaces: +0.515 / +0.502 / +0.496 against +0.500 / +0.520 /
 *     +0.504: the forest loses on the CPU sweeps (flat and timed on a busy
 *     machine, where a few microseconds move the score most) and on the
 *     llama.cpp grid measured once;
 *   - Kernel Tuner's convolution, as users run it: +0.633 / +0.650 / +0.577
 *     against +0.343 / +0.445 / +0.484.
 * These were measured with 24 trees. With 48, over all 23 spaces +0.530 /
 * +0.517 / +0.510 (ahead of 24 trees on every sample: averaging more trees
 * takes out more of the bootstrap's noise), GPU spaces +0.653 / +0.643 /
 * +0.654; 96 was not finished, and every param at every split (no random
 * part) gave +0.526 / +0.465 on seeds 1-30.
 * docs/results/strategies-s27-experiments.md has the tables.
 *
 * Why ranks (session 27): on log times a split's gain is ruled by the
 * slowest points. On muh's fused-MoE layer at M=2048 a quarter of the
 * space is 3x the optimum or more (BLOCK_SIZE_N 256 with 4 warps is 4.5x),
 * on Kernel Tuner's convolution half of it, and the splits go to
 * separating those from the rest while the near-optimal points, a few
 * percent apart, share leaves. Ranks weigh every step of the order alike.
 * Replay (bench/search_score.py, muh auto, 30 seeds, mean score over the
 * spaces and the budgets 1/2/5/10%, as users run it), log times -> ranks:
 *   - seeds 1-30, session 25's 32 spaces: +0.520 -> +0.512; the convolution
 *     and dedispersion spaces (the outside spaces' families) +0.676 ->
 *     +0.705; cpu_matmul_O2, a flat CPU sweep timed on a busy machine,
 *     -0.285 -> -0.973 at 1% (ranks give the noise among its near-equal
 *     configurations full weight);
 *   - seeds 31-60 and 61-90, 24 GPU spaces: +0.586 -> +0.597 and +0.599 ->
 *     +0.615; families +0.636 -> +0.644 and +0.621 -> +0.659.
 * Ranks scaled onto the log times' range (794c9a3) measured the same on
 * three samples, but broke exact split ties by rounding, so a monotone
 * change of the times changed the proposals. It costs muh's fused MoE at
 * M=2048 too. docs/results/strategies-s27-experiments.md has the tables.
 *
 * Until MODEL_MIN_POINTS points are in (the defaults and two more), it
 * proposes the middle of the space and points spread from it
 * (model_spread), so that the first fit sees most values of every param
 * instead of a cluster.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "muh/muh.h"
#include "strategy_int.h"

/* a failure's target, above the slowest ok point's 1 */
#define MODEL_FAIL_RANK 0.693
/* log of 1000: an ok point that much slower than the fastest seen is taken
 * as a failure. An objective with SLOs scores a miss 1e12 x (1 + how far it
 * misses) (objective_search_score); fitted as log times, before ranks,
 * those made the bonus 35 log units wide. A miss is a failure to the model;
 * when every point is a miss, they all lie within it of each other and are
 * ranked as they are. */
#define MODEL_OUTLIER        6.907755
#define MODEL_EXPLORE        0.3
#define MODEL_SCAN           20000
#define MODEL_SAMPLES        4096
#define MODEL_MIN_POINTS     3
#define MODEL_TREES          48
#define MODEL_TREE_MIN_SPLIT 3
#define MODEL_TREE_DEPTH     20
/* a param is a split candidate at a node with this probability, drawn as
 * search_below(s, 1000) < 800 */
#define MODEL_TREE_FEATURES  800

/* ---- the trees ------------------------------------------------------------ */

struct grow {
	search *s;
	const uint32_t *x;
	const double *y;
	size_t np;
	const size_t *nvalues;
	double *sum;   /* per value of the param being tried */
	uint32_t *cnt;
	model_node **nodes;
	size_t *nnodes, *cap;
};

static int32_t grow(struct grow *g, size_t *idx, size_t n, int depth)
{
	if (*g->nnodes == *g->cap) {
		size_t cap = *g->cap ? *g->cap * 2 : 64;
		model_node *nn = realloc(*g->nodes, cap * sizeof(model_node));
		if (!nn)
			return -1;
		*g->nodes = nn;
		*g->cap = cap;
	}
	int32_t me = (int32_t)(*g->nnodes)++;
	double tot = 0;
	for (size_t i = 0; i < n; i++)
		tot += g->y[idx[i]];
	model_node *nd = *g->nodes + me;
	nd->f = -1;
	nd->thr = 0;
	nd->l = nd->r = -1;
	nd->v = n ? tot / (double)n : 0;
	if (n < MODEL_TREE_MIN_SPLIT || depth > MODEL_TREE_DEPTH)
		return me;
	/* the split that most raises sum_side (sum^2 / count), which is the
	 * one that most lowers the squared error; at least a little */
	double best = 1e-12;
	int32_t bf = -1;
	uint32_t bthr = 0;
	for (size_t f = 0; f < g->np; f++) {
		if (g->s && search_below(g->s, 1000) >= MODEL_TREE_FEATURES)
			continue;
		size_t nv = g->nvalues[f];
		memset(g->sum, 0, nv * sizeof(double));
		memset(g->cnt, 0, nv * sizeof(uint32_t));
		for (size_t i = 0; i < n; i++) {
			uint32_t v = g->x[idx[i] * g->np + f];
			g->sum[v] += g->y[idx[i]];
			g->cnt[v]++;
		}
		double ls = 0;
		size_t ln = 0;
		for (size_t v = 0; v + 1 < nv; v++) {
			if (!g->cnt[v])
				continue;
			ls += g->sum[v];
			ln += g->cnt[v];
			if (ln == n)
				break;
			double rs = tot - ls, nl = (double)ln, nr = (double)(n - ln);
			double gain = ls * ls / nl + rs * rs / nr - tot * tot / (double)n;
			if (gain > best) {
				best = gain;
				bf = (int32_t)f;
				bthr = (uint32_t)v;
			}
		}
	}
	if (bf < 0)
		return me;
	size_t k = 0;
	for (size_t i = 0; i < n; i++)
		if (g->x[idx[i] * g->np + (size_t)bf] <= bthr) {
			size_t t = idx[k];
			idx[k++] = idx[i];
			idx[i] = t;
		}
	int32_t l = grow(g, idx, k, depth + 1);
	if (l < 0)
		return -1;
	int32_t r = grow(g, idx + k, n - k, depth + 1);
	if (r < 0)
		return -1;
	nd = *g->nodes + me; /* the array may have moved */
	nd->f = bf;
	nd->thr = bthr;
	nd->l = l;
	nd->r = r;
	return me;
}

int32_t technique_model_tree(model_node **nodes, size_t *nnodes, size_t *cap, search *s,
                             const uint32_t *x, const double *y, size_t np,
                             const size_t *nvalues, size_t *idx, size_t n)
{
	size_t maxnv = 1;
	for (size_t p = 0; p < np; p++)
		if (nvalues[p] > maxnv)
			maxnv = nvalues[p];
	struct grow g = {.s = s, .x = x, .y = y, .np = np, .nvalues = nvalues,
	                 .sum = malloc(maxnv * sizeof(double)),
	                 .cnt = malloc(maxnv * sizeof(uint32_t)),
	                 .nodes = nodes, .nnodes = nnodes, .cap = cap};
	int32_t root = g.sum && g.cnt ? grow(&g, idx, n, 0) : -1;
	free(g.sum);
	free(g.cnt);
	return root;
}

double technique_model_tree_pred(const model_node *nodes, int32_t root, const uint32_t *cfg)
{
	int32_t i = root;
	while (nodes[i].f >= 0)
		i = cfg[nodes[i].f] <= nodes[i].thr ? nodes[i].l : nodes[i].r;
	return nodes[i].v;
}

/* ---- the model ------------------------------------------------------------ */

struct model {
	size_t np, maxnb, n, cap, nvtot;
	uint32_t *x;     /* n x np */
	double *y;       /* n; NAN for a failure */
	double *yy;      /* n: the targets the trees fit */
	size_t *idx;     /* n: a tree's bootstrap sample */
	size_t *off;     /* per param: offset of its values in cnt */
	size_t *nvalues; /* per param */
	uint32_t *cnt, *cand, *nb;
	model_node *nodes; /* every tree's nodes */
	size_t nnodes, capnodes;
	int32_t root[MODEL_TREES];
	/* rest[t]: the sum of trees t.. 's lowest leaves, a floor under what
	 * those trees can add to a score (model_score's early stop) */
	double rest[MODEL_TREES + 1];
	double *bon; /* per value (at off[p] + v): MODEL_EXPLORE / sqrt(1 + times seen) */
};

/* 1 when y is an ok point the fit takes as it is: not a failure, and within
 * MODEL_OUTLIER of the lowest (lo). */
static int model_inlier(double y, double lo)
{
	return isfinite(y) && y <= lo + MODEL_OUTLIER;
}

struct ranked {
	double y;
	size_t i;
};

static int ranked_cmp(const void *a, const void *b)
{
	double x = ((const struct ranked *)a)->y, y = ((const struct ranked *)b)->y;
	return (x > y) - (x < y);
}

/* Sets the targets of the nok ok points (model_inlier over lo) to their
 * rank among them over nok - 1, 0 for the fastest and 1 for the slowest;
 * equal times share the mean of their ranks. MUH_OK or MUH_ENOMEM. */
static int model_rank(struct model *m, double lo, size_t nok)
{
	struct ranked *r = malloc(nok * sizeof(*r));
	if (!r)
		return MUH_ENOMEM;
	size_t k = 0;
	for (size_t i = 0; i < m->n; i++)
		if (model_inlier(m->y[i], lo))
			r[k++] = (struct ranked){m->y[i], i};
	qsort(r, nok, sizeof(*r), ranked_cmp);
	for (size_t a = 0; a < nok;) {
		size_t b = a + 1;
		while (b < nok && r[b].y == r[a].y)
			b++;
		double rank = 0.5 * (double)(a + b - 1); /* the mean of ranks a .. b-1 */
		for (size_t j = a; j < b; j++)
			m->yy[r[j].i] = rank / (double)(nok - 1);
		a = b;
	}
	free(r);
	return MUH_OK;
}

/* Grows the forest over the points, and counts how often each value was
 * seen. The trees fit the ok points' ranks over 1 (model_rank; a lone ok
 * point 0), and a failure or an outlier 1 + MODEL_FAIL_RANK: nothing but
 * the order of the times, and which are failures or outliers, reaches the
 * forest. MUH_OK or MUH_ENOMEM. */
static int model_fit(struct model *m, search *s)
{
	double lo = INFINITY;
	size_t nok = 0;
	for (size_t i = 0; i < m->n; i++)
		if (isfinite(m->y[i]))
			lo = fmin(lo, m->y[i]);
	for (size_t i = 0; i < m->n; i++)
		nok += model_inlier(m->y[i], lo);
	if (nok > 1 && model_rank(m, lo, nok))
		return MUH_ENOMEM;
	for (size_t i = 0; i < m->n; i++)
		if (!model_inlier(m->y[i], lo))
			m->yy[i] = 1.0 + MODEL_FAIL_RANK;
		else if (nok == 1)
			m->yy[i] = 0.0;
	memset(m->cnt, 0, m->nvtot * sizeof(uint32_t));
	for (size_t i = 0; i < m->n; i++)
		for (size_t p = 0; p < m->np; p++)
			m->cnt[m->off[p] + m->x[i * m->np + p]]++;
	m->nnodes = 0;
	for (size_t t = 0; t < MODEL_TREES; t++) {
		for (size_t i = 0; i < m->n; i++)
			m->idx[i] = (size_t)search_below(s, m->n);
		m->root[t] = technique_model_tree(&m->nodes, &m->nnodes, &m->capnodes, s, m->x, m->yy,
		                                  m->np, m->nvalues, m->idx, m->n);
		if (m->root[t] < 0)
			return MUH_ENOMEM;
	}
	/* a tree's nodes lie from its root to the next tree's (grow appends
	 * each node, the root first) */
	m->rest[MODEL_TREES] = 0;
	for (size_t t = MODEL_TREES; t-- > 0;) {
		size_t end = t + 1 < MODEL_TREES ? (size_t)m->root[t + 1] : m->nnodes;
		double low = INFINITY;
		for (size_t i = (size_t)m->root[t]; i < end; i++)
			if (m->nodes[i].f < 0)
				low = fmin(low, m->nodes[i].v);
		m->rest[t] = m->rest[t + 1] + low;
	}
	return MUH_OK;
}

/* The forest mean for c minus the bonus for its rarely seen values
 * (m->bon). Stops early, returning INFINITY, once the trees summed so far
 * and the lowest leaves of the rest cannot bring the score below best: a
 * score it finishes is the same number, summed in the same order, as
 * without the stop (the margin keeps rounding from cutting a winner). */
static double model_score(const struct model *m, const uint32_t *c, double best)
{
	double b = 0;
	for (size_t p = 0; p < m->np; p++)
		b += m->bon[m->off[p] + c[p]];
	double cut = (best + b + 1e-9 * (fabs(best) + fabs(b) + 1)) * MODEL_TREES;
	double y = 0;
	for (size_t t = 0; t < MODEL_TREES; t++) {
		if (t % 4 == 0 && y + m->rest[t] > cut)
			return INFINITY;
		y += technique_model_tree_pred(m->nodes, m->root[t], c);
	}
	y /= MODEL_TREES;
	for (size_t p = 0; p < m->np; p++)
		y -= m->bon[m->off[p] + c[p]];
	return y;
}

/* Takes c into cfg when it scores below *best (which it then lowers);
 * returns 1 when it did. */
static int model_consider(const struct model *m, const uint32_t *c, double *best, uint32_t *cfg)
{
	double y = model_score(m, c, *best);
	if (!(y < *best))
		return 0;
	*best = y;
	memcpy(cfg, c, m->np * sizeof(uint32_t));
	return 1;
}

/* Until the fit has MODEL_MIN_POINTS points: first the middle of the space
 * (search_center), unless a start measured it; then, of MODEL_SPREAD_TRIES
 * random unseen valid configurations, the one that scores highest on its
 * Hamming distance from the nearest point seen minus MODEL_SPREAD_CENTER x
 * its distance from the middle, so the first points see new values of the
 * params without running to the ends of their lists, where kernels are
 * slow or fail; ties go to the first drawn. Writes it into cfg and returns
 * 1, 0 when nothing is left unseen, or -MUH_ENOMEM.
 * Measured by replay (bench/search_score.py, 30 seeds, 22 spaces, auto; the
 * mean score over the spaces and the budgets 1/2/5/10%, `tuned` half /
 * `held-out` half): with a random start and the farthest of 32 draws,
 * +0.365 / +0.436 as users run it and +0.247 / +0.254 without the defaults
 * and the baseline; the middle first, +0.406 / +0.557 and +0.418 / +0.314;
 * and with MODEL_SPREAD_CENTER 4 (0 is the old rule), +0.406 / +0.557 and
 * +0.447 / +0.348 (2: +0.451 / +0.318; 8: +0.445 / +0.348). Alone, the
 * farthest of 32 draws after the middle went to configurations that differ
 * from it in every param, which on vLLM's MoE kernel at M=16 cost more than
 * the middle gained (its score at 1%, search alone: +0.29 -> -0.08). These
 * were measured with the additive model after them. */
#define MODEL_SPREAD_TRIES  32
#define MODEL_SPREAD_CENTER 4.0
static int model_spread(struct model *m, search *s, uint32_t *cfg)
{
	int got = 0;
	double best = -INFINITY;
	/* the middle of the space first, when no start has measured it */
	int r = search_center(s, cfg, 0);
	if (r < 0)
		return r;
	if (r && search_seen(s, cfg, NULL) == 0)
		return 1;
	for (int k = 0; k < MODEL_SPREAD_TRIES; k++) {
		if (!search_random_unseen(s, m->cand))
			break;
		size_t near = SIZE_MAX;
		for (size_t i = 0; i < m->n; i++) {
			size_t d = 0;
			for (size_t p = 0; p < m->np; p++)
				d += m->x[i * m->np + p] != m->cand[p];
			if (d < near)
				near = d;
		}
		double v = (double)near - MODEL_SPREAD_CENTER * search_center_distance(s, m->cand);
		if (!got || v > best) {
			best = v;
			memcpy(cfg, m->cand, m->np * sizeof(uint32_t));
			got = 1;
		}
	}
	return got;
}

/* Candidates: the whole space when it has at most MODEL_SCAN valid
 * configurations, else MODEL_SAMPLES uniform ones plus the best's fresh
 * neighbours; the lowest score wins (the first on a tie). */
static int model_propose(technique *t, search *s, uint32_t *cfg)
{
	struct model *m = t->st;
	if (m->n < MODEL_MIN_POINTS)
		return model_spread(m, s, cfg);
	if (model_fit(m, s))
		return -MUH_ENOMEM;
	double best = INFINITY;
	for (size_t v = 0; v < m->nvtot; v++)
		m->bon[v] = MODEL_EXPLORE / sqrt(1.0 + m->cnt[v]);
	const muh_space *sp = search_space(s);
	uint64_t valid = space_valid(sp);
	int got = 0;
	if (valid <= MODEL_SCAN) {
		for (uint64_t i = 0; i < valid; i++) {
			if (space_config_at(sp, i, m->cand) || search_seen(s, m->cand, NULL) != 0)
				continue;
			got |= model_consider(m, m->cand, &best, cfg);
		}
		return got ? 1 : search_random_unseen(s, cfg);
	}
	for (int k = 0; k < MODEL_SAMPLES; k++) {
		uint64_t rng = search_rand(s) | 1;
		if (space_sample(sp, &rng, m->cand) || search_seen(s, m->cand, NULL) != 0)
			continue;
		got |= model_consider(m, m->cand, &best, cfg);
	}
	double bt;
	const uint32_t *b = search_best(s, &bt);
	if (b) {
		size_t nadj, n = technique_fresh_neighbours(s, b, m->nb, m->maxnb, &nadj);
		for (size_t k = 0; k < n; k++)
			got |= model_consider(m, m->nb + k * m->np, &best, cfg);
	}
	return got ? 1 : search_random_unseen(s, cfg);
}

static void model_observe(technique *t, search *s, const uint32_t *cfg, double time, int own)
{
	struct model *m = t->st;
	if (m->n == m->cap) {
		size_t cap = m->cap ? m->cap * 2 : 64;
		uint32_t *nx = realloc(m->x, cap * m->np * sizeof(uint32_t));
		if (!nx)
			return; /* the model learns less; the search goes on */
		m->x = nx;
		double *ny = realloc(m->y, cap * sizeof(double));
		if (!ny)
			return;
		m->y = ny;
		double *nyy = realloc(m->yy, cap * sizeof(double));
		if (!nyy)
			return;
		m->yy = nyy;
		size_t *ni = realloc(m->idx, cap * sizeof(size_t));
		if (!ni)
			return;
		m->idx = ni;
		m->cap = cap;
	}
	memcpy(m->x + m->n * m->np, cfg, m->np * sizeof(uint32_t));
	m->y[m->n++] = isfinite(time) && time > 0 ? log(time) : NAN;
}

static void model_destroy(technique *t)
{
	struct model *m = t->st;
	if (m) {
		free(m->x);
		free(m->y);
		free(m->yy);
		free(m->idx);
		free(m->off);
		free(m->nvalues);
		free(m->cnt);
		free(m->bon);
		free(m->cand);
		free(m->nb);
		free(m->nodes);
	}
	technique_destroy_state(t);
}

int technique_model_new(search *s, technique *t)
{
	struct model *m = technique_init(t, "model", sizeof(*m), model_propose, model_observe,
	                                 model_destroy);
	if (!m)
		return MUH_ENOMEM;
	const muh_spec *spec = space_spec(search_space(s));
	size_t np = search_nparams(s), row = (np + 1) * sizeof(uint32_t);
	m->np = np;
	m->maxnb = technique_max_neighbours(s);
	m->off = malloc((np + 1) * sizeof(size_t));
	m->nvalues = malloc((np + 1) * sizeof(size_t));
	if (!m->off || !m->nvalues)
		return MUH_ENOMEM;
	m->off[0] = 0;
	for (size_t p = 0; p < np; p++) {
		m->nvalues[p] = spec->params[p].nvalues;
		m->off[p + 1] = m->off[p] + spec->params[p].nvalues;
	}
	m->nvtot = m->off[np] ? m->off[np] : 1;
	m->cnt = calloc(m->nvtot, sizeof(uint32_t));
	m->bon = calloc(m->nvtot, sizeof(double));
	m->cand = malloc(row);
	m->nb = malloc(row * m->maxnb);
	return m->cnt && m->bon && m->cand && m->nb ? MUH_OK : MUH_ENOMEM;
}
