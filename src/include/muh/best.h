/*
 * best.h — the best result of a run: one answer for every reader of a store.
 *
 * `muh report`, `muh patch --from DB` and the emitters (moe-json, header,
 * triton-configs) all ask this module which variant of a run is the best
 * and how the others rank behind it, so they never disagree.
 *
 * The ranking is the run's objective (objective.h): ok variants that meet
 * its SLOs, lowest score first, ties in measurement order. When the run was
 * re-timed at sustained clocks (store_retime rows, measure.retime_top), the
 * ranking is the one at the clocks that ship: the re-timed variants that
 * passed first, by their sustained times (timed interleaved, so none gains
 * from its place), then the others as the search ranked them. This holds
 * whether or not the SM clock fell: the search timed its variants one after
 * the other, at whatever clock the device held then.
 *
 * When the run had a decision stage (decide.h: the defaults and the top k
 * re-measured in paired, alternating rounds), its proven winner ranks
 * first, and best_decided says whether a gain was proven at all: a search's
 * best that the stage did not prove is no winner to write back. Without a
 * proven winner, what stays ranks first, for every backend: the baseline
 * (what ships), or the defaults when they were the baseline; the search's
 * own best stays known as search_key (what patch --force writes). A run
 * that never had a stage writes what ships where its spec names it
 * (best_shipped).
 */
#ifndef MUH_BEST_H
#define MUH_BEST_H

#include <stddef.h>
#include <stdint.h>

#include "muh/decide.h"
#include "muh/diag.h"
#include "muh/eval.h"
#include "muh/objective.h"
#include "muh/store.h"

#include "muh/baseline.h"
#include "muh/api.h"

MUH_BEGIN_DECLS

/* The regime that named a run's best. */
enum best_regime {
	BEST_BURST = 0,     /* as the search measured (no re-timing, or none passed it) */
	BEST_SUSTAINED = 1, /* re-timed interleaved after a sustained load */
};

/* One ranked variant. */
typedef struct best_entry {
	const char *key;     /* canonical key; owned by the muh_best */
	double score;        /* objective score in the regime that ranked it (lower is better) */
	double burst_score;  /* its score as the search measured it */
	double sm_clock_mhz; /* the SM clock of the measurement that ranked it; NAN when not reported */
	int sustained;       /* 1: ranked by its re-timing at sustained clocks */
} best_entry;

/* A measured variant's fingerprint (the compiled artifact it built). */
typedef struct best_fp {
	const char *key;         /* canonical key; owned by the muh_best */
	const char *fingerprint; /* never "": variants without one are not kept */
} best_fp;

/* A param that did not change the compiled artifact at some variant: the
 * variant `witness`, which differs from it in this param alone, built the
 * same fingerprint. Pointers are owned by the muh_best it came from. */
typedef struct best_inert {
	char name[64];           /* the param's name */
	const char *witness;     /* the other variant's key */
	const char *value;       /* the witness's value of the param, in witness */
	size_t value_len;
	const char *fingerprint; /* the one artifact both built */
} best_inert;

/* What one run holds, ranked. Every pointer is owned by it (best_free). */
typedef struct muh_best {
	int64_t run;
	muh_objective objective; /* the spec's ({minimize: time} when it cannot be read) */
	size_t nmeasured, nok;
	size_t nfeasible; /* of the nok, those the objective takes (objective_feasible: within its
			   * SLOs and, for an engine's rate search, not a rate that missed them) */
	/* ok timings whose median's 95% CI is wider than measure.ci (timing
	 * stopped at a cap): their ranks are not sure, and a replay of the run
	 * ranks by those medians. Counted when the objective's metric is
	 * time only. */
	size_t nwide;
	double ci_frac; /* the spec's measure.ci (eval_target_ci_of_spec); NAN when the stored spec
			 * or its target keys cannot be read */
	size_t status[EVAL_NSTATUS];
	best_entry *ranked; /* ok, meeting the SLOs, best first; ranked[0] is the best */
	size_t nranked;
	const char *any_key; /* the best ignoring the SLOs; NULL when nothing was ok */
	double any_score;
	const char *default_key; /* the spec's defaults; NULL when the spec cannot be read */
	double default_score;    /* NAN when the defaults were not measured ok */
	store_retime *retimes;   /* the re-timing at sustained clocks, as stored */
	size_t nretimes;
	enum best_regime regime;
	size_t retime_winner; /* with BEST_SUSTAINED: the row of retimes that won */
	double *so_far;       /* [nmeasured]: the best feasible score after each measurement */
	double *ok_scores;    /* [nok]: the score of every ok measurement, in order */
	best_fp *fps;         /* every measured variant that reported a fingerprint */
	size_t nfps;
	decide_summary *decision; /* the run's decision stage (decide.h); NULL when it had none.
				   * A proven winner is ranked[0]. */
	int keeps_baseline;       /* 1: the stage proved no gain, and what stays is ranked[0]: a
				   * baseline that is not the defaults (an engine's shipped
				   * config: what an emitter writes is what already ships), or
				   * the defaults themselves (an engine run whose deployment
				   * file stays as it is): report, plots, exports and patch
				   * name one best */
	const char *search_key;   /* the search's own best within the SLOs (ranked[0] before a
				   * decision put another first); NULL when none. Points into
				   * ranked */
	const char *forced_key;   /* what patch --force writes when no gain was proven: the
				   * decision stage's finalist of highest paired gain (measured
				   * afresh, paired and repeated, where the search timed each
				   * once), else search_key. Points into ranked; NULL when none */
	int forced_f;             /* forced_key's finalist in decision->f; -1: the search's best */
} muh_best;

