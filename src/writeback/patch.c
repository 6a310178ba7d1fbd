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
 * This file holds the plans, the checks, overlays and saved-scan knobs; the
 * diff is src/writeback/patch_diff.c, the application and its journal
 * src/writeback/patch_apply.c, the emitters src/writeback/patch_emit.c (shared: src/writeback/patch_int.h).
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
#include "json_int.h"
#include "strbuf.h"
#include "pyfile.h"

#include <libfyaml.h>
#include <tree_sitter/api.h>
#include "patch_int.h"

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

int patch_ends_with(const char *s, const char *suf)
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
	if ((k->kind && !strcmp(k->kind, "json_config")) || (k->file && patch_ends_with(k->file, ".json"))) {
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
	if (array_grow(&p->edits, &p->cap, p->nedits, sizeof(*p->edits), 8))
		return NULL;
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
int patch_slurp(const char *path, char **buf, size_t *len, muh_diag *d)
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

int patch_slurp_input(const char *path, char **buf, size_t *len, muh_diag *d)
{
	int rc = patch_slurp(path, buf, len, d);
	return rc == MUH_EENV ? MUH_EINPUT : rc;
}

/* Reads root/rel whole. */
static int read_file(const char *root, const char *rel, char **buf, size_t *len, muh_diag *d)
{
	char path[PATH_MAX];
	snprintf(path, sizeof(path), "%s/%s", root, rel);
	return patch_slurp(path, buf, len, d);
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
	if (patch_ends_with(f->rel, ".py")) {
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
	int json = patch_ends_with(f->rel, ".json");
	if (json || patch_ends_with(f->rel, ".yaml") || patch_ends_with(f->rel, ".yml")) {
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

/* The member name of o (*arr; an array, or anything else: no elements)
 * and zeroed room, owned by K, for its elements (at least one, elem bytes
 * each); NULL when out of memory. */
static void *own_array_room(patch_knobs *K, const cJSON *o, const char *name, size_t elem, const cJSON **arr)
{
	*arr = cJSON_GetObjectItemCaseSensitive(o, name);
	int n = cJSON_GetArraySize(*arr);
	return own(K, calloc((size_t)(n ? n : 1), elem));
}

int patch_knobs_load(const char *path, patch_knobs **out, muh_diag *d)
{
	*out = NULL;
	char *text;
	size_t len;
	int rc = patch_slurp_input(path, &text, &len, d);
	if (rc)
		return rc;
	cJSON *doc = json_parse_at(text, len, path, d);
	if (!doc) {
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
		const cJSON *u, *ev, *alts;
		const char **uv = own_array_room(K, o, "unsafe_values", sizeof(char *), &u);
		const cJSON *x;
		int i = 0;
		cJSON_ArrayForEach(x, u)
		{
			if (uv && cJSON_IsString(x))
				uv[i++] = own(K, strdup(x->valuestring));
		}
		k->unsafe_values = uv;
		k->nunsafe = i;
		scan_step *st = own_array_room(K, o, "evidence", sizeof(scan_step), &ev);
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
		scan_alt *al = own_array_room(K, sp, "alternatives", sizeof(scan_alt), &alts);
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

