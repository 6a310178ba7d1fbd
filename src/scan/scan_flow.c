/*
 * scan_flow.c — def-use across calls for tuning values (issue 28 item 1).
 *
 * A knob's value matters only where it arrives. pyfile.c/pyflow.c see one
 * function: `BLOCK = 256` then `helper(x, BLOCK=BLOCK)` is a read of BLOCK,
 * so the knob was live even when helper's first statement is
 * `BLOCK = triton.next_power_of_2(n)`. This file follows a value forward,
 * from a variable after its store, hop by hop:
 *   - a derived assignment (`grid = (cdiv(n, BLOCK),)`, `config =
 *     configs[m]`, `config = config.copy()`): its target carries it on;
 *   - a call argument, by position or keyword, into the resolved callee's
 *     parameter (`**kw` parameters carry keyword arguments on by name, and
 *     `**kw` passed on carries them into the next callee); a parameter the
 *     callee binds again on every path before any read (pyfile.c's
 *     pf_scope.pkill) discards it, with that line as evidence;
 *   - an attribute store `self.x = v`: the loads `self.x` in the methods
 *     of the class carry it on (a load of x anywhere else in the tree is
 *     open; none at all discards it);
 *   - `return`: into every caller's result (calls through a
 *     functools.partial too): `x = f()` carries it on as x, an `x = f()`
 *     that pyfile.c found overwritten before any read (or read only by dead
 *     code) discards it;
 *   - any use inside a `kernel[grid](...)` launch reaches the launch.
 * A use inside dead code (PF_R_DEAD, after a return) discards it. Any other
 * use (a condition, a store to another object's attribute, a call the tree
 * does not define, a closure) is open: a read the analysis cannot follow.
 * The fate of a value is the best of its uses' fates: REACHES (with the
 * chain of hops as evidence) > OPEN > DISCARDED (every use discarded; the
 * first discard as evidence) > NONE. scan.c decides verdicts from it: a
 * function-level constant whose value is DISCARDED is dead, one that
 * REACHES is live with the chain; a config-file lookup whose loaded value
 * REACHES a launch is live, DISCARDED dead; OPEN and NONE leave scan.c's
 * older rules (reads by name, reachability) in charge.
 *
 * Bounded: at most 10 hops deep and 20,000 steps a query (past that: OPEN);
 * a (file, scope, variable, key) already followed from an earlier byte is
 * not followed again. Heuristic, like the rest of scan: names resolve
 * through scan.c's call resolution (top-level functions and imports; a
 * method call `obj.m()` is not followed: open), reaching definitions are
 * by byte order (a later store of the same name does not end the value's
 * uses), and only `self.x` attribute stores are followed.
 *
 * Must never: change a verdict by itself (scan.c does), allocate outside
 * its own indexes and the surface's arena, or depend on anything but the
 * files' facts (the indexes bucket by FNV-1a of the name, entries in file
 * then call order, built after the parse, on one thread: output bytes stay
 * the same at any -j).
 */
#include <stdlib.h>
#include <string.h>

#include "scan_env.h"
#include "scan_flow.h"
#include "scan_host.h"

typedef struct callee_ent {
	uint64_t h;       /* FNV-1a 64 of name: the index sorts by it first */
	const char *name; /* the callee's last name (or a partial's function) */
	int file, call;
	int partial; /* c.partial names the function */
} callee_ent;

/* A file's plain loads chained by name hash, in ref order. */
typedef struct ref_index {
	int *head, *next;
	unsigned mask;
} ref_index;

/* Entries bucketed by name hash (a counting sort: O(n), stable, so a
 * bucket holds its entries in file, then call order): bucket b is
 * e[start[b] .. start[b + 1]); a lookup filters the bucket by name. */
typedef struct name_index {
	callee_ent *e;
	int n;
	int *start;
	unsigned mask;
} name_index;

struct scan_flow {
	muh_surface *s;
	ref_index *rix;  /* per file, built at its first query (head NULL: not yet) */
	name_index ents;  /* calls by callee name (and partials by their function) */
	name_index meths; /* methods by name (file, scope in .call) */
	int built;
};

typedef struct seen_ent {
	int file, scope;
	const char *name, *key;
	uint32_t after;
} seen_ent;

/* One query's state: the path of hops so far and the result. */
typedef struct fq {
	scan_flow *f;
	scan_flow_res *out;
	scan_flow_step path[SCAN_FLOW_MAXSTEPS];
	int npath;
	seen_ent seen[256];
	int nseen;
	int budget;
	int have_discard;
	int engine_only; /* callers in scripts beside the engine do not count */
} fq;

/* (scan_flow.h) */
scan_flow *scan_flow_new(muh_surface *s)
{
	scan_flow *f = calloc(1, sizeof(*f));
	if (f)
		f->s = s;
	return f;
}

/* (scan_flow.h) NULL is fine. */
void scan_flow_free(scan_flow *f)
{
	if (!f)
		return;
	free(f->ents.e);
	free(f->ents.start);
	free(f->meths.e);
	free(f->meths.start);
	for (int i = 0; f->rix && i < scan_host_nfiles(f->s); i++) {
		free(f->rix[i].head);
		free(f->rix[i].next);
	}
	free(f->rix);
	free(f);
}

/* The index key of a name (FNV-1a 64: deterministic, so is the order). */
static uint64_t name_hash(const char *n)
{
	return pyfile_hash(n, strlen(n));
}

/* Buckets the n entries of raw (in file, call order) into x, which takes
 * ownership of nothing: raw is copied. 0, or -1 on OOM. */
