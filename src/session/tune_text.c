/*
 * tune_text.c — how a tune shows itself to a person (see tune_text.h),
 * moved here from the muh program so that an engine tuning online gets
 * the same lines.
 *
 * Only rendering: every figure comes from the session's stats, runsum.h's
 * summary, tune_flow.h's events and decide.h's table. Tables and results
 * go to the textout's result stream, notes and the progress bar (only
 * when the caller says it is a terminal) to its note stream; nothing here
 * prints or decides.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "muh/baseline.h"
#include "muh/decide_text.h"
#include "muh/eval.h"
#include "muh/runsum.h"
#include "muh/space.h"
#include "muh/spec.h"
#include "muh/transfer_seeds.h"
#include "muh/tune_flow.h"
#include "muh/tune_text.h"
#include "textcut.h"

/* A score for a person: a time, or the objective's metric ("812.5 tok/s"). */
static void fmt_score(const muh_objective *o, char *buf, size_t n, double score)
{
	if (session_is_slo_miss(score))
		snprintf(buf, n, "slo miss");
	else if (!o || !strcmp(o->metric, "time") || !isfinite(score))
		text_time(buf, n, score);
	else
		objective_format(o->metric, objective_value(o, score), buf, n);
}

void tune_text_json_line(const textout *o, char *txt)
{
	if (txt) {
		textout_str(o, TEXTOUT_RESULT, txt);
		textout_str(o, TEXTOUT_RESULT, "\n");
		textout_flush(o, TEXTOUT_RESULT);
	}
	free(txt);
}

static void draw_bar(tune_view *t, const strategy_event *ev)
{
	const textout *o = t->o;
	if (ev->elapsed_s - t->last_bar < 0.1 && ev->evaluated != ev->budget)
		return;
	t->last_bar = ev->elapsed_s;
	char best[32], eta[32] = "-";
	fmt_score(t->objective, best, sizeof(best), ev->best_s);
	if (ev->evaluated && ev->budget > ev->evaluated) {
		double left =
		    ev->elapsed_s / (double)ev->evaluated * (double)(ev->budget - ev->evaluated);
		snprintf(eta, sizeof(eta), "%d:%02d", (int)(left / 60), (int)fmod(left, 60));
	} else if (ev->budget <= ev->evaluated) {
		snprintf(eta, sizeof(eta), "0:00");
	}
	int width = 24, fill = ev->budget ? (int)(width * ev->evaluated / ev->budget) : width;
	char bar[32];
	for (int i = 0; i < width; i++)
		bar[i] = i < fill ? '#' : '.';
	bar[width] = 0;
	textout_printf(o, TEXTOUT_NOTE, "\r[%s] %llu/%llu  best %s  eta %s  failed %llu \033[K",
	               bar, (unsigned long long)ev->evaluated, (unsigned long long)ev->budget, best,
	               eta, (unsigned long long)ev->failed);
	textout_flush(o, TEXTOUT_NOTE);
}

int tune_text_on_event(void *ctx, const strategy_event *ev)
{
	tune_view *t = ctx;
	const textout *o = t->o;
	int note = ev->kind == STRATEGY_EV_PREDICTED || ev->kind == STRATEGY_EV_SEED_SKIPPED ||
	           ev->kind == STRATEGY_EV_DEFAULT_INVALID;
	if (t->json)
		tune_text_json_line(o, tune_flow_event_json(t->s, ev, t->problem));
	if (ev->kind == STRATEGY_EV_VARIANT && ev->m && ev->m->status == 0 &&
	    eval_usage_checked(session_last_metrics(t->s)) == 0 && !t->unjudged++)
		space_key(t->sp, ev->cfg, t->unjudged1, sizeof(t->unjudged1));
	if (note && !t->json) {
		const muh_spec *s = space_spec(t->sp);
		if (ev->cfg)
			space_key(t->sp, ev->cfg, t->key, sizeof(t->key));
		if (ev->kind == STRATEGY_EV_PREDICTED)
			textout_printf(o, TEXTOUT_NOTE, "%s%s: not measured: %s is %s\n",
			               t->bar ? "\r\033[K" : "", t->who, t->key, ev->reason);
		else if (ev->kind == STRATEGY_EV_SEED_SKIPPED &&
		         !strcmp(ev->source, "transfer")) /* issue 13 */
			textout_printf(o, TEXTOUT_NOTE,
			               "%s: note: transfer seed T%zu (%s) skipped: %s\n", t->who,
			               ev->seed + 1, ev->cfg ? t->key : "?", ev->reason);
		else if (ev->kind == STRATEGY_EV_SEED_SKIPPED)
			textout_printf(o, TEXTOUT_NOTE, "%s:%d: note: seed %zu (%s) skipped: %s\n",
			               s->path, ev->seed_line, ev->seed + 1, ev->cfg ? t->key : "?",
			               ev->reason);
		else
			textout_printf(o, TEXTOUT_NOTE,
			               "%s: note: the defaults (%s) are not measured: %s\n",
			               s->path, t->key, ev->reason);
	}
	if (!note && t->bar)
		draw_bar(t, ev);
	return t->stop && *t->stop;
}

void tune_text_on_note(void *ctx, const session_note *n)
{
	tune_view *t = ctx;
	if (n->kind == SESSION_NOTE_DRIFT && t->json)
		tune_text_json_line(t->o, tune_flow_drift_json(n, t->problem));
	else
		textout_printf(t->o, TEXTOUT_NOTE, "%s%s%s%s\n", t->bar ? "\r\033[K" : "",
		               n->located ? "" : t->who, n->located ? "" : ": ", n->text);
}

