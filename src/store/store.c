/*
 * store.c — the SQLite store (see store.h, docs/store.md).
 *
 * Owns: the schema, resume, one transaction per finished measurement, and
 * the exports (CSV, JSON, T4). WAL mode with synchronous=NORMAL: a committed
 * measurement survives the death of the process (kill -9) at any moment; a
 * power cut may lose the last commits but never corrupts the file.
 *
 * Opening checks before it writes anything: a file that is not a muh store
 * (no meta.schema_version), one holding a trigger or a view (muh makes
 * neither), a corrupt one (PRAGMA quick_check) or one of a newer schema is
 * refused, and left byte-identical (no tables added, no
 * switch to WAL). Only store_open (the writers) creates a store, and only
 * in a missing or empty file; store_open_ro (the readers) opens with
 * mode=ro, and immutable=1 when no -wal lies beside the store or the
 * directory is not writable: a read leaves no -wal/-shm behind.
 *
 * Two writers on one run: store_claim marks a variant as being measured by
 * this process (claims table, one transaction with the check for a stored
 * measurement or a live claim), so no variant is measured twice; store_put
 * says STORE_KEPT when another process's row was there first.
 *
 * Must never: hold a transaction open across an evaluation (a kill -9 then
 * would lose finished rows), print, or exit; write to a file it has not
 * recognised as a muh store.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>
#include <sqlite3.h>

#include "muh/muh.h"
#include "muh/objective.h"
#include "muh/store.h"
#include "store_vfs.h"
#include "eval_int.h"
#include "json_int.h"

/* Bumped only for a change an older muh cannot read; added columns and
 * tables (metrics, spec_text, claims) are not such a change. */
#define STORE_SCHEMA_VERSION "1"
#define STORE_SCHEMA_VERSION_N 1

struct muh_store {
	sqlite3 *db;
	int has_metrics;  /* measurements.metrics exists (stores before it lack it until written) */
	int has_spec;     /* runs.spec_text and runs.spec_abs exist (likewise) */
	int has_claims;   /* the claims table exists (likewise) */
	int has_retimes;  /* the retimes table exists (likewise) */
	int has_decisions; /* the decisions table exists (likewise) */
	int readonly;     /* opened by store_open_ro */
};

static const char schema[] =
	"CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT);"
	"CREATE TABLE IF NOT EXISTS runs("
	" id INTEGER PRIMARY KEY AUTOINCREMENT, spec_hash TEXT NOT NULL, spec_path TEXT, spec_name TEXT,"
	" instance INTEGER NOT NULL DEFAULT 0, problem TEXT, backend TEXT NOT NULL,"
	" hw_profile TEXT NOT NULL DEFAULT '', tool_version TEXT, host TEXT, noise REAL,"
	" created_ms INTEGER, updated_ms INTEGER, spec_text TEXT, spec_abs TEXT);"
	"CREATE INDEX IF NOT EXISTS runs_identity ON runs(spec_hash, instance, backend, hw_profile);"
	"CREATE TABLE IF NOT EXISTS variants("
	" id INTEGER PRIMARY KEY, spec_hash TEXT NOT NULL, key TEXT NOT NULL, config TEXT,"
	" UNIQUE(spec_hash, key));"
	"CREATE TABLE IF NOT EXISTS measurements("
	" id INTEGER PRIMARY KEY, run_id INTEGER NOT NULL REFERENCES runs(id),"
	" variant_id INTEGER NOT NULL REFERENCES variants(id), status TEXT NOT NULL,"
	" samples TEXT, nsamples INTEGER, median REAL, min REAL, mad REAL, ci_lo REAL, ci_hi REAL,"
	" warmups INTEGER, fingerprint TEXT, fp_detail TEXT, error TEXT, max_abs_err REAL,"
	" rel_l2_err REAL, sm_clock_mhz REAL, power_w REAL, temp_c REAL, t_build REAL,"
	" t_verify REAL, t_time REAL, started_ms INTEGER, finished_ms INTEGER,"
	" metrics TEXT, UNIQUE(run_id, variant_id));";

/* What store_upgrade adds to a store of an earlier muh, on its first write. */
static const char claims_schema[] =
	"CREATE TABLE IF NOT EXISTS claims(run_id INTEGER NOT NULL, key TEXT NOT NULL,"
	" pid INTEGER NOT NULL, host TEXT, started_ms INTEGER, PRIMARY KEY(run_id, key));";

static const char retimes_schema[] =
	"CREATE TABLE IF NOT EXISTS retimes(run_id INTEGER NOT NULL, key TEXT NOT NULL,"
	" burst_rank INTEGER, burst_s REAL, burst_mhz REAL, sustained_s REAL, sustained_mhz REAL,"
	" warm_s REAL, finished_ms INTEGER, PRIMARY KEY(run_id, key));";

static const char decisions_schema[] =
	"CREATE TABLE IF NOT EXISTS decisions(run_id INTEGER NOT NULL, round INTEGER NOT NULL,"
	" pos INTEGER NOT NULL, key TEXT NOT NULL, role INTEGER NOT NULL, status TEXT NOT NULL,"
	" score REAL, slo_met INTEGER, why TEXT, metrics TEXT, level REAL, finished_ms INTEGER,"
	" PRIMARY KEY(run_id, round, pos));";

static int64_t now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int sql_fail(muh_store *st, muh_diag *d, const char *what)
{
	if (d)
		snprintf(d->msg, sizeof(d->msg), "store: %s: %s", what, sqlite3_errmsg(st->db));
	return MUH_EENV;
}

static int exec(muh_store *st, const char *sql, muh_diag *d)
{
	char *err = NULL;
	if (sqlite3_exec(st->db, sql, NULL, NULL, &err) != SQLITE_OK) {
		if (d)
			snprintf(d->msg, sizeof(d->msg), "store: %.900s", err ? err : "error");
		sqlite3_free(err);
		return MUH_EENV;
	}
	return MUH_OK;
}

/* Sets d (when not NULL) to a store error at the store's file path: its
 * file is path, so that it prints as every file error does ("PATH: error:
 * MSG"), and the message (printf-style) does not name the file again. */
