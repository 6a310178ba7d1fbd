/*
 * patch.c — write-back of knob values into an engine tree (see patch.h).
 *
 * Owns: edit plans, the safety checks (unsafe values, dead knobs, drift,
 * conditional knobs), applying byte-span edits in memory, the unified diff,
 * atomic in-place application with a backup, overlays, loading knobs from a
 * saved scan, and the emitters (vLLM MoE config JSON, C header,
 * triton.Config lists).
 *
 * The one rule: only the bytes of a knob's value change. Files are handled
 * as bytes, never as text lines re-joined, so CRLF endings, tabs, comments,
 * encodings (including invalid UTF-8) all survive unchanged.
 *
 * Must never: write a file in place without a temporary file and a rename;
 * touch a file the plan does not change; print.
 */
#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "muh/deploy.h"
#include "muh/fileio.h"
#include "muh/muh.h"
#include "muh/patch.h"
#include "strbuf.h"
#include "pyfile.h"

struct edit {
	char id[20];
	char *file; /* relative to root */
	uint32_t start, end;
	char *text;
	uint64_t hash; /* file hash at scan time; 0 = unknown */
	char *deploy;  /* a deployment file's argument: its knob name, set by
	                  deploy_set (argv-aware) instead of a byte edit */
	int whole;     /* text is the file's whole new content (patch_plan_set_file) */
	size_t wholelen;
};

struct pfile {
	char *rel;
	char *old, *new;
	size_t oldlen, newlen;
	struct edit **edits; /* ascending by start */
	size_t nedits;
};

struct muh_patch {
	char *root;
	struct edit *edits;
	size_t nedits, cap;
	struct pfile *files;
	size_t nfiles;
	int built;
};

uint64_t patch_fnv1a64(const void *buf, size_t n)
{
	return pyfile_hash(buf, n); /* the scan's own hash: one definition */
}

muh_patch *patch_plan_new(const char *root)
{
	muh_patch *p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	p->root = strdup(root);
	if (!p->root) {
		free(p);
		return NULL;
	}
	return p;
}

static void free_files(muh_patch *p)
{
	for (size_t i = 0; i < p->nfiles; i++) {
		free(p->files[i].rel);
		free(p->files[i].old);
		free(p->files[i].new);
		free(p->files[i].edits);
	}
	free(p->files);
	p->files = NULL;
	p->nfiles = 0;
}

void patch_plan_free(muh_patch *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->nedits; i++) {
		free(p->edits[i].file);
		free(p->edits[i].text);
		free(p->edits[i].deploy);
	}
	free(p->edits);
	free_files(p);
	free(p->root);
	free(p);
}

size_t patch_plan_nedits(const muh_patch *p)
{
	return p->nedits;
}

/* Appends the knob's evidence chain to d->msg, one step a line. */
static void append_evidence(muh_diag *d, const muh_knob *k)
{
	if (!d)
		return;
	for (int i = 0; i < k->nevidence; i++) {
		size_t len = strlen(d->msg);
		snprintf(d->msg + len, sizeof(d->msg) - len, "\n  %s:%d: %s", k->evidence[i].file,
			 k->evidence[i].line, k->evidence[i].note ? k->evidence[i].note : "");
	}
}

/* Compares a proposed value with an unsafe one, ignoring surrounding
 * blanks. */
static int same_value(const char *a, const char *b)
{
	while (*a == ' ' || *a == '\t')
		a++;
	while (*b == ' ' || *b == '\t')
		b++;
	size_t la = strlen(a), lb = strlen(b);
	while (la && (a[la - 1] == ' ' || a[la - 1] == '\t'))
		la--;
	while (lb && (b[lb - 1] == ' ' || b[lb - 1] == '\t'))
		lb--;
	return la == lb && !strncmp(a, b, la);
}

/* A zeroed edit at the end of the plan, not yet counted (the caller
 * increments nedits once it is filled), or NULL when out of memory. */
static struct edit *plan_slot(muh_patch *p)
{
	if (p->nedits == p->cap) {
		size_t nc = p->cap ? p->cap * 2 : 8;
		struct edit *ne = realloc(p->edits, nc * sizeof(*ne));
		if (!ne)
			return NULL;
		p->edits = ne;
		p->cap = nc;
	}
	struct edit *e = &p->edits[p->nedits];
	memset(e, 0, sizeof(*e));
	return e;
}

