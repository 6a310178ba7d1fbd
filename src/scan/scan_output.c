/*
 * scan_output.c — what muh scan hands out: verdict names, the surface as
 * JSON, text with its invalid UTF-8 escaped, and the starter specs written
 * from a surface (scan_write_specs).
 *
 * Reads a finished surface; never changes it. Writes only into the folder
 * scan_write_specs is given. Must never: print or exit.
 */
#include "muh/scan.h"

#include <cjson/cJSON.h>
#include <dirent.h>
#include <errno.h>
#include <fnmatch.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "muh/deploy.h"
#include "muh/muh.h"
#include "pyfile.h"
#include "scan_args.h"
#include "scan_cache.h"
#include "scan_env.h"
#include "scan_flow.h"
#include "scan_launch.h"
#include "scan_vendor.h"
#include "strbuf.h"
#include "textcut.h"
#include "scan_int.h"

/* ---- output ------------------------------------------------------------------------- */

/* A new object appended to array arr (NULL when memory ran out). */
static cJSON *json_append_object(cJSON *arr)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddItemToArray(arr, o);
	return o;
}

char *scan_to_json(const muh_surface *s)
{
	cJSON *root = cJSON_CreateObject();
	if (!root)
		return NULL;
	cJSON_AddStringToObject(root, "root", s->root);
	cJSON_AddNumberToObject(root, "files", (double)scan_nfiles(s));
	cJSON *knobs = cJSON_AddArrayToObject(root, "knobs");
	cJSON *spans = cJSON_AddObjectToObject(root, "spans");
	int *prio = scan_rank(s);
	for (size_t i = 0; i < s->knobs.n; i++) {
		const muh_knob *k = (const muh_knob *)s->knobs.p + i;
		cJSON *o = json_append_object(knobs);
		cJSON_AddStringToObject(o, "id", k->id);
		cJSON_AddStringToObject(o, "file", k->file);
		cJSON_AddNumberToObject(o, "line", k->line);
		cJSON_AddStringToObject(o, "name", k->name);
		cJSON_AddStringToObject(o, "kind", k->kind);
		cJSON_AddStringToObject(o, "value", k->value ? k->value : "");
		cJSON_AddStringToObject(o, "verdict", scan_verdict_name(k->verdict));
		cJSON *u = cJSON_AddArrayToObject(o, "unsafe_values");
		for (int j = 0; j < k->nunsafe; j++)
			cJSON_AddItemToArray(u, cJSON_CreateString(k->unsafe_values[j]));
		cJSON *ev = cJSON_AddArrayToObject(o, "evidence");
		for (int j = 0; j < k->nevidence; j++) {
			char buf[1200];
			snprintf(buf, sizeof(buf), "%s:%d: %s", k->evidence[j].file,
			         k->evidence[j].line, k->evidence[j].note);
			cJSON_AddItemToArray(ev, cJSON_CreateString(buf));
		}
		cJSON *sp = cJSON_CreateObject();
		cJSON_AddItemToObject(spans, k->id, sp);
		cJSON_AddStringToObject(sp, "scope", k->scope);
		cJSON_AddNumberToObject(sp, "col", k->col);
		cJSON_AddNumberToObject(sp, "end_line", k->end_line);
		cJSON_AddNumberToObject(sp, "end_col", k->end_col);
		cJSON_AddNumberToObject(sp, "start_byte", k->start);
		cJSON_AddNumberToObject(sp, "end_byte", k->end);
		if (k->eval)
			cJSON_AddStringToObject(sp, "evaluated", k->eval);
		else
			cJSON_AddNullToObject(sp, "evaluated");
		char hash[24];
		snprintf(hash, sizeof(hash), "%016llx", (unsigned long long)k->file_hash);
		cJSON_AddStringToObject(sp, "file_fnv1a64", hash);
		cJSON_AddStringToObject(sp, "why", k->why ? k->why : "");
		if (k->feeds)
			cJSON_AddStringToObject(sp, "feeds", k->feeds);
		if (prio)
			cJSON_AddStringToObject(sp, "priority", scan_priority_name(prio[i]));
		if (k->overwritten_line > 0) {
			cJSON *ow = cJSON_AddObjectToObject(sp, "overwritten_at");
			cJSON_AddStringToObject(ow, "file", k->overwritten_file ? k->overwritten_file : k->file);
			cJSON_AddNumberToObject(ow, "line", k->overwritten_line);
		}
		if (k->lookup_glob) {
			cJSON *lk = cJSON_AddObjectToObject(sp, "lookup");
			cJSON_AddStringToObject(lk, "glob", k->lookup_glob);
			cJSON_AddStringToObject(lk, "dir", k->lookup_dir ? k->lookup_dir : "");
			cJSON_AddNumberToObject(lk, "files", k->lookup_files);
		}
		cJSON *alts = cJSON_AddArrayToObject(sp, "alternatives");
		for (int j = 0; j < k->nalts; j++) {
			cJSON *a = json_append_object(alts);
			cJSON_AddStringToObject(a, "text", k->alts[j].text);
			if (k->alts[j].eval)
				cJSON_AddStringToObject(a, "evaluated", k->alts[j].eval);
			cJSON_AddNumberToObject(a, "line", k->alts[j].line);
			cJSON_AddNumberToObject(a, "start_byte", k->alts[j].start);
			cJSON_AddNumberToObject(a, "end_byte", k->alts[j].end);
		}
	}
	free(prio);
	cJSON *exc = cJSON_AddArrayToObject(root, "excluded");
	for (size_t i = 0; i < s->excluded.n; i++) {
		const scan_excluded_path *x = (const scan_excluded_path *)s->excluded.p + i;
		cJSON *o = json_append_object(exc);
		cJSON_AddStringToObject(o, "path", x->path);
		cJSON_AddStringToObject(o, "why", x->why);
	}
	cJSON *errs = cJSON_AddArrayToObject(root, "syntax_errors");
	for (size_t i = 0; i < s->diags.n; i++) {
		const muh_diag *dg = (const muh_diag *)s->diags.p + i;
		char buf[2048];
		snprintf(buf, sizeof(buf), "%s:%d:%d: %s", dg->file, dg->line, dg->col, dg->msg);
		cJSON_AddItemToArray(errs, cJSON_CreateString(buf));
	}
	cJSON *warn = cJSON_AddArrayToObject(root, "warnings");
	for (size_t i = 0; i < s->warnings.n; i++)
		cJSON_AddItemToArray(warn, cJSON_CreateString(((const char **)s->warnings.p)[i]));
	char *txt = cJSON_Print(root);
	cJSON_Delete(root);
	/* cJSON copies bytes >= 0x80 as they are, and only strings hold them:
	 * a file name or source text that is not UTF-8 is escaped here */
	char *esc = txt ? scan_escape_bytes(txt, 1) : NULL;
	free(txt);
	return esc;
}

