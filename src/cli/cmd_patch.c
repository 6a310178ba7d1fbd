/*
 * cmd_patch.c — `muh patch`: write knob values back into an engine tree.
 */
#include <cjson/cJSON.h>
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "muh/patch.h"
#include "muh/scan.h"

static const char help[] =
	"usage: muh patch TREE --set ID=VALUE [--set ID[ALT]=VALUE ...] [--scan SCAN.json]\n"
	"                 [--apply [--backup DIR]] [--force] [--out FILE] [--json]\n"
	"\n"
	"Writes knob values back into an engine tree, changing only the bytes of each\n"
	"knob's value: line endings (CRLF stays CRLF), encoding, indentation and\n"
	"comments are kept. Prints a unified diff that `git apply` accepts; --apply\n"
	"writes the files instead (each through a temporary file and a rename).\n"
	"\n"
	"IDs are the knob ids of `muh scan TREE --json`; they do not depend on line\n"
	"numbers, so they survive unrelated edits.\n"
	"\n"
	"Safety:\n"
	"  - a value the scan marks unsafe (it reaches a function that raises\n"
	"    NotImplementedError) is refused with the evidence; --force does not\n"
	"    override this;\n"
	"  - a dead knob (nothing reachable reads it) is refused with the evidence,\n"
	"    unless --force;\n"
	"  - with --scan, a file whose content changed since that scan is refused;\n"
	"  - a conditional knob (`128 if cap >= 80 else 64`) needs the alternative:\n"
	"    --set ID[0]=V changes the first, ID[1]=V the second.\n"
	"\n"
	"options:\n"
	"  --set ID=VALUE     the new value, as source text (64, True, 'ld')\n"
	"  --scan FILE        knobs from a saved `muh scan --json` instead of scanning\n"
	"                     now; files that changed since are refused (drift)\n"
	"  --apply            write the files in place; a second apply changes nothing\n"
	"  --backup DIR       where --apply copies the originals (default\n"
	"                     TREE/.muh-backup/<date-time>/)\n"
	"  --force            write dead knobs too (never unsafe values)\n"
	"  --out FILE         write the diff to FILE instead of stdout\n"
	"  --json             print {files_changed, written, diff} as JSON\n"
	"\n"
	"exit: 0 done (or nothing to change), 2 refused or bad input, 3 I/O error\n"
	"\n"
	"examples:\n"
	"  muh scan ~/vllm --json > scan.json\n"
	"  muh patch ~/vllm --scan scan.json --set k1a2b3c4d5e6f7a8b=64 > tune.diff\n"
	"  git -C ~/vllm apply tune.diff\n";

#define MAX_SETS 256

struct setarg {
	char id[32];
	int alt;
	const char *value;
};

/* Parses "ID=VALUE" or "ID[ALT]=VALUE". */
static int parse_set(const char *arg, struct setarg *s)
{
	const char *eq = strchr(arg, '=');
	if (!eq || eq == arg)
		return -1;
	const char *br = memchr(arg, '[', (size_t)(eq - arg));
	size_t idlen = (size_t)((br ? br : eq) - arg);
	if (idlen >= sizeof(s->id))
		return -1;
	memcpy(s->id, arg, idlen);
	s->id[idlen] = '\0';
	s->alt = -1;
	if (br) {
		char *end;
		long a = strtol(br + 1, &end, 10);
		if (end == br + 1 || *end != ']' || end + 1 != eq || a < 0)
			return -1;
		s->alt = (int)a;
	}
	s->value = eq + 1;
	return *s->value ? 0 : -1;
}

static int write_out(const char *path, const char *text, muh_diag *d)
{
	char tmp[4096];
	snprintf(tmp, sizeof(tmp), "%s.muh-tmp", path);
	FILE *f = fopen(tmp, "wb");
	if (!f || fputs(text, f) < 0 || fclose(f) || rename(tmp, path)) {
		diag_at(d, path, 0, 0, NULL);
		diag_errorf(d, "cannot write: %s", strerror(errno));
		unlink(tmp);
		return MUH_EENV;
	}
	return MUH_OK;
}

