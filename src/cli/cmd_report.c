/*
 * cmd_report.c — `muh report DB`: what a store holds, as tables and plots.
 *
 * Reads runs and measurements through the store API only (never SQL of its
 * own), so the tables are the store's numbers.
 */
#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "evalcli.h"
#include "muh/best.h"
#include "muh/eval.h"
#include "muh/objective.h"
#include "muh/store.h"
#include "muh/svg.h"

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
	"--from and --emit write the same best (src/best.c ranks for both).\n"
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

/* One run: as stored, and ranked by the library (best.h). */
struct runstat {
	store_run r;
	char *spec_name, *spec_path, *problem, *backend, *hw;
	char *spec_text, *spec_abs;
	muh_best b;
};

struct ctx {
	struct runstat *runs;
	size_t n, cap;
};

static char *dup_or_null(const char *s)
{
	return s ? strdup(s) : NULL;
}

static char *dup_or_empty(const char *s)
{
	return strdup(s ? s : "");
}

static int on_run(void *ud, const store_run *r)
{
	struct ctx *c = ud;
	if (cli_grow(&c->runs, &c->cap, c->n, sizeof(*c->runs), 8))
		return MUH_ENOMEM;
	struct runstat *rs = &c->runs[c->n++];
	memset(rs, 0, sizeof(*rs));
	rs->r = *r;
	rs->spec_name = dup_or_empty(r->spec_name);
	rs->spec_path = dup_or_empty(r->spec_path);
	rs->problem = dup_or_empty(r->problem);
	rs->backend = dup_or_empty(r->backend);
	rs->hw = dup_or_empty(r->hw_profile);
	rs->spec_text = dup_or_null(r->spec_text);
	rs->spec_abs = dup_or_null(r->spec_abs);
	rs->r.spec_name = rs->spec_name;
	rs->r.spec_path = rs->spec_path;
	rs->r.problem = rs->problem;
	rs->r.backend = rs->backend;
	rs->r.hw_profile = rs->hw;
	rs->r.spec_text = rs->spec_text;
	rs->r.spec_abs = rs->spec_abs;
	rs->r.spec_hash = NULL;
	return 0;
}

/* The best's score: at the clocks that ranked it. */
static double best_score(const struct runstat *rs)
{
	return rs->b.nranked ? rs->b.ranked[0].score : NAN;
}

static const char *best_key(const struct runstat *rs)
{
	return rs->b.nranked ? rs->b.ranked[0].key : NULL;
}

/* The search's own best within the SLOs (before a decision put its winner,
 * or what stays, first): what the best ignoring the SLOs is compared with. */
static const char *search_best(const struct runstat *rs)
{
	return rs->b.search_key ? rs->b.search_key : best_key(rs);
}

/* "1.23x", "tie" inside the noise, "unproven" (the decision stage proved
 * no gain), or "-" */
static void fmt_speedup(char *buf, size_t n, const struct runstat *rs)
{
	/* the defaults were timed as the search timed: compare at those clocks */
	double sp = best_speedup(&rs->b);
	int decided = best_decided(&rs->b);
	if (decided == 0) /* the decision stage proved no gain: the defaults stay */
		snprintf(buf, n, "unproven");
	else if (!isfinite(sp))
		snprintf(buf, n, "-");
	else if (decided == 1) /* the paired rounds' ratio */
		snprintf(buf, n, "%.3fx", sp);
	else if (best_is_tie(sp, rs->r.noise))
		snprintf(buf, n, "tie");
	else
		snprintf(buf, n, "%.3fx", sp);
}

/* "WHAT 12.3 UNIT": a mark's label. */
static void fmt_value(char *buf, size_t n, const char *what, double v, const char *unit)
{
	snprintf(buf, n, "%s %.4g %s", what, v, unit);
}

/* Writes DIR/run<ID>-best-so-far.svg (the best against the evaluations, the
 * defaults' value as a line, the best marked where it was found) and
 * DIR/run<ID>-times.svg (the histogram of the ok variants' values); value
 * axes are log when the values span more than 10x. */
