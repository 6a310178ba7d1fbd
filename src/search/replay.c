/*
 * replay.c — tables of past measurements, and the objective that answers
 * from them (see replay.h).
 *
 * A table is a map from space index to entry; status texts are interned
 * (a sweep has a handful of kinds). The CSV reader is RFC 4180 enough for
 * real sweep files: quoted fields with commas, doubled quotes and newlines;
 * '#' comment lines; CRLF. Rows are matched to configurations by value:
 * a cell matches a param value when its text is the value's canonical text
 * or, for numbers, when it parses to the same number ("64" == "64.0").
 *
 * Hook for the store (issue 3): a store_load_replay(store, spec, sp, &rp)
 * written with the store module creates a table with replay_new() and calls
 * replay_add() for each finished measurement of the spec (status ok with its
 * median in seconds, or the failure kind's name). Nothing here reads SQLite.
 *
 * Never prints, never exits.
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "muh/fileio.h"
#include "muh/muh.h"
#include "muh/replay.h"
#include "muh/stats.h"
#include "strbuf.h"
#include "u64map.h"

struct entry {
	double time_s;
	int status;
	const char *text; /* interned */
};

struct muh_replay {
	const muh_space *sp;
	u64map map; /* space index -> entry number */
	struct entry *e;
	size_t n, cap;
	char **texts;
	size_t ntexts;
	replay_stats st;
};

int replay_new(const muh_space *sp, muh_replay **out)
{
	muh_replay *rp = calloc(1, sizeof(*rp));
	if (!rp)
		return MUH_ENOMEM;
	rp->sp = sp;
	*out = rp;
	return MUH_OK;
}

void replay_free(muh_replay *rp)
{
	if (!rp)
		return;
	u64map_free(&rp->map);
	free(rp->e);
	for (size_t i = 0; i < rp->ntexts; i++)
		free(rp->texts[i]);
	free(rp->texts);
	free(rp);
}

static const char *intern(muh_replay *rp, const char *text)
{
	for (size_t i = 0; i < rp->ntexts; i++)
		if (!strcmp(rp->texts[i], text))
			return rp->texts[i];
	char **nt = realloc(rp->texts, (rp->ntexts + 1) * sizeof(char *));
	if (!nt)
		return NULL;
	rp->texts = nt;
	if (!(nt[rp->ntexts] = strdup(text)))
		return NULL;
	return nt[rp->ntexts++];
}

int replay_add(muh_replay *rp, const uint32_t *cfg, double time_s, int status,
               const char *status_text)
{
	uint64_t idx;
	if (space_index_of(rp->sp, cfg, &idx))
		return MUH_EINPUT;
	if (u64map_get(&rp->map, idx, NULL))
		return 1;
	if (array_grow(&rp->e, &rp->cap, rp->n, sizeof(*rp->e), 256))
		return MUH_ENOMEM;
	const char *text = status_text ? status_text : status == REPLAY_OK ? "ok" : "failed";
	struct entry *e = &rp->e[rp->n];
	e->status = status;
	e->time_s = status == REPLAY_OK ? time_s : INFINITY;
	if (!(e->text = intern(rp, text)))
		return MUH_ENOMEM;
	if (u64map_put(&rp->map, idx, rp->n))
		return MUH_ENOMEM;
	rp->n++;
	rp->st.covered++;
	return MUH_OK;
}

int replay_add_row(muh_replay *rp, const uint32_t *cfg, double time_s, int status,
                   const char *status_text)
{
	rp->st.rows++;
	if (!cfg) {
		rp->st.outside++;
		return MUH_OK;
	}
	if (!space_is_valid(rp->sp, cfg)) {
		rp->st.invalid++;
		return MUH_OK;
	}
	int added = replay_add(rp, cfg, time_s, status, status_text);
	if (added == 1) {
		rp->st.duplicate++;
		return MUH_OK;
	}
	if (added != MUH_OK)
		return added;
	rp->st.used++;
	if (status != REPLAY_OK)
		rp->st.failed++;
	return MUH_OK;
}

void replay_get_stats(const muh_replay *rp, replay_stats *st)
{
	*st = rp->st;
}

