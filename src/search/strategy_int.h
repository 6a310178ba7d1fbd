/*
 * strategy_int.h — what the search driver (strategy.c) offers the
 * techniques (strategy_tech.c), and what a technique provides. Internal.
 *
 * A technique proposes one configuration at a time and observes every
 * finished variant (its own and the others', so that under the bandit they
 * share what was learned). It must only propose configurations that are
 * valid and not yet evaluated; the helpers below make that easy, and the
 * driver asserts it. One part of a technique is declared here too, for the
 * unit tests: the model's fill of unseen values.
 */
#ifndef MUH_STRATEGY_INT_H
#define MUH_STRATEGY_INT_H

#include <stddef.h>
#include <stdint.h>

#include "muh/space.h"
#include "muh/strategy.h"

typedef struct search search;

typedef struct technique technique;
struct technique {
	const char *name;
	void *st; /* the technique's own state */
	/* Writes a valid, unevaluated configuration into cfg and returns 1, or
	 * returns 0 when it has nothing to propose now (-MUH_ENOMEM on OOM). */
	int (*propose)(technique *t, search *s, uint32_t *cfg);
	/* Sees a finished variant; own: this technique proposed it. time is
	 * INFINITY for a failed variant. */
	void (*observe)(technique *t, search *s, const uint32_t *cfg, double time, int own);
	void (*destroy)(technique *t);
};

/* Creates the technique called name (one of "brute", "random", "annealing",
 * "genetic", "ils"). Returns MUH_OK, MUH_EINPUT for an unknown name, or
 * MUH_ENOMEM. */
int technique_new(const char *name, search *s, technique *t);

/* ---- a technique's parts, open to the tests ---- */

/* The model technique's rule for the values of one ordered param that no
 * point has (cnt[v] 0), over its nv values in list order: an effect between
 * the nearest seen values below and above it, linear in the list position,
 * or the nearest seen value's effect past either end. The seen effects
 * stay; with no value seen, nothing changes. */
void technique_model_fill_unseen(double *e, const uint32_t *cnt, size_t nv);

/* ---- the driver's services ---- */
const muh_space *search_space(const search *s);
size_t search_nparams(const search *s);
/* A uniform random 64-bit number from the run's generator. */
uint64_t search_rand(search *s);
/* A uniform number in [0, 1). */
double search_unif(search *s);
/* A uniform integer in [0, n), n > 0. */
uint64_t search_below(search *s, uint64_t n);
/* 1 when cfg is valid and already evaluated; 0 when valid and not; -1 when
 * not valid. *time (may be NULL) gets its time (INFINITY if failed). */
int search_seen(const search *s, const uint32_t *cfg, double *time);
/* A uniform random valid configuration not yet evaluated: 1, or 0 when
 * every valid configuration has been evaluated. */
int search_random_unseen(search *s, uint32_t *cfg);
/* The middle of the space: the valid configuration nearest the middle of
 * every param's value list (the sum over params of |index - (nvalues - 1)
 * / 2| / (nvalues - 1); ties: the first in index order), among those not
 * yet evaluated when unseen_only. Kernels' slow corners (one thread, the
 * largest tiles) and their resource failures lie at the ends of the lists,
 * so it is a better first guess than a random one: it beat the mean time
 * (the expectation of one random draw) on 18 of the 19 full sweeps of
 * bench/search_score.py. 1 with it in cfg, 0 when there is none, or
 * -MUH_ENOMEM. */
int search_center(search *s, uint32_t *cfg, int unseen_only);
/* How far cfg lies from the middle: the distance search_center minimises,
 * in [0, nparams / 2]. */
double search_center_distance(const search *s, const uint32_t *cfg);
/* The best ok configuration so far, or NULL; *time gets its time. */
const uint32_t *search_best(const search *s, double *time);
/* Fraction of the evaluation budget used, in [0, 1]. */
double search_progress(const search *s);
/* The evaluation budget, and the number evaluated so far. */
uint64_t search_budget(const search *s);
uint64_t search_evaluated(const search *s);

#endif
