/*
 * cmd_hw.c — `muh hw`: the hardware profile of this device, or a named one.
 */
#include <cjson/cJSON.h>
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

static void print_value(char *buf, size_t n, double v)
{
	if (v == (double)(long long)v)
		text_count(buf, n, v);
	else
		snprintf(buf, n, "%.4g", v);
}

static int print_profile(const muh_hw *hw, int json)
{
	if (json) {
		cJSON *o = cJSON_CreateObject();
		cJSON_AddStringToObject(o, "name", hw->name);
		cJSON_AddStringToObject(o, "source", hw->source);
		if (hw->device[0])
			cJSON_AddStringToObject(o, "device", hw->device);
		cJSON *arr = cJSON_AddArrayToObject(o, "fields");
		cJSON *unk = cJSON_AddArrayToObject(o, "unknown");
		for (int i = 0; hw_keys[i]; i++) {
			const muh_hw_field *f = hw_field(hw, hw_keys[i]);
			if (!f) {
				const muh_hw_field *u = hw_unknown(hw, hw_keys[i]);
				cJSON *e = cJSON_CreateObject();
				cJSON_AddStringToObject(e, "key", hw_keys[i]);
				if (u && u->note[0])
					cJSON_AddStringToObject(e, "note", u->note);
				cJSON_AddItemToArray(unk, e);
				continue;
			}
			cJSON *e = cJSON_CreateObject();
			cJSON_AddStringToObject(e, "key", f->key);
			cJSON_AddNumberToObject(e, "value", f->value);
			cJSON_AddStringToObject(e, "origin",
						f->origin == HW_MEASURED ? "measured" : "declared");
			if (f->source[0])
				cJSON_AddStringToObject(e, "source", f->source);
			if (f->date[0])
				cJSON_AddStringToObject(e, "date", f->date);
			if (f->note[0])
				cJSON_AddStringToObject(e, "note", f->note);
			cJSON_AddItemToArray(arr, e);
		}
		char *s = cJSON_Print(o);
		if (s)
			puts(s);
		free(s);
		cJSON_Delete(o);
		return EXIT_OK;
	}
	printf("profile  %s\nsource   %s\n", hw->name, hw->source);
	if (hw->device[0])
		printf("device   %s\n", hw->device);
	printf("\n%-22s %16s  %-9s %s\n", "key", "value", "origin", "meaning");
	for (int i = 0; hw_keys[i]; i++) {
		const muh_hw_field *f = hw_field(hw, hw_keys[i]);
		const muh_hw_field *u = f ? NULL : hw_unknown(hw, hw_keys[i]);
		if (!f && !u)
			continue; /* unknown, and the profile says nothing of it: listed below */
		char v[48];
		if (f)
			print_value(v, sizeof(v), f->value);
		else
			snprintf(v, sizeof(v), "-");
		printf("%-22s %16s  %-9s %s\n", hw_keys[i], v,
		       !f ? "unknown" : f->origin == HW_MEASURED ? "measured" : "declared",
		       hw_key_doc(hw_keys[i]));
		if (f && f->source[0])
			printf("%-22s %16s  %-9s source: %s%s%s%s\n", "", "", "", f->source,
			       f->date[0] ? " (" : "", f->date, f->date[0] ? ")" : "");
		const char *note = f ? f->note : u->note;
		if (note[0])
			printf("%-22s %16s  %-9s note: %s\n", "", "", "", note);
	}
	int first = 1;
	for (int i = 0; hw_keys[i]; i++) {
		if (hw_field(hw, hw_keys[i]) || hw_unknown(hw, hw_keys[i]))
			continue;
		printf("%s%s", first ? "\nunknown  " : ", ", hw_keys[i]);
		first = 0;
	}
	if (!first)
		printf("\n");
	return EXIT_OK;
}

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
		muh_hw hw;
		if (json) {
			cJSON *arr = cJSON_CreateArray();
			for (int i = 0; hw_builtin_names[i]; i++)
				cJSON_AddItemToArray(arr, cJSON_CreateString(hw_builtin_names[i]));
			char *s = cJSON_Print(arr);
			puts(s ? s : "[]");
			free(s);
			cJSON_Delete(arr);
			return EXIT_OK;
		}
		printf("%-10s %s\n", "profile", "description");
		for (int i = 0; hw_builtin_names[i]; i++) {
			hw_builtin(hw_builtin_names[i], &hw, NULL);
			printf("%-10s %s\n", hw_builtin_names[i], hw.source + strlen("built-in: "));
		}
		return EXIT_OK;
	}
	muh_hw hw;
	muh_diag d;
	diag_clear(&d);
	rc = profile ? hw_resolve(profile, &hw, &d) : hw_query_device((int)dev, &hw, &d);
	if (rc == MUH_EENV) {
		fprintf(stderr, "muh hw: %s\n", d.msg);
		fprintf(stderr, "(use `muh hw --profile NAME` for a declared profile; `muh hw --list`)\n");
		return EXIT_ENV;
	}
	if (rc && !d.file[0] && d.msg[0]) { /* a name on the command line: said as the command's */
		fprintf(stderr, "muh hw: %s\n", d.msg);
		return cli_exit(rc);
	}
	if (rc)
		return cli_fail(rc, &d);
	return print_profile(&hw, json);
}

MUH_COMMAND(hw, 20, "the device's limits, measured (or a named, declared profile)");