static int write_svgs(const char *dir, const struct runstat *rs, muh_diag *d)
{
	if (mkdir(dir, 0777) && errno != EEXIST) {
		diag_at(d, dir, 0, 0, NULL);
		return diag_errorf(d, "cannot create the plot directory: %s", strerror(errno));
	}
	char path[4096], title[512];
	snprintf(path, sizeof(path), "%s/run%lld-best-so-far.svg", dir, (long long)rs->r.id);
	FILE *f = fopen(path, "w");
	if (!f)
		goto fail;
	double *x = malloc((rs->b.nmeasured ? rs->b.nmeasured : 1) * sizeof(double));
	double *y = malloc((rs->b.nmeasured ? rs->b.nmeasured : 1) * sizeof(double));
	int is_time = !strcmp(rs->b.objective.metric, "time");
	const char *unit = is_time ? "us" : objective_metric_unit(rs->b.objective.metric);
	char ylabel[160];
	if (is_time)
		snprintf(ylabel, sizeof(ylabel), "best time (us)");
	else
		snprintf(ylabel, sizeof(ylabel), "best %s (%s)", rs->b.objective.metric, unit);
	/* as the search measured: the best so far at the clocks it ran at */
	size_t n = rs->b.nmeasured;
	double best = n ? rs->b.so_far[n - 1] : NAN;
	size_t at_best = 0; /* the evaluation (1-based) that found the best; 0: none */
	for (size_t i = 0; x && y && i < n; i++) {
		x[i] = (double)(i + 1);
		y[i] = is_time ? rs->b.so_far[i] * 1e6 : objective_value(&rs->b.objective, rs->b.so_far[i]);
		if (!at_best && isfinite(best) && rs->b.so_far[i] == best)
			at_best = i + 1;
	}
	svg_mark marks[3];
	char dlabel[128], blabel[128], wlabel[160];
	size_t nm = 0;
	if (isfinite(rs->b.default_score)) {
		double v = is_time ? rs->b.default_score * 1e6 : objective_value(&rs->b.objective, rs->b.default_score);
		fmt_value(dlabel, sizeof(dlabel), "default", v, unit);
		marks[nm++] = (svg_mark){"default", dlabel, NAN, v};
	}
	if (at_best) {
		double v = is_time ? best * 1e6 : objective_value(&rs->b.objective, best);
		fmt_value(blabel, sizeof(blabel), "best", v, unit);
		snprintf(blabel + strlen(blabel), sizeof(blabel) - strlen(blabel), " (evaluation %zu)",
			 at_best);
		marks[nm++] = (svg_mark){"best", blabel, (double)at_best, v};
	}
	/* the one best (best.h): where the decision named another than the
	 * curve's (what ships, kept; or a finalist proven on re-measurement),
	 * the plot says so, at the value its search measurement (or, measured in
	 * the rounds only, their median) gave it */
	if (rs->b.decision && rs->b.nranked && (best_decided(&rs->b) == 1 || rs->b.keeps_baseline)) {
		double sc = rs->b.ranked[0].score;
		double v = is_time ? sc * 1e6 : objective_value(&rs->b.objective, sc);
		int ships = decide_baseline_ships(rs->b.decision, rs->b.default_key);
		fmt_value(wlabel, sizeof(wlabel),
			  !rs->b.keeps_baseline ? "decided" : ships ? "what ships, kept" : "the defaults, kept", v, unit);
		if (isfinite(v))
			marks[nm++] = (svg_mark){"decided", wlabel, NAN, v};
	}
	snprintf(title, sizeof(title), "%s %s: best so far", rs->spec_name, rs->problem);
	svg_series s = {"best so far", x, y, x && y ? n : 0};
	svg_axes ax = {title, "evaluations", ylabel, 1, SVG_LOG_AUTO};
	svg_lines(f, &ax, &s, 1, marks, nm);
	free(x);
	free(y);
	if (fclose(f))
		goto fail;
	snprintf(path, sizeof(path), "%s/run%lld-times.svg", dir, (long long)rs->r.id);
	f = fopen(path, "w");
	if (!f)
		goto fail;
	double *us = malloc((rs->b.nok ? rs->b.nok : 1) * sizeof(double));
	for (size_t i = 0; us && i < rs->b.nok; i++)
		us[i] = is_time ? rs->b.ok_scores[i] * 1e6 : objective_value(&rs->b.objective, rs->b.ok_scores[i]);
	snprintf(title, sizeof(title), "%s %s: %s of every ok variant", rs->spec_name, rs->problem,
		 is_time ? "time" : rs->b.objective.metric);
	if (!is_time)
		snprintf(ylabel, sizeof(ylabel), "%s (%s)", rs->b.objective.metric, unit);
	svg_axes hx = {title, is_time ? "time (us)" : ylabel, "configurations", 0, SVG_LOG_AUTO};
	svg_histogram(f, &hx, us, us ? rs->b.nok : 0, 30);
	free(us);
	if (fclose(f))
		goto fail;
	return MUH_OK;
fail:
	diag_at(d, path, 0, 0, NULL);
	diag_errorf(d, "cannot write: %s", strerror(errno));
	return MUH_EENV;
}

/* The re-timing of a run at sustained clocks, as JSON: every row with both
 * regimes' times and SM clocks, and which regime named the best. */
