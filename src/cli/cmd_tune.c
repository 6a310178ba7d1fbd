/*
 * cmd_tune.c — `muh tune`: search a spec's space with a strategy, measure
 * through an objective, print the best against the defaults.
 *
 * The objective is pluggable: open_objective() picks what measures a
 * variant: the evaluator with every measurement in the store (live; a
 * finished variant is answered from the store, which is how a rerun
 * resumes), or a replay table (--replay FILE: a CSV or a store). Ctrl-C
 * stops cleanly after the variant in flight (the event callback asks the
 * driver to stop); a second Ctrl-C kills.
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
#include "muh/deploy.h"
#include "muh/engine.h"
#include "muh/objective.h"
#include "muh/replay.h"
#include "muh/store.h"
#include "muh/strategy.h"

static const char help[] =
    "usage: muh tune SPEC [--strategy NAME] [--budget N] [--time DURATION] [--seed N]\n"
    "                [--db FILE] [--fresh] [--replay FILE] [--top K] [--hw PROFILE]\n"
    "                [--problem K] [--json]\n"
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
    "\n"
    "Live mode (no --replay): every variant is built, fingerprinted, checked and\n"
    "timed by the spec's backend (docs/evaluator.md) and stored in --db (default\n"
    "muh.db), one transaction per variant. Running the same command again resumes:\n"
    "finished variants are answered from the store, not measured again (--fresh\n"
    "starts over). The defaults are timed twice first for the noise; the speedup\n"
    "is printed with a confidence interval from the two medians' intervals.\n"
    "\n"
    "strategies:\n"
    "  auto        (default) a multi-armed bandit over ils and annealing, credited\n"
    "              by the area under the best-so-far curve (OpenTuner/ATF)\n"
    "  brute       every valid configuration, in index order\n"
    "  random      uniform over the valid configurations, never repeating\n"
    "  annealing   simulated annealing over neighbours\n"
    "  genetic     a genetic algorithm: tournament, uniform crossover, mutation\n"
    "  ils         iterated local search over neighbours\n"
    "\n"
    "options:\n"
    "  --strategy NAME     one of the above\n"
    "  --budget N | N%     at most N evaluations (or N% of the valid space, rounded down);\n"
    "                      default: the whole space\n"
    "  --time DURATION     start no evaluation after DURATION (90, 90s, 15m, 1h30m);\n"
    "                      with --budget too, the run stops at whichever comes first\n"
    "  --seed N            random seed (default 0)\n"
    "  --db FILE           the store of live measurements (default muh.db)\n"
    "  --fresh             forget this run's measurements in the store first\n"
    "  --replay FILE       answer from measurements in FILE (CSV or store)\n"
    "  --replay-column PARAM=COLUMN\n"
    "                      read PARAM from COLUMN (repeatable); time=COLUMN and\n"
    "                      status=COLUMN name those columns\n"
    "  --no-seeds          do not evaluate the spec's seeds\n"
    "  --top K             rows in the top table (default 10)\n"
    "  --hw PROFILE        hardware profile for hw.* (default: the spec's hw:)\n"
    "  --problem K         problem instance K (0-based), default 0\n"
    "  --json              one JSON object per line: an event per finished variant\n"
    "                      {event: variant, n, budget, key, config, status, time_s,\n"
    "                      improved, best_s, source, elapsed_s, and for a measured-\n"
    "                      metric objective value and metrics}, seed_skipped,\n"
    "                      predicted_fail and drift events, a winners event,\n"
    "                      and a final {event: result, ...}; nothing else on stdout\n"
    "\n"
    "A one-line progress bar (evaluated/budget, best so far, ETA, failures) is\n"
    "drawn on stderr when stderr is a terminal. Ctrl-C stops after the variant in\n"
    "flight and prints what was found.\n"
    "\n"
    "examples:\n"
    "  muh tune specs/matmul_cpu.yaml --budget 20          live, cpu backend, muh.db\n"
    "  muh tune specs/fused_moe.yaml --replay ../shared/corpora/h200-fused-moe/sweep_M256.csv\n"
    "  muh tune specs/fused_moe.yaml --replay sweep.csv --strategy ils --budget 5% --seed 3\n";

/* What measures a variant, and how to let it go. */
struct live;

struct tune_objective {
	strategy_objective fn;
	void *ctx;
	void (*release)(void *ctx);
	struct live *live; /* set in live mode */
	const char *what; /* "replay FILE" */
	const muh_objective *objective;
	int64_t store_run; /* replay from a store: the run replayed */
	int exhaustive;   /* the objective knows every valid configuration */
	uint64_t best_index;
	double best_s; /* the exhaustive best, when exhaustive */
};

struct live;

struct tune {
	const muh_space *sp;
	const muh_objective *objective;
	struct live *live; /* live mode: the last measurement's metrics */
	int json, bar;
	double last_bar;
	char key[4096];
};

static volatile sig_atomic_t interrupted;

static void on_sigint(int sig)
{
	interrupted = 1;
	signal(sig, SIG_DFL); /* a second Ctrl-C kills */
}

static void fmt_time(char *buf, size_t n, double s)
{
	if (!isfinite(s))
		snprintf(buf, n, "-");
	else if (s < 1e-6)
		snprintf(buf, n, "%.1f ns", s * 1e9);
	else if (s < 1e-3)
		snprintf(buf, n, "%.1f us", s * 1e6);
	else if (s < 1)
		snprintf(buf, n, "%.3f ms", s * 1e3);
	else
		snprintf(buf, n, "%.3f s", s);
}

/* A score for a person: a time, or the objective's metric ("812.5 tok/s"). */
static int is_slo_miss(double score);

static void fmt_score(const muh_objective *o, char *buf, size_t n, double score)
{
	if (is_slo_miss(score))
		snprintf(buf, n, "slo miss");
	else if (!o || !strcmp(o->metric, "time") || !isfinite(score))
		fmt_time(buf, n, score);
	else
		objective_format(o->metric, objective_value(o, score), buf, n);
}

static cJSON *config_json(const muh_space *sp, const uint32_t *cfg)
{
	const muh_spec *s = space_spec(sp);
	cJSON *o = cJSON_CreateObject();
	for (size_t p = 0; p < space_nparams(sp); p++) {
		muh_value v = space_value(sp, cfg, p);
		if (v.t == MUH_INT)
			cJSON_AddNumberToObject(o, s->params[p].name, (double)v.u.i);
		else if (v.t == MUH_FLOAT)
			cJSON_AddNumberToObject(o, s->params[p].name, v.u.f);
		else
			cJSON_AddStringToObject(o, s->params[p].name, v.u.s);
	}
	return o;
}

