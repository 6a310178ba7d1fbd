/*
 * strategy_tech.c — the search techniques: brute force, random, simulated
 * annealing, a genetic algorithm, iterated local search, and a model-based
 * search over an additive surrogate.
 *
 * Each one only proposes; the driver (strategy.c) measures, counts and
 * records. Validity holds by construction: every proposal comes from
 * space_config_at, space_sample or space_neighbours, or (the genetic
 * algorithm's children) is checked with the space before it is proposed;
 * and every proposal is checked against the evaluated set (search_seen).
 * A failed variant has time INFINITY: never accepted as a move, never a
 * parent, but its neighbours stay open.
 */
#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "muh/muh.h"
#include "strategy_int.h"

/* ---- shared helpers ------------------------------------------------------- */

/* The most neighbours a configuration can have: sum of (nvalues - 1). */
static size_t max_neighbours(search *s)
{
	const muh_spec *spec = space_spec(search_space(s));
	size_t n = 0;
	for (size_t p = 0; p < spec->nparams; p++)
		n += spec->params[p].nvalues - 1;
	return n ? n : 1;
}

static void shuffle(search *s, uint32_t *a, size_t n, size_t np)
{
	uint32_t tmp[64];
	uint32_t *t = np <= 64 ? tmp : malloc(np * sizeof(uint32_t));
	if (!t)
		return;
	for (size_t i = n; i > 1; i--) {
		size_t j = (size_t)search_below(s, i);
		memcpy(t, a + (i - 1) * np, np * sizeof(uint32_t));
		memcpy(a + (i - 1) * np, a + j * np, np * sizeof(uint32_t));
		memcpy(a + j * np, t, np * sizeof(uint32_t));
	}
	if (t != tmp)
		free(t);
}

/* 1 when a and b differ in exactly one param, by one value step. */
static int adjacent(const uint32_t *a, const uint32_t *b, size_t np)
{
	for (size_t p = 0; p < np; p++)
		if (a[p] != b[p])
			return a[p] + 1 == b[p] || b[p] + 1 == a[p];
	return 0;
}

/* The valid, unevaluated neighbours of cfg (one param changed) into out
 * (room for max): adjacent moves first, each part shuffled. *nadj gets the
 * number of adjacent ones. */
static size_t fresh_neighbours(search *s, const uint32_t *cfg, uint32_t *out, size_t max,
                               size_t *nadj)
{
	size_t np = search_nparams(s);
	size_t n = space_neighbours(search_space(s), cfg, SPACE_HAMMING, out, max);
	size_t k = 0;
	for (size_t i = 0; i < n; i++)
		if (search_seen(s, out + i * np, NULL) == 0) {
			if (k != i)
				memcpy(out + k * np, out + i * np, np * sizeof(uint32_t));
			k++;
		}
	size_t a = 0; /* partition: adjacent first */
	for (size_t i = 0; i < k && np <= 64; i++)
		if (adjacent(cfg, out + i * np, np)) {
			if (a != i) {
				uint32_t t[64];
				memcpy(t, out + a * np, np * sizeof(uint32_t));
				memcpy(out + a * np, out + i * np, np * sizeof(uint32_t));
				memcpy(out + i * np, t, np * sizeof(uint32_t));
			}
			a++;
		}
	shuffle(s, out, a, np);
	shuffle(s, out + a * np, k - a, np);
	*nadj = a;
	return k;
}

static void destroy_state(technique *t)
{
	free(t->st);
	t->st = NULL;
}

static void observe_nothing(technique *t, search *s, const uint32_t *cfg, double time, int own)
{
}

/* ---- brute force: index order --------------------------------------------- */

static int brute_propose(technique *t, search *s, uint32_t *cfg)
{
	uint64_t *next = t->st;
	uint64_t valid = space_valid(search_space(s));
	for (; *next < valid; (*next)++) {
		if (space_config_at(search_space(s), *next, cfg))
			return 0;
		if (search_seen(s, cfg, NULL) == 0) {
			(*next)++;
			return 1;
		}
	}
	return 0;
}

/* ---- random: uniform over the valid, unevaluated configurations ----------- */

