/*
 * strategy_int.h — what the search driver (strategy.c) offers the
 * techniques (strategy_tech.c and one file per method: strategy_annealing.c,
 * strategy_genetic.c, strategy_ils.c, strategy_model.c), and what a
 * technique provides. Internal.
 *
 * A technique proposes one configuration at a time and observes every
 * finished variant (its own and the others', so that under the bandit they
 * share what was learned). It must only propose configurations that are
 * valid and not yet evaluated; the helpers below make that easy, and the
 * driver asserts it. One part of a technique is declared here too, for the
 * unit tests: the model's regression tree.
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
 * "genetic", "ils", "model"). Returns MUH_OK, MUH_EINPUT for an unknown name, or
 * MUH_ENOMEM. */
int technique_new(const char *name, search *s, technique *t);

/* The methods with a file of their own: each makes t that technique
 * (strategy_annealing.c, strategy_genetic.c, strategy_ils.c,
 * strategy_model.c). MUH_OK or MUH_ENOMEM (t is then named, and its destroy
 * is safe to call). */
int technique_annealing_new(search *s, technique *t);
int technique_genetic_new(search *s, technique *t);
int technique_ils_new(search *s, technique *t);
int technique_model_new(search *s, technique *t);

/* ---- helpers the techniques share (strategy_tech.c) ---- */

/* The most neighbours a configuration can have: the sum over params of
 * (nvalues - 1), at least 1. */
size_t technique_max_neighbours(search *s);
/* The valid, unevaluated neighbours of cfg (one param changed) into out
 * (room for max): adjacent moves (one step along a list) first, each part
 * shuffled. *nadj gets the number of adjacent ones. Returns the count. */
size_t technique_fresh_neighbours(search *s, const uint32_t *cfg, uint32_t *out, size_t max,
                                  size_t *nadj);
/* Frees t->st (the destroy of a technique whose state has no pointers). */
void technique_destroy_state(technique *t);
/* Makes t the technique name with these functions and a zeroed state of
 * size bytes (t->st, freed by destroy); returns the state, or NULL when out
 * of memory (t is then still named, and destroy is safe to call). */
void *technique_init(technique *t, const char *name, size_t size,
                     int (*propose)(technique *, search *, uint32_t *),
                     void (*observe)(technique *, search *, const uint32_t *, double, int),
                     void (*destroy)(technique *));

/* ---- a technique's parts, open to the tests ---- */

/* One regression tree of the model's forest over n points (x: n x np value
 * indices, y: n targets), grown on the points idx[0..n) (a bootstrap sample:
 * repeats allowed; idx is reordered). A node of fewer than
 * MODEL_TREE_MIN_SPLIT points, or one no split improves, is a leaf holding
 * its points' mean; otherwise it splits on "index of param f <= thr" where
 * that most reduces the squared error, over the params search_below keeps
 * (each with probability MODEL_TREE_FEATURES; every param when s is NULL).
 * nvalues: each param's number of values. Nodes go into *nodes
 * (grown as needed; *nnodes, *cap); returns the root's index, or -1 when
 * out of memory. */
typedef struct model_node {
	int32_t f;      /* the param split on; -1 for a leaf */
	uint32_t thr;   /* left: the param's value index <= thr */
	int32_t l, r;   /* children's indices */
	double v;       /* a leaf's prediction */
} model_node;
int32_t technique_model_tree(model_node **nodes, size_t *nnodes, size_t *cap, search *s,
                             const uint32_t *x, const double *y, size_t np,
                             const size_t *nvalues, size_t *idx, size_t n);
/* A tree's prediction for cfg, from its root. */
double technique_model_tree_pred(const model_node *nodes, int32_t root, const uint32_t *cfg);

/* ---- the driver's bandit, open to the tests ---- */

/* The auto bandit's credit for a proposal that measured t when the best so
 * far was best (INFINITY when there is none): 0 when t does not improve on
 * it (a failure, INFINITY or NaN, never does); 1 for the first ok result
 * and for a t <= 0 that improves; else the gain best / t - 1 over
 * BANDIT_GAIN_FULL, at most 1. A ratio: a change of the unit of time
 * changes it only by rounding. For an objective with SLOs, between two
 * misses it is the gain of one miss's score over the other's (how much
 * less the SLOs are missed). */
double strategy_bandit_gain(double best, double t);

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