static void print_line(cJSON *o)
{
	char *txt = cJSON_PrintUnformatted(o);
	if (txt) {
		puts(txt);
		fflush(stdout);
	}
	free(txt);
	cJSON_Delete(o);
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

static const char *live_last_metrics(const struct live *L);

static int on_event(void *ctx, const strategy_event *ev)
{
	struct tune *t = ctx;
	if (ev->kind == STRATEGY_EV_PREDICTED) {
		space_key(t->sp, ev->cfg, t->key, sizeof(t->key));
		if (t->json) {
			cJSON *o = cJSON_CreateObject();
			cJSON_AddStringToObject(o, "event", "predicted_fail");
			cJSON_AddStringToObject(o, "key", t->key);
			cJSON_AddStringToObject(o, "reason", ev->reason);
			print_line(o);
		} else {
			fprintf(stderr, "%smuh tune: not measured: %s is %s\n", t->bar ? "\r\033[K" : "", t->key,
				ev->reason);
		}
		return interrupted;
	}
	if (ev->kind == STRATEGY_EV_SEED_SKIPPED || ev->kind == STRATEGY_EV_DEFAULT_INVALID) {
		if (t->json) {
			cJSON *o = cJSON_CreateObject();
			cJSON_AddStringToObject(o, "event",
			                        ev->kind == STRATEGY_EV_SEED_SKIPPED
			                            ? "seed_skipped"
			                            : "default_invalid");
			if (ev->kind == STRATEGY_EV_SEED_SKIPPED) {
				cJSON_AddNumberToObject(o, "seed", (double)ev->seed);
				cJSON_AddNumberToObject(o, "line", ev->seed_line);
			}
			if (ev->cfg) {
				space_key(t->sp, ev->cfg, t->key, sizeof(t->key));
				cJSON_AddStringToObject(o, "key", t->key);
			}
			cJSON_AddStringToObject(o, "reason", ev->reason);
			print_line(o);
		} else {
			const muh_spec *s = space_spec(t->sp);
			if (ev->cfg)
				space_key(t->sp, ev->cfg, t->key, sizeof(t->key));
			if (ev->kind == STRATEGY_EV_SEED_SKIPPED)
				fprintf(stderr, "%s:%d: note: seed %zu (%s) skipped: %s\n", s->path,
				        ev->seed_line, ev->seed + 1, ev->cfg ? t->key : "?",
				        ev->reason);
			else
				fprintf(stderr,
				        "%s: note: the defaults (%s) are not measured: %s\n",
				        s->path, t->key, ev->reason);
		}
		return interrupted;
	}
	if (t->json) {
		cJSON *o = cJSON_CreateObject();
		cJSON_AddStringToObject(o, "event", "variant");
		cJSON_AddNumberToObject(o, "n", (double)ev->evaluated);
		cJSON_AddNumberToObject(o, "budget", (double)ev->budget);
		space_key(t->sp, ev->cfg, t->key, sizeof(t->key));
		cJSON_AddStringToObject(o, "key", t->key);
		cJSON_AddItemToObject(o, "config", config_json(t->sp, ev->cfg));
		cJSON_AddStringToObject(o, "status",
		                        ev->m->status_text ? ev->m->status_text
		                        : ev->m->status    ? "failed"
		                                           : "ok");
		if (ev->m->status == 0 && isfinite(ev->m->time_s) && !is_slo_miss(ev->m->time_s))
			cJSON_AddNumberToObject(o, "time_s", ev->m->time_s);
		else
			cJSON_AddNullToObject(o, "time_s");
		cJSON_AddBoolToObject(o, "improved", ev->improved);
		if (isfinite(ev->best_s) && !is_slo_miss(ev->best_s))
			cJSON_AddNumberToObject(o, "best_s", ev->best_s);
		else
			cJSON_AddNullToObject(o, "best_s");
		cJSON_AddStringToObject(o, "source", ev->source);
		cJSON_AddNumberToObject(o, "elapsed_s", ev->elapsed_s);
		const char *lm = live_last_metrics(t->live);
		if (lm && t->objective && strcmp(t->objective->metric, "time")) {
			cJSON *mx = cJSON_Parse(lm);
			const cJSON *v = cJSON_GetObjectItemCaseSensitive(mx, t->objective->metric);
			if (cJSON_IsNumber(v))
				cJSON_AddNumberToObject(o, "value", v->valuedouble);
			if (mx)
				cJSON_AddItemToObject(o, "metrics", mx);
		}
		print_line(o);
	}
	if (t->bar)
		draw_bar(t, ev, 0);
	return interrupted;
}

static void replay_release(void *ctx)
{
	replay_free(ctx);
}

/* Live measurement: the evaluator, with the store answering what it
 * already holds. */
struct live {
	struct evalcli ec; /* spec, profile and space are the caller's */
	muh_evaluator *ev;
	muh_store *st;
	int64_t run;
	int resumed;
	long long measured, from_store, slo_missed;
	double noise;
	int noisy; /* the defaults' timings stayed beyond measure.max_noise: no speedup CI */
	const muh_objective *objective;
	/* drift: the defaults re-measured every target.drift_every variants */
	uint32_t *since;   /* configurations measured since the last check, np each */
	size_t nsince;
	double baseline;   /* the defaults' score at the last check (NAN: none yet) */
	long long drifts, remeasured;
	int json;
	char *last_metrics; /* the metrics JSON of the variant just answered (for --json events) */
	/* hidden constraints: configurations that failed to start, and those
	 * that started (np values each); confirmed[f]: a second failure at
	 * least as large as fails[f] was seen */
	uint32_t *fails, *started;
	size_t nfails, nstarted, capfails, capstarted;
	unsigned char *confirmed;
};

/* 1 when measurement m failed before the variant ran at all (the build,
 * or an engine that never got ready): what hidden constraints learn from. */
static int failed_to_start(const muh_measurement *m)
{
	return m->nsamples == 0 && !(m->t_time > 0) &&
	       (m->status == EVAL_LAUNCH_ERROR || m->status == EVAL_CRASH || m->status == EVAL_TIMEOUT ||
		m->status == EVAL_COMPILE_ERROR);
}

static int remember(uint32_t **arr, size_t *n, size_t *cap, const uint32_t *cfg, size_t np)
{
	if (*n == *cap) {
		size_t nc = *cap ? *cap * 2 : 16;
		uint32_t *na = realloc(*arr, nc * np * sizeof(uint32_t));
		if (!na)
			return MUH_ENOMEM;
		*arr = na;
		*cap = nc;
	}
	memcpy(*arr + *n * np, cfg, np * sizeof(uint32_t));
	(*n)++;
	return MUH_OK;
}

/* 1 when configuration a is at least b in every param: numbers compare by
 * value, anything else must be equal. */
static int at_least(const muh_space *sp, const uint32_t *a, const uint32_t *b)
{
	for (size_t p = 0; p < space_nparams(sp); p++) {
		muh_value x = space_value(sp, a, p), y = space_value(sp, b, p);
		int num = (x.t == MUH_INT || x.t == MUH_FLOAT) && (y.t == MUH_INT || y.t == MUH_FLOAT);
		if (!num) {
			if (!value_eq(x, y))
				return 0;
			continue;
		}
		double xv = x.t == MUH_INT ? (double)x.u.i : x.u.f, yv = y.t == MUH_INT ? (double)y.u.i : y.u.f;
		if (xv < yv)
			return 0;
	}
	return 1;
}

/* 1 when a configuration that started is at least as large as fails[f]:
 * then that failure is not about size, and predicts nothing. */
static int refuted(const struct live *L, size_t f)
{
	const muh_space *sp = L->ec.space;
	size_t np = space_nparams(sp);
	for (size_t k = 0; k < L->nstarted; k++)
		if (at_least(sp, L->started + k * np, L->fails + f * np))
			return 1;
	return 0;
}

/* predict_fail, the hidden-constraint model: a failure to start is taken
 * to be about size (memory, slots x context): everything at least as large
 * in every param fails too. The first configuration in such a region is
 * measured anyway, as a probe; when it fails to start as well the region is
 * confirmed and the rest of it is never measured; when it starts, or any
 * configuration at least as large does, the region is refuted. */
static int live_predict_fail(void *ctx, const uint32_t *cfg, char *why, size_t n)
{
	struct live *L = ctx;
	const muh_space *sp = L->ec.space;
	size_t np = space_nparams(sp);
	for (size_t f = 0; f < L->nfails; f++) {
		const uint32_t *F = L->fails + f * np;
		if (!L->confirmed[f] || !at_least(sp, cfg, F) || refuted(L, f))
			continue;
		char key[2048];
		space_key(sp, F, key, sizeof(key));
		snprintf(why, n, "at least as large in every param as %s, which failed to start (and so did a "
			 "larger one)", key);
		return 1;
	}
	return 0;
}

/* Learns from measurement m of cfg for the hidden-constraint model. */
static int learn_hidden(struct live *L, const uint32_t *cfg, const muh_measurement *m)
{
	const muh_space *sp = L->ec.space;
	size_t np = space_nparams(sp);
	if (!failed_to_start(m))
		return remember(&L->started, &L->nstarted, &L->capstarted, cfg, np);
	for (size_t f = 0; f < L->nfails; f++) /* a probe that failed confirms its region */
		if (at_least(sp, cfg, L->fails + f * np))
			L->confirmed[f] = 1;
	size_t cap = L->capfails;
	if (remember(&L->fails, &L->nfails, &L->capfails, cfg, np))
		return MUH_ENOMEM;
	if (L->capfails != cap) {
		unsigned char *nc = realloc(L->confirmed, L->capfails);
		if (!nc)
			return MUH_ENOMEM;
		L->confirmed = nc;
	}
	L->confirmed[L->nfails - 1] = 0;
	return MUH_OK;
}

static void score_measurement(const muh_objective *o, const muh_measurement *m, strategy_measurement *out);

/* Measures configuration cfg and records it (replace: over its row). */
static int measure_cfg(struct live *L, const uint32_t *cfg, int replace, muh_measurement *m, muh_diag *d)
{
	muh_variant v;
	if (eval_variant_from_space(L->ec.space, cfg, L->ec.instance, &v))
		return MUH_ENOMEM;
	int rc = eval_measure(L->ev, &v, m, d);
	if (!rc)
		rc = replace ? store_replace(L->st, L->run, &v, m, d) : store_put(L->st, L->run, &v, m, d);
	eval_variant_free(&v);
	return rc;
}

/* The drift check: the defaults measured again. When their score moved
 * beyond the noise (at least 5%, or twice the run's noise) since the last
 * check, says so and measures again every variant measured since, over
 * their rows in the store. The defaults' new score is the next baseline. */
static int drift_check(struct live *L)
{
	const muh_space *sp = L->ec.space;
	size_t np = space_nparams(sp);
	uint32_t *def = calloc(np + 1, sizeof(uint32_t));
	muh_measurement m;
	muh_diag d;
	diag_clear(&d);
	int rc = MUH_OK;
	if (!def || !space_default(sp, def)) {
		free(def);
		L->nsince = 0;
		return def ? MUH_OK : MUH_ENOMEM;
	}
	measurement_init(&m);
	muh_variant v;
	if (eval_variant_from_space(sp, def, L->ec.instance, &v)) {
		free(def);
		return MUH_ENOMEM;
	}
	if (!isfinite(L->baseline)) { /* the first check: the defaults as stored */
		muh_measurement first;
		if (store_get(L->st, L->run, v.key, &first) == 1)
			L->baseline = objective_score(L->objective, &first);
		measurement_free(&first);
	}
	rc = eval_measure(L->ev, &v, &m, &d);
	double now = objective_score(L->objective, &m);
	measurement_free(&m);
	double thr = isfinite(L->noise) && 2 * L->noise > 0.05 ? 2 * L->noise : 0.05;
	double moved = isfinite(now) && isfinite(L->baseline) ? now / L->baseline - 1 : 0;
	if (!rc && fabs(moved) > thr) {
		L->drifts++;
		if (L->json) {
			cJSON *o = cJSON_CreateObject();
			cJSON_AddStringToObject(o, "event", "drift");
			cJSON_AddStringToObject(o, "defaults", v.key);
			cJSON_AddNumberToObject(o, "moved", moved);
			cJSON_AddNumberToObject(o, "threshold", thr);
			cJSON_AddNumberToObject(o, "remeasure", (double)L->nsince);
			print_line(o);
		} else {
			fprintf(stderr,
				"muh tune: drift: the defaults' score moved %+.1f%% since the last check (more than "
				"the %.1f%% noise allows); measuring again the %zu variant(s) measured since\n",
				100 * moved, 100 * thr, L->nsince);
		}
		for (size_t i = 0; i < L->nsince && !rc; i++) {
			measurement_init(&m);
			rc = measure_cfg(L, L->since + i * np, 1, &m, &d);
			measurement_free(&m);
			L->remeasured++;
		}
	}
	if (isfinite(now))
		L->baseline = now;
	if (rc)
		fprintf(stderr, "muh tune: %s\n", d.msg);
	L->nsince = 0;
	eval_variant_free(&v);
	free(def);
	return rc;
}

/* What the strategy is told of measurement m: its score under the
 * objective (the median time for kernel specs). An SLO miss is ok with a
 * penalized score (objective_search_score: every feasible variant ranks
 * first, the nearest miss next), so the search can move towards the SLOs
 * when nothing meets them yet; it is shown as "slo_miss" and never
 * reported as a winner. */
static void score_measurement(const muh_objective *o, const muh_measurement *m, strategy_measurement *out)
{
	int feasible = 1;
	out->status = m->status == EVAL_OK ? 0 : (int)m->status;
	out->status_text = eval_status_name(m->status);
	out->time_s = m->status == EVAL_OK ? objective_search_score(o, m, &feasible) : NAN;
	if (m->status == EVAL_OK && !isfinite(out->time_s)) {
		out->status = EVAL_INVALID;
		out->status_text = "invalid";
	} else if (m->status == EVAL_OK && !feasible) {
		out->status_text = "slo_miss";
	}
}

/* 1 when a score is an SLO miss's penalized one. */
static int is_slo_miss(double score)
{
	return isfinite(score) && score >= OBJECTIVE_PENALTY;
}

static const char *live_last_metrics(const struct live *L)
{
	return L ? L->last_metrics : NULL;
}

static int live_objective(void *ctx, const uint32_t *cfg, strategy_measurement *out)
{
	struct live *L = ctx;
	muh_variant v;
	muh_measurement m;
	muh_diag d;
	diag_clear(&d);
	if (eval_variant_from_space(L->ec.space, cfg, L->ec.instance, &v))
		return MUH_ENOMEM;
	measurement_init(&m);
	int rc = MUH_OK, cl = 1;
	if (store_get(L->st, L->run, v.key, &m) == 1) {
		L->from_store++;
	} else if ((cl = store_claim_or_get(L->st, L->run, v.key, &m, &d, &interrupted)) < 1) {
		/* store (issue 17): another muh on this run measured it: its row */
		L->from_store += cl == 0;
		if (cl < 0 && (rc = MUH_EENV))
			fprintf(stderr, "muh tune: %s\n", d.msg);
	} else {
		measurement_free(&m);
		measurement_init(&m);
		rc = eval_measure(L->ev, &v, &m, &d);
		if (!rc)
			rc = store_put(L->st, L->run, &v, &m, &d);
		if (rc == STORE_KEPT) /* store: not ours that is kept, so not ours that counts */
			rc = (measurement_free(&m), store_get(L->st, L->run, v.key, &m)) == 1 ? MUH_OK : MUH_EENV;
		store_release(L->st, L->run, v.key);
		if (rc)
			fprintf(stderr, "muh tune: %s\n", d.msg);
		if (!L->measured && isfinite(L->noise)) /* store: a resume that measures nothing keeps the noise */
			store_set_noise(L->st, L->run, L->noise);
		L->measured++;
		int every = L->ec.target.drift_every;
		if (!rc && every > 0 && L->since) {
			size_t np = space_nparams(L->ec.space);
			memcpy(L->since + L->nsince * np, cfg, np * sizeof(uint32_t));
			if (++L->nsince >= (size_t)every)
				rc = drift_check(L);
		}
	}
	if (L->ec.target.hidden) {
		int r2 = learn_hidden(L, cfg, &m);
		if (!rc)
			rc = r2;
	}
	score_measurement(L->objective, &m, out);
	L->slo_missed += is_slo_miss(out->time_s);
	free(L->last_metrics);
	L->last_metrics = m.metrics ? strdup(m.metrics) : NULL;
	measurement_free(&m);
	eval_variant_free(&v);
	return rc;
}

static void live_release(void *ctx)
{
	struct live *L = ctx;
	eval_close(L->ev);
	store_close(L->st);
	free(L->since);
	free(L->last_metrics);
	free(L->fails);
	free(L->started);
	free(L->confirmed);
	free(L);
}

/* An engine spec's defaults are "the engine's current values": says so
 * when one differs from what the launch file holds (after a patch --apply,
 * say), so that nobody reads the run's "default" as the file's. */
static void check_engine_defaults(const muh_spec *s, const muh_target *t)
{
	deploy_file *f;
	muh_diag d;
	diag_clear(&d);
	if (strcmp(t->backend, "engine") || !t->launch[0] || deploy_load(t->launch, NULL, &f, &d))
		return;
	for (size_t p = 0; p < s->nparams; p++) {
		const muh_param *par = &s->params[p];
		const char *name = engine_arg_name(t, par->name);
		const deploy_arg *a = deploy_find(f, name);
		char want[256];
		/* the default as the engine backend would write it (0/1 on a flag: False/True) */
		engine_value_text(f, name, par->values[par->has_default ? par->default_idx : 0], want, sizeof(want));
		if (!a || !strcasecmp(a->value, want))
			continue;
		fprintf(stderr,
			"%s:%d:%d: note: the default %s=%s is not what %s holds (%s %s); the run's \"default\" is the "
			"spec's\n",
			s->path, par->line, par->col, par->name, want, t->launch, a->flag, a->value);
	}
	deploy_free(f);
}

/* Opens the evaluator and the store for live measurement. */
static int open_live(const muh_space *sp, muh_hw *hwp, size_t inst, const char *db, int fresh,
		     const muh_objective *objective, struct tune_objective *obj, int json)
{
	const muh_spec *s = space_spec(sp);
	struct live *L = calloc(1, sizeof(*L));
	if (!L)
		return cli_fail(MUH_ENOMEM, NULL);
	L->ec.spec = (muh_spec *)s;
	L->ec.hwp = hwp;
	L->ec.space = (muh_space *)sp;
	L->ec.instance = inst;
	L->noise = NAN;
	L->baseline = NAN;
	L->json = json;
	L->objective = objective;
	muh_diag d;
	diag_clear(&d);
	int rc = eval_target_from_spec(s, &L->ec.target, &d);
	if (rc) {
		free(L);
		return cli_fail(rc, &d);
	}
	check_engine_defaults(s, &L->ec.target);
	int ex = evalcli_open("tune", &L->ec, &L->ev);
	if (!ex)
		ex = evalcli_begin_run("tune", &L->ec, db, fresh, &L->st, &L->run, &L->resumed);
	if (ex) {
		eval_close(L->ev);
		free(L);
		return ex;
	}
	if (L->resumed && !json)
		printf("store       %s: resuming run %lld, %lld variants already measured\n", db,
		       (long long)L->run, (long long)store_count(L->st, L->run));
	else if (!json)
		printf("store       %s: run %lld\n", db, (long long)L->run);
	/* the machine's noise: the defaults timed twice (once per run), and
	 * again, up to 3 pairs, while the two differ by more than measure.max_noise */
	uint32_t *def = calloc(space_nparams(sp) + 1, sizeof(uint32_t));
	muh_variant v;
	double maxn = L->ec.target.max_noise;
	if (def && space_default(sp, def) && !eval_variant_from_space(sp, def, inst, &v)) {
		if (eval_noise_rounds(L->ev, &v, 2, 3, maxn, &L->noise, &L->noisy, &d) == MUH_OK) {
			if (!json) /* stored with the first variant measured (live_objective) */
				printf("noise       %.2f%% (the defaults timed twice%s)\n", 100 * L->noise,
				       L->noisy ? ", 3 times over" : "");
			if (L->noisy)
				fprintf(stderr,
					"muh tune: noisy machine: the defaults' two timings differed by more than "
					"measure.max_noise (%.1f%%) in 3 pairs (%.1f%% over all); the run is marked "
					"noisy and its speedup has no confidence interval\n",
					100 * maxn, 100 * L->noise);
		}
		eval_variant_free(&v);
	}
	free(def);
	if (L->ec.target.drift_every > 0 &&
	    !(L->since = calloc((size_t)L->ec.target.drift_every * (space_nparams(sp) + 1), sizeof(uint32_t)))) {
		live_release(L);
		return cli_fail(MUH_ENOMEM, NULL);
	}
	obj->fn = live_objective;
	obj->ctx = L;
	obj->release = live_release;
	obj->what = db;
	obj->live = L;
	return EXIT_OK;
}

struct store_fill {
	muh_replay *rp;
	const muh_space *sp;
	const muh_objective *objective;
};

/* store_foreach callback: one stored measurement into the replay table. */
static int replay_fill_row(void *ud, const store_row *row)
{
	struct store_fill *f = ud;
	uint32_t cfg[256];
	muh_diag d;
	const muh_measurement *m = row->m;
	strategy_measurement sm;
	score_measurement(f->objective, m, &sm);
	int ok = sm.status == 0;
	/* a key of another space (values this spec lacks) counts as outside */
	int other = space_nparams(f->sp) > 256 || space_parse_key(f->sp, row->key, cfg, &d);
	return replay_add_row(f->rp, other ? NULL : cfg, ok ? sm.time_s : NAN, ok ? REPLAY_OK : sm.status,
			      sm.status_text);
}

/* Replay from a store: loads every measurement of this spec's run. */
static int load_store_replay(const muh_space *sp, size_t inst, const char *path,
			     const muh_objective *objective, muh_replay **out, int64_t *runp)
{
	const muh_spec *s = space_spec(sp);
	muh_store *st;
	muh_diag d;
	diag_clear(&d);
	int rc = store_open_ro(path, &st, &d);
	if (rc)
		return cli_fail(rc, &d);
	char hash[17];
	store_spec_hash(s->text ? s->text : "", s->text ? strlen(s->text) : 0, hash);
	int64_t run = 0;
	rc = store_find_run(st, hash, (int64_t)inst, NULL, NULL, &run, &d);
	if (!rc && !run && s->name) {
		/* the spec's text changed since (or the store was made with a
		 * copy): same name and instance will do, the replay table checks
		 * every row against this space */
		char other[EVAL_PATH], problem[512];
		evalcli_problem(s, inst, problem, sizeof(problem));
		rc = store_find_run_named(st, s->name, (int64_t)inst, problem, &run, other, sizeof(other), &d);
		if (!rc && run)
			fprintf(stderr,
				"muh tune: note: %s has no run of this exact spec text; replaying run %lld, measured "
				"with %s (same name '%s', problem instance %zu: %s)\n",
				path, (long long)run, other[0] ? other : "an unnamed spec", s->name, inst,
				problem[0] ? problem : "no problem symbols");
	}
	if (rc || !run) {
		fprintf(stderr, "muh tune: %s holds no run of %s (problem instance %zu)\n", path,
			s->path, inst);
		int64_t other_run = 0;
		char other[EVAL_PATH];
		if (s->name && !store_find_run_named(st, s->name, (int64_t)inst, NULL, &other_run, other,
						     sizeof(other), &d) && other_run)
			fprintf(stderr,
				"muh tune: its run %lld of '%s' (instance %zu) was measured for other problem "
				"values than this spec's; `muh report %s` lists them\n",
				(long long)other_run, s->name, inst, path);
		store_close(st);
		return EXIT_USAGE;
	}
	*runp = run;
	rc = replay_new(sp, out);
	struct store_fill fill = {*out, sp, objective};
	if (!rc)
		rc = store_foreach(st, run, replay_fill_row, &fill);
	store_close(st);
	if (rc) {
		replay_free(*out);
		*out = NULL;
		return cli_fail(rc, NULL);
	}
	return EXIT_OK;
}

/* Opens what will measure variants: the evaluator and the store (live), or
 * a replay table (a CSV or a store). Returns an exit code. */
static int open_objective(const muh_space *sp, muh_hw *hwp, size_t inst, const char *db,
			  int fresh, const char *replay_path, const char *const *colmap,
			  const muh_objective *objective, struct tune_objective *obj, int json)
{
	memset(obj, 0, sizeof(*obj));
	obj->objective = objective;
	if (!replay_path)
		return open_live(sp, hwp, inst, db, fresh, objective, obj, json);
	FILE *f = fopen(replay_path, "rb");
	char magic[16] = {0};
	int is_store = 0;
	struct stat rst;
	if (!f && (errno == ENOENT || errno == ENOTDIR)) {
		fprintf(stderr, "muh tune: cannot read the replay file %s: %s\n", replay_path, strerror(errno));
		return EXIT_USAGE;
	}
	if (f && !fstat(fileno(f), &rst) && S_ISDIR(rst.st_mode)) {
		fclose(f);
		fprintf(stderr, "muh tune: the replay file %s is a directory\n", replay_path);
		return EXIT_USAGE;
	}
	if (f) {
		size_t got = fread(magic, 1, sizeof(magic), f);
		is_store = got == 16 && !memcmp(magic, "SQLite format 3", 16);
		fclose(f);
	}
	muh_diag d;
	muh_replay *rp = NULL;
	int rc;
	if (is_store) {
		int ex = load_store_replay(sp, inst, replay_path, objective, &rp, &obj->store_run);
		if (ex)
			return ex;
		rc = MUH_OK;
	} else if (strcmp(objective->metric, "time")) {
		fprintf(stderr, "muh tune: a CSV replay holds times only; the objective %s needs a store (muh.db)\n",
			objective->metric);
		return EXIT_USAGE;
	} else {
		rc = replay_load_csv(sp, replay_path, colmap, &rp, &d);
	}
	if (rc) {
		if (rc == MUH_EENV)
			fprintf(stderr, "muh tune: %s\n", d.msg);
		else
			diag_print(stderr, &d);
		return cli_exit(rc);
	}
	replay_stats st;
	replay_get_stats(rp, &st);
	if (!st.covered) {
		fprintf(stderr,
		        "muh tune: %s has no measurement of any valid configuration of this "
		        "space (%llu rows: %llu outside its values, %llu invalid here)\n",
		        replay_path, (unsigned long long)st.rows, (unsigned long long)st.outside,
		        (unsigned long long)st.invalid);
		replay_free(rp);
		return EXIT_USAGE;
	}
	obj->fn = replay_objective;
	obj->ctx = rp;
	obj->release = replay_release;
	obj->what = replay_path;
	obj->exhaustive = st.covered == space_valid(sp);
	if (obj->exhaustive && !replay_best(rp, &obj->best_index, &obj->best_s))
		obj->exhaustive = 0;
	if (!json) {
		char r[32], a[32], b[32], c[32], f[32], i[32], o[32];
		printf("replay      %s: %s rows, %s used (%s failed), %s invalid here, %s "
		       "outside the values; covers %s of %s valid\n",
		       replay_path, cli_count(r, sizeof(r), (double)st.rows),
		       cli_count(a, sizeof(a), (double)st.used), cli_count(f, sizeof(f), (double)st.failed),
		       cli_count(i, sizeof(i), (double)st.invalid), cli_count(o, sizeof(o), (double)st.outside),
		       cli_count(b, sizeof(b), (double)st.covered),
		       cli_count(c, sizeof(c), (double)space_valid(sp)));
	}
	return EXIT_OK;
}

/* The speedup of the best over the defaults, with the interval the two
 * medians' 95% confidence intervals give, and a tie inside the noise. On a
 * noisy run (L->noisy) the ratio alone: no interval the data cannot back. */
static void print_live_speedup(const muh_space *sp, struct live *L, const strategy_result *r,
			       uint32_t *cfg)
{
	char kb[4096], kd[4096];
	muh_measurement b, d;
	measurement_init(&b);
	measurement_init(&d);
	space_config_at(sp, r->records[r->best].index, cfg);
	space_key(sp, cfg, kb, sizeof(kb));
	space_config_at(sp, r->records[0].index, cfg);
	space_key(sp, cfg, kd, sizeof(kd));
	int found = store_get(L->st, L->run, kb, &b) == 1 && store_get(L->st, L->run, kd, &d) == 1 &&
		    b.status == EVAL_OK && d.status == EVAL_OK;
	int per_token = !strcmp(L->objective->metric, "output_tokens_per_s") && L->objective->maximize;
	if (found && per_token) { /* the samples are seconds per output token: a time's CI */
		double g = d.median / b.median, lo = d.ci_lo / b.ci_hi, hi = d.ci_hi / b.ci_lo;
		int tie = eval_compare(&d, &b, isfinite(L->noise) ? L->noise : 0) == 0;
		if (L->noisy)
			printf("gain        %.3fx the defaults' output_tokens_per_s (noisy machine: no CI)%s\n", g,
			       tie ? "; a tie: inside the noise" : "");
		else
			printf("gain        %.3fx the defaults' output_tokens_per_s (95%% CI %.3f-%.3fx, from %zu and "
			       "%zu load runs)%s\n",
			       g, lo, hi, b.nsamples, d.nsamples, tie ? "; a tie: inside the noise" : "");
	} else if (found && strcmp(L->objective->metric, "time")) {
		double bs = objective_score(L->objective, &b), ds = objective_score(L->objective, &d);
		int tie = isfinite(L->noise) && fabs(ds / bs - 1) <= L->noise;
		printf("gain        %.3fx the defaults' %s (%s%s)%s\n", ds / bs, L->objective->metric,
		       L->objective->maximize ? "higher is better" : "lower is better",
		       L->noisy ? "; noisy machine: no CI" : "", tie ? "; a tie: inside the noise" : "");
	} else if (found) {
		double sp_ = d.median / b.median;
		double lo = d.ci_lo / b.ci_hi, hi = d.ci_hi / b.ci_lo;
		int tie = eval_compare(&d, &b, isfinite(L->noise) ? L->noise : 0) == 0;
		if (L->noisy)
			printf("speedup     %.3fx over the defaults (noisy machine: no CI)%s\n", sp_,
			       tie ? "; a tie: inside the noise" : "");
		else
			printf("speedup     %.3fx over the defaults (95%% CI %.3f-%.3fx)%s\n", sp_, lo, hi,
			       tie ? "; a tie: inside the noise" : "");
	}
	measurement_free(&b);
	measurement_free(&d);
	printf("measured    %lld variant(s) now; %lld answered from the store\n", L->measured,
	       L->from_store);
	if (L->drifts)
		printf("drift       the defaults moved beyond the noise %lld time(s); %lld variant(s) measured again "
		       "(the store and the summary hold the new values)\n",
		       L->drifts, L->remeasured);
}

/* Every variant of a live run with a measured-metric objective, and the
 * two winners: under the SLOs (the strategy's best) and ignoring them. */
struct summary {
	const muh_objective *o;
	int json;
	int keyw;
	objective_winners w;
	size_t rows, ok, missed;
};

static int summary_row(void *ud, const store_row *row)
{
	struct summary *S = ud;
	const muh_measurement *m = row->m;
	char why[256] = "";
	int feas = objective_winners_offer(&S->w, S->o, row->key, m, why, sizeof(why));
	S->rows++;
	S->ok += m->status == EVAL_OK;
	S->missed += m->status == EVAL_OK && !feas;
	if (S->json)
		return 0;
	char v[32], a[32], b[32];
	objective_format(S->o->metric, measurement_metric(m, S->o->metric), v, sizeof(v));
	objective_format("ttft_p99", measurement_metric(m, "ttft_p99"), a, sizeof(a));
	objective_format("tpot_p50", measurement_metric(m, "tpot_p50"), b, sizeof(b));
	const char *note = m->status != EVAL_OK ? m->error : feas ? "" : why;
	printf("  %-*s  %-12s  %14s  %10s  %10s%s%.*s\n", S->keyw, row->key,
	       m->status == EVAL_OK && !feas ? "slo_miss" : eval_status_name(m->status), v, a, b, *note ? "  " : "",
	       120, note);
	return 0;
}

static int summary_keyw(void *ud, const store_row *row)
{
	int *w = ud, n = (int)strlen(row->key);
	*w = n > *w ? n : *w;
	return 0;
}

static void print_summary(muh_store *st, int64_t run, const muh_objective *objective, int json)
{
	struct summary S = {.o = objective, .json = json, .keyw = 13};
	objective_winners_init(&S.w);
	store_foreach(st, run, summary_keyw, &S.keyw);
	char desc[1024];
	objective_describe(objective, desc, sizeof(desc));
	if (!json) {
		printf("\nobjective   %s\n", desc);
		printf("  %-*s  %-12s  %14s  %10s  %10s  %s\n", S.keyw, "configuration", "status", objective->metric,
		       "ttft_p99", "tpot_p50", "why");
	}
	store_foreach(st, run, summary_row, &S);
	char a[32], b[32];
	objective_format(objective->metric, objective_value(objective, S.w.best), a, sizeof(a));
	objective_format(objective->metric, objective_value(objective, S.w.best_any), b, sizeof(b));
	int differ = isfinite(S.w.best_any) && strcmp(S.w.key_any, S.w.key);
	if (json) {
		cJSON *o = cJSON_CreateObject();
		cJSON_AddStringToObject(o, "event", "winners");
		cJSON_AddStringToObject(o, "objective", desc);
		cJSON_AddNumberToObject(o, "variants", (double)S.rows);
		cJSON_AddNumberToObject(o, "slo_missed", (double)S.missed);
		if (isfinite(S.w.best)) {
			cJSON_AddStringToObject(o, "slo_best_key", S.w.key);
			cJSON_AddNumberToObject(o, "slo_best", objective_value(objective, S.w.best));
		}
		if (isfinite(S.w.best_any)) {
			cJSON_AddStringToObject(o, "unconstrained_best_key", S.w.key_any);
			cJSON_AddNumberToObject(o, "unconstrained_best", objective_value(objective, S.w.best_any));
		}
		print_line(o);
		return;
	}
	printf("winner      under the SLOs: %s  %s\n", isfinite(S.w.best) ? a : "none",
	       isfinite(S.w.best) ? S.w.key : "(no variant met them)");
	if (differ)
		printf("winner      ignoring the SLOs: %s  %s (misses: %s)\n", b, S.w.key_any, S.w.why_any);
	else if (isfinite(S.w.best_any))
		printf("winner      ignoring the SLOs: the same variant\n");
}

/* After drift re-measurements the store holds newer values than the
 * strategy saw: the result's records take them, and the best is found
 * again, so that the tables and the store agree. */
static void refresh_from_store(struct live *L, const muh_space *sp, strategy_result *r)
{
	if (!L->remeasured)
		return;
	uint32_t *cfg = malloc((space_nparams(sp) + 1) * sizeof(uint32_t));
	char key[4096];
	if (!cfg)
		return;
	r->have_best = 0;
	for (uint64_t i = 0; i < r->nrecords; i++) {
		strategy_record *rec = &r->records[i];
		muh_measurement m;
		space_config_at(sp, rec->index, cfg);
		space_key(sp, cfg, key, sizeof(key));
		if (store_get(L->st, L->run, key, &m) == 1) {
			strategy_measurement sm;
			score_measurement(L->objective, &m, &sm);
			rec->status = sm.status;
			rec->time_s = sm.status == 0 ? sm.time_s : INFINITY;
		}
		measurement_free(&m);
		if (rec->status == 0 && (!r->have_best || rec->time_s < r->records[r->best].time_s)) {
			r->have_best = 1;
			r->best = i;
		}
	}
	free(cfg);
}

static const char *stop_name(enum strategy_stop s)
{
	static const char *const names[] = {"budget", "time", "exhausted", "interrupted", "error"};
	return (unsigned)s < 5 ? names[s] : "?";
}

static void print_result(const muh_space *sp, const strategy_opts *o, const strategy_result *r,
                         const struct tune_objective *obj, size_t topk, int json)
{
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
	double dflt = r->have_default && r->records[0].status == 0 ? r->records[0].time_s : NAN;
	double best = r->have_best ? r->records[r->best].time_s : NAN;
	if (json) {
		cJSON *o2 = cJSON_CreateObject();
		cJSON_AddStringToObject(o2, "event", "result");
		cJSON_AddStringToObject(o2, "strategy", o->strategy ? o->strategy : "auto");
		cJSON_AddNumberToObject(o2, "seed", (double)o->seed);
		cJSON_AddNumberToObject(o2, "budget", (double)r->budget);
		cJSON_AddNumberToObject(o2, "valid", (double)space_valid(sp));
		cJSON_AddNumberToObject(o2, "evaluated", (double)(r->nrecords - r->predicted));
		cJSON_AddNumberToObject(o2, "failed", (double)r->failed);
		cJSON_AddNumberToObject(o2, "predicted_fail", (double)r->predicted);
		cJSON_AddStringToObject(o2, "stop", stop_name(r->stop));
		cJSON_AddNumberToObject(o2, "seconds", r->seconds);
		cJSON_AddBoolToObject(o2, "noisy", obj->live && obj->live->noisy); /* no speedup CI backed */
		if (r->have_best && is_slo_miss(best)) {
			space_config_at(sp, r->records[r->best].index, cfg);
			space_key(sp, cfg, key, sizeof(key));
			cJSON_AddStringToObject(o2, "nearest_slo_miss_key", key);
		} else if (r->have_best) {
			space_config_at(sp, r->records[r->best].index, cfg);
			space_key(sp, cfg, key, sizeof(key));
			cJSON_AddStringToObject(o2, "best_key", key);
			cJSON_AddNumberToObject(o2, "best_s", best);
			cJSON_AddNumberToObject(o2, "best_n", (double)r->best + 1);
		}
		if (isfinite(dflt) && !is_slo_miss(dflt)) {
			cJSON_AddNumberToObject(o2, "default_s", dflt);
			if (r->have_best && !is_slo_miss(best))
				cJSON_AddNumberToObject(o2, "speedup", dflt / best);
		}
		if (obj->exhaustive) {
			cJSON_AddNumberToObject(o2, "optimum_s", obj->best_s);
			if (r->have_best)
				cJSON_AddNumberToObject(o2, "fraction_of_optimum",
				                        obj->best_s / best);
		}
		cJSON *arr = cJSON_AddArrayToObject(o2, "top");
		for (size_t k = 0; k < ntop; k++) {
			const strategy_record *rec = &r->records[top[k]];
			space_config_at(sp, rec->index, cfg);
			space_key(sp, cfg, key, sizeof(key));
			cJSON *e = cJSON_CreateObject();
			cJSON_AddStringToObject(e, "key", key);
			cJSON_AddNumberToObject(e, "time_s", rec->time_s);
			cJSON_AddNumberToObject(e, "n", (double)top[k] + 1);
			cJSON_AddStringToObject(e, "source", rec->source);
			cJSON_AddItemToArray(arr, e);
		}
		print_line(o2);
		free(cfg);
		free(top);
		return;
	}
	printf("\nevaluated   %llu of a budget of %llu (%llu failed) in %.2f s; stopped: %s\n",
	       (unsigned long long)(r->nrecords - r->predicted), (unsigned long long)r->budget,
	       (unsigned long long)r->failed, r->seconds, stop_name(r->stop));
	if (r->predicted)
		printf("hidden      %llu configuration(s) not measured: predicted to fail to start, like one "
		       "that did (measure.hidden_constraints)\n",
		       (unsigned long long)r->predicted);
	if (!r->have_best) {
		printf("best        none: every evaluated variant failed\n");
		free(cfg);
		free(top);
		return;
	}
	space_config_at(sp, r->records[r->best].index, cfg);
	space_key(sp, cfg, key, sizeof(key));
	fmt_score(obj->objective, a, sizeof(a), best);
	if (is_slo_miss(best))
		printf("best        none met the SLOs; the nearest miss: %s  (evaluation %llu)\n", key,
		       (unsigned long long)r->best + 1);
	else
		printf("best        %s  %s  (found at evaluation %llu)\n", a, key,
		       (unsigned long long)r->best + 1);
	if (r->have_default) {
		space_config_at(sp, r->records[0].index, cfg);
		space_key(sp, cfg, key, sizeof(key));
		fmt_score(obj->objective, b, sizeof(b), dflt);
		printf("default     %s  %s\n", b, key);
		if (isfinite(dflt) && obj->live && !is_slo_miss(best))
			print_live_speedup(sp, obj->live, r, cfg);
		else if (obj->live && is_slo_miss(best))
			printf("measured    %lld variant(s) now; %lld answered from the store\n", obj->live->measured,
			       obj->live->from_store);
		else if (isfinite(dflt) && !is_slo_miss(best) && !is_slo_miss(dflt))
			printf(
			    "speedup     %.3fx over the defaults (replay: one time per variant, no "
			    "confidence interval)\n",
			    dflt / best);
	} else {
		printf("default     not measured: the defaults are not valid in this space\n");
	}
	if (obj->exhaustive) {
		fmt_score(obj->objective, a, sizeof(a), obj->best_s);
		printf(
		    "optimum     %s (exhaustive, from the replay file): this run reached %.1f%% of "
		    "it\n",
		    a, 100.0 * obj->best_s / best);
	}
	const char *mname = obj->objective ? obj->objective->metric : "time";
	int vw = (int)strlen(mname) > 12 ? (int)strlen(mname) : 12;
	printf("\n%4s  %*s  %10s  %6s  %-9s  %s\n", "rank", vw, mname, "vs default", "eval", "source",
	       "configuration");
	for (size_t k = 0; k < ntop; k++) {
		const strategy_record *rec = &r->records[top[k]];
		space_config_at(sp, rec->index, cfg);
		space_key(sp, cfg, key, sizeof(key));
		fmt_score(obj->objective, a, sizeof(a), rec->time_s);
		if (isfinite(dflt) && !is_slo_miss(dflt) && !is_slo_miss(rec->time_s))
			snprintf(b, sizeof(b), "%.3fx", dflt / rec->time_s);
		else
			snprintf(b, sizeof(b), "-");
		printf("%4zu  %*s  %10s  %6llu  %-9s  %s\n", k + 1, vw, a, b,
		       (unsigned long long)top[k] + 1, rec->source, key);
	}
	free(cfg);
	free(top);
}

static int run(int argc, char **argv)
{
	static const struct option opts[] = {
	    {"strategy", required_argument, NULL, 's'},
	    {"budget", required_argument, NULL, 'b'},
	    {"time", required_argument, NULL, 't'},
	    {"seed", required_argument, NULL, 'S'},
	    {"replay", required_argument, NULL, 'r'},
	    {"replay-column", required_argument, NULL, 'c'},
	    {"top", required_argument, NULL, 'k'},
	    {"hw", required_argument, NULL, 'w'},
	    {"problem", required_argument, NULL, 'p'},
	    {"json", no_argument, NULL, 'j'},
	    {"no-seeds", no_argument, NULL, 'n'},
	    {"db", required_argument, NULL, 'D'},
	    {"fresh", no_argument, NULL, 'F'},
	    {NULL, 0, NULL, 0},
	};
	strategy_opts o = {0};
	const char *budget = NULL, *replay = NULL, *hwref = NULL, *db = NULL;
	int fresh = 0;
	const char *colmap[33] = {0};
	size_t ncol = 0;
	uint64_t topk = 10, inst = 0;
	int json = 0, c;
	optind = 1;
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 's':
			if (!strategy_doc(optarg))
				return cli_usage_error("tune",
				                       "unknown strategy '%s'; known: auto, brute, "
				                       "random, annealing, genetic, ils",
				                       optarg);
			o.strategy = optarg;
			break;
		case 'b':
			budget = optarg;
			break;
		case 't':
			if (strategy_parse_duration(optarg, &o.time_budget_s))
				return cli_usage_error("tune",
				                       "--time needs a duration such as 90s, "
				                       "15m or 1h30m, not '%s'",
				                       optarg);
			break;
		case 'S':
			if (cli_parse_u64(optarg, &o.seed))
				return cli_usage_error("tune", "--seed needs a number");
			break;
		case 'r':
			replay = optarg;
			break;
		case 'c':
			if (ncol == 32 || !strchr(optarg, '='))
				return cli_usage_error("tune",
				                       "--replay-column needs PARAM=COLUMN");
			colmap[ncol++] = optarg;
			break;
		case 'k':
			if (cli_parse_u64(optarg, &topk) || topk > 1000)
				return cli_usage_error("tune", "--top needs a number up to 1000");
			break;
		case 'w':
			hwref = optarg;
			break;
		case 'p':
			if (cli_parse_u64(optarg, &inst))
				return cli_usage_error("tune",
				                       "--problem needs an instance number");
			break;
		case 'j':
			json = 1;
			break;
		case 'n':
			o.skip_spec_seeds = 1;
			break;
		case 'D':
			db = optarg;
			break;
		case 'F':
			fresh = 1;
			break;
		default:
			return cli_bad_option("tune", argv, opts);
		}
	}
	if (optind != argc - 1)
		return cli_usage_error("tune", "expected one SPEC file");
	if (replay && (db || fresh))
		return cli_usage_error("tune", "--replay measures nothing: --db and --fresh do not apply");
	if (!db)
		db = "muh.db";
	muh_diag d;
	diag_clear(&d);
	struct evalcli ec;
	int ex = evalcli_load_space("tune", argv[optind], hwref, (size_t)inst, &ec);
	if (ex)
		return ex;
	const muh_spec *s = ec.spec;
	muh_hw *hwp = ec.hwp;
	const muh_space *sp = ec.space;
	int rc;
	muh_objective objective;
	const muh_kv *bk = spec_kv(s, "target.backend");
	if ((rc = objective_from_spec(s, eval_backend_metrics(bk ? bk->value : NULL), &objective, &d))) {
		diag_print(stderr, &d);
		ex = cli_exit(rc);
		goto out;
	}
	if (budget) {
		size_t n = strlen(budget);
		char *end;
		if (n && budget[n - 1] == '%') {
			double pct = strtod(budget, &end);
			if (end != budget + n - 1 || !(pct > 0 && pct <= 100)) {
				ex = cli_usage_error("tune", "--budget N%% needs 0 < N <= 100");
				goto out;
			}
			o.budget = (uint64_t)floor(pct / 100.0 * (double)space_valid(sp) + 1e-9);
			if (!o.budget)
				o.budget = 1;
		} else if (cli_parse_u64(budget, &o.budget) || !o.budget) {
			ex = cli_usage_error("tune",
			                     "--budget needs a positive number or a percentage");
			goto out;
		}
	}
	if (!json) {
		char a[32];
		printf("spec        %s (%s)\n", s->path, spec_format_name(s->format));
		if (hwp)
			printf("profile     %s\n", hwp->name);
		printf("space       %s valid configurations\n",
		       cli_count(a, sizeof(a), (double)space_valid(sp)));
	}
	struct tune_objective obj;
	if ((ex = open_objective(sp, hwp, (size_t)inst, db, fresh, replay, colmap, &objective, &obj, json)))
		goto out;
	struct tune t = {.sp = sp, .objective = &objective, .live = obj.live, .json = json, .bar = isatty(2)};
	o.objective = obj.fn;
	o.objective_ctx = obj.ctx;
	o.on_event = on_event;
	o.event_ctx = &t;
	if (obj.live && obj.live->ec.target.hidden) {
		o.predict_fail = live_predict_fail;
		o.predict_ctx = obj.live;
	}
	if (!json) {
		uint64_t b = o.budget && o.budget < space_valid(sp) ? o.budget : space_valid(sp);
		printf(
		    "strategy    %s, seed %llu, budget %llu evaluations (%.1f%% of the space)%s\n",
		    o.strategy ? o.strategy : "auto", (unsigned long long)o.seed,
		    (unsigned long long)b, 100.0 * (double)b / (double)space_valid(sp),
		    o.time_budget_s > 0 ? " or the time limit" : "");
		fflush(stdout);
	}
	interrupted = 0;
	void (*old)(int) = signal(SIGINT, on_sigint);
	strategy_result r;
	rc = strategy_run(sp, &o, &r, &d);
	signal(SIGINT, old);
	if (t.bar && r.nrecords)
		fputc('\n', stderr);
	if (rc == MUH_EINPUT) {
		fprintf(stderr, "muh tune: %s\n", d.msg);
		ex = EXIT_USAGE;
	} else {
		if (obj.live)
			refresh_from_store(obj.live, sp, &r);
		print_result(sp, &o, &r, &obj, (size_t)topk, json);
		if (obj.live && !objective_is_time(&objective))
			print_summary(obj.live->st, obj.live->run, &objective, json);
		else if (obj.store_run && !objective_is_time(&objective)) {
			muh_store *rs;
			if (store_open_ro(replay, &rs, &d) == MUH_OK) {
				print_summary(rs, obj.store_run, &objective, json);
				store_close(rs);
			}
		}
		ex = cli_exit(rc);
		if (!ex && (!r.have_best || is_slo_miss(r.records[r.best].time_s)))
			ex = EXIT_FINDING;
	}
	strategy_result_free(&r);
	if (obj.release)
		obj.release(obj.ctx);
out:
	evalcli_free(&ec);
	/* Ctrl-C: what was measured is saved and printed, then 128 + SIGINT */
	return interrupted && ex == EXIT_OK ? EXIT_INTERRUPTED : ex;
}

const struct muh_command muh_cmd_tune = {
    .name = "tune",
    .order = 40,
    .summary = "search a spec's space with a strategy; prints best vs default",
    .help = help,
    .run = run,
};