static void store_diag(muh_diag *d, const char *path, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void store_diag(muh_diag *d, const char *path, const char *fmt, ...)
{
	if (!d)
		return;
	diag_at(d, path, 0, 0, NULL);
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(d->msg, sizeof(d->msg), fmt, ap);
	va_end(ap);
}

/* 1 when table has a column called col. */
static int column_exists(muh_store *st, const char *table, const char *col)
{
	sqlite3_stmt *s;
	char sql[128];
	snprintf(sql, sizeof(sql), "PRAGMA table_info(%s)", table);
	int found = 0;
	if (sqlite3_prepare_v2(st->db, sql, -1, &s, NULL) != SQLITE_OK)
		return 0;
	while (!found && sqlite3_step(s) == SQLITE_ROW)
		found = !strcmp((const char *)sqlite3_column_text(s, 1), col);
	sqlite3_finalize(s);
	return found;
}

/* Adds the columns a store written by an earlier muh lacks; only on a
 * write, so that reading an old store never changes it. */
static int store_upgrade(muh_store *st, muh_diag *d)
{
	int rc = MUH_OK;
	if (!st->has_metrics && !(rc = exec(st, "ALTER TABLE measurements ADD COLUMN metrics TEXT", d)))
		st->has_metrics = 1;
	if (!rc && !st->has_spec &&
	    !(rc = exec(st, "BEGIN IMMEDIATE", d))) {
		/* another writer may have added them since this one opened */
		if (!column_exists(st, "runs", "spec_text"))
			rc = exec(st, "ALTER TABLE runs ADD COLUMN spec_text TEXT;"
				      "ALTER TABLE runs ADD COLUMN spec_abs TEXT;", d);
		rc = rc ? (exec(st, "ROLLBACK", NULL), rc) : exec(st, "COMMIT", d);
		if (!rc)
			st->has_spec = 1;
	}
	if (!rc && !st->has_claims && !(rc = exec(st, claims_schema, d)))
		st->has_claims = 1;
	if (!rc && !st->has_retimes && !(rc = exec(st, retimes_schema, d)))
		st->has_retimes = 1;
	if (!rc && !st->has_decisions && !(rc = exec(st, decisions_schema, d)))
		st->has_decisions = 1;
	return rc;
}

/* 1 when the store has a table called name, 0 when not, -1 when SQLite
 * could not tell (out of memory, I/O): never "absent" for "unknown". */
static int table_exists(muh_store *st, const char *name)
{
	sqlite3_stmt *s;
	if (sqlite3_prepare_v2(st->db, "SELECT 1 FROM sqlite_master WHERE type='table' AND name=?1", -1, &s,
			       NULL) != SQLITE_OK)
		return -1;
	sqlite3_bind_text(s, 1, name, -1, SQLITE_STATIC);
	int rc = sqlite3_step(s);
	sqlite3_finalize(s);
	return rc == SQLITE_ROW ? 1 : rc == SQLITE_DONE ? 0 : -1;
}

/* Recognises a muh store, reading only: MUH_OK when path holds one this muh
 * can read (meta.schema_version at most ours) and PRAGMA quick_check finds
 * nothing wrong; *empty = 1 (and MUH_OK) when it is an SQLite database
 * without a single table (a store another writer is creating right now).
 * Otherwise d->msg naming path and MUH_EINPUT when the file is not a muh
 * store at all (not SQLite, or another program's database: the user named
 * the wrong file), MUH_EENV when it is one muh cannot use (corrupt, of a
 * newer schema, unreadable). Writes nothing. */
static int store_check(muh_store *st, const char *path, int *empty, muh_diag *d)
{
	sqlite3_stmt *s;
	*empty = 0;
	int rc = sqlite3_prepare_v2(st->db, "SELECT count(*) FROM sqlite_master", -1, &s, NULL);
	if (rc == SQLITE_OK) {
		rc = sqlite3_step(s);
		if (rc == SQLITE_ROW) {
			*empty = sqlite3_column_int64(s, 0) == 0;
			rc = SQLITE_OK;
		}
		sqlite3_finalize(s);
	}
	if (rc != SQLITE_OK) {
		rc = sqlite3_extended_errcode(st->db);
		if ((rc & 0xff) == SQLITE_NOTADB) {
			store_diag(d, path, "not a muh store (not an SQLite database)");
			return MUH_EINPUT;
		}
		if ((rc & 0xff) == SQLITE_CORRUPT)
			store_diag(d, path, "the store is corrupt: %s; it is refused (restore it from a copy, or "
				   "start another with --db)", sqlite3_errmsg(st->db));
		else
			store_diag(d, path, "cannot read the store: %s", sqlite3_errmsg(st->db));
		return MUH_EENV;
	}
	if (*empty)
		return MUH_OK;
	long version = -1;
	int meta = table_exists(st, "meta");
	if (meta > 0 &&
	    sqlite3_prepare_v2(st->db, "SELECT value FROM meta WHERE key='schema_version'", -1, &s, NULL) !=
		    SQLITE_OK)
		meta = -1;
	if (meta < 0) { /* not "not a muh store": SQLite could not read it now */
		store_diag(d, path, "cannot read the store: %s", sqlite3_errmsg(st->db));
		return MUH_EENV;
	}
	if (meta) {
		int step = sqlite3_step(s);
		if (step == SQLITE_ROW && sqlite3_column_type(s, 0) != SQLITE_NULL) {
			const char *v = (const char *)sqlite3_column_text(s, 0);
			char *end;
			errno = 0;
			version = v ? strtol(v, &end, 10) : -1;
			if (!v) /* a text value SQLite could not hand out: out of memory */
				step = SQLITE_NOMEM;
			else if (end == v || *end || errno || version < 1)
				version = 0; /* there, but not a number muh writes */
		}
		sqlite3_finalize(s);
		if (step != SQLITE_ROW && step != SQLITE_DONE) { /* unread, not absent */
			store_diag(d, path, "cannot read the store: %s",
				   step == SQLITE_NOMEM ? "out of memory" : sqlite3_errmsg(st->db));
			return MUH_EENV;
		}
	}
	if (version < 0) {
		store_diag(d, path, "not a muh store (an SQLite database without muh's meta.schema_version); it "
			   "is left untouched");
		return MUH_EINPUT;
	}
	if (version == 0 || version > STORE_SCHEMA_VERSION_N) {
		if (version == 0)
			store_diag(d, path, "not a muh store this muh can read (its meta.schema_version is not a "
				   "number)");
		else
			store_diag(d, path, "store schema version %ld, newer than this muh's (" MUH_VERSION
				   " reads up to " STORE_SCHEMA_VERSION "): use the muh that wrote it", version);
		return MUH_EENV;
	}
	/* muh makes tables and indexes only: a trigger runs SQL on muh's writes
	 * (one could delete or rewrite measurements as they are stored) and a
	 * view can stand where muh expects a table; either is someone else's
	 * change to the store, refused before anything is read or written */
	if (sqlite3_prepare_v2(st->db, "SELECT type, name, count(*) OVER () FROM sqlite_master "
				       "WHERE type IN ('trigger', 'view') ORDER BY type, name LIMIT 1",
			       -1, &s, NULL) != SQLITE_OK) {
		store_diag(d, path, "cannot read the store: %s", sqlite3_errmsg(st->db));
		return MUH_EENV;
	}
	int step = sqlite3_step(s);
	if (step != SQLITE_ROW && step != SQLITE_DONE) { /* unread: not "none there" */
		store_diag(d, path, "cannot read the store: %s", sqlite3_errmsg(st->db));
		sqlite3_finalize(s);
		return MUH_EENV;
	}
	if (step == SQLITE_ROW) {
		const char *type = (const char *)sqlite3_column_text(s, 0);
		const char *name = (const char *)sqlite3_column_text(s, 1);
		int more = sqlite3_column_int(s, 2) - 1;
		char also[48] = "";
		if (more > 0)
			snprintf(also, sizeof(also), ", and %d more trigger%s or view%s", more,
				 more == 1 ? "" : "s", more == 1 ? "" : "s");
		store_diag(d, path, "the store holds a %s that muh did not create ('%.100s'%s); muh's stores have "
			   "no triggers or views (one could change rows as muh writes them): the store is "
			   "refused, untouched (drop it with sqlite3, or use another --db)",
			   type ? type : "?", name ? name : "?", also);
		sqlite3_finalize(s);
		return MUH_EINPUT;
	}
	sqlite3_finalize(s);
	/* corrupt is what SQLite found corrupt; a check that could not run
	 * (out of memory, I/O) says so instead, of a store that may be good */
	if (sqlite3_prepare_v2(st->db, "PRAGMA quick_check", -1, &s, NULL) != SQLITE_OK) {
		int ec = sqlite3_errcode(st->db);
		if (ec == SQLITE_CORRUPT || ec == SQLITE_NOTADB)
			store_diag(d, path, "the store is corrupt: %s", sqlite3_errmsg(st->db));
		else
			store_diag(d, path, "cannot read the store: %s", sqlite3_errmsg(st->db));
		return MUH_EENV;
	}
	char first[512] = "";
	int ok = 0, n = 0;
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		const char *t = (const char *)sqlite3_column_text(s, 0);
		if (n++ == 0) {
			snprintf(first, sizeof(first), "%s", t ? t : "");
			ok = t && !strcmp(t, "ok");
		}
	}
	if (rc != SQLITE_DONE) {
		ok = 0;
		snprintf(first, sizeof(first), "%s", sqlite3_errmsg(st->db));
	}
	sqlite3_finalize(s);
	if (rc != SQLITE_DONE && (rc & 0xff) != SQLITE_CORRUPT && (rc & 0xff) != SQLITE_NOTADB) {
		store_diag(d, path, "cannot read the store: %.200s", first);
		return MUH_EENV;
	}
	if (!ok) {
		store_diag(d, path, "the store is corrupt (PRAGMA quick_check: %.200s%s); it is refused (restore it "
			   "from a copy, or start another with --db)", first, n > 1 ? ", ..." : "");
		return MUH_EENV;
	}
	st->has_metrics = column_exists(st, "measurements", "metrics");
	st->has_spec = column_exists(st, "runs", "spec_text") && column_exists(st, "runs", "spec_abs");
	st->has_claims = table_exists(st, "claims") == 1;
	st->has_retimes = table_exists(st, "retimes") == 1;
	st->has_decisions = table_exists(st, "decisions") == 1;
	return MUH_OK;
}

/* "missing" (1), "empty" (0-byte regular file: 2), else 0; -1 with d->msg
 * when path is there but is not a regular file, or its first bytes are not
 * SQLite's header (SQLite itself takes a file shorter than a header, such
 * as a 1-byte text file, for an empty database, and a writer would make a
 * store in it). */
static int file_state(const char *path, muh_diag *d)
{
	struct stat sb;
	if (stat(path, &sb))
		return errno == ENOENT ? 1 : 0; /* other errors: sqlite says what */
	if (!S_ISREG(sb.st_mode)) {
		store_diag(d, path, "not a muh store (%s)", S_ISDIR(sb.st_mode) ? "a directory" : "not a regular file");
		return -1;
	}
	if (sb.st_size == 0)
		return 2;
	static const char magic[16] = "SQLite format 3"; /* and its '\0' */
	char head[16];
	FILE *f = fopen(path, "rb");
	if (!f)
		return 0; /* unreadable: sqlite says what */
	size_t got = fread(head, 1, sizeof(head), f);
	fclose(f);
	if (got < sizeof(head) || memcmp(head, magic, sizeof(magic))) {
		store_diag(d, path, "not a muh store (not an SQLite database)");
		return -1;
	}
	return 0;
}

static void store_free(muh_store *st)
{
	if (st) {
		sqlite3_close(st->db);
		free(st);
	}
}

/* 1 when the file at path is missing or holds no byte. */
static int no_bytes(const char *path)
{
	struct stat sb;
	return stat(path, &sb) != 0 || sb.st_size == 0;
}

/* 1 when the database at path holds no table: missing, empty, or one page
 * (page 1, the schema's root, is every page there is; a table's root is
 * a page of its own). */
static int no_tables(const char *path)
{
	unsigned char h[18];
	struct stat sb;
	if (no_bytes(path))
		return 1;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n = fd >= 0 ? read(fd, h, sizeof(h)) : -1;
	if (fd >= 0)
		close(fd);
	if (n != (ssize_t)sizeof(h) || stat(path, &sb) != 0)
		return 0;
	long page = h[16] << 8 | h[17];
	if (page == 1)
		page = 65536;
	return sb.st_size <= page;
}

/* A writer's open of path failed (rc): closes st, names muh's own
 * environment in d when SQLite's last OS error says muh ran short (out of
 * descriptors, memory, disk), and, when the store was new here (fs == 1)
 * and holds no table (nor a -wal with anything in it: another writer's
 * commit), removes what the attempt made (the file, its -wal and -shm):
 * nothing is left behind. Returns rc as
 * store_open returns it. */
static int open_failed(muh_store *st, const char *path, int fs, int rc, muh_diag *d)
{
	int se = st->db ? sqlite3_system_errno(st->db) : 0;
	if (d && rc != MUH_EINPUT && eval_env_errno(se)) {
		char w[160];
		eval_env_what(se, w, sizeof(w));
		store_diag(d, path, "cannot open the store: muh ran out of %s; muh's environment", w);
	}
	store_free(st);
	char side[PATH_MAX + 8];
	snprintf(side, sizeof(side), "%s-wal", path);
	if (fs == 1 && no_tables(path) && no_bytes(side)) {
		unlink(side);
		snprintf(side, sizeof(side), "%s-shm", path);
		unlink(side);
		unlink(path);
	}
	return rc == MUH_EINPUT ? MUH_EINPUT : MUH_EENV;
}

