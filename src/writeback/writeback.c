/*
 * writeback.c — write-back from a store (see writeback.h).
 *
 * Owns: which values of a store's runs go back into an engine tree (knob
 * values, an engine run's deployment file), and the one patch plan that
 * turns them into a diff or an apply. The emitters' config files and
 * their provenance are writeback_emit.c's. The ranking is best.h's, the
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
#include "strbuf.h"
#include "textfmt.h"
#include "writeback_int.h"

/* text_vformat_to's sink for writeback_say: ctx is the observer told. */
static void put_line(void *ctx, const char *text, size_t len)
{
	const writeback_observer *ob = ctx;
	(void)len;
	ob->note(ob->ctx, text);
}

void writeback_say(const writeback_observer *ob, const char *fmt, ...)
{
	if (!ob || !ob->note)
		return;
	va_list ap;
	va_start(ap, fmt);
	text_vformat_to(put_line, (void *)ob, fmt, ap);
	va_end(ap);
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


/* What --force writes, said with what the decision stage measured of it,
 * into buf: "the decision stage's best finalist: 1.195x the defaults
 * (0.902-1.582x), undecided". 0 (buf "") when it is the search's best with
 * no finalist row. */
static int forced_gain_text(const muh_best *b, char *buf, size_t n)
{
	buf[0] = '\0';
	if (!b->decision || b->forced_f < 0)
		return 0;
	const decide_summary *sm = b->decision;
	const decide_finalist *f = &sm->f[b->forced_f];
	int ships = decide_baseline_ships(sm, b->default_key);
	snprintf(buf, n, "%s the decision stage's best finalist: %.3fx %s (%.3f-%.3fx, %s)",
	         b->forced_key == b->search_key ? "the search's best is" : "not the search's best but",
	         f->gain.ratio, ships ? "what ships" : "the defaults", f->gain.lo, f->gain.hi,
	         decide_verdict_name(f->verdict));
	return 1;
}

/* ---- what is left out for want of a proven gain ----------------------- */

/* One size or run left out (or kept) for want of a proven gain. */
struct writeback_left_one {
	long long size; /* M; -1: none */
	int64_t run;
	char *why, *tail_one, *tail_many;
	int said;
};

/* The lead of one size or run's line into buf: "M=16: run 4", or "run 3"
 * without a size (size -1). Returns buf. */
static const char *lead_of(char *buf, size_t n, long long size, int64_t run)
{
	if (size >= 0)
		snprintf(buf, n, "M=%lld: run %lld", size, (long long)run);
	else
		snprintf(buf, n, "run %lld", (long long)run);
	return buf;
}

/* qsort's order of long longs, ascending. */
static int cmp_ll(const void *a, const void *b)
{
	long long x = *(const long long *)a, y = *(const long long *)b;
	return (x > y) - (x < y);
}

/* Appends v[0..n) sorted, comma-separated; with ranges, a run of
 * consecutive values as "FIRST-LAST" ("1-7,9"). */
static void put_list(strbuf *sb, long long *v, size_t n, int ranges)
{
	qsort(v, n, sizeof(*v), cmp_ll);
	for (size_t i = 0; i < n;) {
		size_t j = i;
		while (ranges && j + 1 < n && v[j + 1] == v[j] + 1)
			j++;
		strbuf_printf(sb, "%s%lld", i ? "," : "", v[i]);
		if (j > i + 1)
			strbuf_printf(sb, "-%lld", v[j]);
		else if (j == i + 1)
			strbuf_printf(sb, ",%lld", v[j]);
		i = j + 1;
	}
}

void writeback_left_add(writeback_left *L, long long size, int64_t run, const char *why, const char *tail_one,
			const char *tail_many, const writeback_observer *ob)
{
	struct writeback_left_one *e = NULL;
	if (!array_grow(&L->e, &L->cap, L->n, sizeof(*L->e), 8)) {
		e = &L->e[L->n];
		*e = (struct writeback_left_one){size, run, strdup(why), strdup(tail_one), strdup(tail_many), 0};
		if (e->why && e->tail_one && e->tail_many) {
			L->n++;
			return;
		}
		free(e->why);
		free(e->tail_one);
		free(e->tail_many);
	}
	char lead[64]; /* out of memory: said now, alone */
	writeback_say(ob, "%s: no proven gain: %.1000s; %s", lead_of(lead, sizeof(lead), size, run), why, tail_one);
}

void writeback_left_say(writeback_left *L, const writeback_observer *ob)
{
	long long *sizes = malloc((L->n ? L->n : 1) * sizeof(*sizes));
	long long *runs = malloc((L->n ? L->n : 1) * sizeof(*runs));
	for (size_t i = 0; i < L->n; i++) {
		struct writeback_left_one *e = &L->e[i];
		if (e->said)
			continue;
		size_t n = 0, ns = 0;
		for (size_t j = i; j < L->n; j++) {
			struct writeback_left_one *f = &L->e[j];
			if (f->said || strcmp(f->why, e->why) || strcmp(f->tail_one, e->tail_one))
				continue;
			f->said = 1;
			if (sizes && runs) {
				runs[n++] = f->run;
				if (f->size >= 0)
					sizes[ns++] = f->size;
			}
		}
		strbuf sb = {0};
		char lead[64];
		if (n <= 1 || !sizes || !runs) {
			strbuf_str(&sb, lead_of(lead, sizeof(lead), e->size, e->run));
		} else if (ns == n) {
			strbuf_str(&sb, "M=");
			put_list(&sb, sizes, ns, 0);
			strbuf_str(&sb, " (runs ");
			put_list(&sb, runs, n, 1);
			strbuf_ch(&sb, ')');
		} else {
			strbuf_str(&sb, "runs ");
			put_list(&sb, runs, n, 1);
		}
		writeback_say(ob, "%s: no proven gain: %.1000s; %s", sb.b && !sb.oom ? sb.b : "?", e->why,
			      n > 1 ? e->tail_many : e->tail_one);
		free(sb.b);
	}
	free(sizes);
	free(runs);
	writeback_left_free(L);
}

void writeback_left_free(writeback_left *L)
{
	for (size_t i = 0; i < L->n; i++) {
		free(L->e[i].why);
		free(L->e[i].tail_one);
		free(L->e[i].tail_many);
	}
	free(L->e);
	L->e = NULL;
	L->n = L->cap = 0;
}

int writeback_force_gate(const muh_best *b, const char *why, int force, long long size, int64_t run,
			 const char **key, writeback_left *left, const writeback_observer *ob)
{
	if (!force) {
		char one[300], many[300];
		snprintf(one, sizeof(one), "%s not written (" FORCE_HINT ")", left->one);
		snprintf(many, sizeof(many), "%s not written (" FORCE_HINT ")", left->many);
		writeback_left_add(left, size, run, why, one, many, ob);
		return 0;
	}
	if (b->forced_key)
		*key = b->forced_key;
	char lead[64];
	lead_of(lead, sizeof(lead), size, run);
	writeback_say(ob, "%s: written with --force, NOT a proven gain: %.1000s", lead, why);
	char fg[1200];
	if (forced_gain_text(b, fg, sizeof(fg)))
		writeback_say(ob, "%s: %s", lead, fg);
	return 1;
}

/* ---- results from a store ----------------------------------------------- */


static int sr_run(void *ud, const store_run *run)
{
	writeback_runs *sr = ud;
	if (sr->only && run->id != sr->only)
		return 0;
	if (array_grow(&sr->r, &sr->cap, sr->n, sizeof(*sr->r), 8))
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

store_run writeback_run_store(const writeback_run *b)
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
		store_run r = writeback_run_store(&sr->r[i]);
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

int writeback_run_spec(const writeback_run *b, muh_spec **s, muh_diag *d)
{
	store_run r = writeback_run_store(b);
	return store_run_spec(&r, s, d);
}

/* writeback_sets_from_store, with the runs left out for want of a proven
 * gain recorded in left (said by the caller). */
static int sets_from_store(const writeback_runs *sr, writeback_set *sets, int *nsets, char vals[][128], int force,
			   int *unproven, writeback_left *left, const writeback_observer *ob, muh_diag *d)
{
	for (size_t i = 0; i < sr->n; i++) {
		const writeback_run *b = &sr->r[i];
		if (!b->best.nranked)
			continue;
		if (eval_backend_is(b->backend, EVAL_SERVER))
			continue; /* its deployment file: engine_winner */
		muh_spec *s;
		muh_diag sd;
		if (writeback_run_spec(b, &s, &sd))
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
		 * an engine run does; --force writes muh_best.forced_key */
		const char *wkey = writeback_run_key(b, 0);
		char why[1200];
		if (best_proof(&b->best, why, sizeof(why)) != 1 &&
		    !writeback_force_gate(&b->best, why, force, -1, b->run, &wkey, left, ob)) {
			(*unproven)++;
			spec_free(s);
			continue;
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
				writeback_say(ob, "note: %s (knob %s) of run %lld's best, written as measured, %s",
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

int writeback_sets_from_store(const writeback_runs *sr, writeback_set *sets, int *nsets, char vals[][128],
			      int force, int *unproven, const writeback_observer *ob, muh_diag *d)
{
	writeback_left left = WRITEBACK_LEFT_INIT("its knobs are", "their knobs are");
	int rc = sets_from_store(sr, sets, nsets, vals, force, unproven, &left, ob, d);
	writeback_left_say(&left, ob);
	return rc;
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
			writeback_say(ob, "run %lld: the spec's folder is gone; its deployment file is read from %s",
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
	char why[1200];
	int decided = rc ? 1 : best_proof(&b, why, sizeof(why));
	if (decided != 1) {
		snprintf(w->why, sizeof(w->why), "%.1000s", why);
		if (!force) {
			spec_free(s);
			best_free(&b);
			eval_target_free(t);
			*out = ENGINE_UNPROVEN;
			return MUH_OK;
		}
		w->unproven = 1;
	}
	/* what is written: the proven winner, or with --force the decision
	 * stage's best measured finalist, else the search's own best (ranked[0]
	 * is then what stays: the defaults) */
	size_t wi = 0;
	for (size_t i = 0; !rc && w->unproven && b.forced_key && i < b.nranked; i++)
		if (b.ranked[i].key == b.forced_key)
			wi = i;
	if (w->unproven)
		forced_gain_text(&b, w->forced, sizeof(w->forced));
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
			/* its value as the decision stage measured it (the median of its
			 * repeats), as report shows it; the search's one measurement
			 * only when the stage has no row of it */
			double val = objective_value(&o, b.ranked[wi].score);
			for (size_t f = 0; b.decision && f < b.decision->nf; f++)
				if (!strcmp(b.decision->f[f].key, b.ranked[wi].key) && isfinite(b.decision->f[f].value))
					val = b.decision->f[f].value;
			objective_format(o.metric, val, w->value, sizeof(w->value));
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
	if ((W->only && run->id != W->only) || !eval_backend_is(run->backend, EVAL_SERVER))
		return 0;
	if (E->n == WRITEBACK_MAX_SETS)
		return W->rc = diag_errorf(W->d, "more than %d engine runs: pick one with --run", WRITEBACK_MAX_SETS);
	enum engine_outcome out;
	int rc = engine_winner(W->st, run, W->tree, W->force, &E->w[E->n], &out, W->ob, W->d);
	if (rc)
		return W->rc = rc;
	if (out == ENGINE_UNPROVEN) {
		writeback_say(W->ob, "run %lld: no proven gain: %s; nothing written (" FORCE_HINT ")",
		    (long long)run->id, E->w[E->n].why);
		E->unproven++;
		return 0;
	}
	if (out == ENGINE_NONE) {
		writeback_say(W->ob, "run %lld: no variant met its objective's SLOs; nothing to write", (long long)run->id);
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
	else {
		diag_near near = DIAG_NEAR_INIT; /* the nearest id or name */
		for (size_t i = 0; i < n; i++) {
			const muh_knob *c = saved ? patch_knobs_at(saved, i) : scan_knob(surf, i);
			diag_near_offer(&near, ref, strlen(ref), c->id);
			diag_near_offer(&near, ref, strlen(ref), c->name);
		}
		char hint[96];
		diag_errorf(d,
			    "no knob '%s'%s in %s: give a knob's id or its name (`muh scan %s --json` "
			    "lists both)",
			    ref, diag_near_hint(near.name, hint, sizeof(hint)), where, tree);
	}
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
