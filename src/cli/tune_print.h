/*
 * tune_print.h — how `muh tune` shows a search (see tune_print.c): its
 * progress and notes on stderr, the lines of what was loaded, the result,
 * the SLO table and the decision on stdout, or their --json events. The
 * numbers come from libmuh (runsum.h, tune_flow.h, decide.h); these only
 * print them.
 */
#ifndef MUH_TUNE_PRINT_H
#define MUH_TUNE_PRINT_H

#include <signal.h>

#include "muh/decide.h"
#include "muh/objective.h"
#include "muh/pool.h"
#include "muh/session.h"
#include "muh/store.h"
#include "muh/strategy.h"

/* The context of tune_on_event / tune_on_note / tune_on_decide. */
struct tune {
	muh_session *s;
	const muh_space *sp;
	const muh_objective *objective;
	const char *problem;
	int json, bar; /* --json; a progress bar (stderr is a terminal) */
	double last_bar;
	char key[4096];
	volatile sig_atomic_t *stop; /* Ctrl-C: the event callback asks the search to stop */
};

/* One line of JSON text (malloc'd, freed here) on stdout, flushed. */
void tune_print_text(char *txt);

/* The session's callbacks: a search event (returns 1 to stop), a note,
 * and one measurement of the decision stage. */
int tune_on_event(void *ctx, const strategy_event *ev);
void tune_on_note(void *ctx, const session_note *n);
void tune_on_decide(void *ctx, const decide_event *e);

/* The lines before the search: spec, profile, problem, space (nth > 0:
 * a blank line first); then, once started, the store and the replay; the
 * noise (on stderr too when noisy); the strategy and its budget. */
void tune_print_opening(muh_session *s, size_t nth);
void tune_print_loaded(muh_session *s, const muh_session_opts *so, int json);
void tune_print_noise(muh_session *s, double noise, int noisy, int json);
void tune_print_strategy(const strategy_opts *o, const muh_space *sp);

/* After a search through a pool: its noise line, and workers restarted. */
void tune_print_pool_done(muh_session *s, const muh_pool *pool, int json);

/* The SLO table of tune_print_summary over what s measured, or over the
 * store a replay (replay: its path) read. */
void tune_print_slo_table(muh_session *s, const char *replay, int json);

/* What the compile-first prepare did (jobs: --jobs). */
void tune_print_prepare(muh_session *s, int json, int jobs);

/* The result of a search (decides: a decision stage follows; decision:
 * what one said before, for --json: -1 none, 0 no proven gain, 1 proven). */
void tune_print_result(muh_session *s, const strategy_opts *o, const strategy_result *r, size_t topk, int json, int rc,
		       int decides, int decision);

/* Every stored variant of a run with a measured-metric objective, and the
 * SLO winners (or the --json "winners" event). */
void tune_print_summary(muh_store *st, int64_t run, const muh_objective *objective, int json);

/* The decision stage: its opening line (k finalists, options o), and its
 * table (or the --json "decision" event). */
void tune_print_decide_head(muh_session *s, const decide_opts *o, long k);
void tune_print_decision(muh_session *s, const decide_summary *sm, int json, int interrupted);

#endif