int store_open(const char *path, muh_store **out, muh_diag *d)
{
	*out = NULL;
	int fs = file_state(path, d);
	if (fs < 0)
		return MUH_EINPUT; /* a folder, not SQLite: the file named is at fault */
	if (!fs) {
		/* a store this process cannot write is refused before SQLite opens
		 * it: reading a WAL store read-write-less makes its -wal and -shm
		 * beside it, and they were left behind */
		int fd = open(path, O_RDWR | O_CLOEXEC);
		if (fd < 0 && (errno == EACCES || errno == EPERM || errno == EROFS)) {
			store_diag(d, path, "cannot write the store: %s (reading commands open it read-only)",
				   strerror(errno));
			return MUH_EENV;
		}
		if (fd >= 0)
			close(fd);
	}
	muh_store *st = calloc(1, sizeof(*st));
	if (!st)
		return MUH_ENOMEM;
	if (sqlite3_open_v2(path, &st->db, SQLITE_OPEN_READWRITE | (fs ? SQLITE_OPEN_CREATE : 0),
			    store_vfs_name()) !=
	    SQLITE_OK) {
		store_diag(d, path, "cannot open the store: %s", st->db ? sqlite3_errmsg(st->db) : "out of memory");
		return open_failed(st, path, fs, MUH_EENV, d);
	}
	sqlite3_busy_timeout(st->db, 10000);
	int empty = 1, rc = MUH_OK;
	/* recognise it before writing a byte: a foreign file stays as it was */
	if (!fs)
		rc = store_check(st, path, &empty, d);
	if (!rc && sqlite3_db_readonly(st->db, "main") == 1) {
		store_diag(d, path, "cannot write the store: it is read-only (reading commands open it "
			   "read-only)");
		rc = MUH_EENV;
	}
	if (!rc) {
		/* a second writer creating the same new store at once may hold the
		 * lock that switching to WAL needs; the busy handler covers most */
		for (int i = 0; i < 200; i++) {
			rc = exec(st, "PRAGMA journal_mode=WAL", d);
			if (!rc || sqlite3_errcode(st->db) != SQLITE_BUSY)
				break;
			usleep(20000);
		}
	}
	if (!rc)
		rc = exec(st, "PRAGMA synchronous=NORMAL; PRAGMA foreign_keys=ON;", d);
	if (!rc && empty) {
		/* a new store: its tables and meta in one transaction, and the
		 * check again inside it (another process may have made a store, or
		 * something else, since) */
		rc = exec(st, "BEGIN IMMEDIATE", d);
		int e2 = 1;
		if (!rc)
			rc = store_check(st, path, &e2, d);
		if (!rc)
			rc = exec(st, schema, d);
		if (!rc)
			rc = exec(st, claims_schema, d);
		if (!rc)
			rc = exec(st, "INSERT OR IGNORE INTO meta VALUES('schema_version','" STORE_SCHEMA_VERSION "');"
				      "INSERT OR IGNORE INTO meta VALUES('created_by','muh " MUH_VERSION "');",
				  d);
		rc = rc ? (exec(st, "ROLLBACK", NULL), rc) : exec(st, "COMMIT", d);
		if (!rc)
			rc = store_check(st, path, &e2, d);
	}
	if (rc)
		return open_failed(st, path, fs, rc, d);
	*out = st;
	return MUH_OK;
}

/* "file:" URI of path (RFC 3986 escapes for what SQLite would read as URI
 * syntax) with the query q. malloc'd. */
static char *file_uri(const char *path, const char *q)
{
	size_t n = strlen(path);
	char *u = malloc(n * 3 + strlen(q) + 16);
	if (!u)
		return NULL;
	size_t o = (size_t)sprintf(u, path[0] == '/' ? "file://" : "file:");
	for (const unsigned char *p = (const unsigned char *)path; *p; p++) {
		if (*p == '%' || *p == '?' || *p == '#' || *p <= ' ' || *p >= 0x7f)
			o += (size_t)sprintf(u + o, "%%%02X", *p);
		else
			u[o++] = (char)*p;
	}
	sprintf(u + o, "%s", q);
	return u;
}

int store_open_ro(const char *path, muh_store **out, muh_diag *d)
{
	*out = NULL;
	int fs = file_state(path, d);
	if (fs) { /* missing, empty, a folder, not SQLite: the file named is at fault */
		if (fs > 0)
			store_diag(d, path, "%s", fs == 1 ? "no such store" : "not a muh store (an empty file)");
		return MUH_EINPUT;
	}
	/* A store without a -wal beside it holds every commit in the file
	 * itself (the last writer to close folds its WAL in and removes it; a
	 * live writer always has one), so it is read as it is: immutable, no
	 * -wal or -shm made beside it, the file untouched. With a -wal (a writer
	 * at work, or killed), its commits are read through it, which needs the
	 * -shm file: without a writable directory to make that in, the file is
	 * read as it is too (the -wal's commits are then not seen). A
	 * -journal beside it (another program's rollback-mode writer died) is
	 * left to SQLite's normal read-only open, which refuses to read past it. */
	/* SQLite follows a symbolic link: its -wal lies beside the target */
	char real[PATH_MAX], wal[PATH_MAX + 16], jr[PATH_MAX + 16];
	const char *at = realpath(path, real) ? real : path;
	int wl = snprintf(wal, sizeof(wal), "%s-wal", at);
	int jl = snprintf(jr, sizeof(jr), "%s-journal", at); /* a hot rollback journal: not as it is either */
	int nowal = wl > 0 && (size_t)wl < sizeof(wal) && jl > 0 && (size_t)jl < sizeof(jr) &&
		    access(wal, F_OK) != 0 && errno == ENOENT && access(jr, F_OK) != 0 && errno == ENOENT;
	char dir[PATH_MAX];
	snprintf(dir, sizeof(dir), "%s", at);
	char *slash = strrchr(dir, '/');
	if (!slash)
		snprintf(dir, sizeof(dir), ".");
	else if (slash == dir)
		dir[1] = '\0';
	else
		*slash = '\0';
	int immutable = nowal || access(dir, W_OK) != 0;
	char *uri = file_uri(path, immutable ? "?mode=ro&immutable=1" : "?mode=ro");
	muh_store *st = calloc(1, sizeof(*st));
	if (!uri || !st) {
		free(uri);
		free(st);
		return MUH_ENOMEM;
	}
	st->readonly = 1;
	int rc = sqlite3_open_v2(uri, &st->db, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI, store_vfs_name());
	free(uri);
	if (rc != SQLITE_OK) {
		store_diag(d, path, "cannot open the store: %s", st->db ? sqlite3_errmsg(st->db) : "out of memory");
		return open_failed(st, path, fs, MUH_EENV, d);
	}
	sqlite3_busy_timeout(st->db, 10000);
	int empty = 0;
	rc = store_check(st, path, &empty, d);
	if (!rc && empty) {
		store_diag(d, path, "not a muh store (an SQLite database without tables)");
		rc = MUH_EINPUT;
	}
	if (rc)
		return open_failed(st, path, fs, rc, d);
	*out = st;
	return MUH_OK;
}

void store_close(muh_store *st)
{
	store_free(st);
}

void store_spec_hash(const char *text, size_t len, char *buf)
{
	snprintf(buf, 17, "%016llx", (unsigned long long)eval_hash(text, len, EVAL_HASH_INIT));
}

/* Binds t as it is (SQLITE_STATIC): t stays valid until the statement is
 * finalized, as every caller binds, steps and finalizes in one scope. A
 * copy (SQLITE_TRANSIENT) could fail for memory and leave the parameter
 * NULL, unsaid: a lookup of NULL finds nothing, and a resumed run was
 * begun anew (tests/unit/test_alloc.c). */
static void bind_text(sqlite3_stmt *s, int i, const char *t)
{
	if (t)
		sqlite3_bind_text(s, i, t, -1, SQLITE_STATIC);
	else
		sqlite3_bind_null(s, i);
}

static void bind_num(sqlite3_stmt *s, int i, double v)
{
	if (isfinite(v))
		sqlite3_bind_double(s, i, v);
	else
		sqlite3_bind_null(s, i);
}

int store_find_run(muh_store *st, const char *spec_hash, int64_t instance, const char *backend,
		   const char *hw_profile, int64_t *run, muh_diag *d)
{
	*run = 0;
	sqlite3_stmt *s;
	const char *sql = "SELECT id FROM runs WHERE spec_hash=?1 AND instance=?2"
			  " AND (?3 IS NULL OR backend=?3) AND (?4 IS NULL OR hw_profile=?4)"
			  " ORDER BY id DESC LIMIT 1";
	if (sqlite3_prepare_v2(st->db, sql, -1, &s, NULL) != SQLITE_OK)
		return sql_fail(st, d, "find run");
	bind_text(s, 1, spec_hash);
	sqlite3_bind_int64(s, 2, instance);
	bind_text(s, 3, backend);
	bind_text(s, 4, hw_profile);
	int rc = sqlite3_step(s);
	if (rc == SQLITE_ROW)
		*run = sqlite3_column_int64(s, 0);
	else if (rc != SQLITE_DONE) /* unread is not "none": a caller would begin another run */
		rc = sql_fail(st, d, "find run");
	sqlite3_finalize(s);
	return rc == SQLITE_ROW || rc == SQLITE_DONE ? MUH_OK : MUH_EENV;
}

