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

const TSLanguage *tree_sitter_python(void);

struct edit {
	char id[20];
	char *file; /* relative to root */
	uint32_t start, end;
	char *text;
	uint64_t hash; /* file hash at scan time; 0 = unknown */
	char *deploy;  /* a deployment file's argument: its knob name, set by
	                  deploy_set (argv-aware) instead of a byte edit */
	int whole;     /* text is the file's whole new content (patch_plan_set_file) */
	int comment;   /* text ends in a # comment: only at the end of a line */
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
	int follow_symlinks; /* patch_plan_follow_symlinks */
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

/* Compares a proposed value with an unsafe one by spelling, ignoring
 * surrounding blanks: the fallback when either is not a literal. */
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

/* ---- Python literals ------------------------------------------------------
 * A small evaluator for the values a knob takes: None, True, False, ints
 * (decimal, 0x, 0o, 0b, with _), floats, strings (any quotes and prefixes
 * r/u/b, adjacent ones joined), under parentheses, unary + and -, and `not`,
 * with an optional trailing comment. Anything else is "not a literal"
 * (names, calls, tuples), which the checks treat as unknown. */

enum lit_type { LIT_NONE, LIT_BOOL, LIT_INT, LIT_FLOAT, LIT_STR, LIT_BYTES };

struct lit {
	enum lit_type t;
	double num;    /* bool, int, float */
	int truth;     /* Python's bool(value) */
	const char *s; /* LIT_STR/LIT_BYTES: the first string's body (raw) */
	size_t slen;   /* total body length of the joined strings */
};

static const char *lit_type_name(enum lit_type t)
{
	static const char *n[] = {"None", "bool", "int", "float", "str", "bytes"};
	return n[t];
}

static const char *lit_ws(const char *q)
{
	while (*q == ' ' || *q == '\t' || *q == '\r' || *q == '\f')
		q++;
	return q;
}

static int ident_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

/* A word w at q, not followed by an identifier character. */
static int lit_word(const char *q, const char *w)
{
	size_t n = strlen(w);
	return !strncmp(q, w, n) && !ident_char(q[n]);
}

/* One string literal at q (prefix and quotes); returns the end or NULL. */
static const char *lit_string(const char *q, struct lit *v, int *bytes)
{
	int raw = 0;
	*bytes = 0;
	for (int i = 0; i < 2 && strchr("rRbBuU", *q) && *q; i++, q++) {
		if (*q == 'r' || *q == 'R')
			raw = 1;
		else if (*q == 'b' || *q == 'B')
			*bytes = 1;
	}
	char qc = *q;
	if (qc != '\'' && qc != '"')
		return NULL;
	int triple = q[1] == qc && q[2] == qc;
	q += triple ? 3 : 1;
	const char *body = q;
	for (;;) {
		if (!*q)
			return NULL;
		if (*q == '\\' && !raw && q[1]) {
			q += 2;
			continue;
		}
		if (*q == '\\' && raw && q[1]) {
			q += 2;
			continue;
		}
		if (*q == qc && (!triple || (q[1] == qc && q[2] == qc)))
			break;
		q++;
	}
	if (!v->s)
		v->s = body;
	v->slen += (size_t)(q - body);
	return q + (triple ? 3 : 1);
}

static const char *lit_expr(const char *q, struct lit *v, int depth);

/* atom := ( expr ) | number | string+ | None | True | False */
static const char *lit_atom(const char *q, struct lit *v, int depth)
{
	q = lit_ws(q);
	memset(v, 0, sizeof(*v));
	if (*q == '(') {
		q = lit_expr(q + 1, v, depth + 1);
		if (!q)
			return NULL;
		q = lit_ws(q);
		return *q == ')' ? q + 1 : NULL;
	}
	if (lit_word(q, "None")) {
		v->t = LIT_NONE;
		return q + 4;
	}
	if (lit_word(q, "True") || lit_word(q, "False")) {
		v->t = LIT_BOOL;
		v->truth = *q == 'T';
		v->num = v->truth;
		return q + (v->truth ? 4 : 5);
	}
	if ((*q >= '0' && *q <= '9') || (*q == '.' && q[1] >= '0' && q[1] <= '9')) {
		char buf[128];
		size_t n = 0;
		const char *e = q;
		int isfloat = 0, base = 10;
		if (q[0] == '0' && strchr("xXoObB", q[1]) && q[1]) {
			base = (q[1] == 'x' || q[1] == 'X') ? 16 : (q[1] == 'o' || q[1] == 'O') ? 8 : 2;
			e = q + 2;
		}
		for (; ident_char(*e) || *e == '.' ||
		       ((*e == '+' || *e == '-') && base == 10 && (e[-1] == 'e' || e[-1] == 'E'));
		     e++) {
			if (*e == '_')
				continue;
			if (n + 1 >= sizeof(buf))
				return NULL;
			if (base == 10 && (*e == '.' || *e == 'e' || *e == 'E'))
				isfloat = 1;
			buf[n++] = *e;
		}
		buf[n] = '\0';
		char *end;
		if (base != 10) {
			errno = 0;
			unsigned long long x = strtoull(buf, &end, base);
			if (!n || *end)
				return NULL;
			v->num = errno == ERANGE ? 1.8446744073709552e19 : (double)x;
			v->t = LIT_INT;
		} else if (isfloat) {
			v->num = strtod(buf, &end);
			if (*end)
				return NULL;
			v->t = LIT_FLOAT;
		} else {
			for (size_t i = 0; i < n; i++)
				if (buf[i] < '0' || buf[i] > '9')
					return NULL;
			v->num = strtod(buf, &end);
			v->t = LIT_INT;
		}
		v->truth = v->num != 0;
		return e;
	}
	int bytes, first = 1;
	const char *e;
	while ((e = lit_string(q, v, &bytes))) {
		if (first)
			v->t = bytes ? LIT_BYTES : LIT_STR;
		else if ((v->t == LIT_BYTES) != bytes)
			return NULL;
		first = 0;
		q = lit_ws(e);
	}
	if (first)
		return NULL;
	v->truth = v->slen != 0;
	return q;
}

/* expr := not expr | - expr | + expr | atom */
static const char *lit_expr(const char *q, struct lit *v, int depth)
{
	if (depth > 64)
		return NULL;
	q = lit_ws(q);
	if (lit_word(q, "not")) {
		q = lit_expr(q + 3, v, depth + 1);
		if (!q)
			return NULL;
		int t = !v->truth;
		memset(v, 0, sizeof(*v));
		v->t = LIT_BOOL;
		v->truth = t;
		v->num = t;
		return q;
	}
	if (*q == '-' || *q == '+') {
		char sign = *q;
		q = lit_expr(q + 1, v, depth + 1);
		if (!q || (v->t != LIT_BOOL && v->t != LIT_INT && v->t != LIT_FLOAT))
			return NULL;
		if (v->t == LIT_BOOL)
			v->t = LIT_INT;
		if (sign == '-')
			v->num = -v->num;
		return q;
	}
	return lit_atom(q, v, depth);
}

/* Evaluates text as one Python literal (see above). 0, or -1 when it is
 * not one. */
static int lit_eval(const char *text, struct lit *v)
{
	if (!text)
		return -1;
	const char *q = lit_expr(text, v, 0);
	if (!q)
		return -1;
	q = lit_ws(q);
	return *q == '\0' || *q == '#' ? 0 : -1;
}

/* Whether value is unsafe where the scan found unsafe: by evaluated value
 * when both are literals (a bool compares by truth, so (False), not True,
 * 0, 0.0, None and '' all match False; numbers by number; strings by
 * body), by spelling otherwise. */
static int unsafe_match(const char *value, const char *unsafe);

/* The scan's ranges of unsafe values: "< 4096", ">= 8", "!= 2", "== 0"
 * (an assert rejects them) and "not in ('a', 'b')" (an if/elif chain
 * raises for any other value). 1 / 0 when unsafe is such a range, -1 when
 * it is a plain value. */
static int unsafe_range(const char *value, const char *unsafe)
{
	if (!strncmp(unsafe, "not in (", 8)) {
		size_t n = strlen(unsafe);
		if (n < 9 || unsafe[n - 1] != ')')
			return -1;
		char buf[1024];
		snprintf(buf, sizeof(buf), "%.*s", (int)(n - 9), unsafe + 8);
		/* split at commas outside quotes */
		char *p = buf, *start = buf;
		char q = 0;
		for (;; p++) {
			if (q) {
				if (*p == '\\' && p[1])
					p++;
				else if (*p == q)
					q = 0;
				if (!*p)
					break;
				continue;
			}
			if (*p == '\'' || *p == '"') {
				q = *p;
				continue;
			}
			if (*p == ',' || !*p) {
				char end = *p;
				*p = '\0';
				if (unsafe_match(value, start))
					return 0; /* an accepted value */
				if (!end)
					break;
				start = p + 1;
			}
		}
		return 1;
	}
	const char *ops[] = {"<=", ">=", "!=", "==", "<", ">"};
	for (int i = 0; i < 6; i++) {
		size_t l = strlen(ops[i]);
		if (strncmp(unsafe, ops[i], l) || unsafe[l] != ' ')
			continue;
		struct lit a, b;
		if (lit_eval(value, &a) || lit_eval(unsafe + l + 1, &b) ||
		    (a.t != LIT_INT && a.t != LIT_FLOAT) || (b.t != LIT_INT && b.t != LIT_FLOAT))
			return 0;
		double x = a.num, y = b.num;
		switch (i) {
		case 0:
			return x <= y;
		case 1:
			return x >= y;
		case 2:
			return x != y;
		case 3:
			return x == y;
		case 4:
			return x < y;
		default:
			return x > y;
		}
	}
	return -1;
}

static int unsafe_match(const char *value, const char *unsafe)
{
	int r = unsafe_range(value, unsafe);
	if (r >= 0)
		return r;
	struct lit a, b;
	if (lit_eval(value, &a) || lit_eval(unsafe, &b))
		return same_value(value, unsafe);
	if (b.t == LIT_BOOL)
		return a.truth == b.truth;
	if (b.t == LIT_NONE)
		return a.t == LIT_NONE;
	if (b.t == LIT_INT || b.t == LIT_FLOAT)
		return (a.t == LIT_INT || a.t == LIT_FLOAT || a.t == LIT_BOOL) && a.num == b.num;
	return a.t == b.t && a.slen == b.slen && !strncmp(a.s, b.s, a.slen);
}

/* Counts tree-sitter's ERROR and MISSING nodes under n; *first gets the
 * first one's start byte. */
static size_t ts_errors(TSNode n, uint32_t *first, int depth)
{
	if (depth > 4000 || !ts_node_has_error(n))
		return 0;
	size_t c = 0;
	if (!strcmp(ts_node_type(n), "ERROR") || ts_node_is_missing(n)) {
		if (*first == UINT32_MAX || ts_node_start_byte(n) < *first)
			*first = ts_node_start_byte(n);
		c++;
	}
	uint32_t k = ts_node_child_count(n);
	for (uint32_t i = 0; i < k; i++)
		c += ts_errors(ts_node_child(n, i), first, depth + 1);
	return c;
}

/* Parses Python source; returns the number of ERROR/MISSING nodes (and the
 * first one's byte in *first), or (size_t)-1 when the parser cannot run.
 * With single_expr, also checks that the source is one expression
 * statement: *single gets 1 when it is. */
static size_t py_errors(const char *src, size_t n, uint32_t *first, int *single, int *comment)
{
	*first = UINT32_MAX;
	if (n > UINT32_MAX / 2)
		return (size_t)-1;
	TSParser *p = ts_parser_new();
	if (!p)
		return (size_t)-1;
	ts_parser_set_language(p, tree_sitter_python());
	TSTree *t = ts_parser_parse_string(p, NULL, src, (uint32_t)n);
	size_t c = (size_t)-1;
	if (t) {
		TSNode root = ts_tree_root_node(t);
		c = ts_errors(root, first, 0);
		if (single) {
			uint32_t stmts = 0, exprs = 0;
			TSNode st = root;
			for (uint32_t i = 0; i < ts_node_named_child_count(root); i++) {
				TSNode ch = ts_node_named_child(root, i);
				if (!strcmp(ts_node_type(ch), "comment")) {
					*comment = 1;
					continue;
				}
				stmts++;
				st = ch;
			}
			if (stmts == 1 && !strcmp(ts_node_type(st), "expression_statement"))
				for (uint32_t i = 0; i < ts_node_named_child_count(st); i++) {
					int isc = !strcmp(ts_node_type(ts_node_named_child(st, i)), "comment");
					exprs += !isc;
					*comment |= isc;
				}
			*single = stmts == 1 && exprs == 1;
		}
		ts_tree_delete(t);
	}
	ts_parser_delete(p);
	return c;
}

/* Whether YAML (or JSON, with json) text parses: 1, or 0 with libfyaml's
 * first error in why and its 0-based line in *line (-1 unknown). Prints
 * nothing: the diagnostics are collected. */
static int yaml_parses(const char *text, size_t n, int json, char *why, size_t wn, int *line)
{
	struct fy_diag_cfg dcfg;
	fy_diag_cfg_default(&dcfg);
	dcfg.fp = NULL;
	dcfg.output_fn = NULL;
	dcfg.level = FYET_ERROR;
	struct fy_diag *fd = fy_diag_create(&dcfg);
	if (!fd)
		return 1; /* cannot check: do not refuse */
	fy_diag_set_collect_errors(fd, true);
	struct fy_parse_cfg cfg;
	memset(&cfg, 0, sizeof(cfg));
	cfg.flags = FYPCF_QUIET | FYPCF_COLLECT_DIAG | (json ? FYPCF_JSON_FORCE : FYPCF_JSON_NONE);
	cfg.diag = fd;
	cfg.search_path = "";
	struct fy_parser *fyp = fy_parser_create(&cfg);
	int ok = 0;
	if (fyp && !fy_parser_set_string(fyp, text, n)) {
		struct fy_document *doc;
		while ((doc = fy_parse_load_document(fyp)))
			fy_parse_document_destroy(fyp, doc);
		ok = !fy_parser_get_stream_error(fyp);
	}
	if (!ok && why) {
		void *it = NULL;
		struct fy_diag_error *err = fy_diag_errors_iterate(fd, &it);
		snprintf(why, wn, "%s", err && err->msg ? err->msg : "syntax error");
		*line = err ? err->line : -1;
	}
	if (fyp)
		fy_parser_destroy(fyp);
	fy_diag_destroy(fd);
	return ok;
}

static int ends_with(const char *s, const char *suf)
{
	size_t a = strlen(s), b = strlen(suf);
	return a >= b && !strcmp(s + a - b, suf);
}

/* Checks that value can stand where knob k (alternative alt) is: one line,
 * one Python expression (JSON for a JSON file's knob), and, when the
 * knob's current value is a literal, a literal of its type (an int knob
 * takes an int, a float knob an int or a float, a bool True or False, a str
 * a string; a None default takes anything). Deployment-file arguments are
 * left to deploy_set. MUH_EINPUT with the reason. */
static int check_value(const muh_knob *k, int alt, const char *value, int *comment, muh_diag *d)
{
	*comment = 0;
	/* a whole autotune list (patch_autotune_list) spans lines, inside its brackets */
	int list = alt < 0 && k->kind && !strcmp(k->kind, "autotune") && value[0] == '[' &&
		   value[strlen(value) - 1] == ']';
	if (!list && (strchr(value, '\n') || strchr(value, '\r')))
		return diag_errorf(d, "refusing %s=%s (knob %s): a value must be one line", k->name,
				   value, k->id);
	if (k->kind && !strcmp(k->kind, "engine_arg") && k->scope &&
	    !strcmp(k->scope, "<deployment>"))
		return MUH_OK;
	if (alt < 0 && k->start == k->end) /* e.g. add_argument(...) with no default= */
		return diag_errorf(d, "refusing %s=%s (knob %s, %s:%d): it has no default in the "
				      "source to rewrite",
				   k->name, value, k->id, k->file, k->line);
	const char *cur = alt >= 0 ? k->alts[alt].eval : k->eval;
	if ((k->kind && !strcmp(k->kind, "json_config")) || (k->file && ends_with(k->file, ".json"))) {
		cJSON *v = cJSON_Parse(value), *c = cur ? cJSON_Parse(cur) : NULL;
		int ok = v != NULL;
		if (ok && c && !cJSON_IsNull(c))
			ok = (cJSON_IsNumber(c) && cJSON_IsNumber(v)) || (cJSON_IsBool(c) && cJSON_IsBool(v)) ||
			     (cJSON_IsString(c) && cJSON_IsString(v)) ||
			     (!cJSON_IsNumber(c) && !cJSON_IsBool(c) && !cJSON_IsString(c));
		cJSON_Delete(v);
		cJSON_Delete(c);
		if (!ok)
			return diag_errorf(d, "refusing %s=%s (knob %s, %s:%d): not a JSON value of the "
					      "knob's type (now %s)",
					   k->name, value, k->id, k->file, k->line, cur ? cur : "?");
		return MUH_OK;
	}
	uint32_t at;
	int single = 0;
	size_t ne = py_errors(value, strlen(value), &at, &single, comment);
	if (ne == (size_t)-1)
		return MUH_ENOMEM;
	if (ne || !single)
		return diag_errorf(d, "refusing %s=%s (knob %s, %s:%d): not one Python expression%s",
				   k->name, value, k->id, k->file, k->line,
				   ne ? " (it does not parse)" : " (it holds more than one statement)");
	struct lit c, v;
	if (lit_eval(cur, &c) || c.t == LIT_NONE)
		return MUH_OK; /* the knob's type is not known */
	int isv = !lit_eval(value, &v);
	int ok = isv && (v.t == c.t || (c.t == LIT_FLOAT && v.t == LIT_INT));
	if (!ok)
		return diag_errorf(d, "refusing %s=%s (knob %s, %s:%d): the knob is %s %s (now %s); "
				      "give %s %s literal",
				   k->name, value, k->id, k->file, k->line,
				   c.t == LIT_INT ? "an" : "a", lit_type_name(c.t), cur,
				   c.t == LIT_INT ? "an" : "a", lit_type_name(c.t));
	return MUH_OK;
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
	/* an autotune list's alternatives are its entries: the whole list is
	 * one value too (patch_autotune_list writes it) */
	if (k->nalts > 0 && alt < 0 && !(k->kind && !strcmp(k->kind, "autotune"))) {
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
		if (unsafe_match(value, k->unsafe_values[i])) {
			diag_errorf(d, "refusing %s=%s (knob %s, %s:%d): this value is unsafe and "
				       "--force does not override it; evidence:",
				    k->name, value, k->id, k->file, k->line);
			append_evidence(d, k);
			return MUH_EINPUT;
		}
	}
	if (k->verdict == SCAN_DEAD && !force && k->overwritten_line > 0) {
		diag_errorf(d, "refusing %s=%s (knob %s, %s:%d): the value is overwritten at %s:%d "
			       "before anything reads it, so the change would do nothing (--force "
			       "writes it anyway); evidence:",
			    k->name, value, k->id, k->file, k->line,
			    k->overwritten_file ? k->overwritten_file : k->file, k->overwritten_line);
		append_evidence(d, k);
		return MUH_EINPUT;
	}
	if (k->verdict == SCAN_DEAD && !force) {
		diag_errorf(d, "refusing %s=%s (knob %s, %s:%d): the knob is dead, so the change "
			       "would do nothing (--force writes it anyway); evidence:",
			    k->name, value, k->id, k->file, k->line);
		append_evidence(d, k);
		return MUH_EINPUT;
	}
	int comment = 0;
	int vrc = check_value(k, alt, value, &comment, d);
	if (vrc)
		return vrc;
	struct edit *e = plan_slot(p);
	if (!e)
		return MUH_ENOMEM;
	snprintf(e->id, sizeof(e->id), "%s", k->id);
	e->file = strdup(k->file);
	e->text = strdup(value);
	e->start = alt >= 0 ? k->alts[alt].start : k->start;
	e->end = alt >= 0 ? k->alts[alt].end : k->end;
	e->hash = k->file_hash;
	e->comment = comment;
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

/* Refuses new content that no longer parses where the old one did: a .py
 * file through tree-sitter (no ERROR or MISSING node, or no more of them
 * than before), .yaml/.yml/.json through libfyaml. */
static int check_parses(const struct pfile *f, muh_diag *d)
{
	if (f->oldlen == f->newlen && !memcmp(f->old, f->new, f->oldlen))
		return MUH_OK;
	if (ends_with(f->rel, ".py")) {
		uint32_t at0, at;
		size_t e0 = py_errors(f->old, f->oldlen, &at0, NULL, NULL);
		size_t e1 = py_errors(f->new, f->newlen, &at, NULL, NULL);
		if (e0 == (size_t)-1 || e1 == (size_t)-1)
			return MUH_ENOMEM;
		if (e1 > e0) {
			int line = 1, col = 1;
			diag_linecol(f->new, at < f->newlen ? at : f->newlen, &line, &col);
			diag_at(d, f->rel, line, col, f->new);
			return diag_errorf(d, "refusing to patch: the patched file would not parse "
					      "(a syntax error here); the tree is unchanged");
		}
		return MUH_OK;
	}
	int json = ends_with(f->rel, ".json");
	if (json || ends_with(f->rel, ".yaml") || ends_with(f->rel, ".yml")) {
		char why[256];
		int line = -1;
		if (yaml_parses(f->old, f->oldlen, json, NULL, 0, NULL) &&
		    !yaml_parses(f->new, f->newlen, json, why, sizeof(why), &line)) {
			diag_at(d, f->rel, line >= 0 ? line + 1 : 0, line >= 0 ? 1 : 0,
				line >= 0 ? f->new : NULL);
			return diag_errorf(d, "refusing to patch: the patched file would not parse as %s "
					      "(%s); the tree is unchanged",
					   json ? "JSON" : "YAML", why);
		}
	}
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
			} else if (e->comment && !e->deploy && !e->whole) {
				size_t q = e->end;
				while (q < f->oldlen && (f->old[q] == ' ' || f->old[q] == '\t' || f->old[q] == '\r'))
					q++;
				if (q < f->oldlen && f->old[q] != '\n') {
					int line, col;
					diag_linecol(f->old, e->end, &line, &col);
					diag_at(d, f->rel, line, col, f->old);
					diag_errorf(d, "knob %s: the value's # comment would hide the rest of "
						       "the line; give the value without it",
						    e->id);
					rc = MUH_EINPUT;
				}
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
	for (size_t i = 0; i < p->nfiles && !rc; i++)
		rc = check_parses(&p->files[i], d);
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

/* Line i of A in buffer a equals line j of B in buffer b. */
static int line_eq(const char *a, const struct lines *A, size_t i, const char *b, const struct lines *B, size_t j)
{
	size_t la = A->ls[i + 1] - A->ls[i], lb = B->ls[j + 1] - B->ls[j];
	return la == lb && !memcmp(a + A->ls[i], b + B->ls[j], la);
}

/* The changes of a rewritten file (a deployment file, a whole new text) as
 * a line diff: the longest common subsequence of the lines between the
 * common prefix and suffix, so that a value changed on two lines far apart
 * is two small hunks, and only changed lines are - and +. A pure insertion
 * takes its preceding (or following) unchanged line along, so every change
 * has an old line. Replaces *chp (grown as needed) and sets *nch. Returns
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
			if (k && ch[k - 1].lb + 1 == p + x) {
				ch[k - 1].lb = p + x;
				ch[k - 1].nb = B.ls[p + x + 1];
				continue;
			}
			ch[k].la = ch[k].lb = p + x;
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
		if (oi0 == oi1) { /* an insertion: take an unchanged neighbour along */
			if (oi0 > 0)
				oi0--, oj0--;
			else
				oi1++, oj1++;
		}
		if (k && ch[k - 1].lb + 1 >= oi0) { /* touches the previous change */
			ch[k - 1].lb = oi1 - 1;
			ch[k - 1].nb = B.ls[oj1];
			continue;
		}
		ch[k].la = oi0;
		ch[k].lb = oi1 - 1;
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

/* ---- applying -----------------------------------------------------------------
 * An apply is all or nothing. In order:
 *   1. every target is resolved (its real path and its parent's must lie
 *      inside the tree's real path; a symbolic link is refused unless
 *      follow_symlinks, and then its target must lie inside the tree) and
 *      read again through O_NOFOLLOW (drift while muh worked is refused);
 *   2. the originals are copied to the backup folder (fsync);
 *   3. the journal (backup folder/journal.json: the root, and per file its
 *      target, temporary file, backup, and the original's and the new
 *      content's hashes) is written, fsync'd and renamed into place;
 *   4. every temporary file is written and fsync'd;
 *   5. only then are they renamed over the targets, one by one.
 * A failure in 1-4 removes every temporary file: no file changed. A failure
 * in 5 puts the originals of the files already renamed back. What is left
 * after a kill is finished by patch_resume or undone by patch_rollback,
 * both from the journal and the hashes alone. Every write goes through the
 * fio_* layer (fileio.h), so a test can make any one of them fail. */

void patch_plan_follow_symlinks(muh_patch *p, int on)
{
	p->follow_symlinks = on;
}

/* mkdir -p of the directory part of path. */
static int mkdirs_for(const char *path)
{
	char tmp[PATH_MAX];
	snprintf(tmp, sizeof(tmp), "%s", path);
	for (char *q = tmp + 1; *q; q++) {
		if (*q != '/')
			continue;
		*q = '\0';
		struct stat st;
		if (stat(tmp, &st) && (fio_mkdir(tmp, 0777) && errno != EEXIST))
			return -1;
		*q = '/';
	}
	return 0;
}

/* Whether the absolute path p is root or lies under it. */
static int inside(const char *root, const char *p)
{
	size_t n = strlen(root);
	if (n == 1 && root[0] == '/')
		return 1;
	return !strncmp(p, root, n) && (p[n] == '/' || p[n] == '\0');
}

/* Writes buf to a new file path (O_EXCL, O_NOFOLLOW) with mode, fsync'd.
 * On failure the file is removed; -1 with errno. */
static int write_new(const char *path, const char *buf, size_t len, mode_t mode)
{
	int fd = fio_open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0600);
	if (fd < 0)
		return -1;
	if (fio_write(fd, buf, len) || fchmod(fd, mode) || fio_fsync(fd)) {
		int e = errno;
		close(fd);
		if (fio_unlink(path))
			unlink(path);
		errno = e;
		return -1;
	}
	if (fio_close(fd)) {
		int e = errno;
		if (fio_unlink(path))
			unlink(path);
		errno = e;
		return -1;
	}
	return 0;
}

/* Writes buf to path through path.muh-tmp.<pid> and a rename (fsync'd
 * first). -1 with errno; no temporary file is left. */
static int write_replace(const char *path, const char *buf, size_t len, mode_t mode)
{
	char tmp[PATH_MAX];
	if ((size_t)snprintf(tmp, sizeof(tmp), "%s.muh-tmp.%ld", path, (long)getpid()) >= sizeof(tmp)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	unlink(tmp); /* a stale one of ours */
	if (write_new(tmp, buf, len, mode))
		return -1;
	if (fio_rename(tmp, path)) {
		int e = errno;
		if (fio_unlink(tmp))
			unlink(tmp);
		errno = e;
		return -1;
	}
	return 0;
}

/* fsyncs the directory holding path (best effort: a rename is durable once
 * its directory is). */
static void sync_dir_of(const char *path)
{
	char dirp[PATH_MAX];
	snprintf(dirp, sizeof(dirp), "%s", path);
	char *sl = strrchr(dirp, '/');
	if (!sl)
		return;
	*sl = sl == dirp ? '/' : '\0';
	if (sl == dirp)
		sl[1] = '\0';
	int fd = open(dirp, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd >= 0) {
		fsync(fd);
		close(fd);
	}
}

/* Resolves where root/rel is really written: *out gets the real path (the
 * parent's real path and the file name, or with follow a link's real
 * target). Refuses (MUH_EINPUT) a path outside rootreal, and a symbolic
 * link unless follow. */
static int resolve_target(const char *root, const char *rootreal, const char *rel, int follow,
			  char *out, size_t n, muh_diag *d)
{
	char path[PATH_MAX], parent[PATH_MAX], real[PATH_MAX];
	snprintf(path, sizeof(path), "%s/%s", root, rel);
	if (rel[0] == '/' || !strcmp(rel, "..") || !strncmp(rel, "../", 3) || strstr(rel, "/../") ||
	    ends_with(rel, "/..")) {
		diag_at(d, path, 0, 0, NULL);
		return diag_errorf(d, "refusing to write: %s is not a path inside the tree", rel);
	}
	struct stat st;
	if (lstat(path, &st)) {
		diag_at(d, path, 0, 0, NULL);
		diag_errorf(d, "cannot stat: %s", strerror(errno));
		return MUH_EENV;
	}
	if (S_ISLNK(st.st_mode)) {
		if (!realpath(path, real)) {
			diag_at(d, path, 0, 0, NULL);
			return diag_errorf(d, "refusing to write: a symbolic link that does not resolve (%s)",
					   strerror(errno));
		}
		if (!follow) {
			diag_at(d, path, 0, 0, NULL);
			return diag_errorf(d, "refusing to write: the file is a symbolic link (to %s); "
					      "muh patch does not replace links with files "
					      "(--follow-symlinks writes the file it points to, "
					      "when that lies inside the tree)",
					   real);
		}
		if (!inside(rootreal, real)) {
			diag_at(d, path, 0, 0, NULL);
			return diag_errorf(d, "refusing to write: the symbolic link points to %s, outside "
					      "the tree %s",
					   real, rootreal);
		}
		snprintf(out, n, "%s", real);
		return MUH_OK;
	}
	snprintf(parent, sizeof(parent), "%s", path);
	char *sl = strrchr(parent, '/');
	*sl = '\0';
	if (!realpath(parent[0] ? parent : "/", real)) {
		diag_at(d, path, 0, 0, NULL);
		diag_errorf(d, "cannot resolve the folder: %s", strerror(errno));
		return MUH_EENV;
	}
	if (!inside(rootreal, real)) {
		diag_at(d, path, 0, 0, NULL);
		return diag_errorf(d, "refusing to write: the file's real path is %s/%s, outside the "
				      "tree %s (a symbolic link to a folder outside)",
				   real, sl + 1, rootreal);
	}
	if ((size_t)snprintf(out, n, "%s/%s", real, sl + 1) >= n) {
		diag_at(d, path, 0, 0, NULL);
		return diag_errorf(d, "path too long");
	}
	return MUH_OK;
}

/* Reads a regular file through O_NOFOLLOW: MUH_OK with *buf, or MUH_EINPUT
 * for a link or a non-regular file, MUH_EENV when unreadable. */
static int read_nofollow(const char *path, char **buf, size_t *len, mode_t *mode, muh_diag *d)
{
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		int e = errno;
		diag_at(d, path, 0, 0, NULL);
		if (e == ELOOP)
			return diag_errorf(d, "refusing to write: the file became a symbolic link");
		diag_errorf(d, "cannot read: %s", strerror(e));
		return MUH_EENV;
	}
	struct stat st;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		close(fd);
		diag_at(d, path, 0, 0, NULL);
		return diag_errorf(d, "refusing to write: not a regular file");
	}
	if (mode)
		*mode = st.st_mode & 07777;
	*buf = file_read_fd(fd, len);
	int e = errno;
	close(fd);
	if (!*buf) {
		if (e == ENOMEM)
			return MUH_ENOMEM;
		diag_at(d, path, 0, 0, NULL);
		diag_errorf(d, "cannot read: %s", strerror(e));
		return MUH_EENV;
	}
	return MUH_OK;
}

