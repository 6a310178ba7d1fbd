/*
 * tune_text.h — how a tune shows itself to a person (see tune_text.c):
 * its progress and notes, the lines of what was loaded, the result, the
 * SLO table and the decision, or their --json events, all handed to a
 * textout (textout.h). The numbers come from runsum.h, tune_flow.h and
 * decide.h; these only render them. tune_flow_run (tune_flow.h) calls
 * them in order; an engine tuning online may call any of them alone.
 */
#ifndef MUH_TUNE_TEXT_H
#define MUH_TUNE_TEXT_H

#include <signal.h>
#include <stddef.h>

#include "muh/decide.h"
#include "muh/objective.h"
#include "muh/pool.h"
#include "muh/session.h"
#include "muh/store.h"
#include "muh/strategy.h"
#include "muh/textout.h"

#include "muh/api.h"

MUH_BEGIN_DECLS

/* The context of tune_text_on_event / _on_note / _on_decide. */
typedef struct tune_view {
	muh_session *s;
	const muh_space *sp;
	const muh_objective *objective;
	const char *problem;
	const textout *o;
	const char *who; /* what notes start with ("muh tune") */
	int json, bar;   /* --json events; a progress bar on the notes (a terminal) */
	double last_bar;
	char key[4096];
	volatile sig_atomic_t *stop; /* the event callback asks the search to stop */
	size_t unjudged;      /* ok variants whose load was too short to judge its usage blocks
	                       * (eval_usage_checked 0), counted by tune_text_on_event */
	char unjudged1[1024]; /* ... the first one's key (eval_text_usage_note) */
} tune_view;

/* One line of JSON text (malloc'd, freed here) as a result, flushed. */
void tune_text_json_line(const textout *o, char *txt);

/* The session's callbacks (ctx: a tune_view): a search event (returns 1
 * to stop), a note, and one measurement of the decision stage. */
int tune_text_on_event(void *ctx, const strategy_event *ev);
void tune_text_on_note(void *ctx, const session_note *n);
void tune_text_on_decide(void *ctx, const decide_event *e);

/* The lines before the search: spec, profile, problem, space (nth > 0:
 * a blank line first); then, once started, the store (db: its path) and
 * the replay (replay: its path); the noise (a note too when noisy); the
 * strategy and its budget. */
void tune_text_opening(const textout *o, muh_session *s, size_t nth);
void tune_text_loaded(const tune_view *v, const char *db, const char *replay);
void tune_text_noise(const tune_view *v, double noise, int noisy);
void tune_text_strategy(const textout *o, const strategy_opts *so, const muh_space *sp);

/* After a search through a pool: its noise line, and workers restarted. */
void tune_text_pool_done(const tune_view *v, const muh_pool *pool);

/* The SLO table of tune_text_summary over what s measured, or over the
 * store a replay (replay: its path) read. */
void tune_text_slo_table(const tune_view *v, const char *replay);

/* What the compile-first prepare did (jobs: --jobs). */
void tune_text_prepare(const tune_view *v, int jobs);

/* The result of a search (decides: a decision stage follows; decision:
 * what one said before, for --json: -1 none, 0 no proven gain, 1 proven). */
void tune_text_result(const tune_view *v, const strategy_opts *so, const strategy_result *r, size_t topk, int rc,
		      int decides, int decision);

/* Every stored variant of a run with a measured-metric objective, and the
 * SLO winners (or the --json "winners" event). */
void tune_text_summary(const textout *o, muh_store *st, int64_t run, const muh_objective *objective, int json);

/* The decision stage: its opening line (k finalists, options do), and its
 * table (or the --json "decision" event), after what it kept from the
 * store and, on a resumed run, where its finalists stand in the search
 * r (NULL: not said) when they are not its top. */
void tune_text_decide_head(const textout *o, muh_session *s, const decide_opts *d, long k);
void tune_text_decision(const tune_view *v, const strategy_result *r, const decide_summary *sm,
			int interrupted);

MUH_END_DECLS

#endif
