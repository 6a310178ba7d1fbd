/*
 * scan_verdict.c — step 7 of muh scan: the knobs of Python code (module
 * constants, overrides, tl.constexpr bindings, triton.Config lists, config
 * dicts, dict keys flowing into launches) and the verdict and evidence of
 * each, then the unsafe-values check (see docs/scan.md for the rules).
 *
 * Reads the index and reach classes scan_resolve.c built; never changes them.
 * Must never: print, exit, or touch the tree.
 */
#include "muh/scan.h"

#include <cjson/cJSON.h>
#include <dirent.h>
#include <errno.h>
#include <fnmatch.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "muh/deploy.h"
#include "muh/muh.h"
#include "pyfile.h"
#include "scan_args.h"
#include "scan_cache.h"
#include "scan_env.h"
#include "scan_flow.h"
#include "scan_launch.h"
#include "scan_vendor.h"
#include "strbuf.h"
#include "textcut.h"
#include "scan_int.h"

/* ---- 7. knobs and verdicts ------------------------------------------------------- */


void scan_kb_step(kb *b, int fi, int line, const char *fmt, ...)
{
	char buf[600];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	scan_step *st = scan_vec_push(&b->steps);
	if (!st)
		return;
	st->file = fi >= 0 ? b->s->files[fi].rel : "";
	st->line = line;
	st->note = scan_sa_str(b->s, buf);
}

void scan_step_file(kb *b, const char *rel, int line, const char *note)
{
	scan_step *st = scan_vec_push(&b->steps);
	if (!st)
		return;
	st->file = rel;
	st->line = line;
	st->note = scan_sa_str(b->s, note);
}

const char *scan_scope_qual(const pyfile *pf, int sc)
{
	return sc >= 0 ? pf->scopes[sc].qual : "<module>";
}

/* Evidence for a dead piece of file fi (pf_dead d), one step per link:
 * `x = ...` read only by dead code -> `y = ...` overwritten at line N. */
static void explain_dead(kb *b, int fi, int d)
{
	const pyfile *pf = b->s->files[fi].pf;
	for (int n = 0; d >= 0 && d < pf->ndeads && n < 8; n++) {
		const pf_dead *x = &pf->deads[d];
		if (x->kind == PF_D_OVERWRITE) {
			scan_kb_step(b, fi, x->line, "%s is assigned here and overwritten before any read",
			             x->name);
			for (int i = 0; i < x->nkill && i < 4; i++)
				scan_kb_step(b, fi, x->kills[i], "%s overwritten here%s", x->name,
				             x->nkill > 1 ? " (on every path)" : "");
			return;
		}
		if (x->kind == PF_D_BRANCH) {
			const pf_guard *g = x->guard >= 0 ? &pf->guards[x->guard] : NULL;
			const char *lit = "a literal";
			for (int i = 0; i < pf->nasgs; i++)
				if (pf->asgs[i].line == x->kill_line && !strcmp(pf->asgs[i].name, x->name) &&
				    pf->asgs[i].lit_text)
					lit = pf->asgs[i].lit_text;
			scan_kb_step(b, fi, x->kill_line, "%s = %s here", x->name, lit);
			scan_kb_step(b, fi, x->line, "so this branch of `if %s:` (line %d) never runs",
			             g && g->cond ? g->cond : x->name, g ? g->line : x->line);
			return;
		}
		scan_kb_step(b, fi, x->line, "%s is assigned here and read only by dead code (line %d)",
		             x->name, x->kill_line);
		d = x->via;
	}
}

/* Evidence for a dead / platform range of file fi: the if, then each
 * constant behind its value (file:line). */
static void explain_range(kb *b, int fi, const range *g)
{
	scan_kb_step(b, fi, g->line, "%s", g->head ? g->head : g->note);
	for (int i = g->nev - 1; i >= 0; i--) /* outermost binding first */
		if (g->evf[i] >= 0)
			scan_kb_step(b, g->evf[i], g->evl[i], "%s", g->evn[i]);
		else
			scan_kb_step(b, fi, g->line, "%s", g->evn[i]);
}

/* "named by the string 'pkg.mod.Name'" when file fi names name at line by
 * a dotted string (PF_R_STR), else NULL. */
static const char *str_ref_at(muh_surface *s, int fi, int line, const char *name)
{
	const vec *list = scan_refs_named(s, name);
	for (size_t i = 0; list && i < list->n; i++) {
		const ref_at *ra = (const ref_at *)list->p + i;
		const pf_ref *r = &s->files[ra->file].pf->refs[ra->ref];
		if (ra->file == fi && r->line == line && (r->flags & PF_R_STR))
			return scan_host_fmt(s, "named by its path in a string (%s.%s)", r->obj,
			                     name);
	}
	return NULL;
}

/* Evidence: who calls the function holding scope sc, and who calls that,
 * up to max links, while the chain is live. */
void scan_call_chain(kb *b, int fi, int sc, int max)
{
	muh_surface *s = b->s;
	for (int n = 0; n < max && fi >= 0; n++) {
		sfile *f = &s->files[fi];
		int top = scan_outer_scope(f->pf, sc);
		if (top < 0 || f->reach[top] != R_LIVE || f->reach_file[top] < 0)
			return;
		int ef = f->reach_file[top], el = f->reach_line[top], esc = f->reach_scope[top];
		const pyfile *ep = s->files[ef].pf;
		const char *str = str_ref_at(s, ef, el, f->pf->scopes[top].name);
		scan_kb_step(b, ef, el, "%s is %s here%s%s", f->pf->scopes[top].qual,
		             str                                      ? str
		             : (f->pf->scopes[top].flags & PF_CLASS) ? "named"
		                                              : "called",
		             esc >= 0 ? ", in " : " (module-level code)", esc >= 0 ? ep->scopes[esc].qual : "");
		if (esc < 0)
			return;
		fi = ef;
		sc = esc;
	}
}

/* Explains a reader class as a verdict; returns the verdict. s->best_why
 * (set by the readers_of/scope_reach call that gave r) adds the reason. */
enum scan_verdict scan_verdict_from(kb *b, enum reach r, int ef, int el, const char *what,
                                    const char **why)
{
	muh_surface *s = b->s;
	why_at bw = s->best_why;
	switch (r) {
	case R_LIVE:
	case R_BUSY:
		if (ef >= 0) {
			int rsc = s->best_scope;
			scan_kb_step(b, ef, el, "%s read here (reachable code)", what);
			if (rsc >= 0)
				scan_call_chain(b, ef, rsc, 6);
		}
		*why = ef >= 0 ? scan_host_fmt(s, "read at %s:%d", s->files[ef].rel, el)
		               : "read by module-level code";
		return SCAN_LIVE;
	case R_UNKNOWN: {
		const char *root = NULL;
		if (ef >= 0) {
			const pyfile *pf = s->files[ef].pf;
			for (int i = 0; i < pf->nscopes && !root; i++)
				if (pf->scopes[i].parent < 0 && pf->scopes[i].line == el)
					root = pf->scopes[i].qual;
		}
		if (root) {
			scan_kb_step(b, ef, el,
			             "%s is reached only through %s, which nothing in the tree names", what,
			             root);
			*why = scan_host_fmt(
			    s,
			    "reached only through %s, never named statically (registry "
			    "or dynamic call?)",
			    root);
		} else {
			if (ef >= 0)
				scan_kb_step(b, ef, el,
				             "%s read here, in code that nothing names statically", what);
			*why = "read only from code never referenced by name (dynamic call?)";
		}
		return SCAN_UNKNOWN;
	}
	case R_PLATFORM:
		if (ef >= 0 && bw.rng && !s->files[ef].platform) {
			scan_kb_step(b, ef, el, "%s read here, in a branch for another platform:", what);
			explain_range(b, bw.rfile, bw.rng);
			*why = scan_host_fmt(s, "read only where %s", bw.note);
			return SCAN_PLATFORM;
		}
		if (ef >= 0 && bw.note && !s->files[ef].platform) {
			scan_kb_step(b, ef, el, "%s read here: %s", what, bw.note);
			*why = scan_host_fmt(s, "read only where %s", bw.note);
			return SCAN_PLATFORM;
		}
		if (ef >= 0)
			scan_kb_step(b, ef, el, "%s read here, in another platform's module (%s)", what,
			             s->files[ef].plat_why ? s->files[ef].plat_why : "platform");
		*why = "read only by another platform's backend";
		return SCAN_PLATFORM;
	case R_NOCALL:
		if (ef >= 0)
			scan_kb_step(b, ef, el, "%s read only in %s", what,
			             bw.note ? bw.note : "a function nothing in the tree calls");
		*why =
		    scan_host_fmt(s, "no call in the tree: %s", bw.note ? bw.note : "never called");
		return SCAN_DEAD;
	case R_TEST:
		if (ef >= 0)
			scan_kb_step(b, ef, el, "%s read only from tests (e.g. here)", what);
		*why = "read only from tests";
		return SCAN_DEAD;
	case R_UNREACH:
		if (bw.dead >= 0) {
			if (ef >= 0)
				scan_kb_step(b, ef, el, "%s is reached only from here, in code that is dead:", what);
			explain_dead(b, bw.file, bw.dead);
			*why = "read only by dead code (overwritten or disabled before use)";
			return SCAN_DEAD;
		}
		if (ef >= 0 && bw.rng) {
			if (bw.lead)
				scan_kb_step(b, ef, el, "%s (%s is read only through it)", bw.lead, what);
			else
				scan_kb_step(b, ef, el, "%s read only on an unreachable path:", what);
			explain_range(b, bw.rfile, bw.rng);
			*why = scan_host_fmt(s, "read only on unreachable paths (%s)", bw.note);
			return SCAN_DEAD;
		}
		if (ef >= 0 && bw.note) {
			scan_kb_step(b, ef, el, "%s read only on an unreachable path: %s", what, bw.note);
			*why = scan_host_fmt(s, "read only on unreachable paths (%s)", bw.note);
			return SCAN_DEAD;
		}
		if (ef >= 0)
			scan_kb_step(b, ef, el,
			             "%s read only on an unreachable path (after return, or under a "
			             "constant-false if)",
			             what);
		*why = "read only on unreachable paths";
		return SCAN_DEAD;
	default:
		*why = "never read";
		return SCAN_DEAD;
	}
}