int replay_lookup(const muh_replay *rp, const uint32_t *cfg, strategy_measurement *m)
{
	uint64_t idx, k;
	if (space_index_of(rp->sp, cfg, &idx) || !u64map_get(&rp->map, idx, &k)) {
		m->time_s = INFINITY;
		m->status = REPLAY_NOT_MEASURED;
		m->status_text = "not_measured";
		return 0;
	}
	m->time_s = rp->e[k].time_s;
	m->status = rp->e[k].status;
	m->status_text = rp->e[k].text;
	return 1;
}

int replay_best(const muh_replay *rp, uint64_t *index, double *time_s)
{
	int have = 0;
	double best = INFINITY;
	uint64_t bi = 0;
	for (size_t j = 0; j < rp->map.cap; j++) {
		if (rp->map.keys[j] == UINT64_MAX)
			continue;
		const struct entry *e = &rp->e[rp->map.vals[j]];
		if (e->status == REPLAY_OK &&
		    (e->time_s < best || (e->time_s == best && rp->map.keys[j] < bi))) {
			best = e->time_s;
			bi = rp->map.keys[j];
			have = 1;
		}
	}
	if (have) {
		*index = bi;
		*time_s = best;
	}
	return have;
}

int replay_ok_times(const muh_replay *rp, double **times, size_t *n)
{
	size_t k = 0;
	*times = NULL;
	*n = 0;
	for (size_t i = 0; i < rp->n; i++)
		k += rp->e[i].status == REPLAY_OK;
	if (!k)
		return MUH_OK;
	double *t = malloc(k * sizeof(double));
	if (!t)
		return MUH_ENOMEM;
	k = 0;
	for (size_t i = 0; i < rp->n; i++)
		if (rp->e[i].status == REPLAY_OK)
			t[k++] = rp->e[i].time_s;
	stats_sort(t, k);
	*times = t;
	*n = k;
	return MUH_OK;
}

int replay_objective(void *ctx, const uint32_t *cfg, strategy_measurement *m)
{
	replay_lookup(ctx, cfg, m);
	return MUH_OK;
}

/* ---- CSV ------------------------------------------------------------------ */

struct csv {
	const char *p, *end;
	int line; /* of the current record's first character */
	char **f; /* fields of the current record (NUL-terminated copies) */
	size_t nf, capf;
	char *buf;
	size_t nbuf, capbuf;
};

static int buf_put(struct csv *c, char ch)
{
	if (c->nbuf == c->capbuf) {
		size_t cap = c->capbuf ? c->capbuf * 2 : 1024;
		char *nb = realloc(c->buf, cap);
		if (!nb)
			return MUH_ENOMEM;
		c->buf = nb;
		c->capbuf = cap;
	}
	c->buf[c->nbuf++] = ch;
	return MUH_OK;
}

/* Reads the next record into c->f. Returns 1, 0 at end of input, or
 * -MUH_ENOMEM. Comment lines ('#' first) and blank lines are skipped. */
static int csv_next(struct csv *c)
{
	for (;;) {
		if (c->p >= c->end)
			return 0;
		if (*c->p == '#' || *c->p == '\n' || *c->p == '\r') {
			while (c->p < c->end && *c->p != '\n')
				c->p++;
			c->p++;
			c->line++;
			continue;
		}
		break;
	}
	/* fields are stored back to back in buf; offsets first, pointers after */
	size_t offs[512];
	size_t nf = 0;
	c->nbuf = 0;
	int startline = c->line;
	for (;;) {
		if (nf == 512)
			return -MUH_EINPUT;
		offs[nf++] = c->nbuf;
		if (c->p < c->end && *c->p == '"') {
			c->p++;
			while (c->p < c->end) {
				if (*c->p == '"') {
					if (c->p + 1 < c->end && c->p[1] == '"') {
						if (buf_put(c, '"'))
							return -MUH_ENOMEM;
						c->p += 2;
						continue;
					}
					c->p++;
					break;
				}
				if (*c->p == '\n')
					c->line++;
				if (buf_put(c, *c->p++))
					return -MUH_ENOMEM;
			}
		}
		while (c->p < c->end && *c->p != ',' && *c->p != '\n') {
			if (*c->p != '\r' && buf_put(c, *c->p))
				return -MUH_ENOMEM;
			c->p++;
		}
		if (buf_put(c, '\0'))
			return -MUH_ENOMEM;
		if (c->p < c->end && *c->p == ',') {
			c->p++;
			continue;
		}
		if (c->p < c->end)
			c->p++; /* the newline */
		c->line++;
		break;
	}
	if (nf > c->capf) {
		char **nfp = realloc(c->f, nf * sizeof(char *));
		if (!nfp)
			return -MUH_ENOMEM;
		c->f = nfp;
		c->capf = nf;
	}
	for (size_t i = 0; i < nf; i++)
		c->f[i] = c->buf + offs[i];
	c->nf = nf;
	(void)startline;
	return 1;
}

