/*
 * scan_resolve.c — steps 3 to 6 of muh scan: the index (module name ->
 * file, (file, top-level name) -> definition, name -> loads), constant-false
 * guards, platform modules, and the reachability of every top-level function
 * and class from the loads of its name (see scan_int.h for the pipeline).
 *
 * Name resolution is static and by name: aliases of functions, getattr and
 * registries are not followed; what that leaves unresolved is `unknown`.
 *
 * Must never: print, exit, make knobs, or touch the tree.
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

/* ---- 3. index ---------------------------------------------------------------- */

int scan_def_key_get(muh_surface *s, int fi, const char *name)
{
	char key[512];
	snprintf(key, sizeof(key), "%d\x01%s", fi, name);
	return scan_smap_get(&s->defs, key);
}

static int def_key_put(muh_surface *s, int fi, const char *name, int val)
{
	char key[512];
	snprintf(key, sizeof(key), "%d\x01%s", fi, name);
	if (scan_smap_get(&s->defs, key) >= 0)
		return 0;
	const char *k = scan_sa_str(s, key);
	int *slot = k ? scan_smap_slot(&s->defs, k, 1) : NULL;
	if (!slot)
		return -1;
	*slot = val;
	return 0;
}

/* defs values: scope index, or -(2 + knob index) for module-level knobs */
int scan_build_index(muh_surface *s)
{
	for (int fi = 0; fi < s->nfiles; fi++) {
		sfile *f = &s->files[fi];
		int *slot = scan_smap_slot(&s->mods, f->module, 1);
		if (!slot)
			return -1;
		if (*slot < 0)
			*slot = fi;
		pyfile *pf = f->pf;
		for (int i = 0; i < pf->nscopes; i++)
			if (pf->scopes[i].parent < 0 && def_key_put(s, fi, pf->scopes[i].name, i))
				return -1;
		for (int i = 0; i < pf->nknobs; i++)
			if (pf->knobs[i].scope < 0 &&
			    (pf->knobs[i].kind == PF_K_CONSTANT ||
			     pf->knobs[i].kind == PF_K_OVERRIDE ||
			     pf->knobs[i].kind == PF_K_AUTOTUNE) &&
			    def_key_put(s, fi, pf->knobs[i].name, -(2 + i)))
				return -1;
		for (int i = 0; i < pf->nrefs; i++) {
			pf_ref *r = &pf->refs[i];
			if (r->flags & PF_R_SPLAT)
				continue;
			int *ns = scan_smap_slot(&s->names, r->name, 1);
			if (!ns)
				return -1;
			if (*ns < 0) {
				vec *nl = scan_vec_push(&s->namelists);
				if (!nl)
					return -1;
				nl->esz = sizeof(ref_at);
				*ns = (int)s->namelists.n - 1;
			}
			vec *list = &((vec *)s->namelists.p)[*ns];
			ref_at *ra = scan_vec_push(list);
			if (!ra)
				return -1;
			ra->file = fi;
			ra->ref = i;
		}
	}
	return 0;
}

/* Each module's first importer among the non-test modules (a module others
 * import is a library module: its `if __name__ == '__main__':` block is a
 * script's, not the engine's). After scan_build_index (mods). */
void scan_mark_imported(muh_surface *s)
{
	for (int fi = 0; fi < s->nfiles; fi++)
		s->files[fi].imported_by = -1;
	for (int fi = 0; fi < s->nfiles; fi++) {
		const sfile *f = &s->files[fi];
		if (f->is_test)
			continue;
		for (int i = 0; i < f->pf->nimports; i++) {
			const pf_import *im = &f->pf->imports[i];
			int m = -1;
			if (im->attr) {
				char buf[600];
				snprintf(buf, sizeof(buf), "%s.%s", im->module, im->attr);
				m = scan_smap_get(&s->mods, buf);
			}
			if (m < 0)
				m = scan_smap_get(&s->mods, im->module);
			if (m >= 0 && m != fi && s->files[m].imported_by < 0) {
				s->files[m].imported_by = fi;
				s->files[m].imported_line = im->line;
			}
		}
	}
}

const vec *scan_refs_named(const muh_surface *s, const char *name)
{
	int i = scan_smap_get(&s->names, name);
	return i < 0 ? NULL : &((const vec *)s->namelists.p)[i];
}

int scan_in_dead(const sfile *f, uint32_t byte)
{
	for (int i = 0; i < f->ndead; i++)
		if (byte >= f->dead[2 * i] && byte < f->dead[2 * i + 1])
			return 1;
	return 0;
}

/* The import that binds alias in file fi: one outside dead code when there
 * is one; else one under a constant-false guard, noted in
 * s->dead_import_file/line (a name bound only by an import that never
 * happens: what it names is reached only through dead code). */
const pf_import *scan_import_of(const muh_surface *s, int fi, const char *alias)
{
	const sfile *f = &s->files[fi];
	const pf_import *dead = NULL;
	for (int i = 0; i < f->pf->nimports; i++) {
		const pf_import *im = &f->pf->imports[i];
		if (strcmp(im->alias, alias))
			continue;
		if (!scan_in_dead(f, im->byte))
			return im;
		if (!dead)
			dead = im;
	}
	if (dead) {
		((muh_surface *)s)->dead_import_file = fi;
		((muh_surface *)s)->dead_import_line = dead->line;
	}
	return dead;
}

int scan_mod_lookup(const muh_surface *s, const char *m)
{
	return m ? scan_smap_get(&s->mods, m) : -1;
}

/* Resolves a name as seen from file fi: a top-level definition of fi, or
 * what an import binds (following re-exports through packages). */