/* Follows unconditional calls from function (fi, sc) up to depth 3 looking
 * for a raise of NotImplementedError; fills evidence. */
static int raises_nie(kb *b, int fi, int sc, int depth);

/* Overridden defaults of parameters (issue 28 item 3): the why when every
 * call in the tree of k's function (a top-level function of file fi;
 * outside tests, not on unreachable paths) passes k's parameter, by
 * keyword or by position, and nothing uses the function other than by
 * calling it (no alias, partial or function passed as a value, whose calls
 * are unseen); a step per call (up to 5, then one counting the rest).
 * NULL otherwise (no call, a call without it, a splat of *args or of **kwargs). */
static const char *param_always_passed(kb *b, int fi, const pf_knob *k)
{
	muh_surface *s = b->s;
	const pyfile *pf = s->files[fi].pf;
	const pf_scope *sc = &pf->scopes[k->scope];
	int pos = k->param - 1, n = 0, nuse = 0, first_f = -1, first_l = 0;
	size_t more_at = 0;
	for (int pass = 0; pass < 2; pass++)
		for (int g = 0; g < s->nfiles; g++) {
			sfile *gf = &s->files[g];
			const pyfile *gp = gf->pf;
			if (gf->is_test)
				continue;
			if (!pass) { /* every use of the name that resolves to it */
				for (int i = 0; i < gp->nrefs; i++) {
					const pf_ref *r = &gp->refs[i];
					int of;
					const char *on;
					if (strcmp(r->name, sc->name) || r->obj || (r->flags & PF_R_STR))
						continue;
					if (g == fi ? !scan_local_binding(gp, r->scope, r->name)
					            : (scan_resolve_name(s, g, r->name, &of, &on, 0) == RES_SYMBOL &&
					               of == fi && !strcmp(on, sc->name)))
						nuse++;
				}
				continue;
			}
			for (int i = 0; i < gp->ncalls; i++) {
				const pf_call *c = &gp->calls[i];
				int of, osc;
				if (!c->fname || strcmp(c->fname, sc->name) ||
				    !scan_call_def(s, g, c, &of, &osc, 0) || of != fi || osc != k->scope)
					continue;
				if (scan_in_dead(gf, c->byte))
					continue; /* a call that never runs passes nothing */
				int passes = 0;
				for (int a = 0; a < c->nargs; a++) {
					if (c->args[a].splat)
						return NULL; /* *args / **kwargs: unseen */
					passes |= (c->args[a].kw && !strcmp(c->args[a].kw, k->name)) ||
					          (!c->args[a].kw && c->args[a].pos == pos);
				}
				if (!passes)
					return NULL;
				if (!n) {
					first_f = g;
					first_l = c->line;
				}
				if (n < 5)
					scan_kb_step(b, g, c->line, "%s(..., %s=...) here passes it", sc->qual, k->name);
				else if (n == 5) {
					more_at = b->steps.n;
					scan_kb_step(b, g, c->line, "and more calls pass it, from here on");
				}
				n++;
			}
		}
	if (!n || nuse > n)
		return NULL;
	if (n > 5 && more_at < b->steps.n)
		((scan_step *)b->steps.p)[more_at].note =
		    scan_host_fmt(s, "and %d more calls pass it, from here on", n - 5);
	return scan_host_fmt(
	    s,
	    "every call of %s passes %s (%d call%s, first at %s:%d): the default %s "
	    "is never used",
	    sc->qual, k->name, n, n == 1 ? "" : "s", s->files[first_f].rel, first_l, k->text);
}

static int raises_nie(kb *b, int fi, int sc, int depth)
{
	muh_surface *s = b->s;
	const pyfile *pf = s->files[fi].pf;
	const pf_scope *scp = &pf->scopes[sc];
	if (scp->flags & PF_RAISES_NIE) {
		scan_kb_step(b, fi, scp->line, "def %s", scp->qual);
		scan_kb_step(b, fi, scp->raise_line, "raise NotImplementedError, unconditionally");
		return 1;
	}
	if (depth >= 3)
		return 0;
	for (int i = 0; i < pf->ncalls; i++) {
		const pf_call *c = &pf->calls[i];
		if (c->scope != sc || !(c->flags & PF_C_UNCOND) || (c->flags & PF_C_UNREACH))
			continue;
		int tf, ts;
		if (!scan_call_target(s, fi, c, &tf, &ts) || (tf == fi && ts == sc))
			continue;
		size_t mark = b->steps.n;
		scan_kb_step(b, fi, c->line, "%s calls %s unconditionally", scp->qual, c->callee);
		if (raises_nie(b, tf, ts, depth + 1))
			return 1;
		b->steps.n = mark;
	}
	return 0;
}

/* Unsafe values of a boolean knob: a guard `if NAME:` in the same scope whose
 * branch for the other value calls a function that raises
 * NotImplementedError. Adds the evidence chain. */
static void check_unsafe(kb *b, int fi, const pf_knob *k)
{
	muh_surface *s = b->s;
	const pyfile *pf = s->files[fi].pf;
	if (!k->eval || (strcmp(k->eval, "True") && strcmp(k->eval, "False")))
		return;
	int cur = !strcmp(k->eval, "True");
	for (int val = 0; val <= 1; val++) {
		int found = 0;
		for (int gi = 0; gi < pf->nguards && !found; gi++) {
			const pf_guard *g = &pf->guards[gi];
			if (!g->name || g->obj || strcmp(g->name, k->name) || g->scope != k->scope)
				continue;
			int takes_cons = g->negated ? !val : val;
			uint32_t a = takes_cons ? g->cons_start : g->alt_start,
			         e = takes_cons ? g->cons_end : g->alt_end;
			if (!e)
				continue;
			for (int ci = 0; ci < pf->ncalls && !found; ci++) {
				const pf_call *c = &pf->calls[ci];
				if (c->byte < a || c->byte >= e)
					continue;
				int tf, ts;
				if (!scan_call_target(s, fi, c, &tf, &ts))
					continue;
				size_t mark = b->steps.n;
				scan_kb_step(b, fi,
				             takes_cons ? g->line : (g->else_line ? g->else_line : g->line),
				             "%s = %s takes this branch of `if %s%s:`", k->name,
				             val ? "True" : "False", g->negated ? "not " : "", k->name);
				scan_kb_step(b, fi, c->line, "calls %s", c->callee);
				if (raises_nie(b, tf, ts, 0)) {
					found = 1;
					const char **u = scan_vec_push(&b->unsafe);
					if (u)
						*u = val ? "True" : "False";
				} else {
					b->steps.n = mark;
				}
			}
		}
		(void)cur;
	}
}

/* Is obj.NAME at scope sc of file gf a read of engine argument k (file fi)?
 * `self.NAME` inside the engine-argument class itself or inside a *Config
 * class (the engine's config objects copy the arguments by name), or
 * `args.NAME` / `engine_args.NAME` outside benchmarks/ and examples/. */
static int engine_arg_read(muh_surface *s, int gf, int sc, const char *obj, int fi,
                           const pf_knob *k)
{
	if (!obj)
		return 0;
	const pyfile *gp = s->files[gf].pf;
	const char *rel = s->files[gf].rel;
	if (!strncmp(rel, "benchmarks/", 11) || !strncmp(rel, "examples/", 9))
		return 0;
	if (!strcmp(obj, "self")) {
		int cls = -1;
		for (int q = sc, g = 0; q >= 0 && g < 64; q = gp->scopes[q].parent, g++)
			if (gp->scopes[q].flags & PF_CLASS) {
				cls = q;
				break;
			}
		if (cls < 0)
			return 0;
		if (gf == fi && cls == k->scope)
			return 1;
		size_t l = strlen(gp->scopes[cls].name);
		return l > 6 && !strcmp(gp->scopes[cls].name + l - 6, "Config");
	}
	return !strcmp(obj, "args") || !strcmp(obj, "engine_args") ||
	       !strcmp(obj, "self.engine_args") || !strcmp(obj, "parsed_args");
}

/* Does guard g (file gf) compare knob k (file fi)? */
static int guard_names_knob(muh_surface *s, int gf, const pf_guard *g, int fi, const pf_knob *k)
{
	if (!g->cmp_name || strcmp(g->cmp_name, k->name))
		return 0;
	if (k->kind == PF_K_ENGINE_ARG)
		return engine_arg_read(s, gf, g->scope, g->cmp_obj, fi, k);
	if (k->scope >= 0)
		return gf == fi && !g->cmp_obj && g->scope == k->scope;
	if (g->cmp_obj)
		return scan_resolve_obj(s, gf, g->cmp_obj) == fi;
	if (gf == fi)
		return g->scope < 0 || !scan_local_binding(s->files[gf].pf, g->scope, k->name);
	int ofi;
	const char *on;
	return scan_resolve_name(s, gf, k->name, &ofi, &on, 0) == RES_SYMBOL && ofi == fi;
}

/* Evidence: the ifs around byte (outermost first) in its function, other
 * than `skip`; returns how many (the unsafe value needs those to hold). */
