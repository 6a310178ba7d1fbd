/*
 * spec.c — reads a spec (see spec.h) from YAML or JSON through libfyaml.
 *
 * Owns: turning a document into struct muh_spec, with every error placed at
 * the file, line and column of what the user wrote. Three schemas are
 * recognised from content (not from the file name):
 *   - muh:   params / constraints / problem / hw / defaults / seeds;
 *   - CAFF:  ConfigurationSpace.{TuningParameters,Conditions} (BAT), or the
 *            older lower-case configuration_space.{tuning_parameters,
 *            constraints};
 *   - T1:    Kernel Tuner's T1 input: the CAFF layout plus
 *            KernelSpecification.
 * Param values may be a list, {from,to,step}, {pow2:[lo,hi]}, or a string
 * holding a Python list expression (expr_eval_list).
 *
 * Must never: print, exit, or keep libfyaml objects past spec_parse (the
 * spec owns plain C data only, so callers need not know libfyaml).
 */
#include <assert.h>
#include <errno.h>
#include <libfyaml.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "strbuf.h"
#include "yamlcheck.h"
#include "muh/expr.h"
#include "muh/fileio.h"
#include "muh/muh.h"
#include "muh/spec.h"

/* A growable byte pool for string values; strings are referenced by offset
 * while parsing (the pool moves) and turned into pointers at the end. */
struct pool {
	char *buf;
	size_t len, cap;
};

struct parser {
	muh_spec *s;
	muh_diag *d;
	struct pool pool;
	/* string values are stored with u.i = offset into pool; str_fix lists
	 * them so they can be pointed at the final pool */
	muh_value **str_fix;
	size_t nstr_fix, cap_str_fix;
};

/* Room for one more element of arr (n of cap used), or return MUH_ENOMEM. */
#define GROW(arr, n, cap)                                                                          \
	do {                                                                                       \
		if (array_grow(&(arr), &(cap), (n), sizeof(*(arr)), 8))                            \
			return MUH_ENOMEM;                                                         \
	} while (0)

static const char *parser_text(const struct parser *P)
{
	return P->s->text;
}

/* ---- positions and errors ------------------------------------------------ */

/* Line and column (1-based) of a node's first character; for collections,
 * of their first key or item. 0,0 when unknown. */
struct parser;
static const char *parser_text(const struct parser *P);

static void node_pos(const struct parser *P, struct fy_node *n, int *line, int *col)
{
	*line = 0;
	*col = 0;
	for (int depth = 0; n && depth < 64; depth++) {
		enum fy_node_type t = fy_node_get_type(n);
		if (t == FYNT_SCALAR) {
			struct fy_token *tok = fy_node_get_scalar_token(n);
			const struct fy_mark *m = tok ? fy_token_start_mark(tok) : NULL;
			if (m)
				diag_linecol(parser_text(P), m->input_pos, line, col);
			return;
		}
		void *it = NULL;
		if (t == FYNT_MAPPING) {
			struct fy_node_pair *p = fy_node_mapping_iterate(n, &it);
			n = p ? fy_node_pair_key(p) : NULL;
		} else {
			n = fy_node_sequence_iterate(n, &it);
		}
	}
}

/* Column offset of a scalar's content from its token start (1 for quotes). */
static int content_offset(struct fy_node *n)
{
	enum fy_node_style st = fy_node_get_style(n);
	return (st == FYNS_SINGLE_QUOTED || st == FYNS_DOUBLE_QUOTED) ? 1 : 0;
}

