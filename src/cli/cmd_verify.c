/*
 * cmd_verify.c — `muh verify SPEC`: proves that every param reaches the
 * compiled kernel. A designed sample: the defaults (timed twice, for the
 * noise), then every other value of every param with the others at their
 * defaults. A param none of whose values changes the fingerprint is "not
 * reaching the kernel" (exit 1): the seeds' benchmark mistake.
 */
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "evalcli.h"

static const char help[] =
	"usage: muh verify SPEC [--hw PROFILE] [--problem K] [--json]\n"
	"\n"
	"Proves that each param of SPEC reaches the compiled kernel. Evaluates a\n"
	"designed sample: the defaults (twice: the difference is the noise of this\n"
	"machine), then every value of every param at least once with the other\n"
	"params at their defaults (values the constraints forbid are skipped).\n"
	"Each evaluation builds, fingerprints, checks the output and times.\n"
	"\n"
	"For each param it reports whether changing it changed the fingerprint of\n"
	"the compiled artifact, and whether it changed the time by more than the\n"
	"noise. A param whose values never change the fingerprint is reported as\n"
	"\"not reaching the kernel\" and muh verify exits 1.\n"
	"\n"
	"options:\n"
	"  --hw PROFILE   hardware profile (overrides the spec's hw:)\n"
	"  --problem K    problem instance K (0-based); default 0\n"
	"  --json         {spec, backend, noise, variants: [...], params: [{name,\n"
	"                 values, tested, fingerprints_changed, time_changed, verdict}]}\n"
	"\n"
	"exit: 0 every param reaches the kernel; 1 one does not (or the defaults\n"
	"fail); 2 bad spec; 3 the backend cannot run here (e.g. no CUDA device).\n"
	"\n"
	"examples:\n"
	"  muh verify specs/matmul_cpu.yaml\n"
	"  muh verify specs/matmul_cpu_broken.yaml    # exits 1: BLOCK_N is dead\n";

struct pstat {
	int tested, fp_changed, time_changed, failed, skipped;
};

