/*
 * scan_cache.c — a second scan of the same tree answers from a cache.
 *
 * The cache is one SQLite file (default: $MUH_CACHE_DIR/scan.sqlite, else
 * $XDG_CACHE_HOME/muh/scan.sqlite, else ~/.cache/muh/scan.sqlite; `muh scan
 * --cache FILE`, `--no-cache`) holding whole surfaces, one row per key:
 *
 *     scan(key TEXT PRIMARY KEY, created INTEGER, surface BLOB)
 *
 * The key hashes what decides the surface: the build of libmuh (the size,
 * mtime and inode of the file scan_tree's code was loaded from, so a rebuilt
 * muh never answers with an old analysis), the options that change the
 * result, and every path the walk found with the FNV-1a 64 of its bytes. A
 * changed byte anywhere in the tree, an added or removed file, or another
 * option is another key. Computing the key reads and hashes every file,
 * which is what a hit costs; no file is parsed. The surface is stored as
 * compact JSON of this file's own shape (every field of every knob, the
 * diagnostics, the file and byte counts), not the public --json, and read
 * back into an empty surface field by field (the excluded paths are the
 * walk's, which the key covers). The 8 newest surfaces are kept.
 *
 * A cache that cannot be opened, read or written is never an error of the
 * scan: the scan runs (or its result is not stored) and scan_cache_status()
 * says why. Must never: print, write anywhere but the cache file.
 */
#include "scan_cache.h"
#include "scan_host.h"

#include <cjson/cJSON.h>
#include <dlfcn.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "muh/fileio.h"
#include "muh/muh.h"
#include "pyfile.h"

/* ---- key ------------------------------------------------------------------ */

typedef struct keyh {
	uint64_t a, b;
} keyh;

static void kfeed(keyh *h, const void *p, size_t n)
{
	const unsigned char *c = p;
	for (size_t i = 0; i < n; i++) {
		h->a = (h->a ^ c[i]) * 0x100000001b3ULL;
		h->b = (h->b ^ c[i]) * 0x100000001b3ULL;
	}
}

static void kstr(keyh *h, const char *s)
{
	kfeed(h, s ? s : "", s ? strlen(s) + 1 : 1);
}

static void ku64(keyh *h, uint64_t v)
{
	kfeed(h, &v, sizeof(v));
}

/* The build of libmuh that runs: where its code (scan_tree's, this file's) was loaded from. */
static void kbuild(keyh *h)
{
	Dl_info info;
	struct stat st;
	kstr(h, MUH_VERSION);
	if (dladdr((void *)scan_cache_key, &info) && info.dli_fname && !stat(info.dli_fname, &st)) {
		ku64(h, (uint64_t)st.st_size);
		ku64(h, (uint64_t)st.st_mtim.tv_sec);
		ku64(h, (uint64_t)st.st_mtim.tv_nsec);
		ku64(h, (uint64_t)st.st_ino);
	} else {
		kstr(h, __DATE__ " " __TIME__); /* no file to stat: this build's stamp */
	}
}

static int kfiles(keyh *h, const char *root, char *const *rel, size_t n, const char *what)
{
	char path[8192];
	kstr(h, what);
	ku64(h, n);
	for (size_t i = 0; i < n; i++) {
		snprintf(path, sizeof(path), "%s/%s", root, rel[i]);
		size_t len;
		char *src = file_read(path, &len);
		if (!src)
			return -1;
		kstr(h, rel[i]);
		ku64(h, len);
		ku64(h, pyfile_hash(src, len));
		free(src);
	}
	return 0;
}

int scan_cache_key(const char *root, const scan_options *opt, char *const *py, size_t npy,
                   char *const *json, size_t njson, char *const *yaml, size_t nyaml,
                   char key[33])
{
	keyh h = {0xcbf29ce484222325ULL, 0x84222325cbf29ce4ULL};
	key[0] = '\0';
	kbuild(&h);
	ku64(&h, (uint64_t)opt->with_tests);
	ku64(&h, (uint64_t)opt->with_vendored);
	ku64(&h, (uint64_t)opt->nexclude);
	for (int i = 0; i < opt->nexclude; i++)
		kstr(&h, opt->exclude[i]);
	ku64(&h, (uint64_t)opt->ninclude);
	for (int i = 0; i < opt->ninclude; i++)
		kstr(&h, opt->include[i]);
	/* the def-use layer's options change verdicts too */
	ku64(&h, (uint64_t)opt->library);
	kstr(&h, opt->device ? opt->device : "");
	ku64(&h, (uint64_t)opt->nentries);
	for (int i = 0; i < opt->nentries; i++)
		kstr(&h, opt->entries[i]);
	if (kfiles(&h, root, py, npy, "py") || kfiles(&h, root, json, njson, "json") ||
	    kfiles(&h, root, yaml, nyaml, "yaml"))
		return -1;
	snprintf(key, 33, "%016llx%016llx", (unsigned long long)h.a, (unsigned long long)h.b);
	return 0;
}

