/*
 * strategy.h — search over a space: strategies propose configurations, an
 * objective measures them.
 *
 * The search never knows how a variant is measured. The caller passes an
 * objective callback (the evaluator, a replay table, a test function); the
 * driver asks it for one configuration at a time and tells the caller about
 * every finished variant through an event callback (progress bars, --json
 * events, the store).
 *
 * Rules every strategy follows, enforced by the driver:
 *   - it proposes only valid configurations (drawn through the space API:
 *     space_sample, space_neighbours, space_config_at, or checked with
 *     space_is_valid before they leave the strategy);
 *   - it never proposes a configuration already evaluated in this run;
 *   - budgets hold exactly: at most `budget` objective calls, and none
 *     started once `time_budget_s` has passed;
 *   - a failed variant (status != 0) is information: it counts against the
 *     budget, it is never the best, the search goes on;
 *   - the first evaluations are the defaults (with skip_defaults, the
 *     search's own start: the middle of the space, search_center, or a
 *     random valid configuration for random and brute), then the spec's seeds in spec order, then the transfer seeds (seeds invalid in this space, or equal
 *     to an earlier one, are reported through an event and skipped); all of
 *     them count against the budget like any evaluation;
 *   - a run is deterministic for a given seed and objective.
 *
 * Resume: because a run is deterministic, running it again with an
 * objective that answers finished variants from the store (without
 * measuring) replays the same proposals up to where it stopped and goes on.
 */
#ifndef MUH_STRATEGY_H
#define MUH_STRATEGY_H

#include <stddef.h>
#include <stdint.h>

#include "muh/diag.h"
#include "muh/space.h"

#include "muh/api.h"

MUH_BEGIN_DECLS

/* What the objective found for one variant. */
typedef struct strategy_measurement {
	double time_s;           /* the variant's time; meaningful when status == 0 */
	int status;              /* 0 ok; any other value is a failure kind of the objective's */
	const char *status_text; /* "ok", "compile_error", ...; NULL: "ok" or "failed" */
} strategy_measurement;

/* Measures configuration cfg (nparams value indices, valid in the space).
 * Fills *m and returns MUH_OK; a failed variant is MUH_OK with m->status
 * set. Any other return value (MUH_EENV: device lost ...) ends the search
 * with that status. */
typedef int (*strategy_objective)(void *ctx, const uint32_t *cfg, strategy_measurement *m);

enum strategy_event_kind {
	STRATEGY_EV_VARIANT = 0,         /* a variant finished (measured or failed) */
	STRATEGY_EV_SEED_SKIPPED = 1,    /* a spec seed was skipped: see .reason */
	STRATEGY_EV_DEFAULT_INVALID = 2, /* the defaults are not valid here; not measured */
	STRATEGY_EV_PREDICTED = 3,       /* predict_fail skipped cfg: see .reason */
};

typedef struct strategy_event {
	enum strategy_event_kind kind;
	const uint32_t *cfg; /* the configuration (a seed: omitted params at their defaults) */
	uint64_t index;      /* its index in the space (UINT64_MAX when not valid) */
	const char *source;  /* who proposed it: "default", "seed", "random", "annealing" ... */
	size_t seed;         /* STRATEGY_EV_SEED_SKIPPED: the seed's position in the spec */
	int seed_line;       /* ... and where it is written */
	const char *reason;  /* STRATEGY_EV_SEED_SKIPPED / DEFAULT_INVALID: why */
	/* STRATEGY_EV_VARIANT: */
	const strategy_measurement *m;
	uint64_t evaluated;       /* variants finished so far, this one included */
	uint64_t failed;          /* ... of which failed */
	uint64_t budget;          /* the evaluation budget in force (space size if none) */
	int improved;             /* this variant is the new best */
	double best_s;            /* best time so far (INFINITY while none is ok) */
	const uint32_t *best_cfg; /* NULL while none is ok */
	double elapsed_s;         /* wall time since the run started */
} strategy_event;

/* Called for every event. Returning nonzero stops the search cleanly after
 * this event (Ctrl-C): the result is complete up to here. */
typedef int (*strategy_event_fn)(void *ctx, const strategy_event *ev);

