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
#include <unistd.h>
#include <stdlib.h>
#include <string.h>

#include "evalcli.h"
#include "muh/best.h"
#include "muh/expr.h"
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
	evalcli_ctrl_c_say();
}

/* Checks every NAME=VALUE of a --config key against the spec: an unknown
 * name is an error with the constraint checker's did-you-mean and the names
 * that exist; a value not in the param's list is an error with its values.
 * Returns MUH_OK, or MUH_EINPUT with d placed at the token in key
 * ("--config:1:COL", the key as the source line). */
static int check_partial(const muh_space *sp, const char *key, muh_diag *d)
{
	const muh_spec *s = space_spec(sp);
	size_t np = space_nparams(sp);
	const char *q = key;
	if (!*key) {
		diag_at(d, "--config", 1, 1, key);
		return diag_errorf(d, "empty key: expected NAME=VALUE[,NAME=VALUE...]");
	}
	while (1) {
		size_t tlen = strcspn(q, ","), nlen = strcspn(q, "=,");
		int col = (int)(q - key) + 1;
		if (nlen == tlen || nlen == 0) {
			diag_at(d, "--config", 1, col, key);
			return diag_errorf(d, "expected NAME=VALUE at '%.*s'", (int)tlen, q);
		}
		size_t p;
		for (p = 0; p < np; p++)
			if (strlen(s->params[p].name) == nlen && !strncmp(s->params[p].name, q, nlen))
				break;
		if (p == np) {
			/* the constraint checker's message: did you mean, known names */
			const char **names = calloc(np ? np : 1, sizeof(*names));
			char *nm = strndup(q, nlen);
			muh_diag ed;
			diag_clear(&ed);
			for (size_t i = 0; names && i < np; i++)
				names[i] = s->params[i].name;
			muh_expr *e = names && nm ? expr_compile(nm, names, (int)np, &ed) : NULL;
			expr_free(e);
			free(names);
			free(nm);
			diag_at(d, "--config", 1, col, key);
			if (!strncmp(ed.msg, "unknown name", 12))
				return diag_errorf(d, "%s", ed.msg);
			return diag_errorf(d, "no param '%.*s' in this spec", (int)nlen, q);
		}
		const char *val = q + nlen + 1;
		size_t vlen = tlen - nlen - 1, v;
		for (v = 0; v < s->params[p].nvalues; v++) {
			char buf[64];
			int w = value_fmt(buf, sizeof(buf), s->params[p].values[v]);
			if ((size_t)w == vlen && !strncmp(buf, val, vlen))
				break;
		}
		if (v == s->params[p].nvalues) {
			char list[512] = "";
			size_t n = 0;
			for (size_t i = 0; i < s->params[p].nvalues && n < sizeof(list); i++) {
				char buf[64];
				value_fmt(buf, sizeof(buf), s->params[p].values[i]);
				n += (size_t)snprintf(list + n, sizeof(list) - n, "%s%s", i ? ", " : "", buf);
			}
			diag_at(d, "--config", 1, col + (int)nlen + 1, key);
			return diag_errorf(d, "'%.*s' is not a value of '%s' (values: %s)", (int)vlen, val,
					   s->params[p].name, list);
		}
		if (!q[tlen])
			return MUH_OK;
		q += tlen + 1;
	}
}

/* Parses a possibly partial key: names not given keep their defaults. */
static int parse_partial(const muh_space *sp, const char *key, uint32_t *cfg, muh_diag *d)
{
	const muh_spec *s = space_spec(sp);
	size_t np = space_nparams(sp);
	uint32_t *full = calloc(np + 1, sizeof(uint32_t));
	if (!full)
		return MUH_ENOMEM;
	space_default(sp, full);
	char buf[4096] = "";
	size_t n = 0;
	for (size_t p = 0; p < np; p++) {
		char want[160];
		snprintf(want, sizeof(want), "%s=", s->params[p].name);
		const char *hit = NULL;
		for (const char *q = key; (q = strstr(q, want)); q++)
			if (q == key || q[-1] == ',') {
				hit = q;
				break;
			}
		char val[256];
		if (hit)
			snprintf(val, sizeof(val), "%.*s", (int)strcspn(hit, ","), hit);
		else {
			char v[128];
			value_fmt(v, sizeof(v), space_value(sp, full, p));
			snprintf(val, sizeof(val), "%s=%s", s->params[p].name, v);
		}
		n += (size_t)snprintf(buf + n, sizeof(buf) - n, "%s%s", p ? "," : "", val);
		if (n >= sizeof(buf))
			break;
	}
	free(full);
	return space_parse_key(sp, buf, cfg, d);
}

