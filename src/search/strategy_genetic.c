/*
 * strategy_genetic.c — a genetic algorithm: a population of the best seen,
 * tournament selection, uniform crossover, mutation.
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

int technique_genetic_new(search *s, technique *t)
{
	size_t np = search_nparams(s), maxnb = technique_max_neighbours(s);
	size_t row = (np + 1) * sizeof(uint32_t);
	struct ga *g = technique_init(t, "genetic", sizeof(*g), ga_propose, ga_observe, ga_destroy);
	if (!g)
		return MUH_ENOMEM;
	g->np = np;
	g->maxnb = maxnb;
	g->pop = malloc(row * GA_POP);
	g->nb = malloc(row * maxnb);
	return g->pop && g->nb ? MUH_OK : MUH_ENOMEM;
}