static int index_build(name_index *x, const callee_ent *raw, int n)
{
	unsigned nb = 64;
	while (nb < (unsigned)n && nb < (1u << 22))
		nb <<= 1;
	x->mask = nb - 1;
	x->n = n;
	x->e = malloc(sizeof(callee_ent) * (size_t)(n ? n : 1));
	x->start = calloc((size_t)nb + 1, sizeof(int));
	if (!x->e || !x->start)
		return -1;
	for (int i = 0; i < n; i++)
		x->start[(raw[i].h & x->mask) + 1]++;
	for (unsigned b = 0; b < nb; b++)
		x->start[b + 1] += x->start[b];
	int *fill = malloc(sizeof(int) * nb);
	if (!fill)
		return -1;
	memcpy(fill, x->start, sizeof(int) * nb);
	for (int i = 0; i < n; i++)
		x->e[fill[raw[i].h & x->mask]++] = raw[i];
	free(fill);
	return 0;
}

/* The bucket of name in x: [*a, *b) (entries of other names may be in it). */
static uint64_t index_bucket(const name_index *x, const char *name, int *a, int *b)
{
	uint64_t h = name_hash(name);
	if (!x->start) {
		*a = *b = 0;
		return h;
	}
	*a = x->start[h & x->mask];
	*b = x->start[(h & x->mask) + 1];
	return h;
}

/* Is scope i of pf a function defined directly in a class body? */
static int is_method(const pyfile *pf, int i)
{
	const pf_scope *m = &pf->scopes[i];
	return (m->flags & PF_FUNC) && m->parent >= 0 && (pf->scopes[m->parent].flags & PF_CLASS);
}

/* Builds the index of calls by callee name and of methods by name (once).
 * 0, or -1 on OOM. */
static int build_callees(scan_flow *f)
{
	if (f->built)
		return f->ents.start && f->meths.start ? 0 : -1;
	f->built = 1;
	int n = 0, nm = 0, nf = scan_host_nfiles(f->s);
	for (int fi = 0; fi < nf; fi++) {
		const char *rel, *mod;
		int test;
		const pyfile *pf = scan_host_file(f->s, fi, &rel, &mod, &test);
		for (int i = 0; pf && i < pf->ncalls; i++)
			n += (pf->calls[i].fname != NULL) + (pf->calls[i].partial != NULL);
		for (int i = 0; pf && i < pf->nscopes; i++)
			nm += is_method(pf, i);
	}
	callee_ent *raw = malloc(sizeof(callee_ent) * (size_t)(n + nm + 1));
	if (!raw)
		return -1;
	int k = 0, km = n;
	for (int fi = 0; fi < nf; fi++) {
		const char *rel, *mod;
		int test;
		const pyfile *pf = scan_host_file(f->s, fi, &rel, &mod, &test);
		for (int i = 0; pf && i < pf->ncalls; i++) {
			const pf_call *c = &pf->calls[i];
			if (c->fname)
				raw[k++] = (callee_ent){name_hash(c->fname), c->fname, fi, i, 0};
			if (c->partial)
				raw[k++] = (callee_ent){name_hash(c->partial), c->partial, fi, i, 1};
		}
		for (int i = 0; pf && i < pf->nscopes; i++)
			if (is_method(pf, i))
				raw[km++] = (callee_ent){name_hash(pf->scopes[i].name),
				                         pf->scopes[i].name, fi, i, 0};
	}
	int rc = index_build(&f->ents, raw, n) || index_build(&f->meths, raw + n, nm) ? -1 : 0;
	free(raw);
	return rc;
}

/* File fi's facts (and its relative path in *rel). */
static const pyfile *file_of(fq *q, int fi, const char **rel)
{
	const char *mod;
	int test;
	return scan_host_file(q->f->s, fi, rel, &mod, &test);
}

/* Is file fi a test file (its calls are not the engine's)? */
static int is_test_file(fq *q, int fi)
{
	const char *rel, *mod;
	int test;
	scan_host_file(q->f->s, fi, &rel, &mod, &test);
	return test;
}

/* Pushes a hop on the query's path (the caller pops it: q->npath--);
 * past SCAN_FLOW_MAXSTEPS hops are counted but not kept. */
static void push(fq *q, int fi, int line, const char *note)
{
	if (q->npath < SCAN_FLOW_MAXSTEPS)
		q->path[q->npath] = (scan_flow_step){fi, line, note};
	q->npath++;
}

/* One use's fate: merges it into the result (REACHES > OPEN > DISCARDED)
 * and, for the first REACHES and the first DISCARDED, keeps the current
 * path plus this final step as the evidence. */
static void settle(fq *q, int fate, int fi, int line, const char *note)
{
	scan_flow_res *o = q->out;
	if (fate == SCAN_FLOW_DISCARDED) {
		o->ndiscard++;
		if (q->have_discard)
			return;
		q->have_discard = 1;
		o->kill_file = fi;
		o->kill_line = line;
	}
	if (fate == SCAN_FLOW_REACHES && o->fate == SCAN_FLOW_REACHES)
		return; /* the first chain found is the evidence */
	if (fate == SCAN_FLOW_DISCARDED && o->fate > SCAN_FLOW_DISCARDED)
		return;
	if (fate == SCAN_FLOW_OPEN) {
		if (o->fate < SCAN_FLOW_OPEN)
			o->fate = SCAN_FLOW_OPEN;
		return;
	}
	if (fate == SCAN_FLOW_REACHES || o->fate <= fate) {
		int n = q->npath < SCAN_FLOW_MAXSTEPS - 1 ? q->npath : SCAN_FLOW_MAXSTEPS - 1;
		memcpy(o->steps, q->path, sizeof(scan_flow_step) * (size_t)n);
		o->steps[n] = (scan_flow_step){fi, line, note};
		o->nsteps = n + 1;
		o->fate = fate;
	}
}