typedef struct strategy_opts {
	const char *strategy; /* a name from strategy_names; NULL = "auto" */
	uint64_t budget;      /* max evaluations; 0 = the whole space */
	double time_budget_s; /* no evaluation starts after this; 0 = none */
	uint64_t seed;        /* random seed; any value (0 is fine) */
	int skip_spec_seeds;  /* 1: do not evaluate the spec's seeds */
	/* 1: the first evaluation is the search's own start instead of the
	 * defaults: the valid configuration nearest the middle of every
	 * param's value list (source "center"), or for random and brute a
	 * uniform random valid configuration (source "random"). A benchmark
	 * so judges the search without the head start the defaults give it;
	 * the result then has no default (have_default 0). Seeds are still
	 * evaluated after it unless skipped. */
	int skip_defaults;
	/* Transfer seeds (transfer_seeds.h): evaluated after the spec's seeds,
	 * in order, each once, source "transfer"; one not valid here or equal
	 * to an earlier evaluation is reported (STRATEGY_EV_SEED_SKIPPED, source
	 * "transfer", .seed its position) and skipped. nparams value indices
	 * each. skip_spec_seeds does not affect them. */
	const uint32_t *transfer_seeds;
	size_t ntransfer_seeds;
	/* The baseline (baseline.h: the entry an engine ships): evaluated right
	 * after the defaults, source "baseline", whatever skip_spec_seeds says,
	 * the time budget or the evaluation budget (it counts in the latter);
	 * NULL: none. Skipped (STRATEGY_EV_SEED_SKIPPED, source "baseline")
	 * when it is the defaults or breaks a constraint. */
	const uint32_t *baseline_cfg;
	strategy_objective objective;
	void *objective_ctx;
	strategy_event_fn on_event; /* may be NULL */
	void *event_ctx;
	/* Wall clock in seconds for time budgets and elapsed_s; NULL uses
	 * CLOCK_MONOTONIC. Tests pass a fake one. */
	double (*clock)(void *ctx);
	void *clock_ctx;
	/* Hidden constraints (optional; SCOOT's "learn which configs crash"):
	 * asked before each proposal is measured. Nonzero: the configuration is
	 * predicted to fail (why, n bytes, says from what); it is recorded with
	 * status STRATEGY_PREDICTED and time INFINITY, never measured, seen by
	 * every strategy as a failure, and not counted against the budget. */
	int (*predict_fail)(void *ctx, const uint32_t *cfg, char *why, size_t n);
	void *predict_ctx;
} strategy_opts;

/* The status of a record that predict_fail skipped. */
#define STRATEGY_PREDICTED (-2)

/* One finished variant, in evaluation order. */
typedef struct strategy_record {
	uint64_t index; /* in the space */
	double time_s;  /* INFINITY when failed */
	int status;
	const char *source; /* static string: who proposed it */
} strategy_record;

enum strategy_stop {
	STRATEGY_STOP_BUDGET = 0,    /* evaluated `budget` variants */
	STRATEGY_STOP_TIME = 1,      /* the time budget ran out */
	STRATEGY_STOP_EXHAUSTED = 2, /* every valid configuration was evaluated */
	STRATEGY_STOP_CALLER = 3,    /* the event callback asked to stop */
	STRATEGY_STOP_ERROR = 4,     /* the objective returned an error */
};

typedef struct strategy_result {
	strategy_record *records; /* evaluated variants in order */
	uint64_t nrecords;        /* == evaluated, predicted failures included */
	uint64_t failed;          /* measured and failed */
	uint64_t predicted;       /* skipped by predict_fail: never measured, not in the budget */
	uint64_t budget; /* the evaluation budget that was in force */
	int have_best;
	uint64_t best;    /* index into records of the best ok variant */
	int have_default; /* the defaults were valid and evaluated (records[0]) */
	enum strategy_stop stop;
	double seconds;          /* wall time of the run */
	uint64_t bandit_uses[8]; /* "auto": proposals per arm, in strategy_bandit_arms order */
} strategy_result;

/* The strategies, NULL-terminated: "auto" (the default: a multi-armed
 * bandit over strategy_bandit_arms, credited by the area under the curve of
 * each proposal's gain over the best), "brute", "random", "annealing",
 * "genetic", "ils", "model". */
extern const char *const strategy_names[];
/* MUH_OK when name is one of strategy_names; else MUH_EINPUT with d->msg
 * "unknown strategy 'NAME'; known: " and every one of them (d may be
 * NULL). */
int strategy_check_name(const char *name, muh_diag *d);
/* One line describing a strategy, or NULL for an unknown name. */
const char *strategy_doc(const char *name);
/* The sub-strategies "auto" chooses among, NULL-terminated. */
extern const char *const strategy_bandit_arms[];

/* Runs a search over sp. Returns MUH_OK when it ended by budget, time,
 * exhaustion or the caller's request (r->stop says which); MUH_EINPUT with
 * d set for an unknown strategy or missing objective; MUH_ENOMEM; or the
 * objective's error status (r is then complete up to the failing call).
 * r must be freed with strategy_result_free whatever the return value. */
int strategy_run(const muh_space *sp, const strategy_opts *o, strategy_result *r, muh_diag *d);

void strategy_result_free(strategy_result *r);

/* Indices into r->records of up to k best ok variants, fastest first.
 * Returns how many were written. */
size_t strategy_top(const strategy_result *r, size_t k, uint64_t *out);

MUH_END_DECLS

#endif
