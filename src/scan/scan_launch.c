/*
 * scan_launch.c — a deployment file read as the engine's own parser reads
 * it: launch blockers and values no registry accepts, for muh scan.
 *
 * A tree with its own argument parser (argparse, vLLM's
 * FlexibleArgumentParser, arguments generated from dataclass fields) decides
 * what a launch file may say. This file reads, from the source text of the
 * tree's non-test modules:
 *   options    every option string of every add_argument(...) call ("--x",
 *              "-x"), its choices= text and the call's text (metavar= ...);
 *              a call whose first option is not a string literal (f"--{n}",
 *              *names) makes the option set open: dataclass fields count;
 *   parse      the .parse_args( sites (argparse exits with "unrecognized
 *              arguments" there) and .parse_known_args( sites (which do not);
 *   registry   the string names given to @X.register_module(...) or
 *              @X.register(...) decorators, per X (vLLM's ToolParserManager,
 *              ReasoningParserManager);
 *   checks     `A.DEST not in B`, B or its assignment in the same file
 *              naming a registry (vLLM's api_server: an unknown
 *              --tool-call-parser raises KeyError).
 * A choices= that names a module-level dict or list literal of strings
 * (QUANTIZATION_METHODS) takes its keys.
 *
 * The verdicts (scan_launch_judge) are conservative: a blocker needs the
 * launch program to be the tree's, a parse_args() site, no parse_known_args()
 * anywhere, and a long flag that no option defines, abbreviates or (when
 * options are computed) any dataclass field names. A value is unsafe only
 * against a set known in full (a literal, or a registry with no plugin
 * argument in the file that could add to it).
 *
 * Text-level reading, on purpose: the facts needed are literal strings at
 * known call shapes; a file that cannot be read adds nothing. Must never:
 * print, write into the tree.
 */
#include "scan_launch.h"
#include "scan_host.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "muh/fileio.h"
#include "scan_env.h"
#include "strbuf.h"
#include "textcut.h"

typedef struct lopt {
	char *canon;  /* "tool_call_parser" (from the option string) */
	char *flag;   /* "--tool-call-parser" */
	int fi, line;
	char *choices; /* the choices= text, or NULL */
	char *call;    /* the call's text */
	int boolopt;   /* BooleanOptionalAction: --no-X is accepted too */
} lopt;

typedef struct lreg {
	char *cls, *name;
	int fi, line;
} lreg;

typedef struct lcheck {
	char *dest, *rhs; /* rhs resolved through a same-file assignment */
	int fi, line;
} lcheck;

struct scan_launch {
	muh_surface *s;
	lopt *opts;
	size_t nopts, capo;
	lreg *regs;
	size_t nregs, capr;
	lcheck *checks;
	size_t nchecks, capc;
	int computed, computed_fi, computed_line;
	int parse_fi[16], parse_line[16], nparse;
	int known_fi, known_line; /* a parse_known_args site (line 0: none) */
	char **src;               /* per file: its text (NULL: not read) */
	int nf;
	int oom;
};

static char *dupn(const char *p, size_t n)
{
	char *r = malloc(n + 1);
	if (r) {
		memcpy(r, p, n);
		r[n] = '\0';
	}
	return r;
}

static int line_of(const char *src, const char *p)
{
	int l = 1;
	for (const char *q = src; q < p; q++)
		l += *q == '\n';
	return l;
}

/* A plain string literal at p ('x' or "x", no prefix): its content in
 * [*s, *s + *n), *after past it; 0 if p is not one. */
static int str_at(const char *p, const char *end, const char **s, size_t *n, const char **after)
{
	if (p >= end || (*p != '\'' && *p != '"'))
		return 0;
	char q = *p;
	const char *b = p + 1, *e = b;
	while (e < end && *e != q && *e != '\n') {
		if (*e == '\\' && e + 1 < end)
			e++;
		e++;
	}
	if (e >= end || *e != q)
		return 0;
	*s = b;
	*n = (size_t)(e - b);
	*after = e + 1;
	return 1;
}

/* The end of a bracketed text that starts after its opener at p (depth 1),
 * strings skipped: one past the closer. */
static const char *close_of(const char *p, const char *end)
{
	int depth = 1;
	while (p < end && depth) {
		if (*p == '(' || *p == '[' || *p == '{')
			depth++;
		else if (*p == ')' || *p == ']' || *p == '}')
			depth--;
		else if (*p == '\'' || *p == '"') {
			const char *s, *a;
			size_t n;
			if (str_at(p, end, &s, &n, &a)) {
				p = a;
				continue;
			}
		} else if (*p == '#') {
			while (p < end && *p != '\n')
				p++;
			continue;
		}
		p++;
	}
	return p;
}