/* measure.halving's ladder: per rung, the variants that ran it, those it
 * stopped and the requests it cost (the run's, a resume's stored variants
 * included). */
static void print_rungs(const textout *o, const session_store_info *L)
{
	if (!L->nrungs)
		return;
	long long total = 0;
	for (size_t k = 0; k <= L->nrungs; k++)
		total += L->rungs[k].requests_spent;
	textout_printf(o, TEXTOUT_RESULT, "halving     eta %d, rungs of", L->halving_eta);
	for (size_t k = 0; k <= L->nrungs; k++)
		textout_printf(o, TEXTOUT_RESULT, "%s %d", k ? (k == L->nrungs ? " and" : ",") : "",
		               L->rungs[k].requests);
	textout_printf(o, TEXTOUT_RESULT,
	               " requests (measure.halving); %lld requests in all, warm-up included\n",
	               total);
	for (size_t k = 0; k <= L->nrungs; k++) {
		const session_rung_info *R = &L->rungs[k];
		if (k < L->nrungs)
			textout_printf(o, TEXTOUT_RESULT,
			               "rung %-6d %lld variant(s), %lld stopped, %lld requests\n",
			               R->requests, R->variants, R->stopped, R->requests_spent);
		else
			textout_printf(o, TEXTOUT_RESULT,
			               "full %-6d %lld variant(s), %lld requests\n", R->requests,
			               R->variants, R->requests_spent);
	}
}

/* The measured line: variants measured now, and those answered from the
 * store. On a resume those are an earlier tune's timings, and when nothing
 * was measured now, the noise line's timing of the defaults was this
 * tune's only one: said, so that 'noise' beside '0 variant(s) now' is no
 * riddle. */
static void print_measured(const textout *o, const session_store_info *L)
{
	textout_printf(o, TEXTOUT_RESULT,
	               "measured    %lld variant(s) now; %lld answered from the store", L->measured,
	               L->from_store);
	if (session_store_earlier(L) && L->from_store > 0)
		textout_printf(o, TEXTOUT_RESULT, ", timed by an earlier tune of run %lld%s",
		               (long long)L->run,
		               !L->measured && isfinite(L->noise)
		                   ? " (this tune timed only the defaults, for the noise above)"
		                   : "");
	textout_str(o, TEXTOUT_RESULT, "\n");
}

/* The words after a search's gain line: the decision stage's deferral
 * when one follows, else the unpaired tie rule's verdict (inside the noise,
 * or the two medians' intervals overlap: eval_compare). */
static const char *tie_note(int tie, int decides)
{
	if (decides)
		return "; the search's estimate: the decision stage below decides";
	return tie ? "; a tie: inside the noise" : "";
}

/* The speedup of the best over the defaults, with the interval the two
 * medians' 95% confidence intervals give, and a tie inside the noise. On a
 * noisy run (L.noisy) the ratio alone: no interval the data cannot back.
 * When a decision stage follows (decides), the line is the search's
 * estimate and says so: the stage's paired verdict is the run's one tie
 * rule (decide.h), and the search's unpaired numbers get no verdict of
 * their own that the stage might contradict. */
static void print_live_speedup(const textout *o, muh_session *s, const strategy_result *r,
                               int decides)
{
	const muh_objective *ob = session_objective(s);
	session_store_info L;
	session_store_stats(s, &L);
	runsum_gain g;
	runsum_live_gain(s, r, &g);
	const char *tn = tie_note(g.tie, decides);
	if (g.kind == RUNSUM_GAIN_PER_TOKEN && L.noisy)
		textout_printf(o, TEXTOUT_RESULT,
		               "gain        %.3fx the defaults' output_tokens_per_s (noisy "
		               "machine: no CI)%s\n",
		               g.ratio, tn);
	else if (g.kind == RUNSUM_GAIN_PER_TOKEN &&
	         (g.nbest < 2 || g.ndefaults < 2)) /* one run has no interval */
		textout_printf(o, TEXTOUT_RESULT,
		               "gain        %.3fx the defaults' output_tokens_per_s (one load run "
		               "each: no CI)%s\n",
		               g.ratio, tn);
	else if (g.kind == RUNSUM_GAIN_PER_TOKEN)
		textout_printf(o, TEXTOUT_RESULT,
		               "gain        %.3fx the defaults' output_tokens_per_s (95%% CI "
		               "%.3f-%.3fx, from %zu and "
		               "%zu load runs)%s\n",
		               g.ratio, g.lo, g.hi, g.nbest, g.ndefaults, tn);
	else if (g.kind == RUNSUM_GAIN_METRIC)
		textout_printf(o, TEXTOUT_RESULT, "gain        %.3fx the defaults' %s (%s%s)%s\n",
		               g.ratio, ob->metric,
		               ob->maximize ? "higher is better" : "lower is better",
		               L.noisy ? "; noisy machine: no CI" : "", tn);
	else if (g.kind == RUNSUM_GAIN_TIME && L.noisy)
		textout_printf(o, TEXTOUT_RESULT,
		               "speedup     %.3fx over the defaults (noisy machine: no CI)%s\n",
		               g.ratio, tn);
	else if (g.kind == RUNSUM_GAIN_TIME)
		textout_printf(o, TEXTOUT_RESULT,
		               "speedup     %.3fx over the defaults (95%% CI %.3f-%.3fx)%s\n",
		               g.ratio, g.lo, g.hi, tn);
	print_measured(o, &L);
	if (L.probe_requests > 0)
		textout_printf(o, TEXTOUT_RESULT,
		               "probes      %lld variant(s) stopped after a probe of %d requests: "
		               "failed, or more than %gx "
		               "worse than the best so far (measure.probe)\n",
		               L.probed, L.probe_requests, SESSION_PROBE_WORSE);
	print_rungs(o, &L);
	if (L.drifts)
		textout_printf(o, TEXTOUT_RESULT,
		               "drift       the defaults moved beyond the noise %lld time(s); %lld "
		               "variant(s) measured again "
		               "(the store and the summary hold the new values)\n",
		               L.drifts, L.remeasured);
}

