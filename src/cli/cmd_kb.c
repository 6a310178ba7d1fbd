/*
 * cmd_kb.c — `muh kb cccl`: CUB's tuning policies from the installed CCCL
 * headers, as a table, as JSON, or as seeds for a spec (src/search/kb_cccl.c does
 * the work, src/search/kb_text.c renders it; this file parses options and
 * prints).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "muh/kb.h"

static const char help[] =
	"usage: muh kb cccl [PATH] [--algorithm NAME] [--arch CC] [--json]\n"
	"       muh kb cccl [PATH] --spec SPEC [--arch CC] [--json]\n"
	"\n"
	"Reads CUB's tuning policies from the CCCL headers (cub/device/dispatch/tuning/\n"
	"tuning_*.cuh) and prints, per algorithm and SM architecture: threads per block,\n"
	"items per thread, vector load length, and the load/store/block algorithm and\n"
	"cache load modifier enums. Values CUB computes at compile time show as '-'.\n"
	"\n"
	"PATH is a tuning directory, a cub or include directory, a toolkit root, or one\n"
	"header. Without PATH: $CUDA_HOME, $CUDA_PATH, /usr/local/cuda, /usr/include\n"
	"(directly and under include/cccl). No headers: exit 3. Headers with no policy\n"
	"recognised: exit 1.\n"
	"\n"
	"With --spec, turns the policies of the spec's\n"
	"`kb: {cccl: ALGORITHM, map: {PARAM: FIELD}}` into seed configurations\n"
	"(docs/kb.md), printed as a `seeds:` block to paste into the spec; policies\n"
	"that apply on the target architecture come first.\n"
	"\n"
	"options:\n"
	"  --algorithm NAME  only this algorithm (reduce, scan, radix_sort, ...)\n"
	"  --arch CC         architecture as major*10+minor (90 = sm_90): only the\n"
	"                    policies CUB dispatches there (the ChainedPolicy pick, and\n"
	"                    the smNN_tuning specializations of the greatest NN <= CC);\n"
	"                    with --spec, default: the spec's hardware profile's cc\n"
	"  --spec SPEC       print seeds for SPEC\n"
	"  --json            JSON: {dir, files, policies: [...]} or\n"
	"                    {spec, cc, seeds: [...]}\n"
	"\n"
	"examples:\n"
	"  muh kb cccl --algorithm reduce --arch 90\n"
	"  muh kb cccl --spec specs/cuda_reduce.yaml\n";

static int list(const kb_cccl *kb, const char *alg, int cc, int json)
{
	if (kb_text_list(&cli_out, kb, alg, cc, json) == 0) {
		fprintf(stderr, "muh kb cccl: no policy%s%s%s\n", alg ? " of algorithm " : "", alg ? alg : "",
			cc ? " for that architecture" : "");
		return EXIT_FINDING;
	}
	return EXIT_OK;
}

static int seeds(const kb_cccl *kb, const char *spec_path, int cc, int json)
{
	muh_diag d;
	diag_clear(&d);
	muh_spec *s = NULL;
	int rc = spec_load(spec_path, &s, &d);
	if (rc)
		return cli_fail("kb cccl", rc, &d);
	if (!cc && s->hw_ref) {
		muh_hw hw;
		double v;
		if (hw_resolve(s->hw_ref, &hw, &d) == MUH_OK && hw_get(&hw, "cc", &v) == 1)
			cc = (int)v;
	}
	if (!cc) {
		spec_free(s);
		return cli_usage_error("kb", "the spec names no hardware profile with a cc; give --arch");
	}
	kb_seed *v = NULL;
	size_t n = 0;
	diag_clear(&d);
	rc = kb_cccl_seeds(kb, s, cc, &v, &n, &d);
	if (rc) {
		spec_free(s);
		return cli_fail("kb cccl", rc, &d);
	}
	size_t good = kb_text_seeds(&cli_out, kb, s, spec_path, cc, v, n, json);
	kb_seeds_free(v, n);
	spec_free(s);
	if (good == 0) {
		fprintf(stderr, "muh kb cccl: no policy maps onto the spec's values\n");
		return EXIT_FINDING;
	}
	return EXIT_OK;
}

static int run(int argc, char **argv)
{
	int json = 0, first;
	uint64_t cc = 0;
	const char *alg = NULL, *spec = NULL;
	const struct cli_opt opts[] = {
		CLI_OPT("json", CLI_FLAG, &json),
		CLI_OPT("algorithm", CLI_STR, &alg),
		CLI_OPT("arch", CLI_UINT, &cc, .lo = 1, .hi = 10000, .expected = "a compute capability such as 90"),
		CLI_OPT("spec", CLI_STR, &spec),
		CLI_END,
	};
	int prc = cli_parse_opts("kb", argc, argv, opts, NULL, NULL, &first);
	if (prc)
		return prc;
	if (first >= argc || strcmp(argv[first], "cccl") != 0)
		return cli_usage_error("kb", "expected a source: cccl");
	first++;
	if (argc - first > 1)
		return cli_usage_error("kb", "expected at most one PATH");
	const char *path = first < argc ? argv[first] : NULL;
	muh_diag d;
	diag_clear(&d);
	char dir[1024];
	const char *read_path = path;
	if (!path || strstr(path, ".cuh") == NULL) {
		int rc = kb_cccl_find(path, dir, sizeof(dir), &d);
		if (rc)
			return cli_fail("kb cccl", rc, &d);
		read_path = dir;
	}
	kb_cccl kb;
	memset(&kb, 0, sizeof(kb));
	int rc = kb_cccl_read(read_path, &kb, &d);
	if (rc) {
		kb_cccl_free(&kb);
		return cli_fail("kb cccl", rc, &d);
	}
	if (kb.n == 0) {
		fprintf(stderr, "muh kb cccl: no tuning policy recognised in %s (%d headers read)\n", read_path,
			kb.nfiles);
		kb_cccl_free(&kb);
		return EXIT_FINDING;
	}
	if (alg && !spec) {
		/* an algorithm no header has is a usage error, not an empty finding */
		size_t i;
		for (i = 0; i < kb.n && strcmp(kb.v[i].algorithm, alg); i++)
			;
		if (i == kb.n) {
			char known[512] = "", hint[96];
			size_t n = 0;
			diag_near near = DIAG_NEAR_INIT;
			for (size_t j = 0; j < kb.n; j++)
				diag_near_offer(&near, alg, strlen(alg), kb.v[j].algorithm);
			for (size_t j = 0; j < kb.n && n < sizeof(known); j++) {
				size_t k;
				for (k = 0; k < j && strcmp(kb.v[k].algorithm, kb.v[j].algorithm); k++)
					;
				if (k == j)
					n += (size_t)snprintf(known + n, sizeof(known) - n, "%s%s", n ? ", " : "",
							      kb.v[j].algorithm);
			}
			fprintf(stderr, "muh kb cccl: --algorithm %s: no such algorithm in %s%s; known: %s\n",
				alg, read_path, diag_near_hint(near.name, hint, sizeof(hint)), known);
			kb_cccl_free(&kb);
			return EXIT_USAGE;
		}
	}
	int ex = spec ? seeds(&kb, spec, (int)cc, json) : list(&kb, alg, (int)cc, json);
	kb_cccl_free(&kb);
	return ex;
}

MUH_COMMAND(kb, 65, "prior knowledge: CUB tuning policies from CCCL's headers, as seeds");
