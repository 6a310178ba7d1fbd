/*
 * cmd_verify.c — `muh verify SPEC`: proves that every param reaches the
 * compiled kernel. A designed sample: the base (the defaults, or --from KEY)
 * timed VERIFY_TIMINGS times, whose spread is the noise (two timings
 * understate drift, and a dead param then "changes the time"), then every
 * other value of every param with the others at the base. A param none of
 * whose values changes the fingerprint is "not reaching the kernel" (exit
 * 1): the seeds' benchmark mistake. A param that could not be tested (no
 * one-at-a-time change from the base is valid) proves nothing, and is never
 * reported as reaching the kernel: exit 1, "nothing proved", with the
 * nearest base from which it can be tested (find_base).
 */
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "evalcli.h"

/* the base's timings, for the noise: their spread, (max - min) / min */
#define VERIFY_TIMINGS 5
/* find_base looks at this many valid configurations at most (all of them
 * when the space has no more, else as many uniform samples) */
#define VERIFY_SEARCH 200000

static const char help[] =
	"usage: muh verify SPEC [--from KEY] [--hw PROFILE] [--problem K] [--json]\n"
	"\n"
	"Proves that each param of SPEC reaches the compiled kernel. Evaluates a\n"
	"designed sample: the defaults (5 times: the spread of their times is the\n"
	"noise of this machine), then every value of every param at least once with\n"
	"the other params at their defaults (values the constraints forbid are\n"
	"skipped). Each evaluation builds, fingerprints, checks the output and times.\n"
	"\n"
	"For each param it reports whether changing it changed the fingerprint of\n"
	"the compiled artifact, and whether it changed the time by more than the\n"
	"noise. A param whose values never change the fingerprint is reported as\n"
	"\"not reaching the kernel\" and muh verify exits 1. A param that could not\n"
	"be tested (the constraints allow no one-at-a-time change from the defaults)\n"
	"proves nothing: exit 1, \"nothing proved\", naming the valid configuration\n"
	"nearest to the defaults from which it can be tested (give it to --from).\n"
	"\n"
	"options:\n"
	"  --from KEY     the base instead of the defaults: a full canonical key\n"
	"                 (NAME=V,... every param), valid under the constraints\n"
	"  --hw PROFILE   hardware profile (overrides the spec's hw:)\n"
	"  --problem K    problem instance K (0-based); default 0\n"
	"  --json         {spec, backend, base, noise, noise_timings, variants: [...],\n"
	"                 params: [{name, values, tested, fingerprints_changed,\n"
	"                 time_changed, verdict}], untested: [...], from: KEY|null, ok}\n"
	"\n"
	"exit: 0 every param reaches the kernel; 1 one does not, one could not be\n"
	"tested, or the base fails; 2 bad spec or --from; 3 the backend cannot run\n"
	"here (e.g. no CUDA device).\n"
	"\n"
	"examples:\n"
	"  muh verify specs/matmul_cpu.yaml\n"
	"  muh verify specs/matmul_cpu_broken.yaml    # exits 1: BLOCK_N is dead\n";

struct pstat {
	int tested, fp_changed, time_changed, failed, skipped;
};

/* How many params p with want[p] can change one at a time from the valid
 * cfg to another valid configuration (tmp: np scratch values). */
static size_t testable(const muh_space *sp, const uint32_t *cfg, const unsigned char *want, uint32_t *tmp)
{
	const muh_spec *s = space_spec(sp);
	size_t np = space_nparams(sp), n = 0;
	for (size_t p = 0; p < np; p++) {
		if (!want[p])
			continue;
		memcpy(tmp, cfg, np * sizeof(uint32_t));
		for (size_t j = 0; j < s->params[p].nvalues; j++) {
			if (j == cfg[p])
				continue;
			tmp[p] = (uint32_t)j;
			if (space_is_valid(sp, tmp)) {
				n++;
				break;
			}
		}
	}
	return n;
}

/* A base for the params with want[p]: the valid configuration from which
 * the most of them can change one at a time, and of those the nearest to
 * from (fewest params that differ; the first found on a tie). Looks at
 * every valid configuration, or VERIFY_SEARCH uniform samples of a larger
 * space. Writes it to out and returns how many of them it lets change; 0
 * (out untouched) when none. */
