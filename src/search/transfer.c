/*
 * transfer.c — a store's results read for another device (see transfer.h).
 *
 * Owns: picking each run's top k from a store (in the run's ranking, best.h),
 * checking each config against a target profile (the spec's constraints with the target's hw.* values,
 * the fingerprint's shared memory, threads per block from the target's warp
 * size), the reasons with their numbers, and the ranking of what is valid.
 *
 * The constraints are compiled here against a name table of params, problem
 * symbols and the target's hw.* keys, not through space_build: a report
 * must go on when a constraint reads a key the target does not know (that
 * constraint is then not checked, and every entry says so), where a space
 * is refused.
 *
 * Must never: write the store, print, or say a time was measured on the
 * target. Times are the store's; only validity is the target's.
 */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "muh/best.h"
#include "muh/eval.h"
#include "muh/expr.h"
#include "muh/muh.h"
#include "muh/spec.h"
#include "muh/store.h"
#include "muh/textout.h"
#include "muh/transfer.h"
#include "strbuf.h"

/* ---- reading the store ------------------------------------------------------ */

struct okrow {
	char *key;
	size_t rank;        /* in the run's ranking (best_of_run); after it, measurement order */
	double median;
	long long shared;   /* max over kernels; -1 none */
	long long warps;    /* fingerprint's num_warps; -1 none */
};

struct rawrun {
	store_run r; /* strings below are our copies */
	struct okrow *rows;
	size_t n, cap;
};

struct reader {
	int64_t only;
	struct rawrun *runs;
	size_t n, cap;
	int oom;
};

static char *dupz(const char *s)
{
	return s ? strdup(s) : NULL;
}

static int read_run(void *ud, const store_run *run)
{
	struct reader *rd = ud;
	if (rd->only && run->id != rd->only)
		return 0;
	if (array_grow(&rd->runs, &rd->cap, rd->n, sizeof(*rd->runs), 8))
		return MUH_ENOMEM;
	struct rawrun *w = &rd->runs[rd->n++];
	memset(w, 0, sizeof(*w));
	w->r = *run;
	w->r.spec_hash = dupz(run->spec_hash);
	w->r.spec_path = dupz(run->spec_path);
	w->r.spec_name = dupz(run->spec_name);
	w->r.problem = dupz(run->problem);
	w->r.backend = dupz(run->backend);
	w->r.hw_profile = dupz(run->hw_profile);
	w->r.spec_text = dupz(run->spec_text);
	w->r.spec_abs = dupz(run->spec_abs);
	return 0;
}

/* The largest "shared" and the first "num_warps" of a Triton fingerprint's
 * kernels ({"kernels": [{"shared": N, "num_warps": W}, ...]}). */
static void fp_resources(const char *fp, long long *shared, long long *warps)
{
	*shared = *warps = -1;
	cJSON *o = fp ? cJSON_Parse(fp) : NULL;
	const cJSON *ks = cJSON_GetObjectItemCaseSensitive(o, "kernels");
	const cJSON *k;
	cJSON_ArrayForEach(k, ks)
	{
		const cJSON *sh = cJSON_GetObjectItemCaseSensitive(k, "shared");
		const cJSON *nw = cJSON_GetObjectItemCaseSensitive(k, "num_warps");
		if (cJSON_IsNumber(sh) && sh->valuedouble > (double)*shared)
			*shared = (long long)sh->valuedouble;
		if (cJSON_IsNumber(nw) && *warps < 0)
			*warps = (long long)nw->valuedouble;
	}
	cJSON_Delete(o);
}

static int read_row(void *ud, const store_row *row)
{
	struct rawrun *w = ud;
	if (row->m->status != EVAL_OK || !(row->m->median >= 0))
		return 0;
	if (array_grow(&w->rows, &w->cap, w->n, sizeof(*w->rows), 64))
		return MUH_ENOMEM;
	struct okrow *o = &w->rows[w->n];
	o->key = strdup(row->key);
	if (!o->key)
		return MUH_ENOMEM;
	o->median = row->m->median;
	fp_resources(row->m->fp_detail, &o->shared, &o->warps);
	w->n++;
	return 0;
}