int scan_resolve_name(const muh_surface *s, int fi, const char *name, int *ofi,
                      const char **oname, int depth)
{
	if (depth > 8)
		return RES_NONE;
	if (scan_def_key_get((muh_surface *)s, fi, name) != -1) {
		*ofi = fi;
		*oname = name;
		return RES_SYMBOL;
	}
	const pf_import *im = scan_import_of(s, fi, name);
	if (!im) { /* `from m import *` re-exports m's top-level names */
		const pyfile *pf = s->files[fi].pf;
		for (int i = 0; i < pf->nimports; i++) {
			const pf_import *st = &pf->imports[i];
			if (strcmp(st->alias, "*") || scan_in_dead(&s->files[fi], st->byte))
				continue;
			int m = scan_mod_lookup(s, st->module);
			if (m >= 0 && m != fi &&
			    scan_resolve_name(s, m, name, ofi, oname, depth + 1) == RES_SYMBOL)
				return RES_SYMBOL;
		}
		return RES_NONE;
	}
	if (im->attr) {
		char buf[600];
		snprintf(buf, sizeof(buf), "%s.%s", im->module, im->attr);
		int sub = scan_mod_lookup(s, buf);
		int m = scan_mod_lookup(s, im->module);
		if (sub >= 0) {
			/* a package whose __init__ binds the name itself (`from .rms_norm
			 * import rms_norm`) gives that binding, not the submodule */
			if (m >= 0 && m != fi && m != sub &&
			    (scan_def_key_get((muh_surface *)s, m, im->attr) != -1 ||
			     scan_import_of(s, m, im->attr))) {
				int r = scan_resolve_name(s, m, im->attr, ofi, oname, depth + 1);
				if (r != RES_NONE)
					return r;
			}
			*ofi = sub;
			*oname = NULL;
			return RES_MODULE;
		}
		if (m < 0 || m == fi)
			return RES_NONE;
		return scan_resolve_name(s, m, im->attr, ofi, oname, depth + 1);
	}
	int m = scan_mod_lookup(s, im->module);
	if (m < 0)
		return RES_NONE;
	*ofi = m;
	*oname = NULL;
	return RES_MODULE;
}

/* The module file an object expression (`ops`, `vllm._custom_ops`) names
 * in file fi, or -1. */
int scan_resolve_obj(const muh_surface *s, int fi, const char *obj)
{
	if (!obj)
		return -1;
	int ofi;
	const char *on;
	if (!strchr(obj, '.'))
		return scan_resolve_name(s, fi, obj, &ofi, &on, 0) == RES_MODULE ? ofi : -1;
	const pf_import *im = scan_import_of(s, fi, obj);
	if (im && !im->attr)
		return scan_mod_lookup(s, im->module);
	/* alias.rest: resolve the first component, append the rest */
	char head[256];
	const char *dot = strchr(obj, '.');
	snprintf(head, sizeof(head), "%.*s", (int)(dot - obj), obj);
	if (scan_resolve_name(s, fi, head, &ofi, &on, 0) != RES_MODULE)
		return -1;
	char buf[600];
	snprintf(buf, sizeof(buf), "%s%s", s->files[ofi].module, dot);
	return scan_mod_lookup(s, buf);
}

static int ref_hits1(const muh_surface *s, int rf, const pf_ref *r, int tfi, const char *name);

/* Does ref r (in file rf) load the top-level name `name` of file tfi? 1 yes,
 * 2 yes but only through an import under a constant-false guard
 * (s->dead_import_file/line say which), 0 no. */
int scan_ref_hits(const muh_surface *s, int rf, const pf_ref *r, int tfi, const char *name)
{
	muh_surface *m = (muh_surface *)s;
	m->dead_import_file = -1;
	int h = ref_hits1(s, rf, r, tfi, name);
	return h && m->dead_import_file >= 0 ? 2 : h;
}

static int ref_hits1(const muh_surface *s, int rf, const pf_ref *r, int tfi, const char *name)
{
	if (r->flags & (PF_R_KEY | PF_R_SPLAT))
		return 0;
	if (r->flags & PF_R_STR) { /* 'pkg.mod.Name': the module by its absolute name */
		int m = scan_mod_lookup(s, r->obj);
		if (m == tfi)
			return scan_def_key_get((muh_surface *)s, tfi, name) != -1;
		int ofi;
		const char *on;
		return m >= 0 && scan_resolve_name(s, m, name, &ofi, &on, 0) == RES_SYMBOL && ofi == tfi;
	}
	if (r->flags & PF_R_ATTR) {
		int m = scan_resolve_obj(s, rf, r->obj);
		if (m == tfi)
			return 1;
		if (m >= 0) { /* re-exported through a package */
			int ofi;
			const char *on;
			return scan_resolve_name(s, m, name, &ofi, &on, 0) == RES_SYMBOL && ofi == tfi;
		}
		return 0;
	}
	if (rf == tfi)
		return 1;
	int ofi;
	const char *on;
	return scan_resolve_name(s, rf, name, &ofi, &on, 0) == RES_SYMBOL && ofi == tfi &&
	       !strcmp(on, name);
}

/* ---- 4. guards ---------------------------------------------------------------- */

/* Constant propagation across modules. A condition is evaluated as the
 * tuned platform (CUDA-like) would: literals, module bindings assigned once
 * outside any if/try/loop (resolved through imports and `m.NAME`), not/and/
 * or, helper predicates whose body is one `return <condition>`, platform
 * predicates (is_hip(), current_platform.is_rocm(), torch.version.hip,
 * torch.xpu.is_available(), device_type == "npu" ...) and device-capability
 * checks (decided by --device, else undecided). */
