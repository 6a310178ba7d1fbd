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
#include <stddef.h>
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

/* ---- the stored shape: one table a row, read and written by it ----------------- */

/* What one item of a stored row holds: a field of the struct at off. The
 * knob's own items (an id, a hash, a verdict, three arrays) are its row's
 * alone. */
enum cache_item {
	CI_STR,     /* const char *: a string or null */
	CI_INT,     /* int: a number */
	CI_U32,     /* uint32_t: a number */
	CI_ID,      /* the knob's id: a string */
	CI_HASH,    /* uint64_t: 16 hex digits */
	CI_VERDICT, /* enum scan_verdict: a number */
	CI_UNSAFE,  /* the knob's unsafe values: an array of strings */
	CI_ROWS     /* a pointer to structs (their count at noff): an array of rows */
};

typedef struct cache_field {
	enum cache_item item;
	size_t off;
	size_t noff;                   /* CI_ROWS: the offset of the int count */
	const struct cache_rows *rows; /* CI_ROWS: their layout */
} cache_field;

/* The layout of the rows a CI_ROWS item holds: structs of size bytes. */
typedef struct cache_rows {
	const struct cache_field *f;
	size_t nf, size;
} cache_rows;

static const cache_rows step_rows, alt_rows;

#define KF(item, field)                                                                            \
	{                                                                                          \
		item, offsetof(muh_knob, field), 0, NULL                                           \
	}
#define KR(field, count, rows)                                                                     \
	{                                                                                          \
		CI_ROWS, offsetof(muh_knob, field), offsetof(muh_knob, count), rows                \
	}
/* A knob: 25 items, in this order (valid() checks the count and arrays). */
static const cache_field knob_row[] = {
    KF(CI_ID, id),
    KF(CI_STR, file),
    KF(CI_STR, name),
    KF(CI_STR, kind),
    KF(CI_STR, scope),
    KF(CI_INT, line),
    KF(CI_INT, col),
    KF(CI_INT, end_line),
    KF(CI_INT, end_col),
    KF(CI_U32, start),
    KF(CI_U32, end),
    KF(CI_STR, value),
    KF(CI_STR, eval),
    KF(CI_STR, feeds),
    KF(CI_HASH, file_hash),
    KF(CI_VERDICT, verdict),
    KF(CI_STR, why),
    KF(CI_UNSAFE, unsafe_values),
    KR(evidence, nevidence, &step_rows),
    KR(alts, nalts, &alt_rows),
    /* 20..24: where it is overwritten; a config_lookup's glob, folder, count */
    KF(CI_STR, overwritten_file),
    KF(CI_INT, overwritten_line),
    KF(CI_STR, lookup_glob),
    KF(CI_STR, lookup_dir),
    KF(CI_INT, lookup_files),
};
#undef KF
#undef KR

/* A step of evidence: 3 items; an alternative: 5. */
static const cache_field step_row[] = {{CI_STR, offsetof(scan_step, file), 0, NULL},
                                       {CI_INT, offsetof(scan_step, line), 0, NULL},
                                       {CI_STR, offsetof(scan_step, note), 0, NULL}};
static const cache_field alt_row[] = {{CI_STR, offsetof(scan_alt, text), 0, NULL},
                                      {CI_STR, offsetof(scan_alt, eval), 0, NULL},
                                      {CI_U32, offsetof(scan_alt, start), 0, NULL},
                                      {CI_U32, offsetof(scan_alt, end), 0, NULL},
                                      {CI_INT, offsetof(scan_alt, line), 0, NULL}};
#define NROW(t) (sizeof(t) / sizeof((t)[0]))
static const cache_rows step_rows = {step_row, NROW(step_row), sizeof(scan_step)};
static const cache_rows alt_rows = {alt_row, NROW(alt_row), sizeof(scan_alt)};

static cJSON *rows_json(const void *rows, int n, const cache_rows *r);