static int enclosing_guards(kb *b, int gf, uint32_t byte, int scope, const pf_guard *skip)
{
	const pyfile *gp = b->s->files[gf].pf;
	int n = 0;
	for (int i = 0; i < gp->nguards; i++) {
		const pf_guard *e = &gp->guards[i];
		if (e == skip || e->scope != scope)
			continue;
		int in_cons = byte >= e->cons_start && byte < e->cons_end;
		int in_alt = e->alt_end && byte >= e->alt_start && byte < e->alt_end;
		if (!in_cons && !in_alt)
			continue;
		scan_kb_step(b, gf, e->line, "%s `if %s:`", in_cons ? "under" : "in the else of",
		             e->cond ? e->cond : "?");
		n++;
	}
	return n;
}

void scan_add_unsafe(kb *b, const char *v)
{
	const char **u = scan_vec_push(&b->unsafe);
	if (u)
		*u = v;
}

/* "'a', 'b'" from a guard's compared literals. */
static const char *vals_text(muh_surface *s, const char *const *v, int n)
{
	strbuf all = {0};
	for (int i = 0; i < n; i++)
		strbuf_printf(&all, "%s%s", i ? ", " : "", v[i]);
	char buf[600]; /* at a word, with how much more (textcut.h) */
	text_cut(buf, sizeof(buf), all.b);
	free(all.b);
	return scan_sa_str(s, buf);
}

/* The value of the other side of an assert: a literal, or the default of
 * the knob of that name (an engine-argument field, a constant of fi). */
static const char *assert_other(muh_surface *s, int fi, const char *name, const char *obj,
                                const char *val, int *ofile, int *oline)
{
	*ofile = -1;
	*oline = 0;
	if (val)
		return val;
	for (int g = 0; g < s->nfiles; g++) {
		const pyfile *pf = s->files[g].pf;
		if (s->files[g].is_test || (!obj && g != fi))
			continue;
		for (int i = 0; i < pf->nknobs; i++) {
			const pf_knob *o = &pf->knobs[i];
			if (strcmp(o->name, name) || !o->eval ||
			    (obj ? o->kind != PF_K_ENGINE_ARG
			         : (o->kind != PF_K_CONSTANT || o->scope >= 0)))
				continue;
			*ofile = g;
			*oline = o->line;
			return o->eval;
		}
	}
	return NULL;
}

/* Adds file gf (files come in order) to the chain of the files that compare
 * or assert name (NULL: nothing); s->oom when memory ran out. */
static void cmp_note(muh_surface *s, const char *name, int gf)
{
	if (!name)
		return;
	int *first = scan_smap_slot(&s->cmp_names, name, 1);
	if (!first) {
		s->oom = 1;
		return;
	}
	cmp_file *cf = s->cmp_files.p;
	if (*first >= 0 && cf[cf[*first].last].file == gf)
		return; /* this file is on it already */
	cmp_file *n = scan_vec_push(&s->cmp_files);
	if (!n) {
		s->oom = 1;
		return;
	}
	cf = s->cmp_files.p;
	int at = (int)(s->cmp_files.n - 1);
	n->file = gf;
	n->next = -1;
	if (*first < 0) {
		*first = at;
	} else {
		cf[cf[*first].last].next = at;
	}
	cf[*first].last = at;
}

/* Unsafe values beyond a boolean's NotImplementedError: values an if/elif
 * chain sends into a raise (`if MODE == 'legacy': raise ...`, or the else
 * of a chain that compares MODE with every accepted value), and values an
 * assert rejects (`assert max_batch_tokens >= max_request_len`, maybe under
 * a feature flag's guard). Appends the values and the evidence; returns the
 * why (or NULL). */
static const char *check_unsafe_values(kb *b, int fi, const pf_knob *k)
{
	muh_surface *s = b->s;
	const char *why = NULL;
	if (!s->cmp_built) { /* most knobs are compared nowhere: skip them fast */
		s->cmp_built = 1;
		s->cmp_files.esz = sizeof(cmp_file);
		for (int gf = 0; gf < s->nfiles; gf++) {
			const pyfile *gp = s->files[gf].pf;
			for (int i = 0; i < gp->nguards; i++)
				cmp_note(s, gp->guards[i].cmp_name, gf);
			for (int i = 0; i < gp->nasserts; i++) {
				cmp_note(s, gp->asserts[i].lname, gf);
				cmp_note(s, gp->asserts[i].rname, gf);
			}
		}
	}
	int *first = scan_smap_slot(&s->cmp_names, k->name, 0);
	if (!first)
		return NULL;
	/* only the files whose guards or asserts name k: in any other, no
	 * guard_names_knob and no assert side below can hold */
	const cmp_file *cf = s->cmp_files.p;
	for (int ci = *first; ci >= 0; ci = cf[ci].next) {
		int gf = cf[ci].file;
		sfile *g = &s->files[gf];
		if (g->is_test || g->platform)
			continue;
		const pyfile *gp = g->pf;
		for (int gi = 0; gi < gp->nguards; gi++) {
			const pf_guard *gd = &gp->guards[gi];
			if (!guard_names_knob(s, gf, gd, fi, k) || scan_in_dead(g, gd->byte) ||
			    scan_plat_range_at(g, gd->byte))
				continue;
			int op = gd->cmp_op;
			if (gd->cons_raise && (op == '=' || op == 'i' || op == '!' || op == 'n')) {
				const char *vt = vals_text(s, gd->cmp_vals, gd->ncmp);
				const char *u = op == '=' || op == 'i'
				                    ? NULL
				                    : scan_host_fmt(s, "not in (%s)", vt);
				int nc = enclosing_guards(b, gf, gd->byte, gd->scope, gd);
				scan_kb_step(b, gf, gd->line, "%s %s %s%s%s takes this branch", k->name,
				             op == '=' || op == 'i' ? "=" : "not in", op == 'i' || op == 'n' ? "(" : "",
				             vt, op == 'i' || op == 'n' ? ")" : "");
				scan_kb_step(b, gf, gd->cons_raise, "raise %s", gd->cons_exc ? gd->cons_exc : "");
				if (u)
					scan_add_unsafe(b, u);
				else
					for (int i = 0; i < gd->ncmp; i++)
						scan_add_unsafe(b, gd->cmp_vals[i]);
				if (!why)
					why = scan_host_fmt(
					    s, "%s %s %s raises %s%s", k->name, u ? "outside" : "=",
					    u ? u + 7 : vt,
					    gd->cons_exc ? gd->cons_exc : "an exception",
					    nc ? " (when the enclosing ifs hold)" : "");
			}
			/* the else of a chain that names every accepted value */
			if (gd->chain == gi && gd->else_raise) {
				const char *acc[64];
				int na = 0, all = 1;
				for (int j = gi; j < gp->nguards && all; j++) {
					const pf_guard *e = &gp->guards[j];
					if (e->chain != gi)
						continue;
					if (!guard_names_knob(s, gf, e, fi, k) ||
					    (e->cmp_op != '=' && e->cmp_op != 'i')) {
						all = 0;
						break;
					}
					for (int q = 0; q < e->ncmp && na < 64; q++)
						acc[na++] = e->cmp_vals[q];
				}
				if (!all || !na)
					continue;
				const char *vt = vals_text(s, acc, na);
				enclosing_guards(b, gf, gd->byte, gd->scope, gd);
				scan_kb_step(b, gf, gd->line, "the if/elif chain on %s accepts %s", k->name, vt);
				scan_kb_step(b, gf, gd->else_raise, "any other value takes the else: raise %s",
				             gd->else_exc ? gd->else_exc : "");
				scan_add_unsafe(b, scan_host_fmt(s, "not in (%s)", vt));
				if (!why)
					why = scan_host_fmt(
					    s, "%s outside (%s) raises %s", k->name, vt,
					    gd->else_exc ? gd->else_exc : "an exception");
			}
		}
		for (int ai = 0; ai < gp->nasserts; ai++) {
			const pf_assert *a = &gp->asserts[ai];
			int left = a->lname && !strcmp(a->lname, k->name) &&
			           (k->kind == PF_K_ENGINE_ARG
			                ? engine_arg_read(s, gf, a->scope, a->lobj, fi, k)
			                : (!a->lobj && gf == fi));
			int right = a->rname && !strcmp(a->rname, k->name) &&
			            (k->kind == PF_K_ENGINE_ARG
			                 ? engine_arg_read(s, gf, a->scope, a->robj, fi, k)
			                 : (!a->robj && gf == fi));
			if ((!left && !right) || scan_in_dead(g, a->byte) || scan_plat_range_at(g, a->byte))
				continue;
			int of, ol;
			const char *other =
			    left ? assert_other(s, fi, a->rname, a->robj, a->rval, &of, &ol)
			         : assert_other(s, fi, a->lname, a->lobj, a->lval, &of, &ol);
			const char *oname = left ? a->rname : a->lname;
			char *end = NULL;
			double ov = other ? strtod(other, &end) : 0;
			int numeric = other && end != other && !*end;
			char *kend = NULL;
			if (k->eval)
				strtod(k->eval, &kend);
			int knum = k->eval && kend != k->eval && !*kend;
			/* a relation between two arguments: when either default is not
			 * a number (None: set at run time), the relation itself */
			int relation = oname && (!numeric || !knum) && (left ? !a->rval : !a->lval);
			if (!relation && (!numeric || !k->eval))
				continue;
			if (relation) {
				other = oname;
				of = -1;
			}
			/* the values of the knob that fail `K op O` (or `O op K`) */
			int op = a->op;
			if (right) /* mirror O op K into K op' O */
				op = op == 'g' ? 'l' : op == 'l' ? 'g' : op == '>' ? '<' : op == '<' ? '>' : op;
			const char *fail = op == 'g'   ? "<"
			                   : op == '>' ? "<="
			                   : op == 'l' ? ">"
			                   : op == '<' ? ">="
			                   : op == '=' ? "!="
			                               : "==";
			const char *u = scan_host_fmt(s, "%s %s", fail, other);
			const pf_guard *gd = a->guard >= 0 ? &gp->guards[a->guard] : NULL;
			if (of >= 0)
				scan_kb_step(b, of, ol, "%s defaults to %s", left ? a->rname : a->lname, other);
			enclosing_guards(b, gf, a->byte, a->scope, NULL);
			scan_kb_step(b, gf, a->line, "assert %s fails for %s %s", a->text, k->name, u);
			scan_add_unsafe(b, u);
			(void)ov;
			if (!why)
				why = scan_host_fmt(s, "%s %s fails `assert %s`%s%s%s", k->name, u,
				                    a->text, gd ? " (when `" : "",
				                    gd ? (gd->cond ? gd->cond : "?") : "",
				                    gd ? "` holds)" : "");
		}
	}
	return why;
}

