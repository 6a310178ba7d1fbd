/*
 * cmd_patch.c — `muh patch`: write knob values back into an engine tree.
 */
#include <cjson/cJSON.h>
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "muh/best.h"
#include "muh/engine.h"
#include "muh/eval.h"
#include "muh/fileio.h"
#include "muh/hw.h"
#include "muh/objective.h"
#include "muh/patch.h"
#include "muh/scan.h"
#include "muh/store.h"
#include "muh/transfer.h"

static const char help[] =
	"usage: muh patch TREE --set ID=VALUE [--set ID[ALT]=VALUE ...] [--scan SCAN.json]\n"
	"                 [--apply [--backup DIR] [--follow-symlinks]] [--force] [--out FILE]\n"
	"                 [--json]\n"
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
	"    (an int knob takes an int); unsafe values compare by value, so\n"
	"    (False), not True, 0 and None are all False;\n"
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
	"1, \"no proven gain: ...\"; --force writes the search's best anyway, its diff\n"
	"marked UNPROVEN. It goes into the deployment file, which must lie inside TREE,\n"
	"argv-aware: only the winner's arguments change, a flag set to False is\n"
	"removed, one absent is added, the file is read again before it is written;\n"
	"the text is made by the code that made the measured variant. A run whose\n"
	"spec folder is gone (measured on another machine) reads the deployment file\n"
	"of the same name from TREE.\n"
	"\n"
	"Emitters (--emit, from a store; no TREE):\n"
	"  moe-json        vLLM's fused-MoE config file E={E},N={N},device_name={device}.json\n"
	"                  in --out DIR (default .): per run (batch size M) its decided\n"
	"                  entry: proven faster than what ships (the engine's own file for\n"
	"                  the device, the run's baseline), else what ships; a line per\n"
	"                  size says which, with the paired intervals over what ships and\n"
	"                  over the defaults (BLOCK_SIZE_M/N/K, GROUP_SIZE_M, num_warps,\n"
	"                  num_stages)\n"
	"  header          a C header: #if defined(TARGET_<device>) per device with the\n"
	"                  best values (TARGET_HOST for runs that name no device: cpu,\n"
	"                  worker), #else the spec's defaults (--out FILE or stdout)\n"
	"  triton-configs  the top K (default 8) variants of a run as a triton.Config list\n"
	"                  for @triton.autotune (--out FILE or stdout); with --into TREE\n"
	"                  --knob ID, written in place into the engine's autotune list\n"
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
	"  --out FILE         write the diff to FILE instead of stdout\n"
	"  --json             print {files_changed, written, diff} as JSON\n"
	"  --from DB          values from the best results in a store (see above)\n"
	"  --run ID           only this run of the store\n"
	"  --emit KIND        write a config file the engine reads (see above)\n"
	"  --device NAME      device name for moe-json/header (default: the run's profile)\n"
	"  --dtype D          moe-json: the ,dtype=D part of the file name\n"
	"  --top K            triton-configs: how many variants (default 8)\n"
	"  --into TREE        triton-configs: the engine tree whose list --knob names;\n"
	"                     moe-json/header: the tree whose engine should read the file\n"
	"  --knob ID          triton-configs --into: the autotune list to write (its id,\n"
	"                     or its name when unique: attn_fwd.configs)\n"
	"  --extend           triton-configs --into: append to the list, not replace it\n"
	"  --hw PROFILE       triton-configs: only configs valid on this profile\n"
	"\n"
	"exit: 0 done (or nothing to change), 1 no proven gain (--from an engine run:\n"
	"nothing written), 2 refused or bad input, 3 I/O error\n"
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
	char idpart[64];
	if (!eq || eq == arg || (size_t)(eq - arg) >= sizeof(idpart))
		return -1;
	memcpy(idpart, arg, (size_t)(eq - arg));
	idpart[eq - arg] = '\0';
	if (patch_parse_id(idpart, s->id, sizeof(s->id), &s->alt))
		return -1;
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


/* ---- results from a store ----------------------------------------------- */

/* One run of the store, ranked by the library (best.h): best.ranked[0] is
 * the best (at sustained clocks when the run was re-timed and a re-timed
 * variant passed), the others behind it. */
struct runbest {
	int64_t run, instance;
	char *spec_path, *problem, *hw, *backend;
	char *spec_text, *spec_abs; /* as the store kept them (NULL: an older store) */
	muh_best best;
};

struct storeread {
	int64_t only; /* --run, 0 = all */
	struct runbest *r;
	size_t n, cap;
};

static int sr_run(void *ud, const store_run *run)
{
	struct storeread *sr = ud;
	if (sr->only && run->id != sr->only)
		return 0;
	if (cli_grow(&sr->r, &sr->cap, sr->n, sizeof(*sr->r), 8))
		return MUH_ENOMEM;
	struct runbest *b = &sr->r[sr->n++];
	memset(b, 0, sizeof(*b));
	b->run = run->id;
	b->instance = run->instance;
	b->spec_path = strdup(run->spec_path ? run->spec_path : "");
	b->problem = strdup(run->problem ? run->problem : "");
	b->hw = strdup(run->hw_profile ? run->hw_profile : "");
	b->backend = strdup(run->backend ? run->backend : "");
	b->spec_text = run->spec_text ? strdup(run->spec_text) : NULL;
	b->spec_abs = run->spec_abs ? strdup(run->spec_abs) : NULL;
	return 0;
}

/* The store_run that b was read from (its strings are b's). */
static store_run runbest_run(const struct runbest *b)
{
	return (store_run){.id = b->run, .instance = b->instance, .spec_path = b->spec_path, .problem = b->problem,
			   .backend = b->backend,
			   .hw_profile = b->hw, .spec_text = b->spec_text, .spec_abs = b->spec_abs};
}

static void sr_free(struct storeread *sr)
{
	for (size_t i = 0; i < sr->n; i++) {
		best_free(&sr->r[i].best);
		free(sr->r[i].spec_path);
		free(sr->r[i].spec_text);
		free(sr->r[i].spec_abs);
		free(sr->r[i].problem);
		free(sr->r[i].hw);
		free(sr->r[i].backend);
	}
	free(sr->r);
}

/* The key of run b's i-th best (0: the best). */
static const char *nth_key(const struct runbest *b, size_t i)
{
	return b->best.ranked[i].key;
}

/* Reads every run (or --run) of db, ranked. */
static int read_store(const char *db, int64_t only, struct storeread *sr, muh_diag *d)
{
	memset(sr, 0, sizeof(*sr));
	sr->only = only;
	struct stat st;
	if (stat(db, &st)) {
		diag_at(d, db, 0, 0, NULL);
		return diag_errorf(d, "no such store");
	}
	muh_store *s;
	int rc = store_open_ro(db, &s, d);
	if (rc)
		return rc;
	rc = store_foreach_run(s, sr_run, sr);
	for (size_t i = 0; i < sr->n && !rc; i++) {
		store_run r = runbest_run(&sr->r[i]);
		rc = best_of_run(s, &r, &sr->r[i].best, d);
	}
	store_close(s);
	if (!rc && !sr->n) {
		diag_at(d, db, 0, 0, NULL);
		rc = only ? diag_errorf(d, "no run %lld in the store", (long long)only)
			  : diag_errorf(d, "the store holds no run");
	}
	return rc;
}