static void follow(fq *q, int fi, int sc, const char *name, const char *key, uint32_t after,
                   int depth);
static void follow_returns(fq *q, int fi, int sc, int depth);

/* The innermost call of file pf in scope sc whose bytes hold `byte`
 * (launch or not), -1. */
static int call_at(const pyfile *pf, int sc, uint32_t byte, int launch_only)
{
	int best = -1;
	for (int i = 0; i < pf->ncalls; i++) {
		const pf_call *c = &pf->calls[i];
		if (c->scope != sc || byte < c->byte || byte >= c->end)
			continue;
		if (launch_only && !(c->flags & PF_C_LAUNCH))
			continue;
		if (best < 0 || c->byte >= pf->calls[best].byte)
			best = i;
	}
	return best;
}

/* Does launch c of file fi run (in code the scan finds reachable, or in
 * a function nothing names statically)? A launch in tests, in another
 * platform's code or in code that never runs is no use of the value. */
static int launch_runs(fq *q, int fi, const pf_call *c)
{
	enum scan_env_reader rc = scan_host_read_class(q->f->s, fi, c->scope, c->byte, c->line,
	                                               (c->flags & PF_C_UNREACH) ? PF_R_UNREACH : 0);
	return rc == SCAN_ENV_R_LIVE || rc == SCAN_ENV_R_UNKNOWN;
}

/* How many plain loads of name lie inside call c. */
static int loads_in(const pyfile *pf, const pf_call *c, const char *name)
{
	int n = 0;
	for (int i = 0; i < pf->nrefs; i++) {
		const pf_ref *r = &pf->refs[i];
		if (r->byte >= c->byte && r->byte < c->end &&
		    !(r->flags & (PF_R_ATTR | PF_R_KEY | PF_R_STR | PF_R_SPLAT)) &&
		    !strcmp(r->name, name))
			n++;
	}
	return n;
}

/* The dead piece (overwritten or read only by dead code) that the store
 * `var = ...` at byte `byte` of scope sc is, -1. */
static int dead_store(const pyfile *pf, int sc, const char *var, uint32_t byte)
{
	for (int d = 0; d < pf->ndeads; d++) {
		const pf_dead *x = &pf->deads[d];
		if ((x->kind == PF_D_OVERWRITE || x->kind == PF_D_UNUSED) && x->scope == sc &&
		    byte >= x->start && byte < x->end && x->name && !strcmp(x->name, var))
			return d;
	}
	return -1;
}

/* Discards by a dead piece d of file fi: the settle with its evidence. */
static void settle_dead(fq *q, int fi, const pyfile *pf, int d)
{
	const pf_dead *x = &pf->deads[d];
	muh_surface *s = q->f->s;
	const char *nm = x->name ? x->name : "the value";
	if (x->kind == PF_D_OVERWRITE)
		settle(q, SCAN_FLOW_DISCARDED, fi, x->kill_line,
		       scan_host_fmt(s, "%s (line %d) overwritten here before any read", nm,
		                     x->line));
	else if (x->kind == PF_D_UNUSED)
		settle(q, SCAN_FLOW_DISCARDED, fi, x->line,
		       scan_host_fmt(s, "%s is assigned here and read only by dead code (line %d)",
		                     nm, x->kill_line));
	else
		settle(q, SCAN_FLOW_DISCARDED, fi, x->line,
		       scan_host_fmt(s, "read only in a branch that cannot run (`if %s:`)", nm));
}

/* The value goes into name, bound in scope sc of file fi at byte at (the
 * statement ends at end), the step (line, note) saying so: settled when
 * that store is dead, else followed on from end; the step is taken off
 * the path after. */
static void into_binding(fq *q, int fi, const pyfile *pf, int sc, const char *name, uint32_t at,
                         uint32_t end, int line, const char *note, int depth)
{
	int d = dead_store(pf, sc, name, at);
	push(q, fi, line, note);
	if (d >= 0)
		settle_dead(q, fi, pf, d);
	else
		follow(q, fi, sc, name, NULL, end, depth + 1);
	q->npath--;
}

/* The method named m defined directly in class scope cls of pf, -1. */
static int child_method(const pyfile *pf, int cls, const char *m)
{
	for (int i = cls + 1; i < pf->nscopes && pf->scopes[i].start < pf->scopes[cls].end; i++)
		if (pf->scopes[i].parent == cls && (pf->scopes[i].flags & PF_FUNC) &&
		    !strcmp(pf->scopes[i].name, m))
			return i;
	return -1;
}

/* The function call c of file fi runs: a top-level function through
 * scan.c's resolution; else a method: `self.m()` / `cls.m()` in a method
 * of a class that defines m, `C.m()` with C a class the file can name, or
 * (self/cls, m defined in a base class) the only method named m in the
 * tree. 1 with (*ofi, *osc), else 0. Method dispatch on other objects
 * (`layer.quant_method.apply(...)`) is not followed. */
