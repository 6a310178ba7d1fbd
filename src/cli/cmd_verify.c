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
 * nearest base from which it can be tested. Parse and print over
 * session_verify (session.h), which owns the proof.
 */
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "evalcli.h"

static const char help[] =
	"usage: muh verify SPEC [--from KEY] [--hw PROFILE] [--problem K|NAME=V,...|all]\n"
	"                  [--jobs N] [--json]\n"
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
	"  --problem WHICH  the problem instances, one proof each: K (0-based), a\n"
	"                 list (0,2), values (M=256) or all; default 0\n"
	"  --jobs N       compile the designed sample first with N processes (the\n"
	"                 cpu and cuda build pool, or a worker's batch prepare)\n"
	"  --json         {spec, problem, backend, base, noise, noise_timings, variants: [...],\n"
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

/* Prints (or, for --json, adds to root) where the untested params can be
 * tested from: the nearest base the session found. */
static void print_suggest(const session_verify_result *r, const muh_spec *s, int json, cJSON *root)
{
	if (json) {
		if (r->suggest_n)
			cJSON_AddStringToObject(root, "from", r->suggest);
		else
			cJSON_AddNullToObject(root, "from");
	} else if (r->suggest_n) {
		fprintf(stderr,
			"muh verify: %zu of the %zu can be tested from %s (the nearest such base): muh verify "
			"%s --from '%s'\n",
			r->suggest_n, r->suggest_of, r->suggest, s->path, r->suggest);
	} else {
		fprintf(stderr, "muh verify: no valid configuration lets them change one at a time\n");
	}
}

/* Verifies one problem instance; returns an exit code. */
static volatile sig_atomic_t interrupted;

static void on_sigint(int sig)
{
	interrupted = 1;
	signal(sig, SIG_DFL); /* a second Ctrl-C kills */
	evalcli_ctrl_c_say();
}