/* One file of an apply (or of a journal). */
struct target {
	char *rel;
	char path[PATH_MAX]; /* the real path written */
	char tmp[PATH_MAX];
	char bak[PATH_MAX]; /* "" without backup */
	const char *old, *new;
	size_t oldlen, newlen;
	uint64_t oldh, newh;
	mode_t mode;
};

/* Appends ", NAME" (or "NAME") to a list in buf. */
static void list_add(char *buf, size_t n, const char *name)
{
	size_t l = strlen(buf);
	snprintf(buf + l, n - l, "%s%s", l ? ", " : "", name);
}

/* The journal's text: JSON with the root and every target. */
static char *journal_text(const char *rootreal, const struct target *t, size_t nt)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "muh_patch_journal", "1");
	cJSON_AddStringToObject(o, "root", rootreal);
	cJSON *a = cJSON_AddArrayToObject(o, "files");
	for (size_t i = 0; i < nt && a; i++) {
		cJSON *f = cJSON_CreateObject();
		char h[20];
		cJSON_AddStringToObject(f, "rel", t[i].rel);
		cJSON_AddStringToObject(f, "target", t[i].path);
		cJSON_AddStringToObject(f, "tmp", t[i].tmp);
		cJSON_AddStringToObject(f, "backup", t[i].bak);
		snprintf(h, sizeof(h), "%016llx", (unsigned long long)t[i].oldh);
		cJSON_AddStringToObject(f, "old_fnv1a64", h);
		snprintf(h, sizeof(h), "%016llx", (unsigned long long)t[i].newh);
		cJSON_AddStringToObject(f, "new_fnv1a64", h);
		cJSON_AddNumberToObject(f, "mode", (double)t[i].mode);
		cJSON_AddItemToArray(a, f);
	}
	char *s = cJSON_Print(o);
	cJSON_Delete(o);
	return s;
}

