/*
 * scan_surface.c — the surface's containers and its arena: vectors, the
 * string map, arena strings, the knob list, knob ids, the public accessors and
 * the host view (src/scan/scan_host.h) that scan's helpers work through.
 *
 * The lowest layer of muh scan: calls nothing of the other scan files, so
 * that every one of them (and every helper) can call it.
 *
 * Must never: print, exit, touch the tree, or decide a verdict.
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

void *scan_vec_push(vec *v)
{
	if (v->n == v->cap) {
		size_t nc = v->cap ? v->cap * 2 : 8;
		void *np = realloc(v->p, nc * v->esz);
		if (!np)
			return NULL;
		v->p = np;
		v->cap = nc;
	}
	void *e = (char *)v->p + v->n * v->esz;
	memset(e, 0, v->esz);
	v->n++;
	return e;
}

static uint64_t shash(const char *s)
{
	uint64_t h = 1469598103934665603ULL;
	for (; *s; s++) {
		h ^= (unsigned char)*s;
		h *= 1099511628211ULL;
	}
	return h;
}

static int smap_grow(smap *m)
{
	size_t nc = m->cap ? m->cap * 2 : 1024;
	const char **nk = calloc(nc, sizeof(*nk));
	int *nv = calloc(nc, sizeof(*nv));
	if (!nk || !nv) {
		free(nk);
		free(nv);
		return -1;
	}
	for (size_t i = 0; i < m->cap; i++) {
		if (!m->keys[i])
			continue;
		size_t j = shash(m->keys[i]) & (nc - 1);
		while (nk[j])
			j = (j + 1) & (nc - 1);
		nk[j] = m->keys[i];
		nv[j] = m->vals[i];
	}
	free(m->keys);
	free(m->vals);
	m->keys = nk;
	m->vals = nv;
	m->cap = nc;
	return 0;
}

/* Returns a pointer to the value slot of key, inserting it (value -1) when
 * absent and insert is set; NULL when absent (or out of memory). */
int *scan_smap_slot(smap *m, const char *key, int insert)
{
	if (!m->cap || (insert && (m->n + 1) * 2 > m->cap)) {
		if (!insert && !m->cap)
			return NULL;
		if (smap_grow(m))
			return NULL;
	}
	size_t j = shash(key) & (m->cap - 1);
	while (m->keys[j]) {
		if (!strcmp(m->keys[j], key))
			return &m->vals[j];
		j = (j + 1) & (m->cap - 1);
	}
	if (!insert)
		return NULL;
	m->keys[j] = key;
	m->vals[j] = -1;
	m->n++;
	return &m->vals[j];
}

int scan_smap_get(const smap *m, const char *key)
{
	int *v = scan_smap_slot((smap *)m, key, 0);
	return v ? *v : -1;
}

void scan_smap_free(smap *m)
{
	free(m->keys);
	free(m->vals);
}

void *scan_sa_alloc(muh_surface *s, size_t n)
{
	void *p = scan_arena_alloc(&s->arena, n, 65536);
	if (!p)
		s->oom = 1;
	return p;
}

const char *scan_sa_str(muh_surface *s, const char *str)
{
	if (!str)
		return NULL;
	size_t n = strlen(str);
	char *p = scan_sa_alloc(s, n + 1);
	if (!p)
		return "";
	memcpy(p, str, n + 1);
	return p;
}

const char *scan_knob_id(muh_surface *s, const char *rel, const char *scope, const char *name,
                         const char *kind, int occ, char out[20])
{
	char buf[1200];
	int n = snprintf(buf, sizeof(buf), "%s%c%s%c%s%c%s%c%d", rel, 0, scope, 0, name, 0, kind, 0,
	                 occ);
	if (n < 0)
		n = 0;
	if ((size_t)n >= sizeof(buf))
		n = sizeof(buf) - 1;
	snprintf(out, 20, "k%016llx", (unsigned long long)pyfile_hash(buf, (size_t)n));
	return out;
}

/* (scan_int.h) A key's slot starts at -1: the first knob is occurrence 0. */
const char *scan_knob_id_counted(muh_surface *s, smap *occ, const char *key, const char *rel,
                                 const char *scope, const char *name, const char *kind,
                                 char out[20])
{
	const char *kk = scan_sa_str(s, key);
	int *slot = kk ? scan_smap_slot(occ, kk, 1) : NULL;
	return scan_knob_id(s, rel, scope, name, kind, slot ? ++*slot : 0, out);
}