static int random_propose(technique *t, search *s, uint32_t *cfg)
{
	return search_random_unseen(s, cfg);
}

/* ---- simulated annealing -------------------------------------------------- */

/* The temperature is relative: a move that is x times slower (x = dt / t) is
 * accepted with probability exp(-x / T). T cools from SA_T0 to ~0 as the
 * budget is used; after SA_STUCK proposals without a new best of its own the
 * walk restarts from a random configuration. */
#define SA_T0                  0.03
#define SA_STUCK_PER_NEIGHBOUR 2

struct sa {
	size_t np, maxnb;
	uint32_t *cur, *nb;
	double cur_t, own_best;
	int have, restarting;
	uint64_t stuck;
};

static int sa_propose(technique *t, search *s, uint32_t *cfg)
{
	struct sa *a = t->st;
	if (!a->have && !a->restarting) {
		double bt;
		const uint32_t *b = search_best(s, &bt);
		if (b) {
			memcpy(a->cur, b, a->np * sizeof(uint32_t));
			a->cur_t = bt;
			a->have = 1;
		}
	}
	if (a->have && a->stuck < SA_STUCK_PER_NEIGHBOUR * a->maxnb) {
		size_t nadj, n = fresh_neighbours(s, a->cur, a->nb, a->maxnb, &nadj);
		if (n) {
			size_t k = nadj && search_unif(s) < 0.7 ? (size_t)search_below(s, nadj)
			                                        : (size_t)search_below(s, n);
			memcpy(cfg, a->nb + k * a->np, a->np * sizeof(uint32_t));
			a->restarting = 0;
			return 1;
		}
	}
	a->restarting = 1;
	return search_random_unseen(s, cfg);
}

static void sa_observe(technique *t, search *s, const uint32_t *cfg, double time, int own)
{
	struct sa *a = t->st;
	if (!own) {
		/* another technique's find: move there when it beats the walk */
		if (a->have && !a->restarting && time < a->cur_t) {
			memcpy(a->cur, cfg, a->np * sizeof(uint32_t));
			a->cur_t = time;
		}
		return;
	}
	if (a->restarting || !a->have) {
		a->restarting = 0;
		a->stuck = 0;
		a->own_best = INFINITY;
		memcpy(a->cur, cfg, a->np * sizeof(uint32_t));
		a->cur_t = time;
		a->have = 1;
		return;
	}
	double T = SA_T0 * (1.0 - search_progress(s)) * (1.0 - search_progress(s)) + 1e-6;
	int accept = time < a->cur_t;
	if (!accept && isfinite(time) && isfinite(a->cur_t))
		accept = search_unif(s) < exp(-((time - a->cur_t) / a->cur_t) / T);
	if (time < a->own_best) {
		a->own_best = time;
		a->stuck = 0;
	} else {
		a->stuck++;
	}
	if (accept) {
		memcpy(a->cur, cfg, a->np * sizeof(uint32_t));
		a->cur_t = time;
	}
}

static void sa_destroy(technique *t)
{
	struct sa *a = t->st;
	if (a) {
		free(a->cur);
		free(a->nb);
	}
	destroy_state(t);
}

/* ---- genetic algorithm ---------------------------------------------------- */

/* The population is the GA_POP best ok variants seen so far (anyone's). A
 * child: two parents by tournament of 3, uniform crossover, then each param
 * mutated with probability 1/nparams (half the time to a neighbouring value,
 * half to any value). A child that is invalid or already evaluated is drawn
 * again; after GA_TRIES, a fresh neighbour of the first parent, then a
 * random configuration. */
#define GA_POP   12
#define GA_TRIES 32

struct ga {
	size_t np, maxnb, n;
	uint32_t *pop; /* GA_POP x np */
	double fit[GA_POP];
	uint32_t *nb;
};

static const uint32_t *ga_tournament(struct ga *g, search *s)
{
	size_t best = (size_t)search_below(s, g->n);
	for (int k = 1; k < 3; k++) {
		size_t c = (size_t)search_below(s, g->n);
		if (g->fit[c] < g->fit[best])
			best = c;
	}
	return g->pop + best * g->np;
}

