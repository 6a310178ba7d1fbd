/*
 * cmd_eval.c — `muh eval SPEC`: measure chosen configurations (the defaults,
 * --config KEY..., or --all), isolated, and record them in the store, which
 * resumes. The way to measure one variant by hand. Parse and print over
 * session_eval (session.h), which owns the store-first loop and compile-first,
 * and session_eval_interleaved (--interleave: the --config variants timed in
 * alternating rounds, so that their order does not bias the comparison).
 */
#include <getopt.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "evalcli.h"
#include "muh/best.h"
#include "muh/evalset.h"
#include "muh/store.h"

static const char help[] =
	"usage: muh eval SPEC [--config KEY]... [--interleave[=ROUNDS]] [--all] [--limit N]\n"
	"                [--db FILE] [--fresh] [--noise] [--hw PROFILE]\n"
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

/* The rows of one eval as they come: printed, and kept (evalset) for the
 * closing lines. */
struct eval_list {
	const muh_space *sp;
	int all;
	const uint32_t *cfgs; /* --config: np + 1 values each */
	int json, keyw;
	const session_prepare_info *pi; /* filled before the first row */
	int jobs, told_prepare, header_done;
	int interleave;
	evalset S;
};

/* What the batch prepare did, once, before the first row. */
static void print_prepare(struct eval_list *E)
{
	const session_prepare_info *pi = E->pi;
	if (E->told_prepare)
		return;
	E->told_prepare = 1;
	if (pi->capped)
		fprintf(stderr, "muh eval: note: prepare: the first %zu variants only\n", pi->asked);
	if (pi->note[0])
		fprintf(stderr, "muh eval: note: prepare: %s; each build compiles what is missing\n", pi->note);
	else if (pi->ran)
		fprintf(E->json ? stderr : stdout, "prepare: %zu of %zu variants compiled in %.1f s with %d jobs\n",
			pi->done, pi->asked, pi->seconds, E->jobs);
}

static int list_at(void *ctx, uint64_t i, uint32_t *cfg)
{
	struct eval_list *E = ctx;
	size_t np = space_nparams(E->sp);
	if (E->all)
		return space_config_at(E->sp, i, cfg);
	memcpy(cfg, E->cfgs + i * (np + 1), np * sizeof(uint32_t));
	return 0;
}

/* One measured row: printed, and remembered for the closing line. */
static int list_row(void *ctx, const session_result *r)
{
	struct eval_list *E = ctx;
	const muh_measurement *m = r->m;
	print_prepare(E);
	if (!E->json && !E->header_done) { /* after the prepare's line; none for no row */
		eval_text_header(&cli_out, E->keyw);
		E->header_done = 1;
	}
	evalset_add(&E->S, r->key, m);
	if (E->json) {
		cJSON *o = eval_text_json(r->key, m);
		if (E->interleave)
			cJSON_AddBoolToObject(o, "interleaved", 1);
		char *t = cJSON_PrintUnformatted(o);
		puts(t ? t : "{}");
		free(t);
		cJSON_Delete(o);
	} else {
		eval_text_row(&cli_out, r->key, m, E->keyw);
	}
	fflush(stdout);
	return 0;
}

