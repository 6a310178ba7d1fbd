/*
 * evalset_text.c — what muh eval says under its rows (evalset.h's
 * evalset_text_*), moved here from the muh program: the best against the
 * defaults, --interleave's paired verdicts, identical code timed apart
 * (twins), and the counts per status. Only rendering; the verdicts are
 * evalset.c's.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "muh/best.h"
#include "muh/evalset.h"

/* Variants that built one artifact yet were timed apart: what this
 * machine did to identical code over the run, beside the best's speedup,
 * in report's words (best_twins_note), with the noise the run measured
 * (NAN: not measured, the note goes without it) named as another figure.
 * Not paired: muh eval has no decision stage. */
void evalset_text_twins(const textout *o, const evalset *S, double noise, int json)
{
	size_t twins;
	const char *slow, *fast;
	double r = evalset_twins(S, &twins, &slow, &fast);
	if (!isfinite(r))
		return;
	char *line = malloc(8192);
	if (!line)
		return;
	best_twins_note(line, 8192, twins, r, slow, fast, noise, 0);
	/* with --json stdout holds the variants' rows only: the line goes to
	 * stderr, as the noise line does */
	textout_printf(o, json ? TEXTOUT_NOTE : TEXTOUT_RESULT, "%s\n", line);
	free(line);
}

/* Under the table of --interleave: how the set was timed, and each
 * variant against the fastest. Samples of one round were taken side by
 * side, so the comparison is paired: the median of the per-round ratios
 * and its CI (stats_paired_ratio), a tie when the CI holds 1. Variants with
 * different sample counts (a set measured again without a failed one) fall
 * back to the two medians (eval_compare: within the noise, or CIs that
 * overlap). --json: one closing "interleaved" line with the same verdicts. */
void evalset_text_interleaved(const textout *o, const evalset *S, double noise, int json)
{
	evalset_verdict v[EVAL_INTERLEAVE_MAX];
	size_t ok, lo, hi;
	int n = evalset_interleaved(S, noise, v, &ok, &lo, &hi);
	if (n < 0)
		return;
	cJSON *js = json ? cJSON_CreateObject() : NULL, *jrows = NULL;
	if (js) {
		cJSON_AddStringToObject(js, "event", "interleaved");
		cJSON_AddStringToObject(js, "fastest", S->best_key);
		jrows = cJSON_AddArrayToObject(js, "rows");
	} else {
		textout_printf(o, TEXTOUT_RESULT, "\ninterleaved %zu variant(s)", ok);
		if (ok < S->nrows)
			textout_printf(o, TEXTOUT_RESULT, " (%zu failed)", S->nrows - ok);
		textout_printf(o, TEXTOUT_RESULT, ", %zu", lo);
		if (hi != lo)
			textout_printf(o, TEXTOUT_RESULT, "-%zu", hi);
		textout_printf(
		    o, TEXTOUT_RESULT,
		    " samples each, the order alternated every round (AB BA BA AB ...)\n");
	}
	for (int i = 0; i < n; i++) {
		if (jrows) {
			cJSON *e = cJSON_CreateObject();
			cJSON_AddStringToObject(e, "key", v[i].key);
			cJSON_AddNumberToObject(e, "ratio", v[i].ratio);
			cJSON_AddBoolToObject(e, "paired", v[i].paired);
			if (v[i].paired) {
				cJSON_AddNumberToObject(e, "ratio_ci_lo", v[i].lo);
				cJSON_AddNumberToObject(e, "ratio_ci_hi", v[i].hi);
			}
			cJSON_AddStringToObject(e, "verdict", v[i].slower ? "slower" : "tie");
			cJSON_AddItemToArray(jrows, e);
			continue;
		}
		char a[32];
		eval_text_median(a, sizeof(a), v[i].m);
		if (v[i].paired)
			textout_printf(o, TEXTOUT_RESULT,
			               "  %.3fx the fastest's time, paired over %zu rounds (95%% "
			               "CI %.3f-%.3fx): %s  %s  %s\n",
			               v[i].ratio, v[i].rounds, v[i].lo, v[i].hi,
			               v[i].slower ? "slower" : "a tie: the CI holds 1", a,
			               v[i].key);
		else
			textout_printf(
			    o, TEXTOUT_RESULT,
			    "  %.3fx the fastest's time, from the medians (%s): %s  %s\n",
			    v[i].ratio,
			    v[i].slower ? "slower" : "a tie: within the noise or the CIs overlap",
			    a, v[i].key);
	}
	if (js) {
		char *t = cJSON_PrintUnformatted(js);
		textout_printf(o, TEXTOUT_RESULT, "%s\n", t ? t : "{}");
		free(t);
		cJSON_Delete(js);
	}
}

void evalset_text_best(const textout *o, const evalset *S, double noise)
{
	if (S->best_key[0] && S->measured > 1) {
		char a[32], b[32];
		eval_text_median(a, sizeof(a), &S->best);
		textout_printf(o, TEXTOUT_RESULT, "\nbest: %s  %s", S->best_key, a);
		if (S->defm.status == EVAL_OK && strcmp(S->best_key, S->def_key)) {
			eval_text_median(b, sizeof(b), &S->defm);
			int cmp = eval_compare(&S->best, &S->defm, isfinite(noise) ? noise : 0);
			if (cmp == 0)
				textout_printf(
				    o, TEXTOUT_RESULT,
				    "; a tie with the defaults (%s, %s) within the noise\n",
				    S->def_key, b);
			else
				textout_printf(o, TEXTOUT_RESULT,
				               "; %.3fx the defaults (%s, %s)\n",
				               S->defm.median / S->best.median, S->def_key, b);
		} else {
			textout_printf(o, TEXTOUT_RESULT, "%s\n",
			               strcmp(S->best_key, S->def_key) ? "" : " (the defaults)");
		}
	}
}

void evalset_text_counts(const textout *o, const char *who, const evalset *S, int interrupted,
                         int restarted)
{
	textout_printf(o, TEXTOUT_NOTE, "%s: %lld measured", who, S->measured);
	for (int k = 0; k < EVAL_NSTATUS; k++)
		if (S->counts[k])
			textout_printf(o, TEXTOUT_NOTE, ", %lld %s", S->counts[k],
			               eval_status_name((enum eval_status)k));
	textout_printf(o, TEXTOUT_NOTE, "%s%s\n", interrupted ? " (interrupted)" : "",
	               restarted ? "; the runner was restarted after each crash or timeout" : "");
}