/* The length (1-4) of the valid UTF-8 sequence at p (n bytes left), or 0
 * when the byte at p starts none (overlong forms, surrogates and code points
 * past U+10FFFF are invalid). */
static int utf8_len(const unsigned char *p, size_t n)
{
	if (p[0] < 0x80)
		return 1;
	int len = p[0] >= 0xc2 && p[0] <= 0xdf ? 2 : p[0] >= 0xe0 && p[0] <= 0xef ? 3
	                                        : p[0] >= 0xf0 && p[0] <= 0xf4   ? 4
	                                                                          : 0;
	if (!len || (size_t)len > n)
		return 0;
	for (int i = 1; i < len; i++)
		if ((p[i] & 0xc0) != 0x80)
			return 0;
	if ((p[0] == 0xe0 && p[1] < 0xa0) || (p[0] == 0xed && p[1] > 0x9f) ||
	    (p[0] == 0xf0 && p[1] < 0x90) || (p[0] == 0xf4 && p[1] > 0x8f))
		return 0;
	return len;
}

char *scan_escape_bytes(const char *text, int json)
{
	const unsigned char *p = (const unsigned char *)text;
	size_t n = strlen(text), bad = 0;
	for (size_t i = 0; i < n;) {
		int l = utf8_len(p + i, n - i);
		bad += !l;
		i += l ? (size_t)l : 1;
	}
	char *out = malloc(n + bad * 5 + 1), *o = out;
	if (!out)
		return NULL;
	for (size_t i = 0; i < n;) {
		int l = utf8_len(p + i, n - i);
		if (l) {
			memcpy(o, p + i, (size_t)l);
			o += l;
			i += (size_t)l;
			continue;
		}
		o += sprintf(o, json ? "\\udc%02x" : "\\x%02x", p[i]);
		i++;
	}
	*o = '\0';
	return out;
}

size_t scan_nwarnings(const muh_surface *s)
{
	return s->warnings.n;
}

const char *scan_warning(const muh_surface *s, size_t i)
{
	return i < s->warnings.n ? ((const char **)s->warnings.p)[i] : NULL;
}