/* What muh eval measures, from its options. */
struct eval_args {
	const char *keys[256];
	int nkeys, all, want_noise;
	long long limit;
	int interleave, rounds; /* --interleave[=ROUNDS]; rounds 0: the stopping rule */
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
	struct eval_args A = {.want_noise = -1, .limit = -1};
	int c, ex;
	uint64_t v;
	optind = 1;
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'c':
			if (A.nkeys == 256)
				return cli_usage_error("eval", "at most 256 --config");
			A.keys[A.nkeys++] = optarg;
			break;
		case 'a':
			A.all = 1;
			break;
		case 'i':
			A.interleave = 1;
			if (optarg && (cli_parse_u64(optarg, &v) || v < 1 || v > 100000))
				return cli_usage_error("eval", "--interleave=ROUNDS needs a count of rounds (1 to 100000)");
			A.rounds = optarg ? (int)v : 0;
			break;
		case 'l':
			if (cli_parse_u64(optarg, &v) || v > INT64_MAX)
				return cli_usage_error("eval", "--limit needs a count");
			A.limit = (long long)v;
			break;
		case 'd':
			eo.so.db = optarg;
			break;
		case 'f':
			eo.so.fresh = 1;
			break;
		case 'n':
		case 'N':
			A.want_noise = c == 'n';
			break;
		default:
			if ((ex = evalcli_option("eval", c, optarg, argv, opts, &eo)))
				return ex;
		}
	}
	if (eo.so.fresh && !eo.so.db)
		return cli_usage_error("eval", "--fresh needs --db");
	if (A.all && A.nkeys)
		return cli_usage_error("eval", "--all and --config exclude each other");
	if (A.interleave && (A.all || A.limit >= 0))
		return cli_usage_error("eval", "--interleave compares the --config variants: not with --all or --limit");
	if (A.interleave && (A.nkeys < 2 || A.nkeys > EVAL_INTERLEAVE_MAX))
		return cli_usage_error("eval", "--interleave needs 2 to 16 --config");
	/* `--interleave 5`: the rounds are an optional value, so they need '=' */
	if (A.interleave && optind == argc - 2 && strspn(argv[optind + 1], "0123456789") == strlen(argv[optind + 1]))
		return cli_usage_error("eval", "'%s' after the spec: --interleave takes its rounds as --interleave=%s",
				       argv[optind + 1], argv[optind + 1]);
	return evalcli_each_problem("eval", argc, argv, &eo, eval_one, &A);
}