/* The same for a person: one line of device busy, then the sustained
 * ranking when it ran. */
static void print_busy_sustained(const textout *o, muh_session *s)
{
	session_busy_info b;
	session_busy(s, &b);
	/* a server's load is no timed launch: the engine backend has no busy line */
	int engine = eval_backend_is(eval_target_backend(session_target(s)), EVAL_SERVER);
	if (b.measured && b.wall_s > 0 && !engine) {
		textout_printf(o, TEXTOUT_RESULT,
		               "\ndevice      busy %.1f%% of the search's %.1f s: %.3f s inside "
		               "timed launches (timing steps %.1f s, "
		               "builds %.1f s)",
		               100 * b.launches_s / b.wall_s, b.wall_s, b.launches_s, b.steps_s,
		               b.builds_s);
		if (b.prepare_s > 0 && b.wall_s > b.prepare_s)
			textout_printf(o, TEXTOUT_RESULT, "; %.1f%% after the prepare's %.1f s",
			               100 * b.launches_s / (b.wall_s - b.prepare_s), b.prepare_s);
		textout_printf(o, TEXTOUT_RESULT, "\n");
	}
	session_sustained_info I;
	session_sustained(s, &I);
	if (!I.why[0] && !I.ran)
		return;
	if (!I.ran) {
		textout_printf(o, TEXTOUT_RESULT, "sustained   not re-timed: %s\n", I.why);
		return;
	}
	textout_printf(o, TEXTOUT_RESULT, "sustained   %s%s\n", I.why,
	               I.ranked ? ": the fastest re-timed is the winner" : "");
	if (I.n > 1 && I.samples)
		textout_printf(o, TEXTOUT_RESULT,
		               "            the %zu timed interleaved: %zu samples each, the order "
		               "alternated every round\n",
		               I.n, I.samples);
	textout_printf(o, TEXTOUT_RESULT, "  %4s  %12s  %9s  %12s  %9s  %s\n", "rank", "burst",
	               "SM MHz", "sustained", "SM MHz", "configuration");
	for (size_t i = 0; i < I.n; i++) {
		const session_sustained_row *r = &I.rows[i];
		char a[32], c[32];
		text_time(a, sizeof(a), r->burst_s);
		text_time(c, sizeof(c), r->sustained_s);
		textout_printf(o, TEXTOUT_RESULT, "  %4d  %12s  %9.0f  %12s  %9.0f  %s\n",
		               r->burst_rank, a, r->burst_mhz, c, r->sustained_mhz, r->key);
	}
	if (I.ranked) {
		char a[32];
		const session_sustained_row *w = &I.rows[I.winner];
		text_time(a, sizeof(a), w->sustained_s);
		textout_printf(
		    o, TEXTOUT_RESULT,
		    "winner      at sustained clocks: %s  %s (rank %d at burst clocks)\n", a,
		    w->key, w->burst_rank);
		if (w->burst_rank != 1)
			textout_printf(o, TEXTOUT_RESULT,
			               "            the store's best: muh report and muh patch "
			               "name this one, not the search's "
			               "best above\n");
	}
}

/* When the store's best of the run (what report and patch name) is neither
 * the search's best nor the re-timing's winner printed above: a variant
 * measured by an earlier search of the run, outside this one's budget. */
static void print_store_best(const textout *o, muh_session *s, const strategy_result *r)
{
	char key[4096], a[32];
	double score;
	size_t nmeasured;
	if (!runsum_store_best_other(s, r, key, sizeof(key), &score, &nmeasured))
		return;
	fmt_score(session_objective(s), a, sizeof(a), score);
	textout_printf(o, TEXTOUT_RESULT,
	               "store       the run's best is %s  %s, of the %zu variants the run has "
	               "measured (an earlier\n"
	               "            search of it measured more than this one reached): muh report "
	               "and muh patch name it\n",
	               a, key, nmeasured);
}

/* Every variant of a live run with a measured-metric objective, and the
 * two winners: under the SLOs (the strategy's best) and ignoring them. */
struct summary {
	const textout *out;
	const muh_objective *o;
	int keyw;
	/* the table's metric columns: the objective's, each SLO's, then
	 * ttft_p99 and tpot_p50 for context; each as wide as its name */
	const char *col[OBJECTIVE_MAX_SLO + 3];
	int colw[OBJECTIVE_MAX_SLO + 3], ncol;
	int cut; /* rows whose why was cut to fit */
};