static void json_retimes(cJSON *e, const muh_best *b)
{
	if (!b->nretimes)
		return;
	cJSON *u = cJSON_AddObjectToObject(e, "sustained");
	cJSON_AddStringToObject(u, "ranked_by", b->regime == BEST_SUSTAINED ? "sustained" : "burst");
	cJSON_AddNumberToObject(u, "warm_s", b->retimes[0].warm_s);
	cJSON *rows = cJSON_AddArrayToObject(u, "rows");
	for (size_t i = 0; i < b->nretimes; i++) {
		const store_retime *r = &b->retimes[i];
		cJSON *o = cJSON_CreateObject();
		cJSON_AddNumberToObject(o, "burst_rank", r->burst_rank);
		cJSON_AddStringToObject(o, "config", r->key);
		if (isfinite(r->burst_s))
			cJSON_AddNumberToObject(o, "burst_s", r->burst_s);
		if (isfinite(r->burst_mhz))
			cJSON_AddNumberToObject(o, "burst_sm_mhz", r->burst_mhz);
		if (isfinite(r->sustained_s))
			cJSON_AddNumberToObject(o, "sustained_s", r->sustained_s);
		if (isfinite(r->sustained_mhz))
			cJSON_AddNumberToObject(o, "sustained_sm_mhz", r->sustained_mhz);
		cJSON_AddItemToArray(rows, o);
	}
}

static void print_json(const struct ctx *cx, const size_t *total)
{
	cJSON *o = cJSON_CreateObject();
	cJSON *arr = cJSON_AddArrayToObject(o, "runs");
	for (size_t i = 0; i < cx->n; i++) {
		const struct runstat *rs = &cx->runs[i];
		const muh_best *b = &rs->b;
		cJSON *e = cJSON_CreateObject();
		cJSON_AddNumberToObject(e, "run", (double)rs->r.id);
		cJSON_AddStringToObject(e, "spec", rs->spec_name);
		cJSON_AddNumberToObject(e, "instance", (double)rs->r.instance);
		cJSON_AddStringToObject(e, "problem", rs->problem);
		cJSON_AddStringToObject(e, "backend", rs->backend);
		cJSON_AddStringToObject(e, "profile", rs->hw);
		cJSON_AddNumberToObject(e, "variants", (double)b->nmeasured);
		cJSON_AddNumberToObject(e, "ok", (double)b->nok);
		int is_time = objective_is_time(&b->objective);
		char desc[1024];
		objective_describe(&b->objective, desc, sizeof(desc));
		cJSON_AddStringToObject(e, "objective", desc);
		if (b->nranked) {
			/* the best's value where it was ranked; best_burst_s as the search timed it */
			cJSON_AddNumberToObject(e, is_time ? "best_s" : "best_value",
						objective_value(&b->objective, best_score(rs)));
			cJSON_AddStringToObject(e, "best", best_key(rs));
			cJSON_AddStringToObject(e, "best_regime", b->regime == BEST_SUSTAINED ? "sustained" : "burst");
			if (is_time)
				cJSON_AddNumberToObject(e, "best_burst_s", b->ranked[0].burst_score);
			if (isfinite(b->ranked[0].sm_clock_mhz))
				cJSON_AddNumberToObject(e, "best_sm_mhz", b->ranked[0].sm_clock_mhz);
		}
		if (b->any_key && (!search_best(rs) || strcmp(b->any_key, search_best(rs)))) {
			cJSON_AddNumberToObject(e, "unconstrained_best_value", objective_value(&b->objective, b->any_score));
			cJSON_AddStringToObject(e, "unconstrained_best", b->any_key);
		}
		if (b->default_key)
			cJSON_AddStringToObject(e, "default_key", b->default_key);
		if (isfinite(b->default_score))
			cJSON_AddNumberToObject(e, is_time ? "default_s" : "default_value",
						objective_value(&b->objective, b->default_score));
		if (isfinite(rs->r.noise))
			cJSON_AddNumberToObject(e, "noise", rs->r.noise);
		json_retimes(e, b);
		if (b->decision) {
			char *dj = decide_summary_json(b->decision, &b->objective);
			cJSON *dd = dj ? cJSON_Parse(dj) : NULL;
			free(dj);
			if (dd)
				cJSON_AddItemToObject(e, "decision", dd);
		}
		cJSON *stc = cJSON_AddObjectToObject(e, "status");
		for (int k = 0; k < NSTATUS; k++)
			if (b->status[k])
				cJSON_AddNumberToObject(stc, eval_status_name((enum eval_status)k), (double)b->status[k]);
		cJSON_AddItemToArray(arr, e);
	}
	cJSON *stc = cJSON_AddObjectToObject(o, "status");
	for (int k = 0; k < NSTATUS; k++)
		if (total[k])
			cJSON_AddNumberToObject(stc, eval_status_name((enum eval_status)k), (double)total[k]);
	char *t = cJSON_Print(o);
	if (t)
		puts(t);
	free(t);
	cJSON_Delete(o);
}

