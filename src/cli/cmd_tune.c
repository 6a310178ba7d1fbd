/*
 * cmd_tune.c — `muh tune`: search a spec's space with a strategy, measure
 * through an objective, print the best against the defaults.
 *
 * Parse and print over the session (session.h): the session measures
 * (the store answering first, which is how a rerun resumes), replays
 * (--replay FILE: a CSV or a store), compiles first (--jobs) and checks
 * drift; this file prints its events, the result and the summary. One
 * session per problem instance (--problem all). Ctrl-C stops cleanly after
 * the variant in flight (the event callback asks the driver to stop); a
 * second Ctrl-C kills.
 */
#include <cjson/cJSON.h>
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "evalcli.h"
#include "muh/baseline.h"
#include "muh/best.h"
#include "muh/decide.h"
#include "muh/hw.h"
#include "muh/objective.h"
#include "muh/pool.h"
#include "muh/runsum.h"
#include "muh/session.h"
#include "muh/store.h"
#include "muh/strategy.h"
#include "muh/transfer_seeds.h"
#include "muh/tune_flow.h"
#include "textcut.h"

static const char help[] =
    "usage: muh tune SPEC [--strategy NAME] [--budget N|N%] [--time DURATION] [--seed N]\n"
    "                [--db FILE] [--fresh] [--replay FILE [--replay-column NAME=COLUMN]...]\n"
    "                [--top K] [--hw PROFILE] [--no-seeds] [--no-spec-seeds] [--no-defaults] [--no-transfer] [--seeds-from FILE]\n"
    "                [--problem K|NAME=V,...|all] [--jobs N] [--devices LIST | --mpi]\n"
    "                [--finalists K] [--rounds N] [--baseline FILE | --no-baseline] [--json]\n"
    "\n"
    "Searches the space of SPEC with a strategy and prints the best variant, its\n"
    "time, its speedup over the defaults, and a table of the top variants.\n"
    "\n"
    "The defaults (the engine's current values) are always evaluated first, then\n"
    "the known-good configurations the spec lists under seeds: (a seed that breaks\n"
    "a constraint on this profile is reported and skipped). Every strategy then\n"
    "proposes only valid configurations, never one twice, and stops exactly at\n"
    "the budget. A failed variant counts against the budget and the search goes on.\n"
    "A replay is deterministic for a given --seed; a live run proposes from what it\n"
    "measures, so its path follows the machine's noise.\n"
    "\n"
    "Objectives: by default a run minimizes time. A spec's objective: picks any\n"
    "measured metric and a direction, with SLOs on the others, e.g. for an engine\n"
    "spec (backend engine, a real server per variant: docs/engine.md)\n"
    "    objective: {maximize: output_tokens_per_s, subject_to: [\"ttft_p99 <= 2s\"]}\n"
    "Variants that miss an SLO rank after every one that meets them (the nearest\n"
    "miss first); the table then lists every variant with its metrics, and the\n"
    "winner under the SLOs beside the winner ignoring them when they differ.\n"
    "\n"
    "Replay (simulation) mode: --replay FILE answers every variant from\n"
    "measurements already made, with no device. FILE is a CSV with a column per\n"
    "param, a time column (time_s, time_ms, time_us or time_ns) and optionally a\n"
    "status column (ok, or a failure kind); '#' lines are comments. When the file\n"
    "covers the whole space, the exhaustive best is printed too.\n"
    "FILE may also be a store (muh.db): the measurements of this spec's run.\n"
    "With --db STORE the replay is stored there as a run of backend replay, so\n"
    "that muh report, export and later transfer read it like a measured one.\n"
    "\n"
    "Transfer: after the spec's seeds come seeds from earlier results: the top 4\n"
    "of the store's runs (--db) of this spec at other problem instances, nearest\n"
    "problem values first, 3 instances at most; then those of each --seeds-from\n"
    "file (T4 results JSON: its 4 fastest; a vLLM config JSON keyed by batch\n"
    "size: the 4 batch sizes nearest to this instance's M). Each is printed\n"
    "with where it came from (transfer T1 ...), counts against the budget and\n"
    "is never evaluated twice.\n"
    "\n"
    "Live mode (no --replay): every variant is built, fingerprinted, checked and\n"
    "timed by the spec's backend (docs/evaluator.md) and stored in --db (default\n"
    "muh.db), one transaction per variant. Running the same command again resumes:\n"
    "finished variants are answered from the store, not measured again (--fresh\n"
    "starts over). The defaults are timed twice first for the noise; the speedup\n"
    "is printed with a confidence interval from the two medians' intervals.\n"
    "\n"
    "strategies:\n"
    "  auto        (default) a multi-armed bandit over model and ils, credited\n"
    "              by the area under the best-so-far curve (OpenTuner/ATF)\n"
    "  brute       every valid configuration, in index order\n"
    "  random      uniform over the valid configurations, never repeating\n"
    "  annealing   simulated annealing over neighbours\n"
    "  genetic     a genetic algorithm: tournament, uniform crossover, mutation\n"
    "  ils         iterated local search over neighbours\n"
    "  model       an additive surrogate (params and pairs of params) over log time;\n"
    "              proposes the unseen configuration it predicts fastest\n"
    "\n"
    "options:\n"
    "  --strategy NAME     one of the above\n"
    "  --budget N | N%     at most N evaluations (or N% of the valid space, rounded down);\n"
    "                      default: the whole space\n"
    "  --time DURATION     start no evaluation after DURATION (90, 90s, 15m, 1h30m);\n"
    "                      with --budget too, the run stops at whichever comes first\n"
    "  --seed N            random seed (default 0)\n"
    "  --db FILE           the store of live measurements (default muh.db); with\n"
    "                      --replay, where the replay is stored (default: nowhere)\n"
    "  --fresh             forget this run's measurements in the store first\n"
    "  --replay FILE       answer from measurements in FILE (CSV or store)\n"
    "  --replay-column PARAM=COLUMN\n"
    "                      read PARAM from COLUMN (repeatable); time=COLUMN and\n"
    "                      status=COLUMN name those columns, and M=COLUMN the\n"
    "                      column of a problem symbol (a CSV of several sizes)\n"
    "  --no-seeds          no seeds at all: not the spec's, none transferred, no\n"
    "                      --seeds-from (the defaults and the baseline stay)\n"
    "  --no-spec-seeds     do not evaluate the spec's seeds (transfer stays)\n"
    "  --no-defaults       with --replay: start from a random valid configuration,\n"
    "                      not the defaults (the search alone, for benchmarks)\n"
    "  --no-transfer       no seeds from the store's other problem instances\n"
    "  --seeds-from FILE   seeds from a T4 results or vLLM config JSON (repeatable)\n"
    "  --top K             rows in the top table (default 10)\n"
    "  --hw PROFILE        hardware profile for hw.* (default: the spec's hw:)\n"
    "  --problem WHICH     the problem instances to tune, one run each in this call:\n"
    "                      K (0-based), a list (0,2), values (M=256; M=256,M=1024:\n"
    "                      the same name twice is either, two names both) or all;\n"
    "                      default 0. Every output names the instance (problem)\n"
    "  --jobs N            compile first with N processes: the builds of the variants\n"
    "                      the strategy will propose next are started while one is\n"
    "                      timed (cpu, cuda), or handed to a worker that can\n"
    "                      \"prepare\" (Triton) in one batch; the variants measured\n"
    "                      are the same as without --jobs\n"
    "  --devices LIST      measure on several devices at once: one worker process per\n"
    "                      device (0,1,3, or all), each with its own evaluator and\n"
    "                      CUDA_VISIBLE_DEVICES; the strategy proposes batches and\n"
    "                      every result goes to the one store as it finishes; a worker\n"
    "                      that dies is restarted and its variant measured again once.\n"
    "                      The cpu and command backends take it too (workers on one\n"
    "                      host); devices of different models are refused\n"
    "  --mpi               under mpirun/srun: this rank (0) tunes and stores, the other\n"
    "                      ranks measure (mpirun -np 3 muh tune SPEC --mpi); a lost\n"
    "                      rank ends the job, and a rerun resumes from the store\n"
    "  --finalists K       re-measure the top K against the baseline before naming a\n"
    "                      winner (0: off); default 2 for an engine spec or a run with\n"
    "                      a baseline file, else 0\n"
    "  --baseline FILE     what ships: an engine config file keyed by batch size (vLLM's\n"
    "                      fused-MoE format); its entry for this size, as the engine\n"
    "                      picks it, is measured right after the defaults and is what\n"
    "                      the decision judges against. Default: the spec's\n"
    "                      target.baseline for this device, when the engine ships one\n"
    "  --no-baseline       the defaults are the baseline\n"
    "  --rounds N          the decision stage's most rounds (4 to 64, default 8)\n"
    "  --json              one JSON object per line: an event per finished variant\n"
    "                      {event: variant, problem, n, budget, key, config, status, time_s,\n"
    "                      improved, best_s, source, elapsed_s, and for a measured-\n"
    "                      metric objective value and metrics}, transfer_seed\n"
    "                      {seed, key, from}, seed_skipped,\n"
    "                      predicted_fail and drift events, a winners event, a decision event,\n"
    "                      and a final {event: result, ...}; nothing else on stdout\n"
    "\n"
    "Decisions that hold: after a live search, the baseline (what ships, else\n"
    "the defaults) and the top K variants (--finalists) are measured again,\n"
    "each afresh (an engine: a new server each time; a kernel: a fresh build\n"
    "with fresh inputs, warmed to its sustained clock), in rounds whose order\n"
    "alternates (A B C, C B A, B C A, ...); beside a baseline that is not the\n"
    "defaults, the defaults are one more finalist. Each finalist is judged by\n"
    "Student's t interval on its per-round ratios to the baseline: gain (the\n"
    "interval above 1 + the objective's min_gain, and every repeat within the\n"
    "SLOs), loss, slo_miss,\n"
    "failed, or undecided (a tie). The rounds are looked at after 4 and every 2\n"
    "after, up to --rounds (default 8), at a level strict enough that over every\n"
    "look and finalist a tie is called a gain at most 5% of the time. Only a\n"
    "proven gain is a winner: muh report shows the decision, muh patch --from\n"
    "writes nothing else (exit 1, \"no proven gain\"); without one, a baseline\n"
    "that ships stays, and the emitters write it.\n"
    "\n"
    "A one-line progress bar (evaluated/budget, best so far, ETA, failures) is\n"
    "drawn on stderr when stderr is a terminal. Ctrl-C stops after the variant in\n"
    "flight and prints what was found.\n"
    "\n"
    "examples:\n"
    "  muh tune specs/matmul_cpu.yaml --budget 20          live, cpu backend, muh.db\n"
    "  muh tune specs/fused_moe.yaml --problem M=256 --replay corpora/h200-fused-moe/sweep_M256.csv\n"
    "  muh tune specs/fused_moe.yaml --replay sweep.csv --strategy ils --budget 5% --seed 3\n";

