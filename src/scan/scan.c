/*
 * scan.c — the surface of an engine tree: knobs, verdicts, evidence.
 *
 * Pipeline (each step reads only what the previous ones built):
 *   1. walk    collect .py / .json / .yaml paths under the root, sorted, no
 *              symlinked directories, no hidden or __pycache__ directories;
 *   2. parse   pyfile_analyze() each .py (src/scan/pyfile.c) on every thread,
 *              biggest file first; while its syntax tree is in memory the
 *              same worker walks it for the environment registries and the
 *              engine arguments (scan_env_collect, scan_args_collect), then
 *              frees source and tree; results land in per-file slots and are
 *              assembled in path order, so nothing depends on the threads;
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
 * This file holds steps 1 and 2 and runs the pipeline (scan_tree, scan_free);
 * steps 3-6 are src/scan/scan_resolve.c, step 7 src/scan/scan_verdict.c and
 * src/scan/scan_config.c, the containers src/scan/scan_surface.c, the output
 * src/scan/scan_output.c (their shared state: src/scan/scan_int.h).
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
#include "muh/fileio.h"
#include "muh/muh.h"
#include "pyfile.h"
#include "scan_args.h"
#include "scan_cache.h"
#include "scan_env.h"
#include "scan_flow.h"
#include "scan_int.h"
#include "scan_launch.h"
#include "scan_vendor.h"
#include "strbuf.h"
#include "textcut.h"

/* The longest path the walk opens, its NUL included (Linux's PATH_MAX): a
 * longer root/rel cannot be opened, so the walk warns instead. */
#define SCAN_PATH_MAX 4096

/* ---- 1. walk ---------------------------------------------------------------- */

typedef struct walkres {
	vec py, json, yaml; /* char* (malloc'd relative paths) */
	muh_surface *s;     /* options; excluded paths go to s->excluded */
} walkres;

/* Why the walk leaves rel out (an arena string), inherited from its
 * directory or its own: an --exclude glob, or vendored code (src/scan/scan_vendor.c);
 * NULL when it is scanned. An --include glob brings a file back. */
static const char *walk_excluded(walkres *w, const char *rel, int is_dir, const char *inherited)
{
	const scan_options *o = &w->s->opt;
	const char *why = inherited;
	char dir[4200];
	int g;
	if (!why && (g = scan_glob_match(o->exclude, o->nexclude, rel)) >= 0)
		why = scan_host_fmt(w->s, "--exclude %s", o->exclude[g]);
	else if (!why && !o->with_vendored && scan_vendored(rel, is_dir, dir, sizeof(dir)))
		why = scan_host_fmt(w->s, "vendored (%s)", dir);
	if (why && !is_dir && scan_glob_match(o->include, o->ninclude, rel) >= 0)
		why = NULL;
	return why;
}

/* A warning of the walk (an arena string, "REL: what"), kept in
 * s->warnings; the order is fixed later (sorted), since readdir's is not. */
static void walk_warn(walkres *w, const char *rel, const char *what)
{
	const char **slot = scan_vec_push(&w->s->warnings);
	const char *r = *rel ? rel : ".";
	size_t n = strlen(r) + strlen(what) + 3;
	char *t = scan_sa_alloc(w->s, n);
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
			walk_warn(w, rel,
			          scan_host_fmt(w->s, "folder not scanned: %s", strerror(e)));
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
		char **slot = scan_vec_push(&names);
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
			walk_warn(
			    w, rel,
			    scan_host_fmt(
			        w->s,
			        "not scanned past here: the path of '%.24s...' would be longer "
			        "than %d bytes",
			        n, SCAN_PATH_MAX - 1));
			continue;
		}
		snprintf(full, SCAN_PATH_MAX, "%s/%s", root, r);
		struct stat st;
		if (lstat(full, &st)) {
			walk_warn(w, r, scan_host_fmt(w->s, "not scanned: %s", strerror(errno)));
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
			scan_excluded_path *x = scan_has_suffix(n, ".py") ? scan_vec_push(&w->s->excluded) : NULL;
			if (x) {
				x->path = scan_sa_str(w->s, r);
				x->why = ew;
			}
			continue;
		}
		vec *v = scan_has_suffix(n, ".py")                                ? &w->py
		         : scan_has_suffix(n, ".json")                            ? &w->json
		         : (scan_has_suffix(n, ".yaml") || scan_has_suffix(n, ".yml")) ? &w->yaml
		                                                             : NULL;
		if (!v)
			continue;
		char **slot = scan_vec_push(v);
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

/* Frees what the parse workers found for scan_env.c and scan_args.c (once
 * both have merged it). */