static int callee_of(fq *q, int fi, const pf_call *c, int *ofi, int *osc)
{
	muh_surface *s = q->f->s;
	if (scan_host_call_def(s, fi, c, ofi, osc))
		return 1;
	if (!c->obj || !c->fname || build_callees(q->f))
		return 0;
	const char *rel;
	const pyfile *pf = file_of(q, fi, &rel);
	if (!strcmp(c->obj, "self") || !strcmp(c->obj, "cls")) {
		int cls = c->scope;
		while (cls >= 0 && !(pf->scopes[cls].flags & PF_CLASS))
			cls = pf->scopes[cls].parent;
		if (cls < 0)
			return 0;
		int m = child_method(pf, cls, c->fname);
		if (m >= 0) {
			*ofi = fi;
			*osc = m;
			return 1;
		}
		const name_index *mx = &q->f->meths;
		int a, b, hit = -1, nhit = 0;
		uint64_t h = index_bucket(mx, c->fname, &a, &b);
		for (int e = a; e < b; e++)
			if (mx->e[e].h == h && !strcmp(mx->e[e].name, c->fname)) {
				hit = e;
				nhit++;
			}
		if (nhit != 1)
			return 0;
		*ofi = mx->e[hit].file;
		*osc = mx->e[hit].call;
		return 1;
	}
	if (strchr(c->obj, '.') || strchr(c->obj, '(') || strchr(c->obj, '['))
		return 0;
	pf_call k = {0};
	k.fname = c->obj;
	k.scope = c->scope;
	int cf, cs;
	if (!scan_host_call_def(s, fi, &k, &cf, &cs))
		return 0;
	const char *crel;
	const pyfile *cp = file_of(q, cf, &crel);
	if (!(cp->scopes[cs].flags & PF_CLASS))
		return 0;
	int m = child_method(cp, cs, c->fname);
	if (m < 0)
		return 0;
	*ofi = cf;
	*osc = m;
	return 1;
}

/* The value arrives as argument `a` of call c (file fi): into the callee's
 * parameter. 0 when the tree does not define the callee (nothing done). */
static int into_call(fq *q, int fi, const pf_call *c, const pf_arg *a, const char *key,
                     int depth)
{
	muh_surface *s = q->f->s;
	int gf, gs;
	if (!callee_of(q, fi, c, &gf, &gs))
		return 0;
	const char *grel;
	const pyfile *gp = file_of(q, gf, &grel);
	const pf_scope *g = &gp->scopes[gs];
	if (!(g->flags & PF_FUNC)) {
		settle(q, SCAN_FLOW_OPEN, fi, c->line, NULL);
		return 1;
	}
	int idx = -1;
	const char *pname = NULL, *pkey = NULL;
	if (a->splat == 2) {
		/* **x: a key of x (key) into a parameter of that name, or the
		 * whole dict into **kw */
		if (key) {
			for (int i = 0; i < g->nparams; i++)
				if (!strcmp(g->params[i], key) &&
				    !(g->kwparam && !strcmp(g->kwparam, key)))
					idx = i;
			if (idx < 0 && g->kwparam) {
				pname = g->kwparam;
				pkey = key;
			}
		} else if (g->kwparam) {
			pname = g->kwparam;
		}
	} else if (a->kw) {
		for (int i = 0; i < g->nparams; i++)
			if (!strcmp(g->params[i], a->kw))
				idx = i;
		if (idx < 0 && g->kwparam) {
			pname = g->kwparam;
			pkey = a->kw;
		}
	} else if (a->pos >= 0 && !a->splat) {
		int shift = c->obj && g->parent >= 0 && g->nparams &&
		            (!strcmp(g->params[0], "self") || !strcmp(g->params[0], "cls"));
		if (a->pos + shift < g->nparams)
			idx = a->pos + shift;
	}
	if (idx >= 0 && g->kwparam && !strcmp(g->params[idx], g->kwparam))
		idx = -1;
	if (idx >= 0)
		pname = g->params[idx];
	if (!pname) {
		settle(q, SCAN_FLOW_OPEN, fi, c->line, NULL);
		return 1;
	}
	const char *what = a->splat == 2 ? scan_host_fmt(s, "**%s", a->ident)
	                                 : scan_host_str(s, a->ident);
	push(q, fi, c->line,
	     pkey ? scan_host_fmt(s, "%s passed to %s, into **%s['%s']", what, g->qual, pname, pkey)
	          : scan_host_fmt(s, "%s passed to %s as %s", what, g->qual, pname));
	if (idx >= 0 && g->pkill && g->pkill[idx]) {
		settle(q, SCAN_FLOW_DISCARDED, gf, g->pkill[idx],
		       scan_host_fmt(s, "%s binds %s again here, before any read: the value passed "
		                        "is never used",
		                     g->qual, pname));
	} else {
		follow(q, gf, gs, pname, pkey, g->start, depth + 1);
	}
	q->npath--;
	return 1;
}

/* Is load r of var part of the condition of an `if` that only tests var
 * itself (`if configs:`, `if not cfg:`, `if x is None:`)? Such a test
 * neither carries the value on nor reads what it holds. */
static int tests_itself(const pyfile *pf, int sc, const pf_ref *r, const char *var)
{
	for (int i = 0; i < pf->nguards; i++) {
		const pf_guard *g = &pf->guards[i];
		if (g->scope != sc || r->byte < g->byte || r->byte >= g->cons_start)
			continue;
		if (g->name && !g->obj && !strcmp(g->name, var))
			return 1;
		if (g->cond) {
			size_t n = strlen(var);
			const char *c = g->cond;
			if (!strncmp(c, "not ", 4))
				c += 4;
			if (!strncmp(c, var, n) &&
			    (!c[n] || !strcmp(c + n, " is None") || !strcmp(c + n, " is not None")))
				return 1;
		}
		return 0;
	}
	return 0;
}

