/*
 * objective.c — objectives and SLOs read from a spec, and the score that
 * strategies minimize (objective.h).
 *
 * Owns: the keys under objective: (maximize, minimize, subject_to.N), the
 * SLO syntax "METRIC OP NUMBER[unit]", and the units metrics are shown in.
 * Knows nothing of how a metric is measured: it reads measurement_metric().
 */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "muh/muh.h"
#include "muh/objective.h"
#include "muh/textout.h"

void objective_default(muh_objective *o)
{
	memset(o, 0, sizeof(*o));
	snprintf(o->metric, sizeof(o->metric), "time");
}

int objective_is_time(const muh_objective *o)
{
	return !strcmp(o->metric, "time") && !o->maximize && o->nslo == 0;
}

static int known_metric(const char *name, const char *const *metrics)
{
	if (!strcmp(name, "time"))
		return 1;
	for (size_t i = 0; metrics && metrics[i]; i++)
		if (!strcmp(metrics[i], name))
			return 1;
	return 0;
}

/* The did-you-mean hint for an unknown metric name (diag_near_hint), in buf. */
static const char *metric_hint(const char *name, const char *const *metrics, char *buf, size_t n)
{
	diag_near near = DIAG_NEAR_INIT;
	diag_near_offer(&near, name, strlen(name), "time");
	for (size_t i = 0; metrics && metrics[i]; i++)
		diag_near_offer(&near, name, strlen(name), metrics[i]);
	return diag_near_hint(near.name, buf, n);
}

/* "time, output_tokens_per_s, ..." for error messages. */
static void list_metrics(const char *const *metrics, char *buf, size_t n)
{
	size_t used = (size_t)snprintf(buf, n, "time");
	for (size_t i = 0; metrics && metrics[i] && used < n; i++)
		used += (size_t)snprintf(buf + used, n - used, ", %s", metrics[i]);
}

static int fail_at(const muh_spec *s, const muh_kv *kv, muh_diag *d, const char *fmt, const char *a,
		   const char *b)
{
	spec_diag_at(s, d, kv->line, kv->col);
	return diag_errorf(d, fmt, a, b);
}

/* Parses "METRIC OP NUMBER[s|ms|us]" into *slo. 0, or -1 with why. */
static int parse_slo(const char *text, objective_slo *slo, char *why, size_t n)
{
	const char *p = text;
	while (isspace((unsigned char)*p))
		p++;
	size_t k = 0;
	while ((isalnum((unsigned char)*p) || *p == '_') && k + 1 < sizeof(slo->metric))
		slo->metric[k++] = *p++;
	slo->metric[k] = '\0';
	if (!k) {
		snprintf(why, n, "expected 'METRIC OP NUMBER' such as 'ttft_p99 <= 2s'");
		return -1;
	}
	while (isspace((unsigned char)*p))
		p++;
	static const struct {
		const char *s;
		enum objective_op op;
	} ops[] = {{"<=", OBJ_LE}, {">=", OBJ_GE}, {"==", OBJ_EQ}, {"!=", OBJ_NE}, {"<", OBJ_LT}, {">", OBJ_GT}};
	size_t i;
	for (i = 0; i < sizeof(ops) / sizeof(ops[0]); i++)
		if (!strncmp(p, ops[i].s, strlen(ops[i].s)))
			break;
	if (i == sizeof(ops) / sizeof(ops[0])) {
		snprintf(why, n, "expected a comparison (<, <=, >, >=, ==, !=) after '%s'", slo->metric);
		return -1;
	}
	slo->op = ops[i].op;
	p += strlen(ops[i].s);
	char *end;
	double v = strtod(p, &end);
	if (end == p || !isfinite(v)) {
		snprintf(why, n, "expected a number after the comparison");
		return -1;
	}
	while (isspace((unsigned char)*end))
		end++;
	double scale = 1;
	if (!strcmp(end, "s") || !*end)
		scale = 1;
	else if (!strcmp(end, "ms"))
		scale = 1e-3;
	else if (!strcmp(end, "us"))
		scale = 1e-6;
	else {
		snprintf(why, n, "unknown unit '%s'; expected s, ms or us (or none)", end);
		return -1;
	}
	slo->value = v * scale;
	snprintf(slo->text, sizeof(slo->text), "%s", text);
	return 0;
}

static int holds(enum objective_op op, double a, double b);

