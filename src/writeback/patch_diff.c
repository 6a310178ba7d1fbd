/*
 * patch_diff.c — the unified diff of a built plan (patch_diff): per file, the
 * changed lines with three lines of context, the old and new bytes as they
 * are (CRLF, tabs, invalid UTF-8 kept).
 *
 * Must never: write a file, print, or re-join lines as text.
 */
#include <cjson/cJSON.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <ftw.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "muh/deploy.h"
#include "muh/fileio.h"
#include "muh/muh.h"
#include "muh/patch.h"
#include "strbuf.h"
#include "pyfile.h"

#include <libfyaml.h>
#include <tree_sitter/api.h>
#include "patch_int.h"

/* ---- unified diff ---------------------------------------------------------- */

/* Line table of a buffer: start offsets; line i is [ls[i], ls[i+1]). */
struct lines {
	size_t *ls;
	size_t n; /* number of lines */
};

static int split_lines(const char *b, size_t len, struct lines *L)
{
	size_t n = 0;
	for (size_t i = 0; i < len; i++)
		n += b[i] == '\n';
	if (len && b[len - 1] != '\n')
		n++;
	L->ls = malloc((n + 1) * sizeof(size_t));
	if (!L->ls)
		return MUH_ENOMEM;
	size_t k = 0;
	L->ls[k++] = 0;
	for (size_t i = 0; i < len; i++)
		if (b[i] == '\n' && i + 1 < len)
			L->ls[k++] = i + 1;
	L->ls[n] = len;
	L->n = n;
	return MUH_OK;
}

/* Line index holding byte pos (pos < len), by binary search. */
static size_t line_of(const struct lines *L, size_t pos)
{
	size_t lo = 0, hi = L->n;
	while (hi - lo > 1) {
		size_t mid = (lo + hi) / 2;
		if (L->ls[mid] <= pos)
			lo = mid;
		else
			hi = mid;
	}
	return lo;
}

/* Emits one line of b (with its own ending) prefixed by c. */
static void put_line(strbuf *s, char c, const char *b, size_t from, size_t to)
{
	strbuf_put(s, &c, 1);
	strbuf_put(s, b + from, to - from);
	if (to == from || b[to - 1] != '\n')
		strbuf_put(s, "\n\\ No newline at end of file\n", 29);
}

/* A change: old lines [la, le) become the lines of new bytes [na, nb); a
 * pure insertion has la == le (no old line: none is shown rewritten to
 * itself). */
struct change {
	size_t la, le;
	size_t na, nb;   /* byte range in the new buffer */
	size_t nlines;   /* lines in [na, nb) */
};

static size_t count_lines(const char *b, size_t from, size_t to)
{
	size_t n = 0;
	for (size_t i = from; i < to; i++)
		n += b[i] == '\n';
	if (to > from && b[to - 1] != '\n')
		n++;
	return n;
}

/* Line i of A in buffer a equals line j of B in buffer b. */
static int line_eq(const char *a, const struct lines *A, size_t i, const char *b, const struct lines *B, size_t j)
{
	size_t la = A->ls[i + 1] - A->ls[i], lb = B->ls[j + 1] - B->ls[j];
	return la == lb && !memcmp(a + A->ls[i], b + B->ls[j], la);
}

/* The changes of a rewritten file (a deployment file, a whole new text) as
 * a line diff: the longest common subsequence of the lines between the
 * common prefix and suffix, so that a value changed on two lines far apart
 * is two small hunks, and only changed lines are - and +: a pure insertion
 * is + lines only, never an unchanged line shown as - and + (a line
 * "rewritten" to itself). Replaces *chp (grown as needed) and sets *nch. Returns
 * MUH_OK, or MUH_ENOMEM; *too_large = 1 (and *nch untouched) when the
 * middle is too large for the table: the caller then makes one change. */