int patch_plan_set(muh_patch *p, const muh_knob *k, int alt, const char *value, int force,
		   muh_diag *d)
{
	if (k->nalts > 0 && alt < 0) {
		diag_errorf(d, "knob %s (%s at %s:%d) is conditional: %s; say which alternative to "
			       "change:",
			    k->id, k->name, k->file, k->line, k->value ? k->value : "");
		for (int i = 0; i < k->nalts && d; i++) {
			size_t len = strlen(d->msg);
			snprintf(d->msg + len, sizeof(d->msg) - len, "\n  --set %s[%d]=%s   (now %s)",
				 k->id, i, value, k->alts[i].text);
		}
		return MUH_EINPUT;
	}
	if (alt >= 0 && alt >= k->nalts)
		return diag_errorf(d, "knob %s (%s) has %d alternative(s); [%d] does not exist",
				   k->id, k->name, k->nalts, alt);
	for (int i = 0; i < k->nunsafe; i++) {
		if (same_value(value, k->unsafe_values[i])) {
			diag_errorf(d, "refusing %s=%s (knob %s, %s:%d): this value is unsafe and "
				       "--force does not override it; evidence:",
				    k->name, value, k->id, k->file, k->line);
			append_evidence(d, k);
			return MUH_EINPUT;
		}
	}
	if (k->verdict == SCAN_DEAD && !force) {
		diag_errorf(d, "refusing %s=%s (knob %s, %s:%d): the knob is dead, so the change "
			       "would do nothing (--force writes it anyway); evidence:",
			    k->name, value, k->id, k->file, k->line);
		append_evidence(d, k);
		return MUH_EINPUT;
	}
	if (strchr(value, '\n'))
		return diag_errorf(d, "a value must be one line");
	struct edit *e = plan_slot(p);
	if (!e)
		return MUH_ENOMEM;
	snprintf(e->id, sizeof(e->id), "%s", k->id);
	e->file = strdup(k->file);
	e->text = strdup(value);
	e->start = alt >= 0 ? k->alts[alt].start : k->start;
	e->end = alt >= 0 ? k->alts[alt].end : k->end;
	e->hash = k->file_hash;
	if (k->kind && !strcmp(k->kind, "engine_arg") && k->scope &&
	    !strcmp(k->scope, "<deployment>"))
		e->deploy = strdup(k->name);
	if (!e->file || !e->text || (!e->deploy && k->scope && !strcmp(k->scope, "<deployment>") &&
				     !strcmp(k->kind, "engine_arg"))) {
		free(e->file);
		free(e->text);
		free(e->deploy);
		return MUH_ENOMEM;
	}
	p->nedits++;
	p->built = 0;
	return MUH_OK;
}

/* Reads path whole into a NUL-terminated malloc'd buffer. */
static int slurp(const char *path, char **buf, size_t *len, muh_diag *d)
{
	*buf = file_read(path, len);
	if (*buf)
		return MUH_OK;
	if (errno == ENOMEM)
		return MUH_ENOMEM;
	diag_at(d, path, 0, 0, NULL);
	diag_errorf(d, "cannot read: %s", strerror(errno));
	return MUH_EENV;
}

/* Reads root/rel whole. */
static int read_file(const char *root, const char *rel, char **buf, size_t *len, muh_diag *d)
{
	char path[PATH_MAX];
	snprintf(path, sizeof(path), "%s/%s", root, rel);
	return slurp(path, buf, len, d);
}

static int by_file_then_start(const void *a, const void *b)
{
	const struct edit *x = *(struct edit *const *)a, *y = *(struct edit *const *)b;
	int c = strcmp(x->file, y->file);
	if (c)
		return c;
	return x->start < y->start ? -1 : x->start > y->start;
}

/* The edits of a deployment file, one argument at a time through
 * deploy_set: a flag set False is removed, an absent argument added, and
 * what does not read back is refused. A knob no_X (a --no-X negation) set
 * to V sets X to not V. */
static int deploy_edits(struct pfile *f, muh_diag *d)
{
	char *cur = malloc(f->oldlen + 1);
	size_t curlen = f->oldlen;
	if (!cur)
		return MUH_ENOMEM;
	memcpy(cur, f->old, f->oldlen + 1);
	int rc = MUH_OK;
	for (size_t k = 0; k < f->nedits && !rc; k++) {
		const struct edit *e = f->edits[k];
		if (!e->deploy) {
			diag_at(d, f->rel, 0, 0, NULL);
			rc = diag_errorf(d, "knob %s: a byte edit in a deployment file; scan again", e->id);
			break;
		}
		deploy_file *df = NULL;
		rc = deploy_parse(f->rel, cur, curlen, NULL, &df, d);
		if (rc)
			break;
		const char *name = e->deploy, *value = e->text;
		const deploy_arg *a = deploy_find(df, name);
		if ((!a || strcmp(a->name, name)) && !strncmp(name, "no_", 3)) {
			const deploy_arg *x = deploy_find(df, name + 3);
			if (!a && (!x || x->kind == DEPLOY_NEG)) {
				name += 3; /* the negation of X */
				int t = !strcmp(value, "True") || !strcmp(value, "true") ||
					!strcmp(value, "1");
				int fl = !strcmp(value, "False") || !strcmp(value, "false") ||
					 !strcmp(value, "0");
				if (!t && !fl) {
					deploy_free(df);
					diag_at(d, f->rel, 0, 0, NULL);
					rc = diag_errorf(d, "knob %s: --no-%s is a flag (True or False), not %s",
							 e->id, name, value);
					break;
				}
				value = t ? "False" : "True";
			}
		}
		char *nt = NULL;
		size_t nl = 0;
		rc = deploy_set(df, name, value, &nt, &nl, d);
		deploy_free(df);
		if (rc)
			break;
		free(cur);
		cur = nt;
		curlen = nl;
	}
	if (rc) {
		free(cur);
		return rc;
	}
	f->new = cur;
	f->newlen = curlen;
	return MUH_OK;
}