/* ---- host for scan_env.c (environment registries; see src/scan/scan_env.h) ---- */

int scan_host_is_script(const muh_surface *s, int fi)
{
	return scan_path_is_script(s->files[fi].rel);
}

int scan_host_nfiles(const muh_surface *s)
{
	return s->nfiles;
}

const struct scan_env_part *scan_host_env_part(const muh_surface *s, int fi)
{
	return fi >= 0 && fi < s->nfiles ? s->files[fi].env : NULL;
}

const struct scan_args_part *scan_host_args_part(const muh_surface *s, int fi)
{
	return fi >= 0 && fi < s->nfiles ? s->files[fi].args : NULL;
}

int scan_host_library(const muh_surface *s)
{
	return s->opt.library;
}

int scan_host_with_tests(const muh_surface *s)
{
	return s->opt.with_tests;
}

const pyfile *scan_host_file(const muh_surface *s, int fi, const char **rel,
                             const char **module, int *is_test)
{
	const sfile *f = &s->files[fi];
	*rel = f->rel;
	*module = f->module;
	*is_test = f->is_test;
	return f->pf;
}

const char *scan_host_str(muh_surface *s, const char *str)
{
	return scan_sa_str(s, str);
}

/* (scan_host.h) The formatted text (at most 1023 bytes, cut at a word:
 * textcut.h) in the arena; the scan's one formatter, for its own files as
 * for scan_env.c, scan_args.c and the other passes. */
