/*
 * runreport_text.c — muh report's tables for a person (runreport.h's
 * runreport_text), moved here from the muh program: the run table (each
 * column as wide as its widest cell), the objective and decision under each
 * run, the sustained-clock re-timings, the twins and the status counts;
 * a legend line under the table for each mark it shows ('+', '*').
 * Only rendering: the ranking is best.c's, the reading runreport.c's.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "muh/decide_text.h"
#include "muh/objective.h"
#include "muh/runreport.h"

#define NSTATUS EVAL_NSTATUS

/* Under the table: a run re-timed at sustained clocks, both regimes. */
static void print_retimes(const textout *o, const runreport_run *rs)
{
	const muh_best *b = &rs->b;
	if (!b->nretimes)
		return;
	const store_retime *r0 = &b->retimes[0];
	const char *clock = best_clock_name(best_retime_clock(b->retimes, b->nretimes));
	if (b->regime != BEST_SUSTAINED)
		textout_printf(o, TEXTOUT_RESULT,
		               "\nrun %lld at sustained clocks (after %.3g s of load each): none "
		               "passed; the burst ranking "
		               "stands\n",
		               (long long)rs->r.id, r0->warm_s);
	else
		textout_printf(o, TEXTOUT_RESULT,
		               "\nrun %lld at sustained clocks (after %.3g s of load each): the SM "
		               "clock %s; the fastest "
		               "re-timed is the best\n",
		               (long long)rs->r.id, r0->warm_s, clock);
	textout_printf(o, TEXTOUT_RESULT, "  %4s  %12s  %9s  %12s  %9s  %s\n", "rank", "burst",
	               "SM MHz", "sustained", "SM MHz", "configuration");
	for (size_t i = 0; i < b->nretimes; i++) {
		const store_retime *r = &b->retimes[i];
		char x[32], y[32], xm[32], ym[32];
		text_time(x, sizeof(x), r->burst_s);
		text_time(y, sizeof(y), r->sustained_s);
		snprintf(xm, sizeof(xm), isfinite(r->burst_mhz) ? "%.0f" : "-", r->burst_mhz);
		snprintf(ym, sizeof(ym), isfinite(r->sustained_mhz) ? "%.0f" : "-",
		         r->sustained_mhz);
		textout_printf(o, TEXTOUT_RESULT, "  %4d  %12s  %9s  %12s  %9s  %s%s\n",
		               r->burst_rank, x, xm, y, ym, r->key,
		               b->regime == BEST_SUSTAINED && i == b->retime_winner ? "  <- best"
		                                                                    : "");
	}
}

/* The run table's columns: header, alignment (1: right, for numbers). */
enum {
	RC_RUN,
	RC_SPEC,
	RC_PROBLEM,
	RC_BACKEND,
	RC_VARIANTS,
	RC_OK,
	RC_FAILED,
	RC_BEST,
	RC_DEFAULT,
	RC_SPEEDUP,
	RC_NOISE,
	RC_KEY,
	RC_N
};
static const char *const rc_head[RC_N] = {"run",      "spec",    "problem", "backend",
                                          "variants", "ok",      "failed",  "best",
                                          "default",  "speedup", "noise",   "best variant"};
static const int rc_right[RC_N] = {0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 0};

/* A metric's value (not a score) as the table shows it, as the decision
 * table under it does (objective_format); "-" when not finite. Into cell
 * (4096 bytes). */
static void format_value(const muh_best *b, double v, char *cell)
{
	objective_format(b->objective.metric, v, cell, 4096);
}