int store_find_run_named(muh_store *st, const char *spec_name, int64_t instance, const char *problem,
			 int64_t *run, char *path, size_t n, muh_diag *d)
{
	*run = 0;
	if (n)
		path[0] = '\0';
	sqlite3_stmt *s;
	const char *sql = "SELECT id, spec_path FROM runs WHERE spec_name=?1 AND instance=?2"
			  " AND (?3 IS NULL OR COALESCE(problem, '')=?3) ORDER BY id DESC LIMIT 1";
	if (sqlite3_prepare_v2(st->db, sql, -1, &s, NULL) != SQLITE_OK)
		return sql_fail(st, d, "find run");
	bind_text(s, 1, spec_name);
	sqlite3_bind_int64(s, 2, instance);
	bind_text(s, 3, problem);
	int rc = sqlite3_step(s);
	if (rc == SQLITE_ROW) {
		*run = sqlite3_column_int64(s, 0);
		const unsigned char *p = sqlite3_column_text(s, 1);
		if (n)
			snprintf(path, n, "%s", p ? (const char *)p : "");
	} else if (rc != SQLITE_DONE) { /* unread is not "none" */
		rc = sql_fail(st, d, "find run");
	}
	sqlite3_finalize(s);
	return rc == SQLITE_ROW || rc == SQLITE_DONE ? MUH_OK : MUH_EENV;
}

int store_begin_run(muh_store *st, const store_run_info *ri, int fresh, int64_t *run, int *resumed,
		    muh_diag *d)
{
	*run = 0;
	if (resumed)
		*resumed = 0;
	const char *hw = ri->hw_profile ? ri->hw_profile : "";
	if (store_upgrade(st, d) || exec(st, "BEGIN IMMEDIATE", d))
		return MUH_EENV;
	sqlite3_stmt *s = NULL;
	int rc = MUH_OK;
	if (fresh) {
		const char *del = "DELETE FROM measurements WHERE run_id IN (SELECT id FROM runs WHERE"
				  " spec_hash=?1 AND instance=?2 AND backend=?3 AND hw_profile=?4);"
				  "";
		static const char del_retimes[] =
			"DELETE FROM retimes WHERE run_id IN (SELECT id FROM runs WHERE"
			" spec_hash=?1 AND instance=?2 AND backend=?3 AND hw_profile=?4)";
		static const char del_decisions[] =
			"DELETE FROM decisions WHERE run_id IN (SELECT id FROM runs WHERE"
			" spec_hash=?1 AND instance=?2 AND backend=?3 AND hw_profile=?4)";
		for (int pass = 0; pass < 4 && !rc; pass++) {
			const char *sql = pass == 0 ? del
					  : pass == 1 ? del_retimes
					  : pass == 2 ? del_decisions
						      : "DELETE FROM runs WHERE spec_hash=?1 AND instance=?2"
							" AND backend=?3 AND hw_profile=?4";
			if (sqlite3_prepare_v2(st->db, sql, -1, &s, NULL) != SQLITE_OK) {
				rc = sql_fail(st, d, "fresh");
				break;
			}
			bind_text(s, 1, ri->spec_hash);
			sqlite3_bind_int64(s, 2, ri->instance);
			bind_text(s, 3, ri->backend);
			bind_text(s, 4, hw);
			if (sqlite3_step(s) != SQLITE_DONE)
				rc = sql_fail(st, d, "fresh");
			sqlite3_finalize(s);
		}
	}
	char abs[PATH_MAX] = "";
	if (ri->spec_path && !realpath(ri->spec_path, abs))
		abs[0] = '\0';
	if (!rc && !fresh) {
		rc = store_find_run(st, ri->spec_hash, ri->instance, ri->backend, hw, run, d);
		if (!rc && *run && resumed)
			*resumed = 1;
		/* a run of an earlier muh gets the spec's text; a moved spec, its
		 * new place */
		if (!rc && *run &&
		    sqlite3_prepare_v2(st->db, "UPDATE runs SET spec_text=COALESCE(spec_text, ?2),"
				       " spec_abs=COALESCE(?3, spec_abs) WHERE id=?1", -1, &s, NULL) == SQLITE_OK) {
			sqlite3_bind_int64(s, 1, *run);
			bind_text(s, 2, ri->spec_text);
			bind_text(s, 3, abs[0] ? abs : NULL);
			if (sqlite3_step(s) != SQLITE_DONE)
				rc = sql_fail(st, d, "resume run");
			sqlite3_finalize(s);
		}
	}
	if (!rc && !*run) {
		char host[256] = "";
		gethostname(host, sizeof(host) - 1);
		const char *sql = "INSERT INTO runs(spec_hash, spec_path, spec_name, instance, problem, backend,"
				  " hw_profile, tool_version, host, created_ms, updated_ms, spec_text, spec_abs)"
				  " VALUES(?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?10,?11,?12)";
		if (sqlite3_prepare_v2(st->db, sql, -1, &s, NULL) != SQLITE_OK) {
			rc = sql_fail(st, d, "new run");
		} else {
			bind_text(s, 1, ri->spec_hash);
			bind_text(s, 2, ri->spec_path);
			bind_text(s, 3, ri->spec_name);
			sqlite3_bind_int64(s, 4, ri->instance);
			bind_text(s, 5, ri->problem);
			bind_text(s, 6, ri->backend);
			bind_text(s, 7, hw);
			bind_text(s, 8, ri->tool_version ? ri->tool_version : "muh " MUH_VERSION);
			bind_text(s, 9, host);
			sqlite3_bind_int64(s, 10, now_ms());
			bind_text(s, 11, ri->spec_text);
			bind_text(s, 12, abs[0] ? abs : NULL);
			if (sqlite3_step(s) != SQLITE_DONE)
				rc = sql_fail(st, d, "new run");
			else
				*run = sqlite3_last_insert_rowid(st->db);
			sqlite3_finalize(s);
		}
	}
	if (rc) {
		exec(st, "ROLLBACK", NULL);
		*run = 0;
		return rc;
	}
	return exec(st, "COMMIT", d);
}

/* JSON object of v's params, with numbers as numbers. malloc'd; NULL when
 * out of memory (never an object that lacks a param). */
static char *config_json(const muh_variant *v)
{
	cJSON *o = cJSON_CreateObject();
	for (size_t i = 0; o && i < v->nparams; i++) {
		const muh_value *x = &v->values[i];
		cJSON *item = x->t == MUH_STR ? cJSON_CreateString(x->u.s)
			      : x->t == MUH_INT ? cJSON_CreateNumber((double)x->u.i)
						: cJSON_CreateNumber(x->u.f);
		if (!item || !cJSON_AddItemToObject(o, v->names[i], item)) {
			cJSON_Delete(item);
			cJSON_Delete(o);
			return NULL;
		}
	}
	char *s = o ? cJSON_PrintUnformatted(o) : NULL;
	cJSON_Delete(o);
	return s;
}

static char *samples_json(const muh_measurement *m)
{
	size_t cap = 3 + m->nsamples * 26, n = 0;
	char *s = malloc(cap);
	if (!s)
		return NULL;
	s[n++] = '[';
	for (size_t i = 0; i < m->nsamples; i++)
		n += (size_t)snprintf(s + n, cap - n, "%s%.9g", i ? "," : "", m->samples[i]);
	s[n++] = ']';
	s[n] = '\0';
	return s;
}

/* store_put and store_replace: one transaction; replace != 0 overwrites a
 * measurement the variant already has in run. */
static int put(muh_store *st, int64_t run, const muh_variant *v, const muh_measurement *m, int replace,
	       muh_diag *d)
{
	char *cfg = config_json(v), *smp = samples_json(m);
	if (!cfg || !smp) {
		free(cfg);
		free(smp);
		return MUH_ENOMEM;
	}
	int rc = store_upgrade(st, d);
	if (!rc)
		rc = exec(st, "BEGIN IMMEDIATE", d);
	sqlite3_stmt *s = NULL;
	int64_t vid = 0;
	int kept = 0;
	if (!rc) {
		const char *sql = "INSERT OR IGNORE INTO variants(spec_hash, key, config)"
				  " SELECT spec_hash, ?2, ?3 FROM runs WHERE id=?1";
		if (sqlite3_prepare_v2(st->db, sql, -1, &s, NULL) != SQLITE_OK) {
			rc = sql_fail(st, d, "put variant");
		} else {
			sqlite3_bind_int64(s, 1, run);
			bind_text(s, 2, v->key);
			bind_text(s, 3, cfg);
			if (sqlite3_step(s) != SQLITE_DONE)
				rc = sql_fail(st, d, "put variant");
			sqlite3_finalize(s);
		}
	}
	if (!rc) {
		const char *sql = "SELECT v.id FROM variants v JOIN runs r ON r.spec_hash=v.spec_hash"
				  " WHERE r.id=?1 AND v.key=?2";
		if (sqlite3_prepare_v2(st->db, sql, -1, &s, NULL) != SQLITE_OK) {
			rc = sql_fail(st, d, "variant id");
		} else {
			sqlite3_bind_int64(s, 1, run);
			bind_text(s, 2, v->key);
			if (sqlite3_step(s) == SQLITE_ROW)
				vid = sqlite3_column_int64(s, 0);
			else
				rc = sql_fail(st, d, "no such run");
			sqlite3_finalize(s);
		}
	}
	if (!rc) {
#define PUT_COLS                                                                                   \
	" INTO measurements(run_id, variant_id, status, samples, nsamples, median,"                   \
	" min, mad, ci_lo, ci_hi, warmups, fingerprint, fp_detail, error, max_abs_err, rel_l2_err,"   \
	" sm_clock_mhz, power_w, temp_c, t_build, t_verify, t_time, started_ms, finished_ms,"         \
	" metrics)"                                                                                   \
	" VALUES(?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11,?12,?13,?14,?15,?16,?17,?18,?19,?20,?21,?22,"    \
	"?23,?24,?25)"
		const char *sql = replace ? "INSERT OR REPLACE" PUT_COLS : "INSERT OR IGNORE" PUT_COLS;
		if (sqlite3_prepare_v2(st->db, sql, -1, &s, NULL) != SQLITE_OK) {
			rc = sql_fail(st, d, "put measurement");
		} else {
			sqlite3_bind_int64(s, 1, run);
			sqlite3_bind_int64(s, 2, vid);
			bind_text(s, 3, eval_status_name(m->status));
			bind_text(s, 4, smp);
			sqlite3_bind_int64(s, 5, (sqlite3_int64)m->nsamples);
			bind_num(s, 6, m->median);
			bind_num(s, 7, m->min);
			bind_num(s, 8, m->mad);
			bind_num(s, 9, m->ci_lo);
			bind_num(s, 10, m->ci_hi);
			sqlite3_bind_int(s, 11, m->warmups);
			bind_text(s, 12, m->fingerprint[0] ? m->fingerprint : NULL);
			bind_text(s, 13, m->fp_detail);
			bind_text(s, 14, m->error[0] ? m->error : NULL);
			bind_num(s, 15, m->max_abs_err);
			bind_num(s, 16, m->rel_l2_err);
			bind_num(s, 17, m->sm_clock_mhz);
			bind_num(s, 18, m->power_w);
			bind_num(s, 19, m->temp_c);
			bind_num(s, 20, m->t_build);
			bind_num(s, 21, m->t_verify);
			bind_num(s, 22, m->t_time);
			sqlite3_bind_int64(s, 23, m->started_ms);
			sqlite3_bind_int64(s, 24, m->finished_ms ? m->finished_ms : now_ms());
			bind_text(s, 25, m->metrics);
			if (sqlite3_step(s) != SQLITE_DONE)
				rc = sql_fail(st, d, "put measurement");
			else if (!replace && sqlite3_changes(st->db) == 0)
				kept = 1;
			sqlite3_finalize(s);
		}
	}
	if (!rc) {
		if (sqlite3_prepare_v2(st->db, "UPDATE runs SET updated_ms=?2 WHERE id=?1", -1, &s, NULL) ==
		    SQLITE_OK) {
			sqlite3_bind_int64(s, 1, run);
			sqlite3_bind_int64(s, 2, now_ms());
			sqlite3_step(s);
			sqlite3_finalize(s);
		}
		rc = exec(st, "COMMIT", d);
	} else {
		exec(st, "ROLLBACK", NULL);
	}
	free(cfg);
	free(smp);
	if (!rc && kept) {
		if (d)
			snprintf(d->msg, sizeof(d->msg), "store: %.800s: another measurement of it is in the store "
				 "(another process's); that one is kept", v->key);
		return STORE_KEPT;
	}
	return rc;
}

