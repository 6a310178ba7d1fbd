/*
 * writeback_emit.c — the emitters of a write-back (see writeback.h): the
 * config files an engine reads, made from a store's ranked runs.
 *
 * Owns: vLLM's fused-MoE JSON per (E, N, device), a C header per device
 * with the portable defaults, a triton.Config list (on its own, or written
 * into the engine's autotune list), and where their numbers came from
 * (provenance: a device or dtype no run measured is refused unless
 * forced, and then said). The text of each file is patch.h's; the ranking
 * best.h's; which entry a size writes is the decision's (best_decided,
 * best_shipped).
 *
 * Must never: print, or write a value as tuned that no measurement backs
 * (an inert param is said, never hidden).
 */
#include <cjson/cJSON.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

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

#include "writeback_int.h"

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
		writeback_say(ob, "note: %s of run %lld's best (%s) %s", in[k].name, (long long)b->run, what, note);
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
	if (!writeback_run_spec(b, &s, &sd)) {
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
			writeback_say(ob, "%zu runs in the store; using run %lld (--run picks)", sr->n, (long long)sr->r[i].run);
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

/* An emitter left with no run that a decision proved: nothing is written,
 * a finding (exit 1) at the store db. */
static int nothing_proven(const char *db, int unproven, muh_diag *d)
{
	diag_at(d, db, 0, 0, NULL);
	diag_errorf(d, "nothing to write: no proven gain in %d run(s)", unproven);
	return MUH_EFINDING;
}

/* writeback_emit, with the sizes and runs left out for want of a proven
 * gain (or kept as what stays) recorded in left (said by the caller). */
static int emit(const char *kind, const writeback_runs *sr, const writeback_emit_opts *eo, writeback_left *left,
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
			writeback_say(ob, "warning: %s", prov);
	}
	if (!strcmp(kind, "moe-json")) {
		/* one file per (E, N, device), one entry per run (batch size M) */
		int written = 0, nodevice = 0, unproven = 0;
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
					store_run cr = writeback_run_store(c);
					muh_diag sd;
					int src = best_shipped(&cr, &ship, &shipped, &sd);
					if (!src && shipped && ship.valid) {
						wkey = ship.key;
					} else {
						/* neither proven nor what ships: a best nobody proved */
						char why[1200];
						best_proof(&c->best, why, sizeof(why));
						if (src || (shipped && !ship.valid))
							writeback_say(ob, "note: M=%lld: what ships cannot be read (%s)",
								M2, src ? sd.msg : ship.why);
						shipped = 0;
						if (!writeback_force_gate(&c->best, why, eo->force, M2, c->run, &wkey,
									  left, ob)) {
							unproven++;
							continue;
						}
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
					writeback_say(ob, "note: M=%lld: run %lld is written, not the earlier run %lld "
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
		if (!written && unproven)
			return nothing_proven(eo->db, unproven, d);
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
		int unproven = 0;
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
			/* a best nobody proved is not written as tuned (what a
			 * decision kept, what ships or the defaults, is) */
			const char *wkey = writeback_run_key(b, 0);
			char why[1200];
			int proof = best_proof(&b->best, why, sizeof(why));
			if (proof != 1 && b->best.keeps_baseline) {
				char stays[1100];
				snprintf(stays, sizeof(stays), "what stays is written: %.1000s", wkey);
				writeback_left_add(left, -1, b->run, why, stays, stays, ob);
			}
			if (proof != 1 && !b->best.keeps_baseline) {
				if (!writeback_force_gate(&b->best, why, eo->force, -1, b->run, &wkey, left, ob)) {
					unproven++;
					continue;
				}
				size_t pl = strlen(prov); /* the mark travels with the file */
				snprintf(prov + pl, sizeof(prov) - pl, "; run %lld written with --force, NOT a proven gain",
					 (long long)b->run);
			}
			size_t k;
			for (k = 0; k < nb && strcmp(best[k].device, dev); k++)
				;
			if (k < nb) { /* first run per device wins; --run chooses */
				writeback_say(ob, "note: run %lld is on %s too; the header takes run %lld's "
						"best (--run picks)",
					(long long)b->run, dev[0] ? dev : "the host", (long long)brun[k]);
				continue;
			}
			int np = key_split(wkey, nbuf[nb], names[nb], vbuf[nb], vals[nb], 64);
			inert_notes(&b->best, wkey, names[nb], np, notebuf[nb], notes[nb]);
			best[nb] = (patch_best){dev, 0, np, names[nb], vals[nb], notes[nb]};
			brun[nb] = b->run;
			if (!spec) {
				muh_diag sd;
				if (writeback_run_spec(b, &spec, &sd))
					spec = NULL;
				else
					specrun = b;
			}
			nb++;
		}
		if (!nb && unproven)
			return nothing_proven(eo->db, unproven, d);
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
	static const char *const kinds[] = {"moe-json", "header", "triton-configs", NULL};
	const char *nk = diag_near_among(kind, strlen(kind), kinds);
	char hint[96];
	return diag_errorf(d, "unknown --emit '%s'%s; known: moe-json, header, triton-configs", kind,
			   diag_near_hint(nk, hint, sizeof(hint)));
}

int writeback_emit(const char *kind, const writeback_runs *sr, const writeback_emit_opts *eo,
		   const writeback_observer *ob, muh_diag *d)
{
	int moe = !strcmp(kind, "moe-json");
	writeback_left left = WRITEBACK_LEFT_INIT(moe ? "this size is" : "its best is",
						  moe ? "these sizes are" : "their bests are");
	int rc = emit(kind, sr, eo, &left, ob, d);
	writeback_left_say(&left, ob);
	return rc;
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
			writeback_say(ob, "%zu of run %lld's %zu ok configs are valid on %s; writing the "
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
		/* the list as it is: say so, not "replaced" or "added" (the
		 * tree's write-back then writes nothing) */
		size_t span = k->end - k->start;
		if (span == strlen(*value) && !memcmp(text + k->start, *value, span))
			writeback_say(ob, "nothing to change in the list of %s:%d: it already holds %s %zu "
					  "config%s",
				k->file, k->line, eo->extend ? "these" : "exactly these", n, n == 1 ? "" : "s");
		else if (!eo->extend && k->nalts)
			writeback_say(ob, "the %d configs of %s:%d are replaced by %zu (--extend keeps them)",
				k->nalts, k->file, k->line, n);
		if (k->verdict != SCAN_LIVE)
			writeback_say(ob, "note: the scan says this list is %s: %s",
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

