/*
 * cmd_tune.c — `muh tune`: search a spec's space with a strategy, measure
 * through an objective, print the best against the defaults.
 *
 * Parse and drive: the session measures, replays and checks drift
 * (session.h); tune_flow.h says what a budget means, opens a pool and
 * when the decision stage follows; runsum.h computes the summary; this
 * file reads the options and runs one session per problem instance, and
 * tune_print.c prints. Ctrl-C stops cleanly after the variant in flight (the
 * event callback asks the driver to stop); a second Ctrl-C kills.
 */
#include <getopt.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "evalcli.h"
#include "tune_print.h"
#include "muh/objective.h"
#include "muh/tune_flow.h"

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

struct tune_args {
	const char *budget;
	uint64_t topk;
	long finalists;      /* --finalists K; -1: not given (2 for an engine spec, else 0) */
	int rounds;          /* --rounds N: the decision stage's most rounds */
	const char *devices; /* --devices LIST: a pool of one worker per device */
	int mpi;             /* --mpi: the pool's workers are the other MPI ranks */
};

/* The pool of --devices / --mpi for session s (tune_flow.h), or NULL with
 * the error said (*ex its exit code). */
static muh_pool *open_pool(const char *path, muh_session *s, const muh_session_opts *so, const struct tune_args *A,
			   int json, int *ex)
{
	muh_pool *p = NULL;
	int bad_list = 0;
	muh_diag d;
	diag_clear(&d);
	int rc = tune_flow_open_pool(path, s, so, A->devices, A->mpi, &p, &bad_list, &d);
	*ex = rc && bad_list ? cli_usage_error("tune", "%s", d.msg) : cli_exit(rc);
	if (rc && !bad_list)
		fprintf(stderr, "muh tune: %s\n", d.msg);
	else if (!rc && !json)
		printf("pool        %zu worker(s) on %s (%s)\n", pool_size(p), pool_device(p),
		       A->mpi ? "MPI ranks 1.." : A->devices);
	return p;
}

/* The decision stage after a live search (decide.h), its table printed.
 * An exit code: 0 also when nothing was proven (the defaults stay). */
static int decide_stage(muh_session *s, const struct tune_args *A, int json)
{
	long k = tune_flow_finalists(s, A->finalists);
	if (k <= 0)
		return EXIT_OK;
	decide_opts o;
	tune_flow_decide_opts(s, k, A->rounds, &o);
	struct tune t = {.json = json, .bar = isatty(2), .objective = session_objective(s)};
	if (!json)
		tune_print_decide_head(s, &o, k);
	decide_summary sm;
	muh_diag d;
	int rc = session_decide(s, &o, tune_on_decide, &t, &interrupted, &sm, &d);
	if (rc) {
		fprintf(stderr, "muh tune: the decision stage stopped: %s\n", d.msg);
		return cli_exit(rc);
	}
	last_decision = sm.winner >= 0;
	tune_print_decision(s, &sm, json, interrupted);
	return EXIT_OK;
}

/* Tunes one problem instance (evalcli_each_problem's callback; ctx: the
 * tune_args): opens its session, prints what was loaded, runs the search,
 * prints the result. Returns an exit code. */
static int tune_one(const char *path, const struct evalcli_opts *eo, const void *ctx)
{
	const struct tune_args *A = ctx;
	muh_session_opts so_ = eo->so, *so = &so_;
	int json = eo->json;
	const char *budget = A->budget;
	size_t topk = (size_t)A->topk;
	muh_pool *pool = NULL;
	so->pool = A->devices || A->mpi;
	muh_diag d;
	muh_session *s;
	struct tune t = {.json = json, .bar = isatty(2), .stop = &interrupted};
	so->on_note = tune_on_note;
	so->note_ctx = &t;
	int rc = session_open(path, so, &s, &d);
	if (!rc && session_target(s)) /* Ctrl-C now says what it stops: a server, or a runner */
		evalcli_ctrl_c_text("tune", eval_target_backend(session_target(s)), "what was measured is kept");
	if (rc)
		return evalcli_fail("tune", rc, &d);
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
	if (!json)
		tune_print_opening(s, eo->nth);
	if ((rc = session_start(s, &d))) {
		ex = evalcli_fail("tune", rc, &d);
		goto out;
	}
	tune_print_loaded(s, so, json);
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
		if (nrc == MUH_OK)
			tune_print_noise(s, noise, noisy, json);
	}
	if (!json)
		tune_print_strategy(&o, sp);
	strategy_result r;
	if (pool) {
		rc = session_tune_pool(s, pool, tune_on_event, &t, &r, &interrupted, &d);
		tune_print_pool_done(s, pool, json);
	} else {
		rc = session_tune(s, tune_on_event, &t, &r, &d);
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
		tune_print_prepare(s, json, so->jobs);
		/* --json: the decision first, so that the final result event's
		 * winner_key is the decision's (what report and patch name) */
		int dex = -1;
		last_decision = -1;
		if (json && !interrupted && session_evaluator(s) && tune_flow_found(&r) && rc == MUH_OK)
			dex = decide_stage(s, A, json);
		tune_print_result(s, &o, &r, topk, json, rc, tune_flow_decides_after(s, A->finalists, interrupted, &r, rc),
				  last_decision);
		if (!objective_is_time(t.objective))
			tune_print_slo_table(s, so->replay, json);
		ex = cli_exit(rc);
		if (!ex && !tune_flow_found(&r))
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
	ex = evalcli_each_problem("tune", argc, argv, &eo, tune_one, &A);
	evalcli_space_progress(NULL, NULL);
	signal(SIGINT, old);
	/* Ctrl-C: what was measured is saved and printed, then 128 + SIGINT */
	return interrupted && (ex == EXIT_OK || ex == EXIT_FINDING) ? EXIT_INTERRUPTED : ex;
}

MUH_COMMAND(tune, 40, "search a spec's space with a strategy; prints best vs default");