/* A long long from a "NAME=V,..." problem or key string; 0 on success. */
static int field_ll(const char *s, const char *name, long long *v)
{
	char buf[64];
	if (space_key_value(s, name, buf, sizeof(buf)))
		return -1;
	char *end;
	*v = strtoll(buf, &end, 10);
	return *end ? -1 : 0;
}

/* The spec of run b as the store kept it, else its file (store_run_spec). */
static int runbest_spec(const struct runbest *b, muh_spec **s, muh_diag *d)
{
	store_run r = runbest_run(b);
	return store_run_spec(&r, s, d);
}

/* --from DB with a tree: the sets that the runs' specs map to knobs (the
 * best of each run: its decision's proven winner; a run whose decision
 * proved no gain adds nothing and counts in *unproven, unless force, which
 * takes its search's own best). An error when no run maps a knob. */
static int sets_from_store(const struct storeread *sr, struct setarg *sets, int *nsets,
			   char vals[][128], int force, int *unproven, muh_diag *d)
{
	for (size_t i = 0; i < sr->n; i++) {
		const struct runbest *b = &sr->r[i];
		if (!b->best.nranked)
			continue;
		if (!strcmp(b->backend, "engine"))
			continue; /* its deployment file: engine_winner */
		muh_spec *s;
		muh_diag sd;
		if (runbest_spec(b, &s, &sd))
			continue; /* no text kept and the spec moved: nothing to map */
		int maps = 0;
		for (size_t p = 0; p < s->nparams && !maps; p++) {
			char kk[300];
			snprintf(kk, sizeof(kk), "knobs.%s", s->params[p].name);
			maps = spec_kv(s, kk) != NULL;
		}
		if (!maps) {
			spec_free(s);
			continue;
		}
		/* a run whose decision stage proved no gain writes nothing, as
		 * an engine run does; --force writes the search's own best */
		const char *wkey = nth_key(b, 0);
		if (b->best.decision && best_decided(&b->best) != 1) {
			if (!force) {
				fprintf(stderr, "muh patch: run %lld: no proven gain: %.1000s; its knobs are not written "
						"(--force writes the search's best anyway, marked as unproven)\n",
					(long long)b->run, b->best.decision->why);
				(*unproven)++;
				spec_free(s);
				continue;
			}
			if (b->best.search_key)
				wkey = b->best.search_key;
			fprintf(stderr, "muh patch: run %lld: written with --force, NOT a proven gain: %.1000s\n",
				(long long)b->run, b->best.decision->why);
		}
		best_inert in[64];
		size_t nin = best_inert_params(&b->best, wkey, in, 64);
		for (size_t p = 0; p < s->nparams; p++) {
			char kk[300];
			snprintf(kk, sizeof(kk), "knobs.%s", s->params[p].name);
			const muh_kv *kv = spec_kv(s, kk);
			if (!kv)
				continue;
			struct setarg a;
			char arg[512], v[128];
			if (space_key_value(wkey, s->params[p].name, v, sizeof(v)))
				continue;
			snprintf(arg, sizeof(arg), "%s=%s", kv->value, v);
			for (size_t k = 0; k < nin; k++) {
				char note[240];
				if (strcmp(in[k].name, s->params[p].name))
					continue;
				best_inert_note(&in[k], note, sizeof(note));
				fprintf(stderr, "muh patch: note: %s (knob %s) of run %lld's best, written as measured, %s\n",
					in[k].name, kv->value, (long long)b->run, note);
			}
			if (parse_set(arg, &a)) {
				spec_diag_at(s, d, kv->line, kv->col);
				spec_free(s);
				return diag_errorf(d, "expected a knob id (kXXXXXXXXXXXXXXXX or ID[ALT])");
			}
			int dup = 0;
			for (int k = 0; k < *nsets; k++) {
				if (strcmp(sets[k].id, a.id) || sets[k].alt != a.alt)
					continue;
				dup = 1;
				if (strcmp(sets[k].value, v)) {
					spec_free(s);
					return diag_errorf(d, "runs disagree on knob %s (%s vs %s): pick one "
							      "with --run",
							   a.id, sets[k].value, v);
				}
			}
			if (dup)
				continue;
			if (*nsets == MAX_SETS) {
				spec_free(s);
				return diag_errorf(d, "more than %d knobs", MAX_SETS);
			}
			snprintf(vals[*nsets], 128, "%s", v);
			a.value = vals[*nsets];
			sets[(*nsets)++] = a;
		}
		spec_free(s);
	}
	if (!*nsets && !*unproven)
		return diag_errorf(d, "no run's spec maps its params to knobs (a `knobs:` section, "
				      "as `muh scan --specs` writes it)");
	return MUH_OK;
}

/* ---- engine runs: the winner written into the deployment file ----------- */

/* One engine run's winner: the file (relative to the tree) and its new text. */
struct engine_win {
	int64_t run;
	char rel[4096];
	char *text;
	size_t len;
	char key[4096];
	char value[64]; /* the objective's value, for the note */
	double gain;    /* the defaults' score over the winner's (>1: better); NAN when unknown */
	double noise;   /* the run's noise; NAN when not measured */
	int unproven;   /* written with --force although its decision proved no gain */
	char why[1100]; /* then: the decision's word */
};

/* Re-roots *s at tree when its own folder no longer exists: its path
 * becomes tree/<the spec's file name>, so that its relative paths (the
 * deployment file) resolve there. 1 when it did. */
static int rerooted(muh_spec **s, const char *tree)
{
	const char *p = (*s)->path, *sl = p ? strrchr(p, '/') : NULL;
	if (!sl || !tree || file_dir_exists(p))
		return 0; /* the folder is there: its error stands */
	char *np = malloc(strlen(tree) + strlen(sl) + 1);
	if (!np)
		return 0;
	strcpy(np, tree);
	strcat(np, sl);
	free((*s)->path);
	(*s)->path = np;
	return 1;
}

/* What engine_winner found for a run (apart from an error). */
enum engine_outcome {
	ENGINE_WRITE = 0, /* w holds the text to write */
	ENGINE_NONE,      /* no ok variant met the SLOs: nothing to write */
	ENGINE_UNPROVEN,  /* no proven gain (w->why says why), and no --force */
};

/* The winner of engine run `run` (its spec's objective, SLOs met) made into
 * the deployment file's new text by engine_launch_text, the code that made
 * the measured variant. The file must lie inside tree. The winner is the
 * decision stage's proven one (best_decided); without one, *out is
 * ENGINE_UNPROVEN with w->why saying why, unless force (then w->unproven:
 * written marked); ENGINE_NONE when no variant met the SLOs. Returns MUH_OK,
 * or an error with d set (a spec or deployment file that cannot be read is
 * an error, never "no proven gain"). */
