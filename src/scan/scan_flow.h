/*
 * scan_flow.h — where a tuning value goes across calls, for muh scan's
 * verdicts (issue 28 item 1). src/scan/scan_flow.c has the design note.
 * Internal to libmuh; not installed.
 */
#ifndef MUH_SCAN_FLOW_H
#define MUH_SCAN_FLOW_H

#include <stdint.h>

#include "muh/scan.h"
#include "pyfile.h"

/* What became of a value, best (for liveness) last. */
enum scan_flow_fate {
	SCAN_FLOW_NONE = 0,  /* no use found (the caller's rules decide) */
	SCAN_FLOW_DISCARDED, /* every use is overwritten, discarded or unreachable */
	SCAN_FLOW_OPEN,      /* some use the analysis cannot follow (a read) */
	SCAN_FLOW_REACHES    /* some use reaches a kernel launch */
};

#define SCAN_FLOW_MAXSTEPS 14

typedef struct scan_flow_step {
	int file, line;   /* file index of the surface, 1-based line */
	const char *note; /* in the surface's arena */
} scan_flow_step;

typedef struct scan_flow_res {
	int fate; /* enum scan_flow_fate */
	/* REACHES: the hops from the definition to the launch; DISCARDED: the
	 * hops to the first discarding place, that place last */
	scan_flow_step steps[SCAN_FLOW_MAXSTEPS];
	int nsteps;
	int kill_file, kill_line; /* DISCARDED: the overwrite (or discard) */
	int ndiscard;             /* DISCARDED: how many uses were discarded */
} scan_flow_res;

typedef struct scan_flow scan_flow;

/* The per-surface state (an index of calls by callee name, built at the
 * first query), or NULL when memory runs out. Free with scan_flow_free. */
scan_flow *scan_flow_new(muh_surface *s);
void scan_flow_free(scan_flow *f);

/* The fate of the value that variable `name` holds in function scope `sc`
 * of file fi after byte `after` (the end of its store): followed through
 * derived assignments, call arguments (keyword, positional, **kwargs) into
 * the callee's parameter, returns into every caller's result (partials
 * too), to a kernel launch. A parameter its callee binds again on every
 * path before any read, a result a caller overwrites or drops, and uses in
 * dead code discard the value. Never fails: out of memory gives NONE. */
void scan_flow_value(scan_flow *f, int fi, int sc, const char *name, uint32_t after,
                     scan_flow_res *out);

/* The fate of the value that load `ref` (an index into file fi's refs, a
 * plain load inside a function) reads: as scan_flow_value, for that one
 * use (a module constant read in a function). */
void scan_flow_load(scan_flow *f, int fi, int ref, scan_flow_res *out);

/* The fate of a tuned config file's contents for the engine: the f-string
 * naming it sits in function scope `sc` of file fi; the loader is that
 * function when it opens or loads a file (open, json.load, yaml.safe_load
 * ...), else the first caller of it (outside tests and scripts) that does;
 * what the loader returns is followed into every caller's result, the
 * loader's load first among the steps, except that callers in scripts
 * beside the engine (benchmarks/ ...) are not the engine's: a function
 * whose every caller is one discards the value (a benchmark that reads the
 * tuned file does not make the engine read it). NONE when no loader is
 * found. */
void scan_flow_lookup(scan_flow *f, int fi, int sc, scan_flow_res *out);

#endif