static int err_at(struct parser *P, struct fy_node *n, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int err_at(struct parser *P, struct fy_node *n, const char *fmt, ...)
{
	int line = 0, col = 0;
	if (n)
		node_pos(P, n, &line, &col);
	diag_at(P->d, P->s->path, line, col, P->s->text);
	va_list ap;
	va_start(ap, fmt);
	if (P->d)
		vsnprintf(P->d->msg, sizeof(P->d->msg), fmt, ap);
	va_end(ap);
	return MUH_EINPUT;
}

/* ---- small helpers ------------------------------------------------------- */

static char *scalar_dup(struct fy_node *n)
{
	size_t len = 0;
	const char *v = fy_node_get_scalar(n, &len);
	return v ? strdup_n(v, len) : NULL;
}

/* Looks up the first of several key spellings in a mapping. */
static struct fy_node *lookup(struct fy_node *map, const char *const *keys)
{
	if (!yaml_is_map(map))
		return NULL;
	for (; *keys; keys++) {
		struct fy_node *v = fy_node_mapping_lookup_by_string(map, *keys, FY_NT);
		if (v)
			return v;
	}
	return NULL;
}

static struct fy_node *lookup1(struct fy_node *map, const char *key)
{
	const char *keys[] = {key, NULL};
	return lookup(map, keys);
}

/* Adds a string to the pool; returns its offset via *off. */
static int pool_add(struct pool *pl, const char *s, size_t n, size_t *off)
{
	if (pl->len + n + 1 > pl->cap) {
		size_t nc = pl->cap ? pl->cap * 2 : 256;
		while (nc < pl->len + n + 1)
			nc *= 2;
		char *nb = realloc(pl->buf, nc);
		if (!nb)
			return MUH_ENOMEM;
		pl->buf = nb;
		pl->cap = nc;
	}
	memcpy(pl->buf + pl->len, s, n);
	pl->buf[pl->len + n] = '\0';
	*off = pl->len;
	pl->len += n + 1;
	return MUH_OK;
}

/* Parses scalar text as a value: int (decimal/hex), float, bool, else
 * string. Quoted scalars are always strings. */
static int scalar_value(struct parser *P, struct fy_node *n, muh_value *out, int *is_str)
{
	size_t len = 0;
	const char *v = fy_node_get_scalar(n, &len);
	char buf[128];
	*is_str = 0;
	if (!v)
		v = "", len = 0;
	int quoted = content_offset(n);
	if (!quoted && len < sizeof(buf)) {
		memcpy(buf, v, len);
		buf[len] = '\0';
		if (!strcmp(buf, "true") || !strcmp(buf, "True")) {
			*out = value_int(1);
			return MUH_OK;
		}
		if (!strcmp(buf, "false") || !strcmp(buf, "False")) {
			*out = value_int(0);
			return MUH_OK;
		}
		char *end;
		errno = 0;
		long long i = strtoll(buf, &end, 0);
		if (len && *end == '\0' && errno == 0) {
			*out = value_int(i);
			return MUH_OK;
		}
		/* an integer too big for 64 bits is an error, not a float */
		if (len && *end == '\0' && errno == ERANGE)
			return err_at(P, n, "%s is out of range: integers are 64-bit (-2^63 to 2^63-1)", buf);
		errno = 0;
		double f = strtod(buf, &end);
		if (len && *end == '\0' && errno == 0) {
			*out = value_float(f);
			return MUH_OK;
		}
	}
	size_t off;
	int rc = pool_add(&P->pool, v, len, &off);
	if (rc)
		return rc;
	out->t = MUH_STR;
	out->u.i = (int64_t)off; /* fixed up to a pointer at the end */
	*is_str = 1;
	return MUH_OK;
}

/* ---- params --------------------------------------------------------------- */

struct vlist {
	muh_value *v;
	size_t n, cap;
	size_t *ix;   /* a hash set over v: index + 1, 0 empty; freed once read */
	size_t ixcap; /* a power of two, at least twice n */
};

/* A hash of v consistent with the equality vlist_push uses: numbers by
 * their value as a double (1 and 1.0 are one value), strings by content. */
static uint64_t value_hash(muh_value v, const struct pool *pl)
{
	uint64_t h;
	if (v.t == MUH_STR) {
		h = 1469598103934665603u; /* FNV-1a */
		for (const unsigned char *c = (const unsigned char *)pl->buf + v.u.i; *c; c++)
			h = (h ^ *c) * 1099511628211u;
	} else {
		double x = value_num(v);
		if (x == 0)
			x = 0; /* -0.0 is 0 */
		memcpy(&h, &x, sizeof(h));
	}
	h ^= h >> 33; /* MurmurHash3's finalizer: nearby values spread over the table */
	h *= 0xff51afd7ed558ccdu;
	h ^= h >> 33;
	h *= 0xc4ceb9fe1a85ec53u;
	h ^= h >> 33;
	return h;
}

/* Is w the same value as v (strings hold pool offsets)? */
static int vlist_same(muh_value w, muh_value v, const struct pool *pl)
{
	if (v.t == MUH_STR || w.t == MUH_STR)
		return v.t == w.t && !strcmp(pl->buf + v.u.i, pl->buf + w.u.i);
	return value_eq(w, v);
}

/* Appends v unless it is already there: values are a set, in written order.
 * String values hold pool offsets until the end of parsing. The check is a
 * hash lookup, so a list of n values is read in O(n) (it was O(n^2): 40,000
 * values took 9 s). */
static int vlist_push(struct vlist *l, muh_value v, const struct pool *pl)
{
	if (2 * (l->n + 1) > l->ixcap) {
		size_t nc = l->ixcap ? l->ixcap * 2 : 16;
		size_t *nx = calloc(nc, sizeof(*nx));
		if (!nx)
			return MUH_ENOMEM;
		for (size_t i = 0; i < l->n; i++) {
			size_t j = (size_t)value_hash(l->v[i], pl) & (nc - 1);
			while (nx[j])
				j = (j + 1) & (nc - 1);
			nx[j] = i + 1;
		}
		free(l->ix);
		l->ix = nx;
		l->ixcap = nc;
	}
	size_t j = (size_t)value_hash(v, pl) & (l->ixcap - 1);
	for (; l->ix[j]; j = (j + 1) & (l->ixcap - 1))
		if (vlist_same(l->v[l->ix[j] - 1], v, pl))
			return MUH_OK;
	GROW(l->v, l->n, l->cap);
	l->v[l->n++] = v;
	l->ix[j] = l->n;
	return MUH_OK;
}

static int int_of(struct parser *P, struct fy_node *n, const char *what, int64_t *out)
{
	muh_value v;
	int is_str;
	if (!yaml_is_scalar(n))
		return err_at(P, n, "expected an integer for %s", what);
	int rc = scalar_value(P, n, &v, &is_str);
	if (rc)
		return rc;
	if (v.t != MUH_INT)
		return err_at(P, n, "expected an integer for %s", what);
	*out = v.u.i;
	return MUH_OK;
}

/* Values written as a Python list expression in a string scalar. */
static int values_from_pyexpr(struct parser *P, struct fy_node *n, struct vlist *l)
{
	size_t len = 0;
	const char *src = fy_node_get_scalar(n, &len);
	char *text = strdup_n(src ? src : "", len);
	if (!text)
		return MUH_ENOMEM;
	muh_value *vals = NULL;
	size_t nv = 0;
	char *strpool = NULL;
	muh_diag sub;
	diag_clear(&sub);
	int rc = expr_eval_list(text, &vals, &nv, &strpool, &sub);
	if (rc) {
		free(text);
		if (rc != MUH_EINPUT)
			return rc;
		int line, col;
		node_pos(P, n, &line, &col);
		if (P->d) {
			*P->d = sub;
			diag_rebase(P->d, P->s->path, line, col,
				    P->s->text);
		}
		return MUH_EINPUT;
	}
	for (size_t i = 0; i < nv && !rc; i++) {
		muh_value v = vals[i];
		if (v.t == MUH_STR) {
			size_t off;
			rc = pool_add(&P->pool, v.u.s, strlen(v.u.s), &off);
			v.u.i = (int64_t)off;
		}
		if (!rc)
			rc = vlist_push(l, v, &P->pool);
	}
	free(vals);
	free(strpool);
	free(text);
	return rc;
}

/* Reads a param's values from any of the accepted forms. */
static int read_values(struct parser *P, struct fy_node *n, struct vlist *l)
{
	if (yaml_is_scalar(n))
		return values_from_pyexpr(P, n, l);
	if (yaml_is_seq(n)) {
		void *it = NULL;
		struct fy_node *item;
		while ((item = fy_node_sequence_iterate(n, &it))) {
			muh_value v;
			int is_str;
			if (!yaml_is_scalar(item))
				return err_at(P, item, "expected a scalar value in the list");
			int rc = scalar_value(P, item, &v, &is_str);
			if (!rc)
				rc = vlist_push(l, v, &P->pool);
			if (rc)
				return rc;
		}
		return MUH_OK;
	}
	if (yaml_is_map(n)) {
		struct fy_node *from = lookup1(n, "from"), *to = lookup1(n, "to");
		struct fy_node *step = lookup1(n, "step"), *p2 = lookup1(n, "pow2");
		struct fy_node *vals = lookup1(n, "values");
		if (vals)
			return read_values(P, vals, l);
		if (p2) {
			int64_t lo = 0, hi = 0; /* set by int_of; initialised for gcc -O3, which cannot see it */
			if (!yaml_is_seq(p2) || fy_node_sequence_item_count(p2) != 2)
				return err_at(P, p2, "expected pow2: [lo, hi]");
			int rc = int_of(P, fy_node_sequence_get_by_index(p2, 0), "pow2 lo", &lo);
			if (!rc)
				rc = int_of(P, fy_node_sequence_get_by_index(p2, 1), "pow2 hi", &hi);
			if (rc)
				return rc;
			if (lo < 1 || hi < lo || hi > (INT64_C(1) << 62))
				return err_at(P, p2, "pow2 needs 1 <= lo <= hi");
			for (int64_t v = 1; v <= hi; v *= 2)
				if (v >= lo && (rc = vlist_push(l, value_int(v), &P->pool)))
					return rc;
			return MUH_OK;
		}
		if (from || to) {
			int64_t a = 0, b = 0, s = 1; /* as lo and hi above */
			if (!from || !to)
				return err_at(P, n, "a range needs both 'from' and 'to'");
			int rc = int_of(P, from, "from", &a);
			if (!rc)
				rc = int_of(P, to, "to", &b);
			if (!rc && step)
				rc = int_of(P, step, "step", &s);
			if (rc)
				return rc;
			if (s == 0)
				return err_at(P, step, "step must not be 0");
			if ((b - a) / s > 10000000)
				return err_at(P, n, "range has more than 10,000,000 values");
			for (int64_t v = a; s > 0 ? v <= b : v >= b; v += s)
				if ((rc = vlist_push(l, value_int(v), &P->pool)))
					return rc;
			return MUH_OK;
		}
		return err_at(P, n, "expected a list, {from, to, step}, {pow2: [lo, hi]} "
				    "or {values: [...]}");
	}
	return err_at(P, n, "expected param values");
}

/* Finds the index of v (written at node n) among p's values. */
static int value_index(struct parser *P, const muh_param *p, struct fy_node *n, size_t *idx)
{
	muh_value v;
	int is_str;
	if (!yaml_is_scalar(n))
		return err_at(P, n, "expected a value of '%s'", p->name);
	int rc = scalar_value(P, n, &v, &is_str);
	if (rc)
		return rc;
	for (size_t i = 0; i < p->nvalues; i++) {
		muh_value w = p->values[i];
		int eq = (v.t == MUH_STR || w.t == MUH_STR)
				 ? (v.t == w.t && !strcmp(P->pool.buf + v.u.i, P->pool.buf + w.u.i))
				 : value_eq(v, w);
		if (eq) {
			*idx = i;
			return MUH_OK;
		}
	}
	/* A number written as a string ("16") still names the value 16. */
	if (v.t == MUH_STR) {
		char *end;
		const char *txt = P->pool.buf + v.u.i;
		long long iv = strtoll(txt, &end, 0);
		if (*txt && !*end)
			for (size_t i = 0; i < p->nvalues; i++)
				if (p->values[i].t == MUH_INT && p->values[i].u.i == iv) {
					*idx = i;
					return MUH_OK;
				}
	}
	size_t len = 0;
	const char *t = fy_node_get_scalar(n, &len);
	char list[400] = "";
	muh_value *vs = malloc((p->nvalues + 1) * sizeof(*vs)); /* strings still pool offsets */
	if (vs) {
		for (size_t i = 0; i < p->nvalues; i++) {
			vs[i] = p->values[i];
			if (vs[i].t == MUH_STR)
				vs[i].u.s = P->pool.buf + p->values[i].u.i;
		}
		value_list_fmt(list, sizeof(list), vs, p->nvalues);
		free(vs);
	}
	return err_at(P, n, "'%.*s' is not one of the values of '%s' (values: %s)", (int)len, t ? t : "",
		      p->name, list);
}

static muh_param *find_param(muh_spec *s, const char *name, size_t len)
{
	for (size_t i = 0; i < s->nparams; i++)
		if (strlen(s->params[i].name) == len && !strncmp(s->params[i].name, name, len))
			return &s->params[i];
	return NULL;
}

/* Adds a param named by key node with values from vnode; default from dnode. */
static int add_param(struct parser *P, struct fy_node *key, struct fy_node *vnode,
		     struct fy_node *dnode, int bool_type, size_t *cap)
{
	muh_spec *s = P->s;
	if (!yaml_is_scalar(key))
		return err_at(P, key, "expected a param name");
	size_t klen;
	const char *kname = fy_node_get_scalar(key, &klen);
	if (!kname || !klen)
		return err_at(P, key, "expected a param name");
	if (find_param(s, kname, klen))
		return err_at(P, key, "param '%.*s' is declared twice", (int)klen, kname);
	struct vlist l = {0};
	int rc = MUH_OK;
	if (vnode)
		rc = read_values(P, vnode, &l);
	else if (bool_type) {
		rc = vlist_push(&l, value_int(0), &P->pool);
		if (!rc)
			rc = vlist_push(&l, value_int(1), &P->pool);
	}
	free(l.ix);
	if (!rc && l.n == 0)
		rc = err_at(P, key, "param '%.*s' has no values", (int)klen,
			    kname);
	if (rc) {
		free(l.v);
		return rc;
	}
	if (array_grow(&s->params, cap, s->nparams, sizeof(*s->params), 8)) {
		free(l.v);
		return MUH_ENOMEM;
	}
	muh_param *p = &s->params[s->nparams++];
	memset(p, 0, sizeof(*p));
	p->name = strdup_n(kname, klen);
	p->values = l.v;
	p->nvalues = l.n;
	node_pos(P, key, &p->line, &p->col);
	if (!p->name)
		return MUH_ENOMEM;
	if (dnode && yaml_is_scalar(dnode)) {
		size_t idx;
		/* CAFF "Default" is sometimes prose ("Runs all of the kernels");
		 * only a value that names one of the values becomes the default. */
		if (P->s->format != SPEC_MUH) {
			muh_diag *keep = P->d;
			P->d = NULL;
			if (value_index(P, p, dnode, &idx) == MUH_OK) {
				p->has_default = 1;
				p->default_idx = idx;
			}
			P->d = keep;
		} else {
			if ((rc = value_index(P, p, dnode, &idx)))
				return rc;
			p->has_default = 1;
			p->default_idx = idx;
		}
	}
	return MUH_OK;
}

/* muh format: params is a mapping name -> values, or a list of
 * {name, values, default}. */
static int read_params_muh(struct parser *P, struct fy_node *n)
{
	size_t cap = 0;
	if (yaml_is_map(n)) {
		void *it = NULL;
		struct fy_node_pair *pr;
		while ((pr = fy_node_mapping_iterate(n, &it))) {
			struct fy_node *v = fy_node_pair_value(pr);
			struct fy_node *dn = yaml_is_map(v) ? lookup1(v, "default") : NULL;
			int rc = add_param(P, fy_node_pair_key(pr), v, dn, 0, &cap);
			if (rc)
				return rc;
		}
		return MUH_OK;
	}
	if (yaml_is_seq(n)) {
		void *it = NULL;
		struct fy_node *item;
		while ((item = fy_node_sequence_iterate(n, &it))) {
			struct fy_node *name = lookup1(item, "name");
			if (!name)
				return err_at(P, item, "expected {name: ..., values: ...}");
			int rc = add_param(P, name, lookup1(item, "values"),
					   lookup1(item, "default"), 0, &cap);
			if (rc)
				return rc;
		}
		return MUH_OK;
	}
	return err_at(P, n, "expected 'params' to be a mapping of name to values");
}

/* CAFF / T1: a list of {Name, Type, Values, Default}, any capitalisation. */
static int read_params_caff(struct parser *P, struct fy_node *n)
{
	static const char *kname[] = {"Name", "name", NULL};
	static const char *kvals[] = {"Values", "values", NULL};
	static const char *kdef[] = {"Default", "default", NULL};
	static const char *ktype[] = {"Type", "type", NULL};
	size_t cap = 0;
	if (!yaml_is_seq(n))
		return err_at(P, n, "expected a list of tuning parameters");
	void *it = NULL;
	struct fy_node *item;
	while ((item = fy_node_sequence_iterate(n, &it))) {
		struct fy_node *name = lookup(item, kname);
		if (!name)
			return err_at(P, item, "expected a tuning parameter with a Name");
		struct fy_node *type = lookup(item, ktype);
		size_t tl = 0;
		const char *ts = yaml_is_scalar(type) ? fy_node_get_scalar(type, &tl) : NULL;
		int is_bool = ts && ((tl == 7 && !strncmp(ts, "boolean", 7)) ||
				     (tl == 4 && !strncmp(ts, "bool", 4)));
		int rc = add_param(P, name, lookup(item, kvals), lookup(item, kdef), is_bool, &cap);
		if (rc)
			return rc;
	}
	return MUH_OK;
}

/* ---- constraints ----------------------------------------------------------- */

static int add_constraint(struct parser *P, struct fy_node *n, size_t *cap)
{
	muh_spec *s = P->s;
	if (!yaml_is_scalar(n))
		return err_at(P, n, "expected a constraint expression (a string)");
	GROW(s->constraints, s->nconstraints, *cap);
	muh_constraint *c = &s->constraints[s->nconstraints];
	c->src = scalar_dup(n);
	if (!c->src)
		return MUH_ENOMEM;
	node_pos(P, n, &c->line, &c->col); /* a quoted scalar's mark is past its quote */
	s->nconstraints++;
	return MUH_OK;
}

/* A list of strings, or of {Expression: ...} objects (CAFF). */
static int read_constraints(struct parser *P, struct fy_node *n)
{
	static const char *kexpr[] = {"Expression", "expression", "expr", NULL};
	size_t cap = 0;
	if (yaml_is_scalar(n))
		return add_constraint(P, n, &cap);
	if (!yaml_is_seq(n))
		return err_at(P, n, "expected a list of constraints");
	void *it = NULL;
	struct fy_node *item;
	while ((item = fy_node_sequence_iterate(n, &it))) {
		struct fy_node *e = yaml_is_map(item) ? lookup(item, kexpr) : item;
		if (!e)
			return err_at(P, item, "expected a constraint with an Expression");
		int rc = add_constraint(P, e, &cap);
		if (rc)
			return rc;
	}
	return MUH_OK;
}

/* ---- problem, defaults, seeds, flattening ---------------------------------- */

static int read_problem(struct parser *P, struct fy_node *n)
{
	muh_spec *s = P->s;
	size_t cap = 0;
	if (!yaml_is_map(n))
		return err_at(P, n, "expected 'problem' to be a mapping of symbol to value(s)");
	void *it = NULL;
	struct fy_node_pair *pr;
	while ((pr = fy_node_mapping_iterate(n, &it))) {
		struct fy_node *k = fy_node_pair_key(pr), *v = fy_node_pair_value(pr);
		if (!yaml_is_scalar(k))
			return err_at(P, k, "expected a symbol name");
		struct vlist l = {0};
		int rc;
		muh_value one;
		int is_str = 0;
		/* a plain scalar is one value (E: 128); a quoted one may be a
		 * Python list expression ("[2**i for i in range(8)]") */
		if (yaml_is_scalar(v) && !content_offset(v) &&
		    (rc = scalar_value(P, v, &one, &is_str)) == MUH_OK && !is_str)
			rc = vlist_push(&l, one, &P->pool);
		else
			rc = read_values(P, v, &l);
		free(l.ix);
		if (!rc && !l.n)
			rc = err_at(P, v, "problem symbol has no values");
		if (!rc && s->nproblem == cap) {
			size_t nc = cap ? cap * 2 : 8;
			muh_symbol *np = realloc(s->problem, nc * sizeof(*np));
			if (!np)
				rc = MUH_ENOMEM;
			else
				s->problem = np, cap = nc;
		}
		if (rc) {
			free(l.v);
			return rc;
		}
		muh_symbol *sym = &s->problem[s->nproblem++];
		sym->name = scalar_dup(k);
		sym->values = l.v;
		sym->nvalues = l.n;
		node_pos(P, k, &sym->line, &sym->col);
		if (!sym->name)
			return MUH_ENOMEM;
	}
	return MUH_OK;
}

static int read_defaults(struct parser *P, struct fy_node *n)
{
	if (!yaml_is_map(n))
		return err_at(P, n, "expected 'defaults' to be a mapping of param to value");
	void *it = NULL;
	struct fy_node_pair *pr;
	while ((pr = fy_node_mapping_iterate(n, &it))) {
		struct fy_node *k = fy_node_pair_key(pr);
		size_t klen = 0;
		const char *kn = yaml_is_scalar(k) ? fy_node_get_scalar(k, &klen) : NULL;
		muh_param *p = kn ? find_param(P->s, kn, klen) : NULL;
		if (!p)
			return err_at(P, k, "default for '%.*s', which is not a param", (int)klen,
				      kn ? kn : "");
		size_t idx;
		int rc = value_index(P, p, fy_node_pair_value(pr), &idx);
		if (rc)
			return rc;
		p->has_default = 1;
		p->default_idx = idx;
	}
	return MUH_OK;
}

/* n value indices, each SIZE_MAX ("not given"); NULL when out of memory. */
static size_t *unset_indices(size_t n)
{
	size_t *v = malloc((n ? n : 1) * sizeof(size_t));
	for (size_t i = 0; v && i < n; i++)
		v[i] = SIZE_MAX;
	return v;
}

static muh_symbol *find_symbol(muh_spec *s, const char *name, size_t len)
{
	for (size_t i = 0; i < s->nproblem; i++)
		if (strlen(s->problem[i].name) == len && !strncmp(s->problem[i].name, name, len))
			return &s->problem[i];
	return NULL;
}

/* One {name: value, ...} entry of a seeds: or problem_defaults: list: each
 * param's value index into idx, each problem symbol's into when (NULL: the
 * list takes params only; `what` names the entry in the error). Counts the
 * params set and the symbols named. Unknown names are errors, with the
 * nearest param or symbol offered. */
static int read_entry(struct parser *P, struct fy_node *item, const char *what, size_t *idx, size_t *when,
		      size_t *nset, size_t *nwhen)
{
	muh_spec *s = P->s;
	void *it = NULL;
	struct fy_node_pair *pr;
	while ((pr = fy_node_mapping_iterate(item, &it))) {
		struct fy_node *k = fy_node_pair_key(pr);
		size_t klen = 0;
		const char *kn = yaml_is_scalar(k) ? fy_node_get_scalar(k, &klen) : NULL;
		muh_param *p = kn ? find_param(s, kn, klen) : NULL;
		muh_symbol *sym = p || !kn || !when ? NULL : find_symbol(s, kn, klen);
		int rc;
		if (p) {
			rc = value_index(P, p, fy_node_pair_value(pr), &idx[p - s->params]);
			(*nset)++;
		} else if (sym) {
			/* the symbol's values, matched as a param's are */
			muh_param as = {.name = sym->name, .values = sym->values, .nvalues = sym->nvalues};
			rc = value_index(P, &as, fy_node_pair_value(pr), &when[sym - s->problem]);
			(*nwhen)++;
		} else {
			diag_near near = DIAG_NEAR_INIT;
			for (size_t i = 0; kn && i < s->nparams; i++)
				diag_near_offer(&near, kn, klen, s->params[i].name);
			for (size_t i = 0; kn && when && i < s->nproblem; i++)
				diag_near_offer(&near, kn, klen, s->problem[i].name);
			char hint[96];
			return err_at(P, k, "%s names '%.*s', which is %s%s", what, (int)klen, kn ? kn : "",
				      when ? "neither a param nor a problem symbol" : "not a param",
				      diag_near_hint(near.name, hint, sizeof(hint)));
		}
		if (rc)
			return rc;
	}
	return MUH_OK;
}

static int read_seeds(struct parser *P, struct fy_node *n)
{
	muh_spec *s = P->s;
	if (!yaml_is_seq(n))
		return err_at(P, n, "expected 'seeds' to be a list of {param: value} mappings");
	size_t cap = 0, nset = 0, nwhen = 0;
	void *it = NULL;
	struct fy_node *item;
	while ((item = fy_node_sequence_iterate(n, &it))) {
		if (!yaml_is_map(item))
			return err_at(P, item, "expected a seed {param: value, ...}");
		GROW(s->seeds, s->nseeds, cap);
		muh_seed *sd = &s->seeds[s->nseeds];
		if (!(sd->idx = unset_indices(s->nparams)))
			return MUH_ENOMEM;
		s->nseeds++;
		node_pos(P, item, &sd->line, &sd->col);
		int rc = read_entry(P, item, "seed", sd->idx, NULL, &nset, &nwhen);
		if (rc)
			return rc;
	}
	return MUH_OK;
}

/* problem_defaults: [{M: 1, BLOCK_SIZE_M: 16, ...}, ...]. Each entry's
 * problem symbols say which instances it holds for (all must match), its
 * params what the default is there. Read after params, problem and
 * defaults. */
static int read_problem_defaults(struct parser *P, struct fy_node *n)
{
	muh_spec *s = P->s;
	if (!yaml_is_seq(n))
		return err_at(P, n, "expected 'problem_defaults' to be a list of {problem symbol: value, param: value} "
				    "mappings");
	size_t cap = 0;
	void *it = NULL;
	struct fy_node *item;
	while ((item = fy_node_sequence_iterate(n, &it))) {
		if (!yaml_is_map(item))
			return err_at(P, item, "expected {problem symbol: value, ..., param: value, ...}");
		GROW(s->pdefaults, s->npdefaults, cap);
		muh_problem_default *pd = &s->pdefaults[s->npdefaults];
		pd->idx = unset_indices(s->nparams);
		pd->when = unset_indices(s->nproblem);
		s->npdefaults++; /* spec_free frees what was allocated */
		if (!pd->idx || !pd->when)
			return MUH_ENOMEM;
		node_pos(P, item, &pd->line, &pd->col);
		size_t nwhen = 0, nset = 0;
		int rc = read_entry(P, item, "problem default", pd->idx, pd->when, &nset, &nwhen);
		if (rc)
			return rc;
		if (!nwhen)
			return err_at(P, item, "a problem default names no problem symbol: which instances does it hold "
					       "for? (defaults: holds for all)");
		if (!nset)
			return err_at(P, item, "a problem default names no param");
	}
	return MUH_OK;
}

/* Keeps the scalar n as key, at n's place and at its key's (keynode). */
static int add_kv(struct parser *P, const char *key, struct fy_node *n, struct fy_node *keynode,
		  size_t *cap)
{
	muh_spec *s = P->s;
	GROW(s->kv, s->nkv, *cap);
	muh_kv *kv = &s->kv[s->nkv];
	kv->key = strdup(key);
	kv->value = scalar_dup(n);
	node_pos(P, n, &kv->line, &kv->col);
	node_pos(P, keynode ? keynode : n, &kv->kline, &kv->kcol);
	s->nkv++;
	if (!kv->key || !kv->value)
		return MUH_ENOMEM;
	return MUH_OK;
}

/* Flattens every scalar under n as prefix.key.0..., each at its place and
 * at its key's: the innermost mapping key above it (keynode for n itself),
 * or the sequence item. */
static int flatten(struct parser *P, const char *prefix, struct fy_node *n, struct fy_node *keynode,
		   size_t *cap, int depth)
{
	char key[512];
	if (!n || depth > 32)
		return MUH_OK;
	if (yaml_is_scalar(n))
		return add_kv(P, prefix, n, keynode, cap);
	void *it = NULL;
	if (yaml_is_map(n)) {
		struct fy_node_pair *pr;
		while ((pr = fy_node_mapping_iterate(n, &it))) {
			struct fy_node *k = fy_node_pair_key(pr);
			size_t klen = 0;
			const char *kn = yaml_is_scalar(k) ? fy_node_get_scalar(k, &klen) : "?";
			if (!kn)
				kn = "", klen = 0;
			snprintf(key, sizeof(key), "%s%s%.*s", prefix, *prefix ? "." : "",
				 (int)klen, kn);
			int rc = flatten(P, key, fy_node_pair_value(pr), k, cap, depth + 1);
			if (rc)
				return rc;
		}
		return MUH_OK;
	}
	struct fy_node *item;
	int i = 0;
	while ((item = fy_node_sequence_iterate(n, &it))) {
		snprintf(key, sizeof(key), "%s%s%d", prefix, *prefix ? "." : "", i++);
		int rc = flatten(P, key, item, item, cap, depth + 1);
		if (rc)
			return rc;
	}
	return MUH_OK;
}

/* ---- the document ------------------------------------------------------------ */

static const char *const muh_sections[] = {"params", "constraints", "problem", "hw",
					   "defaults", "problem_defaults", "seeds", NULL};
/* The other sections: kept as dotted keys for their readers (target.c:
 * target, verify, measure, load, knobs; objective.c; kb.c). Anything else
 * is a misspelling, an error: 'constraint:' dropped every constraint. */
static const char *const muh_readers[] = {"name", "target", "measure", "verify", "load",
					  "objective", "knobs", "kb", NULL};

static int in_list(const char *k, size_t len, const char *const *list)
{
	for (; *list; list++)
		if (strlen(*list) == len && !strncmp(*list, k, len))
			return 1;
	return 0;
}

/* Every top-level key of a muh spec is a known section, or an error at it
 * naming the nearest one. Checked before anything is read, so that a
 * misspelt 'parms:' is called unknown, not a missing 'params'. */
static int check_sections(struct parser *P, struct fy_node *root)
{
	void *it = NULL;
	struct fy_node_pair *pr;
	while ((pr = fy_node_mapping_iterate(root, &it))) {
		struct fy_node *k = fy_node_pair_key(pr);
		size_t klen = 0;
		const char *kn = yaml_is_scalar(k) ? fy_node_get_scalar(k, &klen) : NULL;
		if (!kn || in_list(kn, klen, muh_sections) || in_list(kn, klen, muh_readers))
			continue;
		/* the nearest known section, and all of them, from the two lists */
		diag_near near = DIAG_NEAR_INIT;
		char known[256];
		size_t kl = 0;
		known[0] = '\0';
		for (int pass = 0; pass < 2; pass++)
			for (const char *const *l = pass ? muh_readers : muh_sections; *l; l++) {
				diag_near_offer(&near, kn, klen, *l);
				if (kl < sizeof(known))
					kl += (size_t)snprintf(known + kl, sizeof(known) - kl, "%s%s", kl ? ", " : "", *l);
			}
		char hint[96];
		return err_at(P, k, "unknown section '%.*s'%s; the known ones: %s (see docs/spec.md)", (int)klen, kn,
			      diag_near_hint(near.name, hint, sizeof(hint)), known);
	}
	return 0;
}

static int read_muh(struct parser *P, struct fy_node *root)
{
	muh_spec *s = P->s;
	int rc = check_sections(P, root);
	if (rc)
		return rc;
	struct fy_node *params = lookup1(root, "params");
	if (!params)
		return err_at(P, root, "a spec needs 'params' (see docs/spec.md)");
	rc = read_params_muh(P, params);
	struct fy_node *n;
	if (!rc && (n = lookup1(root, "constraints")))
		rc = read_constraints(P, n);
	if (!rc && (n = lookup1(root, "problem")))
		rc = read_problem(P, n);
	if (!rc && (n = lookup1(root, "defaults")))
		rc = read_defaults(P, n);
	if (!rc && (n = lookup1(root, "problem_defaults")))
		rc = read_problem_defaults(P, n);
	if (!rc && (n = lookup1(root, "seeds")))
		rc = read_seeds(P, n);
	if (!rc && (n = lookup1(root, "hw"))) {
		if (!yaml_is_scalar(n))
			return err_at(P, n, "expected 'hw' to name a profile or a file");
		s->hw_ref = scalar_dup(n);
		node_pos(P, n, &s->hw_line, &s->hw_col);
		if (!s->hw_ref)
			return MUH_ENOMEM;
	}
	if (!rc && (n = lookup1(root, "name")) && yaml_is_scalar(n)) {
		free(s->name);
		s->name = scalar_dup(n);
	}
	size_t cap = 0;
	void *it = NULL;
	struct fy_node_pair *pr;
	while (!rc && (pr = fy_node_mapping_iterate(root, &it))) {
		struct fy_node *k = fy_node_pair_key(pr);
		size_t klen = 0;
		const char *kn = yaml_is_scalar(k) ? fy_node_get_scalar(k, &klen) : NULL;
		if (!kn || in_list(kn, klen, muh_sections))
			continue; /* a reader's section: check_sections let only those by */
		char key[256];
		snprintf(key, sizeof(key), "%.*s", (int)klen, kn);
		rc = flatten(P, key, fy_node_pair_value(pr), k, &cap, 0);
	}
	return rc;
}

static int read_caff(struct parser *P, struct fy_node *root, struct fy_node *cs)
{
	static const char *kparams[] = {"TuningParameters", "tuning_parameters", NULL};
	static const char *kcond[] = {"Conditions", "conditions", "Constraints", "constraints",
				      NULL};
	struct fy_node *params = lookup(cs, kparams);
	if (!params)
		return err_at(P, cs, "expected TuningParameters in the configuration space");
	int rc = read_params_caff(P, params);
	struct fy_node *cond = lookup(cs, kcond);
	if (!rc && cond)
		rc = read_constraints(P, cond);
	if (rc)
		return rc;
	static const char *kgen[] = {"General", "general", NULL};
	static const char *kname[] = {"BenchmarkName", "KernelName", NULL};
	struct fy_node *name = lookup(lookup(root, kgen), kname);
	if (name && yaml_is_scalar(name)) {
		free(P->s->name);
		P->s->name = scalar_dup(name);
	}
	size_t cap = 0;
	void *it = NULL;
	struct fy_node_pair *pr;
	while ((pr = fy_node_mapping_iterate(root, &it))) {
		struct fy_node *v = fy_node_pair_value(pr);
		if (v == cs)
			continue;
		struct fy_node *k = fy_node_pair_key(pr);
		size_t klen = 0;
		const char *kn = yaml_is_scalar(k) ? fy_node_get_scalar(k, &klen) : NULL;
		char key[256];
		snprintf(key, sizeof(key), "%.*s", (int)klen, kn ? kn : "");
		if ((rc = flatten(P, key, v, k, &cap, 0)))
			return rc;
	}
	return MUH_OK;
}


/* The byte offset of line:col (1-based, as diag_linecol counts) in text,
 * or its end when text is shorter. */
static size_t text_offset(const char *text, int line, int col)
{
	size_t i = 0;
	for (int l = 1; l < line && text[i]; i++)
		if (text[i] == '\n')
			l++;
	for (int c = 1; c < col && text[i] && text[i] != '\n'; c++)
		i++;
	return i;
}

/* The closer that ends a collection opened by c: ']' for '[', '}' for '{'. */
static char closer_of(char c)
{
	return c == '[' ? ']' : '}';
}

/* A parse error that is a bracket's (f, from yaml_flow_fault), placed in d
 * at the bracket to fix, saying what was expected: a '[' or '{' never
 * closed, or closed by the wrong bracket, at its opener; a ']' or '}' that
 * closes nothing at itself. stop is the byte libfyaml stopped at; lang
 * "YAML" or "JSON". Returns MUH_EINPUT. */
static int flow_error(struct parser *P, const struct yaml_flow *f, size_t stop, const char *lang)
{
	const char *t = P->s->text;
	int ol = 0, oc = 0, cl = 0, cc = 0;
	if (f->open != (size_t)-1)
		diag_linecol(t, f->open, &ol, &oc);
	if (f->close != (size_t)-1)
		diag_linecol(t, f->close, &cl, &cc);
	if (f->kind == YAML_FLOW_STRAY) {
		char c = t[f->close], o = c == ']' ? '[' : '{';
		diag_at(P->d, P->s->path, cl, cc, t);
		if (f->open == (size_t)-1)
			return diag_errorf(P->d,
					   "malformed %s: the '%c' at %d:%d closes nothing "
					   "(no '%c' is open there): expected a value",
					   lang, c, cl, cc, o);
		int xl, xc;
		diag_linecol(t, f->closed_at, &xl, &xc);
		if (t[f->open] == '"' || t[f->open] == '\'')
			return diag_errorf(P->d,
					   "malformed %s: the '%c' at %d:%d closes nothing "
					   "(the quoted scalar at %d:%d ends at %d:%d): "
					   "expected the end of the value",
					   lang, c, cl, cc, ol, oc, xl, xc);
		return diag_errorf(P->d,
				   "malformed %s: the '%c' at %d:%d closes nothing "
				   "(the '%c' at %d:%d is closed at %d:%d): "
				   "expected the end of the value",
				   lang, c, cl, cc, t[f->open], ol, oc, xl, xc);
	}
	char o = t[f->open];
	diag_at(P->d, P->s->path, ol, oc, t);
	if (f->kind == YAML_FLOW_MISMATCHED)
		return diag_errorf(P->d,
				   "malformed %s: expected '%c' to close the '%c' at %d:%d, "
				   "found '%c' at %d:%d; the '%c' at %d:%d is never closed",
				   lang, closer_of(o), o, ol, oc, t[f->close], cl, cc, o, ol, oc);
	char stopped[64] = "the end of the file";
	if (stop < strlen(t)) {
		int sl, sc;
		diag_linecol(t, stop, &sl, &sc);
		snprintf(stopped, sizeof(stopped), "%d:%d, where the parser stopped", sl, sc);
	}
	return diag_errorf(P->d,
			   "malformed %s: expected '%c' to close the '%c' at %d:%d before %s; the "
			   "'%c' at %d:%d is never closed",
			   lang, closer_of(o), o, ol, oc, stopped, o, ol, oc);
}

/* The first error libfyaml collected, placed in d. When it is a bracket's
 * (yaml_flow_fault: a '[' or '{' never closed, closed by the wrong bracket,
 * or a ']' or '}' that closes nothing, at or before where libfyaml
 * stopped), the error is placed at that bracket and says what was
 * expected, whatever libfyaml's message (it notices an unclosed '[' lines
 * later, at the next key or at 'did not find expected node content').
 * Returns MUH_EINPUT. */
static int yaml_error(struct parser *P, struct fy_diag *diag)
{
	void *it = NULL;
	struct fy_diag_error *e = diag ? fy_diag_errors_iterate(diag, &it) : NULL;
	int line = e ? e->line + 1 : 0, col = e ? e->column + 1 : 0;
	const struct fy_mark *m = e && e->fyt ? fy_token_start_mark(e->fyt) : NULL;
	if (m)
		diag_linecol(P->s->text, m->input_pos, &line, &col);
	const char *lang = strstr(P->s->path, ".json") ? "JSON" : "YAML";
	/* where libfyaml stopped; nowhere known: the whole text is looked at */
	size_t stop = line > 0 ? text_offset(P->s->text, line, col) : strlen(P->s->text);
	struct yaml_flow f;
	yaml_flow_fault(P->s->text, stop, &f);
	if (f.kind != YAML_FLOW_OK)
		return flow_error(P, &f, stop, lang);
	diag_at(P->d, P->s->path, line, col, P->s->text);
	return diag_errorf(P->d, "malformed %s: %s", lang,
			   e && e->msg ? e->msg : "cannot parse the document");
}

/* True when text holds nothing but white space and # comments. */
static int spec_is_blank(const char *text)
{
	for (const char *p = text; *p; p++) {
		if (*p == '#')
			while (p[1] && p[1] != '\n')
				p++;
		else if (!strchr(" \t\r\n", *p))
			return 0;
	}
	return 1;
}

int spec_parse(const char *path, const char *text, size_t len, muh_spec **out, muh_diag *d)
{
	*out = NULL;
	diag_clear(d);
	muh_spec *s = calloc(1, sizeof(*s));
	if (!s)
		return MUH_ENOMEM;
	s->path = strdup(path ? path : "<spec>");
	s->text = strdup_n(text, len);
	if (!s->path || !s->text) {
		spec_free(s);
		return MUH_ENOMEM;
	}
	const char *base = strrchr(s->path, '/');
	base = base ? base + 1 : s->path;
	s->name = strdup_n(base, strcspn(base, "."));
	struct parser P = {.s = s, .d = d};
	size_t bad = yaml_bad_directive(s->text, len);
	if (bad != (size_t)-1) {
		int line = 0, col = 0;
		diag_linecol(s->text, bad, &line, &col);
		diag_at(d, s->path, line, col, s->text);
		diag_errorf(d, "a YAML directive ('%%' in column 1) holds a byte that is not UTF-8");
		spec_free(s);
		return MUH_EINPUT;
	}

	struct fy_diag_cfg dcfg;
	fy_diag_cfg_default(&dcfg);
	dcfg.fp = NULL;
	dcfg.output_fn = NULL;
	dcfg.level = FYET_ERROR;
	struct fy_diag *fdiag = fy_diag_create(&dcfg);
	if (fdiag)
		fy_diag_set_collect_errors(fdiag, true);
	/* libfyaml writes to stderr when no output function is set; collecting
	 * keeps the library silent and lets us place the error ourselves. */
	struct fy_parse_cfg cfg = {
		.flags = FYPCF_QUIET | FYPCF_COLLECT_DIAG | FYPCF_JSON_AUTO,
		.diag = fdiag,
	};
	if (strstr(s->path, ".json"))
		cfg.flags = FYPCF_QUIET | FYPCF_COLLECT_DIAG | FYPCF_JSON_FORCE;
	cfg.search_path = "";
	struct fy_document *doc = NULL;
	int rc;
	if (spec_is_blank(s->text)) {
		diag_at(d, s->path, 1, 1, s->text);
		rc = diag_errorf(d, "the spec is empty: expected a mapping with 'params' (see docs/spec.md)");
		goto done;
	}
	doc = fy_document_build_from_string(&cfg, s->text, len);
	if (!doc) {
		rc = yaml_error(&P, fdiag);
		goto done;
	}
	struct fy_node *root = fy_document_root(doc);
	if (!yaml_is_map(root)) {
		rc = err_at(&P, root, "expected a spec: a mapping with 'params' (see docs/spec.md)");
		goto done;
	}
	static const char *kcs[] = {"ConfigurationSpace", "configuration_space", NULL};
	struct fy_node *cs = lookup(root, kcs);
	if (cs) {
		s->format = lookup1(root, "KernelSpecification") ? SPEC_KT_T1 : SPEC_CAFF;
		rc = read_caff(&P, root, cs);
	} else {
		s->format = SPEC_MUH;
		rc = read_muh(&P, root);
	}
done:
	if (doc)
		fy_document_destroy(doc);
	if (fdiag)
		fy_diag_destroy(fdiag);
	/* string values now point into the final pool */
	s->pool = P.pool.buf;
	for (size_t i = 0; i < s->nparams; i++)
		for (size_t j = 0; j < s->params[i].nvalues; j++)
			if (s->params[i].values[j].t == MUH_STR)
				s->params[i].values[j].u.s = s->pool + s->params[i].values[j].u.i;
	for (size_t i = 0; i < s->nproblem; i++)
		for (size_t j = 0; j < s->problem[i].nvalues; j++)
			if (s->problem[i].values[j].t == MUH_STR)
				s->problem[i].values[j].u.s = s->pool + s->problem[i].values[j].u.i;
	if (rc) {
		spec_free(s);
		return rc;
	}
	*out = s;
	return MUH_OK;
}

int spec_load(const char *path, muh_spec **out, muh_diag *d)
{
	*out = NULL;
	diag_clear(d);
	size_t len;
	struct stat st;
	if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
		diag_at(d, path, 0, 0, NULL);
		return diag_errorf(d, "is a directory, not a spec file (give the .yaml or .json file)");
	}
	char *buf = file_read(path, &len);
	if (!buf) {
		if (errno == ENOMEM)
			return MUH_ENOMEM;
		diag_at(d, path, 0, 0, NULL);
		diag_errorf(d, "cannot read the spec: %s", strerror(errno));
		return MUH_EINPUT;
	}
	int rc = spec_parse(path, buf, len, out, d);
	free(buf);
	return rc;
}