static int engine_winner(muh_store *st, const store_run *run, const char *tree, int force, struct engine_win *w,
			 enum engine_outcome *out, muh_diag *d)
{
	muh_spec *s;
	memset(w, 0, sizeof(*w));
	*out = ENGINE_WRITE;
	w->run = run->id;
	if (store_run_spec(run, &s, d)) {
		diag_at(d, run->spec_path ? run->spec_path : "", 0, 0, NULL);
		return diag_errorf(d, "run %lld: cannot read its spec, which says where the deployment file is",
				   (long long)run->id);
	}
	muh_target *t = NULL;
	muh_objective o;
	int rc = eval_target_new(s, &t, d);
	if (rc == MUH_EINPUT && rerooted(&s, tree)) {
		/* the run's spec folder is gone (a GPU machine's temporary folder,
		 * say): its deployment file is the one of the same name in tree */
		muh_diag d2;
		if (!eval_target_new(s, &t, &d2)) {
			diag_clear(d); /* the first try's location is no error now */
			fprintf(stderr, "muh patch: run %lld: the spec's folder is gone; its deployment file is read from %s\n",
				(long long)run->id, tree);
			rc = MUH_OK;
		}
	}
	if (!rc)
		rc = objective_from_spec(s, eval_backend_metrics("engine"), &o, d);
	const char *launch = t ? eval_target_launch(t) : "";
	if (!rc && !launch[0]) {
		diag_at(d, s->path, 0, 0, NULL);
		rc = diag_errorf(d, "run %lld: the spec's server is a target.command, not a deployment file: "
				    "nothing to write back",
				 (long long)run->id);
	}
	muh_best b = {0};
	if (!rc)
		rc = best_of_run(st, run, &b, d);
	if (!rc && !b.nranked) {
		spec_free(s);
		best_free(&b);
		eval_target_free(t);
		*out = ENGINE_NONE; /* no ok variant met the SLOs: nothing to write */
		return MUH_OK;
	}
	int decided = rc ? 1 : best_decided(&b);
	if (decided != 1) {
		if (decided == 0)
			snprintf(w->why, sizeof(w->why), "%.1000s", b.decision->why);
		else
			snprintf(w->why, sizeof(w->why), "the run has no decision (the defaults and the finalists re-measured "
							 "in paired rounds): none ran, or no finalist met the SLOs; rerun muh tune "
							 "on it (--finalists 2)");
		if (!force) {
			spec_free(s);
			best_free(&b);
			eval_target_free(t);
			*out = ENGINE_UNPROVEN;
			return MUH_OK;
		}
		w->unproven = 1;
	}
	/* what is written: the proven winner, or with --force the search's own
	 * best (ranked[0] is then what stays: the defaults) */
	size_t wi = 0;
	for (size_t i = 0; !rc && w->unproven && b.search_key && i < b.nranked; i++)
		if (b.ranked[i].key == b.search_key)
			wi = i;
	char rt[4096] = "", rl[4096] = "";
	if (!rc && (!realpath(tree, rt) || !realpath(launch, rl))) {
		diag_at(d, launch, 0, 0, NULL);
		rc = diag_errorf(d, "cannot resolve the deployment file: %s", strerror(errno));
	}
	size_t n = strlen(rt);
	if (!rc && (strncmp(rl, rt, n) || rl[n] != '/')) {
		diag_at(d, rl, 0, 0, NULL);
		rc = diag_errorf(d, "run %lld's deployment file is outside %s; give the folder that holds it",
				 (long long)run->id, tree);
	}
	muh_variant v;
	char why[1024];
	if (!rc && (rc = eval_variant_from_key(s, b.ranked[wi].key, &v, why, sizeof(why))) == MUH_EINPUT)
		diag_errorf(d, "%s", why);
	if (!rc) {
		deploy_file *f;
		rc = engine_launch_text(t, &v, 0, &f, why, sizeof(why));
		if (rc) {
			diag_at(d, launch, 0, 0, NULL);
			diag_errorf(d, "%s", why);
		} else {
			snprintf(w->rel, sizeof(w->rel), "%s", rl + n + 1);
			w->text = malloc(f->len + 1);
			if (w->text) {
				memcpy(w->text, f->text, f->len);
				w->text[f->len] = '\0';
				w->len = f->len;
			} else {
				rc = MUH_ENOMEM;
			}
			snprintf(w->key, sizeof(w->key), "%s", b.ranked[wi].key);
			w->gain = best_speedup(&b);
			w->noise = run->noise;
			objective_format(o.metric, objective_value(&o, b.ranked[wi].score), w->value, sizeof(w->value));
			deploy_free(f);
		}
		eval_variant_free(&v);
	}
	spec_free(s);
	best_free(&b);
	eval_target_free(t);
	return rc;
}

struct engine_runs {
	const char *tree;
	int force;    /* --force: write an unproven winner, marked */
	int unproven; /* runs whose decision proved no gain (not written) */
	int64_t only;
	muh_store *st;
	struct engine_win w[MAX_SETS];
	int n, skipped;
	int rc;
	muh_diag *d;
};

static int engine_run_cb(void *ud, const store_run *run)
{
	struct engine_runs *E = ud;
	if ((E->only && run->id != E->only) || !run->backend || strcmp(run->backend, "engine"))
		return 0;
	if (E->n == MAX_SETS)
		return E->rc = diag_errorf(E->d, "more than %d engine runs: pick one with --run", MAX_SETS);
	enum engine_outcome out;
	int rc = engine_winner(E->st, run, E->tree, E->force, &E->w[E->n], &out, E->d);
	if (rc)
		return E->rc = rc;
	if (out == ENGINE_UNPROVEN) {
		fprintf(stderr, "muh patch: run %lld: no proven gain: %s; nothing written (--force writes the search's "
				"best anyway, marked as unproven)\n",
			(long long)run->id, E->w[E->n].why);
		E->unproven++;
		return 0;
	}
	if (out == ENGINE_NONE) {
		fprintf(stderr, "muh patch: run %lld: no variant met its objective's SLOs; nothing to write\n",
			(long long)run->id);
		E->skipped++;
		return 0;
	}
	for (int k = 0; k < E->n; k++)
		if (!strcmp(E->w[k].rel, E->w[E->n].rel)) {
			free(E->w[E->n].text);
			return E->rc = diag_errorf(E->d, "runs %lld and %lld both tune %s: pick one with --run",
						   (long long)E->w[k].run, (long long)run->id, E->w[k].rel);
		}
	E->n++;
	return 0;
}

/* Splits a canonical key "A=1,B=2" into at most max names (copied into
 * nbuf, pointed at by names) and values as the key writes them (copied
 * into vbuf, pointed at by vals). Returns the count. */
static int key_split(const char *key, char nbuf[][64], const char **names, char vbuf[][64], const char **vals,
		     int max)
{
	int np = 0;
	for (const char *p = key; p && *p && np < max; np++) {
		const char *eq = strchr(p, '=');
		const char *end = strchr(p, ',');
		if (!eq)
			break;
		snprintf(nbuf[np], 64, "%.*s", (int)(eq - p), p);
		names[np] = nbuf[np];
		snprintf(vbuf[np], 64, "%.*s", end ? (int)(end - eq - 1) : (int)strlen(eq + 1), eq + 1);
		vals[np] = vbuf[np]; /* the value as measured: "64", "1.5", "cg" */
		p = end ? end + 1 : NULL;
	}
	return np;
}

/* The notes of key's params (best_inert_params): notes[i] for names[i],
 * NULL where no variant differing in that param alone built the same
 * artifact. key NULL: none. */
static void inert_notes(const muh_best *b, const char *key, const char *const *names, int np, char (*buf)[240],
			const char **notes)
{
	best_inert in[64];
	size_t n = key ? best_inert_params(b, key, in, 64) : 0;
	for (int i = 0; i < np; i++) {
		notes[i] = NULL;
		for (size_t k = 0; k < n && !notes[i]; k++)
			if (!strcmp(in[k].name, names[i])) {
				best_inert_note(&in[k], buf[i], sizeof(buf[i]));
				notes[i] = buf[i];
			}
	}
}

/* Says on stderr which params of run b's variant key did not change the
 * compiled artifact, for a write that cannot carry a comment (what: where
 * the values go). */
