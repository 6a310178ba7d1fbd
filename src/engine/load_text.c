/*
 * load_text.c — what muh load shows (load.h's load_text_*), moved here
 * from the muh program: the table of runs (times in ms), a run as one JSON
 * line, and load_find_rate's steps and answer. Only rendering; the numbers
 * are load.c's and load_rate.c's.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include <cjson/cJSON.h>

#include "muh/load.h"
#include "muh/objective.h"
#include "json_int.h"

/* A duration in ms for the table: "-" when none. */
static const char *ms(char *b, size_t n, double s)
{
	if (!isfinite(s))
		snprintf(b, n, "-");
	else if (s * 1e3 < 100)
		snprintf(b, n, "%.2f", s * 1e3);
	else
		snprintf(b, n, "%.0f", s * 1e3);
	return b;
}

const char *load_text_usage_held(char *b, size_t n, const load_opts *o)
{
	snprintf(b, n,
	         "too few chunks with text (fewer than %d) to hold the usage blocks to %.2fx of them "
	         "(load.chunk_tolerance); held to %gx, the most tokens a chunk carries",
	         LOAD_USAGE_MIN_CHUNKS, load_usage_ratio(o, 1), load_usage_ratio(o, 0));
	return b;
}

void load_text_header(const textout *o)
{
	textout_printf(o, TEXTOUT_RESULT,
	               "%-12s %8s %6s %6s %5s %9s %7s %7s %7s  %-20s  %-20s  %-20s  %-20s\n", "", "",
	               "", "", "", "", "", "", "", "TTFT ms", "ITL ms", "TPOT ms", "E2E ms");
	textout_printf(o, TEXTOUT_RESULT, "%-12s %8s %6s %6s %5s %9s %7s %7s %7s ", "step", "requests",
	               "ok", "errors", "trunc", "tokens/s", "req/s", "goodput", "sent/s");
	for (int i = 0; i < 4; i++)
		textout_printf(o, TEXTOUT_RESULT, " %6s %6s %6s ", "p50", "p90", "p99");
	textout_printf(o, TEXTOUT_RESULT, "\n");
}

void load_text_row(const textout *o, const char *label, const load_result *r)
{
	char a[32], b[32], c[32], t[32], sp[32];
	if (isfinite(r->sent_per_s))
		snprintf(sp, sizeof(sp), "%.2f", r->sent_per_s);
	else
		snprintf(sp, sizeof(sp), "-");
	textout_printf(o, TEXTOUT_RESULT, "%-12s %8zu %6zu %6zu %5zu %9s %7.2f %7.2f %7s ", label,
	               r->sent, r->ok, r->errors, r->truncated,
	               text_count(t, sizeof(t), r->output_tokens_per_s), r->requests_per_s,
	               r->goodput_rps, sp);
	const load_dist *ds[4] = {&r->ttft, &r->itl, &r->tpot, &r->e2e};
	for (int i = 0; i < 4; i++)
		textout_printf(o, TEXTOUT_RESULT, " %6s %6s %6s ", ms(a, sizeof(a), ds[i]->p50),
		               ms(b, sizeof(b), ds[i]->p90), ms(c, sizeof(c), ds[i]->p99));
	textout_printf(o, TEXTOUT_RESULT, "\n");
	textout_flush(o, TEXTOUT_RESULT);
}

/* r as one JSON line with the step's shape added. */
void load_text_json(const textout *out, const char *label, const load_opts *o, const load_result *r)
{
	char *s = load_result_to_json(r);
	cJSON *j = s ? cJSON_Parse(s) : NULL;
	free(s);
	if (!j) {
		textout_printf(out, TEXTOUT_RESULT, "%s\n", "{}");
		return;
	}
	cJSON_AddStringToObject(j, "step", label);
	cJSON_AddNumberToObject(j, "warmup", o->warmup); /* requests before it, not measured */
	if (o->rate > 0) {
		cJSON_AddNumberToObject(j, "rate", o->rate);
		cJSON_AddNumberToObject(j, "burstiness", o->burstiness);
	} else {
		cJSON_AddNumberToObject(j, "concurrency", o->concurrency);
	}
	char *t = cJSON_PrintUnformatted(j);
	textout_printf(out, TEXTOUT_RESULT, "%s\n", t ? t : "{}");
	free(t);
	cJSON_Delete(j);
	textout_flush(out, TEXTOUT_RESULT);
}