void spec_free(muh_spec *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->nparams; i++) {
		free(s->params[i].name);
		free(s->params[i].values);
	}
	for (size_t i = 0; i < s->nconstraints; i++)
		free(s->constraints[i].src);
	for (size_t i = 0; i < s->nproblem; i++) {
		free(s->problem[i].name);
		free(s->problem[i].values);
	}
	for (size_t i = 0; i < s->nkv; i++) {
		free(s->kv[i].key);
		free(s->kv[i].value);
	}
	for (size_t i = 0; i < s->nseeds; i++)
		free(s->seeds[i].idx);
	for (size_t i = 0; i < s->npdefaults; i++) {
		free(s->pdefaults[i].idx);
		free(s->pdefaults[i].when);
	}
	free(s->pdefaults);
	free(s->params);
	free(s->constraints);
	free(s->problem);
	free(s->kv);
	free(s->seeds);
	free(s->hw_ref);
	free(s->pool);
	free(s->name);
	free(s->text);
	free(s->path);
	free(s);
}

const muh_kv *spec_kv(const muh_spec *s, const char *key)
{
	for (size_t i = 0; i < s->nkv; i++)
		if (!strcmp(s->kv[i].key, key))
			return &s->kv[i];
	return NULL;
}

const muh_kv *spec_kv_under(const muh_spec *s, const char *prefix, size_t *i, const char **rest)
{
	size_t n = strlen(prefix);
	for (; *i < s->nkv; (*i)++)
		if (!strncmp(s->kv[*i].key, prefix, n)) {
			*rest = s->kv[*i].key + n;
			return &s->kv[*i];
		}
	return NULL;
}