static void free_parts(muh_surface *s)
{
	for (int i = 0; s->files && i < s->nfiles; i++) {
		scan_env_part_free(s->files[i].env);
		scan_args_part_free(s->files[i].args);
		s->files[i].env = NULL;
		s->files[i].args = NULL;
	}
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
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
	scan_env_part *env;   /* scan_env_collect's finds, or NULL */
	scan_args_part *args; /* scan_args_collect's, or NULL */
	size_t n;
	muh_diag *diag; /* first syntax error, or NULL */
	int skipped;    /* unreadable */
	int oom;        /* memory ran out after the parse */
} parsed;

typedef struct parse_job {
	const char *root;
	char **paths;
	const size_t *order; /* the files, biggest first */
	parsed *out;
	size_t n, next;
	pthread_mutex_t mu;
	int with_tests;
} parse_job;

/* A worker: the job, and the arena its strings go to (a surface of its own,
 * only its arena used, spliced into the scan's when the workers are done). */
typedef struct parse_arg {
	parse_job *j;
	muh_surface shell;
} parse_arg;

/* Parses files off the shared queue until it is empty (the biggest first, so
 * that no big file starts last on one thread while the others wait), and
 * while each file's syntax tree is in memory also walks it for scan_env.c and
 * scan_args.c (their per-file parts; the tree is freed here). pyfile_analyze
 * is self-contained (own parser, own arena) and each file's results go to its
 * own slot, so workers share nothing else; results do not depend on which
 * worker took which file. */
static void *parse_worker(void *arg)
{
	parse_arg *pa = arg;
	parse_job *j = pa->j;
	for (;;) {
		pthread_mutex_lock(&j->mu);
		size_t k = j->next++;
		pthread_mutex_unlock(&j->mu);
		if (k >= j->n)
			return NULL;
		size_t i = j->order ? j->order[k] : k;
		parsed *p = &j->out[i];
		const char *rel = j->paths[i];
		char path[8192];
		snprintf(path, sizeof(path), "%s/%s", j->root, rel);
		char *text = file_read(path, &p->n);
		if (!text) {
			p->skipped = 1;
			continue;
		}
		int is_pkg = 0;
		TSTree *tree = NULL;
		p->mod = module_of(rel, &is_pkg);
		p->rel = strdup(rel);
		p->pf = p->mod && p->rel ? pyfile_analyze_tree(text, p->n, p->mod, is_pkg, &tree)
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
		if (tree && p->pf) {
			int is_test = scan_path_is_test(rel);
			p->env = scan_env_collect(&pa->shell, p->pf, is_test, text, p->n, tree, &p->oom);
			if (j->with_tests || !is_test)
				p->args = scan_args_collect(&pa->shell, p->pf, text, p->n, tree, &p->oom);
		}
		if (tree)
			ts_tree_delete(tree);
		free(text);
	}
}

/* Puts the blocks of shell's arena in front of s's (the strings stay where
 * they are). */
static void adopt_arena(muh_surface *s, muh_surface *shell)
{
	scan_block *b = shell->arena;
	if (!b)
		return;
	while (b->next)
		b = b->next;
	b->next = s->arena;
	s->arena = shell->arena;
	shell->arena = NULL;
	s->oom |= shell->oom;
}

typedef struct size_at {
	off_t size;
	size_t i;
} size_at;

static int cmp_size_desc(const void *a, const void *b)
{
	const size_at *x = a, *y = b;
	if (x->size != y->size)
		return x->size > y->size ? -1 : 1;
	return x->i < y->i ? -1 : x->i > y->i;
}

/* The indices of the n files paths[] under root, biggest first (a file that
 * cannot be stat'ed counts as empty), or NULL when memory ran out. */
static size_t *biggest_first(const char *root, char **paths, size_t n)
{
	size_at *sz = malloc((n ? n : 1) * sizeof(*sz));
	size_t *order = malloc((n ? n : 1) * sizeof(*order));
	if (!sz || !order) {
		free(sz);
		free(order);
		return NULL;
	}
	char path[8192];
	for (size_t i = 0; i < n; i++) {
		struct stat st;
		snprintf(path, sizeof(path), "%s/%s", root, paths[i]);
		sz[i].size = stat(path, &st) ? 0 : st.st_size;
		sz[i].i = i;
	}
	qsort(sz, n, sizeof(*sz), cmp_size_desc);
	for (size_t i = 0; i < n; i++)
		order[i] = sz[i].i;
	free(sz);
	return order;
}

/* The deployment files' judge (scan_launch_new) reads the tree's non-test
 * sources as text: independent of the steps after the parse (it reads only
 * s->root, s->nfiles and each file's path and test flag, which nothing
 * changes any more, and allocates nothing of s's), so a helper thread
 * reads it while one thread runs them. */
typedef struct launch_job {
	muh_surface *s;
	scan_launch *L;
} launch_job;