enum { CR_CAP = 100 }; /* cres.plat: a capability check nobody decided */

typedef struct cres {
	int v;    /* 1, 0, or -1 undecided */
	int plat; /* decided by a platform predicate (enum pf_platform), CR_CAP, or 0 */
	const char *plat_note;
	int nev;
	int ev_file[3], ev_line[3];
	const char *ev_note[3];
} cres;

static void cres_ev(cres *r, int file, int line, const char *note)
{
	if (r->nev < 3) {
		r->ev_file[r->nev] = file;
		r->ev_line[r->nev] = line;
		r->ev_note[r->nev++] = note;
	}
}

/* A module-level binding of name in file fi that is a constant's definition:
 * the only binding of that name, not under an if/try/loop/with. */
static const pf_bind *module_bind(const muh_surface *s, int fi, const char *name)
{
	const pyfile *pf = s->files[fi].pf;
	const pf_bind *b = NULL;
	int n = 0;
	for (int i = 0; i < pf->nbinds; i++)
		if (!strcmp(pf->binds[i].name, name)) {
			b = &pf->binds[i];
			n++;
		}
	return n == 1 && !b->guarded && b->expr >= 0 ? b : NULL;
}

/* Is name bound locally in function scope sc (a parameter or an assignment)? */
int scan_local_binding(const pyfile *pf, int sc, const char *name)
{
	for (int g = 0; sc >= 0 && g < 64; g++, sc = pf->scopes[sc].parent) {
		const pf_scope *p = &pf->scopes[sc];
		if (!(p->flags & PF_FUNC))
			continue;
		for (int i = 0; i < p->nparams; i++)
			if (!strcmp(p->params[i], name))
				return 1;
		for (int i = 0; i < pf->nasgs; i++)
			if (pf->asgs[i].scope == sc && !strcmp(pf->asgs[i].name, name))
				return 1;
	}
	return 0;
}

/* Capability (major*10+minor) of a device by name, -1 when not known. */
static int device_capability(const char *dev)
{
	static const struct {
		const char *tok;
		int cap;
	} t[] = {{"h100", 90}, {"h200", 90}, {"h800", 90}, {"h20", 90},   {"gh200", 90},
	         {"b200", 100}, {"b100", 100}, {"gb200", 100}, {"a100", 80}, {"a800", 80},
	         {"a30", 80},  {"a10", 86},   {"a10g", 86},   {"a40", 86},   {"a6000", 86},
	         {"l40", 89},  {"l40s", 89},  {"l4", 89},     {"l20", 89},   {"4090", 89},
	         {"v100", 70}, {"t4", 75},    {NULL, 0}};
	char buf[256];
	size_t o = 0;
	for (const char *p = dev; *p && o + 1 < sizeof(buf); p++)
		buf[o++] = (*p == ' ' || *p == '-') ? '_' : (char)(*p >= 'A' && *p <= 'Z' ? *p + 32 : *p);
	buf[o] = '\0';
	char *save = NULL;
	for (char *tok = strtok_r(buf, "_", &save); tok; tok = strtok_r(NULL, "_", &save))
		for (int i = 0; t[i].tok; i++)
			if (!strcmp(tok, t[i].tok))
				return t[i].cap;
	return -1;
}

static void const_eval(muh_surface *s, int fi, int e, int sc, int depth, cres *r);

static void eval_name(muh_surface *s, int fi, const pf_expr *x, int sc, int depth, cres *r)
{
	if (!strcmp(x->name, "TYPE_CHECKING")) {
		r->v = 0;
		return;
	}
	if (!x->obj && depth == 0 && scan_local_binding(s->files[fi].pf, sc, x->name))
		return; /* a local variable shadows module constants */
	int tf = -1;
	const char *tn = x->name;
	int ofi;
	const char *on;
	if (!x->obj) {
		int rr = scan_resolve_name(s, fi, x->name, &ofi, &on, 0);
		if (rr == RES_SYMBOL) {
			tf = ofi;
			tn = on;
		} else if (rr == RES_NONE) {
			/* a binding that is no knob: follow `from m import NAME` */
			tf = fi;
			for (int hop = 0; hop < 8 && tf >= 0; hop++) {
				const pf_import *im = scan_import_of(s, tf, tn);
				if (!im)
					break;
				if (!im->attr) {
					tf = -1;
					break;
				}
				tf = scan_mod_lookup(s, im->module);
				tn = im->attr;
			}
		}
	} else {
		tf = scan_resolve_obj(s, fi, x->obj);
		if (tf >= 0 && scan_resolve_name(s, tf, x->name, &ofi, &on, 0) == RES_SYMBOL) {
			tf = ofi;
			tn = on;
		}
	}
	if (tf < 0)
		return;
	const pf_bind *b = module_bind(s, tf, tn);
	if (!b)
		return;
	const_eval(s, tf, b->expr, -1, depth + 1, r);
	if (r->v >= 0 || r->plat)
		cres_ev(r, tf, b->line,
		        scan_host_fmt(s, "%s = %s", tn, s->files[tf].pf->exprs[b->expr].text));
}