/* What measures a variant, and how to let it go. */

struct tune {
	muh_session *s;
	const muh_space *sp;
	const muh_objective *objective;
	const char *problem;
	int json, bar;
	double last_bar;
	char key[4096];
};

static volatile sig_atomic_t interrupted;
/* what this instance's decision stage said, for --json's result event: -1
 * none ran, 0 no proven gain, 1 a proven winner */
static int last_decision = -1;

static void on_sigint(int sig)
{
	interrupted = 1;
	signal(sig, SIG_DFL); /* a second Ctrl-C kills */
	evalcli_ctrl_c_say();
}



#define is_slo_miss session_is_slo_miss

/* A score for a person: a time, or the objective's metric ("812.5 tok/s"). */
static void fmt_score(const muh_objective *o, char *buf, size_t n, double score)
{
	if (is_slo_miss(score))
		snprintf(buf, n, "slo miss");
	else if (!o || !strcmp(o->metric, "time") || !isfinite(score))
		cli_fmt_time(buf, n, score);
	else
		objective_format(o->metric, objective_value(o, score), buf, n);
}

/* One line of JSON text (malloc'd, freed here) on stdout, flushed. */
static void print_text(char *txt)
{
	if (txt) {
		puts(txt);
		fflush(stdout);
	}
	free(txt);
}

