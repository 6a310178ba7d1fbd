/*
 * cmd_eval.c — `muh eval SPEC`: measure chosen configurations (the defaults,
 * --config KEY..., or --all), isolated, and record them in the store, which
 * resumes. The way to measure one variant by hand. Parse and print over
 * evalflow_run (evalflow.h), which drives one eval of one problem
 * instance: the store-first loop and compile-first (session_eval), or
 * --interleave (session_eval_interleaved: the --config variants timed in
 * alternating rounds, so that their order does not bias the comparison).
 * Here: the options, the SIGINT handler, and the exit code.
 */
#include <getopt.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "evalcli.h"
#include "muh/evalflow.h"

static const char help[] =
	"usage: muh eval SPEC [--config KEY]... [--interleave[=ROUNDS]] [--all]\n"
	"                [--limit N] [--db FILE] [--fresh] [--noise] [--hw PROFILE]\n"
	"                [--problem K|NAME=V,...|all] [--jobs N] [--json]\n"
	"\n"
	"Measures configurations of SPEC: each is built, fingerprinted, checked\n"
	"against the reference and timed (warm-ups, then samples until the 95%\n"
	"confidence interval of the median is within measure.ci, default 1%, or a\n"
	"cap), in a child process with a timeout. A crash, hang, out-of-memory or\n"
	"wrong result is a status on that variant; the run goes on.\n"
	"\n"
	"options:\n"
	"  --config KEY   measure this configuration (canonical key NAME=V,...;\n"
	"                 names not given take their defaults); repeatable\n"
	"  --interleave[=ROUNDS]  compare the --config variants (2 to 16) without the\n"
	"                 bias of their order: all are built, checked and warmed up,\n"
	"                 then timed in rounds of one sample each, the order alternated\n"
	"                 every round (AB BA BA AB ...); each median and CI is over all\n"
	"                 of its samples. ROUNDS: that many rounds; without it, rounds\n"
	"                 until every CI is within measure.ci (at least min_samples,\n"
	"                 at most max_samples, or max_time x the variants). Timed one\n"
	"                 after the other (the default), the first or the second of\n"
	"                 two variants can gain a few % from a clock that falls under\n"
	"                 load, more than the difference being decided. The store\n"
	"                 answers none of them; each result replaces its stored one\n"
	"  --all          measure every valid configuration, in index order\n"
	"  --limit N      stop after N new measurements\n"
	"  --db FILE      record every finished measurement in FILE (SQLite); a\n"
	"                 variant already recorded for this spec, problem, backend\n"
	"                 and profile is not measured again (resume)\n"
	"  --fresh        with --db: forget earlier runs of this spec and start over\n"
	"  --noise        first time the defaults twice; report and record the noise\n"
	"                 (the default when more than one variant is measured;\n"
	"                 --no-noise skips it)\n"
	"  --jobs N       compile in parallel with N processes: the cpu and cuda\n"
	"                 backends build the next variants into the cache while one\n"
	"                 is timed; a worker that can \"prepare\" (Triton) compiles\n"
	"                 every variant to measure first, then muh measures them\n"
	"  --hw PROFILE   hardware profile (overrides the spec's hw:)\n"
	"  --problem WHICH  the problem instances, each measured in turn: K (0-based),\n"
	"                 a list (0,2), values (M=256) or all; default 0\n"
	"  --json         one JSON object per variant, one per line\n"
	"\n"
	"Ctrl-C stops after the variant in flight; the store keeps everything.\n"
	"\n"
	"examples:\n"
	"  muh eval specs/matmul_cpu.yaml\n"
	"  muh eval specs/matmul_cpu.yaml --all --db muh.db\n"
	"  muh eval specs/matmul_cpu.yaml --config BLOCK=32,UNROLL=8\n"
	"  muh eval specs/matmul_cpu.yaml --config BLOCK=32 --config BLOCK=64 --interleave\n";

static volatile sig_atomic_t stop;

static void on_sigint(int sig)
{
	(void)sig;
	if (stop) { /* a second Ctrl-C kills */
		signal(SIGINT, SIG_DFL);
		raise(SIGINT);
	}
	stop = 1;
	cli_ctrl_c_say();
}

/* Ctrl-C while measuring (evalflow_args.on_measuring): a prepare in
 * flight is cut short (its group killed), the variant in flight finishes,
 * the store keeps all. */