static int ga_propose(technique *t, search *s, uint32_t *cfg)
{
	struct ga *g = t->st;
	const muh_spec *spec = space_spec(search_space(s));
	if (g->n < 4)
		return search_random_unseen(s, cfg);
	const uint32_t *p1 = NULL;
	for (int tries = 0; tries < GA_TRIES; tries++) {
		p1 = ga_tournament(g, s);
		const uint32_t *p2 = ga_tournament(g, s);
		for (size_t p = 0; p < g->np; p++) {
			cfg[p] = search_rand(s) & 1 ? p1[p] : p2[p];
			if (search_below(s, g->np) == 0) {
				uint32_t nv = (uint32_t)spec->params[p].nvalues;
				if (search_unif(s) < 0.5) {
					if (cfg[p] + 1 < nv && (cfg[p] == 0 || search_rand(s) & 1))
						cfg[p]++;
					else if (cfg[p] > 0)
						cfg[p]--;
				} else {
					cfg[p] = (uint32_t)search_below(s, nv);
				}
			}
		}
		if (search_seen(s, cfg, NULL) == 0)
			return 1;
	}
	size_t nadj, n = fresh_neighbours(s, p1, g->nb, g->maxnb, &nadj);
	if (n) {
		memcpy(cfg, g->nb + search_below(s, n) * g->np, g->np * sizeof(uint32_t));
		return 1;
	}
	return search_random_unseen(s, cfg);
}

static void ga_observe(technique *t, search *s, const uint32_t *cfg, double time, int own)
{
	struct ga *g = t->st;
	if (!isfinite(time))
		return;
	size_t slot = g->n;
	if (g->n == GA_POP) {
		slot = 0;
		for (size_t i = 1; i < GA_POP; i++)
			if (g->fit[i] > g->fit[slot])
				slot = i;
		if (!(time < g->fit[slot]))
			return;
	} else {
		g->n++;
	}
	memcpy(g->pop + slot * g->np, cfg, g->np * sizeof(uint32_t));
	g->fit[slot] = time;
}

static void ga_destroy(technique *t)
{
	struct ga *g = t->st;
	if (g) {
		free(g->pop);
		free(g->nb);
	}
	destroy_state(t);
}

/* ---- iterated local search ------------------------------------------------ */

/* First-improvement descent over neighbours (adjacent moves first) from the
 * best configuration known; at a local optimum, the better of it and the
 * previous one (or the overall best, if someone found better) becomes home,
 * and the search restarts from home perturbed by ILS_KICK random moves
 * (more when those land on evaluated configurations). */
#define ILS_KICK 2

struct ils {
	size_t np, maxnb, nnb, pos;
	uint32_t *cur, *home, *nb, *tmp;
	double cur_t, home_t;
	int have, have_home, listed, pending;
};

static int ils_perturb(struct ils *l, search *s, uint32_t *cfg)
{
	for (int tries = 0; tries < 32; tries++) {
		memcpy(cfg, l->home, l->np * sizeof(uint32_t));
		int kicks = ILS_KICK + tries / 8;
		for (int k = 0; k < kicks; k++) {
			size_t n =
			    space_neighbours(search_space(s), cfg, SPACE_HAMMING, l->tmp, l->maxnb);
			if (!n)
				break;
			memcpy(cfg, l->tmp + search_below(s, n) * l->np, l->np * sizeof(uint32_t));
		}
		if (search_seen(s, cfg, NULL) == 0)
			return 1;
	}
	return search_random_unseen(s, cfg);
}