static void const_eval(muh_surface *s, int fi, int e, int sc, int depth, cres *r)
{
	r->v = -1;
	const pyfile *pf = s->files[fi].pf;
	if (e < 0 || e >= pf->nexprs || depth > 12)
		return;
	const pf_expr *x = &pf->exprs[e];
	switch (x->op) {
	case PF_X_CONST:
		r->v = x->val;
		return;
	case PF_X_NAME:
		eval_name(s, fi, x, sc, depth, r);
		return;
	case PF_X_NOT:
		const_eval(s, fi, x->a, sc, depth + 1, r);
		if (r->v >= 0)
			r->v = !r->v;
		return;
	case PF_X_AND:
	case PF_X_OR: {
		cres a = {0}, b = {0};
		const_eval(s, fi, x->a, sc, depth + 1, &a);
		const_eval(s, fi, x->b, sc, depth + 1, &b);
		int stop = x->op == PF_X_AND ? 0 : 1; /* the value that decides alone */
		if (a.v == stop && !a.plat)
			*r = a;
		else if (b.v == stop && !b.plat)
			*r = b;
		else if (a.v == stop)
			*r = a;
		else if (b.v == stop)
			*r = b;
		else if (a.v == !stop && b.v == !stop) {
			*r = a.plat ? a : b;
			r->v = !stop;
		} else {
			r->v = -1;
			/* an undecided capability check keeps the branch for other devices;
			 * one --device decided does not */
			int ac = a.plat == CR_CAP && a.v < 0, bc = b.plat == CR_CAP && b.v < 0;
			r->plat = ac || bc ? CR_CAP : 0;
			r->plat_note = ac ? a.plat_note : b.plat_note;
		}
		return;
	}
	case PF_X_PLAT:
		r->v = x->plat == PF_PLAT_CUDA;
		r->plat = x->plat;
		r->plat_note = x->text;
		return;
	case PF_X_CAP: {
		int cap = s->opt.device ? device_capability(s->opt.device) : -1;
		r->plat = CR_CAP;
		r->plat_note = x->text;
		if (cap < 0)
			return;
		switch (x->capop) {
		case 'g':
			r->v = cap >= x->cap;
			break;
		case '>':
			r->v = cap > x->cap;
			break;
		case 'l':
			r->v = cap <= x->cap;
			break;
		case '<':
			r->v = cap < x->cap;
			break;
		case 'f':
			r->v = cap / 10 == x->cap / 10;
			break;
		default:
			r->v = cap == x->cap;
		}
		cres_ev(r, -1, 0,
		        scan_host_fmt(s, "--device %s has capability %d.%d", s->opt.device,
		                      cap / 10, cap % 10));
		return;
	}
	case PF_X_MAIN: {
		/* a module the tree imports runs its main block only as a script */
		const sfile *f = &s->files[fi];
		if (f->imported_by < 0)
			return; /* an entry script: `python -m` may run it */
		r->v = 0;
		cres_ev(r, f->imported_by, f->imported_line,
		        scan_host_fmt(s,
		                      "%s is imported here: the engine imports it, so its "
		                      "`__main__` block runs only when it is run as a script",
		                      f->rel));
		return;
	}
	case PF_X_CALL: {
		pf_call c = {0};
		c.fname = x->name;
		c.obj = x->obj;
		int tf, ts;
		if (!scan_call_target(s, fi, &c, &tf, &ts) || s->files[tf].pf->scopes[ts].ret_expr < 0)
			return;
		const pf_scope *d = &s->files[tf].pf->scopes[ts];
		const_eval(s, tf, d->ret_expr, -1, depth + 1, r);
		if (r->v >= 0 || r->plat)
			cres_ev(r, tf, d->line,
			        scan_host_fmt(s, "def %s returns %s", d->qual,
			                      s->files[tf].pf->exprs[d->ret_expr].text));
		return;
	}
	default:
		return;
	}
}

static int push_range(range **arr, int *n, uint32_t a, uint32_t b, int line, const char *note,
                      const cres *r)
{
	range *na = realloc(*arr, sizeof(range) * (size_t)(*n + 1));
	if (!na)
		return -1;
	*arr = na;
	range *g = &na[(*n)++];
	g->a = a;
	g->b = b;
	g->line = line;
	g->note = note;
	g->cfile = r && r->nev ? r->ev_file[0] : -1;
	g->cline = r && r->nev ? r->ev_line[0] : 0;
	g->head = NULL;
	g->nev = r ? r->nev : 0;
	for (int i = 0; i < g->nev; i++) {
		g->evf[i] = r->ev_file[i];
		g->evl[i] = r->ev_line[i];
		g->evn[i] = r->ev_note[i];
	}
	return 0;
}

/* The "because" of a condition's value: the constants behind it. */
static const char *cres_because(muh_surface *s, const cres *r)
{
	char buf[700];
	size_t o = 0;
	buf[0] = '\0';
	for (int i = 0; i < r->nev && o + 2 < sizeof(buf); i++) {
		int n = r->ev_file[i] >= 0
		            ? snprintf(buf + o, sizeof(buf) - o, "%s%s (%s:%d)", i ? "; " : "",
		                       r->ev_note[i], s->files[r->ev_file[i]].rel, r->ev_line[i])
		            : snprintf(buf + o, sizeof(buf) - o, "%s%s", i ? "; " : "", r->ev_note[i]);
		if (n < 0)
			break;
		o += (size_t)n;
		if (o >= sizeof(buf))
			o = sizeof(buf) - 1;
	}
	return scan_sa_str(s, buf);
}

/* Does the body of `if __name__ == '__main__':` guard g read a command line
 * (`.parse_args()`, `.parse_known_args()`, `fire.Fire(...)`, `sys.argv`, or
 * a call of `main()` / `cli()`)? Such a block is an entry point of the
 * engine (`python -m vllm.entrypoints.openai.api_server`) even when other
 * modules import the file; one that does not (a kernel's benchmark or
 * self-test) is a script's. */