/* The metric columns of S's table (summary_cols: no name twice). */
static void summary_cols(struct summary *S)
{
	const char *want[OBJECTIVE_MAX_SLO + 3];
	int n = 0;
	want[n++] = S->o->metric;
	for (int i = 0; i < S->o->nslo && i < OBJECTIVE_MAX_SLO; i++)
		want[n++] = S->o->slo[i].metric;
	want[n++] = "ttft_p99";
	want[n++] = "tpot_p50";
	S->ncol = 0;
	for (int i = 0; i < n; i++) {
		int dup = 0;
		for (int j = 0; j < S->ncol; j++)
			dup |= !strcmp(S->col[j], want[i]);
		if (dup)
			continue;
		int w = (int)strlen(want[i]);
		S->colw[S->ncol] = w > 10 ? w : 10;
		S->col[S->ncol++] = want[i];
	}
}

static void summary_row(void *ud, const store_row *row, int feas, const char *why)
{
	struct summary *S = ud;
	const textout *o = S->out;
	const muh_measurement *m = row->m;
	const char *note = m->status != EVAL_OK ? m->error : feas ? "" : why;
	textout_printf(o, TEXTOUT_RESULT, "  %-*s  %-12s", S->keyw, row->key,
	               m->status == EVAL_OK && !feas ? "slo_miss" : eval_status_name(m->status));
	for (int c = 0; c < S->ncol; c++) {
		char v[32];
		objective_format(S->col[c], measurement_metric(m, S->col[c]), v, sizeof(v));
		textout_printf(o, TEXTOUT_RESULT, "  %*s", S->colw[c], v);
	}
	char cut[128]; /* a long error: its first words, then how much more (muh export shows it whole) */
	text_cut(cut, sizeof(cut), note);
	textout_printf(o, TEXTOUT_RESULT, "%s%s\n", *note ? "  " : "", cut);
	if (strlen(cut) < strlen(note))
		S->cut++;
}

static int summary_keyw(void *ud, const store_row *row)
{
	int *w = ud, n = (int)strlen(row->key);
	*w = n > *w ? n : *w;
	return 0;
}

void tune_text_summary(const textout *o, muh_store *st, int64_t run, const muh_objective *objective,
                       int json)
{
	struct summary S = {.out = o, .o = objective, .keyw = 13};
	objective_winners w;
	size_t rows, ok, missed;
	if (json) {
		runsum_slo_winners(st, run, objective, NULL, NULL, &w, &rows, &ok, &missed);
		tune_text_json_line(o, runsum_winners_json(objective, &w, rows, missed));
		return;
	}
	store_foreach(st, run, summary_keyw, &S.keyw);
	char desc[1024], a[32], b[32];
	objective_describe(objective, desc, sizeof(desc));
	summary_cols(&S);
	textout_printf(o, TEXTOUT_RESULT, "\nobjective   %s\n", desc);
	textout_printf(o, TEXTOUT_RESULT, "  %-*s  %-12s", S.keyw, "configuration", "status");
	for (int c = 0; c < S.ncol; c++)
		textout_printf(o, TEXTOUT_RESULT, "  %*s", S.colw[c], S.col[c]);
	textout_printf(o, TEXTOUT_RESULT, "  why\n");
	runsum_slo_winners(st, run, objective, summary_row, &S, &w, &rows, &ok, &missed);
	if (S.cut)
		textout_printf(o, TEXTOUT_RESULT,
		               "            (%d why(s) cut to fit: `muh export STORE` has each whole, in "
		               "its error column)\n",
		               S.cut);
	objective_format(objective->metric, objective_value(objective, w.best), a, sizeof(a));
	objective_format(objective->metric, objective_value(objective, w.best_any), b, sizeof(b));
	/* the search's bests, each from one measurement: a winner is what the
	 * decision stage proves (decide_stage), never these */
	textout_printf(o, TEXTOUT_RESULT, "search      best under the SLOs: %s  %s\n",
	               isfinite(w.best) ? a : "none",
	               isfinite(w.best) ? w.key : "(no variant met them)");
	if (isfinite(w.best_any) && strcmp(w.key_any, w.key))
		textout_printf(o, TEXTOUT_RESULT,
		               "search      best ignoring the SLOs: %s  %s (misses: %s)\n", b,
		               w.key_any, w.why_any);
	else if (isfinite(w.best_any))
		textout_printf(o, TEXTOUT_RESULT,
		               "search      best ignoring the SLOs: the same variant\n");
}