/* Is a load named attr anywhere in the tree (an attribute, a key, a
 * string naming it, a plain name) other than `self.attr` inside file fi's
 * bytes [a, b) (the class, whose loads into_attr follows)? */
static int read_elsewhere(fq *q, int fi, uint32_t a, uint32_t b, const char *attr)
{
	int nf = scan_host_nfiles(q->f->s);
	for (int f = 0; f < nf; f++) {
		const char *rel;
		const pyfile *pf = file_of(q, f, &rel);
		for (int i = 0; pf && i < pf->nrefs; i++) {
			const pf_ref *r = &pf->refs[i];
			if (strcmp(r->name, attr))
				continue;
			if (f == fi && r->byte >= a && r->byte < b && (r->flags & PF_R_ATTR) && r->obj &&
			    !strcmp(r->obj, "self"))
				continue;
			return 1;
		}
	}
	return 0;
}

/* The value is stored as an attribute (`self.x = var`, store a of file
 * fi): its loads `self.x` in the methods of the class carry it on; a
 * load of x anywhere else (another object, a getattr string) is open;
 * none at all discards it. */
static void into_attr(fq *q, int fi, const pyfile *pf, int sc, const pf_asg *a,
                      const char *var, int depth)
{
	muh_surface *s = q->f->s;
	const char *dot = strchr(a->name, '.');
	int cls = pf->scopes[sc].parent;
	if (!dot || strncmp(a->name, "self.", 5) || cls < 0 || !(pf->scopes[cls].flags & PF_CLASS)) {
		settle(q, SCAN_FLOW_OPEN, fi, a->line, NULL);
		return;
	}
	const char *attr = dot + 1;
	const pf_scope *c = &pf->scopes[cls];
	push(q, fi, a->line, scan_host_fmt(s, "%s = ... stores %s", a->name, var));
	int nread = 0;
	for (int i = 0; i < pf->nrefs && q->out->fate != SCAN_FLOW_REACHES; i++) {
		const pf_ref *r = &pf->refs[i];
		if (!(r->flags & PF_R_ATTR) || !r->obj || strcmp(r->obj, "self") ||
		    strcmp(r->name, attr) || r->byte < c->start || r->byte >= c->end || r->scope < 0)
			continue;
		if (--q->budget < 0)
			break;
		nread++;
		if (r->flags & PF_R_DEAD) {
			settle_dead(q, fi, pf, r->dead);
			continue;
		}
		if (r->flags & PF_R_UNREACH)
			continue;
		int li = call_at(pf, r->scope, r->byte, 1);
		if (li >= 0) {
			const pf_call *lc = &pf->calls[li];
			if (launch_runs(q, fi, lc))
				settle(q, SCAN_FLOW_REACHES, fi, lc->line,
				       scan_host_fmt(s, "self.%s reaches the launch %s", attr,
				                     lc->callee));
			continue;
		}
		int hit = 0;
		for (int j = 0; j < pf->nasgs && !hit; j++) {
			const pf_asg *d = &pf->asgs[j];
			if (d->scope != r->scope || r->byte < d->start || r->byte >= d->end ||
			    !d->simple)
				continue;
			hit = 1;
			push(q, fi, d->line, scan_host_fmt(s, "%s = ... uses self.%s", d->name, attr));
			follow(q, fi, d->scope, d->name, NULL, d->end, depth + 1);
			q->npath--;
		}
		if (!hit)
			settle(q, SCAN_FLOW_OPEN, fi, r->line, NULL);
	}
	if (q->out->fate < SCAN_FLOW_OPEN) {
		if (read_elsewhere(q, fi, c->start, c->end, attr))
			settle(q, SCAN_FLOW_OPEN, fi, a->line, NULL);
		else if (!nread)
			settle(q, SCAN_FLOW_DISCARDED, fi, a->line,
			       scan_host_fmt(s, "%s is stored here and read nowhere in the tree (no "
			                        ".%s, [\"%s\"] or getattr(..., \"%s\"))",
			                     a->name, attr, attr, attr));
	}
	q->npath--;
}