static int verify_one(const char *path, const struct evalcli_opts *eo, const void *ctx)
{
	const muh_session_opts *so = &eo->so;
	const char *from = ctx;
	int json = eo->json;
	muh_session *ss;
	int ex = evalcli_session("verify", path, so, &ss);
	if (ex)
		return ex;
	if (session_target(ss))
		evalcli_ctrl_c_text("verify", eval_target_backend(session_target(ss)), "a proof cut short has no verdict");
	const muh_spec *s = session_spec(ss);
	size_t np = space_nparams(session_space(ss));
	int keyw = evalcli_keyw(s);
	const char *base = from ? "the base" : "the defaults";
	session_verify_result r;
	muh_diag d;
	int rc = session_verify(ss, from, &r, &d);
	if (rc && interrupted) { /* Ctrl-C: no verdict from a part of the proof */
		fprintf(stderr, "muh verify: interrupted (Ctrl-C) after %zu variant(s): no verdict\n", r.nvariants);
		ex = EXIT_INTERRUPTED;
		goto out;
	}
	if (rc) {
		fprintf(stderr, "muh verify: %s\n", d.msg);
		if (r.suggest_of)
			print_suggest(&r, s, 0, NULL);
		ex = rc == MUH_EINPUT ? EXIT_USAGE : cli_exit(rc);
		goto out;
	}
	if (!json) {
		printf("muh verify %s: backend %s, %zu params%s%s%s%s\n", s->path, eval_target_backend(session_target(ss)), np,
		       from ? ", from " : "", from ? r.base : "", s->nproblem ? ", problem " : "",
		       s->nproblem ? session_problem(ss) : "");
		if (r.prepared.ran)
			printf("prepare: %zu of %zu variants compiled in %.1f s with %d jobs\n", r.prepared.done,
			       r.prepared.asked, r.prepared.seconds, so->jobs);
		printf("\n");
		evalcli_print_header(stdout, keyw);
		for (size_t i = 0; i < r.nvariants; i++)
			evalcli_print_row(stdout, r.keys[i], &r.m[i], keyw);
		char nz[48] = "unknown (the base did not time)";
		if (isfinite(r.noise))
			snprintf(nz, sizeof(nz), "%.2f%%", 100 * r.noise);
		printf("\nnoise: %s (the spread of %s timed %d times)\n\n%-20s %6s %6s  %-14s %-16s %s\n", nz, base,
		       SESSION_VERIFY_TIMINGS, "param", "values", "tested", "fingerprint", "time > noise", "verdict");
	}
	if (r.prepared.note[0])
		fprintf(stderr, "muh verify: note: prepare: %s; each build compiles what is missing\n", r.prepared.note);
	cJSON *root = cJSON_CreateObject(), *jvars = cJSON_CreateArray(), *jp = cJSON_CreateArray(),
	      *ju = cJSON_CreateArray();
	for (size_t i = 0; i < r.nvariants; i++)
		cJSON_AddItemToArray(jvars, evalcli_json(r.keys[i], &r.m[i]));
	for (size_t p = 0; p < np; p++) {
		const session_verify_param *ps = &r.params[p];
		if (ps->untested)
			cJSON_AddItemToArray(ju, cJSON_CreateString(s->params[p].name));
		if (!json) {
			char a[32], b[32];
			snprintf(a, sizeof(a), "%d of %d", ps->fp_changed, ps->tested);
			snprintf(b, sizeof(b), "%d of %d", ps->time_changed, ps->tested - ps->failed);
			printf("%-20s %6zu %6d  %-14s %-16s %s\n", s->params[p].name, s->params[p].nvalues, ps->tested, a,
			       b, ps->verdict);
		}
		cJSON *o = cJSON_CreateObject();
		cJSON_AddStringToObject(o, "name", s->params[p].name);
		cJSON_AddNumberToObject(o, "values", (double)s->params[p].nvalues);
		cJSON_AddNumberToObject(o, "tested", ps->tested);
		cJSON_AddNumberToObject(o, "skipped", ps->skipped);
		cJSON_AddNumberToObject(o, "failed", ps->failed);
		cJSON_AddNumberToObject(o, "fingerprints_changed", ps->fp_changed);
		cJSON_AddNumberToObject(o, "time_changed", ps->time_changed);
		cJSON_AddStringToObject(o, "verdict", ps->verdict);
		cJSON_AddItemToArray(jp, o);
	}
	if (r.base_failed && !json)
		printf("\n%s: %s %s\n", base, eval_status_name(r.base_fail->status), r.base_fail->error);
	if (!json) {
		if (r.base_stopped)
			printf("\nmuh verify: FAILED: %s do%s not run (%s); stopped: nothing was measured against %s\n",
			       base, from ? "es" : "", eval_status_name(r.base_fail->status), from ? "it" : "them");
		else if (r.base_failed && r.base_fail->status != EVAL_OK)
			printf("\nmuh verify: FAILED: %s do%s not pass\n", base, from ? "es" : "");
		else if (r.dead)
			printf("\nmuh verify: FAILED: a param does not reach the kernel\n");
		else if (r.untested)
			printf("\nmuh verify: nothing proved for %d param(s): no one-at-a-time change from %s is "
			       "valid under the constraints\n",
			       r.untested, base);
		else
			printf("\nmuh verify: every param reaches the kernel\n");
		fflush(stdout);
	}
	if (r.untested) {
		if (!json)
			fprintf(stderr, "muh verify: nothing proved: %d param(s) could not be tested from %s\n", r.untested,
				base);
		print_suggest(&r, s, json, root);
	}
	if (json) {
		cJSON_AddStringToObject(root, "spec", s->path);
		cJSON_AddStringToObject(root, "problem", session_problem(ss));
		cJSON_AddStringToObject(root, "backend", eval_target_backend(session_target(ss)));
		cJSON_AddStringToObject(root, "base", r.base);
		cJSON_AddBoolToObject(root, "base_stopped", r.base_stopped);
		if (isfinite(r.noise))
			cJSON_AddNumberToObject(root, "noise", r.noise);
		else
			cJSON_AddNullToObject(root, "noise");
		cJSON_AddNumberToObject(root, "noise_timings", SESSION_VERIFY_TIMINGS);
		cJSON_AddItemToObject(root, "variants", jvars);
		cJSON_AddItemToObject(root, "params", jp);
		cJSON_AddItemToObject(root, "untested", ju);
		cJSON_AddBoolToObject(root, "ok", r.dead == 0 && r.untested == 0);
		char *t = cJSON_Print(root);
		puts(t ? t : "{}");
		free(t);
	} else {
		cJSON_Delete(jvars);
		cJSON_Delete(jp);
		cJSON_Delete(ju);
	}
	cJSON_Delete(root);
	ex = r.dead || r.untested ? EXIT_FINDING : EXIT_OK;
out:
	session_verify_free(&r);
	session_close(ss);
	return ex;
}

static int run(int argc, char **argv)
{
	static const struct option opts[] = {
		EVALCLI_OPTIONS,
		{"from", required_argument, NULL, 'f'},
		{NULL, 0, NULL, 0},
	};
	struct evalcli_opts eo = {.so = {.measure = 1}};
	const char *from = NULL;
	int c, ex;
	optind = 1;
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		if (c == 'f')
			from = optarg;
		else if ((ex = evalcli_option("verify", c, optarg, argv, opts, &eo)))
			return ex;
	}
	interrupted = 0;
	eo.so.stop = &interrupted;
	evalcli_ctrl_c_text("verify", NULL, "a proof cut short has no verdict");
	void (*old)(int) = signal(SIGINT, on_sigint);
	ex = evalcli_each_problem("verify", argc, argv, &eo, verify_one, from);
	signal(SIGINT, old);
	return interrupted ? EXIT_INTERRUPTED : ex;
}

MUH_COMMAND(verify, 36, "prove that each param reaches the compiled kernel (fingerprints, noise)");