static void canon_of(const char *flag, size_t n, char *out, size_t cap)
{
	while (n && *flag == '-') {
		flag++;
		n--;
	}
	size_t o = 0;
	for (size_t i = 0; i < n && o + 1 < cap; i++)
		out[o++] = flag[i] == '-' ? '_' : flag[i];
	out[o] = '\0';
}

static int ident_ch(char c)
{
	return isalnum((unsigned char)c) || c == '_';
}

/* The next name in text from p on that stands alone (not part of another
 * name or after a '.'), one starting with an upper-case letter or '_' when
 * upper: its start in *b, its end returned; NULL at the end of text. */
static const char *next_name(const char *text, const char *p, int upper, const char **b)
{
	for (; *p; p++) {
		int starts = upper ? isupper((unsigned char)*p) || *p == '_' : ident_ch(*p);
		if (!starts || (p > text && (ident_ch(p[-1]) || p[-1] == '.')))
			continue;
		*b = p;
		while (ident_ch(*p))
			p++;
		return p;
	}
	return NULL;
}

/* Frees an option's texts (any of them NULL). */
static void lopt_free_texts(lopt *o)
{
	free(o->canon);
	free(o->flag);
	free(o->choices);
	free(o->call);
}

/* Frees a registration's texts (either NULL). */
static void lreg_free_texts(lreg *r)
{
	free(r->cls);
	free(r->name);
}

/* Frees a check's texts (either NULL). */
static void lcheck_free_texts(lcheck *ck)
{
	free(ck->dest);
	free(ck->rhs);
}

/* Room for one more element in *arr (n used of *cap, size bytes each,
 * first growth to first; array_grow): 0, or -1 with L->oom set (the array
 * unchanged). */
static int room(scan_launch *L, void *arr, size_t *cap, size_t n, size_t size, size_t first)
{
	if (array_grow(arr, cap, n, size, first)) {
		L->oom = 1;
		return -1;
	}
	return 0;
}

static void add_opt(scan_launch *L, int fi, int line, const char *flag, size_t n,
                    const char *choices, size_t nch, const char *call, size_t ncall, int boolopt)
{
	if (room(L, (void **)&L->opts, &L->capo, L->nopts, sizeof(*L->opts), 256))
		return;
	char cn[256];
	canon_of(flag, n, cn, sizeof(cn));
	lopt *o = &L->opts[L->nopts];
	memset(o, 0, sizeof(*o));
	o->canon = dupn(cn, strlen(cn));
	o->flag = dupn(flag, n);
	o->choices = choices ? dupn(choices, nch) : NULL;
	o->call = dupn(call, ncall);
	o->fi = fi;
	o->line = line;
	o->boolopt = boolopt;
	if (!o->canon || !o->flag || !o->call || (choices && !o->choices)) {
		lopt_free_texts(o);
		L->oom = 1;
		return;
	}
	L->nopts++;
}

/* add_argument(...) calls of one file. */
static void read_options(scan_launch *L, int fi, const char *src, size_t len)
{
	const char *end = src + len, *p = src;
	while ((p = memmem(p, (size_t)(end - p), "add_argument(", 13))) {
		const char *at = p;
		p += 13;
		if (at > src && ident_ch(at[-1]))
			continue; /* my_add_argument( */
		const char *ce = close_of(p, end);
		int line = line_of(src, at);
		const char *q = p;
		while (q < ce && isspace((unsigned char)*q))
			q++;
		const char *s, *a;
		size_t n;
		if (!str_at(q, ce, &s, &n, &a)) {
			if (!L->computed) { /* f"--{name}", *names, a variable */
				L->computed = 1;
				L->computed_fi = fi;
				L->computed_line = line;
			}
			continue;
		}
		/* choices= and the action, from the keywords */
		const char *ch = NULL;
		size_t nch = 0;
		const char *k = memmem(p, (size_t)(ce - p), "choices=", 8);
		if (k && !ident_ch(k[-1])) {
			const char *v = k + 8, *ve = v;
			int depth = 0;
			while (ve < ce) {
				if (*ve == '(' || *ve == '[' || *ve == '{')
					depth++;
				else if (*ve == ')' || *ve == ']' || *ve == '}') {
					if (!depth)
						break;
					depth--;
				} else if (*ve == ',' && !depth)
					break;
				else if (*ve == '\'' || *ve == '"') {
					const char *s2, *a2;
					size_t n2;
					if (str_at(ve, ce, &s2, &n2, &a2)) {
						ve = a2;
						continue;
					}
				}
				ve++;
			}
			ch = v;
			nch = (size_t)(ve - v);
		}
		int boolopt = memmem(p, (size_t)(ce - p), "BooleanOptionalAction", 21) != NULL;
		/* every positional option string */
		while (str_at(q, ce, &s, &n, &a) && n && s[0] == '-') {
			add_opt(L, fi, line, s, n, ch, nch, p, (size_t)(ce - p), boolopt);
			q = a;
			while (q < ce && (isspace((unsigned char)*q) || *q == ','))
				q++;
		}
		if (L->oom)
			return;
	}
}