void tune_text_result(const tune_view *v, const strategy_opts *so, const strategy_result *r,
                      size_t topk, int rc, int decides, int decision)
{
	const textout *o = v->o;
	muh_session *s = v->s;
	if (v->json) {
		tune_text_json_line(o, runsum_result_json(s, so, r, topk, rc, decision));
		return;
	}
	const muh_space *sp = session_space(s);
	session_replay_info ri;
	session_replay_stats(s, &ri);
	session_store_info si;
	session_store_stats(s, &si);
	int live = session_evaluator(s) != NULL ||
	           session_store(s) != NULL; /* measured here or by a pool */
	const muh_objective *objective = session_objective(s);
	size_t np = space_nparams(sp);
	uint32_t *cfg = malloc((np + 1) * sizeof(uint32_t));
	uint64_t *top = malloc((topk + 1) * sizeof(uint64_t));
	char key[4096], a[32], b[32];
	if (!cfg || !top) {
		free(cfg);
		free(top);
		return;
	}
	size_t ntop = strategy_top(r, topk, top);
	runsum_scores sc;
	runsum_scores_of(s, r, &sc);
	double dflt = sc.defaults, best = sc.best, base_s = sc.baseline;
	const baseline_pick *bp = sc.bp;
	long bi = sc.baseline_record;
	textout_printf(
	    o, TEXTOUT_RESULT,
	    "\nevaluated   %llu of a budget of %llu (%llu failed) in %.2f s; stopped: %s\n",
	    (unsigned long long)(r->nrecords - r->predicted), (unsigned long long)r->budget,
	    (unsigned long long)r->failed, r->seconds, runsum_stop_name(r->stop, rc));
	if (r->predicted)
		textout_printf(o, TEXTOUT_RESULT,
		               "hidden      %llu configuration(s) not measured: predicted to fail "
		               "to start, like one "
		               "that did (measure.hidden_constraints)\n",
		               (unsigned long long)r->predicted);
	if (!r->have_best) {
		textout_printf(o, TEXTOUT_RESULT, "best        none: %s\n",
		               r->nrecords > r->predicted ? "every evaluated variant failed"
		                                          : "nothing was evaluated");
		free(cfg);
		free(top);
		return;
	}
	space_config_at(sp, r->records[r->best].index, cfg);
	space_key(sp, cfg, key, sizeof(key));
	fmt_score(objective, a, sizeof(a), best);
	if (session_is_slo_miss(best))
		textout_printf(
		    o, TEXTOUT_RESULT,
		    "best        none met the SLOs; the nearest miss: %s  (evaluation %llu)\n", key,
		    (unsigned long long)r->best + 1);
	else
		textout_printf(o, TEXTOUT_RESULT,
		               "best        %s  %s  (found at evaluation %llu)\n", a, key,
		               (unsigned long long)r->best + 1);
	if (r->have_default) {
		space_config_at(sp, r->records[0].index, cfg);
		space_key(sp, cfg, key, sizeof(key));
		fmt_score(objective, b, sizeof(b), dflt);
		textout_printf(o, TEXTOUT_RESULT, "default     %s  %s\n", b, key);
		if (isfinite(dflt) && live && !session_is_slo_miss(best))
			print_live_speedup(o, s, r, decides);
		else if (live && session_is_slo_miss(best))
			print_measured(o, &si), print_rungs(o, &si);
		else if (isfinite(dflt) && !session_is_slo_miss(best) && !session_is_slo_miss(dflt))
			textout_printf(
			    o, TEXTOUT_RESULT,
			    "speedup     %.3fx over the defaults (replay: one time per variant, no "
			    "confidence interval)\n",
			    dflt / best);
	} else if (so->skip_defaults) {
		textout_printf(
		    o, TEXTOUT_RESULT,
		    "default     not measured: --no-defaults (the search's own start instead)\n");
	} else {
		textout_printf(
		    o, TEXTOUT_RESULT,
		    "default     not measured: the defaults are not valid in this space\n");
	}
	if (bp) {
		fmt_score(objective, b, sizeof(b), base_s);
		if (isfinite(base_s) && !session_is_slo_miss(base_s))
			textout_printf(
			    o, TEXTOUT_RESULT,
			    "baseline    %s  %s  (what ships: %s); the search's best is %.3fx "
			    "it%s\n",
			    b, bp->key, bp->from, base_s / best,
			    live ? ", one measurement each (the decision below pairs them)" : "");
		else
			textout_printf(o, TEXTOUT_RESULT, "baseline    %s  (what ships: %s): %s\n",
			               bp->key, bp->from,
			               bi < 0 ? "not measured (out of budget, or stopped)"
			                      : "it did not measure ok");
	}
	if (ri.exhaustive) {
		fmt_score(objective, a, sizeof(a), ri.best_s);
		textout_printf(
		    o, TEXTOUT_RESULT,
		    "optimum     %s (exhaustive, from the replay file): this run reached %.1f%% of "
		    "it\n",
		    a, 100.0 * ri.best_s / best);
		double all, own;
		if (session_replay_score(s, r, &all, &own) > 0) {
			textout_printf(o, TEXTOUT_RESULT,
			               "score       %+.3f over its %" PRIu64
			               " evaluations (Willemsen et al.: 0 is random search, 1 the "
			               "optimum at once)",
			               all, r->nrecords - r->predicted);
			if (isfinite(own) && r->have_default)
				textout_printf(o, TEXTOUT_RESULT,
				               "; %+.3f over the search's own proposals, without "
				               "the head start",
				               own);
			textout_printf(o, TEXTOUT_RESULT, "\n");
		}
	}
	const char *mname = objective ? objective->metric : "time";
	int vw = (int)strlen(mname) > 12 ? (int)strlen(mname) : 12;
	textout_printf(o, TEXTOUT_RESULT, "\n%4s  %*s  %8s   %10s  %6s  %-9s  %s\n", "rank", vw,
	               mname, "ci", "vs default", "eval", "source", "configuration");
	int nwide = 0;
	for (size_t k = 0; k < ntop; k++) {
		const strategy_record *rec = &r->records[top[k]];
		space_config_at(sp, rec->index, cfg);
		space_key(sp, cfg, key, sizeof(key));
		fmt_score(objective, a, sizeof(a), rec->time_s);
		if (isfinite(dflt) && !session_is_slo_miss(dflt) &&
		    !session_is_slo_miss(rec->time_s))
			snprintf(b, sizeof(b), "%.3fx", dflt / rec->time_s);
		else
			snprintf(b, sizeof(b), "-");
		char ci[32] = "-";
		double rel;
		int wide = 0;
		if (session_told_ci(s, rec->index, &rel, &wide)) {
			snprintf(ci, sizeof(ci), "+-%.1f%%", 100 * rel);
			nwide += wide;
		}
		textout_printf(o, TEXTOUT_RESULT, "%4zu  %*s  %8s%c  %10s  %6llu  %-9s  %s\n", k + 1,
		               vw, a, ci, wide ? '!' : ' ', b, (unsigned long long)top[k] + 1,
		               rec->source, key);
	}
	if (nwide)
		textout_printf(o, TEXTOUT_RESULT,
		               "%d row(s) marked !: timing stopped at a cap (measure.max_samples "
		               "or max_time) with the median's 95%% CI wider than measure.ci;\n"
		               "their ranks are not sure (`muh eval --interleave` compares a few, "
		               "paired)\n",
		               nwide);
	if (live)
		print_busy_sustained(o, s);
	print_store_best(o, s, r);
	free(cfg);
	free(top);
}
void tune_text_on_decide(void *ctx, const decide_event *e)
{
	const tune_view *t = ctx;
	const textout *o = t->o;
	if (t->json || !t->bar)
		return;
	char v[64];
	objective_format(t->objective->metric, e->value, v, sizeof(v));
	textout_printf(o, TEXTOUT_NOTE, "\r\033[Kdecide  round %d, %d of %d: %s%s  %s",
	               e->round + 1, e->pos + 1, e->nround, e->baseline ? "(defaults) " : "",
	               e->key, isfinite(e->value) ? v : e->status);
	if (e->pos + 1 == e->nround) /* the round's rows below say it */
		textout_str(o, TEXTOUT_NOTE, "\r\033[K");
	textout_flush(o, TEXTOUT_NOTE);
}