/* Removes the temporary files of t[from..nt). */
static void remove_temps(struct target *t, size_t from, size_t nt)
{
	for (size_t i = from; i < nt; i++)
		if (fio_unlink(t[i].tmp) && errno != ENOENT)
			unlink(t[i].tmp); /* the injected fault is spent: this one works */
}

/* Removes what an apply that changed no file wrote into backup_dir: the
 * journal (jpath, "" when not begun), the backups, the folders made for
 * them when empty, and TREE/.muh-backup when that is left empty too (the
 * CLI's default place), so that a refused apply leaves nothing behind. */
static void undo_backups(const struct target *t, size_t nt, const char *backup_dir, const char *jpath)
{
	if (!backup_dir)
		return;
	if (jpath[0])
		unlink(jpath);
	size_t bl = strlen(backup_dir);
	for (size_t i = 0; i < nt; i++) {
		if (!t[i].bak[0])
			continue;
		unlink(t[i].bak);
		char dir[PATH_MAX];
		snprintf(dir, sizeof(dir), "%s", t[i].bak);
		for (char *sl = strrchr(dir, '/'); sl && (size_t)(sl - dir) > bl; sl = strrchr(dir, '/')) {
			*sl = '\0';
			if (rmdir(dir))
				break;
		}
	}
	if (rmdir(backup_dir) == 0) {
		char up[PATH_MAX];
		snprintf(up, sizeof(up), "%s", backup_dir);
		char *sl = strrchr(up, '/');
		if (sl) {
			*sl = '\0';
			const char *base = strrchr(up, '/');
			base = base ? base + 1 : up;
			if (!strcmp(base, ".muh-backup"))
				rmdir(up);
		}
	}
}