/* The last dotted name before p ends at p (`ToolParserManager` of
 * `@ToolParserManager.register_module(`); copied into out. */
static void name_before(const char *src, const char *p, char *out, size_t cap)
{
	const char *b = p;
	while (b > src && ident_ch(b[-1]))
		b--;
	size_t n = (size_t)(p - b);
	if (n + 1 > cap)
		n = cap - 1;
	memcpy(out, b, n);
	out[n] = '\0';
}

static void add_reg(scan_launch *L, const char *cls, const char *name, size_t n, int fi,
                    int line)
{
	if (room(L, (void **)&L->regs, &L->capr, L->nregs, sizeof(*L->regs), 64))
		return;
	lreg *r = &L->regs[L->nregs];
	r->cls = dupn(cls, strlen(cls));
	r->name = dupn(name, n);
	r->fi = fi;
	r->line = line;
	if (!r->cls || !r->name) {
		lreg_free_texts(r);
		L->oom = 1;
		return;
	}
	L->nregs++;
}

/* @X.register_module("a") / @X.register(["a", "b"]) decorators of one file. */
static void read_registries(scan_launch *L, int fi, const char *src, size_t len)
{
	static const char *const pats[] = {".register_module(", ".register("};
	const char *end = src + len;
	for (int w = 0; w < 2; w++) {
		size_t pl = strlen(pats[w]);
		const char *p = src;
		while ((p = memmem(p, (size_t)(end - p), pats[w], pl))) {
			const char *dot = p;
			p += pl;
			/* a decorator: '@' starts the dotted name on its line */
			const char *b = dot;
			while (b > src && (ident_ch(b[-1]) || b[-1] == '.'))
				b--;
			if (b == src || b[-1] != '@')
				continue;
			char cls[128];
			name_before(src, dot, cls, sizeof(cls));
			if (!cls[0])
				continue;
			const char *ce = close_of(p, end);
			int line = line_of(src, dot);
			for (const char *q = p; q < ce;) {
				const char *s, *a;
				size_t n;
				if (str_at(q, ce, &s, &n, &a)) {
					/* name= / module_name= keyword or a positional name */
					if (n)
						add_reg(L, cls, s, n, fi, line);
					q = a;
				} else {
					q++;
				}
			}
			if (L->oom)
				return;
		}
	}
}

/* The right-hand side of the last `NAME = ...` line of src before p (any
 * indentation), up to the line's end; 0 if none. */
static int assignment_of(const char *src, const char *p, const char *name, const char **rs,
                         size_t *rn)
{
	size_t nl = strlen(name);
	int found = 0;
	for (const char *q = src; q < p;) {
		const char *ls = q;
		while (q < p && (*q == ' ' || *q == '\t'))
			q++;
		if ((size_t)(p - q) > nl + 2 && !memcmp(q, name, nl) && !ident_ch(q[nl])) {
			const char *e = q + nl;
			while (e < p && *e == ' ')
				e++;
			if (*e == '=' && e[1] != '=') {
				e++;
				const char *le = memchr(e, '\n', (size_t)(p - e));
				if (!le)
					le = p;
				*rs = e;
				*rn = (size_t)(le - e);
				found = 1;
			}
		}
		(void)ls;
		const char *nx = memchr(q, '\n', (size_t)(p - q));
		if (!nx)
			break;
		q = nx + 1;
	}
	return found;
}