static int line_changes(const struct pfile *f, const struct lines *A, struct change **chp, size_t *nch,
			int *too_large)
{
	*too_large = 0;
	struct lines B;
	if (split_lines(f->new, f->newlen, &B))
		return MUH_ENOMEM;
	size_t p = 0, q = 0;
	while (p < A->n && p < B.n && line_eq(f->old, A, p, f->new, &B, p))
		p++;
	while (q < A->n - p && q < B.n - p && line_eq(f->old, A, A->n - 1 - q, f->new, &B, B.n - 1 - q))
		q++;
	size_t n = A->n - p - q, m = B.n - p - q;
	if ((n + 1) * (m + 1) > 4000000) {
		free(B.ls);
		*too_large = 1;
		return MUH_OK;
	}
	unsigned *T = calloc((n + 1) * (m + 1), sizeof(unsigned));
	struct change *ch = realloc(*chp, (n + m + 2) * sizeof(*ch));
	if (!T || !ch) {
		free(T);
		if (ch)
			*chp = ch;
		free(B.ls);
		return MUH_ENOMEM;
	}
	*chp = ch;
#define CELL(i, j) T[(size_t)(i) * (m + 1) + (j)]
	for (size_t i = n; i-- > 0;)
		for (size_t j = m; j-- > 0;)
			CELL(i, j) = line_eq(f->old, A, p + i, f->new, &B, p + j)
					 ? CELL(i + 1, j + 1) + 1
					 : (CELL(i + 1, j) >= CELL(i, j + 1) ? CELL(i + 1, j) : CELL(i, j + 1));
	size_t k = 0, i = 0, j = 0;
	/* the same number of lines, changed in place (a deployment file's
	 * values): pair them by position unless the subsequence is shorter,
	 * so that a value equal to another one's old value is not "moved" */
	size_t dpos = 0;
	for (size_t x = 0; n == m && x < n; x++)
		dpos += !line_eq(f->old, A, p + x, f->new, &B, p + x);
	if (n == m && 2 * dpos <= n + m - 2 * (size_t)CELL(0, 0)) {
		for (size_t x = 0; x < n; x++) {
			if (line_eq(f->old, A, p + x, f->new, &B, p + x))
				continue;
			if (k && ch[k - 1].le == p + x) {
				ch[k - 1].le = p + x + 1;
				ch[k - 1].nb = B.ls[p + x + 1];
				continue;
			}
			ch[k].la = p + x;
			ch[k].le = p + x + 1;
			ch[k].na = B.ls[p + x];
			ch[k].nb = B.ls[p + x + 1];
			k++;
		}
		i = n, j = m; /* done */
	}
	while (i < n || j < m) {
		if (i < n && j < m && line_eq(f->old, A, p + i, f->new, &B, p + j)) {
			i++, j++;
			continue;
		}
		size_t i0 = i, j0 = j;
		while ((i < n || j < m) && !(i < n && j < m && line_eq(f->old, A, p + i, f->new, &B, p + j))) {
			if (j == m || (i < n && CELL(i + 1, j) >= CELL(i, j + 1)))
				i++;
			else
				j++;
		}
		size_t oi0 = p + i0, oi1 = p + i, oj0 = p + j0, oj1 = p + j;
		if (k && ch[k - 1].le >= oi0) { /* touches the previous change */
			ch[k - 1].le = oi1;
			ch[k - 1].nb = B.ls[oj1];
			continue;
		}
		ch[k].la = oi0;
		ch[k].le = oi1;
		ch[k].na = B.ls[oj0];
		ch[k].nb = B.ls[oj1];
		k++;
	}
#undef CELL
	free(T);
	free(B.ls);
	*nch = k;
	return MUH_OK;
}