muh_knob *scan_emit(muh_surface *s, kb *b, int fi, const pf_knob *k, const char *file,
                    enum scan_verdict v, const char *why)
{
	muh_knob *o = scan_vec_push(&s->knobs);
	if (!o)
		return NULL;
	const pyfile *pf = fi >= 0 ? s->files[fi].pf : NULL;
	o->file = file;
	o->name = k->name;
	o->kind = pyfile_kind_name(k->kind);
	o->scope = pf ? scan_scope_qual(pf, k->scope) : "<file>";
	o->line = k->line;
	o->col = k->col;
	o->end_line = k->end_line;
	o->end_col = k->end_col;
	o->start = k->start;
	o->end = k->end;
	o->value = k->text;
	o->eval = k->eval;
	o->file_hash = pf ? pf->hash : 0;
	if (k->nalts) {
		scan_alt *alts = scan_sa_alloc(s, sizeof(scan_alt) * (size_t)k->nalts);
		if (alts) {
			for (int i = 0; i < k->nalts; i++) {
				alts[i].text = k->alts[i].text;
				alts[i].eval = k->alts[i].eval;
				alts[i].start = k->alts[i].start;
				alts[i].end = k->alts[i].end;
				alts[i].line = k->alts[i].line;
			}
			o->alts = alts;
			o->nalts = k->nalts;
		}
	}
	o->verdict = v;
	o->why = why;
	if (!b->steps.n) /* no verdict without evidence: at least the knob and why */
		scan_step_file(
		    b, file, k->line > 0 ? k->line : 1,
		    scan_host_fmt(s, "%s: %s", k->name, why ? why : scan_verdict_name(v)));
	if (b->unsafe.n) {
		const char **u = scan_sa_alloc(s, sizeof(char *) * b->unsafe.n);
		if (u) {
			memcpy(u, b->unsafe.p, sizeof(char *) * b->unsafe.n);
			o->unsafe_values = u;
			o->nunsafe = (int)b->unsafe.n;
		}
	}
	if (b->steps.n) {
		scan_step *st = scan_sa_alloc(s, sizeof(scan_step) * b->steps.n);
		if (st) {
			memcpy(st, b->steps.p, sizeof(scan_step) * b->steps.n);
			o->evidence = st;
			o->nevidence = (int)b->steps.n;
		}
	}
	b->steps.n = 0;
	b->unsafe.n = 0;
	return o;
}

/* Loads of a function-local name inside scope sc (or its nested scopes):
 * live, or unreachable (after a return, under a constant-false if, inside
 * dead code: s->best_why says which). */
static enum reach local_readers(muh_surface *s, int fi, const pf_knob *k, int *el)
{
	const pyfile *pf = s->files[fi].pf;
	const pf_scope *scp = &pf->scopes[k->scope];
	const vec *list = scan_refs_named(s, k->name);
	enum reach best = R_NONE;
	why_at bw = {NULL, -1, -1, NULL, -1, NULL};
	*el = 0;
	/* a load before the store reads an earlier value (`if n is None:` then
	 * `n = 4`), unless the store is in a loop; a parameter default is
	 * read by the whole body */
	uint32_t from = scp->start;
	for (int i = 0; i < pf->nasgs && !k->param; i++) {
		const pf_asg *a = &pf->asgs[i];
		if (a->scope == k->scope && k->start >= a->start && k->start < a->end &&
		    !strcmp(a->name, k->name)) {
			from = a->in_loop ? scp->start : a->end;
			break;
		}
	}
	for (size_t i = 0; list && i < list->n; i++) {
		const ref_at *ra = (const ref_at *)list->p + i;
		if (ra->file != fi)
			continue;
		const pf_ref *r = &pf->refs[ra->ref];
		if ((r->flags & ~(unsigned)(PF_R_UNREACH | PF_R_DEAD)) || r->byte < from ||
		    r->byte >= scp->end)
			continue;
		enum reach c = R_LIVE;
		why_at w = {NULL, -1, -1, NULL, -1, NULL};
		const range *dr = scan_dead_range_at(&s->files[fi], r->byte);
		if (r->flags & PF_R_DEAD) {
			c = R_UNREACH;
			w = (why_at){NULL, fi, r->dead, NULL, -1, NULL};
		} else if (r->flags & PF_R_UNREACH) {
			c = R_UNREACH;
		} else if (dr || scan_in_dead(&s->files[fi], r->byte)) {
			c = R_UNREACH;
			w.note = dr ? dr->note : NULL;
		}
		if (scan_reach_rank(c) > scan_reach_rank(best)) {
			best = c;
			bw = w;
			*el = r->line;
		}
	}
	s->best_why = bw;
	return best;
}

static int find_jit(muh_surface *s, int fi, const pf_call *c, int *kfi, int *ksc)
{
	if (!c->fname)
		return 0;
	int tf = -1, d = -1;
	const char *tn = c->fname;
	if (c->obj) {
		tf = scan_resolve_obj(s, fi, c->obj);
	} else {
		const char *xn;
		if (scan_resolve_name(s, fi, c->fname, &tf, &xn, 0) == RES_SYMBOL)
			tn = xn;
		else
			tf = -1;
	}
	if (tf >= 0)
		d = scan_def_key_get(s, tf, tn);
	if (d < 0 || !(s->files[tf].pf->scopes[d].flags & PF_JIT))
		return 0;
	*kfi = tf;
	*ksc = d;
	return 1;
}

/* A module-level constant that a setter function assigns (`global K` then
 * `K = value` directly in its body) while reachable code outside tests calls
 * that setter unconditionally: the engine replaces the literal when it
 * starts, so the literal is dead. Returns 1 with the evidence (the setter,
 * the assignment, the call and its call chain) and the call's place in
 * b->over_file/over_line. Heuristic: the call is assumed to come before the
 * reads (vLLM's set_custom_all_reduce() at worker start). */
static int set_by_setter(kb *b, int fi, const pf_knob *k, const char **why)
{
	muh_surface *s = b->s;
	const pyfile *pf = s->files[fi].pf;
	for (int g = 0; g < pf->ngsets; g++) {
		const pf_gset *gs = &pf->gsets[g];
		if (!gs->uncond || strcmp(gs->name, k->name) || gs->scope < 0 ||
		    pf->scopes[gs->scope].parent >= 0 || !(pf->scopes[gs->scope].flags & PF_FUNC))
			continue;
		const pf_scope *fn = &pf->scopes[gs->scope];
		for (int cf = 0; cf < s->nfiles; cf++) {
			const sfile *f = &s->files[cf];
			if (f->is_test)
				continue;
			for (int i = 0; i < f->pf->ncalls; i++) {
				const pf_call *c = &f->pf->calls[i];
				int tf, ts;
				if (!c->fname || strcmp(c->fname, fn->name) || !(c->flags & PF_C_UNCOND) ||
				    (c->flags & PF_C_UNREACH) || c->scope < 0 ||
				    !scan_call_target(s, cf, c, &tf, &ts) || tf != fi || ts != gs->scope)
					continue;
				pf_ref at = {0};
				at.name = fn->name;
				at.scope = c->scope;
				at.line = c->line;
				at.byte = c->byte;
				at.dead = -1;
				int ef, el;
				if (scan_ref_class(s, cf, &at, &ef, &el) != R_LIVE)
					continue;
				scan_kb_step(b, fi, k->line, "%s = %s here, at module level", k->name, k->text);
				scan_kb_step(b, fi, fn->line, "def %s assigns it (`global %s`) at line %d", fn->qual,
				             k->name, gs->line);
				scan_kb_step(b, cf, c->line, "%s calls %s unconditionally", f->pf->scopes[c->scope].qual,
				             c->callee);
				scan_call_chain(b, cf, c->scope, 4);
				*why = scan_host_fmt(
				    s,
				    "set by %s() at %s:%d when the engine starts: the literal is "
				    "overwritten before use",
				    fn->qual, f->rel, c->line);
				b->over_file = cf;
				b->over_line = c->line;
				return 1;
			}
		}
	}
	return 0;
}

/* The surface's def-use state (src/scan/scan_flow.c), or NULL when memory ran
 * out. */
scan_flow *scan_flow_of(muh_surface *s)
{
	if (!s->flow)
		s->flow = scan_flow_new(s);
	if (!s->flow)
		s->oom = 1;
	return s->flow;
}


reach_scratch scan_scratch_save(const muh_surface *s)
{
	return (reach_scratch){s->cls_why, s->best_why, s->dead_import_file, s->dead_import_line,
	                       s->best_scope};
}

void scan_scratch_restore(muh_surface *s, const reach_scratch *x)
{
	s->cls_why = x->cls_why;
	s->best_why = x->best_why;
	s->dead_import_file = x->dead_import_file;
	s->dead_import_line = x->dead_import_line;
	s->best_scope = x->best_scope;
}