static int by_rank(const void *a, const void *b)
{
	size_t x = ((const struct okrow *)a)->rank, y = ((const struct okrow *)b)->rank;
	return x < y ? -1 : x > y;
}

/* Orders run w's ok rows as the library ranks the run (best.h: its
 * objective, and the winner at sustained clocks when the run was re-timed), the
 * rows it does not rank (SLO misses) after them in measurement order. */
static int rank_rows(muh_store *st, struct rawrun *w, muh_diag *d)
{
	muh_best b;
	int rc = best_of_run(st, &w->r, &b, d);
	if (rc)
		return rc;
	for (size_t i = 0; i < w->n; i++) {
		w->rows[i].rank = b.nranked + i;
		for (size_t k = 0; k < b.nranked; k++)
			if (!strcmp(b.ranked[k].key, w->rows[i].key)) {
				w->rows[i].rank = k;
				break;
			}
	}
	qsort(w->rows, w->n, sizeof(*w->rows), by_rank);
	best_free(&b);
	return MUH_OK;
}

static void rawrun_free(struct rawrun *w)
{
	for (size_t i = 0; i < w->n; i++)
		free(w->rows[i].key);
	free(w->rows);
	free((char *)w->r.spec_hash);
	free((char *)w->r.spec_path);
	free((char *)w->r.spec_name);
	free((char *)w->r.problem);
	free((char *)w->r.backend);
	free((char *)w->r.hw_profile);
	free((char *)w->r.spec_text);
	free((char *)w->r.spec_abs);
}

/* ---- checking one config --------------------------------------------------- */

/* A run's constraints compiled against params + problem + target hw. */
struct checker {
	const muh_spec *s;
	const muh_hw *hw;
	char **names;
	muh_value *slots;
	size_t nslots;
	muh_expr **cons;    /* NULL where not compiled */
	muh_expr **lhs, **rhs; /* the two sides of a simple comparison, or NULL */
	char **cons_note;   /* why constraint i is not checked, or NULL */
	int warps_param;    /* index of a param called num_warps, or -1 */
};

static int ident_char(char c)
{
	return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '.';
}

/* The byte offset and length of the one comparison operator at depth 0 of
 * src, when src is `A op B` with no other comparison, `and`, `or` or `not`
 * at depth 0. Returns 0 when src is not that simple. */
static int split_cmp(const char *src, size_t *at, size_t *len)
{
	int depth = 0, found = 0;
	char q = 0;
	for (size_t i = 0; src[i]; i++) {
		char c = src[i];
		if (q) {
			if (c == '\\' && src[i + 1])
				i++;
			else if (c == q)
				q = 0;
			continue;
		}
		if (c == '\'' || c == '"') {
			q = c;
			continue;
		}
		if (c == '(' || c == '[')
			depth++;
		else if (c == ')' || c == ']')
			depth--;
		if (depth)
			continue;
		if ((c == '&' && src[i + 1] == '&') || (c == '|' && src[i + 1] == '|'))
			return 0;
		if ((i == 0 || !ident_char(src[i - 1])) &&
		    ((!strncmp(src + i, "and", 3) && !ident_char(src[i + 3])) ||
		     (!strncmp(src + i, "not", 3) && !ident_char(src[i + 3])) ||
		     (!strncmp(src + i, "or", 2) && !ident_char(src[i + 2]))))
			return 0;
		size_t l = 0;
		if ((c == '<' || c == '>' || c == '=' || c == '!') && src[i + 1] == '=')
			l = 2;
		else if (c == '<' || c == '>')
			l = 1;
		if (!l)
			continue;
		if (found)
			return 0; /* chained: 32 <= x <= 1024 */
		found = 1;
		*at = i;
		*len = l;
		i += l - 1;
	}
	return found;
}