struct eval_list {
	const muh_space *sp;
	int all;
	const uint32_t *cfgs; /* --config: np + 1 values each */
	int json, keyw;
	char def_key[1024], best_key[1024];
	muh_measurement best, defm; /* no samples kept */
	long long measured, counts[EVAL_NSTATUS];
	const session_prepare_info *pi; /* filled before the first row */
	int jobs, told_prepare, header_done;
	/* --interleave: every row, for the comparison under the table */
	int interleave;
	size_t nrows;
	char row_key[EVAL_INTERLEAVE_MAX][1024];
	muh_measurement row[EVAL_INTERLEAVE_MAX]; /* samples kept (round order): paired under the table */
	/* every ok variant with a fingerprint, for the twins line (best_twin_spread) */
	char **tkey, **tfp;
	double *tscore;
	size_t tn, tcap;
	int time; /* the objective is time (the twins line is about times) */
};

/* Keeps an ok variant's key, fingerprint and median for the twins line:
 * a fingerprint that proves the artifact (best_fp_proves, as muh report's
 * twins), and time objectives (an engine's fingerprint is its launch, whose
 * time says less than its metrics; muh report keeps to time runs as well). */
static void keep_twin(struct eval_list *E, const char *key, const muh_measurement *m)
{
	if (!best_fp_proves(m) || !E->time)
		return;
	if (E->tn == E->tcap) {
		size_t cap = E->tcap ? 2 * E->tcap : 64;
		char **k = realloc(E->tkey, cap * sizeof(*k));
		if (k)
			E->tkey = k;
		char **f = realloc(E->tfp, cap * sizeof(*f));
		if (f)
			E->tfp = f;
		double *s = realloc(E->tscore, cap * sizeof(*s));
		if (s)
			E->tscore = s;
		if (!k || !f || !s)
			return; /* the line is a note: without memory it counts fewer */
		E->tcap = cap;
	}
	if (!(E->tkey[E->tn] = strdup(key)) || !(E->tfp[E->tn] = strdup(m->fingerprint))) {
		free(E->tkey[E->tn]);
		return;
	}
	E->tscore[E->tn++] = m->median;
}

/* Variants that built one artifact yet were timed apart: what this
 * machine's noise did to identical code, beside the best's speedup. */