/* The stored row (a JSON array) of the struct at p laid out by table f. */
static cJSON *row_json(const void *p, const cache_field *f, size_t nf)
{
	cJSON *a = cJSON_CreateArray();
	const muh_knob *k = p; /* the knob's own items are read only from a knob */
	for (size_t i = 0; i < nf; i++) {
		const char *at = (const char *)p + f[i].off;
		cJSON *x = NULL;
		switch (f[i].item) {
		case CI_STR:
			x = jstr(*(const char *const *)at);
			break;
		case CI_INT:
			x = cJSON_CreateNumber(*(const int *)at);
			break;
		case CI_U32:
			x = cJSON_CreateNumber(*(const uint32_t *)at);
			break;
		case CI_ID:
			x = jstr(k->id);
			break;
		case CI_HASH: {
			char hash[24];
			snprintf(hash, sizeof(hash), "%016llx", (unsigned long long)k->file_hash);
			x = cJSON_CreateString(hash);
			break;
		}
		case CI_VERDICT:
			x = cJSON_CreateNumber(k->verdict);
			break;
		case CI_UNSAFE:
			x = cJSON_CreateArray();
			for (int j = 0; j < k->nunsafe; j++)
				cJSON_AddItemToArray(x, jstr(k->unsafe_values[j]));
			break;
		case CI_ROWS: {
			const void *rows;
			memcpy(&rows, at, sizeof(rows));
			x = rows_json(rows, *(const int *)((const char *)p + f[i].noff), f[i].rows);
			break;
		}
		}
		cJSON_AddItemToArray(a, x);
	}
	return a;
}

/* The array of the stored rows of the n structs at rows, laid out by r. */
static cJSON *rows_json(const void *rows, int n, const cache_rows *r)
{
	cJSON *a = cJSON_CreateArray();
	for (int i = 0; i < n; i++)
		cJSON_AddItemToArray(
		    a, row_json((const char *)rows + (size_t)i * r->size, r->f, r->nf));
	return a;
}

static cJSON *knob_json(const muh_knob *k)
{
	return row_json(k, knob_row, NROW(knob_row));
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

static int rows_load(muh_surface *s, const cJSON *arr, const cache_rows *r, const void **rows,
                     int *n, int *ok);

/* Reads the stored row a into the struct at p laid out by table f; a wrong
 * item clears *ok. 0, or -1 when memory ran out. */
static int row_load(muh_surface *s, void *p, const cJSON *a, const cache_field *f, size_t nf,
                    int *ok)
{
	muh_knob *k = p; /* the knob's own items are written only into a knob */
	for (size_t i = 0; i < nf; i++) {
		char *at = (char *)p + f[i].off;
		int ix = (int)i;
		switch (f[i].item) {
		case CI_STR:
			*(const char **)at = gstr(s, a, ix, ok);
			break;
		case CI_INT:
			*(int *)at = (int)gnum(a, ix, ok);
			break;
		case CI_U32:
			*(uint32_t *)at = (uint32_t)gnum(a, ix, ok);
			break;
		case CI_ID: /* valid() saw a string shorter than the id */
			snprintf(k->id, sizeof(k->id), "%s",
			         cJSON_GetArrayItem(a, ix)->valuestring);
			break;
		case CI_HASH: {
			const char *h = gstr(s, a, ix, ok);
			k->file_hash = h ? strtoull(h, NULL, 16) : 0;
			break;
		}
		case CI_VERDICT:
			k->verdict = (enum scan_verdict)(int)gnum(a, ix, ok);
			break;
		case CI_UNSAFE: {
			const cJSON *u = cJSON_GetArrayItem(a, ix);
			int nu = cJSON_GetArraySize(u);
			if (!nu)
				break;
			const char **uv = scan_host_alloc(s, sizeof(char *) * (size_t)nu);
			if (!uv)
				return -1;
			for (int j = 0; j < nu; j++)
				uv[j] = gstr(s, u, j, ok);
			k->unsafe_values = uv;
			k->nunsafe = nu;
			break;
		}
		case CI_ROWS: {
			const void *rows = NULL;
			if (rows_load(s, cJSON_GetArrayItem(a, ix), f[i].rows, &rows,
			              (int *)((char *)p + f[i].noff), ok))
				return -1;
			memcpy(at, &rows, sizeof(rows));
			break;
		}
		}
	}
	return 0;
}

/* Reads the stored rows of arr into structs of size bytes in the arena:
 * *rows and *n (untouched when there are none: *rows stays NULL for a
 * caller that set it so). 0, or -1 when memory ran out. */
static int rows_load(muh_surface *s, const cJSON *arr, const cache_rows *r, const void **rows,
                     int *n, int *ok)
{
	int cnt = cJSON_GetArraySize(arr);
	if (!cnt)
		return 0;
	char *x = scan_host_alloc(s, r->size * (size_t)cnt);
	if (!x)
		return -1;
	for (int i = 0; i < cnt; i++)
		if (row_load(s, x + (size_t)i * r->size, cJSON_GetArrayItem(arr, i), r->f, r->nf,
		             ok))
			return -1;
	*rows = x;
	*n = cnt;
	return 0;
}

static int load_knob(muh_surface *s, const cJSON *a)
{
	int ok = 1;
	muh_knob *k = scan_host_push_knob(s);
	if (!k)
		return -1;
	if (row_load(s, k, a, knob_row, NROW(knob_row), &ok))
		return -1;
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