/* `A.DEST not in B` of one file, B resolved through an assignment. */
static void read_checks(scan_launch *L, int fi, const char *src, size_t len)
{
	const char *end = src + len, *p = src;
	while ((p = memmem(p, (size_t)(end - p), " not in ", 8))) {
		const char *at = p;
		p += 8;
		const char *b = at;
		while (b > src && ident_ch(b[-1]))
			b--;
		if (b == at || b == src || b[-1] != '.')
			continue; /* not an attribute: x.DEST */
		char dest[128];
		name_before(src, at, dest, sizeof(dest));
		const char *r = p;
		while (r < end && (ident_ch(*r) || *r == '.' || *r == '(' || *r == ')'))
			r++;
		if (r == p)
			continue;
		const char *rs = p;
		size_t rn = (size_t)(r - p);
		char first[128];
		size_t fl = strcspn(p, ".( \n:");
		if (fl >= sizeof(first))
			fl = sizeof(first) - 1;
		memcpy(first, p, fl);
		first[fl] = '\0';
		const char *as;
		size_t an;
		if (fl == rn && assignment_of(src, at, first, &as, &an)) {
			rs = as;
			rn = an;
		}
		if (room(L, (void **)&L->checks, &L->capc, L->nchecks, sizeof(*L->checks), 64))
			return;
		lcheck *ck = &L->checks[L->nchecks];
		ck->dest = dupn(dest, strlen(dest));
		ck->rhs = dupn(rs, rn);
		ck->fi = fi;
		ck->line = line_of(src, at);
		if (!ck->dest || !ck->rhs) {
			lcheck_free_texts(ck);
			L->oom = 1;
			return;
		}
		L->nchecks++;
	}
}

static void read_parse_sites(scan_launch *L, int fi, const char *src, size_t len)
{
	const char *end = src + len, *p = src;
	while ((p = memmem(p, (size_t)(end - p), ".parse_args(", 12))) {
		if (L->nparse < 16) {
			L->parse_fi[L->nparse] = fi;
			L->parse_line[L->nparse] = line_of(src, p);
			L->nparse++;
		}
		p += 12;
	}
	p = memmem(src, len, ".parse_known_args(", 18);
	if (p && !L->known_line) {
		L->known_fi = fi;
		L->known_line = line_of(src, p);
	}
}

scan_launch *scan_launch_new(muh_surface *s)
{
	scan_launch *L = calloc(1, sizeof(*L));
	if (!L)
		return NULL;
	L->s = s;
	L->nf = scan_host_nfiles(s);
	L->src = calloc((size_t)L->nf + 1, sizeof(char *));
	if (!L->src) {
		free(L);
		return NULL;
	}
	for (int fi = 0; fi < L->nf && !L->oom; fi++) {
		const char *rel, *mod;
		int is_test;
		scan_host_file(s, fi, &rel, &mod, &is_test);
		if (is_test)
			continue;
		char path[8192];
		snprintf(path, sizeof(path), "%s/%s", scan_root(s), rel);
		size_t n;
		char *src = file_read(path, &n);
		if (!src)
			continue;
		int any = memmem(src, n, "add_argument(", 13) || memmem(src, n, "register", 8) ||
		          memmem(src, n, "parse_", 6) || memmem(src, n, " not in ", 8) ||
		          memmem(src, n, "= {", 3) || memmem(src, n, "= [", 3);
		if (!any) {
			free(src);
			continue;
		}
		L->src[fi] = src;
		read_options(L, fi, src, n);
		read_registries(L, fi, src, n);
		read_checks(L, fi, src, n);
		read_parse_sites(L, fi, src, n);
	}
	if (L->oom) {
		scan_launch_free(L);
		return NULL;
	}
	return L;
}

void scan_launch_free(scan_launch *L)
{
	if (!L)
		return;
	for (size_t i = 0; i < L->nopts; i++)
		lopt_free_texts(&L->opts[i]);
	for (size_t i = 0; i < L->nregs; i++)
		lreg_free_texts(&L->regs[i]);
	for (size_t i = 0; i < L->nchecks; i++)
		lcheck_free_texts(&L->checks[i]);
	for (int i = 0; i < L->nf; i++)
		free(L->src[i]);
	free(L->src);
	free(L->opts);
	free(L->regs);
	free(L->checks);
	free(L);
}

static const char *rel_of(scan_launch *L, int fi)
{
	const char *rel, *mod;
	int t;
	scan_host_file(L->s, fi, &rel, &mod, &t);
	return rel;
}

/* The file of the program df runs, when it is the tree's: `-m MOD`, a .py
 * path ending in a file of the tree, or the name of a top-level package
 * (`vllm serve`). -1 otherwise. */
