/*
 * eval_text.c — one measurement for a person or a program (eval.h's
 * eval_text_*), moved here from the muh program, where eval and verify
 * shared it: the aligned table's header and row (key, status, median, CI,
 * samples, fingerprint, error), the median as a person reads it, the
 * JSON object of a row, and the note on rows whose usage blocks a load too
 * short could not judge. Only rendering.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "eval_int.h"
#include "muh/eval.h"
#include "muh/load.h"
#include "muh/objective.h"

int eval_text_keyw(const muh_spec *s)
{
	int keyw = 24;
	for (size_t p = 0, w = 0; p < s->nparams; p++) {
		w += strlen(s->params[p].name) + 4;
		if ((int)w > keyw)
			keyw = (int)w;
	}
	return keyw;
}

void eval_text_median(char *buf, size_t n, const muh_measurement *m)
{
	double tps = measurement_metric(m, "output_tokens_per_s");
	if (isfinite(tps))
		objective_format("output_tokens_per_s", tps, buf, n);
	else
		text_time(buf, n, m->median);
}

void eval_text_header(const textout *f, int keyw)
{
	textout_printf(f, TEXTOUT_RESULT, "%-*s  %-13s %12s %9s %5s  %-16s  %s\n", keyw, "variant",
	               "status", "median", "ci", "n", "fingerprint", "error");
}

void eval_text_row(const textout *f, const char *key, const muh_measurement *m, int keyw)
{
	char med[32], ci[48] = "";
	eval_text_median(med, sizeof(med), m);
	double rel = measurement_ci_rel(m); /* NAN without a median or a CI */
	if (m->status == EVAL_OK && isfinite(rel))
		snprintf(ci, sizeof(ci), "+-%.2f%%", 100 * rel);
	char note[96] = "";
	if (m->status == EVAL_OK && m->noisy && isfinite(rel))
		snprintf(note, sizeof(note), "noisy: CI +-%.2f%% > %g%%", 100 * rel,
		         100.0 * (isfinite(m->ci_target) ? m->ci_target : 0));
	else if (m->status == EVAL_OK && m->noisy) /* a record without its CI: still not sure */
		snprintf(note, sizeof(note), "noisy");
	textout_printf(f, TEXTOUT_RESULT, "%-*s  %-13s %12s %9s %5zu  %-16s  %s\n", keyw, key,
	               eval_status_name(m->status), med, ci, m->nsamples,
	               m->fingerprint[0] ? m->fingerprint : "-",
	               m->status == EVAL_OK ? note : m->error);
}

cJSON *eval_text_json(const char *key, const muh_measurement *m)
{
	char *mj = measurement_to_json(m);
	cJSON *o = mj ? cJSON_Parse(mj) : cJSON_CreateObject();
	free(mj);
	cJSON_AddStringToObject(o, "key", key);
	return o;
}

void eval_text_usage_note(const textout *f, const char *who, const muh_target *t, size_t n,
                          const char *first)
{
	if (!n)
		return;
	load_opts lo; /* the bounds of the target's load: its keys were read when its servers ran */
	char why[256], held[256];
	(void)eval_target_load(t, &lo, why, sizeof(why));
	char which[96] = ""; /* muh load's note names its step; this one the variants */
	if (n > 1)
		snprintf(which, sizeof(which), "%zu variants (", n);
	textout_printf(f, TEXTOUT_NOTE,
	               "%s: note: %s%s%s: %s (\"usage_checked\": false in %s metrics; a longer load, "
	               "load.requests or load.output_tokens, judges them)\n",
	               who, which, first, n > 1 ? ", ...)" : "", load_text_usage_held(held, sizeof(held), &lo),
	               n > 1 ? "their" : "its");
}
