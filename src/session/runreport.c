/*
 * runreport.c — what a store holds, run by run (see runreport.h).
 *
 * Owns: the runs of a store ranked for a report, their status totals, a
 * run's speedup word (the tie rule is best_is_tie's, the decision's verdict
 * best_decided's), the plots of a run (drawn by svg.h) and the report's
 * JSON. Reads the store through its API only (never SQL of its own), so
 * the report's numbers are the store's.
 *
 * Must never: print to stdout or stderr, or rank by anything but best.h.
 */
#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "muh/decide.h"
#include "muh/objective.h"
#include "muh/runreport.h"
#include "muh/svg.h"
#include "strbuf.h"
#include "json_int.h"


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
	runreport *c = ud;
	if (array_grow(&c->runs, &c->cap, c->n, sizeof(*c->runs), 8))
		return MUH_ENOMEM;
	runreport_run *rs = &c->runs[c->n++];
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

int runreport_read(const char *path, runreport *rp, muh_diag *d)
{
	memset(rp, 0, sizeof(*rp));
	muh_store *db;
	int rc = store_open_ro(path, &db, d);
	if (rc)
		return rc;
	rc = store_foreach_run(db, on_run, rp);
	for (size_t i = 0; i < rp->n && !rc; i++)
		rc = best_of_run(db, &rp->runs[i].r, &rp->runs[i].b, d);
	store_close(db);
	for (size_t i = 0; i < rp->n; i++)
		for (int k = 0; k < EVAL_NSTATUS; k++)
			rp->total[k] += rp->runs[i].b.status[k];
	return rc;
}

void runreport_free(runreport *rp)
{
	for (size_t i = 0; i < rp->n; i++) {
		runreport_run *rs = &rp->runs[i];
		free(rs->spec_name);
		free(rs->spec_path);
		free(rs->problem);
		free(rs->backend);
		free(rs->hw);
		free(rs->spec_text);
		free(rs->spec_abs);
		best_free(&rs->b);
	}
	free(rp->runs);
	memset(rp, 0, sizeof(*rp));
}

const char *runreport_best_key(const runreport_run *rs)
{
	return rs->b.nranked ? rs->b.ranked[0].key : NULL;
}

const char *runreport_search_best(const runreport_run *rs)
{
	return rs->b.search_key ? rs->b.search_key : runreport_best_key(rs);
}

int runreport_any_differs(const runreport_run *rs)
{
	const char *sb = runreport_search_best(rs);
	return rs->b.any_key && (!sb || strcmp(rs->b.any_key, sb));
}

void runreport_speedup_text(char *buf, size_t n, const runreport_run *rs)
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

/* A plot's title: "SPEC PROBLEM: what", or "SPEC: what" for a run without
 * a problem (an engine spec's), so that no space stands where an empty
 * problem would go. Into buf (n bytes). */
static void plot_title(char *buf, size_t n, const runreport_run *rs, const char *what)
{
	snprintf(buf, n, "%s%s%s: %s", rs->spec_name, rs->problem[0] ? " " : "", rs->problem, what);
}

/* "WHAT 12.3 UNIT": a mark's label. */
static void fmt_value(char *buf, size_t n, const char *what, double v, const char *unit)
{
	snprintf(buf, n, "%s %.4g %s", what, v, unit);
}

/* See runreport.h: writes DIR/run<ID>-best-so-far.svg (the best against the evaluations, the
 * defaults' value as a line, the best marked where it was found) and
 * DIR/run<ID>-times.svg (the histogram of the ok variants' values); value
 * axes are log when the values span more than 10x. */
int runreport_write_svgs(const char *dir, const runreport_run *rs, muh_diag *d)
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
	plot_title(title, sizeof(title), rs, "best so far");
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
	char what[160];
	snprintf(what, sizeof(what), "%s of every ok variant", is_time ? "time" : rs->b.objective.metric);
	plot_title(title, sizeof(title), rs, what);
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
		json_add_finite(o, "burst_s", r->burst_s);
		json_add_finite(o, "burst_sm_mhz", r->burst_mhz);
		json_add_finite(o, "sustained_s", r->sustained_s);
		json_add_finite(o, "sustained_sm_mhz", r->sustained_mhz);
		cJSON_AddItemToArray(rows, o);
	}
}

char *runreport_json(const runreport *rp)
{
	cJSON *o = cJSON_CreateObject();
	cJSON *arr = cJSON_AddArrayToObject(o, "runs");
	for (size_t i = 0; i < rp->n; i++) {
		const runreport_run *rs = &rp->runs[i];
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
		if (b->objective.nslo)
			cJSON_AddNumberToObject(e, "slo_missed", (double)(b->nok - b->nfeasible));
		int is_time = objective_is_time(&b->objective);
		char desc[1024];
		objective_describe(&b->objective, desc, sizeof(desc));
		cJSON_AddStringToObject(e, "objective", desc);
		if (b->nranked) {
			/* the best's value where it was ranked; best_burst_s as the search timed it */
			cJSON_AddNumberToObject(e, is_time ? "best_s" : "best_value",
						objective_value(&b->objective, rs->b.ranked[0].score));
			cJSON_AddStringToObject(e, "best", runreport_best_key(rs));
			cJSON_AddStringToObject(e, "best_regime", b->regime == BEST_SUSTAINED ? "sustained" : "burst");
			if (is_time)
				cJSON_AddNumberToObject(e, "best_burst_s", b->ranked[0].burst_score);
			json_add_finite(e, "best_sm_mhz", b->ranked[0].sm_clock_mhz);
		}
		if (runreport_any_differs(rs)) {
			cJSON_AddNumberToObject(e, "unconstrained_best_value", objective_value(&b->objective, b->any_score));
			cJSON_AddStringToObject(e, "unconstrained_best", b->any_key);
		}
		if (b->default_key)
			cJSON_AddStringToObject(e, "default_key", b->default_key);
		if (isfinite(b->default_score))
			cJSON_AddNumberToObject(e, is_time ? "default_s" : "default_value",
						objective_value(&b->objective, b->default_score));
		json_add_finite(e, "noise", rs->r.noise);
		json_add_finite(e, "measure_ci", rs->b.ci_frac);
		if (!strcmp(rs->b.objective.metric, "time") && isfinite(rs->b.ci_frac))
			cJSON_AddNumberToObject(e, "wide_ci", (double)rs->b.nwide);
		json_retimes(e, b);
		if (b->decision) {
			char *dj = decide_summary_json(b->decision, &b->objective);
			cJSON *dd = dj ? cJSON_Parse(dj) : NULL;
			free(dj);
			if (dd)
				cJSON_AddItemToObject(e, "decision", dd);
		}
		cJSON *stc = cJSON_AddObjectToObject(e, "status");
		for (int k = 0; k < EVAL_NSTATUS; k++)
			if (b->status[k])
				cJSON_AddNumberToObject(stc, eval_status_name((enum eval_status)k), (double)b->status[k]);
		cJSON_AddItemToArray(arr, e);
	}
	cJSON *stc = cJSON_AddObjectToObject(o, "status");
	for (int k = 0; k < EVAL_NSTATUS; k++)
		if (rp->total[k])
			cJSON_AddNumberToObject(stc, eval_status_name((enum eval_status)k), (double)rp->total[k]);
	char *t = cJSON_Print(o);
	cJSON_Delete(o);
	return t;
}