static int entry_file(scan_launch *L, const deploy_file *df)
{
	if (!df->argc)
		return -1;
	char want[1024] = "";
	int pkg = 0;
	for (size_t i = 0; i + 1 < df->first_arg && i + 1 < df->argc; i++)
		if (!strcmp(df->argv[i], "-m")) {
			snprintf(want, sizeof(want), "%s", df->argv[i + 1]);
			break;
		}
	const char *prog = df->argv[0];
	const char *base = strrchr(prog, '/');
	base = base ? base + 1 : prog;
	size_t bl = strlen(base);
	int script = !want[0] && bl > 3 && !strcmp(base + bl - 3, ".py");
	if (!want[0] && !script) {
		snprintf(want, sizeof(want), "%s", base);
		pkg = 1;
	}
	for (int fi = 0; fi < L->nf; fi++) {
		const char *rel, *mod;
		int t;
		scan_host_file(L->s, fi, &rel, &mod, &t);
		if (t)
			continue;
		if (script) {
			size_t rl = strlen(rel), pl = strlen(prog);
			const char *p = prog;
			while (!strncmp(p, "./", 2)) {
				p += 2;
				pl -= 2;
			}
			if ((rl == pl && !strcmp(rel, p)) ||
			    (pl > rl && p[pl - rl - 1] == '/' && !strcmp(p + pl - rl, rel)))
				return fi;
			continue;
		}
		if (!mod || strcmp(mod, want))
			continue;
		size_t rl = strlen(rel);
		if (pkg && !(rl >= 12 && !strcmp(rel + rl - 12, "/__init__.py")))
			continue;
		return fi;
	}
	return -1;
}

/* Does some option define the flag as written (or a longer flag it is an
 * argparse abbreviation of, or --no-X of a BooleanOptionalAction)? */
static int defined(scan_launch *L, const char *flag)
{
	char cn[256];
	size_t fl = strcspn(flag, "=");
	canon_of(flag, fl, cn, sizeof(cn));
	size_t cl = strlen(cn);
	for (size_t i = 0; i < L->nopts; i++) {
		const lopt *o = &L->opts[i];
		if (!strcmp(o->canon, cn))
			return 1;
		if (o->flag[0] == '-' && o->flag[1] == '-' && !strncmp(o->canon, cn, cl))
			return 1; /* argparse allows abbreviations */
		if (o->boolopt && !strncmp(cn, "no_", 3) && !strcmp(o->canon, cn + 3))
			return 1;
	}
	if (L->computed) { /* flags generated from fields: a field of that name */
		for (size_t q = 0;; q++) {
			const muh_knob *k = scan_host_knob(L->s, q);
			if (!k)
				break;
			if (!strcmp(k->kind, "engine_arg") && strcmp(k->scope, "<deployment>") &&
			    (!strcmp(k->name, cn) ||
			     (!strncmp(cn, "no_", 3) && !strcmp(k->name, cn + 3))))
				return 1;
		}
	}
	return 0;
}

/* The nearest defined long flag by edit distance (for the why), or NULL. */
static const char *nearest(scan_launch *L, const char *flag)
{
	const char *best = NULL;
	size_t bd = (size_t)-1, fl = strlen(flag);
	if (fl > 60)
		return NULL;
	size_t row[64];
	for (size_t i = 0; i < L->nopts; i++) {
		const char *o = L->opts[i].flag;
		size_t ol = strlen(o);
		if (ol > 60 || o[1] != '-')
			continue;
		for (size_t j = 0; j <= ol; j++)
			row[j] = j;
		for (size_t a = 1; a <= fl; a++) {
			size_t prev = row[0];
			row[0] = a;
			for (size_t j = 1; j <= ol; j++) {
				size_t cur = row[j];
				size_t c = prev + (flag[a - 1] != o[j - 1]);
				if (row[j] + 1 < c)
					c = row[j] + 1;
				if (row[j - 1] + 1 < c)
					c = row[j - 1] + 1;
				row[j] = c;
				prev = cur;
			}
		}
		if (row[ol] < bd) {
			bd = row[ol];
			best = o;
		}
	}
	return bd <= fl / 3 ? best : NULL;
}

/* A set of accepted values and where it comes from. */
typedef struct accepted {
	const char *vals[64];
	int n;
	const char *what; /* "choices=", "registered with @X.register_module" */
	int fi, line;     /* where the set is defined */
	int cfi, cline;   /* where the value is checked against it (0: the parser) */
	int registry;
} accepted;

