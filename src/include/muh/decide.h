/*
 * decide.h — decisions that hold: a finalist wins only on paired,
 * interleaved re-measurements against the baseline, with an interval.
 *
 * A search ranks variants from one measurement each, in the order it met
 * them, on a machine whose noise moves (a loaded host, a clock that falls,
 * a server's warm-up). A winner from that ranking can be noise: the quick
 * start once wrote a "winner" 1.6x the defaults that lost to them when
 * deployed again. So before anything is written back, the decision stage
 * measures the baseline (the defaults) and the search's top k again, in
 * rounds: each round measures every one of them afresh (for an engine a new
 * server each time), the order alternated round by round (A B C, C B A, B C
 * A, ...), so that a drift the round shares cancels in each per-round ratio.
 *
 * The verdict of a finalist is Student's t interval on its per-round
 * log-ratios against the baseline (stats_paired_log_ratio):
 *   gain       the interval lies above 1, every repeat was ok and met
 *              every SLO;
 *   loss       the interval lies below 1;
 *   slo_miss   a repeat missed an SLO (it cannot ship, whatever its mean);
 *   failed     a repeat failed (did not start, crashed, wrong result);
 *   undecided  the interval holds 1 after the last round: a tie;
 *   pending    fewer than DECIDE_MIN_ROUNDS rounds so far.
 * The rounds are looked at after DECIDE_MIN_ROUNDS rounds and every
 * DECIDE_STEP rounds after (ABBA stays balanced), up to max_rounds; the
 * stage stops once every finalist is decided. Because it looks several
 * times and compares several finalists, each look uses a stricter level
 * (decide_level): Pocock's nominal level for that many looks, split over
 * the finalists (Bonferroni), so that the chance that a tie is called a
 * gain stays within alpha over the whole stage. The level is stored with
 * the rows, so every reader judges them as the stage did.
 *
 * The winner is the finalist with a gain and the highest ratio; none has
 * one: "no proven gain", and the baseline stays. This is the one tie rule
 * of an engine run: `muh tune` prints it, `muh report` shows it, and
 * `muh patch --from` writes only a proven gain (best.h carries it).
 */
#ifndef MUH_DECIDE_H
#define MUH_DECIDE_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>

#include "muh/diag.h"
#include "muh/objective.h"
#include "muh/stats.h"
#include "muh/store.h"

#include "muh/api.h"

MUH_BEGIN_DECLS

struct muh_session;

#define DECIDE_MIN_ROUNDS 4
#define DECIDE_STEP 2
#define DECIDE_MAX_FINALISTS 8
#define DECIDE_MAX_ROUNDS 64 /* --rounds' cap; rows beyond it are not judged */
#define DECIDE_ROLE_NONE 2   /* a decision row's role: the stage ran and had no finalist */
#define DECIDE_ROLE_DEFAULTS 3 /* a finalist that is the defaults, beside a baseline that is not */
#define DECIDE_LATER_WARM_S 0.5 /* a kernel's warm-up after a round's first repeat, when
				 * the spec leaves measure.gpu_warm to the backend */

enum decide_verdict {
	DECIDE_PENDING = 0,
	DECIDE_GAIN,
	DECIDE_LOSS,
	DECIDE_UNDECIDED,
	DECIDE_SLO_MISS,
	DECIDE_FAILED,
};

/* "pending", "gain", "loss", "undecided", "slo_miss", "failed". */
const char *decide_verdict_name(enum decide_verdict v);

typedef struct decide_opts {
	size_t finalists; /* the search's top k besides the baseline (1..DECIDE_MAX_FINALISTS) */
	int max_rounds;   /* at most this many rounds (>= DECIDE_MIN_ROUNDS) */
	double alpha;     /* the chance, over all looks and finalists, that a tie is called a gain */
	/* The baseline: a canonical key of the run's space (the entry an
	 * engine's shipped config file holds for this problem, baseline.h);
	 * NULL or "": the defaults. When it is not the defaults, the defaults
	 * join the rounds as one more finalist (role DECIDE_ROLE_DEFAULTS), so
	 * that the speedup over them is paired too, and may win. */
	const char *baseline_key;
} decide_opts;

/* finalists 2, max_rounds 8, alpha 0.05, the defaults as the baseline. */
void decide_defaults(decide_opts *o);

/* The two-sided confidence level one look uses, for k finalists and up to
 * max_rounds rounds (Pocock's nominal alpha for the number of looks,
 * divided by k). */
double decide_level(const decide_opts *o, size_t k);

typedef struct decide_finalist {
	char key[4096];
	size_t repeats, ok, slo_met; /* its rows; ok ones; ones within every SLO */
	stats_ratio gain;            /* baseline score / its score, over the judged rounds */
	double value;                /* the objective metric's median over its ok repeats */
	/* the lowest and highest one-round ratio (baseline score / its score)
	 * of the rounds both ran, and those rounds (0-based; -1 and NAN when
	 * none): what one round can do to the paired gain */
	double round_lo, round_hi;
	int round_lo_at, round_hi_at;
	enum decide_verdict verdict;
	char why[1024];              /* the first failure or SLO miss */
} decide_finalist;