static int main_block_reads_argv(const pyfile *pf, const pf_guard *g)
{
	for (int i = 0; i < pf->ncalls; i++) {
		const pf_call *c = &pf->calls[i];
		if (c->byte < g->cons_start || c->byte >= g->cons_end || !c->fname)
			continue;
		if (!strcmp(c->fname, "parse_args") || !strcmp(c->fname, "parse_known_args") ||
		    !strcmp(c->fname, "Fire") || (!c->obj && (!strcmp(c->fname, "main") ||
		                                              !strcmp(c->fname, "cli"))))
			return 1;
	}
	for (int i = 0; i < pf->nrefs; i++) {
		const pf_ref *r = &pf->refs[i];
		if (r->byte >= g->cons_start && r->byte < g->cons_end && !strcmp(r->name, "argv"))
			return 1;
	}
	return 0;
}

/* Dead byte ranges (constant-false branches) and platform-only ranges of
 * every file, with the reason. Two rounds: an import under a dead guard can
 * stop resolving a name. */
int scan_compute_dead(muh_surface *s)
{
	for (int round = 0; round < 2; round++) {
		for (int fi = 0; fi < s->nfiles; fi++) {
			sfile *f = &s->files[fi];
			pyfile *pf = f->pf;
			range *dw = NULL, *pl = NULL;
			int nd = 0, np = 0;
			for (int i = 0; i < pf->nguards; i++) {
				const pf_guard *g = &pf->guards[i];
				cres r = {0};
				r.v = -1;
				if (g->cexpr >= 0 && pf->exprs[g->cexpr].op == PF_X_MAIN &&
				    main_block_reads_argv(pf, g))
					continue; /* `python -m pkg.server`: an entry point, undecided */
				if (g->constval >= 0)
					r.v = g->constval;
				else if (g->cexpr >= 0)
					const_eval(s, fi, g->cexpr, g->scope, 0, &r);
				else if (g->name && !strcmp(g->name, "TYPE_CHECKING"))
					r.v = g->negated;
				uint32_t a, b;
				int on_cons = r.v == 0 || (r.v < 0 && r.plat == CR_CAP);
				if (on_cons) {
					a = g->cons_start;
					b = g->cons_end;
				} else if (r.v == 1 && g->alt_end) {
					a = g->alt_start;
					b = g->alt_end;
				} else {
					continue;
				}
				const char *cond = g->cond ? g->cond : "?";
				int rc;
				if (r.plat == CR_CAP && r.v < 0) {
					rc = push_range(
					    &pl, &np, a, b, g->line,
					    scan_host_fmt(
					        s,
					        "runs only where `%s` holds (a device-capability "
					        "check; muh scan --device NAME decides)",
					        cond),
					    &r);
				} else if (r.plat) {
					const char *where =
					    r.plat == CR_CAP ? cres_because(s, &r)
					    : r.plat == PF_PLAT_CUDA
					        ? "runs only off CUDA"
					        : scan_host_fmt(s, "runs only on %s",
					                        pyfile_plat_name(r.plat));
					rc = push_range(
					    &pl, &np, a, b, g->line,
					    scan_host_fmt(
					        s, "%s of `if %s:` (line %d) %s%s",
					        on_cons ? "the body" : "the else part", cond,
					        g->line,
					        r.plat == CR_CAP ? "is for other devices: " : "",
					        where),
					    &r);
				} else if (g->over_line) {
					rc = push_range(
					    &dw, &nd, a, b, g->line,
					    scan_host_fmt(s,
					                  "`if %s:` (line %d) is always %s: %s = "
					                  "%s at line %d",
					                  cond, g->line, r.v ? "true" : "false",
					                  g->name ? g->name : cond,
					                  (r.v ^ g->negated) ? "True" : "False",
					                  g->over_line),
					    NULL);
				} else {
					const char *because = r.nev ? cres_because(s, &r) : NULL;
					rc = push_range(
					    &dw, &nd, a, b, g->line,
					    scan_host_fmt(s, "`if %s:` (line %d) is always %s%s%s",
					                  cond, g->line, r.v ? "true" : "false",
					                  because ? ": " : "",
					                  because ? because : ""),
					    &r);
				}
				if (rc) {
					free(dw);
					free(pl);
					return -1;
				}
				range *pushed = r.plat ? &pl[np - 1] : &dw[nd - 1];
				pushed->head =
				    r.plat
				        ? pushed->note
				        : scan_host_fmt(s,
				                        "`if %s:` is always %s, so %s cannot run",
				                        cond, r.v ? "true" : "false",
				                        on_cons ? "its body" : "its else part");
			}
			uint32_t *dead = nd ? malloc(sizeof(uint32_t) * 2 * (size_t)nd) : NULL;
			if (nd && !dead) {
				free(dw);
				free(pl);
				return -1;
			}
			for (int i = 0; i < nd; i++) {
				dead[2 * i] = dw[i].a;
				dead[2 * i + 1] = dw[i].b;
			}
			free(f->dead);
			free(f->dead_why);
			free(f->plat);
			f->dead = dead;
			f->ndead = nd;
			f->dead_why = dw;
			f->plat = pl;
			f->nplat = np;
		}
	}
	return 0;
}

/* The reason a byte of file f is dead (a constant-false branch), or NULL. */
const range *scan_dead_range_at(const sfile *f, uint32_t byte)
{
	for (int i = 0; i < f->ndead; i++)
		if (byte >= f->dead[2 * i] && byte < f->dead[2 * i + 1])
			return f->dead_why ? &f->dead_why[i] : NULL;
	return NULL;
}