static void draw_bar(struct tune *t, const strategy_event *ev, int final)
{
	if (!final && ev->elapsed_s - t->last_bar < 0.1 && ev->evaluated != ev->budget)
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
	fprintf(stderr, "\r[%s] %llu/%llu  best %s  eta %s  failed %llu \033[K", bar,
	        (unsigned long long)ev->evaluated, (unsigned long long)ev->budget, best, eta,
	        (unsigned long long)ev->failed);
	if (final)
		fputc('\n', stderr);
	fflush(stderr);
}

static int on_event(void *ctx, const strategy_event *ev)
{
	struct tune *t = ctx;
	int note = ev->kind == STRATEGY_EV_PREDICTED || ev->kind == STRATEGY_EV_SEED_SKIPPED ||
		   ev->kind == STRATEGY_EV_DEFAULT_INVALID;
	if (t->json)
		print_text(tune_flow_event_json(t->s, ev, t->problem));
	if (note && !t->json) {
		const muh_spec *s = space_spec(t->sp);
		if (ev->cfg)
			space_key(t->sp, ev->cfg, t->key, sizeof(t->key));
		if (ev->kind == STRATEGY_EV_PREDICTED)
			fprintf(stderr, "%smuh tune: not measured: %s is %s\n", t->bar ? "\r\033[K" : "", t->key,
				ev->reason);
		else if (ev->kind == STRATEGY_EV_SEED_SKIPPED && !strcmp(ev->source, "transfer")) /* issue 13 */
			fprintf(stderr, "muh tune: note: transfer seed T%zu (%s) skipped: %s\n", ev->seed + 1,
				ev->cfg ? t->key : "?", ev->reason);
		else if (ev->kind == STRATEGY_EV_SEED_SKIPPED)
			fprintf(stderr, "%s:%d: note: seed %zu (%s) skipped: %s\n", s->path, ev->seed_line, ev->seed + 1,
				ev->cfg ? t->key : "?", ev->reason);
		else
			fprintf(stderr, "%s: note: the defaults (%s) are not measured: %s\n", s->path, t->key,
				ev->reason);
	}
	if (!note && t->bar)
		draw_bar(t, ev, 0);
	return interrupted;
}

/* The session's notes: a drift is a --json event; the rest go to stderr. */
static void on_note(void *ctx, const session_note *n)
{
	struct tune *t = ctx;
	if (n->kind == SESSION_NOTE_DRIFT && t->json)
		print_text(tune_flow_drift_json(n, t->problem));
	else
		fprintf(stderr, "%s%s%s\n", t->bar ? "\r\033[K" : "", n->located ? "" : "muh tune: ", n->text);
}

/* measure.halving's ladder: per rung, the variants that ran it, those it
 * stopped and the requests it cost (the run's, a resume's stored variants
 * included). */