static int ils_propose(technique *t, search *s, uint32_t *cfg)
{
	struct ils *l = t->st;
	if (!l->have) {
		double bt;
		const uint32_t *b = search_best(s, &bt);
		if (!b) {
			l->pending = 1;
			return search_random_unseen(s, cfg);
		}
		memcpy(l->cur, b, l->np * sizeof(uint32_t));
		l->cur_t = bt;
		l->have = 1;
		l->listed = 0;
	}
	if (!l->listed) {
		size_t nadj;
		l->nnb = fresh_neighbours(s, l->cur, l->nb, l->maxnb, &nadj);
		l->pos = 0;
		l->listed = 1;
	}
	while (l->pos < l->nnb) {
		const uint32_t *c = l->nb + l->pos++ * l->np;
		if (search_seen(s, c, NULL) == 0) {
			memcpy(cfg, c, l->np * sizeof(uint32_t));
			return 1;
		}
	}
	/* cur is a local optimum */
	if (!l->have_home || l->cur_t < l->home_t) {
		memcpy(l->home, l->cur, l->np * sizeof(uint32_t));
		l->home_t = l->cur_t;
		l->have_home = 1;
	}
	double bt;
	const uint32_t *b = search_best(s, &bt);
	if (b && bt < l->home_t) {
		memcpy(l->home, b, l->np * sizeof(uint32_t));
		l->home_t = bt;
	}
	l->pending = 1;
	return ils_perturb(l, s, cfg);
}

static void ils_observe(technique *t, search *s, const uint32_t *cfg, double time, int own)
{
	struct ils *l = t->st;
	if (!own && !(l->have && time < l->cur_t))
		return; /* another technique's find: followed when it beats ours */
	if ((own && l->pending) || !l->have || time < l->cur_t) {
		memcpy(l->cur, cfg, l->np * sizeof(uint32_t));
		l->cur_t = time;
		l->have = 1;
		l->listed = 0;
		l->pending = 0;
	}
}

static void ils_destroy(technique *t)
{
	struct ils *l = t->st;
	if (l) {
		free(l->cur);
		free(l->home);
		free(l->nb);
		free(l->tmp);
	}
	destroy_state(t);
}

/* ---- model: an additive surrogate over the params ----------------------- */

/* Every finished variant is a point (cfg, y = log time; a failure, or an ok
 * point more than MODEL_OUTLIER above the fastest, counts as the slowest
 * other ok time seen plus MODEL_FAIL_PENALTY). The model is additive
 * in the params and their pairs, y ~ mu + sum_p e[p][value] + sum_{p<q}
 * e[p,q][value, value] (pairs for up to MODEL_PAIR_PARAMS params), fitted by
 * a few rounds of backfitting with a ridge towards 0 (MODEL_RIDGE points'
 * worth for a value, MODEL_PAIR_RIDGE for a pair of values), so a value
 * seen once moves the prediction little. A tree-structured Parzen estimator
 * or a forest would fit interactions of more params; with budgets of ten to
 * a hundred evaluations the pairs are what the data can carry. A proposal is the unseen
 * valid configuration with the lowest optimistic prediction: the fit minus
 * MODEL_EXPLORE x the spread of y x sum_p 1 / sqrt(1 + times value seen).
 * A value never seen has no data of its own: its effect is taken from the
 * seen values beside it in the param's list (technique_model_fill_unseen),
 * where the list is numbers in rising or falling order (param_ordered):
 * a kernel's params are (block sizes, tile counts), and their effects
 * change along the list; a list of names is a set of categories, left as
 * it was. The ridge alone gives an unseen value 0, the mean of the values
 * seen, whatever its neighbours showed. This rule was found by replay, not
 * derived; on Kernel Tuner's convolution its gain is in the tail (the
 * median best rank after 52 evaluations 24 of 5,256 against 29.5), not in
 * the model's early proposals. Measured by replay (bench/search_score.py, 22
 * spaces, auto, mean over spaces and budgets, as users run it / without the
 * defaults and the baseline, `tuned` | `held-out` half), today's rule
 * against the old (no fill, MODEL_EXPLORE 0.15), on three seed samples:
 * seeds 1-30 +0.451 / +0.445 | +0.531 / +0.359 against +0.406 / +0.447 |
 * +0.518 / +0.348; seeds 1-90 +0.452 / +0.431 | +0.544 / +0.349 against
 * +0.388 / +0.424 | +0.510 / +0.347; seeds 91-180 +0.448 / +0.429 | +0.555
 * / +0.387 against +0.355 / +0.417 | +0.495 / +0.355. The fill alone at
 * 0.15 moved the two halves apart (+0.437 | +0.497), and 0.3 alone lost
 * the search's own merit on the tuned half (+0.419, +0.387).
 * Candidates: the whole space when it has at most MODEL_SCAN valid
 * configurations, else MODEL_SAMPLES uniform ones plus the best's fresh
 * neighbours. Until MODEL_MIN_POINTS points are in (the defaults and two
 * more), it proposes the middle of the space and points spread from it
 * (model_spread), so that the first fit sees most values of every param
 * instead of a cluster. */
