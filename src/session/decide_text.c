/*
 * decide_text.c — the decision stage's table for a person (decide_text.h),
 * moved here from the muh program: muh tune prints it after the rounds,
 * muh report under each run that had a stage. Only rendering; the verdicts
 * are decide.c's.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "muh/decide_text.h"

/* The SLOs cell of one row: "3/4" (its ok repeats within every SLO, of its
 * ok repeats), or "-" when the objective has none to meet. The baseline's
 * row and every finalist's are counted alike. */
static void fmt_slos(char *buf, size_t n, const muh_objective *o, size_t met, size_t ok)
{
	if (o->nslo > 0)
		snprintf(buf, n, "%zu/%zu", met, ok);
	else
		snprintf(buf, n, "-");
}

/* "1.291x" or "-". */
static void fmt_ratio(char *buf, size_t n, double r)
{
	if (isfinite(r))
		snprintf(buf, n, "%.3fx", r);
	else
		snprintf(buf, n, "-");
}

/* "1.102-1.513x" or "-". */
static void fmt_interval(char *buf, size_t n, const stats_ratio *r)
{
	if (isfinite(r->lo) && isfinite(r->hi))
		snprintf(buf, n, "%.3f-%.3fx", r->lo, r->hi);
	else
		snprintf(buf, n, "-");
}

void decide_text_rounds(const textout *f, const decide_summary *sm, const char *lead)
{
	for (size_t i = 0; i < sm->nf; i++) {
		const decide_finalist *F = &sm->f[i];
		if (F->round_lo_at < 0)
			continue;
		char lo[32], hi[32];
		snprintf(lo, sizeof(lo), "%.3fx", F->round_lo);
		snprintf(hi, sizeof(hi), "%.3fx", F->round_hi);
		if (!strcmp(lo, hi))
			textout_printf(f, TEXTOUT_RESULT, "%sper round   %s: %s in every paired round\n", lead, F->key, lo);
		else
			textout_printf(f, TEXTOUT_RESULT, "%sper round   %s: %s (round %d) to %s (round %d)\n", lead,
			               F->key, lo, F->round_lo_at + 1, hi, F->round_hi_at + 1);
	}
}