/* Run rs's cells of the table, each at most 4095 bytes. */
static void table_cells(const runreport_run *rs, char cell[RC_N][4096])
{
	const muh_best *b = &rs->b;
	/* best and default as the search timed them, so that the speedup
	 * compares like with like; a sustained-clock best is marked '*'. A
	 * decided run's speedup is its decision's: then both are the
	 * decision's medians, measured in the same rounds (marked '+') */
	double bs = b->nranked ? b->ranked[0].burst_score : NAN;
	double dv_best, dv_dflt;
	int decided = best_decided_values(b, &dv_best, &dv_dflt);
	snprintf(cell[RC_RUN], 4096, "%lld", (long long)rs->r.id);
	snprintf(cell[RC_SPEC], 4096, "%s", rs->spec_name);
	snprintf(cell[RC_PROBLEM], 4096, "%s", rs->problem[0] ? rs->problem : "-");
	snprintf(cell[RC_BACKEND], 4096, "%s", rs->backend);
	snprintf(cell[RC_VARIANTS], 4096, "%zu", b->nmeasured);
	snprintf(cell[RC_OK], 4096, "%zu", b->nok);
	snprintf(cell[RC_FAILED], 4096, "%zu", b->nmeasured - b->nok);
	if (!decided) { /* the search's scores as values */
		dv_best = objective_value(&b->objective, bs);
		dv_dflt = objective_value(&b->objective, b->default_score);
	}
	format_value(b, dv_best, cell[RC_BEST]);
	format_value(b, dv_dflt, cell[RC_DEFAULT]);
	if (decided) {
		strcat(cell[RC_BEST], " +");
		if (isfinite(dv_dflt))
			strcat(cell[RC_DEFAULT], " +");
	}
	runreport_speedup_text(cell[RC_SPEEDUP], 4096, rs);
	if (isfinite(rs->r.noise))
		snprintf(cell[RC_NOISE], 4096, "%.2f%%", rs->r.noise * 100);
	else
		snprintf(cell[RC_NOISE], 4096, "-");
	snprintf(cell[RC_KEY], 4096, "%.4000s%s",
	         runreport_best_key(rs) ? runreport_best_key(rs) : "-",
	         b->regime == BEST_SUSTAINED ? " *" : "");
}

/* After a run's objective line: how many of its ok variants miss the
 * objective's SLOs (measured fine, so status ok, but never a candidate),
 * so that "ok" is not read as "meets the objective"; nothing without SLOs
 * or misses. */
static void say_slo_misses(const textout *o, const muh_best *b)
{
	if (!b->objective.nslo || b->nfeasible == b->nok)
		return;
	textout_printf(o, TEXTOUT_RESULT, "; %zu of %zu ok variants miss its SLOs", b->nok - b->nfeasible, b->nok);
	if (b->nfeasible)
		textout_printf(o, TEXTOUT_RESULT, ", the best is ranked among the %zu that meet them", b->nfeasible);
	else
		textout_printf(o, TEXTOUT_RESULT, ", none meets them");
}

