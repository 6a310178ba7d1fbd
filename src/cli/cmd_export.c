/*
 * cmd_export.c — `muh export DB`: the store's measurements as CSV, JSON or
 * T4 (the results schema shared by Kernel Tuner, KTT and BAT).
 */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "muh/store.h"

static const char help[] =
	"usage: muh export DB [--format csv|json|t4] [--run ID] [-o FILE]\n"
	"\n"
	"Writes the measurements in the store DB (muh eval/tune --db) to stdout or\n"
	"FILE.\n"
	"\n"
	"  csv   one row per measurement: run, spec, instance, key, one column per\n"
	"        param, status, median/min/MAD/CI in seconds, samples, fingerprint,\n"
	"        errors, sensors, error text\n"
	"  json  {tool, runs: [...], measurements: [{run, spec, key, configuration,\n"
	"        measurement: {status, samples, median, ..., fingerprint}}]}\n"
	"  t4    the T4 results schema 1.0.0 (Kernel Tuner's schema/T4/1.0.0/\n"
	"        results-schema.json): {schema_version, metadata, results:\n"
	"        [{timestamp, configuration, times{compilation_time, runtimes, ...},\n"
	"        invalidity, correctness, measurements[{name, value, unit}],\n"
	"        objectives}]}; times in milliseconds (docs/store.md)\n"
	"\n"
	"options:\n"
	"  --format F  csv (default), json or t4\n"
	"  --run ID    only run ID (see the runs in --format json)\n"
	"  -o FILE     write to FILE instead of stdout\n";

/* store_foreach_run's callback: stops (1) at the run whose id is *ud. */
static int is_run(void *ud, const store_run *r)
{
	return r->id == *(const long long *)ud;
}

static int run(int argc, char **argv)
{
	static const struct option opts[] = {
		{"format", required_argument, NULL, 'f'},
		{"run", required_argument, NULL, 'r'},
		{"output", required_argument, NULL, 'o'},
		{NULL, 0, NULL, 0},
	};
	enum store_format fmt = STORE_CSV;
	long long runid = 0;
	const char *outpath = NULL;
	int c;
	optind = 1;
	while ((c = getopt_long(argc, argv, "o:", opts, NULL)) != -1) {
		switch (c) {
		case 'f':
			if (!strcmp(optarg, "csv"))
				fmt = STORE_CSV;
			else if (!strcmp(optarg, "json"))
				fmt = STORE_JSON;
			else if (!strcmp(optarg, "t4"))
				fmt = STORE_T4;
			else
				return cli_usage_error("export", "--format is csv, json or t4, not '%s'", optarg);
			break;
		case 'r': {
			uint64_t v;
			if (cli_parse_u64(optarg, &v) || v < 1 || v > INT64_MAX)
				return cli_usage_error("export", "--run needs a run id");
			runid = (long long)v;
			break;
		}
		case 'o':
			outpath = optarg;
			break;
		default:
			return cli_bad_option("export", argv, opts);
		}
	}
	if (optind != argc - 1)
		return cli_usage_error("export", "expected one DB file");
	if (access(argv[optind], R_OK) != 0) {
		fprintf(stderr, "muh export: cannot read %s\n", argv[optind]);
		return EXIT_USAGE;
	}
	muh_diag d;
	diag_clear(&d);
	muh_store *st;
	int rc = store_open_ro(argv[optind], &st, &d);
	if (rc) {
		fprintf(stderr, "muh export: %s\n", d.msg);
		return cli_exit(rc);
	}
	if (runid && store_foreach_run(st, is_run, &runid) != 1) {
		fprintf(stderr, "muh export: %s has no run %lld (see the runs in --format json)\n", argv[optind],
			runid);
		store_close(st);
		return EXIT_USAGE;
	}
	FILE *f = outpath ? fopen(outpath, "w") : stdout;
	if (!f) {
		fprintf(stderr, "muh export: cannot write %s\n", outpath);
		store_close(st);
		return EXIT_ENV;
	}
	rc = store_export(st, f, fmt, runid, &d);
	if (outpath && fclose(f) != 0 && !rc)
		rc = MUH_EENV;
	store_close(st);
	if (rc) {
		fprintf(stderr, "muh export: %s\n", d.msg[0] ? d.msg : "write failed");
		return cli_exit(rc);
	}
	return EXIT_OK;
}

MUH_COMMAND(export, 75, "the store's measurements as CSV, JSON or T4");
