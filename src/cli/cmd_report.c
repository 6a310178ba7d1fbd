/*
 * cmd_report.c — `muh report DB`: what a store holds, as tables and plots.
 *
 * Reads runs and measurements through the store API only (never SQL of its
 * own), so the tables are the store's numbers.
 */
#include <cjson/cJSON.h>
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
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
	"then the status counts.\n"
	"\n"
	"A run whose spec has an objective other than time (objective: {maximize:\n"
	"output_tokens_per_s, subject_to: [...]}, engine specs) is ranked by it: best\n"
	"and default show that metric, the best meets the SLOs, and a line under the\n"
	"table names the objective and the best that ignores the SLOs when it differs.\n"
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

struct runstat {
	store_run r;
	char *spec_name, *spec_path, *problem, *backend, *hw;
	size_t n, nok;
	size_t status[NSTATUS];
	double best;
	char *best_key;
	double deflt; /* NAN when the defaults were not measured */
	char *default_key;
	muh_objective obj;  /* the spec's objective ({minimize: time} when it cannot be read) */
	double best_any;    /* the best score ignoring the SLOs */
	char *best_any_key;
	double *order_best; /* best-so-far after each measurement */
	double *ok_times;
	size_t cap;
};

struct ctx {
	struct runstat *runs;
	size_t n, cap;
};

static char *dup_or_empty(const char *s)
{
	return strdup(s ? s : "");
}

/* The defaults' canonical key, computed from spec s as space_key formats
 * it (params in spec order, NAME=VALUE). NULL when s is. */
static char *default_key(const muh_spec *s)
{
	if (!s)
		return NULL;
	size_t cap = 64, o = 0;
	char *k = malloc(cap);
	for (size_t p = 0; k && p < s->nparams; p++) {
		char v[64];
		const muh_param *par = &s->params[p];
		value_fmt(v, sizeof(v), par->values[par->has_default ? par->default_idx : 0]);
		size_t need = o + strlen(par->name) + strlen(v) + 3;
		if (need > cap) {
			char *nk = realloc(k, cap = need * 2);
			if (!nk)
				free(k);
			k = nk;
			if (!k)
				break;
		}
		o += (size_t)sprintf(k + o, "%s%s=%s", p ? "," : "", par->name, v);
	}
	if (k)
		k[o] = '\0';
	return k;
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
	rs->best = NAN;
	rs->deflt = NAN;
	rs->best_any = NAN;
	objective_default(&rs->obj);
	muh_spec *sp;
	muh_diag d;
	/* the spec as the store kept it (any directory, the file moved), else its file */
	if (!store_run_spec(r, &sp, &d)) {
		rs->default_key = default_key(sp);
		if (objective_from_spec(sp, eval_backend_metrics(r->backend), &rs->obj, &d))
			objective_default(&rs->obj);
		spec_free(sp);
	}
	return 0;
}

struct rowctx {
	struct runstat *rs;
};

static int on_row(void *ud, const store_row *row)
{
	struct runstat *rs = ((struct rowctx *)ud)->rs;
	if (rs->n == rs->cap) {
		size_t nc = rs->cap ? rs->cap * 2 : 64;
		double *a = realloc(rs->order_best, nc * sizeof(double));
		if (!a)
			return MUH_ENOMEM;
		rs->order_best = a;
		double *b = realloc(rs->ok_times, nc * sizeof(double));
		if (!b)
			return MUH_ENOMEM;
		rs->ok_times = b;
		rs->cap = nc;
	}
	const muh_measurement *m = row->m;
	if ((int)m->status >= 0 && (int)m->status < NSTATUS)
		rs->status[m->status]++;
	double score = objective_score(&rs->obj, m);
	if (m->status == EVAL_OK && isfinite(score)) {
		rs->ok_times[rs->nok++] = score;
		if (objective_feasible(&rs->obj, m, NULL, 0) && !(score >= rs->best)) {
			rs->best = score;
			free(rs->best_key);
			rs->best_key = strdup(row->key);
		}
		if (!(score >= rs->best_any)) {
			rs->best_any = score;
			free(rs->best_any_key);
			rs->best_any_key = strdup(row->key);
		}
		if (rs->default_key && !strcmp(rs->default_key, row->key))
			rs->deflt = score;
	}
	rs->order_best[rs->n++] = rs->best;
	return 0;
}