void decide_text_table(const textout *f, const decide_summary *sm, const muh_objective *o,
                       const char *default_key, const char *lead)
{
	char pct[32], v[64], g[32], ci[64], slo[32];
	/* the baseline is what ships when it is not the defaults */
	int ships = decide_baseline_ships(sm, default_key);
	const char *base = ships ? "the baseline" : "the defaults";
	double level = isfinite(sm->level) ? sm->level : NAN;
	if (isfinite(level))
		snprintf(pct, sizeof(pct), "%.1f%%", 100 * level);
	else
		snprintf(pct, sizeof(pct), "-");
	if (!sm->nf) {
		textout_printf(f, TEXTOUT_RESULT, "%sdecision    %s; %s stay%s\n", lead,
		               sm->why[0] ? sm->why : "no finalist",
		               ships ? "the baseline's values" : "the defaults", ships ? "" : "");
		return;
	}
	textout_printf(f, TEXTOUT_RESULT,
	               "%sdecision    %s and the top %zu%s re-measured afresh in %zu round(s), the "
	               "order alternated "
	               "each round; 'paired gain' is the geometric mean of the per-round ratios to "
	               "%s, with its "
	               "%s interval (each look's level, so that over every look and finalist a tie "
	               "is called a gain at "
	               "most 5%% of the time); the metric is the median of the repeats\n",
	               lead, base, sm->nf - (sm->defaults_f >= 0),
	               sm->defaults_f >= 0 ? " (and the defaults)" : "", sm->rounds, base, pct);
	int kw = (int)strlen(sm->baseline) + 11;
	for (size_t i = 0; i < sm->nf; i++)
		if ((int)strlen(sm->f[i].key) > kw)
			kw = (int)strlen(sm->f[i].key);
	if (kw < 8)
		kw = 8;
	int mw = (int)strlen(o->metric) > 14 ? (int)strlen(o->metric) : 14;
	char ch[48];
	snprintf(ch, sizeof(ch), "%s CI", pct);
	textout_printf(f, TEXTOUT_RESULT, "%s  %-*s  %7s  %3s  %5s  %*s  %11s  %13s  %s\n", lead,
	               kw, "variant", "repeats", "ok", "SLOs", mw, o->metric, "paired gain", ch,
	               "verdict");
	char bk[4200];
	snprintf(bk, sizeof(bk), "%s (%s)", sm->baseline, ships ? "baseline" : "defaults");
	objective_format(o->metric, sm->base_value, v, sizeof(v));
	fmt_slos(slo, sizeof(slo), o, sm->base_slo_met, sm->base_ok);
	/* its first failure, else its first SLO miss */
	const char *bwhy = sm->base_why[0] ? sm->base_why : sm->base_slo_why;
	textout_printf(f, TEXTOUT_RESULT, "%s  %-*s  %7zu  %3zu  %5s  %*s  %11s  %13s  %s%s%s\n",
	               lead, kw, bk, sm->base_repeats, sm->base_ok, slo, mw, v, "-", "-",
	               "baseline", bwhy[0] ? ": " : "", bwhy);
	for (size_t i = 0; i < sm->nf; i++) {
		const decide_finalist *F = &sm->f[i];
		objective_format(o->metric, F->value, v, sizeof(v));
		fmt_ratio(g, sizeof(g), F->gain.ratio);
		fmt_interval(ci, sizeof(ci), &F->gain);
		fmt_slos(slo, sizeof(slo), o, F->slo_met, F->ok);
		textout_printf(f, TEXTOUT_RESULT,
		               "%s  %-*s  %7zu  %3zu  %5s  %*s  %11s  %13s  %s%s%s\n", lead, kw,
		               F->key, F->repeats, F->ok, slo, mw, v, g,
		               ci, decide_verdict_name(F->verdict),
		               F->why[0] && F->verdict >= DECIDE_SLO_MISS ? ": " : "",
		               F->verdict >= DECIDE_SLO_MISS ? F->why : "");
	}
	if (sm->winner >= 0) {
		const decide_finalist *W = &sm->f[sm->winner];
		fmt_interval(ci, sizeof(ci), &W->gain);
		textout_printf(f, TEXTOUT_RESULT, "%swinner      %s: %.3fx %s (%s CI %s over %zu paired rounds)%s",
		               lead, W->key, W->gain.ratio, base, pct, ci, W->gain.n,
		               o->nslo > 0 ? ", every repeat within the SLOs" : "");
		if (ships && isfinite(sm->vs_defaults.ratio)) {
			fmt_interval(ci, sizeof(ci), &sm->vs_defaults);
			textout_printf(f, TEXTOUT_RESULT, "; %.3fx the defaults (%s)",
			               sm->vs_defaults.ratio, ci);
		}
		if (sm->runner_up >= 0 && isfinite(sm->vs_runner_up.ratio)) {
			fmt_interval(ci, sizeof(ci), &sm->vs_runner_up);
			int tie = !(sm->vs_runner_up.lo > 1);
			/* in a tie, the runner-up's own median may be the better one: the
			 * medians are unpaired, the winner is named by its paired gain */
			const decide_finalist *R = &sm->f[sm->runner_up];
			int better = o->maximize ? R->value > W->value : R->value < W->value;
			textout_printf(f, TEXTOUT_RESULT, "; %.3fx the runner-up (%s)%s%s",
			               sm->vs_runner_up.ratio, ci, tie ? ", a tie between the two" : "",
			               tie && better ? " (named by its paired gain over the baseline; "
			                               "the runner-up's median is the better one)"
			                             : "");
		}
		textout_str(f, TEXTOUT_RESULT, "\n");
	} else {
		if (ships) {
			textout_printf(f, TEXTOUT_RESULT,
			               "%swinner      no proven gain over the baseline: %s; the "
			               "baseline stays (what an emitter "
			               "writes is what ships)",
			               lead, sm->why);
			if (isfinite(sm->vs_defaults.ratio)) {
				fmt_interval(ci, sizeof(ci), &sm->vs_defaults);
				textout_printf(f, TEXTOUT_RESULT, "; it is %.3fx the defaults (%s)",
				               sm->vs_defaults.ratio, ci);
			}
			textout_str(f, TEXTOUT_RESULT, "\n");
		} else {
			textout_printf(f, TEXTOUT_RESULT,
			               "%swinner      no proven gain: %s; the defaults stay (muh "
			               "patch --from writes nothing)\n",
			               lead, sm->why);
		}
	}
}
