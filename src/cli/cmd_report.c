/*
 * cmd_report.c — `muh report DB`: what a store holds, as tables and plots.
 *
 * Parse and print over runreport.h, which reads the store (its API only),
 * ranks every run, and writes the plots and the JSON.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "evalcli.h"
#include "muh/best.h"
#include "muh/decide_text.h"
#include "muh/eval.h"
#include "muh/objective.h"
#include "muh/store.h"
#include "muh/runreport.h"

static const char help[] =
	"usage: muh report DB [--svg DIR] [--json]\n"
	"\n"
	"Prints what a store holds: one row per run (spec, problem instance, backend,\n"
	"profile) with the number of variants measured, how many were ok and how many\n"
	"failed, the best time and its variant, the defaults' time and the speedup,\n"
	"and the machine noise the run measured (a speedup inside the noise is a tie);\n"
	"then the status counts. Each column is as wide as its widest value, two spaces\n"
	"apart, numbers aligned on the right (engine runs' tok/s too).\n"
	"\n"
	"A run whose spec has an objective other than time (objective: {maximize:\n"
	"output_tokens_per_s, subject_to: [...]}, engine specs) is ranked by it: best\n"
	"and default show that metric, the best meets the SLOs, and a line under the\n"
	"table names the objective and the best that ignores the SLOs when it differs.\n"
	"\n"
	"A run that muh tune re-timed at sustained clocks (measure.retime_top) gets a\n"
	"table of both regimes: each re-timed variant's burst and sustained time and\n"
	"the SM clock of each. The best is the fastest re-timed variant, timed\n"
	"interleaved, whether the clock fell or held (marked '*' in the table; its\n"
	"best and default columns stay the search's times, so that the speedup\n"
	"compares like with like). muh patch\n"
	"--from and --emit write the same best (src/session/best.c ranks for both).\n"
	"\n"
	"A run with a decision stage (muh tune re-measured the baseline, what ships\n"
	"or the defaults, and the top finalists afresh in paired, alternating rounds)\n"
	"gets its table under the row: each finalist's repeats, how many were ok and\n"
	"met every SLO (SLOs 3/4), the median of its metric over its own repeats, and\n"
	"its paired gain: the geometric mean of its per-round ratios to the baseline,\n"
	"with the interval at the stage's level. A finalist whose verdict is final\n"
	"(a repeat failed or missed an SLO) is not measured again, so its median may\n"
	"rest on fewer repeats than the baseline's. The run's best is then the\n"
	"stage's proven winner, or, with no proven gain, what stays (what ships, or\n"
	"the defaults), and its speedup column says 'unproven'.\n"
	"\n"
	"options:\n"
	"  --svg DIR   also write, per run, DIR/run<ID>-best-so-far.svg (best time\n"
	"              against the number of evaluations, in measurement order) and\n"
	"              DIR/run<ID>-times.svg (the distribution of ok times)\n"
	"  --json      print the same as JSON: {runs: [...], status: {...}}\n"
	"\n"
	"examples:\n"
	"  muh report muh.db\n"
	"  muh report muh.db --svg plots/\n";

#define NSTATUS EVAL_NSTATUS

/* Under the table: a run re-timed at sustained clocks, both regimes. */
static void print_retimes(const runreport_run *rs)
{
	const muh_best *b = &rs->b;
	if (!b->nretimes)
		return;
	const store_retime *r0 = &b->retimes[0];
	const char *clock = best_clock_name(best_retime_clock(b->retimes, b->nretimes));
	if (b->regime != BEST_SUSTAINED)
		printf("\nrun %lld at sustained clocks (after %.3g s of load each): none passed; the burst ranking "
		       "stands\n",
		       (long long)rs->r.id, r0->warm_s);
	else
		printf("\nrun %lld at sustained clocks (after %.3g s of load each): the SM clock %s; the fastest "
		       "re-timed is the best\n",
		       (long long)rs->r.id, r0->warm_s, clock);
	printf("  %4s  %12s  %9s  %12s  %9s  %s\n", "rank", "burst", "SM MHz", "sustained", "SM MHz", "configuration");
	for (size_t i = 0; i < b->nretimes; i++) {
		const store_retime *r = &b->retimes[i];
		char x[32], y[32], xm[32], ym[32];
		text_time(x, sizeof(x), r->burst_s);
		text_time(y, sizeof(y), r->sustained_s);
		snprintf(xm, sizeof(xm), isfinite(r->burst_mhz) ? "%.0f" : "-", r->burst_mhz);
		snprintf(ym, sizeof(ym), isfinite(r->sustained_mhz) ? "%.0f" : "-", r->sustained_mhz);
		printf("  %4d  %12s  %9s  %12s  %9s  %s%s\n", r->burst_rank, x, xm, y, ym, r->key,
		       b->regime == BEST_SUSTAINED && i == b->retime_winner ? "  <- best" : "");
	}
}