int store_put(muh_store *st, int64_t run, const muh_variant *v, const muh_measurement *m, muh_diag *d)
{
	return put(st, run, v, m, 0, d);
}

int store_replace(muh_store *st, int64_t run, const muh_variant *v, const muh_measurement *m, muh_diag *d)
{
	return put(st, run, v, m, 1, d);
}

#define ROW_COLS                                                                                   \
	"m.run_id, r.spec_name, r.instance, v.key, v.config, m.status, m.samples, m.median, m.min,"  \
	" m.mad, m.ci_lo, m.ci_hi, m.warmups, m.fingerprint, m.fp_detail, m.error, m.max_abs_err,"   \
	" m.rel_l2_err, m.sm_clock_mhz, m.power_w, m.temp_c, m.t_build, m.t_verify, m.t_time,"       \
	" m.started_ms, m.finished_ms"
/* with the metrics column, or NULL in its place (a store written before it) */
#define ROW_COLS_M ROW_COLS ", m.metrics"
#define ROW_COLS_N ROW_COLS ", NULL"
#define ROW_FROM " FROM measurements m JOIN variants v ON v.id=m.variant_id JOIN runs r ON r.id=m.run_id"

static double col_num(sqlite3_stmt *s, int i)
{
	return sqlite3_column_type(s, i) == SQLITE_NULL ? NAN : sqlite3_column_double(s, i);
}

static const char *col_text(sqlite3_stmt *s, int i)
{
	const unsigned char *t = sqlite3_column_text(s, i);
	return t ? (const char *)t : NULL;
}

/* Fills m from a row selected with ROW_COLS. */
static int row_measurement(sqlite3_stmt *s, muh_measurement *m)
{
	measurement_init(m);
	enum eval_status stt;
	if (eval_status_parse(col_text(s, 5), &stt))
		stt = EVAL_INVALID;
	m->status = stt;
	const char *smp = col_text(s, 6);
	cJSON *arr = smp ? cJSON_Parse(smp) : NULL;
	int n = cJSON_IsArray(arr) ? cJSON_GetArraySize(arr) : 0;
	if (n > 0 && (m->samples = malloc((size_t)n * sizeof(double)))) {
		const cJSON *x;
		cJSON_ArrayForEach(x, arr) m->samples[m->nsamples++] = x->valuedouble;
	}
	cJSON_Delete(arr);
	m->median = col_num(s, 7);
	m->min = col_num(s, 8);
	m->mad = col_num(s, 9);
	m->ci_lo = col_num(s, 10);
	m->ci_hi = col_num(s, 11);
	m->warmups = sqlite3_column_int(s, 12);
	const char *fp = col_text(s, 13), *fd = col_text(s, 14), *er = col_text(s, 15);
	if (fp)
		snprintf(m->fingerprint, sizeof(m->fingerprint), "%s", fp);
	if (fd)
		m->fp_detail = strdup(fd);
	if (er)
		snprintf(m->error, sizeof(m->error), "%s", er);
	m->max_abs_err = col_num(s, 16);
	m->rel_l2_err = col_num(s, 17);
	m->sm_clock_mhz = col_num(s, 18);
	m->power_w = col_num(s, 19);
	m->temp_c = col_num(s, 20);
	m->t_build = col_num(s, 21);
	m->t_verify = col_num(s, 22);
	m->t_time = col_num(s, 23);
	m->started_ms = sqlite3_column_int64(s, 24);
	m->finished_ms = sqlite3_column_int64(s, 25);
	const char *mx = col_text(s, 26);
	if (mx)
		m->metrics = strdup(mx);
	return MUH_OK;
}

int store_has(muh_store *st, int64_t run, const char *key)
{
	sqlite3_stmt *s;
	if (sqlite3_prepare_v2(st->db,
			       "SELECT 1 FROM measurements m JOIN variants v ON v.id=m.variant_id"
			       " WHERE m.run_id=?1 AND v.key=?2",
			       -1, &s, NULL) != SQLITE_OK)
		return -1;
	sqlite3_bind_int64(s, 1, run);
	bind_text(s, 2, key);
	int rc = sqlite3_step(s);
	sqlite3_finalize(s);
	return rc == SQLITE_ROW ? 1 : rc == SQLITE_DONE ? 0 : -1;
}

int store_get(muh_store *st, int64_t run, const char *key, muh_measurement *m)
{
	sqlite3_stmt *s;
	measurement_init(m);
	if (sqlite3_prepare_v2(st->db, st->has_metrics ? "SELECT " ROW_COLS_M ROW_FROM " WHERE m.run_id=?1 AND v.key=?2"
			       : "SELECT " ROW_COLS_N ROW_FROM " WHERE m.run_id=?1 AND v.key=?2", -1, &s,
			       NULL) != SQLITE_OK)
		return -1;
	sqlite3_bind_int64(s, 1, run);
	bind_text(s, 2, key);
	int found = sqlite3_step(s) == SQLITE_ROW;
	if (found)
		row_measurement(s, m);
	sqlite3_finalize(s);
	return found;
}

int64_t store_count(muh_store *st, int64_t run)
{
	sqlite3_stmt *s;
	if (sqlite3_prepare_v2(st->db, "SELECT count(*) FROM measurements WHERE run_id=?1", -1, &s, NULL) !=
	    SQLITE_OK)
		return -1;
	sqlite3_bind_int64(s, 1, run);
	int64_t n = sqlite3_step(s) == SQLITE_ROW ? sqlite3_column_int64(s, 0) : -1;
	sqlite3_finalize(s);
	return n;
}

int store_raise_noise(muh_store *st, int64_t run, double noise)
{
	if (!isfinite(noise)) /* no timing: the held noise stays (SQL's max of NULL is NULL) */
		return MUH_OK;
	sqlite3_stmt *s;
	if (sqlite3_prepare_v2(st->db, "UPDATE runs SET noise=max(coalesce(noise, ?2), ?2) WHERE id=?1", -1, &s,
			       NULL) != SQLITE_OK)
		return MUH_EENV;
	sqlite3_bind_int64(s, 1, run);
	bind_num(s, 2, noise);
	int rc = sqlite3_step(s) == SQLITE_DONE ? MUH_OK : MUH_EENV;
	sqlite3_finalize(s);
	return rc;
}

/* The caller's callback of one of the store_foreach* functions, and its
 * user data: what a row decoder of step_rows hands each row to. */
struct each_cb {
	void *ud;
	union {
		int (*row)(void *ud, const store_row *row);
		int (*retime)(void *ud, const store_retime *row);
		int (*decision)(void *ud, const store_decision *row);
		int (*run)(void *ud, const store_run *run);
	} cb;
};

/* Steps the prepared query s through its rows, handing each to decode
 * (which builds the row and calls the callback in e) until one returns
 * nonzero, and finalizes s. Returns that value, 0 at the end of the rows,
 * or MUH_EENV when a step fails (a read error, a corrupt page, is not the
 * end of the rows). */
static int step_rows(sqlite3_stmt *s, int (*decode)(sqlite3_stmt *s, const struct each_cb *e),
		     const struct each_cb *e)
{
	int rc = 0, sr = SQLITE_DONE;
	while (!rc && (sr = sqlite3_step(s)) == SQLITE_ROW)
		rc = decode(s, e);
	if (!rc && sr != SQLITE_DONE)
		rc = MUH_EENV;
	sqlite3_finalize(s);
	return rc;
}

static int decode_row(sqlite3_stmt *s, const struct each_cb *e)
{
	muh_measurement m;
	row_measurement(s, &m);
	store_row row = {
		.run_id = sqlite3_column_int64(s, 0),
		.spec_name = col_text(s, 1),
		.instance = sqlite3_column_int64(s, 2),
		.key = col_text(s, 3),
		.config = col_text(s, 4),
		.m = &m,
	};
	int rc = e->cb.row(e->ud, &row);
	measurement_free(&m);
	return rc;
}