void runreport_text(const textout *o, const runreport *cx)
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
		textout_printf(o, TEXTOUT_RESULT, rc_right[c] ? "%*s  " : "%-*s  ", w[c],
		               rc_head[c]);
	textout_printf(o, TEXTOUT_RESULT, "%s\n", rc_head[RC_N - 1]);
	for (size_t i = 0; i < cx->n; i++) {
		table_cells(&cx->runs[i], cell);
		for (int c = 0; c < RC_N - 1; c++)
			textout_printf(o, TEXTOUT_RESULT, rc_right[c] ? "%*s  " : "%-*s  ", w[c],
			               cell[c]);
		textout_printf(o, TEXTOUT_RESULT, "%s\n", cell[RC_N - 1]);
	}
	for (size_t i = 0; i < cx->n; i++) {
		double bv, dv;
		if (best_decided_values(&cx->runs[i].b, &bv, &dv)) {
			textout_printf(o, TEXTOUT_RESULT,
			               "+ as the decision stage re-measured them, paired: the "
			               "medians of the rounds its speedup comes from\n");
			break;
		}
	}
	for (size_t i = 0; i < cx->n; i++) {
		if (isfinite(cx->runs[i].r.noise)) {
			textout_printf(o, TEXTOUT_RESULT,
			               "noise: the defaults timed twice, back to back, before the "
			               "search: how far apart their two medians came (muh tune's noise "
			               "line); a search's speedup within it reads 'tie'\n");
			break;
		}
	}
	for (size_t i = 0; i < cx->n; i++) {
		if (cx->runs[i].b.regime == BEST_SUSTAINED) {
			textout_printf(o, TEXTOUT_RESULT,
			               "* the best re-timed at sustained clocks, interleaved (the "
			               "tables below); best and default stay the search's times\n");
			break;
		}
	}
	for (size_t i = 0; i < cx->n; i++) {
		const runreport_run *rs = &cx->runs[i];
		const muh_best *b = &rs->b;
		if (objective_is_time(&b->objective)) {
			if (b->objective.nslo && b->nfeasible < b->nok) { /* a time under SLOs */
				char desc[1024];
				objective_describe(&b->objective, desc, sizeof(desc));
				textout_printf(o, TEXTOUT_RESULT, "\nrun %lld: %s", (long long)rs->r.id, desc);
				say_slo_misses(o, b);
				textout_printf(o, TEXTOUT_RESULT, "\n");
			}
			if (b->decision) { /* a kernel's decision: against what ships, or the
				              defaults */
				textout_printf(o, TEXTOUT_RESULT, "\nrun %lld:\n",
				               (long long)rs->r.id);
				decide_text_table(o, b->decision, &b->objective, b->default_key,
				                  "  ");
				decide_text_rounds(o, b->decision, "  ");
			}
			continue;
		}
		char desc[1024], t[32];
		objective_describe(&b->objective, desc, sizeof(desc));
		textout_printf(o, TEXTOUT_RESULT, "\nrun %lld: %s", (long long)rs->r.id, desc);
		say_slo_misses(o, b);
		if (runreport_any_differs(rs)) {
			objective_format(b->objective.metric, objective_value(&b->objective, b->any_score), t,
			                 sizeof(t));
			textout_printf(o, TEXTOUT_RESULT, "; ignoring the SLOs the best is %s  %s",
			               t, b->any_key);
		}
		textout_printf(o, TEXTOUT_RESULT, "\n");
		if (b->decision) {
			decide_text_table(o, b->decision, &b->objective, b->default_key, "  ");
			decide_text_rounds(o, b->decision, "  ");
		}
	}
	for (size_t i = 0; i < cx->n; i++)
		print_retimes(o, &cx->runs[i]);
	for (size_t i = 0; i < cx->n; i++) { /* identical code timed apart over the run */
		const runreport_run *rs = &cx->runs[i];
		size_t twins;
		const char *slow, *fast;
		double r = best_twins(&rs->b, &twins, &slow, &fast), bv, dv;
		if (!isfinite(r) || !objective_is_time(&rs->b.objective))
			continue;
		char *line = malloc(8192); /* the keys of two variants: too big for the stack of a library */
		if (!line)
			continue;
		best_twins_note(line, 8192, twins, r, slow, fast, rs->r.noise,
		                best_decided_values(&rs->b, &bv, &dv));
		textout_printf(o, TEXTOUT_RESULT, "\nrun %lld: %s\n", (long long)rs->r.id, line);
		free(line);
	}
	int said = 0; /* timings that ended short of measure.ci: a line a run, the why once */
	for (size_t i = 0; i < cx->n; i++) {
		const muh_best *b = &cx->runs[i].b;
		if (!b->nwide)
			continue;
		textout_printf(o, TEXTOUT_RESULT,
		               "%srun %lld: %zu of %zu ok timings ended with the median's 95%% CI "
		               "wider than measure.ci (%.3g%%)\n",
		               said++ ? "" : "\n", (long long)cx->runs[i].r.id, b->nwide, b->nok,
		               100 * b->ci_frac);
	}
	if (said)
		textout_printf(o, TEXTOUT_RESULT,
		               "  (timing ended at measure.max_samples, max_time or fixed rounds: "
		               "those variants' ranks are not sure,\n   and a replay of the run "
		               "ranks by their medians)\n");
	textout_printf(o, TEXTOUT_RESULT, "\nstatus:");
	for (int k = 0; k < NSTATUS; k++)
		if (cx->total[k])
			textout_printf(o, TEXTOUT_RESULT, "  %s %zu",
			               eval_status_name((enum eval_status)k), cx->total[k]);
	textout_printf(o, TEXTOUT_RESULT, "\n");
}
