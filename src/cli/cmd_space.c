/*
 * cmd_space.c — `muh space`: the exact size of a spec's space, and what each
 * constraint prunes. Parse and print: space_text* (space.h) renders.
 */
#include <getopt.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "evalcli.h"

static const char help[] =
	"usage: muh space SPEC [--prune-only | --list] [--hw PROFILE] [--problem WHICH]\n"
	"                 [--json]\n"
	"\n"
	"Builds the space of SPEC exactly: the cartesian size, the number of valid\n"
	"configurations, and how many configurations each constraint rejected.\n"
	"\n"
	"SPEC is muh's YAML/JSON spec (docs/spec.md), a BAT CAFF file, or a Kernel\n"
	"Tuner T1 file; the format is detected from the content.\n"
	"\n"
	"Each rejected configuration is charged to exactly one constraint: the first\n"
	"that fails in check order (constraints that read no param first, then in the\n"
	"order they become checkable while params are bound, ties in spec order). So\n"
	"valid + all rejected = cartesian. A constraint that divides by zero rejects.\n"
	"\n"
	"options:\n"
	"  --hw PROFILE   hardware profile for hw.* symbols: a built-in name (muh hw\n"
	"                 --list), a YAML file, or 'device'; overrides the spec's hw:\n"
	"  --problem WHICH  the problem instances when problem symbols have several\n"
	"                 values: K (0-based), a list (0,2), values (M=256) or all;\n"
	"                 default 0\n"
	"  --prune-only   print only the pruning: the size before and after each\n"
	"                 constraint, in check order\n"
	"  --list         print every valid configuration as its canonical key\n"
	"                 (NAME=VALUE,... in spec order), one per line, in index order\n"
	"  --json         {spec, format, profile, params, groups, cartesian, valid,\n"
	"                 seconds, constraints: [{expr, rejected}], check_order}\n"
	"\n"
	"examples:\n"
	"  muh space specs/example.yaml\n"
	"  muh space corpora/bat/GEMM-CAFF.json --json\n"
	"  muh space specs/fused_moe.yaml --hw bi-v100 --prune-only\n";

static volatile sig_atomic_t interrupted;

static void on_sigint(int sig)
{
	(void)sig;
	interrupted = 1;
}

struct space_args {
	int prune, list;
};

static int space_one(const char *path, const struct evalcli_opts *eo, const void *ctx)
{
	const struct space_args *A = ctx;
	muh_session *ss;
	int ex = evalcli_session("space", path, &eo->so, &ss);
	if (ex)
		return ex;
	const muh_spec *s = session_spec(ss);
	const muh_hw *hwp = session_hw(ss);
	const muh_space *sp = session_space(ss);
	size_t inst = session_instance(ss);
	int rc = MUH_OK;
	if (eo->nth && !eo->json && !A->list)
		printf("\n");
	if (A->list && (rc = space_text_list(&cli_out, sp)) == MUH_EENV)
		fprintf(stderr, "muh space: this space is too large to list\n");
	else if (!A->list && eo->json)
		space_text_json(&cli_out, s, hwp, sp, inst);
	else if (!A->list)
		space_text(&cli_out, s, hwp, sp, inst, A->prune);
	session_close(ss);
	return cli_exit(rc);
}

static int run(int argc, char **argv)
{
	static const struct option opts[] = {
		EVALCLI_OPTIONS,
		{"prune-only", no_argument, NULL, 'p'},
		{"list", no_argument, NULL, 'l'},
		{NULL, 0, NULL, 0},
	};
	struct evalcli_opts eo = {.problem = "0"};
	struct space_args A = {0};
	int c, ex;
	optind = 1;
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		if (c == 'p')
			A.prune = 1;
		else if (c == 'l')
			A.list = 1;
		else if (c == 'J')
			return cli_usage_error("space", "--jobs: muh space builds nothing");
		else if ((ex = evalcli_option("space", c, optarg, argv, opts, &eo)))
			return ex;
	}
	interrupted = 0;
	void (*old)(int) = signal(SIGINT, on_sigint);
	evalcli_space_progress("space", &interrupted);
	ex = evalcli_each_problem("space", argc, argv, &eo, space_one, &A);
	evalcli_space_progress(NULL, NULL);
	signal(SIGINT, old);
	return interrupted ? EXIT_INTERRUPTED : ex;
}

MUH_COMMAND(space, 30, "a spec's exact space: cartesian, valid, what each constraint prunes");