/* Where a decision stage's wall time went (session_decide only: a summary
 * read back from a store has none, repeats 0). The steps' seconds are the
 * runner's (muh_measurement t_build, t_verify, t_warm, and t_time less
 * t_warm); wall_s is each repeat's whole request as the session saw it, so
 * wall_s less the steps is the rest: process starts, inputs, the store. */
typedef struct decide_cost {
	size_t repeats;
	double wall_s, build_s, check_s, warm_s, time_s;
} decide_cost;

typedef struct decide_summary {
	int present;           /* the run has decision rows */
	char baseline[4096];
	size_t base_repeats, base_ok, base_slo_met; /* as a finalist's repeats, ok, slo_met */
	double base_value;     /* the baseline's metric, median over its ok repeats */
	char base_why[1024];   /* the baseline's first failure */
	char base_slo_why[1024]; /* the baseline's first ok repeat that missed an SLO, and which */
	size_t rounds;         /* rounds that hold a row */
	double level;          /* the level each look used */
	decide_finalist f[DECIDE_MAX_FINALISTS];
	size_t nf;
	int winner;            /* index into f: the proven gain with the highest ratio; -1 none */
	int runner_up;         /* the finalist with the next-highest ratio; -1 none */
	stats_ratio vs_runner_up; /* runner-up's score / winner's, paired in the rounds both ran */
	int defaults_f;        /* index into f of the defaults (role DECIDE_ROLE_DEFAULTS); -1: the
				* baseline is the defaults, or they were not in the rounds */
	stats_ratio vs_defaults; /* the defaults' score / the chosen one's (the winner, else the
				  * baseline), paired; ratio 1 when the chosen one is the defaults;
				  * NAN when the defaults were not in the rounds */
	char why[1024];        /* with no winner: why, in a sentence */
	decide_cost cost;      /* this stage's, when session_decide ran it */
} decide_summary;

/* Judges rows[0..n) (one run's decision rows, any order) under objective o
 * into *out: the verdict of each finalist, the winner, the runner-up. The
 * level is the rows' own. Pure. */
void decide_summarize(const muh_objective *o, const store_decision *rows, size_t n, decide_summary *out);

/* The decision of run in st (decide_summarize over its rows); out->present
 * is 0 when the run has none. MUH_OK, MUH_EENV when the store cannot be
 * read, MUH_ENOMEM. */
int decide_of_run(muh_store *st, int64_t run, const muh_objective *o, decide_summary *out, muh_diag *d);

/* 1 when the baseline of decision sm is what ships (an engine's own config
 * file's entry), not the defaults (default_key, the run's defaults; NULL
 * when unknown: 0). Every reader that says "what ships" or "the defaults"
 * asks this. */
int decide_baseline_ships(const decide_summary *sm, const char *default_key);

/* The summary as a JSON object (tune --json's "decision" event, report
 * --json): baseline, rounds, level, finalists with their verdicts and
 * intervals, winner (null when none), why. malloc'd text; NULL when out of
 * memory. */
char *decide_summary_json(const decide_summary *sm, const muh_objective *o);

/* One measurement of the stage, as it finishes (for progress). */
typedef struct decide_event {
	int round, pos, nround;  /* nround: variants in this round */
	const char *key;
	int baseline;            /* 1: the baseline's */
	const char *status;
	double value;            /* the objective metric; NAN when not ok */
	int slo_met;
	const char *why;
} decide_event;
typedef void (*decide_event_fn)(void *ctx, const decide_event *e);

/* Runs the decision stage on the session's run: the baseline (the
 * defaults) and the top o->finalists variants of the run's ranking
 * (best_of_run: ok and within the SLOs, the defaults left out) measured
 * again in rounds through the session's evaluator, every measurement
 * stored as a decision row as it finishes. Rows of an earlier stage over
 * the same baseline and finalists are resumed (their rounds kept); other
 * rows are replaced. Stops at max_rounds, when every finalist is decided,
 * when the baseline failed in the first DECIDE_STEP rounds (nothing can be
 * judged against it), or when *stop is set (the rows so far kept). Fills
 * *out as decide_of_run would. MUH_OK (also when there is no finalist:
 * out->nf 0); MUH_EINPUT when the session measures nothing; the store's or
 * the evaluator's error.
 *
 * A kernel (any backend but engine) is measured through
 * session_sustained_evaluator: each repeat is a fresh build, with fresh
 * inputs and buffers, at its sustained clock: each round's first repeat is
 * warmed for measure.retime_warm, the later ones of the round, which follow
 * with the device still under load, for measure.gpu_warm (or
 * DECIDE_LATER_WARM_S). The stage's cost (out->cost) says where its time
 * went. A finalist's gain must lie above 1 + the objective's min_gain. */
int session_decide(struct muh_session *s, const decide_opts *o, decide_event_fn on_event, void *ctx,
			   volatile sig_atomic_t *stop, decide_summary *out, muh_diag *d);

MUH_END_DECLS

#endif