static void say_inert(const struct runbest *b, const char *key, const char *what)
{
	best_inert in[64];
	size_t n = best_inert_params(&b->best, key, in, 64);
	for (size_t k = 0; k < n; k++) {
		char note[240];
		best_inert_note(&in[k], note, sizeof(note));
		fprintf(stderr, "muh patch: note: %s of run %lld's best (%s) %s\n", in[k].name, (long long)b->run,
			what, note);
	}
}

static const char *const moe_names[] = {"BLOCK_SIZE_M", "BLOCK_SIZE_N", "BLOCK_SIZE_K",
					"GROUP_SIZE_M", "num_warps",    "num_stages"};

/* Writes text to path (atomically), or to stdout when path is NULL. */
static int emit_text(const char *path, const char *text, muh_diag *d)
{
	if (!path) {
		fputs(text, stdout);
		if (*text && text[strlen(text) - 1] != '\n')
			fputc('\n', stdout);
		return MUH_OK;
	}
	return write_out(path, text, d);
}

/* What an emitter was asked for (the --emit options). */
struct emitopt {
	const char *db, *out, *device, *dtype, *into, *scan, *knob, *hw;
	int topk, force, extend;
	const muh_knob *const *knobs; /* the scan of --into/--scan, for "does the engine read it" */
	size_t nknobs;
};

/* The dtype run b was measured with: its spec's target.dtype, else a
 * problem symbol dtype; "" when the store does not say. */
static void run_dtype(const struct runbest *b, char *buf, size_t n)
{
	buf[0] = '\0';
	muh_spec *s;
	muh_diag sd;
	if (!runbest_spec(b, &s, &sd)) {
		const muh_kv *kv = spec_kv(s, "target.dtype");
		if (kv)
			snprintf(buf, n, "%s", kv->value);
		spec_free(s);
	}
	if (!buf[0])
		space_key_value(b->problem, "dtype", buf, n);
}

/* The device name vLLM's file name wants for a run's hardware profile: a
 * built-in profile's device ("h200" -> "NVIDIA H200"), else the name as it is. */
static const char *device_of(const char *hw, char *buf, size_t n)
{
	muh_hw *p = malloc(sizeof(*p));
	const char *b = hw_builtin_for_device(hw);
	snprintf(buf, n, "%s", hw);
	if (p && b && !hw_builtin(b, p, NULL) && p->device[0])
		snprintf(buf, n, "%s", p->device);
	free(p);
	return buf;
}

/* Checks that the store measured what an emitter is asked to write for:
 * some run with ok results on --device (when given) and with --dtype (when
 * given). Refuses (MUH_EINPUT, saying what was measured) unless force.
 * prov gets one line on where the numbers came from; *elsewhere is 1 when
 * they were not measured on what is written (forced). */
static int provenance(const struct storeread *sr, const struct emitopt *o, char *prov, size_t pn,
		      int *elsewhere, muh_diag *d)
{
	char seen[1024] = "", dts[256] = "";
	int dev_ok = !o->device, dt_ok = !o->dtype;
	*elsewhere = 0;
	for (size_t i = 0; i < sr->n; i++) {
		const struct runbest *b = &sr->r[i];
		if (!b->best.nranked)
			continue;
		char dt[64], ent[200];
		run_dtype(b, dt, sizeof(dt));
		if (o->device && hw_same_device(b->hw, o->device))
			dev_ok = 1;
		if (o->dtype && patch_dtype_matches(o->dtype, dt) &&
		    (!o->device || hw_same_device(b->hw, o->device)))
			dt_ok = 1;
		snprintf(ent, sizeof(ent), "%s (%s)", b->hw[0] ? b->hw : "an unnamed device", dt[0] ? dt : "dtype not recorded");
		if (!strstr(seen, ent))
			snprintf(seen + strlen(seen), sizeof(seen) - strlen(seen), "%s%s", seen[0] ? ", " : "", ent);
		if (dt[0] && !strstr(dts, dt))
			snprintf(dts + strlen(dts), sizeof(dts) - strlen(dts), "%s%s", dts[0] ? ", " : "", dt);
	}
	const char *base = strrchr(o->db, '/'); /* the store's name, not where it lies here */
	snprintf(prov, pn, "measured on %s, in the store %s", seen[0] ? seen : "nothing", base ? base + 1 : o->db);
	if (dev_ok && dt_ok)
		return MUH_OK;
	char what[300];
	if (!dev_ok && o->dtype)
		snprintf(what, sizeof(what), "device '%s' (nor dtype '%s')", o->device, o->dtype);
	else if (!dev_ok)
		snprintf(what, sizeof(what), "device '%s'", o->device);
	else
		snprintf(what, sizeof(what), "dtype '%s'%s%s", o->dtype, o->device ? " on " : "", o->device ? o->device : "");
	if (!o->force) {
		diag_at(d, o->db, 0, 0, NULL);
		return diag_errorf(d, "no measurement in the store was taken on %s: its runs were %s. Measure "
				      "there; or check the configs with `muh transfer %s --hw PROFILE` and give "
				      "--force to write them marked as measured elsewhere",
				   what, prov, o->db);
	}
	*elsewhere = 1;
	size_t l = strlen(prov);
	snprintf(prov + l, pn - l, "; written for %s with --force: NOT measured there", what);
	return MUH_OK;
}

/* Says whether the engine of --into/--scan reads a file called name. */
static void say_reads(const struct emitopt *o, const char *name)
{
	char why[1200];
	if (!o->knobs) {
		printf("  read by the engine: unknown (give --into TREE or --scan SCAN.json to check)\n");
		return;
	}
	patch_engine_reads(o->knobs, o->nknobs, name, why, sizeof(why));
	printf("  read by the engine: %s\n", why);
}

/* The first run of sr with an ok result (saying which one, when the store
 * holds several and --run did not pick); NULL with d saying so when none. */
static const struct runbest *first_ranked(const struct storeread *sr, muh_diag *d)
{
	for (size_t i = 0; i < sr->n; i++) {
		if (!sr->r[i].best.nranked)
			continue;
		if (sr->n > 1 && !sr->only)
			fprintf(stderr, "muh patch: %zu runs in the store; using run %lld (--run picks)\n", sr->n,
				(long long)sr->r[i].run);
		return &sr->r[i];
	}
	diag_errorf(d, "the store has no ok result");
	return NULL;
}

/* One line of an emitted file's summary: what batch size M holds and why
 * (the run's decision: a proven gain over what ships, or what ships kept),
 * with the paired intervals over the baseline and the defaults. kept: the
 * key of what ships, written because the run had no decision stage
 * (best_shipped); NULL otherwise. */
static void say_decision(const struct runbest *b, long long M, const char *kept)
{
	const decide_summary *sm = b->best.decision;
	char key[4096];
	snprintf(key, sizeof(key), "%s", nth_key(b, 0));
	if (kept) {
		printf("  M=%-5lld %s: what ships, kept (no decision stage in this size's run: its search's best %s is "
		       "no proven gain)\n",
		       M, kept, key);
		return;
	}
	if (!sm) {
		printf("  M=%-5lld %s: the search's best, not decided (no decision stage: --finalists 0, or a "
		       "replay)\n",
		       M, key);
		return;
	}
	int ships = decide_baseline_ships(sm, b->best.default_key);
	const char *base = ships ? "what ships" : "the defaults";
	if (sm->winner >= 0) {
		const stats_ratio *g = &sm->f[sm->winner].gain;
		printf("  M=%-5lld %s: proven %.3fx %s (%.3f-%.3fx, %zu paired rounds)", M, key, g->ratio, base, g->lo,
		       g->hi, g->n);
	} else if (b->best.keeps_baseline) {
		printf("  M=%-5lld %s: %s, kept (no proven gain: %s)", M, key, base, sm->why);
	} else {
		printf("  M=%-5lld %s: no proven gain over %s (%s)", M, key, base, sm->why);
	}
	if (ships && isfinite(sm->vs_defaults.ratio))
		printf("; %.3fx the defaults (%.3f-%.3fx)", sm->vs_defaults.ratio, sm->vs_defaults.lo,
		       sm->vs_defaults.hi);
	putchar('\n');
}

