/*
 * overlay.c — engine-tree overlays, made for the evaluator.
 *
 * Owns: turning a variant of a spec whose params map to knobs (the spec's
 * `knobs:` section, target.engine_tree) into an overlay directory: the
 * engine tree with the variant's values written into those knobs by muh
 * patch's own code (patch_plan_*, patch_overlay), so that what is measured
 * is what ships. The tree is scanned once per evaluator, on its first
 * variant.
 *
 * The dependency points one way: this file uses the scanner and the
 * patcher and hands the evaluator a maker (eval_overlay_ops, eval_int.h);
 * the evaluator and its backends get a directory path and never call the
 * scanner or the patcher. Must never: write inside the engine tree (an
 * overlay lies in the build cache), print, or exit.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "muh/muh.h"
#include "muh/patch.h"
#include "muh/scan.h"
#include "overlay_int.h"

typedef struct overlay_maker {
	muh_surface *surf; /* the engine tree's knobs, scanned on the first variant */
} overlay_maker;

/* eval_overlay_ops.make: the overlay of v in t->cache_dir/overlay-<hash of
 * its key>. An unknown knob id, an unsafe value or a tree that cannot be
 * scanned is an error with d->msg (the variant is invalid). */
static int overlay_make(void *ctx, const muh_target *t, const muh_variant *v, char *dir, size_t n, muh_diag *d)
{
	overlay_maker *o = ctx;
	dir[0] = '\0';
	if (!o->surf && scan_tree(t->engine_tree, NULL, &o->surf, d)) {
		char why[sizeof(d->msg)];
		snprintf(why, sizeof(why), "%s", d->msg);
		return diag_errorf(d, "engine tree %s: %s", t->engine_tree, why);
	}
	muh_patch *p = patch_plan_new(t->engine_tree);
	int rc = p ? MUH_OK : MUH_ENOMEM;
	for (int i = 0; i < t->nknobs && !rc; i++) {
		size_t j;
		for (j = 0; j < v->nparams && strcmp(v->names[j], t->knob_param[i]); j++)
			;
		if (j == v->nparams)
			continue;
		char id[48], val[64];
		int alt;
		value_fmt(val, sizeof(val), v->values[j]);
		const muh_knob *k = NULL;
		if (patch_parse_id(t->knob_id[i], id, sizeof(id), &alt) == 0)
			k = scan_find(o->surf, id);
		if (!k) {
			diag_near near = DIAG_NEAR_INIT; /* the nearest knob id of the tree */
			const char *want = t->knob_id[i];
			for (size_t j = 0; j < scan_nknobs(o->surf); j++)
				diag_near_offer(&near, want, strlen(want), scan_knob(o->surf, j)->id);
			char hint[96];
			rc = diag_errorf(d, "knobs.%s: no knob '%s'%s in %s", t->knob_param[i], t->knob_id[i],
					 diag_near_hint(near.name, hint, sizeof(hint)), t->engine_tree);
			break;
		}
		/* measuring a dead knob is allowed (the fingerprint shows it); an
		 * unsafe value is refused as it would be in the final patch */
		rc = patch_plan_set(p, k, alt, patch_value_text(k, val), 1, d);
	}
	if (!rc)
		rc = patch_plan_build(p, d);
	if (!rc) {
		snprintf(dir, n, "%s/overlay-%016llx", t->cache_dir,
			 (unsigned long long)patch_fnv1a64(v->key, strlen(v->key)));
		if (eval_mkdirs(t->cache_dir) < 0 || patch_overlay_remove(dir))
			rc = MUH_EENV, diag_errorf(d, "cannot prepare %s: %s", dir, strerror(errno));
	}
	if (!rc)
		rc = patch_overlay(p, dir, d);
	patch_plan_free(p);
	if (rc)
		dir[0] = '\0';
	return rc;
}

static void overlay_remove(void *ctx, const char *dir)
{
	(void)ctx;
	if (dir[0])
		patch_overlay_remove(dir);
}

static void overlay_free(void *ctx)
{
	overlay_maker *o = ctx;
	if (o)
		scan_free(o->surf);
	free(o);
}

static const eval_overlay_ops overlay_ops = {overlay_make, overlay_remove, overlay_free};

int overlay_attach(muh_evaluator *ev, const muh_target *t)
{
	if (!t->engine_tree[0])
		return MUH_OK;
	overlay_maker *o = calloc(1, sizeof(*o));
	if (!o)
		return MUH_ENOMEM;
	eval_set_overlay(ev, &overlay_ops, o);
	return MUH_OK;
}