void tune_text_opening(const textout *o, muh_session *s, size_t nth)
{
	const muh_spec *spec = session_spec(s);
	const muh_space *sp = session_space(s);
	char a[32];
	if (nth)
		textout_printf(o, TEXTOUT_RESULT, "\n");
	textout_printf(o, TEXTOUT_RESULT, "spec        %s (%s)\n", spec->path,
	               spec_format_name(spec->format));
	if (session_hw(s))
		textout_printf(o, TEXTOUT_RESULT, "profile     %s\n", session_hw(s)->name);
	if (spec->nproblem) {
		char words[96];
		textout_printf(o, TEXTOUT_RESULT, "problem     %s, %s\n", session_problem(s),
		               spec_instance_words(spec, session_instance(s), words, sizeof(words)));
	}
	textout_printf(o, TEXTOUT_RESULT, "space       %s valid configurations\n",
	               text_count(a, sizeof(a), (double)space_valid(sp)));
}

void tune_text_loaded(const tune_view *v, const char *db, const char *replay)
{
	const textout *o = v->o;
	muh_session *s = v->s;
	int json = v->json;
	const muh_space *sp = session_space(s);
	session_store_info si;
	session_store_stats(s, &si);
	session_replay_info ri;
	session_replay_stats(s, &ri);
	if (!json && si.open && si.resumed)
		textout_printf(
		    o, TEXTOUT_RESULT,
		    "store       %s: resuming run %lld, %lld variant(s) already measured\n", db,
		    (long long)si.run, si.rows);
	else if (!json && si.open)
		textout_printf(o, TEXTOUT_RESULT, "store       %s: run %lld\n", db,
		               (long long)si.run);
	transfer_seeds_print(session_transfer_seeds(s), o, json); /* issue 13 */
	if (!json && ri.open) {
		char r[32], a[32], b[32], c[32], f[32], i[32], w[32], other[64] = "";
		if (ri.other_problem)
			snprintf(other, sizeof(other), ", %s of another problem instance",
			         text_count(r, sizeof(r), (double)ri.other_problem));
		textout_printf(o, TEXTOUT_RESULT,
		               "replay      %s: %s rows, %s used (%s failed), %s invalid here, %s "
		               "outside the values%s; covers %s of %s valid\n",
		               replay, text_count(r, sizeof(r), (double)ri.rows),
		               text_count(a, sizeof(a), (double)ri.used),
		               text_count(f, sizeof(f), (double)ri.failed),
		               text_count(i, sizeof(i), (double)ri.invalid),
		               text_count(w, sizeof(w), (double)ri.outside), other,
		               text_count(b, sizeof(b), (double)ri.covered),
		               text_count(c, sizeof(c), (double)space_valid(sp)));
	}
}

/* The end of a resumed run's noise line into buf ("" for a new run): a
 * resume times the defaults anew, while the variants it answers from the
 * store are an earlier tune's timings, so which figure is whose is said,
 * and that ties are judged by the larger (session_judge_noise). */
static void noise_origin(const session_store_info *si, char *buf, size_t n)
{
	buf[0] = 0;
	if (!session_store_earlier(si))
		return;
	int k = snprintf(buf, n,
	                 ", by this tune; the %lld variant(s) already stored were timed by an "
	                 "earlier tune of run %lld",
	                 si->rows, (long long)si->run);
	if (k > 0 && (size_t)k < n && isfinite(si->stored_noise))
		snprintf(buf + k, n - (size_t)k, ", whose stored noise is %.2f%%; the larger judges ties",
		         100 * si->stored_noise);
}