int store_foreach(muh_store *st, int64_t run, int (*cb)(void *ud, const store_row *row), void *ud)
{
	sqlite3_stmt *s;
	if (sqlite3_prepare_v2(st->db, st->has_metrics ? "SELECT " ROW_COLS_M ROW_FROM " WHERE (?1 = 0 OR m.run_id=?1) ORDER BY m.id"
			       : "SELECT " ROW_COLS_N ROW_FROM " WHERE (?1 = 0 OR m.run_id=?1) ORDER BY m.id",
			       -1, &s, NULL) != SQLITE_OK)
		return -1;
	sqlite3_bind_int64(s, 1, run);
	struct each_cb e = {ud, {.row = cb}};
	return step_rows(s, decode_row, &e);
}

/* ---- the re-timing at sustained clocks --------------------------------- */

int store_set_retimes(muh_store *st, int64_t run, const store_retime *rows, size_t n, muh_diag *d)
{
	if (store_upgrade(st, d) || exec(st, "BEGIN IMMEDIATE", d))
		return MUH_EENV;
	sqlite3_stmt *s = NULL;
	int rc = MUH_OK;
	if (sqlite3_prepare_v2(st->db, "DELETE FROM retimes WHERE run_id=?1", -1, &s, NULL) != SQLITE_OK)
		rc = sql_fail(st, d, "retimes");
	if (!rc) {
		sqlite3_bind_int64(s, 1, run);
		if (sqlite3_step(s) != SQLITE_DONE)
			rc = sql_fail(st, d, "retimes");
	}
	sqlite3_finalize(s);
	s = NULL;
	if (!rc && sqlite3_prepare_v2(st->db, "INSERT OR REPLACE INTO retimes(run_id, key, burst_rank, burst_s,"
				      " burst_mhz, sustained_s, sustained_mhz, warm_s, finished_ms)"
				      " VALUES(?1,?2,?3,?4,?5,?6,?7,?8,?9)", -1, &s, NULL) != SQLITE_OK)
		rc = sql_fail(st, d, "retimes");
	for (size_t i = 0; i < n && !rc; i++) {
		sqlite3_reset(s);
		sqlite3_bind_int64(s, 1, run);
		bind_text(s, 2, rows[i].key);
		sqlite3_bind_int(s, 3, rows[i].burst_rank);
		bind_num(s, 4, rows[i].burst_s);
		bind_num(s, 5, rows[i].burst_mhz);
		bind_num(s, 6, rows[i].sustained_s);
		bind_num(s, 7, rows[i].sustained_mhz);
		bind_num(s, 8, rows[i].warm_s);
		sqlite3_bind_int64(s, 9, now_ms());
		if (sqlite3_step(s) != SQLITE_DONE)
			rc = sql_fail(st, d, "retimes");
	}
	sqlite3_finalize(s);
	return rc ? (exec(st, "ROLLBACK", NULL), rc) : exec(st, "COMMIT", d);
}

static int decode_retime(sqlite3_stmt *s, const struct each_cb *e)
{
	store_retime r = {
		.key = col_text(s, 0),
		.burst_rank = sqlite3_column_int(s, 1),
		.burst_s = col_num(s, 2),
		.burst_mhz = col_num(s, 3),
		.sustained_s = col_num(s, 4),
		.sustained_mhz = col_num(s, 5),
		.warm_s = col_num(s, 6),
	};
	return e->cb.retime(e->ud, &r);
}

int store_foreach_retime(muh_store *st, int64_t run, int (*cb)(void *ud, const store_retime *row), void *ud)
{
	if (!st->has_retimes)
		return 0;
	sqlite3_stmt *s;
	if (sqlite3_prepare_v2(st->db, "SELECT key, burst_rank, burst_s, burst_mhz, sustained_s, sustained_mhz,"
			       " warm_s FROM retimes WHERE run_id=?1 ORDER BY burst_rank, key", -1, &s, NULL) != SQLITE_OK)
		return MUH_EENV;
	sqlite3_bind_int64(s, 1, run);
	struct each_cb e = {ud, {.retime = cb}};
	return step_rows(s, decode_retime, &e);
}

/* ---- the decision's paired re-deployments ------------------------------ */

int store_add_decision(muh_store *st, int64_t run, const store_decision *row, muh_diag *d)
{
	if (store_upgrade(st, d) || exec(st, "BEGIN IMMEDIATE", d))
		return MUH_EENV;
	sqlite3_stmt *s = NULL;
	int rc = MUH_OK;
	if (sqlite3_prepare_v2(st->db, "INSERT OR REPLACE INTO decisions(run_id, round, pos, key, role, status,"
				      " score, slo_met, why, metrics, level, finished_ms) VALUES(?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11,?12)",
			       -1, &s, NULL) != SQLITE_OK)
		rc = sql_fail(st, d, "decisions");
	if (!rc) {
		sqlite3_bind_int64(s, 1, run);
		sqlite3_bind_int(s, 2, row->round);
		sqlite3_bind_int(s, 3, row->pos);
		bind_text(s, 4, row->key);
		sqlite3_bind_int(s, 5, row->role);
		bind_text(s, 6, row->status ? row->status : "ok");
		bind_num(s, 7, row->score);
		sqlite3_bind_int(s, 8, row->slo_met);
		bind_text(s, 9, row->why);
		bind_text(s, 10, row->metrics);
		bind_num(s, 11, row->level);
		sqlite3_bind_int64(s, 12, now_ms());
		if (sqlite3_step(s) != SQLITE_DONE)
			rc = sql_fail(st, d, "decisions");
	}
	sqlite3_finalize(s);
	return rc ? (exec(st, "ROLLBACK", NULL), rc) : exec(st, "COMMIT", d);
}

int store_clear_decisions(muh_store *st, int64_t run, muh_diag *d)
{
	if (!st->has_decisions)
		return MUH_OK;
	sqlite3_stmt *s = NULL;
	int rc = MUH_OK;
	if (sqlite3_prepare_v2(st->db, "DELETE FROM decisions WHERE run_id=?1", -1, &s, NULL) != SQLITE_OK)
		return sql_fail(st, d, "decisions");
	sqlite3_bind_int64(s, 1, run);
	if (sqlite3_step(s) != SQLITE_DONE)
		rc = sql_fail(st, d, "decisions");
	sqlite3_finalize(s);
	return rc;
}

static int decode_decision(sqlite3_stmt *s, const struct each_cb *e)
{
	store_decision r = {
		.round = sqlite3_column_int(s, 0),
		.pos = sqlite3_column_int(s, 1),
		.key = col_text(s, 2),
		.role = sqlite3_column_int(s, 3),
		.status = col_text(s, 4),
		.score = col_num(s, 5),
		.slo_met = sqlite3_column_int(s, 6),
		.why = col_text(s, 7),
		.metrics = col_text(s, 8),
		.level = col_num(s, 9),
	};
	return e->cb.decision(e->ud, &r);
}

int store_foreach_decision(muh_store *st, int64_t run, int (*cb)(void *ud, const store_decision *row), void *ud)
{
	if (!st->has_decisions)
		return 0;
	sqlite3_stmt *s;
	if (sqlite3_prepare_v2(st->db, "SELECT round, pos, key, role, status, score, slo_met, why, metrics, level"
			       " FROM decisions WHERE run_id=?1 ORDER BY round, pos", -1, &s, NULL) != SQLITE_OK)
		return MUH_EENV;
	sqlite3_bind_int64(s, 1, run);
	struct each_cb e = {ud, {.decision = cb}};
	return step_rows(s, decode_decision, &e);
}

/* ---- export ------------------------------------------------------------ */

typedef struct export_ctx {
	FILE *f;
	enum store_format fmt;
	cJSON *results; /* json, t4 */
	char **params;  /* csv: param columns */
	size_t nparams;
	char **metrics; /* csv: a column per metric any row holds (TTFT, TPOT, goodput, ...) */
	size_t nmetrics;
	int header_done;
	const store_mark *best; /* each run's best (store_export) */
	size_t nbest;
} export_ctx;

/* The best key of run id among best[0..n), or NULL. */
static const char *mark_of(const store_mark *best, size_t n, int64_t id)
{
	for (size_t i = 0; i < n; i++)
		if (best[i].run == id)
			return best[i].key;
	return NULL;
}

/* 1 when row is its run's best (export_ctx.best). */
static int row_is_best(const export_ctx *x, const store_row *row)
{
	const char *k = mark_of(x->best, x->nbest, row->run_id);
	return k && row->key && !strcmp(k, row->key);
}

/* The runs table as a JSON array (run == 0: all), each run with its
 * "best" key from best[0..nbest) (null when it has none). */
static cJSON *runs_json(muh_store *st, int64_t run, const store_mark *best, size_t nbest)
{
	cJSON *arr = cJSON_CreateArray();
	sqlite3_stmt *s;
	if (sqlite3_prepare_v2(st->db,
			       "SELECT id, spec_hash, spec_path, spec_name, instance, problem, backend, hw_profile,"
			       " tool_version, host, noise, created_ms, updated_ms FROM runs"
			       " WHERE ?1 = 0 OR id = ?1 ORDER BY id",
			       -1, &s, NULL) != SQLITE_OK)
		return arr;
	sqlite3_bind_int64(s, 1, run);
	static const char *const names[] = {"id", "spec_hash", "spec_path", "spec_name", "instance",
					    "problem", "backend", "hw_profile", "tool_version", "host",
					    "noise", "created_ms", "updated_ms"};
	while (sqlite3_step(s) == SQLITE_ROW) {
		cJSON *o = cJSON_CreateObject();
		for (int i = 0; i < 13; i++) {
			int t = sqlite3_column_type(s, i);
			if (t == SQLITE_NULL)
				cJSON_AddNullToObject(o, names[i]);
			else if (t == SQLITE_INTEGER || t == SQLITE_FLOAT)
				cJSON_AddNumberToObject(o, names[i], sqlite3_column_double(s, i));
			else
				cJSON_AddStringToObject(o, names[i], col_text(s, i));
		}
		const char *bk = mark_of(best, nbest, sqlite3_column_int64(s, 0));
		if (bk)
			cJSON_AddStringToObject(o, "best", bk);
		else
			cJSON_AddNullToObject(o, "best");
		cJSON_AddItemToArray(arr, o);
	}
	sqlite3_finalize(s);
	return arr;
}