static void print_rungs(const session_store_info *L)
{
	if (!L->nrungs)
		return;
	long long total = 0;
	for (size_t k = 0; k <= L->nrungs; k++)
		total += L->rungs[k].requests_spent;
	printf("halving     eta %d, rungs of", L->halving_eta);
	for (size_t k = 0; k <= L->nrungs; k++)
		printf("%s %d", k ? (k == L->nrungs ? " and" : ",") : "", L->rungs[k].requests);
	printf(" requests (measure.halving); %lld requests in all, warm-up included\n", total);
	for (size_t k = 0; k <= L->nrungs; k++) {
		const session_rung_info *R = &L->rungs[k];
		if (k < L->nrungs)
			printf("rung %-6d %lld variant(s), %lld stopped, %lld requests\n", R->requests, R->variants,
			       R->stopped, R->requests_spent);
		else
			printf("full %-6d %lld variant(s), %lld requests\n", R->requests, R->variants, R->requests_spent);
	}
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
static void print_live_speedup(muh_session *s, const strategy_result *r, int decides)
{
	const muh_objective *o = session_objective(s);
	session_store_info L;
	session_store_stats(s, &L);
	runsum_gain g;
	runsum_live_gain(s, r, &g);
	const char *tn = tie_note(g.tie, decides);
	if (g.kind == RUNSUM_GAIN_PER_TOKEN && L.noisy)
		printf("gain        %.3fx the defaults' output_tokens_per_s (noisy machine: no CI)%s\n", g.ratio, tn);
	else if (g.kind == RUNSUM_GAIN_PER_TOKEN && (g.nbest < 2 || g.ndefaults < 2)) /* one run has no interval */
		printf("gain        %.3fx the defaults' output_tokens_per_s (one load run each: no CI)%s\n", g.ratio, tn);
	else if (g.kind == RUNSUM_GAIN_PER_TOKEN)
		printf("gain        %.3fx the defaults' output_tokens_per_s (95%% CI %.3f-%.3fx, from %zu and "
		       "%zu load runs)%s\n",
		       g.ratio, g.lo, g.hi, g.nbest, g.ndefaults, tn);
	else if (g.kind == RUNSUM_GAIN_METRIC)
		printf("gain        %.3fx the defaults' %s (%s%s)%s\n", g.ratio, o->metric,
		       o->maximize ? "higher is better" : "lower is better", L.noisy ? "; noisy machine: no CI" : "", tn);
	else if (g.kind == RUNSUM_GAIN_TIME && L.noisy)
		printf("speedup     %.3fx over the defaults (noisy machine: no CI)%s\n", g.ratio, tn);
	else if (g.kind == RUNSUM_GAIN_TIME)
		printf("speedup     %.3fx over the defaults (95%% CI %.3f-%.3fx)%s\n", g.ratio, g.lo, g.hi, tn);
	printf("measured    %lld variant(s) now; %lld answered from the store\n", L.measured,
	       L.from_store);
	if (L.probe_requests > 0)
		printf("probes      %lld variant(s) stopped after a probe of %d requests: failed, or more than %gx "
		       "worse than the best so far (measure.probe)\n",
		       L.probed, L.probe_requests, SESSION_PROBE_WORSE);
	print_rungs(&L);
	if (L.drifts)
		printf("drift       the defaults moved beyond the noise %lld time(s); %lld variant(s) measured again "
		       "(the store and the summary hold the new values)\n",
		       L.drifts, L.remeasured);
}


/* The same for a person: one line of device busy, then the sustained
 * ranking when it ran. */
static void print_busy_sustained(muh_session *s)
{
	session_busy_info b;
	session_busy(s, &b);
	/* a server's load is no timed launch: the engine backend has no busy line */
	int engine = !strcmp(eval_target_backend(session_target(s)), "engine");
	if (b.measured && b.wall_s > 0 && !engine) {
		printf("\ndevice      busy %.1f%% of the search's %.1f s: %.3f s inside timed launches (timing steps %.1f s, "
		       "builds %.1f s)",
		       100 * b.launches_s / b.wall_s, b.wall_s, b.launches_s, b.steps_s, b.builds_s);
		if (b.prepare_s > 0 && b.wall_s > b.prepare_s)
			printf("; %.1f%% after the prepare's %.1f s", 100 * b.launches_s / (b.wall_s - b.prepare_s),
			       b.prepare_s);
		printf("\n");
	}
	session_sustained_info I;
	session_sustained(s, &I);
	if (!I.why[0] && !I.ran)
		return;
	if (!I.ran) {
		printf("sustained   not re-timed: %s\n", I.why);
		return;
	}
	printf("sustained   %s%s\n", I.why, I.ranked ? ": the fastest re-timed is the winner" : "");
	if (I.n > 1 && I.samples)
		printf("            the %zu timed interleaved: %zu samples each, the order alternated every round\n",
		       I.n, I.samples);
	printf("  %4s  %12s  %9s  %12s  %9s  %s\n", "rank", "burst", "SM MHz", "sustained", "SM MHz", "configuration");
	for (size_t i = 0; i < I.n; i++) {
		const session_sustained_row *r = &I.rows[i];
		char a[32], c[32];
		cli_fmt_time(a, sizeof(a), r->burst_s);
		cli_fmt_time(c, sizeof(c), r->sustained_s);
		printf("  %4d  %12s  %9.0f  %12s  %9.0f  %s\n", r->burst_rank, a, r->burst_mhz, c, r->sustained_mhz,
		       r->key);
	}
	if (I.ranked) {
		char a[32];
		const session_sustained_row *w = &I.rows[I.winner];
		cli_fmt_time(a, sizeof(a), w->sustained_s);
		printf("winner      at sustained clocks: %s  %s (rank %d at burst clocks)\n", a, w->key, w->burst_rank);
		if (w->burst_rank != 1)
			printf("            the store's best: muh report and muh patch name this one, not the search's "
			       "best above\n");
	}
}

/* When the store's best of the run (what report and patch name) is neither
 * the search's best nor the re-timing's winner printed above: a variant
 * measured by an earlier search of the run, outside this one's budget. */
static void print_store_best(muh_session *s, const strategy_result *r)
{
	char key[4096], a[32];
	double score;
	size_t nmeasured;
	if (!runsum_store_best_other(s, r, key, sizeof(key), &score, &nmeasured))
		return;
	fmt_score(session_objective(s), a, sizeof(a), score);
	printf("store       the run's best is %s  %s, of the %zu variants the run has measured (an earlier\n"
	       "            search of it measured more than this one reached): muh report and muh patch name it\n",
	       a, key, nmeasured);
}

/* Every variant of a live run with a measured-metric objective, and the
 * two winners: under the SLOs (the strategy's best) and ignoring them. */
struct summary {
	const muh_objective *o;
	int keyw;
	/* the table's metric columns: the objective's, each SLO's, then
	 * ttft_p99 and tpot_p50 for context; each as wide as its name */
	const char *col[OBJECTIVE_MAX_SLO + 3];
	int colw[OBJECTIVE_MAX_SLO + 3], ncol;
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
	const muh_measurement *m = row->m;
	const char *note = m->status != EVAL_OK ? m->error : feas ? "" : why;
	printf("  %-*s  %-12s", S->keyw, row->key, m->status == EVAL_OK && !feas ? "slo_miss" : eval_status_name(m->status));
	for (int c = 0; c < S->ncol; c++) {
		char v[32];
		objective_format(S->col[c], measurement_metric(m, S->col[c]), v, sizeof(v));
		printf("  %*s", S->colw[c], v);
	}
	char cut[128]; /* a long error: its first words, then how much more (report shows it whole) */
	text_cut(cut, sizeof(cut), note);
	printf("%s%s\n", *note ? "  " : "", cut);
}

static int summary_keyw(void *ud, const store_row *row)
{
	int *w = ud, n = (int)strlen(row->key);
	*w = n > *w ? n : *w;
	return 0;
}

static void print_summary(muh_store *st, int64_t run, const muh_objective *objective, int json)
{
	struct summary S = {.o = objective, .keyw = 13};
	objective_winners w;
	size_t rows, ok, missed;
	if (json) {
		runsum_slo_winners(st, run, objective, NULL, NULL, &w, &rows, &ok, &missed);
		print_text(runsum_winners_json(objective, &w, rows, missed));
		return;
	}
	store_foreach(st, run, summary_keyw, &S.keyw);
	char desc[1024], a[32], b[32];
	objective_describe(objective, desc, sizeof(desc));
	summary_cols(&S);
	printf("\nobjective   %s\n", desc);
	printf("  %-*s  %-12s", S.keyw, "configuration", "status");
	for (int c = 0; c < S.ncol; c++)
		printf("  %*s", S.colw[c], S.col[c]);
	printf("  why\n");
	runsum_slo_winners(st, run, objective, summary_row, &S, &w, &rows, &ok, &missed);
	objective_format(objective->metric, objective_value(objective, w.best), a, sizeof(a));
	objective_format(objective->metric, objective_value(objective, w.best_any), b, sizeof(b));
	/* the search's bests, each from one measurement: a winner is what the
	 * decision stage proves (decide_stage), never these */
	printf("search      best under the SLOs: %s  %s\n", isfinite(w.best) ? a : "none",
	       isfinite(w.best) ? w.key : "(no variant met them)");
	if (isfinite(w.best_any) && strcmp(w.key_any, w.key))
		printf("search      best ignoring the SLOs: %s  %s (misses: %s)\n", b, w.key_any, w.why_any);
	else if (isfinite(w.best_any))
		printf("search      best ignoring the SLOs: the same variant\n");
}

static void print_result(muh_session *s, const strategy_opts *o, const strategy_result *r, size_t topk,
                         int json, int rc, int decides)
{
	if (json) {
		print_text(runsum_result_json(s, o, r, topk, rc, last_decision));
		return;
	}
	const muh_space *sp = session_space(s);
	session_replay_info ri;
	session_replay_stats(s, &ri);
	session_store_info si;
	session_store_stats(s, &si);
	int live = session_evaluator(s) != NULL || session_store(s) != NULL; /* measured here or by a pool */
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
	printf("\nevaluated   %llu of a budget of %llu (%llu failed) in %.2f s; stopped: %s\n",
	       (unsigned long long)(r->nrecords - r->predicted), (unsigned long long)r->budget,
	       (unsigned long long)r->failed, r->seconds, runsum_stop_name(r->stop, rc));
	if (r->predicted)
		printf("hidden      %llu configuration(s) not measured: predicted to fail to start, like one "
		       "that did (measure.hidden_constraints)\n",
		       (unsigned long long)r->predicted);
	if (!r->have_best) {
		printf("best        none: %s\n", r->nrecords > r->predicted ? "every evaluated variant failed"
							      : "nothing was evaluated");
		free(cfg);
		free(top);
		return;
	}
	space_config_at(sp, r->records[r->best].index, cfg);
	space_key(sp, cfg, key, sizeof(key));
	fmt_score(objective, a, sizeof(a), best);
	if (is_slo_miss(best))
		printf("best        none met the SLOs; the nearest miss: %s  (evaluation %llu)\n", key,
		       (unsigned long long)r->best + 1);
	else
		printf("best        %s  %s  (found at evaluation %llu)\n", a, key,
		       (unsigned long long)r->best + 1);
	if (r->have_default) {
		space_config_at(sp, r->records[0].index, cfg);
		space_key(sp, cfg, key, sizeof(key));
		fmt_score(objective, b, sizeof(b), dflt);
		printf("default     %s  %s\n", b, key);
		if (isfinite(dflt) && live && !is_slo_miss(best))
			print_live_speedup(s, r, decides);
		else if (live && is_slo_miss(best))
			printf("measured    %lld variant(s) now; %lld answered from the store\n", si.measured,
			       si.from_store), print_rungs(&si);
		else if (isfinite(dflt) && !is_slo_miss(best) && !is_slo_miss(dflt))
			printf(
			    "speedup     %.3fx over the defaults (replay: one time per variant, no "
			    "confidence interval)\n",
			    dflt / best);
	} else if (o->skip_defaults) {
		printf("default     not measured: --no-defaults (a random start instead)\n");
	} else {
		printf("default     not measured: the defaults are not valid in this space\n");
	}
	if (bp) {
		fmt_score(objective, b, sizeof(b), base_s);
		if (isfinite(base_s) && !is_slo_miss(base_s))
			printf("baseline    %s  %s  (what ships: %s); the search's best is %.3fx it%s\n", b, bp->key,
			       bp->from, base_s / best, live ? ", one measurement each (the decision below pairs them)" : "");
		else
			printf("baseline    %s  (what ships: %s): %s\n", bp->key, bp->from,
			       bi < 0 ? "not measured (out of budget, or stopped)" : "it did not measure ok");
	}
	if (ri.exhaustive) {
		fmt_score(objective, a, sizeof(a), ri.best_s);
		printf(
		    "optimum     %s (exhaustive, from the replay file): this run reached %.1f%% of "
		    "it\n",
		    a, 100.0 * ri.best_s / best);
	}
	const char *mname = objective ? objective->metric : "time";
	int vw = (int)strlen(mname) > 12 ? (int)strlen(mname) : 12;
	printf("\n%4s  %*s  %10s  %6s  %-9s  %s\n", "rank", vw, mname, "vs default", "eval", "source",
	       "configuration");
	for (size_t k = 0; k < ntop; k++) {
		const strategy_record *rec = &r->records[top[k]];
		space_config_at(sp, rec->index, cfg);
		space_key(sp, cfg, key, sizeof(key));
		fmt_score(objective, a, sizeof(a), rec->time_s);
		if (isfinite(dflt) && !is_slo_miss(dflt) && !is_slo_miss(rec->time_s))
			snprintf(b, sizeof(b), "%.3fx", dflt / rec->time_s);
		else
			snprintf(b, sizeof(b), "-");
		printf("%4zu  %*s  %10s  %6llu  %-9s  %s\n", k + 1, vw, a, b,
		       (unsigned long long)top[k] + 1, rec->source, key);
	}
	if (live)
		print_busy_sustained(s);
	print_store_best(s, r);
	free(cfg);
	free(top);
}
struct tune_args {
	const char *budget;
	uint64_t topk;
	long finalists;      /* --finalists K; -1: not given (2 for an engine spec, else 0) */
	int rounds;          /* --rounds N: the decision stage's most rounds */
	const char *devices; /* --devices LIST: a pool of one worker per device */
	int mpi;             /* --mpi: the pool's workers are the other MPI ranks */
};

/* The pool of --devices / --mpi for session s, or NULL with the error said
 * (*ex its exit code). devices: "0,1,3", or "all" (every CUDA device). */
static muh_pool *open_pool(const char *path, muh_session *s, const muh_session_opts *so, const struct tune_args *A,
			   int json, int *ex)
{
	char *list[TUNE_FLOW_MAX_DEVICES] = {0};
	size_t n = 0;
	muh_pool *p = NULL;
	muh_diag d;
	diag_clear(&d);
	*ex = EXIT_OK;
	int rc = tune_flow_devices(A->devices, list, &n, &d);
	if (rc == MUH_EINPUT) {
		*ex = cli_usage_error("tune", "%s", d.msg);
		return NULL;
	}
	if (rc) {
		fprintf(stderr, "muh tune: %s\n", d.msg);
		*ex = EXIT_ENV;
		return NULL;
	}
	rc = tune_flow_pool_open(path, s, so, list, n, A->mpi, &p, &d);
	tune_flow_devices_free(list, n);
	if (rc) {
		fprintf(stderr, "muh tune: %s\n", d.msg);
		*ex = cli_exit(rc);
		return NULL;
	}
	if (!json)
		printf("pool        %zu worker(s) on %s (%s)\n", pool_size(p), pool_device(p),
		       A->mpi ? "MPI ranks 1.." : A->devices);
	return p;
}

/* One measurement of the decision stage: a progress line on a terminal. */
static void on_decide(void *ctx, const decide_event *e)
{
	const struct tune *t = ctx;
	if (t->json || !t->bar)
		return;
	char v[64];
	objective_format(t->objective->metric, e->value, v, sizeof(v));
	fprintf(stderr, "\r\033[Kdecide  round %d, %d of %d: %s%s  %s", e->round + 1, e->pos + 1, e->nround,
		e->baseline ? "(defaults) " : "", e->key, isfinite(e->value) ? v : e->status);
	if (e->pos + 1 == e->nround)
		fputc('\n', stderr);
}

/* The decision stage after a live search (decide.h): the defaults and the
 * top --finalists re-measured in alternating rounds; prints its table (or
 * a JSON "decision" event). Returns an exit code: 0 also when nothing was
 * proven (the defaults stay; muh patch --from then refuses). */
static int decide_stage(muh_session *s, const struct tune_args *A, int json)
{
	int engine = tune_flow_is_engine(s);
	const baseline_pick *bp = session_baseline(s);
	long k = tune_flow_finalists(s, A->finalists);
	if (k <= 0)
		return EXIT_OK;
	decide_opts o;
	tune_flow_decide_opts(s, k, A->rounds, &o);
	struct tune t = {.json = json, .bar = isatty(2), .objective = session_objective(s)};
	if (!json) {
		printf("\ndecide      %s and the top %ld%s, re-measured afresh in alternating rounds (%d to %d)%s, "
		       "before any winner is named\n",
		       o.baseline_key ? "the baseline (what ships)" : bp ? "the defaults (what ships)" : "the defaults", k,
		       o.baseline_key ? " (and the defaults)" : "",
		       DECIDE_MIN_ROUNDS, o.max_rounds, engine ? "" : ", each a fresh build warmed to its sustained clock");
		fflush(stdout);
	}
	decide_summary sm;
	muh_diag d;
	diag_clear(&d);
	int rc = session_decide(s, &o, on_decide, &t, &interrupted, &sm, &d);
	if (rc) {
		fprintf(stderr, "muh tune: the decision stage stopped: %s\n", d.msg);
		return cli_exit(rc);
	}
	last_decision = sm.winner >= 0;
	if (json) {
		char *j = decide_summary_json(&sm, session_objective(s));
		cJSON *o2 = j ? cJSON_Parse(j) : NULL;
		free(j);
		if (o2) {
			cJSON_AddStringToObject(o2, "event", "decision");
			print_text(cJSON_PrintUnformatted(o2));
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
		evalcli_print_decision(stdout, &sm, session_objective(s), dk[0] ? dk : NULL, "");
		if (interrupted)
			printf("            (interrupted: the rounds so far are stored; a rerun goes on from them)\n");
	}
	return EXIT_OK;
}

/* Tunes one problem instance: opens its session, prints what was loaded,
 * runs the search, prints the result. Returns an exit code. */
static int tune_one(const char *path, muh_session_opts *so, const struct tune_args *A, int json, size_t nth)
{
	const char *budget = A->budget;
	size_t topk = (size_t)A->topk;
	muh_pool *pool = NULL;
	so->pool = A->devices || A->mpi;
	muh_diag d;
	muh_session *s;
	struct tune t = {.json = json, .bar = isatty(2)};
	so->on_note = on_note;
	so->note_ctx = &t;
	int rc = session_open(path, so, &s, &d);
	if (!rc && session_target(s)) /* Ctrl-C now says what it stops: a server, or a runner */
		evalcli_ctrl_c_text("tune", eval_target_backend(session_target(s)), "what was measured is kept");
	if (rc)
		return evalcli_fail("tune", rc, &d);
	const muh_spec *spec = session_spec(s);
	const muh_space *sp = session_space(s);
	strategy_opts o = so->search;
	int ex = EXIT_OK;
	t.s = s;
	t.sp = sp;
	t.objective = session_objective(s);
	t.problem = session_problem(s);
	if (budget && tune_flow_budget(budget, space_valid(sp), &o.budget, &d)) {
		ex = cli_usage_error("tune", "%s", d.msg);
		goto out;
	}
	session_set_search(s, &o);
	if (!json) {
		char a[32];
		if (nth)
			printf("\n");
		printf("spec        %s (%s)\n", spec->path, spec_format_name(spec->format));
		if (session_hw(s))
			printf("profile     %s\n", session_hw(s)->name);
		if (spec->nproblem)
			printf("problem     %s (instance %zu of %zu)\n", t.problem, session_instance(s),
			       spec_ninstances(spec));
		printf("space       %s valid configurations\n", cli_count(a, sizeof(a), (double)space_valid(sp)));
	}
	if ((rc = session_start(s, &d))) {
		ex = evalcli_fail("tune", rc, &d);
		goto out;
	}
	session_store_info si;
	session_store_stats(s, &si);
	session_replay_info ri;
	session_replay_stats(s, &ri);
	if (!json && si.open && si.resumed)
		printf("store       %s: resuming run %lld, %lld variant(s) already measured\n", so->db, (long long)si.run,
		       si.rows);
	else if (!json && si.open)
		printf("store       %s: run %lld\n", so->db, (long long)si.run);
	transfer_seeds_print(session_transfer_seeds(s), stdout, json); /* issue 13 */
	if (!json && ri.open) {
		char r[32], a[32], b[32], c[32], f[32], i[32], w[32], o[64] = "";
		if (ri.other_problem)
			snprintf(o, sizeof(o), ", %s of another problem instance",
			         cli_count(r, sizeof(r), (double)ri.other_problem));
		printf("replay      %s: %s rows, %s used (%s failed), %s invalid here, %s "
		       "outside the values%s; covers %s of %s valid\n",
		       so->replay, cli_count(r, sizeof(r), (double)ri.rows), cli_count(a, sizeof(a), (double)ri.used),
		       cli_count(f, sizeof(f), (double)ri.failed), cli_count(i, sizeof(i), (double)ri.invalid),
		       cli_count(w, sizeof(w), (double)ri.outside), o, cli_count(b, sizeof(b), (double)ri.covered),
		       cli_count(c, sizeof(c), (double)space_valid(sp)));
	}
	if (so->pool && !(pool = open_pool(path, s, so, A, json, &ex)))
		goto out;
	if (session_evaluator(s)) {
		/* the machine's noise: the defaults timed twice (once per run) */
		double noise;
		int noisy;
		int nrc = session_noise(s, &noise, &noisy, &d);
		if (nrc == MUH_EENV || nrc == MUH_ENOMEM) { /* muh's environment: nothing to search with */
			ex = evalcli_fail("tune", nrc, &d);
			goto out;
		}
		if (nrc == MUH_OK) {
			if (!json) /* stored with the first variant measured */
				printf("noise       %.2f%% (the defaults timed twice%s)\n", 100 * noise,
				       noisy ? ", 3 times over" : "");
			if (noisy)
				fprintf(stderr,
					"muh tune: noisy machine: the defaults' two timings differed by more than "
					"measure.max_noise (%.1f%%) in 3 pairs (%.1f%% over all); the run is marked "
					"noisy and its speedup has no confidence interval\n",
					100 * eval_target_max_noise(session_target(s)), 100 * noise);
		}
	}
	if (!json) {
		uint64_t b = o.budget && o.budget < space_valid(sp) ? o.budget : space_valid(sp);
		if (!space_valid(sp))
			printf("strategy    %s: nothing to evaluate, the constraints leave no valid configuration\n",
			       o.strategy ? o.strategy : "auto");
		else
			printf("strategy    %s, seed %llu, budget %llu evaluations (%.1f%% of the space)%s\n",
			       o.strategy ? o.strategy : "auto", (unsigned long long)o.seed, (unsigned long long)b,
			       100.0 * (double)b / (double)space_valid(sp),
			       o.time_budget_s > 0 ? " or the time limit" : "");
		fflush(stdout);
	}
	strategy_result r;
	if (pool) {
		rc = session_tune_pool(s, pool, on_event, &t, &r, &interrupted, &d);
		session_store_info pi;
		session_store_stats(s, &pi);
		if (!json && isfinite(pi.noise))
			printf("noise       %.2f%% (the defaults timed twice through the pool)\n", 100 * pi.noise);
		if (pool_restarts(pool))
			fprintf(stderr, "muh tune: %zu pool worker(s) died and were started again; their variants were "
					"measured again once\n", pool_restarts(pool));
	} else {
		rc = session_tune(s, on_event, &t, &r, &d);
	}
	if (t.bar && r.nrecords)
		fputc('\n', stderr);
	if (rc == MUH_EINPUT) {
		fprintf(stderr, "muh tune: %s\n", d.msg);
		ex = EXIT_USAGE;
	} else {
		if (rc) /* muh's environment (exit 3): said first, then what was measured */
			fprintf(stderr, "muh tune: %s; what was measured before is kept\n",
				d.msg[0] ? d.msg : "the search stopped on an error");
		session_prepare_info pi;
		session_prepare_stats(s, &pi);
		if (pi.note[0])
			fprintf(stderr, "muh tune: note: prepare: %s; each build compiles what is missing\n", pi.note);
		if (pi.ran)
			fprintf(json ? stderr : stdout,
				"prepare     %zu of %zu variants compiled ahead in %d batch(es) (%d while measuring), %.1f s "
				"(%.1f s waited for), with %d jobs; %zu of the %zu measured were sent to a batch before the "
				"search reached them\n",
				pi.done, pi.asked, pi.ran, pi.background, pi.seconds, pi.blocking_s, so->jobs,
				pi.reached_prepared, pi.reached);
		/* --json: the decision first, so that the final result event's
		 * winner_key is the decision's (what report and patch name) */
		int dex = -1;
		last_decision = -1;
		if (json && !interrupted && session_evaluator(s) && r.have_best && !is_slo_miss(r.records[r.best].time_s) &&
		    rc == MUH_OK)
			dex = decide_stage(s, A, json);
		print_result(s, &o, &r, topk, json, rc, tune_flow_decides_after(s, A->finalists, interrupted, &r, rc));
		if (!objective_is_time(t.objective)) {
			if (session_evaluator(s))
				print_summary(session_store(s), si.run, t.objective, json);
			else if (ri.from_store) {
				muh_store *rs;
				if (store_open_ro(so->replay, &rs, &d) == MUH_OK) {
					print_summary(rs, ri.store_run, t.objective, json);
					store_close(rs);
				}
			}
		}
		ex = cli_exit(rc);
		if (!ex && (!r.have_best || is_slo_miss(r.records[r.best].time_s)))
			ex = EXIT_FINDING;
		if (!ex && dex >= 0)
			ex = dex;
		else if (!ex && !interrupted && session_evaluator(s) && !json)
			ex = decide_stage(s, A, json);
	}
	strategy_result_free(&r);
out:
	pool_close(pool);
	session_close(s);
	return ex;
}

static int tune_each(const char *path, const struct evalcli_opts *eo, const void *ctx);

static int run(int argc, char **argv)
{
	static const struct option opts[] = {
	    EVALCLI_OPTIONS,
	    {"strategy", required_argument, NULL, 's'},
	    {"budget", required_argument, NULL, 'b'},
	    {"time", required_argument, NULL, 't'},
	    {"seed", required_argument, NULL, 'S'},
	    {"replay", required_argument, NULL, 'r'},
	    {"replay-column", required_argument, NULL, 'c'},
	    {"top", required_argument, NULL, 'k'},
	    {"no-seeds", no_argument, NULL, 'n'},
	    {"no-defaults", no_argument, NULL, 'N'},
	    {"db", required_argument, NULL, 'D'},
	    {"fresh", no_argument, NULL, 'F'},
	    {"devices", required_argument, NULL, 'V'},
	    {"mpi", no_argument, NULL, 'M'},
	    {"no-transfer", no_argument, NULL, 'T'},
	    {"seeds-from", required_argument, NULL, 'f'},
	    {"finalists", required_argument, NULL, 'Z'},
	    {"rounds", required_argument, NULL, 'R'},
	    {"baseline", required_argument, NULL, 1001},
	    {"no-baseline", no_argument, NULL, 1002},
	    {"no-spec-seeds", no_argument, NULL, 1003},
	    {NULL, 0, NULL, 0},
	};
	static const char *seeds_from[8]; /* issue 13: --seeds-from files */
	struct evalcli_opts eo = {.so = {.stop = &interrupted}};
	muh_session_opts *so = &eo.so;
	strategy_opts *o = &so->search;
	struct tune_args A = {.topk = 10, .finalists = -1};
	const char *colmap[33] = {0};
	size_t ncol = 0;
	int c, ex, no_seeds = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 's':
			if (!strategy_doc(optarg))
				return cli_usage_error("tune",
				                       "unknown strategy '%s'; known: auto, brute, "
				                       "random, annealing, genetic, ils, model",
				                       optarg);
			o->strategy = optarg;
			break;
		case 'b':
			A.budget = optarg;
			break;
		case 't':
			if (strategy_parse_duration(optarg, &o->time_budget_s))
				return cli_usage_error("tune",
				                       "--time needs a duration such as 90s, "
				                       "15m or 1h30m, not '%s'",
				                       optarg);
			break;
		case 'S':
			if (cli_parse_u64(optarg, &o->seed))
				return cli_usage_error("tune", "--seed needs a number");
			break;
		case 'r':
			so->replay = optarg;
			break;
		case 'c':
			if (ncol == 32 || !strchr(optarg, '='))
				return cli_usage_error("tune", "--replay-column needs PARAM=COLUMN");
			colmap[ncol++] = optarg;
			break;
		case 'k':
			if (cli_parse_u64(optarg, &A.topk) || A.topk > 1000)
				return cli_usage_error("tune", "--top needs a number up to 1000");
			break;
		case 'n': /* no seeds at all: the spec's, transferred ones and files' */
			o->skip_spec_seeds = 1;
			so->no_transfer = 1;
			no_seeds = 1;
			break;
		case 1001:
			so->baseline = optarg;
			break;
		case 1002:
			so->no_baseline = 1;
			break;
		case 1003: /* the spec's seeds only: transfer and --seeds-from stay */
			o->skip_spec_seeds = 1;
			break;
		case 'N':
			o->skip_defaults = 1;
			break;
		case 'D':
			so->db = optarg;
			break;
		case 'F':
			so->fresh = 1;
			break;
		case 'V':
			A.devices = optarg;
			break;
		case 'M':
			A.mpi = 1;
			break;
		case 'Z': {
			uint64_t k;
			if (cli_parse_u64(optarg, &k) || k > DECIDE_MAX_FINALISTS)
				return cli_usage_error("tune", "--finalists needs 0 to %d, not '%s'", DECIDE_MAX_FINALISTS,
						       optarg);
			A.finalists = (long)k;
			break;
		}
		case 'R': {
			uint64_t n;
			if (cli_parse_u64(optarg, &n) || n < DECIDE_MIN_ROUNDS || n > 64)
				return cli_usage_error("tune", "--rounds needs %d to 64, not '%s'", DECIDE_MIN_ROUNDS,
						       optarg);
			A.rounds = (int)n;
			break;
		}
		case 'T': /* issue 13: transfer */
			so->no_transfer = 1;
			break;
		case 'f':
			if (so->nseeds_from == 8)
				return cli_usage_error("tune", "at most 8 --seeds-from files");
			seeds_from[so->nseeds_from++] = optarg;
			so->seeds_from = seeds_from;
			break;
		default:
			if ((ex = evalcli_option("tune", c, optarg, argv, opts, &eo)))
				return ex;
		}
	}
	if (no_seeds && so->nseeds_from)
		return cli_usage_error("tune", "--no-seeds means no seeds at all: drop --seeds-from, or --no-seeds");
	if (so->baseline && so->no_baseline)
		return cli_usage_error("tune", "--baseline names a file; --no-baseline says there is none: pick one");
	if (so->replay && so->fresh && !so->db) /* --replay --db: the replay is stored there */
		return cli_usage_error("tune", "--fresh starts a stored run over: with --replay it needs --db");
	if (so->replay && so->db && !strcmp(so->replay, so->db))
		return cli_usage_error("tune", "--db must not be the --replay store itself");
	if (so->replay && so->jobs)
		return cli_usage_error("tune", "--replay builds nothing: --jobs does not apply");
	if (o->skip_defaults && !so->replay)
		return cli_usage_error("tune", "--no-defaults is for replays: a live run measures the defaults "
					       "(the noise, the decision)");
	if (so->replay && (A.devices || A.mpi))
		return cli_usage_error("tune", "--replay measures nothing: --devices and --mpi do not apply");
	if (A.devices && A.mpi)
		return cli_usage_error("tune", "--mpi takes its workers from mpirun's ranks: no --devices with it");
	if ((A.devices || A.mpi) && so->jobs)
		return cli_usage_error("tune", "--jobs compiles ahead for one evaluator; a pool's workers each build "
					       "their own (drop --jobs)");
	if (!so->db && !so->replay)
		so->db = "muh.db";
	so->measure = !so->replay;
	so->replay_columns = colmap;
	interrupted = 0;
	evalcli_ctrl_c_text("tune", NULL, "what was measured is kept");
	void (*old)(int) = signal(SIGINT, on_sigint);
	evalcli_space_progress("tune", &interrupted); /* a long count shows progress, Ctrl-C stops it */
	ex = evalcli_each_problem("tune", argc, argv, &eo, tune_each, &A);
	evalcli_space_progress(NULL, NULL);
	signal(SIGINT, old);
	/* Ctrl-C: what was measured is saved and printed, then 128 + SIGINT */
	return interrupted && (ex == EXIT_OK || ex == EXIT_FINDING) ? EXIT_INTERRUPTED : ex;
}

static int tune_each(const char *path, const struct evalcli_opts *eo, const void *ctx)
{
	const struct tune_args *A = ctx;
	muh_session_opts so = eo->so;
	return tune_one(path, &so, A, eo->json, eo->nth);
}

MUH_COMMAND(tune, 40, "search a spec's space with a strategy; prints best vs default");