static int diff_file(strbuf *s, const struct pfile *f)
{
	if (f->oldlen == f->newlen && !memcmp(f->old, f->new, f->oldlen))
		return MUH_OK;
	struct lines L;
	if (split_lines(f->old, f->oldlen, &L))
		return MUH_ENOMEM;
	struct change *ch = calloc(f->nedits, sizeof(*ch));
	if (!ch) {
		free(L.ls);
		return MUH_ENOMEM;
	}
	/* map each edit to whole old lines; merge edits that share lines */
	size_t nch = 0;
	long long shift = 0; /* new offset - old offset, before the current edit */
	int rewritten = f->edits[0]->deploy || f->edits[0]->whole;
	/* a value over several lines (a whole autotune list): diffed by lines,
	 * so that an extended list shows only what was added */
	for (size_t k = 0; k < f->nedits && !rewritten; k++)
		rewritten = strchr(f->edits[k]->text, '\n') != NULL;
	int too_large = 1;
	if (rewritten && L.n && line_changes(f, &L, &ch, &nch, &too_large)) {
		free(ch);
		free(L.ls);
		return MUH_ENOMEM;
	}
	if (rewritten && L.n && too_large) {
		/* too large for the line diff: one change, the lines between the
		 * common prefix and the common suffix */
		size_t p = 0, q = 0;
		while (p < f->oldlen && p < f->newlen && f->old[p] == f->new[p])
			p++;
		size_t la = line_of(&L, p < f->oldlen ? p : f->oldlen - 1);
		while (q < f->oldlen - L.ls[la] && q < f->newlen - L.ls[la] &&
		       f->old[f->oldlen - 1 - q] == f->new[f->newlen - 1 - q])
			q++;
		size_t oe = f->oldlen - q;
		size_t lb = oe > L.ls[la] ? line_of(&L, oe - 1) : la;
		ch[0].la = la;
		ch[0].le = lb + 1;
		ch[0].na = L.ls[la];
		ch[0].nb = (size_t)((long long)L.ls[lb + 1] + (long long)f->newlen - (long long)f->oldlen);
		nch = 1;
	}
	for (size_t k = 0; k < f->nedits && !rewritten; k++) {
		const struct edit *e = f->edits[k];
		size_t la = line_of(&L, e->start < f->oldlen ? e->start : f->oldlen - 1);
		size_t endpos = e->end > e->start ? e->end - 1 : e->start;
		size_t lb = line_of(&L, endpos < f->oldlen ? endpos : f->oldlen - 1);
		long long delta = (long long)strlen(e->text) - (long long)(e->end - e->start);
		if (nch && la < ch[nch - 1].le) {
			ch[nch - 1].le = lb + 1 > ch[nch - 1].le ? lb + 1 : ch[nch - 1].le;
		} else {
			ch[nch].la = la;
			ch[nch].le = lb + 1;
			ch[nch].na = (size_t)((long long)L.ls[la] + shift);
			nch++;
		}
		shift += delta;
		ch[nch - 1].nb = (size_t)((long long)L.ls[ch[nch - 1].le] + shift);
	}
	for (size_t c = 0; c < nch; c++)
		ch[c].nlines = count_lines(f->new, ch[c].na, ch[c].nb);
	strbuf_printf(s, "diff --git a/%s b/%s\n--- a/%s\n+++ b/%s\n", f->rel, f->rel, f->rel, f->rel);
	const size_t ctx = 3;
	long long line_delta = 0; /* new line number - old line number before hunk */
	for (size_t c = 0; c < nch;) {
		size_t c2 = c; /* last change in this hunk */
		while (c2 + 1 < nch && ch[c2 + 1].la - ch[c2].le <= 2 * ctx)
			c2++;
		size_t os = ch[c].la >= ctx ? ch[c].la - ctx : 0;
		size_t oe = ch[c2].le + ctx < L.n ? ch[c2].le + ctx : L.n; /* past the last old line shown */
		size_t ocount = oe - os, ncount = ocount;
		for (size_t k = c; k <= c2; k++)
			ncount = ncount - (ch[k].le - ch[k].la) + ch[k].nlines;
		long long nstart = (long long)os + line_delta;
		strbuf_printf(s, "@@ -%zu,%zu +%lld,%zu @@\n", ocount ? os + 1 : os, ocount,
			  ncount ? nstart + 1 : nstart, ncount);
		size_t line = os;
		for (size_t k = c; k <= c2; k++) {
			for (; line < ch[k].la; line++)
				put_line(s, ' ', f->old, L.ls[line], L.ls[line + 1]);
			for (; line < ch[k].le; line++)
				put_line(s, '-', f->old, L.ls[line], L.ls[line + 1]);
			size_t a = ch[k].na;
			while (a < ch[k].nb) {
				size_t b = a;
				while (b < ch[k].nb && f->new[b] != '\n')
					b++;
				if (b < ch[k].nb)
					b++;
				put_line(s, '+', f->new, a, b);
				a = b;
			}
			line_delta += (long long)ch[k].nlines - (long long)(ch[k].le - ch[k].la);
		}
		for (; line < oe; line++)
			put_line(s, ' ', f->old, L.ls[line], L.ls[line + 1]);
		c = c2 + 1;
	}
	free(ch);
	free(L.ls);
	return s->oom ? MUH_ENOMEM : MUH_OK;
}

char *patch_diff(const muh_patch *p)
{
	strbuf s = {0};
	strbuf_put(&s, "", 0);
	for (size_t i = 0; i < p->nfiles; i++)
		if (diff_file(&s, &p->files[i])) {
			free(s.b);
			return NULL;
		}
	if (s.oom) {
		free(s.b);
		return NULL;
	}
	return s.b;
}