static void acc_add(scan_launch *L, accepted *A, const char *s, size_t n)
{
	if (A->n >= 64)
		return;
	char buf[256];
	snprintf(buf, sizeof(buf), "%.*s", (int)(n < 255 ? n : 255), s);
	for (int i = 0; i < A->n; i++)
		if (!strcmp(A->vals[i], buf))
			return;
	const char *v = scan_host_str(L->s, buf);
	if (v)
		A->vals[A->n++] = v;
}

/* Only string literals, None, brackets, commas and spaces? */
static int literal_list(const char *t)
{
	const char *end = t + strlen(t);
	for (const char *p = t; p < end;) {
		const char *s, *a;
		size_t n;
		if (str_at(p, end, &s, &n, &a)) {
			p = a;
		} else if (strchr("[](){}, \t\n", *p)) {
			p++;
		} else if (!strncmp(p, "None", 4)) {
			p += 4;
		} else {
			return 0;
		}
	}
	return 1;
}

static void strings_of(scan_launch *L, accepted *A, const char *t, size_t len, int keys)
{
	const char *end = t + len;
	for (const char *p = t; p < end;) {
		const char *s, *a;
		size_t n;
		if (str_at(p, end, &s, &n, &a)) {
			const char *q = a;
			while (q < end && (*q == ' ' || *q == '\t'))
				q++;
			if (!keys || (q < end && *q == ':'))
				acc_add(L, A, s, n);
			p = a;
		} else {
			p++;
		}
	}
}

/* A module-level `NAME = {...}` / `NAME: T = [...]` of string literals: its
 * keys (dict) or items (list). */
static int module_literal(scan_launch *L, const char *name, accepted *A)
{
	size_t nl = strlen(name);
	for (int fi = 0; fi < L->nf; fi++) {
		const char *src = L->src[fi];
		if (!src)
			continue;
		size_t len = strlen(src);
		const char *end = src + len;
		for (const char *p = src; p && p < end;) {
			if ((size_t)(end - p) > nl && !memcmp(p, name, nl) && !ident_ch(p[nl])) {
				const char *e = memchr(p, '=', (size_t)(end - p));
				const char *le = memchr(p, '\n', (size_t)(end - p));
				if (e && (!le || e < le) && e[1] != '=') {
					const char *v = e + 1;
					while (v < end && *v == ' ')
						v++;
					if (v < end && (*v == '{' || *v == '[')) {
						const char *ce = close_of(v + 1, end);
						A->n = 0;
						strings_of(L, A, v, (size_t)(ce - v), *v == '{');
						if (A->n) {
							A->fi = fi;
							A->line = line_of(src, p);
							A->what = scan_host_fmt(L->s, "%s", name);
							return 1;
						}
					}
				}
			}
			const char *nx = memchr(p, '\n', (size_t)(end - p));
			p = nx ? nx + 1 : NULL;
		}
	}
	return 0;
}

/* Does s name class cls (cl bytes) as a whole word? */
static int names_word(const char *s, const char *cls, size_t cl)
{
	for (const char *p = s; (p = strstr(p, cls)); p += cl)
		if ((p == s || !ident_ch(p[-1])) && !ident_ch(p[cl]))
			return 1;
	return 0;
}

/* The right-hand sides, in file fi, of the assignments of the names text
 * uses (in text's order; a name with none has no entry): what
 * registry_in's classes are looked for in one step away from text. A NULL
 * list when there are none or file fi's source is not at hand; *n entries
 * (malloc'd, the caller frees each and the list; L->oom when memory ran
 * out, the list then holding what was found before). */
static char **assigned_texts(scan_launch *L, const char *text, int fi, size_t *n)
{
	*n = 0;
	const char *src = fi >= 0 ? L->src[fi] : NULL;
	if (!src)
		return NULL;
	const char *end = src + strlen(src);
	char **out = NULL;
	size_t cap = 0;
	const char *b;
	for (const char *p = text; (p = next_name(text, p, 0, &b));) {
		char id[128];
		size_t len = (size_t)(p - b);
		if (len >= sizeof(id) || isdigit((unsigned char)b[0]))
			continue;
		memcpy(id, b, len);
		id[len] = '\0';
		const char *rs;
		size_t rn;
		if (!assignment_of(src, end, id, &rs, &rn))
			continue;
		if (*n == cap) {
			size_t nc = cap ? 2 * cap : 8;
			char **no = realloc(out, nc * sizeof(*no));
			if (!no) {
				L->oom = 1;
				break;
			}
			out = no;
			cap = nc;
		}
		char *r = dupn(rs, rn);
		if (!r) {
			L->oom = 1;
			break;
		}
		out[(*n)++] = r;
	}
	return out;
}

