/*
 * cmd_tune.c — `muh tune`: search a spec's space with a strategy, measure
 * through an objective, print the best against the defaults.
 *
 * Parse and print: tune_run (tune_run.h) drives one tune of one problem
 * instance in libmuh and renders every line of it (tune_text.h); this file
 * reads the options, runs it once per instance with its text written to
 * stdout and stderr (cli_out), and says its failures. Ctrl-C stops cleanly
 * after the variant in flight (the search is asked to stop); a second
 * Ctrl-C kills.
 */
#include <getopt.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "evalcli.h"
#include "muh/decide.h"
#include "muh/tune_run.h"
#include "duration.h"

static const char help[] =
    "usage: muh tune SPEC [--strategy NAME] [--budget N|N%] [--time DURATION]\n"
    "                [--seed N] [--db FILE] [--fresh]\n"
    "                [--replay FILE [--replay-column NAME=COLUMN]...]\n"
    "                [--top K] [--hw PROFILE] [--no-seeds] [--no-spec-seeds]\n"
    "                [--no-defaults] [--no-transfer] [--seeds-from FILE]\n"
    "                [--problem K|NAME=V,...|all] [--jobs N] [--devices LIST | --mpi]\n"
    "                [--finalists K] [--rounds N] [--baseline FILE | --no-baseline]\n"
    "                [--json]\n"
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
    "  auto        (default) a multi-armed bandit over model and ils (OpenTuner's\n"
    "              AUC bandit), credited by each proposal's gain over the best:\n"
    "              a gain of 5% or more counts 1, a smaller one in proportion\n"
    "  brute       every valid configuration, in index order\n"
    "  random      uniform over the valid configurations, never repeating\n"
    "  annealing   simulated annealing over neighbours\n"
    "  genetic     a genetic algorithm: tournament, uniform crossover, mutation\n"
    "  ils         iterated local search over neighbours\n"
    "  model       a random forest over the times' ranks (48 regression trees);\n"
    "              proposes the unseen configuration it predicts fastest, with a\n"
    "              bonus for rarely seen values\n"
    "\n"
    "options:\n"
    "  --strategy NAME     one of the above\n"
    "  --budget N | N%     at most N evaluations (or N% of the valid space, rounded\n"
    "                      down); default: the whole space\n"
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
    "  --no-defaults       with --replay: start from the search's own choice (the\n"
    "                      middle of the space; random for --strategy random),\n"
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
    "                      every result goes to the one store as it finishes; a\n"
    "                      worker that dies is restarted and its variant measured\n"
    "                      again once.\n"
    "                      The cpu and command backends take it too (workers on one\n"
    "                      host); devices of different models are refused\n"
    "  --mpi               under mpirun/srun: this rank (0) tunes and stores, the\n"
    "                      other ranks measure (mpirun -np 3 muh tune SPEC --mpi);\n"
    "                      a lost rank ends the job, and a rerun resumes from the\n"
    "                      store\n"
    "  --finalists K       re-measure the top K against the baseline before naming a\n"
    "                      winner (0: off, and then nothing it finds is written back\n"
    "                      without --force); default 2\n"
    "  --baseline FILE     what ships: an engine config file keyed by batch size\n"
    "                      (vLLM's fused-MoE format); its entry for this size, as\n"
    "                      the engine picks it, is measured right after the defaults\n"
    "                      and is what the decision judges against. Default: the\n"
    "                      spec's target.baseline for this device, when the engine\n"
    "                      ships one\n"
    "  --no-baseline       the defaults are the baseline\n"
    "  --rounds N          the decision stage's most rounds (4 to 64, default 8)\n"
    "  --json              one JSON object per line: an event per finished variant\n"
    "                      {event: variant, problem, n, budget, key, config, status,\n"
    "                      time_s, improved, best_s, source, elapsed_s, and for a\n"
    "                      measured-metric objective value and metrics},\n"
    "                      transfer_seed {seed, key, from}, seed_skipped,\n"
    "                      predicted_fail and drift events, a winners event, a\n"
    "                      decision event, and a final {event: result, ...}; nothing\n"
    "                      else on stdout\n"
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


/* Ctrl-C's words, once the backend is known (tune_run_args.on_backend). */
static void on_backend(void *ctx, const char *backend)
{
	(void)ctx;
	evalcli_ctrl_c_text("tune", backend, "what was measured is kept");
}

/* Tunes one problem instance (evalcli_each_problem's callback; ctx: the
 * tune_run_args of the options): tune_run, with its failure said as a
 * usage or session error where it left that to us. Returns an exit code. */
static int tune_one(const char *path, const struct evalcli_opts *eo, const void *ctx)
{
	tune_run_args a = *(const tune_run_args *)ctx;
	enum tune_run_say say;
	muh_diag d;
	a.nth = eo->nth;
	a.json = eo->json;
	int rc = tune_run(path, &eo->so, &a, &say, &d);
	if (say == TUNE_RUN_SAY_USAGE)
		return cli_usage_error("tune", "%s", d.msg);
	if (say == TUNE_RUN_SAY_SESSION)
		return cli_fail("tune", rc, &d);
	return cli_exit(rc);
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
	uint64_t topk = 10;
	tune_run_args A = {.finalists = -1, .who = "muh tune", .out = cli_out, .stop = &interrupted,
			   .bar = isatty(2), .on_backend = on_backend};
	const char *colmap[33] = {0};
	size_t ncol = 0;
	int c, ex, no_seeds = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 's': {
			muh_diag d;
			if (strategy_check_name(optarg, &d))
				return cli_usage_error("tune", "%s", d.msg);
			o->strategy = optarg;
			break;
		}
		case 'b':
			A.budget = optarg;
			break;
		case 't':
			if (duration_parse(optarg, &o->time_budget_s))
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
			if (cli_parse_u64(optarg, &topk) || topk > 1000)
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
	A.topk = (size_t)topk;
	so->replay_columns = colmap;
	evalcli_ctrl_c_text("tune", NULL, "what was measured is kept");
	void (*old)(int) = evalcli_stop_on_ctrl_c(&interrupted);
	evalcli_space_progress("tune", &interrupted); /* a long count shows progress, Ctrl-C stops it */
	ex = evalcli_each_problem("tune", argc, argv, &eo, tune_one, &A);
	evalcli_space_progress(NULL, NULL);
	signal(SIGINT, old);
	/* Ctrl-C: what was measured is saved and printed, then 128 + SIGINT */
	return interrupted && (ex == EXIT_OK || ex == EXIT_FINDING) ? EXIT_INTERRUPTED : ex;
}

MUH_COMMAND(tune, 40, "search a spec's space with a strategy; prints best vs default");
