/*
 * cmd_eval.c — `muh eval SPEC`: measure chosen configurations (the defaults,
 * --config KEY..., or --all), isolated, and record them in the store, which
 * resumes. The building block muh tune drives; also the way to measure one
 * variant by hand.
 */
#include <getopt.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "evalcli.h"
#include "muh/expr.h"
#include "muh/store.h"

static const char help[] =
	"usage: muh eval SPEC [--config KEY]... [--all] [--limit N] [--db FILE] [--fresh]\n"
	"                [--noise] [--hw PROFILE] [--problem K] [--json]\n"
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
	"  --problem K    problem instance K (0-based); default 0\n"
	"  --json         one JSON object per variant, one per line\n"
	"\n"
	"Ctrl-C stops after the variant in flight; the store keeps everything.\n"
	"\n"
	"examples:\n"
	"  muh eval specs/matmul_cpu.yaml\n"
	"  muh eval specs/matmul_cpu.yaml --all --db muh.db\n"
	"  muh eval specs/matmul_cpu.yaml --config BLOCK=32,UNROLL=8\n";

static volatile sig_atomic_t stop;

static void on_sigint(int sig)
{
	(void)sig;
	stop = 1;
}

/* Compile first (--jobs with a worker that prepares): hands every valid
 * variant still to measure (at most limit) to the backend's batch step and
 * reports how many it compiled and how long that took. A failure is a note:
 * measuring goes on and each build compiles what is missing. */