#define MODEL_FAIL_PENALTY 0.7
/* log of 1000: an ok point that much slower than the fastest seen is taken
 * as a failure. An objective with SLOs scores a miss 1e12 x (1 + how far it
 * misses) (objective_search_score), and fitting those as they are made the
 * spread, and so the exploration bonus, 35 log units wide, which turned the
 * proposals into a walk over the least-seen values; when every point is a
 * miss, they all lie within it of each other and are fitted as they are. */
#define MODEL_OUTLIER      6.907755
#define MODEL_RIDGE        1.0
#define MODEL_EXPLORE      0.3
#define MODEL_SCAN         20000
#define MODEL_SAMPLES      4096
#define MODEL_MIN_POINTS   3
#define MODEL_ROUNDS       6
#define MODEL_PAIR_RIDGE   4.0
#define MODEL_PAIR_PARAMS  16 /* more params: main effects only */

struct model {
	size_t np, maxnb, n, cap, nvtot;
	uint32_t *x;  /* n x np */
	double *y;    /* n; NAN for a failure (filled in at fit time) */
	double *res;  /* n: residuals while fitting */
	size_t *off;  /* per param: offset of its values in e / cnt */
	double *e, *sum;
	uint32_t *cnt, *cand, *nb;
	/* pairwise terms: pair (p, q), p < q, at poff[p * np + q], nv_p x nv_q */
	size_t *poff, nptot;
	double *pe, *psum;
	uint32_t *pcnt;
	int pairs;
	unsigned char *ordered; /* per param: param_ordered */
};

static size_t pair_at(const struct model *m, size_t p, size_t q, const uint32_t *x)
{
	return m->poff[p * m->np + q] + x[p] * (m->off[q + 1] - m->off[q]) + x[q];
}

/* The fit's prediction for x (main effects, and pairs when on). */
static double model_pred(const struct model *m, const uint32_t *x, double mu)
{
	double y = mu;
	for (size_t p = 0; p < m->np; p++)
		y += m->e[m->off[p] + x[p]];
	if (m->pairs)
		for (size_t p = 0; p < m->np; p++)
			for (size_t q = p + 1; q < m->np; q++)
				y += m->pe[pair_at(m, p, q, x)];
	return y;
}

/* 1 when y is an ok point the fit takes as it is: not a failure, and within
 * MODEL_OUTLIER of the lowest (lo). */
static int model_inlier(double y, double lo)
{
	return isfinite(y) && y <= lo + MODEL_OUTLIER;
}

/* Backfitting over the residuals r (n): each term in turn takes its
 * contribution back into r, is refitted as the ridge mean of r per level,
 * and is taken out again. O(points x terms) per round. Then the values no
 * point has get their effects from their seen neighbours, in the params whose
 * values are ordered (technique_model_fill_unseen, param_ordered).
 * *mu gets the mean, *spread the range of the ok log times (1 with fewer
 * than two). */