/* Adds the hops of a scan_flow result as evidence steps. */
void scan_flow_steps(kb *b, const scan_flow_res *fr)
{
	for (int i = 0; i < fr->nsteps && i < SCAN_FLOW_MAXSTEPS; i++)
		if (fr->steps[i].note && fr->steps[i].line > 0)
			scan_kb_step(b, fr->steps[i].file, fr->steps[i].line, "%s", fr->steps[i].note);
}

/* Def-use across calls for a function-level constant k of file fi whose
 * function is reachable (issue 28 item 1): 1 with *v and *why set when the
 * value's flow decides (every use overwritten, discarded or unreachable:
 * dead, with the overwrite as b->over_file/over_line; a use reaching a
 * launch through at least one call: live, with the hops), else 0 and no
 * step added. A parameter default the body binds again before any read
 * is dead too. */
static int flow_constant(kb *b, int fi, const pf_knob *k, enum scan_verdict *v,
                         const char **why)
{
	muh_surface *s = b->s;
	const pyfile *pf = s->files[fi].pf;
	const pf_scope *scp = &pf->scopes[k->scope];
	scan_flow *fl = scan_flow_of(s);
	if (!fl)
		return 0;
	uint32_t after = k->end;
	if (k->param) {
		if (scp->pkill && k->param - 1 < scp->nparams && scp->pkill[k->param - 1]) {
			scan_kb_step(b, fi, k->line, "%s=%s is the default of %s's parameter", k->name,
			             k->text, scp->qual);
			scan_kb_step(b, fi, scp->pkill[k->param - 1],
			             "%s binds %s again here, before any read: the default is never used",
			             scp->qual, k->name);
			b->over_file = fi;
			b->over_line = scp->pkill[k->param - 1];
			*v = SCAN_DEAD;
			*why = scan_host_fmt(
			    s,
			    "%s binds %s again at line %d before any read: the default "
			    "%s is never used",
			    scp->qual, k->name, scp->pkill[k->param - 1], k->text);
			return 1;
		}
		after = scp->start;
	}
	for (int i = 0; i < pf->nasgs; i++) {
		const pf_asg *a = &pf->asgs[i];
		if (a->scope == k->scope && k->start >= a->start && k->start < a->end &&
		    !strcmp(a->name, k->name)) {
			after = a->in_loop ? scp->start : a->end;
			break;
		}
	}
	scan_flow_res fr;
	reach_scratch keep = scan_scratch_save(s);
	scan_flow_value(fl, fi, k->scope, k->name, after, &fr);
	scan_scratch_restore(s, &keep);
	if (fr.fate == SCAN_FLOW_DISCARDED) {
		scan_kb_step(b, fi, k->line, "%s = %s is assigned here", k->name, k->text);
		scan_flow_steps(b, &fr);
		b->over_file = fr.kill_file;
		b->over_line = fr.kill_line;
		*v = SCAN_DEAD;
		*why = scan_host_fmt(s, "the value never reaches a use: %s (%s:%d)",
		                     fr.nsteps ? fr.steps[fr.nsteps - 1].note : "discarded",
		                     s->files[fr.kill_file].rel, fr.kill_line);
		return 1;
	}
	if (fr.fate == SCAN_FLOW_REACHES && fr.nsteps > 1) {
		scan_flow_steps(b, &fr);
		scan_call_chain(b, fi, k->scope, 6);
		const scan_flow_step *last = &fr.steps[fr.nsteps - 1];
		*v = SCAN_LIVE;
		*why = scan_host_fmt(s, "reaches a launch in %d hop(s): %s (%s:%d)", fr.nsteps,
		                     last->note, s->files[last->file].rel, last->line);
		return 1;
	}
	return 0;
}

/* Def-use across calls for a module-level constant k of file fi that some
 * reachable code reads (issue 28 item 1): 1 with *v, *why (dead) and the
 * steps when every read outside tests is a load inside a function whose
 * value is discarded (passed to a parameter the callee binds again first,
 * stored and overwritten, read only by dead code), else 0 and no step. A
 * read at module level, through an attribute (`m.K`) or an alias the flow
 * cannot follow keeps the constant to the older rules. */
static int flow_module_constant(kb *b, int fi, const pf_knob *k, enum scan_verdict *v,
                                const char **why)
{
	muh_surface *s = b->s;
	scan_flow *fl = scan_flow_of(s);
	const vec *list = scan_refs_named(s, k->name);
	if (!fl || !list)
		return 0;
	int nread = 0, kf = -1, kl = 0;
	size_t mark = b->steps.n;
	for (size_t i = 0; i < list->n; i++) {
		const ref_at *ra = (const ref_at *)list->p + i;
		const sfile *rfile = &s->files[ra->file];
		const pf_ref *r = &rfile->pf->refs[ra->ref];
		if (rfile->is_test || (r->flags & PF_R_STR) || !scan_ref_hits(s, ra->file, r, fi, k->name))
			continue;
		if (ra->file == fi && r->byte >= k->start && r->byte < k->end)
			continue;
		scan_flow_res fr;
		reach_scratch keep = scan_scratch_save(s);
		scan_flow_load(fl, ra->file, ra->ref, &fr);
		scan_scratch_restore(s, &keep);
		if (fr.fate != SCAN_FLOW_DISCARDED) {
			b->steps.n = mark;
			return 0;
		}
		if (!nread++) {
			scan_kb_step(b, ra->file, r->line, "%s read here", k->name);
			scan_flow_steps(b, &fr);
			kf = fr.kill_file;
			kl = fr.kill_line;
		}
	}
	if (!nread) {
		b->steps.n = mark;
		return 0;
	}
	if (nread > 1)
		scan_kb_step(b, fi, k->line, "and %d more read(s) of %s, each discarded the same way", nread - 1,
		             k->name);
	b->over_file = kf;
	b->over_line = kl;
	*v = SCAN_DEAD;
	*why = scan_host_fmt(
	    s, "every read's value is discarded before a use (%d read(s); first: %s:%d)", nread,
	    s->files[kf].rel, kl);
	return 1;
}

static void verdict_constant(kb *b, int fi, const pf_knob *k, enum scan_verdict *v,
                             const char **why)
{
	muh_surface *s = b->s;
	const pyfile *pf = s->files[fi].pf;
	int ef = fi, el;
	enum reach r;
	if (k->kind == PF_K_OVERRIDE)
		scan_kb_step(b, fi, k->line, "%s = %s overrides the heuristic assigned at line %d", k->name,
		             k->text, k->aux_line);
	if (k->scope < 0) {
		r = scan_readers_of(s, fi, k->name, k->start, k->end, &ef, &el);
		if (r == R_LIVE && pf->ngsets && set_by_setter(b, fi, k, why)) {
			*v = SCAN_DEAD;
			return;
		}
		if (r == R_NONE) {
			scan_kb_step(b, fi, k->line,
			             "%s is defined here and loaded nowhere in the tree (no load in this "
			             "module, no import of it, no %s.%s, no string naming it)",
			             k->name, s->files[fi].module, k->name);
			*v = SCAN_DEAD;
			*why = "never read";
			return;
		}
		if (r == R_LIVE && flow_module_constant(b, fi, k, v, why))
			return;
	} else {
		r = local_readers(s, fi, k, &el);
		if (r == R_LIVE) {
			/* local reads count as much as the function is reachable */
			int xf, xl;
			enum reach fr = scan_scope_reach(s, fi, k->scope, &xf, &xl);
			/* prefer the launch binding it feeds as evidence */
			for (int i = 0; i < pf->nknobs; i++) {
				const pf_knob *o = &pf->knobs[i];
				if (o->kind == PF_K_CONSTEXPR && o->feed &&
				    !strcmp(o->feed, k->name) && o->scope == k->scope) {
					el = o->line;
					break;
				}
			}
			int top = scan_outer_scope(pf, k->scope);
			if (fr == R_TEST || fr == R_PLATFORM || fr == R_UNREACH || fr == R_NOCALL) {
				scan_kb_step(b, fi, el, "%s read here", k->name);
				r = fr;
				ef = xf;
				el = xl;
			} else if (fr == R_NONE && !scan_maybe_called_from_outside(s, fi, top)) {
				scan_kb_step(b, fi, el, "%s read here", k->name);
				scan_kb_step(b, fi, pf->scopes[top].line,
				             "but nothing in the tree calls or names %s (no call in the tree)",
				             pf->scopes[top].qual);
				*v = SCAN_DEAD;
				*why = scan_host_fmt(s, "no call in the tree: %s is never called",
				                     pf->scopes[top].qual);
				return;
			} else if (fr == R_NONE || fr == R_UNKNOWN) {
				scan_kb_step(b, fi, el, "%s read here", k->name);
				scan_kb_step(b, fi, pf->scopes[top].line,
				             "but %s is never referenced by name%s", pf->scopes[top].qual,
				             s->opt.library && fr == R_NONE ? " (--library: it may be called "
				                                      "from outside)"
				                                    : "");
				*v = SCAN_UNKNOWN;
				*why = "enclosing function is never referenced by name";
				return;
			} else {
				if (flow_constant(b, fi, k, v, why))
					return;
				for (int i = 0; i < pf->nknobs; i++) {
					const pf_knob *o = &pf->knobs[i];
					if (o->kind == PF_K_CONSTEXPR && o->feed &&
					    !strcmp(o->feed, k->name) && o->scope == k->scope &&
					    o->line == el) {
						scan_kb_step(b, fi, el, "binds %s at the launch", o->name);
						*v = SCAN_LIVE;
						*why = scan_host_fmt(s, "binds %s at line %d",
						                     o->name, el);
						scan_call_chain(b, fi, k->scope, 6);
						return;
					}
				}
				if (xf >= 0) {
					scan_kb_step(b, fi, el, "%s read here", k->name);
					scan_call_chain(b, fi, k->scope, 6);
					*v = SCAN_LIVE;
					*why = scan_host_fmt(s, "read at line %d", el);
					return;
				}
			}
		}
	}
	*v = scan_verdict_from(b, r, ef, el, k->name, why);
}