/* "1.23x", "tie" inside the noise, or "-" */
static void fmt_speedup(char *buf, size_t n, const struct runstat *rs)
{
	if (!isfinite(rs->deflt) || !isfinite(rs->best)) {
		snprintf(buf, n, "-");
		return;
	}
	double sp = rs->deflt / rs->best;
	if (isfinite(rs->r.noise) && fabs(sp - 1) <= rs->r.noise)
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
	double *x = malloc((rs->n ? rs->n : 1) * sizeof(double));
	double *y = malloc((rs->n ? rs->n : 1) * sizeof(double));
	int is_time = !strcmp(rs->obj.metric, "time");
	const char *unit = is_time ? "us" : objective_metric_unit(rs->obj.metric);
	char ylabel[160];
	if (is_time)
		snprintf(ylabel, sizeof(ylabel), "best time (us)");
	else
		snprintf(ylabel, sizeof(ylabel), "best %s (%s)", rs->obj.metric, unit);
	size_t at_best = 0; /* the evaluation (1-based) that found the best; 0: none */
	for (size_t i = 0; x && y && i < rs->n; i++) {
		x[i] = (double)(i + 1);
		y[i] = is_time ? rs->order_best[i] * 1e6 : objective_value(&rs->obj, rs->order_best[i]);
		if (!at_best && isfinite(rs->best) && rs->order_best[i] == rs->best)
			at_best = i + 1;
	}
	svg_mark marks[2];
	char dlabel[128], blabel[128];
	size_t nm = 0;
	if (isfinite(rs->deflt)) {
		double v = is_time ? rs->deflt * 1e6 : objective_value(&rs->obj, rs->deflt);
		fmt_value(dlabel, sizeof(dlabel), "default", v, unit);
		marks[nm++] = (svg_mark){"default", dlabel, NAN, v};
	}
	if (at_best) {
		double v = is_time ? rs->best * 1e6 : objective_value(&rs->obj, rs->best);
		fmt_value(blabel, sizeof(blabel), "best", v, unit);
		snprintf(blabel + strlen(blabel), sizeof(blabel) - strlen(blabel), " (evaluation %zu)",
			 at_best);
		marks[nm++] = (svg_mark){"best", blabel, (double)at_best, v};
	}
	snprintf(title, sizeof(title), "%s %s: best so far", rs->spec_name, rs->problem);
	svg_series s = {"best so far", x, y, x && y ? rs->n : 0};
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
	double *us = malloc((rs->nok ? rs->nok : 1) * sizeof(double));
	for (size_t i = 0; us && i < rs->nok; i++)
		us[i] = is_time ? rs->ok_times[i] * 1e6 : objective_value(&rs->obj, rs->ok_times[i]);
	snprintf(title, sizeof(title), "%s %s: %s of every ok variant", rs->spec_name, rs->problem,
		 is_time ? "time" : rs->obj.metric);
	if (!is_time)
		snprintf(ylabel, sizeof(ylabel), "%s (%s)", rs->obj.metric, unit);
	svg_axes hx = {title, is_time ? "time (us)" : ylabel, "configurations", 0, SVG_LOG_AUTO};
	svg_histogram(f, &hx, us, us ? rs->nok : 0, 30);
	free(us);
	if (fclose(f))
		goto fail;
	return MUH_OK;
fail:
	diag_at(d, path, 0, 0, NULL);
	diag_errorf(d, "cannot write: %s", strerror(errno));
	return MUH_EENV;
}

