/*
 * patch_emit.c — the write-back formats: the vLLM fused-MoE config JSON and
 * its file name, a C header of defines, triton.Config lists and autotune
 * lists, plus which results fit a request (dtype) and whether the engine
 * reads what is written (patch_engine_reads).
 *
 * Must never: write a file or print; the texts are the caller's to write.
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

/* Whether a and b are the same text but for blanks and line ends. */
static int same_but_blanks(const char *a, size_t la, const char *b, size_t lb)
{
	size_t i = 0, j = 0;
	for (;;) {
		while (i < la && strchr(" \t\r\n", a[i]))
			i++;
		while (j < lb && strchr(" \t\r\n", b[j]))
			j++;
		if (i == la || j == lb)
			return i == la && j == lb;
		if (a[i++] != b[j++])
			return 0;
	}
}

/* Whether the list k already holds the entry e (as written, but for blanks). */
static int list_holds(const muh_knob *k, const char *e, size_t len)
{
	for (int i = 0; i < k->nalts; i++)
		if (k->alts[i].text &&
		    same_but_blanks(k->alts[i].text, strlen(k->alts[i].text), e, len))
			return 1;
	return 0;
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
	/* extending: the list up to its last entry (and that entry's comma and
	 * comment), the new entries, the rest; else a new list. An entry the
	 * list already holds is not added again; none left: the list as it is
	 * (a write-back that changes nothing) */
	int ext = extend && k->nalts;
	unsigned char *dup = calloc(n ? n : 1, 1);
	size_t nnew = n;
	if (!dup)
		return MUH_ENOMEM;
	for (size_t i = 0; ext && i < n; i++) {
		strbuf e = {0};
		autotune_entry(&e, k, &best[i], q, stages_first);
		if (e.oom) {
			free(e.b);
			free(dup);
			return MUH_ENOMEM;
		}
		dup[i] = (unsigned char)list_holds(k, e.b, e.n);
		nnew -= dup[i];
		free(e.b);
	}
	if (ext && !nnew) {
		free(dup);
		*out = strndup(text + k->start, k->end - k->start);
		return *out ? MUH_OK : MUH_ENOMEM;
	}
	size_t at = 0;
	if (ext) {
		at = k->alts[k->nalts - 1].end;
		size_t e = at;
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
	} else {
		strbuf_put(&s, "[", 1);
	}
	if (comment)
		strbuf_printf(&s, "%s%s# %s", nl, indent, comment);
	if (comment && nnew < n)
		strbuf_printf(&s, " (%zu already in the list)", n - nnew);
	for (size_t i = 0; i < n; i++) {
		if (dup[i])
			continue;
		strbuf_printf(&s, "%s%s", nl, indent);
		autotune_entry(&s, k, &best[i], q, stages_first);
		strbuf_put(&s, ",", 1);
	}
	if (ext)
		strbuf_put(&s, text + at, k->end - at);
	else
		strbuf_printf(&s, "%s%s]", nl, close);
	free(dup);
	if (s.oom) {
		free(s.b);
		return MUH_ENOMEM;
	}
	*out = s.b;
	return MUH_OK;
}