int objective_from_spec(const muh_spec *s, const char *const *metrics, muh_objective *o, muh_diag *d)
{
	objective_default(o);
	char known[1024];
	int have = 0;
	const muh_kv *kv;
	const char *k;
	for (size_t i = 0; (kv = spec_kv_under(s, "objective.", &i, &k)); i++) {
		if (!strcmp(k, "maximize") || !strcmp(k, "minimize")) {
			if (have)
				return fail_at(s, kv, d, "objective: has both maximize and minimize%s%s", "", "");
			have = 1;
			if (!known_metric(kv->value, metrics)) {
				char hint[96], m[160];
				list_metrics(metrics, known, sizeof(known));
				snprintf(m, sizeof(m), "%s'%s", kv->value,
					 metric_hint(kv->value, metrics, hint, sizeof(hint)));
				return fail_at(s, kv, d, "unknown metric '%s; known: %s", m, known);
			}
			snprintf(o->metric, sizeof(o->metric), "%s", kv->value);
			o->maximize = k[1] == 'a';
			continue;
		}
		if (!strncmp(k, "subject_to", 10) && (k[10] == '\0' || k[10] == '.')) {
			if (o->nslo == OBJECTIVE_MAX_SLO)
				return fail_at(s, kv, d, "more than %s constraints under objective.subject_to%s", "16",
					       "");
			objective_slo *slo = &o->slo[o->nslo];
			char why[256];
			if (parse_slo(kv->value, slo, why, sizeof(why)))
				return fail_at(s, kv, d, "%s: %s", kv->value, why);
			if (!known_metric(slo->metric, metrics)) {
				char hint[96], m[160];
				list_metrics(metrics, known, sizeof(known));
				snprintf(m, sizeof(m), "%s'%s", slo->metric,
					 metric_hint(slo->metric, metrics, hint, sizeof(hint)));
				return fail_at(s, kv, d, "unknown metric '%s; known: %s", m, known);
			}
			o->nslo++;
			continue;
		}
		if (!strcmp(k, "min_gain")) {
			char *end;
			double g = strtod(kv->value, &end);
			if (end != kv->value && *end == '%' && !end[1])
				g /= 100, end++;
			if (end == kv->value || *end || !(g >= 0 && g < 1))
				return fail_at(s, kv, d, "objective.min_gain: expected a fraction from 0 to 1 (0.005) or a "
							 "percentage (0.5%%), not '%s'%s",
					       kv->value, "");
			o->min_gain = g;
			continue;
		}
		static const char *const okeys[] = {"objective.maximize", "objective.minimize",
						    "objective.subject_to", "objective.min_gain", NULL};
		const char *nk = diag_near_among(kv->key, strlen(kv->key), okeys);
		char hint[96];
		spec_diag_at(s, d, kv->kline, kv->kcol); /* an unknown key: the caret under it */
		return diag_errorf(d,
				   "unknown key '%s'%s under objective:; expected maximize, minimize, "
				   "subject_to or min_gain (see docs/spec.md, section \"engine, load and "
				   "objective\")",
				   kv->key, diag_near_hint(nk, hint, sizeof(hint)));
	}
	return MUH_OK;
}

double objective_score(const muh_objective *o, const muh_measurement *m)
{
	if (m->status != EVAL_OK)
		return NAN;
	double v = measurement_metric(m, o->metric);
	if (!isfinite(v))
		return NAN;
	if (!o->maximize)
		return v;
	return v > 0 ? 1.0 / v : NAN;
}

double objective_search_score(const muh_objective *o, const muh_measurement *m, int *feasible)
{
	double sc = objective_score(o, m);
	double v = 0;
	for (int i = 0; i < o->nslo; i++) {
		double x = measurement_metric(m, o->slo[i].metric);
		if (isfinite(x) && holds(o->slo[i].op, x, o->slo[i].value))
			continue;
		double lim = fabs(o->slo[i].value) > 1e-12 ? fabs(o->slo[i].value) : 1e-12;
		v += isfinite(x) && o->slo[i].op != OBJ_EQ && o->slo[i].op != OBJ_NE ? fabs(x - o->slo[i].value) / lim
										    : 1;
	}
	/* load.find_rate met no rate: a miss by how far its lowest rate missed */
	double rm = measurement_metric(m, "rate_slo_miss");
	if (m->status == EVAL_OK && isfinite(rm) && rm > 0)
		v += rm, sc = isfinite(sc) ? sc : OBJECTIVE_PENALTY;
	if (feasible)
		*feasible = v == 0;
	if (!isfinite(sc) || v == 0)
		return sc;
	return OBJECTIVE_PENALTY * (1 + v);
}