/* --emit: the config files an engine reads, from the best results. */
static int emit(const char *kind, const struct storeread *sr, const struct emitopt *eo, muh_diag *d)
{
	const char *out = eo->out, *device = eo->device, *dtype = eo->dtype;
	int topk = eo->topk;
	char prov[2048] = "";
	int elsewhere = 0;
	if (!strcmp(kind, "moe-json") || !strcmp(kind, "header")) {
		int rc = provenance(sr, eo, prov, sizeof(prov), &elsewhere, d);
		if (rc)
			return rc;
		if (elsewhere)
			fprintf(stderr, "muh patch: warning: %s\n", prov);
	}
	if (!strcmp(kind, "moe-json")) {
		/* one file per (E, N, device), one entry per run (batch size M) */
		int written = 0, nodevice = 0;
		for (size_t i = 0; i < sr->n; i++) {
			long long E, N, M;
			const struct runbest *b = &sr->r[i];
			if (!b->best.nranked || field_ll(b->problem, "E", &E) || field_ll(b->problem, "N", &N) ||
			    field_ll(b->problem, "M", &M))
				continue;
			char devbuf[HW_NAME];
			const char *dev = device ? device : device_of(b->hw, devbuf, sizeof(devbuf));
			if (!dev || !dev[0]) {
				nodevice++; /* vLLM's file name needs one */
				continue;
			}
			int first = 1;
			for (size_t j = 0; j < i; j++) {
				long long E2, N2, M2;
				const struct runbest *c = &sr->r[j];
				if (c->best.nranked && !field_ll(c->problem, "E", &E2) &&
				    !field_ll(c->problem, "N", &N2) && !field_ll(c->problem, "M", &M2) &&
				    E2 == E && N2 == N && hw_same_device(device ? device : c->hw, dev))
					first = 0;
			}
			if (!first)
				continue; /* its group was written with an earlier run */
			patch_best best[64];
			long long v6[6];
			char vtxt[64][6][24];
			const char *vals[64][6];
			const struct runbest *from[64];
			char kept[64][512]; /* no decision stage: what ships, written ("": not so) */
			size_t nb = 0;
			for (size_t j = i; j < sr->n && nb < 64; j++) {
				long long E2, N2, M2;
				const struct runbest *c = &sr->r[j];
				if (!c->best.nranked || field_ll(c->problem, "E", &E2) ||
				    field_ll(c->problem, "N", &N2) || field_ll(c->problem, "M", &M2) ||
				    E2 != E || N2 != N || !hw_same_device(device ? device : c->hw, dev))
					continue;
				/* a size whose decision stage never ran writes what ships,
				 * when the spec names it: never a gain nobody proved */
				const char *wkey = nth_key(c, 0);
				baseline_pick ship;
				int shipped = 0;
				if (!c->best.decision) {
					store_run cr = runbest_run(c);
					muh_diag sd;
					int src = best_shipped(&cr, &ship, &shipped, &sd);
					if (!src && shipped && ship.valid) {
						wkey = ship.key;
					} else {
						if (src || (shipped && !ship.valid))
							fprintf(stderr, "muh patch: note: M=%lld: what ships cannot be read (%s); "
									"the search's best is written, undecided\n",
								M2, src ? sd.msg : ship.why);
						shipped = 0;
					}
				}
				int ok = 1;
				for (int k = 0; k < 6 && ok; k++) {
					ok = !field_ll(wkey, moe_names[k], &v6[k]);
					snprintf(vtxt[nb][k], sizeof(vtxt[nb][k]), "%lld", v6[k]);
					vals[nb][k] = vtxt[nb][k];
				}
				if (!ok)
					continue;
				/* a batch size tuned again (an edited spec is a new run): the
				 * latest run is the one written */
				size_t at = nb;
				for (size_t q = 0; q < nb; q++)
					if (best[q].batch == M2)
						at = q;
				if (at < nb) {
					fprintf(stderr, "muh patch: note: M=%lld: run %lld is written, not the earlier run %lld "
							"(--run picks one)\n",
						M2, (long long)c->run, (long long)from[at]->run);
					for (int k = 0; k < 6; k++) {
						memcpy(vtxt[at][k], vtxt[nb][k], sizeof(vtxt[at][k]));
						vals[at][k] = vtxt[at][k];
					}
				}
				best[at] = (patch_best){dev, M2, 6, moe_names, vals[at], NULL};
				from[at] = c;
				snprintf(kept[at], sizeof(kept[at]), "%.511s", shipped ? ship.key : "");
				if (at == nb)
					nb++;
			}
			if (!nb)
				continue;
			for (size_t q = 0; q < nb; q++) {
				if (!kept[q][0])
					say_inert(from[q], nth_key(from[q], 0), "written as measured: JSON holds no comment");
			}
			char *json, name[512], path[4096];
			int rc = patch_moe_json(best, nb, &json, d);
			if (rc)
				return rc;
			patch_moe_filename(name, sizeof(name), E, N, dev, dtype);
			snprintf(path, sizeof(path), "%s/%s", out ? out : ".", name);
			rc = write_out(path, json, d);
			free(json);
			if (rc)
				return rc;
			printf("wrote %s (%zu batch sizes)\n", path, nb);
			printf("  %s\n", prov);
			for (size_t q = 0; q < nb; q++)
				say_decision(from[q], best[q].batch, kept[q][0] ? kept[q] : NULL);
			if (elsewhere) { /* vLLM reads every key as a batch size: the note goes beside */
				char ppath[4200];
				snprintf(ppath, sizeof(ppath), "%s.provenance.json", path);
				cJSON *pj = cJSON_CreateObject();
				cJSON_AddStringToObject(pj, "file", name);
				cJSON_AddStringToObject(pj, "written_by", "muh patch --emit moe-json --force");
				cJSON_AddStringToObject(pj, "provenance", prov);
				cJSON_AddStringToObject(pj, "written_for_device", dev);
				if (dtype)
					cJSON_AddStringToObject(pj, "written_for_dtype", dtype);
				cJSON_AddStringToObject(pj, "store", eo->db);
				cJSON_AddFalseToObject(pj, "measured_on_target");
				char *pt = cJSON_Print(pj);
				cJSON_Delete(pj);
				rc = pt ? write_out(ppath, pt, d) : MUH_ENOMEM;
				free(pt);
				if (rc)
					return rc;
				printf("  wrote %s: where these numbers came from\n", ppath);
			}
			say_reads(eo, name);
			written++;
		}
		if (!written && nodevice)
			return diag_errorf(d, "%d run(s) with E, N and M name no device (their hardware profile "
					      "is empty): give --device NAME, as vLLM's file name needs one "
					      "(E=..,N=..,device_name=NAME.json)", nodevice);
		if (!written)
			return diag_errorf(d, "no run has E, N and M problem symbols and the six fused-MoE "
					      "params (BLOCK_SIZE_M/N/K, GROUP_SIZE_M, num_warps, "
					      "num_stages)");
		return MUH_OK;
	}
	if (!strcmp(kind, "header")) {
		/* one block per device: the fastest result among its runs */
		patch_best best[64], def;
		static const char *names[64][64], *notes[65][64], *vals[64][64], *dvals[64];
		static char nbuf[64][64][64], vbuf[64][64][64], dbuf[64][64], notebuf[65][64][240];
		size_t nb = 0;
		muh_spec *spec = NULL;
		const struct runbest *specrun = NULL;
		/* one configuration per device: runs of other specs or problem
		 * instances cannot share a header (a C header has no problem
		 * guard); the store's runs on different devices can */
		const struct runbest *r0 = NULL;
		int64_t brun[64]; /* best[k]'s run */
		for (size_t i = 0; i < sr->n; i++) {
			const struct runbest *b = &sr->r[i];
			if (!b->best.nranked)
				continue;
			if (!r0) {
				r0 = b;
				continue;
			}
			int other_spec = strcmp(r0->spec_path ? r0->spec_path : "", b->spec_path ? b->spec_path : "");
			if (other_spec || strcmp(r0->problem ? r0->problem : "", b->problem ? b->problem : ""))
				return diag_errorf(d, "run %lld (%s, %s) and run %lld (%s, %s) tuned a different %s: a "
						      "header holds one configuration per device; pick a run with --run "
						      "N (muh report %s lists them)",
						   (long long)r0->run, r0->spec_path, r0->problem, (long long)b->run,
						   b->spec_path, b->problem, other_spec ? "spec" : "problem instance",
						   eo->db);
		}
		for (size_t i = 0; i < sr->n && nb < 64; i++) {
			const struct runbest *b = &sr->r[i];
			static char devbufs[64][HW_NAME];
			const char *dev = device ? device : device_of(b->hw, devbufs[nb], sizeof(devbufs[nb]));
			if (!b->best.nranked)
				continue;
			size_t k;
			for (k = 0; k < nb && strcmp(best[k].device, dev); k++)
				;
			if (k < nb) { /* first run per device wins; --run chooses */
				fprintf(stderr, "muh patch: note: run %lld is on %s too; the header takes run %lld's "
						"best (--run picks)\n",
					(long long)b->run, dev[0] ? dev : "the host", (long long)brun[k]);
				continue;
			}
			int np = key_split(nth_key(b, 0), nbuf[nb], names[nb], vbuf[nb], vals[nb], 64);
			inert_notes(&b->best, nth_key(b, 0), names[nb], np, notebuf[nb], notes[nb]);
			best[nb] = (patch_best){dev, 0, np, names[nb], vals[nb], notes[nb]};
			brun[nb] = b->run;
			if (!spec) {
				muh_diag sd;
				if (runbest_spec(b, &spec, &sd))
					spec = NULL;
				else
					specrun = b;
			}
			nb++;
		}
		if (!nb)
			return diag_errorf(d, "the store has no ok result");
		int have_def = 0;
		/* the run's default key (its problem instance's, best.c), split as
		 * the key and the -D define write it */
		static char dnbuf[64][64];
		static const char *dnames[64];
		if (spec && specrun->best.default_key && (int)spec->nparams == best[0].nparams &&
		    key_split(specrun->best.default_key, dnbuf, dnames, dbuf, dvals, 64) == best[0].nparams) {
			inert_notes(&specrun->best, specrun->best.default_key, best[0].names, best[0].nparams,
				    notebuf[64], notes[64]);
			def = (patch_best){"default", 0, best[0].nparams, best[0].names, dvals, notes[64]};
			have_def = 1;
		}
		char *text;
		int rc = patch_c_header(best, nb, have_def ? &def : NULL, "MUH_TUNED_H", &text, d);
		spec_free(spec);
		if (rc)
			return rc;
		/* where the numbers came from, first in the file ("*" "/" cannot end it early) */
		for (char *p = prov; (p = strstr(p, "*/")); )
			p[1] = '_';
		size_t hl = strlen(text) + strlen(prov) + 64;
		char *full = malloc(hl);
		if (!full) {
			free(text);
			return MUH_ENOMEM;
		}
		snprintf(full, hl, "/* muh: %s */\n%s", prov, text);
		free(text);
		rc = emit_text(out, full, d);
		free(full);
		if (!rc && out) {
			const char *base = strrchr(out, '/');
			printf("wrote %s\n  %s\n", out, prov);
			say_reads(eo, base ? base + 1 : out);
		}
		return rc;
	}
	if (!strcmp(kind, "triton-configs")) {
		const struct runbest *b = first_ranked(sr, d);
		if (!b)
			return MUH_EINPUT;
		size_t n = (size_t)topk < b->best.nranked ? (size_t)topk : b->best.nranked;
		static patch_best best[256];
		static const char *names[256][32], *notes[256][32], *vals[256][32];
		static char nbuf[256][32][64], vbuf[256][32][64], notebuf[256][32][240];
		for (size_t i = 0; i < n && i < 256; i++) {
			int np = key_split(nth_key(b, i), nbuf[i], names[i], vbuf[i], vals[i], 32);
			inert_notes(&b->best, nth_key(b, i), names[i], np, notebuf[i], notes[i]);
			best[i] = (patch_best){b->hw, 0, np, names[i], vals[i], notes[i]};
		}
		char *text;
		int rc = patch_triton_configs(best, n, "", &text, d);
		if (rc)
			return rc;
		rc = emit_text(out, text, d);
		free(text);
		return rc;
	}
	return diag_errorf(d, "unknown --emit '%s'; known: moe-json, header, triton-configs", kind);
}