int patch_apply(const muh_patch *p, const char *backup_dir, int *nwritten, muh_diag *d)
{
	*nwritten = 0;
	char rootreal[PATH_MAX];
	if (!realpath(p->root, rootreal)) {
		diag_at(d, p->root, 0, 0, NULL);
		diag_errorf(d, "cannot resolve the tree: %s", strerror(errno));
		return MUH_EENV;
	}
	struct target *t = calloc(p->nfiles ? p->nfiles : 1, sizeof(*t));
	char **cur = calloc(p->nfiles ? p->nfiles : 1, sizeof(char *));
	if (!t || !cur) {
		free(t);
		free(cur);
		return MUH_ENOMEM;
	}
	size_t nt = 0;
	int rc = MUH_OK;
	/* 1. resolve and read every target again */
	for (size_t i = 0; i < p->nfiles && !rc; i++) {
		const struct pfile *f = &p->files[i];
		struct target *x = &t[nt];
		rc = resolve_target(p->root, rootreal, f->rel, p->follow_symlinks, x->path,
				    sizeof(x->path), d);
		size_t curlen = 0;
		if (!rc)
			rc = read_nofollow(x->path, &cur[nt], &curlen, &x->mode, d);
		if (rc)
			break;
		int same = curlen == f->newlen && !memcmp(cur[nt], f->new, curlen);
		int drift = !(curlen == f->oldlen && !memcmp(cur[nt], f->old, curlen));
		free(cur[nt]);
		cur[nt] = NULL;
		if (same)
			continue; /* already applied */
		if (drift) {
			diag_at(d, x->path, 0, 0, NULL);
			rc = diag_errorf(d, "refusing to write: the file changed while muh was working; "
					    "no file changed");
			break;
		}
		for (size_t k = 0; k < nt; k++)
			if (!strcmp(t[k].path, x->path)) {
				diag_at(d, x->path, 0, 0, NULL);
				rc = diag_errorf(d, "refusing to write: %s and %s are the same file",
						 t[k].rel, f->rel);
			}
		if (rc)
			break;
		x->rel = f->rel;
		x->old = f->old;
		x->oldlen = f->oldlen;
		x->new = f->new;
		x->newlen = f->newlen;
		x->oldh = patch_fnv1a64(f->old, f->oldlen);
		x->newh = patch_fnv1a64(f->new, f->newlen);
		if ((size_t)snprintf(x->tmp, sizeof(x->tmp), "%s.muh-tmp.%ld.%zu", x->path,
				     (long)getpid(), nt) >= sizeof(x->tmp) ||
		    (backup_dir && (size_t)snprintf(x->bak, sizeof(x->bak), "%s/%s", backup_dir,
						    f->rel) >= sizeof(x->bak))) {
			diag_at(d, x->path, 0, 0, NULL);
			rc = diag_errorf(d, "path too long");
			break;
		}
		nt++;
	}
	free(cur);
	if (rc || !nt) {
		free(t);
		return rc;
	}
	/* 2. backups, 3. the journal (both removed again when the apply fails
	 * with no file changed: undo_backups) */
	char jpath[PATH_MAX] = "";
	for (size_t i = 0; i < nt && backup_dir && !rc; i++) {
		unlink(t[i].bak); /* a backup folder given twice: the newest originals */
		if (mkdirs_for(t[i].bak) || write_new(t[i].bak, t[i].old, t[i].oldlen, t[i].mode)) {
			diag_at(d, t[i].bak, 0, 0, NULL);
			diag_errorf(d, "cannot write the backup: %s; no file changed", strerror(errno));
			rc = MUH_EENV;
		}
	}
	if (!rc && backup_dir) {
		char *j = journal_text(rootreal, t, nt);
		snprintf(jpath, sizeof(jpath), "%s/journal.json", backup_dir);
		if (!j)
			rc = MUH_ENOMEM;
		else if (write_replace(jpath, j, strlen(j), 0644)) {
			diag_at(d, jpath, 0, 0, NULL);
			diag_errorf(d, "cannot write the journal: %s; no file changed", strerror(errno));
			rc = MUH_EENV;
		}
		free(j);
		if (!rc)
			sync_dir_of(jpath);
	}
	/* 4. every temporary file */
	size_t ntmp = 0;
	for (; ntmp < nt && !rc; ntmp++) {
		unlink(t[ntmp].tmp);
		if (write_new(t[ntmp].tmp, t[ntmp].new, t[ntmp].newlen, t[ntmp].mode)) {
			diag_at(d, t[ntmp].path, 0, 0, NULL);
			diag_errorf(d, "cannot write %s: %s; no file changed", t[ntmp].tmp,
				    strerror(errno));
			rc = MUH_EENV;
			break;
		}
	}
	if (rc) {
		remove_temps(t, 0, ntmp);
		undo_backups(t, nt, backup_dir, jpath);
		free(t);
		return rc;
	}
	/* 5. the renames */
	size_t done = 0;
	for (; done < nt; done++)
		if (fio_rename(t[done].tmp, t[done].path))
			break;
	if (done < nt) {
		int e = errno;
		remove_temps(t, done, nt);
		char changed[MUH_DIAG_MSG / 2] = "", restored[MUH_DIAG_MSG / 2] = "";
		for (size_t k = 0; k < done; k++) {
			if (write_replace(t[k].path, t[k].old, t[k].oldlen, t[k].mode))
				list_add(changed, sizeof(changed), t[k].rel);
			else
				list_add(restored, sizeof(restored), t[k].rel);
		}
		diag_at(d, t[done].path, 0, 0, NULL);
		if (!changed[0])
			undo_backups(t, nt, backup_dir, jpath);
		if (!changed[0])
			diag_errorf(d, "cannot rename %s into place: %s; no file changed%s%s%s",
				    t[done].tmp, strerror(e), restored[0] ? " (put back: " : "",
				    restored, restored[0] ? ")" : "");
		else
			diag_errorf(d, "cannot rename %s into place: %s; files changed (patched): %s; "
				       "restore them with `muh patch --rollback %s`",
				    t[done].tmp, strerror(e), changed, backup_dir ? backup_dir : "DIR");
		free(t);
		return MUH_EENV;
	}
	for (size_t k = 0; k < nt; k++)
		sync_dir_of(t[k].path);
	*nwritten = (int)nt;
	free(t);
	return MUH_OK;
}