static void *launch_worker(void *arg)
{
	launch_job *lj = arg;
	lj->L = scan_launch_new(lj->s);
	return NULL;
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
		if (!S_ISREG(st.st_mode) || !scan_has_suffix(root, ".py")) {
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
		char **p = scan_vec_push(&w.py);
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
	/* the cache (src/scan/scan_cache.c): a tree whose every file hashes as
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
	int nt = s->opt.jobs > 0 ? s->opt.jobs : (int)sysconf(_SC_NPROCESSORS_ONLN);
	if (nt < 1)
		nt = 1;
	if (nt > 16)
		nt = 16;
	int nt_all = nt; /* the helper thread below may use a core the parse did not */
	if ((size_t)nt > w.py.n)
		nt = w.py.n ? (int)w.py.n : 1;
	if (rc == MUH_OK) {
		/* one thread takes the files in path order; several, biggest first */
		size_t *order = nt > 1 ? biggest_first(s->root, (char **)w.py.p, w.py.n) : NULL;
		parse_job job = {s->root, (char **)w.py.p, order, ps, w.py.n, 0, PTHREAD_MUTEX_INITIALIZER,
		                 s->opt.with_tests};
		parse_arg *pa = calloc((size_t)nt, sizeof(parse_arg));
		if (!pa)
			rc = MUH_ENOMEM;
		for (int t = 0; pa && t < nt; t++)
			pa[t].j = &job;
		pthread_t th[16];
		int started[16] = {0};
		for (int t = 1; pa && t < nt; t++)
			started[t] = !pthread_create(&th[t], NULL, parse_worker, &pa[t]);
		if (pa)
			parse_worker(&pa[0]);
		for (int t = 1; pa && t < nt; t++)
			if (started[t])
				pthread_join(th[t], NULL);
		for (int t = 0; pa && t < nt; t++)
			adopt_arena(s, &pa[t].shell);
		free(pa);
		free(order);
		if (s->oom)
			rc = MUH_ENOMEM;
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
		f->env = p->env;
		f->args = p->args;
		p->rel = p->mod = NULL;
		p->pf = NULL;
		p->env = NULL;
		p->args = NULL;
		if (p->oom)
			rc = MUH_ENOMEM;
		f->is_test = scan_path_is_test(f->rel);
		f->plat_file = -1;
		s->nbytes += p->n;
		if (p->diag) {
			muh_diag *dg = scan_vec_push(&s->diags);
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
		scan_env_part_free(ps[i].env);
		scan_args_part_free(ps[i].args);
	}
	free(ps);
	free_walk(&w);
	/* with more than one thread and some YAML or JSON that may be a
	 * deployment file, the judge's reading starts now, beside the steps
	 * below; scan_yaml_knobs takes it (or it is freed unused) */
	launch_job lj = {s, NULL};
	pthread_t lth;
	int lstarted = rc == MUH_OK && nt_all > 1 && (s->nyamls || s->njsons) &&
	               !pthread_create(&lth, NULL, launch_worker, &lj);
	if (rc == MUH_OK && scan_build_index(s))
		rc = MUH_ENOMEM;
	if (rc == MUH_OK)
		scan_mark_imported(s);
	if (rc == MUH_OK && (scan_compute_dead(s) || scan_build_import_graph(s)))
		rc = MUH_ENOMEM;
	if (rc == MUH_OK) {
		scan_compute_platform(s);
		kb b = {s, {0}, {0}, -1, 0};
		b.steps.esz = sizeof(scan_step);
		b.unsafe.esz = sizeof(char *);
		smap occ = {0};
		for (int fi = 0; fi < s->nfiles; fi++)
			scan_knob_file_verdicts(s, fi, &b, &occ);
		if (scan_args_resolve(s)) /* argparse, click, schemas: src/scan/scan_args.c */
			s->oom = 1;
		scan_json_knobs(s, &b, &occ);
		if (lstarted) {
			pthread_join(lth, NULL);
			lstarted = 0;
			s->launch = lj.L;
			s->launch_ahead = 1;
		}
		scan_yaml_knobs(s, &b, &occ);
		scan_launch_free(s->launch); /* read ahead, no deployment file took it */
		s->launch = NULL;
		s->launch_ahead = 0;
		if (scan_env_resolve(s)) /* environment registries: src/scan/scan_env.c */
			s->oom = 1;
		free_parts(s); /* both have merged them */
		scan_link_feeds(s);
		free(b.steps.p);
		free(b.unsafe.p);
		scan_smap_free(&occ);
		if (s->oom)
			rc = MUH_ENOMEM;
	}
	if (lstarted) { /* an earlier step failed: the helper still reads s */
		pthread_join(lth, NULL);
		scan_launch_free(lj.L);
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
	free_parts(s);
	scan_launch_free(s->launch);
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
	scan_smap_free(&s->mods);
	scan_smap_free(&s->defs);
	scan_smap_free(&s->names);
	free(s->knobs.p);
	free(s->diags.p);
	free(s->excluded.p);
	free(s->warnings.p);
	free(s->sinks.p);
	scan_smap_free(&s->cmp_names);
	free(s->cmp_files.p);
	scan_arena_free(s->arena);
	free(s->root);
	free(s);
}