static void verdict_function_symbol(kb *b, int fi, int sc, const char *what, enum scan_verdict *v,
                                    const char **why)
{
	muh_surface *s = b->s;
	int ef, el;
	enum reach r = scan_scope_reach(s, fi, sc, &ef, &el);
	if (r == R_NONE) {
		*v = SCAN_DEAD;
		*why = scan_host_fmt(s, "%s is never referenced", what);
		scan_kb_step(b, fi, s->files[fi].pf->scopes[scan_outer_scope(s->files[fi].pf, sc)].line,
		             "nothing in the tree names %s",
		             s->files[fi].pf->scopes[scan_outer_scope(s->files[fi].pf, sc)].qual);
		return;
	}
	if (r == R_TEST) {
		*v = SCAN_DEAD;
		*why = scan_host_fmt(s, "%s is reached only from tests", what);
		if (ef >= 0)
			scan_kb_step(b, ef, el, "called from tests (e.g. here)");
		return;
	}
	*v = scan_verdict_from(b, r, ef, el, what, why);
	if (r == R_LIVE && ef >= 0)
		*why = scan_host_fmt(s, "%s used at %s:%d", what, s->files[ef].rel, el);
}

/* A call into a module outside the tree through an import alias
 * (ixf_F.vllm_invoke_fused_moe_kernel): opaque to the analysis. */
static int is_opaque_call(muh_surface *s, int fi, const pf_call *c)
{
	if (!c->obj || strchr(c->obj, '.'))
		return 0;
	const pf_import *im = scan_import_of(s, fi, c->obj);
	return im && scan_resolve_obj(s, fi, c->obj) < 0 && scan_mod_lookup(s, im->module) < 0;
}

/* ---- dict flows into launches (`**run_config` two calls away) ------------------ */

/* A dict that reaches a Triton launch with all its keys: the variable or
 * parameter `name` of function (file, scope), or (name NULL) the dict the
 * function returns. parent is the sink it flows into (-1: the launch). */
typedef struct sink {
	int file, scope;
	const char *name;
	int parent, line;
	const char *note;
	int lfile; /* the file of line */
} sink;

static int sink_add(muh_surface *s, int file, int scope, const char *name, int parent, int line,
                    const char *note, int lfile)
{
	sink *v = s->sinks.p;
	for (size_t i = 0; i < s->sinks.n; i++)
		if (v[i].file == file && v[i].scope == scope &&
		    (v[i].name == name || (v[i].name && name && !strcmp(v[i].name, name))))
			return (int)i;
	if (s->sinks.n >= 4000)
		return -1;
	sink *n = scan_vec_push(&s->sinks);
	if (!n) {
		s->oom = 1;
		return -1;
	}
	*n = (sink){file, scope, name, parent, line, note, lfile};
	return (int)s->sinks.n - 1;
}

/* The class a scope sits in directly (for self.method()), or -1. */
static int class_of(const pyfile *pf, int sc)
{
	int p = sc >= 0 ? pf->scopes[sc].parent : -1;
	return p >= 0 && (pf->scopes[p].flags & PF_CLASS) ? p : -1;
}

/* The function a call names, also `self.m()` inside the same class. */
static int flow_target(muh_surface *s, int fi, const pf_call *c, int *tf, int *ts)
{
	if (scan_call_target(s, fi, c, tf, ts))
		return 1;
	const pyfile *pf = s->files[fi].pf;
	if (!c->obj || strcmp(c->obj, "self") || !c->fname || c->scope < 0)
		return 0;
	int cls = class_of(pf, c->scope);
	for (int i = 0; cls >= 0 && i < pf->nscopes; i++)
		if (pf->scopes[i].parent == cls && (pf->scopes[i].flags & PF_FUNC) &&
		    !strcmp(pf->scopes[i].name, c->fname)) {
			*tf = fi;
			*ts = i;
			return 1;
		}
	return 0;
}

/* Builds s->sinks: launches' **splats of names, then back through
 * parameters to the callers' arguments, through `x = f(...)` to f's
 * returned dict, and through `return x` / `return g(...)`. */
static void flow_sinks(muh_surface *s)
{
	s->sinks_built = 1;
	s->sinks.esz = sizeof(sink);
	for (int fi = 0; fi < s->nfiles; fi++) {
		const pyfile *pf = s->files[fi].pf;
		for (int i = 0; i < pf->nrefs; i++) {
			const pf_ref *r = &pf->refs[i];
			if (!(r->flags & PF_R_SPLAT) || r->call < 0 || r->scope < 0 ||
			    (r->flags & (PF_R_UNREACH | PF_R_DEAD)))
				continue;
			const pf_call *c = &pf->calls[r->call];
			int kf, ks;
			if (!(c->flags & PF_C_LAUNCH) || !find_jit(s, fi, c, &kf, &ks))
				continue;
			sink_add(s, fi, r->scope, r->name, -1, r->line,
			         scan_host_fmt(s, "**%s into %s[grid]", r->name, c->fname), fi);
		}
	}
	for (size_t i = 0; i < s->sinks.n; i++) {
		sink x = ((sink *)s->sinks.p)[i];
		const pyfile *pf = s->files[x.file].pf;
		const pf_scope *sc = &pf->scopes[x.scope];
		if (!x.name) { /* the returned dict */
			for (int q = 0; q < pf->nrets; q++) {
				const pf_ret *rt = &pf->rets[q];
				if (rt->scope != x.scope)
					continue;
				int tf, ts;
				if (rt->name)
					sink_add(
					    s, x.file, x.scope, rt->name, (int)i, rt->line,
					    scan_host_fmt(s, "%s returns %s", sc->qual, rt->name),
					    x.file);
				else if (rt->call >= 0 && rt->call < pf->ncalls &&
				         flow_target(s, x.file, &pf->calls[rt->call], &tf, &ts))
					sink_add(s, tf, ts, NULL, (int)i, rt->line,
					         scan_host_fmt(s, "%s returns %s(...)", sc->qual,
					                       pf->calls[rt->call].callee),
					         x.file);
			}
			continue;
		}
		/* x = f(...) in the same function: f's returned dict */
		for (int q = 0; q < pf->ncalls; q++) {
			const pf_call *c = &pf->calls[q];
			int tf, ts;
			if (c->scope == x.scope && c->assigned && !strcmp(c->assigned, x.name) &&
			    !(c->flags & PF_C_UNREACH) && flow_target(s, x.file, c, &tf, &ts))
				sink_add(s, tf, ts, NULL, (int)i, c->line,
				         scan_host_fmt(s, "%s = %s(...) in %s", x.name, c->callee,
				                       sc->qual),
				         x.file);
		}
		/* a parameter: the callers' arguments */
		int p = -1, kw = sc->kwparam && !strcmp(sc->kwparam, x.name);
		for (int q = 0; q < sc->nparams && !kw; q++)
			if (!strcmp(sc->params[q], x.name))
				p = q;
		if (p < 0 && !kw)
			continue;
		int is_method = class_of(pf, x.scope) >= 0 && sc->nparams &&
		                (!strcmp(sc->params[0], "self") || !strcmp(sc->params[0], "cls"));
		for (int g = 0; g < s->nfiles; g++) {
			const pyfile *gp = s->files[g].pf;
			for (int q = 0; q < gp->ncalls; q++) {
				const pf_call *c = &gp->calls[q];
				int tf, ts;
				if (!c->fname || strcmp(c->fname, sc->name) || (c->flags & PF_C_UNREACH) ||
				    !flow_target(s, g, c, &tf, &ts) || tf != x.file || ts != x.scope)
					continue;
				int pos = is_method && c->obj ? p - 1 : p;
				for (int a = 0; a < c->nargs; a++) {
					const pf_arg *ar = &c->args[a];
					if (!ar->ident || c->scope < 0)
						continue;
					int hit = kw ? ar->splat == 2
					             : ((ar->kw && !strcmp(ar->kw, x.name)) ||
					                (!ar->kw && !ar->splat && ar->pos == pos && pos >= 0));
					if (hit)
						sink_add(s, g, c->scope, ar->ident, (int)i, c->line,
						         scan_host_fmt(
						             s, "%s%s passed to %s as %s%s",
						             kw ? "**" : "", ar->ident, c->callee,
						             kw ? "**" : "", x.name),
						         g);
				}
			}
		}
	}
}

/* The sink holding the dict variable var of (fi, scope) (var NULL: the
 * dict the function returns), or -1. */
static int sink_of(muh_surface *s, int fi, int scope, const char *var)
{
	if (!s->sinks_built)
		flow_sinks(s);
	const sink *v = s->sinks.p;
	for (size_t i = 0; i < s->sinks.n; i++)
		if (v[i].file == fi && v[i].scope == scope &&
		    (v[i].name == var || (v[i].name && var && !strcmp(v[i].name, var))))
			return (int)i;
	return -1;
}