/* Candidate values around an integer default: powers of two from v/4 to 4v
 * when v is one, else v/2, v, 2v. */
static int ladder(long long v, long long *out)
{
	int n = 0;
	if (v > 0 && (v & (v - 1)) == 0) {
		if (v > (1LL << 40)) {
			out[n++] = v;
			return n;
		}
		for (long long x = v >= 4 ? v / 4 : 1; x <= v * 4 && n < 8; x *= 2)
			out[n++] = x;
	} else if (v > 1) {
		out[n++] = v / 2;
		out[n++] = v;
		out[n++] = v * 2;
	} else {
		out[n++] = v;
	}
	return n;
}

/* Generated specs hold strings taken from a tree (file names, a served
 * model's name, a root path): any byte may be there, so none is ever
 * written raw into YAML. Length of the valid UTF-8 sequence at s (lead
 * byte >= 0x80), or 0. */
static size_t spec_utf8_len(const unsigned char *s)
{
	size_t k = s[0] >= 0xc2 && s[0] <= 0xdf ? 2 : s[0] >= 0xe0 && s[0] <= 0xef ? 3
		 : s[0] >= 0xf0 && s[0] <= 0xf4 ? 4 : 0;
	for (size_t i = 1; i < k; i++)
		if ((s[i] & 0xc0) != 0x80)
			return 0;
	if (k && ((s[0] == 0xe0 && s[1] < 0xa0) || (s[0] == 0xed && s[1] > 0x9f) ||
	          (s[0] == 0xf0 && s[1] < 0x90) || (s[0] == 0xf4 && s[1] > 0x8f)))
		return 0;
	return k;
}

/* True when t is valid UTF-8: YAML is Unicode, so a string that is not
 * cannot be a YAML value naming the same bytes. */
static int spec_utf8(const char *t)
{
	for (const unsigned char *u = (const unsigned char *)t; *u;) {
		size_t k = *u < 0x80 ? 1 : spec_utf8_len(u);
		if (!k)
			return 0;
		u += k;
	}
	return 1;
}

/* Writes t (valid UTF-8, see spec_utf8) as one YAML double-quoted scalar:
 * quote, backslash and every control character escaped, so that it can never
 * end the string, the line or the document. */
static void spec_quoted(FILE *f, const char *t)
{
	fputc('"', f);
	for (const unsigned char *u = (const unsigned char *)t; *u; u++) {
		if (*u == '"' || *u == '\\')
			fprintf(f, "\\%c", *u);
		else if (*u == '\n')
			fputs("\\n", f);
		else if (*u == '\t')
			fputs("\\t", f);
		else if (*u < 0x20 || *u == 0x7f)
			fprintf(f, "\\x%02x", *u);
		else
			fputc(*u, f);
	}
	fputc('"', f);
}

/* Writes t inside a YAML comment: printable text as is, a control character
 * or a byte that is not UTF-8 as \xHH (each byte of a line break other
 * than '\n' too), so that the comment stays one line. */
static void spec_comment(FILE *f, const char *t)
{
	for (const unsigned char *u = (const unsigned char *)t; *u;) {
		size_t k = *u < 0x80 ? (*u < 0x20 || *u == 0x7f ? 0 : 1) : spec_utf8_len(u);
		/* YAML 1.1's other line breaks: NEL, LS, PS */
		if ((k == 2 && u[1] == 0x85) || (k == 3 && u[0] == 0xe2 && u[1] == 0x80 && (u[2] == 0xa8 || u[2] == 0xa9)))
			k = 0;
		if (!k) {
			fprintf(f, "\\x%02x", *u++);
			continue;
		}
		fwrite(u, 1, k, f);
		u += k;
	}
}

/* Can c stand in a name ([A-Za-z0-9_])? */
static int spec_ident_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '_';
}

/* True when n can be a param's name: a YAML plain key and an expression's
 * name ([A-Za-z_][A-Za-z0-9_]*). */
static int spec_ident(const char *n)
{
	if (!((*n >= 'a' && *n <= 'z') || (*n >= 'A' && *n <= 'Z') || *n == '_'))
		return 0;
	for (; *n; n++)
		if (!spec_ident_char(*n))
			return 0;
	return 1;
}

/* Makes p usable in a name (a file's, a param's): every character that
 * cannot stand in one becomes '_'. */
static void spec_ident_chars(char *p)
{
	for (; *p; p++)
		if (!spec_ident_char(*p))
			*p = '_';
}

