/*
 * cmd_export.c — `muh export DB`: the store's measurements as CSV, JSON or
 * T4 (the results schema shared by Kernel Tuner, KTT and BAT).
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "muh/best.h"
#include "muh/store.h"

static const char help[] =
	"usage: muh export DB [--format csv|json|t4] [--run ID] [-o FILE]\n"
	"\n"
	"Writes the measurements in the store DB (muh eval/tune --db) to stdout or\n"
	"FILE.\n"
	"\n"
	"  csv   one row per measurement: run, spec, instance, key, one column per\n"
	"        param, status, best (1 on the run's best: the variant report names\n"
	"        and patch writes), median/min/MAD/CI in seconds, samples,\n"
	"        fingerprint, errors, sensors, metrics, error text\n"
	"  json  {tool, runs: [{..., best: KEY}], measurements: [{run, spec, key,\n"
	"        configuration, measurement: {status, samples, median, ...,\n"
	"        fingerprint}, best}]}\n"
	"  t4    the T4 results schema 1.0.0 (Kernel Tuner's schema/T4/1.0.0/\n"
	"        results-schema.json): {schema_version, metadata, results:\n"
	"        [{timestamp, configuration, times{compilation_time, runtimes, ...},\n"
	"        invalidity, correctness, measurements[{name, value, unit}],\n"
	"        objectives}]}; times in milliseconds (docs/store.md)\n"
	"\n"
	"options:\n"
	"  --format F  csv (default), json or t4\n"
	"  --json      the same as --format json (as every command that prints results)\n"
	"  --run ID    only run ID (see the runs in --format json)\n"
	"  -o FILE     write to FILE instead of stdout\n";

static int run(int argc, char **argv)
{
	enum store_format fmt = STORE_CSV;
	const char *format = "csv", *outpath = NULL;
	uint64_t runid = 0;
	int first, json = 0;
	const struct cli_opt opts[] = {
		CLI_OPT("format", CLI_STR, &format),
		CLI_OPT("json", CLI_FLAG, &json),
		CLI_OPT("run", CLI_UINT, &runid, .lo = 1, .hi = INT64_MAX, .expected = "a run id"),
		CLI_OPT("output", CLI_STR, &outpath, .short_name = 'o'),
		CLI_END,
	};
	int ex = cli_parse_opts("export", argc, argv, opts, NULL, NULL, &first);
	if (ex)
		return ex;
	if (json && strcmp(format, "csv") && strcmp(format, "json"))
		return cli_usage_error("export", "--json is --format json; not with --format %s", format);
	if (json)
		format = "json";
	if (!strcmp(format, "csv"))
		fmt = STORE_CSV;
	else if (!strcmp(format, "json"))
		fmt = STORE_JSON;
	else if (!strcmp(format, "t4"))
		fmt = STORE_T4;
	else
		return cli_usage_error("export", "--format is csv, json or t4, not '%s'", format);
	if (first != argc - 1)
		return cli_usage_error("export", "expected one DB file");
	if (access(argv[first], R_OK) != 0) {
		fprintf(stderr, "muh export: cannot read %s\n", argv[first]);
		return EXIT_USAGE;
	}
	muh_diag d;
	diag_clear(&d);
	muh_store *st;
	int rc = store_open_ro(argv[first], &st, &d);
	if (rc)
		return cli_fail("export", rc, &d);
	int wr = runid ? store_with_run(st, (int64_t)runid, NULL, NULL) : MUH_OK;
	if (wr) {
		if (wr == MUH_EINPUT)
			fprintf(stderr, "muh export: %s has no run %llu (see the runs in --format json)\n", argv[first],
				(unsigned long long)runid);
		else
			fprintf(stderr, "muh export: %s: the store's runs cannot be read\n", argv[first]);
		store_close(st);
		return wr == MUH_EINPUT ? EXIT_USAGE : EXIT_ENV;
	}
	FILE *f = outpath ? fopen(outpath, "w") : stdout;
	if (!f) {
		fprintf(stderr, "muh export: cannot write %s\n", outpath);
		store_close(st);
		return EXIT_ENV;
	}
	/* each run's best as report and patch name it (best_marks) */
	store_mark *best = NULL;
	size_t nbest = 0;
	rc = best_marks(st, (int64_t)runid, &best, &nbest, &d);
	if (!rc)
		rc = store_export(st, f, fmt, (int64_t)runid, best, nbest, &d);
	best_marks_free(best, nbest);
	if (outpath && fclose(f) != 0 && !rc)
		rc = MUH_EENV;
	store_close(st);
	if (rc) {
		if (!diag_is_set(&d))
			diag_errorf(&d, "write failed");
		return cli_fail("export", rc, &d);
	}
	return EXIT_OK;
}

MUH_COMMAND(export, 75, "the store's measurements as CSV, JSON or T4");