/* The platform range a byte of file f sits in, or NULL. */
const range *scan_plat_range_at(const sfile *f, uint32_t byte)
{
	for (int i = 0; i < f->nplat; i++)
		if (byte >= f->plat[i].a && byte < f->plat[i].b)
			return &f->plat[i];
	return NULL;
}

/* ---- 5. platform modules ---------------------------------------------------------- */

int scan_build_import_graph(muh_surface *s)
{
	for (int fi = 0; fi < s->nfiles; fi++) {
		s->files[fi].importers.esz = sizeof(int) * 3;
		s->files[fi].importees.esz = sizeof(int);
	}
	for (int fi = 0; fi < s->nfiles; fi++) {
		sfile *f = &s->files[fi];
		for (int i = 0; i < f->pf->nimports; i++) {
			const pf_import *im = &f->pf->imports[i];
			if (scan_in_dead(f, im->byte))
				continue;
			int m = -1;
			if (im->attr) {
				char buf[600];
				snprintf(buf, sizeof(buf), "%s.%s", im->module, im->attr);
				m = scan_mod_lookup(s, buf);
			}
			if (m < 0)
				m = scan_mod_lookup(s, im->module);
			if (m < 0 || m == fi)
				continue;
			int plat = 0;
			if ((im->guard >= 0 && !im->guard_else && f->pf->guards[im->guard].platform) ||
			    scan_plat_range_at(f, im->byte))
				plat = 1;
			int *e = scan_vec_push(&s->files[m].importers);
			if (!e)
				return -1;
			e[0] = fi;
			e[1] = im->line;
			e[2] = plat;
			int *o = scan_vec_push(&f->importees);
			if (!o)
				return -1;
			*o = m;
		}
	}
	return 0;
}

void scan_compute_platform(muh_surface *s)
{
	for (int fi = 0; fi < s->nfiles; fi++) {
		sfile *f = &s->files[fi];
		const char *p = f->is_test ? NULL : scan_path_platform(f->rel);
		if (p) {
			f->platform = 1;
			f->plat_file = -1;
			f->plat_why = scan_host_fmt(s, "%s module (by its path)", p);
		}
	}
	for (int round = 0; round < 12; round++) {
		int changed = 0;
		for (int fi = 0; fi < s->nfiles; fi++) {
			sfile *f = &s->files[fi];
			if (f->platform || f->is_test || !f->importers.n)
				continue;
			int live = 0, plat = 0, pf = -1, pl = 0;
			for (size_t i = 0; i < f->importers.n; i++) {
				int *e = (int *)f->importers.p + 3 * i;
				sfile *g = &s->files[e[0]];
				if (g->is_test)
					continue;
				if (g->platform || e[2]) {
					plat++;
					pf = e[0];
					pl = e[1];
				} else {
					live++;
				}
			}
			if (!live && plat) {
				f->platform = 1;
				f->plat_file = pf;
				f->plat_line = pl;
				const char *cond = NULL;
				const sfile *imf = &s->files[pf];
				for (int q = 0; q < imf->pf->nimports && !cond; q++) {
					const range *g = imf->pf->imports[q].line == pl
					                     ? scan_plat_range_at(imf, imf->pf->imports[q].byte)
					                     : NULL;
					if (g)
						cond = g->note;
				}
				f->plat_why =
				    s->files[pf].platform
				        ? scan_host_fmt(s, "imported only by platform module %s",
				                        s->files[pf].rel)
				    : cond
				        ? scan_host_fmt(
				              s, "imported only under a platform check: %s", cond)
				        : scan_host_fmt(s, "imported only under a platform check");
				changed = 1;
			}
		}
		if (!changed)
			break;
	}
}

/* ---- 6. reachability ------------------------------------------------------------- */

int scan_outer_scope(const pyfile *pf, int sc)
{
	int guard = 0;
	while (sc >= 0 && pf->scopes[sc].parent >= 0 && guard++ < 1000)
		sc = pf->scopes[sc].parent;
	return sc;
}

/* Is the top-level scope an --entry (NAME or module.NAME)? */
static int is_entry(const muh_surface *s, int fi, int top)
{
	const pf_scope *sc = &s->files[fi].pf->scopes[top];
	for (int i = 0; i < s->opt.nentries; i++) {
		const char *e = s->opt.entries[i];
		const char *dot = strrchr(e, '.');
		if (!strcmp(e, sc->name))
			return 1;
		if (dot && !strcmp(dot + 1, sc->name) &&
		    strlen(s->files[fi].module) == (size_t)(dot - e) &&
		    !strncmp(e, s->files[fi].module, (size_t)(dot - e)))
			return 1;
	}
	return 0;
}

/* Would a function nothing in the tree names be called from outside? A
 * registry decorator, `main`, dunder methods, an --entry name, or --library
 * say maybe (unknown); else it is dead ("no call in the tree"). */
int scan_maybe_called_from_outside(const muh_surface *s, int fi, int top)
{
	const pyfile *pf = s->files[fi].pf;
	const pf_scope *sc = &pf->scopes[top];
	return s->opt.library || !(sc->flags & PF_FUNC) || (sc->flags & PF_DECORATED) ||
	       !strcmp(sc->name, "main") || !strncmp(sc->name, "__", 2) || is_entry(s, fi, top);
}

/* What kind of reader a load is: live, test, platform ... s->cls_why gets
 * the reason when a range, a dead store or the enclosing function decides. */