/* The run table's columns: header, alignment (1: right, for numbers). */
enum { RC_RUN, RC_SPEC, RC_PROBLEM, RC_BACKEND, RC_VARIANTS, RC_OK, RC_FAILED, RC_BEST, RC_DEFAULT, RC_SPEEDUP,
       RC_NOISE, RC_KEY, RC_N };
static const char *const rc_head[RC_N] = {"run",    "spec", "problem", "backend", "variants", "ok",
					  "failed", "best", "default", "speedup", "noise",    "best variant"};
static const int rc_right[RC_N] = {0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 0};

/* Run rs's cells of the table, each at most 4095 bytes. */
static void table_cells(const runreport_run *rs, char cell[RC_N][4096])
{
	const muh_best *b = &rs->b;
	/* best and default as the search timed them, so that the speedup
	 * compares like with like; a sustained-clock best is marked '*' */
	double bs = b->nranked ? b->ranked[0].burst_score : NAN;
	snprintf(cell[RC_RUN], 4096, "%lld", (long long)rs->r.id);
	snprintf(cell[RC_SPEC], 4096, "%s", rs->spec_name);
	snprintf(cell[RC_PROBLEM], 4096, "%s", rs->problem[0] ? rs->problem : "-");
	snprintf(cell[RC_BACKEND], 4096, "%s", rs->backend);
	snprintf(cell[RC_VARIANTS], 4096, "%zu", b->nmeasured);
	snprintf(cell[RC_OK], 4096, "%zu", b->nok);
	snprintf(cell[RC_FAILED], 4096, "%zu", b->nmeasured - b->nok);
	if (objective_is_time(&b->objective)) {
		text_time(cell[RC_BEST], 4096, bs);
		text_time(cell[RC_DEFAULT], 4096, b->default_score);
	} else {
		objective_format(b->objective.metric, objective_value(&b->objective, bs), cell[RC_BEST], 4096);
		objective_format(b->objective.metric, objective_value(&b->objective, b->default_score),
				 cell[RC_DEFAULT], 4096);
	}
	runreport_speedup_text(cell[RC_SPEEDUP], 4096, rs);
	if (isfinite(rs->r.noise))
		snprintf(cell[RC_NOISE], 4096, "%.2f%%", rs->r.noise * 100);
	else
		snprintf(cell[RC_NOISE], 4096, "-");
	snprintf(cell[RC_KEY], 4096, "%.4000s%s", runreport_best_key(rs) ? runreport_best_key(rs) : "-",
		 b->regime == BEST_SUSTAINED ? " *" : "");
}