/* ---- recovery from the journal -------------------------------------------- */

/* Loads backup_dir/journal.json into t (rel malloc'd; old/new unset). */
static int journal_load(const char *backup_dir, char *rootreal, size_t rn, struct target **out,
			size_t *n, muh_diag *d)
{
	char jpath[PATH_MAX];
	snprintf(jpath, sizeof(jpath), "%s/journal.json", backup_dir);
	*out = NULL;
	*n = 0;
	char *text;
	size_t len;
	int rc = slurp(jpath, &text, &len, d);
	if (rc)
		return rc == MUH_EENV ? MUH_EINPUT : rc;
	cJSON *o = cJSON_ParseWithLength(text, len);
	free(text);
	const cJSON *root = cJSON_GetObjectItemCaseSensitive(o, "root");
	const cJSON *files = cJSON_GetObjectItemCaseSensitive(o, "files");
	if (!o || !cJSON_IsString(root) || !cJSON_IsArray(files)) {
		cJSON_Delete(o);
		diag_at(d, jpath, 0, 0, NULL);
		return diag_errorf(d, "not a muh patch journal");
	}
	snprintf(rootreal, rn, "%s", root->valuestring);
	int nf = cJSON_GetArraySize(files);
	struct target *t = calloc((size_t)(nf ? nf : 1), sizeof(*t));
	if (!t) {
		cJSON_Delete(o);
		return MUH_ENOMEM;
	}
	const cJSON *f;
	size_t k = 0;
	cJSON_ArrayForEach(f, files)
	{
		const char *keys[] = {"rel", "target", "tmp", "backup", "old_fnv1a64", "new_fnv1a64"};
		const char *v[6];
		for (int i = 0; i < 6; i++) {
			const cJSON *x = cJSON_GetObjectItemCaseSensitive(f, keys[i]);
			v[i] = cJSON_IsString(x) ? x->valuestring : NULL;
		}
		const cJSON *m = cJSON_GetObjectItemCaseSensitive(f, "mode");
		if (!v[0] || !v[1] || !v[2] || !v[3] || !v[4] || !v[5] || !cJSON_IsNumber(m) ||
		    !inside(rootreal, v[1]) || !(t[k].rel = strdup(v[0]))) {
			rc = diag_errorf(d, "a malformed entry in %s", jpath);
			break;
		}
		snprintf(t[k].path, sizeof(t[k].path), "%s", v[1]);
		snprintf(t[k].tmp, sizeof(t[k].tmp), "%s", v[2]);
		snprintf(t[k].bak, sizeof(t[k].bak), "%s", v[3]);
		t[k].oldh = strtoull(v[4], NULL, 16);
		t[k].newh = strtoull(v[5], NULL, 16);
		t[k].mode = (mode_t)m->valuedouble & 07777;
		k++;
	}
	cJSON_Delete(o);
	*out = t;
	*n = k;
	if (rc)
		diag_at(d, jpath, 0, 0, NULL);
	return rc;
}