void tune_text_noise(const tune_view *v, double noise, int noisy)
{
	const textout *o = v->o;
	session_store_info si;
	session_store_stats(v->s, &si);
	char earlier[256];
	noise_origin(&si, earlier, sizeof(earlier));
	if (!v->json) /* stored with the first variant measured */
		textout_printf(o, TEXTOUT_RESULT,
		               "noise       %.2f%% (the defaults timed twice%s%s)\n", 100 * noise,
		               noisy ? ", 3 times over" : "", earlier);
	if (noisy)
		textout_printf(
		    o, TEXTOUT_NOTE,
		    "%s: noisy machine: the defaults' two timings differed by more than "
		    "measure.max_noise (%.1f%%) in 3 pairs (%.1f%% over all); the run is marked "
		    "noisy and its speedup has no confidence interval\n",
		    v->who, 100 * eval_target_max_noise(session_target(v->s)), 100 * noise);
}

void tune_text_strategy(const textout *o, const strategy_opts *so, const muh_space *sp)
{
	uint64_t b = so->budget && so->budget < space_valid(sp) ? so->budget : space_valid(sp);
	if (!space_valid(sp))
		textout_printf(o, TEXTOUT_RESULT,
		               "strategy    %s: nothing to evaluate, the constraints leave no "
		               "valid configuration\n",
		               so->strategy ? so->strategy : "auto");
	else
		textout_printf(
		    o, TEXTOUT_RESULT,
		    "strategy    %s, seed %llu, budget %llu evaluations (%.1f%% of the space)%s\n",
		    so->strategy ? so->strategy : "auto", (unsigned long long)so->seed,
		    (unsigned long long)b, 100.0 * (double)b / (double)space_valid(sp),
		    so->time_budget_s > 0 ? " or the time limit" : "");
	textout_flush(o, TEXTOUT_RESULT);
}

void tune_text_prepare(const tune_view *v, int jobs)
{
	const textout *o = v->o;
	session_prepare_info pi;
	session_prepare_stats(v->s, &pi);
	if (pi.note[0])
		textout_printf(o, TEXTOUT_NOTE,
		               "%s: note: prepare: %s; each build compiles what is missing\n",
		               v->who, pi.note);
	if (pi.ran) {
		char dropped[96] = "";
		if (pi.dropped)
			snprintf(dropped, sizeof(dropped), ", %zu dropped unfinished when the search ended", pi.dropped);
		textout_printf(o, v->json ? TEXTOUT_NOTE : TEXTOUT_RESULT,
		               "prepare     %zu of %zu variants compiled ahead in %d batch(es) (%d "
		               "while measuring%s), %.1f s "
		               "(%.1f s waited for), with %d jobs; %zu of the %zu measured were "
		               "sent to a batch before the "
		               "search reached them\n",
		               pi.done, pi.asked, pi.ran, pi.background, dropped, pi.seconds, pi.blocking_s,
		               jobs, pi.reached_prepared, pi.reached);
	}
}

void tune_text_decide_head(const textout *o, muh_session *s, const decide_opts *d, long k)
{
	int engine = tune_flow_is_engine(s);
	const baseline_pick *bp = session_baseline(s);
	session_sustained_info I; /* an SM clock was read: a GPU, warmed to it */
	session_sustained(s, &I);
	session_store_info L; /* a resume keeps the rounds an earlier tune measured */
	session_store_stats(s, &L);
	textout_printf(o, TEXTOUT_RESULT,
	               "\ndecide      %s and the top %ld%s, re-measured afresh in alternating "
	               "rounds (%d to %d)%s, "
	               "before any winner is named%s\n",
	               d->baseline_key ? "the baseline (what ships)"
	               : bp            ? "the defaults (what ships)"
	                               : "the defaults",
	               k, d->baseline_key ? " (and the defaults)" : "", DECIDE_MIN_ROUNDS,
	               d->max_rounds,
	               engine  ? ""
	               : I.ran ? ", each a fresh build warmed to its sustained clock"
	                       : ", each a fresh build",
	               session_store_earlier(&L)
	                   ? "; rounds an earlier tune of this run measured over the same "
	                     "finalists are kept"
	                   : "");
	textout_flush(o, TEXTOUT_RESULT);
}

/* The place of key in this search's ranking (r's ok records, fastest
 * first, as the rank table above): its rank from 1, or 0 when this search
 * did not evaluate it. */
static size_t search_rank(const muh_space *sp, const strategy_result *r, const uint64_t *top,
                          size_t ntop, uint32_t *cfg, const char *key)
{
	char k[4096];
	for (size_t i = 0; i < ntop; i++) {
		space_config_at(sp, r->records[top[i]].index, cfg);
		space_key(sp, cfg, k, sizeof(k));
		if (!strcmp(k, key))
			return i + 1;
	}
	return 0;
}

/* Before the decision table (dk: the defaults' key): where its finalists
 * and its rounds come from, when not from this search and this stage
 * alone. A resumed run's finalists are the run's top over every tune of
 * it, which this search (r: the rank table above) may not have reached:
 * when they are not this search's top, each is placed in it. Rounds the
 * store held from an earlier tune of the run over the same finalists are
 * kept (none re-measured, or only what was missing): said here, with the
 * decision, not after it. */