/* One use of the value: the plain load r of var in scope sc of file fi. */
static void use(fq *q, int fi, const pyfile *pf, int sc, const pf_ref *r, const char *var,
                const char *key, int depth)
{
	muh_surface *s = q->f->s;
	if (r->flags & PF_R_DEAD) {
		settle_dead(q, fi, pf, r->dead);
		return;
	}
	if (r->flags & PF_R_UNREACH) {
		settle(q, SCAN_FLOW_DISCARDED, fi, r->line,
		       scan_host_fmt(s, "%s read here, after a return or raise (never runs)", var));
		return;
	}
	if (r->scope != sc) {
		settle(q, SCAN_FLOW_OPEN, fi, r->line, NULL); /* a closure reads it */
		return;
	}
	/* inside a launch: it arrives */
	int li = call_at(pf, sc, r->byte, 1);
	if (li >= 0) {
		const pf_call *c = &pf->calls[li];
		if (!launch_runs(q, fi, c))
			return;
		const char *note = NULL;
		for (int j = 0; j < c->nargs && !note; j++) {
			const pf_arg *a = &c->args[j];
			if (!a->ident || strcmp(a->ident, var))
				continue;
			if (a->splat == 2)
				note = key ? scan_host_fmt(s, "**%s into %s: binds %s", var, c->callee, key)
				           : scan_host_fmt(s, "**%s into %s", var, c->callee);
			else if (a->kw)
				note = scan_host_fmt(s, "binds %s.%s at the launch", c->fname, a->kw);
			else
				note = scan_host_fmt(s, "%s passed to the launch %s", var, c->callee);
		}
		if (!note)
			note = scan_host_fmt(s, "%s reaches the launch %s", var, c->callee);
		settle(q, SCAN_FLOW_REACHES, fi, c->line, note);
		return;
	}
	/* an argument of a call the tree defines */
	int ci = call_at(pf, sc, r->byte, 0);
	if (ci >= 0) {
		const pf_call *c = &pf->calls[ci];
		const pf_arg *hit = NULL;
		for (int j = 0; j < c->nargs; j++)
			if (c->args[j].ident && !strcmp(c->args[j].ident, var) && c->args[j].splat != 1)
				hit = hit ? NULL : &c->args[j];
		if (hit && loads_in(pf, c, var) == 1) {
			if (key && hit->splat != 2) {
				settle(q, SCAN_FLOW_OPEN, fi, r->line, NULL);
				return;
			}
			if (into_call(q, fi, c, hit, key, depth))
				return;
		}
	}
	if (!key && tests_itself(pf, sc, r, var))
		return;
	/* a return: into the callers */
	for (int i = 0; i < pf->nrets; i++) {
		const pf_ret *rt = &pf->rets[i];
		if (rt->scope == sc && rt->line == r->line && !key) {
			push(q, fi, rt->line,
			     scan_host_fmt(s, "%s returns %s", pf->scopes[sc].qual, var));
			follow_returns(q, fi, sc, depth + 1);
			q->npath--;
			return;
		}
	}
	/* a derived assignment: its target carries the value on */
	for (int i = 0; i < pf->nasgs; i++) {
		const pf_asg *a = &pf->asgs[i];
		if (a->scope != sc || r->byte < a->start || r->byte >= a->end || key)
			continue;
		if (a->attr) {
			into_attr(q, fi, pf, sc, a, var, depth);
			return;
		}
		if (!a->simple)
			continue;
		into_binding(q, fi, pf, sc, a->name, a->start, a->end, a->line,
		             scan_host_fmt(s, "%s = ... uses %s", a->name, var), depth);
		return;
	}
	settle(q, SCAN_FLOW_OPEN, fi, r->line, NULL);
}

/* File fi's loads by name (built once), or NULL when memory runs out. */
static const ref_index *refs_of(fq *q, int fi)
{
	scan_flow *f = q->f;
	if (!f->rix) {
		f->rix = calloc((size_t)scan_host_nfiles(f->s) + 1, sizeof(ref_index));
		if (!f->rix)
			return NULL;
	}
	ref_index *x = &f->rix[fi];
	if (x->head)
		return x;
	const char *rel;
	const pyfile *pf = file_of(q, fi, &rel);
	unsigned n = 64;
	while (n < (unsigned)pf->nrefs * 2 && n < (1u << 24))
		n <<= 1;
	x->head = malloc(sizeof(int) * n);
	x->next = malloc(sizeof(int) * (size_t)(pf->nrefs ? pf->nrefs : 1));
	if (!x->head || !x->next) {
		free(x->head);
		free(x->next);
		x->head = x->next = NULL;
		return NULL;
	}
	x->mask = n - 1;
	memset(x->head, -1, sizeof(int) * n);
	/* from the last ref back, so that each chain runs in ref order */
	for (int i = pf->nrefs - 1; i >= 0; i--) {
		unsigned h = (unsigned)name_hash(pf->refs[i].name) & x->mask;
		x->next[i] = x->head[h];
		x->head[h] = i;
	}
	return x;
}

/* Every use of the value variable `name` (or its key `key`, a **kw dict's
 * entry) holds in scope sc of file fi after byte `after`, each settled
 * (use()); a (file, scope, name, key) already followed from an earlier
 * byte is not followed again. */
static void follow(fq *q, int fi, int sc, const char *name, const char *key, uint32_t after,
                   int depth)
{
	if (depth > 10 || --q->budget < 0 || sc < 0) {
		settle(q, SCAN_FLOW_OPEN, fi, 0, NULL);
		return;
	}
	for (int i = 0; i < q->nseen; i++) {
		seen_ent *e = &q->seen[i];
		if (e->file == fi && e->scope == sc && !strcmp(e->name, name) &&
		    (e->key == key || (e->key && key && !strcmp(e->key, key))) && e->after <= after)
			return;
	}
	if (q->nseen < (int)(sizeof(q->seen) / sizeof(q->seen[0])))
		q->seen[q->nseen++] = (seen_ent){fi, sc, name, key, after};
	else {
		settle(q, SCAN_FLOW_OPEN, fi, 0, NULL);
		return;
	}
	const char *rel;
	const pyfile *pf = file_of(q, fi, &rel);
	const pf_scope *scp = &pf->scopes[sc];
	const ref_index *rx = refs_of(q, fi);
	if (!rx) {
		settle(q, SCAN_FLOW_OPEN, fi, 0, NULL);
		return;
	}
	int first = rx->head[(unsigned)name_hash(name) & rx->mask];
	/* uses inside a launch first (the shortest evidence), then the rest */
	for (int pass = 0; pass < 2; pass++)
		for (int i = first; i >= 0 && q->out->fate != SCAN_FLOW_REACHES; i = rx->next[i]) {
			const pf_ref *r = &pf->refs[i];
			/* a **x is also a plain load of x at the same byte: that one
			 * counts */
			if (r->byte < after || r->byte < scp->start || r->byte >= scp->end ||
			    (r->flags & (PF_R_ATTR | PF_R_KEY | PF_R_STR | PF_R_SPLAT)) ||
			    strcmp(r->name, name))
				continue;
			int in_launch = !(r->flags & (PF_R_DEAD | PF_R_UNREACH)) && r->scope == sc &&
			                call_at(pf, sc, r->byte, 1) >= 0;
			if (in_launch != !pass)
				continue;
			if (--q->budget < 0) {
				settle(q, SCAN_FLOW_OPEN, fi, 0, NULL);
				return;
			}
			use(q, fi, pf, sc, r, name, key, depth);
		}
}

