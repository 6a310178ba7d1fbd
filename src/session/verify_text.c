/*
 * verify_text.c — muh verify's proof for a person or a program
 * (session.h's verify_text*), moved here from the muh program: the
 * designed sample's rows, the noise, each param's fingerprints and times
 * against the noise with its verdict, the closing verdict, and where the
 * untested params can be tested from; or one JSON object. Only rendering;
 * the proof is session_verify's.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include <cjson/cJSON.h>

#include "muh/session.h"
#include "json_int.h"

void verify_text_suggest(const textout *o, const char *who, const session_verify_result *r,
                         const muh_spec *s, int json, cJSON *root)
{
	if (json) {
		if (r->suggest_n)
			cJSON_AddStringToObject(root, "from", r->suggest);
		else
			cJSON_AddNullToObject(root, "from");
	} else if (r->suggest_n) {
		textout_printf(
		    o, TEXTOUT_NOTE,
		    "%s: %zu of the %zu can be tested from %s (the nearest such base): muh verify "
		    "%s --from '%s'\n",
		    who, r->suggest_n, r->suggest_of, r->suggest, s->path, r->suggest);
	} else {
		textout_printf(o, TEXTOUT_NOTE,
		               "%s: no valid configuration lets them change one at a time\n", who);
	}
}

void verify_text(const textout *o, const char *who, muh_session *ss, const session_verify_result *r,
                 const char *from, int jobs, int json)
{
	const muh_spec *s = session_spec(ss);
	size_t np = space_nparams(session_space(ss));
	int keyw = eval_text_keyw(s);
	const char *base = from ? "the base" : "the defaults";
	if (!json) {
		textout_printf(o, TEXTOUT_RESULT, "%s %s: backend %s, %zu params%s%s%s%s\n", who,
		               s->path, eval_target_backend(session_target(ss)), np,
		               from ? ", from " : "", from ? r->base : "",
		               s->nproblem ? ", problem " : "",
		               s->nproblem ? session_problem(ss) : "");
		if (r->prepared.ran)
			textout_printf(
			    o, TEXTOUT_RESULT,
			    "prepare: %zu of %zu variants compiled in %.1f s with %d jobs\n",
			    r->prepared.done, r->prepared.asked, r->prepared.seconds, jobs);
		textout_printf(o, TEXTOUT_RESULT, "\n");
		eval_text_header(o, keyw);
		for (size_t i = 0; i < r->nvariants; i++)
			eval_text_row(o, r->keys[i], &r->m[i], keyw);
		char nz[48] = "unknown (the base did not time)";
		if (isfinite(r->noise))
			snprintf(nz, sizeof(nz), "%.2f%%", 100 * r->noise);
		textout_printf(o, TEXTOUT_RESULT,
		               "\nnoise: %s (the spread of %s timed %d times)\n\n%-20s %6s  %6s  "
		               "%-14s %-16s %s\n",
		               nz, base, SESSION_VERIFY_TIMINGS, "param", "values", "tested",
		               "fingerprint", "time > noise", "verdict");
	}
	if (r->prepared.note[0])
		textout_printf(o, TEXTOUT_NOTE,
		               "%s: note: prepare: %s; each build compiles what is missing\n", who,
		               r->prepared.note);
	cJSON *root = cJSON_CreateObject(), *jvars = cJSON_CreateArray(), *jp = cJSON_CreateArray(),
	      *ju = cJSON_CreateArray();
	for (size_t i = 0; i < r->nvariants; i++)
		cJSON_AddItemToArray(jvars, eval_text_json(r->keys[i], &r->m[i]));
	for (size_t p = 0; p < np; p++) {
		const session_verify_param *ps = &r->params[p];
		if (ps->untested)
			cJSON_AddItemToArray(ju, cJSON_CreateString(s->params[p].name));
		if (!json) {
			char a[32], b[32];
			snprintf(a, sizeof(a), "%d of %d", ps->fp_changed, ps->tested);
			snprintf(b, sizeof(b), "%d of %d", ps->time_changed,
			         ps->tested - ps->failed);
			textout_printf(o, TEXTOUT_RESULT, "%-20s %6zu  %6d  %-14s %-16s %s\n",
			               s->params[p].name, s->params[p].nvalues, ps->tested, a, b,
			               ps->verdict);
		}
		cJSON *e = cJSON_CreateObject();
		cJSON_AddStringToObject(e, "name", s->params[p].name);
		cJSON_AddNumberToObject(e, "values", (double)s->params[p].nvalues);
		cJSON_AddNumberToObject(e, "tested", ps->tested);
		cJSON_AddNumberToObject(e, "skipped", ps->skipped);
		cJSON_AddNumberToObject(e, "failed", ps->failed);
		cJSON_AddNumberToObject(e, "fingerprints_changed", ps->fp_changed);
		cJSON_AddNumberToObject(e, "time_changed", ps->time_changed);
		cJSON_AddStringToObject(e, "verdict", ps->verdict);
		cJSON_AddItemToArray(jp, e);
	}
	if (r->base_failed && !json)
		textout_printf(o, TEXTOUT_RESULT, "\n%s: %s %s\n", base,
		               eval_status_name(r->base_fail->status), r->base_fail->error);
	if (!json) {
		if (r->base_stopped)
			textout_printf(o, TEXTOUT_RESULT,
			               "\n%s: FAILED: %s do%s not run (%s); stopped: nothing was "
			               "measured against %s\n",
			               who, base, from ? "es" : "",
			               eval_status_name(r->base_fail->status),
			               from ? "it" : "them");
		else if (r->base_failed && r->base_fail->status != EVAL_OK)
			textout_printf(o, TEXTOUT_RESULT, "\n%s: FAILED: %s do%s not pass\n", who,
			               base, from ? "es" : "");
		else if (r->dead)
			textout_printf(o, TEXTOUT_RESULT,
			               "\n%s: FAILED: a param does not reach the kernel\n", who);
		else if (r->untested)
			textout_printf(o, TEXTOUT_RESULT,
			               "\n%s: nothing proved for %d param(s): no one-at-a-time "
			               "change from %s is "
			               "valid under the constraints\n",
			               who, r->untested, base);
		else
			textout_printf(o, TEXTOUT_RESULT, "\n%s: every param reaches the kernel\n",
			               who);
		textout_flush(o, TEXTOUT_RESULT);
	}
	if (r->untested) {
		if (!json)
			textout_printf(
			    o, TEXTOUT_NOTE,
			    "%s: nothing proved: %d param(s) could not be tested from %s\n", who,
			    r->untested, base);
		verify_text_suggest(o, who, r, s, json, root);
	}
	if (json) {
		cJSON_AddStringToObject(root, "spec", s->path);
		cJSON_AddStringToObject(root, "problem", session_problem(ss));
		cJSON_AddStringToObject(root, "backend", eval_target_backend(session_target(ss)));
		cJSON_AddStringToObject(root, "base", r->base);
		cJSON_AddBoolToObject(root, "base_stopped", r->base_stopped);
		json_add_num(root, "noise", r->noise);
		cJSON_AddNumberToObject(root, "noise_timings", SESSION_VERIFY_TIMINGS);
		cJSON_AddItemToObject(root, "variants", jvars);
		cJSON_AddItemToObject(root, "params", jp);
		cJSON_AddItemToObject(root, "untested", ju);
		cJSON_AddBoolToObject(root, "ok", r->dead == 0 && r->untested == 0);
		char *t = cJSON_Print(root);
		textout_printf(o, TEXTOUT_RESULT, "%s\n", t ? t : "{}");
		free(t);
	} else {
		cJSON_Delete(jvars);
		cJSON_Delete(jp);
		cJSON_Delete(ju);
	}
	cJSON_Delete(root);
}