/* Config-dict keys: which keys do the consumers near the dict read? */
static void verdict_dict_key(kb *b, int fi, const pf_knob *k, enum scan_verdict *v,
                             const char **why)
{
	muh_surface *s = b->s;
	sfile *f = &s->files[fi];
	const char *var = (k->aux && strcmp(k->aux, "return")) ? k->aux : "config";
	/* the dict's own flow: into a launch through calls, across modules */
	if (k->scope >= 0 && k->aux) {
		int si = sink_of(s, fi, k->scope, strcmp(k->aux, "return") ? k->aux : NULL);
		const sink *sv = s->sinks.p;
		int root = si;
		for (int n = 0; root >= 0 && sv[root].parent >= 0 && n < 64; n++)
			root = sv[root].parent;
		int xf, xl;
		if (root >= 0 && root != si &&
		    scan_scope_reach(s, sv[root].file, sv[root].scope, &xf, &xl) == R_LIVE) {
			int hops = 0;
			for (int q = si; q >= 0 && q != root && hops < 64; q = sv[q].parent)
				hops++;
			scan_kb_step(b, fi, k->line, "'%s' is set here", k->name);
			for (int n = 0, q = si; q >= 0 && n < 12; n++, q = sv[q].parent)
				scan_kb_step(b, sv[q].lfile, sv[q].line, "%s", sv[q].note);
			scan_call_chain(b, sv[root].file, sv[root].scope, 4);
			*v = SCAN_LIVE;
			*why = scan_host_fmt(s, "read: %s, %d scan_kb_step(s) away (%s:%d)",
			                     sv[root].note, hops, s->files[sv[root].file].rel,
			                     sv[root].line);
			return;
		}
	}
	/* candidate files: this one, its importers and importees */
	int cand[512];
	int nc = 0;
	cand[nc++] = fi;
	for (size_t i = 0; i < f->importers.n && nc < 512; i++)
		cand[nc++] = ((int *)f->importers.p)[3 * i];
	for (size_t i = 0; i < f->importees.n && nc < 512; i++)
		cand[nc++] = ((int *)f->importees.p)[i];
	enum reach best = R_NONE;
	int bf = -1, bl = 0;
	const char *how = NULL;
	int other_f = -1, other_l = 0;
	const char *other_key = NULL, *other_callee = NULL;
	int other_opaque = 0;
	int opaque_f = -1, opaque_l = 0;
	const char *opaque_callee = NULL;
	for (int ci = 0; ci < nc; ci++) {
		int cf = cand[ci];
		int dup = 0;
		for (int j = 0; j < ci; j++)
			dup |= cand[j] == cf;
		if (dup)
			continue;
		const pyfile *pf = s->files[cf].pf;
		for (int i = 0; i < pf->nrefs; i++) {
			const pf_ref *r = &pf->refs[i];
			int reads = 0;
			const char *h = NULL;
			if ((r->flags & PF_R_KEY)) {
				if (!strcmp(r->name, k->name)) {
					reads = 1;
					h = r->call >= 0 ? pf->calls[r->call].callee : NULL;
				} else if (scan_is_upper_like(r->name) &&
				           (other_f < 0 || !other_opaque) &&
				           !(r->flags & PF_R_UNREACH) &&
				           !scan_in_dead(&s->files[cf], r->byte) &&
				           !s->files[cf].is_test) {
					int op = r->call >= 0 &&
					         is_opaque_call(s, cf, &pf->calls[r->call]);
					if (other_f < 0 || op) {
						other_f = cf;
						other_l = r->line;
						other_key = r->name;
						other_opaque = op;
						other_callee =
						    r->call >= 0 ? pf->calls[r->call].callee : NULL;
					}
				}
			} else if ((r->flags & PF_R_SPLAT) && r->call >= 0 &&
			           ((pf->calls[r->call].flags & PF_C_LAUNCH) ||
			            !strcmp(r->name, var))) {
				reads = 1;
				h = (pf->calls[r->call].flags & PF_C_LAUNCH) &&
				            pf->calls[r->call].fname
				        ? scan_host_fmt(s, "%s[grid]", pf->calls[r->call].fname)
				        : pf->calls[r->call].callee;
			} else if (!r->flags && r->call >= 0 && !strcmp(r->name, var) &&
			           opaque_f < 0) {
				const pf_call *c = &pf->calls[r->call];
				int tf, ts;
				if (!scan_call_target(s, cf, c, &tf, &ts) && is_opaque_call(s, cf, c)) {
					opaque_f = cf;
					opaque_l = r->line;
					opaque_callee = c->callee;
				}
			}
			if (!reads)
				continue;
			int xf, xl;
			enum reach c = scan_ref_class(s, cf, r, &xf, &xl);
			/* a live **splat is the strongest evidence: prefer it */
			if (c == R_LIVE && best == R_LIVE && (r->flags & PF_R_SPLAT) && how &&
			    how[0] != '*')
				best = R_NONE;
			if (scan_reach_rank(c) > scan_reach_rank(best)) {
				best = c == R_BUSY ? R_LIVE : c;
				bf = cf;
				bl = r->line;
				how = (r->flags & PF_R_SPLAT)
				          ? scan_host_fmt(s, "**%s into %s", r->name,
				                          h ? h : "a call")
				          : scan_host_fmt(s, "%s['%s']%s%s", r->obj ? r->obj : "?",
				                          k->name, h ? " passed to " : "",
				                          h ? h : "");
			}
		}
	}
	if (best == R_LIVE) {
		scan_kb_step(b, bf, bl, "%s reads it", how);
		*v = SCAN_LIVE;
		*why = scan_host_fmt(s, "read: %s", how);
		return;
	}
	if (best == R_NONE && opaque_f >= 0) {
		scan_kb_step(b, opaque_f, opaque_l, "the whole dict goes to %s, outside the tree",
		             opaque_callee);
		*v = SCAN_UNKNOWN;
		*why = scan_host_fmt(s, "dict passed whole to opaque %s", opaque_callee);
		return;
	}
	if (best == R_NONE || best == R_UNREACH) {
		scan_kb_step(b, fi, k->line, "'%s' is set here", k->name);
		if (best == R_UNREACH)
			scan_kb_step(b, bf, bl, "%s reads it, but only on an unreachable path", how);
		if (other_f >= 0 && other_opaque)
			scan_kb_step(b, other_f, other_l, "the opaque call %s reads only '%s' of the dict",
			             other_callee, other_key);
		else if (other_f >= 0)
			scan_kb_step(b, other_f, other_l,
			             "consumers read other keys (e.g. '%s') but never '%s'", other_key,
			             k->name);
		*v = SCAN_DEAD;
		if (other_f >= 0 && other_opaque)
			*why =
			    scan_host_fmt(s, "no reachable consumer reads '%s'; %s reads only '%s'",
			                  k->name, other_callee, other_key);
		else
			*why = scan_host_fmt(s, "no reachable consumer reads '%s'", k->name);
		return;
	}
	*v = scan_verdict_from(b, best, bf, bl, k->name, why);
}

