/*
 * tune_run.h — one tune of one problem instance, driven start to end (see
 * tune_run.c): open the session, read the budget, open a pool, time the
 * noise, search, compile-first's summary, the decision stage, the result,
 * the SLO table; every line of it rendered (tune_text.h) to a textout.
 *
 * `muh tune` parses its options and calls tune_run once per instance; an
 * engine that wants the same run with the same words calls it too. Nothing
 * here prints or exits: text goes to the textout, errors come back as a
 * status with the words in a muh_diag (or already written as notes).
 */
#ifndef MUH_TUNE_RUN_H
#define MUH_TUNE_RUN_H

#include <signal.h>
#include <stddef.h>

#include "muh/diag.h"
#include "muh/session.h"
#include "muh/textout.h"

#include "muh/api.h"

MUH_BEGIN_DECLS

/* What a tune takes beyond its session options. */
typedef struct tune_run_args {
	const char *budget;   /* "N" or "N%" (tune_flow_budget); NULL: the whole space */
	size_t topk;          /* rows of the top table */
	long finalists;       /* the decision stage's finalists; -1: tune_flow_finalists' default */
	int rounds;           /* its most rounds; 0: the default */
	const char *devices;  /* a pool of one worker per device ("0,1" or "all"); NULL: none */
	int mpi;              /* a pool whose workers are the other MPI ranks */
	size_t nth;           /* the instance's place in this call: 0 the first (no blank line before) */
	int json, bar;        /* --json events; a progress bar on the notes (they go to a terminal) */
	const char *who;      /* what notes start with ("muh tune") */
	textout out;          /* where every line goes */
	volatile sig_atomic_t *stop; /* set (by a SIGINT handler): stop after the variant in flight */
	/* once the session is open, its backend ("engine", "cpu", ...): what a
	 * Ctrl-C would stop; may be NULL */
	void (*on_backend)(void *ctx, const char *backend);
	void *ctx;
} tune_run_args;

/* How tune_run's failure is to be said by the caller. */
enum tune_run_say {
	TUNE_RUN_SAID = 0,     /* nothing failed, or the notes said it already */
	TUNE_RUN_SAY_USAGE,    /* a usage error (--budget, --devices): d says what */
	TUNE_RUN_SAY_SESSION,  /* the session did not open, start or time its noise: d says why */
};

/* Tunes problem instance so->instance of the spec at path (so: the
 * session's options; so->stop is the same flag as a->stop). Returns
 * MUH_OK with a best within the SLOs (and a proven winner or none, as the
 * decision stage said), MUH_EFINDING when the search found none, or the
 * first error (the search's, the pool's, the decision stage's), *say
 * telling whether it was said. */
int tune_run(const char *path, const muh_session_opts *so, const tune_run_args *a, enum tune_run_say *say,
	     muh_diag *d);

MUH_END_DECLS

#endif