/* The objective run r was measured against: that of its stored spec sp
 * (store_run_spec), {minimize: time} when sp has none that reads. */
void best_run_objective(const muh_spec *sp, const store_run *r, muh_objective *o);
/* 1 when m, an ok timing of a run with objective o whose measure.ci is
 * ci_frac, ended with its median's 95% CI wider than ci_frac: the rule muh
 * tune marks '!' by, muh report counts (nwide) and a replay notes. 0 when
 * o's metric is not time or ci_frac is NAN. */
int best_wide_ci(const muh_objective *o, double ci_frac, const muh_measurement *m);

/* Ranks run r of store st into *out (best_free). MUH_OK also for a run
 * without any ok variant (nranked 0); MUH_EENV when the store cannot be
 * read, MUH_ENOMEM. */
int best_of_run(muh_store *st, const store_run *r, muh_best *out, muh_diag *d);
void best_free(muh_best *b);

/* Each run's best, as best_of_run ranks it (ranked[0]), for run (0: every
 * run) of store st: *out gets one mark per run that has one (runs with no
 * ok variant are left out), *n their count; the exports mark them
 * (store_export), so that they name the best report and patch name.
 * MUH_OK, or best_of_run's error (d set); free with best_marks_free. */
int best_marks(muh_store *st, int64_t run, store_mark **out, size_t *n, muh_diag *d);
void best_marks_free(store_mark *m, size_t n);

/* The best's speedup over the defaults: with a decision that proved a
 * winner or kept a baseline, its paired ratio over the defaults
 * (decide_summary.vs_defaults); otherwise both as the search measured them
 * (the defaults are not re-timed at sustained clocks): default score over
 * the best's burst score, NAN when either was not measured ok. */
double best_speedup(const muh_best *b);
/* 1 when a speedup lies inside the run's noise (|speedup - 1| <= noise): a
 * tie on the machine that measured it, as report's speedup column, patch's
 * note and tune's gain of a non-time metric call it (tune's time speedup,
 * from two measurements of this run, asks eval_compare, which also calls
 * overlapping confidence intervals a tie). 0 when either is NAN. */
int best_is_tie(double speedup, double noise);

/* What ships for run r, for a run whose decision stage never ran (a size
 * tuned before it existed, --finalists 0): the entry of the spec's baseline
 * file (target.baseline, baseline.h) that the engine picks for the run's
 * instance on the run's device, so that an emitter writes what ships
 * rather than a gain nobody proved. The stored spec is read from its own
 * folder, else (that folder is gone: another machine's) from r->spec_path
 * as given. MUH_OK with *found 1 and out set; *found 0 when the spec names
 * no baseline, its file is not here, or the run's hardware profile cannot
 * be resolved (no device name to fill in); an error (d set) when the file is
 * there and is not a config of the spec. */
int best_shipped(const store_run *r, baseline_pick *out, int *found, muh_diag *d);

/* The one answer to "may this run's best be written back as a gain": 1 when
 * its decision stage proved a winner (ranked[0]), 0 when it ran and proved
 * none (b->decision->why says why), -1 when the run had no decision stage
 * (a kernel run, or a store of an earlier muh). */
int best_decided(const muh_best *b);