/* The head of a starter spec for the knobs of scope in file of the tree at
 * root: the comment saying where it comes from, the target, and the
 * `params:` line its params follow. */
static void spec_head(FILE *fp, const char *root, const char *file, const char *scope)
{
	static const char *const lead[] = {
	    "# starter spec written by `muh scan` from ",
	    "\n# live knobs of ",
	    " in ",
	    "; widen or narrow the value lists before tuning.\ntarget:\n  engine_tree: ",
	    "\n  file: ",
	    "\n  scope: ",
	};
	const char *text[] = {root, scope, file, root, file, scope};
	for (int i = 0; i < 6; i++) {
		fputs(lead[i], fp);
		if (i < 3)
			spec_comment(fp, text[i]); /* the comment */
		else
			spec_quoted(fp, text[i]); /* the target's strings */
	}
	fputs("\nparams:\n", fp);
}

static int spec_eligible(const muh_knob *k)
{
	if (k->verdict != SCAN_LIVE || !strcmp(k->scope, "<deployment>"))
		return 0; /* deployment files get engine specs: write_engine_spec */
	if (strcmp(k->kind, "constant") && strcmp(k->kind, "override") &&
	    strcmp(k->kind, "config_dict") && strcmp(k->kind, "capability") &&
	    strcmp(k->kind, "constexpr") && strcmp(k->kind, "engine_arg"))
		return 0;
	const char *e = k->eval ? k->eval : (k->nalts && k->alts[0].eval ? k->alts[0].eval : NULL);
	if (!e)
		return 0;
	if (!strcmp(e, "True") || !strcmp(e, "False"))
		return 1;
	char *end;
	strtoll(e, &end, 10);
	return *end == '\0';
}

/* Is this server argument worth tuning by default? Not the model, the
 * address, the seed or the device split. */
static int engine_param_name(const char *n)
{
	static const char *no[] = {"model", "host", "port", "seed", "tensor_parallel_size",
	                           "pipeline_parallel_size", "data_parallel_size", "main_gpu",
	                           "n_gpu_layers", "served_model_name", "api_key", "timeout",
	                           "max_model_len", "trust_remote_code", "disable_log_requests",
	                           "disable_log_stats", "metrics", "webui", "jinja", NULL};
	for (int i = 0; no[i]; i++)
		if (!strcmp(no[i], n))
			return 0;
	return 1;
}

/* The server arguments that move a vLLM-like engine's performance, in the
 * order the starter spec offers them; flags such as enable_auto_tool_choice
 * or disable_frontend_multiprocessing do not. */
static const char *const perf_args[] = {
    "max_num_seqs",       "max_num_batched_tokens", "enable_chunked_prefill",
    "gpu_memory_utilization", "max_model_len",      "block_size",
    "enable_prefix_caching", "num_scheduler_steps", NULL};

/* The type of a tree default as deploy_arg.type names it. */
static void infer_type_of(const char *v, char type[8])
{
	char *end;
	if (!strcmp(v, "True") || !strcmp(v, "False"))
		snprintf(type, 8, "bool");
	else if ((strtoll(v, &end, 10), *end == '\0') && *v)
		snprintf(type, 8, "int");
	else if ((strtod(v, &end), *end == '\0') && *v)
		snprintf(type, 8, "float");
	else
		snprintf(type, 8, "str");
}

static int perf_arg(const char *n)
{
	for (int i = 0; perf_args[i]; i++)
		if (!strcmp(perf_args[i], n))
			return 1;
	return 0;
}

/* path relative to the directory dir (both made absolute), into out. */
static void rel_path(const char *dir, const char *path, char *out, size_t cap)
{
	char a[PATH_MAX], b[PATH_MAX];
	if (!realpath(dir, a) || !realpath(path, b)) {
		snprintf(out, cap, "%.4000s", path);
		return;
	}
	size_t i = 0, last = 0;
	while (a[i] && a[i] == b[i]) {
		if (a[i] == '/')
			last = i;
		i++;
	}
	if (!a[i] && (b[i] == '/' || !b[i]))
		last = i;
	size_t o = 0;
	out[0] = '\0';
	for (const char *p = a + last; *p && o + 4 < cap; p++)
		if (*p == '/')
			o += (size_t)snprintf(out + o, cap - o, "../");
	snprintf(out + o, cap - o, "%s", b[last] == '/' ? b + last + 1 : b + last);
}