static int checker_init(struct checker *c, const muh_spec *s, const muh_hw *hw, size_t instance)
{
	memset(c, 0, sizeof(*c));
	c->s = s;
	c->hw = hw;
	c->warps_param = -1;
	c->nslots = s->nparams + s->nproblem + (size_t)hw->nfields;
	size_t n = c->nslots ? c->nslots : 1, nc = s->nconstraints ? s->nconstraints : 1;
	c->names = calloc(n, sizeof(char *));
	c->slots = calloc(n, sizeof(muh_value));
	c->cons = calloc(nc, sizeof(muh_expr *));
	c->lhs = calloc(nc, sizeof(muh_expr *));
	c->rhs = calloc(nc, sizeof(muh_expr *));
	c->cons_note = calloc(nc, sizeof(char *));
	if (!c->names || !c->slots || !c->cons || !c->lhs || !c->rhs || !c->cons_note)
		return MUH_ENOMEM;
	size_t k = 0;
	for (size_t i = 0; i < s->nparams; i++, k++) {
		c->names[k] = strdup(s->params[i].name);
		if (!strcmp(s->params[i].name, "num_warps"))
			c->warps_param = (int)i;
	}
	for (size_t i = 0; i < s->nproblem; i++, k++) {
		c->names[k] = strdup(s->problem[i].name);
		c->slots[k] = spec_problem_value(s, i, instance);
	}
	for (int i = 0; i < hw->nfields; i++, k++) {
		size_t len = strlen(hw->f[i].key) + 4;
		c->names[k] = malloc(len);
		if (c->names[k])
			snprintf(c->names[k], len, "hw.%s", hw->f[i].key);
		double v = hw->f[i].value;
		c->slots[k] = (v == floor(v) && fabs(v) < 9e15) ? value_int((int64_t)v) : value_float(v);
	}
	for (size_t i = 0; i < c->nslots; i++)
		if (!c->names[i])
			return MUH_ENOMEM;
	for (size_t i = 0; i < s->nconstraints; i++) {
		muh_diag d;
		diag_clear(&d);
		const char *src = s->constraints[i].src;
		c->cons[i] = expr_compile(src, (const char *const *)c->names, (int)c->nslots, &d);
		if (!c->cons[i]) {
			hw_explain_unknown(hw, &d);
			char note[1400];
			snprintf(note, sizeof(note), "constraint %zu (%s:%d) not checked: %s", i + 1, s->path,
				 s->constraints[i].line, d.msg);
			c->cons_note[i] = strdup(note);
			if (!c->cons_note[i])
				return MUH_ENOMEM;
			continue;
		}
		size_t at, len;
		if (split_cmp(src, &at, &len)) {
			char *l = strndup(src, at), *r = strdup(src + at + len);
			if (l && r) {
				c->lhs[i] = expr_compile(l, (const char *const *)c->names, (int)c->nslots, NULL);
				c->rhs[i] = expr_compile(r, (const char *const *)c->names, (int)c->nslots, NULL);
			}
			free(l);
			free(r);
		}
	}
	return MUH_OK;
}

static void checker_free(struct checker *c)
{
	for (size_t i = 0; i < c->nslots && c->names; i++)
		free(c->names[i]);
	for (size_t i = 0; c->s && i < c->s->nconstraints; i++) {
		if (c->cons)
			expr_free(c->cons[i]);
		if (c->lhs)
			expr_free(c->lhs[i]);
		if (c->rhs)
			expr_free(c->rhs[i]);
		if (c->cons_note)
			free(c->cons_note[i]);
	}
	free(c->names);
	free(c->slots);
	free(c->cons);
	free(c->lhs);
	free(c->rhs);
	free(c->cons_note);
}