/* ---- the file ------------------------------------------------------------- */

static sqlite3 *cache_open(muh_surface *s, const char *path, int create)
{
	sqlite3 *db = NULL;
	if (create) { /* the cache's directory, one level (the user's cache dir) */
		char dir[4096];
		snprintf(dir, sizeof(dir), "%s", path);
		char *slash = strrchr(dir, '/');
		if (slash && slash != dir) {
			*slash = '\0';
			char *up = strrchr(dir, '/');
			if (up && up != dir) {
				*up = '\0';
				mkdir(dir, 0700);
				*up = '/';
			}
			mkdir(dir, 0700);
		}
	}
	int flags = SQLITE_OPEN_READWRITE | (create ? SQLITE_OPEN_CREATE : 0);
	if (sqlite3_open_v2(path, &db, flags, NULL) != SQLITE_OK) {
		char buf[600];
		snprintf(buf, sizeof(buf), "unavailable: %s: %s", path,
		         db ? sqlite3_errmsg(db) : "cannot open");
		scan_host_set_cache_status(s, scan_host_str(s, buf));
		sqlite3_close(db);
		return NULL;
	}
	sqlite3_busy_timeout(db, 5000);
	char *err = NULL;
	if (sqlite3_exec(db,
	                 "CREATE TABLE IF NOT EXISTS scan(key TEXT PRIMARY KEY, created INTEGER, "
	                 "surface BLOB)",
	                 NULL, NULL, &err) != SQLITE_OK) {
		char buf[600];
		snprintf(buf, sizeof(buf), "unavailable: %s: %s", path, err ? err : "?");
		scan_host_set_cache_status(s, scan_host_str(s, buf));
		sqlite3_free(err);
		sqlite3_close(db);
		return NULL;
	}
	return db;
}

/* ---- surface -> JSON -------------------------------------------------------- */

static cJSON *jstr(const char *s)
{
	return s ? cJSON_CreateString(s) : cJSON_CreateNull();
}

static cJSON *knob_json(const muh_knob *k)
{
	cJSON *a = cJSON_CreateArray();
	char hash[24];
	snprintf(hash, sizeof(hash), "%016llx", (unsigned long long)k->file_hash);
	cJSON *items[] = {jstr(k->id),
	                  jstr(k->file),
	                  jstr(k->name),
	                  jstr(k->kind),
	                  jstr(k->scope),
	                  cJSON_CreateNumber(k->line),
	                  cJSON_CreateNumber(k->col),
	                  cJSON_CreateNumber(k->end_line),
	                  cJSON_CreateNumber(k->end_col),
	                  cJSON_CreateNumber(k->start),
	                  cJSON_CreateNumber(k->end),
	                  jstr(k->value),
	                  jstr(k->eval),
	                  jstr(k->feeds),
	                  cJSON_CreateString(hash),
	                  cJSON_CreateNumber(k->verdict),
	                  jstr(k->why)};
	for (size_t i = 0; i < sizeof(items) / sizeof(*items); i++)
		cJSON_AddItemToArray(a, items[i]);
	cJSON *u = cJSON_CreateArray();
	for (int i = 0; i < k->nunsafe; i++)
		cJSON_AddItemToArray(u, jstr(k->unsafe_values[i]));
	cJSON_AddItemToArray(a, u);
	cJSON *ev = cJSON_CreateArray();
	for (int i = 0; i < k->nevidence; i++) {
		cJSON *st = cJSON_CreateArray();
		cJSON_AddItemToArray(st, jstr(k->evidence[i].file));
		cJSON_AddItemToArray(st, cJSON_CreateNumber(k->evidence[i].line));
		cJSON_AddItemToArray(st, jstr(k->evidence[i].note));
		cJSON_AddItemToArray(ev, st);
	}
	cJSON_AddItemToArray(a, ev);
	cJSON *alts = cJSON_CreateArray();
	for (int i = 0; i < k->nalts; i++) {
		cJSON *x = cJSON_CreateArray();
		cJSON_AddItemToArray(x, jstr(k->alts[i].text));
		cJSON_AddItemToArray(x, jstr(k->alts[i].eval));
		cJSON_AddItemToArray(x, cJSON_CreateNumber(k->alts[i].start));
		cJSON_AddItemToArray(x, cJSON_CreateNumber(k->alts[i].end));
		cJSON_AddItemToArray(x, cJSON_CreateNumber(k->alts[i].line));
		cJSON_AddItemToArray(alts, x);
	}
	cJSON_AddItemToArray(a, alts);
	/* 20..24: where it is overwritten; a config_lookup's glob, folder, count */
	cJSON_AddItemToArray(a, jstr(k->overwritten_file));
	cJSON_AddItemToArray(a, cJSON_CreateNumber(k->overwritten_line));
	cJSON_AddItemToArray(a, jstr(k->lookup_glob));
	cJSON_AddItemToArray(a, jstr(k->lookup_dir));
	cJSON_AddItemToArray(a, cJSON_CreateNumber(k->lookup_files));
	return a;
}