/* The registry a text names, filled into A; 0 if none. A registry class
 * counts when text names it, or (one step) the assignment in file fi of a
 * name text uses does; the classes are tried in the order of their first
 * registration, and the assignments are read once for all of them. */
static int registry_in(scan_launch *L, const char *text, int fi, accepted *A)
{
	const char **tried = malloc((L->nregs ? L->nregs : 1) * sizeof(*tried));
	if (!tried) {
		L->oom = 1;
		return 0;
	}
	size_t ntried = 0, nas = 0;
	char **as = NULL;
	int have_as = 0, found = 0;
	for (size_t i = 0; i < L->nregs && !found; i++) {
		const char *cls = L->regs[i].cls;
		int seen = 0;
		for (size_t j = 0; j < ntried && !seen; j++)
			seen = !strcmp(tried[j], cls);
		if (seen)
			continue;
		tried[ntried++] = cls;
		size_t cl = strlen(cls);
		int hit = names_word(text, cls, cl);
		if (!hit && !have_as) {
			as = assigned_texts(L, text, fi, &nas);
			have_as = 1;
		}
		for (size_t j = 0; j < nas && !hit; j++)
			hit = names_word(as[j], cls, cl);
		if (!hit)
			continue;
		A->n = 0;
		for (size_t j = 0; j < L->nregs; j++)
			if (!strcmp(L->regs[j].cls, cls)) {
				acc_add(L, A, L->regs[j].name, strlen(L->regs[j].name));
				if (A->n == 1) {
					A->fi = L->regs[j].fi;
					A->line = L->regs[j].line;
				}
			}
		A->what = scan_host_fmt(L->s, "registered with @%s.register_module", cls);
		A->registry = 1;
		found = 1;
	}
	for (size_t j = 0; j < nas; j++)
		free(as[j]);
	free(as);
	free(tried);
	return found;
}

/* The set of values the option named canon accepts; 0 when not known in
 * full. */
static int accepted_of(scan_launch *L, const char *canon, accepted *A)
{
	memset(A, 0, sizeof(*A));
	for (size_t i = 0; i < L->nopts; i++) {
		const lopt *o = &L->opts[i];
		if (strcmp(o->canon, canon))
			continue;
		if (o->choices) {
			if (literal_list(o->choices)) {
				strings_of(L, A, o->choices, strlen(o->choices), 0);
				if (A->n) {
					A->fi = o->fi;
					A->line = o->line;
					A->what = "choices=";
					return 1;
				}
			}
			/* names: a registry, or module-level literals */
			if (registry_in(L, o->choices, o->fi, A)) {
				A->cfi = o->fi;
				A->cline = o->line;
				return 1;
			}
			int any = 0;
			accepted acc = *A;
			acc.n = 0;
			const char *b;
			for (const char *p = o->choices; (p = next_name(o->choices, p, 1, &b));) {
				char id[128];
				snprintf(id, sizeof(id), "%.*s", (int)(p - b), b);
				accepted one;
				memset(&one, 0, sizeof(one));
				if (strlen(id) > 2 && module_literal(L, id, &one)) {
					for (int q = 0; q < one.n; q++)
						acc_add(L, &acc, one.vals[q], strlen(one.vals[q]));
					if (!any) {
						acc.fi = one.fi;
						acc.line = one.line;
						acc.what = one.what;
					}
					any = 1;
				} else if (*p == '.' || *p == '(') {
					any = -100; /* a computed set: not known in full */
				}
			}
			if (any > 0) {
				*A = acc;
				A->cfi = o->fi;
				A->cline = o->line;
				return 1;
			}
			continue;
		}
		/* no choices: a registry the call names (metavar=, help=) */
		if (registry_in(L, o->call, o->fi, A)) {
			A->cfi = o->fi;
			A->cline = o->line;
			/* a check against it elsewhere is the better evidence */
			for (size_t c = 0; c < L->nchecks; c++)
				if (!strcmp(L->checks[c].dest, canon)) {
					A->cfi = L->checks[c].fi;
					A->cline = L->checks[c].line;
				}
			return 1;
		}
	}
	for (size_t c = 0; c < L->nchecks; c++)
		if (!strcmp(L->checks[c].dest, canon) &&
		    registry_in(L, L->checks[c].rhs, L->checks[c].fi, A)) {
			A->cfi = L->checks[c].fi;
			A->cline = L->checks[c].line;
			return 1;
		}
	return 0;
}