static void print_decision_origin(const tune_view *v, const decide_summary *sm,
                                  const strategy_result *r, const char *dk)
{
	const textout *o = v->o;
	const muh_space *sp = session_space(v->s);
	session_store_info L;
	session_store_stats(v->s, &L);
	if (!sm->nf)
		return;
	uint64_t *top =
	    r && session_store_earlier(&L) ? malloc((r->nrecords + 1) * sizeof(uint64_t)) : NULL;
	uint32_t *cfg = top ? malloc((space_nparams(sp) + 1) * sizeof(uint32_t)) : NULL;
	if (top && cfg) {
		size_t ntop = strategy_top(r, r->nrecords, top), nfin = 0, held = 0;
		/* how many finalists this search's top nfin holds, the baseline
		 * and the defaults left out as the stage leaves them */
		for (size_t i = 0; i < sm->nf; i++)
			nfin += (int)i != sm->defaults_f;
		for (size_t i = 0, seen = 0; i < ntop && seen < nfin; i++) {
			char k[4096];
			space_config_at(sp, r->records[top[i]].index, cfg);
			space_key(sp, cfg, k, sizeof(k));
			if (!strcmp(k, sm->baseline) || (dk && !strcmp(k, dk)))
				continue;
			seen++;
			for (size_t f = 0; f < sm->nf; f++)
				held += (int)f != sm->defaults_f && !strcmp(sm->f[f].key, k);
		}
		if (held < nfin) {
			textout_printf(o, TEXTOUT_RESULT,
			               "finalists   the run's top %zu over every tune of it, not "
			               "this search's top %zu:",
			               nfin, nfin);
			for (size_t f = 0, n = 0; f < sm->nf; f++) {
				if ((int)f == sm->defaults_f)
					continue;
				size_t rank = search_rank(sp, r, top, ntop, cfg, sm->f[f].key);
				if (rank)
					textout_printf(o, TEXTOUT_RESULT,
					               "%s %s (this search's rank %zu)",
					               n++ ? "," : "", sm->f[f].key, rank);
				else
					textout_printf(o, TEXTOUT_RESULT,
					               "%s %s (not evaluated by this search)",
					               n++ ? "," : "", sm->f[f].key);
			}
			textout_str(o, TEXTOUT_RESULT, "\n");
		}
	}
	free(top);
	free(cfg);
	size_t rows = sm->base_repeats, now = sm->cost.repeats;
	for (size_t i = 0; i < sm->nf; i++)
		rows += sm->f[i].repeats;
	if (!now && rows)
		textout_printf(o, TEXTOUT_RESULT,
		               "stage       nothing re-measured now: the %zu round(s) below are "
		               "the store's, from an earlier tune of this run over the same finalists\n",
		               sm->rounds);
	else if (rows > now)
		textout_printf(o, TEXTOUT_RESULT,
		               "stage       the rounds below go on from the store's: %zu repeat(s) "
		               "from an earlier tune of this run over the same finalists, %zu "
		               "measured now\n",
		               rows - now, now);
}

void tune_text_decision(const tune_view *v, const strategy_result *r, const decide_summary *sm,
                        int interrupted)
{
	const textout *o = v->o;
	muh_session *s = v->s;
	if (v->json) {
		char *j = decide_summary_json(sm, session_objective(s));
		cJSON *o2 = j ? cJSON_Parse(j) : NULL;
		free(j);
		if (o2) {
			cJSON_AddStringToObject(o2, "event", "decision");
			tune_text_json_line(o, cJSON_PrintUnformatted(o2));
		}
		cJSON_Delete(o2);
	} else {
		char dk[4096] = "";
		uint32_t *def = calloc(space_nparams(session_space(s)) + 1, sizeof(uint32_t));
		if (def) {
			space_default(session_space(s), def);
			space_key(session_space(s), def, dk, sizeof(dk));
			free(def);
		}
		print_decision_origin(v, sm, r, dk[0] ? dk : NULL);
		decide_text_table(o, sm, session_objective(s), dk[0] ? dk : NULL, "");
		decide_text_rounds(o, sm, "");
		const decide_cost *c = &sm->cost;
		if (c->repeats)
			textout_printf(o, TEXTOUT_RESULT,
			               "stage       %zu repeats in %.1f s: builds %.1f s, output checks %.1f s, "
			               "warm-up %.1f s, timing %.1f s, the rest %.1f s\n",
			               c->repeats, c->wall_s, c->build_s, c->check_s, c->warm_s, c->time_s,
			               fmax(0, c->wall_s - c->build_s - c->check_s - c->warm_s - c->time_s));
		if (interrupted)
			textout_printf(o, TEXTOUT_RESULT,
			               "            (interrupted: the rounds so far are stored; a "
			               "rerun goes on from them)\n");
	}
}

void tune_text_pool_done(const tune_view *v, const muh_pool *pool)
{
	const textout *o = v->o;
	session_store_info pi;
	session_store_stats(v->s, &pi);
	char earlier[256];
	noise_origin(&pi, earlier, sizeof(earlier));
	if (!v->json && isfinite(pi.noise))
		textout_printf(o, TEXTOUT_RESULT,
		               "noise       %.2f%% (the defaults timed twice through the pool%s)\n",
		               100 * pi.noise, earlier);
	if (pool_restarts(pool))
		textout_printf(
		    o, TEXTOUT_NOTE,
		    "%s: %zu pool worker(s) died and were started again; their variants were "
		    "measured again once\n",
		    v->who, pool_restarts(pool));
}

void tune_text_slo_table(const tune_view *v, const char *replay)
{
	muh_session *s = v->s;
	session_store_info si;
	session_store_stats(s, &si);
	session_replay_info ri;
	session_replay_stats(s, &ri);
	muh_store *rs;
	muh_diag d;
	if (session_evaluator(s)) {
		tune_text_summary(v->o, session_store(s), si.run, session_objective(s), v->json);
	} else if (ri.from_store && store_open_ro(replay, &rs, &d) == MUH_OK) {
		tune_text_summary(v->o, rs, ri.store_run, session_objective(s), v->json);
		store_close(rs);
	}
}
