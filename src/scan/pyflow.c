/*
 * pyflow.c — the def-use layer of muh scan over one file's facts.
 *
 * pyfile.c's walk finds stores that the rest of their block overwrites on
 * every path before any read (PF_D_OVERWRITE: `config['BLOCK_SIZE_M'] = 64`
 * then an if/elif/else that sets it on every branch). Over those facts this
 * file adds, inside functions:
 *   - branches an assignment of a literal disables: `use_v1 = True` then
 *     `if use_v1: ... else: ...` makes the else part dead (PF_D_BRANCH; the
 *     guard's constval is set, so scan_resolve.c's guard rules see it too);
 *   - stores whose value only dead code reads (PF_D_UNUSED):
 *     `max_num_partitions = ...` read only by the overwritten heuristic and
 *     the disabled branch; iterated to a fixpoint, so a module constant read
 *     only into such a store ends up with dead reads only.
 * Every ref inside a dead piece gets PF_R_DEAD and the index of the pf_dead
 * that says why (the evidence chain is pf_dead.via).
 *
 * Reaching definitions are by byte order inside one function: "the latest
 * assignment before the if, in a block that holds the if, with no later
 * assignment in a loop". Names declared global are never analyzed.
 *
 * Must never: read the source or the syntax tree (both are gone), allocate
 * outside the file's arrays.
 */
#include <stdlib.h>
#include <string.h>

#include "pyfile.h"

static int push_dead(pyfile *f, int *cap)
{
	if (f->ndeads == *cap) {
		int nc = *cap ? *cap * 2 : 16;
		pf_dead *nd = realloc(f->deads, (size_t)nc * sizeof(*nd));
		if (!nd)
			return -1;
		f->deads = nd;
		*cap = nc;
	}
	memset(&f->deads[f->ndeads], 0, sizeof(pf_dead));
	f->deads[f->ndeads].via = f->deads[f->ndeads].guard = -1;
	return f->ndeads++;
}

/* Marks every ref inside a dead piece (the innermost recorded first wins). */
static void mark_refs(pyfile *f)
{
	for (int i = 0; i < f->nrefs; i++) {
		pf_ref *r = &f->refs[i];
		if (r->flags & PF_R_DEAD)
			continue;
		for (int d = 0; d < f->ndeads; d++)
			if (r->byte >= f->deads[d].start && r->byte < f->deads[d].end) {
				r->flags |= PF_R_DEAD;
				r->dead = d;
				break;
			}
	}
}

static int in_deads(const pyfile *f, uint32_t byte)
{
	for (int d = 0; d < f->ndeads; d++)
		if (byte >= f->deads[d].start && byte < f->deads[d].end)
			return 1;
	return 0;
}

/* Guards on a local name that the latest assignment (a literal) decides. */
static int disabled_branches(pyfile *f, int *cap)
{
	for (int gi = 0; gi < f->nguards; gi++) {
		pf_guard *g = &f->guards[gi];
		if (g->scope < 0 || !g->name || g->obj || g->constval >= 0)
			continue;
		int best = -1, later_loop = 0;
		for (int i = 0; i < f->nasgs; i++) {
			const pf_asg *a = &f->asgs[i];
			if (a->scope != g->scope || strcmp(a->name, g->name))
				continue;
			if (a->start < g->byte) {
				if (best < 0 || a->start > f->asgs[best].start)
					best = i;
			} else if (a->in_loop) {
				later_loop = 1;
			}
		}
		if (best < 0 || later_loop)
			continue;
		const pf_asg *a = &f->asgs[best];
		if (!a->simple || a->lit < 0 || a->in_loop || g->byte < a->blk_start ||
		    g->byte >= a->blk_end)
			continue;
		int v = g->negated ? !a->lit : a->lit;
		uint32_t s = v ? g->alt_start : g->cons_start, e = v ? g->alt_end : g->cons_end;
		g->constval = v;
		g->over_line = a->line;
		if (!e)
			continue;
		int d = push_dead(f, cap);
		if (d < 0)
			return -1;
		pf_dead *dd = &f->deads[d];
		dd->kind = PF_D_BRANCH;
		dd->name = g->name;
		dd->scope = g->scope;
		dd->line = v ? (g->else_line ? g->else_line : g->line) : g->line;
		dd->start = s;
		dd->end = e;
		dd->kill_line = a->line;
		dd->guard = gi;
	}
	return 0;
}

static unsigned name_hash(const char *s)
{
	unsigned h = 2166136261u;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 16777619u;
	return h;
}

/* Plain loads of names, chained by name hash. */
typedef struct loads {
	int *head, *next;
	unsigned mask;
} loads;

static int loads_build(const pyfile *f, loads *L)
{
	unsigned n = 64;
	while (n < (unsigned)f->nrefs * 2 && n < (1u << 24))
		n <<= 1;
	L->mask = n - 1;
	L->head = malloc(sizeof(int) * n);
	L->next = malloc(sizeof(int) * (size_t)(f->nrefs ? f->nrefs : 1));
	if (!L->head || !L->next)
		return -1;
	memset(L->head, -1, sizeof(int) * n);
	for (int i = 0; i < f->nrefs; i++) {
		const pf_ref *r = &f->refs[i];
		if (r->flags & (PF_R_ATTR | PF_R_KEY | PF_R_SPLAT | PF_R_STR))
			continue;
		unsigned h = name_hash(r->name) & L->mask;
		L->next[i] = L->head[h];
		L->head[h] = i;
	}
	return 0;
}

/* Stores of names whose every load in the function is dead. */
static int unused_stores(pyfile *f, int *cap, const loads *L, int *changed)
{
	*changed = 0;
	for (int i = 0; i < f->nasgs; i++) {
		const pf_asg *a = &f->asgs[i];
		if (a->scope < 0 || !a->simple || in_deads(f, a->start))
			continue;
		const pf_scope *sc = &f->scopes[a->scope];
		int total = 0, live = 0, via = -1, via_line = 0;
		for (int j = L->head[name_hash(a->name) & L->mask]; j >= 0; j = L->next[j]) {
			const pf_ref *r = &f->refs[j];
			if (r->byte < sc->start || r->byte >= sc->end || strcmp(r->name, a->name))
				continue;
			total++;
			if (r->flags & PF_R_DEAD) {
				if (via < 0) {
					via = r->dead;
					via_line = r->line;
				}
			} else if (!(r->flags & PF_R_UNREACH)) {
				live++;
				break;
			}
		}
		if (!total || live || via < 0)
			continue;
		int d = push_dead(f, cap);
		if (d < 0)
			return -1;
		a = &f->asgs[i];
		pf_dead *dd = &f->deads[d];
		dd->kind = PF_D_UNUSED;
		dd->name = a->name;
		dd->scope = a->scope;
		dd->line = a->line;
		dd->start = a->start;
		dd->end = a->end;
		dd->kill_line = via_line;
		dd->via = via;
		*changed = 1;
	}
	return 0;
}

int pyflow_run(pyfile *f)
{
	int cap = f->ndeads;
	if (disabled_branches(f, &cap))
		return -1;
	mark_refs(f);
	if (!f->nasgs || !f->ndeads)
		return 0;
	loads L = {0};
	if (loads_build(f, &L)) {
		free(L.head);
		free(L.next);
		return -1;
	}
	int rc = 0;
	for (int round = 0; round < 8; round++) {
		int changed;
		if (unused_stores(f, &cap, &L, &changed)) {
			rc = -1;
			break;
		}
		if (!changed)
			break;
		mark_refs(f);
	}
	free(L.head);
	free(L.next);
	return rc;
}