const char *scan_host_fmt(muh_surface *s, const char *fmt, ...)
{
	char buf[1024];
	va_list ap;
	va_start(ap, fmt);
	text_vfmt(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	return scan_sa_str(s, buf);
}

void *scan_host_alloc(muh_surface *s, size_t n)
{
	void *p = scan_sa_alloc(s, n);
	if (p)
		memset(p, 0, n);
	return p;
}

void *scan_host_part(const void *ctx, size_t size, int found, int ctx_oom, int *oom)
{
	*oom |= ctx_oom;
	if (ctx_oom || !found)
		return NULL;
	void *p = malloc(size);
	if (!p) {
		*oom = 1;
		return NULL;
	}
	memcpy(p, ctx, size);
	return p;
}

int scan_host_append(void *arr, size_t *n, size_t *cap, const void *src, size_t cnt, size_t elem,
                     size_t fi_off, int fi)
{
	for (size_t i = 0; i < cnt; i++) {
		if (array_grow(arr, cap, *n, elem, 64))
			return -1;
		char *x = (char *)*(void **)arr + (*n)++ * elem;
		memcpy(x, (const char *)src + i * elem, elem);
		memcpy(x + fi_off, &fi, sizeof(fi));
	}
	return 0;
}

/* The name element i starts with. */
static const char *named_at(const void *base, size_t size, size_t i)
{
	const char *name;
	memcpy(&name, (const char *)base + i * size, sizeof(name));
	return name;
}

size_t scan_host_named(const void *base, size_t n, size_t size, const char *name, size_t *lo)
{
	size_t l = 0, h = n;
	while (l < h) {
		size_t m = (l + h) / 2;
		if (strcmp(named_at(base, size, m), name) < 0)
			l = m + 1;
		else
			h = m;
	}
	size_t k = l;
	while (k < n && !strcmp(named_at(base, size, k), name))
		k++;
	*lo = l;
	return k - l;
}

muh_knob *scan_host_push_knob(muh_surface *s)
{
	return scan_vec_push(&s->knobs);
}

muh_knob *scan_host_knob(muh_surface *s, size_t i)
{
	return i < s->knobs.n ? (muh_knob *)s->knobs.p + i : NULL;
}

void scan_host_drop_knob(muh_surface *s, size_t i)
{
	if (i >= s->knobs.n)
		return;
	muh_knob *ks = s->knobs.p;
	memmove(ks + i, ks + i + 1, sizeof(muh_knob) * (s->knobs.n - i - 1));
	s->knobs.n--;
}

void scan_host_knob_id(muh_surface *s, const char *rel, const char *scope, const char *name,
                       const char *kind, int occ, char out[20])
{
	scan_knob_id(s, rel, scope, name, kind, occ, out);
}

/* ---- host for scan_cache.c (see src/scan/scan_cache.h) ---- */

muh_diag *scan_host_push_diag(muh_surface *s)
{
	return scan_vec_push(&s->diags);
}

void scan_host_set_totals(muh_surface *s, size_t nfiles, size_t nbytes)
{
	s->nfiles_cached = nfiles;
	s->nbytes = nbytes;
}

void scan_host_set_cache_status(muh_surface *s, const char *status)
{
	s->cache_status = status;
}

/* ---- end of the hosts ---- */

size_t scan_nknobs(const muh_surface *s)
{
	return s->knobs.n;
}

const muh_knob *scan_knob(const muh_surface *s, size_t i)
{
	return i < s->knobs.n ? (const muh_knob *)s->knobs.p + i : NULL;
}

const muh_knob *scan_find(const muh_surface *s, const char *id)
{
	for (size_t i = 0; i < s->knobs.n; i++)
		if (!strcmp(((const muh_knob *)s->knobs.p)[i].id, id))
			return (const muh_knob *)s->knobs.p + i;
	return NULL;
}

const char *scan_root(const muh_surface *s)
{
	return s->root;
}

size_t scan_nfiles(const muh_surface *s)
{
	return s->files ? (size_t)s->nfiles : s->nfiles_cached;
}

const char *scan_cache_status(const muh_surface *s)
{
	return s->cache_status;
}

size_t scan_nbytes(const muh_surface *s)
{
	return s->nbytes;
}

double scan_seconds(const muh_surface *s)
{
	return s->seconds;
}

size_t scan_nexcluded(const muh_surface *s)
{
	return s->excluded.n;
}

const scan_excluded_path *scan_excluded(const muh_surface *s, size_t i)
{
	return i < s->excluded.n ? (const scan_excluded_path *)s->excluded.p + i : NULL;
}

size_t scan_ndiags(const muh_surface *s)
{
	return s->diags.n;
}

const muh_diag *scan_diag(const muh_surface *s, size_t i)
{
	return i < s->diags.n ? (const muh_diag *)s->diags.p + i : NULL;
}

/* ---- 2. parse -------------------------------------------------------------- */

int scan_path_is_test(const char *rel)
{
	char buf[4096];
	snprintf(buf, sizeof(buf), "/%s", rel);
	if (strstr(buf, "/tests/") || strstr(buf, "/test/") || strstr(buf, "/testing/"))
		return 1;
	const char *base = strrchr(buf, '/') + 1;
	return !strncmp(base, "test_", 5) || scan_has_suffix(base, "_test.py") ||
	       !strcmp(base, "conftest.py");
}

/* Is rel a script beside the engine (benchmarks/, examples/, tools/,
 * scripts/ at the top)? Its reads count, but the engine's are the better
 * evidence. */
int scan_path_is_script(const char *rel)
{
	return !strncmp(rel, "benchmarks/", 11) || !strncmp(rel, "examples/", 9) ||
	       !strncmp(rel, "tools/", 6) || !strncmp(rel, "scripts/", 8) ||
	       !strncmp(rel, "benchmark/", 10);
}

/* Folder and file names that name another platform (a path under one is
 * that platform's code). */
static const char *const platform_tokens[] = {"rocm",     "hip", "tpu",   "xpu",   "neuron",
                                              "openvino", "hpu", "gaudi", "aiter", NULL};

/* The platform a path names by one of its _/./- separated tokens, or NULL. */
const char *scan_path_platform(const char *rel)
{
	char buf[4096];
	snprintf(buf, sizeof(buf), "%s", rel);
	for (char *tok = strtok(buf, "/_.-"); tok; tok = strtok(NULL, "/_.-"))
		for (int i = 0; platform_tokens[i]; i++)
			if (!strcmp(tok, platform_tokens[i]))
				return platform_tokens[i];
	return NULL;
}

const char *scan_verdict_name(enum scan_verdict v)
{
	static const char *const names[] = {"live",     "dead",    "unsafe",
	                                    "platform", "unknown", "blocker"};
	return v <= SCAN_BLOCKER ? names[v] : "?";
}

int scan_has_suffix(const char *s, const char *suf)
{
	size_t a = strlen(s), b = strlen(suf);
	return a >= b && !strcmp(s + a - b, suf);
}