/* best_decided, with why (n bytes) saying, when it is not 1, why nothing
 * is proven: the decision's own sentence, or that the run had no decision
 * stage (a replay, --finalists 0, stopped before it, an earlier muh), so
 * that its best was timed once, unpaired. why is "" for a proven winner.
 * Every write-back asks this one question. */
int best_proof(const muh_best *b, char *why, size_t n);

/* The best and the defaults as the run's decision stage measured them,
 * when best_speedup is the decision's paired ratio (a proven winner, or a
 * baseline kept): the objective metric's median over each one's ok repeats
 * in those rounds, so that a report's best, default and speedup tell one
 * story. 1 with *best (the winner, else what was kept) and *dflt (NAN when
 * the defaults were not in the rounds); 0 when the speedup is the search's
 * (then so are the numbers). */
int best_decided_values(const muh_best *b, double *best, double *dflt);

/* 1 when m's fingerprint proves what was built: set, and not the command
 * backend's hash of the expanded command line ("proof":false in
 * fp_detail), which is the same when params reach the program through the
 * environment. Only such fingerprints make twins or inert params. */
int best_fp_proves(const muh_measurement *m);

/* Twins: variants that built the same artifact (the same fingerprint) and
 * so ran the same code, timed apart all the same: the noise the machine
 * showed on identical code, which no speedup smaller than it can beat.
 * Over n variants (fps[i] their fingerprints, "" or NULL for none; scores[i]
 * lower is better, positive; one not finite or not above 0 is left out, as
 * a failed one): the number of variants that
 * share an artifact with another (*twins) and the largest ratio of two
 * scores of one artifact, slower over faster, with those two (*slow,
 * *fast: indexes); NAN when no two ok variants share one. */
double best_twin_spread(const char *const *fps, const double *scores, size_t n, size_t *twins,
				size_t *slow, size_t *fast);
/* The same over run b's ranked variants (their scores as the search
 * measured them) with a fingerprint: *slow and *fast are keys owned by b. */
double best_twins(const muh_best *b, size_t *twins, const char **slow, const char **fast);

/* The twins line, in the words muh eval and muh report share: "twins: N
 * variants built the same artifact as another (fingerprint); the same code
 * timed up to R apart (SLOW against FAST): ...". It says what the spread
 * is (identical builds timed at different points of the run, drift
 * included) and, when noise is finite, that the noise figure beside it is
 * another thing (the defaults timed twice back to back, a few seconds
 * apart), so that the two never read as one figure; and what the spread
 * bounds: variants timed once each. paired: the run's speedup came from
 * paired rounds (report's '+'), which the line says cancel such drift.
 * Into buf (n bytes), no newline. */
void best_twins_note(char *buf, size_t n, size_t twins, double spread, const char *slow, const char *fast,
		     double noise, int paired);

/* The params of variant key (a canonical key, NAME=VALUE,...) that did not
 * change its compiled artifact, in key order, at most max into out: a param
 * is such when a measured variant of the run that differs from key in that
 * param alone (any status) built the same fingerprint, so the value written
 * for it does nothing there. One rule for every emitter that writes params.
 * Changes of several params at once that left the fingerprint as it was
 * prove nothing about each one and are not counted. Returns the count (0
 * when key was not measured or reported no fingerprint). */
size_t best_inert_params(const muh_best *b, const char *key, best_inert *out, size_t max);
/* The words every emitter writes beside such a param's value: "did not
 * change the compiled artifact: NAME=V built the same (fingerprint F)". */
void best_inert_note(const best_inert *e, char *buf, size_t n);

/* The verdict on a re-timing (rows in burst_rank order, as the session
 * times them and the store keeps them): 1 and *winner (the fastest row at
 * sustained clocks) when some row passed, whether the SM clock fell or
 * held; 0 when the burst ranking stands (no rows, or none passed). */
int best_retime_verdict(const store_retime *rows, size_t n, size_t *winner);

/* What the SM clock of the search's best (row 0) did in the re-timing:
 * fell (under 99% of its burst clock), held, or unknown (no rows, no clock
 * read, or it failed there). For the reader only: the winner
 * (best_retime_verdict) does not depend on it. */
enum best_clock { BEST_CLOCK_UNKNOWN = 0, BEST_CLOCK_HELD, BEST_CLOCK_FELL };
enum best_clock best_retime_clock(const store_retime *rows, size_t n);
const char *best_clock_name(enum best_clock c); /* "unknown", "held", "fell" */

MUH_END_DECLS

#endif