/* A caller's call c (file cf) of the function whose value we follow. */
static void from_call(fq *q, int cf, const pyfile *cp, int ci, const char *fname, int depth)
{
	muh_surface *s = q->f->s;
	const pf_call *c = &cp->calls[ci];
	enum scan_env_reader rc = scan_host_read_class(s, cf, c->scope, c->byte, c->line,
	                                               (c->flags & PF_C_UNREACH) ? PF_R_UNREACH : 0);
	if (rc != SCAN_ENV_R_LIVE && rc != SCAN_ENV_R_UNKNOWN)
		return; /* tests, other platforms, code that never runs: not a use */
	if (c->scope < 0) {
		settle(q, SCAN_FLOW_OPEN, cf, c->line, NULL);
		return;
	}
	if (c->assigned) {
		into_binding(q, cf, cp, c->scope, c->assigned, c->byte, c->end, c->line,
		             scan_host_fmt(s, "%s = %s(...) in %s", c->assigned, fname,
		                           cp->scopes[c->scope].qual),
		             depth);
		return;
	}
	/* returned on, passed on, or part of an expression */
	for (int i = 0; i < cp->nrets; i++)
		if (cp->rets[i].scope == c->scope && cp->rets[i].call == ci) {
			push(q, cf, c->line,
			     scan_host_fmt(s, "%s returns %s(...)", cp->scopes[c->scope].qual, fname));
			follow_returns(q, cf, c->scope, depth + 1);
			q->npath--;
			return;
		}
	int li = call_at(cp, c->scope, c->byte, 1);
	if (li >= 0 && li != ci) {
		if (!launch_runs(q, cf, &cp->calls[li]))
			return;
		settle(q, SCAN_FLOW_REACHES, cf, c->line,
		       scan_host_fmt(s, "%s(...) passed to the launch %s", fname,
		                     cp->calls[li].callee));
		return;
	}
	for (int i = 0; i < cp->nasgs; i++) {
		const pf_asg *a = &cp->asgs[i];
		if (a->scope != c->scope || c->byte < a->start || c->byte >= a->end || !a->simple)
			continue;
		into_binding(q, cf, cp, c->scope, a->name, a->start, a->end, a->line,
		             scan_host_fmt(s, "%s = ... uses %s(...)", a->name, fname), depth);
		return;
	}
	settle(q, SCAN_FLOW_OPEN, cf, c->line, NULL);
}

/* What function scope sc of file fi returns, into each caller outside
 * tests (and, for a lookup, outside scripts), through partials too; a
 * function whose every caller is a skipped script discards it. */
static void follow_returns(fq *q, int fi, int sc, int depth)
{
	if (depth > 10 || build_callees(q->f)) {
		settle(q, SCAN_FLOW_OPEN, fi, 0, NULL);
		return;
	}
	for (int i = 0; i < q->nseen; i++)
		if (q->seen[i].file == fi && q->seen[i].scope == sc && !q->seen[i].name[0])
			return;
	if (q->nseen < (int)(sizeof(q->seen) / sizeof(q->seen[0])))
		q->seen[q->nseen++] = (seen_ent){fi, sc, "", NULL, 0};
	const char *rel;
	const pyfile *pf = file_of(q, fi, &rel);
	const pf_scope *g = &pf->scopes[sc];
	scan_flow *f = q->f;
	/* the calls named like the function */
	int lo, hi;
	uint64_t gh = index_bucket(&f->ents, g->name, &lo, &hi);
	int nfollowed = 0, script_file = -1, script_line = 0;
	for (int e = lo; e < hi; e++) {
		const callee_ent *ce = &f->ents.e[e];
		if (ce->h != gh || strcmp(ce->name, g->name))
			continue;
		if (q->out->fate == SCAN_FLOW_REACHES || --q->budget < 0)
			break;
		if (is_test_file(q, ce->file))
			continue;
		if (q->engine_only && scan_host_is_script(f->s, ce->file)) {
			const char *srel;
			const pyfile *sp = file_of(q, ce->file, &srel);
			int tf, ts;
			if (script_file < 0 &&
			    (ce->partial || (callee_of(q, ce->file, &sp->calls[ce->call], &tf, &ts) &&
			                     tf == fi && ts == sc))) {
				script_file = ce->file;
				script_line = sp->calls[ce->call].line;
			}
			continue;
		}
		const char *crel;
		const pyfile *cp = file_of(q, ce->file, &crel);
		const pf_call *c = &cp->calls[ce->call];
		if (ce->partial) {
			/* p = functools.partial(f, ...): the calls of p in that scope */
			if (!c->assigned || c->scope < 0) {
				settle(q, SCAN_FLOW_OPEN, ce->file, c->line, NULL);
				continue;
			}
			push(q, ce->file, c->line,
			     scan_host_fmt(q->f->s, "%s = functools.partial(%s, ...)", c->assigned,
			                   g->name));
			int any = 0;
			for (int j = 0; j < cp->ncalls; j++) {
				const pf_call *pc = &cp->calls[j];
				if (pc->scope == c->scope && !pc->obj && pc->fname &&
				    !strcmp(pc->fname, c->assigned) && pc->byte > c->byte) {
					from_call(q, ce->file, cp, j, c->assigned, depth);
					any = 1;
				}
			}
			if (!any)
				settle(q, SCAN_FLOW_OPEN, ce->file, c->line, NULL);
			q->npath--;
			nfollowed++;
			continue;
		}
		int tf, ts;
		if (!callee_of(q, ce->file, c, &tf, &ts) || tf != fi || ts != sc)
			continue;
		from_call(q, ce->file, cp, ce->call, g->name, depth);
		nfollowed++;
	}
	if (!nfollowed && script_file >= 0)
		settle(q, SCAN_FLOW_DISCARDED, script_file, script_line,
		       scan_host_fmt(f->s, "%s is called only here, in a script beside the engine "
		                           "(benchmarks/, examples/, tools/, scripts/), not by the "
		                           "engine",
		                     g->qual));
}