/* One runnable engine spec for the deployment file rel (see docs/engine.md):
 * every live-or-unknown numeric or boolean server argument is a param
 * (powers of two around the file's value, both states of a flag, a choice's
 * integer choices), default the file's value, with the engine's couplings
 * as constraints. Returns 1 when written, 0 when the file has no params,
 * or MUH_* < 0 negated on error. A file whose path is not UTF-8 gets none
 * (YAML cannot name it): 0, and *skipped counts it. */
static int write_engine_spec(const muh_surface *s, const char *dir, const char *rel, int *skipped,
                             muh_diag *d)
{
	char path[8192];
	snprintf(path, sizeof(path), "%s/%s", s->root, rel);
	deploy_file *df = NULL;
	muh_diag dd;
	if (deploy_load(path, NULL, &df, &dd))
		return 0;
	char fname[1024];
	snprintf(fname, sizeof(fname), "%s", rel);
	for (char *p = fname; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		      (*p >= '0' && *p <= '9') || *p == '_'))
			*p = '_';
	const char *base = strrchr(rel, '/');
	base = base ? base + 1 : rel;
	char stem[256];
	snprintf(stem, sizeof(stem), "%.*s", (int)strcspn(base, "."), base);
	char launch[PATH_MAX];
	rel_path(dir, path, launch, sizeof(launch)); /* relative to the spec */
	if (!spec_utf8(rel) || !spec_utf8(launch)) {
		deploy_free(df);
		(*skipped)++;
		return 0;
	}
	char out[4096];
	snprintf(out, sizeof(out), "%.2000s/%.1000s.yaml", dir, fname);
	int llama = df->schema && !strcmp(df->schema->engine, "llama.cpp");
	/* the params first, so that a file with none writes nothing */
	char *body = NULL;
	size_t blen = 0;
	FILE *mb = open_memstream(&body, &blen);
	if (!mb) {
		deploy_free(df);
		return -MUH_ENOMEM;
	}
	int np = 0, has_seqs = 0, has_btok = 0, has_ctx = 0, has_par = 0, has_b = 0, has_ub = 0;
	/* the request's model, and where the file serves */
	const deploy_arg *smn = deploy_find(df, "served_model_name");
	const deploy_arg *mdl = deploy_find(df, "model");
	const deploy_arg *hst = deploy_find(df, "host"), *prt = deploy_find(df, "port");
	char model[512] = "", host[256] = "", port[64] = "";
	if (smn && smn->kind == DEPLOY_OPT && smn->value[0])
		snprintf(model, sizeof(model), "%.*s", (int)strcspn(smn->value, " "), smn->value);
	else if (mdl && mdl->kind == DEPLOY_OPT && !llama)
		snprintf(model, sizeof(model), "%s", mdl->value);
	if (hst && hst->kind == DEPLOY_OPT)
		snprintf(host, sizeof(host), "%s", hst->value);
	if (prt && prt->kind == DEPLOY_OPT)
		snprintf(port, sizeof(port), "%s", prt->value);
	/* vLLM-like engines: the arguments that move performance, from the file
	 * or (absent there) from the tree's own default when it has one */
	size_t norder = 0, order[64];
	const muh_knob *fromtree[64] = {0};
	if (!llama) {
		for (int q = 0; perf_args[q] && norder < 64; q++) {
			const deploy_arg *a = deploy_find(df, perf_args[q]);
			if (a && a->kind != DEPLOY_ENV && !strcmp(a->name, perf_args[q])) {
				order[norder++] = (size_t)(a - df->args);
				continue;
			}
			const muh_knob *fk = scan_engine_field(s, perf_args[q]);
			if (fk && fk->eval &&
			    (fk->verdict == SCAN_LIVE ||
			     (fk->verdict == SCAN_UNSAFE && !scan_value_unsafe_any(fk, fk->eval)))) {
				fromtree[norder] = fk;
				order[norder++] = (size_t)-1;
			}
		}
	} else {
		for (size_t i = 0; i < df->nargs && norder < 64; i++)
			order[norder++] = i;
	}
	for (size_t oi = 0; oi < norder; oi++) {
		deploy_arg tmp;
		const deploy_arg *a;
		if (order[oi] == (size_t)-1) {
			const muh_knob *fk = fromtree[oi];
			memset(&tmp, 0, sizeof(tmp));
			tmp.name = (char *)fk->name;
			tmp.value = (char *)fk->eval;
			tmp.kind = DEPLOY_OPT;
			infer_type_of(fk->eval, tmp.type);
			a = &tmp;
		} else {
			a = &df->args[order[oi]];
		}
		if (a->kind == DEPLOY_ENV || (llama && !engine_param_name(a->name)) ||
		    (!llama && !perf_arg(a->name)) || !spec_ident(a->name))
			continue;
		int bad = 0;
		for (size_t q = 0; q < s->knobs.n && !bad; q++) {
			const muh_knob *k = (const muh_knob *)s->knobs.p + q;
			bad = !strcmp(k->file, rel) && !strcmp(k->scope, "<deployment>") &&
			      (!strcmp(k->name, a->name) ||
			       (a->kind == DEPLOY_NEG && !strncmp(k->name, "no_", 3) &&
			        !strcmp(k->name + 3, a->name))) &&
			      (k->verdict == SCAN_DEAD || k->verdict == SCAN_UNSAFE ||
			       k->verdict == SCAN_PLATFORM);
		}
		if (bad)
			continue;
		if (a->kind == DEPLOY_FLAG || a->kind == DEPLOY_NEG ||
		    (!strcmp(a->type, "bool") && (!strcmp(a->value, "True") ||
		                                  !strcmp(a->value, "False")))) {
			if (strcmp(a->type, "bool"))
				continue; /* an optional-value flag such as -fa */
			fprintf(mb, "  %s: {values: [0, 1], default: %d}\n", a->name,
			        a->kind == DEPLOY_NEG ? 0 : strcmp(a->value, "False") != 0);
		} else if (!strcmp(a->type, "float") && !llama) {
			char *end;
			double x = strtod(a->value, &end);
			if (*end || end == a->value || x <= 0 || x > 1)
				continue; /* gpu_memory_utilization is a fraction */
			double vals[5] = {x - 0.1, x - 0.05, x, x + 0.05, x + 0.1};
			fprintf(mb, "  %s: {values: [", a->name);
			int first = 1;
			for (int q = 0; q < 5; q++)
				if (vals[q] > 0.05 && vals[q] < 0.995) {
					fprintf(mb, "%s%.2f", first ? "" : ", ", vals[q]);
					first = 0;
				}
			fprintf(mb, "], default: %.2f}\n", x);
		} else if (!strcmp(a->type, "int") || !strcmp(a->type, "choice")) {
			char *end;
			long long v = strtoll(a->value, &end, 10);
			if (*end || end == a->value || v < 1)
				continue;
			long long vals[16];
			int nv = 0;
			const deploy_option *o = NULL;
			for (size_t q = 0; df->schema && q < df->schema->n; q++)
				if (!strcmp(df->schema->opts[q].name, a->name))
					o = &df->schema->opts[q];
			if (!strcmp(a->type, "choice")) {
				if (!o || !o->choices)
					continue;
				int ok = 1;
				for (const char *p = o->choices; *p && ok && nv < 16;) {
					long long x = strtoll(p, &end, 10);
					ok = end != p && (*end == '|' || !*end);
					if (ok)
						vals[nv++] = x;
					p = *end ? end + 1 : end;
				}
				if (!ok)
					continue;
			} else if (!strcmp(a->name, "block_size") && !llama) {
				/* the KV block sizes every vLLM's CUDA paged attention takes */
				vals[nv++] = 8;
				vals[nv++] = 16;
				vals[nv++] = 32;
				if (v != 8 && v != 16 && v != 32)
					vals[nv++] = v;
			} else if (!strcmp(a->name, "max_model_len")) {
				/* a longer context than the file's may exceed the model's */
				if (v >= 4096)
					vals[nv++] = v / 4;
				if (v >= 2048)
					vals[nv++] = v / 2;
				vals[nv++] = v;
			} else {
				nv = ladder(v, vals);
			}
			/* only values the engine accepts (the field's unsafe values) */
			const muh_knob *fk = scan_engine_field(s, a->name);
			int kept = 0;
			for (int q = 0; q < nv; q++) {
				char t[32];
				snprintf(t, sizeof(t), "%lld", vals[q]);
				if (!fk || !scan_value_unsafe_any(fk, t))
					vals[kept++] = vals[q];
			}
			nv = kept;
			if (!nv)
				continue;
			fprintf(mb, "  %s: {values: [", a->name);
			for (int q = 0; q < nv; q++)
				fprintf(mb, "%s%lld", q ? ", " : "", vals[q]);
			fprintf(mb, "], default: %lld}\n", v);
		} else {
			continue;
		}
		np++;
		has_seqs |= !strcmp(a->name, "max_num_seqs");
		has_btok |= !strcmp(a->name, "max_num_batched_tokens");
		has_ctx |= !strcmp(a->name, "ctx_size");
		has_par |= !strcmp(a->name, "parallel");
		has_b |= !strcmp(a->name, "batch_size");
		has_ub |= !strcmp(a->name, "ubatch_size");
	}
	if (fclose(mb)) {
		free(body);
		deploy_free(df);
		return -MUH_ENOMEM;
	}
	deploy_free(df);
	if (!np) {
		free(body);
		return 0;
	}
	FILE *fp = fopen(out, "w");
	if (!fp) {
		free(body);
		diag_clear(d);
		diag_errorf(d, "cannot write '%s': %s", out, strerror(errno));
		return -MUH_EENV;
	}
	fputs("# engine spec written by `muh scan` from the deployment file ", fp);
	spec_comment(fp, rel);
	fputs("\nname: ", fp);
	spec_quoted(fp, stem);
	fputs("\ntarget:\n  backend: engine\n  launch: ", fp);
	spec_quoted(fp, launch);
	fputs("\n  ready: {http: /health, timeout: 600s}\n", fp);
	if (port[0] || host[0]) {
		fputs("  # the file serves on ", fp);
		spec_comment(fp, host);
		if (port[0]) {
			fputc(':', fp);
			spec_comment(fp, port);
		}
		fputs("; muh starts each variant on a free port of 127.0.0.1 (target.port: N to keep one)\n", fp);
	}
	fputs("load:            # fill in: requests, concurrency, prompt/output tokens\n"
	      "  endpoint: /v1/completions\n", fp);
	if (model[0] && spec_utf8(model)) {
		fputs("  model: ", fp);
		spec_quoted(fp, model);
		fputs("     # the file's served model name\n", fp);
	} else if (model[0]) {
		fputs("  # the file's served model name is not UTF-8: set load.model\n", fp);
	}
	fprintf(fp,
	        "  concurrency: 8\n"
	        "  requests: 64\n"
	        "  prompt_tokens: 256\n"
	        "  output_tokens: 128\n"
	        "objective:\n"
	        "  maximize: output_tokens_per_s\n"
	        "  subject_to: [\"errors == 0\"]\n"
	        "params:          # default = the file's value\n%s",
	        body);
	free(body);
	int nc = 0;
	const char *cs[3];
	if (!llama && has_seqs && has_btok)
		cs[nc++] = "max_num_batched_tokens >= max_num_seqs";
	if (llama && has_ctx && has_par)
		cs[nc++] = "ctx_size // parallel >= 256 + 128";
	if (llama && has_b && has_ub)
		cs[nc++] = "ubatch_size <= batch_size";
	if (nc) {
		fprintf(fp, "constraints:     # the engine's known couplings\n");
		for (int q = 0; q < nc; q++)
			fprintf(fp, "  - \"%s\"\n", cs[q]);
	}
	if (fclose(fp)) {
		diag_clear(d);
		diag_errorf(d, "cannot write '%s': %s", out, strerror(errno));
		return -MUH_EENV;
	}
	return 1;
}