static int run(int argc, char **argv)
{
	static const struct option opts[] = {
		{"set", required_argument, NULL, 's'},	 {"scan", required_argument, NULL, 'S'},
		{"apply", no_argument, NULL, 'a'},	 {"backup", required_argument, NULL, 'b'},
		{"force", no_argument, NULL, 'f'},	 {"out", required_argument, NULL, 'o'},
		{"json", no_argument, NULL, 'j'},	 {NULL, 0, NULL, 0},
	};
	struct setarg sets[MAX_SETS];
	int nsets = 0, apply = 0, force = 0, json = 0, c;
	const char *scanfile = NULL, *out = NULL, *backup = NULL;
	optind = 1;
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 's':
			if (nsets == MAX_SETS)
				return cli_usage_error("patch", "more than %d --set", MAX_SETS);
			if (parse_set(optarg, &sets[nsets]))
				return cli_usage_error("patch", "--set needs ID=VALUE or ID[ALT]=VALUE, "
								"not '%s'",
						       optarg);
			nsets++;
			break;
		case 'S':
			scanfile = optarg;
			break;
		case 'a':
			apply = 1;
			break;
		case 'b':
			backup = optarg;
			break;
		case 'f':
			force = 1;
			break;
		case 'o':
			out = optarg;
			break;
		case 'j':
			json = 1;
			break;
		default:
			return cli_usage_error("patch", "unknown option");
		}
	}
	if (optind != argc - 1)
		return cli_usage_error("patch", "expected one engine TREE");
	if (!nsets)
		return cli_usage_error("patch", "nothing to do: give --set ID=VALUE (ids from `muh "
						"scan TREE --json`)");
	const char *tree = argv[optind];
	struct stat st;
	if (stat(tree, &st) || !S_ISDIR(st.st_mode)) {
		fprintf(stderr, "%s: error: not a directory (expected an engine tree)\n", tree);
		return EXIT_USAGE;
	}
	muh_diag d;
	diag_clear(&d);
	muh_surface *surf = NULL;
	patch_knobs *saved = NULL;
	int rc;
	if (scanfile)
		rc = patch_knobs_load(scanfile, &saved, &d);
	else
		rc = scan_tree(tree, NULL, &surf, &d);
	if (rc)
		return cli_fail(rc, &d);
	muh_patch *p = patch_plan_new(tree);
	if (!p)
		rc = MUH_ENOMEM;
	for (int i = 0; i < nsets && !rc; i++) {
		const muh_knob *k = saved ? patch_knobs_find(saved, sets[i].id)
					  : scan_find(surf, sets[i].id);
		if (!k) {
			diag_errorf(&d, "no knob '%s' in %s (ids come from `muh scan %s --json`)",
				    sets[i].id, scanfile ? scanfile : tree, tree);
			rc = MUH_EINPUT;
			break;
		}
		rc = patch_plan_set(p, k, sets[i].alt, sets[i].value, force, &d);
	}
	if (!rc)
		rc = patch_plan_build(p, &d);
	char *diff = NULL;
	int written = 0;
	char bdir[4096] = "";
	if (!rc) {
		diff = patch_diff(p);
		if (!diff)
			rc = MUH_ENOMEM;
	}
	if (!rc && apply && patch_nchanged(p)) {
		if (backup)
			snprintf(bdir, sizeof(bdir), "%s", backup);
		else {
			char stamp[32];
			time_t now = time(NULL);
			strftime(stamp, sizeof(stamp), "%Y%m%d-%H%M%S", gmtime(&now));
			snprintf(bdir, sizeof(bdir), "%s/.muh-backup/%s", tree, stamp);
		}
		rc = patch_apply(p, bdir, &written, &d);
	}
	if (!rc && out && !apply)
		rc = write_out(out, diff, &d);
	if (!rc) {
		if (json) {
			cJSON *o = cJSON_CreateObject();
			cJSON_AddNumberToObject(o, "files_changed", (double)patch_nchanged(p));
			cJSON_AddNumberToObject(o, "written", written);
			if (written)
				cJSON_AddStringToObject(o, "backup", bdir);
			cJSON_AddStringToObject(o, "diff", diff);
			char *t = cJSON_Print(o);
			if (t)
				puts(t);
			free(t);
			cJSON_Delete(o);
		} else if (apply) {
			if (written)
				printf("applied: %d file(s) written; originals in %s\n", written, bdir);
			else
				printf("nothing to change: the tree already has these values\n");
		} else if (!out) {
			fputs(diff, stdout);
		}
		if (!apply && !patch_nchanged(p) && !json)
			fprintf(stderr, "muh patch: nothing to change: the tree already has these "
					"values\n");
	}
	free(diff);
	patch_plan_free(p);
	scan_free(surf);
	patch_knobs_free(saved);
	if (rc)
		return cli_fail(rc, &d);
	return EXIT_OK;
}

const struct muh_command muh_cmd_patch = {
	.name = "patch",
	.order = 70,
	.summary = "write knob values back: a diff git applies, or in place with a backup",
	.help = help,
	.run = run,
};