enum reach scan_ref_class(muh_surface *s, int rf, const pf_ref *r, int *ef, int *el)
{
	sfile *f = &s->files[rf];
	*ef = rf;
	*el = r->line;
	s->cls_why = (why_at){NULL, -1, -1, NULL, -1, NULL};
	if (r->flags & PF_R_DEAD) {
		s->cls_why = (why_at){NULL, rf, r->dead, NULL, -1, NULL};
		return R_UNREACH;
	}
	if (r->flags & PF_R_UNREACH)
		return R_UNREACH;
	const range *dr = scan_dead_range_at(f, r->byte);
	if (dr || scan_in_dead(f, r->byte)) {
		s->cls_why = (why_at){dr ? dr->note : NULL, -1, -1, dr, rf, NULL};
		return R_UNREACH;
	}
	if (f->is_test)
		return R_TEST;
	if (f->platform)
		return R_PLATFORM;
	const range *pr = scan_plat_range_at(f, r->byte);
	if (pr) {
		s->cls_why = (why_at){pr->note, -1, -1, pr, rf, NULL};
		return R_PLATFORM;
	}
	if (r->scope < 0)
		return R_LIVE;
	int xf, xl;
	enum reach e = scan_scope_reach(s, rf, r->scope, &xf, &xl);
	int top = scan_outer_scope(f->pf, r->scope);
	if (e == R_NONE) {
		/* evidence: the definition nothing names (the root of the chain) */
		*el = f->pf->scopes[top].line;
		if (scan_maybe_called_from_outside(s, rf, top))
			return R_UNKNOWN;
		s->cls_why =
		    (why_at){scan_host_fmt(s, "%s, which nothing in the tree calls or names",
		                           f->pf->scopes[top].qual),
		             -1,
		             -1,
		             NULL,
		             -1,
		             NULL};
		return R_NOCALL;
	}
	if (e != R_LIVE && e != R_BUSY && xf >= 0) {
		/* the evidence is where the enclosing function is reached from */
		*ef = xf;
		*el = xl;
		s->cls_why = f->reach_why[top];
	}
	return e;
}

/* Combines reader classes: live beats unknown beats platform beats test
 * beats unreachable. */
int scan_reach_rank(enum reach r)
{
	switch (r) {
	case R_LIVE:
		return 6;
	case R_BUSY:
		return 6;
	case R_UNKNOWN:
		return 5;
	case R_PLATFORM:
		return 4;
	case R_TEST:
		return 3;
	case R_UNREACH:
		return 2;
	case R_NOCALL:
		return 2;
	default:
		return 0;
	}
}

/* Readers of the top-level name `name` of file tfi, excluding loads inside
 * the byte range [skip_a, skip_b) of tfi (the definition itself). Returns
 * the best class and its place. */
enum reach scan_readers_of(muh_surface *s, int tfi, const char *name, uint32_t skip_a,
                           uint32_t skip_b, int *ef, int *el)
{
	const vec *list = scan_refs_named(s, name);
	enum reach best = R_NONE;
	why_at bw = {NULL, -1, -1, NULL, -1, NULL};
	int bsc = -1, best_script = 0;
	*ef = -1;
	*el = 0;
	if (!list) {
		s->best_why = bw;
		s->best_scope = -1;
		return R_NONE;
	}
	for (size_t i = 0; i < list->n; i++) {
		const ref_at *ra = (const ref_at *)list->p + i;
		const pf_ref *r = &s->files[ra->file].pf->refs[ra->ref];
		if (ra->file == tfi && r->byte >= skip_a && r->byte < skip_b)
			continue;
		int hit = scan_ref_hits(s, ra->file, r, tfi, name);
		if (!hit)
			continue;
		int xf, xl;
		enum reach c;
		if (hit == 2) {
			int df = s->dead_import_file, dl = s->dead_import_line;
			c = R_UNREACH;
			xf = df;
			xl = dl;
			s->cls_why = (why_at){
			    scan_host_fmt(
			        s,
			        "%s is bound only by the import at %s:%d, under an `if` that is "
			        "always false",
			        r->obj ? r->obj : name, s->files[df].rel, dl),
			    -1,
			    -1,
			    NULL,
			    -1,
			    NULL};
			for (int q = 0; q < s->files[df].pf->nimports; q++) {
				const pf_import *im = &s->files[df].pf->imports[q];
				const range *g = im->line == dl ? scan_dead_range_at(&s->files[df], im->byte) : NULL;
				if (g) {
					s->cls_why.note =
					    scan_host_fmt(s, "%s; %s", s->cls_why.note, g->note);
					s->cls_why.rng = g;
					s->cls_why.rfile = df;
					s->cls_why.lead =
					    scan_host_fmt(s, "%s is bound only by this import",
					                  r->obj ? r->obj : name);
					break;
				}
			}
		} else {
			c = scan_ref_class(s, ra->file, r, &xf, &xl);
		}
		/* a live reader in the engine beats one in benchmarks/, examples/ ... */
		int script = scan_path_is_script(s->files[ra->file].rel);
		if (scan_reach_rank(c) > scan_reach_rank(best) ||
		    (best == R_LIVE && best_script && !script && scan_reach_rank(c) == 6)) {
			best = c == R_BUSY ? R_LIVE : c;
			best_script = script;
			*ef = xf;
			*el = xl;
			bw = s->cls_why;
			bsc = hit == 2 ? -1 : r->scope;
			if (best == R_LIVE && !script)
				break;
		}
	}
	s->best_why = bw;
	s->best_scope = bsc;
	return best;
}

/* A class that declares another device (pf_scope.plat_expr: `_enum =
 * PlatformEnum.CPU`, `_supports_current_device` returning `is_rocm() and
 * ...`): the note saying so, else NULL. */