static void targets_free(struct target *t, size_t n)
{
	for (size_t i = 0; t && i < n; i++)
		free(t[i].rel);
	free(t);
}

/* The hash of a file read through O_NOFOLLOW; 1 when readable. */
static int hash_of(const char *path, uint64_t *h)
{
	char *b;
	size_t n;
	muh_diag dd;
	if (read_nofollow(path, &b, &n, NULL, &dd))
		return 0;
	*h = patch_fnv1a64(b, n);
	free(b);
	return 1;
}

/* Where each file of a journal stands: 'o' original, 'n' patched, '?' neither
 * (or unreadable); tmp_ok: its temporary file holds the new content. */
static int journal_state(struct target *t, size_t n, char *state, int *tmp_ok, muh_diag *d)
{
	char bad[MUH_DIAG_MSG / 2] = "";
	for (size_t i = 0; i < n; i++) {
		uint64_t h = 0, th = 0;
		state[i] = !hash_of(t[i].path, &h) ? '?' : h == t[i].newh ? 'n' : h == t[i].oldh ? 'o' : '?';
		tmp_ok[i] = hash_of(t[i].tmp, &th) && th == t[i].newh;
		if (state[i] == '?')
			list_add(bad, sizeof(bad), t[i].rel);
	}
	if (bad[0])
		return diag_errorf(d, "refusing: these files hold neither the original nor the patched "
				      "content (changed since the apply?): %s; nothing was changed",
				   bad);
	return MUH_OK;
}

/* Loads the journal of backup_dir and the state of each file it names
 * (journal_state): what --rollback and --resume both start from. state and
 * tmp_ok are calloc'd (n + 1 each) whatever the result; the caller frees
 * them and the targets. */
static int journal_open(const char *backup_dir, char *rootreal, size_t rn, struct target **t, size_t *n,
			char **state, int **tmp_ok, muh_diag *d)
{
	int rc = journal_load(backup_dir, rootreal, rn, t, n, d);
	*state = calloc(*n + 1, 1);
	*tmp_ok = calloc(*n + 1, sizeof(int));
	if (!rc && (!*state || !*tmp_ok))
		rc = MUH_ENOMEM;
	if (!rc)
		rc = journal_state(*t, *n, *state, *tmp_ok, d);
	return rc;
}

/* An apply killed after writing its journal's temporary file and before
 * the rename that makes it backup_dir/journal.json has changed no file of
 * the tree (nothing is written there before the journal is in place). True
 * when that is so: the journal's temporary files are removed (counted in
 * r->tmp_removed) and there is nothing else to do. */
static int journal_unfinished(const char *backup_dir, patch_recovery *r)
{
	char jpath[PATH_MAX];
	struct stat sb;
	snprintf(jpath, sizeof(jpath), "%s/journal.json", backup_dir);
	if (lstat(jpath, &sb) == 0 || errno != ENOENT)
		return 0;
	DIR *dir = opendir(backup_dir);
	if (!dir)
		return 0;
	struct dirent *e;
	int found = 0;
	while ((e = readdir(dir))) {
		if (strncmp(e->d_name, "journal.json.muh-tmp.", 21))
			continue;
		found = 1;
		snprintf(jpath, sizeof(jpath), "%s/%s", backup_dir, e->d_name);
		if (fio_unlink(jpath) == 0)
			r->tmp_removed++;
	}
	closedir(dir);
	if (found)
		r->incomplete = 1;
	return found;
}

int patch_rollback(const char *backup_dir, patch_recovery *r, muh_diag *d)
{
	memset(r, 0, sizeof(*r));
	if (journal_unfinished(backup_dir, r))
		return MUH_OK;
	char rootreal[PATH_MAX];
	struct target *t;
	size_t n;
	char *state;
	int *tmp_ok;
	int rc = journal_open(backup_dir, rootreal, sizeof(rootreal), &t, &n, &state, &tmp_ok, d);
	char **orig = calloc(n + 1, sizeof(char *));
	size_t *olen = calloc(n + 1, sizeof(size_t));
	if (!rc && (!orig || !olen))
		rc = MUH_ENOMEM;
	/* every backup needed must be there and intact before anything is written */
	for (size_t i = 0; i < n && !rc; i++) {
		if (state[i] != 'n')
			continue;
		rc = read_nofollow(t[i].bak, &orig[i], &olen[i], NULL, d);
		if (!rc && patch_fnv1a64(orig[i], olen[i]) != t[i].oldh) {
			diag_at(d, t[i].bak, 0, 0, NULL);
			rc = diag_errorf(d, "the backup does not hold the original (its hash differs); "
					    "nothing was changed");
		}
	}
	r->files = (int)n;
	char failed[MUH_DIAG_MSG / 2] = "";
	int e = 0;
	for (size_t i = 0; i < n && !rc; i++) {
		if (fio_unlink(t[i].tmp) == 0)
			r->tmp_removed++;
		if (state[i] == 'n') {
			if (write_replace(t[i].path, orig[i], olen[i], t[i].mode)) {
				e = errno;
				list_add(failed, sizeof(failed), t[i].rel);
				r->patched++;
				continue;
			}
			r->changed++;
		}
		r->original++;
	}
	if (!rc && failed[0]) {
		diag_at(d, backup_dir, 0, 0, NULL);
		rc = diag_errorf(d, "cannot restore %s: %s; run --rollback again", failed, strerror(e));
		rc = MUH_EENV;
	}
	for (size_t i = 0; orig && i < n; i++)
		free(orig[i]);
	free(orig);
	free(olen);
	free(state);
	free(tmp_ok);
	targets_free(t, n);
	return rc;
}

