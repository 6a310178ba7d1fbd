/*
 * strategy_ils.c — iterated local search: first-improvement descent over
 * neighbours, and a perturbed restart at each local optimum.
 *
 * A technique of the search (strategy_int.h): it only proposes, and the
 * driver (strategy.c) measures, counts and records. A failed variant has
 * time INFINITY: never accepted as a move, but its neighbours stay open.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "muh/muh.h"
#include "strategy_int.h"

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

int technique_ils_new(search *s, technique *t)
{
	size_t np = search_nparams(s), maxnb = technique_max_neighbours(s);
	size_t row = (np + 1) * sizeof(uint32_t);
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