static void print_table(const runreport *cx)
{
	/* every column as wide as its widest cell, two spaces between: a value
	 * never runs into the next one (engine runs' "4611.8 tok/s", long spec
	 * names), and numbers line up on the right, text on the left */
	int w[RC_N];
	for (int c = 0; c < RC_N; c++)
		w[c] = (int)strlen(rc_head[c]);
	static char cell[RC_N][4096];
	for (size_t i = 0; i < cx->n; i++) {
		table_cells(&cx->runs[i], cell);
		for (int c = 0; c < RC_N; c++)
			w[c] = (int)strlen(cell[c]) > w[c] ? (int)strlen(cell[c]) : w[c];
	}
	for (int c = 0; c < RC_N - 1; c++)
		printf(rc_right[c] ? "%*s  " : "%-*s  ", w[c], rc_head[c]);
	printf("%s\n", rc_head[RC_N - 1]);
	for (size_t i = 0; i < cx->n; i++) {
		table_cells(&cx->runs[i], cell);
		for (int c = 0; c < RC_N - 1; c++)
			printf(rc_right[c] ? "%*s  " : "%-*s  ", w[c], cell[c]);
		printf("%s\n", cell[RC_N - 1]);
	}
	for (size_t i = 0; i < cx->n; i++) {
		const runreport_run *rs = &cx->runs[i];
		const muh_best *b = &rs->b;
		if (objective_is_time(&b->objective)) {
			if (b->decision) { /* a kernel's decision: against what ships, or the defaults */
				printf("\nrun %lld:\n", (long long)rs->r.id);
				decide_text_table(&cli_out, b->decision, &b->objective, b->default_key, "  ");
			}
			continue;
		}
		char desc[1024], t[32];
		objective_describe(&b->objective, desc, sizeof(desc));
		printf("\nrun %lld: %s", (long long)rs->r.id, desc);
		if (runreport_any_differs(rs)) {
			objective_format(b->objective.metric, objective_value(&b->objective, b->any_score), t, sizeof(t));
			printf("; ignoring the SLOs the best is %s  %s", t, b->any_key);
		}
		printf("\n");
		if (b->decision)
			decide_text_table(&cli_out, b->decision, &b->objective, b->default_key, "  ");
	}
	for (size_t i = 0; i < cx->n; i++)
		print_retimes(&cx->runs[i]);
	for (size_t i = 0; i < cx->n; i++) { /* identical code timed apart: the noise beside the speedups */
		size_t twins;
		const char *slow, *fast;
		double r = best_twins(&cx->runs[i].b, &twins, &slow, &fast);
		if (isfinite(r) && objective_is_time(&cx->runs[i].b.objective))
			printf("\nrun %lld: twins: %zu variants built the same artifact as another; the same code timed "
			       "up to %.3fx apart (%s against %s): a speedup under that is this machine's noise\n",
			       (long long)cx->runs[i].r.id, twins, r, slow, fast);
	}
	printf("\nstatus:");
	for (int k = 0; k < NSTATUS; k++)
		if (cx->total[k])
			printf("  %s %zu", eval_status_name((enum eval_status)k), cx->total[k]);
	printf("\n");
}

static int run(int argc, char **argv)
{
	int json = 0, first;
	const char *svgdir = NULL;
	const struct cli_opt opts[] = {
		CLI_OPT("svg", CLI_STR, &svgdir, .expected = "a directory"),
		CLI_OPT("json", CLI_FLAG, &json),
		CLI_END,
	};
	int ex = cli_parse_opts("report", argc, argv, opts, NULL, NULL, &first);
	if (ex)
		return ex;
	if (first != argc - 1)
		return cli_usage_error("report", "expected one store (DB)");
	const char *path = argv[first];
	struct stat st;
	if (stat(path, &st)) {
		fprintf(stderr, "%s: error: no such store\n", path);
		return EXIT_USAGE;
	}
	muh_diag d;
	diag_clear(&d);
	runreport cx;
	int rc = runreport_read(path, &cx, &d);
	if (!rc && json) {
		char *t = runreport_json(&cx);
		if (t)
			puts(t);
		free(t);
	} else if (!rc) {
		print_table(&cx);
	}
	for (size_t i = 0; i < cx.n && !rc && svgdir; i++) {
		rc = runreport_write_svgs(svgdir, &cx.runs[i], &d);
		size_t dl = strlen(svgdir);
		const char *sep = dl && svgdir[dl - 1] == '/' ? "" : "/"; /* plots/ as given: no plots//run1 */
		if (!rc)
			fprintf(json ? stderr : stdout, "wrote %s%srun%lld-best-so-far.svg and %s%srun%lld-times.svg\n",
				svgdir, sep, (long long)cx.runs[i].r.id, svgdir, sep, (long long)cx.runs[i].r.id);
	}
	runreport_free(&cx);
	if (rc)
		return cli_fail(rc, &d);
	return EXIT_OK;
}

MUH_COMMAND(report, 50, "tables and plots of what a store holds: best per run, status counts, noise");