/* Under the table: a run re-timed at sustained clocks, both regimes. */
static void print_retimes(const struct runstat *rs)
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
		cli_fmt_time(x, sizeof(x), r->burst_s);
		cli_fmt_time(y, sizeof(y), r->sustained_s);
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
static void table_cells(const struct runstat *rs, char cell[RC_N][4096])
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
		cli_fmt_time(cell[RC_BEST], 4096, bs);
		cli_fmt_time(cell[RC_DEFAULT], 4096, b->default_score);
	} else {
		objective_format(b->objective.metric, objective_value(&b->objective, bs), cell[RC_BEST], 4096);
		objective_format(b->objective.metric, objective_value(&b->objective, b->default_score),
				 cell[RC_DEFAULT], 4096);
	}
	fmt_speedup(cell[RC_SPEEDUP], 4096, rs);
	if (isfinite(rs->r.noise))
		snprintf(cell[RC_NOISE], 4096, "%.2f%%", rs->r.noise * 100);
	else
		snprintf(cell[RC_NOISE], 4096, "-");
	snprintf(cell[RC_KEY], 4096, "%.4000s%s", best_key(rs) ? best_key(rs) : "-",
		 b->regime == BEST_SUSTAINED ? " *" : "");
}

static void print_table(const struct ctx *cx, const size_t *total)
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
		const struct runstat *rs = &cx->runs[i];
		const muh_best *b = &rs->b;
		if (objective_is_time(&b->objective)) {
			if (b->decision) { /* a kernel's decision: against what ships, or the defaults */
				printf("\nrun %lld:\n", (long long)rs->r.id);
				evalcli_print_decision(stdout, b->decision, &b->objective, b->default_key, "  ");
			}
			continue;
		}
		char desc[1024], t[32];
		objective_describe(&b->objective, desc, sizeof(desc));
		printf("\nrun %lld: %s", (long long)rs->r.id, desc);
		if (b->any_key && (!search_best(rs) || strcmp(b->any_key, search_best(rs)))) {
			objective_format(b->objective.metric, objective_value(&b->objective, b->any_score), t, sizeof(t));
			printf("; ignoring the SLOs the best is %s  %s", t, b->any_key);
		}
		printf("\n");
		if (b->decision)
			evalcli_print_decision(stdout, b->decision, &b->objective, b->default_key, "  ");
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
		if (total[k])
			printf("  %s %zu", eval_status_name((enum eval_status)k), total[k]);
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
	muh_store *db;
	int rc = store_open_ro(path, &db, &d);
	if (rc)
		return cli_fail(rc, &d);
	struct ctx cx = {0};
	rc = store_foreach_run(db, on_run, &cx);
	for (size_t i = 0; i < cx.n && !rc; i++)
		rc = best_of_run(db, &cx.runs[i].r, &cx.runs[i].b, &d);
	store_close(db);
	size_t total[NSTATUS] = {0};
	for (size_t i = 0; i < cx.n; i++)
		for (int k = 0; k < NSTATUS; k++)
			total[k] += cx.runs[i].b.status[k];
	if (!rc && json)
		print_json(&cx, total);
	else if (!rc)
		print_table(&cx, total);
	for (size_t i = 0; i < cx.n && !rc && svgdir; i++) {
		rc = write_svgs(svgdir, &cx.runs[i], &d);
		size_t dl = strlen(svgdir);
		const char *sep = dl && svgdir[dl - 1] == '/' ? "" : "/"; /* plots/ as given: no plots//run1 */
		if (!rc)
			fprintf(json ? stderr : stdout, "wrote %s%srun%lld-best-so-far.svg and %s%srun%lld-times.svg\n",
				svgdir, sep, (long long)cx.runs[i].r.id, svgdir, sep, (long long)cx.runs[i].r.id);
	}
	for (size_t i = 0; i < cx.n; i++) {
		struct runstat *rs = &cx.runs[i];
		free(rs->spec_name);
		free(rs->spec_path);
		free(rs->problem);
		free(rs->backend);
		free(rs->hw);
		free(rs->spec_text);
		free(rs->spec_abs);
		best_free(&rs->b);
	}
	free(cx.runs);
	if (rc)
		return cli_fail(rc, &d);
	return EXIT_OK;
}

MUH_COMMAND(report, 50, "tables and plots of what a store holds: best per run, status counts, noise");