void scan_knob_file_verdicts(muh_surface *s, int fi, kb *b, smap *occ)
{
	sfile *f = &s->files[fi];
	const pyfile *pf = f->pf;
	for (int i = 0; i < pf->nknobs; i++) {
		const pf_knob *k = &pf->knobs[i];
		enum scan_verdict v = SCAN_UNKNOWN;
		const char *why = "no rule applies";
		int kfi = -1, ksc = -1;
		if (k->kind == PF_K_CONSTEXPR) {
			const pf_call *c = &pf->calls[k->call];
			const char *param = strrchr(k->name, '.');
			param = param ? param + 1 : k->name;
			if (!find_jit(s, fi, c, &kfi, &ksc))
				continue;
			const pf_scope *ks = &s->files[kfi].pf->scopes[ksc];
			int is_opt = !strcmp(param, "num_warps") || !strcmp(param, "num_stages") ||
			             !strcmp(param, "num_ctas");
			int is_cx = 0;
			for (int j = 0; j < ks->nconstexprs; j++)
				is_cx |= !strcmp(ks->constexprs[j], param);
			if (!is_opt && !is_cx)
				continue;
		}
		if (k->kind == PF_K_ENGINE_ARG && k->scope >= 0 &&
		    !(pf->scopes[k->scope].flags & PF_CLASS))
			continue;
		if (f->is_test && !s->opt.with_tests)
			continue;
		/* place-based verdicts first */
		const range *kdr = scan_dead_range_at(f, k->start);
		const range *kpr = scan_plat_range_at(f, k->start);
		int over_line = 0, over_file = fi;
		if (k->dead >= 0 && k->dead < pf->ndeads) {
			over_line = pf->deads[k->dead].kill_line;
			v = SCAN_DEAD;
			why = pf->deads[k->dead].nkill > 1
			          ? scan_host_fmt(s,
			                          "overwritten on every path before any read "
			                          "(first at line %d)",
			                          over_line)
			          : scan_host_fmt(s, "overwritten at line %d before any read",
			                          over_line);
			explain_dead(b, fi, k->dead);
		} else if (k->unreach) {
			v = SCAN_DEAD;
			why = "defined on an unreachable path";
			scan_kb_step(b, fi, k->line, "after a return, or under an `if` that constants make false");
		} else if (kdr || scan_in_dead(f, k->start)) {
			v = SCAN_DEAD;
			why = "defined on an unreachable path";
			if (kdr) {
				explain_range(b, fi, kdr);
				why = scan_host_fmt(s, "defined on an unreachable path: %s",
				                    kdr->note);
			}
			scan_kb_step(b, fi, k->line, "defined here, in the branch that cannot run");
		} else if (f->platform) {
			v = SCAN_PLATFORM;
			why = f->plat_why;
			if (f->plat_file >= 0)
				scan_kb_step(b, f->plat_file, f->plat_line,
				             "the only importer of %s is here (%s)", f->rel,
				             s->files[f->plat_file].plat_why ? s->files[f->plat_file].plat_why
				             : f->plat_why                   ? f->plat_why
				                                     : "platform check");
			else
				scan_kb_step(b, fi, 1, "%s", f->plat_why);
		} else if (kpr) {
			v = SCAN_PLATFORM;
			why = kpr->note;
			explain_range(b, fi, kpr);
			scan_kb_step(b, fi, k->line, "defined here, in that branch");
		} else {
			switch (k->kind) {
			case PF_K_CONSTANT:
			case PF_K_OVERRIDE:
				b->over_file = -1;
				verdict_constant(b, fi, k, &v, &why);
				if (b->over_file >= 0) {
					over_file = b->over_file;
					over_line = b->over_line;
				}
				break;
			case PF_K_CONSTEXPR: {
				const char *param = strrchr(k->name, '.') + 1;
				const pf_scope *ks = &s->files[kfi].pf->scopes[ksc];
				int xf, xl;
				enum reach fr =
				    k->scope >= 0 ? scan_scope_reach(s, fi, k->scope, &xf, &xl) : R_LIVE;
				scan_kb_step(b, fi, k->aux_line, "launch of %s binds %s=%s", ks->qual,
				             param, k->text);
				if (fr == R_TEST || fr == R_PLATFORM || fr == R_UNREACH) {
					v = scan_verdict_from(b, fr, xf, xl, "the launching function",
					                      &why);
					break;
				}
				if (!strcmp(param, "num_warps") || !strcmp(param, "num_stages") ||
				    !strcmp(param, "num_ctas")) {
					scan_kb_step(b, kfi, ks->line,
					             "@triton.jit %s: %s is a compile option", ks->qual,
					             param);
					v = fr == R_LIVE || fr == R_BUSY ? SCAN_LIVE : SCAN_UNKNOWN;
					why = v == SCAN_LIVE
					          ? "triton compile option at a reachable launch"
					          : "launching function never referenced by name";
					if (v == SCAN_LIVE && k->scope >= 0)
						scan_call_chain(b, fi, k->scope, 6); /* how the launch is reached */
					break;
				}
				/* does the kernel read the constexpr? */
				int rl = 0;
				const pyfile *kp = s->files[kfi].pf;
				const vec *list = scan_refs_named(s, param);
				for (size_t j = 0; list && j < list->n && !rl; j++) {
					const ref_at *ra = (const ref_at *)list->p + j;
					const pf_ref *r = &kp->refs[ra->ref];
					if (ra->file == kfi &&
					    !(r->flags & (PF_R_KEY | PF_R_ATTR | PF_R_STR)) &&
					    r->byte >= ks->start && r->byte < ks->end)
						rl = r->line;
				}
				if (!rl) {
					scan_kb_step(b, kfi, ks->line, "@triton.jit %s never reads %s",
					             ks->qual, param);
					v = SCAN_DEAD;
					why = scan_host_fmt(s, "kernel %s never reads %s", ks->qual,
					                    param);
				} else {
					scan_kb_step(b, kfi, rl, "kernel %s reads %s (tl.constexpr)",
					             ks->qual, param);
					v = fr == R_LIVE || fr == R_BUSY ? SCAN_LIVE : SCAN_UNKNOWN;
					why = v == SCAN_LIVE
					          ? scan_host_fmt(s, "tl.constexpr of %s", ks->qual)
					          : "launching function never referenced by name";
					if (v == SCAN_LIVE && k->scope >= 0)
						scan_call_chain(b, fi, k->scope, 6);
				}
				break;
			}
			case PF_K_AUTOTUNE: {
				/* decorator list: the kernel; function list: the function */
				int sc = k->scope;
				for (int j = 0; j < pf->nscopes; j++)
					if ((pf->scopes[j].flags & PF_AUTOTUNE) &&
					    k->start >= pf->scopes[j].start &&
					    k->start < pf->scopes[j].end &&
					    pf->scopes[j].parent == k->scope) {
						sc = j;
						break;
					}
				if (sc >= 0) {
					verdict_function_symbol(b, fi, sc, pf->scopes[sc].qual, &v,
					                        &why);
				} else {
					int ef, el;
					enum reach r =
					    scan_readers_of(s, fi, k->name, k->start, k->end, &ef, &el);
					v = scan_verdict_from(b, r, ef, el, k->name, &why);
				}
				break;
			}
			case PF_K_CONFIG_DICT: {
				int xf, xl;
				enum reach fr =
				    k->scope >= 0 ? scan_scope_reach(s, fi, k->scope, &xf, &xl) : R_LIVE;
				if (fr == R_TEST || fr == R_PLATFORM) {
					v = scan_verdict_from(b, fr, xf, xl, scan_scope_qual(pf, k->scope),
					                      &why);
					break;
				}
				verdict_dict_key(b, fi, k, &v, &why);
				break;
			}
			case PF_K_CAPABILITY: {
				int sc = -1;
				for (int j = 0; j < pf->nscopes; j++)
					if (!strcmp(pf->scopes[j].qual, k->name))
						sc = j;
				scan_kb_step(b, fi, k->line, "%s returns %s%s%s", k->name, k->text,
				             k->eval ? " = " : "", k->eval ? k->eval : "");
				if (sc >= 0)
					verdict_function_symbol(b, fi, sc, k->name, &v, &why);
				break;
			}
			case PF_K_ENGINE_ARG: {
				/* field read as an attribute anywhere outside tests */
				const vec *list = scan_refs_named(s, k->name);
				int lf = -1, ll = 0;
				for (size_t j = 0; list && j < list->n && lf < 0; j++) {
					const ref_at *ra = (const ref_at *)list->p + j;
					const pf_ref *r = &s->files[ra->file].pf->refs[ra->ref];
					if (!(r->flags & PF_R_ATTR) || s->files[ra->file].is_test ||
					    s->files[ra->file].platform ||
					    (r->flags & PF_R_UNREACH) ||
					    scan_in_dead(&s->files[ra->file], r->byte))
						continue;
					lf = ra->file;
					ll = r->line;
				}
				if (lf >= 0) {
					scan_kb_step(b, lf, ll, ".%s read here", k->name);
					v = SCAN_LIVE;
					why = scan_host_fmt(s, "engine argument read at %s:%d",
					                    s->files[lf].rel, ll);
					break;
				}
				/* no live read: where are the others, if any? */
				int tf = -1, tl = 0, of = -1, ol = 0;
				for (size_t j = 0; list && j < list->n; j++) {
					const ref_at *ra = (const ref_at *)list->p + j;
					const pf_ref *r = &s->files[ra->file].pf->refs[ra->ref];
					if (!(r->flags & (PF_R_ATTR | PF_R_KEY)))
						continue;
					if (s->files[ra->file].is_test) {
						if (tf < 0) {
							tf = ra->file;
							tl = r->line;
						}
					} else if (of < 0) {
						of = ra->file;
						ol = r->line;
					}
				}
				scan_kb_step(b, fi, k->line, "field %s.%s, default %s",
				             k->scope >= 0 ? pf->scopes[k->scope].qual : "?", k->name, k->text);
				if (of >= 0) {
					v = SCAN_UNKNOWN;
					scan_kb_step(b, of, ol, ".%s read here, but only in another platform's code "
					                "or on an unreachable path", k->name);
					why = "read only by another platform's code or on unreachable "
					      "paths (may be read via asdict/getattr)";
				} else if (tf >= 0) {
					v = SCAN_DEAD;
					scan_kb_step(b, tf, tl, ".%s read only from tests (e.g. here)", k->name);
					why = "read only from tests";
				} else {
					v = SCAN_DEAD;
					scan_kb_step(b, fi, k->line,
					             "no .%s, [\"%s\"] or getattr(..., \"%s\") in any module",
					             k->name, k->name, k->name);
					why = scan_host_fmt(
					    s, "defined at %s:%d, read nowhere in the tree", f->rel,
					    k->line);
				}
				break;
			}
			default:
				break;
			}
			if (k->kind == PF_K_CONSTANT || k->kind == PF_K_OVERRIDE) {
				check_unsafe(b, fi, k);
				if (b->unsafe.n && v != SCAN_DEAD) {
					v = SCAN_UNSAFE;
					why = scan_host_fmt(
					    s, "%s=%s reaches a raise of NotImplementedError",
					    k->name, *(const char **)b->unsafe.p);
				}
			}
			if ((k->kind == PF_K_CONSTANT || k->kind == PF_K_OVERRIDE ||
			     k->kind == PF_K_ENGINE_ARG) &&
			    v != SCAN_DEAD) {
				size_t had = b->unsafe.n;
				const char *uw = check_unsafe_values(b, fi, k);
				if (b->unsafe.n > had) {
					v = SCAN_UNSAFE;
					why = had ? why : uw;
				}
			}
		}
		if (k->param && (v == SCAN_LIVE || v == SCAN_UNSAFE) && !s->opt.library) {
			size_t mark = b->steps.n;
			const char *pw = param_always_passed(b, fi, k);
			if (pw) {
				v = SCAN_DEAD;
				why = pw;
				b->unsafe.n = 0;
			} else
				b->steps.n = mark;
		}
		muh_knob *o = scan_emit(s, b, fi, k, f->rel, v, why);
		if (!o)
			return;
		if (over_line) {
			o->overwritten_file = s->files[over_file].rel;
			o->overwritten_line = over_line;
		}
		char key[1200];
		snprintf(key, sizeof(key), "%s\x01%s\x01%s\x01%s", f->rel, o->scope, o->name,
		         o->kind);
		scan_knob_id_counted(s, occ, key, f->rel, o->scope, o->name, o->kind, o->id);
	}
	/* feeds: link launch bindings to the knob that feeds them */
	(void)0;
}

int scan_is_upper_like(const char *s)
{
	const char *p = s;
	while (*p == '_')
		p++;
	if (!*p)
		return 0;
	for (; *p; p++)
		if (!((*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') || *p == '_'))
			return 0;
	return 1;
}