static const char *t4_invalidity(enum eval_status s)
{
	switch (s) {
	case EVAL_OK:
		return "correct";
	case EVAL_INVALID:
		return "constraints";
	case EVAL_COMPILE_ERROR:
		return "compile";
	case EVAL_WRONG_RESULT:
		return "correctness";
	case EVAL_TIMEOUT:
		return "timeout";
	default:
		return "runtime";
	}
}

static void csv_field(FILE *f, const char *s)
{
	if (!s)
		return;
	if (!strpbrk(s, ",\"\n\r")) {
		fputs(s, f);
		return;
	}
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"')
			fputc('"', f);
		fputc(*s, f);
	}
	fputc('"', f);
}

static void csv_num(FILE *f, double v)
{
	if (isfinite(v))
		fprintf(f, "%.9g", v);
}

static int collect_params(void *ud, const store_row *row)
{
	export_ctx *x = ud;
	cJSON *c = row->config ? cJSON_Parse(row->config) : NULL;
	const cJSON *it;
	cJSON_ArrayForEach(it, c)
	{
		size_t i;
		for (i = 0; i < x->nparams; i++)
			if (!strcmp(x->params[i], it->string))
				break;
		if (i == x->nparams) {
			char **np = realloc(x->params, (x->nparams + 1) * sizeof(char *));
			if (!np)
				break;
			x->params = np;
			x->params[x->nparams++] = strdup(it->string);
		}
	}
	cJSON_Delete(c);
	/* the metrics a row holds (measurements.metrics): each a column, in
	 * the order first seen; a number, or a bool such as usage_checked */
	cJSON *mx = row->m->metrics ? cJSON_Parse(row->m->metrics) : NULL;
	cJSON_ArrayForEach(it, mx)
	{
		if (!(cJSON_IsNumber(it) || cJSON_IsBool(it)) || !it->string)
			continue;
		size_t i;
		for (i = 0; i < x->nmetrics; i++)
			if (!strcmp(x->metrics[i], it->string))
				break;
		if (i == x->nmetrics) {
			char **nm = realloc(x->metrics, (x->nmetrics + 1) * sizeof(char *));
			char *name = strdup(it->string);
			if (!nm || !name) {
				free(name);
				if (nm)
					x->metrics = nm;
				cJSON_Delete(mx);
				return -1;
			}
			x->metrics = nm;
			x->metrics[x->nmetrics++] = name;
		}
	}
	cJSON_Delete(mx);
	return 0;
}