static int run(int argc, char **argv)
{
	static const struct option opts[] = {
		{"svg", required_argument, NULL, 's'},
		{"json", no_argument, NULL, 'j'},
		{NULL, 0, NULL, 0},
	};
	int json = 0, c;
	const char *svgdir = NULL;
	optind = 1;
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		if (c == 's')
			svgdir = optarg;
		else if (c == 'j')
			json = 1;
		else
			return cli_bad_option("report", argv, opts);
	}
	if (optind != argc - 1)
		return cli_usage_error("report", "expected one store (DB)");
	const char *path = argv[optind];
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
	for (size_t i = 0; i < cx.n && !rc; i++) {
		struct rowctx rcx = {&cx.runs[i]};
		rc = store_foreach(db, cx.runs[i].r.id, on_row, &rcx);
	}
	store_close(db);
	size_t total[NSTATUS] = {0};
	for (size_t i = 0; i < cx.n; i++)
		for (int k = 0; k < NSTATUS; k++)
			total[k] += cx.runs[i].status[k];
	if (!rc && json) {
		cJSON *o = cJSON_CreateObject();
		cJSON *arr = cJSON_AddArrayToObject(o, "runs");
		for (size_t i = 0; i < cx.n; i++) {
			const struct runstat *rs = &cx.runs[i];
			cJSON *e = cJSON_CreateObject();
			cJSON_AddNumberToObject(e, "run", (double)rs->r.id);
			cJSON_AddStringToObject(e, "spec", rs->spec_name);
			cJSON_AddNumberToObject(e, "instance", (double)rs->r.instance);
			cJSON_AddStringToObject(e, "problem", rs->problem);
			cJSON_AddStringToObject(e, "backend", rs->backend);
			cJSON_AddStringToObject(e, "profile", rs->hw);
			cJSON_AddNumberToObject(e, "variants", (double)rs->n);
			cJSON_AddNumberToObject(e, "ok", (double)rs->nok);
			int is_time = !strcmp(rs->obj.metric, "time");
			char desc[1024];
			objective_describe(&rs->obj, desc, sizeof(desc));
			cJSON_AddStringToObject(e, "objective", desc);
			if (isfinite(rs->best)) {
				cJSON_AddNumberToObject(e, is_time ? "best_s" : "best_value",
							objective_value(&rs->obj, rs->best));
				cJSON_AddStringToObject(e, "best", rs->best_key);
			}
			if (isfinite(rs->best_any) && rs->best_key && strcmp(rs->best_any_key, rs->best_key)) {
				cJSON_AddNumberToObject(e, "unconstrained_best_value", objective_value(&rs->obj, rs->best_any));
				cJSON_AddStringToObject(e, "unconstrained_best", rs->best_any_key);
			}
			if (isfinite(rs->deflt))
				cJSON_AddNumberToObject(e, is_time ? "default_s" : "default_value",
							objective_value(&rs->obj, rs->deflt));
			if (isfinite(rs->r.noise))
				cJSON_AddNumberToObject(e, "noise", rs->r.noise);
			cJSON *stc = cJSON_AddObjectToObject(e, "status");
			for (int k = 0; k < NSTATUS; k++)
				if (rs->status[k])
					cJSON_AddNumberToObject(stc, eval_status_name((enum eval_status)k),
								(double)rs->status[k]);
			cJSON_AddItemToArray(arr, e);
		}
		cJSON *stc = cJSON_AddObjectToObject(o, "status");
		for (int k = 0; k < NSTATUS; k++)
			if (total[k])
				cJSON_AddNumberToObject(stc, eval_status_name((enum eval_status)k),
							(double)total[k]);
		char *t = cJSON_Print(o);
		if (t)
			puts(t);
		free(t);
		cJSON_Delete(o);
	} else if (!rc) {
		/* the columns that tell runs apart are as wide as their widest value: never cut */
		int ws = 16, wp = 18, wb = 8;
		for (size_t i = 0; i < cx.n; i++) {
			const struct runstat *rs = &cx.runs[i];
			ws = (int)strlen(rs->spec_name) > ws ? (int)strlen(rs->spec_name) : ws;
			wp = (int)strlen(rs->problem) > wp ? (int)strlen(rs->problem) : wp;
			wb = (int)strlen(rs->backend) > wb ? (int)strlen(rs->backend) : wb;
		}
		printf("%-4s %-*s %-*s %-*s %8s %6s %7s %12s %12s %8s %7s  %s\n", "run", ws, "spec", wp,
		       "problem", wb, "backend", "variants", "ok", "failed", "best", "default",
		       "speedup", "noise", "best variant");
		for (size_t i = 0; i < cx.n; i++) {
			const struct runstat *rs = &cx.runs[i];
			char b[32], df[32], sp[32], nz[32];
			if (!strcmp(rs->obj.metric, "time")) {
				cli_fmt_time(b, sizeof(b), rs->best);
				cli_fmt_time(df, sizeof(df), rs->deflt);
			} else {
				objective_format(rs->obj.metric, objective_value(&rs->obj, rs->best), b, sizeof(b));
				objective_format(rs->obj.metric, objective_value(&rs->obj, rs->deflt), df, sizeof(df));
			}
			fmt_speedup(sp, sizeof(sp), rs);
			if (isfinite(rs->r.noise))
				snprintf(nz, sizeof(nz), "%.2f%%", rs->r.noise * 100);
			else
				snprintf(nz, sizeof(nz), "-");
			printf("%-4lld %-*s %-*s %-*s %8zu %6zu %7zu %12s %12s %8s %7s  %s\n",
			       (long long)rs->r.id, ws, rs->spec_name, wp, rs->problem[0] ? rs->problem : "-",
			       wb, rs->backend, rs->n, rs->nok, rs->n - rs->nok, b, df, sp, nz,
			       rs->best_key ? rs->best_key : "-");
		}
		for (size_t i = 0; i < cx.n; i++) {
			const struct runstat *rs = &cx.runs[i];
			if (objective_is_time(&rs->obj))
				continue;
			char desc[1024], b[32];
			objective_describe(&rs->obj, desc, sizeof(desc));
			printf("\nrun %lld: %s", (long long)rs->r.id, desc);
			if (isfinite(rs->best_any) && (!rs->best_key || strcmp(rs->best_any_key, rs->best_key))) {
				objective_format(rs->obj.metric, objective_value(&rs->obj, rs->best_any), b, sizeof(b));
				printf("; ignoring the SLOs the best is %s  %s", b, rs->best_any_key);
			}
			printf("\n");
		}
		printf("\nstatus:");
		for (int k = 0; k < NSTATUS; k++)
			if (total[k])
				printf("  %s %zu", eval_status_name((enum eval_status)k), total[k]);
		printf("\n");
	}
	for (size_t i = 0; i < cx.n && !rc && svgdir; i++) {
		rc = write_svgs(svgdir, &cx.runs[i], &d);
		if (!rc)
			fprintf(json ? stderr : stdout, "wrote %s/run%lld-best-so-far.svg and %s/run%lld-times.svg\n",
				svgdir, (long long)cx.runs[i].r.id, svgdir, (long long)cx.runs[i].r.id);
	}
	for (size_t i = 0; i < cx.n; i++) {
		struct runstat *rs = &cx.runs[i];
		free(rs->spec_name);
		free(rs->spec_path);
		free(rs->problem);
		free(rs->backend);
		free(rs->hw);
		free(rs->best_key);
		free(rs->best_any_key);
		free(rs->default_key);
		free(rs->order_best);
		free(rs->ok_times);
	}
	free(cx.runs);
	if (rc)
		return cli_fail(rc, &d);
	return EXIT_OK;
}

const struct muh_command muh_cmd_report = {
	.name = "report",
	.order = 50,
	.summary = "tables and plots of what a store holds: best per run, status counts, noise",
	.help = help,
	.run = run,
};
