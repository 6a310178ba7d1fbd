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
 * session_verify (session.h), which owns the proof; verify_text renders it.
 */
#include <getopt.h>

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
	"  --json         {spec, problem, backend, base, noise, noise_timings,\n"
	"                 variants: [...], params: [{name, values, tested,\n"
	"                 fingerprints_changed, time_changed, verdict}],\n"
	"                 untested: [...], from: KEY|null, ok}\n"
	"\n"
	"exit: 0 every param reaches the kernel; 1 one does not, one could not be\n"
	"tested, or the base fails; 2 bad spec or --from; 3 the backend cannot run\n"
	"here (e.g. no CUDA device).\n"
	"\n"
	"examples:\n"
	"  muh verify specs/matmul_cpu.yaml\n"
	"  muh verify specs/matmul_cpu_broken.yaml    # exits 1: BLOCK_N is dead\n";

static volatile sig_atomic_t interrupted;


/* Verifies one problem instance; returns an exit code. */
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
	session_verify_result r;
	muh_diag d;
	int rc = session_verify(ss, from, &r, &d);
	if (rc && interrupted) { /* Ctrl-C: no verdict from a part of the proof */
		fprintf(stderr, "muh verify: interrupted (Ctrl-C) after %zu variant(s): no verdict\n", r.nvariants);
		ex = EXIT_INTERRUPTED;
		goto out;
	}
	if (rc) {
		ex = cli_fail("verify", rc, &d);
		if (r.suggest_of)
			verify_text_suggest(&cli_out, "muh verify", &r, s, 0, NULL);
		goto out;
	}
	verify_text(&cli_out, "muh verify", ss, &r, from, so->jobs, json);
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
	eo.so.stop = &interrupted;
	evalcli_ctrl_c_text("verify", NULL, "a proof cut short has no verdict");
	void (*old)(int) = evalcli_stop_on_ctrl_c(&interrupted);
	ex = evalcli_each_problem("verify", argc, argv, &eo, verify_one, from);
	signal(SIGINT, old);
	return interrupted ? EXIT_INTERRUPTED : ex;
}

MUH_COMMAND(verify, 36, "prove each param reaches the compiled kernel (fingerprints, noise)");
