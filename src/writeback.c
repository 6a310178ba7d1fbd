/*
 * writeback.c — write-back from a store (see writeback.h).
 *
 * Owns: which values of a store's runs go back into an engine tree (knob
 * values, an engine run's deployment file, the emitters' config files),
 * where the numbers came from (provenance), and the one patch plan that
 * turns them into a diff or an apply. The ranking is best.h's, the
 * decision's verdict best_decided's, the text of a file patch.h's and
 * engine_launch_text's: this file only picks and assembles.
 *
 * Must never: print, exit, or write a run whose decision proved no gain
 * unless the caller forces it (and then marked UNPROVEN). Lines for a
 * person go to the caller's observer.
 */
#include <cjson/cJSON.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "muh/best.h"
#include "muh/engine.h"
#include "muh/eval.h"
#include "muh/fileio.h"
#include "muh/hw.h"
#include "muh/muh.h"
#include "muh/objective.h"
#include "muh/patch.h"
#include "muh/scan.h"
#include "muh/space.h"
#include "muh/spec.h"
#include "muh/store.h"
#include "muh/transfer.h"
#include "muh/writeback.h"

/* Gives ob one line for a person (printf-style). */
static void say(const writeback_observer *ob, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void say(const writeback_observer *ob, const char *fmt, ...)
{
	if (!ob || !ob->note)
		return;
	char line[4096];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	ob->note(ob->ctx, line);
}

int writeback_parse_set(const char *arg, writeback_set *s)
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

int writeback_write_file(const char *path, const char *text, muh_diag *d)
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

/* Room for one more element in *arr (n used, *cap allocated, doubled from
 * first): 0, or MUH_ENOMEM with *arr untouched. */
static int grow(void *arr, size_t *cap, size_t n, size_t elem, size_t first)
{
	void **a = arr;
	if (n < *cap)
		return 0;
	size_t nc = *cap ? 2 * *cap : first;
	void *p = realloc(*a, nc * elem);
	if (!p)
		return MUH_ENOMEM;
	*a = p;
	*cap = nc;
	return 0;
}

static int sr_run(void *ud, const store_run *run)
{
	writeback_runs *sr = ud;
	if (sr->only && run->id != sr->only)
		return 0;
	if (grow(&sr->r, &sr->cap, sr->n, sizeof(*sr->r), 8))
		return MUH_ENOMEM;
	writeback_run *b = &sr->r[sr->n++];
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
static store_run runbest_run(const writeback_run *b)
{
	return (store_run){.id = b->run, .instance = b->instance, .spec_path = b->spec_path, .problem = b->problem,
			   .backend = b->backend,
			   .hw_profile = b->hw, .spec_text = b->spec_text, .spec_abs = b->spec_abs};
}

void writeback_runs_free(writeback_runs *sr)
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

const char *writeback_run_key(const writeback_run *b, size_t i)
{
	return b->best.ranked[i].key;
}

int writeback_runs_read(const char *db, int64_t only, writeback_runs *sr, muh_diag *d)
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
static int runbest_spec(const writeback_run *b, muh_spec **s, muh_diag *d)
{
	store_run r = runbest_run(b);
	return store_run_spec(&r, s, d);
}

int writeback_sets_from_store(const writeback_runs *sr, writeback_set *sets, int *nsets, char vals[][128],
			      int force, int *unproven, const writeback_observer *ob, muh_diag *d)
{
	for (size_t i = 0; i < sr->n; i++) {
		const writeback_run *b = &sr->r[i];
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
		const char *wkey = writeback_run_key(b, 0);
		if (b->best.decision && best_decided(&b->best) != 1) {
			if (!force) {
				say(ob, "run %lld: no proven gain: %.1000s; its knobs are not written "
					"(--force writes the search's best anyway, marked as unproven)",
					(long long)b->run, b->best.decision->why);
				(*unproven)++;
				spec_free(s);
				continue;
			}
			if (b->best.search_key)
				wkey = b->best.search_key;
			say(ob, "run %lld: written with --force, NOT a proven gain: %.1000s",
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
			writeback_set a;
			char arg[512], v[128];
			if (space_key_value(wkey, s->params[p].name, v, sizeof(v)))
				continue;
			snprintf(arg, sizeof(arg), "%s=%s", kv->value, v);
			for (size_t k = 0; k < nin; k++) {
				char note[240];
				if (strcmp(in[k].name, s->params[p].name))
					continue;
				best_inert_note(&in[k], note, sizeof(note));
				say(ob, "note: %s (knob %s) of run %lld's best, written as measured, %s",
					in[k].name, kv->value, (long long)b->run, note);
			}
			if (writeback_parse_set(arg, &a)) {
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
			if (*nsets == WRITEBACK_MAX_SETS) {
				spec_free(s);
				return diag_errorf(d, "more than %d knobs", WRITEBACK_MAX_SETS);
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
static int engine_winner(muh_store *st, const store_run *run, const char *tree, int force, writeback_engine_win *w,
			 enum engine_outcome *out, const writeback_observer *ob, muh_diag *d)
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
			say(ob, "run %lld: the spec's folder is gone; its deployment file is read from %s",
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

/* The walk of writeback_engine_winners over a store's runs. */
struct engine_walk {
	const char *tree;
	int force;
	int64_t only;
	muh_store *st;
	writeback_engine_wins *E;
	const writeback_observer *ob;
	int rc;
	muh_diag *d;
};

static int engine_run_cb(void *ud, const store_run *run)
{
	struct engine_walk *W = ud;
	writeback_engine_wins *E = W->E;
	if ((W->only && run->id != W->only) || !run->backend || strcmp(run->backend, "engine"))
		return 0;
	if (E->n == WRITEBACK_MAX_SETS)
		return W->rc = diag_errorf(W->d, "more than %d engine runs: pick one with --run", WRITEBACK_MAX_SETS);
	enum engine_outcome out;
	int rc = engine_winner(W->st, run, W->tree, W->force, &E->w[E->n], &out, W->ob, W->d);
	if (rc)
		return W->rc = rc;
	if (out == ENGINE_UNPROVEN) {
		say(W->ob, "run %lld: no proven gain: %s; nothing written (--force writes the search's "
			   "best anyway, marked as unproven)",
		    (long long)run->id, E->w[E->n].why);
		E->unproven++;
		return 0;
	}
	if (out == ENGINE_NONE) {
		say(W->ob, "run %lld: no variant met its objective's SLOs; nothing to write", (long long)run->id);
		E->skipped++;
		return 0;
	}
	for (int k = 0; k < E->n; k++)
		if (!strcmp(E->w[k].rel, E->w[E->n].rel)) {
			free(E->w[E->n].text);
			E->w[E->n].text = NULL;
			return W->rc = diag_errorf(W->d, "runs %lld and %lld both tune %s: pick one with --run",
						   (long long)E->w[k].run, (long long)run->id, E->w[k].rel);
		}
	E->n++;
	return 0;
}

int writeback_engine_winners(const char *db, const char *tree, int64_t only, int force, writeback_engine_wins *E,
			     const writeback_observer *ob, muh_diag *d)
{
	memset(E, 0, sizeof(*E));
	muh_store *st;
	int rc = store_open_ro(db, &st, d);
	if (rc)
		return rc;
	struct engine_walk W = {.tree = tree, .force = force, .only = only, .st = st, .E = E, .ob = ob, .d = d};
	int frc = store_foreach_run(st, engine_run_cb, &W);
	store_close(st);
	return W.rc ? W.rc : frc;
}

void writeback_engine_wins_free(writeback_engine_wins *E)
{
	for (int k = 0; E && k < E->n; k++) {
		free(E->w[k].text);
		E->w[k].text = NULL;
	}
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

/* Says through ob which params of run b's variant key did not change the
 * compiled artifact, for a write that cannot carry a comment (what: where
 * the values go). */
static void say_inert(const writeback_run *b, const char *key, const char *what, const writeback_observer *ob)
{
	best_inert in[64];
	size_t n = best_inert_params(&b->best, key, in, 64);
	for (size_t k = 0; k < n; k++) {
		char note[240];
		best_inert_note(&in[k], note, sizeof(note));
		say(ob, "note: %s of run %lld's best (%s) %s", in[k].name, (long long)b->run, what, note);
	}
}

static const char *const moe_names[] = {"BLOCK_SIZE_M", "BLOCK_SIZE_N", "BLOCK_SIZE_K",
					"GROUP_SIZE_M", "num_warps",    "num_stages"};

/* Writes text to path (atomically); with path NULL, gives it to the
 * observer to show instead. */
static int emit_text(enum writeback_kind kind, const char *path, const char *text, const writeback_observer *ob,
		     muh_diag *d)
{
	if (!path) {
		writeback_file f = {.kind = kind, .text = text};
		if (ob && ob->written)
			ob->written(ob->ctx, &f);
		return MUH_OK;
	}
	return writeback_write_file(path, text, d);
}

/* The dtype run b was measured with: its spec's target.dtype, else a
 * problem symbol dtype; "" when the store does not say. */
static void run_dtype(const writeback_run *b, char *buf, size_t n)
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
static int provenance(const writeback_runs *sr, const writeback_emit_opts *o, char *prov, size_t pn,
		      int *elsewhere, muh_diag *d)
{
	char seen[1024] = "", dts[256] = "";
	int dev_ok = !o->device, dt_ok = !o->dtype;
	*elsewhere = 0;
	for (size_t i = 0; i < sr->n; i++) {
		const writeback_run *b = &sr->r[i];
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

/* Whether the engine of --into/--scan reads a file called name:
 * patch_engine_reads' words in why, or NULL when no scan says (no knobs). */
static const char *reads_of(const writeback_emit_opts *o, const char *name, char *why, size_t n)
{
	if (!o->knobs)
		return NULL;
	patch_engine_reads(o->knobs, o->nknobs, name, why, n);
	return why;
}

/* The first run of sr with an ok result (saying which one, when the store
 * holds several and --run did not pick); NULL with d saying so when none. */
static const writeback_run *first_ranked(const writeback_runs *sr, const writeback_observer *ob, muh_diag *d)
{
	for (size_t i = 0; i < sr->n; i++) {
		if (!sr->r[i].best.nranked)
			continue;
		if (sr->n > 1 && !sr->only)
			say(ob, "%zu runs in the store; using run %lld (--run picks)", sr->n, (long long)sr->r[i].run);
		return &sr->r[i];
	}
	diag_errorf(d, "the store has no ok result");
	return NULL;
}

/* Gives the observer a file written (or the reads line of one). */
static void tell(const writeback_observer *ob, const writeback_file *f)
{
	if (ob && ob->written)
		ob->written(ob->ctx, f);
}

/* The reads line of the file called name, for the observer. */
static void tell_reads(const writeback_observer *ob, const writeback_emit_opts *eo, enum writeback_kind kind,
		       const char *name)
{
	char why[1200];
	writeback_file f = {.kind = kind, .has_reads = 1, .reads = reads_of(eo, name, why, sizeof(why))};
	tell(ob, &f);
}

int writeback_emit(const char *kind, const writeback_runs *sr, const writeback_emit_opts *eo,
		   const writeback_observer *ob, muh_diag *d)
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
			say(ob, "warning: %s", prov);
	}
	if (!strcmp(kind, "moe-json")) {
		/* one file per (E, N, device), one entry per run (batch size M) */
		int written = 0, nodevice = 0;
		for (size_t i = 0; i < sr->n; i++) {
			long long E, N, M;
			const writeback_run *b = &sr->r[i];
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
				const writeback_run *c = &sr->r[j];
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
			const writeback_run *from[64];
			char kept[64][512]; /* no decision stage: what ships, written ("": not so) */
			size_t nb = 0;
			for (size_t j = i; j < sr->n && nb < 64; j++) {
				long long E2, N2, M2;
				const writeback_run *c = &sr->r[j];
				if (!c->best.nranked || field_ll(c->problem, "E", &E2) ||
				    field_ll(c->problem, "N", &N2) || field_ll(c->problem, "M", &M2) ||
				    E2 != E || N2 != N || !hw_same_device(device ? device : c->hw, dev))
					continue;
				/* a size whose decision stage never ran writes what ships,
				 * when the spec names it: never a gain nobody proved */
				const char *wkey = writeback_run_key(c, 0);
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
							say(ob, "note: M=%lld: what ships cannot be read (%s); "
									"the search's best is written, undecided",
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
					say(ob, "note: M=%lld: run %lld is written, not the earlier run %lld "
							"(--run picks one)",
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
					say_inert(from[q], writeback_run_key(from[q], 0), "written as measured: JSON holds no comment",
						  ob);
			}
			char *json, name[512], path[4096];
			int rc = patch_moe_json(best, nb, &json, d);
			if (rc)
				return rc;
			patch_moe_filename(name, sizeof(name), E, N, dev, dtype);
			snprintf(path, sizeof(path), "%s/%s", out ? out : ".", name);
			rc = writeback_write_file(path, json, d);
			free(json);
			if (rc)
				return rc;
			writeback_moe_size sizes[64];
			for (size_t q = 0; q < nb; q++)
				sizes[q] = (writeback_moe_size){best[q].batch, from[q], kept[q][0] ? kept[q] : NULL};
			writeback_file wf = {.kind = WRITEBACK_MOE_JSON, .path = path, .provenance = prov,
					     .sizes = sizes, .nsizes = nb};
			tell(ob, &wf);
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
				rc = pt ? writeback_write_file(ppath, pt, d) : MUH_ENOMEM;
				free(pt);
				if (rc)
					return rc;
				writeback_file pf = {.kind = WRITEBACK_MOE_JSON, .provenance_path = ppath};
				tell(ob, &pf);
			}
			tell_reads(ob, eo, WRITEBACK_MOE_JSON, name);
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
		const writeback_run *specrun = NULL;
		/* one configuration per device: runs of other specs or problem
		 * instances cannot share a header (a C header has no problem
		 * guard); the store's runs on different devices can */
		const writeback_run *r0 = NULL;
		int64_t brun[64]; /* best[k]'s run */
		for (size_t i = 0; i < sr->n; i++) {
			const writeback_run *b = &sr->r[i];
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
			const writeback_run *b = &sr->r[i];
			static char devbufs[64][HW_NAME];
			const char *dev = device ? device : device_of(b->hw, devbufs[nb], sizeof(devbufs[nb]));
			if (!b->best.nranked)
				continue;
			size_t k;
			for (k = 0; k < nb && strcmp(best[k].device, dev); k++)
				;
			if (k < nb) { /* first run per device wins; --run chooses */
				say(ob, "note: run %lld is on %s too; the header takes run %lld's "
						"best (--run picks)",
					(long long)b->run, dev[0] ? dev : "the host", (long long)brun[k]);
				continue;
			}
			int np = key_split(writeback_run_key(b, 0), nbuf[nb], names[nb], vbuf[nb], vals[nb], 64);
			inert_notes(&b->best, writeback_run_key(b, 0), names[nb], np, notebuf[nb], notes[nb]);
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
		rc = emit_text(WRITEBACK_HEADER, out, full, ob, d);
		free(full);
		if (!rc && out) {
			const char *base = strrchr(out, '/');
			writeback_file wf = {.kind = WRITEBACK_HEADER, .path = out, .provenance = prov};
			tell(ob, &wf);
			tell_reads(ob, eo, WRITEBACK_HEADER, base ? base + 1 : out);
		}
		return rc;
	}
	if (!strcmp(kind, "triton-configs")) {
		const writeback_run *b = first_ranked(sr, ob, d);
		if (!b)
			return MUH_EINPUT;
		size_t n = (size_t)topk < b->best.nranked ? (size_t)topk : b->best.nranked;
		static patch_best best[256];
		static const char *names[256][32], *notes[256][32], *vals[256][32];
		static char nbuf[256][32][64], vbuf[256][32][64], notebuf[256][32][240];
		for (size_t i = 0; i < n && i < 256; i++) {
			int np = key_split(writeback_run_key(b, i), nbuf[i], names[i], vbuf[i], vals[i], 32);
			inert_notes(&b->best, writeback_run_key(b, i), names[i], np, notebuf[i], notes[i]);
			best[i] = (patch_best){b->hw, 0, np, names[i], vals[i], notes[i]};
		}
		char *text;
		int rc = patch_triton_configs(best, n, "", &text, d);
		if (rc)
			return rc;
		rc = emit_text(WRITEBACK_TRITON_CONFIGS, out, text, ob, d);
		free(text);
		return rc;
	}
	return diag_errorf(d, "unknown --emit '%s'; known: moe-json, header, triton-configs", kind);
}

int writeback_emit_knobs(const writeback_emit_opts *eo, muh_surface **surf, patch_knobs **saved, const muh_knob ***arr,
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

int writeback_autotune_into(const writeback_runs *sr, const writeback_emit_opts *eo, muh_surface *surf,
			    patch_knobs *saved, writeback_set *set, char **value, const writeback_observer *ob, muh_diag *d)
{
	const writeback_run *b = first_ranked(sr, ob, d);
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
			say(ob, "%zu of run %lld's %zu ok configs are valid on %s; writing the "
					"fastest %zu (measured on %s, not on %s)",
				tr->runs[0].nvalid, (long long)b->run, b->best.nranked, hw->name, n, b->hw, hw->name);
			snprintf(valid_on, sizeof(valid_on), "; valid on %s's limits (muh transfer), not measured there",
				 hw->name);
		}
		if (!rc && !n)
			rc = diag_errorf(d, "no config of run %lld is valid on %s (see `muh transfer %s --hw %s`)",
					 (long long)b->run, hw->name, eo->db, eo->hw);
	} else {
		for (size_t i = 0; !rc && i < b->best.nranked && n < want; i++)
			keys[n++] = writeback_run_key(b, i);
	}
	const muh_knob *k = NULL;
	if (!rc) {
		k = writeback_find_knob(saved, surf, eo->knob, eo->scan ? eo->scan : eo->into, eo->into, d);
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
		say_inert(b, keys[i], "written as measured into the list", ob);
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
			say(ob, "the %d configs of %s:%d are replaced by %zu (--extend keeps them)",
				k->nalts, k->file, k->line, n);
		if (k->verdict != SCAN_LIVE)
			say(ob, "note: the scan says this list is %s: %s",
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

const muh_knob *writeback_find_knob(const patch_knobs *saved, const muh_surface *surf, const char *ref,
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

/* The backup folder of an apply on tree: backup when given, else
 * tree/.muh-backup/<date-time>, with -2, -3, ... when two applies fall in
 * one second (each its own folder and journal). */
static void backup_dir(const char *tree, const char *backup, char *bdir, size_t n)
{
	if (backup) {
		snprintf(bdir, n, "%s", backup);
		return;
	}
	char stamp[32];
	struct stat st;
	time_t now = time(NULL);
	strftime(stamp, sizeof(stamp), "%Y%m%d-%H%M%S", gmtime(&now));
	snprintf(bdir, n, "%s/.muh-backup/%s", tree, stamp);
	for (int k = 2; !lstat(bdir, &st) && k < 1000; k++)
		snprintf(bdir, n, "%s/.muh-backup/%s-%d", tree, stamp, k);
}

/* Puts the UNPROVEN preamble in front of *diff (git apply skips it). */
static int mark_unproven(char **diff, const char *unproven)
{
	char *marked = malloc(strlen(unproven) + strlen(*diff) + 1);
	if (!marked)
		return MUH_ENOMEM;
	strcpy(marked, unproven);
	strcat(marked, *diff);
	free(*diff);
	*diff = marked;
	return MUH_OK;
}

int writeback_tree(const writeback_tree_opts *o, writeback_tree_result *r, muh_diag *d)
{
	memset(r, 0, sizeof(*r));
	muh_surface *surf = NULL;
	patch_knobs *saved = NULL;
	int rc = MUH_OK;
	if (o->surf || o->saved)
		; /* scanned for --into already */
	else if (o->scanfile)
		rc = patch_knobs_load(o->scanfile, &saved, d);
	else if (o->nsets) /* engine winners need no scan: their file is rewritten whole */
		rc = scan_tree(o->tree, NULL, &surf, d);
	if (rc)
		return rc;
	const muh_surface *sf = o->surf ? o->surf : surf;
	const patch_knobs *sv = o->saved ? o->saved : saved;
	muh_patch *p = patch_plan_new(o->tree);
	if (!p)
		rc = MUH_ENOMEM;
	else
		patch_plan_follow_symlinks(p, o->follow);
	for (int k = 0; o->wins && k < o->wins->n && !rc; k++) {
		const writeback_engine_win *w = &o->wins->w[k];
		rc = patch_plan_set_file(p, w->rel, w->text, w->len, d);
		if (o->on_win)
			o->on_win(o->ctx, w);
		if (w->unproven)
			snprintf(r->unproven + strlen(r->unproven), sizeof(r->unproven) - strlen(r->unproven),
				 "# muh patch: run %lld: UNPROVEN, written with --force: %.900s\n", (long long)w->run,
				 w->why);
	}
	for (int i = 0; i < o->nsets && !rc; i++) {
		const muh_knob *k = writeback_find_knob(sv, sf, o->sets[i].id, o->scanfile ? o->scanfile : o->tree,
							o->tree, d);
		if (!k) {
			rc = MUH_EINPUT;
			break;
		}
		/* a spec tunes a Python bool as 0/1; the source says False/True */
		rc = patch_plan_set(p, k, o->sets[i].alt, patch_value_text(k, o->sets[i].value), o->force, d);
	}
	if (!rc)
		rc = patch_plan_build(p, d);
	if (!rc && !(r->diff = patch_diff(p)))
		rc = MUH_ENOMEM;
	if (!rc && r->unproven[0] && r->diff[0]) /* the mark travels with the diff */
		rc = mark_unproven(&r->diff, r->unproven);
	if (!rc)
		r->nchanged = patch_nchanged(p);
	if (!rc && o->apply && r->nchanged) {
		backup_dir(o->tree, o->backup, r->backup, sizeof(r->backup));
		rc = patch_apply(p, r->backup, &r->written, d);
	}
	if (!rc && o->out && !o->apply)
		rc = writeback_write_file(o->out, r->diff, d);
	patch_plan_free(p);
	scan_free(surf);
	patch_knobs_free(saved);
	return rc;
}

int writeback_from_store(const char *db, const char *tree, int64_t only, int force, writeback_engine_wins *E,
			 writeback_set *sets, int *nsets, char vals[][128], const writeback_observer *ob, muh_diag *d)
{
	writeback_runs sr;
	memset(E, 0, sizeof(*E));
	int rc = writeback_runs_read(db, only, &sr, d);
	/* engine runs: the winner goes into the deployment file whole */
	if (!rc)
		rc = writeback_engine_winners(db, tree, only, force, E, ob, d);
	if (!rc && (!E->n && !E->skipped && !E->unproven))
		rc = writeback_sets_from_store(&sr, sets, nsets, vals, force, &E->unproven, ob, d);
	else if (!rc) { /* knob-mapped runs beside engine runs: both, when there are */
		muh_diag dd;
		diag_clear(&dd);
		if (writeback_sets_from_store(&sr, sets, nsets, vals, force, &E->unproven, ob, &dd) && *nsets)
			rc = MUH_EINPUT, *d = dd;
	}
	writeback_runs_free(&sr);
	return rc;
}