/* The value index of param p whose value the cell holds, or -1. */
static long match_value(const muh_param *par, const char *cell)
{
	char buf[128];
	while (isspace((unsigned char)*cell))
		cell++;
	for (size_t v = 0; v < par->nvalues; v++) {
		value_fmt(buf, sizeof(buf), par->values[v]);
		if (!strcmp(buf, cell))
			return (long)v;
	}
	char *end;
	errno = 0;
	double x = strtod(cell, &end);
	if (end == cell || errno)
		return -1;
	while (isspace((unsigned char)*end))
		end++;
	if (*end)
		return -1;
	for (size_t v = 0; v < par->nvalues; v++) {
		const muh_value *val = &par->values[v];
		if ((val->t == MUH_INT && (double)val->u.i == x) ||
		    (val->t == MUH_FLOAT && val->u.f == x))
			return (long)v;
	}
	return -1;
}

/* Every NAME of colmap's NAME=COLUMN is a param, a problem symbol, time or
 * status: an unknown name is an error (with the nearest known one), never
 * a mapping nothing reads. */
static int check_colmap(const muh_spec *spec, const char *const *colmap, muh_diag *d)
{
	for (size_t i = 0; colmap && colmap[i]; i++) {
		const char *eq = strchr(colmap[i], '=');
		size_t n = eq ? (size_t)(eq - colmap[i]) : strlen(colmap[i]);
		int known = (n == 4 && !strncmp(colmap[i], "time", 4)) || (n == 6 && !strncmp(colmap[i], "status", 6));
		diag_near near = DIAG_NEAR_INIT;
		diag_near_offer(&near, colmap[i], n, "time");
		diag_near_offer(&near, colmap[i], n, "status");
		for (size_t p = 0; !known && p < spec->nparams; p++) {
			known = strlen(spec->params[p].name) == n && !strncmp(spec->params[p].name, colmap[i], n);
			diag_near_offer(&near, colmap[i], n, spec->params[p].name);
		}
		for (size_t k = 0; !known && k < spec->nproblem; k++) {
			known = strlen(spec->problem[k].name) == n && !strncmp(spec->problem[k].name, colmap[i], n);
			diag_near_offer(&near, colmap[i], n, spec->problem[k].name);
		}
		char hint[160];
		if (!known)
			return diag_errorf(d,
					   "--replay-column %s: '%.*s' is not a param or problem symbol of %s, nor time or "
					   "status%s",
					   colmap[i], (int)n, colmap[i], spec->path ? spec->path : "the spec",
					   diag_near_hint(near.name, hint, sizeof(hint)));
	}
	return MUH_OK;
}

/* Whether the row's problem columns (kcol[k] >= 0) all hold the values of
 * the space's instance (1 == 1.0, as a param's cell matches): 1 when they
 * do, 0 when one holds another value, -1 when the cell of symbol *bad names
 * no value at all (empty, or not a number where the symbol's are). */
static int same_problem(const muh_space *sp, const long *kcol, const struct csv *c, size_t *bad)
{
	const muh_spec *spec = space_spec(sp);
	int same = 1;
	for (size_t k = 0; k < spec->nproblem; k++) {
		if (kcol[k] < 0)
			continue;
		const char *cell = c->f[kcol[k]];
		muh_value want = spec_problem_value(spec, k, space_instance(sp));
		char *end;
		while (isspace((unsigned char)*cell))
			cell++;
		errno = 0;
		if (want.t != MUH_STR) {
			(void)strtod(cell, &end);
			while (isspace((unsigned char)*end))
				end++;
		}
		if (!*cell || (want.t != MUH_STR && (end == cell || *end || errno))) {
			*bad = k;
			return -1;
		}
		muh_param one = {.nvalues = 1, .values = &want};
		if (match_value(&one, cell) != 0)
			same = 0;
	}
	return same;
}