static size_t find_base(const muh_space *sp, const uint32_t *from, const unsigned char *want, uint32_t *out)
{
	size_t np = space_nparams(sp), best = 0, bestd = 0, nwant = 0;
	for (size_t p = 0; p < np; p++)
		nwant += want[p] != 0;
	uint32_t *cfg = calloc(np + 1, sizeof(uint32_t)), *tmp = calloc(np + 1, sizeof(uint32_t));
	uint64_t nvalid = space_valid(sp), rng = 0x9e3779b97f4a7c15ull;
	uint64_t n = nvalid <= VERIFY_SEARCH ? nvalid : VERIFY_SEARCH;
	for (uint64_t i = 0; cfg && tmp && i < n; i++) {
		if (nvalid <= VERIFY_SEARCH ? space_config_at(sp, i, cfg) : space_sample(sp, &rng, cfg))
			continue;
		size_t dist = 0;
		for (size_t p = 0; p < np; p++)
			dist += cfg[p] != from[p];
		if (best == nwant && dist >= bestd)
			continue; /* cannot do better than one already found */
		size_t t = testable(sp, cfg, want, tmp);
		if (t > best || (t == best && t && dist < bestd)) {
			best = t;
			bestd = dist;
			memcpy(out, cfg, np * sizeof(uint32_t));
		}
	}
	free(cfg);
	free(tmp);
	return best;
}

/* Prints (or, for --json, adds to root) where the params marked in want can
 * be tested from: the nearest base find_base gives. Returns 1 when there is one. */
static int suggest_base(const struct evalcli *ec, const uint32_t *from, const unsigned char *want, int json,
			cJSON *root)
{
	size_t np = space_nparams(ec->space);
	uint32_t *b = calloc(np + 1, sizeof(uint32_t));
	char key[4096] = "";
	size_t n = b ? find_base(ec->space, from, want, b) : 0;
	if (n)
		space_key(ec->space, b, key, sizeof(key));
	free(b);
	if (json) {
		if (n)
			cJSON_AddStringToObject(root, "from", key);
		else
			cJSON_AddNullToObject(root, "from");
	} else if (n) {
		size_t nwant = 0;
		for (size_t p = 0; p < np; p++)
			nwant += want[p] != 0;
		fprintf(stderr,
			"muh verify: %zu of the %zu can be tested from %s (the nearest such base): muh verify "
			"%s --from '%s'\n",
			n, nwant, key, ec->spec->path, key);
	}
	else
		fprintf(stderr, "muh verify: no valid configuration lets them change one at a time\n");
	return n > 0;
}

