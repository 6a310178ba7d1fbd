/*
 * writeback_text.c — what muh patch says (writeback.h's writeback_text_*),
 * moved here from the muh program: the files an emitter wrote with each
 * batch size's decision, an engine run's winner as notes, an apply's
 * recovery, and a tree's diff or apply. Only rendering; the write-back is
 * writeback.c's, the verdicts decide.c's.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "muh/writeback.h"

/* Why batch size z holds no proven gain, or NULL when it does (or was
 * not decided): the run's decision's word, or that its run had no
 * decision stage and what ships was kept. */
static const char *size_reason(const writeback_moe_size *z)
{
	const decide_summary *sm = z->run->best.decision;
	if (z->kept)
		return "no decision stage in this size's run";
	if (!sm || sm->winner >= 0)
		return NULL;
	return sm->why;
}

/* One line of an emitted moe-json file's summary: what batch size M holds
 * (the run's decision: a proven gain over what ships, or what ships kept,
 * "no proven gain" whose why size_reasons says, with the interval of the
 * decision stage's best finalist), with the paired intervals over the
 * baseline and the defaults. */
static void say_decision(const textout *o, const writeback_moe_size *z)
{
	const writeback_run *b = z->run;
	const decide_summary *sm = b->best.decision;
	long long M = z->batch;
	const char *key = writeback_run_key(b, 0);
	if (z->kept) {
		textout_printf(o, TEXTOUT_RESULT,
		               "  M=%-5lld %s: what ships, kept (no proven gain); its search's best: %.4095s\n",
		               M, z->kept, key);
		return;
	}
	if (!sm) {
		textout_printf(o, TEXTOUT_RESULT,
		               "  M=%-5lld %.4095s: the search's best, not decided (no decision "
		               "stage: --finalists 0, or a "
		               "replay)\n",
		               M, key);
		return;
	}
	int ships = decide_baseline_ships(sm, b->best.default_key);
	const char *base = ships ? "what ships" : "the defaults";
	if (sm->winner >= 0) {
		const stats_ratio *g = &sm->f[sm->winner].gain;
		textout_printf(
		    o, TEXTOUT_RESULT,
		    "  M=%-5lld %.4095s: proven %.3fx %s (%.3f-%.3fx, %zu paired rounds)", M, key,
		    g->ratio, base, g->lo, g->hi, g->n);
	} else if (b->best.keeps_baseline) {
		/* the decision stage's best finalist (best.c's pick_forced, what
		 * --force writes): its interval over the baseline is what the
		 * verdict read, beside the baseline's over the defaults */
		textout_printf(o, TEXTOUT_RESULT, "  M=%-5lld %.4095s: %s, kept (no proven gain", M,
		               key, base);
		if (b->best.forced_f >= 0) {
			const stats_ratio *g = &sm->f[b->best.forced_f].gain;
			textout_printf(o, TEXTOUT_RESULT, "; the decision stage's best finalist %.3fx %s, %.3f-%.3fx",
			               g->ratio, base, g->lo, g->hi);
		}
		textout_str(o, TEXTOUT_RESULT, ")");
	} else {
		textout_printf(o, TEXTOUT_RESULT, "  M=%-5lld %.4095s: no proven gain over %s", M, key,
		               base);
	}
	if (ships && isfinite(sm->vs_defaults.ratio))
		textout_printf(o, TEXTOUT_RESULT, "; %.3fx the defaults (%.3f-%.3fx)",
		               sm->vs_defaults.ratio, sm->vs_defaults.lo, sm->vs_defaults.hi);
	textout_str(o, TEXTOUT_RESULT, "\n");
}

/* After a moe-json file's lines, why its sizes hold no proven gain: one
 * line per reason, in the order each first came, listing the sizes it
 * holds for ("  M=1,4,1024: no proven gain: WHY"). */
static void say_reasons(const textout *o, const writeback_file *f)
{
	for (size_t q = 0; q < f->nsizes; q++) {
		const char *why = size_reason(&f->sizes[q]);
		int first = why != NULL;
		for (size_t p = 0; p < q && first; p++) {
			const char *w = size_reason(&f->sizes[p]);
			first = !w || strcmp(w, why);
		}
		if (!first)
			continue;
		textout_str(o, TEXTOUT_RESULT, "  M=");
		for (size_t p = q, n = 0; p < f->nsizes; p++) {
			const char *w = size_reason(&f->sizes[p]);
			if (w && !strcmp(w, why))
				textout_printf(o, TEXTOUT_RESULT, "%s%lld", n++ ? "," : "", f->sizes[p].batch);
		}
		textout_printf(o, TEXTOUT_RESULT, ": no proven gain: %s\n", why);
	}
}