static const char *mapped(const char *const *colmap, const char *name)
{
	size_t n = strlen(name);
	for (size_t i = 0; colmap && colmap[i]; i++)
		if (!strncmp(colmap[i], name, n) && colmap[i][n] == '=')
			return colmap[i] + n + 1;
	return name;
}

static long find_col(const struct csv *c, const char *name)
{
	for (size_t i = 0; i < c->nf; i++)
		if (!strcmp(c->f[i], name))
			return (long)i;
	return -1;
}

/* The did-you-mean hint (diag_near_hint) for a column name the header
 * lacks: its nearest column, in buf; "" when none is near. Returns buf. */
static const char *col_hint(const struct csv *c, const char *name, char *buf, size_t n)
{
	diag_near near = DIAG_NEAR_INIT;
	for (size_t i = 0; i < c->nf; i++)
		diag_near_offer(&near, name, strlen(name), c->f[i]);
	return diag_near_hint(near.name, buf, n);
}

static double unit_of(const char *col)
{
	size_t n = strlen(col);
	if (n >= 3 && !strcmp(col + n - 3, "_ms"))
		return 1e-3;
	if (n >= 3 && !strcmp(col + n - 3, "_us"))
		return 1e-6;
	if (n >= 3 && !strcmp(col + n - 3, "_ns"))
		return 1e-9;
	return 1;
}