static int run(int argc, char **argv)
{
	static const struct option opts[] = {
		{"json", no_argument, NULL, 'j'},
		{"hw", required_argument, NULL, 'w'},
		{"problem", required_argument, NULL, 'k'},
		{"from", required_argument, NULL, 'f'},
		{NULL, 0, NULL, 0},
	};
	int json = 0, c;
	const char *hwref = NULL, *from = NULL;
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
		case 'f':
			from = optarg;
			break;
		case 'k': {
			uint64_t v;
			if (cli_parse_u64(optarg, &v))
				return cli_usage_error("verify", "--problem needs an instance number");
			inst = (size_t)v;
			break;
		}
		default:
			return cli_bad_option("verify", argv, opts);
		}
	}
	if (optind != argc - 1)
		return cli_usage_error("verify", "expected one SPEC file");
	struct evalcli ec;
	int ex = evalcli_load("verify", argv[optind], hwref, inst, &ec);
	if (ex)
		return ex;
	const muh_spec *s = ec.spec;
	size_t np = space_nparams(ec.space);
	uint32_t *def = calloc(np + 1, sizeof(uint32_t)), *cfg = calloc(np + 1, sizeof(uint32_t));
	struct pstat *ps = calloc(np + 1, sizeof(*ps));
	unsigned char *untested = calloc(np + 1, 1);
	cJSON *root = cJSON_CreateObject(), *jvars = cJSON_CreateArray();
	muh_evaluator *ev = NULL;
	muh_measurement mdef[VERIFY_TIMINGS];
	int nmeas = 0;
	char basekey[4096] = "";
	if (!def || !cfg || !ps || !untested || !root || !jvars) {
		fprintf(stderr, "muh verify: out of memory\n");
		ex = EXIT_ENV;
		goto out;
	}
	muh_diag d;
	diag_clear(&d);
	if (from) {
		if (space_parse_key(ec.space, from, def, &d)) {
			fprintf(stderr, "muh verify: --from %s: %s\n", from, d.msg);
			ex = EXIT_USAGE;
			goto out;
		}
		if (!space_is_valid(ec.space, def)) {
			fprintf(stderr, "muh verify: --from %s violates the constraints\n", from);
			ex = EXIT_USAGE;
			goto out;
		}
	} else if (!space_default(ec.space, def)) {
		fprintf(stderr, "muh verify: the defaults of %s violate the constraints\n", s->path);
		memset(untested, 1, np);
		suggest_base(&ec, def, untested, 0, NULL);
		ex = EXIT_USAGE;
		goto out;
	}
	space_key(ec.space, def, basekey, sizeof(basekey));
	const char *base = from ? "the base" : "the defaults";
	if ((ex = evalcli_open("verify", &ec, &ev)))
		goto out;
	int keyw = 24;
	for (size_t p = 0, w = 0; p < np; p++) {
		w += strlen(s->params[p].name) + 4;
		if ((int)w > keyw)
			keyw = (int)w;
	}
	muh_variant v;
	eval_variant_from_space(ec.space, def, inst, &v);
	if (!json)
		printf("muh verify %s: backend %s, %zu params%s%s\n\n%-*s  %-13s %12s %9s %5s  %-16s  %s\n", s->path,
		       ec.target.backend, np, from ? ", from " : "", from ? basekey : "", keyw, "variant",
		       "status", "median", "ci", "n", "fingerprint", "error");
	int rc = 0;
	/* the base, VERIFY_TIMINGS times: the spread of their medians is the noise */
	while (nmeas < VERIFY_TIMINGS && !(rc = eval_measure(ev, &v, &mdef[nmeas], &d)))
		nmeas++;
	if (rc) {
		fprintf(stderr, "muh verify: %s\n", d.msg);
		eval_variant_free(&v);
		ex = cli_exit(rc);
		goto out;
	}
	const muh_measurement *dfail = NULL, *ref = &mdef[0];
	int defaults_ok = mdef[0].fingerprint[0] != 0;
	double lo = INFINITY, hi = 0;
	for (int k = 0; k < nmeas; k++) {
		if (!json)
			evalcli_print_row(stdout, v.key, &mdef[k], keyw);
		cJSON_AddItemToArray(jvars, evalcli_json(v.key, &mdef[k]));
		defaults_ok &= !strcmp(mdef[k].fingerprint, mdef[0].fingerprint);
		if (mdef[k].status != EVAL_OK && !dfail)
			dfail = &mdef[k]; /* the base must pass its own check: failures prove nothing */
		lo = fmin(lo, mdef[k].median);
		hi = fmax(hi, mdef[k].median);
	}
	double noise = NAN;
	if (!dfail) {
		noise = (hi - lo) / lo;
		/* the reference: the timing whose median is the median of the medians */
		for (int k = 0; k < nmeas; k++) {
			int below = 0;
			for (int j = 0; j < nmeas; j++)
				below += mdef[j].median < mdef[k].median || (mdef[j].median == mdef[k].median && j < k);
			if (below == nmeas / 2)
				ref = &mdef[k];
		}
	}
	eval_variant_free(&v);
	for (size_t p = 0; p < np; p++) {
		for (size_t j = 0; j < s->params[p].nvalues; j++) {
			if (j == def[p])
				continue;
			memcpy(cfg, def, np * sizeof(uint32_t));
			cfg[p] = (uint32_t)j;
			if (!space_is_valid(ec.space, cfg)) {
				ps[p].skipped++;
				continue;
			}
			muh_measurement m;
			eval_variant_from_space(ec.space, cfg, inst, &v);
			if ((rc = eval_measure(ev, &v, &m, &d))) {
				fprintf(stderr, "muh verify: %s\n", d.msg);
				eval_variant_free(&v);
				ex = cli_exit(rc);
				goto out;
			}
			if (!json)
				evalcli_print_row(stdout, v.key, &m, keyw);
			cJSON_AddItemToArray(jvars, evalcli_json(v.key, &m));
			ps[p].tested++;
			if (m.fingerprint[0] && strcmp(m.fingerprint, mdef[0].fingerprint))
				ps[p].fp_changed++;
			if (m.status != EVAL_OK)
				ps[p].failed++;
			else if (!dfail && eval_compare(&m, ref, noise) != 0)
				ps[p].time_changed++;
			measurement_free(&m);
			eval_variant_free(&v);
		}
	}
	int dead = 0, nuntested = 0;
	cJSON *jp = cJSON_CreateArray(), *ju = cJSON_CreateArray();
	if (!json) {
		char nz[48] = "unknown (the base did not time)";
		if (isfinite(noise))
			snprintf(nz, sizeof(nz), "%.2f%%", 100 * noise);
		printf("\nnoise: %s (the spread of %s timed %d times)\n\n%-20s %6s %6s  %-14s %-16s %s\n", nz,
		       base, VERIFY_TIMINGS, "param", "values", "tested", "fingerprint", "time > noise", "verdict");
	}
	for (size_t p = 0; p < np; p++) {
		const char *verdict;
		if (s->params[p].nvalues < 2)
			verdict = "single value";
		else if (ps[p].tested == 0) {
			verdict = from ? "UNTESTED: no one-at-a-time change from the base is valid"
				       : "UNTESTED: no one-at-a-time change from the defaults is valid";
			untested[p] = 1;
			nuntested++;
			cJSON_AddItemToArray(ju, cJSON_CreateString(s->params[p].name));
		} else if (!defaults_ok)
			verdict = "unknown: the base has no stable fingerprint";
		else if (ps[p].fp_changed == 0) {
			verdict = "NOT REACHING THE KERNEL: every value builds the same artifact";
			dead++;
		} else
			verdict = "reaches the kernel";
		if (!json) {
			char a[32], b[32];
			snprintf(a, sizeof(a), "%d of %d", ps[p].fp_changed, ps[p].tested);
			snprintf(b, sizeof(b), "%d of %d", ps[p].time_changed, ps[p].tested - ps[p].failed);
			printf("%-20s %6zu %6d  %-14s %-16s %s\n", s->params[p].name, s->params[p].nvalues,
			       ps[p].tested, a, b, verdict);
		}
		cJSON *o = cJSON_CreateObject();
		cJSON_AddStringToObject(o, "name", s->params[p].name);
		cJSON_AddNumberToObject(o, "values", (double)s->params[p].nvalues);
		cJSON_AddNumberToObject(o, "tested", ps[p].tested);
		cJSON_AddNumberToObject(o, "skipped", ps[p].skipped);
		cJSON_AddNumberToObject(o, "failed", ps[p].failed);
		cJSON_AddNumberToObject(o, "fingerprints_changed", ps[p].fp_changed);
		cJSON_AddNumberToObject(o, "time_changed", ps[p].time_changed);
		cJSON_AddStringToObject(o, "verdict", verdict);
		cJSON_AddItemToArray(jp, o);
	}
	if (!defaults_ok || dfail) {
		if (!json)
			printf("\n%s: %s %s\n", base, eval_status_name((dfail ? dfail : &mdef[0])->status),
			       (dfail ? dfail : &mdef[0])->error);
		dead++;
	}
	if (!json) {
		if (dfail)
			printf("\nmuh verify: FAILED: %s do%s not pass\n", base, from ? "es" : "");
		else if (dead)
			printf("\nmuh verify: FAILED: a param does not reach the kernel\n");
		else if (nuntested)
			printf("\nmuh verify: nothing proved for %d param(s): no one-at-a-time change from %s is "
			       "valid under the constraints\n",
			       nuntested, base);
		else
			printf("\nmuh verify: every param reaches the kernel\n");
		fflush(stdout);
	}
	if (nuntested) {
		if (!json)
			fprintf(stderr, "muh verify: nothing proved: %d param(s) could not be tested from %s\n",
				nuntested, base);
		suggest_base(&ec, def, untested, json, root);
	}
	if (json) {
		cJSON_AddStringToObject(root, "spec", s->path);
		cJSON_AddStringToObject(root, "backend", ec.target.backend);
		cJSON_AddStringToObject(root, "base", basekey);
		if (isfinite(noise))
			cJSON_AddNumberToObject(root, "noise", noise);
		else
			cJSON_AddNullToObject(root, "noise");
		cJSON_AddNumberToObject(root, "noise_timings", VERIFY_TIMINGS);
		cJSON_AddItemToObject(root, "variants", jvars);
		jvars = NULL;
		cJSON_AddItemToObject(root, "params", jp);
		cJSON_AddItemToObject(root, "untested", ju);
		cJSON_AddBoolToObject(root, "ok", dead == 0 && nuntested == 0);
		char *t = cJSON_Print(root);
		puts(t ? t : "{}");
		free(t);
	} else {
		cJSON_Delete(jp);
		cJSON_Delete(ju);
	}
	ex = dead || nuntested ? EXIT_FINDING : EXIT_OK;
out:
	for (int k = 0; k < nmeas; k++)
		measurement_free(&mdef[k]);
	cJSON_Delete(jvars);
	cJSON_Delete(root);
	free(def);
	free(cfg);
	free(ps);
	free(untested);
	eval_close(ev);
	evalcli_free(&ec);
	return ex;
}

const struct muh_command muh_cmd_verify = {
	.name = "verify",
	.order = 36,
	.summary = "prove that each param reaches the compiled kernel (fingerprints, noise)",
	.help = help,
	.run = run,
};