static struct sigaction old_sigint;

static void on_measuring(void *ctx, const char *backend, int begin)
{
	(void)ctx;
	if (!begin) {
		sigaction(SIGINT, &old_sigint, NULL);
		return;
	}
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_sigint;
	evalcli_ctrl_c_text("eval", backend, "what was measured is kept");
	sigaction(SIGINT, &sa, &old_sigint);
}

/* What muh eval measures, from its options. */
struct eval_args {
	const char *keys[256];
	evalflow_args a;
};

static int eval_one(const char *path, const struct evalcli_opts *eo, const void *ctx);

static int run(int argc, char **argv)
{
	static const struct option opts[] = {
		EVALCLI_OPTIONS,
		{"config", required_argument, NULL, 'c'},
		{"all", no_argument, NULL, 'a'},       {"limit", required_argument, NULL, 'l'},
		{"db", required_argument, NULL, 'd'},  {"fresh", no_argument, NULL, 'f'},
		{"noise", no_argument, NULL, 'n'},     {"no-noise", no_argument, NULL, 'N'},
		{"interleave", optional_argument, NULL, 'i'},
		{NULL, 0, NULL, 0},
	};
	struct evalcli_opts eo = {.so = {.measure = 1, .stop = &stop}};
	struct eval_args A = {.a = {.keys = A.keys, .noise = -1, .limit = -1, .who = "muh eval", .out = cli_out,
				    .on_measuring = on_measuring}};
	muh_diag d;
	int c, ex;
	uint64_t v;
	optind = 1;
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'c':
			if (A.a.nkeys == 256)
				return cli_usage_error("eval", "at most 256 --config");
			A.keys[A.a.nkeys++] = optarg;
			break;
		case 'a':
			A.a.all = 1;
			break;
		case 'i':
			A.a.interleave = 1;
			if (optarg && (cli_parse_u64(optarg, &v) || v < 1 || v > 100000))
				return cli_usage_error("eval", "--interleave=ROUNDS needs a count of rounds (1 to 100000)");
			A.a.rounds = optarg ? (int)v : 0;
			break;
		case 'l':
			if (cli_parse_u64(optarg, &v) || v > INT64_MAX)
				return cli_usage_error("eval", "--limit needs a count");
			A.a.limit = (long long)v;
			break;
		case 'd':
			eo.so.db = optarg;
			break;
		case 'f':
			eo.so.fresh = 1;
			break;
		case 'n':
		case 'N':
			A.a.noise = c == 'n';
			break;
		default:
			if ((ex = evalcli_option("eval", c, optarg, argv, opts, &eo)))
				return ex;
		}
	}
	if (eo.so.fresh && !eo.so.db)
		return cli_usage_error("eval", "--fresh needs --db");
	if (evalflow_check(&A.a, &d))
		return cli_usage_error("eval", "%s", d.msg);
	/* `--interleave 5`: the rounds are an optional value, so they need '=' */
	if (A.a.interleave && optind == argc - 2 && strspn(argv[optind + 1], "0123456789") == strlen(argv[optind + 1]))
		return cli_usage_error("eval", "'%s' after the spec: --interleave takes its rounds as --interleave=%s",
				       argv[optind + 1], argv[optind + 1]);
	return evalcli_each_problem("eval", argc, argv, &eo, eval_one, &A);
}

/* Measures what A names for one problem instance (evalflow_run), its
 * failure said as a usage or session error where it left that to us;
 * returns an exit code. */
static int eval_one(const char *path, const struct evalcli_opts *eo, const void *ctx)
{
	evalflow_args a = ((const struct eval_args *)ctx)->a;
	enum evalflow_say say;
	muh_diag d;
	a.json = eo->json;
	int rc = evalflow_run(path, &eo->so, &a, NULL, &say, &d), ex;
	if (say == EVALFLOW_SAY_USAGE && rc)
		ex = cli_usage_error("eval", "%s", d.msg);
	else if (say == EVALFLOW_SAY_SESSION && rc)
		ex = cli_fail("eval", rc, &d);
	else
		ex = cli_exit(rc);
	return stop && ex == EXIT_OK ? EXIT_INTERRUPTED : ex; /* Ctrl-C: saved, then 130 */
}

MUH_COMMAND(eval, 34, "measure configurations (build, fingerprint, verify, time), stored");