/* A call of pf inside scope sc's bytes that loads a file (json.load,
 * yaml.safe_load ...; with any_open, open() too): its index, or -1. */
static int load_call(const pyfile *pf, int sc, int any_open)
{
	const char *const loads[] = {"load",      "safe_load",               "full_load", "loads",
	                             "read_text", any_open ? "open" : NULL, NULL};
	const pf_scope *g = &pf->scopes[sc];
	for (int i = 0; i < pf->ncalls; i++) {
		const pf_call *c = &pf->calls[i];
		if (!c->fname || c->byte < g->start || c->byte >= g->end)
			continue;
		for (int j = 0; loads[j]; j++)
			if (!strcmp(c->fname, loads[j]))
				return i;
	}
	return -1;
}

/* A fresh query writing into *out, or NULL (out zeroed) without f or memory;
 * the caller frees it (query_end, or free). */
static fq *query_begin(scan_flow *f, scan_flow_res *out)
{
	fq *q = malloc(sizeof(fq));
	if (!q || !f) {
		memset(out, 0, sizeof(*out));
		free(q);
		return NULL;
	}
	memset(out, 0, sizeof(*out));
	out->kill_file = -1;
	memset(q, 0, sizeof(*q));
	q->f = f;
	q->out = out;
	q->budget = 20000;
	return q;
}

/* Ends a followed value's query: a value discarded nowhere in particular has
 * no fate; frees q. */
static void query_end(fq *q)
{
	if (q->out->fate == SCAN_FLOW_DISCARDED && q->out->ndiscard == 0)
		q->out->fate = SCAN_FLOW_NONE;
	free(q);
}

/* (scan_flow.h) */
void scan_flow_value(scan_flow *f, int fi, int sc, const char *name, uint32_t after,
                     scan_flow_res *out)
{
	fq *q = query_begin(f, out);
	if (!q)
		return;
	follow(q, fi, sc, name, NULL, after, 0);
	query_end(q);
}

/* (scan_flow.h) */
void scan_flow_load(scan_flow *f, int fi, int ref, scan_flow_res *out)
{
	fq *q = query_begin(f, out);
	if (!q)
		return;
	const char *rel;
	const pyfile *pf = file_of(q, fi, &rel);
	const pf_ref *r = &pf->refs[ref];
	if (r->scope < 0 || (r->flags & (PF_R_ATTR | PF_R_KEY | PF_R_STR | PF_R_SPLAT)))
		settle(q, SCAN_FLOW_OPEN, fi, r->line, NULL);
	else
		use(q, fi, pf, r->scope, r, r->name, NULL, 0);
	query_end(q);
}

/* (scan_flow.h) */
void scan_flow_lookup(scan_flow *f, int fi, int sc, scan_flow_res *out)
{
	fq *q = sc < 0 ? NULL : query_begin(f, out);
	if (!q) {
		memset(out, 0, sizeof(*out));
		return;
	}
	q->engine_only = 1;
	const char *rel;
	const pyfile *pf = file_of(q, fi, &rel);
	int lf = -1, ls = -1, lc = -1;
	if ((lc = load_call(pf, sc, 0)) >= 0 || (lc = load_call(pf, sc, 1)) >= 0) {
		lf = fi;
		ls = sc;
	}
	/* the first caller (by file, then call) that loads the file: one that
	 * calls json.load or the like before one that only opens it (a tuning
	 * script's save_configs opens it to write) */
	for (int any_open = 0; any_open < 2 && lf < 0 && !build_callees(f); any_open++) {
		const char *name = pf->scopes[sc].name;
		int lo, hi;
		uint64_t nh = index_bucket(&f->ents, name, &lo, &hi);
		for (int e = lo; e < hi && lf < 0; e++) {
			const callee_ent *ce = &f->ents.e[e];
			if (ce->h != nh || strcmp(ce->name, name))
				continue;
			const char *crel;
			const pyfile *cp = file_of(q, ce->file, &crel);
			const pf_call *c = &cp->calls[ce->call];
			int tf, ts;
			if (ce->partial || is_test_file(q, ce->file) || c->scope < 0 ||
			    scan_host_is_script(f->s, ce->file) ||
			    !callee_of(q, ce->file, c, &tf, &ts) || tf != fi || ts != sc)
				continue;
			int top = c->scope;
			if ((lc = load_call(cp, top, any_open)) >= 0) {
				lf = ce->file;
				ls = top;
			}
		}
	}
	if (lf >= 0) {
		const pyfile *lp = file_of(q, lf, &rel);
		push(q, lf, lp->calls[lc].line,
		     scan_host_fmt(f->s, "%s loads the file here (%s)", lp->scopes[ls].qual,
		                   lp->calls[lc].callee));
		follow_returns(q, lf, ls, 0);
	}
	free(q);
}