static void print_twins(struct eval_list *E)
{
	size_t twins, slow = 0, fast = 0;
	double r = best_twin_spread((const char *const *)E->tfp, E->tscore, E->tn, &twins, &slow, &fast);
	if (!isfinite(r))
		return;
	/* with --json stdout holds the variants' rows only: the line goes to
	 * stderr, as the noise line does */
	fprintf(E->json ? stderr : stdout, "twins: %zu variants built the same artifact as another (fingerprint); the same code timed up to "
	       "%.3fx apart (%s against %s): a difference under that is this machine's noise, not the params\n",
	       twins, r, E->tkey[slow], E->tkey[fast]);
}

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
		evalcli_print_header(stdout, E->keyw);
		E->header_done = 1;
	}
	E->measured++;
	E->counts[m->status]++;
	if (m->status == EVAL_OK) {
		muh_measurement lite = *m;
		lite.samples = NULL;
		lite.nsamples = 0;
		lite.fp_detail = NULL;
		lite.metrics = NULL;
		lite.log = NULL;
		if (!(E->best.median <= m->median)) {
			E->best = lite;
			snprintf(E->best_key, sizeof(E->best_key), "%s", r->key);
		}
		if (!strcmp(r->key, E->def_key))
			E->defm = lite;
		keep_twin(E, r->key, m);
	}
	if (E->nrows < EVAL_INTERLEAVE_MAX) {
		muh_measurement lite = *m;
		lite.samples = NULL;
		if (E->interleave && m->nsamples && (lite.samples = malloc(m->nsamples * sizeof(double))))
			memcpy(lite.samples, m->samples, m->nsamples * sizeof(double));
		lite.nsamples = lite.samples ? m->nsamples : 0;
		lite.fp_detail = lite.metrics = lite.log = NULL;
		E->row[E->nrows] = lite;
		snprintf(E->row_key[E->nrows++], sizeof(E->row_key[0]), "%s", r->key);
	}
	if (E->json) {
		cJSON *o = evalcli_json(r->key, m);
		if (E->interleave)
			cJSON_AddBoolToObject(o, "interleaved", 1);
		char *t = cJSON_PrintUnformatted(o);
		puts(t ? t : "{}");
		free(t);
		cJSON_Delete(o);
	} else {
		evalcli_print_row(stdout, r->key, m, E->keyw);
	}
	fflush(stdout);
	return 0;
}

/* Under the table of --interleave: how the set was timed, and each
 * variant against the fastest. Samples of one round were taken side by
 * side, so the comparison is paired: the median of the per-round ratios
 * and its CI (stats_paired_ratio), a tie when the CI holds 1. Variants with
 * different sample counts (a set measured again without a failed one) fall
 * back to the two medians (eval_compare: within the noise, or CIs that
 * overlap). --json: one closing "interleaved" line with the same verdicts. */