int replay_load_csv(const muh_space *sp, const char *path, const char *const *colmap,
                    muh_replay **out, muh_diag *d)
{
	const muh_spec *spec = space_spec(sp);
	size_t np = space_nparams(sp);
	diag_clear(d);
	if (check_colmap(spec, colmap, d))
		return MUH_EINPUT;
	size_t len = 0;
	char *text = file_read(path, &len);
	if (!text) {
		diag_errorf(d, "cannot read %s: %s", path, strerror(errno));
		return MUH_EENV;
	}
	struct csv c = {.p = text, .end = text + len, .line = 1};
	muh_replay *rp = NULL;
	long *pcol = calloc(np + 1, sizeof(long));
	long *kcol = calloc(spec->nproblem + 1, sizeof(long)); /* a problem symbol's column, or -1 */
	uint32_t *cfg = calloc(np + 1, sizeof(uint32_t));
	int rc = MUH_OK;
	if (!pcol || !kcol || !cfg || replay_new(sp, &rp)) {
		rc = MUH_ENOMEM;
		goto out;
	}
	int got = csv_next(&c);
	if (got <= 0) {
		rc = got < 0 ? -got : MUH_EINPUT;
		if (rc == MUH_EINPUT) {
			diag_at(d, path, c.line, 1, NULL);
			diag_errorf(d, "no header line");
		}
		goto out;
	}
	int hline = c.line - 1;
	for (size_t p = 0; p < np; p++) {
		const char *col = mapped(colmap, spec->params[p].name);
		if ((pcol[p] = find_col(&c, col)) < 0) {
			diag_at(d, path, hline, 1, text);
			const char *P = spec->params[p].name;
			char hint[160];
			col_hint(&c, col, hint, sizeof(hint));
			if (col != P) /* mapped: name the mapping */
				rc = diag_errorf(d, "no column '%s'%s for param '%s' (--replay-column %s=%s)", col, hint, P,
						 P, col);
			else
				rc = diag_errorf(d, "no column '%s'%s for param '%s' (name another with --replay-column "
						 "%s=COLUMN)", col, hint, P, P);
			goto out;
		}
	}
	for (size_t k = 0; k < spec->nproblem; k++) {
		const char *col = mapped(colmap, spec->problem[k].name);
		kcol[k] = find_col(&c, col);
		if (kcol[k] < 0 && col != spec->problem[k].name) { /* mapped, so meant: as a param's */
			diag_at(d, path, hline, 1, text);
			rc = diag_errorf(d, "no column '%s' for problem symbol '%s' (--replay-column %s=%s)", col,
					 spec->problem[k].name, spec->problem[k].name, col);
			goto out;
		}
		if (kcol[k] < 0 && spec->problem[k].nvalues > 1 && !rp->st.unnamed_symbol)
			rp->st.unnamed_symbol = spec->problem[k].name;
	}
	const char *tname = mapped(colmap, "time");
	long tcol = -1;
	if (strcmp(tname, "time"))
		tcol = find_col(&c, tname);
	else {
		static const char *const tnames[] = {"time_s", "time_ms", "time_us", "time_ns",
		                                     "time"};
		for (size_t i = 0; i < 5 && tcol < 0; i++)
			if ((tcol = find_col(&c, tnames[i])) >= 0)
				tname = tnames[i];
	}
	if (tcol < 0) {
		diag_at(d, path, hline, 1, text);
		if (strcmp(tname, "time")) { /* mapped: name the column looked for */
			char hint[160];
			rc = diag_errorf(d, "no column '%s'%s for the time (--replay-column time=%s)", tname,
					 col_hint(&c, tname, hint, sizeof(hint)), tname);
		} else
			rc = diag_errorf(d, "no time column (time_s, time_ms, time_us, time_ns, or another named with "
					    "--replay-column time=COLUMN)");
		goto out;
	}
	char tcolname[128];
	snprintf(tcolname, sizeof(tcolname), "%s", c.f[tcol]);
	double unit = unit_of(tcolname);
	long scol = find_col(&c, mapped(colmap, "status"));
	size_t ncols = c.nf;
	while ((got = csv_next(&c)) > 0) {
		int line = c.line - 1;
		if (c.nf < ncols) {
			diag_at(d, path, line, 1, text);
			rc = diag_errorf(d, "%zu fields, the header has %zu", c.nf, ncols);
			goto out;
		}
		size_t bad = 0;
		int same = same_problem(sp, kcol, &c, &bad);
		if (same < 0) {
			diag_at(d, path, line, 1, text);
			rc = diag_errorf(d, "column '%s': '%s' is not a value of problem symbol '%s'",
			                 mapped(colmap, spec->problem[bad].name), c.f[kcol[bad]],
			                 spec->problem[bad].name);
			goto out;
		}
		if (!same) {
			rp->st.rows++;
			rp->st.other_problem++;
			continue;
		}
		int outside = 0;
		for (size_t p = 0; p < np && !outside; p++) {
			long v = match_value(&spec->params[p], c.f[pcol[p]]);
			if (v < 0)
				outside = 1;
			else
				cfg[p] = (uint32_t)v;
		}
		if (outside || !space_is_valid(sp, cfg)) {
			replay_add_row(rp, outside ? NULL : cfg, INFINITY, REPLAY_FAILED, NULL);
			continue;
		}
		const char *st = scol >= 0 ? c.f[scol] : "ok";
		int status = !strcmp(st, "ok") || !*st ? REPLAY_OK : REPLAY_FAILED;
		double t = INFINITY;
		if (status == REPLAY_OK) {
			const char *cell = c.f[tcol];
			char *end;
			if (!*cell) {
				status = REPLAY_FAILED;
				st = "no_time";
			} else {
				errno = 0;
				t = strtod(cell, &end) * unit;
				if (end == cell || *end || errno || !(t >= 0) || !isfinite(t)) {
					diag_at(d, path, line, 1, text);
					rc = diag_errorf(d, "column '%s': '%s' is not a time",
					                 tcolname, cell);
					goto out;
				}
			}
		}
		if ((rc = replay_add_row(rp, cfg, t, status, status == REPLAY_OK ? "ok" : st)))
			goto out;
	}
	if (got < 0) {
		rc = -got;
		if (rc == MUH_EINPUT) {
			diag_at(d, path, c.line, 1, text);
			diag_errorf(d, "more than 512 fields in a row");
		}
	}
out:
	if (rc) {
		replay_free(rp);
		rp = NULL;
	}
	*out = rp;
	free(c.f);
	free(c.buf);
	free(pcol);
	free(kcol);
	free(cfg);
	free(text);
	return rc;
}