int scan_write_specs(const muh_surface *s, const char *dir, int *nwritten, muh_diag *d)
{
	*nwritten = 0;
	diag_clear(d);
	if (mkdir(dir, 0777) && errno != EEXIST) {
		diag_clear(d);
		diag_errorf(d, "cannot create '%s': %s", dir, strerror(errno));
		return MUH_EENV;
	}
	size_t n = s->knobs.n;
	char *done = calloc(n ? n : 1, 1);
	if (!done)
		return MUH_ENOMEM;
	const muh_knob *ks = s->knobs.p;
	int skipped = 0;
	const char *skip1 = NULL; /* the first file skipped */
	for (size_t i = 0; i < n; i++) {
		if (done[i] || !spec_eligible(&ks[i]))
			continue;
		if (!spec_utf8(s->root) || !spec_utf8(ks[i].file) || !spec_utf8(ks[i].scope)) {
			for (size_t j = i; j < n; j++)
				if (!strcmp(ks[j].file, ks[i].file) && !strcmp(ks[j].scope, ks[i].scope))
					done[j] = 1;
			if (!skipped++)
				skip1 = ks[i].file;
			continue;
		}
		char fname[1024];
		snprintf(fname, sizeof(fname), "%s.%s", ks[i].file, ks[i].scope);
		spec_ident_chars(fname);
		char path[4096];
		snprintf(path, sizeof(path), "%.2000s/%.1000s.yaml", dir, fname);
		FILE *fp = fopen(path, "w");
		if (!fp) {
			free(done);
			diag_clear(d);
			diag_errorf(d, "cannot write '%s': %s", path, strerror(errno));
			return MUH_EENV;
		}
		spec_head(fp, s->root, ks[i].file, ks[i].scope);
		char names[64][128];
		char defs[64][64], ids[64][40];
		int np = 0;
		for (size_t j = i; j < n && np < 64; j++) {
			if (done[j] || strcmp(ks[j].file, ks[i].file) ||
			    strcmp(ks[j].scope, ks[i].scope) || !spec_eligible(&ks[j]))
				continue;
			done[j] = 1;
			char nm[128];
			snprintf(nm, sizeof(nm), "%s", ks[j].name);
			spec_ident_chars(nm);
			int dup = 0;
			for (int q = 0; q < np; q++)
				dup |= !strcmp(names[q], nm);
			if (dup)
				continue;
			const char *e = ks[j].eval ? ks[j].eval : ks[j].alts[0].eval;
			fprintf(fp, "  %s: [", nm);
			if (!strcmp(e, "True") || !strcmp(e, "False")) {
				fprintf(fp, "0, 1]");
				snprintf(defs[np], sizeof(defs[np]), "%d", !strcmp(e, "True"));
			} else {
				long long vals[16];
				int nv = ladder(strtoll(e, NULL, 10), vals);
				for (int a = 0; a < ks[j].nalts && nv < 16; a++) {
					if (!ks[j].alts[a].eval)
						continue;
					long long x = strtoll(ks[j].alts[a].eval, NULL, 10);
					int seen = 0;
					for (int q = 0; q < nv; q++)
						seen |= vals[q] == x;
					if (!seen)
						vals[nv++] = x;
				}
				for (int q = 0; q < nv; q++)
					fprintf(fp, "%s%lld", q ? ", " : "", vals[q]);
				fprintf(fp, "]");
				snprintf(defs[np], sizeof(defs[np]), "%s", e);
			}
			fprintf(fp, "  # %s ", ks[j].kind);
			spec_comment(fp, ks[j].file);
			fprintf(fp, ":%d id %s\n", ks[j].line, ks[j].id);
			snprintf(names[np], sizeof(names[np]), "%s", nm);
			/* a conditional knob is tuned through its first alternative, the
			 * one the default value comes from */
			snprintf(ids[np], sizeof(ids[np]), "%s%s", ks[j].id, ks[j].eval ? "" : "[0]");
			np++;
		}
		fprintf(fp, "defaults:\n");
		for (int q = 0; q < np; q++)
			fprintf(fp, "  %s: %s\n", names[q], defs[q]);
		/* where each param is written back: `muh patch TREE --from DB` */
		fprintf(fp, "knobs:\n");
		for (int q = 0; q < np; q++)
			fprintf(fp, "  %s: \"%s\"\n", names[q], ids[q]);
		if (fclose(fp)) {
			free(done);
			diag_clear(d);
			diag_errorf(d, "cannot write '%s': %s", path, strerror(errno));
			return MUH_EENV;
		}
		(*nwritten)++;
	}
	free(done);
	/* one engine spec per deployment file */
	for (size_t i = 0; i < n; i++) {
		if (strcmp(ks[i].scope, "<deployment>"))
			continue;
		int seen = 0;
		for (size_t j = 0; j < i && !seen; j++)
			seen = !strcmp(ks[j].scope, "<deployment>") && !strcmp(ks[j].file, ks[i].file);
		if (seen)
			continue;
		int was = skipped;
		int rc = write_engine_spec(s, dir, ks[i].file, &skipped, d);
		if (rc < 0)
			return -rc;
		*nwritten += rc;
		if (skipped > was && !skip1)
			skip1 = ks[i].file;
	}
	if (skipped) {
		/* not an error: a note the caller prints (diag_is_set) */
		char shown[256];
		size_t o = 0;
		for (const unsigned char *u = (const unsigned char *)skip1; *u && o + 5 < sizeof(shown); u++)
			o += (size_t)snprintf(shown + o, sizeof(shown) - o, *u < 0x20 || *u >= 0x7f ? "\\x%02x" : "%c", *u);
		diag_clear(d);
		diag_errorf(d, "no spec for %d file%s whose path is not UTF-8 (YAML cannot name it), such as '%s'",
		            skipped, skipped == 1 ? "" : "s", shown);
	}
	return MUH_OK;
}