static void print_interleaved(const struct eval_list *E, double noise)
{
	size_t lo = SIZE_MAX, hi = 0, ok = 0, fastest = SIZE_MAX;
	for (size_t i = 0; i < E->nrows; i++)
		if (E->row[i].status == EVAL_OK) {
			ok++;
			lo = E->row[i].nsamples < lo ? E->row[i].nsamples : lo;
			hi = E->row[i].nsamples > hi ? E->row[i].nsamples : hi;
			if (!strcmp(E->row_key[i], E->best_key))
				fastest = i;
		}
	if (lo == SIZE_MAX || fastest == SIZE_MAX)
		return;
	const muh_measurement *f = &E->row[fastest];
	cJSON *js = E->json ? cJSON_CreateObject() : NULL, *jrows = NULL;
	if (js) {
		cJSON_AddStringToObject(js, "event", "interleaved");
		cJSON_AddStringToObject(js, "fastest", E->best_key);
		jrows = cJSON_AddArrayToObject(js, "rows");
	} else {
		printf("\ninterleaved %zu variant(s)", ok);
		if (ok < E->nrows)
			printf(" (%zu failed)", E->nrows - ok);
		printf(", %zu", lo);
		if (hi != lo)
			printf("-%zu", hi);
		printf(" samples each, the order alternated every round (AB BA BA AB ...)\n");
	}
	for (size_t i = 0; i < E->nrows; i++) {
		const muh_measurement *m = &E->row[i];
		if (m->status != EVAL_OK || i == fastest)
			continue;
		stats_summary ps;
		int slower = eval_compare_interleaved(f, m, isfinite(noise) ? noise : 0, &ps) < 0;
		int paired = ps.n > 0;
		double ratio = paired ? ps.median : m->median / f->median;
		if (jrows) {
			cJSON *e = cJSON_CreateObject();
			cJSON_AddStringToObject(e, "key", E->row_key[i]);
			cJSON_AddNumberToObject(e, "ratio", ratio);
			cJSON_AddBoolToObject(e, "paired", paired);
			if (paired) {
				cJSON_AddNumberToObject(e, "ratio_ci_lo", ps.ci_lo);
				cJSON_AddNumberToObject(e, "ratio_ci_hi", ps.ci_hi);
			}
			cJSON_AddStringToObject(e, "verdict", slower ? "slower" : "tie");
			cJSON_AddItemToArray(jrows, e);
			continue;
		}
		char a[32];
		evalcli_fmt_median(a, sizeof(a), m);
		if (paired)
			printf("  %.4fx the fastest's time, paired over %zu rounds (95%% CI %.4f-%.4fx): %s  %s  %s\n",
			       ratio, ps.n, ps.ci_lo, ps.ci_hi, slower ? "slower" : "a tie: the CI holds 1", a,
			       E->row_key[i]);
		else
			printf("  %.4fx the fastest's time, from the medians (%s): %s  %s\n", ratio,
			       slower ? "slower" : "a tie: within the noise or the CIs overlap", a, E->row_key[i]);
	}
	if (js) {
		char *t = cJSON_PrintUnformatted(js);
		puts(t ? t : "{}");
		free(t);
		cJSON_Delete(js);
	}
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
	struct eval_list E = {.sp = sp, .all = all, .cfgs = cfgs, .json = json, .keyw = evalcli_keyw(session_spec(ss)),
			      .time = objective_is_time(session_objective(ss))};
	int ex = EXIT_OK;
	measurement_init(&E.best);
	measurement_init(&E.defm);
	if (!cfgs) {
		ex = cli_fail(MUH_ENOMEM, NULL);
		goto out;
	}
	for (int k = 0; k < nkeys; k++) {
		diag_clear(&d);
		if (check_partial(sp, keys[k], &d)) {
			diag_print(stderr, &d);
			ex = EXIT_USAGE;
			goto out;
		}
		diag_clear(&d);
		if (parse_partial(sp, keys[k], cfgs + (size_t)k * (np + 1), &d)) {
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
	{
		uint32_t *def = calloc(np + 1, sizeof(uint32_t));
		if (def && space_default(sp, def))
			space_key(sp, def, E.def_key, sizeof(E.def_key));
		free(def);
	}
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
	if (A->interleave && E.best_key[0])
		print_interleaved(&E, noise);
	for (size_t i = 0; i < E.nrows; i++)
		free(E.row[i].samples);
	if (!json && E.best_key[0] && E.measured > 1) {
		char a[32], b[32];
		evalcli_fmt_median(a, sizeof(a), &E.best);
		printf("\nbest: %s  %s", E.best_key, a);
		if (E.defm.status == EVAL_OK && strcmp(E.best_key, E.def_key)) {
			evalcli_fmt_median(b, sizeof(b), &E.defm);
			int cmp = eval_compare(&E.best, &E.defm, isfinite(noise) ? noise : 0);
			if (cmp == 0)
				printf("; a tie with the defaults (%s, %s) within the noise\n", E.def_key, b);
			else
				printf("; %.2fx the speed of the defaults (%s, %s)\n", E.defm.median / E.best.median,
				       E.def_key, b);
		} else {
			printf("%s\n", strcmp(E.best_key, E.def_key) ? "" : " (the defaults)");
		}
	}
	print_twins(&E);
	if (!json) {
		fprintf(stderr, "muh eval: %lld measured", E.measured);
		for (int k = 0; k < EVAL_NSTATUS; k++)
			if (E.counts[k])
				fprintf(stderr, ", %lld %s", E.counts[k], eval_status_name((enum eval_status)k));
		fprintf(stderr, "%s%s\n", stop ? " (interrupted)" : "",
			eval_restarts(session_evaluator(ss)) ? "; the runner was restarted after each crash or timeout"
							     : "");
	}
out:
	for (size_t i = 0; i < E.tn; i++) {
		free(E.tkey[i]);
		free(E.tfp[i]);
	}
	free(E.tkey);
	free(E.tfp);
	free(E.tscore);
	session_close(ss);
	free(cfgs);
	return stop && ex == EXIT_OK ? EXIT_INTERRUPTED : ex; /* Ctrl-C: saved, then 130 */
}

MUH_COMMAND(eval, 34, "measure configurations (build, fingerprint, verify, time) into the store");