static void model_fit(struct model *m, double *mu, double *spread)
{
	double lo = INFINITY, hi = -INFINITY, tot = 0;
	size_t nok = 0;
	for (size_t i = 0; i < m->n; i++)
		if (isfinite(m->y[i]))
			lo = fmin(lo, m->y[i]);
	for (size_t i = 0; i < m->n; i++)
		if (model_inlier(m->y[i], lo)) {
			hi = fmax(hi, m->y[i]);
			tot += m->y[i];
			nok++;
		}
	double fail = nok ? hi + MODEL_FAIL_PENALTY : 0;
	*mu = (tot + (double)(m->n - nok) * fail) / (double)m->n;
	*spread = nok > 1 && hi > lo ? hi - lo : 1.0;
	double *r = m->res;
	for (size_t i = 0; i < m->n; i++)
		r[i] = (model_inlier(m->y[i], lo) ? m->y[i] : fail) - *mu;
	memset(m->e, 0, m->nvtot * sizeof(double));
	memset(m->cnt, 0, m->nvtot * sizeof(uint32_t));
	for (size_t i = 0; i < m->n; i++)
		for (size_t p = 0; p < m->np; p++)
			m->cnt[m->off[p] + m->x[i * m->np + p]]++;
	if (m->pairs) {
		memset(m->pe, 0, m->nptot * sizeof(double));
		memset(m->pcnt, 0, m->nptot * sizeof(uint32_t));
		for (size_t i = 0; i < m->n; i++)
			for (size_t p = 0; p < m->np; p++)
				for (size_t q = p + 1; q < m->np; q++)
					m->pcnt[pair_at(m, p, q, m->x + i * m->np)]++;
	}
	for (int round = 0; round < MODEL_ROUNDS; round++) {
		for (size_t p = 0; p < m->np; p++) {
			size_t base = m->off[p], nv = m->off[p + 1] - base;
			memset(m->sum + base, 0, nv * sizeof(double));
			for (size_t i = 0; i < m->n; i++) {
				size_t k = base + m->x[i * m->np + p];
				r[i] += m->e[k];
				m->sum[k] += r[i];
			}
			for (size_t k = base; k < base + nv; k++)
				m->e[k] = m->sum[k] / (m->cnt[k] + MODEL_RIDGE);
			for (size_t i = 0; i < m->n; i++)
				r[i] -= m->e[base + m->x[i * m->np + p]];
		}
		if (!m->pairs)
			continue;
		for (size_t p = 0; p < m->np; p++)
			for (size_t q = p + 1; q < m->np; q++) {
				size_t base = m->poff[p * m->np + q];
				size_t sz = (m->off[p + 1] - m->off[p]) * (m->off[q + 1] - m->off[q]);
				memset(m->psum + base, 0, sz * sizeof(double));
				for (size_t i = 0; i < m->n; i++) {
					size_t k = pair_at(m, p, q, m->x + i * m->np);
					r[i] += m->pe[k];
					m->psum[k] += r[i];
				}
				for (size_t k = base; k < base + sz; k++)
					m->pe[k] = m->psum[k] / (m->pcnt[k] + MODEL_PAIR_RIDGE);
				for (size_t i = 0; i < m->n; i++)
					r[i] -= m->pe[pair_at(m, p, q, m->x + i * m->np)];
			}
	}
	for (size_t p = 0; p < m->np; p++)
		if (m->ordered[p])
			technique_model_fill_unseen(m->e + m->off[p], m->cnt + m->off[p],
			                            m->off[p + 1] - m->off[p]);
}

/* The unseen values' effects from the seen ones beside them in the list
 * (the contract is in strategy_int.h). One pass: lo is the last seen value
 * behind v, hi the next seen one ahead, searched again only past it. */
void technique_model_fill_unseen(double *e, const uint32_t *cnt, size_t nv)
{
	size_t lo = SIZE_MAX, hi = 0; /* lo SIZE_MAX: none seen behind v */
	for (size_t v = 0; v < nv; v++) {
		if (cnt[v]) {
			lo = v;
			continue;
		}
		if (hi <= v)
			for (hi = v + 1; hi < nv && !cnt[hi]; hi++)
				;
		if (lo == SIZE_MAX && hi == nv)
			return; /* nothing seen: every effect stays as it is */
		if (lo == SIZE_MAX)
			e[v] = e[hi];
		else if (hi == nv)
			e[v] = e[lo];
		else
			e[v] = e[lo] + (e[hi] - e[lo]) * (double)(v - lo) / (double)(hi - lo);
	}
}

/* 1 when a param's values are numbers in strictly rising or falling order,
 * so that a value's neighbours in the list are its neighbours in size (a
 * block size, a tile count); strings and unordered lists are categories. */