int patch_resume(const char *backup_dir, patch_recovery *r, muh_diag *d)
{
	memset(r, 0, sizeof(*r));
	if (journal_unfinished(backup_dir, r))
		return MUH_OK;
	char rootreal[PATH_MAX];
	struct target *t;
	size_t n;
	char *state;
	int *tmp_ok;
	int rc = journal_open(backup_dir, rootreal, sizeof(rootreal), &t, &n, &state, &tmp_ok, d);
	r->files = (int)n;
	int complete = 1, anynew = 0;
	for (size_t i = 0; i < n && !rc; i++) {
		complete &= state[i] == 'n' || tmp_ok[i];
		anynew |= state[i] == 'n';
	}
	if (!rc && !complete) {
		if (anynew) {
			diag_at(d, backup_dir, 0, 0, NULL);
			rc = diag_errorf(d, "cannot finish: some files are patched but the temporary file "
					    "of another is missing or incomplete; undo it with `muh patch "
					    "--rollback %s`",
					 backup_dir);
		} else {
			/* stopped before the renames: the tree has the originals */
			for (size_t i = 0; i < n; i++)
				if (!fio_unlink(t[i].tmp))
					r->tmp_removed++;
			r->original = (int)n;
			r->incomplete = 1;
		}
	} else if (!rc) {
		char failed[MUH_DIAG_MSG / 2] = "";
		int e = 0;
		for (size_t i = 0; i < n; i++) {
			if (state[i] == 'n') {
				if (!fio_unlink(t[i].tmp))
					r->tmp_removed++;
				r->patched++;
			} else if (fio_rename(t[i].tmp, t[i].path)) {
				e = errno;
				list_add(failed, sizeof(failed), t[i].rel);
				r->original++;
			} else {
				sync_dir_of(t[i].path);
				r->changed++;
				r->patched++;
			}
		}
		if (failed[0]) {
			diag_at(d, backup_dir, 0, 0, NULL);
			diag_errorf(d, "cannot rename %s into place: %s; run --resume again (or --rollback)",
				    failed, strerror(e));
			rc = MUH_EENV;
		}
	}
	free(state);
	free(tmp_ok);
	targets_free(t, n);
	return rc;
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

/* A verdict from its name in a saved scan (scan_verdict_name's words, one
 * list for both); an unknown name is unknown. */
static enum scan_verdict verdict_of(const char *s)
{
	for (int i = SCAN_LIVE; i <= SCAN_BLOCKER; i++)
		if (s && !strcmp(s, scan_verdict_name((enum scan_verdict)i)))
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
		k->eval = jstr(K, sp, "evaluated");
		k->start = (uint32_t)jnum(sp, "start_byte");
		k->end = (uint32_t)jnum(sp, "end_byte");
		const cJSON *ow = cJSON_GetObjectItemCaseSensitive(sp, "overwritten_at");
		if (cJSON_IsObject(ow)) {
			k->overwritten_file = jstr(K, ow, "file");
			k->overwritten_line = (int)jnum(ow, "line");
		}
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

size_t patch_knobs_count(const patch_knobs *K)
{
	return K->n;
}

const muh_knob *patch_knobs_at(const patch_knobs *K, size_t i)
{
	return i < K->n ? &K->k[i] : NULL;
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
			char *end;
			double v = strtod(b->values[idx], &end);
			if (end == b->values[idx] || *end) {
				cJSON_Delete(e);
				cJSON_Delete(root);
				free(order);
				return diag_errorf(d, "the result for batch %lld has %s=%s; vLLM's loader needs a number",
						   b->batch, moe_keys[k], b->values[idx]);
			}
			cJSON_AddNumberToObject(e, moe_keys[k], v);
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
		strbuf_printf(s, "#define %s %s", b->names[i], b->values[i]);
		const char *note = b->notes ? b->notes[i] : NULL;
		if (note) { /* a comment: no "*" "/" inside it */
			strbuf_put(s, " /* ", 4);
			for (const char *p = note; *p; p++)
				strbuf_put(s, p[0] == '*' && p[1] == '/' ? "_" : p, 1);
			strbuf_put(s, " */", 3);
		}
		strbuf_put(s, "\n", 1);
	}
	return MUH_OK;
}

/* 1 when some param of b carries a note. */
static int has_notes(const patch_best *b)
{
	for (int i = 0; b && b->notes && i < b->nparams; i++)
		if (b->notes[i])
			return 1;
	return 0;
}

/* The guard macro of a device's block: TARGET_<DEVICE>, or TARGET_HOST for
 * a result that names no device (a run of a backend without a hardware
 * profile, the cpu or worker backend: tuned on the host it ran on). */
static void target_macro(char *buf, size_t n, const char *device)
{
	macro_name(buf, n, "TARGET_", device && *device ? device : "host");
}

int patch_c_header(const patch_best *best, size_t n, const patch_best *defaults,
		   const char *guard, char **out, muh_diag *d)
{
	*out = NULL;
	char g[128];
	macro_name(g, sizeof(g), "", guard && *guard ? guard : "MUH_TUNED_H");
	int host = 0, notes = has_notes(defaults);
	for (size_t i = 0; i < n; i++) {
		notes |= has_notes(&best[i]);
		char t[160], u[160];
		target_macro(t, sizeof(t), best[i].device);
		host |= !best[i].device || !*best[i].device;
		for (size_t j = 0; j < i; j++) {
			target_macro(u, sizeof(u), best[j].device);
			if (!strcmp(t, u))
				return diag_errorf(d, "devices '%s' and '%s' both become %s; write one of them "
						      "(--run, --device)",
						   best[j].device ? best[j].device : "",
						   best[i].device ? best[i].device : "", t);
		}
	}
	strbuf s = {0};
	strbuf_printf(&s, "/* Generated by muh patch: the fastest measured configuration per device,\n"
		      " * and the portable defaults. Define TARGET_<DEVICE> to pick a device.%s%s */\n"
		      "#ifndef %s\n#define %s\n\n",
		  host ? "\n * TARGET_HOST: runs that name no device (no hardware profile), tuned on\n"
			 " * the host they ran on."
		       : "",
		  notes ? "\n * A value marked \"did not change the compiled artifact\" is the measured\n"
			  " * one, but a variant differing in that param alone built the same\n"
			  " * artifact (the same fingerprint): there it is not a knob."
			: "",
		  g, g);
	int rc = MUH_OK;
	for (size_t i = 0; i < n && !rc; i++) {
		char t[160];
		target_macro(t, sizeof(t), best[i].device);
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

/* A value as a Python literal: a number as measured ("64", "1.5"), anything
 * else quoted with q ('cg' for a string param's value). */
static void py_literal(strbuf *s, const char *v, char q)
{
	char *end;
	(void)strtod(v, &end);
	if (*v && !*end && !strchr(v, 'n') && !strchr(v, 'N') && !strchr(v, 'x') && !strchr(v, 'X')) {
		strbuf_printf(s, "%s", v); /* no nan, inf or hex: Python reads those otherwise */
		return;
	}
	strbuf_put(s, &q, 1);
	for (const char *p = v; *p; p++) {
		if (*p == q || *p == '\\')
			strbuf_put(s, "\\", 1);
		strbuf_put(s, p, 1);
	}
	strbuf_put(s, &q, 1);
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
			strbuf_printf(&s, "%s'%s': ", first ? "" : ", ", b->names[k]);
			py_literal(&s, b->values[k], '\'');
			first = 0;
		}
		strbuf_put(&s, "}", 1);
		int w = find_param(b, "num_warps"), st = find_param(b, "num_stages");
		if (w >= 0)
			strbuf_printf(&s, ", num_warps=%s", b->values[w]);
		if (st >= 0)
			strbuf_printf(&s, ", num_stages=%s", b->values[st]);
		strbuf_put(&s, "),", 2);
		for (int k = 0, first = 1; b->notes && k < b->nparams; k++) {
			if (!b->notes[k])
				continue;
			strbuf_printf(&s, "%s%s: ", first ? "  # " : "; ", b->names[k]);
			for (const char *p = b->notes[k]; *p; p++)
				strbuf_put(&s, *p == '\n' || *p == '\r' ? " " : p, 1);
			first = 0;
		}
		strbuf_put(&s, "\n", 1);
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

/* ---- where results came from, and who reads what is written ----------------- */


int patch_dtype_matches(const char *want, const char *measured)
{
	if (!want || !measured || !*measured)
		return 0;
	if (!strcasecmp(want, measured))
		return 1;
	const char *u = strchr(want, '_');
	return u && strlen(measured) == (size_t)(u - want) && !strncasecmp(want, measured, (size_t)(u - want));
}

/* A lookup knob's file-name pattern as an fnmatch pattern: quotes and an f
 * prefix dropped, every {...} a '*'. */
static void lookup_pattern(const char *s, char *out, size_t n)
{
	size_t o = 0;
	if (*s == 'f' || *s == 'F')
		s++;
	for (; *s && o + 1 < n; s++) {
		if (*s == '"' || *s == '\'')
			continue;
		if (*s == '{') {
			const char *c = strchr(s, '}');
			if (c) {
				out[o++] = '*';
				s = c;
				continue;
			}
		}
		out[o++] = *s;
	}
	out[o] = '\0';
}

enum patch_reads patch_engine_reads(const muh_knob *const *knobs, size_t n, const char *name, char *why,
				    size_t wn)
{
	const muh_knob *live = NULL, *dead = NULL;
	size_t nlookup = 0;
	for (size_t i = 0; i < n; i++) {
		const muh_knob *k = knobs[i];
		if (!k->kind || !strstr(k->kind, "lookup"))
			continue;
		nlookup++;
		char pat[1024];
		int hit = 0;
		const char *cand[] = {k->name, k->value};
		for (int c = 0; c < 2 && !hit; c++) {
			if (!cand[c])
				continue;
			lookup_pattern(cand[c], pat, sizeof(pat));
			hit = strchr(pat, '*') && !fnmatch(pat, name, 0);
		}
		if (!hit)
			continue;
		if (k->verdict == SCAN_DEAD) {
			if (!dead)
				dead = k;
		} else if (!live) {
			live = k;
		}
	}
	if (live) {
		snprintf(why, wn, "yes: the engine looks it up at %s:%d (%s, %s)", live->file, live->line, live->name,
			 scan_verdict_name(live->verdict));
		return PATCH_READS_YES;
	}
	if (dead) {
		snprintf(why, wn, "no: the lookup at %s:%d is dead (%s): a file written there does nothing", dead->file,
			 dead->line, dead->why ? dead->why : "nothing reachable reads it");
		return PATCH_READS_NO;
	}
	if (!nlookup)
		snprintf(why, wn, "unknown: the scan reports no lookup site of tuned config files (no "
				  "config_lookup knob in this tree)");
	else
		snprintf(why, wn, "unknown: none of the scan's %zu lookup site(s) matches %s", nlookup, name);
	return PATCH_READS_UNKNOWN;
}

/* The whitespace before position pos on its line, when only whitespace
 * precedes it there; else "". Into buf. */
static void line_indent(const char *text, size_t pos, char *buf, size_t n)
{
	size_t b = pos;
	while (b > 0 && (text[b - 1] == ' ' || text[b - 1] == '\t'))
		b--;
	if (b > 0 && text[b - 1] != '\n') {
		buf[0] = '\0';
		return;
	}
	snprintf(buf, n, "%.*s", (int)(pos - b), text + b);
}

/* 1 when some entry of k writes param name as a Python bool ("name": True). */
static int list_bool(const muh_knob *k, const char *name)
{
	char a[160], b[160];
	for (int i = 0; i < k->nalts; i++) {
		for (int q = 0; q < 2; q++) {
			char qc = q ? '\'' : '"';
			for (int v = 0; v < 2; v++) {
				snprintf(a, sizeof(a), "%c%s%c: %s", qc, name, qc, v ? "True" : "False");
				snprintf(b, sizeof(b), "%c%s%c:%s", qc, name, qc, v ? "True" : "False");
				if (strstr(k->alts[i].text, a) || strstr(k->alts[i].text, b))
					return 1;
			}
		}
	}
	return 0;
}

/* One triton.Config(...) entry in the list's style. */
static void autotune_entry(strbuf *s, const muh_knob *k, const patch_best *b, char q, int stages_first)
{
	strbuf_printf(s, "triton.Config({");
	int first = 1;
	for (int p = 0; p < b->nparams; p++) {
		if (!strcmp(b->names[p], "num_warps") || !strcmp(b->names[p], "num_stages"))
			continue;
		strbuf_printf(s, "%s%c%s%c: ", first ? "" : ", ", q, b->names[p], q);
		if (list_bool(k, b->names[p]) && (!strcmp(b->values[p], "0") || !strcmp(b->values[p], "1")))
			strbuf_printf(s, "%s", strcmp(b->values[p], "0") ? "True" : "False");
		else
			py_literal(s, b->values[p], q);
		first = 0;
	}
	strbuf_put(s, "}", 1);
	int w = find_param(b, "num_warps"), st = find_param(b, "num_stages");
	for (int pass = 0; pass < 2; pass++) {
		int stages = pass == 0 ? stages_first : !stages_first;
		if (stages && st >= 0)
			strbuf_printf(s, ", num_stages=%s", b->values[st]);
		if (!stages && w >= 0)
			strbuf_printf(s, ", num_warps=%s", b->values[w]);
	}
	strbuf_put(s, ")", 1);
}

int patch_autotune_list(const char *text, size_t len, const muh_knob *k, const patch_best *best, size_t n,
			int extend, const char *comment, char **out, muh_diag *d)
{
	if (comment && strpbrk(comment, "\r\n"))
		return diag_errorf(d, "the comment of an autotune list must be one line");
	*out = NULL;
	if (!k->kind || strcmp(k->kind, "autotune"))
		return diag_errorf(d, "knob %s (%s) is a %s, not an @triton.autotune configs list", k->id,
				   k->name ? k->name : "?", k->kind ? k->kind : "knob");
	if (k->end > len || k->start + 2 > k->end || text[k->start] != '[' || text[k->end - 1] != ']')
		return diag_errorf(d, "knob %s's value in %s is not a [...] list (scan again?)", k->id, k->file);
	for (int i = 0; i < k->nalts; i++)
		if (k->alts[i].start < k->start || k->alts[i].end > k->end || k->alts[i].start > k->alts[i].end)
			return diag_errorf(d, "knob %s's entries lie outside its list (scan again?)", k->id);
	const char *nl = memchr(text + k->start, '\r', k->end - k->start) ? "\r\n" : "\n";
	char indent[136], close[128], line0[128];
	line_indent(text, k->end - 1, close, sizeof(close));
	if (k->nalts)
		line_indent(text, k->alts[0].start, indent, sizeof(indent));
	else
		indent[0] = '\0';
	if (!indent[0]) { /* entries share a line: one level in from the list's line */
		size_t b = k->start;
		while (b > 0 && text[b - 1] != '\n')
			b--;
		size_t e = b;
		while (e < k->start && (text[e] == ' ' || text[e] == '\t'))
			e++;
		snprintf(line0, sizeof(line0), "%.*s", (int)(e - b), text + b);
		snprintf(indent, sizeof(indent), "%s    ", close[0] ? close : line0);
	}
	char q = '"';
	int stages_first = 0;
	if (k->nalts) {
		const char *t = k->alts[0].text, *dq = strchr(t, '"'), *sq = strchr(t, '\'');
		q = dq && (!sq || dq < sq) ? '"' : sq ? '\'' : '"';
		const char *ps = strstr(t, "num_stages"), *pw = strstr(t, "num_warps");
		stages_first = ps && (!pw || ps < pw);
	}
	strbuf s = {0};
	if (extend && k->nalts) {
		size_t at = k->alts[k->nalts - 1].end, e = at;
		while (e < k->end && (text[e] == ' ' || text[e] == '\t'))
			e++;
		int comma = e < k->end && text[e] == ',';
		if (comma) {
			at = e + 1;
			size_t c = at;
			while (c < k->end && (text[c] == ' ' || text[c] == '\t'))
				c++;
			if (c < k->end && text[c] == '#') /* a comment on the last entry's line stays there */
				while (c < k->end && text[c] != '\n' && text[c] != '\r')
					c++, at = c;
		}
		strbuf_put(&s, text + k->start, at - k->start);
		if (!comma)
			strbuf_put(&s, ",", 1);
		if (comment)
			strbuf_printf(&s, "%s%s# %s", nl, indent, comment);
		for (size_t i = 0; i < n; i++) {
			strbuf_printf(&s, "%s%s", nl, indent);
			autotune_entry(&s, k, &best[i], q, stages_first);
			strbuf_put(&s, ",", 1);
		}
		strbuf_put(&s, text + at, k->end - at);
	} else {
		strbuf_put(&s, "[", 1);
		if (comment)
			strbuf_printf(&s, "%s%s# %s", nl, indent, comment);
		for (size_t i = 0; i < n; i++) {
			strbuf_printf(&s, "%s%s", nl, indent);
			autotune_entry(&s, k, &best[i], q, stages_first);
			strbuf_put(&s, ",", 1);
		}
		strbuf_printf(&s, "%s%s]", nl, close);
	}
	if (s.oom) {
		free(s.b);
		return MUH_ENOMEM;
	}
	*out = s.b;
	return MUH_OK;
}
