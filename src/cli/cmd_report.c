/*
 * cmd_report.c — `muh report DB`: what a store holds, as tables and plots.
 *
 * Parse and print over runreport.h, which reads the store (its API only),
 * ranks every run, and writes the plots, the JSON and the tables
 * (runreport_text).
 */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "muh/runreport.h"

static const char help[] =
	"usage: muh report DB [--svg DIR] [--json]\n"
	"\n"
	"Prints what a store holds: one row per run (spec, problem instance, backend,\n"
	"profile) with the number of variants measured, how many were ok and how many\n"
	"failed, the best time and its variant, the defaults' time and the speedup,\n"
	"and the noise: the defaults timed twice, back to back, before the search (a\n"
	"search's speedup inside it is a tie); then the status counts. Each column is\n"
	"as wide as its widest value, two spaces apart, numbers aligned on the right\n"
	"(engine runs' tok/s too); every time has 4 significant digits.\n"
	"\n"
	"A run whose variants built the same artifact (twins: a param that reaches\n"
	"nothing) gets a line with how far apart that same code was timed over the\n"
	"whole run: the spread between identical builds, drift included, which the\n"
	"noise, two timings seconds apart, does not see; variants timed once each\n"
	"and closer than it may differ by the machine, not the params.\n"
	"\n"
	"A run with variants whose timing ended (at measure.max_samples or max_time,\n"
	"or after muh eval --interleave's fixed rounds) while the median's 95% CI was\n"
	"still wider than measure.ci gets a line with how many: their ranks are not\n"
	"sure (muh tune marks them '!'), and a replay of the run (muh tune --replay,\n"
	"the search benchmark) ranks by those medians. --json gives the count as\n"
	"wide_ci, beside measure_ci.\n"
	"\n"
	"A run whose spec has an objective other than time (objective: {maximize:\n"
	"output_tokens_per_s, subject_to: [...]}, engine specs) is ranked by it: best\n"
	"and default show that metric, the best meets the SLOs, and a line under the\n"
	"table names the objective and the best that ignores the SLOs when it differs.\n"
	"\n"
	"A run that muh tune re-timed at sustained clocks (measure.retime_top) gets a\n"
	"table of both regimes: each re-timed variant's burst and sustained time and\n"
	"the SM clock of each. The best is the fastest re-timed variant, timed\n"
	"interleaved, whether the clock fell or held (marked '*' in the table; its\n"
	"best and default columns stay the search's times, so that the speedup\n"
	"compares like with like). muh patch\n"
	"--from and --emit write the same best (src/session/best.c ranks for both).\n"
	"\n"
	"A run with a decision stage (muh tune re-measured the baseline, what ships\n"
	"or the defaults, and the top finalists afresh in paired, alternating rounds)\n"
	"gets its table under the row: the baseline's and each finalist's repeats,\n"
	"how many were ok and met every SLO (SLOs 3/4; '-' when the objective has\n"
	"none), the median of its metric over its own repeats, and\n"
	"its paired gain: the geometric mean of its per-round ratios to the baseline,\n"
	"with the interval at the stage's level. A finalist whose verdict is final\n"
	"(a repeat failed or missed an SLO) is not measured again, so its median may\n"
	"rest on fewer repeats than the baseline's. The run's best is then the\n"
	"stage's proven winner, or, with no proven gain, what stays (what ships, or\n"
	"the defaults), and its speedup column says 'unproven'.\n"
	"\n"
	"options:\n"
	"  --svg DIR   also write, per run, DIR/run<ID>-best-so-far.svg (best time\n"
	"              against the number of evaluations, in measurement order) and\n"
	"              DIR/run<ID>-times.svg (the distribution of ok times)\n"
	"  --json      print the same as JSON: {runs: [...], status: {...}}\n"
	"\n"
	"examples:\n"
	"  muh report muh.db\n"
	"  muh report muh.db --svg plots/\n";

static int run(int argc, char **argv)
{
	int json = 0, first;
	const char *svgdir = NULL;
	const struct cli_opt opts[] = {
		CLI_OPT("svg", CLI_STR, &svgdir, .expected = "a directory"),
		CLI_OPT("json", CLI_FLAG, &json),
		CLI_END,
	};
	int ex = cli_parse_opts("report", argc, argv, opts, NULL, NULL, &first);
	if (ex)
		return ex;
	if (first != argc - 1)
		return cli_usage_error("report", "expected one store (DB)");
	const char *path = argv[first];
	struct stat st;
	if (stat(path, &st)) {
		fprintf(stderr, "%s: error: no such store\n", path);
		return EXIT_USAGE;
	}
	muh_diag d;
	diag_clear(&d);
	runreport cx;
	int rc = runreport_read(path, &cx, &d);
	if (!rc && json) {
		char *t = runreport_json(&cx);
		if (t)
			puts(t);
		free(t);
	} else if (!rc) {
		runreport_text(&cli_out, &cx);
	}
	for (size_t i = 0; i < cx.n && !rc && svgdir; i++) {
		rc = runreport_write_svgs(svgdir, &cx.runs[i], &d);
		size_t dl = strlen(svgdir);
		const char *sep = dl && svgdir[dl - 1] == '/' ? "" : "/"; /* plots/ as given: no plots//run1 */
		if (!rc)
			fprintf(json ? stderr : stdout, "wrote %s%srun%lld-best-so-far.svg and %s%srun%lld-times.svg\n",
				svgdir, sep, (long long)cx.runs[i].r.id, svgdir, sep, (long long)cx.runs[i].r.id);
	}
	runreport_free(&cx);
	if (rc)
		return cli_fail("report", rc, &d);
	return EXIT_OK;
}

MUH_COMMAND(report, 50, "tables and plots of a store: best per run, status counts, noise");