/* Measures what A names for one problem instance; returns an exit code. */
static int eval_one(const char *path, const struct evalcli_opts *eo, const void *ctx)
{
	const struct eval_args *A = ctx;
	const muh_session_opts *so = &eo->so;
	const char *const *keys = A->keys;
	int nkeys = A->nkeys, all = A->all, json = eo->json, want_noise = A->want_noise;
	long long limit = A->limit;
	muh_session *ss;
	muh_diag d;
	int rc = session_open(path, so, &ss, &d);
	if (rc)
		return evalcli_fail("eval", rc, &d);
	/* before any work (the noise alone starts two servers): the engine
	 * backend runs one server at a time and cannot interleave */
	const muh_target *tg = session_target(ss);
	if (A->interleave && tg && !strcmp(eval_target_backend(tg), "engine")) {
		session_close(ss);
		return cli_usage_error("eval", "--interleave on %s: the engine backend runs one server at a time and "
				       "cannot keep variants ready to interleave (measure them one by one)",
				       path);
	}
	const muh_space *sp = session_space(ss);
	size_t np = space_nparams(sp);
	uint64_t total = all ? space_valid(sp) : (uint64_t)(nkeys ? nkeys : 1);
	uint32_t *cfgs = calloc((size_t)(all ? 1 : total) * (np + 1), sizeof(uint32_t));
	struct eval_list E = {.sp = sp, .all = all, .cfgs = cfgs, .json = json, .keyw = eval_text_keyw(session_spec(ss))};
	int ex = EXIT_OK;
	evalset_init(&E.S, sp, objective_is_time(session_objective(ss)), A->interleave);
	if (!cfgs) {
		ex = cli_fail(MUH_ENOMEM, NULL);
		goto out;
	}
	for (int k = 0; k < nkeys; k++) {
		diag_clear(&d);
		if (evalset_check_key(sp, keys[k], &d)) {
			diag_print(stderr, &d);
			ex = EXIT_USAGE;
			goto out;
		}
		diag_clear(&d);
		if (evalset_parse_key(sp, keys[k], cfgs + (size_t)k * (np + 1), &d)) {
			fprintf(stderr, "muh eval: --config %s: %s\n", keys[k], d.msg);
			ex = EXIT_USAGE;
			goto out;
		}
		/* the same variant twice: an interleaved set of one, or a row twice */
		for (int j = 0; j < k; j++)
			if (!memcmp(cfgs + (size_t)j * (np + 1), cfgs + (size_t)k * (np + 1), np * sizeof(uint32_t))) {
				fprintf(stderr, "muh eval: --config %s and --config %s are the same variant\n", keys[j],
					keys[k]);
				ex = EXIT_USAGE;
				goto out;
			}
	}
	if (!all && !nkeys && !space_default(sp, cfgs))
		fprintf(stderr, "muh eval: note: the defaults violate the constraints\n");
	if ((rc = session_start(ss, &d))) {
		ex = evalcli_fail("eval", rc, &d);
		goto out;
	}
	session_store_info si;
	session_store_stats(ss, &si);
	if (si.resumed && !json)
		fprintf(stderr, "muh eval: resuming run %lld of %s: %lld variant(s) already measured\n",
			(long long)si.run, so->db, si.rows);
	/* Ctrl-C from here on: a prepare in flight is cut short (its group
	 * killed), the variant in flight finishes, the store keeps all */
	struct sigaction sa, old;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_sigint;
	evalcli_ctrl_c_text("eval", tg ? eval_target_backend(tg) : NULL, "what was measured is kept");
	sigaction(SIGINT, &sa, &old);
	if (want_noise < 0)
		want_noise = total > 1 && !si.resumed;
	/* the noise before the table (the batch prepare runs inside session_eval,
	 * before the first row) */
	double noise = NAN;
	if (want_noise && !stop) {
		int noisy = 0; /* beyond measure.max_noise in 3 pairs */
		double maxn = eval_target_max_noise(session_target(ss));
		int nrc = session_noise(ss, &noise, &noisy, &d);
		if ((nrc == MUH_EENV || nrc == MUH_ENOMEM) && !stop) { /* muh's environment: nothing to measure with */
			ex = evalcli_fail("eval", nrc, &d);
			sigaction(SIGINT, &old, NULL);
			goto out;
		}
		if (nrc == MUH_OK) {
			fprintf(json ? stderr : stdout, "noise: %.2f%% (the defaults timed twice%s)\n", 100 * noise,
				noisy ? ", 3 times over" : "");
			if (noisy)
				fprintf(stderr,
					"muh eval: noisy machine: the defaults' two timings differed by more than "
					"measure.max_noise (%.1f%%) in 3 pairs (%.1f%% over all): compare these "
					"times with care\n",
					100 * maxn, 100 * noise);
		} else {
			fprintf(stderr, "muh eval: noise: %s\n", d.msg);
		}
	}
	session_prepare_info pi;
	E.pi = &pi;
	E.jobs = so->jobs;
	E.interleave = A->interleave;
	if (A->interleave)
		rc = session_eval_interleaved(ss, (size_t)nkeys, list_at, &E, A->rounds, list_row, &pi, &d);
	else
		rc = session_eval(ss, total, list_at, &E, limit, list_row, &pi, &d);
	print_prepare(&E);
	if (rc && !stop) {
		fprintf(stderr, "muh eval: %s\n", d.msg);
		ex = cli_exit(rc);
	}
	sigaction(SIGINT, &old, NULL);
	if (A->interleave && E.S.best_key[0])
		evalset_text_interleaved(&cli_out, &E.S, noise, json);
	if (!json)
		evalset_text_best(&cli_out, &E.S, noise);
	evalset_text_twins(&cli_out, &E.S, json);
	if (!json)
		evalset_text_counts(&cli_out, "muh eval", &E.S, stop,
				    eval_restarts(session_evaluator(ss)));
out:
	evalset_free(&E.S);
	session_close(ss);
	free(cfgs);
	return stop && ex == EXIT_OK ? EXIT_INTERRUPTED : ex; /* Ctrl-C: saved, then 130 */
}

MUH_COMMAND(eval, 34, "measure configurations (build, fingerprint, verify, time) into the store");
