/*
 * runsum.h — the summary of a tune run: the numbers `muh tune` computes
 * from a finished search before it prints anything, and its --json result.
 *
 * One place answers: the search's best against the defaults (the ratio,
 * the interval the two medians' intervals give, and the unpaired tie rule:
 * inside the noise, or the intervals overlap), what ships (the baseline)
 * and its score, the SLO winners over every stored variant (the best under
 * the SLOs and the best ignoring them), and whether the store's best is a
 * variant this search did not reach. A decision stage, when one follows,
 * is the run's one paired verdict (decide.h); these are the search's
 * estimates.
 *
 * Nothing here prints: numbers come back in structs, JSON as malloc'd text.
 */
#ifndef MUH_RUNSUM_H
#define MUH_RUNSUM_H

#include <stddef.h>
#include <stdint.h>

#include "muh/baseline.h"
#include "muh/objective.h"
#include "muh/session.h"
#include "muh/store.h"
#include "muh/strategy.h"

#include "muh/api.h"

MUH_BEGIN_DECLS

/* How the search's best compares with the defaults. */
enum runsum_gain_kind {
	RUNSUM_GAIN_NONE = 0,  /* not both measured ok in the store */
	RUNSUM_GAIN_PER_TOKEN, /* maximize output_tokens_per_s: from seconds per token, with a CI */
	RUNSUM_GAIN_METRIC,    /* another measured metric: the score ratio, no CI */
	RUNSUM_GAIN_TIME,      /* time: the medians' ratio, with a CI */
};

typedef struct runsum_gain {
	enum runsum_gain_kind kind;
	double ratio, lo, hi;     /* the defaults over the best (>1: the best is better); lo-hi: 95% */
	int tie;                  /* the unpaired tie rule's verdict */
	size_t nbest, ndefaults;  /* their samples (PER_TOKEN: load runs) */
	int noisy;                /* the run is noisy: no interval the data can back */
} runsum_gain;

/* The search's best (r->records[r->best]) against the defaults
 * (r->records[0]) of live session s, from the measurements its store holds.
 * kind NONE when either is not stored ok. */
void runsum_live_gain(muh_session *s, const strategy_result *r, runsum_gain *g);

/* The scores a result is told with. */
typedef struct runsum_scores {
	double defaults;          /* NAN when not measured ok */
	double best;              /* NAN when there is no best */
	const baseline_pick *bp;  /* what ships, when it is not the defaults; NULL otherwise */
	long baseline_record;     /* bp's record in r; -1 when it was not measured */
	double baseline;          /* its score; NAN when not measured ok */
} runsum_scores;

void runsum_scores_of(muh_session *s, const strategy_result *r, runsum_scores *sc);

/* One stored variant, for the SLO table: feasible when ok and within every
 * SLO, else why says the first SLO missed. */
typedef void (*runsum_row_fn)(void *ctx, const store_row *row, int feasible, const char *why);

/* The SLO winners of run `run` in st (objective o): every stored variant
 * offered to *w (objective_winners), each given to fn (may be NULL) in the
 * store's order; *rows, *ok and *missed (ok but outside the SLOs) counted. */
void runsum_slo_winners(muh_store *st, int64_t run, const muh_objective *o, runsum_row_fn fn, void *ctx,
				objective_winners *w, size_t *rows, size_t *ok, size_t *missed);

/* 1 when the store's best of s's run (what report and patch name) is
 * neither the search's best nor the re-timing's winner: a variant an
 * earlier search of the run measured; key, *score and *nmeasured then say
 * which. 0 otherwise (also when the decision stage named the best). */
int runsum_store_best_other(muh_session *s, const strategy_result *r, char *key, size_t n, double *score,
				    size_t *nmeasured);

/* Why a search stopped, as a word: budget, time, exhausted, interrupted,
 * error, or environment (an error that is muh's environment; rc: the
 * search's status). */
const char *runsum_stop_name(enum strategy_stop s, int rc);

/* The result of a tune as one JSON object (the "result" event of
 * `muh tune --json`): the search, its best and winner, the defaults, what
 * ships, the top k, and for a live run the device and halving figures.
 * decision: -1 none ran, 0 no proven gain, 1 proven. malloc'd text
 * without newline; NULL when out of memory. */
char *runsum_result_json(muh_session *s, const strategy_opts *o, const strategy_result *r, size_t topk,
				 int rc, int decision);

/* The SLO winners of runsum_slo_winners as the "winners" event of
 * `muh tune --json`. malloc'd text; NULL when out of memory. */
char *runsum_winners_json(const muh_objective *o, const objective_winners *w, size_t rows, size_t missed);

MUH_END_DECLS

#endif
