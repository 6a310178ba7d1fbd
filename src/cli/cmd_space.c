/*
 * cmd_space.c — `muh space`: the exact size of a spec's space, and what each
 * constraint prunes.
 */
#include <cjson/cJSON.h>
#include <getopt.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "evalcli.h"

static const char help[] =
	"usage: muh space SPEC [--prune-only | --list] [--hw PROFILE] [--problem WHICH] [--json]\n"
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

static void print_json(const muh_spec *s, const muh_hw *hw, const muh_space *sp, size_t inst)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "spec", s->path);
	cJSON_AddStringToObject(o, "format", spec_format_name(s->format));
	cJSON_AddStringToObject(o, "profile", hw ? hw->name : "");
	cJSON_AddNumberToObject(o, "problem_instance", (double)inst);
	cJSON_AddNumberToObject(o, "params", (double)space_nparams(sp));
	cJSON_AddNumberToObject(o, "groups", (double)space_ngroups(sp));
	cJSON_AddNumberToObject(o, "cartesian", space_cartesian(sp));
	cJSON_AddNumberToObject(o, "valid", (double)space_valid(sp));
	cJSON_AddNumberToObject(o, "seconds", space_seconds(sp));
	cJSON *arr = cJSON_AddArrayToObject(o, "constraints");
	for (size_t c = 0; c < space_nconstraints(sp); c++) {
		cJSON *e = cJSON_CreateObject();
		cJSON_AddStringToObject(e, "expr", s->constraints[c].src);
		cJSON_AddNumberToObject(e, "rejected", space_rejected(sp, c));
		cJSON_AddItemToArray(arr, e);
	}
	cJSON *ord = cJSON_AddArrayToObject(o, "check_order");
	for (size_t k = 0; k < space_nconstraints(sp); k++)
		cJSON_AddItemToArray(ord, cJSON_CreateNumber((double)space_check_order(sp, k)));
	char *txt = cJSON_Print(o);
	if (txt)
		puts(txt);
	free(txt);
	cJSON_Delete(o);
}

/* Shortens an expression for a table cell. */
static const char *cell(char *buf, size_t n, const char *src, size_t width)
{
	size_t len = strlen(src);
	if (len <= width)
		snprintf(buf, n, "%s", src);
	else
		snprintf(buf, n, "%.*s...", (int)(width - 3), src);
	return buf;
}

static void print_text(const muh_spec *s, const muh_hw *hw, const muh_space *sp, size_t inst,
		       int prune_only)
{
	char a[64], b[64], t[64], e[128];
	double cart = space_cartesian(sp);
	double valid = (double)space_valid(sp);
	text_time(t, sizeof(t), space_seconds(sp));
	size_t w = 16;
	for (size_t c = 0; c < space_nconstraints(sp); c++)
		if (strlen(s->constraints[c].src) > w)
			w = strlen(s->constraints[c].src);
	if (w > 56)
		w = 56;
	if (w < strlen("constraint (check order)")) /* the header is the widest cell */
		w = strlen("constraint (check order)");
	if (!prune_only) {
		printf("spec        %s (%s)\n", s->path, spec_format_name(s->format));
		if (hw)
			printf("profile     %s (%s)\n", hw->name, hw->source);
		if (spec_ninstances(s) > 1) {
			printf("problem     instance %zu of %zu:", inst, spec_ninstances(s));
			for (size_t k = 0; k < s->nproblem; k++) {
				char v[64];
				value_fmt(v, sizeof(v), spec_problem_value(s, k, inst));
				printf(" %s=%s", s->problem[k].name, v);
			}
			printf("\n");
		}
		printf("params      %zu in %zu independent group(s)\n", space_nparams(sp),
		       space_ngroups(sp));
		printf("cartesian   %s\n", text_count(a, sizeof(a), cart));
		printf("valid       %s (%.4g%%)\n", text_count(b, sizeof(b), valid),
		       cart > 0 ? 100.0 * valid / cart : 0.0);
		printf("time        %s\n", t);
		if (space_nconstraints(sp) == 0) {
			printf("\nno constraints: every combination is valid\n");
			return;
		}
		printf("\n%-*s  %20s  %7s\n", (int)w, "constraint (spec order)", "rejected", "share");
		for (size_t c = 0; c < space_nconstraints(sp); c++) {
			double r = space_rejected(sp, c);
			printf("%-*s  %20s  %6.2f%%\n", (int)w,
			       cell(e, sizeof(e), s->constraints[c].src, w), text_count(a, sizeof(a), r),
			       cart > 0 ? 100.0 * r / cart : 0.0);
		}
		printf("\n(each rejected configuration is charged to the first constraint that "
		       "fails, in check order; see `muh help space`)\n");
		return;
	}
	printf("%-*s  %20s  %20s\n", (int)w, "constraint (check order)", "before", "after");
	double left = cart;
	for (size_t k = 0; k < space_nconstraints(sp); k++) {
		size_t c = space_check_order(sp, k);
		double after = left - space_rejected(sp, c);
		printf("%-*s  %20s  %20s\n", (int)w, cell(e, sizeof(e), s->constraints[c].src, w),
		       text_count(a, sizeof(a), left), text_count(b, sizeof(b), after));
		left = after;
	}
	printf("%-*s  %20s  %20s   (%s)\n", (int)w, "valid", "", text_count(a, sizeof(a), valid), t);
}

/* Prints every valid configuration's key, in index order. */
static int print_list(const muh_space *sp)
{
	uint32_t *cfg = malloc((space_nparams(sp) + 1) * sizeof(uint32_t));
	char key[4096];
	if (!cfg)
		return MUH_ENOMEM;
	for (uint64_t i = 0; i < space_valid(sp); i++) {
		if (space_config_at(sp, i, cfg)) {
			free(cfg);
			fprintf(stderr, "muh space: this space is too large to list\n");
			return MUH_EENV;
		}
		space_key(sp, cfg, key, sizeof(key));
		puts(key);
	}
	free(cfg);
	return MUH_OK;
}

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
	if (A->list)
		rc = print_list(sp);
	else if (eo->json)
		print_json(s, hwp, sp, inst);
	else
		print_text(s, hwp, sp, inst, A->prune);
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

MUH_COMMAND(space, 30, "the exact space of a spec: cartesian, valid, what each constraint prunes");
