/*
 * strategy_tech.c — the search techniques: brute force, random, simulated
 * annealing, a genetic algorithm and iterated local search, and the helpers
 * they share. The model-based search is strategy_model.c.
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
size_t technique_max_neighbours(search *s)
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

/* The valid, unevaluated neighbours of cfg (the contract is in
 * strategy_int.h). */
size_t technique_fresh_neighbours(search *s, const uint32_t *cfg, uint32_t *out, size_t max,
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

void technique_destroy_state(technique *t)
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
		size_t nadj, n = technique_fresh_neighbours(s, a->cur, a->nb, a->maxnb, &nadj);
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
	technique_destroy_state(t);
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
	size_t nadj, n = technique_fresh_neighbours(s, p1, g->nb, g->maxnb, &nadj);
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
	technique_destroy_state(t);
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
		l->nnb = technique_fresh_neighbours(s, l->cur, l->nb, l->maxnb, &nadj);
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
	technique_destroy_state(t);
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
	size_t np = search_nparams(s), maxnb = technique_max_neighbours(s);
	size_t row = (np + 1) * sizeof(uint32_t);
	memset(t, 0, sizeof(*t));
	t->observe = observe_nothing;
	t->destroy = technique_destroy_state;
	if (!strcmp(name, "brute")) {
		uint64_t *next = technique_init(t, "brute", sizeof(*next), brute_propose, observe_nothing,
		                                technique_destroy_state);
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
	if (!strcmp(name, "model"))
		return technique_model_new(s, t);
	return MUH_EINPUT;
}