static void step(scan_launch *L, scan_step *st, int *n, int fi, int line, const char *note)
{
	if (*n >= SCAN_LAUNCH_STEPS || !note)
		return;
	st[*n].file = rel_of(L, fi);
	st[*n].line = line;
	st[*n].note = note;
	(*n)++;
}

int scan_launch_judge(scan_launch *L, const deploy_file *df, const deploy_arg *a,
                      enum scan_verdict *v, const char **why, const char **unsafe,
                      scan_step *steps, int *nsteps)
{
	*nsteps = 0;
	*unsafe = NULL;
	if (!L || a->kind == DEPLOY_ENV || !L->nopts)
		return 0;
	muh_surface *s = L->s;
	/* a launch blocker: a long flag the tree's parser does not define */
	int entry = a->flag[0] == '-' && a->flag[1] == '-' ? entry_file(L, df) : -1;
	if (entry >= 0 && L->nparse && !L->known_line && !defined(L, a->flag)) {
		int pi = 0;
		for (int i = 0; i < L->nparse; i++)
			if (L->parse_fi[i] == entry) {
				pi = i;
				break;
			}
		const char *pr = rel_of(L, L->parse_fi[pi]);
		const char *near = nearest(L, a->flag);
		*v = SCAN_BLOCKER;
		*why = scan_host_fmt(
		    s, "launch blocker: the tree's parser defines no %s (%s:%d exits with "
		       "'unrecognized arguments')%s%s",
		    a->flag, pr, L->parse_line[pi], near ? "; nearest: " : "", near ? near : "");
		step(L, steps, nsteps, L->parse_fi[pi], L->parse_line[pi],
		     scan_host_fmt(s, "the server parses its command line here (parse_args): %s is "
		                      "none of its %zu option strings",
		                   a->flag, L->nopts));
		step(L, steps, nsteps, entry, 1,
		     scan_host_fmt(s, "the deployment file runs %s", rel_of(L, entry)));
		if (near)
			for (size_t i = 0; i < L->nopts; i++)
				if (!strcmp(L->opts[i].flag, near)) {
					step(L, steps, nsteps, L->opts[i].fi, L->opts[i].line,
					     scan_host_fmt(s, "add_argument('%s', ...): the nearest option",
					                   near));
					break;
				}
		return 1;
	}
	if (a->kind != DEPLOY_OPT)
		return 0;
	accepted A;
	if (!accepted_of(L, a->name, &A) || !A.n)
		return 0;
	for (int i = 0; i < A.n; i++)
		if (!strcmp(A.vals[i], a->value))
			return 0;
	/* a plugin argument may register more names */
	const char *plugin = NULL;
	for (size_t i = 0; A.registry && i < df->nargs && !plugin; i++)
		if (df->args[i].kind != DEPLOY_ENV && strstr(df->args[i].name, "plugin"))
			plugin = df->args[i].flag;
	strbuf all = {0};
	for (int i = 0; i < A.n; i++)
		strbuf_printf(&all, "%s'%s'", i ? ", " : "", A.vals[i]);
	char list[900]; /* at a word, with how much more (textcut.h) */
	text_cut(list, sizeof(list), all.b);
	free(all.b);
	const char *cr = A.cline ? rel_of(L, A.cfi) : NULL;
	const char *dr = rel_of(L, A.fi);
	if (plugin) {
		*v = SCAN_UNKNOWN;
		*why = scan_host_fmt(s, "%s is not %s in the tree (%s:%d), but %s may register it",
		                     a->value, A.what, dr, A.line, plugin);
	} else {
		*v = SCAN_UNSAFE;
		*unsafe = scan_host_fmt(s, "not in (%s)", list);
		*why = scan_host_fmt(s, "%s %s: not %s (%s:%d)%s%s", a->flag, a->value, A.what, dr,
		                     A.line, cr ? "; checked at " : "",
		                     cr ? scan_host_fmt(s, "%s:%d", cr, A.cline) : "");
	}
	step(L, steps, nsteps, A.fi, A.line,
	     scan_host_fmt(s, "%s: the accepted values of %s are %s", A.what, a->flag, list));
	if (A.cline)
		step(L, steps, nsteps, A.cfi, A.cline,
		     scan_host_fmt(s, "%s is checked against them here", a->name));
	return 1;
}