static void iso_time(int64_t ms, char *buf, size_t n)
{
	time_t t = (time_t)(ms / 1000);
	struct tm tm;
	gmtime_r(&t, &tm);
	size_t k = strftime(buf, n, "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(buf + k, n - k, ".%03dZ", (int)(ms % 1000));
}

static int export_row(void *ud, const store_row *row)
{
	export_ctx *x = ud;
	const muh_measurement *m = row->m;
	if (x->fmt == STORE_CSV) {
		FILE *f = x->f;
		if (!x->header_done) {
			fputs("run,spec,instance,key", f);
			for (size_t i = 0; i < x->nparams; i++) {
				fputc(',', f);
				csv_field(f, x->params[i]);
			}
			fputs(",status,best,median_s,min_s,mad_s,ci_lo_s,ci_hi_s,nsamples,fingerprint,max_abs_err,"
			      "rel_l2_err,sm_clock_mhz,power_w,temp_c,t_build_s,finished_ms",
			      f);
			for (size_t i = 0; i < x->nmetrics; i++) {
				fputc(',', f);
				csv_field(f, x->metrics[i]);
			}
			fputs(",error\n", f);
			x->header_done = 1;
		}
		fprintf(f, "%lld,", (long long)row->run_id);
		csv_field(f, row->spec_name);
		fprintf(f, ",%lld,", (long long)row->instance);
		csv_field(f, row->key);
		cJSON *c = row->config ? cJSON_Parse(row->config) : NULL;
		for (size_t i = 0; i < x->nparams; i++) {
			fputc(',', f);
			const cJSON *it = cJSON_GetObjectItemCaseSensitive(c, x->params[i]);
			if (cJSON_IsNumber(it))
				fprintf(f, "%.17g", it->valuedouble);
			else if (cJSON_IsString(it))
				csv_field(f, it->valuestring);
		}
		cJSON_Delete(c);
		fprintf(f, ",%s,%d,", eval_status_name(m->status), row_is_best(x, row));
		double nums[] = {m->median, m->min, m->mad, m->ci_lo, m->ci_hi};
		for (size_t i = 0; i < 5; i++) {
			csv_num(f, nums[i]);
			fputc(',', f);
		}
		fprintf(f, "%zu,%s,", m->nsamples, m->fingerprint);
		double more[] = {m->max_abs_err, m->rel_l2_err, m->sm_clock_mhz, m->power_w, m->temp_c, m->t_build};
		for (size_t i = 0; i < 6; i++) {
			csv_num(f, more[i]);
			fputc(',', f);
		}
		fprintf(f, "%lld,", (long long)m->finished_ms);
		cJSON *mx = x->nmetrics && m->metrics ? cJSON_Parse(m->metrics) : NULL;
		for (size_t i = 0; i < x->nmetrics; i++) {
			const cJSON *it = cJSON_GetObjectItemCaseSensitive(mx, x->metrics[i]);
			if (cJSON_IsNumber(it))
				csv_num(f, it->valuedouble);
			else if (cJSON_IsBool(it)) /* 1 or 0, as best */
				fputc(cJSON_IsTrue(it) ? '1' : '0', f);
			fputc(',', f);
		}
		cJSON_Delete(mx);
		csv_field(f, m->error);
		fputc('\n', f);
		return ferror(f) ? -1 : 0;
	}
	cJSON *o = cJSON_CreateObject();
	cJSON *cfg = row->config ? cJSON_Parse(row->config) : NULL;
	if (!cfg)
		cfg = cJSON_CreateObject();
	if (x->fmt == STORE_JSON) {
		char *mj = measurement_to_json(m);
		cJSON *mo = mj ? cJSON_Parse(mj) : cJSON_CreateObject();
		free(mj);
		cJSON_AddNumberToObject(o, "run", (double)row->run_id);
		cJSON_AddStringToObject(o, "spec", row->spec_name ? row->spec_name : "");
		cJSON_AddNumberToObject(o, "instance", (double)row->instance);
		cJSON_AddStringToObject(o, "key", row->key);
		cJSON_AddItemToObject(o, "configuration", cfg);
		cJSON_AddItemToObject(o, "measurement", mo);
		cJSON_AddBoolToObject(o, "best", row_is_best(x, row));
	} else {
		char ts[64];
		iso_time(m->finished_ms, ts, sizeof(ts));
		cJSON_AddStringToObject(o, "timestamp", ts);
		cJSON_AddItemToObject(o, "configuration", cfg);
		cJSON *times = cJSON_AddObjectToObject(o, "times");
		json_add_finite(times, "compilation_time", m->t_build * 1e3);
		json_add_finite(times, "benchmark", m->t_time * 1e3);
		json_add_finite(times, "validation", m->t_verify * 1e3);
		cJSON *rt = cJSON_AddArrayToObject(times, "runtimes");
		for (size_t i = 0; i < m->nsamples; i++)
			cJSON_AddItemToArray(rt, cJSON_CreateNumber(m->samples[i] * 1e3));
		cJSON_AddStringToObject(o, "invalidity", t4_invalidity(m->status));
		cJSON_AddNumberToObject(o, "correctness", m->status == EVAL_WRONG_RESULT ? 0 : 1);
		cJSON *ms = cJSON_AddArrayToObject(o, "measurements");
		struct {
			const char *name;
			double v;
			const char *unit;
		} mm[] = {
			{"time", m->median * 1e3, "ms"},     {"time_min", m->min * 1e3, "ms"},
			{"time_mad", m->mad * 1e3, "ms"},    {"time_ci_lo", m->ci_lo * 1e3, "ms"},
			{"time_ci_hi", m->ci_hi * 1e3, "ms"}, {"sm_clock", m->sm_clock_mhz, "MHz"},
			{"power", m->power_w, "W"},          {"temperature", m->temp_c, "C"},
		};
		for (size_t i = 0; i < sizeof(mm) / sizeof(mm[0]); i++) {
			if (!isfinite(mm[i].v))
				continue;
			cJSON *e = cJSON_CreateObject();
			cJSON_AddStringToObject(e, "name", mm[i].name);
			cJSON_AddNumberToObject(e, "value", mm[i].v);
			cJSON_AddStringToObject(e, "unit", mm[i].unit);
			cJSON_AddItemToArray(ms, e);
		}
		cJSON *mx = m->metrics ? cJSON_Parse(m->metrics) : NULL;
		const cJSON *it;
		cJSON_ArrayForEach(it, mx)
		{
			if (!cJSON_IsNumber(it) || !it->string)
				continue;
			cJSON *e = cJSON_CreateObject();
			cJSON_AddStringToObject(e, "name", it->string);
			cJSON_AddNumberToObject(e, "value", it->valuedouble);
			cJSON_AddStringToObject(e, "unit", objective_metric_unit(it->string));
			cJSON_AddItemToArray(ms, e);
		}
		cJSON_Delete(mx);
		if (m->fingerprint[0]) {
			cJSON *e = cJSON_CreateObject();
			cJSON_AddStringToObject(e, "name", "fingerprint");
			cJSON_AddStringToObject(e, "value", m->fingerprint);
			cJSON_AddStringToObject(e, "unit", "");
			cJSON_AddItemToArray(ms, e);
		}
		cJSON *obj = cJSON_AddArrayToObject(o, "objectives");
		cJSON_AddItemToArray(obj, cJSON_CreateString("time"));
	}
	cJSON_AddItemToArray(x->results, o);
	return 0;
}

int store_export(muh_store *st, FILE *f, enum store_format fmt, int64_t run, const store_mark *best,
		 size_t nbest, muh_diag *d)
{
	export_ctx x = {.f = f, .fmt = fmt, .best = best, .nbest = nbest};
	int rc;
	if (fmt == STORE_CSV) {
		rc = store_foreach(st, run, collect_params, &x);
		if (!rc)
			rc = store_foreach(st, run, export_row, &x);
		if (!rc && !x.header_done)
			fputs("run,spec,instance,key,status,best,median_s\n", f);
		for (size_t i = 0; i < x.nparams; i++)
			free(x.params[i]);
		free(x.params);
		for (size_t i = 0; i < x.nmetrics; i++)
			free(x.metrics[i]);
		free(x.metrics);
	} else {
		cJSON *root = cJSON_CreateObject();
		if (fmt == STORE_T4) {
			cJSON_AddStringToObject(root, "schema_version", "1.0.0");
			cJSON *meta = cJSON_AddObjectToObject(root, "metadata");
			cJSON_AddStringToObject(meta, "timeunit", "milliseconds");
			cJSON_AddStringToObject(meta, "tool", "muh " MUH_VERSION);
			cJSON_AddItemToObject(meta, "runs", runs_json(st, run, best, nbest));
		} else {
			cJSON_AddStringToObject(root, "tool", "muh " MUH_VERSION);
			cJSON_AddItemToObject(root, "runs", runs_json(st, run, best, nbest));
		}
		x.results = cJSON_AddArrayToObject(root, fmt == STORE_T4 ? "results" : "measurements");
		rc = store_foreach(st, run, export_row, &x);
		char *s = cJSON_Print(root);
		cJSON_Delete(root);
		if (!s)
			return MUH_ENOMEM;
		fputs(s, f);
		fputc('\n', f);
		free(s);
	}
	if (rc) {
		if (d)
			snprintf(d->msg, sizeof(d->msg), "export failed: %s", sqlite3_errmsg(st->db));
		return MUH_EENV;
	}
	return ferror(f) ? MUH_EENV : MUH_OK;
}

static int decode_run(sqlite3_stmt *s, const struct each_cb *e)
{
	store_run r = {
		.id = sqlite3_column_int64(s, 0),
		.spec_hash = col_text(s, 1),
		.spec_path = col_text(s, 2),
		.spec_name = col_text(s, 3),
		.problem = col_text(s, 4),
		.backend = col_text(s, 5),
		.hw_profile = col_text(s, 6),
		.instance = sqlite3_column_int64(s, 7),
		.noise = col_num(s, 8),
		.nmeasurements = sqlite3_column_int64(s, 9),
		.spec_text = col_text(s, 10),
		.spec_abs = col_text(s, 11),
	};
	return e->cb.run(e->ud, &r);
}

/* The columns decode_run reads, from "runs r"; the spec's text and path
 * are NULL in a store from before they were kept. */
#define RUN_COLS                                                                                           \
	"SELECT r.id, r.spec_hash, r.spec_path, r.spec_name, r.problem, r.backend, r.hw_profile, r.instance, " \
	"r.noise, (SELECT COUNT(*) FROM measurements m WHERE m.run_id = r.id), "
#define RUN_SPEC    "r.spec_text, r.spec_abs FROM runs r"
#define RUN_NO_SPEC "NULL, NULL FROM runs r"

int store_foreach_run(muh_store *st, int (*cb)(void *ud, const store_run *run), void *ud)
{
	sqlite3_stmt *s;
	const char *sql = st->has_spec ? RUN_COLS RUN_SPEC " ORDER BY r.id" : RUN_COLS RUN_NO_SPEC " ORDER BY r.id";
	if (sqlite3_prepare_v2(st->db, sql, -1, &s, NULL) != SQLITE_OK)
		return MUH_EENV;
	struct each_cb e = {ud, {.run = cb}};
	return step_rows(s, decode_run, &e);
}

int store_with_run(muh_store *st, int64_t id, int (*cb)(void *ud, const store_run *run), void *ud)
{
	sqlite3_stmt *s;
	const char *sql = st->has_spec ? RUN_COLS RUN_SPEC " WHERE r.id = ?1" : RUN_COLS RUN_NO_SPEC " WHERE r.id = ?1";
	if (sqlite3_prepare_v2(st->db, sql, -1, &s, NULL) != SQLITE_OK)
		return MUH_EENV;
	sqlite3_bind_int64(s, 1, id);
	int sr = sqlite3_step(s), rc;
	if (sr == SQLITE_ROW) {
		struct each_cb e = {ud, {.run = cb}};
		rc = cb ? decode_run(s, &e) : MUH_OK;
	} else {
		rc = sr == SQLITE_DONE ? MUH_EINPUT : MUH_EENV;
	}
	sqlite3_finalize(s);
	return rc;
}

int store_run_spec(const store_run *r, muh_spec **out, muh_diag *d)
{
	*out = NULL;
	const char *path = r->spec_abs && *r->spec_abs ? r->spec_abs : r->spec_path;
	if (r->spec_text)
		return spec_parse(path ? path : "(stored spec)", r->spec_text, strlen(r->spec_text), out, d);
	if (!path || !*path) {
		if (d)
			snprintf(d->msg, sizeof(d->msg), "run %lld: the store holds no spec path", (long long)r->id);
		return MUH_EINPUT;
	}
	if (r->spec_abs && *r->spec_abs && access(r->spec_abs, R_OK) == 0)
		return spec_load(r->spec_abs, out, d);
	return spec_load(r->spec_path ? r->spec_path : path, out, d);
}

/* ---- claims ------------------------------------------------------------ */

/* 1 when pid on this host is alive (or cannot be told apart from alive). */
static int pid_alive(int64_t pid)
{
	if (pid <= 0 || pid > INT_MAX)
		return 0;
	return kill((pid_t)pid, 0) == 0 || errno == EPERM;
}

int store_claim(muh_store *st, int64_t run, const char *key, muh_diag *d)
{
	if (store_upgrade(st, d) || exec(st, "BEGIN IMMEDIATE", d))
		return -1;
	char host[256] = "";
	gethostname(host, sizeof(host) - 1);
	int res = -1, h = store_has(st, run, key);
	sqlite3_stmt *s;
	if (h == 1) {
		res = 0;
	} else if (h == 0 && sqlite3_prepare_v2(st->db, "SELECT pid, host, started_ms FROM claims WHERE run_id=?1"
						" AND key=?2", -1, &s, NULL) == SQLITE_OK) {
		sqlite3_bind_int64(s, 1, run);
		bind_text(s, 2, key);
		res = 1;
		if (sqlite3_step(s) == SQLITE_ROW) {
			int64_t pid = sqlite3_column_int64(s, 0);
			const char *ch = col_text(s, 1);
			int64_t age = now_ms() - sqlite3_column_int64(s, 2);
			int here = ch && !strcmp(ch, host);
			/* a live claim of another process holds; a dead pid's claim
			 * (killed) is taken over, and so is another host's after a day */
			if (pid != (int64_t)getpid() || !here)
				res = here ? !pid_alive(pid) : age > STORE_CLAIM_REMOTE_MS;
		}
		sqlite3_finalize(s);
	}
	if (res == 1 && sqlite3_prepare_v2(st->db, "INSERT OR REPLACE INTO claims(run_id, key, pid, host,"
					    " started_ms) VALUES(?1,?2,?3,?4,?5)", -1, &s, NULL) == SQLITE_OK) {
		sqlite3_bind_int64(s, 1, run);
		bind_text(s, 2, key);
		sqlite3_bind_int64(s, 3, (int64_t)getpid());
		bind_text(s, 4, host);
		sqlite3_bind_int64(s, 5, now_ms());
		if (sqlite3_step(s) != SQLITE_DONE)
			res = -1;
		sqlite3_finalize(s);
	} else if (res == 1) {
		res = -1;
	}
	if (res < 0) {
		sql_fail(st, d, "claim");
		exec(st, "ROLLBACK", NULL);
		return -1;
	}
	return exec(st, "COMMIT", d) ? -1 : res;
}

int store_release(muh_store *st, int64_t run, const char *key)
{
	sqlite3_stmt *s;
	if (!st->has_claims)
		return MUH_OK;
	if (sqlite3_prepare_v2(st->db, "DELETE FROM claims WHERE run_id=?1 AND key=?2 AND pid=?3", -1, &s,
			       NULL) != SQLITE_OK)
		return MUH_EENV;
	sqlite3_bind_int64(s, 1, run);
	bind_text(s, 2, key);
	sqlite3_bind_int64(s, 3, (int64_t)getpid());
	int rc = sqlite3_step(s) == SQLITE_DONE ? MUH_OK : MUH_EENV;
	sqlite3_finalize(s);
	return rc;
}

int store_claim_or_get(muh_store *st, int64_t run, const char *key, muh_measurement *m, muh_diag *d,
		       volatile sig_atomic_t *stop)
{
	measurement_init(m);
	for (;;) {
		int c = store_claim(st, run, key, d);
		if (c != 0)
			return c;
		/* measured, or being measured by a live process: wait for its row */
		if (store_get(st, run, key, m) == 1)
			return 0;
		measurement_free(m);
		measurement_init(m);
		if (stop && *stop) {
			if (d)
				snprintf(d->msg, sizeof(d->msg), "store: interrupted while another process measured %.800s",
					 key);
			return -1;
		}
		usleep(50000);
	}
}