void writeback_text_written(const textout *o, const writeback_file *f)
{
	if (!f->path && f->text) { /* no --out: the file on stdout */
		textout_str(o, TEXTOUT_RESULT, f->text);
		if (*f->text && f->text[strlen(f->text) - 1] != '\n')
			textout_str(o, TEXTOUT_RESULT, "\n");
	} else if (f->has_reads && f->reads) {
		textout_printf(o, TEXTOUT_RESULT, "  read by the engine: %s\n", f->reads);
	} else if (f->has_reads) {
		textout_printf(o, TEXTOUT_RESULT,
		               "  read by the engine: unknown (give --into TREE or --scan "
		               "SCAN.json to check)\n");
	} else if (f->provenance_path) {
		textout_printf(o, TEXTOUT_RESULT, "  wrote %s: where these numbers came from\n",
		               f->provenance_path);
	} else if (f->kind == WRITEBACK_MOE_JSON) {
		textout_printf(o, TEXTOUT_RESULT, "wrote %s (%zu batch sizes)\n", f->path,
		               f->nsizes);
		textout_printf(o, TEXTOUT_RESULT, "  %s\n", f->provenance);
		for (size_t q = 0; q < f->nsizes; q++)
			say_decision(o, &f->sizes[q]);
		say_reasons(o, f);
	} else if (f->kind == WRITEBACK_HEADER) {
		textout_printf(o, TEXTOUT_RESULT, "wrote %s\n  %s\n", f->path, f->provenance);
	}
}

void writeback_text_win(const textout *o, const char *who, const writeback_engine_win *w)
{
	textout_printf(o, TEXTOUT_NOTE, "%s: run %lld: %s %s (%s) for %s\n", who,
	               (long long)w->run,
	               !w->unproven    ? "the proven winner"
	               : w->forced[0] ? "the best measured finalist"
	                               : "the search's best",
	               w->key, w->value, w->rel);
	if (w->unproven)
		textout_printf(o, TEXTOUT_NOTE,
		               "%s: run %lld: written with --force, NOT a proven gain: %s\n", who,
		               (long long)w->run, w->why);
	if (w->unproven && w->forced[0])
		textout_printf(o, TEXTOUT_NOTE, "%s: run %lld: %s\n", who, (long long)w->run,
		               w->forced);
	/* a gain inside the run's noise is a tie (as muh tune and muh report
	 * call it): the diff then shows what would change, not a proven gain */
	else if (best_is_tie(w->gain, w->noise))
		textout_printf(
		    o, TEXTOUT_NOTE,
		    "%s: run %lld: note: the winner is %.3fx the defaults, inside the run's noise "
		    "(%.1f%%): a tie on the machine that measured it, not a proven gain\n",
		    who, (long long)w->run, w->gain, 100 * w->noise);
}

void writeback_text_recovery(const textout *o, const patch_recovery *r, int rollback, int json)
{
	if (json) {
		textout_printf(
		    o, TEXTOUT_RESULT,
		    "{\"files\": %d, \"original\": %d, \"patched\": %d, \"changed\": %d, "
		    "\"tmp_removed\": %d, \"incomplete\": %s}\n",
		    r->files, r->original, r->patched, r->changed, r->tmp_removed,
		    r->incomplete ? "true" : "false");
	} else if (rollback) {
		textout_printf(
		    o, TEXTOUT_RESULT,
		    "rolled back: %d file(s) restored; all %d file(s) of the apply hold the "
		    "originals (%d temporary file(s) removed)\n",
		    r->changed, r->files, r->tmp_removed);
	} else if (r->incomplete) {
		textout_printf(
		    o, TEXTOUT_RESULT,
		    "nothing to resume: the apply stopped before its temporary files were "
		    "complete, so before any rename; all %d file(s) hold the originals (%d "
		    "temporary file(s) removed); run the patch again\n",
		    r->files, r->tmp_removed);
	} else {
		textout_printf(
		    o, TEXTOUT_RESULT,
		    "resumed: %d file(s) renamed; all %d file(s) of the apply hold the patched "
		    "content\n",
		    r->changed, r->files);
	}
}

void writeback_text_tree(const textout *o, const char *who, const writeback_tree_result *r,
                         int json, int apply, const char *out)
{
	if (json) {
		cJSON *j = cJSON_CreateObject();
		cJSON_AddNumberToObject(j, "files_changed", (double)r->nchanged);
		cJSON_AddNumberToObject(j, "written", r->written);
		if (r->written)
			cJSON_AddStringToObject(j, "backup", r->backup);
		cJSON_AddStringToObject(j, "diff", r->diff);
		if (r->unproven[0])
			cJSON_AddStringToObject(j, "unproven", r->unproven);
		textout_json(o, j, 1);
	} else if (apply) {
		if (r->written)
			textout_printf(o, TEXTOUT_RESULT,
			               "applied: %d file(s) written; originals in %s\n", r->written,
			               r->backup);
		else
			textout_printf(o, TEXTOUT_RESULT,
			               "nothing to change: the tree already has these values\n");
	} else if (!out) {
		textout_str(o, TEXTOUT_RESULT, r->diff);
	}
	if (!apply && !r->nchanged && !json)
		textout_printf(o, TEXTOUT_NOTE,
		               "%s: nothing to change: the tree already has these values\n", who);
}