int patch_plan_set_file(muh_patch *p, const char *rel, const char *text, size_t len, muh_diag *d)
{
	if (!rel[0] || rel[0] == '/' || !strncmp(rel, "../", 3) || strstr(rel, "/../") ||
	    !strcmp(rel, ".."))
		return diag_errorf(d, "%s is not a path inside the tree", rel);
	struct edit *e = plan_slot(p);
	if (!e)
		return MUH_ENOMEM;
	snprintf(e->id, sizeof(e->id), "(whole file)");
	e->file = strdup(rel);
	e->text = malloc(len + 1);
	if (!e->file || !e->text) {
		free(e->file);
		free(e->text);
		return MUH_ENOMEM;
	}
	memcpy(e->text, text, len);
	e->text[len] = '\0';
	e->whole = 1;
	e->wholelen = len;
	p->nedits++;
	p->built = 0;
	return MUH_OK;
}

int patch_plan_build(muh_patch *p, muh_diag *d)
{
	free_files(p);
	if (!p->nedits) {
		p->built = 1;
		return MUH_OK;
	}
	struct edit **order = malloc(p->nedits * sizeof(*order));
	p->files = calloc(p->nedits, sizeof(struct pfile));
	if (!order || !p->files) {
		free(order);
		return MUH_ENOMEM;
	}
	for (size_t i = 0; i < p->nedits; i++)
		order[i] = &p->edits[i];
	qsort(order, p->nedits, sizeof(*order), by_file_then_start);
	int rc = MUH_OK;
	for (size_t i = 0; i < p->nedits && !rc;) {
		size_t j = i;
		while (j < p->nedits && !strcmp(order[j]->file, order[i]->file))
			j++;
		struct pfile *f = &p->files[p->nfiles++];
		f->rel = strdup(order[i]->file);
		f->edits = malloc((j - i) * sizeof(*f->edits));
		if (!f->rel || !f->edits) {
			rc = MUH_ENOMEM;
			break;
		}
		memcpy(f->edits, order + i, (j - i) * sizeof(*f->edits));
		f->nedits = j - i;
		rc = read_file(p->root, f->rel, &f->old, &f->oldlen, d);
		if (rc)
			break;
		uint64_t h = patch_fnv1a64(f->old, f->oldlen);
		size_t total = f->oldlen;
		for (size_t k = 0; k < f->nedits && !rc; k++) {
			struct edit *e = f->edits[k];
			if (e->hash && e->hash != h) {
				diag_at(d, f->rel, 0, 0, NULL);
				diag_errorf(d, "refusing to patch: the file changed since it was scanned "
					       "(content hash %016llx, scanned %016llx); scan again",
					    (unsigned long long)h, (unsigned long long)e->hash);
				rc = MUH_EINPUT;
			} else if (!e->deploy && !e->whole && (e->end < e->start || e->end > f->oldlen)) {
				diag_at(d, f->rel, 0, 0, NULL);
				diag_errorf(d, "knob %s: byte span %u..%u is outside the file (%zu bytes); "
					       "scan again",
					    e->id, e->start, e->end, f->oldlen);
				rc = MUH_EINPUT;
			} else if (!e->deploy && !e->whole && k && e->start < f->edits[k - 1]->end) {
				diag_at(d, f->rel, 0, 0, NULL);
				diag_errorf(d, "knobs %s and %s overlap; set one of them", f->edits[k - 1]->id,
					    e->id);
				rc = MUH_EINPUT;
			}
			total += strlen(e->text);
		}
		if (rc)
			break;
		if (f->edits[0]->whole) {
			if (f->nedits > 1) {
				diag_at(d, f->rel, 0, 0, NULL);
				rc = diag_errorf(d, "the file is both rewritten whole and edited by knob; set one");
				break;
			}
			if (!(f->new = malloc(f->edits[0]->wholelen + 1))) {
				rc = MUH_ENOMEM;
				break;
			}
			memcpy(f->new, f->edits[0]->text, f->edits[0]->wholelen);
			f->new[f->edits[0]->wholelen] = '\0';
			f->newlen = f->edits[0]->wholelen;
			i = j;
			continue;
		}
		if (f->edits[0]->deploy) {
			rc = deploy_edits(f, d);
			if (rc)
				break;
			i = j;
			continue;
		}
		f->new = malloc(total + 1);
		if (!f->new) {
			rc = MUH_ENOMEM;
			break;
		}
		size_t o = 0, from = 0;
		for (size_t k = 0; k < f->nedits; k++) {
			struct edit *e = f->edits[k];
			memcpy(f->new + o, f->old + from, e->start - from);
			o += e->start - from;
			size_t tl = strlen(e->text);
			memcpy(f->new + o, e->text, tl);
			o += tl;
			from = e->end;
		}
		memcpy(f->new + o, f->old + from, f->oldlen - from);
		o += f->oldlen - from;
		f->new[o] = '\0';
		f->newlen = o;
		i = j;
	}
	free(order);
	if (rc) {
		free_files(p);
		return rc;
	}
	p->built = 1;
	return MUH_OK;
}

