/*
 * space.c — the exact space of a spec (see space.h for the contract and the
 * rejection-attribution rule).
 *
 * How it is fast:
 *   1. Constraints are compiled once (expr.c) into slot-reading bytecode.
 *   2. Params are split into groups: connected components of the graph in
 *      which two params are linked when one constraint reads both. Params no
 *      constraint reads are groups of one. Groups multiply; the engine never
 *      enumerates one group against another.
 *   3. Inside a group the params are bound depth-first in an order chosen
 *      greedily so that constraints complete as early as possible; each
 *      constraint is tested at the depth where its last param is bound, and
 *      a failing partial assignment prunes its whole subtree (counted by
 *      multiplication, not visited).
 *   4. The binding order is searched, not guessed: over subsets of the
 *      group's params (dynamic programming, groups up to 16 params), it
 *      minimises a cost model of the walk (nodes times checks; a table read
 *      is cheap, an expression costs its bytecode length) with pass rates
 *      estimated from tables or a fixed-seed sample. A constraint is
 *      tabulated when filling the table costs fewer evaluations than the
 *      walk would make. Counts never depend on the model, only time does.
 *   5. A constraint proven to fall in the param bound at its depth
 *      (expr_falls: once false for a value, false for every larger one)
 *      stops that loop at its first failure when it is checked first there;
 *      the values left are charged to it in bulk, exactly as if visited.
 *   6. A constrained group's valid tuples are kept as sorted 64-bit ranks in
 *      the group's own mixed radix, so config <-> index is O(params) plus a
 *      binary search, and uniform sampling is one random index.
 *
 * Owns: the space struct and everything derived from a spec + profile.
 * Must never: print, or evaluate a constraint text more than once at build.
 */
#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "muh/expr.h"
#include "muh/muh.h"
#include "muh/space.h"
#include "strbuf.h"

/* Most valid tuples one group keeps for indexing (8 bytes each). Past it the
 * space is still counted exactly, but cannot be iterated or sampled. */
#define SPACE_MAX_TUPLES (UINT64_C(1) << 25)

struct cons {
	muh_expr *e;
	size_t spec_idx;
	int group;   /* -1: constant (reads no param) */
	int depth;   /* binding depth at which it becomes checkable */
	double rejected;
	int *params; /* params it reads */
	int nparams;
	/* The constraint tabulated over its params' value indices: 1 where it
	 * holds, 0 where it fails or errs; NULL when the table would be large.
	 * index = sum over j of cfg[params[j]] * tstride[j]. */
	uint8_t *table;
	uint64_t *tstride;
	/* When it is checked at the group's last position (param values <= 64):
	 * the table as one bit mask per row of the other params (bit v: holds
	 * for the last param's value v), row = (b / (mstride * mnv)) * mstride
	 * + b % mstride for a table offset b with the last param at 0. */
	uint64_t *mask;
	uint64_t mstride, mnv;
	double pass; /* estimated fraction of assignments it holds for (ordering only) */
	/* Proven by expr_falls: once it fails for a value of the param bound at
	 * its depth, it fails for every larger value (values ascending). */
	int falls;
};

struct group {
	int *params;   /* spec indices, in binding order */
	int nparams;
	int *cons;     /* constraint indices (into sp->cons), in check order */
	int ncons;
	int *depth_start; /* cons[depth_start[d] .. depth_start[d+1]) checked at depth d */
	uint64_t *radix_stride; /* per binding position: stride of the param in the rank */
	double cartesian;
	uint64_t valid;
	uint64_t *tuples; /* sorted ranks of valid tuples; NULL when unconstrained */
	int indexed;      /* tuples complete */
	double *rejected_local; /* per group constraint, within the group */
};

struct muh_space {
	const muh_spec *spec;
	size_t instance; /* the problem instance it was built for */
	size_t np;       /* params */
	size_t nslots;   /* params + problem + hw */
	muh_value *base; /* slot template: problem and hw values filled */
	struct cons *cons;
	size_t ncons;
	size_t *check_order; /* spec indices in check order */
	struct group *groups;
	size_t ngroups;
	int *group_of; /* param -> group */
	double cartesian;
	uint64_t valid;
	int indexed;
	double seconds;
	char **names; /* slot names (owned) */
	double *lo, *hi; /* per slot: bounds of its integer values; NaN when not all integers */
};

/* ---- small utilities ----------------------------------------------------- */

uint64_t space_rand(uint64_t *state)
{
	uint64_t x = *state ? *state : UINT64_C(0x9E3779B97F4A7C15);
	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*state = x;
	return x * UINT64_C(0x2545F4914F6CDD1D);
}

