/*
 * scan.c — the surface of an engine tree: knobs, verdicts, evidence.
 *
 * Pipeline (each step reads only what the previous ones built):
 *   1. walk    collect .py / .json / .yaml paths under the root, sorted, no
 *              symlinked directories, no hidden or __pycache__ directories;
 *   2. parse   pyfile_analyze() each .py (src/pyfile.c), free the source;
 *   3. index   module name -> file, (file, top-level name) -> definition,
 *              name -> every load of that name in the tree;
 *   4. guards  constant-false `if` branches (module constants resolved
 *              across imports, TYPE_CHECKING) become dead byte ranges;
 *   5. modules a module is `platform` when its path names another platform
 *              (rocm, tpu, ...) or every non-test importer is such a module
 *              or imports it under `if current_platform.is_rocm():`;
 *   6. reach   a top-level function/class is live, test-only, platform-only,
 *              unknown or unreferenced, from the loads of its name
 *              (resolved through imports and re-exports), recursively;
 *   7. verdict per knob kind (see docs/scan.md), then the unsafe check.
 *
 * Name resolution is static and by name: aliases of functions
 * (`from m import f as g`), getattr and registries are not followed; where
 * that leaves a reader unresolved the verdict is `unknown`, not `dead`.
 *
 * Must never: print, exit, write into the tree, follow symlinked directories.
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

/* The longest path the walk opens, its NUL included (Linux's PATH_MAX): a
 * longer root/rel cannot be opened, so the walk warns instead. */
#define SCAN_PATH_MAX 4096

/* ---- small containers ------------------------------------------------------ */

typedef struct sblock {
	struct sblock *next;
	size_t used, cap;
	char data[];
} sblock;

typedef struct vec {
	void *p;
	size_t n, cap, esz;
} vec;

static void *vec_push(vec *v)
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

/* string -> int map, open addressing; keys are not owned */
typedef struct smap {
	const char **keys;
	int *vals;
	size_t cap, n;
} smap;

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
static int *smap_slot(smap *m, const char *key, int insert)
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

static int smap_get(const smap *m, const char *key)
{
	int *v = smap_slot((smap *)m, key, 0);
	return v ? *v : -1;
}

static void smap_free(smap *m)
{
	free(m->keys);
	free(m->vals);
}

/* ---- the surface ----------------------------------------------------------- */

enum reach {
	R_TODO = 0,
	R_BUSY,
	R_LIVE,
	R_UNKNOWN,
	R_PLATFORM,
	R_TEST,
	R_UNREACH,
	R_NOCALL, /* only in a function nothing in the tree calls or names */
	R_NONE
};

/* Why a reader has its class, beyond its place: a platform branch, a dead
 * store (file + pf_dead), a function nothing calls. */
/* A byte range of a file with a note: dead or platform-only code. */
typedef struct range {
	uint32_t a, b;
	int line;         /* the if */
	const char *note; /* the whole reason, one line */
	const char *head; /* the if's part of it */
	int cfile, cline; /* the constant that decides it, -1 */
	int nev;          /* the constants behind it, step by step */
	int evf[3], evl[3];
	const char *evn[3];
} range;

typedef struct why_at {
	const char *note;
	int file, dead;   /* pf_dead of file, or -1 */
	const range *rng; /* a dead / platform range of file rfile */
	int rfile;
	const char *lead; /* the first step's note, when not the default */
} why_at;

typedef struct sfile {
	char *rel, *module;
	pyfile *pf;
	char *src;    /* the source and syntax tree kept for scan_env/scan_args */
	size_t srcn;  /* (scan_host_tree), until they have run; else NULL */
	TSTree *tree;
	int is_test;
	int imported_by, imported_line; /* a non-test module importing this one, -1 */
	int platform;             /* 0, or 1 + reason index */
	int plat_file, plat_line; /* evidence: the importer or -1 */
	const char *plat_why;
	uint32_t *dead; /* pairs [start, end) */
	int ndead;
	range *dead_why; /* per dead pair */
	range *plat;     /* platform-only ranges (under is_hip() ...) */
	int nplat;
	unsigned char *reach;         /* per scope */
	int *reach_file, *reach_line; /* evidence per scope */
	int *reach_scope;             /* the scope of that reader, -1 module */
	why_at *reach_why;
	vec importers;                /* int file indices */
	vec importees;
} sfile;

typedef struct ref_at {
	int file, ref;
} ref_at;

struct muh_surface {
	char *root;
	sfile *files;
	int nfiles;
	char **jsons, **yamls;
	int njsons, nyamls;
	vec knobs; /* muh_knob */
	vec diags; /* muh_diag */
	vec excluded; /* scan_excluded_path: .py files the walk left out */
	vec warnings; /* const char * (arena): folders the walk could not scan */
	size_t nfiles_cached; /* scan_nfiles of a surface read from the cache */
	const char *cache_status;
	sblock *arena;
	smap mods, defs, names;
	vec namelists; /* vec of ref_at */
	double seconds;
	size_t nbytes;
	scan_options opt;
	int oom;
	why_at cls_why, best_why; /* scratch of ref_class / readers_of */
	int dead_import_file, dead_import_line; /* scratch of import_of */
	int best_scope;
	vec sinks;        /* dict flows into launches (flow_sinks) */
	int sinks_built;
	smap cmp_names; /* names some guard compares or some assert tests */
	int cmp_built;
	scan_flow *flow; /* def-use across calls (src/scan_flow.c), made at first use */
};

static void *sa_alloc(muh_surface *s, size_t n)
{
	n = (n + 15) & ~(size_t)15;
	sblock *b = s->arena;
	if (!b || b->used + n > b->cap) {
		size_t cap = n > 65536 ? n : 65536;
		sblock *nb = malloc(sizeof(sblock) + cap);
		if (!nb) {
			s->oom = 1;
			return NULL;
		}
		nb->next = b;
		nb->used = 0;
		nb->cap = cap;
		s->arena = b = nb;
	}
	void *p = b->data + b->used;
	b->used += n;
	return p;
}

static const char *sa_str(muh_surface *s, const char *str)
{
	if (!str)
		return NULL;
	size_t n = strlen(str);
	char *p = sa_alloc(s, n + 1);
	if (!p)
		return "";
	memcpy(p, str, n + 1);
	return p;
}

/* The formatted text (at most 1023 bytes, cut at a word: textcut.h) in the
 * arena: sa_fmt here, scan_host_fmt for scan_env.c and scan_args.c. */
static const char *sa_vfmt(muh_surface *s, const char *fmt, va_list ap)
{
	char buf[1024];
	text_vfmt(buf, sizeof(buf), fmt, ap);
	return sa_str(s, buf);
}

