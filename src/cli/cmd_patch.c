/*
 * cmd_patch.c — `muh patch`: write knob values back into an engine tree.
 *
 * Parse and print over the write-back (writeback.h): which values a
 * store's runs write, the emitters' files and the patch plan are the
 * library's, and so are its words (writeback_text_*); this file reads the
 * options, says the library's notes on stderr ("muh patch: ...") and
 * writes out what the library rendered.
 */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "muh/patch.h"
#include "muh/scan.h"
#include "muh/store.h"
#include "muh/writeback.h"

static const char help[] =
	"usage: muh patch TREE --set ID=VALUE [--set ID[ALT]=VALUE ...]\n"
	"                 [--scan SCAN.json] [--apply [--backup DIR] [--follow-symlinks]]\n"
	"                 [--force] [--out FILE] [--json]\n"
	"       muh patch TREE --from DB [--run ID] [--apply ...]\n"
	"       muh patch --rollback BACKUP_DIR | --resume BACKUP_DIR\n"
	"       muh patch --emit moe-json|header|triton-configs --from DB [--run ID]\n"
	"                 [--out PATH] [--device NAME] [--dtype D] [--top K] [--force]\n"
	"                 [--into TREE | --scan SCAN.json]\n"
	"       muh patch --emit triton-configs --from DB --into TREE --knob ID [--extend]\n"
	"                 [--hw PROFILE] [--top K] [--run ID] [--apply ...]\n"
	"\n"
	"Writes knob values back into an engine tree, changing only the bytes of each\n"
	"knob's value: line endings (CRLF stays CRLF), encoding, indentation and\n"
	"comments are kept. Prints a unified diff that `git apply` accepts; --apply\n"
	"writes the files instead, all or nothing: the originals to the backup\n"
	"folder with a journal, every new file to a temporary file (fsync), then\n"
	"all renamed. On a failure no file changed (or the message says which did).\n"
	"After a kill, --rollback BACKUP_DIR puts the originals back and --resume\n"
	"BACKUP_DIR finishes the renames, from the journal.\n"
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
	"  - a value must be one expression, and a literal of the knob's type\n"
	"    (an int knob takes an int); a value is matched against the scan's\n"
	"    unsafe one by what it evaluates to, not its spelling: where False is\n"
	"    unsafe, so are (False), not True, 0, None and '';\n"
	"  - a patched file must still parse (Python, YAML, JSON);\n"
	"  - a file whose real path leaves TREE (through a link to a folder\n"
	"    outside) is refused, and so is a file that is a symbolic link,\n"
	"    unless --follow-symlinks (and then only one pointing inside TREE);\n"
	"  - a conditional knob (`128 if cap >= 80 else 64`) needs the alternative:\n"
	"    --set ID[0]=V changes the first, ID[1]=V the second.\n"
	"\n"
	"From a store (--from DB): the best measured variant of each run whose spec\n"
	"says where its params live, as `muh scan --specs` writes it:\n"
	"    knobs: {BLOCK: \"k8d8b736509b9e45c[0]\", NUM_WARPS: \"k82c8dd535653046b\"}\n"
	"becomes --set k8d8b736509b9e45c[0]=... --set k82c8dd535653046b=... (0/1 become\n"
	"False/True where the knob is a Python bool). Two runs that disagree on a knob\n"
	"are refused: pick one with --run.\n"
	"An engine run (backend engine, docs/engine.md) writes the winner of its\n"
	"decision stage (tune re-deployed the defaults and the top finalists in paired,\n"
	"alternating rounds): a finalist whose interval lies above 1 with every repeat\n"
	"within the SLOs. Without such a proven gain nothing is written and patch exits\n"
	"1, \"no proven gain: ...\"; --force writes it anyway, its diff marked\n"
	"UNPROVEN: the finalist of highest paired gain in the decision stage (its\n"
	"gain and interval are said), else the search's best. It goes into the\n"
	"deployment file, which must lie inside TREE, argv-aware: only the winner's\n"
	"arguments change, a flag set to False is removed, one absent is added, the\n"
	"file is read again before it is written;\n"
	"the text is made by the code that made the measured variant. A run whose\n"
	"spec folder is gone (measured on another machine) reads the deployment file\n"
	"of the same name from TREE.\n"
	"\n"
	"Emitters (--emit, from a store; no TREE):\n"
	"  moe-json        vLLM's fused-MoE config file\n"
	"                  E={E},N={N},device_name={device}.json in --out DIR\n"
	"                  (default .): per run (batch size M) its decided entry:\n"
	"                  proven faster than what ships (the engine's own file for\n"
	"                  the device, the run's baseline), else what ships; a line\n"
	"                  per size says which, with the paired intervals over what\n"
	"                  ships and over the defaults (BLOCK_SIZE_M/N/K, GROUP_SIZE_M,\n"
	"                  num_warps, num_stages)\n"
	"  header          a C header: #if defined(TARGET_<device>) per device with the\n"
	"                  best values (TARGET_HOST for runs that name no device: cpu,\n"
	"                  worker), #else the spec's defaults (--out FILE or stdout)\n"
	"  triton-configs  the top K (default 8) variants of a run as a triton.Config\n"
	"                  list for @triton.autotune (--out FILE or stdout); with\n"
	"                  --into TREE --knob ID, written in place into the engine's\n"
	"                  autotune list\n"
	"                  (ID: an autotune knob of `muh scan TREE --json`): replaced, or\n"
	"                  with --extend appended to; every byte outside the list stays,\n"
	"                  the file must still parse, and the result is a diff (or\n"
	"                  --apply); with --hw PROFILE only the configs valid on that\n"
	"                  profile (muh transfer) are taken, fastest measured first\n"
	"Where the numbers came from: moe-json and header refuse a --device or --dtype\n"
	"that no measurement in the store was taken on (its runs' hardware profiles and\n"
	"their specs' target.dtype), unless --force; forced, they say so: the header in\n"
	"a comment, the JSON file (whose every key vLLM's loader reads as a batch size,\n"
	"so it can hold no other field) in FILE.provenance.json beside it. With --into\n"
	"TREE or --scan SCAN.json they say whether the tree's engine reads the file, from\n"
	"the scan's lookup-site knobs; unknown where the scan has none.\n"
	"\n"
	"options:\n"
	"  --set ID=VALUE     the new value, as source text (64, True, 'ld')\n"
	"  --scan FILE        knobs from a saved `muh scan --json` instead of scanning\n"
	"                     now; files that changed since are refused (drift)\n"
	"  --apply            write the files in place; a second apply changes nothing\n"
	"  --backup DIR       where --apply copies the originals (default\n"
	"                     TREE/.muh-backup/<date-time>/)\n"
	"  --follow-symlinks  write through a file that is a symbolic link into TREE\n"
	"  --rollback DIR     restore the originals of an apply from its backup folder\n"
	"  --resume DIR       finish an apply that was killed, from its backup folder\n"
	"  --force            write dead knobs too (never unsafe values); --from an\n"
	"                     engine run: write the search's best without a proven\n"
	"                     gain, marked UNPROVEN; --emit: write for a device or\n"
	"                     dtype the store has no measurement of\n"
	"  --out PATH         the diff into file PATH instead of stdout; with --emit, the\n"
	"                     emitter's file (moe-json: a folder, default .)\n"
	"  --json             print {files_changed, written, diff} as JSON\n"
	"  --from DB          values from the best results in a store (see above)\n"
	"  --run ID           only this run of the store\n"
	"  --emit KIND        write a config file the engine reads (see above)\n"
	"  --device NAME      device name for moe-json/header (default: the run's\n"
	"                     hardware profile)\n"
	"  --dtype D          moe-json: the ,dtype=D part of the file name\n"
	"  --top K            triton-configs: how many variants (default 8)\n"
	"  --into TREE        triton-configs: the engine tree whose list --knob names;\n"
	"                     moe-json/header: the tree whose engine should read the file\n"
	"  --knob ID          triton-configs --into: the autotune list to write (its id,\n"
	"                     or its name when unique: attn_fwd.configs)\n"
	"  --extend           triton-configs --into: append to the list, not replace it\n"
	"                     (configs it already holds are not added again)\n"
	"  --hw PROFILE       triton-configs: only configs valid on this profile\n"
	"\n"
	"exit: 0 done (or nothing to change), 1 no proven gain (--from an engine run:\n"
	"nothing written), 2 refused or bad input, 3 I/O error\n"
	"\n"
	"examples:\n"
	"  muh scan ~/vllm --json > scan.json\n"
	"  muh patch ~/vllm --scan scan.json --set k1a2b3c4d5e6f7a8b=64 > tune.diff\n"
	"  git -C ~/vllm apply tune.diff\n";

