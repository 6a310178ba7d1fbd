/*
 * cmd_hw.c — `muh hw`: the hardware profile of this device, or a named one.
 */
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static const char help[] =
	"usage: muh hw [--json] [--device N]\n"
	"       muh hw --profile NAME|FILE [--json]\n"
	"       muh hw --list\n"
	"\n"
	"Prints a hardware profile: the limits and rates constraints read as hw.<key>\n"
	"(hw.smem_per_block, hw.regs_per_sm, ...). Each value says where it came from:\n"
	"  measured   read from the device through the CUDA driver API, now\n"
	"  declared   written down (a built-in table or a YAML file): an assumption\n"
	"\n"
	"Without --profile, muh measures CUDA device N (default 0). libcuda is loaded at\n"
	"run time; with no driver or no device muh says so and exits 3.\n"
	"\n"
	"options:\n"
	"  --device N        which CUDA device to measure (default 0)\n"
	"  --profile REF     a built-in profile (see --list) or a YAML file\n"
	"  --list            list the built-in profiles\n"
	"  --json            print JSON: {name, source, device, fields: [{key, value,\n"
	"                    origin, source, date, note}], unknown: [{key, note}]}\n"
	"\n"
	"A value a profile does not have is unknown: never a guess. Declared values\n"
	"say where they come from (source) and when (date); notes are printed whole.\n"
	"\n"
	"A profile file is YAML: `name: mycard`, `device: \"Vendor Card\"` (the name the\n"
	"device reports to engines), then `key: value`, `key: unknown` or\n"
	"`key: {value: V|unknown, origin: measured|declared, source: \"...\", date: \"...\",\n"
	"note: \"...\"}` per key.\n"
	"\n"
	"examples:\n"
	"  muh hw                          measure this machine's GPU\n"
	"  muh hw --profile bi-v100        the declared BI-V100 profile (32 KiB smem/block,\n"
	"                                  warp size 64, launch figures, sources)\n"
	"  muh space spec.yaml --hw bi-v100   what that profile prunes\n";

static int run(int argc, char **argv)
{
	int json = 0, list = 0, first;
	uint64_t dev = 0;
	const char *profile = NULL;
	const struct cli_opt opts[] = {
		CLI_OPT("json", CLI_FLAG, &json),
		CLI_OPT("profile", CLI_STR, &profile),
		CLI_OPT("list", CLI_FLAG, &list),
		CLI_OPT("device", CLI_UINT, &dev, .hi = 1024, .expected = "a device number (0 to 1024)"),
		CLI_END,
	};
	int rc = cli_parse_opts("hw", argc, argv, opts, NULL, NULL, &first);
	if (rc)
		return rc;
	if (first < argc)
		return cli_usage_error("hw", "unexpected argument '%s'", argv[first]);
	if (list) {
		hw_text_list(&cli_out, json);
		return EXIT_OK;
	}
	muh_hw hw;
	muh_diag d;
	diag_clear(&d);
	rc = profile ? hw_resolve(profile, &hw, &d) : hw_query_device((int)dev, &hw, &d);
	if (rc == MUH_EENV) {
		cli_fail("hw", rc, &d);
		fprintf(stderr, "(use `muh hw --profile NAME` for a declared profile; `muh hw --list`)\n");
		return EXIT_ENV;
	}
	if (rc) /* a name on the command line is said as the command's */
		return cli_fail("hw", rc, &d);
	hw_text_profile(&cli_out, &hw, json);
	return EXIT_OK;
}

MUH_COMMAND(hw, 20, "the device's limits, measured (or a named, declared profile)");