static char *surface_json(const muh_surface *s)
{
	cJSON *root = cJSON_CreateObject();
	if (!root)
		return NULL;
	cJSON_AddNumberToObject(root, "v", 2);
	cJSON_AddNumberToObject(root, "nfiles", (double)scan_nfiles(s));
	cJSON_AddNumberToObject(root, "nbytes", (double)scan_nbytes(s));
	cJSON *ks = cJSON_AddArrayToObject(root, "knobs");
	for (size_t i = 0; i < scan_nknobs(s); i++)
		cJSON_AddItemToArray(ks, knob_json(scan_knob(s, i)));
	cJSON *ds = cJSON_AddArrayToObject(root, "diags");
	for (size_t i = 0; i < scan_ndiags(s); i++) {
		const muh_diag *d = scan_diag(s, i);
		cJSON *a = cJSON_CreateArray();
		cJSON_AddItemToArray(a, cJSON_CreateString(d->file));
		cJSON_AddItemToArray(a, cJSON_CreateNumber(d->line));
		cJSON_AddItemToArray(a, cJSON_CreateNumber(d->col));
		cJSON_AddItemToArray(a, cJSON_CreateString(d->msg));
		cJSON_AddItemToArray(a, cJSON_CreateString(d->src));
		cJSON_AddItemToArray(ds, a);
	}
	char *txt = cJSON_PrintUnformatted(root);
	cJSON_Delete(root);
	return txt;
}

/* ---- JSON -> surface -------------------------------------------------------- */

/* A string item (NULL for null); *ok cleared on a wrong type. */
static const char *gstr(muh_surface *s, const cJSON *a, int i, int *ok)
{
	const cJSON *x = cJSON_GetArrayItem(a, i);
	if (cJSON_IsNull(x))
		return NULL;
	if (!cJSON_IsString(x)) {
		*ok = 0;
		return NULL;
	}
	return scan_host_str(s, x->valuestring);
}

static double gnum(const cJSON *a, int i, int *ok)
{
	const cJSON *x = cJSON_GetArrayItem(a, i);
	if (!cJSON_IsNumber(x)) {
		*ok = 0;
		return 0;
	}
	return x->valuedouble;
}

/* Checks the stored surface's shape before anything is copied, so that a
 * damaged row is a miss, never half a surface. */
static int valid(const cJSON *root)
{
	const cJSON *ks = cJSON_GetObjectItem(root, "knobs"), *ds = cJSON_GetObjectItem(root, "diags");
	if (!cJSON_IsArray(ks) || !cJSON_IsArray(ds) ||
	    !cJSON_IsNumber(cJSON_GetObjectItem(root, "nfiles")) ||
	    !cJSON_IsNumber(cJSON_GetObjectItem(root, "nbytes")) ||
	    cJSON_GetNumberValue(cJSON_GetObjectItem(root, "v")) != 2)
		return 0;
	const cJSON *k;
	cJSON_ArrayForEach(k, ks)
	{
		if (cJSON_GetArraySize(k) != 25 ||
		    !cJSON_IsArray(cJSON_GetArrayItem(k, 17)) ||
		    !cJSON_IsArray(cJSON_GetArrayItem(k, 18)) ||
		    !cJSON_IsArray(cJSON_GetArrayItem(k, 19)) ||
		    !cJSON_IsString(cJSON_GetArrayItem(k, 0)) ||
		    strlen(cJSON_GetArrayItem(k, 0)->valuestring) >= 20)
			return 0;
		const cJSON *st;
		cJSON_ArrayForEach(st, cJSON_GetArrayItem(k, 18)) if (cJSON_GetArraySize(st) != 3) return 0;
		cJSON_ArrayForEach(st, cJSON_GetArrayItem(k, 19)) if (cJSON_GetArraySize(st) != 5) return 0;
	}
	cJSON_ArrayForEach(k, ds) if (cJSON_GetArraySize(k) != 5) return 0;
	return 1;
}