static int run(int argc, char **argv)
{
	static const struct option opts[] = {
		{"json", no_argument, NULL, 'j'},
		{"hw", required_argument, NULL, 'w'},
		{"problem", required_argument, NULL, 'k'},
		{NULL, 0, NULL, 0},
	};
	int json = 0, c;
	const char *hwref = NULL;
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
	muh_evaluator *ev = NULL;
	if ((ex = evalcli_open("verify", &ec, &ev))) {
		evalcli_free(&ec);
		return ex;
	}
	const muh_spec *s = ec.spec;
	size_t np = space_nparams(ec.space);
	uint32_t *def = calloc(np + 1, sizeof(uint32_t)), *cfg = calloc(np + 1, sizeof(uint32_t));
	struct pstat *ps = calloc(np + 1, sizeof(*ps));
	cJSON *root = cJSON_CreateObject(), *jvars = cJSON_CreateArray();
	if (!def || !cfg || !ps || !root) {
		fprintf(stderr, "muh verify: out of memory\n");
		return EXIT_ENV;
	}
	int keyw = 24;
	for (size_t p = 0, w = 0; p < np; p++) {
		w += strlen(s->params[p].name) + 4;
		if ((int)w > keyw)
			keyw = (int)w;
	}
	if (!space_default(ec.space, def)) {
		fprintf(stderr, "muh verify: the defaults of %s violate the constraints\n", s->path);
		ex = EXIT_USAGE;
		goto out;
	}
	muh_diag d;
	diag_clear(&d);
	muh_variant v;
	muh_measurement mdef, mdef2;
	eval_variant_from_space(ec.space, def, inst, &v);
	if (!json)
		printf("muh verify %s: backend %s, %zu params\n\n%-*s  %-13s %12s %9s %5s  %-16s  %s\n", s->path,
		       ec.target.backend, np, keyw, "variant", "status", "median", "ci", "n", "fingerprint", "error");
	int rc = eval_measure(ev, &v, &mdef, &d);
	if (!rc)
		rc = eval_measure(ev, &v, &mdef2, &d);
	if (rc) {
		fprintf(stderr, "muh verify: %s\n", d.msg);
		eval_variant_free(&v);
		ex = cli_exit(rc);
		goto out;
	}
	if (!json) {
		evalcli_print_row(stdout, v.key, &mdef, keyw);
		evalcli_print_row(stdout, v.key, &mdef2, keyw);
	}
	cJSON_AddItemToArray(jvars, evalcli_json(v.key, &mdef));
	cJSON_AddItemToArray(jvars, evalcli_json(v.key, &mdef2));
	double noise = NAN;
	if (mdef.status == EVAL_OK && mdef2.status == EVAL_OK) {
		noise = fabs(mdef.median - mdef2.median) / fmin(mdef.median, mdef2.median);
	}
	int defaults_ok = mdef.fingerprint[0] && !strcmp(mdef.fingerprint, mdef2.fingerprint);
	/* the defaults must pass their own check: a sample of failures proves nothing */
	const muh_measurement *dfail = mdef.status != EVAL_OK ? &mdef : mdef2.status != EVAL_OK ? &mdef2 : NULL;
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
			if (m.fingerprint[0] && strcmp(m.fingerprint, mdef.fingerprint))
				ps[p].fp_changed++;
			if (m.status != EVAL_OK)
				ps[p].failed++;
			else if (mdef.status == EVAL_OK && eval_compare(&m, &mdef, noise) != 0)
				ps[p].time_changed++;
			measurement_free(&m);
			eval_variant_free(&v);
		}
	}
	int dead = 0;
	cJSON *jp = cJSON_CreateArray();
	if (!json) {
		char nz[48] = "unknown (the defaults did not time)";
		if (isfinite(noise))
			snprintf(nz, sizeof(nz), "%.2f%%", 100 * noise);
		printf("\nnoise: %s (the defaults timed twice)\n\n%-20s %6s %6s  %-14s %-16s %s\n", nz, "param",
		       "values", "tested", "fingerprint", "time > noise", "verdict");
	}
	for (size_t p = 0; p < np; p++) {
		const char *verdict;
		if (s->params[p].nvalues < 2)
			verdict = "single value";
		else if (ps[p].tested == 0)
			verdict = "untested: the constraints allow no other value";
		else if (!defaults_ok)
			verdict = "unknown: the defaults have no stable fingerprint";
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
			printf("\nthe defaults: %s %s\n", eval_status_name((dfail ? dfail : &mdef)->status),
			       (dfail ? dfail : &mdef)->error);
		dead++;
	}
	if (json) {
		cJSON_AddStringToObject(root, "spec", s->path);
		cJSON_AddStringToObject(root, "backend", ec.target.backend);
		if (isfinite(noise))
			cJSON_AddNumberToObject(root, "noise", noise);
		else
			cJSON_AddNullToObject(root, "noise");
		cJSON_AddItemToObject(root, "variants", jvars);
		jvars = NULL;
		cJSON_AddItemToObject(root, "params", jp);
		cJSON_AddBoolToObject(root, "ok", dead == 0);
		char *t = cJSON_Print(root);
		puts(t ? t : "{}");
		free(t);
	} else {
		cJSON_Delete(jp);
		printf("\n%s\n", dfail ? "muh verify: FAILED: the defaults do not pass"
			       : dead ? "muh verify: FAILED: a param does not reach the kernel"
				      : "muh verify: every param reaches the kernel");
	}
	ex = dead ? EXIT_FINDING : EXIT_OK;
	measurement_free(&mdef);
	measurement_free(&mdef2);
out:
	cJSON_Delete(jvars);
	cJSON_Delete(root);
	free(def);
	free(cfg);
	free(ps);
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