size_t patch_nchanged(const muh_patch *p)
{
	size_t n = 0;
	for (size_t i = 0; i < p->nfiles; i++)
		n += p->files[i].oldlen != p->files[i].newlen ||
		     memcmp(p->files[i].old, p->files[i].new, p->files[i].oldlen) != 0;
	return n;
}

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

/* A change: old lines [la, lb] become the lines of new bytes [na, nb). */
struct change {
	size_t la, lb;
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
	if (rewritten && L.n) {
		/* deploy_set rewrote the file: one change, the lines between the
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
		ch[0].lb = lb;
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
		if (nch && la <= ch[nch - 1].lb) {
			ch[nch - 1].lb = lb > ch[nch - 1].lb ? lb : ch[nch - 1].lb;
		} else {
			ch[nch].la = la;
			ch[nch].lb = lb;
			ch[nch].na = (size_t)((long long)L.ls[la] + shift);
			nch++;
		}
		shift += delta;
		ch[nch - 1].nb = (size_t)((long long)L.ls[ch[nch - 1].lb + 1] + shift);
	}
	for (size_t c = 0; c < nch; c++)
		ch[c].nlines = count_lines(f->new, ch[c].na, ch[c].nb);
	strbuf_printf(s, "diff --git a/%s b/%s\n--- a/%s\n+++ b/%s\n", f->rel, f->rel, f->rel, f->rel);
	const size_t ctx = 3;
	long long line_delta = 0; /* new line number - old line number before hunk */
	for (size_t c = 0; c < nch;) {
		size_t c2 = c; /* last change in this hunk */
		while (c2 + 1 < nch && ch[c2 + 1].la - ch[c2].lb - 1 <= 2 * ctx)
			c2++;
		size_t os = ch[c].la >= ctx ? ch[c].la - ctx : 0;
		size_t oe = ch[c2].lb + ctx < L.n ? ch[c2].lb + ctx : L.n - 1;
		size_t ocount = oe - os + 1, ncount = ocount;
		for (size_t k = c; k <= c2; k++)
			ncount = ncount - (ch[k].lb - ch[k].la + 1) + ch[k].nlines;
		long long nstart = (long long)os + line_delta;
		strbuf_printf(s, "@@ -%zu,%zu +%lld,%zu @@\n", os + 1, ocount,
			  ncount ? nstart + 1 : nstart, ncount);
		size_t line = os;
		for (size_t k = c; k <= c2; k++) {
			for (; line < ch[k].la; line++)
				put_line(s, ' ', f->old, L.ls[line], L.ls[line + 1]);
			for (; line <= ch[k].lb; line++)
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
			line_delta += (long long)ch[k].nlines - (long long)(ch[k].lb - ch[k].la + 1);
		}
		for (; line <= oe; line++)
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

/* ---- applying ----------------------------------------------------------------- */

/* mkdir -p of the directory part of path. */
static int mkdirs_for(const char *path)
{
	char tmp[PATH_MAX];
	snprintf(tmp, sizeof(tmp), "%s", path);
	for (char *q = tmp + 1; *q; q++) {
		if (*q != '/')
			continue;
		*q = '\0';
		if (mkdir(tmp, 0777) && errno != EEXIST)
			return -1;
		*q = '/';
	}
	return 0;
}

/* Writes buf to path through a temporary file in the same directory and a
 * rename, keeping mode. */
static int write_atomic(const char *path, const char *buf, size_t len, mode_t mode, muh_diag *d)
{
	char tmp[PATH_MAX];
	snprintf(tmp, sizeof(tmp), "%s.muh-tmp.XXXXXX", path);
	int fd = mkstemp(tmp);
	if (fd < 0)
		goto fail;
	size_t off = 0;
	while (off < len) {
		ssize_t w = write(fd, buf + off, len - off);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			close(fd);
			unlink(tmp);
			goto fail;
		}
		off += (size_t)w;
	}
	if (fchmod(fd, mode) || fsync(fd) || close(fd)) {
		unlink(tmp);
		goto fail;
	}
	if (rename(tmp, path)) {
		unlink(tmp);
		goto fail;
	}
	return MUH_OK;
fail:
	diag_at(d, path, 0, 0, NULL);
	diag_errorf(d, "cannot write: %s (the file is unchanged)", strerror(errno));
	return MUH_EENV;
}

int patch_apply(const muh_patch *p, const char *backup_dir, int *nwritten, muh_diag *d)
{
	*nwritten = 0;
	for (size_t i = 0; i < p->nfiles; i++) {
		const struct pfile *f = &p->files[i];
		char path[PATH_MAX];
		snprintf(path, sizeof(path), "%s/%s", p->root, f->rel);
		char *cur;
		size_t curlen;
		int rc = read_file(p->root, f->rel, &cur, &curlen, d);
		if (rc)
			return rc;
		int same = curlen == f->newlen && !memcmp(cur, f->new, curlen);
		int drift = !(curlen == f->oldlen && !memcmp(cur, f->old, curlen));
		free(cur);
		if (same)
			continue; /* already applied */
		if (drift) {
			diag_at(d, path, 0, 0, NULL);
			diag_errorf(d, "refusing to write: the file changed while muh was working");
			return MUH_EINPUT;
		}
		struct stat st;
		if (stat(path, &st)) {
			diag_at(d, path, 0, 0, NULL);
			diag_errorf(d, "cannot stat: %s", strerror(errno));
			return MUH_EENV;
		}
		if (backup_dir) {
			char bpath[PATH_MAX];
			snprintf(bpath, sizeof(bpath), "%s/%s", backup_dir, f->rel);
			if (mkdirs_for(bpath)) {
				diag_at(d, bpath, 0, 0, NULL);
				diag_errorf(d, "cannot create the backup directory: %s", strerror(errno));
				return MUH_EENV;
			}
			if ((rc = write_atomic(bpath, f->old, f->oldlen, st.st_mode & 07777, d)))
				return rc;
		}
		if ((rc = write_atomic(path, f->new, f->newlen, st.st_mode & 07777, d)))
			return rc;
		(*nwritten)++;
	}
	return MUH_OK;
}

/* ---- overlays ------------------------------------------------------------------ */

static const muh_patch *ov_patch;
static const char *ov_dir;
static int ov_err;

static const struct pfile *changed_file(const muh_patch *p, const char *rel)
{
	for (size_t i = 0; i < p->nfiles; i++)
		if (!strcmp(p->files[i].rel, rel))
			return &p->files[i];
	return NULL;
}

static int ov_visit(const char *fpath, const struct stat *sb, int type, struct FTW *ftw)
{
	size_t rl = strlen(ov_patch->root);
	const char *rel = fpath + rl;
	while (*rel == '/')
		rel++;
	if (!strcmp(rel, ".git") || !strncmp(rel, ".git/", 5))
		return 0;
	char dst[PATH_MAX];
	snprintf(dst, sizeof(dst), "%s/%s", ov_dir, rel);
	if (type == FTW_D) {
		if (*rel && mkdir(dst, 0777) && errno != EEXIST)
			ov_err = errno;
		return 0;
	}
	if (type != FTW_F && type != FTW_SL)
		return 0;
	const struct pfile *f = changed_file(ov_patch, rel);
	if (f) {
		FILE *o = fopen(dst, "wb");
		if (!o || fwrite(f->new, 1, f->newlen, o) != f->newlen)
			ov_err = errno ? errno : EIO;
		if (o)
			fclose(o);
		return 0;
	}
	char abs[PATH_MAX];
	if (!realpath(fpath, abs) || symlink(abs, dst))
		ov_err = errno;
	return 0;
}

int patch_overlay(const muh_patch *p, const char *dir, muh_diag *d)
{
	if (mkdir(dir, 0777)) {
		diag_at(d, dir, 0, 0, NULL);
		diag_errorf(d, "cannot create the overlay directory: %s", strerror(errno));
		return MUH_EENV;
	}
	ov_patch = p;
	ov_dir = dir;
	ov_err = 0;
	if (nftw(p->root, ov_visit, 32, FTW_PHYS) || ov_err) {
		diag_at(d, dir, 0, 0, NULL);
		diag_errorf(d, "cannot build the overlay: %s", strerror(ov_err ? ov_err : errno));
		return MUH_EENV;
	}
	return MUH_OK;
}

static int rm_visit(const char *path, const struct stat *sb, int type, struct FTW *ftw)
{
	return type == FTW_DP ? rmdir(path) : unlink(path);
}

int patch_overlay_remove(const char *dir)
{
	struct stat st;
	if (lstat(dir, &st))
		return errno == ENOENT ? 0 : -1;
	return nftw(dir, rm_visit, 32, FTW_DEPTH | FTW_PHYS);
}

int patch_parse_id(const char *s, char *id, size_t n, int *alt)
{
	const char *br = strchr(s, '[');
	size_t len = br ? (size_t)(br - s) : strlen(s);
	if (!len || len >= n)
		return -1;
	memcpy(id, s, len);
	id[len] = '\0';
	*alt = -1;
	if (br) {
		char *end;
		long a = strtol(br + 1, &end, 10);
		if (end == br + 1 || *end != ']' || end[1] || a < 0)
			return -1;
		*alt = (int)a;
	}
	return 0;
}

const char *patch_value_text(const muh_knob *k, const char *value)
{
	if (k->eval && (!strcmp(k->eval, "True") || !strcmp(k->eval, "False")) &&
	    (!strcmp(value, "0") || !strcmp(value, "1")))
		return !strcmp(value, "1") ? "True" : "False";
	return value;
}

/* ---- knobs from a saved scan ------------------------------------------------------- */

struct patch_knobs {
	char *root;
	muh_knob *k;
	size_t n;
	void **owned; /* every allocation, freed together */
	size_t nowned, capowned;
};

static void *own(patch_knobs *K, void *ptr)
{
	if (!ptr)
		return NULL;
	if (K->nowned == K->capowned) {
		size_t nc = K->capowned ? K->capowned * 2 : 64;
		void **no = realloc(K->owned, nc * sizeof(void *));
		if (!no) {
			free(ptr);
			return NULL;
		}
		K->owned = no;
		K->capowned = nc;
	}
	K->owned[K->nowned++] = ptr;
	return ptr;
}

static const char *jstr(patch_knobs *K, const cJSON *o, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
	return cJSON_IsString(v) ? own(K, strdup(v->valuestring)) : NULL;
}

static double jnum(const cJSON *o, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
	return cJSON_IsNumber(v) ? v->valuedouble : 0;
}

static enum scan_verdict verdict_of(const char *s)
{
	static const char *names[] = {"live", "dead", "unsafe", "platform", "unknown"};
	for (int i = 0; i < 5; i++)
		if (s && !strcmp(s, names[i]))
			return (enum scan_verdict)i;
	return SCAN_UNKNOWN;
}

void patch_knobs_free(patch_knobs *K)
{
	if (!K)
		return;
	for (size_t i = 0; i < K->nowned; i++)
		free(K->owned[i]);
	free(K->owned);
	free(K);
}

int patch_knobs_load(const char *path, patch_knobs **out, muh_diag *d)
{
	*out = NULL;
	char *text;
	size_t len;
	int rc = slurp(path, &text, &len, d);
	if (rc)
		return rc == MUH_EENV ? MUH_EINPUT : rc;
	cJSON *doc = cJSON_ParseWithLength(text, len);
	if (!doc) {
		const char *at = cJSON_GetErrorPtr();
		int line = 1, col = 1;
		if (at && at >= text && at <= text + len)
			diag_linecol(text, (size_t)(at - text), &line, &col);
		diag_at(d, path, line, col, text);
		free(text);
		return diag_errorf(d, "malformed JSON: expected the output of `muh scan --json`");
	}
	patch_knobs *K = calloc(1, sizeof(*K));
	const cJSON *knobs = cJSON_GetObjectItemCaseSensitive(doc, "knobs");
	const cJSON *spans = cJSON_GetObjectItemCaseSensitive(doc, "spans");
	if (!K || !cJSON_IsArray(knobs) || !cJSON_IsObject(spans)) {
		cJSON_Delete(doc);
		patch_knobs_free(K);
		diag_at(d, path, 1, 1, text);
		free(text);
		return diag_errorf(d, "expected the output of `muh scan --json` (knobs and spans)");
	}
	K->root = (char *)jstr(K, doc, "root");
	int n = cJSON_GetArraySize(knobs);
	K->k = own(K, calloc((size_t)(n ? n : 1), sizeof(muh_knob)));
	rc = K->k ? MUH_OK : MUH_ENOMEM;
	const cJSON *o;
	cJSON_ArrayForEach(o, knobs)
	{
		if (rc)
			break;
		muh_knob *k = &K->k[K->n];
		const char *id = jstr(K, o, "id");
		const cJSON *sp = id ? cJSON_GetObjectItemCaseSensitive(spans, id) : NULL;
		if (!id || !sp)
			continue;
		snprintf(k->id, sizeof(k->id), "%s", id);
		k->file = jstr(K, o, "file");
		k->name = jstr(K, o, "name");
		k->kind = jstr(K, o, "kind");
		k->value = jstr(K, o, "value");
		k->line = (int)jnum(o, "line");
		k->verdict = verdict_of(jstr(K, o, "verdict"));
		k->scope = jstr(K, sp, "scope");
		k->why = jstr(K, sp, "why");
		k->start = (uint32_t)jnum(sp, "start_byte");
		k->end = (uint32_t)jnum(sp, "end_byte");
		const char *h = jstr(K, sp, "file_fnv1a64");
		k->file_hash = h ? strtoull(h, NULL, 16) : 0;
		const cJSON *u = cJSON_GetObjectItemCaseSensitive(o, "unsafe_values");
		int nu = cJSON_GetArraySize(u);
		const char **uv = own(K, calloc((size_t)(nu ? nu : 1), sizeof(char *)));
		const cJSON *x;
		int i = 0;
		cJSON_ArrayForEach(x, u)
		{
			if (uv && cJSON_IsString(x))
				uv[i++] = own(K, strdup(x->valuestring));
		}
		k->unsafe_values = uv;
		k->nunsafe = i;
		const cJSON *ev = cJSON_GetObjectItemCaseSensitive(o, "evidence");
		int ne = cJSON_GetArraySize(ev);
		scan_step *st = own(K, calloc((size_t)(ne ? ne : 1), sizeof(scan_step)));
		i = 0;
		cJSON_ArrayForEach(x, ev)
		{
			if (!st || !cJSON_IsString(x))
				continue;
			/* "file:line: note" */
			char *s = own(K, strdup(x->valuestring));
			char *c1 = s ? strchr(s, ':') : NULL;
			if (!c1)
				continue;
			*c1 = '\0';
			st[i].file = s;
			st[i].line = atoi(c1 + 1);
			char *c2 = strchr(c1 + 1, ':');
			st[i].note = c2 ? c2 + (c2[1] == ' ' ? 2 : 1) : "";
			i++;
		}
		k->evidence = st;
		k->nevidence = i;
		const cJSON *alts = cJSON_GetObjectItemCaseSensitive(sp, "alternatives");
		int na = cJSON_GetArraySize(alts);
		scan_alt *al = own(K, calloc((size_t)(na ? na : 1), sizeof(scan_alt)));
		i = 0;
		cJSON_ArrayForEach(x, alts)
		{
			if (!al)
				break;
			al[i].text = jstr(K, x, "text");
			al[i].eval = jstr(K, x, "evaluated");
			al[i].start = (uint32_t)jnum(x, "start_byte");
			al[i].end = (uint32_t)jnum(x, "end_byte");
			al[i].line = (int)jnum(x, "line");
			i++;
		}
		k->alts = al;
		k->nalts = i;
		if (!k->file || !k->name || !k->kind)
			continue;
		K->n++;
	}
	cJSON_Delete(doc);
	free(text);
	if (rc) {
		patch_knobs_free(K);
		return rc;
	}
	*out = K;
	return MUH_OK;
}

const muh_knob *patch_knobs_find(const patch_knobs *K, const char *id)
{
	for (size_t i = 0; i < K->n; i++)
		if (!strcmp(K->k[i].id, id))
			return &K->k[i];
	return NULL;
}

const char *patch_knobs_root(const patch_knobs *K)
{
	return K->root;
}

/* ---- emitters -------------------------------------------------------------------- */

int patch_moe_filename(char *buf, size_t n, long long E, long long N, const char *device,
		       const char *dtype)
{
	char dev[128];
	snprintf(dev, sizeof(dev), "%s", device);
	for (char *q = dev; *q; q++)
		if (*q == ' ')
			*q = '_';
	if (dtype && *dtype)
		return snprintf(buf, n, "E=%lld,N=%lld,device_name=%s,dtype=%s.json", E, N, dev,
				dtype);
	return snprintf(buf, n, "E=%lld,N=%lld,device_name=%s.json", E, N, dev);
}

static const char *const moe_keys[] = {"BLOCK_SIZE_M", "BLOCK_SIZE_N", "BLOCK_SIZE_K",
				       "GROUP_SIZE_M", "num_warps",    "num_stages"};

static int find_param(const patch_best *b, const char *name)
{
	for (int i = 0; i < b->nparams; i++)
		if (!strcmp(b->names[i], name))
			return i;
	return -1;
}

static int by_batch(const void *a, const void *b)
{
	const patch_best *x = *(const patch_best *const *)a, *y = *(const patch_best *const *)b;
	return x->batch < y->batch ? -1 : x->batch > y->batch;
}

int patch_moe_json(const patch_best *best, size_t n, char **out, muh_diag *d)
{
	*out = NULL;
	const patch_best **order = malloc((n ? n : 1) * sizeof(*order));
	if (!order)
		return MUH_ENOMEM;
	for (size_t i = 0; i < n; i++)
		order[i] = &best[i];
	qsort(order, n, sizeof(*order), by_batch);
	cJSON *root = cJSON_CreateObject();
	for (size_t i = 0; i < n && root; i++) {
		const patch_best *b = order[i];
		if (i && order[i - 1]->batch == b->batch) {
			cJSON_Delete(root);
			free(order);
			return diag_errorf(d, "two results for batch size %lld", b->batch);
		}
		cJSON *e = cJSON_CreateObject();
		for (size_t k = 0; k < 6; k++) {
			int idx = find_param(b, moe_keys[k]);
			if (idx < 0) {
				cJSON_Delete(e);
				cJSON_Delete(root);
				free(order);
				return diag_errorf(d, "the result for batch %lld has no '%s'; vLLM's "
						      "loader needs all of BLOCK_SIZE_M/N/K, GROUP_SIZE_M, "
						      "num_warps, num_stages",
						   b->batch, moe_keys[k]);
			}
			cJSON_AddNumberToObject(e, moe_keys[k], (double)b->values[idx]);
		}
		char key[32];
		snprintf(key, sizeof(key), "%lld", b->batch);
		cJSON_AddItemToObject(root, key, e);
	}
	free(order);
	if (!root)
		return MUH_ENOMEM;
	*out = cJSON_Print(root);
	cJSON_Delete(root);
	return *out ? MUH_OK : MUH_ENOMEM;
}

static void macro_name(char *buf, size_t n, const char *prefix, const char *s)
{
	size_t o = (size_t)snprintf(buf, n, "%s", prefix);
	for (; *s && o + 1 < n; s++)
		buf[o++] = (char)((*s >= 'a' && *s <= 'z') ? *s - 32
				  : ((*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9')) ? *s
											    : '_');
	buf[o < n ? o : n - 1] = '\0';
}

static int valid_ident(const char *s)
{
	if (!*s || (*s >= '0' && *s <= '9'))
		return 0;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') ||
		      *s == '_'))
			return 0;
	return 1;
}

static int header_block(strbuf *s, const patch_best *b, muh_diag *d)
{
	for (int i = 0; i < b->nparams; i++) {
		if (!valid_ident(b->names[i]))
			return diag_errorf(d, "'%s' is not a C identifier; it cannot be a #define",
					   b->names[i]);
		strbuf_printf(s, "#define %s %lld\n", b->names[i], b->values[i]);
	}
	return MUH_OK;
}

int patch_c_header(const patch_best *best, size_t n, const patch_best *defaults,
		   const char *guard, char **out, muh_diag *d)
{
	*out = NULL;
	strbuf s = {0};
	char g[128];
	macro_name(g, sizeof(g), "", guard && *guard ? guard : "MUH_TUNED_H");
	strbuf_printf(&s, "/* Generated by muh patch: the fastest measured configuration per device,\n"
		      " * and the portable defaults. Define TARGET_<DEVICE> to pick a device. */\n"
		      "#ifndef %s\n#define %s\n\n",
		  g, g);
	int rc = MUH_OK;
	for (size_t i = 0; i < n && !rc; i++) {
		char t[160];
		macro_name(t, sizeof(t), "TARGET_", best[i].device);
		strbuf_printf(&s, "#%s defined(%s)\n", i ? "elif" : "if", t);
		rc = header_block(&s, &best[i], d);
	}
	if (!rc) {
		if (n)
			strbuf_printf(&s, "#else /* portable defaults */\n");
		if (defaults)
			rc = header_block(&s, defaults, d);
		if (n)
			strbuf_printf(&s, "#endif\n");
		strbuf_printf(&s, "\n#endif /* %s */\n", g);
	}
	if (rc || s.oom) {
		free(s.b);
		return rc ? rc : MUH_ENOMEM;
	}
	*out = s.b;
	return MUH_OK;
}

int patch_triton_configs(const patch_best *best, size_t n, const char *indent, char **out,
			 muh_diag *d)
{
	*out = NULL;
	strbuf s = {0};
	strbuf_put(&s, "[\n", 2);
	for (size_t i = 0; i < n; i++) {
		const patch_best *b = &best[i];
		strbuf_printf(&s, "%s    triton.Config({", indent);
		int first = 1;
		for (int k = 0; k < b->nparams; k++) {
			if (!strcmp(b->names[k], "num_warps") || !strcmp(b->names[k], "num_stages"))
				continue;
			strbuf_printf(&s, "%s'%s': %lld", first ? "" : ", ", b->names[k], b->values[k]);
			first = 0;
		}
		strbuf_put(&s, "}", 1);
		int w = find_param(b, "num_warps"), st = find_param(b, "num_stages");
		if (w >= 0)
			strbuf_printf(&s, ", num_warps=%lld", b->values[w]);
		if (st >= 0)
			strbuf_printf(&s, ", num_stages=%lld", b->values[st]);
		strbuf_put(&s, "),\n", 3);
	}
	strbuf_printf(&s, "%s]", indent);
	if (s.oom) {
		free(s.b);
		return MUH_ENOMEM;
	}
	(void)d;
	*out = s.b;
	return MUH_OK;
}