/* The knobs of --into TREE (scanned now) or --scan FILE, as one array. */
static int emit_knobs(const struct emitopt *eo, muh_surface **surf, patch_knobs **saved, const muh_knob ***arr,
		      size_t *n, muh_diag *d)
{
	*arr = NULL;
	*n = 0;
	int rc = eo->scan ? patch_knobs_load(eo->scan, saved, d) : scan_tree(eo->into, NULL, surf, d);
	if (rc)
		return rc;
	size_t cnt = *saved ? patch_knobs_count(*saved) : scan_nknobs(*surf);
	*arr = calloc(cnt ? cnt : 1, sizeof(**arr));
	if (!*arr)
		return MUH_ENOMEM;
	for (size_t i = 0; i < cnt; i++)
		(*arr)[i] = *saved ? patch_knobs_at(*saved, i) : scan_knob(*surf, i);
	*n = cnt;
	return MUH_OK;
}

static const muh_knob *find_knob(const patch_knobs *saved, const muh_surface *surf, const char *ref,
				 const char *where, const char *tree, muh_diag *d);

/* --emit triton-configs --into TREE --knob ID: the knob's autotune list with
 * the run's top K (valid on --hw, when given) written into it, as the value
 * of one --set, for the diff/apply path of a tree. */
static int autotune_into(const struct storeread *sr, const struct emitopt *eo, muh_surface *surf,
			 patch_knobs *saved, struct setarg *set, char **value, muh_diag *d)
{
	const struct runbest *b = first_ranked(sr, d);
	if (!b)
		return MUH_EINPUT;
	size_t want = (size_t)eo->topk, n = 0;
	const char **keys = calloc(want ? want : 1, sizeof(char *));
	transfer_report *tr = NULL;
	muh_hw *hw = NULL;
	char valid_on[200] = "";
	int rc = keys ? MUH_OK : MUH_ENOMEM;
	if (!rc && eo->hw) {
		hw = malloc(sizeof(*hw));
		rc = hw ? hw_resolve(eo->hw, hw, d) : MUH_ENOMEM;
		if (!rc)
			rc = transfer_build(eo->db, hw, 0, b->run, &tr, d);
		for (size_t i = 0; !rc && tr->nruns && i < tr->runs[0].n && n < want; i++)
			if (tr->runs[0].e[i].verdict == TRANSFER_VALID)
				keys[n++] = tr->runs[0].e[i].key;
		if (!rc) {
			fprintf(stderr, "muh patch: %zu of run %lld's %zu ok configs are valid on %s; writing the "
					"fastest %zu (measured on %s, not on %s)\n",
				tr->runs[0].nvalid, (long long)b->run, b->best.nranked, hw->name, n, b->hw, hw->name);
			snprintf(valid_on, sizeof(valid_on), "; valid on %s's limits (muh transfer), not measured there",
				 hw->name);
		}
		if (!rc && !n)
			rc = diag_errorf(d, "no config of run %lld is valid on %s (see `muh transfer %s --hw %s`)",
					 (long long)b->run, hw->name, eo->db, eo->hw);
	} else {
		for (size_t i = 0; !rc && i < b->best.nranked && n < want; i++)
			keys[n++] = nth_key(b, i);
	}
	const muh_knob *k = NULL;
	if (!rc) {
		k = find_knob(saved, surf, eo->knob, eo->scan ? eo->scan : eo->into, eo->into, d);
		if (!k)
			rc = MUH_EINPUT;
	}
	char *text = NULL;
	size_t len = 0;
	if (!rc) {
		char path[4200];
		snprintf(path, sizeof(path), "%s/%s", eo->into, k->file);
		text = file_read(path, &len);
		if (!text) {
			diag_at(d, path, 0, 0, NULL);
			rc = diag_errorf(d, "cannot read the file of knob %s: %s", k->id, strerror(errno));
		}
	}
	patch_best *best = calloc(n ? n : 1, sizeof(*best));
	const char *(*names)[32] = calloc(n ? n : 1, sizeof(*names));
	const char *(*vals)[32] = calloc(n ? n : 1, sizeof(*vals));
	char (*nbuf)[32][64] = calloc(n ? n : 1, sizeof(*nbuf));
	char (*vbuf)[32][64] = calloc(n ? n : 1, sizeof(*vbuf));
	if (!rc && (!best || !names || !vals || !nbuf || !vbuf))
		rc = MUH_ENOMEM;
	for (size_t i = 0; !rc && i < n; i++) {
		int np = key_split(keys[i], nbuf[i], names[i], vbuf[i], vals[i], 32);
		best[i] = (patch_best){b->hw, 0, np, names[i], vals[i], NULL};
		say_inert(b, keys[i], "written as measured into the list");
	}
	if (!rc) {
		char comment[900];
		snprintf(comment, sizeof(comment), "muh: the %s %zu of run %lld in %s, measured on %s%s",
			 eo->hw ? "fastest valid" : "top", n, (long long)b->run, eo->db, b->hw, valid_on);
		rc = patch_autotune_list(text, len, k, best, n, eo->extend, comment, value, d);
	}
	if (!rc) {
		snprintf(set->id, sizeof(set->id), "%s", k->id);
		set->alt = -1;
		set->value = *value;
		if (!eo->extend && k->nalts)
			fprintf(stderr, "muh patch: the %d configs of %s:%d are replaced by %zu (--extend keeps them)\n",
				k->nalts, k->file, k->line, n);
		if (k->verdict != SCAN_LIVE)
			fprintf(stderr, "muh patch: note: the scan says this list is %s: %s\n",
				scan_verdict_name(k->verdict), k->why ? k->why : "");
	}
	free(best);
	free(names);
	free(vals);
	free(nbuf);
	free(vbuf);
	free(text);
	free(keys);
	free(hw);
	transfer_free(tr);
	return rc;
}