/* Uniform in [0, n), n > 0, without modulo bias. */
static uint64_t rand_below(uint64_t *state, uint64_t n)
{
	uint64_t limit = UINT64_MAX - UINT64_MAX % n;
	uint64_t r;
	do
		r = space_rand(state);
	while (r >= limit);
	return r % n;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* ---- names and compilation -------------------------------------------------- */

static int build_names(muh_space *sp, const muh_hw *hw, size_t instance)
{
	const muh_spec *s = sp->spec;
	size_t nhw = 0;
	if (hw)
		nhw = (size_t)hw->nfields;
	sp->nslots = s->nparams + s->nproblem + nhw;
	sp->names = calloc(sp->nslots ? sp->nslots : 1, sizeof(char *));
	sp->base = calloc(sp->nslots ? sp->nslots : 1, sizeof(muh_value));
	if (!sp->names || !sp->base)
		return MUH_ENOMEM;
	size_t k = 0;
	for (size_t i = 0; i < s->nparams; i++, k++)
		sp->names[k] = strdup(s->params[i].name);
	for (size_t i = 0; i < s->nproblem; i++, k++) {
		sp->names[k] = strdup(s->problem[i].name);
		sp->base[k] = spec_problem_value(s, i, instance);
	}
	for (size_t i = 0; i < nhw; i++, k++) {
		size_t len = strlen(hw->f[i].key) + 4;
		sp->names[k] = malloc(len);
		if (sp->names[k])
			snprintf(sp->names[k], len, "hw.%s", hw->f[i].key);
		double v = hw->f[i].value;
		sp->base[k] = (v == floor(v) && fabs(v) < 9e15) ? value_int((int64_t)v)
								 : value_float(v);
	}
	for (size_t i = 0; i < sp->nslots; i++)
		if (!sp->names[i])
			return MUH_ENOMEM;
	return MUH_OK;
}

/* Fills sp->lo/hi: a param's smallest and largest value, a problem or hw
 * slot's value; NaN where a value is not an integer. */
static int build_bounds(muh_space *sp)
{
	const muh_spec *s = sp->spec;
	size_t n = sp->nslots ? sp->nslots : 1;
	sp->lo = malloc(n * sizeof(double));
	sp->hi = malloc(n * sizeof(double));
	if (!sp->lo || !sp->hi)
		return MUH_ENOMEM;
	for (size_t k = 0; k < sp->nslots; k++) {
		const muh_value *v = k < sp->np ? s->params[k].values : &sp->base[k];
		size_t nv = k < sp->np ? s->params[k].nvalues : 1;
		sp->lo[k] = INFINITY;
		sp->hi[k] = -INFINITY;
		for (size_t i = 0; i < nv; i++) {
			if (v[i].t != MUH_INT) {
				sp->lo[k] = sp->hi[k] = NAN;
				break;
			}
			sp->lo[k] = fmin(sp->lo[k], (double)v[i].u.i);
			sp->hi[k] = fmax(sp->hi[k], (double)v[i].u.i);
		}
		if (nv == 0)
			sp->lo[k] = sp->hi[k] = NAN;
	}
	return MUH_OK;
}

static int compile_all(muh_space *sp, muh_diag *d)
{
	const muh_spec *s = sp->spec;
	sp->cons = calloc(s->nconstraints ? s->nconstraints : 1, sizeof(struct cons));
	if (!sp->cons)
		return MUH_ENOMEM; /* ncons stays 0: space_free walks no cons */
	sp->ncons = s->nconstraints;
	int *slots = malloc((sp->nslots + 1) * sizeof(int));
	if (!slots)
		return MUH_ENOMEM;
	for (size_t c = 0; c < sp->ncons; c++) {
		struct cons *k = &sp->cons[c];
		k->spec_idx = c;
		muh_diag sub;
		diag_clear(&sub);
		k->e = expr_compile(s->constraints[c].src, (const char *const *)sp->names,
				    (int)sp->nslots, &sub);
		if (!k->e) {
			free(slots);
			/* what the user wrote is located (line 1 of src); out of
			 * memory is not, whether or not it was said */
			if (!diag_is_set(&sub) || sub.line <= 0)
				return MUH_ENOMEM;
			if (d) {
				*d = sub;
				diag_rebase(d, s->path, s->constraints[c].line, s->constraints[c].col,
					    s->text);
			}
			return MUH_EINPUT;
		}
		int n = expr_slots(k->e, slots, (int)sp->nslots);
		k->params = malloc((size_t)(n ? n : 1) * sizeof(int));
		if (!k->params) {
			free(slots);
			return MUH_ENOMEM;
		}
		for (int i = 0; i < n; i++)
			if ((size_t)slots[i] < sp->np)
				k->params[k->nparams++] = slots[i];
		k->group = -1;
	}
	free(slots);
	return MUH_OK;
}

/* ---- groups ------------------------------------------------------------------- */

static int uf_find(int *parent, int x)
{
	while (parent[x] != x)
		x = parent[x] = parent[parent[x]];
	return x;
}

/* Greedy binding order (groups too large for the search below): the param
 * that completes the most constraints, then the one in the most pending
 * constraints, then the one with the fewest values. */
static void order_greedy(muh_space *sp, int *member, int nmember, int *gcons, int ngcons,
			 int *bound, int *left, int *ord)
{
	const muh_spec *s = sp->spec;
	for (int i = 0; i < ngcons; i++)
		left[i] = sp->cons[gcons[i]].nparams;
	for (int step = 0; step < nmember; step++) {
		int best = -1;
		double best_score = -1;
		for (int m = 0; m < nmember; m++) {
			int p = member[m];
			if (bound[p])
				continue;
			int completes = 0, touches = 0;
			for (int i = 0; i < ngcons; i++) {
				struct cons *k = &sp->cons[gcons[i]];
				for (int j = 0; j < k->nparams; j++)
					if (k->params[j] == p) {
						touches++;
						if (left[i] == 1)
							completes++;
					}
			}
			double score = completes * 1e6 + touches * 1e3 +
				       (1000.0 - fmin(999.0, (double)s->params[p].nvalues));
			if (score > best_score) {
				best_score = score;
				best = p;
			}
		}
		bound[best] = 1;
		ord[step] = best;
		for (int i = 0; i < ngcons; i++) {
			struct cons *k = &sp->cons[gcons[i]];
			for (int j = 0; j < k->nparams; j++)
				if (k->params[j] == best)
					--left[i];
		}
	}
}

/* Largest group (in params) whose binding order is searched exactly. */
#define SPACE_ORDER_SEARCH 16

/* Walk cost model, in rough instructions: a visited node, a node of the
 * fast leaf loop, a table read. An expression costs its bytecode length
 * times SPACE_COST_OP. */
#define SPACE_COST_NODE  30.0
#define SPACE_COST_LEAF  6.0
#define SPACE_COST_TABLE 3.0
#define SPACE_COST_OP    12.0

/* Whether constraint k, checked once param p is bound (last), is proven to
 * fail for every larger value of p once it fails (see expr_falls). */
static int cons_falls(const muh_space *sp, const struct cons *k, int p)
{
	const muh_param *par = &sp->spec->params[p];
	for (size_t v = 0; v < par->nvalues; v++)
		if (par->values[v].t != MUH_INT ||
		    (v && par->values[v].u.i <= par->values[v - 1].u.i))
			return 0; /* the break needs integer values in ascending order */
	return expr_falls(k->e, p, sp->lo, sp->hi);
}

/* Binding order by exhaustive search over subsets (dynamic programming):
 * minimises the model cost of the walk, where a state's node count is the
 * product of its params' value counts times the estimated pass rates of the
 * constraints it completes (assumed independent), and a constraint that
 * falls (cons_falls) stops its loop at the first failure. */
static int order_search(muh_space *sp, int *member, int nmember, int *gcons, int ngcons, int *ord)
{
	const muh_spec *s = sp->spec;
	size_t nstates = (size_t)1 << nmember;
	double *best = malloc(nstates * sizeof(double));
	double *nodes = malloc(nstates * sizeof(double));
	int8_t *choice = malloc(nstates);
	uint32_t *mask = malloc((size_t)(ngcons ? ngcons : 1) * sizeof(uint32_t));
	uint32_t *fallmask = calloc((size_t)(ngcons ? ngcons : 1), sizeof(uint32_t));
	if (!best || !nodes || !choice || !mask || !fallmask) {
		free(best);
		free(nodes);
		free(choice);
		free(mask);
		free(fallmask);
		return MUH_ENOMEM;
	}
	for (int i = 0; i < ngcons; i++) {
		struct cons *k = &sp->cons[gcons[i]];
		mask[i] = 0;
		for (int j = 0; j < k->nparams; j++)
			for (int m = 0; m < nmember; m++)
				if (member[m] == k->params[j])
					mask[i] |= 1u << m;
		for (int m = 0; m < nmember; m++)
			if ((mask[i] >> m & 1) && cons_falls(sp, k, member[m]))
				fallmask[i] |= 1u << m;
	}
	uint32_t full = (uint32_t)(nstates - 1);
	for (size_t st = 0; st < nstates; st++)
		best[st] = INFINITY;
	best[0] = 0;
	nodes[0] = 1;
	for (uint32_t st = 0; st < full; st++) {
		if (best[st] == INFINITY)
			continue;
		for (int m = 0; m < nmember; m++) {
			if (st >> m & 1)
				continue;
			uint32_t nx = st | 1u << m;
			double nv = (double)s->params[member[m]].nvalues;
			double visits = nodes[st] * nv, per = 0, alive = 1, pass = 1;
			int first = -1, all_tables = 1;
			for (int i = 0; i < ngcons; i++) {
				if (!(mask[i] >> m & 1) || (mask[i] & ~nx))
					continue;
				const struct cons *k = &sp->cons[gcons[i]];
				if (first < 0)
					first = i;
				per += alive * (k->table ? SPACE_COST_TABLE
							 : SPACE_COST_OP * expr_cost(k->e));
				alive *= k->pass;
				pass *= k->pass;
				all_tables &= k->table != NULL;
			}
			if (first >= 0 && (fallmask[first] >> m & 1))
				visits = nodes[st] * fmin(nv, nv * sp->cons[gcons[first]].pass + 1);
			double node = nx == full && all_tables && nmember >= 2 ? SPACE_COST_LEAF
										: SPACE_COST_NODE;
			double c = best[st] + visits * (node + per);
			if (c < best[nx]) {
				best[nx] = c;
				nodes[nx] = nodes[st] * nv * pass;
				choice[nx] = (int8_t)m;
			}
		}
	}
	uint32_t st = full;
	for (int step = nmember - 1; step >= 0; step--) {
		int m = choice[st];
		ord[step] = member[m];
		st &= ~(1u << m);
	}
	free(best);
	free(nodes);
	free(choice);
	free(mask);
	free(fallmask);
	return MUH_OK;
}

/* Estimates k->pass: exact from its table, else from a fixed-seed sample
 * of its params' values (the estimate steers the binding order only; counts
 * never depend on it). slots holds the problem and hw values. */
static void estimate_pass(muh_space *sp, struct cons *k, muh_value *slots)
{
	const muh_spec *s = sp->spec;
	enum { SAMPLES = 64 };
	if (k->table) {
		size_t size = 1, hits = 0;
		for (int j = 0; j < k->nparams; j++)
			size *= s->params[k->params[j]].nvalues;
		for (size_t i = 0; i < size; i++)
			hits += k->table[i];
		k->pass = ((double)hits + 0.5) / ((double)size + 1);
		return;
	}
	uint64_t rng = UINT64_C(0x5DEECE66D) + k->spec_idx;
	int hits = 0;
	for (int n = 0; n < SAMPLES; n++) {
		for (int j = 0; j < k->nparams; j++) {
			const muh_param *par = &s->params[k->params[j]];
			slots[k->params[j]] = par->values[rand_below(&rng, par->nvalues)];
		}
		hits += expr_test(k->e, slots) == EXPR_TRUE;
	}
	k->pass = (hits + 0.5) / (SAMPLES + 1);
}

static int tabulate(muh_space *sp, struct cons *k, muh_value *slots, double limit);

/* Tables this small are always made (when the group is at least as large). */
#define SPACE_SMALL_TABLE 4096.0

/* The entries of k's table: the product of its params' value counts. */
static double cons_table_size(const muh_space *sp, const struct cons *k)
{
	double size = 1;
	for (int j = 0; j < k->nparams; j++)
		size *= (double)sp->spec->params[k->params[j]].nvalues;
	return size;
}

/* The model's count of checks of each group constraint (visits[i] for
 * gcons[i]) when the group's params are bound in order ord. */
static void model_visits(const muh_space *sp, const int *ord, int n, const int *gcons, int ngcons,
			 double *visits)
{
	double nodes = 1;
	for (int step = 0; step < n; step++) {
		double nv = (double)sp->spec->params[ord[step]].nvalues;
		double v = nodes * nv, alive = 1, pass = 1;
		int first = 1;
		for (int i = 0; i < ngcons; i++) {
			const struct cons *k = &sp->cons[gcons[i]];
			int last = -1;
			for (int j = 0; j < k->nparams; j++)
				for (int t = 0; t < n; t++)
					if (ord[t] == k->params[j] && t > last)
						last = t;
			if (last != step)
				continue;
			if (first && cons_falls(sp, k, ord[step]))
				v = nodes * fmin(nv, nv * k->pass + 1);
			first = 0;
			visits[i] = v * alive;
			alive *= k->pass;
			pass *= k->pass;
		}
		nodes *= nv * pass;
	}
}

/* Chooses the binding order of group g and assigns each of its constraints
 * a depth; fills depth_start and the check order. Tabulates the group's
 * small constraints first (the order's cost model needs to know which are
 * table reads). slots holds the problem and hw values. */
static int order_group(muh_space *sp, struct group *g, int *member, int nmember, int *gcons,
		       int ngcons, muh_value *slots)
{
	const muh_spec *s = sp->spec;
	double cart = 1;
	for (int m = 0; m < nmember; m++)
		cart *= (double)s->params[member[m]].nvalues;
	int rc = MUH_OK;
	for (int i = 0; i < ngcons && !rc; i++)
		rc = tabulate(sp, &sp->cons[gcons[i]], slots, fmin(cart, SPACE_SMALL_TABLE));
	for (int i = 0; i < ngcons && !rc; i++)
		estimate_pass(sp, &sp->cons[gcons[i]], slots);
	int *bound = calloc(sp->np, sizeof(int));
	int *left = malloc((size_t)(ngcons ? ngcons : 1) * sizeof(int));
	double *visits = malloc((size_t)(ngcons ? ngcons : 1) * sizeof(double));
	if (rc || !bound || !left || !visits) {
		free(bound);
		free(left);
		free(visits);
		return rc ? rc : MUH_ENOMEM;
	}
	if (nmember <= SPACE_ORDER_SEARCH && ngcons > 0) {
		rc = order_search(sp, member, nmember, gcons, ngcons, g->params);
		/* A larger table pays when filling it costs fewer evaluations than
		 * the walk would make; then the order is searched again. */
		int more = 0;
		if (!rc)
			model_visits(sp, g->params, nmember, gcons, ngcons, visits);
		for (int i = 0; i < ngcons && !rc; i++) {
			struct cons *k = &sp->cons[gcons[i]];
			if (!k->table && cons_table_size(sp, k) < visits[i]) {
				rc = tabulate(sp, k, slots, cart);
				more |= k->table != NULL;
			}
		}
		if (!rc && more)
			rc = order_search(sp, member, nmember, gcons, ngcons, g->params);
	} else {
		for (int i = 0; i < ngcons && !rc; i++)
			rc = tabulate(sp, &sp->cons[gcons[i]], slots, cart);
		order_greedy(sp, member, nmember, gcons, ngcons, bound, left, g->params);
	}
	free(visits);
	g->nparams = nmember;
	/* each constraint's depth: where its last param is bound */
	for (int i = 0; i < ngcons && !rc; i++) {
		struct cons *k = &sp->cons[gcons[i]];
		k->depth = 0;
		for (int j = 0; j < k->nparams; j++)
			for (int step = 0; step < nmember; step++)
				if (g->params[step] == k->params[j] && step > k->depth)
					k->depth = step;
		k->falls = cons_falls(sp, k, g->params[k->depth]);
	}
	/* check order: by depth, then spec order (gcons is in spec order) */
	g->ncons = 0;
	for (int dpt = 0; dpt < g->nparams; dpt++) {
		g->depth_start[dpt] = g->ncons;
		for (int i = 0; i < ngcons; i++)
			if (sp->cons[gcons[i]].depth == dpt)
				g->cons[g->ncons++] = gcons[i];
	}
	g->depth_start[g->nparams] = g->ncons;
	free(bound);
	free(left);
	return rc;
}

static int make_groups(muh_space *sp)
{
	size_t np = sp->np;
	int *parent = malloc((np ? np : 1) * sizeof(int));
	sp->group_of = malloc((np ? np : 1) * sizeof(int));
	if (!parent || !sp->group_of) {
		free(parent);
		return MUH_ENOMEM;
	}
	for (size_t i = 0; i < np; i++)
		parent[i] = (int)i;
	for (size_t c = 0; c < sp->ncons; c++) {
		struct cons *k = &sp->cons[c];
		for (int j = 1; j < k->nparams; j++) {
			int a = uf_find(parent, k->params[0]), b = uf_find(parent, k->params[j]);
			if (a != b)
				parent[a > b ? a : b] = a < b ? a : b;
		}
	}
	/* groups in order of their first param in spec order */
	sp->groups = calloc(np ? np : 1, sizeof(struct group));
	int *root_group = malloc((np ? np : 1) * sizeof(int));
	int *member = malloc((np ? np : 1) * sizeof(int));
	int *gcons = malloc((sp->ncons ? sp->ncons : 1) * sizeof(int));
	muh_value *slots = malloc((sp->nslots ? sp->nslots : 1) * sizeof(muh_value));
	if (!sp->groups || !root_group || !member || !gcons || !slots) {
		free(parent);
		free(root_group);
		free(member);
		free(gcons);
		free(slots);
		return MUH_ENOMEM;
	}
	memcpy(slots, sp->base, sp->nslots * sizeof(muh_value));
	for (size_t i = 0; i < np; i++)
		root_group[i] = -1;
	int rc = MUH_OK;
	for (size_t i = 0; i < np && !rc; i++) {
		int r = uf_find(parent, (int)i);
		if (root_group[r] >= 0) {
			sp->group_of[i] = root_group[r];
			continue;
		}
		int gi = (int)sp->ngroups++;
		root_group[r] = gi;
		sp->group_of[i] = gi;
		struct group *g = &sp->groups[gi];
		int nm = 0;
		for (size_t j = 0; j < np; j++)
			if (uf_find(parent, (int)j) == r)
				member[nm++] = (int)j;
		int ngc = 0;
		for (size_t c = 0; c < sp->ncons; c++)
			if (sp->cons[c].nparams && uf_find(parent, sp->cons[c].params[0]) == r) {
				gcons[ngc++] = (int)c;
				sp->cons[c].group = gi;
			}
		g->params = malloc((size_t)nm * sizeof(int));
		g->cons = malloc((size_t)(ngc ? ngc : 1) * sizeof(int));
		g->depth_start = malloc((size_t)(nm + 1) * sizeof(int));
		g->radix_stride = malloc((size_t)nm * sizeof(uint64_t));
		g->rejected_local = calloc((size_t)(ngc ? ngc : 1), sizeof(double));
		if (!g->params || !g->cons || !g->depth_start || !g->radix_stride ||
		    !g->rejected_local) {
			rc = MUH_ENOMEM;
			break;
		}
		rc = order_group(sp, g, member, nm, gcons, ngc, slots);
	}
	free(slots);
	free(parent);
	free(root_group);
	free(member);
	free(gcons);
	return rc;
}

/* ---- tabulation --------------------------------------------------------------------- */

/* Largest table per constraint, in entries (bytes). */
#define SPACE_MAX_TABLE (1u << 20)

/* Tabulates constraint k when the product of its params' value counts is
 * at most SPACE_MAX_TABLE and at most limit (the group's cartesian size, so
 * a table never costs more evaluations than the walk would). A lookup is a
 * few multiply-adds; an evaluation is a bytecode run. slots holds the
 * problem and hw values; param slots are overwritten. */
static int tabulate(muh_space *sp, struct cons *k, muh_value *slots, double limit)
{
	const muh_spec *s = sp->spec;
	double size = 1;
	for (int j = 0; j < k->nparams; j++)
		size *= (double)s->params[k->params[j]].nvalues;
	if (k->nparams == 0 || size > SPACE_MAX_TABLE || size > limit)
		return MUH_OK;
	k->tstride = malloc((size_t)k->nparams * sizeof(uint64_t));
	k->table = malloc((size_t)size);
	uint32_t *ix = calloc((size_t)k->nparams, sizeof(uint32_t));
	if (!k->tstride || !k->table || !ix) {
		free(ix);
		return MUH_ENOMEM;
	}
	uint64_t stride = 1;
	for (int j = k->nparams - 1; j >= 0; j--) {
		k->tstride[j] = stride;
		stride *= s->params[k->params[j]].nvalues;
	}
	for (int j = 0; j < k->nparams; j++)
		slots[k->params[j]] = s->params[k->params[j]].values[0];
	for (uint64_t i = 0; i < (uint64_t)size; i++) {
		k->table[i] = expr_test(k->e, slots) == EXPR_TRUE;
		/* next combination, last param fastest (matches tstride) */
		for (int j = k->nparams - 1; j >= 0; j--) {
			const muh_param *par = &s->params[k->params[j]];
			if (++ix[j] < par->nvalues) {
				slots[k->params[j]] = par->values[ix[j]];
				break;
			}
			ix[j] = 0;
			slots[k->params[j]] = par->values[0];
		}
	}
	free(ix);
	return MUH_OK;
}

/* Does constraint k hold for the value indices cfg (one per param)? */
static inline int cons_holds(const struct cons *k, const uint32_t *cfg, const muh_value *slots)
{
	if (k->table) {
		uint64_t i = 0;
		for (int j = 0; j < k->nparams; j++)
			i += cfg[k->params[j]] * k->tstride[j];
		return k->table[i];
	}
	return expr_test(k->e, slots) == EXPR_TRUE;
}

/* ---- enumeration ---------------------------------------------------------------- */

struct walk {
	muh_space *sp;
	struct group *g;
	muh_value *slots;
	uint32_t *idx;    /* value index per binding position */
	uint32_t *cur;    /* value index per param (spec order), for tables */
	uint64_t *rank;   /* rank of the prefix bound so far, per position */
	double *below;    /* below[d]: product of domain sizes of positions > d */
	uint64_t *tuples;
	uint64_t ntuples;
	size_t cap;
	int overflow;
	int leaf_fast; /* every constraint of the last position is tabulated */
	uint64_t steps;   /* loop steps, for the progress callback */
	double done_before, t0; /* fraction of the space in earlier groups; build start */
	double share;     /* this group's share of the whole fraction */
};

static space_progress_fn progress_fn;
static void *progress_ctx;

void space_set_progress(space_progress_fn fn, void *ctx)
{
	progress_fn = fn;
	progress_ctx = ctx;
}

/* Calls the progress callback with how much of the group the walk has
 * passed (the positions bound so far, each weighted by what lies below
 * it). Returns nonzero when the caller asks to stop. */
static int walk_progress(const struct walk *w, int dpt)
{
	double passed = 0;
	for (int i = 0; i <= dpt; i++)
		passed += (double)w->idx[i] * w->below[i];
	double frac = w->done_before + w->share * (w->g->cartesian > 0 ? passed / w->g->cartesian : 0);
	return progress_fn(progress_ctx, frac > 1 ? 1 : frac, now() - w->t0);
}

static int walk_keep(struct walk *w)
{
	struct group *g = w->g;
	if (w->ntuples >= SPACE_MAX_TUPLES) {
		w->overflow = 1;
		return MUH_OK;
	}
	if (array_grow(&w->tuples, &w->cap, w->ntuples, sizeof(uint64_t), 1024))
		return MUH_ENOMEM;
	w->tuples[w->ntuples++] = w->rank[g->nparams - 1];
	return MUH_OK;
}

/* Runs the last binding position in a tight loop: every constraint checked
 * there is tabulated, and all its other params are bound, so each is one
 * table read at base + value * stride. Same counts as the general walk. */
/* Fills k->mask for k checked at the last position, param last, when last
 * has at most 64 values (else leaves it NULL). */
static int leaf_masks(muh_space *sp, struct cons *k, int last)
{
	size_t nv = sp->spec->params[last].nvalues;
	if (nv > 64 || k->mask)
		return MUH_OK;
	uint64_t st = 0, size = 1;
	for (int j = 0; j < k->nparams; j++) {
		size *= sp->spec->params[k->params[j]].nvalues;
		if (k->params[j] == last)
			st = k->tstride[j];
	}
	uint64_t rows = size / nv;
	k->mask = calloc(rows ? rows : 1, sizeof(uint64_t));
	if (!k->mask)
		return MUH_ENOMEM;
	k->mstride = st;
	k->mnv = nv;
	for (uint64_t b = 0; b < size; b++) {
		uint64_t v = b / st % nv, row = b / (st * nv) * st + b % st;
		if (k->table[b])
			k->mask[row] |= UINT64_C(1) << v;
	}
	return MUH_OK;
}

/* Set bits of x. Built for the baseline x86-64 (no POPCNT instruction),
 * __builtin_popcountll is a call into libgcc's table-driven routine
 * (callgrind, hotspot space: 5.9 M of the process's 150 M instructions);
 * the inline bit-slice count has no call and no table (148.5 M in all). */
static inline uint64_t popcount64(uint64_t x)
{
#if defined(__POPCNT__)
	return (uint64_t)__builtin_popcountll(x);
#else
	x = x - ((x >> 1) & UINT64_C(0x5555555555555555));
	x = (x & UINT64_C(0x3333333333333333)) + ((x >> 2) & UINT64_C(0x3333333333333333));
	x = (x + (x >> 4)) & UINT64_C(0x0f0f0f0f0f0f0f0f);
	return (x * UINT64_C(0x0101010101010101)) >> 56;
#endif
}

/* The fast leaf loop over bit masks: per constraint in check order, the
 * values still alive that it rejects are charged to it; what survives is
 * valid. Same counts as value by value. */
static int walk_leaves_masks(struct walk *w, const uint64_t *base)
{
	struct group *g = w->g;
	int n = g->nparams;
	int c0 = g->depth_start[n - 1], c1 = g->depth_start[n];
	size_t nv = w->sp->spec->params[g->params[n - 1]].nvalues;
	uint64_t alive = nv == 64 ? ~UINT64_C(0) : (UINT64_C(1) << nv) - 1;
	for (int ci = c0; ci < c1 && alive; ci++) {
		const struct cons *k = &w->sp->cons[g->cons[ci]];
		uint64_t b = base[ci - c0];
		uint64_t m = k->mask[b / (k->mstride * k->mnv) * k->mstride + b % k->mstride];
		g->rejected_local[ci] += (double)popcount64(alive & ~m);
		alive &= m;
	}
	uint64_t nvalid = popcount64(alive);
	g->valid += nvalid;
	if (w->overflow || !nvalid)
		return MUH_OK;
	uint64_t rank0 = w->rank[n - 2], rstride = g->radix_stride[n - 1];
	if (w->ntuples + nvalid > SPACE_MAX_TUPLES || w->cap - w->ntuples < nvalid) {
		for (; alive; alive &= alive - 1) { /* walk_keep grows and caps */
			w->rank[n - 1] = rank0 + (uint64_t)__builtin_ctzll(alive) * rstride;
			int rc = walk_keep(w);
			if (rc)
				return rc;
		}
		return MUH_OK;
	}
	uint64_t *t = w->tuples + w->ntuples;
	for (; alive; alive &= alive - 1)
		*t++ = rank0 + (uint64_t)__builtin_ctzll(alive) * rstride;
	w->ntuples = (uint64_t)(t - w->tuples);
	return MUH_OK;
}

static int walk_leaves(struct walk *w)
{
	struct group *g = w->g;
	int n = g->nparams, last = g->params[n - 1];
	int c0 = g->depth_start[n - 1], c1 = g->depth_start[n], nc = c1 - c0;
	const uint8_t *tab[64];
	uint64_t step[64], base[64];
	int masks = 1;
	for (int ci = c0; ci < c1; ci++) {
		const struct cons *k = &w->sp->cons[g->cons[ci]];
		uint64_t b = 0, st = 0;
		for (int j = 0; j < k->nparams; j++) {
			if (k->params[j] == last)
				st = k->tstride[j];
			else
				b += w->cur[k->params[j]] * k->tstride[j];
		}
		tab[ci - c0] = k->table + b;
		step[ci - c0] = st;
		base[ci - c0] = b;
		masks &= k->mask != NULL;
	}
	if (masks)
		return walk_leaves_masks(w, base);
	int falls0 = w->sp->cons[g->cons[c0]].falls;
	size_t nv = w->sp->spec->params[last].nvalues;
	uint64_t rank0 = w->rank[n - 2], rstride = g->radix_stride[n - 1];
	/* room for every value up front, so the loop stores without checks;
	 * near the tuple limit, walk_keep decides value by value */
	int direct = !w->overflow && w->ntuples + nv <= SPACE_MAX_TUPLES;
	if (direct && w->cap - w->ntuples < nv) {
		uint64_t cap = w->cap ? w->cap : 1024;
		while (cap - w->ntuples < nv)
			cap *= 2;
		uint64_t *nt = realloc(w->tuples, cap * sizeof(uint64_t));
		if (!nt)
			return MUH_ENOMEM;
		w->tuples = nt;
		w->cap = cap;
	}
	uint64_t valid = 0, nt = w->ntuples;
	for (size_t v = 0; v < nv; v++) {
		int ci = 0;
		while (ci < nc && tab[ci][v * step[ci]])
			ci++;
		if (ci < nc) {
			if (ci == 0 && falls0) {
				/* the first leaf constraint falls: the rest fail it */
				g->rejected_local[c0] += (double)(nv - v);
				break;
			}
			g->rejected_local[c0 + ci] += 1;
			continue;
		}
		valid++;
		if (direct) {
			w->tuples[nt++] = rank0 + v * rstride;
		} else if (!w->overflow) {
			w->rank[n - 1] = rank0 + v * rstride;
			int rc = walk_keep(w);
			if (rc)
				return rc;
		}
	}
	if (direct)
		w->ntuples = nt;
	g->valid += valid;
	return MUH_OK;
}

/* Depth-first over binding positions, iteratively (no recursion limit). */
static int walk_group(struct walk *w)
{
	struct group *g = w->g;
	const muh_spec *s = w->sp->spec;
	int n = g->nparams;
	int dpt = 0;
	w->idx[0] = 0;
	for (;;) {
		int p = g->params[dpt];
		const muh_param *par = &s->params[p];
		if (progress_fn && !(++w->steps & 0xFFFFF) && walk_progress(w, dpt))
			return MUH_EFINDING; /* the caller asked to stop */
		if (w->idx[dpt] >= par->nvalues) {
			if (dpt == 0)
				return MUH_OK;
			dpt--;
			w->idx[dpt]++;
			continue;
		}
		w->slots[p] = par->values[w->idx[dpt]];
		w->cur[p] = w->idx[dpt];
		w->rank[dpt] = (dpt ? w->rank[dpt - 1] : 0) + w->idx[dpt] * g->radix_stride[dpt];
		int ok = 1;
		for (int ci = g->depth_start[dpt]; ci < g->depth_start[dpt + 1]; ci++) {
			const struct cons *k = &w->sp->cons[g->cons[ci]];
			if (!cons_holds(k, w->cur, w->slots)) {
				ok = 0;
				if (k->falls && ci == g->depth_start[dpt]) {
					/* first checked here and falls: every larger value
					 * of this param fails it too, charged to it */
					size_t left = par->nvalues - w->idx[dpt];
					g->rejected_local[ci] += w->below[dpt] * (double)left;
					w->idx[dpt] = (uint32_t)par->nvalues - 1;
				} else {
					g->rejected_local[ci] += w->below[dpt];
				}
				break;
			}
		}
		if (ok && dpt == n - 1) {
			g->valid++;
			if (!w->overflow) {
				int rc = walk_keep(w);
				if (rc)
					return rc;
			}
		}
		if (ok && dpt == n - 2 && w->leaf_fast) {
			int rc = walk_leaves(w);
			if (rc)
				return rc;
			w->idx[dpt]++;
		} else if (ok && dpt < n - 1) {
			dpt++;
			w->idx[dpt] = 0;
		} else {
			w->idx[dpt]++;
		}
	}
}

static int enumerate(muh_space *sp, double t0)
{
	const muh_spec *s = sp->spec;
	muh_value *slots = malloc((sp->nslots ? sp->nslots : 1) * sizeof(muh_value));
	if (!slots)
		return MUH_ENOMEM;
	memcpy(slots, sp->base, sp->nslots * sizeof(muh_value));
	int rc = MUH_OK;
	sp->indexed = 1;
	for (size_t gi = 0; gi < sp->ngroups && !rc; gi++) {
		struct group *g = &sp->groups[gi];
		/* rank strides: the group's mixed radix in binding order */
		uint64_t stride = 1;
		g->cartesian = 1;
		for (int i = g->nparams - 1; i >= 0; i--) {
			g->radix_stride[i] = stride;
			size_t nv = s->params[g->params[i]].nvalues;
			stride *= nv;
			g->cartesian *= (double)nv;
		}
		if (g->ncons == 0) { /* unconstrained: a product, never enumerated */
			g->valid = (uint64_t)g->cartesian;
			g->indexed = 1;
			continue;
		}
		if (g->cartesian > 1.8e19) {
			rc = MUH_EINPUT;
			break;
		}
		struct walk w = {.sp = sp, .g = g, .slots = slots, .t0 = t0,
				 .done_before = (double)gi / (double)sp->ngroups, .share = 1.0 / (double)sp->ngroups};
		w.idx = calloc((size_t)g->nparams, sizeof(uint32_t));
		w.below = malloc((size_t)g->nparams * sizeof(double));
		w.cur = calloc(sp->np, sizeof(uint32_t));
		w.rank = calloc((size_t)g->nparams, sizeof(uint64_t));
		if (!w.idx || !w.below || !w.cur || !w.rank) {
			free(w.idx);
			free(w.below);
			free(w.cur);
			free(w.rank);
			rc = MUH_ENOMEM;
			break;
		}
		int nleaf = g->depth_start[g->nparams] - g->depth_start[g->nparams - 1];
		w.leaf_fast = g->nparams >= 2 && nleaf <= 64;
		for (int ci = g->depth_start[g->nparams - 1]; ci < g->depth_start[g->nparams]; ci++)
			if (!sp->cons[g->cons[ci]].table)
				w.leaf_fast = 0;
		for (int ci = g->depth_start[g->nparams - 1]; w.leaf_fast && ci < g->depth_start[g->nparams] && !rc;
		     ci++)
			rc = leaf_masks(sp, &sp->cons[g->cons[ci]], g->params[g->nparams - 1]);
		if (rc) {
			free(w.idx);
			free(w.below);
			free(w.cur);
			free(w.rank);
			break;
		}
		double b = 1;
		for (int i = g->nparams - 1; i >= 0; i--) {
			w.below[i] = b;
			b *= (double)s->params[g->params[i]].nvalues;
		}
		rc = walk_group(&w);
		free(w.idx);
		free(w.below);
		free(w.cur);
		free(w.rank);
		if (!rc && !w.overflow) {
			/* The walk visits tuples in lexicographic binding order and
			 * ranks use the same order, so they come out sorted. */
			for (uint64_t t = 1; t < w.ntuples; t++)
				assert(w.tuples[t - 1] < w.tuples[t]);
			g->tuples = w.tuples;
			g->indexed = 1;
		} else {
			free(w.tuples);
			g->indexed = 0;
			sp->indexed = 0;
		}
	}
	free(slots);
	return rc;
}

/* Turns per-group counts into whole-space counts and the check order. */
static void attribute(muh_space *sp)
{
	size_t k = 0;
	sp->cartesian = 1;
	for (size_t gi = 0; gi < sp->ngroups; gi++)
		sp->cartesian *= sp->groups[gi].cartesian;
	/* constant constraints come first in check order */
	int const_ok = 1;
	for (size_t c = 0; c < sp->ncons; c++) {
		struct cons *kc = &sp->cons[c];
		if (kc->group >= 0)
			continue;
		sp->check_order[k++] = c;
		if (!const_ok)
			continue;
		if (expr_test(kc->e, sp->base) != EXPR_TRUE) {
			kc->rejected = sp->cartesian;
			const_ok = 0;
		}
	}
	double valid_before = 1;
	for (size_t gi = 0; gi < sp->ngroups; gi++) {
		struct group *g = &sp->groups[gi];
		double after = 1;
		for (size_t gj = gi + 1; gj < sp->ngroups; gj++)
			after *= sp->groups[gj].cartesian;
		for (int ci = 0; ci < g->ncons; ci++) {
			struct cons *kc = &sp->cons[g->cons[ci]];
			sp->check_order[k++] = (size_t)g->cons[ci];
			kc->rejected = const_ok ? g->rejected_local[ci] * valid_before * after : 0;
		}
		valid_before *= (double)g->valid;
	}
	uint64_t v = const_ok ? 1 : 0;
	for (size_t gi = 0; gi < sp->ngroups && v; gi++) {
		uint64_t gv = sp->groups[gi].valid;
		if (gv && v > UINT64_MAX / gv) {
			v = UINT64_MAX; /* saturate: more than 2^64 valid */
			break;
		}
		v *= gv;
	}
	sp->valid = v;
	if (!const_ok)
		sp->indexed = 1; /* empty: trivially indexed */
}

int space_build(const muh_spec *s, const muh_hw *hw, size_t instance, muh_space **out, muh_diag *d)
{
	double t0 = now();
	*out = NULL;
	muh_space *sp = calloc(1, sizeof(*sp));
	if (!sp)
		return MUH_ENOMEM;
	sp->spec = s;
	sp->instance = instance;
	sp->np = s->nparams;
	int rc = build_names(sp, hw, instance);
	if (!rc)
		rc = build_bounds(sp);
	if (!rc && (rc = compile_all(sp, d)) == MUH_EINPUT && hw)
		hw_explain_unknown(hw, d); /* hw.KEY the profile does not know: say so */
	if (!rc)
		rc = make_groups(sp);
	if (!rc) {
		sp->check_order = malloc((sp->ncons ? sp->ncons : 1) * sizeof(size_t));
		if (!sp->check_order)
			rc = MUH_ENOMEM;
	}
	if (!rc) {
		rc = enumerate(sp, t0);
		if (rc == MUH_EINPUT) {
			diag_at(d, s->path, 0, 0, NULL);
			diag_errorf(d, "a group of linked params has more than 2^64 combinations");
		} else if (rc == MUH_EFINDING) {
			diag_errorf(d, "interrupted after %.1f s: the space of %s was not counted to the end",
				    now() - t0, s->path);
		}
	}
	if (rc) {
		space_free(sp);
		return rc;
	}
	attribute(sp);
	sp->seconds = now() - t0;
	*out = sp;
	return MUH_OK;
}

void space_free(muh_space *sp)
{
	if (!sp)
		return;
	for (size_t c = 0; c < sp->ncons; c++) {
		expr_free(sp->cons[c].e);
		free(sp->cons[c].params);
		free(sp->cons[c].table);
		free(sp->cons[c].tstride);
		free(sp->cons[c].mask);
	}
	for (size_t g = 0; g < sp->ngroups; g++) {
		struct group *gr = &sp->groups[g];
		free(gr->params);
		free(gr->cons);
		free(gr->depth_start);
		free(gr->radix_stride);
		free(gr->tuples);
		free(gr->rejected_local);
	}
	for (size_t i = 0; i < sp->nslots && sp->names; i++)
		free(sp->names[i]);
	free(sp->names);
	free(sp->base);
	free(sp->lo);
	free(sp->hi);
	free(sp->cons);
	free(sp->groups);
	free(sp->group_of);
	free(sp->check_order);
	free(sp);
}

/* ---- queries ---------------------------------------------------------------------- */

const muh_spec *space_spec(const muh_space *sp)
{
	return sp->spec;
}

size_t space_instance(const muh_space *sp)
{
	return sp->instance;
}

size_t space_nparams(const muh_space *sp)
{
	return sp->np;
}

double space_cartesian(const muh_space *sp)
{
	return sp->cartesian;
}

uint64_t space_valid(const muh_space *sp)
{
	return sp->valid;
}

double space_seconds(const muh_space *sp)
{
	return sp->seconds;
}

size_t space_nconstraints(const muh_space *sp)
{
	return sp->ncons;
}

double space_rejected(const muh_space *sp, size_t c)
{
	return c < sp->ncons ? sp->cons[c].rejected : 0;
}

size_t space_check_order(const muh_space *sp, size_t k)
{
	return sp->check_order[k];
}

size_t space_ngroups(const muh_space *sp)
{
	return sp->ngroups;
}

muh_value space_value(const muh_space *sp, const uint32_t *cfg, size_t p)
{
	return sp->spec->params[p].values[cfg[p]];
}

/* Decodes a group-local index into cfg entries of that group's params. */
static void group_decode(const muh_space *sp, const struct group *g, uint64_t li, uint32_t *cfg)
{
	const muh_spec *s = sp->spec;
	if (g->tuples) {
		uint64_t rank = g->tuples[li];
		for (int i = 0; i < g->nparams; i++) {
			cfg[g->params[i]] = (uint32_t)(rank / g->radix_stride[i]);
			rank %= g->radix_stride[i];
		}
		return;
	}
	/* unconstrained group: its own mixed radix */
	for (int i = g->nparams - 1; i >= 0; i--) {
		size_t nv = s->params[g->params[i]].nvalues;
		cfg[g->params[i]] = (uint32_t)(li % nv);
		li /= nv;
	}
}

int space_config_at(const muh_space *sp, uint64_t i, uint32_t *cfg)
{
	if (!sp->indexed || i >= sp->valid)
		return MUH_EINPUT;
	for (size_t gi = sp->ngroups; gi-- > 0;) {
		const struct group *g = &sp->groups[gi];
		group_decode(sp, g, i % g->valid, cfg);
		i /= g->valid;
	}
	return MUH_OK;
}

int space_is_valid(const muh_space *sp, const uint32_t *cfg)
{
	muh_value stackslots[64];
	muh_value *slots = sp->nslots <= 64 ? stackslots : malloc(sp->nslots * sizeof(muh_value));
	if (!slots)
		return 0;
	memcpy(slots, sp->base, sp->nslots * sizeof(muh_value));
	int ok = 1;
	for (size_t p = 0; p < sp->np; p++) {
		if (cfg[p] >= sp->spec->params[p].nvalues) {
			ok = 0;
			break;
		}
		slots[p] = sp->spec->params[p].values[cfg[p]];
	}
	for (size_t c = 0; ok && c < sp->ncons; c++)
		if (!cons_holds(&sp->cons[c], cfg, slots))
			ok = 0;
	if (slots != stackslots)
		free(slots);
	return ok;
}

int space_index_of(const muh_space *sp, const uint32_t *cfg, uint64_t *i)
{
	if (!sp->indexed || !space_is_valid(sp, cfg))
		return -1;
	const muh_spec *s = sp->spec;
	uint64_t idx = 0;
	for (size_t gi = 0; gi < sp->ngroups; gi++) {
		const struct group *g = &sp->groups[gi];
		uint64_t li = 0;
		if (g->tuples) {
			uint64_t rank = 0;
			for (int k = 0; k < g->nparams; k++)
				rank += cfg[g->params[k]] * g->radix_stride[k];
			uint64_t *hit = bsearch(&rank, g->tuples, g->valid, sizeof(uint64_t), cmp_u64);
			if (!hit)
				return -1;
			li = (uint64_t)(hit - g->tuples);
		} else {
			for (int k = 0; k < g->nparams; k++)
				li = li * s->params[g->params[k]].nvalues + cfg[g->params[k]];
		}
		idx = idx * g->valid + li;
	}
	*i = idx;
	return 0;
}

int space_sample(const muh_space *sp, uint64_t *rng, uint32_t *cfg)
{
	if (!sp->valid || !sp->indexed)
		return MUH_EINPUT;
	return space_config_at(sp, rand_below(rng, sp->valid), cfg);
}

size_t space_neighbours(const muh_space *sp, const uint32_t *cfg, enum space_neigh kind,
			uint32_t *out, size_t max)
{
	const muh_spec *s = sp->spec;
	size_t n = 0;
	for (size_t p = 0; p < sp->np && n < max; p++) {
		size_t nv = s->params[p].nvalues;
		for (size_t v = 0; v < nv && n < max; v++) {
			if (v == cfg[p])
				continue;
			if (kind == SPACE_ADJACENT && v + 1 != cfg[p] && v != cfg[p] + 1)
				continue;
			uint32_t *c = out + n * sp->np;
			memcpy(c, cfg, sp->np * sizeof(uint32_t));
			c[p] = (uint32_t)v;
			if (space_is_valid(sp, c))
				n++;
		}
	}
	return n;
}

int space_default(const muh_space *sp, uint32_t *cfg)
{
	for (size_t p = 0; p < sp->np; p++)
		cfg[p] = (uint32_t)spec_default_index(sp->spec, sp->instance, p);
	return space_is_valid(sp, cfg);
}

int space_key(const muh_space *sp, const uint32_t *cfg, char *buf, size_t n)
{
	size_t o = 0;
	if (n)
		buf[0] = '\0';
	for (size_t p = 0; p < sp->np; p++) {
		char v[64];
		value_fmt(v, sizeof(v), space_value(sp, cfg, p));
		int w = snprintf(buf + (o < n ? o : n), o < n ? n - o : 0, "%s%s=%s", p ? "," : "",
				 sp->spec->params[p].name, v);
		o += (size_t)(w > 0 ? w : 0);
	}
	return (int)o;
}

int space_parse_key(const muh_space *sp, const char *key, uint32_t *cfg, muh_diag *d)
{
	const muh_spec *s = sp->spec;
	for (size_t p = 0; p < sp->np; p++)
		cfg[p] = UINT32_MAX;
	const char *q = key;
	while (*q) {
		const char *eq = strchr(q, '=');
		if (!eq)
			return diag_errorf(d, "expected NAME=VALUE at '%s'", q);
		const char *end = strchr(eq, ',');
		size_t nlen = (size_t)(eq - q), vlen = end ? (size_t)(end - eq - 1) : strlen(eq + 1);
		size_t p;
		for (p = 0; p < sp->np; p++)
			if (strlen(s->params[p].name) == nlen && !strncmp(s->params[p].name, q, nlen))
				break;
		if (p == sp->np) {
			diag_near near = DIAG_NEAR_INIT;
			for (size_t i = 0; i < sp->np; i++)
				diag_near_offer(&near, q, nlen, s->params[i].name);
			char hint[96];
			return diag_errorf(d, "no param '%.*s' in this spec%s", (int)nlen, q,
					   diag_near_hint(near.name, hint, sizeof(hint)));
		}
		size_t v;
		for (v = 0; v < s->params[p].nvalues; v++) {
			char buf[64];
			int w = value_fmt(buf, sizeof(buf), s->params[p].values[v]);
			if ((size_t)w == vlen && !strncmp(buf, eq + 1, vlen))
				break;
		}
		if (v == s->params[p].nvalues)
			return diag_errorf(d, "'%.*s' is not a value of '%s'", (int)vlen, eq + 1,
					   s->params[p].name);
		cfg[p] = (uint32_t)v;
		q = end ? end + 1 : eq + 1 + vlen;
	}
	for (size_t p = 0; p < sp->np; p++)
		if (cfg[p] == UINT32_MAX)
			return diag_errorf(d, "the key does not give param '%s'", s->params[p].name);
	return MUH_OK;
}

int space_key_value(const char *key, const char *name, char *buf, size_t n)
{
	size_t nl = strlen(name);
	for (const char *p = key; p && *p;) {
		const char *eq = strchr(p, '=');
		const char *end = strchr(p, ',');
		if (!eq)
			return -1;
		if ((size_t)(eq - p) == nl && !strncmp(p, name, nl)) {
			size_t vl = end ? (size_t)(end - eq - 1) : strlen(eq + 1);
			snprintf(buf, n, "%.*s", (int)vl, eq + 1);
			return 0;
		}
		p = end ? end + 1 : NULL;
	}
	return -1;
}