static const char *sa_fmt(muh_surface *s, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static const char *sa_fmt(muh_surface *s, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	const char *r = sa_vfmt(s, fmt, ap);
	va_end(ap);
	return r;
}

const char *scan_verdict_name(enum scan_verdict v)
{
	static const char *const names[] = {"live",     "dead",    "unsafe",
	                                    "platform", "unknown", "blocker"};
	return v <= SCAN_BLOCKER ? names[v] : "?";
}

/* ---- 1. walk ---------------------------------------------------------------- */

typedef struct walkres {
	vec py, json, yaml; /* char* (malloc'd relative paths) */
	muh_surface *s;     /* options; excluded paths go to s->excluded */
} walkres;

static int has_suffix(const char *s, const char *suf)
{
	size_t a = strlen(s), b = strlen(suf);
	return a >= b && !strcmp(s + a - b, suf);
}

/* Why the walk leaves rel out (an arena string), inherited from its
 * directory or its own: an --exclude glob, or vendored code (src/scan_vendor.c);
 * NULL when it is scanned. An --include glob brings a file back. */
static const char *walk_excluded(walkres *w, const char *rel, int is_dir, const char *inherited)
{
	const scan_options *o = &w->s->opt;
	const char *why = inherited;
	char dir[4200];
	int g;
	if (!why && (g = scan_glob_match(o->exclude, o->nexclude, rel)) >= 0)
		why = sa_fmt(w->s, "--exclude %s", o->exclude[g]);
	else if (!why && !o->with_vendored && scan_vendored(rel, is_dir, dir, sizeof(dir)))
		why = sa_fmt(w->s, "vendored (%s)", dir);
	if (why && !is_dir && scan_glob_match(o->include, o->ninclude, rel) >= 0)
		why = NULL;
	return why;
}

/* A warning of the walk (an arena string, "REL: what"), kept in
 * s->warnings; the order is fixed later (sorted), since readdir's is not. */
static void walk_warn(walkres *w, const char *rel, const char *what)
{
	const char **slot = vec_push(&w->s->warnings);
	const char *r = *rel ? rel : ".";
	size_t n = strlen(r) + strlen(what) + 3;
	char *t = sa_alloc(w->s, n);
	if (slot && t) {
		snprintf(t, n, "%s: %s", r, what);
		*slot = t;
	} else if (slot)
		w->s->warnings.n--;
}

/* Walks the folder rel (relative to root; "" is root itself) into w. Depth
 * has no limit of its own: the names of a folder are read and the folder is
 * closed before its subfolders are walked, and a frame holds one path, so
 * only a path root/rel longer than SCAN_PATH_MAX - 1 bytes (which the OS
 * would not open) stops the walk, with a warning naming the folder (as does
 * a folder or file that cannot be read).
 * Returns 0, -1 when root itself cannot be read, -2 when out of memory. */
static int walk_dir(const char *root, const char *rel, walkres *w, const char *why)
{
	size_t lr = strlen(root), lrel = strlen(rel);
	char *path = malloc(lr + lrel + 2);
	if (!path)
		return -2;
	snprintf(path, lr + lrel + 2, "%s%s%s", root, *rel ? "/" : "", rel);
	DIR *d = opendir(path);
	if (!d) {
		int e = errno;
		free(path);
		if (!*rel)
			return -1;
		if (w->s)
			walk_warn(w, rel, sa_fmt(w->s, "folder not scanned: %s", strerror(e)));
		return 0;
	}
	vec names = {0};
	names.esz = sizeof(char *);
	struct dirent *e;
	int rc = 0;
	while ((e = readdir(d))) {
		const char *n = e->d_name;
		if (n[0] == '.' || !strcmp(n, "__pycache__") || !strcmp(n, "node_modules"))
			continue;
		char **slot = vec_push(&names);
		if (!slot || !(*slot = strdup(n))) {
			if (slot)
				names.n--;
			rc = -2;
			break;
		}
	}
	closedir(d);
	char *r = malloc(SCAN_PATH_MAX), *full = malloc(SCAN_PATH_MAX);
	if (!r || !full)
		rc = -2;
	for (size_t i = 0; rc == 0 && i < names.n; i++) {
		const char *n = ((char **)names.p)[i];
		int len = snprintf(r, SCAN_PATH_MAX, "%s%s%s", rel, *rel ? "/" : "", n);
		if (len <= 0 || (size_t)len + lr + 1 >= SCAN_PATH_MAX) {
			walk_warn(w, rel,
			          sa_fmt(w->s,
			                 "not scanned past here: the path of '%.24s...' would be longer "
			                 "than %d bytes",
			                 n, SCAN_PATH_MAX - 1));
			continue;
		}
		snprintf(full, SCAN_PATH_MAX, "%s/%s", root, r);
		struct stat st;
		if (lstat(full, &st)) {
			walk_warn(w, r, sa_fmt(w->s, "not scanned: %s", strerror(errno)));
			continue;
		}
		const char *ew = walk_excluded(w, r, S_ISDIR(st.st_mode), why);
		if (S_ISDIR(st.st_mode)) {
			rc = walk_dir(root, r, w, ew);
			continue;
		}
		if (!S_ISREG(st.st_mode))
			continue;
		if (ew) { /* counted, not scanned */
			scan_excluded_path *x = has_suffix(n, ".py") ? vec_push(&w->s->excluded) : NULL;
			if (x) {
				x->path = sa_str(w->s, r);
				x->why = ew;
			}
			continue;
		}
		vec *v = has_suffix(n, ".py")                                ? &w->py
		         : has_suffix(n, ".json")                            ? &w->json
		         : (has_suffix(n, ".yaml") || has_suffix(n, ".yml")) ? &w->yaml
		                                                             : NULL;
		if (!v)
			continue;
		char **slot = vec_push(v);
		if (!slot || !(*slot = strdup(r))) {
			if (slot)
				v->n--;
			rc = -2;
		}
	}
	for (size_t i = 0; i < names.n; i++)
		free(((char **)names.p)[i]);
	free(names.p);
	free(r);
	free(full);
	free(path);
	return rc;
}

/* Frees the sources and syntax trees the parse kept (scan_host_tree). */
static void free_trees(muh_surface *s)
{
	for (int i = 0; s->files && i < s->nfiles; i++) {
		if (s->files[i].tree)
			ts_tree_delete(s->files[i].tree);
		free(s->files[i].src);
		s->files[i].tree = NULL;
		s->files[i].src = NULL;
	}
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* ---- 2. parse -------------------------------------------------------------- */

static int path_is_test(const char *rel)
{
	char buf[4096];
	snprintf(buf, sizeof(buf), "/%s", rel);
	if (strstr(buf, "/tests/") || strstr(buf, "/test/") || strstr(buf, "/testing/"))
		return 1;
	const char *base = strrchr(buf, '/') + 1;
	return !strncmp(base, "test_", 5) || has_suffix(base, "_test.py") ||
	       !strcmp(base, "conftest.py");
}

/* Is rel a script beside the engine (benchmarks/, examples/, tools/,
 * scripts/ at the top)? Its reads count, but the engine's are the better
 * evidence. */
static int path_is_script(const char *rel)
{
	return !strncmp(rel, "benchmarks/", 11) || !strncmp(rel, "examples/", 9) ||
	       !strncmp(rel, "tools/", 6) || !strncmp(rel, "scripts/", 8) ||
	       !strncmp(rel, "benchmark/", 10);
}

static const char *const platform_tokens[] = {"rocm",     "hip", "tpu",   "xpu",   "neuron",
                                              "openvino", "hpu", "gaudi", "aiter", NULL};

/* The platform a path names by one of its _/./- separated tokens, or NULL. */
static const char *path_platform(const char *rel)
{
	char buf[4096];
	snprintf(buf, sizeof(buf), "%s", rel);
	for (char *tok = strtok(buf, "/_.-"); tok; tok = strtok(NULL, "/_.-"))
		for (int i = 0; platform_tokens[i]; i++)
			if (!strcmp(tok, platform_tokens[i]))
				return platform_tokens[i];
	return NULL;
}

static char *module_of(const char *rel, int *is_pkg)
{
	char *m = strdup(rel);
	if (!m)
		return NULL;
	size_t n = strlen(m);
	if (n > 3 && !strcmp(m + n - 3, ".py"))
		m[n - 3] = '\0';
	for (char *p = m; *p; p++)
		if (*p == '/')
			*p = '.';
	*is_pkg = 0;
	n = strlen(m);
	if (n >= 8 && !strcmp(m + n - 8, "__init__")) {
		*is_pkg = 1;
		m[n >= 9 ? n - 9 : 0] = '\0';
	}
	return m;
}

static char *read_file(const char *path, size_t *n)
{
	FILE *fp = fopen(path, "rb");
	if (!fp)
		return NULL;
	size_t cap = 65536, len = 0;
	char *buf = malloc(cap);
	while (buf) {
		size_t r = fread(buf + len, 1, cap - len, fp);
		len += r;
		if (len < cap)
			break;
		char *nb = realloc(buf, cap * 2);
		if (!nb) {
			free(buf);
			buf = NULL;
			break;
		}
		buf = nb;
		cap *= 2;
	}
	fclose(fp);
	if (buf)
		*n = len;
	return buf;
}

/* The source line `line` (1-based) of text, for diagnostics. */
static void copy_line(char *dst, size_t cap, const char *text, size_t n, int line)
{
	size_t i = 0;
	for (int l = 1; l < line && i < n; i++)
		if (text[i] == '\n')
			l++;
	size_t j = 0;
	while (i < n && text[i] != '\n' && text[i] != '\r' && j + 1 < cap) {
		unsigned char ch = (unsigned char)text[i++];
		dst[j++] = (ch < 0x20 && ch != '\t') || ch == 0x7f ? '?' : (char)ch;
	}
	dst[j] = '\0';
}

/* ---- 3. index ---------------------------------------------------------------- */

static int def_key_get(muh_surface *s, int fi, const char *name)
{
	char key[512];
	snprintf(key, sizeof(key), "%d\x01%s", fi, name);
	return smap_get(&s->defs, key);
}

static int def_key_put(muh_surface *s, int fi, const char *name, int val)
{
	char key[512];
	snprintf(key, sizeof(key), "%d\x01%s", fi, name);
	if (smap_get(&s->defs, key) >= 0)
		return 0;
	const char *k = sa_str(s, key);
	int *slot = k ? smap_slot(&s->defs, k, 1) : NULL;
	if (!slot)
		return -1;
	*slot = val;
	return 0;
}

/* defs values: scope index, or -(2 + knob index) for module-level knobs */
static int build_index(muh_surface *s)
{
	for (int fi = 0; fi < s->nfiles; fi++) {
		sfile *f = &s->files[fi];
		int *slot = smap_slot(&s->mods, f->module, 1);
		if (!slot)
			return -1;
		if (*slot < 0)
			*slot = fi;
		pyfile *pf = f->pf;
		for (int i = 0; i < pf->nscopes; i++)
			if (pf->scopes[i].parent < 0 && def_key_put(s, fi, pf->scopes[i].name, i))
				return -1;
		for (int i = 0; i < pf->nknobs; i++)
			if (pf->knobs[i].scope < 0 &&
			    (pf->knobs[i].kind == PF_K_CONSTANT ||
			     pf->knobs[i].kind == PF_K_OVERRIDE ||
			     pf->knobs[i].kind == PF_K_AUTOTUNE) &&
			    def_key_put(s, fi, pf->knobs[i].name, -(2 + i)))
				return -1;
		for (int i = 0; i < pf->nrefs; i++) {
			pf_ref *r = &pf->refs[i];
			if (r->flags & PF_R_SPLAT)
				continue;
			int *ns = smap_slot(&s->names, r->name, 1);
			if (!ns)
				return -1;
			if (*ns < 0) {
				vec *nl = vec_push(&s->namelists);
				if (!nl)
					return -1;
				nl->esz = sizeof(ref_at);
				*ns = (int)s->namelists.n - 1;
			}
			vec *list = &((vec *)s->namelists.p)[*ns];
			ref_at *ra = vec_push(list);
			if (!ra)
				return -1;
			ra->file = fi;
			ra->ref = i;
		}
	}
	return 0;
}

/* Each module's first importer among the non-test modules (a module others
 * import is a library module: its `if __name__ == '__main__':` block is a
 * script's, not the engine's). After build_index (mods). */
static void mark_imported(muh_surface *s)
{
	for (int fi = 0; fi < s->nfiles; fi++)
		s->files[fi].imported_by = -1;
	for (int fi = 0; fi < s->nfiles; fi++) {
		const sfile *f = &s->files[fi];
		if (f->is_test)
			continue;
		for (int i = 0; i < f->pf->nimports; i++) {
			const pf_import *im = &f->pf->imports[i];
			int m = -1;
			if (im->attr) {
				char buf[600];
				snprintf(buf, sizeof(buf), "%s.%s", im->module, im->attr);
				m = smap_get(&s->mods, buf);
			}
			if (m < 0)
				m = smap_get(&s->mods, im->module);
			if (m >= 0 && m != fi && s->files[m].imported_by < 0) {
				s->files[m].imported_by = fi;
				s->files[m].imported_line = im->line;
			}
		}
	}
}

static const vec *refs_named(const muh_surface *s, const char *name)
{
	int i = smap_get(&s->names, name);
	return i < 0 ? NULL : &((const vec *)s->namelists.p)[i];
}

static int in_dead(const sfile *f, uint32_t byte)
{
	for (int i = 0; i < f->ndead; i++)
		if (byte >= f->dead[2 * i] && byte < f->dead[2 * i + 1])
			return 1;
	return 0;
}

/* The import that binds alias in file fi: one outside dead code when there
 * is one; else one under a constant-false guard, noted in
 * s->dead_import_file/line (a name bound only by an import that never
 * happens: what it names is reached only through dead code). */
static const pf_import *import_of(const muh_surface *s, int fi, const char *alias)
{
	const sfile *f = &s->files[fi];
	const pf_import *dead = NULL;
	for (int i = 0; i < f->pf->nimports; i++) {
		const pf_import *im = &f->pf->imports[i];
		if (strcmp(im->alias, alias))
			continue;
		if (!in_dead(f, im->byte))
			return im;
		if (!dead)
			dead = im;
	}
	if (dead) {
		((muh_surface *)s)->dead_import_file = fi;
		((muh_surface *)s)->dead_import_line = dead->line;
	}
	return dead;
}

static int mod_lookup(const muh_surface *s, const char *m)
{
	return m ? smap_get(&s->mods, m) : -1;
}

enum { RES_NONE = 0, RES_SYMBOL = 1, RES_MODULE = 2 };

/* Resolves a name as seen from file fi: a top-level definition of fi, or
 * what an import binds (following re-exports through packages). */
static int resolve_name(const muh_surface *s, int fi, const char *name, int *ofi,
                        const char **oname, int depth)
{
	if (depth > 8)
		return RES_NONE;
	if (def_key_get((muh_surface *)s, fi, name) != -1) {
		*ofi = fi;
		*oname = name;
		return RES_SYMBOL;
	}
	const pf_import *im = import_of(s, fi, name);
	if (!im) { /* `from m import *` re-exports m's top-level names */
		const pyfile *pf = s->files[fi].pf;
		for (int i = 0; i < pf->nimports; i++) {
			const pf_import *st = &pf->imports[i];
			if (strcmp(st->alias, "*") || in_dead(&s->files[fi], st->byte))
				continue;
			int m = mod_lookup(s, st->module);
			if (m >= 0 && m != fi &&
			    resolve_name(s, m, name, ofi, oname, depth + 1) == RES_SYMBOL)
				return RES_SYMBOL;
		}
		return RES_NONE;
	}
	if (im->attr) {
		char buf[600];
		snprintf(buf, sizeof(buf), "%s.%s", im->module, im->attr);
		int sub = mod_lookup(s, buf);
		int m = mod_lookup(s, im->module);
		if (sub >= 0) {
			/* a package whose __init__ binds the name itself (`from .rms_norm
			 * import rms_norm`) gives that binding, not the submodule */
			if (m >= 0 && m != fi && m != sub &&
			    (def_key_get((muh_surface *)s, m, im->attr) != -1 ||
			     import_of(s, m, im->attr))) {
				int r = resolve_name(s, m, im->attr, ofi, oname, depth + 1);
				if (r != RES_NONE)
					return r;
			}
			*ofi = sub;
			*oname = NULL;
			return RES_MODULE;
		}
		if (m < 0 || m == fi)
			return RES_NONE;
		return resolve_name(s, m, im->attr, ofi, oname, depth + 1);
	}
	int m = mod_lookup(s, im->module);
	if (m < 0)
		return RES_NONE;
	*ofi = m;
	*oname = NULL;
	return RES_MODULE;
}

/* The module file an object expression (`ops`, `vllm._custom_ops`) names
 * in file fi, or -1. */
static int resolve_obj(const muh_surface *s, int fi, const char *obj)
{
	if (!obj)
		return -1;
	int ofi;
	const char *on;
	if (!strchr(obj, '.'))
		return resolve_name(s, fi, obj, &ofi, &on, 0) == RES_MODULE ? ofi : -1;
	const pf_import *im = import_of(s, fi, obj);
	if (im && !im->attr)
		return mod_lookup(s, im->module);
	/* alias.rest: resolve the first component, append the rest */
	char head[256];
	const char *dot = strchr(obj, '.');
	snprintf(head, sizeof(head), "%.*s", (int)(dot - obj), obj);
	if (resolve_name(s, fi, head, &ofi, &on, 0) != RES_MODULE)
		return -1;
	char buf[600];
	snprintf(buf, sizeof(buf), "%s%s", s->files[ofi].module, dot);
	return mod_lookup(s, buf);
}

static int ref_hits1(const muh_surface *s, int rf, const pf_ref *r, int tfi, const char *name);

/* Does ref r (in file rf) load the top-level name `name` of file tfi? 1 yes,
 * 2 yes but only through an import under a constant-false guard
 * (s->dead_import_file/line say which), 0 no. */
static int ref_hits(const muh_surface *s, int rf, const pf_ref *r, int tfi, const char *name)
{
	muh_surface *m = (muh_surface *)s;
	m->dead_import_file = -1;
	int h = ref_hits1(s, rf, r, tfi, name);
	return h && m->dead_import_file >= 0 ? 2 : h;
}

static int ref_hits1(const muh_surface *s, int rf, const pf_ref *r, int tfi, const char *name)
{
	if (r->flags & (PF_R_KEY | PF_R_SPLAT))
		return 0;
	if (r->flags & PF_R_STR) { /* 'pkg.mod.Name': the module by its absolute name */
		int m = mod_lookup(s, r->obj);
		if (m == tfi)
			return def_key_get((muh_surface *)s, tfi, name) != -1;
		int ofi;
		const char *on;
		return m >= 0 && resolve_name(s, m, name, &ofi, &on, 0) == RES_SYMBOL && ofi == tfi;
	}
	if (r->flags & PF_R_ATTR) {
		int m = resolve_obj(s, rf, r->obj);
		if (m == tfi)
			return 1;
		if (m >= 0) { /* re-exported through a package */
			int ofi;
			const char *on;
			return resolve_name(s, m, name, &ofi, &on, 0) == RES_SYMBOL && ofi == tfi;
		}
		return 0;
	}
	if (rf == tfi)
		return 1;
	int ofi;
	const char *on;
	return resolve_name(s, rf, name, &ofi, &on, 0) == RES_SYMBOL && ofi == tfi &&
	       !strcmp(on, name);
}

/* ---- 4. guards ---------------------------------------------------------------- */

/* Constant propagation across modules. A condition is evaluated as the
 * tuned platform (CUDA-like) would: literals, module bindings assigned once
 * outside any if/try/loop (resolved through imports and `m.NAME`), not/and/
 * or, helper predicates whose body is one `return <condition>`, platform
 * predicates (is_hip(), current_platform.is_rocm(), torch.version.hip,
 * torch.xpu.is_available(), device_type == "npu" ...) and device-capability
 * checks (decided by --device, else undecided). */
enum { CR_CAP = 100 }; /* cres.plat: a capability check nobody decided */

typedef struct cres {
	int v;    /* 1, 0, or -1 undecided */
	int plat; /* decided by a platform predicate (enum pf_platform), CR_CAP, or 0 */
	const char *plat_note;
	int nev;
	int ev_file[3], ev_line[3];
	const char *ev_note[3];
} cres;

static void cres_ev(cres *r, int file, int line, const char *note)
{
	if (r->nev < 3) {
		r->ev_file[r->nev] = file;
		r->ev_line[r->nev] = line;
		r->ev_note[r->nev++] = note;
	}
}

static const char *plat_name(int p)
{
	switch (p) {
	case PF_PLAT_ROCM:
		return "ROCm";
	case PF_PLAT_TPU:
		return "TPU";
	case PF_PLAT_XPU:
		return "XPU";
	case PF_PLAT_CPU:
		return "CPU";
	case PF_PLAT_NPU:
		return "NPU";
	case PF_PLAT_CUDA:
		return "CUDA";
	default:
		return "another platform";
	}
}

/* A module-level binding of name in file fi that is a constant's definition:
 * the only binding of that name, not under an if/try/loop/with. */
static const pf_bind *module_bind(const muh_surface *s, int fi, const char *name)
{
	const pyfile *pf = s->files[fi].pf;
	const pf_bind *b = NULL;
	int n = 0;
	for (int i = 0; i < pf->nbinds; i++)
		if (!strcmp(pf->binds[i].name, name)) {
			b = &pf->binds[i];
			n++;
		}
	return n == 1 && !b->guarded && b->expr >= 0 ? b : NULL;
}

/* Is name bound locally in function scope sc (a parameter or an assignment)? */
static int local_binding(const pyfile *pf, int sc, const char *name)
{
	for (int g = 0; sc >= 0 && g < 64; g++, sc = pf->scopes[sc].parent) {
		const pf_scope *p = &pf->scopes[sc];
		if (!(p->flags & PF_FUNC))
			continue;
		for (int i = 0; i < p->nparams; i++)
			if (!strcmp(p->params[i], name))
				return 1;
		for (int i = 0; i < pf->nasgs; i++)
			if (pf->asgs[i].scope == sc && !strcmp(pf->asgs[i].name, name))
				return 1;
	}
	return 0;
}

/* Capability (major*10+minor) of a device by name, -1 when not known. */
static int device_capability(const char *dev)
{
	static const struct {
		const char *tok;
		int cap;
	} t[] = {{"h100", 90}, {"h200", 90}, {"h800", 90}, {"h20", 90},   {"gh200", 90},
	         {"b200", 100}, {"b100", 100}, {"gb200", 100}, {"a100", 80}, {"a800", 80},
	         {"a30", 80},  {"a10", 86},   {"a10g", 86},   {"a40", 86},   {"a6000", 86},
	         {"l40", 89},  {"l40s", 89},  {"l4", 89},     {"l20", 89},   {"4090", 89},
	         {"v100", 70}, {"t4", 75},    {NULL, 0}};
	char buf[256];
	size_t o = 0;
	for (const char *p = dev; *p && o + 1 < sizeof(buf); p++)
		buf[o++] = (*p == ' ' || *p == '-') ? '_' : (char)(*p >= 'A' && *p <= 'Z' ? *p + 32 : *p);
	buf[o] = '\0';
	char *save = NULL;
	for (char *tok = strtok_r(buf, "_", &save); tok; tok = strtok_r(NULL, "_", &save))
		for (int i = 0; t[i].tok; i++)
			if (!strcmp(tok, t[i].tok))
				return t[i].cap;
	return -1;
}

static int call_target(muh_surface *s, int fi, const pf_call *c, int *ofi, int *osc);
static void const_eval(muh_surface *s, int fi, int e, int sc, int depth, cres *r);

static void eval_name(muh_surface *s, int fi, const pf_expr *x, int sc, int depth, cres *r)
{
	if (!strcmp(x->name, "TYPE_CHECKING")) {
		r->v = 0;
		return;
	}
	if (!x->obj && depth == 0 && local_binding(s->files[fi].pf, sc, x->name))
		return; /* a local variable shadows module constants */
	int tf = -1;
	const char *tn = x->name;
	int ofi;
	const char *on;
	if (!x->obj) {
		int rr = resolve_name(s, fi, x->name, &ofi, &on, 0);
		if (rr == RES_SYMBOL) {
			tf = ofi;
			tn = on;
		} else if (rr == RES_NONE) {
			/* a binding that is no knob: follow `from m import NAME` */
			tf = fi;
			for (int hop = 0; hop < 8 && tf >= 0; hop++) {
				const pf_import *im = import_of(s, tf, tn);
				if (!im)
					break;
				if (!im->attr) {
					tf = -1;
					break;
				}
				tf = mod_lookup(s, im->module);
				tn = im->attr;
			}
		}
	} else {
		tf = resolve_obj(s, fi, x->obj);
		if (tf >= 0 && resolve_name(s, tf, x->name, &ofi, &on, 0) == RES_SYMBOL) {
			tf = ofi;
			tn = on;
		}
	}
	if (tf < 0)
		return;
	const pf_bind *b = module_bind(s, tf, tn);
	if (!b)
		return;
	const_eval(s, tf, b->expr, -1, depth + 1, r);
	if (r->v >= 0 || r->plat)
		cres_ev(r, tf, b->line,
		        sa_fmt(s, "%s = %s", tn, s->files[tf].pf->exprs[b->expr].text));
}

static void const_eval(muh_surface *s, int fi, int e, int sc, int depth, cres *r)
{
	r->v = -1;
	const pyfile *pf = s->files[fi].pf;
	if (e < 0 || e >= pf->nexprs || depth > 12)
		return;
	const pf_expr *x = &pf->exprs[e];
	switch (x->op) {
	case PF_X_CONST:
		r->v = x->val;
		return;
	case PF_X_NAME:
		eval_name(s, fi, x, sc, depth, r);
		return;
	case PF_X_NOT:
		const_eval(s, fi, x->a, sc, depth + 1, r);
		if (r->v >= 0)
			r->v = !r->v;
		return;
	case PF_X_AND:
	case PF_X_OR: {
		cres a = {0}, b = {0};
		const_eval(s, fi, x->a, sc, depth + 1, &a);
		const_eval(s, fi, x->b, sc, depth + 1, &b);
		int stop = x->op == PF_X_AND ? 0 : 1; /* the value that decides alone */
		if (a.v == stop && !a.plat)
			*r = a;
		else if (b.v == stop && !b.plat)
			*r = b;
		else if (a.v == stop)
			*r = a;
		else if (b.v == stop)
			*r = b;
		else if (a.v == !stop && b.v == !stop) {
			*r = a.plat ? a : b;
			r->v = !stop;
		} else {
			r->v = -1;
			/* an undecided capability check keeps the branch for other devices;
			 * one --device decided does not */
			int ac = a.plat == CR_CAP && a.v < 0, bc = b.plat == CR_CAP && b.v < 0;
			r->plat = ac || bc ? CR_CAP : 0;
			r->plat_note = ac ? a.plat_note : b.plat_note;
		}
		return;
	}
	case PF_X_PLAT:
		r->v = x->plat == PF_PLAT_CUDA;
		r->plat = x->plat;
		r->plat_note = x->text;
		return;
	case PF_X_CAP: {
		int cap = s->opt.device ? device_capability(s->opt.device) : -1;
		r->plat = CR_CAP;
		r->plat_note = x->text;
		if (cap < 0)
			return;
		switch (x->capop) {
		case 'g':
			r->v = cap >= x->cap;
			break;
		case '>':
			r->v = cap > x->cap;
			break;
		case 'l':
			r->v = cap <= x->cap;
			break;
		case '<':
			r->v = cap < x->cap;
			break;
		case 'f':
			r->v = cap / 10 == x->cap / 10;
			break;
		default:
			r->v = cap == x->cap;
		}
		cres_ev(r, -1, 0,
		        sa_fmt(s, "--device %s has capability %d.%d", s->opt.device, cap / 10,
		               cap % 10));
		return;
	}
	case PF_X_MAIN: {
		/* a module the tree imports runs its main block only as a script */
		const sfile *f = &s->files[fi];
		if (f->imported_by < 0)
			return; /* an entry script: `python -m` may run it */
		r->v = 0;
		cres_ev(r, f->imported_by, f->imported_line,
		        sa_fmt(s, "%s is imported here: the engine imports it, so its "
		                  "`__main__` block runs only when it is run as a script",
		               f->rel));
		return;
	}
	case PF_X_CALL: {
		pf_call c = {0};
		c.fname = x->name;
		c.obj = x->obj;
		int tf, ts;
		if (!call_target(s, fi, &c, &tf, &ts) || s->files[tf].pf->scopes[ts].ret_expr < 0)
			return;
		const pf_scope *d = &s->files[tf].pf->scopes[ts];
		const_eval(s, tf, d->ret_expr, -1, depth + 1, r);
		if (r->v >= 0 || r->plat)
			cres_ev(r, tf, d->line,
			        sa_fmt(s, "def %s returns %s", d->qual,
			               s->files[tf].pf->exprs[d->ret_expr].text));
		return;
	}
	default:
		return;
	}
}

static int push_range(range **arr, int *n, uint32_t a, uint32_t b, int line, const char *note,
                      const cres *r)
{
	range *na = realloc(*arr, sizeof(range) * (size_t)(*n + 1));
	if (!na)
		return -1;
	*arr = na;
	range *g = &na[(*n)++];
	g->a = a;
	g->b = b;
	g->line = line;
	g->note = note;
	g->cfile = r && r->nev ? r->ev_file[0] : -1;
	g->cline = r && r->nev ? r->ev_line[0] : 0;
	g->head = NULL;
	g->nev = r ? r->nev : 0;
	for (int i = 0; i < g->nev; i++) {
		g->evf[i] = r->ev_file[i];
		g->evl[i] = r->ev_line[i];
		g->evn[i] = r->ev_note[i];
	}
	return 0;
}

/* The "because" of a condition's value: the constants behind it. */
static const char *cres_because(muh_surface *s, const cres *r)
{
	char buf[700];
	size_t o = 0;
	buf[0] = '\0';
	for (int i = 0; i < r->nev && o + 2 < sizeof(buf); i++) {
		int n = r->ev_file[i] >= 0
		            ? snprintf(buf + o, sizeof(buf) - o, "%s%s (%s:%d)", i ? "; " : "",
		                       r->ev_note[i], s->files[r->ev_file[i]].rel, r->ev_line[i])
		            : snprintf(buf + o, sizeof(buf) - o, "%s%s", i ? "; " : "", r->ev_note[i]);
		if (n < 0)
			break;
		o += (size_t)n;
		if (o >= sizeof(buf))
			o = sizeof(buf) - 1;
	}
	return sa_str(s, buf);
}

/* Does the body of `if __name__ == '__main__':` guard g read a command line
 * (`.parse_args()`, `.parse_known_args()`, `fire.Fire(...)`, `sys.argv`, or
 * a call of `main()` / `cli()`)? Such a block is an entry point of the
 * engine (`python -m vllm.entrypoints.openai.api_server`) even when other
 * modules import the file; one that does not (a kernel's benchmark or
 * self-test) is a script's. */
static int main_block_reads_argv(const pyfile *pf, const pf_guard *g)
{
	for (int i = 0; i < pf->ncalls; i++) {
		const pf_call *c = &pf->calls[i];
		if (c->byte < g->cons_start || c->byte >= g->cons_end || !c->fname)
			continue;
		if (!strcmp(c->fname, "parse_args") || !strcmp(c->fname, "parse_known_args") ||
		    !strcmp(c->fname, "Fire") || (!c->obj && (!strcmp(c->fname, "main") ||
		                                              !strcmp(c->fname, "cli"))))
			return 1;
	}
	for (int i = 0; i < pf->nrefs; i++) {
		const pf_ref *r = &pf->refs[i];
		if (r->byte >= g->cons_start && r->byte < g->cons_end && !strcmp(r->name, "argv"))
			return 1;
	}
	return 0;
}

/* Dead byte ranges (constant-false branches) and platform-only ranges of
 * every file, with the reason. Two rounds: an import under a dead guard can
 * stop resolving a name. */
static int compute_dead(muh_surface *s)
{
	for (int round = 0; round < 2; round++) {
		for (int fi = 0; fi < s->nfiles; fi++) {
			sfile *f = &s->files[fi];
			pyfile *pf = f->pf;
			range *dw = NULL, *pl = NULL;
			int nd = 0, np = 0;
			for (int i = 0; i < pf->nguards; i++) {
				const pf_guard *g = &pf->guards[i];
				cres r = {0};
				r.v = -1;
				if (g->cexpr >= 0 && pf->exprs[g->cexpr].op == PF_X_MAIN &&
				    main_block_reads_argv(pf, g))
					continue; /* `python -m pkg.server`: an entry point, undecided */
				if (g->constval >= 0)
					r.v = g->constval;
				else if (g->cexpr >= 0)
					const_eval(s, fi, g->cexpr, g->scope, 0, &r);
				else if (g->name && !strcmp(g->name, "TYPE_CHECKING"))
					r.v = g->negated;
				uint32_t a, b;
				int on_cons = r.v == 0 || (r.v < 0 && r.plat == CR_CAP);
				if (on_cons) {
					a = g->cons_start;
					b = g->cons_end;
				} else if (r.v == 1 && g->alt_end) {
					a = g->alt_start;
					b = g->alt_end;
				} else {
					continue;
				}
				const char *cond = g->cond ? g->cond : "?";
				int rc;
				if (r.plat == CR_CAP && r.v < 0) {
					rc = push_range(&pl, &np, a, b, g->line,
					                sa_fmt(s,
					                       "runs only where `%s` holds (a device-capability "
					                       "check; muh scan --device NAME decides)",
					                       cond),
					                &r);
				} else if (r.plat) {
					const char *where =
					    r.plat == CR_CAP ? cres_because(s, &r)
					    : r.plat == PF_PLAT_CUDA
					        ? "runs only off CUDA"
					        : sa_fmt(s, "runs only on %s", plat_name(r.plat));
					rc = push_range(&pl, &np, a, b, g->line,
					                sa_fmt(s, "%s of `if %s:` (line %d) %s%s",
					                       on_cons ? "the body" : "the else part", cond,
					                       g->line, r.plat == CR_CAP ? "is for other devices: " : "",
					                       where),
					                &r);
				} else if (g->over_line) {
					rc = push_range(&dw, &nd, a, b, g->line,
					                sa_fmt(s, "`if %s:` (line %d) is always %s: %s = %s at line %d",
					                       cond, g->line, r.v ? "true" : "false",
					                       g->name ? g->name : cond,
					                       (r.v ^ g->negated) ? "True" : "False", g->over_line),
					                NULL);
				} else {
					const char *because = r.nev ? cres_because(s, &r) : NULL;
					rc = push_range(&dw, &nd, a, b, g->line,
					                sa_fmt(s, "`if %s:` (line %d) is always %s%s%s", cond,
					                       g->line, r.v ? "true" : "false",
					                       because ? ": " : "", because ? because : ""),
					                &r);
				}
				if (rc) {
					free(dw);
					free(pl);
					return -1;
				}
				range *pushed = r.plat ? &pl[np - 1] : &dw[nd - 1];
				pushed->head =
				    r.plat ? pushed->note
				           : sa_fmt(s, "`if %s:` is always %s, so %s cannot run", cond,
				                    r.v ? "true" : "false",
				                    on_cons ? "its body" : "its else part");
			}
			uint32_t *dead = nd ? malloc(sizeof(uint32_t) * 2 * (size_t)nd) : NULL;
			if (nd && !dead) {
				free(dw);
				free(pl);
				return -1;
			}
			for (int i = 0; i < nd; i++) {
				dead[2 * i] = dw[i].a;
				dead[2 * i + 1] = dw[i].b;
			}
			free(f->dead);
			free(f->dead_why);
			free(f->plat);
			f->dead = dead;
			f->ndead = nd;
			f->dead_why = dw;
			f->plat = pl;
			f->nplat = np;
		}
	}
	return 0;
}

/* The reason a byte of file f is dead (a constant-false branch), or NULL. */
static const range *dead_range_at(const sfile *f, uint32_t byte)
{
	for (int i = 0; i < f->ndead; i++)
		if (byte >= f->dead[2 * i] && byte < f->dead[2 * i + 1])
			return f->dead_why ? &f->dead_why[i] : NULL;
	return NULL;
}

/* The platform range a byte of file f sits in, or NULL. */
static const range *plat_range_at(const sfile *f, uint32_t byte)
{
	for (int i = 0; i < f->nplat; i++)
		if (byte >= f->plat[i].a && byte < f->plat[i].b)
			return &f->plat[i];
	return NULL;
}

/* ---- 5. platform modules ---------------------------------------------------------- */

static int build_import_graph(muh_surface *s)
{
	for (int fi = 0; fi < s->nfiles; fi++) {
		s->files[fi].importers.esz = sizeof(int) * 3;
		s->files[fi].importees.esz = sizeof(int);
	}
	for (int fi = 0; fi < s->nfiles; fi++) {
		sfile *f = &s->files[fi];
		for (int i = 0; i < f->pf->nimports; i++) {
			const pf_import *im = &f->pf->imports[i];
			if (in_dead(f, im->byte))
				continue;
			int m = -1;
			if (im->attr) {
				char buf[600];
				snprintf(buf, sizeof(buf), "%s.%s", im->module, im->attr);
				m = mod_lookup(s, buf);
			}
			if (m < 0)
				m = mod_lookup(s, im->module);
			if (m < 0 || m == fi)
				continue;
			int plat = 0;
			if ((im->guard >= 0 && !im->guard_else && f->pf->guards[im->guard].platform) ||
			    plat_range_at(f, im->byte))
				plat = 1;
			int *e = vec_push(&s->files[m].importers);
			if (!e)
				return -1;
			e[0] = fi;
			e[1] = im->line;
			e[2] = plat;
			int *o = vec_push(&f->importees);
			if (!o)
				return -1;
			*o = m;
		}
	}
	return 0;
}

static void compute_platform(muh_surface *s)
{
	for (int fi = 0; fi < s->nfiles; fi++) {
		sfile *f = &s->files[fi];
		const char *p = f->is_test ? NULL : path_platform(f->rel);
		if (p) {
			f->platform = 1;
			f->plat_file = -1;
			f->plat_why = sa_fmt(s, "%s module (by its path)", p);
		}
	}
	for (int round = 0; round < 12; round++) {
		int changed = 0;
		for (int fi = 0; fi < s->nfiles; fi++) {
			sfile *f = &s->files[fi];
			if (f->platform || f->is_test || !f->importers.n)
				continue;
			int live = 0, plat = 0, pf = -1, pl = 0;
			for (size_t i = 0; i < f->importers.n; i++) {
				int *e = (int *)f->importers.p + 3 * i;
				sfile *g = &s->files[e[0]];
				if (g->is_test)
					continue;
				if (g->platform || e[2]) {
					plat++;
					pf = e[0];
					pl = e[1];
				} else {
					live++;
				}
			}
			if (!live && plat) {
				f->platform = 1;
				f->plat_file = pf;
				f->plat_line = pl;
				const char *cond = NULL;
				const sfile *imf = &s->files[pf];
				for (int q = 0; q < imf->pf->nimports && !cond; q++) {
					const range *g = imf->pf->imports[q].line == pl
					                     ? plat_range_at(imf, imf->pf->imports[q].byte)
					                     : NULL;
					if (g)
						cond = g->note;
				}
				f->plat_why =
				    s->files[pf].platform
				        ? sa_fmt(s, "imported only by platform module %s",
				                 s->files[pf].rel)
				    : cond ? sa_fmt(s, "imported only under a platform check: %s", cond)
				           : sa_fmt(s, "imported only under a platform check");
				changed = 1;
			}
		}
		if (!changed)
			break;
	}
}

/* ---- 6. reachability ------------------------------------------------------------- */

static int outer_scope(const pyfile *pf, int sc)
{
	int guard = 0;
	while (sc >= 0 && pf->scopes[sc].parent >= 0 && guard++ < 1000)
		sc = pf->scopes[sc].parent;
	return sc;
}

static enum reach scope_reach(muh_surface *s, int fi, int sc, int *ef, int *el);

/* Is the top-level scope an --entry (NAME or module.NAME)? */
static int is_entry(const muh_surface *s, int fi, int top)
{
	const pf_scope *sc = &s->files[fi].pf->scopes[top];
	for (int i = 0; i < s->opt.nentries; i++) {
		const char *e = s->opt.entries[i];
		const char *dot = strrchr(e, '.');
		if (!strcmp(e, sc->name))
			return 1;
		if (dot && !strcmp(dot + 1, sc->name) &&
		    strlen(s->files[fi].module) == (size_t)(dot - e) &&
		    !strncmp(e, s->files[fi].module, (size_t)(dot - e)))
			return 1;
	}
	return 0;
}

/* Would a function nothing in the tree names be called from outside? A
 * registry decorator, `main`, dunder methods, an --entry name, or --library
 * say maybe (unknown); else it is dead ("no call in the tree"). */
static int maybe_called_from_outside(const muh_surface *s, int fi, int top)
{
	const pyfile *pf = s->files[fi].pf;
	const pf_scope *sc = &pf->scopes[top];
	return s->opt.library || !(sc->flags & PF_FUNC) || (sc->flags & PF_DECORATED) ||
	       !strcmp(sc->name, "main") || !strncmp(sc->name, "__", 2) || is_entry(s, fi, top);
}

/* What kind of reader a load is: live, test, platform ... s->cls_why gets
 * the reason when a range, a dead store or the enclosing function decides. */
static enum reach ref_class(muh_surface *s, int rf, const pf_ref *r, int *ef, int *el)
{
	sfile *f = &s->files[rf];
	*ef = rf;
	*el = r->line;
	s->cls_why = (why_at){NULL, -1, -1, NULL, -1, NULL};
	if (r->flags & PF_R_DEAD) {
		s->cls_why = (why_at){NULL, rf, r->dead, NULL, -1, NULL};
		return R_UNREACH;
	}
	if (r->flags & PF_R_UNREACH)
		return R_UNREACH;
	const range *dr = dead_range_at(f, r->byte);
	if (dr || in_dead(f, r->byte)) {
		s->cls_why = (why_at){dr ? dr->note : NULL, -1, -1, dr, rf, NULL};
		return R_UNREACH;
	}
	if (f->is_test)
		return R_TEST;
	if (f->platform)
		return R_PLATFORM;
	const range *pr = plat_range_at(f, r->byte);
	if (pr) {
		s->cls_why = (why_at){pr->note, -1, -1, pr, rf, NULL};
		return R_PLATFORM;
	}
	if (r->scope < 0)
		return R_LIVE;
	int xf, xl;
	enum reach e = scope_reach(s, rf, r->scope, &xf, &xl);
	int top = outer_scope(f->pf, r->scope);
	if (e == R_NONE) {
		/* evidence: the definition nothing names (the root of the chain) */
		*el = f->pf->scopes[top].line;
		if (maybe_called_from_outside(s, rf, top))
			return R_UNKNOWN;
		s->cls_why = (why_at){sa_fmt(s, "%s, which nothing in the tree calls or names",
		                             f->pf->scopes[top].qual),
		                      -1, -1, NULL, -1, NULL};
		return R_NOCALL;
	}
	if (e != R_LIVE && e != R_BUSY && xf >= 0) {
		/* the evidence is where the enclosing function is reached from */
		*ef = xf;
		*el = xl;
		s->cls_why = f->reach_why[top];
	}
	return e;
}

/* Combines reader classes: live beats unknown beats platform beats test
 * beats unreachable. */
static int reach_rank(enum reach r)
{
	switch (r) {
	case R_LIVE:
		return 6;
	case R_BUSY:
		return 6;
	case R_UNKNOWN:
		return 5;
	case R_PLATFORM:
		return 4;
	case R_TEST:
		return 3;
	case R_UNREACH:
		return 2;
	case R_NOCALL:
		return 2;
	default:
		return 0;
	}
}

/* Readers of the top-level name `name` of file tfi, excluding loads inside
 * the byte range [skip_a, skip_b) of tfi (the definition itself). Returns
 * the best class and its place. */
static enum reach readers_of(muh_surface *s, int tfi, const char *name, uint32_t skip_a,
                             uint32_t skip_b, int *ef, int *el)
{
	const vec *list = refs_named(s, name);
	enum reach best = R_NONE;
	why_at bw = {NULL, -1, -1, NULL, -1, NULL};
	int bsc = -1, best_script = 0;
	*ef = -1;
	*el = 0;
	if (!list) {
		s->best_why = bw;
		s->best_scope = -1;
		return R_NONE;
	}
	for (size_t i = 0; i < list->n; i++) {
		const ref_at *ra = (const ref_at *)list->p + i;
		const pf_ref *r = &s->files[ra->file].pf->refs[ra->ref];
		if (ra->file == tfi && r->byte >= skip_a && r->byte < skip_b)
			continue;
		int hit = ref_hits(s, ra->file, r, tfi, name);
		if (!hit)
			continue;
		int xf, xl;
		enum reach c;
		if (hit == 2) {
			int df = s->dead_import_file, dl = s->dead_import_line;
			c = R_UNREACH;
			xf = df;
			xl = dl;
			s->cls_why = (why_at){
			    sa_fmt(s, "%s is bound only by the import at %s:%d, under an `if` that is "
			              "always false",
			           r->obj ? r->obj : name, s->files[df].rel, dl),
			    -1, -1, NULL, -1, NULL};
			for (int q = 0; q < s->files[df].pf->nimports; q++) {
				const pf_import *im = &s->files[df].pf->imports[q];
				const range *g = im->line == dl ? dead_range_at(&s->files[df], im->byte) : NULL;
				if (g) {
					s->cls_why.note = sa_fmt(s, "%s; %s", s->cls_why.note, g->note);
					s->cls_why.rng = g;
					s->cls_why.rfile = df;
					s->cls_why.lead = sa_fmt(s, "%s is bound only by this import",
					                         r->obj ? r->obj : name);
					break;
				}
			}
		} else {
			c = ref_class(s, ra->file, r, &xf, &xl);
		}
		/* a live reader in the engine beats one in benchmarks/, examples/ ... */
		int script = path_is_script(s->files[ra->file].rel);
		if (reach_rank(c) > reach_rank(best) ||
		    (best == R_LIVE && best_script && !script && reach_rank(c) == 6)) {
			best = c == R_BUSY ? R_LIVE : c;
			best_script = script;
			*ef = xf;
			*el = xl;
			bw = s->cls_why;
			bsc = hit == 2 ? -1 : r->scope;
			if (best == R_LIVE && !script)
				break;
		}
	}
	s->best_why = bw;
	s->best_scope = bsc;
	return best;
}

/* A class that declares another device (pf_scope.plat_expr: `_enum =
 * PlatformEnum.CPU`, `_supports_current_device` returning `is_rocm() and
 * ...`): the note saying so, else NULL. */
static const char *class_platform(muh_surface *s, int fi, int top)
{
	const pf_scope *scp = &s->files[fi].pf->scopes[top];
	if (!(scp->flags & PF_CLASS) || scp->plat_expr < 0)
		return NULL;
	cres r = {0};
	const_eval(s, fi, scp->plat_expr, -1, 0, &r);
	const char *cond = s->files[fi].pf->exprs[scp->plat_expr].text;
	const char *decl = strstr(cond, "PlatformEnum")
	                       ? sa_fmt(s, "declares `_enum = %s` (line %d)", cond, scp->plat_line)
	                       : sa_fmt(s, "supports only devices where `%s` (line %d)", cond,
	                                scp->plat_line);
	if (r.v == 0 && r.plat && r.plat != CR_CAP && r.plat != PF_PLAT_CUDA)
		return sa_fmt(s, "class %s %s: %s only", scp->qual, decl, plat_name(r.plat));
	if (r.v < 0 && r.plat == CR_CAP)
		return sa_fmt(s, "class %s %s (a device-capability check: muh scan --device "
		                 "NAME decides)",
		              scp->qual, decl);
	return NULL;
}

/* Reachability of the outermost scope that contains sc: classes are live
 * when any live code names them; functions take the best class of their
 * readers (recursively). */
static enum reach scope_reach(muh_surface *s, int fi, int sc, int *ef, int *el)
{
	sfile *f = &s->files[fi];
	int top = outer_scope(f->pf, sc);
	*ef = -1;
	*el = 0;
	s->best_why = (why_at){NULL, -1, -1, NULL, -1, NULL};
	s->best_scope = -1;
	if (top < 0)
		return R_LIVE;
	if (f->reach[top] == R_BUSY)
		return R_BUSY;
	if (f->reach[top] != R_TODO) {
		*ef = f->reach_file[top];
		*el = f->reach_line[top];
		s->best_why = f->reach_why[top];
		s->best_scope = f->reach_scope[top];
		return f->reach[top];
	}
	f->reach[top] = R_BUSY;
	const pf_scope *scp = &f->pf->scopes[top];
	const char *pnote = class_platform(s, fi, top);
	enum reach r;
	if (pnote) { /* a class for another device: whoever names it */
		r = R_PLATFORM;
		*ef = fi;
		*el = scp->plat_line;
		s->best_scope = -1;
		s->best_why = (why_at){pnote, -1, -1, NULL, -1, NULL};
	} else {
		r = readers_of(s, fi, scp->name, scp->start, scp->end, ef, el);
	}
	if (r != R_LIVE && is_entry(s, fi, top)) { /* called from outside */
		r = R_LIVE;
		*ef = -1;
		s->best_scope = -1;
		s->best_why = (why_at){NULL, -1, -1, NULL, -1, NULL};
	}
	f->reach[top] = (unsigned char)r;
	f->reach_file[top] = *ef;
	f->reach_line[top] = *el;
	f->reach_scope[top] = s->best_scope;
	f->reach_why[top] = s->best_why;
	return r;
}

/* ---- 7. knobs and verdicts ------------------------------------------------------- */

typedef struct kb {
	muh_surface *s;
	vec steps;  /* scan_step */
	vec unsafe; /* const char* */
	int over_file, over_line; /* a verdict's overwrite in another place (setter) */
} kb;

static void step(kb *b, int fi, int line, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void step(kb *b, int fi, int line, const char *fmt, ...)
{
	char buf[600];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	scan_step *st = vec_push(&b->steps);
	if (!st)
		return;
	st->file = fi >= 0 ? b->s->files[fi].rel : "";
	st->line = line;
	st->note = sa_str(b->s, buf);
}

static void step_file(kb *b, const char *rel, int line, const char *note)
{
	scan_step *st = vec_push(&b->steps);
	if (!st)
		return;
	st->file = rel;
	st->line = line;
	st->note = sa_str(b->s, note);
}

static const char *scope_qual(const pyfile *pf, int sc)
{
	return sc >= 0 ? pf->scopes[sc].qual : "<module>";
}

/* Evidence for a dead piece of file fi (pf_dead d), one step per link:
 * `x = ...` read only by dead code -> `y = ...` overwritten at line N. */
static void explain_dead(kb *b, int fi, int d)
{
	const pyfile *pf = b->s->files[fi].pf;
	for (int n = 0; d >= 0 && d < pf->ndeads && n < 8; n++) {
		const pf_dead *x = &pf->deads[d];
		if (x->kind == PF_D_OVERWRITE) {
			step(b, fi, x->line, "%s is assigned here and overwritten before any read",
			     x->name);
			for (int i = 0; i < x->nkill && i < 4; i++)
				step(b, fi, x->kills[i], "%s overwritten here%s", x->name,
				     x->nkill > 1 ? " (on every path)" : "");
			return;
		}
		if (x->kind == PF_D_BRANCH) {
			const pf_guard *g = x->guard >= 0 ? &pf->guards[x->guard] : NULL;
			const char *lit = "a literal";
			for (int i = 0; i < pf->nasgs; i++)
				if (pf->asgs[i].line == x->kill_line && !strcmp(pf->asgs[i].name, x->name) &&
				    pf->asgs[i].lit_text)
					lit = pf->asgs[i].lit_text;
			step(b, fi, x->kill_line, "%s = %s here", x->name, lit);
			step(b, fi, x->line, "so this branch of `if %s:` (line %d) never runs",
			     g && g->cond ? g->cond : x->name, g ? g->line : x->line);
			return;
		}
		step(b, fi, x->line, "%s is assigned here and read only by dead code (line %d)",
		     x->name, x->kill_line);
		d = x->via;
	}
}

/* Evidence for a dead / platform range of file fi: the if, then each
 * constant behind its value (file:line). */
static void explain_range(kb *b, int fi, const range *g)
{
	step(b, fi, g->line, "%s", g->head ? g->head : g->note);
	for (int i = g->nev - 1; i >= 0; i--) /* outermost binding first */
		if (g->evf[i] >= 0)
			step(b, g->evf[i], g->evl[i], "%s", g->evn[i]);
		else
			step(b, fi, g->line, "%s", g->evn[i]);
}

/* "named by the string 'pkg.mod.Name'" when file fi names name at line by
 * a dotted string (PF_R_STR), else NULL. */
static const char *str_ref_at(muh_surface *s, int fi, int line, const char *name)
{
	const vec *list = refs_named(s, name);
	for (size_t i = 0; list && i < list->n; i++) {
		const ref_at *ra = (const ref_at *)list->p + i;
		const pf_ref *r = &s->files[ra->file].pf->refs[ra->ref];
		if (ra->file == fi && r->line == line && (r->flags & PF_R_STR))
			return sa_fmt(s, "named by its path in a string (%s.%s)", r->obj, name);
	}
	return NULL;
}

/* Evidence: who calls the function holding scope sc, and who calls that,
 * up to max links, while the chain is live. */
static void call_chain(kb *b, int fi, int sc, int max)
{
	muh_surface *s = b->s;
	for (int n = 0; n < max && fi >= 0; n++) {
		sfile *f = &s->files[fi];
		int top = outer_scope(f->pf, sc);
		if (top < 0 || f->reach[top] != R_LIVE || f->reach_file[top] < 0)
			return;
		int ef = f->reach_file[top], el = f->reach_line[top], esc = f->reach_scope[top];
		const pyfile *ep = s->files[ef].pf;
		const char *str = str_ref_at(s, ef, el, f->pf->scopes[top].name);
		step(b, ef, el, "%s is %s here%s%s", f->pf->scopes[top].qual,
		     str                                      ? str
		     : (f->pf->scopes[top].flags & PF_CLASS) ? "named"
		                                              : "called",
		     esc >= 0 ? ", in " : " (module-level code)", esc >= 0 ? ep->scopes[esc].qual : "");
		if (esc < 0)
			return;
		fi = ef;
		sc = esc;
	}
}

/* Explains a reader class as a verdict; returns the verdict. s->best_why
 * (set by the readers_of/scope_reach call that gave r) adds the reason. */
static enum scan_verdict verdict_from(kb *b, enum reach r, int ef, int el, const char *what,
                                      const char **why)
{
	muh_surface *s = b->s;
	why_at bw = s->best_why;
	switch (r) {
	case R_LIVE:
	case R_BUSY:
		if (ef >= 0) {
			int rsc = s->best_scope;
			step(b, ef, el, "%s read here (reachable code)", what);
			if (rsc >= 0)
				call_chain(b, ef, rsc, 6);
		}
		*why = ef >= 0 ? sa_fmt(s, "read at %s:%d", s->files[ef].rel, el)
		               : "read by module-level code";
		return SCAN_LIVE;
	case R_UNKNOWN: {
		const char *root = NULL;
		if (ef >= 0) {
			const pyfile *pf = s->files[ef].pf;
			for (int i = 0; i < pf->nscopes && !root; i++)
				if (pf->scopes[i].parent < 0 && pf->scopes[i].line == el)
					root = pf->scopes[i].qual;
		}
		if (root) {
			step(b, ef, el,
			     "%s is reached only through %s, which nothing in the tree names", what,
			     root);
			*why = sa_fmt(s,
			              "reached only through %s, never named statically (registry "
			              "or dynamic call?)",
			              root);
		} else {
			if (ef >= 0)
				step(b, ef, el,
				     "%s read here, in code that nothing names statically", what);
			*why = "read only from code never referenced by name (dynamic call?)";
		}
		return SCAN_UNKNOWN;
	}
	case R_PLATFORM:
		if (ef >= 0 && bw.rng && !s->files[ef].platform) {
			step(b, ef, el, "%s read here, in a branch for another platform:", what);
			explain_range(b, bw.rfile, bw.rng);
			*why = sa_fmt(s, "read only where %s", bw.note);
			return SCAN_PLATFORM;
		}
		if (ef >= 0 && bw.note && !s->files[ef].platform) {
			step(b, ef, el, "%s read here: %s", what, bw.note);
			*why = sa_fmt(s, "read only where %s", bw.note);
			return SCAN_PLATFORM;
		}
		if (ef >= 0)
			step(b, ef, el, "%s read here, in another platform's module (%s)", what,
			     s->files[ef].plat_why ? s->files[ef].plat_why : "platform");
		*why = "read only by another platform's backend";
		return SCAN_PLATFORM;
	case R_NOCALL:
		if (ef >= 0)
			step(b, ef, el, "%s read only in %s", what,
			     bw.note ? bw.note : "a function nothing in the tree calls");
		*why = sa_fmt(s, "no call in the tree: %s", bw.note ? bw.note : "never called");
		return SCAN_DEAD;
	case R_TEST:
		if (ef >= 0)
			step(b, ef, el, "%s read only from tests (e.g. here)", what);
		*why = "read only from tests";
		return SCAN_DEAD;
	case R_UNREACH:
		if (bw.dead >= 0) {
			if (ef >= 0)
				step(b, ef, el, "%s is reached only from here, in code that is dead:", what);
			explain_dead(b, bw.file, bw.dead);
			*why = "read only by dead code (overwritten or disabled before use)";
			return SCAN_DEAD;
		}
		if (ef >= 0 && bw.rng) {
			if (bw.lead)
				step(b, ef, el, "%s (%s is read only through it)", bw.lead, what);
			else
				step(b, ef, el, "%s read only on an unreachable path:", what);
			explain_range(b, bw.rfile, bw.rng);
			*why = sa_fmt(s, "read only on unreachable paths (%s)", bw.note);
			return SCAN_DEAD;
		}
		if (ef >= 0 && bw.note) {
			step(b, ef, el, "%s read only on an unreachable path: %s", what, bw.note);
			*why = sa_fmt(s, "read only on unreachable paths (%s)", bw.note);
			return SCAN_DEAD;
		}
		if (ef >= 0)
			step(b, ef, el,
			     "%s read only on an unreachable path (after return, or under a "
			     "constant-false if)",
			     what);
		*why = "read only on unreachable paths";
		return SCAN_DEAD;
	default:
		*why = "never read";
		return SCAN_DEAD;
	}
}

/* Follows unconditional calls from function (fi, sc) up to depth 3 looking
 * for a raise of NotImplementedError; fills evidence. */
static int raises_nie(kb *b, int fi, int sc, int depth);

static int call_def(muh_surface *s, int fi, const pf_call *c, int *ofi, int *osc, int any);

/* The function a call resolves to: (*ofi, *osc) or 0. */
static int call_target(muh_surface *s, int fi, const pf_call *c, int *ofi, int *osc)
{
	return call_def(s, fi, c, ofi, osc, 0);
}

int scan_host_call_def(muh_surface *s, int fi, const pf_call *c, int *ofi, int *osc)
{
	return call_def(s, fi, c, ofi, osc, 1);
}

/* The top-level definition a call resolves to (any: a class too). */
static int call_def(muh_surface *s, int fi, const pf_call *c, int *ofi, int *osc, int any)
{
	if (!c->fname)
		return 0;
	int tf = -1;
	const char *tn = c->fname;
	if (c->obj) {
		tf = resolve_obj(s, fi, c->obj);
		if (tf >= 0) {
			int xf;
			const char *xn;
			if (resolve_name(s, tf, c->fname, &xf, &xn, 0) == RES_SYMBOL) {
				tf = xf;
				tn = xn;
			}
		}
	} else {
		const char *xn;
		if (resolve_name(s, fi, c->fname, &tf, &xn, 0) != RES_SYMBOL)
			tf = -1;
		else
			tn = xn;
	}
	if (tf < 0)
		return 0;
	int d = def_key_get(s, tf, tn);
	if (d < 0)
		return 0;
	if (d < 0 || (!any && !(s->files[tf].pf->scopes[d].flags & PF_FUNC)))
		return 0;
	*ofi = tf;
	*osc = d;
	return 1;
}

/* Overridden defaults of parameters (issue 28 item 3): the why when every
 * call in the tree of k's function (a top-level function of file fi;
 * outside tests, not on unreachable paths) passes k's parameter, by
 * keyword or by position, and nothing uses the function other than by
 * calling it (no alias, partial or function passed as a value, whose calls
 * are unseen); a step per call (up to 5, then one counting the rest).
 * NULL otherwise (no call, a call without it, a splat of *args or of **kwargs). */
static const char *param_always_passed(kb *b, int fi, const pf_knob *k)
{
	muh_surface *s = b->s;
	const pyfile *pf = s->files[fi].pf;
	const pf_scope *sc = &pf->scopes[k->scope];
	int pos = k->param - 1, n = 0, nuse = 0, first_f = -1, first_l = 0;
	size_t more_at = 0;
	for (int pass = 0; pass < 2; pass++)
		for (int g = 0; g < s->nfiles; g++) {
			sfile *gf = &s->files[g];
			const pyfile *gp = gf->pf;
			if (gf->is_test)
				continue;
			if (!pass) { /* every use of the name that resolves to it */
				for (int i = 0; i < gp->nrefs; i++) {
					const pf_ref *r = &gp->refs[i];
					int of;
					const char *on;
					if (strcmp(r->name, sc->name) || r->obj || (r->flags & PF_R_STR))
						continue;
					if (g == fi ? !local_binding(gp, r->scope, r->name)
					            : (resolve_name(s, g, r->name, &of, &on, 0) == RES_SYMBOL &&
					               of == fi && !strcmp(on, sc->name)))
						nuse++;
				}
				continue;
			}
			for (int i = 0; i < gp->ncalls; i++) {
				const pf_call *c = &gp->calls[i];
				int of, osc;
				if (!c->fname || strcmp(c->fname, sc->name) ||
				    !call_def(s, g, c, &of, &osc, 0) || of != fi || osc != k->scope)
					continue;
				if (in_dead(gf, c->byte))
					continue; /* a call that never runs passes nothing */
				int passes = 0;
				for (int a = 0; a < c->nargs; a++) {
					if (c->args[a].splat)
						return NULL; /* *args / **kwargs: unseen */
					passes |= (c->args[a].kw && !strcmp(c->args[a].kw, k->name)) ||
					          (!c->args[a].kw && c->args[a].pos == pos);
				}
				if (!passes)
					return NULL;
				if (!n) {
					first_f = g;
					first_l = c->line;
				}
				if (n < 5)
					step(b, g, c->line, "%s(..., %s=...) here passes it", sc->qual, k->name);
				else if (n == 5) {
					more_at = b->steps.n;
					step(b, g, c->line, "and more calls pass it, from here on");
				}
				n++;
			}
		}
	if (!n || nuse > n)
		return NULL;
	if (n > 5 && more_at < b->steps.n)
		((scan_step *)b->steps.p)[more_at].note =
		    sa_fmt(s, "and %d more calls pass it, from here on", n - 5);
	return sa_fmt(s, "every call of %s passes %s (%d call%s, first at %s:%d): the default %s "
	                 "is never used",
	              sc->qual, k->name, n, n == 1 ? "" : "s", s->files[first_f].rel, first_l,
	              k->text);
}

static int raises_nie(kb *b, int fi, int sc, int depth)
{
	muh_surface *s = b->s;
	const pyfile *pf = s->files[fi].pf;
	const pf_scope *scp = &pf->scopes[sc];
	if (scp->flags & PF_RAISES_NIE) {
		step(b, fi, scp->line, "def %s", scp->qual);
		step(b, fi, scp->raise_line, "raise NotImplementedError, unconditionally");
		return 1;
	}
	if (depth >= 3)
		return 0;
	for (int i = 0; i < pf->ncalls; i++) {
		const pf_call *c = &pf->calls[i];
		if (c->scope != sc || !(c->flags & PF_C_UNCOND) || (c->flags & PF_C_UNREACH))
			continue;
		int tf, ts;
		if (!call_target(s, fi, c, &tf, &ts) || (tf == fi && ts == sc))
			continue;
		size_t mark = b->steps.n;
		step(b, fi, c->line, "%s calls %s unconditionally", scp->qual, c->callee);
		if (raises_nie(b, tf, ts, depth + 1))
			return 1;
		b->steps.n = mark;
	}
	return 0;
}

/* Unsafe values of a boolean knob: a guard `if NAME:` in the same scope whose
 * branch for the other value calls a function that raises
 * NotImplementedError. Adds the evidence chain. */
static void check_unsafe(kb *b, int fi, const pf_knob *k)
{
	muh_surface *s = b->s;
	const pyfile *pf = s->files[fi].pf;
	if (!k->eval || (strcmp(k->eval, "True") && strcmp(k->eval, "False")))
		return;
	int cur = !strcmp(k->eval, "True");
	for (int val = 0; val <= 1; val++) {
		int found = 0;
		for (int gi = 0; gi < pf->nguards && !found; gi++) {
			const pf_guard *g = &pf->guards[gi];
			if (!g->name || g->obj || strcmp(g->name, k->name) || g->scope != k->scope)
				continue;
			int takes_cons = g->negated ? !val : val;
			uint32_t a = takes_cons ? g->cons_start : g->alt_start,
			         e = takes_cons ? g->cons_end : g->alt_end;
			if (!e)
				continue;
			for (int ci = 0; ci < pf->ncalls && !found; ci++) {
				const pf_call *c = &pf->calls[ci];
				if (c->byte < a || c->byte >= e)
					continue;
				int tf, ts;
				if (!call_target(s, fi, c, &tf, &ts))
					continue;
				size_t mark = b->steps.n;
				step(b, fi,
				     takes_cons ? g->line : (g->else_line ? g->else_line : g->line),
				     "%s = %s takes this branch of `if %s%s:`", k->name,
				     val ? "True" : "False", g->negated ? "not " : "", k->name);
				step(b, fi, c->line, "calls %s", c->callee);
				if (raises_nie(b, tf, ts, 0)) {
					found = 1;
					const char **u = vec_push(&b->unsafe);
					if (u)
						*u = val ? "True" : "False";
				} else {
					b->steps.n = mark;
				}
			}
		}
		(void)cur;
	}
}

/* Is obj.NAME at scope sc of file gf a read of engine argument k (file fi)?
 * `self.NAME` inside the engine-argument class itself or inside a *Config
 * class (the engine's config objects copy the arguments by name), or
 * `args.NAME` / `engine_args.NAME` outside benchmarks/ and examples/. */
static int engine_arg_read(muh_surface *s, int gf, int sc, const char *obj, int fi,
                           const pf_knob *k)
{
	if (!obj)
		return 0;
	const pyfile *gp = s->files[gf].pf;
	const char *rel = s->files[gf].rel;
	if (!strncmp(rel, "benchmarks/", 11) || !strncmp(rel, "examples/", 9))
		return 0;
	if (!strcmp(obj, "self")) {
		int cls = -1;
		for (int q = sc, g = 0; q >= 0 && g < 64; q = gp->scopes[q].parent, g++)
			if (gp->scopes[q].flags & PF_CLASS) {
				cls = q;
				break;
			}
		if (cls < 0)
			return 0;
		if (gf == fi && cls == k->scope)
			return 1;
		size_t l = strlen(gp->scopes[cls].name);
		return l > 6 && !strcmp(gp->scopes[cls].name + l - 6, "Config");
	}
	return !strcmp(obj, "args") || !strcmp(obj, "engine_args") ||
	       !strcmp(obj, "self.engine_args") || !strcmp(obj, "parsed_args");
}

/* Does guard g (file gf) compare knob k (file fi)? */
static int guard_names_knob(muh_surface *s, int gf, const pf_guard *g, int fi, const pf_knob *k)
{
	if (!g->cmp_name || strcmp(g->cmp_name, k->name))
		return 0;
	if (k->kind == PF_K_ENGINE_ARG)
		return engine_arg_read(s, gf, g->scope, g->cmp_obj, fi, k);
	if (k->scope >= 0)
		return gf == fi && !g->cmp_obj && g->scope == k->scope;
	if (g->cmp_obj)
		return resolve_obj(s, gf, g->cmp_obj) == fi;
	if (gf == fi)
		return g->scope < 0 || !local_binding(s->files[gf].pf, g->scope, k->name);
	int ofi;
	const char *on;
	return resolve_name(s, gf, k->name, &ofi, &on, 0) == RES_SYMBOL && ofi == fi;
}

/* Evidence: the ifs around byte (outermost first) in its function, other
 * than `skip`; returns how many (the unsafe value needs those to hold). */
static int enclosing_guards(kb *b, int gf, uint32_t byte, int scope, const pf_guard *skip)
{
	const pyfile *gp = b->s->files[gf].pf;
	int n = 0;
	for (int i = 0; i < gp->nguards; i++) {
		const pf_guard *e = &gp->guards[i];
		if (e == skip || e->scope != scope)
			continue;
		int in_cons = byte >= e->cons_start && byte < e->cons_end;
		int in_alt = e->alt_end && byte >= e->alt_start && byte < e->alt_end;
		if (!in_cons && !in_alt)
			continue;
		step(b, gf, e->line, "%s `if %s:`", in_cons ? "under" : "in the else of",
		     e->cond ? e->cond : "?");
		n++;
	}
	return n;
}

static void add_unsafe(kb *b, const char *v)
{
	const char **u = vec_push(&b->unsafe);
	if (u)
		*u = v;
}

/* "'a', 'b'" from a guard's compared literals. */
static const char *vals_text(muh_surface *s, const char *const *v, int n)
{
	strbuf all = {0};
	for (int i = 0; i < n; i++)
		strbuf_printf(&all, "%s%s", i ? ", " : "", v[i]);
	char buf[600]; /* at a word, with how much more (textcut.h) */
	text_cut(buf, sizeof(buf), all.b);
	free(all.b);
	return sa_str(s, buf);
}

/* The value of the other side of an assert: a literal, or the default of
 * the knob of that name (an engine-argument field, a constant of fi). */
static const char *assert_other(muh_surface *s, int fi, const char *name, const char *obj,
                                const char *val, int *ofile, int *oline)
{
	*ofile = -1;
	*oline = 0;
	if (val)
		return val;
	for (int g = 0; g < s->nfiles; g++) {
		const pyfile *pf = s->files[g].pf;
		if (s->files[g].is_test || (!obj && g != fi))
			continue;
		for (int i = 0; i < pf->nknobs; i++) {
			const pf_knob *o = &pf->knobs[i];
			if (strcmp(o->name, name) || !o->eval ||
			    (obj ? o->kind != PF_K_ENGINE_ARG
			         : (o->kind != PF_K_CONSTANT || o->scope >= 0)))
				continue;
			*ofile = g;
			*oline = o->line;
			return o->eval;
		}
	}
	return NULL;
}

/* Unsafe values beyond a boolean's NotImplementedError: values an if/elif
 * chain sends into a raise (`if MODE == 'legacy': raise ...`, or the else
 * of a chain that compares MODE with every accepted value), and values an
 * assert rejects (`assert max_batch_tokens >= max_request_len`, maybe under
 * a feature flag's guard). Appends the values and the evidence; returns the
 * why (or NULL). */
static const char *check_unsafe_values(kb *b, int fi, const pf_knob *k)
{
	muh_surface *s = b->s;
	const char *why = NULL;
	if (!s->cmp_built) { /* most knobs are compared nowhere: skip them fast */
		s->cmp_built = 1;
		for (int gf = 0; gf < s->nfiles; gf++) {
			const pyfile *gp = s->files[gf].pf;
			for (int i = 0; i < gp->nguards; i++)
				if (gp->guards[i].cmp_name && !smap_slot(&s->cmp_names, gp->guards[i].cmp_name, 1))
					s->oom = 1;
			for (int i = 0; i < gp->nasserts; i++) {
				if (gp->asserts[i].lname && !smap_slot(&s->cmp_names, gp->asserts[i].lname, 1))
					s->oom = 1;
				if (gp->asserts[i].rname && !smap_slot(&s->cmp_names, gp->asserts[i].rname, 1))
					s->oom = 1;
			}
		}
	}
	if (!smap_slot(&s->cmp_names, k->name, 0))
		return NULL;
	for (int gf = 0; gf < s->nfiles; gf++) {
		sfile *g = &s->files[gf];
		if (g->is_test || g->platform)
			continue;
		const pyfile *gp = g->pf;
		for (int gi = 0; gi < gp->nguards; gi++) {
			const pf_guard *gd = &gp->guards[gi];
			if (!guard_names_knob(s, gf, gd, fi, k) || in_dead(g, gd->byte) ||
			    plat_range_at(g, gd->byte))
				continue;
			int op = gd->cmp_op;
			if (gd->cons_raise && (op == '=' || op == 'i' || op == '!' || op == 'n')) {
				const char *vt = vals_text(s, gd->cmp_vals, gd->ncmp);
				const char *u = op == '=' || op == 'i' ? NULL
				                                       : sa_fmt(s, "not in (%s)", vt);
				int nc = enclosing_guards(b, gf, gd->byte, gd->scope, gd);
				step(b, gf, gd->line, "%s %s %s%s%s takes this branch", k->name,
				     op == '=' || op == 'i' ? "=" : "not in", op == 'i' || op == 'n' ? "(" : "",
				     vt, op == 'i' || op == 'n' ? ")" : "");
				step(b, gf, gd->cons_raise, "raise %s", gd->cons_exc ? gd->cons_exc : "");
				if (u)
					add_unsafe(b, u);
				else
					for (int i = 0; i < gd->ncmp; i++)
						add_unsafe(b, gd->cmp_vals[i]);
				if (!why)
					why = sa_fmt(s, "%s %s %s raises %s%s", k->name,
					             u ? "outside" : "=", u ? u + 7 : vt,
					             gd->cons_exc ? gd->cons_exc : "an exception",
					             nc ? " (when the enclosing ifs hold)" : "");
			}
			/* the else of a chain that names every accepted value */
			if (gd->chain == gi && gd->else_raise) {
				const char *acc[64];
				int na = 0, all = 1;
				for (int j = gi; j < gp->nguards && all; j++) {
					const pf_guard *e = &gp->guards[j];
					if (e->chain != gi)
						continue;
					if (!guard_names_knob(s, gf, e, fi, k) ||
					    (e->cmp_op != '=' && e->cmp_op != 'i')) {
						all = 0;
						break;
					}
					for (int q = 0; q < e->ncmp && na < 64; q++)
						acc[na++] = e->cmp_vals[q];
				}
				if (!all || !na)
					continue;
				const char *vt = vals_text(s, acc, na);
				enclosing_guards(b, gf, gd->byte, gd->scope, gd);
				step(b, gf, gd->line, "the if/elif chain on %s accepts %s", k->name, vt);
				step(b, gf, gd->else_raise, "any other value takes the else: raise %s",
				     gd->else_exc ? gd->else_exc : "");
				add_unsafe(b, sa_fmt(s, "not in (%s)", vt));
				if (!why)
					why = sa_fmt(s, "%s outside (%s) raises %s", k->name, vt,
					             gd->else_exc ? gd->else_exc : "an exception");
			}
		}
		for (int ai = 0; ai < gp->nasserts; ai++) {
			const pf_assert *a = &gp->asserts[ai];
			int left = a->lname && !strcmp(a->lname, k->name) &&
			           (k->kind == PF_K_ENGINE_ARG
			                ? engine_arg_read(s, gf, a->scope, a->lobj, fi, k)
			                : (!a->lobj && gf == fi));
			int right = a->rname && !strcmp(a->rname, k->name) &&
			            (k->kind == PF_K_ENGINE_ARG
			                 ? engine_arg_read(s, gf, a->scope, a->robj, fi, k)
			                 : (!a->robj && gf == fi));
			if ((!left && !right) || in_dead(g, a->byte) || plat_range_at(g, a->byte))
				continue;
			int of, ol;
			const char *other =
			    left ? assert_other(s, fi, a->rname, a->robj, a->rval, &of, &ol)
			         : assert_other(s, fi, a->lname, a->lobj, a->lval, &of, &ol);
			const char *oname = left ? a->rname : a->lname;
			char *end = NULL;
			double ov = other ? strtod(other, &end) : 0;
			int numeric = other && end != other && !*end;
			char *kend = NULL;
			if (k->eval)
				strtod(k->eval, &kend);
			int knum = k->eval && kend != k->eval && !*kend;
			/* a relation between two arguments: when either default is not
			 * a number (None: set at run time), the relation itself */
			int relation = oname && (!numeric || !knum) && (left ? !a->rval : !a->lval);
			if (!relation && (!numeric || !k->eval))
				continue;
			if (relation) {
				other = oname;
				of = -1;
			}
			/* the values of the knob that fail `K op O` (or `O op K`) */
			int op = a->op;
			if (right) /* mirror O op K into K op' O */
				op = op == 'g' ? 'l' : op == 'l' ? 'g' : op == '>' ? '<' : op == '<' ? '>' : op;
			const char *fail = op == 'g'   ? "<"
			                   : op == '>' ? "<="
			                   : op == 'l' ? ">"
			                   : op == '<' ? ">="
			                   : op == '=' ? "!="
			                               : "==";
			const char *u = sa_fmt(s, "%s %s", fail, other);
			const pf_guard *gd = a->guard >= 0 ? &gp->guards[a->guard] : NULL;
			if (of >= 0)
				step(b, of, ol, "%s defaults to %s", left ? a->rname : a->lname, other);
			enclosing_guards(b, gf, a->byte, a->scope, NULL);
			step(b, gf, a->line, "assert %s fails for %s %s", a->text, k->name, u);
			add_unsafe(b, u);
			(void)ov;
			if (!why)
				why = sa_fmt(s, "%s %s fails `assert %s`%s%s%s", k->name, u, a->text,
				             gd ? " (when `" : "", gd ? (gd->cond ? gd->cond : "?") : "",
				             gd ? "` holds)" : "");
		}
	}
	return why;
}

static muh_knob *emit(muh_surface *s, kb *b, int fi, const pf_knob *k, const char *file,
                      enum scan_verdict v, const char *why)
{
	muh_knob *o = vec_push(&s->knobs);
	if (!o)
		return NULL;
	const pyfile *pf = fi >= 0 ? s->files[fi].pf : NULL;
	o->file = file;
	o->name = k->name;
	o->kind = pyfile_kind_name(k->kind);
	o->scope = pf ? scope_qual(pf, k->scope) : "<file>";
	o->line = k->line;
	o->col = k->col;
	o->end_line = k->end_line;
	o->end_col = k->end_col;
	o->start = k->start;
	o->end = k->end;
	o->value = k->text;
	o->eval = k->eval;
	o->file_hash = pf ? pf->hash : 0;
	if (k->nalts) {
		scan_alt *alts = sa_alloc(s, sizeof(scan_alt) * (size_t)k->nalts);
		if (alts) {
			for (int i = 0; i < k->nalts; i++) {
				alts[i].text = k->alts[i].text;
				alts[i].eval = k->alts[i].eval;
				alts[i].start = k->alts[i].start;
				alts[i].end = k->alts[i].end;
				alts[i].line = k->alts[i].line;
			}
			o->alts = alts;
			o->nalts = k->nalts;
		}
	}
	o->verdict = v;
	o->why = why;
	if (!b->steps.n) /* no verdict without evidence: at least the knob and why */
		step_file(b, file, k->line > 0 ? k->line : 1,
		          sa_fmt(s, "%s: %s", k->name, why ? why : scan_verdict_name(v)));
	if (b->unsafe.n) {
		const char **u = sa_alloc(s, sizeof(char *) * b->unsafe.n);
		if (u) {
			memcpy(u, b->unsafe.p, sizeof(char *) * b->unsafe.n);
			o->unsafe_values = u;
			o->nunsafe = (int)b->unsafe.n;
		}
	}
	if (b->steps.n) {
		scan_step *st = sa_alloc(s, sizeof(scan_step) * b->steps.n);
		if (st) {
			memcpy(st, b->steps.p, sizeof(scan_step) * b->steps.n);
			o->evidence = st;
			o->nevidence = (int)b->steps.n;
		}
	}
	b->steps.n = 0;
	b->unsafe.n = 0;
	return o;
}

/* Loads of a function-local name inside scope sc (or its nested scopes):
 * live, or unreachable (after a return, under a constant-false if, inside
 * dead code: s->best_why says which). */
static enum reach local_readers(muh_surface *s, int fi, const pf_knob *k, int *el)
{
	const pyfile *pf = s->files[fi].pf;
	const pf_scope *scp = &pf->scopes[k->scope];
	const vec *list = refs_named(s, k->name);
	enum reach best = R_NONE;
	why_at bw = {NULL, -1, -1, NULL, -1, NULL};
	*el = 0;
	/* a load before the store reads an earlier value (`if n is None:` then
	 * `n = 4`), unless the store is in a loop; a parameter default is
	 * read by the whole body */
	uint32_t from = scp->start;
	for (int i = 0; i < pf->nasgs && !k->param; i++) {
		const pf_asg *a = &pf->asgs[i];
		if (a->scope == k->scope && k->start >= a->start && k->start < a->end &&
		    !strcmp(a->name, k->name)) {
			from = a->in_loop ? scp->start : a->end;
			break;
		}
	}
	for (size_t i = 0; list && i < list->n; i++) {
		const ref_at *ra = (const ref_at *)list->p + i;
		if (ra->file != fi)
			continue;
		const pf_ref *r = &pf->refs[ra->ref];
		if ((r->flags & ~(unsigned)(PF_R_UNREACH | PF_R_DEAD)) || r->byte < from ||
		    r->byte >= scp->end)
			continue;
		enum reach c = R_LIVE;
		why_at w = {NULL, -1, -1, NULL, -1, NULL};
		const range *dr = dead_range_at(&s->files[fi], r->byte);
		if (r->flags & PF_R_DEAD) {
			c = R_UNREACH;
			w = (why_at){NULL, fi, r->dead, NULL, -1, NULL};
		} else if (r->flags & PF_R_UNREACH) {
			c = R_UNREACH;
		} else if (dr || in_dead(&s->files[fi], r->byte)) {
			c = R_UNREACH;
			w.note = dr ? dr->note : NULL;
		}
		if (reach_rank(c) > reach_rank(best)) {
			best = c;
			bw = w;
			*el = r->line;
		}
	}
	s->best_why = bw;
	return best;
}

static int find_jit(muh_surface *s, int fi, const pf_call *c, int *kfi, int *ksc)
{
	if (!c->fname)
		return 0;
	int tf = -1, d = -1;
	const char *tn = c->fname;
	if (c->obj) {
		tf = resolve_obj(s, fi, c->obj);
	} else {
		const char *xn;
		if (resolve_name(s, fi, c->fname, &tf, &xn, 0) == RES_SYMBOL)
			tn = xn;
		else
			tf = -1;
	}
	if (tf >= 0)
		d = def_key_get(s, tf, tn);
	if (d < 0 || !(s->files[tf].pf->scopes[d].flags & PF_JIT))
		return 0;
	*kfi = tf;
	*ksc = d;
	return 1;
}

static const char *knob_id(muh_surface *s, const char *rel, const char *scope, const char *name,
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

/* A module-level constant that a setter function assigns (`global K` then
 * `K = value` directly in its body) while reachable code outside tests calls
 * that setter unconditionally: the engine replaces the literal when it
 * starts, so the literal is dead. Returns 1 with the evidence (the setter,
 * the assignment, the call and its call chain) and the call's place in
 * b->over_file/over_line. Heuristic: the call is assumed to come before the
 * reads (vLLM's set_custom_all_reduce() at worker start). */
static int set_by_setter(kb *b, int fi, const pf_knob *k, const char **why)
{
	muh_surface *s = b->s;
	const pyfile *pf = s->files[fi].pf;
	for (int g = 0; g < pf->ngsets; g++) {
		const pf_gset *gs = &pf->gsets[g];
		if (!gs->uncond || strcmp(gs->name, k->name) || gs->scope < 0 ||
		    pf->scopes[gs->scope].parent >= 0 || !(pf->scopes[gs->scope].flags & PF_FUNC))
			continue;
		const pf_scope *fn = &pf->scopes[gs->scope];
		for (int cf = 0; cf < s->nfiles; cf++) {
			const sfile *f = &s->files[cf];
			if (f->is_test)
				continue;
			for (int i = 0; i < f->pf->ncalls; i++) {
				const pf_call *c = &f->pf->calls[i];
				int tf, ts;
				if (!c->fname || strcmp(c->fname, fn->name) || !(c->flags & PF_C_UNCOND) ||
				    (c->flags & PF_C_UNREACH) || c->scope < 0 ||
				    !call_target(s, cf, c, &tf, &ts) || tf != fi || ts != gs->scope)
					continue;
				pf_ref at = {0};
				at.name = fn->name;
				at.scope = c->scope;
				at.line = c->line;
				at.byte = c->byte;
				at.dead = -1;
				int ef, el;
				if (ref_class(s, cf, &at, &ef, &el) != R_LIVE)
					continue;
				step(b, fi, k->line, "%s = %s here, at module level", k->name, k->text);
				step(b, fi, fn->line, "def %s assigns it (`global %s`) at line %d", fn->qual,
				     k->name, gs->line);
				step(b, cf, c->line, "%s calls %s unconditionally", f->pf->scopes[c->scope].qual,
				     c->callee);
				call_chain(b, cf, c->scope, 4);
				*why = sa_fmt(s, "set by %s() at %s:%d when the engine starts: the literal is "
				                 "overwritten before use",
				              fn->qual, f->rel, c->line);
				b->over_file = cf;
				b->over_line = c->line;
				return 1;
			}
		}
	}
	return 0;
}

/* The surface's def-use state (src/scan_flow.c), or NULL when memory ran
 * out. */
static scan_flow *flow_of(muh_surface *s)
{
	if (!s->flow)
		s->flow = scan_flow_new(s);
	if (!s->flow)
		s->oom = 1;
	return s->flow;
}

/* The reachability rules' scratch (ref_class, readers_of, scope_reach
 * leave their why there for verdict_from): a def-use query asks those
 * rules about other code, so the caller's answer is saved around it. */
typedef struct reach_scratch {
	why_at cls_why, best_why;
	int dead_import_file, dead_import_line, best_scope;
} reach_scratch;

static reach_scratch scratch_save(const muh_surface *s)
{
	return (reach_scratch){s->cls_why, s->best_why, s->dead_import_file, s->dead_import_line,
	                       s->best_scope};
}

static void scratch_restore(muh_surface *s, const reach_scratch *x)
{
	s->cls_why = x->cls_why;
	s->best_why = x->best_why;
	s->dead_import_file = x->dead_import_file;
	s->dead_import_line = x->dead_import_line;
	s->best_scope = x->best_scope;
}

/* Adds the hops of a scan_flow result as evidence steps. */
static void flow_steps(kb *b, const scan_flow_res *fr)
{
	for (int i = 0; i < fr->nsteps && i < SCAN_FLOW_MAXSTEPS; i++)
		if (fr->steps[i].note && fr->steps[i].line > 0)
			step(b, fr->steps[i].file, fr->steps[i].line, "%s", fr->steps[i].note);
}

/* Def-use across calls for a function-level constant k of file fi whose
 * function is reachable (issue 28 item 1): 1 with *v and *why set when the
 * value's flow decides (every use overwritten, discarded or unreachable:
 * dead, with the overwrite as b->over_file/over_line; a use reaching a
 * launch through at least one call: live, with the hops), else 0 and no
 * step added. A parameter default the body binds again before any read
 * is dead too. */
static int flow_constant(kb *b, int fi, const pf_knob *k, enum scan_verdict *v,
                         const char **why)
{
	muh_surface *s = b->s;
	const pyfile *pf = s->files[fi].pf;
	const pf_scope *scp = &pf->scopes[k->scope];
	scan_flow *fl = flow_of(s);
	if (!fl)
		return 0;
	uint32_t after = k->end;
	if (k->param) {
		if (scp->pkill && k->param - 1 < scp->nparams && scp->pkill[k->param - 1]) {
			step(b, fi, k->line, "%s=%s is the default of %s's parameter", k->name,
			     k->text, scp->qual);
			step(b, fi, scp->pkill[k->param - 1],
			     "%s binds %s again here, before any read: the default is never used",
			     scp->qual, k->name);
			b->over_file = fi;
			b->over_line = scp->pkill[k->param - 1];
			*v = SCAN_DEAD;
			*why = sa_fmt(s, "%s binds %s again at line %d before any read: the default "
			                 "%s is never used",
			              scp->qual, k->name, scp->pkill[k->param - 1], k->text);
			return 1;
		}
		after = scp->start;
	}
	for (int i = 0; i < pf->nasgs; i++) {
		const pf_asg *a = &pf->asgs[i];
		if (a->scope == k->scope && k->start >= a->start && k->start < a->end &&
		    !strcmp(a->name, k->name)) {
			after = a->in_loop ? scp->start : a->end;
			break;
		}
	}
	scan_flow_res fr;
	reach_scratch keep = scratch_save(s);
	scan_flow_value(fl, fi, k->scope, k->name, after, &fr);
	scratch_restore(s, &keep);
	if (fr.fate == SCAN_FLOW_DISCARDED) {
		step(b, fi, k->line, "%s = %s is assigned here", k->name, k->text);
		flow_steps(b, &fr);
		b->over_file = fr.kill_file;
		b->over_line = fr.kill_line;
		*v = SCAN_DEAD;
		*why = sa_fmt(s, "the value never reaches a use: %s (%s:%d)",
		              fr.nsteps ? fr.steps[fr.nsteps - 1].note : "discarded",
		              s->files[fr.kill_file].rel, fr.kill_line);
		return 1;
	}
	if (fr.fate == SCAN_FLOW_REACHES && fr.nsteps > 1) {
		flow_steps(b, &fr);
		call_chain(b, fi, k->scope, 6);
		const scan_flow_step *last = &fr.steps[fr.nsteps - 1];
		*v = SCAN_LIVE;
		*why = sa_fmt(s, "reaches a launch in %d hop(s): %s (%s:%d)", fr.nsteps,
		              last->note, s->files[last->file].rel, last->line);
		return 1;
	}
	return 0;
}

/* Def-use across calls for a module-level constant k of file fi that some
 * reachable code reads (issue 28 item 1): 1 with *v, *why (dead) and the
 * steps when every read outside tests is a load inside a function whose
 * value is discarded (passed to a parameter the callee binds again first,
 * stored and overwritten, read only by dead code), else 0 and no step. A
 * read at module level, through an attribute (`m.K`) or an alias the flow
 * cannot follow keeps the constant to the older rules. */
static int flow_module_constant(kb *b, int fi, const pf_knob *k, enum scan_verdict *v,
                                const char **why)
{
	muh_surface *s = b->s;
	scan_flow *fl = flow_of(s);
	const vec *list = refs_named(s, k->name);
	if (!fl || !list)
		return 0;
	int nread = 0, kf = -1, kl = 0;
	size_t mark = b->steps.n;
	for (size_t i = 0; i < list->n; i++) {
		const ref_at *ra = (const ref_at *)list->p + i;
		const sfile *rfile = &s->files[ra->file];
		const pf_ref *r = &rfile->pf->refs[ra->ref];
		if (rfile->is_test || (r->flags & PF_R_STR) || !ref_hits(s, ra->file, r, fi, k->name))
			continue;
		if (ra->file == fi && r->byte >= k->start && r->byte < k->end)
			continue;
		scan_flow_res fr;
		reach_scratch keep = scratch_save(s);
		scan_flow_load(fl, ra->file, ra->ref, &fr);
		scratch_restore(s, &keep);
		if (fr.fate != SCAN_FLOW_DISCARDED) {
			b->steps.n = mark;
			return 0;
		}
		if (!nread++) {
			step(b, ra->file, r->line, "%s read here", k->name);
			flow_steps(b, &fr);
			kf = fr.kill_file;
			kl = fr.kill_line;
		}
	}
	if (!nread) {
		b->steps.n = mark;
		return 0;
	}
	if (nread > 1)
		step(b, fi, k->line, "and %d more read(s) of %s, each discarded the same way", nread - 1,
		     k->name);
	b->over_file = kf;
	b->over_line = kl;
	*v = SCAN_DEAD;
	*why = sa_fmt(s, "every read's value is discarded before a use (%d read(s); first: %s:%d)",
	              nread, s->files[kf].rel, kl);
	return 1;
}

static void verdict_constant(kb *b, int fi, const pf_knob *k, enum scan_verdict *v,
                             const char **why)
{
	muh_surface *s = b->s;
	const pyfile *pf = s->files[fi].pf;
	int ef = fi, el;
	enum reach r;
	if (k->kind == PF_K_OVERRIDE)
		step(b, fi, k->line, "%s = %s overrides the heuristic assigned at line %d", k->name,
		     k->text, k->aux_line);
	if (k->scope < 0) {
		r = readers_of(s, fi, k->name, k->start, k->end, &ef, &el);
		if (r == R_LIVE && pf->ngsets && set_by_setter(b, fi, k, why)) {
			*v = SCAN_DEAD;
			return;
		}
		if (r == R_NONE) {
			step(b, fi, k->line,
			     "%s is defined here and loaded nowhere in the tree (no load in this "
			     "module, no import of it, no %s.%s, no string naming it)",
			     k->name, s->files[fi].module, k->name);
			*v = SCAN_DEAD;
			*why = "never read";
			return;
		}
		if (r == R_LIVE && flow_module_constant(b, fi, k, v, why))
			return;
	} else {
		r = local_readers(s, fi, k, &el);
		if (r == R_LIVE) {
			/* local reads count as much as the function is reachable */
			int xf, xl;
			enum reach fr = scope_reach(s, fi, k->scope, &xf, &xl);
			/* prefer the launch binding it feeds as evidence */
			for (int i = 0; i < pf->nknobs; i++) {
				const pf_knob *o = &pf->knobs[i];
				if (o->kind == PF_K_CONSTEXPR && o->feed &&
				    !strcmp(o->feed, k->name) && o->scope == k->scope) {
					el = o->line;
					break;
				}
			}
			int top = outer_scope(pf, k->scope);
			if (fr == R_TEST || fr == R_PLATFORM || fr == R_UNREACH || fr == R_NOCALL) {
				step(b, fi, el, "%s read here", k->name);
				r = fr;
				ef = xf;
				el = xl;
			} else if (fr == R_NONE && !maybe_called_from_outside(s, fi, top)) {
				step(b, fi, el, "%s read here", k->name);
				step(b, fi, pf->scopes[top].line,
				     "but nothing in the tree calls or names %s (no call in the tree)",
				     pf->scopes[top].qual);
				*v = SCAN_DEAD;
				*why = sa_fmt(s, "no call in the tree: %s is never called",
				              pf->scopes[top].qual);
				return;
			} else if (fr == R_NONE || fr == R_UNKNOWN) {
				step(b, fi, el, "%s read here", k->name);
				step(b, fi, pf->scopes[top].line,
				     "but %s is never referenced by name%s", pf->scopes[top].qual,
				     s->opt.library && fr == R_NONE ? " (--library: it may be called "
				                                      "from outside)"
				                                    : "");
				*v = SCAN_UNKNOWN;
				*why = "enclosing function is never referenced by name";
				return;
			} else {
				if (flow_constant(b, fi, k, v, why))
					return;
				for (int i = 0; i < pf->nknobs; i++) {
					const pf_knob *o = &pf->knobs[i];
					if (o->kind == PF_K_CONSTEXPR && o->feed &&
					    !strcmp(o->feed, k->name) && o->scope == k->scope &&
					    o->line == el) {
						step(b, fi, el, "binds %s at the launch", o->name);
						*v = SCAN_LIVE;
						*why =
						    sa_fmt(s, "binds %s at line %d", o->name, el);
						call_chain(b, fi, k->scope, 6);
						return;
					}
				}
				if (xf >= 0) {
					step(b, fi, el, "%s read here", k->name);
					call_chain(b, fi, k->scope, 6);
					*v = SCAN_LIVE;
					*why = sa_fmt(s, "read at line %d", el);
					return;
				}
			}
		}
	}
	*v = verdict_from(b, r, ef, el, k->name, why);
}

static void verdict_function_symbol(kb *b, int fi, int sc, const char *what, enum scan_verdict *v,
                                    const char **why)
{
	muh_surface *s = b->s;
	int ef, el;
	enum reach r = scope_reach(s, fi, sc, &ef, &el);
	if (r == R_NONE) {
		*v = SCAN_DEAD;
		*why = sa_fmt(s, "%s is never referenced", what);
		step(b, fi, s->files[fi].pf->scopes[outer_scope(s->files[fi].pf, sc)].line,
		     "nothing in the tree names %s",
		     s->files[fi].pf->scopes[outer_scope(s->files[fi].pf, sc)].qual);
		return;
	}
	if (r == R_TEST) {
		*v = SCAN_DEAD;
		*why = sa_fmt(s, "%s is reached only from tests", what);
		if (ef >= 0)
			step(b, ef, el, "called from tests (e.g. here)");
		return;
	}
	*v = verdict_from(b, r, ef, el, what, why);
	if (r == R_LIVE && ef >= 0)
		*why = sa_fmt(s, "%s used at %s:%d", what, s->files[ef].rel, el);
}

static int is_upper_like(const char *s);

/* A call into a module outside the tree through an import alias
 * (ixf_F.vllm_invoke_fused_moe_kernel): opaque to the analysis. */
static int is_opaque_call(muh_surface *s, int fi, const pf_call *c)
{
	if (!c->obj || strchr(c->obj, '.'))
		return 0;
	const pf_import *im = import_of(s, fi, c->obj);
	return im && resolve_obj(s, fi, c->obj) < 0 && mod_lookup(s, im->module) < 0;
}

/* ---- dict flows into launches (`**run_config` two calls away) ------------------ */

/* A dict that reaches a Triton launch with all its keys: the variable or
 * parameter `name` of function (file, scope), or (name NULL) the dict the
 * function returns. parent is the sink it flows into (-1: the launch). */
typedef struct sink {
	int file, scope;
	const char *name;
	int parent, line;
	const char *note;
	int lfile; /* the file of line */
} sink;

static int sink_add(muh_surface *s, int file, int scope, const char *name, int parent, int line,
                    const char *note, int lfile)
{
	sink *v = s->sinks.p;
	for (size_t i = 0; i < s->sinks.n; i++)
		if (v[i].file == file && v[i].scope == scope &&
		    (v[i].name == name || (v[i].name && name && !strcmp(v[i].name, name))))
			return (int)i;
	if (s->sinks.n >= 4000)
		return -1;
	sink *n = vec_push(&s->sinks);
	if (!n) {
		s->oom = 1;
		return -1;
	}
	*n = (sink){file, scope, name, parent, line, note, lfile};
	return (int)s->sinks.n - 1;
}

/* The class a scope sits in directly (for self.method()), or -1. */
static int class_of(const pyfile *pf, int sc)
{
	int p = sc >= 0 ? pf->scopes[sc].parent : -1;
	return p >= 0 && (pf->scopes[p].flags & PF_CLASS) ? p : -1;
}

/* The function a call names, also `self.m()` inside the same class. */
static int flow_target(muh_surface *s, int fi, const pf_call *c, int *tf, int *ts)
{
	if (call_target(s, fi, c, tf, ts))
		return 1;
	const pyfile *pf = s->files[fi].pf;
	if (!c->obj || strcmp(c->obj, "self") || !c->fname || c->scope < 0)
		return 0;
	int cls = class_of(pf, c->scope);
	for (int i = 0; cls >= 0 && i < pf->nscopes; i++)
		if (pf->scopes[i].parent == cls && (pf->scopes[i].flags & PF_FUNC) &&
		    !strcmp(pf->scopes[i].name, c->fname)) {
			*tf = fi;
			*ts = i;
			return 1;
		}
	return 0;
}

/* Builds s->sinks: launches' **splats of names, then back through
 * parameters to the callers' arguments, through `x = f(...)` to f's
 * returned dict, and through `return x` / `return g(...)`. */
static void flow_sinks(muh_surface *s)
{
	s->sinks_built = 1;
	s->sinks.esz = sizeof(sink);
	for (int fi = 0; fi < s->nfiles; fi++) {
		const pyfile *pf = s->files[fi].pf;
		for (int i = 0; i < pf->nrefs; i++) {
			const pf_ref *r = &pf->refs[i];
			if (!(r->flags & PF_R_SPLAT) || r->call < 0 || r->scope < 0 ||
			    (r->flags & (PF_R_UNREACH | PF_R_DEAD)))
				continue;
			const pf_call *c = &pf->calls[r->call];
			int kf, ks;
			if (!(c->flags & PF_C_LAUNCH) || !find_jit(s, fi, c, &kf, &ks))
				continue;
			sink_add(s, fi, r->scope, r->name, -1, r->line,
			         sa_fmt(s, "**%s into %s[grid]", r->name, c->fname), fi);
		}
	}
	for (size_t i = 0; i < s->sinks.n; i++) {
		sink x = ((sink *)s->sinks.p)[i];
		const pyfile *pf = s->files[x.file].pf;
		const pf_scope *sc = &pf->scopes[x.scope];
		if (!x.name) { /* the returned dict */
			for (int q = 0; q < pf->nrets; q++) {
				const pf_ret *rt = &pf->rets[q];
				if (rt->scope != x.scope)
					continue;
				int tf, ts;
				if (rt->name)
					sink_add(s, x.file, x.scope, rt->name, (int)i, rt->line,
					         sa_fmt(s, "%s returns %s", sc->qual, rt->name), x.file);
				else if (rt->call >= 0 && rt->call < pf->ncalls &&
				         flow_target(s, x.file, &pf->calls[rt->call], &tf, &ts))
					sink_add(s, tf, ts, NULL, (int)i, rt->line,
					         sa_fmt(s, "%s returns %s(...)", sc->qual,
					                pf->calls[rt->call].callee),
					         x.file);
			}
			continue;
		}
		/* x = f(...) in the same function: f's returned dict */
		for (int q = 0; q < pf->ncalls; q++) {
			const pf_call *c = &pf->calls[q];
			int tf, ts;
			if (c->scope == x.scope && c->assigned && !strcmp(c->assigned, x.name) &&
			    !(c->flags & PF_C_UNREACH) && flow_target(s, x.file, c, &tf, &ts))
				sink_add(s, tf, ts, NULL, (int)i, c->line,
				         sa_fmt(s, "%s = %s(...) in %s", x.name, c->callee, sc->qual), x.file);
		}
		/* a parameter: the callers' arguments */
		int p = -1, kw = sc->kwparam && !strcmp(sc->kwparam, x.name);
		for (int q = 0; q < sc->nparams && !kw; q++)
			if (!strcmp(sc->params[q], x.name))
				p = q;
		if (p < 0 && !kw)
			continue;
		int is_method = class_of(pf, x.scope) >= 0 && sc->nparams &&
		                (!strcmp(sc->params[0], "self") || !strcmp(sc->params[0], "cls"));
		for (int g = 0; g < s->nfiles; g++) {
			const pyfile *gp = s->files[g].pf;
			for (int q = 0; q < gp->ncalls; q++) {
				const pf_call *c = &gp->calls[q];
				int tf, ts;
				if (!c->fname || strcmp(c->fname, sc->name) || (c->flags & PF_C_UNREACH) ||
				    !flow_target(s, g, c, &tf, &ts) || tf != x.file || ts != x.scope)
					continue;
				int pos = is_method && c->obj ? p - 1 : p;
				for (int a = 0; a < c->nargs; a++) {
					const pf_arg *ar = &c->args[a];
					if (!ar->ident || c->scope < 0)
						continue;
					int hit = kw ? ar->splat == 2
					             : ((ar->kw && !strcmp(ar->kw, x.name)) ||
					                (!ar->kw && !ar->splat && ar->pos == pos && pos >= 0));
					if (hit)
						sink_add(s, g, c->scope, ar->ident, (int)i, c->line,
						         sa_fmt(s, "%s%s passed to %s as %s%s", kw ? "**" : "",
						                ar->ident, c->callee, kw ? "**" : "", x.name),
						         g);
				}
			}
		}
	}
}

/* The sink holding the dict variable var of (fi, scope) (var NULL: the
 * dict the function returns), or -1. */
static int sink_of(muh_surface *s, int fi, int scope, const char *var)
{
	if (!s->sinks_built)
		flow_sinks(s);
	const sink *v = s->sinks.p;
	for (size_t i = 0; i < s->sinks.n; i++)
		if (v[i].file == fi && v[i].scope == scope &&
		    (v[i].name == var || (v[i].name && var && !strcmp(v[i].name, var))))
			return (int)i;
	return -1;
}

/* Config-dict keys: which keys do the consumers near the dict read? */
static void verdict_dict_key(kb *b, int fi, const pf_knob *k, enum scan_verdict *v,
                             const char **why)
{
	muh_surface *s = b->s;
	sfile *f = &s->files[fi];
	const char *var = (k->aux && strcmp(k->aux, "return")) ? k->aux : "config";
	/* the dict's own flow: into a launch through calls, across modules */
	if (k->scope >= 0 && k->aux) {
		int si = sink_of(s, fi, k->scope, strcmp(k->aux, "return") ? k->aux : NULL);
		const sink *sv = s->sinks.p;
		int root = si;
		for (int n = 0; root >= 0 && sv[root].parent >= 0 && n < 64; n++)
			root = sv[root].parent;
		int xf, xl;
		if (root >= 0 && root != si &&
		    scope_reach(s, sv[root].file, sv[root].scope, &xf, &xl) == R_LIVE) {
			int hops = 0;
			for (int q = si; q >= 0 && q != root && hops < 64; q = sv[q].parent)
				hops++;
			step(b, fi, k->line, "'%s' is set here", k->name);
			for (int n = 0, q = si; q >= 0 && n < 12; n++, q = sv[q].parent)
				step(b, sv[q].lfile, sv[q].line, "%s", sv[q].note);
			call_chain(b, sv[root].file, sv[root].scope, 4);
			*v = SCAN_LIVE;
			*why = sa_fmt(s, "read: %s, %d step(s) away (%s:%d)", sv[root].note, hops,
			              s->files[sv[root].file].rel, sv[root].line);
			return;
		}
	}
	/* candidate files: this one, its importers and importees */
	int cand[512];
	int nc = 0;
	cand[nc++] = fi;
	for (size_t i = 0; i < f->importers.n && nc < 512; i++)
		cand[nc++] = ((int *)f->importers.p)[3 * i];
	for (size_t i = 0; i < f->importees.n && nc < 512; i++)
		cand[nc++] = ((int *)f->importees.p)[i];
	enum reach best = R_NONE;
	int bf = -1, bl = 0;
	const char *how = NULL;
	int other_f = -1, other_l = 0;
	const char *other_key = NULL, *other_callee = NULL;
	int other_opaque = 0;
	int opaque_f = -1, opaque_l = 0;
	const char *opaque_callee = NULL;
	for (int ci = 0; ci < nc; ci++) {
		int cf = cand[ci];
		int dup = 0;
		for (int j = 0; j < ci; j++)
			dup |= cand[j] == cf;
		if (dup)
			continue;
		const pyfile *pf = s->files[cf].pf;
		for (int i = 0; i < pf->nrefs; i++) {
			const pf_ref *r = &pf->refs[i];
			int reads = 0;
			const char *h = NULL;
			if ((r->flags & PF_R_KEY)) {
				if (!strcmp(r->name, k->name)) {
					reads = 1;
					h = r->call >= 0 ? pf->calls[r->call].callee : NULL;
				} else if (is_upper_like(r->name) &&
				           (other_f < 0 || !other_opaque) &&
				           !(r->flags & PF_R_UNREACH) &&
				           !in_dead(&s->files[cf], r->byte) &&
				           !s->files[cf].is_test) {
					int op = r->call >= 0 &&
					         is_opaque_call(s, cf, &pf->calls[r->call]);
					if (other_f < 0 || op) {
						other_f = cf;
						other_l = r->line;
						other_key = r->name;
						other_opaque = op;
						other_callee =
						    r->call >= 0 ? pf->calls[r->call].callee : NULL;
					}
				}
			} else if ((r->flags & PF_R_SPLAT) && r->call >= 0 &&
			           ((pf->calls[r->call].flags & PF_C_LAUNCH) ||
			            !strcmp(r->name, var))) {
				reads = 1;
				h = (pf->calls[r->call].flags & PF_C_LAUNCH) &&
				            pf->calls[r->call].fname
				        ? sa_fmt(s, "%s[grid]", pf->calls[r->call].fname)
				        : pf->calls[r->call].callee;
			} else if (!r->flags && r->call >= 0 && !strcmp(r->name, var) &&
			           opaque_f < 0) {
				const pf_call *c = &pf->calls[r->call];
				int tf, ts;
				if (!call_target(s, cf, c, &tf, &ts) && is_opaque_call(s, cf, c)) {
					opaque_f = cf;
					opaque_l = r->line;
					opaque_callee = c->callee;
				}
			}
			if (!reads)
				continue;
			int xf, xl;
			enum reach c = ref_class(s, cf, r, &xf, &xl);
			/* a live **splat is the strongest evidence: prefer it */
			if (c == R_LIVE && best == R_LIVE && (r->flags & PF_R_SPLAT) && how &&
			    how[0] != '*')
				best = R_NONE;
			if (reach_rank(c) > reach_rank(best)) {
				best = c == R_BUSY ? R_LIVE : c;
				bf = cf;
				bl = r->line;
				how = (r->flags & PF_R_SPLAT)
				          ? sa_fmt(s, "**%s into %s", r->name, h ? h : "a call")
				          : sa_fmt(s, "%s['%s']%s%s", r->obj ? r->obj : "?",
				                   k->name, h ? " passed to " : "", h ? h : "");
			}
		}
	}
	if (best == R_LIVE) {
		step(b, bf, bl, "%s reads it", how);
		*v = SCAN_LIVE;
		*why = sa_fmt(s, "read: %s", how);
		return;
	}
	if (best == R_NONE && opaque_f >= 0) {
		step(b, opaque_f, opaque_l, "the whole dict goes to %s, outside the tree",
		     opaque_callee);
		*v = SCAN_UNKNOWN;
		*why = sa_fmt(s, "dict passed whole to opaque %s", opaque_callee);
		return;
	}
	if (best == R_NONE || best == R_UNREACH) {
		step(b, fi, k->line, "'%s' is set here", k->name);
		if (best == R_UNREACH)
			step(b, bf, bl, "%s reads it, but only on an unreachable path", how);
		if (other_f >= 0 && other_opaque)
			step(b, other_f, other_l, "the opaque call %s reads only '%s' of the dict",
			     other_callee, other_key);
		else if (other_f >= 0)
			step(b, other_f, other_l,
			     "consumers read other keys (e.g. '%s') but never '%s'", other_key,
			     k->name);
		*v = SCAN_DEAD;
		if (other_f >= 0 && other_opaque)
			*why = sa_fmt(s, "no reachable consumer reads '%s'; %s reads only '%s'",
			              k->name, other_callee, other_key);
		else
			*why = sa_fmt(s, "no reachable consumer reads '%s'", k->name);
		return;
	}
	*v = verdict_from(b, best, bf, bl, k->name, why);
}

static void knob_file_verdicts(muh_surface *s, int fi, kb *b, smap *occ)
{
	sfile *f = &s->files[fi];
	const pyfile *pf = f->pf;
	for (int i = 0; i < pf->nknobs; i++) {
		const pf_knob *k = &pf->knobs[i];
		enum scan_verdict v = SCAN_UNKNOWN;
		const char *why = "no rule applies";
		int kfi = -1, ksc = -1;
		if (k->kind == PF_K_CONSTEXPR) {
			const pf_call *c = &pf->calls[k->call];
			const char *param = strrchr(k->name, '.');
			param = param ? param + 1 : k->name;
			if (!find_jit(s, fi, c, &kfi, &ksc))
				continue;
			const pf_scope *ks = &s->files[kfi].pf->scopes[ksc];
			int is_opt = !strcmp(param, "num_warps") || !strcmp(param, "num_stages") ||
			             !strcmp(param, "num_ctas");
			int is_cx = 0;
			for (int j = 0; j < ks->nconstexprs; j++)
				is_cx |= !strcmp(ks->constexprs[j], param);
			if (!is_opt && !is_cx)
				continue;
		}
		if (k->kind == PF_K_ENGINE_ARG && k->scope >= 0 &&
		    !(pf->scopes[k->scope].flags & PF_CLASS))
			continue;
		if (f->is_test && !s->opt.with_tests)
			continue;
		/* place-based verdicts first */
		const range *kdr = dead_range_at(f, k->start);
		const range *kpr = plat_range_at(f, k->start);
		int over_line = 0, over_file = fi;
		if (k->dead >= 0 && k->dead < pf->ndeads) {
			over_line = pf->deads[k->dead].kill_line;
			v = SCAN_DEAD;
			why = pf->deads[k->dead].nkill > 1
			          ? sa_fmt(s, "overwritten on every path before any read (first at line %d)",
			                   over_line)
			          : sa_fmt(s, "overwritten at line %d before any read", over_line);
			explain_dead(b, fi, k->dead);
		} else if (k->unreach) {
			v = SCAN_DEAD;
			why = "defined on an unreachable path";
			step(b, fi, k->line, "after a return, or under an `if` that constants make false");
		} else if (kdr || in_dead(f, k->start)) {
			v = SCAN_DEAD;
			why = "defined on an unreachable path";
			if (kdr) {
				explain_range(b, fi, kdr);
				why = sa_fmt(s, "defined on an unreachable path: %s", kdr->note);
			}
			step(b, fi, k->line, "defined here, in the branch that cannot run");
		} else if (f->platform) {
			v = SCAN_PLATFORM;
			why = f->plat_why;
			if (f->plat_file >= 0)
				step(b, f->plat_file, f->plat_line,
				     "the only importer of %s is here (%s)", f->rel,
				     s->files[f->plat_file].plat_why ? s->files[f->plat_file].plat_why
				     : f->plat_why                   ? f->plat_why
				                                     : "platform check");
			else
				step(b, fi, 1, "%s", f->plat_why);
		} else if (kpr) {
			v = SCAN_PLATFORM;
			why = kpr->note;
			explain_range(b, fi, kpr);
			step(b, fi, k->line, "defined here, in that branch");
		} else {
			switch (k->kind) {
			case PF_K_CONSTANT:
			case PF_K_OVERRIDE:
				b->over_file = -1;
				verdict_constant(b, fi, k, &v, &why);
				if (b->over_file >= 0) {
					over_file = b->over_file;
					over_line = b->over_line;
				}
				break;
			case PF_K_CONSTEXPR: {
				const char *param = strrchr(k->name, '.') + 1;
				const pf_scope *ks = &s->files[kfi].pf->scopes[ksc];
				int xf, xl;
				enum reach fr =
				    k->scope >= 0 ? scope_reach(s, fi, k->scope, &xf, &xl) : R_LIVE;
				step(b, fi, k->aux_line, "launch of %s binds %s=%s", ks->qual,
				     param, k->text);
				if (fr == R_TEST || fr == R_PLATFORM || fr == R_UNREACH) {
					v = verdict_from(b, fr, xf, xl, "the launching function",
					                 &why);
					break;
				}
				if (!strcmp(param, "num_warps") || !strcmp(param, "num_stages") ||
				    !strcmp(param, "num_ctas")) {
					step(b, kfi, ks->line,
					     "@triton.jit %s: %s is a compile option", ks->qual,
					     param);
					v = fr == R_LIVE || fr == R_BUSY ? SCAN_LIVE : SCAN_UNKNOWN;
					why = v == SCAN_LIVE
					          ? "triton compile option at a reachable launch"
					          : "launching function never referenced by name";
					if (v == SCAN_LIVE && k->scope >= 0)
						call_chain(b, fi, k->scope, 6); /* how the launch is reached */
					break;
				}
				/* does the kernel read the constexpr? */
				int rl = 0;
				const pyfile *kp = s->files[kfi].pf;
				const vec *list = refs_named(s, param);
				for (size_t j = 0; list && j < list->n && !rl; j++) {
					const ref_at *ra = (const ref_at *)list->p + j;
					const pf_ref *r = &kp->refs[ra->ref];
					if (ra->file == kfi &&
					    !(r->flags & (PF_R_KEY | PF_R_ATTR | PF_R_STR)) &&
					    r->byte >= ks->start && r->byte < ks->end)
						rl = r->line;
				}
				if (!rl) {
					step(b, kfi, ks->line, "@triton.jit %s never reads %s",
					     ks->qual, param);
					v = SCAN_DEAD;
					why =
					    sa_fmt(s, "kernel %s never reads %s", ks->qual, param);
				} else {
					step(b, kfi, rl, "kernel %s reads %s (tl.constexpr)",
					     ks->qual, param);
					v = fr == R_LIVE || fr == R_BUSY ? SCAN_LIVE : SCAN_UNKNOWN;
					why = v == SCAN_LIVE
					          ? sa_fmt(s, "tl.constexpr of %s", ks->qual)
					          : "launching function never referenced by name";
					if (v == SCAN_LIVE && k->scope >= 0)
						call_chain(b, fi, k->scope, 6);
				}
				break;
			}
			case PF_K_AUTOTUNE: {
				/* decorator list: the kernel; function list: the function */
				int sc = k->scope;
				for (int j = 0; j < pf->nscopes; j++)
					if ((pf->scopes[j].flags & PF_AUTOTUNE) &&
					    k->start >= pf->scopes[j].start &&
					    k->start < pf->scopes[j].end &&
					    pf->scopes[j].parent == k->scope) {
						sc = j;
						break;
					}
				if (sc >= 0) {
					verdict_function_symbol(b, fi, sc, pf->scopes[sc].qual, &v,
					                        &why);
				} else {
					int ef, el;
					enum reach r =
					    readers_of(s, fi, k->name, k->start, k->end, &ef, &el);
					v = verdict_from(b, r, ef, el, k->name, &why);
				}
				break;
			}
			case PF_K_CONFIG_DICT: {
				int xf, xl;
				enum reach fr =
				    k->scope >= 0 ? scope_reach(s, fi, k->scope, &xf, &xl) : R_LIVE;
				if (fr == R_TEST || fr == R_PLATFORM) {
					v = verdict_from(b, fr, xf, xl, scope_qual(pf, k->scope),
					                 &why);
					break;
				}
				verdict_dict_key(b, fi, k, &v, &why);
				break;
			}
			case PF_K_CAPABILITY: {
				int sc = -1;
				for (int j = 0; j < pf->nscopes; j++)
					if (!strcmp(pf->scopes[j].qual, k->name))
						sc = j;
				step(b, fi, k->line, "%s returns %s%s%s", k->name, k->text,
				     k->eval ? " = " : "", k->eval ? k->eval : "");
				if (sc >= 0)
					verdict_function_symbol(b, fi, sc, k->name, &v, &why);
				break;
			}
			case PF_K_ENGINE_ARG: {
				/* field read as an attribute anywhere outside tests */
				const vec *list = refs_named(s, k->name);
				int lf = -1, ll = 0;
				for (size_t j = 0; list && j < list->n && lf < 0; j++) {
					const ref_at *ra = (const ref_at *)list->p + j;
					const pf_ref *r = &s->files[ra->file].pf->refs[ra->ref];
					if (!(r->flags & PF_R_ATTR) || s->files[ra->file].is_test ||
					    s->files[ra->file].platform ||
					    (r->flags & PF_R_UNREACH) ||
					    in_dead(&s->files[ra->file], r->byte))
						continue;
					lf = ra->file;
					ll = r->line;
				}
				if (lf >= 0) {
					step(b, lf, ll, ".%s read here", k->name);
					v = SCAN_LIVE;
					why = sa_fmt(s, "engine argument read at %s:%d",
					             s->files[lf].rel, ll);
					break;
				}
				/* no live read: where are the others, if any? */
				int tf = -1, tl = 0, of = -1, ol = 0;
				for (size_t j = 0; list && j < list->n; j++) {
					const ref_at *ra = (const ref_at *)list->p + j;
					const pf_ref *r = &s->files[ra->file].pf->refs[ra->ref];
					if (!(r->flags & (PF_R_ATTR | PF_R_KEY)))
						continue;
					if (s->files[ra->file].is_test) {
						if (tf < 0) {
							tf = ra->file;
							tl = r->line;
						}
					} else if (of < 0) {
						of = ra->file;
						ol = r->line;
					}
				}
				step(b, fi, k->line, "field %s.%s, default %s",
				     k->scope >= 0 ? pf->scopes[k->scope].qual : "?", k->name, k->text);
				if (of >= 0) {
					v = SCAN_UNKNOWN;
					step(b, of, ol, ".%s read here, but only in another platform's code "
					                "or on an unreachable path", k->name);
					why = "read only by another platform's code or on unreachable "
					      "paths (may be read via asdict/getattr)";
				} else if (tf >= 0) {
					v = SCAN_DEAD;
					step(b, tf, tl, ".%s read only from tests (e.g. here)", k->name);
					why = "read only from tests";
				} else {
					v = SCAN_DEAD;
					step(b, fi, k->line,
					     "no .%s, [\"%s\"] or getattr(..., \"%s\") in any module",
					     k->name, k->name, k->name);
					why = sa_fmt(s, "defined at %s:%d, read nowhere in the tree",
					             f->rel, k->line);
				}
				break;
			}
			default:
				break;
			}
			if (k->kind == PF_K_CONSTANT || k->kind == PF_K_OVERRIDE) {
				check_unsafe(b, fi, k);
				if (b->unsafe.n && v != SCAN_DEAD) {
					v = SCAN_UNSAFE;
					why = sa_fmt(s,
					             "%s=%s reaches a raise of NotImplementedError",
					             k->name, *(const char **)b->unsafe.p);
				}
			}
			if ((k->kind == PF_K_CONSTANT || k->kind == PF_K_OVERRIDE ||
			     k->kind == PF_K_ENGINE_ARG) &&
			    v != SCAN_DEAD) {
				size_t had = b->unsafe.n;
				const char *uw = check_unsafe_values(b, fi, k);
				if (b->unsafe.n > had) {
					v = SCAN_UNSAFE;
					why = had ? why : uw;
				}
			}
		}
		if (k->param && (v == SCAN_LIVE || v == SCAN_UNSAFE) && !s->opt.library) {
			size_t mark = b->steps.n;
			const char *pw = param_always_passed(b, fi, k);
			if (pw) {
				v = SCAN_DEAD;
				why = pw;
				b->unsafe.n = 0;
			} else
				b->steps.n = mark;
		}
		muh_knob *o = emit(s, b, fi, k, f->rel, v, why);
		if (!o)
			return;
		if (over_line) {
			o->overwritten_file = s->files[over_file].rel;
			o->overwritten_line = over_line;
		}
		char key[1200];
		snprintf(key, sizeof(key), "%s\x01%s\x01%s\x01%s", f->rel, o->scope, o->name,
		         o->kind);
		const char *kk = sa_str(s, key);
		int *slot = kk ? smap_slot(occ, kk, 1) : NULL;
		int n = slot ? ++*slot : 0; /* starts at -1 */
		knob_id(s, f->rel, o->scope, o->name, o->kind, n, o->id);
	}
	/* feeds: link launch bindings to the knob that feeds them */
	(void)0;
}

static int is_upper_like(const char *s)
{
	const char *p = s;
	while (*p == '_')
		p++;
	if (!*p)
		return 0;
	for (; *p; p++)
		if (!((*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') || *p == '_'))
			return 0;
	return 1;
}

/* The file name of JSON config file jr (tree-relative) when a lookup of
 * glob in folder dir (dl bytes, a prefix of the path) loads it: at or below
 * dir, not a test's, its name matching glob; NULL when the lookup does not. */
static const char *json_glob_match(const char *jr, const char *dir, size_t dl, const char *glob)
{
	if (strncmp(jr, dir, dl) || path_is_test(jr))
		return NULL;
	const char *base = strrchr(jr, '/');
	base = base ? base + 1 : jr;
	return fnmatch(glob, base, 0) ? NULL : base;
}

/* The device a config file's name is for: "device_name=NVIDIA_H200" or a
 * vendor-prefixed tail ("..._NVIDIA_H200.json"); NULL when none. */
static const char *json_device(muh_surface *s, const char *base)
{
	const char *p = strstr(base, "device_name=");
	if (p)
		p += 12;
	else if ((p = strstr(base, "NVIDIA_")) || (p = strstr(base, "AMD_")) ||
	         (p = strstr(base, "Intel_")))
		;
	else
		return NULL;
	size_t n = strcspn(p, ",");
	const char *dot = strstr(p, ".json");
	if (dot && (size_t)(dot - p) < n)
		n = (size_t)(dot - p);
	return n ? sa_fmt(s, "%.*s", (int)n, p) : NULL;
}

/* Lower-case, spaces and dashes as '_' (vLLM writes device names so). */
static void norm_device(const char *in, char *out, size_t cap)
{
	size_t o = 0;
	for (; *in && o + 1 < cap; in++)
		out[o++] = (*in == ' ' || *in == '-') ? '_'
		                                      : (char)(*in >= 'A' && *in <= 'Z' ? *in + 32 : *in);
	out[o] = '\0';
}

/* Does the device a file is named for match --device? Equal after
 * normalizing, or the --device tokens appear in order as whole tokens
 * ("H200" matches "NVIDIA_H200", not "NVIDIA_H20"). */
static int device_matches(const char *file_dev, const char *want)
{
	char a[256], b[256];
	norm_device(file_dev, a, sizeof(a));
	norm_device(want, b, sizeof(b));
	if (!strcmp(a, b))
		return 1;
	size_t lb = strlen(b);
	for (const char *p = a; (p = strstr(p, b)); p++)
		if ((p == a || p[-1] == '_') && (p[lb] == '\0' || p[lb] == '_'))
			return 1;
	return 0;
}

/* Does function sc write files and read none: a call of dump/safe_dump (json,
 * yaml) in it and none of load, safe_load, exists, isfile, listdir? */
static int writes_only(const pyfile *pf, int sc)
{
	if (sc < 0)
		return 0;
	int dump = 0;
	for (int i = 0; i < pf->ncalls; i++) {
		const pf_call *c = &pf->calls[i];
		if (c->scope != sc || !c->fname)
			continue;
		if (!strcmp(c->fname, "load") || !strcmp(c->fname, "safe_load") ||
		    !strcmp(c->fname, "exists") || !strcmp(c->fname, "isfile") ||
		    !strcmp(c->fname, "listdir") || !strcmp(c->fname, "loads"))
			return 0;
		dump |= !strcmp(c->fname, "dump") || !strcmp(c->fname, "safe_dump");
	}
	return dump;
}

/* Tuned config files and where they are looked up. Each f-string naming a
 * .json/.yaml file from device or shape names that a module builds (vLLM's
 * get_config_file_name; not a function that only writes such files) is a lookup site:
 * a config_lookup knob of its own, live when the building function is
 * reached (through the call chain, not from dead stores), dead when nothing
 * calls it or its result is overwritten before use, reported even when no
 * file matches. Each JSON file at or below the module's folder that matches
 * the pattern is a json_config knob with the lookup's verdict; a file named
 * for a device is platform unless it matches --device. */
static void json_knobs(muh_surface *s, kb *b, smap *occ)
{
	for (int fi = 0; fi < s->nfiles; fi++) {
		sfile *f = &s->files[fi];
		if (f->is_test)
			continue;
		const pyfile *pf = f->pf;
		for (int j = 0; j < pf->njsons; j++) {
			const pf_json *pj = &pf->jsons[j];
			if (writes_only(pf, pj->scope))
				continue; /* a file it writes (a tuning script's save_configs) */
			char dir[4096];
			snprintf(dir, sizeof(dir), "%s", f->rel);
			char *slash = strrchr(dir, '/');
			size_t dl = slash ? (size_t)(slash - dir) + 1 : 0;
			dir[dl] = '\0';
			/* the lookup's own verdict */
			enum scan_verdict lv = SCAN_UNKNOWN;
			const char *lwhy = "loader not found";
			const range *pr = plat_range_at(f, pj->start), *dr = dead_range_at(f, pj->start);
			step(b, fi, pj->line, "%s builds the file name %s", scope_qual(pf, pj->scope),
			     pj->glob);
			size_t first = b->steps.n;
			if (f->platform) {
				lv = SCAN_PLATFORM;
				lwhy = f->plat_why;
			} else if (dr) {
				lv = SCAN_DEAD;
				lwhy = sa_fmt(s, "the lookup is on an unreachable path: %s", dr->note);
				step(b, fi, dr->line, "%s", dr->note);
			} else if (pr) {
				lv = SCAN_PLATFORM;
				lwhy = pr->note;
				step(b, fi, pr->line, "%s", pr->note);
			} else if (pj->scope >= 0) {
				int top = outer_scope(pf, pj->scope), ef, el;
				enum reach r = scope_reach(s, fi, pj->scope, &ef, &el);
				if (r == R_NONE && !maybe_called_from_outside(s, fi, top)) {
					lv = SCAN_DEAD;
					lwhy = sa_fmt(s, "no call in the tree: nothing calls %s, so no file "
					                 "is looked up",
					              pf->scopes[top].qual);
					step(b, fi, pf->scopes[top].line,
					     "nothing in the tree calls or names %s (no call in the tree)",
					     pf->scopes[top].qual);
				} else if (r == R_LIVE || r == R_BUSY) {
					lv = SCAN_LIVE;
					lwhy = sa_fmt(s, "looked up by name pattern built in %s",
					              scope_qual(pf, pj->scope));
					call_chain(b, fi, pj->scope, 6);
				} else {
					lv = verdict_from(b, r, ef, el, scope_qual(pf, top), &lwhy);
					if (r == R_NONE) {
						lv = SCAN_UNKNOWN;
						lwhy = sa_fmt(s, "%s is never referenced by name (--library)",
						              pf->scopes[top].qual);
					}
				}
			} else {
				lv = SCAN_LIVE;
				lwhy = "name pattern built at module level";
			}
			/* whether the loaded contents reach a launch (issue 28 items
			 * 1, 2): a loader whose every caller drops or overwrites the
			 * result is dead, one whose result reaches a launch live */
			if ((lv == SCAN_LIVE || lv == SCAN_DEAD || lv == SCAN_UNKNOWN) &&
			    pj->scope >= 0 && !dr && flow_of(s)) {
				scan_flow_res fr;
				reach_scratch keep = scratch_save(s);
				scan_flow_lookup(s->flow, fi, pj->scope, &fr);
				scratch_restore(s, &keep);
				if (fr.fate == SCAN_FLOW_DISCARDED && lv == SCAN_LIVE) {
					flow_steps(b, &fr);
					lv = SCAN_DEAD;
					lwhy = sa_fmt(s, "the loaded config never reaches a launch: %s "
					                 "(%s:%d)",
					              fr.nsteps ? fr.steps[fr.nsteps - 1].note : "discarded",
					              s->files[fr.kill_file].rel, fr.kill_line);
				} else if (fr.fate == SCAN_FLOW_REACHES) {
					const scan_flow_step *last = &fr.steps[fr.nsteps - 1];
					if (lv != SCAN_LIVE)
						b->steps.n = first; /* the reachability rule's steps */
					flow_steps(b, &fr);
					lwhy = sa_fmt(s, "the loaded config reaches a launch: %s (%s:%d)",
					              last->note, s->files[last->file].rel, last->line);
					lv = SCAN_LIVE;
				}
			}
			size_t mark = b->steps.n;
			scan_step *saved = NULL;
			if (mark) {
				saved = sa_alloc(s, sizeof(scan_step) * mark);
				if (saved)
					memcpy(saved, b->steps.p, sizeof(scan_step) * mark);
			}
			int nmatch = 0;
			const char *match_dir = NULL;
			for (int i = 0; i < s->njsons; i++) {
				const char *jr = s->jsons[i];
				const char *base = json_glob_match(jr, dir, dl, pj->glob);
				if (!base)
					continue;
				nmatch++;
				if (!match_dir)
					match_dir = sa_fmt(s, "%.*s", (int)(base - jr), jr);
			}
			/* the lookup site */
			pf_knob lk = {0};
			lk.kind = PF_K_JSON_CONFIG;
			lk.name = pj->glob;
			lk.scope = pj->scope;
			lk.line = pj->line;
			lk.col = pj->col;
			lk.end_line = pj->end_line;
			lk.end_col = pj->end_col;
			lk.start = pj->start;
			lk.end = pj->end;
			lk.text = pj->text;
			if (nmatch)
				step(b, fi, pj->line, "%d file(s) match %s in %s", nmatch, pj->glob,
				     match_dir);
			else
				step(b, fi, pj->line, "no file matches %s at or below %s (the folder is "
				                      "empty or missing); a file written there is read "
				                      "only if this lookup is live",
				     pj->glob, dl ? dir : "the root");
			muh_knob *lo = emit(s, b, fi, &lk, f->rel, lv, lwhy);
			if (!lo)
				return;
			lo->kind = "config_lookup";
			lo->lookup_glob = pj->glob;
			lo->lookup_dir = match_dir ? match_dir : (dl ? sa_str(s, dir) : "");
			lo->lookup_files = nmatch;
			{
				char key[1200];
				snprintf(key, sizeof(key), "%s\x01%s\x01%s\x01config_lookup", f->rel,
				         lo->scope, pj->glob);
				const char *kk = sa_str(s, key);
				int *slot = kk ? smap_slot(occ, kk, 1) : NULL;
				int n = slot ? ++*slot : 0;
				knob_id(s, f->rel, lo->scope, pj->glob, "config_lookup", n, lo->id);
			}
			for (int i = 0; i < s->njsons; i++) {
				const char *jr = s->jsons[i];
				const char *base = json_glob_match(jr, dir, dl, pj->glob);
				if (!base)
					continue;
				pf_knob k = {0};
				k.kind = PF_K_JSON_CONFIG;
				k.name = base;
				k.scope = -1;
				k.line = 1;
				k.col = 1;
				k.end_line = 1;
				k.end_col = 1;
				k.text = sa_fmt(s, "file matching %s", pj->glob);
				for (size_t q = 0; saved && q < mark; q++) {
					scan_step *st = vec_push(&b->steps);
					if (st)
						*st = saved[q];
				}
				enum scan_verdict v = lv;
				const char *why = lv == SCAN_LIVE
				                      ? sa_fmt(s, "loaded by name pattern built in %s",
				                               scope_qual(pf, pj->scope))
				                      : lwhy;
				const char *dev = json_device(s, base);
				if (dev && v == SCAN_LIVE) {
					if (!s->opt.device) {
						v = SCAN_PLATFORM;
						why = sa_fmt(s, "tuned for device %s (muh scan --device NAME "
						                "decides)",
						             dev);
						step_file(b, jr, 1, why);
					} else if (device_matches(dev, s->opt.device)) {
						why = sa_fmt(s, "for device %s, which is --device %s; loaded "
						                "by name pattern built in %s",
						             dev, s->opt.device, scope_qual(pf, pj->scope));
						step_file(b, jr, 1,
						          sa_fmt(s, "named for device %s: matches --device %s",
						                 dev, s->opt.device));
					} else {
						v = SCAN_PLATFORM;
						why = sa_fmt(s, "tuned for device %s, not --device %s", dev,
						             s->opt.device);
						step_file(b, jr, 1, why);
					}
				}
				muh_knob *o = emit(s, b, -1, &k, jr, v, why);
				if (!o)
					return;
				o->scope = scope_qual(pf, pj->scope);
				char key[1200];
				snprintf(key, sizeof(key), "%s\x01%s\x01json_config", jr, base);
				const char *kk = sa_str(s, key);
				int *slot = kk ? smap_slot(occ, kk, 1) : NULL;
				int n = slot ? ++*slot : 0;
				knob_id(s, jr, "<file>", base, "json_config", n, o->id);
			}
		}
	}
}

/* The engine-argument field (a class default, not a deployment flag) named
 * name, or NULL. */
/* s without one pair of surrounding quotes, into buf. */
static const char *unquote(const char *s, char *buf, size_t cap)
{
	while (*s == ' ')
		s++;
	size_t n = strlen(s);
	while (n && s[n - 1] == ' ')
		n--;
	if (n >= 2 && (s[0] == '\'' || s[0] == '"') && s[n - 1] == s[0]) {
		s++;
		n -= 2;
	}
	snprintf(buf, cap, "%.*s", (int)n, s);
	return buf;
}

/* Is value (a deployment file's text) one of the unsafe values u (a scan
 * unsafe value: "not in ('a', 8)", "< 4096", ">= N", "!= N", "== N", or a
 * plain value)? 1 / 0, or -1 when u does not decide (a relation with
 * another argument, "< max_loras_per_batch"). */
static int value_unsafe(const char *value, const char *u)
{
	char vb[512], eb[512];
	unquote(value, vb, sizeof(vb));
	if (!strncmp(u, "not in (", 8)) {
		size_t n = strlen(u);
		if (n < 9 || u[n - 1] != ')')
			return -1;
		char list[1024];
		snprintf(list, sizeof(list), "%.*s", (int)(n - 9), u + 8);
		char *p = list, *start = list, q = 0;
		for (;; p++) {
			if (q) {
				if (*p == q)
					q = 0;
				if (*p)
					continue;
			}
			if (*p == '\'' || *p == '"') {
				q = *p;
				continue;
			}
			if (*p == ',' || !*p) {
				char end = *p;
				*p = '\0';
				if (!strcmp(unquote(start, eb, sizeof(eb)), vb))
					return 0;
				if (!end)
					break;
				start = p + 1;
			}
		}
		return 1;
	}
	static const char *const ops[] = {"<=", ">=", "!=", "==", "<", ">"};
	for (int i = 0; i < 6; i++) {
		size_t l = strlen(ops[i]);
		if (strncmp(u, ops[i], l) || u[l] != ' ')
			continue;
		char *e1, *e2;
		double x = strtod(vb, &e1), y = strtod(u + l + 1, &e2);
		if (e1 == vb || *e1 || e2 == u + l + 1 || *e2)
			return -1;
		switch (i) {
		case 0: return x <= y;
		case 1: return x >= y;
		case 2: return x != y;
		case 3: return x == y;
		case 4: return x < y;
		default: return x > y;
		}
	}
	return !strcmp(unquote(u, eb, sizeof(eb)), vb);
}

/* Is value one of knob k's unsafe values (value_unsafe says so for one)? */
static int value_unsafe_any(const muh_knob *k, const char *value)
{
	for (int q = 0; q < k->nunsafe; q++)
		if (value_unsafe(value, k->unsafe_values[q]) == 1)
			return 1;
	return 0;
}

static const muh_knob *engine_field(const muh_surface *s, const char *name)
{
	for (size_t q = 0; q < s->knobs.n; q++) {
		const muh_knob *o = (const muh_knob *)s->knobs.p + q;
		if (!strcmp(o->kind, "engine_arg") && strcmp(o->scope, "<deployment>") &&
		    o->line != 0 && !strcmp(o->name, name))
			return o;
	}
	return NULL;
}

/* The why of a deployment env entry until scan_env_resolve() decides it
 * (scan_host_is_deploy_env recognizes the entries by this pointer). */
static const char deploy_env_why[] = "environment variable of the engine's process";

/* Deployment files: YAML that launches an engine, read by deploy_parse with
 * the server's own argument semantics (src/deploy.c). Each server argument
 * and each env entry is an engine_arg knob in scope <deployment>: its value
 * span is the value's text (a flag's: the flag); a --no-X negation is the
 * knob no_X. Files that are not launch files are skipped. */
static void yaml_knobs(muh_surface *s, kb *b, smap *occ)
{
	scan_launch *L = NULL; /* the tree's own parser, read at the first launch file */
	int Lread = 0;
	for (int yi = 0; yi < s->nyamls + s->njsons; yi++) {
		int json = yi >= s->nyamls;
		const char *rel = json ? s->jsons[yi - s->nyamls] : s->yamls[yi];
		if (path_is_test(rel))
			continue;
		char path[8192];
		snprintf(path, sizeof(path), "%s/%s", s->root, rel);
		size_t n;
		char *text = read_file(path, &n);
		if (!text)
			continue;
		size_t lead = strspn(text, " \t\r\n");
		if (n > (1u << 24) || !memmem(text, n, "-", 1) || (json && text[lead] != '[') ||
		    !(memmem(text, n, "vllm", 4) || memmem(text, n, "serve", 5) ||
		      memmem(text, n, "api_server", 10) || memmem(text, n, "llama", 5))) {
			free(text);
			continue;
		}
		deploy_file *df = NULL;
		muh_diag dd;
		if (deploy_parse(rel, text, n, NULL, &df, &dd)) {
			free(text);
			continue;
		}
		uint64_t hash = pyfile_hash(text, n); /* what patch checks for drift */
		if (!Lread) {
			L = scan_launch_new(s);
			Lread = 1;
		}
		for (size_t ai = 0; ai < df->nargs; ai++) {
			const deploy_arg *a = &df->args[ai];
			int env = a->kind == DEPLOY_ENV, neg = a->kind == DEPLOY_NEG;
			const char *name =
			    neg ? sa_fmt(s, "no_%s", a->name) : sa_str(s, a->name);
			if (!name)
				break;
			pf_knob k = {0};
			k.kind = PF_K_ENGINE_ARG;
			k.name = name;
			k.scope = -1;
			size_t vs = a->val_start, ve = a->val_end;
			if (vs == (size_t)-1 || ve < vs || ve > n)
				vs = ve = a->tok_start; /* no plain span: deploy_set still edits it */
			k.start = (uint32_t)vs;
			k.end = (uint32_t)ve;
			int l0, c0, l1, c1;
			diag_linecol(text, vs, &l0, &c0);
			diag_linecol(text, ve, &l1, &c1);
			k.line = l0;
			k.col = c0;
			k.end_line = l1;
			k.end_col = c1;
			k.text = a->kind == DEPLOY_OPT || env ? sa_str(s, a->value) : "True";
			k.eval = k.text;
			enum scan_verdict v = SCAN_UNKNOWN;
			const char *why;
			if (env) {
				step_file(b, rel, a->line,
				          sa_fmt(s, "deployment file sets the environment variable %s",
				                 a->name));
				why = deploy_env_why;
			} else {
				step_file(b, rel, a->line,
				          sa_fmt(s, "deployment command line sets %s (%s)", a->flag,
				                 a->name));
				why = sa_fmt(s, "no engine-argument field named %s in this tree",
				             a->name);
				const muh_knob *o = engine_field(s, a->name);
				if (o) {
					step_file(b, o->file, o->line,
					          sa_fmt(s, "engine argument %s.%s%s (verdict %s)",
					                 o->scope, o->name,
					                 neg ? ", negated by --no-" : "",
					                 scan_verdict_name(o->verdict)));
					v = o->verdict;
					why = sa_fmt(s, "%s %s.%s", neg ? "negates" : "sets", o->scope,
					             o->name);
					/* a field with unsafe values: this file's value decides */
					int un = 0, known = 1;
					for (int q = 0; v == SCAN_UNSAFE && q < o->nunsafe && !un; q++) {
						int r = value_unsafe(a->value ? a->value : "", o->unsafe_values[q]);
						un = r == 1;
						known &= r >= 0;
					}
					if (v == SCAN_UNSAFE && !un && known && !neg && a->value) {
						v = SCAN_LIVE;
						step_file(b, rel, a->line,
						          sa_fmt(s, "%s is outside the unsafe values (%s)",
						                 a->value, o->unsafe_values[0]));
					} else if (v == SCAN_UNSAFE && un)
						why = sa_fmt(s, "sets %s.%s to %s, an unsafe value (%s)",
						             o->scope, o->name, a->value, o->why);
				}
				/* the tree's own parser: a launch blocker, a value no
				 * registry accepts (src/scan_launch.c) */
				enum scan_verdict lv;
				const char *lwhy, *lunsafe;
				scan_step lst[SCAN_LAUNCH_STEPS];
				int nl = 0;
				if (scan_launch_judge(L, df, a, &lv, &lwhy, &lunsafe, lst, &nl)) {
					v = lv;
					why = lwhy;
					for (int q = 0; q < nl; q++)
						step_file(b, lst[q].file, lst[q].line, lst[q].note);
					if (lunsafe)
						add_unsafe(b, lunsafe);
				}
			}
			muh_knob *o = emit(s, b, -1, &k, rel, v, why);
			if (!o)
				break;
			o->scope = "<deployment>";
			o->file_hash = hash;
			char key[1200];
			snprintf(key, sizeof(key), "%s\x01%s\x01engine_arg", rel, name);
			const char *kk = sa_str(s, key);
			int *slot = kk ? smap_slot(occ, kk, 1) : NULL;
			int cnt = slot ? ++*slot : 0;
			knob_id(s, rel, "<deployment>", name, "engine_arg", cnt, o->id);
		}
		deploy_free(df);
		free(text);
	}
	scan_launch_free(L);
}

size_t scan_launch_blockers(const muh_surface *s, const char *rel, const muh_knob **out,
                            size_t cap)
{
	size_t n = 0;
	for (size_t i = 0; s && i < s->knobs.n; i++) {
		const muh_knob *k = (const muh_knob *)s->knobs.p + i;
		if (k->verdict != SCAN_BLOCKER || strcmp(k->scope, "<deployment>") ||
		    (rel && strcmp(k->file, rel)))
			continue;
		if (n < cap)
			out[n] = k;
		n++;
	}
	return n;
}

/* Launch bindings name the knob that feeds them (BLOCK_M=BLOCK -> BLOCK). */
static void link_feeds(muh_surface *s)
{
	muh_knob *ks = s->knobs.p;
	for (size_t i = 0; i < s->knobs.n; i++) {
		if (strcmp(ks[i].kind, "constexpr"))
			continue;
		for (size_t j = 0; j < s->knobs.n; j++) {
			if (i == j || ks[j].file != ks[i].file || strcmp(ks[j].name, ks[i].value) ||
			    (strcmp(ks[j].kind, "constant") && strcmp(ks[j].kind, "override")))
				continue;
			if (strcmp(ks[j].scope, ks[i].scope) && strcmp(ks[j].scope, "<module>"))
				continue;
			ks[i].feeds = sa_str(s, ks[j].id);
			if (!strcmp(ks[j].scope, ks[i].scope))
				break;
		}
	}
}

/* ---- host for scan_env.c (environment registries; see src/scan_env.h) ---- */

int scan_host_is_script(const muh_surface *s, int fi)
{
	return path_is_script(s->files[fi].rel);
}

int scan_host_nfiles(const muh_surface *s)
{
	return s->nfiles;
}

const TSTree *scan_host_tree(const muh_surface *s, int fi, const char **src, size_t *n)
{
	if (fi < 0 || fi >= s->nfiles || !s->files[fi].tree)
		return NULL;
	*src = s->files[fi].src;
	*n = s->files[fi].srcn;
	return s->files[fi].tree;
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

enum scan_env_reader scan_host_read_class(muh_surface *s, int fi, int scope, uint32_t byte,
                                          int line, unsigned flags)
{
	pf_ref r = {0};
	r.scope = scope;
	r.byte = byte;
	r.line = line;
	r.flags = flags & PF_R_UNREACH;
	int ef, el;
	switch (ref_class(s, fi, &r, &ef, &el)) {
	case R_LIVE:
	case R_BUSY:
		return SCAN_ENV_R_LIVE;
	case R_UNKNOWN:
		return SCAN_ENV_R_UNKNOWN;
	case R_PLATFORM:
		return SCAN_ENV_R_PLATFORM;
	case R_TEST:
		return SCAN_ENV_R_TEST;
	case R_UNREACH:
	case R_NOCALL: /* read only in a function nothing in the tree calls */
		return SCAN_ENV_R_UNREACH;
	default:
		return SCAN_ENV_R_NONE;
	}
}

const char *scan_host_str(muh_surface *s, const char *str)
{
	return sa_str(s, str);
}

const char *scan_host_fmt(muh_surface *s, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	const char *r = sa_vfmt(s, fmt, ap);
	va_end(ap);
	return r;
}

void *scan_host_alloc(muh_surface *s, size_t n)
{
	void *p = sa_alloc(s, n);
	if (p)
		memset(p, 0, n);
	return p;
}

muh_knob *scan_host_push_knob(muh_surface *s)
{
	return vec_push(&s->knobs);
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

int scan_host_is_deploy_env(const muh_knob *k)
{
	return k->why == deploy_env_why && !strcmp(k->scope, "<deployment>");
}

void scan_host_knob_id(muh_surface *s, const char *rel, const char *scope, const char *name,
                       const char *kind, int occ, char out[20])
{
	knob_id(s, rel, scope, name, kind, occ, out);
}

/* ---- host for scan_cache.c (see src/scan_cache.h) ---- */

muh_diag *scan_host_push_diag(muh_surface *s)
{
	return vec_push(&s->diags);
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

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void free_walk(walkres *w)
{
	vec *vs[3] = {&w->py, &w->json, &w->yaml};
	for (int i = 0; i < 3; i++) {
		for (size_t j = 0; j < vs[i]->n; j++)
			free(((char **)vs[i]->p)[j]);
		free(vs[i]->p);
	}
}

/* One file's parse result, filled by a worker thread. */
typedef struct parsed {
	pyfile *pf;
	char *rel, *mod;
	char *src;    /* kept with its tree for scan_env/scan_args, else NULL */
	TSTree *tree;
	size_t n;
	muh_diag *diag; /* first syntax error, or NULL */
	int skipped;    /* unreadable */
} parsed;

typedef struct parse_job {
	const char *root;
	char **paths;
	parsed *out;
	size_t n, next;
	pthread_mutex_t mu;
	int with_tests;
} parse_job;

/* Parses files off the shared queue until it is empty. pyfile_analyze is
 * self-contained (own parser, own arena), so workers share nothing else. */
static void *parse_worker(void *arg)
{
	parse_job *j = arg;
	for (;;) {
		pthread_mutex_lock(&j->mu);
		size_t i = j->next++;
		pthread_mutex_unlock(&j->mu);
		if (i >= j->n)
			return NULL;
		parsed *p = &j->out[i];
		const char *rel = j->paths[i];
		char path[8192];
		snprintf(path, sizeof(path), "%s/%s", j->root, rel);
		char *text = read_file(path, &p->n);
		if (!text) {
			p->skipped = 1;
			continue;
		}
		int is_pkg = 0;
		p->mod = module_of(rel, &is_pkg);
		p->rel = strdup(rel);
		p->pf = p->mod && p->rel ? pyfile_analyze_tree(text, p->n, p->mod, is_pkg, &p->tree)
		                         : NULL;
		if (p->pf && p->pf->nerrors && (p->diag = malloc(sizeof(muh_diag)))) {
			muh_diag *dg = p->diag;
			diag_clear(dg);
			snprintf(dg->file, sizeof(dg->file), "%s", rel);
			dg->line = p->pf->err_line;
			dg->col = p->pf->err_col;
			snprintf(dg->msg, sizeof(dg->msg),
			         "syntax error (%d in this file); the rest of the file was still "
			         "scanned",
			         p->pf->nerrors);
			copy_line(dg->src, sizeof(dg->src), text, p->n, p->pf->err_line);
		}
		/* the later passes that walk the syntax tree again (environment
		 * registries, engine arguments) take this one: a file is parsed once */
		if (p->tree && p->pf &&
		    (scan_env_wants(text, p->n) ||
		     ((j->with_tests || !path_is_test(rel)) && scan_args_wants(p->pf, text, p->n))))
			p->src = text;
		else {
			if (p->tree)
				ts_tree_delete(p->tree);
			p->tree = NULL;
			free(text);
		}
	}
}

int scan_tree(const char *root, const scan_options *opt, muh_surface **out, muh_diag *d)
{
	double t0 = now();
	*out = NULL;
	struct stat st;
	if (!root || stat(root, &st)) {
		diag_clear(d);
		int e = errno;
		/* the README's tour scans the pinned vLLM trees, which the quick
		 * start does not fetch */
		int pinned = root && e == ENOENT && strstr(root, "third_party/");
		return diag_errorf(d, "cannot scan '%s': %s%s", root ? root : "(null)",
		                   root ? strerror(e) : "no path",
		                   pinned ? " (./scripts/deps.sh fetches the pinned engine trees into third_party/)" : "");
	}
	int single = 0;
	if (!S_ISDIR(st.st_mode)) {
		if (!S_ISREG(st.st_mode) || !has_suffix(root, ".py")) {
			diag_clear(d);
			return diag_errorf(d, "cannot scan '%s': not a directory or a .py file",
			                   root);
		}
		single = 1;
	}
	if (!single) /* its deployment files are read with its own parser (deploy.h) */
		deploy_tree_hint(root);
	muh_surface *s = calloc(1, sizeof(*s));
	if (!s)
		return MUH_ENOMEM;
	s->knobs.esz = sizeof(muh_knob);
	s->diags.esz = sizeof(muh_diag);
	s->namelists.esz = sizeof(vec);
	if (opt)
		s->opt = *opt;
	walkres w = {{0}, {0}, {0}, NULL};
	w.py.esz = w.json.esz = w.yaml.esz = sizeof(char *);
	int rc = MUH_OK;
	if (single) {
		char *dup = strdup(root), *slash;
		if (!dup) {
			scan_free(s);
			return MUH_ENOMEM;
		}
		slash = strrchr(dup, '/');
		char **p = vec_push(&w.py);
		if (!p || !(*p = strdup(slash ? slash + 1 : dup))) {
			free(dup);
			free_walk(&w);
			scan_free(s);
			return MUH_ENOMEM;
		}
		if (slash)
			*slash = '\0';
		s->root = strdup(slash ? (dup[0] ? dup : "/") : ".");
		free(dup);
	} else {
		s->root = strdup(root);
		w.s = s;
		s->excluded.esz = sizeof(scan_excluded_path);
		s->warnings.esz = sizeof(const char *);
		int wr = walk_dir(root, "", &w, NULL);
		if (wr == -1) {
			free_walk(&w);
			scan_free(s);
			diag_clear(d);
			return diag_errorf(d, "cannot read directory '%s': %s", root,
			                   strerror(errno))
			           ? MUH_EENV
			           : MUH_EENV;
		}
		if (wr == -2)
			rc = MUH_ENOMEM;
	}
	if (!s->root)
		rc = MUH_ENOMEM;
	if (w.py.n)
		qsort(w.py.p, w.py.n, sizeof(char *), cmp_str);
	if (s->excluded.n)
		qsort(s->excluded.p, s->excluded.n, sizeof(scan_excluded_path), cmp_str);
	if (s->warnings.n)
		qsort(s->warnings.p, s->warnings.n, sizeof(char *), cmp_str);
	if (w.json.n)
		qsort(w.json.p, w.json.n, sizeof(char *), cmp_str);
	if (w.yaml.n)
		qsort(w.yaml.p, w.yaml.n, sizeof(char *), cmp_str);
	s->jsons = w.json.p;
	s->njsons = (int)w.json.n;
	s->yamls = w.yaml.p;
	s->nyamls = (int)w.yaml.n;
	w.json.p = w.yaml.p = NULL;
	w.json.n = w.yaml.n = 0;
	/* the cache (src/scan_cache.c): a tree whose every file hashes as
	 * before answers without parsing */
	char ckey[33] = "";
	if (rc == MUH_OK && s->opt.cache && *s->opt.cache) {
		if (scan_cache_key(s->root, &s->opt, (char *const *)w.py.p, w.py.n, s->jsons,
		                   (size_t)s->njsons, s->yamls, (size_t)s->nyamls, ckey))
			s->cache_status = "off: a file could not be read";
		else {
			int hit = scan_cache_load(s, s->opt.cache, ckey);
			if (hit) {
				free_walk(&w);
				if (hit < 0) {
					scan_free(s);
					return MUH_ENOMEM;
				}
				s->seconds = now() - t0;
				*out = s;
				return MUH_OK;
			}
		}
	}
	s->files = calloc(w.py.n ? w.py.n : 1, sizeof(sfile));
	if (!s->files)
		rc = MUH_ENOMEM;
	/* parse: in parallel (each file is independent), then assemble in
	 * path order so the result does not depend on the thread count */
	parsed *ps = calloc(w.py.n ? w.py.n : 1, sizeof(parsed));
	if (!ps)
		rc = MUH_ENOMEM;
	if (rc == MUH_OK) {
		parse_job job = {s->root, (char **)w.py.p, ps, w.py.n, 0, PTHREAD_MUTEX_INITIALIZER,
		                 s->opt.with_tests};
		int nt = s->opt.jobs > 0 ? s->opt.jobs : (int)sysconf(_SC_NPROCESSORS_ONLN);
		if (nt < 1)
			nt = 1;
		if (nt > 16)
			nt = 16;
		if ((size_t)nt > w.py.n)
			nt = w.py.n ? (int)w.py.n : 1;
		pthread_t th[16];
		int started = 0;
		for (int t = 1; t < nt; t++)
			if (!pthread_create(&th[started], NULL, parse_worker, &job))
				started++;
		parse_worker(&job);
		for (int t = 0; t < started; t++)
			pthread_join(th[t], NULL);
	}
	for (size_t i = 0; rc == MUH_OK && i < w.py.n; i++) {
		parsed *p = &ps[i];
		if (p->skipped)
			continue; /* vanished or unreadable */
		if (!p->pf) {
			rc = MUH_ENOMEM;
			break;
		}
		sfile *f = &s->files[s->nfiles++];
		f->rel = p->rel;
		f->module = p->mod;
		f->pf = p->pf;
		f->src = p->src;
		f->srcn = p->n;
		f->tree = p->tree;
		p->rel = p->mod = p->src = NULL;
		p->pf = NULL;
		p->tree = NULL;
		f->is_test = path_is_test(f->rel);
		f->plat_file = -1;
		s->nbytes += p->n;
		if (p->diag) {
			muh_diag *dg = vec_push(&s->diags);
			if (dg)
				*dg = *p->diag;
		}
		int ns = f->pf->nscopes ? f->pf->nscopes : 1;
		f->reach = calloc((size_t)ns, 1);
		f->reach_file = calloc((size_t)ns, sizeof(int));
		f->reach_line = calloc((size_t)ns, sizeof(int));
		f->reach_scope = calloc((size_t)ns, sizeof(int));
		f->reach_why = calloc((size_t)ns, sizeof(why_at));
		if (!f->reach || !f->reach_file || !f->reach_line || !f->reach_scope || !f->reach_why)
			rc = MUH_ENOMEM;
	}
	for (size_t i = 0; ps && i < w.py.n; i++) {
		pyfile_free(ps[i].pf);
		free(ps[i].rel);
		free(ps[i].mod);
		free(ps[i].diag);
		free(ps[i].src);
		if (ps[i].tree)
			ts_tree_delete(ps[i].tree);
	}
	free(ps);
	free_walk(&w);
	if (rc == MUH_OK && build_index(s))
		rc = MUH_ENOMEM;
	if (rc == MUH_OK)
		mark_imported(s);
	if (rc == MUH_OK && (compute_dead(s) || build_import_graph(s)))
		rc = MUH_ENOMEM;
	if (rc == MUH_OK) {
		compute_platform(s);
		kb b = {s, {0}, {0}, -1, 0};
		b.steps.esz = sizeof(scan_step);
		b.unsafe.esz = sizeof(char *);
		smap occ = {0};
		for (int fi = 0; fi < s->nfiles; fi++)
			knob_file_verdicts(s, fi, &b, &occ);
		if (scan_args_resolve(s)) /* argparse, click, schemas: src/scan_args.c */
			s->oom = 1;
		json_knobs(s, &b, &occ);
		yaml_knobs(s, &b, &occ);
		if (scan_env_resolve(s)) /* environment registries: src/scan_env.c */
			s->oom = 1;
		free_trees(s); /* the last pass that walks them */
		link_feeds(s);
		free(b.steps.p);
		free(b.unsafe.p);
		smap_free(&occ);
		if (s->oom)
			rc = MUH_ENOMEM;
	}
	if (rc != MUH_OK) {
		scan_free(s);
		return rc;
	}
	if (ckey[0])
		scan_cache_store(s, s->opt.cache, ckey);
	s->seconds = now() - t0;
	*out = s;
	return MUH_OK;
}

void scan_free(muh_surface *s)
{
	if (!s)
		return;
	free_trees(s);
	scan_flow_free(s->flow);
	s->flow = NULL;
	for (int i = 0; i < s->nfiles; i++) {
		sfile *f = &s->files[i];
		free(f->rel);
		free(f->module);
		pyfile_free(f->pf);
		free(f->dead);
		free(f->reach);
		free(f->reach_file);
		free(f->reach_line);
		free(f->reach_scope);
		free(f->reach_why);
		free(f->dead_why);
		free(f->plat);
		free(f->importers.p);
		free(f->importees.p);
	}
	free(s->files);
	for (int i = 0; i < s->njsons; i++)
		free(s->jsons[i]);
	free(s->jsons);
	for (int i = 0; i < s->nyamls; i++)
		free(s->yamls[i]);
	free(s->yamls);
	for (size_t i = 0; i < s->namelists.n; i++)
		free(((vec *)s->namelists.p)[i].p);
	free(s->namelists.p);
	smap_free(&s->mods);
	smap_free(&s->defs);
	smap_free(&s->names);
	free(s->knobs.p);
	free(s->diags.p);
	free(s->excluded.p);
	free(s->warnings.p);
	free(s->sinks.p);
	smap_free(&s->cmp_names);
	sblock *b = s->arena;
	while (b) {
		sblock *nx = b->next;
		free(b);
		b = nx;
	}
	free(s->root);
	free(s);
}

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

/* ---- output ------------------------------------------------------------------------- */

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
		cJSON *o = cJSON_CreateObject();
		cJSON_AddItemToArray(knobs, o);
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
			cJSON *a = cJSON_CreateObject();
			cJSON_AddItemToArray(alts, a);
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
		cJSON *o = cJSON_CreateObject();
		cJSON_AddItemToArray(exc, o);
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

/* True when n can be a param's name: a YAML plain key and an expression's
 * name ([A-Za-z_][A-Za-z0-9_]*). */
static int spec_ident(const char *n)
{
	if (!((*n >= 'a' && *n <= 'z') || (*n >= 'A' && *n <= 'Z') || *n == '_'))
		return 0;
	for (; *n; n++)
		if (!((*n >= 'a' && *n <= 'z') || (*n >= 'A' && *n <= 'Z') ||
		      (*n >= '0' && *n <= '9') || *n == '_'))
			return 0;
	return 1;
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
			const muh_knob *fk = engine_field(s, perf_args[q]);
			if (fk && fk->eval &&
			    (fk->verdict == SCAN_LIVE ||
			     (fk->verdict == SCAN_UNSAFE && !value_unsafe_any(fk, fk->eval)))) {
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
			const muh_knob *fk = engine_field(s, a->name);
			int kept = 0;
			for (int q = 0; q < nv; q++) {
				char t[32];
				snprintf(t, sizeof(t), "%lld", vals[q]);
				if (!fk || !value_unsafe_any(fk, t))
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
		for (char *p = fname; *p; p++)
			if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
			      (*p >= '0' && *p <= '9') || *p == '_'))
				*p = '_';
		char path[4096];
		snprintf(path, sizeof(path), "%.2000s/%.1000s.yaml", dir, fname);
		FILE *fp = fopen(path, "w");
		if (!fp) {
			free(done);
			diag_clear(d);
			diag_errorf(d, "cannot write '%s': %s", path, strerror(errno));
			return MUH_EENV;
		}
		fputs("# starter spec written by `muh scan` from ", fp);
		spec_comment(fp, s->root);
		fputs("\n# live knobs of ", fp);
		spec_comment(fp, ks[i].scope);
		fputs(" in ", fp);
		spec_comment(fp, ks[i].file);
		fputs("; widen or narrow the value lists before tuning.\ntarget:\n  engine_tree: ", fp);
		spec_quoted(fp, s->root);
		fputs("\n  file: ", fp);
		spec_quoted(fp, ks[i].file);
		fputs("\n  scope: ", fp);
		spec_quoted(fp, ks[i].scope);
		fputs("\nparams:\n", fp);
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
			for (char *p = nm; *p; p++)
				if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
				      (*p >= '0' && *p <= '9') || *p == '_'))
					*p = '_';
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