void load_text_rate(const textout *out, const load_opts *o, const load_rate_result *fr, int json)
{
	if (json) {
		cJSON *j = cJSON_CreateObject(), *arr = cJSON_AddArrayToObject(j, "steps");
		for (size_t i = 0; i < fr->nsteps; i++) {
			const load_rate_step *st = &fr->steps[i];
			cJSON *e = cJSON_CreateObject();
			cJSON_AddNumberToObject(e, "rate", st->rate);
			cJSON_AddBoolToObject(e, "met", st->met);
			cJSON_AddNumberToObject(e, "requests_per_s", st->requests_per_s);
			json_add_finite(e, "ttft_p99", st->ttft_p99);
			json_add_finite(e, "tpot_p99", st->tpot_p99);
			cJSON_AddNumberToObject(e, "errors", (double)st->errors);
			if (st->why[0])
				cJSON_AddStringToObject(e, "why", st->why);
			cJSON_AddItemToArray(arr, e);
		}
		cJSON_AddNumberToObject(j, "max_rate", fr->rate);
		cJSON_AddNumberToObject(j, "lo", fr->lo);
		json_add_finite(j, "hi", fr->hi);
		textout_json(out, j, 0);
	} else {
		textout_printf(out, TEXTOUT_RESULT,
		               "find-rate: the highest Poisson rate with no error%s%s%s%s\n\n",
		               o->slo_ttft_s > 0 ? ", ttft_p99 within " : "",
		               o->slo_ttft_s > 0 ? "--slo-ttft" : "",
		               o->slo_tpot_s > 0 ? ", tpot_p99 within " : "",
		               o->slo_tpot_s > 0 ? "--slo-tpot" : "");
		textout_printf(out, TEXTOUT_RESULT, "%4s  %12s  %4s  %10s  %10s  %10s  %s\n",
		               "step", "offered", "met", "req/s", "ttft_p99", "tpot_p99",
		               "why not");
		for (size_t i = 0; i < fr->nsteps; i++) {
			const load_rate_step *st = &fr->steps[i];
			char off[32], a[32], b[32];
			if (st->rate > 0)
				snprintf(off, sizeof(off), "%.3g/s", st->rate);
			else
				snprintf(off, sizeof(off), "conc %d", o->concurrency);
			objective_format("ttft_p99", st->ttft_p99, a, sizeof(a));
			objective_format("tpot_p99", st->tpot_p99, b, sizeof(b));
			textout_printf(out, TEXTOUT_RESULT,
			               "%4zu  %12s  %4s  %10.3g  %10s  %10s  %s\n", i + 1, off,
			               st->met ? "yes" : "no", st->requests_per_s, a, b, st->why);
		}
		if (fr->rate > 0)
			textout_printf(out, TEXTOUT_RESULT,
			               "\nmax rate    %.3g req/s (the bracket: %.3g met, %s)\n",
			               fr->rate, fr->lo,
			               isfinite(fr->hi)
			                   ? "the next tried did not"
			                   : "nothing tried failed: the server may go higher");
		else
			textout_printf(
			    out, TEXTOUT_RESULT, "\nmax rate    none: no rate tried %s\n",
			    o->slo_ttft_s > 0 || o->slo_tpot_s > 0 ? "met the SLOs"
			                                           : "ran without an error");
	}
}

void load_text_opening(const textout *out, const load_opts *o, int sweep)
{
	textout_printf(out, TEXTOUT_RESULT, "load: %s%s, ", o->url, o->endpoint);
	if (o->dataset[0])
		textout_printf(out, TEXTOUT_RESULT, "prompts from %s, ", o->dataset);
	else
		textout_printf(out, TEXTOUT_RESULT, "%d-word prompts%s, ", o->prompt_tokens,
		               o->prefix_tokens ? " (shared prefix)" : "");
	textout_printf(out, TEXTOUT_RESULT, "%d output tokens%s, ", o->output_tokens,
	               o->ignore_eos ? " (ignore_eos)" : "");
	if (load_requests(o))
		textout_printf(out, TEXTOUT_RESULT, "%d requests", load_requests(o));
	else
		textout_printf(out, TEXTOUT_RESULT, "for %g s", o->duration_s);
	if (sweep)
		textout_printf(out, TEXTOUT_RESULT, " a step");
	if (o->warmup)
		textout_printf(out, TEXTOUT_RESULT, "%s after a warm-up of %d", sweep ? "," : "",
		               o->warmup);
	textout_printf(out, TEXTOUT_RESULT, "\n\n");
}

void load_text_rate_note(const textout *out, const load_opts *o, size_t sent)
{
	if (sent < 2)
		return;
	double k = o->burstiness > 0 ? o->burstiness : 1;
	char gaps[64] = "Poisson";
	if (k != 1)
		snprintf(gaps, sizeof(gaps), "gamma-spaced (burstiness %g)", k);
	textout_flush(out, TEXTOUT_RESULT); /* after the rows it is about */
	textout_printf(out, TEXTOUT_NOTE,
	               "muh load: note: a rate row's arrivals are %s at the rate named: %zu requests "
	               "typically come within %.0f%% of it (one standard deviation), so req/s can exceed "
	               "it; sent/s is the rate they went out at (--requests more for a closer one)\n",
	               gaps, sent, 100.0 / sqrt(k * (double)(sent - 1)));
}

void load_text_wall(const textout *o, const load_result *r)
{
	char a[32], b[32];
	textout_printf(o, TEXTOUT_RESULT,
	               "\nwall %.2f s; %s completion and %s prompt tokens (server's usage); %zu "
	               "within the SLOs\n",
	               r->wall_s, text_count(a, sizeof(a), (double)r->completion_tokens),
	               text_count(b, sizeof(b), (double)r->prompt_tokens), r->good);
}
