/*
 * strategy_tech.c — the helpers the search techniques share, the two that
 * need no state (brute force and random), and technique_new, which makes
 * any of them. Each other method has a file of its own:
 * strategy_annealing.c, strategy_genetic.c, strategy_ils.c and
 * strategy_model.c.
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

/* ---- construction --------------------------------------------------------- */

/* Makes t a technique with its own state (the contract is in
 * strategy_int.h). */
void *technique_init(technique *t, const char *name, size_t size,
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
	if (!strcmp(name, "annealing"))
		return technique_annealing_new(s, t);
	if (!strcmp(name, "genetic"))
		return technique_genetic_new(s, t);
	if (!strcmp(name, "ils"))
		return technique_ils_new(s, t);
	if (!strcmp(name, "model"))
		return technique_model_new(s, t);
	return MUH_EINPUT;
}