static int add_text(char ***v, size_t *n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int add_text(char ***v, size_t *n, const char *fmt, ...)
{
	char buf[1600];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	char **nv = realloc(*v, (*n + 1) * sizeof(char *));
	if (!nv)
		return MUH_ENOMEM;
	*v = nv;
	if (!(nv[*n] = strdup(buf)))
		return MUH_ENOMEM;
	(*n)++;
	return MUH_OK;
}

/* A number of a reason, as every count muh prints: an integer with
 * thousands separators ("73,728"), any other value as value_fmt writes
 * it; then " UNIT" when unit (hw_key_unit's) is neither NULL nor "". Into
 * buf (n bytes). */
static void fmt_number(char *buf, size_t n, muh_value v, const char *unit)
{
	if (v.t == MUH_INT)
		text_count(buf, n, (double)v.u.i);
	else
		value_fmt(buf, n, v);
	size_t at = strlen(buf);
	if (unit && unit[0] && at < n)
		snprintf(buf + at, n - at, " %s", unit);
}

/* The hw key that side (a comparison's side, as written) is, alone
 * ("hw.smem_per_block_optin", blanks around it allowed); NULL when the side
 * is anything else. Both sides of a comparison with such a side are in its
 * unit. */
static const muh_hw_field *side_hw(const muh_hw *hw, const char *side, size_t len)
{
	while (len && (*side == ' ' || *side == '\t'))
		side++, len--;
	while (len && (side[len - 1] == ' ' || side[len - 1] == '\t'))
		len--;
	if (len < 4 || strncmp(side, "hw.", 3))
		return NULL;
	for (int i = 0; i < hw->nfields; i++)
		if (strlen(hw->f[i].key) == len - 3 && !strncmp(side + 3, hw->f[i].key, len - 3))
			return &hw->f[i];
	return NULL;
}

/* "how much of the target's limit": the origin word of hw key, for reasons. */
static const char *origin_of(const muh_hw *hw, const char *key)
{
	const muh_hw_field *f = hw_field(hw, key);
	return !f ? "unknown" : f->origin == HW_MEASURED ? "measured" : "declared";
}

/* Checks one config of run w against the target; fills e. */
static int check_entry(struct checker *c, const struct rawrun *w, const struct okrow *o,
		       transfer_entry *e)
{
	const muh_spec *s = c->s;
	const muh_hw *hw = c->hw;
	const char *tn = hw->name;
	int rc = MUH_OK;
	e->shared = o->shared;
	long long warps = o->warps;
	int params_ok = s != NULL;
	muh_variant v = {0};
	char why[1024];
	int vr = s ? eval_variant_from_key(s, o->key, &v, why, sizeof(why)) : MUH_OK;
	if (vr == MUH_ENOMEM)
		return MUH_ENOMEM;
	if (vr) {
		params_ok = 0;
		rc = add_text(&e->notes, &e->nnotes, "%s: the spec's constraints were not checked", why);
	}
	for (size_t p = 0; params_ok && p < s->nparams; p++) {
		c->slots[p] = v.values[p];
		if ((int)p == c->warps_param && c->slots[p].t == MUH_INT)
			warps = c->slots[p].u.i;
	}
	for (size_t i = 0; params_ok && i < s->nconstraints && !rc; i++) {
		if (!c->cons[i]) {
			rc = add_text(&e->notes, &e->nnotes, "%s", c->cons_note[i]);
			continue;
		}
		int t = expr_test(c->cons[i], c->slots);
		if (t == EXPR_TRUE)
			continue;
		e->verdict = TRANSFER_INVALID;
		/* which limits it reads: the target's hw.* values, with their origin */
		char limits[600] = "";
		int sl[64], ns = expr_slots(c->cons[i], sl, 64);
		size_t hw0 = s->nparams + s->nproblem;
		for (int j = 0; j < ns && j < 64; j++) {
			if ((size_t)sl[j] < hw0)
				continue;
			const muh_hw_field *f = &hw->f[(size_t)sl[j] - hw0];
			char v[80];
			fmt_number(v, sizeof(v), c->slots[sl[j]], hw_key_unit(f->key));
			size_t o = strlen(limits);
			snprintf(limits + o, sizeof(limits) - o, "%shw.%s = %s (%s)", o ? ", " : "; reads ",
				 f->key, v, f->origin == HW_MEASURED ? "measured" : "declared");
		}
		char where[700];
		snprintf(where, sizeof(where), "constraint %zu (%s:%d)", i + 1, s->path, s->constraints[i].line);
		muh_value l, r;
		if (t == EXPR_FALSE && c->lhs[i] && c->rhs[i] && !expr_eval(c->lhs[i], c->slots, &l) &&
		    !expr_eval(c->rhs[i], c->slots, &r)) {
			const char *src = s->constraints[i].src;
			size_t at, len;
			split_cmp(src, &at, &len);
			const muh_hw_field *uf = side_hw(hw, src, at);
			if (!uf)
				uf = side_hw(hw, src + at + len, strlen(src + at + len));
			const char *unit = uf ? hw_key_unit(uf->key) : "";
			char ls[96], rs[96];
			fmt_number(ls, sizeof(ls), l, unit);
			fmt_number(rs, sizeof(rs), r, unit);
			rc = add_text(&e->why, &e->nwhy, "%s is false on %s: %s %.*s %s%s", where, tn, ls, (int)len,
				      s->constraints[i].src + at, rs, limits);
		} else {
			rc = add_text(&e->why, &e->nwhy, "%s `%s` %s on %s%s", where, s->constraints[i].src,
				      t == EXPR_FALSE ? "is false" : "cannot be evaluated (e.g. a division by zero)", tn,
				      limits);
		}
	}
	double optin;
	if (!rc && o->shared >= 0) {
		if (hw_get(hw, "smem_per_block_optin", &optin)) {
			if ((double)o->shared > optin) {
				e->verdict = TRANSFER_INVALID;
				/* the fingerprint's shared is in bytes; the limit in its
				 * key's unit, as every hw.* value of a reason */
				char used[32], lim[32];
				const char *unit = hw_key_unit("smem_per_block_optin");
				text_count(used, sizeof(used), (double)o->shared);
				text_count(lim, sizeof(lim), optin);
				rc = add_text(&e->why, &e->nwhy,
					      "its kernel used %s bytes of shared memory as compiled on %s, more than "
					      "hw.smem_per_block_optin = %s%s%s of %s (%s)",
					      used, w->r.hw_profile, lim, unit[0] ? " " : "", unit, tn,
					      origin_of(hw, "smem_per_block_optin"));
			}
		} else {
			char used[32];
			text_count(used, sizeof(used), (double)o->shared);
			rc = add_text(&e->notes, &e->nnotes, "its kernel used %s bytes of shared memory on %s; %s's "
							     "shared memory per block is unknown",
				      used, w->r.hw_profile, tn);
		}
	}
	double ws, maxt;
	if (!rc && warps > 0) {
		if (!hw_get(hw, "warp_size", &ws))
			rc = add_text(&e->notes, &e->nnotes, "threads per block not checked: %s's warp size is unknown",
				      tn);
		else if (!hw_get(hw, "max_threads_per_block", &maxt)) {
			const muh_hw_field *u = hw_unknown(hw, "max_threads_per_block");
			int why = u && u->note[0];
			char nw[32], nt[32], tb[32];
			rc = add_text(&e->notes, &e->nnotes,
				      "%s warps of %s threads = %s threads per block on %s, against a "
				      "max_threads_per_block it does not know%s%s%s",
				      text_count(nw, sizeof(nw), (double)warps), text_count(nt, sizeof(nt), ws),
				      text_count(tb, sizeof(tb), (double)warps * ws), tn, why ? " (" : "",
				      why ? u->note : "", why ? ")" : "");
		} else if ((double)warps * ws > maxt) {
			e->verdict = TRANSFER_INVALID;
			char nw[32], nt[32], tb[32], mx[32];
			rc = add_text(&e->why, &e->nwhy,
				      "%s warps of %s threads = %s threads per block, more than "
				      "hw.max_threads_per_block = %s of %s (%s)",
				      text_count(nw, sizeof(nw), (double)warps), text_count(nt, sizeof(nt), ws),
				      text_count(tb, sizeof(tb), (double)warps * ws), text_count(mx, sizeof(mx), maxt),
				      tn, origin_of(hw, "max_threads_per_block"));
		}
	}
	eval_variant_free(&v); /* the slots' strings were its */
	return rc;
}

/* ---- the report ------------------------------------------------------------- */

static int build_run(const struct rawrun *w, const muh_hw *target, size_t topk, transfer_run *t)
{
	t->id = w->r.id;
	t->spec_path = dupz(w->r.spec_path ? w->r.spec_path : "");
	t->spec_name = dupz(w->r.spec_name ? w->r.spec_name : "");
	t->problem = dupz(w->r.problem ? w->r.problem : "");
	t->measured_on = dupz(w->r.hw_profile && *w->r.hw_profile ? w->r.hw_profile : "an unnamed device");
	if (!t->spec_path || !t->spec_name || !t->problem || !t->measured_on)
		return MUH_ENOMEM;
	t->other_device = !(hw_same_device(w->r.hw_profile, target->name) ||
			    hw_same_device(w->r.hw_profile, target->device));
	t->nok = w->n;
	t->n = topk && topk < w->n ? topk : w->n;
	t->e = calloc(t->n ? t->n : 1, sizeof(*t->e));
	if (!t->e)
		return MUH_ENOMEM;
	muh_spec *s = NULL;
	muh_diag sd;
	diag_clear(&sd);
	struct checker c;
	memset(&c, 0, sizeof(c));
	int rc = MUH_OK;
	if (store_run_spec(&w->r, &s, &sd)) {
		char note[1400];
		snprintf(note, sizeof(note), "the run's spec cannot be read (%s): its constraints were not checked",
			 sd.msg);
		t->spec_note = strdup(note);
		s = NULL;
	} else {
		rc = checker_init(&c, s, target, (size_t)w->r.instance);
	}
	for (size_t i = 0; i < t->n && !rc; i++) {
		transfer_entry *e = &t->e[i];
		e->key = strdup(w->rows[i].key);
		if (!e->key) {
			rc = MUH_ENOMEM;
			break;
		}
		e->time_s = w->rows[i].median;
		e->source_rank = (int)i + 1;
		if (s) {
			rc = check_entry(&c, w, &w->rows[i], e);
		} else {
			struct checker none = {.hw = target, .warps_param = -1};
			rc = check_entry(&none, w, &w->rows[i], e);
		}
		if (!rc && e->verdict == TRANSFER_VALID)
			e->target_rank = (int)++t->nvalid;
	}
	checker_free(&c);
	spec_free(s);
	return rc;
}

int transfer_build(const char *db, const muh_hw *target, size_t topk, int64_t only,
		   transfer_report **out, muh_diag *d)
{
	*out = NULL;
	muh_store *st;
	int rc = store_open_ro(db, &st, d);
	if (rc)
		return rc;
	struct reader rd = {.only = only};
	rc = store_foreach_run(st, read_run, &rd);
	for (size_t i = 0; i < rd.n && !rc; i++) {
		rc = store_foreach(st, rd.runs[i].r.id, read_row, &rd.runs[i]);
		if (!rc)
			rc = rank_rows(st, &rd.runs[i], d);
	}
	store_close(st);
	if (!rc && !rd.n) {
		diag_at(d, db, 0, 0, NULL);
		rc = only ? diag_errorf(d, "no run %lld in the store", (long long)only)
			  : diag_errorf(d, "the store holds no run");
	}
	transfer_report *r = rc ? NULL : calloc(1, sizeof(*r));
	if (!rc && !r)
		rc = MUH_ENOMEM;
	if (!rc) {
		r->target = *target;
		r->runs = calloc(rd.n, sizeof(*r->runs));
		rc = r->runs ? MUH_OK : MUH_ENOMEM;
	}
	for (size_t i = 0; i < rd.n && !rc; i++) {
		r->nruns++;
		rc = build_run(&rd.runs[i], target, topk, &r->runs[i]);
	}
	for (size_t i = 0; i < rd.n; i++)
		rawrun_free(&rd.runs[i]);
	free(rd.runs);
	if (rc) {
		transfer_free(r);
		return rc;
	}
	*out = r;
	return MUH_OK;
}

static void free_texts(char **v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

void transfer_free(transfer_report *r)
{
	if (!r)
		return;
	for (size_t i = 0; i < r->nruns; i++) {
		transfer_run *t = &r->runs[i];
		for (size_t k = 0; k < t->n && t->e; k++) {
			free(t->e[k].key);
			free_texts(t->e[k].why, t->e[k].nwhy);
			free_texts(t->e[k].notes, t->e[k].nnotes);
		}
		free(t->e);
		free(t->spec_path);
		free(t->spec_name);
		free(t->problem);
		free(t->measured_on);
		free(t->spec_note);
	}
	free(r->runs);
	free(r);
}

static cJSON *texts_json(char **v, size_t n)
{
	cJSON *a = cJSON_CreateArray();
	for (size_t i = 0; i < n; i++)
		cJSON_AddItemToArray(a, cJSON_CreateString(v[i]));
	return a;
}

char *transfer_to_json(const transfer_report *r)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "target", r->target.name);
	cJSON_AddStringToObject(o, "target_device", r->target.device);
	cJSON *runs = cJSON_AddArrayToObject(o, "runs");
	for (size_t i = 0; i < r->nruns; i++) {
		const transfer_run *t = &r->runs[i];
		cJSON *j = cJSON_CreateObject();
		cJSON_AddNumberToObject(j, "run", (double)t->id);
		cJSON_AddStringToObject(j, "spec", t->spec_path);
		cJSON_AddStringToObject(j, "problem", t->problem);
		cJSON_AddStringToObject(j, "measured_on", t->measured_on);
		cJSON_AddBoolToObject(j, "other_device", t->other_device);
		cJSON_AddNumberToObject(j, "ok", (double)t->nok);
		cJSON_AddNumberToObject(j, "checked", (double)t->n);
		cJSON_AddNumberToObject(j, "valid", (double)t->nvalid);
		if (t->spec_note)
			cJSON_AddStringToObject(j, "spec_note", t->spec_note);
		cJSON *es = cJSON_AddArrayToObject(j, "entries");
		for (size_t k = 0; k < t->n; k++) {
			const transfer_entry *e = &t->e[k];
			cJSON *x = cJSON_CreateObject();
			cJSON_AddStringToObject(x, "key", e->key);
			cJSON_AddNumberToObject(x, "time_s", e->time_s);
			cJSON_AddStringToObject(x, "measured_on", t->measured_on);
			cJSON_AddNumberToObject(x, "source_rank", e->source_rank);
			cJSON_AddStringToObject(x, "verdict", e->verdict == TRANSFER_VALID ? "valid" : "invalid");
			if (e->target_rank)
				cJSON_AddNumberToObject(x, "target_rank", e->target_rank);
			else
				cJSON_AddNullToObject(x, "target_rank");
			cJSON_AddItemToObject(x, "why", texts_json(e->why, e->nwhy));
			cJSON_AddItemToObject(x, "notes", texts_json(e->notes, e->nnotes));
			if (e->shared >= 0)
				cJSON_AddNumberToObject(x, "shared_bytes", (double)e->shared);
			cJSON_AddItemToArray(es, x);
		}
		cJSON_AddItemToArray(runs, j);
	}
	char *s = cJSON_Print(o);
	cJSON_Delete(o);
	return s;
}