/* --rollback / --resume DIR: the journal of an apply, undone or finished. */
static int recover(const char *dir, int rollback, int json)
{
	muh_diag d;
	diag_clear(&d);
	patch_recovery r;
	int rc = rollback ? patch_rollback(dir, &r, &d) : patch_resume(dir, &r, &d);
	if (rc)
		return cli_fail(rc, &d);
	if (json) {
		printf("{\"files\": %d, \"original\": %d, \"patched\": %d, \"changed\": %d, "
		       "\"tmp_removed\": %d, \"incomplete\": %s}\n",
		       r.files, r.original, r.patched, r.changed, r.tmp_removed,
		       r.incomplete ? "true" : "false");
	} else if (rollback) {
		printf("rolled back: %d file(s) restored; all %d file(s) of the apply hold the "
		       "originals (%d temporary file(s) removed)\n",
		       r.changed, r.files, r.tmp_removed);
	} else if (r.incomplete) {
		printf("nothing to resume: the apply stopped before its temporary files were "
		       "complete, so before any rename; all %d file(s) hold the originals (%d "
		       "temporary file(s) removed); run the patch again\n",
		       r.files, r.tmp_removed);
	} else {
		printf("resumed: %d file(s) renamed; all %d file(s) of the apply hold the patched "
		       "content\n",
		       r.changed, r.files);
	}
	return EXIT_OK;
}

/* The knob that ref names: its id, or else its name when exactly one knob
 * has it (ids stay the way to pick among several). NULL with d saying why
 * (where: the scan file or tree the knobs came from). */