static void prepare_first(muh_evaluator *ev, const struct evalcli *ec, int all, const uint32_t *cfgs,
			  uint64_t total, size_t inst, muh_store *st, int64_t runid, long long limit, int jobs,
			  int json)
{
	size_t np = space_nparams(ec->space), n = 0;
	size_t cap = total < 100000 ? (size_t)total : 100000;
	muh_variant *vs = calloc(cap ? cap : 1, sizeof(*vs));
	uint32_t *cfg = calloc(np + 1, sizeof(uint32_t));
	for (uint64_t i = 0; vs && cfg && i < total && n < cap && (limit < 0 || (long long)n < limit); i++) {
		if (all)
			space_config_at(ec->space, i, cfg);
		else
			memcpy(cfg, cfgs + i * (np + 1), np * sizeof(uint32_t));
		if (!space_is_valid(ec->space, cfg) || eval_variant_from_space(ec->space, cfg, inst, &vs[n]))
			continue;
		if (st && store_has(st, runid, vs[n].key) == 1)
			eval_variant_free(&vs[n]);
		else
			n++;
	}
	muh_diag d;
	diag_clear(&d);
	size_t done = 0;
	double t0 = eval_now_s();
	int rc = eval_prepare_all(ev, vs, n, &stop, &done, &d);
	double secs = eval_now_s() - t0;
	if (n == cap && cap < total)
		fprintf(stderr, "muh eval: note: prepare: the first %zu variants only\n", cap);
	if (rc)
		fprintf(stderr, "muh eval: note: prepare: %s; each build compiles what is missing\n", d.msg);
	else if (n)
		fprintf(json ? stderr : stdout, "prepare: %zu of %zu variants compiled in %.1f s with %d jobs\n", done,
			n, secs, jobs);
	for (size_t i = 0; i < n; i++)
		eval_variant_free(&vs[i]);
	free(vs);
	free(cfg);
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

static int run(int argc, char **argv)
{
	static const struct option opts[] = {
		{"json", no_argument, NULL, 'j'},      {"hw", required_argument, NULL, 'w'},
		{"problem", required_argument, NULL, 'k'}, {"config", required_argument, NULL, 'c'},
		{"all", no_argument, NULL, 'a'},       {"limit", required_argument, NULL, 'l'},
		{"db", required_argument, NULL, 'd'},  {"fresh", no_argument, NULL, 'f'},
		{"noise", no_argument, NULL, 'n'},     {"jobs", required_argument, NULL, 'J'},
		{"no-noise", no_argument, NULL, 'N'},
		{NULL, 0, NULL, 0},
	};
	int json = 0, all = 0, fresh = 0, want_noise = -1, jobs = 0, c;
	const char *hwref = NULL, *db = NULL;
	const char *keys[256];
	int nkeys = 0;
	long long limit = -1;
	size_t inst = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'j':
			json = 1;
			break;
		case 'w':
			hwref = optarg;
			break;
		case 'k': {
			uint64_t v;
			if (cli_parse_u64(optarg, &v))
				return cli_usage_error("eval", "--problem needs an instance number");
			inst = (size_t)v;
			break;
		}
		case 'c':
			if (nkeys == 256)
				return cli_usage_error("eval", "at most 256 --config");
			keys[nkeys++] = optarg;
			break;
		case 'a':
			all = 1;
			break;
		case 'l': {
			uint64_t v;
			if (cli_parse_u64(optarg, &v) || v > INT64_MAX)
				return cli_usage_error("eval", "--limit needs a count");
			limit = (long long)v;
			break;
		}
		case 'd':
			db = optarg;
			break;
		case 'f':
			fresh = 1;
			break;
		case 'n':
			want_noise = 1;
			break;
		case 'N':
			want_noise = 0;
			break;
		case 'J': {
			uint64_t v;
			if (cli_parse_u64(optarg, &v) || v > 64)
				return cli_usage_error("eval", "--jobs needs a count from 0 to 64");
			jobs = (int)v;
			break;
		}
		default:
			return cli_bad_option("eval", argv, opts);
		}
	}
	if (optind != argc - 1)
		return cli_usage_error("eval", "expected one SPEC file");
	if (fresh && !db)
		return cli_usage_error("eval", "--fresh needs --db");
	if (all && nkeys)
		return cli_usage_error("eval", "--all and --config exclude each other");
	struct evalcli ec;
	int ex = evalcli_load("eval", argv[optind], hwref, inst, &ec);
	if (ex)
		return ex;
	const muh_spec *s = ec.spec;
	size_t np = space_nparams(ec.space);
	uint64_t total = all ? space_valid(ec.space) : (uint64_t)(nkeys ? nkeys : 1);
	uint32_t *cfgs = calloc((size_t)(all ? 1 : total) * (np + 1), sizeof(uint32_t));
	muh_diag d;
	diag_clear(&d);
	if (!cfgs) {
		evalcli_free(&ec);
		return cli_fail(MUH_ENOMEM, NULL);
	}
	for (int k = 0; k < nkeys; k++) {
		int rc = check_partial(ec.space, keys[k], &d);
		if (rc) {
			diag_print(stderr, &d);
			free(cfgs);
			evalcli_free(&ec);
			return EXIT_USAGE;
		}
		diag_clear(&d);
		rc = parse_partial(ec.space, keys[k], cfgs + (size_t)k * (np + 1), &d);
		if (rc) {
			fprintf(stderr, "muh eval: --config %s: %s\n", keys[k], d.msg);
			free(cfgs);
			evalcli_free(&ec);
			return EXIT_USAGE;
		}
	}
	if (!all && !nkeys && !space_default(ec.space, cfgs))
		fprintf(stderr, "muh eval: note: the defaults violate the constraints\n");
	muh_store *st = NULL;
	int64_t runid = 0;
	int resumed = 0;
	if (db) {
		if ((ex = evalcli_begin_run("eval", &ec, db, fresh, &st, &runid, &resumed))) {
			free(cfgs);
			evalcli_free(&ec);
			return ex;
		}
		if (resumed && !json)
			fprintf(stderr, "muh eval: resuming run %lld of %s: %lld variants already measured\n",
				(long long)runid, db, (long long)store_count(st, runid));
	}
	muh_evaluator *ev = NULL;
	if ((ex = evalcli_open("eval", &ec, &ev))) {
		store_close(st);
		free(cfgs);
		evalcli_free(&ec);
		return ex;
	}
	eval_set_jobs(ev, jobs);
	/* Ctrl-C from here on: a prepare in flight is cut short (its group
	 * killed), the variant in flight finishes, the store keeps all */
	struct sigaction sa, old;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_sigint;
	sigaction(SIGINT, &sa, &old);
	if (eval_batch_prepares(ev) && !stop)
		prepare_first(ev, &ec, all, cfgs, total, inst, st, runid, limit, jobs, json);
	uint64_t ahead = 0; /* variants before this index have been prefetched */
	int keyw = 24;
	for (size_t p = 0, w = 0; p < np; p++) {
		w += strlen(s->params[p].name) + 4;
		if ((int)w > keyw)
			keyw = (int)w;
	}
	if (!json)
		printf("%-*s  %-13s %12s %9s %5s  %-16s  %s\n", keyw, "variant", "status", "median", "ci", "n",
		       "fingerprint", "error");
	double noise = NAN;
	if (want_noise < 0)
		want_noise = total > 1 && !resumed;
	if (want_noise && !stop) {
		uint32_t *def = calloc(np + 1, sizeof(uint32_t));
		muh_variant v;
		space_default(ec.space, def);
		eval_variant_from_space(ec.space, def, inst, &v);
		int noisy = 0; /* beyond measure.max_noise in 3 pairs */
		double maxn = ec.target.max_noise;
		if (eval_noise_rounds(ev, &v, 2, 3, maxn, &noise, &noisy, &d) == MUH_OK) {
			/* stored with the first variant measured (below) */
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
		eval_variant_free(&v);
		free(def);
	}
	long long measured = 0, counts[EVAL_NSTATUS] = {0};
	/* best and defaults, for the closing line (no samples kept) */
	muh_measurement best, defm;
	char best_key[1024] = "", def_key[1024] = "";
	measurement_init(&best);
	measurement_init(&defm);
	{
		uint32_t *def = calloc(np + 1, sizeof(uint32_t));
		if (def && space_default(ec.space, def))
			space_key(ec.space, def, def_key, sizeof(def_key));
		free(def);
	}
	for (uint64_t i = 0; i < total && !stop && (limit < 0 || measured < limit); i++) {
		uint32_t *cfg = cfgs;
		if (all)
			space_config_at(ec.space, i, cfg);
		else
			cfg = cfgs + i * (np + 1);
		muh_variant v;
		muh_measurement m;
		if (eval_variant_from_space(ec.space, cfg, inst, &v))
			break;
		if (st && store_has(st, runid, v.key) == 1) {
			eval_variant_free(&v);
			continue;
		}
		/* store (issue 17): claim it, so that a second muh on this run never
		 * measures it too; when that one has (or is), skip it here */
		int cl = st ? store_claim_or_get(st, runid, v.key, &m, &d, &stop) : 1;
		if (cl < 1) {
			measurement_free(&m);
			eval_variant_free(&v);
			if (cl < 0 && !stop && (ex = EXIT_ENV))
				fprintf(stderr, "muh eval: %s\n", d.msg);
			if (cl < 0)
				break;
			continue;
		}
		/* compile while measuring: hand the next variants to the pool */
		if (ahead <= i)
			ahead = i + 1;
		uint32_t *nx = calloc(np + 1, sizeof(uint32_t));
		while (jobs && nx && ahead < total && ahead <= i + (uint64_t)jobs) {
			if (all)
				space_config_at(ec.space, ahead, nx);
			else
				memcpy(nx, cfgs + ahead * (np + 1), np * sizeof(uint32_t));
			muh_variant nv;
			int started = 1;
			if (space_is_valid(ec.space, nx) && eval_variant_from_space(ec.space, nx, inst, &nv) == MUH_OK) {
				if (!st || store_has(st, runid, nv.key) != 1)
					started = eval_prefetch(ev, &nv);
				eval_variant_free(&nv);
			}
			if (!started)
				break;
			ahead++;
		}
		free(nx);
		if (!space_is_valid(ec.space, cfg)) {
			measurement_init(&m);
			measurement_fail(&m, EVAL_INVALID, "violates the constraints");
		} else if ((ex = eval_measure(ev, &v, &m, &d))) {
			fprintf(stderr, "muh eval: %s\n", d.msg);
			eval_variant_free(&v);
			ex = cli_exit(ex);
			break;
		}
		int put = st ? store_put(st, runid, &v, &m, &d) : MUH_OK;
		if (put == STORE_KEPT) /* store: another process's row is kept; report that one */
			put = (measurement_free(&m), store_get(st, runid, v.key, &m)) == 1 ? MUH_OK : MUH_EENV;
		if (st)
			store_release(st, runid, v.key);
		if (st && !measured && isfinite(noise)) /* store: a resume that measures nothing keeps it */
			store_set_noise(st, runid, noise);
		if (put) {
			fprintf(stderr, "muh eval: %s\n", d.msg);
			ex = EXIT_ENV;
		}
		measured++;
		counts[m.status]++;
		if (m.status == EVAL_OK) {
			muh_measurement lite = m;
			lite.samples = NULL;
			lite.nsamples = 0;
			lite.fp_detail = NULL;
			if (!(best.median <= m.median)) {
				best = lite;
				snprintf(best_key, sizeof(best_key), "%s", v.key);
			}
			if (!strcmp(v.key, def_key))
				defm = lite;
		}
		if (json) {
			cJSON *o = evalcli_json(v.key, &m);
			char *t = cJSON_PrintUnformatted(o);
			puts(t ? t : "{}");
			free(t);
			cJSON_Delete(o);
		} else {
			evalcli_print_row(stdout, v.key, &m, keyw);
		}
		fflush(stdout);
		measurement_free(&m);
		eval_variant_free(&v);
		if (ex)
			break;
	}
	sigaction(SIGINT, &old, NULL);
	if (!json && best_key[0] && measured > 1) {
		char a[32], b[32];
		evalcli_fmt_median(a, sizeof(a), &best);
		printf("\nbest: %s  %s", best_key, a);
		if (defm.status == EVAL_OK && strcmp(best_key, def_key)) {
			evalcli_fmt_median(b, sizeof(b), &defm);
			int cmp = eval_compare(&best, &defm, isfinite(noise) ? noise : 0);
			if (cmp == 0)
				printf("; a tie with the defaults (%s, %s) within the noise\n", def_key, b);
			else
				printf("; %.2fx the speed of the defaults (%s, %s)\n", defm.median / best.median, def_key, b);
		} else {
			printf("%s\n", strcmp(best_key, def_key) ? "" : " (the defaults)");
		}
	}
	if (!json) {
		fprintf(stderr, "muh eval: %lld measured", measured);
		for (int k = 0; k < EVAL_NSTATUS; k++)
			if (counts[k])
				fprintf(stderr, ", %lld %s", counts[k], eval_status_name((enum eval_status)k));
		fprintf(stderr, "%s%s\n", stop ? " (interrupted)" : "",
			eval_restarts(ev) ? "; the runner was restarted after each crash or timeout" : "");
	}
	eval_close(ev);
	store_close(st);
	free(cfgs);
	evalcli_free(&ec);
	return stop && ex == EXIT_OK ? EXIT_INTERRUPTED : ex; /* Ctrl-C: saved, then 130 */
}

const struct muh_command muh_cmd_eval = {
	.name = "eval",
	.order = 34,
	.summary = "measure configurations (build, fingerprint, verify, time) into the store",
	.help = help,
	.run = run,
};
