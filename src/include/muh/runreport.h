/*
 * runreport.h — what a store holds, run by run, as `muh report` tells it:
 * every run ranked (best.h), the status totals, the speedup word of a run
 * (the one tie rule), the plots of a run, and the whole as JSON.
 *
 * Reads the store through its API only. Nothing here prints: the table
 * for a person is the caller's; plots are written to the folder asked for.
 */
#ifndef MUH_RUNREPORT_H
#define MUH_RUNREPORT_H

#include <stddef.h>
#include <stdint.h>

#include "muh/best.h"
#include "muh/diag.h"
#include "muh/eval.h"
#include "muh/muh.h"
#include "muh/store.h"
#include "muh/textout.h"

#include "muh/api.h"

MUH_BEGIN_DECLS

/* One run: as stored (its strings owned here), and ranked. */
typedef struct runreport_run {
	store_run r;
	char *spec_name, *spec_path, *problem, *backend, *hw;
	char *spec_text, *spec_abs;
	muh_best b;
} runreport_run;

typedef struct runreport {
	runreport_run *runs;
	size_t n, cap;
	size_t total[EVAL_NSTATUS]; /* measurements per status, over every run */
} runreport;

/* Reads every run of the store at path, each ranked, into *rp
 * (runreport_free, also after an error). */
int runreport_read(const char *path, runreport *rp, muh_diag *d);
void runreport_free(runreport *rp);

/* The best's key (NULL: none ranked), and the search's own best within
 * the SLOs (before a decision put its winner, or what stays, first): what
 * the best ignoring the SLOs is compared with. */
const char *runreport_best_key(const runreport_run *rs);
const char *runreport_search_best(const runreport_run *rs);

/* 1 when the best ignoring the SLOs is another variant than the search's
 * best within them (worth a line of its own). */
int runreport_any_differs(const runreport_run *rs);

/* A run's speedup for a table cell: "1.23x", "tie" inside the noise,
 * "unproven" (the decision stage proved no gain), or "-". */
void runreport_speedup_text(char *buf, size_t n, const runreport_run *rs);

/* Writes dir/run<ID>-best-so-far.svg (the best against the evaluations,
 * the defaults' value as a line, the best marked where it was found, and
 * the decision's best where it names another) and dir/run<ID>-times.svg
 * (the histogram of the ok variants' values); dir is made when missing.
 * MUH_EENV with d naming the file that could not be written. */
int runreport_write_svgs(const char *dir, const runreport_run *rs, muh_diag *d);

/* The report as JSON ({runs: [...], status: {...}}, formatted), malloc'd;
 * NULL when out of memory. */
char *runreport_json(const runreport *rp);

/* The same for a person, on o's result stream: the run table, under it
 * each run's objective and decision table, the runs re-timed at sustained
 * clocks, identical code timed apart (twins), and the status counts. */
void runreport_text(const textout *o, const runreport *rp);

MUH_END_DECLS

#endif