static const muh_knob *find_knob(const patch_knobs *saved, const muh_surface *surf, const char *ref,
				 const char *where, const char *tree, muh_diag *d)
{
	const muh_knob *k = saved ? patch_knobs_find(saved, ref) : scan_find(surf, ref);
	if (k)
		return k;
	size_t n = saved ? patch_knobs_count(saved) : scan_nknobs(surf), hits = 0;
	const muh_knob *hit = NULL;
	char list[600] = "";
	for (size_t i = 0; i < n; i++) {
		const muh_knob *c = saved ? patch_knobs_at(saved, i) : scan_knob(surf, i);
		if (!c->name || strcmp(c->name, ref))
			continue;
		hit = c;
		size_t l = strlen(list);
		if (hits++ < 6 && l + 1 < sizeof(list))
			snprintf(list + l, sizeof(list) - l, "%s%s (%s:%d)", hits > 1 ? ", " : "", c->id, c->file,
				 c->line);
	}
	if (hits == 1)
		return hit;
	if (hits > 1)
		diag_errorf(d, "%zu knobs are named '%s' in %s; give the id of one: %s%s", hits, ref, where, list,
			    hits > 6 ? ", ..." : "");
	else
		diag_errorf(d, "no knob '%s' in %s: give a knob's id or its name (`muh scan %s --json` lists both)", ref,
			    where, tree);
	return NULL;
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
	static char fromvals[MAX_SETS][128];
	struct setarg sets[MAX_SETS];
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
	struct storeread sr;
	memset(&sr, 0, sizeof(sr));
	muh_surface *surf = NULL;
	patch_knobs *saved = NULL;
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
		struct emitopt eo = {.db = from, .out = out, .device = device, .dtype = dtype, .into = into,
				     .scan = scanfile, .knob = knob, .hw = hwref, .topk = (int)topk,
				     .force = force, .extend = extend};
		int rc = read_store(from, only, &sr, &d);
		if (!rc && (into || scanfile))
			rc = emit_knobs(&eo, &surf, &saved, &eknobs, &eo.nknobs, &d);
		eo.knobs = eknobs;
		if (!rc && into_tree) {
			rc = autotune_into(&sr, &eo, surf, saved, &sets[0], &listvalue, &d);
			nsets = rc ? 0 : 1;
		} else if (!rc) {
			rc = emit(emitkind, &sr, &eo, &d);
		}
		sr_free(&sr);
		free(eknobs);
		if (rc || !into_tree) {
			scan_free(surf);
			patch_knobs_free(saved);
			free(listvalue);
			return rc ? cli_fail(rc, &d) : EXIT_OK;
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
	struct engine_runs *E = calloc(1, sizeof(*E));
	if (!E)
		return cli_fail(MUH_ENOMEM, NULL);
	if (from && !into_tree) {
		int rc = read_store(from, only, &sr, &d);
		/* engine runs: the winner goes into the deployment file whole */
		muh_store *st = NULL;
		if (!rc)
			rc = store_open_ro(from, &st, &d);
		if (!rc) {
			E->tree = argv[optind];
			E->force = force;
			E->only = only;
			E->st = st;
			E->d = &d;
			int frc = store_foreach_run(st, engine_run_cb, E);
			rc = E->rc ? E->rc : frc;
			store_close(st);
		}
		if (!rc && (!E->n && !E->skipped && !E->unproven))
			rc = sets_from_store(&sr, sets, &nsets, fromvals, force, &E->unproven, &d);
		else if (!rc) { /* knob-mapped runs beside engine runs: both, when there are */
			muh_diag dd;
			diag_clear(&dd);
			if (sets_from_store(&sr, sets, &nsets, fromvals, force, &E->unproven, &dd) && nsets)
				rc = MUH_EINPUT, d = dd;
		}
		sr_free(&sr);
		if (rc) {
			for (int k = 0; k < E->n; k++)
				free(E->w[k].text);
			free(E);
			return cli_fail(rc, &d);
		}
	}
	if (!nsets && !E->n && E->unproven) {
		if (E->unproven > 1) /* one run's line said it already */
			fprintf(stderr, "muh patch: nothing to write: no proven gain in %d runs\n", E->unproven);
		free(E);
		return EXIT_FINDING;
	}
	if (!nsets && !E->n && E->skipped) {
		free(E);
		fprintf(stderr, "muh patch: nothing to write: no engine run has a variant that met its SLOs\n");
		return EXIT_FINDING;
	}
	if (!nsets && !E->n) {
		free(E);
		return cli_usage_error("patch", "nothing to do: give --set ID=VALUE (ids from `muh "
						"scan TREE --json`) or --from DB");
	}
	const char *tree = into_tree ? into : argv[optind];
	struct stat st;
	if (stat(tree, &st) || !S_ISDIR(st.st_mode)) {
		for (int k = 0; k < E->n; k++)
			free(E->w[k].text);
		free(E);
		free(listvalue);
		scan_free(surf);
		patch_knobs_free(saved);
		fprintf(stderr, "%s: error: not a directory (expected an engine tree)\n", tree);
		return EXIT_USAGE;
	}
	int rc = MUH_OK;
	if (surf || saved)
		; /* scanned for --into already */
	else if (scanfile)
		rc = patch_knobs_load(scanfile, &saved, &d);
	else if (nsets) /* engine winners need no scan: their file is rewritten whole */
		rc = scan_tree(tree, NULL, &surf, &d);
	if (rc) {
		for (int k = 0; k < E->n; k++)
			free(E->w[k].text);
		free(E);
		return cli_fail(rc, &d);
	}
	muh_patch *p = patch_plan_new(tree);
	if (!p)
		rc = MUH_ENOMEM;
	else
		patch_plan_follow_symlinks(p, follow);
	char unproven[4096] = ""; /* the diff's preamble for forced winners (git apply skips it) */
	for (int k = 0; k < E->n && !rc; k++) {
		rc = patch_plan_set_file(p, E->w[k].rel, E->w[k].text, E->w[k].len, &d);
		if (!json)
			fprintf(stderr, "muh patch: run %lld: %s %s (%s) into %s\n", (long long)E->w[k].run,
				E->w[k].unproven ? "the search's best" : "the proven winner", E->w[k].key, E->w[k].value,
				E->w[k].rel);
		if (E->w[k].unproven) {
			snprintf(unproven + strlen(unproven), sizeof(unproven) - strlen(unproven),
				 "# muh patch: run %lld: UNPROVEN, written with --force: %.900s\n", (long long)E->w[k].run,
				 E->w[k].why);
			if (!json)
				fprintf(stderr, "muh patch: run %lld: written with --force, NOT a proven gain: %s\n",
					(long long)E->w[k].run, E->w[k].why);
		}
		/* a gain inside the run's noise is a tie (as muh tune and muh report
		 * call it): the diff then shows what would change, not a proven gain */
		else if (!json && best_is_tie(E->w[k].gain, E->w[k].noise))
			fprintf(stderr,
				"muh patch: run %lld: note: the winner is %.3fx the defaults, inside the run's noise "
				"(%.1f%%): a tie on the machine that measured it, not a proven gain\n",
				(long long)E->w[k].run, E->w[k].gain, 100 * E->w[k].noise);
	}
	for (int k = 0; k < E->n; k++)
		free(E->w[k].text);
	free(E);
	for (int i = 0; i < nsets && !rc; i++) {
		const muh_knob *k = find_knob(saved, surf, sets[i].id, scanfile ? scanfile : tree, tree, &d);
		if (!k) {
			rc = MUH_EINPUT;
			break;
		}
		/* a spec tunes a Python bool as 0/1; the source says False/True */
		rc = patch_plan_set(p, k, sets[i].alt, patch_value_text(k, sets[i].value), force, &d);
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
	if (!rc && unproven[0] && diff[0]) { /* the mark travels with the diff */
		char *marked = malloc(strlen(unproven) + strlen(diff) + 1);
		if (!marked) {
			rc = MUH_ENOMEM;
		} else {
			strcpy(marked, unproven);
			strcat(marked, diff);
			free(diff);
			diff = marked;
		}
	}
	if (!rc && apply && patch_nchanged(p)) {
		if (backup)
			snprintf(bdir, sizeof(bdir), "%s", backup);
		else {
			char stamp[32];
			time_t now = time(NULL);
			strftime(stamp, sizeof(stamp), "%Y%m%d-%H%M%S", gmtime(&now));
			snprintf(bdir, sizeof(bdir), "%s/.muh-backup/%s", tree, stamp);
			/* two applies in one second: each its own folder and journal */
			for (int k = 2; !lstat(bdir, &st) && k < 1000; k++)
				snprintf(bdir, sizeof(bdir), "%s/.muh-backup/%s-%d", tree, stamp, k);
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
			if (unproven[0])
				cJSON_AddStringToObject(o, "unproven", unproven);
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
	free(listvalue);
	patch_plan_free(p);
	scan_free(surf);
	patch_knobs_free(saved);
	if (rc)
		return cli_fail(rc, &d);
	return EXIT_OK;
}

MUH_COMMAND(patch, 70, "write knob values back: a diff git applies, or in place with a backup");