static int param_ordered(const muh_param *par)
{
	if (par->nvalues < 2)
		return 0;
	int dir = 0;
	if (par->values[0].t == MUH_STR)
		return 0;
	for (size_t v = 1; v < par->nvalues; v++) {
		if (par->values[v].t == MUH_STR)
			return 0;
		double x = value_num(par->values[v - 1]), y = value_num(par->values[v]);
		int d = y > x ? 1 : y < x ? -1 : 0;
		if (!d || (dir && d != dir))
			return 0;
		dir = d;
	}
	return 1;
}

static double model_score(const struct model *m, const uint32_t *c, double mu, double bonus)
{
	double y = model_pred(m, c, mu);
	for (size_t p = 0; p < m->np; p++)
		y -= bonus / sqrt(1.0 + m->cnt[m->off[p] + c[p]]);
	return y;
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
 * the middle gained (its score at 1%, search alone: +0.29 -> -0.08). */
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

static int model_propose(technique *t, search *s, uint32_t *cfg)
{
	struct model *m = t->st;
	if (m->n < MODEL_MIN_POINTS)
		return model_spread(m, s, cfg);
	double mu, spread;
	model_fit(m, &mu, &spread);
	double bonus = MODEL_EXPLORE * spread, best = INFINITY;
	const muh_space *sp = search_space(s);
	uint64_t valid = space_valid(sp);
	int got = 0;
	if (valid <= MODEL_SCAN) {
		for (uint64_t i = 0; i < valid; i++) {
			if (space_config_at(sp, i, m->cand) || search_seen(s, m->cand, NULL) != 0)
				continue;
			double y = model_score(m, m->cand, mu, bonus);
			if (y < best) {
				best = y;
				memcpy(cfg, m->cand, m->np * sizeof(uint32_t));
				got = 1;
			}
		}
		return got ? 1 : search_random_unseen(s, cfg);
	}
	for (int k = 0; k < MODEL_SAMPLES; k++) {
		uint64_t rng = search_rand(s) | 1;
		if (space_sample(sp, &rng, m->cand) || search_seen(s, m->cand, NULL) != 0)
			continue;
		double y = model_score(m, m->cand, mu, bonus);
		if (y < best) {
			best = y;
			memcpy(cfg, m->cand, m->np * sizeof(uint32_t));
			got = 1;
		}
	}
	double bt;
	const uint32_t *b = search_best(s, &bt);
	if (b) {
		size_t nadj, n = fresh_neighbours(s, b, m->nb, m->maxnb, &nadj);
		for (size_t k = 0; k < n; k++) {
			double y = model_score(m, m->nb + k * m->np, mu, bonus);
			if (y < best) {
				best = y;
				memcpy(cfg, m->nb + k * m->np, m->np * sizeof(uint32_t));
				got = 1;
			}
		}
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
		double *nr = realloc(m->res, cap * sizeof(double));
		if (!nr)
			return;
		m->res = nr;
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
		free(m->res);
		free(m->off);
		free(m->e);
		free(m->sum);
		free(m->cnt);
		free(m->cand);
		free(m->nb);
		free(m->poff);
		free(m->pe);
		free(m->psum);
		free(m->pcnt);
		free(m->ordered);
	}
	destroy_state(t);
}

/* ---- construction --------------------------------------------------------- */

/* Makes t the technique name with these functions and a zeroed state of
 * size bytes (t->st, freed by destroy); returns the state, or NULL when out
 * of memory (t is then still named, and destroy is safe to call). */
static void *technique_init(technique *t, const char *name, size_t size,
			    int (*propose)(technique *, search *, uint32_t *),
			    void (*observe)(technique *, search *, const uint32_t *, double, int),
			    void (*destroy)(technique *))
{
	t->name = name;
	t->propose = propose;
	t->observe = observe;
	t->destroy = destroy;
	t->st = calloc(1, size);
	return t->st;
}

int technique_new(const char *name, search *s, technique *t)
{
	size_t np = search_nparams(s), maxnb = max_neighbours(s);
	size_t row = (np + 1) * sizeof(uint32_t);
	memset(t, 0, sizeof(*t));
	t->observe = observe_nothing;
	t->destroy = destroy_state;
	if (!strcmp(name, "brute")) {
		uint64_t *next = technique_init(t, "brute", sizeof(*next), brute_propose, observe_nothing, destroy_state);
		return next ? MUH_OK : MUH_ENOMEM;
	}
	if (!strcmp(name, "random")) {
		t->name = "random";
		t->propose = random_propose;
		return MUH_OK;
	}
	if (!strcmp(name, "annealing")) {
		struct sa *a = technique_init(t, "annealing", sizeof(*a), sa_propose, sa_observe, sa_destroy);
		if (!a)
			return MUH_ENOMEM;
		a->np = np;
		a->maxnb = maxnb;
		a->own_best = INFINITY;
		a->cur = malloc(row);
		a->nb = malloc(row * maxnb);
		return a->cur && a->nb ? MUH_OK : MUH_ENOMEM;
	}
	if (!strcmp(name, "genetic")) {
		struct ga *g = technique_init(t, "genetic", sizeof(*g), ga_propose, ga_observe, ga_destroy);
		if (!g)
			return MUH_ENOMEM;
		g->np = np;
		g->maxnb = maxnb;
		g->pop = malloc(row * GA_POP);
		g->nb = malloc(row * maxnb);
		return g->pop && g->nb ? MUH_OK : MUH_ENOMEM;
	}
	if (!strcmp(name, "ils")) {
		struct ils *l = technique_init(t, "ils", sizeof(*l), ils_propose, ils_observe, ils_destroy);
		if (!l)
			return MUH_ENOMEM;
		l->np = np;
		l->maxnb = maxnb;
		l->cur = malloc(row);
		l->home = malloc(row);
		l->nb = malloc(row * maxnb);
		l->tmp = malloc(row * maxnb);
		return l->cur && l->home && l->nb && l->tmp ? MUH_OK : MUH_ENOMEM;
	}
	if (!strcmp(name, "model")) {
		struct model *m = technique_init(t, "model", sizeof(*m), model_propose, model_observe, model_destroy);
		if (!m)
			return MUH_ENOMEM;
		const muh_spec *spec = space_spec(search_space(s));
		m->np = np;
		m->maxnb = maxnb;
		m->off = malloc((np + 1) * sizeof(size_t));
		if (!m->off)
			return MUH_ENOMEM;
		m->off[0] = 0;
		for (size_t p = 0; p < np; p++)
			m->off[p + 1] = m->off[p] + spec->params[p].nvalues;
		m->nvtot = m->off[np] ? m->off[np] : 1;
		m->e = calloc(m->nvtot, sizeof(double));
		m->sum = calloc(m->nvtot, sizeof(double));
		m->cnt = calloc(m->nvtot, sizeof(uint32_t));
		m->cand = malloc(row);
		m->nb = malloc(row * maxnb);
		m->ordered = calloc(np + 1, 1);
		if (!m->e || !m->sum || !m->cnt || !m->cand || !m->nb || !m->ordered)
			return MUH_ENOMEM;
		for (size_t p = 0; p < np; p++)
			m->ordered[p] = (unsigned char)param_ordered(&spec->params[p]);
		m->pairs = np >= 2 && np <= MODEL_PAIR_PARAMS;
		if (!m->pairs)
			return MUH_OK;
		m->poff = calloc(np * np + 1, sizeof(size_t));
		if (!m->poff)
			return MUH_ENOMEM;
		for (size_t p = 0; p < np; p++)
			for (size_t q = p + 1; q < np; q++) {
				m->poff[p * np + q] = m->nptot;
				m->nptot += spec->params[p].nvalues * spec->params[q].nvalues;
			}
		m->pe = calloc(m->nptot + 1, sizeof(double));
		m->psum = calloc(m->nptot + 1, sizeof(double));
		m->pcnt = calloc(m->nptot + 1, sizeof(uint32_t));
		return m->pe && m->psum && m->pcnt ? MUH_OK : MUH_ENOMEM;
	}
	return MUH_EINPUT;
}