/* A note of the write-back, said on stderr. */
static void on_note(void *ctx, const char *line)
{
	fprintf(stderr, "muh patch: %s\n", line);
}

/* A file an emitter wrote (or its text, with no --out), for a person. */
static void on_written(void *ctx, const writeback_file *f)
{
	writeback_text_written(&cli_out, f);
}

/* An engine run's winner, planned into its deployment file: a note. */
static void on_win(void *ctx, const writeback_engine_win *w)
{
	if (!*(const int *)ctx) /* --json: no notes */
		writeback_text_win(&cli_out, "muh patch", w);
}

/* --rollback / --resume DIR: the journal of an apply, undone or finished. */
static int recover(const char *dir, int rollback, int json)
{
	muh_diag d;
	diag_clear(&d);
	patch_recovery r;
	int rc = rollback ? patch_rollback(dir, &r, &d) : patch_resume(dir, &r, &d);
	if (rc)
		return cli_fail("patch", rc, &d);
	writeback_text_recovery(&cli_out, &r, rollback, json);
	return EXIT_OK;
}

static int run(int argc, char **argv)
{
	static const struct option opts[] = {
		{"set", required_argument, NULL, 's'},	 {"scan", required_argument, NULL, 'S'},
		{"apply", no_argument, NULL, 'a'},	 {"backup", required_argument, NULL, 'b'},
		{"force", no_argument, NULL, 'f'},	 {"out", required_argument, NULL, 'o'},
		{"json", no_argument, NULL, 'j'},	 {"from", required_argument, NULL, 'F'},
		{"run", required_argument, NULL, 'R'},	 {"emit", required_argument, NULL, 'E'},
		{"device", required_argument, NULL, 'v'}, {"dtype", required_argument, NULL, 't'},
		{"top", required_argument, NULL, 'k'},	 {"follow-symlinks", no_argument, NULL, 'L'},
		{"rollback", required_argument, NULL, 'B'}, {"resume", required_argument, NULL, 'U'},
		{"into", required_argument, NULL, 'I'},	 {"knob", required_argument, NULL, 'K'},
		{"extend", no_argument, NULL, 'X'},	 {"hw", required_argument, NULL, 'H'},
		{NULL, 0, NULL, 0},
	};
	const char *from = NULL, *emitkind = NULL, *device = NULL, *dtype = NULL;
	long long only = 0, topk = 8;
	static char fromvals[WRITEBACK_MAX_SETS][128];
	writeback_set sets[WRITEBACK_MAX_SETS];
	int nsets = 0, apply = 0, force = 0, json = 0, follow = 0, c;
	const char *rollback = NULL, *resume = NULL, *into = NULL, *knob = NULL, *hwref = NULL;
	int extend = 0;
	char *listvalue = NULL;
	const muh_knob **eknobs = NULL;
	const char *scanfile = NULL, *out = NULL, *backup = NULL;
	optind = 1;
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 's':
			if (nsets == WRITEBACK_MAX_SETS)
				return cli_usage_error("patch", "more than %d --set", WRITEBACK_MAX_SETS);
			if (writeback_parse_set(optarg, &sets[nsets]))
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
		case 'L':
			follow = 1;
			break;
		case 'B':
			rollback = optarg;
			break;
		case 'I':
			into = optarg;
			break;
		case 'K':
			knob = optarg;
			break;
		case 'X':
			extend = 1;
			break;
		case 'H':
			hwref = optarg;
			break;
		case 'U':
			resume = optarg;
			break;
		case 'o':
			out = optarg;
			break;
		case 'j':
			json = 1;
			break;
		case 'F':
			from = optarg;
			break;
		case 'E':
			emitkind = optarg;
			break;
		case 'v':
			device = optarg;
			break;
		case 't':
			dtype = optarg;
			break;
		case 'R':
		case 'k': {
			char *end;
			long long v = strtoll(optarg, &end, 10);
			if (*end || v <= 0)
				return cli_usage_error("patch", "--%s needs a positive number",
						       c == 'R' ? "run" : "top");
			if (c == 'R')
				only = v;
			else
				topk = v;
			break;
		}
		default:
			return cli_bad_option("patch", argv, opts);
		}
	}
	muh_diag d;
	diag_clear(&d);
	writeback_runs sr;
	memset(&sr, 0, sizeof(sr));
	muh_surface *surf = NULL;
	patch_knobs *saved = NULL;
	writeback_observer ob = {.note = on_note, .written = on_written};
	int into_tree = emitkind && !strcmp(emitkind, "triton-configs") && into;
	if (emitkind) {
		if (!from)
			return cli_usage_error("patch", "--emit needs --from DB");
		if (optind != argc)
			return cli_usage_error("patch", "--emit writes config files; it takes no TREE (--into TREE "
							"names one)");
		if ((knob || extend) && !into_tree)
			return cli_usage_error("patch", "--knob and --extend go with --emit triton-configs --into TREE");
		if (into_tree && !knob)
			return cli_usage_error("patch", "--into TREE needs --knob ID: the autotune list to write "
							"(an autotune knob of `muh scan TREE --json`)");
		if (hwref && strcmp(emitkind, "triton-configs"))
			return cli_usage_error("patch", "--hw goes with --emit triton-configs");
		writeback_emit_opts eo = {.db = from, .out = out, .device = device, .dtype = dtype, .into = into,
					  .scan = scanfile, .knob = knob, .hw = hwref, .topk = (int)topk,
					  .force = force, .extend = extend};
		int rc = writeback_runs_read(from, only, &sr, &d);
		if (!rc && (into || scanfile))
			rc = writeback_emit_knobs(&eo, &surf, &saved, &eknobs, &eo.nknobs, &d);
		eo.knobs = eknobs;
		if (!rc && into_tree) {
			rc = writeback_autotune_into(&sr, &eo, surf, saved, &sets[0], &listvalue, &ob, &d);
			nsets = rc ? 0 : 1;
		} else if (!rc) {
			rc = writeback_emit(emitkind, &sr, &eo, &ob, &d);
		}
		writeback_runs_free(&sr);
		free(eknobs);
		if (rc || !into_tree) {
			scan_free(surf);
			patch_knobs_free(saved);
			free(listvalue);
			return rc ? cli_fail("patch", rc, &d) : EXIT_OK;
		}
		force = 0; /* --force of an emitter is not the tree path's (dead knobs) */
	}
	if (rollback || resume) {
		if (rollback && resume)
			return cli_usage_error("patch", "--rollback and --resume: give one");
		if (optind != argc || nsets || from || apply)
			return cli_usage_error("patch", "--%s takes only the backup folder",
					       rollback ? "rollback" : "resume");
		return recover(rollback ? rollback : resume, !!rollback, json);
	}
	if (!into_tree && optind != argc - 1)
		return cli_usage_error("patch", "expected one engine TREE");
	writeback_engine_wins *E = calloc(1, sizeof(*E));
	if (!E)
		return cli_fail("patch", MUH_ENOMEM, NULL);
	if (from && !into_tree) {
		int rc = writeback_from_store(from, argv[optind], only, force, E, sets, &nsets, fromvals, &ob, &d);
		if (rc) {
			writeback_engine_wins_free(E);
			free(E);
			return cli_fail("patch", rc, &d);
		}
	}
	int ex = -1;
	if (!nsets && !E->n && E->unproven) {
		if (E->unproven > 1) /* one run's line said it already */
			fprintf(stderr, "muh patch: nothing to write: no proven gain in %d runs\n", E->unproven);
		ex = EXIT_FINDING;
	} else if (!nsets && !E->n && E->skipped) {
		fprintf(stderr, "muh patch: nothing to write: no engine run has a variant that met its SLOs\n");
		ex = EXIT_FINDING;
	} else if (!nsets && !E->n) {
		ex = cli_usage_error("patch", "nothing to do: give --set ID=VALUE (ids from `muh "
					      "scan TREE --json`) or --from DB");
	}
	const char *tree = into_tree ? into : argv[optind];
	struct stat st;
	if (ex < 0 && (stat(tree, &st) || !S_ISDIR(st.st_mode))) {
		fprintf(stderr, "%s: error: not a directory (expected an engine tree)\n", tree);
		ex = EXIT_USAGE;
	}
	writeback_tree_result r = {0};
	int rc = MUH_OK;
	if (ex < 0) {
		writeback_tree_opts to = {.tree = tree, .scanfile = scanfile, .backup = backup, .out = out,
					  .apply = apply, .follow = follow, .force = force, .sets = sets,
					  .nsets = nsets, .wins = E, .surf = surf, .saved = saved,
					  .on_win = on_win, .ctx = &json};
		rc = writeback_tree(&to, &r, &d);
	}
	writeback_engine_wins_free(E);
	free(E);
	free(listvalue);
	scan_free(surf);
	patch_knobs_free(saved);
	if (ex >= 0 || rc) {
		free(r.diff);
		return ex >= 0 ? ex : cli_fail("patch", rc, &d);
	}
	writeback_text_tree(&cli_out, "muh patch", &r, json, apply, out);
	free(r.diff);
	return EXIT_OK;
}

MUH_COMMAND(patch, 70, "write knob values back: a diff git applies, or in place, backed up");
