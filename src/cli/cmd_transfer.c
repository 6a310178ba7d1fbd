/*
 * cmd_transfer.c — `muh transfer STORE --hw PROFILE`: a store's results,
 * measured on one device, read for another (library: src/search/transfer.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "muh/hw.h"
#include "muh/transfer.h"

static const char help[] =
	"usage: muh transfer STORE --hw PROFILE [--top K|all] [--run ID] [--json]\n"
	"\n"
	"Reads the results of a store, measured on one device, for another: for each\n"
	"run's top K (its fastest ok variants, as measured) it says whether the config\n"
	"is valid on the target profile and, when not, which limit it breaks, with the\n"
	"numbers:\n"
	"  - the run's spec constraints with the target's hw.* values\n"
	"    (hw.smem_per_block_optin, hw.warp_size, ...);\n"
	"  - the shared memory its kernel used where it was measured (Triton\n"
	"    fingerprint), against the target's hw.smem_per_block_optin;\n"
	"  - threads per block, num_warps x the target's hw.warp_size, against its\n"
	"    hw.max_threads_per_block.\n"
	"A check the target's profile cannot answer (an unknown value) is listed as\n"
	"not checked, never passed silently. The valid configs are ranked by their\n"
	"measured time; every time was measured on the run's device, not the target,\n"
	"and the report says so: it is an order to try on the target, not a result.\n"
	"\n"
	"options:\n"
	"  --hw PROFILE   the target: a built-in profile (muh hw --list), a YAML file\n"
	"  --top K        configs per run (default 10; all: every ok variant)\n"
	"  --run ID       only this run of the store\n"
	"  --json         {target, target_device, runs: [{run, spec, problem,\n"
	"                 measured_on, other_device, ok, checked, valid, entries:\n"
	"                 [{key, time_s, measured_on, source_rank, verdict,\n"
	"                 target_rank, why, notes, shared_bytes}]}]}\n"
	"\n"
	"exit: 0 report printed, 2 bad input, 3 not a store\n"
	"\n"
	"examples:\n"
	"  muh transfer docs/results/h200/sweep/moe-sweep.db --hw bi-v100 --run 1\n"
	"  muh transfer muh.db --hw mycard.yaml --top all --json\n";

static int run(int argc, char **argv)
{
	const char *hwref = NULL, *top = "10";
	uint64_t topk = 10, only = 0;
	int json = 0, first;
	const struct cli_opt opts[] = {
		CLI_OPT("hw", CLI_STR, &hwref),
		CLI_OPT("top", CLI_STR, &top),
		CLI_OPT("run", CLI_UINT, &only, .lo = 1, .hi = INT64_MAX, .expected = "a run id"),
		CLI_OPT("json", CLI_FLAG, &json),
		CLI_END,
	};
	int ex = cli_parse_opts("transfer", argc, argv, opts, NULL, NULL, &first);
	if (ex)
		return ex;
	if (!strcmp(top, "all"))
		topk = 0;
	else if (cli_parse_u64(top, &topk) || !topk)
		return cli_usage_error("transfer", "--top needs a positive number or all, not '%s'", top);
	if (first != argc - 1)
		return cli_usage_error("transfer", "expected one STORE");
	if (!hwref)
		return cli_usage_error("transfer", "--hw PROFILE names the target (muh hw --list)");
	const char *db = argv[first];
	muh_diag d;
	diag_clear(&d);
	muh_hw *hw = malloc(sizeof(*hw));
	if (!hw)
		return cli_fail("transfer", MUH_ENOMEM, NULL);
	int rc = hw_resolve(hwref, hw, &d);
	if (rc) {
		free(hw);
		return cli_fail("transfer", rc, &d);
	}
	transfer_report *r;
	rc = transfer_build(db, hw, (size_t)topk, (int64_t)only, &r, &d);
	free(hw);
	if (rc)
		return cli_fail("transfer", rc, &d);
	if (json) {
		char *s = transfer_to_json(r);
		if (!s) {
			transfer_free(r);
			return cli_fail("transfer", MUH_ENOMEM, NULL);
		}
		puts(s);
		free(s);
	} else {
		transfer_text(&cli_out, db, r);
	}
	transfer_free(r);
	return EXIT_OK;
}

MUH_COMMAND(transfer, 55, "a store's results from one device, checked for another profile");