static const char *class_platform(muh_surface *s, int fi, int top)
{
	const pf_scope *scp = &s->files[fi].pf->scopes[top];
	if (!(scp->flags & PF_CLASS) || scp->plat_expr < 0)
		return NULL;
	cres r = {0};
	const_eval(s, fi, scp->plat_expr, -1, 0, &r);
	const char *cond = s->files[fi].pf->exprs[scp->plat_expr].text;
	const char *decl =
	    strstr(cond, "PlatformEnum")
	        ? scan_host_fmt(s, "declares `_enum = %s` (line %d)", cond, scp->plat_line)
	        : scan_host_fmt(s, "supports only devices where `%s` (line %d)", cond,
	                        scp->plat_line);
	if (r.v == 0 && r.plat && r.plat != CR_CAP && r.plat != PF_PLAT_CUDA)
		return scan_host_fmt(s, "class %s %s: %s only", scp->qual, decl,
		                     pyfile_plat_name(r.plat));
	if (r.v < 0 && r.plat == CR_CAP)
		return scan_host_fmt(s,
		                     "class %s %s (a device-capability check: muh scan --device "
		                     "NAME decides)",
		                     scp->qual, decl);
	return NULL;
}

/* Reachability of the outermost scope that contains sc: classes are live
 * when any live code names them; functions take the best class of their
 * readers (recursively). */
enum reach scan_scope_reach(muh_surface *s, int fi, int sc, int *ef, int *el)
{
	sfile *f = &s->files[fi];
	int top = scan_outer_scope(f->pf, sc);
	*ef = -1;
	*el = 0;
	s->best_why = (why_at){NULL, -1, -1, NULL, -1, NULL};
	s->best_scope = -1;
	if (top < 0)
		return R_LIVE;
	if (f->reach[top] == R_BUSY)
		return R_BUSY;
	if (f->reach[top] != R_TODO) {
		*ef = f->reach_file[top];
		*el = f->reach_line[top];
		s->best_why = f->reach_why[top];
		s->best_scope = f->reach_scope[top];
		return f->reach[top];
	}
	f->reach[top] = R_BUSY;
	const pf_scope *scp = &f->pf->scopes[top];
	const char *pnote = class_platform(s, fi, top);
	enum reach r;
	if (pnote) { /* a class for another device: whoever names it */
		r = R_PLATFORM;
		*ef = fi;
		*el = scp->plat_line;
		s->best_scope = -1;
		s->best_why = (why_at){pnote, -1, -1, NULL, -1, NULL};
	} else {
		r = scan_readers_of(s, fi, scp->name, scp->start, scp->end, ef, el);
	}
	if (r != R_LIVE && is_entry(s, fi, top)) { /* called from outside */
		r = R_LIVE;
		*ef = -1;
		s->best_scope = -1;
		s->best_why = (why_at){NULL, -1, -1, NULL, -1, NULL};
	}
	f->reach[top] = (unsigned char)r;
	f->reach_file[top] = *ef;
	f->reach_line[top] = *el;
	f->reach_scope[top] = s->best_scope;
	f->reach_why[top] = s->best_why;
	return r;
}

/* The function a call resolves to: (*ofi, *osc) or 0. */
int scan_call_target(muh_surface *s, int fi, const pf_call *c, int *ofi, int *osc)
{
	return scan_call_def(s, fi, c, ofi, osc, 0);
}

int scan_host_call_def(muh_surface *s, int fi, const pf_call *c, int *ofi, int *osc)
{
	return scan_call_def(s, fi, c, ofi, osc, 1);
}

/* The top-level definition a call resolves to (any: a class too). */
int scan_call_def(muh_surface *s, int fi, const pf_call *c, int *ofi, int *osc, int any)
{
	if (!c->fname)
		return 0;
	int tf = -1;
	const char *tn = c->fname;
	if (c->obj) {
		tf = scan_resolve_obj(s, fi, c->obj);
		if (tf >= 0) {
			int xf;
			const char *xn;
			if (scan_resolve_name(s, tf, c->fname, &xf, &xn, 0) == RES_SYMBOL) {
				tf = xf;
				tn = xn;
			}
		}
	} else {
		const char *xn;
		if (scan_resolve_name(s, fi, c->fname, &tf, &xn, 0) != RES_SYMBOL)
			tf = -1;
		else
			tn = xn;
	}
	if (tf < 0)
		return 0;
	int d = scan_def_key_get(s, tf, tn);
	if (d < 0)
		return 0;
	if (d < 0 || (!any && !(s->files[tf].pf->scopes[d].flags & PF_FUNC)))
		return 0;
	*ofi = tf;
	*osc = d;
	return 1;
}

enum scan_env_reader scan_host_read_class(muh_surface *s, int fi, int scope, uint32_t byte,
                                          int line, unsigned flags)
{
	pf_ref r = {0};
	r.scope = scope;
	r.byte = byte;
	r.line = line;
	r.flags = flags & PF_R_UNREACH;
	int ef, el;
	switch (scan_ref_class(s, fi, &r, &ef, &el)) {
	case R_LIVE:
	case R_BUSY:
		return SCAN_ENV_R_LIVE;
	case R_UNKNOWN:
		return SCAN_ENV_R_UNKNOWN;
	case R_PLATFORM:
		return SCAN_ENV_R_PLATFORM;
	case R_TEST:
		return SCAN_ENV_R_TEST;
	case R_UNREACH:
	case R_NOCALL: /* read only in a function nothing in the tree calls */
		return SCAN_ENV_R_UNREACH;
	default:
		return SCAN_ENV_R_NONE;
	}
}
