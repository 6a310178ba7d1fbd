/*
 * strategy_annealing.c — simulated annealing over neighbours, cooling with
 * the budget, restarting when stuck.
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

int technique_annealing_new(search *s, technique *t)
{
	size_t np = search_nparams(s), maxnb = technique_max_neighbours(s);
	size_t row = (np + 1) * sizeof(uint32_t);
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