static int load_knob(muh_surface *s, const cJSON *a)
{
	int ok = 1;
	muh_knob *k = scan_host_push_knob(s);
	if (!k)
		return -1;
	snprintf(k->id, sizeof(k->id), "%s", cJSON_GetArrayItem(a, 0)->valuestring);
	k->file = gstr(s, a, 1, &ok);
	k->name = gstr(s, a, 2, &ok);
	k->kind = gstr(s, a, 3, &ok);
	k->scope = gstr(s, a, 4, &ok);
	k->line = (int)gnum(a, 5, &ok);
	k->col = (int)gnum(a, 6, &ok);
	k->end_line = (int)gnum(a, 7, &ok);
	k->end_col = (int)gnum(a, 8, &ok);
	k->start = (uint32_t)gnum(a, 9, &ok);
	k->end = (uint32_t)gnum(a, 10, &ok);
	k->value = gstr(s, a, 11, &ok);
	k->eval = gstr(s, a, 12, &ok);
	k->feeds = gstr(s, a, 13, &ok);
	const char *h = gstr(s, a, 14, &ok);
	k->file_hash = h ? strtoull(h, NULL, 16) : 0;
	k->verdict = (enum scan_verdict)(int)gnum(a, 15, &ok);
	k->why = gstr(s, a, 16, &ok);
	const cJSON *u = cJSON_GetArrayItem(a, 17), *ev = cJSON_GetArrayItem(a, 18),
	            *al = cJSON_GetArrayItem(a, 19);
	int nu = cJSON_GetArraySize(u), ne = cJSON_GetArraySize(ev), na = cJSON_GetArraySize(al);
	if (nu) {
		const char **uv = scan_host_alloc(s, sizeof(char *) * (size_t)nu);
		if (!uv)
			return -1;
		for (int i = 0; i < nu; i++)
			uv[i] = gstr(s, u, i, &ok);
		k->unsafe_values = uv;
		k->nunsafe = nu;
	}
	if (ne) {
		scan_step *st = scan_host_alloc(s, sizeof(scan_step) * (size_t)ne);
		if (!st)
			return -1;
		for (int i = 0; i < ne; i++) {
			const cJSON *x = cJSON_GetArrayItem(ev, i);
			st[i].file = gstr(s, x, 0, &ok);
			st[i].line = (int)gnum(x, 1, &ok);
			st[i].note = gstr(s, x, 2, &ok);
		}
		k->evidence = st;
		k->nevidence = ne;
	}
	if (na) {
		scan_alt *alts = scan_host_alloc(s, sizeof(scan_alt) * (size_t)na);
		if (!alts)
			return -1;
		for (int i = 0; i < na; i++) {
			const cJSON *x = cJSON_GetArrayItem(al, i);
			alts[i].text = gstr(s, x, 0, &ok);
			alts[i].eval = gstr(s, x, 1, &ok);
			alts[i].start = (uint32_t)gnum(x, 2, &ok);
			alts[i].end = (uint32_t)gnum(x, 3, &ok);
			alts[i].line = (int)gnum(x, 4, &ok);
		}
		k->alts = alts;
		k->nalts = na;
	}
	k->overwritten_file = gstr(s, a, 20, &ok);
	k->overwritten_line = (int)gnum(a, 21, &ok);
	k->lookup_glob = gstr(s, a, 22, &ok);
	k->lookup_dir = gstr(s, a, 23, &ok);
	k->lookup_files = (int)gnum(a, 24, &ok);
	if (!k->file || !k->name || !k->kind || !k->scope)
		ok = 0;
	if (!k->value)
		k->value = "";
	return ok ? 0 : -2;
}

