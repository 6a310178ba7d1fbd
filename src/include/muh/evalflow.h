/*
 * evalflow.h — one `muh eval` of one problem instance, driven start to end
 * (see evalflow.c): open the session, check the --config keys, start it,
 * time the noise, measure the chosen variants (in order, or interleaved),
 * and the closing lines; every line of it rendered to a textout.
 *
 * `muh eval` parses its options and calls evalflow_run once per instance;
 * an engine that wants the same measurements with the same words calls it
 * too. Nothing here prints, exits or handles a signal: text goes
 * to the textout, errors come back as a status with the words in a
 * muh_diag (or already written as notes), and a stop is the caller's flag
 * (opts.stop, set by its SIGINT handler).
 */
#ifndef MUH_EVALFLOW_H
#define MUH_EVALFLOW_H

#include <stddef.h>

#include "muh/diag.h"
#include "muh/eval.h"
#include "muh/session.h"
#include "muh/textout.h"

#include "muh/api.h"

MUH_BEGIN_DECLS

/* What an eval measures and how it shows, beyond its session options. */
typedef struct evalflow_args {
	const char *const *keys; /* --config: nkeys keys NAME=V,... (partial: the rest default) */
	size_t nkeys;            /* 0 with all 0: the defaults alone */
	int all;                 /* every valid configuration, in index order */
	long long limit;         /* at most this many new measurements; < 0: no limit */
	int noise;               /* time the defaults twice first: 1, 0, or -1 (more than one
	                          * variant and the run not resumed) */
	int interleave;  /* the keys (2 to EVAL_INTERLEAVE_MAX) timed in alternating rounds */
	int rounds;      /* --interleave's rounds; 0: until the CIs are tight */
	int json;        /* one JSON line per row on the result stream; the rest notes */
	const char *who; /* what notes start with ("muh eval") */
	textout out;     /* where every line goes */
	/* Called with begin 1 once the session has started (backend: the
	 * target's, "engine", "cpu", ..., or NULL), before anything is timed:
	 * from here a stop lets the variant in flight finish and keeps what was
	 * measured (the CLI installs its SIGINT handler); then with begin 0
	 * once the measuring is over, before the closing lines. Never the one
	 * without the other. May be NULL. */
	void (*on_measuring)(void *ctx, const char *backend, int begin);
	/* Each measured row, after it was written; nonzero stops after it
	 * (session_eval's on_row). May be NULL. */
	int (*on_row)(void *ctx, const session_result *r);
	void *ctx;
} evalflow_args;

/* What an eval came to (filled as far as it got, also on an error). */
typedef struct evalflow_result {
	long long measured; /* rows measured by this call (the store's answers not counted) */
	long long counts[EVAL_NSTATUS]; /* of them, per status */
	char best_key[1024];            /* the fastest ok row's key; "" none */
	double best_median;             /* its median; NAN none */
	double noise;                   /* the noise timed first; NAN when it was not */
	int resumed;     /* the store's run existed: its rows were not measured again */
	int interrupted; /* the stop flag was set */
} evalflow_result;

/* How evalflow_run's failure is to be said by the caller. */
enum evalflow_say {
	EVALFLOW_SAID = 0,    /* nothing failed, or the notes said it already */
	EVALFLOW_SAY_USAGE,   /* a usage error (evalflow_check, --interleave on an engine):
	                       * d->msg says what */
	EVALFLOW_SAY_SESSION, /* the session did not open or start, a --config key is wrong or
	                       * twice, the noise found no environment: d says why, at
	                       * file:line:col (--config:1:COL for a key) when d->file is set */
};

/* Checks that a's choice of variants holds together, before any spec is
 * read: --all and keys exclude each other, --interleave takes 2 to
 * EVAL_INTERLEAVE_MAX keys and neither --all nor a limit. MUH_OK, or
 * MUH_EINPUT with d->msg in the words of the options. */
int evalflow_check(const evalflow_args *a, muh_diag *d);

/* Measures what a names for problem instance so->instance of the spec at
 * path (so: the session's options, so->measure set; so->stop, when not
 * NULL, is the stop flag: a prepare in flight is cut short, the variant in
 * flight finishes, the store keeps all). r (may be NULL) gets what it came
 * to. Returns MUH_OK, also when stopped (r->interrupted); MUH_EINPUT for
 * wrong arguments or keys (*say SAY_USAGE or SAY_SESSION); the session's
 * error opening or starting (SAY_SESSION); MUH_EENV or MUH_ENOMEM when the
 * noise cannot be timed for want of an environment (SAY_SESSION); or the
 * measuring's error, already written as a note after the rows that were
 * measured and before the closing lines (EVALFLOW_SAID). */
int evalflow_run(const char *path, const muh_session_opts *so, const evalflow_args *a,
                 evalflow_result *r, enum evalflow_say *say, muh_diag *d);

MUH_END_DECLS

#endif