double objective_value(const muh_objective *o, double score)
{
	return o->maximize ? 1.0 / score : score;
}

static int holds(enum objective_op op, double a, double b)
{
	switch (op) {
	case OBJ_LT: return a < b;
	case OBJ_LE: return a <= b;
	case OBJ_GT: return a > b;
	case OBJ_GE: return a >= b;
	case OBJ_EQ: return a == b;
	case OBJ_NE: return a != b;
	}
	return 0;
}

int objective_feasible(const muh_objective *o, const muh_measurement *m, char *why, size_t n)
{
	double rm = measurement_metric(m, "rate_slo_miss");
	if (isfinite(rm) && rm > 0) {
		if (why)
			snprintf(why, n, "no arrival rate met the load's SLOs (rate_slo_miss = %.3g, the nearest run)", rm);
		return 0;
	}
	for (int i = 0; i < o->nslo; i++) {
		double v = measurement_metric(m, o->slo[i].metric);
		if (isfinite(v) && holds(o->slo[i].op, v, o->slo[i].value))
			continue;
		char val[64];
		objective_format(o->slo[i].metric, v, val, sizeof(val));
		if (why)
			snprintf(why, n, "%s = %s, needs %s", o->slo[i].metric, val, o->slo[i].text);
		return 0;
	}
	if (why && n)
		why[0] = '\0';
	return 1;
}

/* 1 when the metric is a latency or a time (seconds). */
static int is_seconds(const char *name)
{
	static const char *const pre[] = {"time", "ttft", "itl", "tpot", "e2e", "wall", NULL};
	for (size_t i = 0; pre[i]; i++)
		if (!strncmp(name, pre[i], strlen(pre[i])))
			return 1;
	return 0;
}

const char *objective_metric_unit(const char *name)
{
	if (is_seconds(name))
		return "s";
	size_t n = strlen(name);
	if (n > 6 && !strcmp(name + n - 6, "_per_s"))
		return !strncmp(name, "output_tokens", 13) || strstr(name, "tokens") ? "tok/s" : "req/s";
	if (!strcmp(name, "goodput_rps") || !strcmp(name, "max_rate"))
		return "req/s";
	return "";
}

void objective_format(const char *name, double v, char *buf, size_t n)
{
	if (!isfinite(v)) {
		snprintf(buf, n, "-");
		return;
	}
	const char *u = objective_metric_unit(name);
	if (!strcmp(u, "s")) {
		text_time(buf, n, v); /* the one format of every time muh shows */
	} else if (*u) {
		snprintf(buf, n, "%.1f %s", v, u);
	} else {
		snprintf(buf, n, "%.6g", v);
	}
}

void objective_describe(const muh_objective *o, char *buf, size_t n)
{
	size_t used = (size_t)snprintf(buf, n, "%s %s", o->maximize ? "maximize" : "minimize", o->metric);
	for (int i = 0; i < o->nslo && used < n; i++)
		used += (size_t)snprintf(buf + used, n - used, "%s%s", i ? ", " : " subject to ", o->slo[i].text);
}

void objective_winners_init(objective_winners *w)
{
	memset(w, 0, sizeof(*w));
	w->best = w->best_any = INFINITY;
}

int objective_winners_offer(objective_winners *w, const muh_objective *o, const char *key,
			    const muh_measurement *m, char *why, size_t n)
{
	char miss[256] = "";
	double sc = objective_score(o, m);
	int feas = m->status == EVAL_OK && objective_feasible(o, m, miss, sizeof(miss));
	if (isfinite(sc) && sc < w->best_any) {
		w->best_any = sc;
		snprintf(w->key_any, sizeof(w->key_any), "%s", key);
		snprintf(w->why_any, sizeof(w->why_any), "%s", miss);
	}
	if (isfinite(sc) && feas && sc < w->best) {
		w->best = sc;
		snprintf(w->key, sizeof(w->key), "%s", key);
	}
	if (why && n)
		snprintf(why, n, "%s", miss);
	return feas;
}