int scan_cache_load(muh_surface *s, const char *path, const char *key)
{
	struct stat st;
	if (stat(path, &st)) {
		scan_host_set_cache_status(s, "miss");
		return 0;
	}
	sqlite3 *db = cache_open(s, path, 0);
	if (!db)
		return 0;
	sqlite3_stmt *q = NULL;
	cJSON *root = NULL;
	int rc = 0;
	if (sqlite3_prepare_v2(db, "SELECT surface FROM scan WHERE key = ?", -1, &q, NULL) ==
	        SQLITE_OK &&
	    sqlite3_bind_text(q, 1, key, -1, SQLITE_STATIC) == SQLITE_OK &&
	    sqlite3_step(q) == SQLITE_ROW) {
		const char *blob = sqlite3_column_blob(q, 0);
		int n = sqlite3_column_bytes(q, 0);
		if (blob && n > 0)
			root = cJSON_ParseWithLength(blob, (size_t)n);
	}
	sqlite3_finalize(q);
	sqlite3_close(db);
	if (!root || !valid(root)) {
		cJSON_Delete(root);
		scan_host_set_cache_status(s, root ? "miss (a damaged entry)" : "miss");
		return 0;
	}
	const cJSON *x;
	cJSON_ArrayForEach(x, cJSON_GetObjectItem(root, "knobs"))
	{
		int r = load_knob(s, x);
		if (r) {
			rc = -1; /* out of memory, or a field of the wrong type */
			break;
		}
	}
	cJSON_ArrayForEach(x, cJSON_GetObjectItem(root, "diags"))
	{
		muh_diag *d = rc ? NULL : scan_host_push_diag(s);
		if (!d) {
			rc = -1;
			break;
		}
		int ok = 1;
		const char *f = gstr(s, x, 0, &ok), *m = gstr(s, x, 3, &ok), *src = gstr(s, x, 4, &ok);
		snprintf(d->file, sizeof(d->file), "%s", f ? f : "");
		d->line = (int)gnum(x, 1, &ok);
		d->col = (int)gnum(x, 2, &ok);
		snprintf(d->msg, sizeof(d->msg), "%s", m ? m : "");
		snprintf(d->src, sizeof(d->src), "%s", src ? src : "");
	}
	if (!rc) {
		scan_host_set_totals(s, (size_t)cJSON_GetNumberValue(cJSON_GetObjectItem(root, "nfiles")),
		                     (size_t)cJSON_GetNumberValue(cJSON_GetObjectItem(root, "nbytes")));
		scan_host_set_cache_status(s, "hit");
	}
	cJSON_Delete(root);
	return rc ? -1 : 1;
}

void scan_cache_store(muh_surface *s, const char *path, const char *key)
{
	char *txt = surface_json(s);
	if (!txt) {
		scan_host_set_cache_status(s, "not stored: out of memory");
		return;
	}
	sqlite3 *db = cache_open(s, path, 1);
	if (!db) {
		free(txt);
		return;
	}
	sqlite3_stmt *q = NULL;
	int ok = sqlite3_exec(db, "BEGIN IMMEDIATE", NULL, NULL, NULL) == SQLITE_OK &&
	         sqlite3_prepare_v2(db,
	                            "INSERT OR REPLACE INTO scan(key, created, surface) VALUES(?, ?, ?)",
	                            -1, &q, NULL) == SQLITE_OK &&
	         sqlite3_bind_text(q, 1, key, -1, SQLITE_STATIC) == SQLITE_OK &&
	         sqlite3_bind_int64(q, 2, (sqlite3_int64)time(NULL)) == SQLITE_OK &&
	         sqlite3_bind_blob(q, 3, txt, (int)strlen(txt), SQLITE_STATIC) == SQLITE_OK &&
	         sqlite3_step(q) == SQLITE_DONE;
	sqlite3_finalize(q);
	ok = ok && sqlite3_exec(db,
	                        "DELETE FROM scan WHERE key NOT IN (SELECT key FROM scan ORDER BY "
	                        "created DESC, rowid DESC LIMIT 8)",
	                        NULL, NULL, NULL) == SQLITE_OK;
	if (ok && sqlite3_exec(db, "COMMIT", NULL, NULL, NULL) == SQLITE_OK) {
		scan_host_set_cache_status(s, "miss (stored)");
	} else {
		char buf[600];
		snprintf(buf, sizeof(buf), "not stored: %s: %s", path, sqlite3_errmsg(db));
		scan_host_set_cache_status(s, scan_host_str(s, buf));
		sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
	}
	sqlite3_close(db);
	free(txt);
}