size_t spec_ninstances(const muh_spec *s)
{
	size_t n = 1;
	for (size_t i = 0; i < s->nproblem; i++)
		n *= s->problem[i].nvalues;
	return n;
}

const char *spec_instance_words(const muh_spec *s, size_t inst, char *buf, size_t n)
{
	snprintf(buf, n, "instance %zu (0-based) of %zu", inst, spec_ninstances(s));
	return buf;
}

/* The value index of symbol k in instance i: mixed radix, last symbol fastest. */
static size_t problem_index(const muh_spec *s, size_t k, size_t instance)
{
	for (size_t i = s->nproblem; i-- > k + 1;)
		instance /= s->problem[i].nvalues;
	return instance % s->problem[k].nvalues;
}

muh_value spec_problem_value(const muh_spec *s, size_t k, size_t instance)
{
	return s->problem[k].values[problem_index(s, k, instance)];
}

size_t spec_default_index(const muh_spec *s, size_t instance, size_t p)
{
	assert(p < s->nparams);
	const muh_param *par = &s->params[p];
	size_t idx = par->has_default ? par->default_idx : 0;
	for (size_t i = 0; i < s->npdefaults; i++) {
		const muh_problem_default *pd = &s->pdefaults[i];
		int match = pd->idx[p] != SIZE_MAX;
		for (size_t k = 0; match && k < s->nproblem; k++)
			match = pd->when[k] == SIZE_MAX || pd->when[k] == problem_index(s, k, instance);
		if (match)
			idx = pd->idx[p];
	}
	return idx;
}

void spec_problem_text(const muh_spec *s, size_t instance, char *buf, size_t n)
{
	size_t pn = 0;
	if (n)
		buf[0] = '\0';
	for (size_t k = 0; k < s->nproblem && pn + 64 < n; k++) {
		char v[64];
		value_fmt(v, sizeof(v), spec_problem_value(s, k, instance));
		pn += (size_t)snprintf(buf + pn, n - pn, "%s%s=%s", k ? "," : "", s->problem[k].name, v);
	}
}

void spec_diag_at(const muh_spec *s, muh_diag *d, int line, int col)
{
	diag_at(d, s->path, line, col, s->text);
}

const char *spec_format_name(enum spec_format f)
{
	switch (f) {
	case SPEC_MUH:
		return "muh";
	case SPEC_CAFF:
		return "caff";
	case SPEC_KT_T1:
		return "t1";
	}
	return "?";
}
