/*
 * test_store.c — the store: resume, fresh, exports, kill -9 at random
 * points (no finished row lost or duplicated), and the faults of issue 17:
 * foreign files left byte-identical, a newer schema refused, read-only
 * opens, claims between two processes, store_put's STORE_KEPT, and the
 * spec's text kept in the run.
 */
#include <fcntl.h>
#include <math.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "muh/eval.h"
#include "muh/muh.h"
#include "muh/store.h"
#include "unit_store.h"

static char dbpath[512];

static void fresh_db(const char *name)
{
	snprintf(dbpath, sizeof(dbpath), "%s/%s", MUH_BINARY_DIR, name);
	unit_rm_store(dbpath);
}

static void make_variant(muh_variant *v, int i)
{
	const char *names[2] = {"BLOCK", "N"};
	muh_value vals[2] = {value_int(i), value_int(256)};
	char key[32];
	snprintf(key, sizeof(key), "BLOCK=%d", i);
	assert_int_equal(eval_variant_make(v, key, 1, 1, names, vals), MUH_OK);
}

static void make_measurement(muh_measurement *m, int i)
{
	measurement_init(m);
	m->status = i % 5 == 3 ? EVAL_CRASH : EVAL_OK;
	if (m->status == EVAL_OK) {
		m->nsamples = 3;
		m->samples = malloc(3 * sizeof(double));
		for (int k = 0; k < 3; k++)
			m->samples[k] = 1e-3 * (1 + i) + 1e-6 * k;
		m->median = m->samples[1];
		m->min = m->samples[0];
		m->ci_lo = m->samples[0];
		m->ci_hi = m->samples[2];
		m->mad = 1e-6;
	} else {
		snprintf(m->error, sizeof(m->error), "SIGSEGV, \"quoted\", in step time");
	}
	snprintf(m->fingerprint, sizeof(m->fingerprint), "%016x", i * 7919);
	m->started_ms = 1700000000000LL + i;
	m->finished_ms = m->started_ms + 5;
}

static store_run_info info = {
	.spec_hash = "00000000deadbeef", .spec_name = "matmul", .backend = "cpu", .hw_profile = "test"};

static void test_resume_and_fresh(void **st)
{
	(void)st;
	fresh_db("test_store.db");
	muh_store *s;
	muh_diag d;
	diag_clear(&d);
	assert_int_equal(store_open(dbpath, &s, &d), MUH_OK);
	int64_t run;
	int resumed;
	assert_int_equal(store_begin_run(s, &info, 0, &run, &resumed, &d), MUH_OK);
	assert_int_equal(resumed, 0);
	for (int i = 0; i < 5; i++) {
		muh_variant v;
		muh_measurement m;
		make_variant(&v, i);
		make_measurement(&m, i);
		assert_int_equal(store_put(s, run, &v, &m, &d), MUH_OK);
		assert_int_equal(store_put(s, run, &v, &m, &d), STORE_KEPT); /* duplicate: kept, said so */
		measurement_free(&m);
		eval_variant_free(&v);
	}
	assert_int_equal(store_count(s, run), 5);
	store_close(s);

	assert_int_equal(store_open(dbpath, &s, &d), MUH_OK);
	int64_t run2;
	assert_int_equal(store_begin_run(s, &info, 0, &run2, &resumed, &d), MUH_OK);
	assert_int_equal(resumed, 1);
	assert_int_equal(run2, run);
	assert_int_equal(store_has(s, run, "BLOCK=2"), 1);
	assert_int_equal(store_has(s, run, "BLOCK=9"), 0);
	muh_measurement m;
	assert_int_equal(store_get(s, run, "BLOCK=2", &m), 1);
	assert_int_equal(m.status, EVAL_OK);
	assert_int_equal(m.nsamples, 3);
	assert_true(fabs(m.median - 3.001e-3) < 1e-12);
	measurement_free(&m);
	assert_int_equal(store_get(s, run, "BLOCK=3", &m), 1);
	assert_int_equal(m.status, EVAL_CRASH);
	assert_true(isnan(m.median));
	measurement_free(&m);
	int64_t found;
	assert_int_equal(store_find_run(s, info.spec_hash, 0, NULL, NULL, &found, &d), MUH_OK);
	assert_int_equal(found, run);

	/* exports */
	char out[600];
	snprintf(out, sizeof(out), "%s/test_store.csv", MUH_BINARY_DIR);
	FILE *f = fopen(out, "w");
	assert_int_equal(store_export(s, f, STORE_CSV, 0, NULL, 0, &d), MUH_OK);
	fclose(f);
	f = fopen(out, "r");
	char line[2048];
	int lines = 0;
	assert_non_null(fgets(line, sizeof(line), f));
	assert_non_null(strstr(line, "key,BLOCK,status,best,median_s"));
	while (fgets(line, sizeof(line), f))
		lines++;
	fclose(f);
	assert_int_equal(lines, 5);
	snprintf(out, sizeof(out), "%s/test_store.t4.json", MUH_BINARY_DIR);
	f = fopen(out, "w");
	assert_int_equal(store_export(s, f, STORE_T4, run, NULL, 0, &d), MUH_OK);
	fclose(f);

	/* fresh: starts over */
	assert_int_equal(store_begin_run(s, &info, 1, &run2, &resumed, &d), MUH_OK);
	assert_int_equal(resumed, 0);
	assert_true(run2 != run);
	assert_int_equal(store_count(s, run2), 0);
	assert_int_equal(store_count(s, run), 0);
	store_close(s);
}

#define KILL_VARIANTS 150

/* The victim: resumes the run and measures what is not finished. Logs
 * "S i" before and "D i" after each committed measurement. */
static void victim(const char *log)
{
	int fd = open(log, O_WRONLY | O_APPEND | O_CREAT, 0644);
	muh_store *s;
	muh_diag d;
	if (store_open(dbpath, &s, &d))
		_exit(2);
	int64_t run;
	int resumed;
	if (store_begin_run(s, &info, 0, &run, &resumed, &d))
		_exit(3);
	for (int i = 0; i < KILL_VARIANTS; i++) {
		char key[32];
		snprintf(key, sizeof(key), "BLOCK=%d", i);
		int has = store_has(s, run, key);
		if (has < 0)
			_exit(4);
		if (has)
			continue;
		char line[32];
		int n = snprintf(line, sizeof(line), "S %d\n", i);
		if (write(fd, line, (size_t)n) < 0)
			_exit(5);
		usleep(200 + (unsigned)(rand() % 1500)); /* "the evaluation" */
		muh_variant v;
		muh_measurement m;
		make_variant(&v, i);
		make_measurement(&m, i);
		if (store_put(s, run, &v, &m, &d))
			_exit(6);
		n = snprintf(line, sizeof(line), "D %d\n", i);
		if (write(fd, line, (size_t)n) < 0)
			_exit(5);
		measurement_free(&m);
		eval_variant_free(&v);
	}
	store_close(s);
	close(fd);
	_exit(0);
}

static void test_kill9(void **st)
{
	(void)st;
	fresh_db("test_kill9.db");
	char log[600];
	snprintf(log, sizeof(log), "%s/test_kill9.log", MUH_BINARY_DIR);
	unlink(log);
	srand((unsigned)time(NULL));
	int kills = 0, completed = 0;
	for (int round = 0; round < 200 && !completed; round++) {
		pid_t pid = fork();
		assert_true(pid >= 0);
		if (pid == 0) {
			srand((unsigned)getpid());
			victim(log);
		}
		usleep((unsigned)(rand() % 12000));
		int status;
		if (round < 60 && kill(pid, SIGKILL) == 0)
			kills++;
		waitpid(pid, &status, 0);
		if (WIFEXITED(status)) {
			assert_int_equal(WEXITSTATUS(status), 0);
			completed = 1;
		}
	}
	assert_true(completed);
	assert_true(kills >= 30);
	/* every "D i" is in the store exactly once; every variant measured */
	int done[KILL_VARIANTS] = {0}, started[KILL_VARIANTS] = {0};
	FILE *f = fopen(log, "r");
	char c;
	int i;
	while (fscanf(f, " %c %d", &c, &i) == 2) {
		assert_true(i >= 0 && i < KILL_VARIANTS);
		if (c == 'D')
			done[i]++;
		else
			started[i]++;
	}
	fclose(f);
	muh_store *s;
	muh_diag d;
	assert_int_equal(store_open(dbpath, &s, &d), MUH_OK);
	int64_t run;
	int resumed;
	assert_int_equal(store_begin_run(s, &info, 0, &run, &resumed, &d), MUH_OK);
	assert_int_equal(store_count(s, run), KILL_VARIANTS);
	int restarted = 0;
	for (i = 0; i < KILL_VARIANTS; i++) {
		char key[32];
		snprintf(key, sizeof(key), "BLOCK=%d", i);
		assert_int_equal(store_has(s, run, key), 1);
		assert_true(done[i] <= 1); /* a finished variant is never measured again */
		restarted += started[i] > 1;
		muh_measurement m;
		assert_int_equal(store_get(s, run, key, &m), 1);
		muh_measurement want;
		make_measurement(&want, i);
		assert_int_equal(m.status, want.status);
		assert_int_equal(m.nsamples, want.nsamples);
		assert_string_equal(m.fingerprint, want.fingerprint);
		measurement_free(&m);
		measurement_free(&want);
	}
	fprintf(stderr, "kill -9: %d kills, %d variants lost in flight and redone, 0 lost, 0 duplicated\n",
		kills, restarted);
	store_close(s);
}

static void test_not_a_store(void **st)
{
	(void)st;
	char p[600];
	snprintf(p, sizeof(p), "%s/not-a-store.db", MUH_BINARY_DIR);
	FILE *f = fopen(p, "w");
	fputs("this is not sqlite, not at all, just text that is long enough to be a header......\n", f);
	fclose(f);
	muh_store *s;
	muh_diag d;
	diag_clear(&d);
	assert_int_equal(store_open(p, &s, &d), MUH_EINPUT);
	assert_non_null(strstr(d.msg, "not a muh store"));
	assert_string_equal(d.file, p); /* the diag's file, printed "PATH: error: ..." */
}

/* The bytes of file p (malloc'd), its size in *n. */
static char *slurp(const char *p, size_t *n)
{
	FILE *f = fopen(p, "rb");
	assert_non_null(f);
	fseek(f, 0, SEEK_END);
	long sz = ftell(f);
	rewind(f);
	char *b = malloc((size_t)sz + 1);
	assert_int_equal(fread(b, 1, (size_t)sz, f), (size_t)sz);
	fclose(f);
	*n = (size_t)sz;
	return b;
}

static void sql(const char *path, const char *stmt)
{
	char cmd[2048];
	snprintf(cmd, sizeof(cmd), "sqlite3 '%s' \"%s\"", path, stmt);
	assert_int_equal(system(cmd), 0);
}

/* dbpath opened as a store, with the run of info begun (*run). */
static muh_store *open_run(int64_t *run)
{
	muh_store *s;
	muh_diag d;
	diag_clear(&d);
	assert_int_equal(store_open(dbpath, &s, &d), MUH_OK);
	assert_int_equal(store_begin_run(s, &info, 0, run, NULL, &d), MUH_OK);
	return s;
}

/* A store with one run of two measurements, closed. */
static void make_store(void)
{
	muh_diag d;
	diag_clear(&d);
	int64_t run;
	muh_store *s = open_run(&run);
	for (int i = 0; i < 2; i++) {
		muh_variant v;
		muh_measurement m;
		make_variant(&v, i);
		make_measurement(&m, i);
		assert_int_equal(store_put(s, run, &v, &m, &d), MUH_OK);
		measurement_free(&m);
		eval_variant_free(&v);
	}
	store_close(s);
}

static void test_foreign_untouched(void **st)
{
	(void)st;
	fresh_db("foreign.db");
	sql(dbpath, "CREATE TABLE notes(body TEXT); INSERT INTO notes VALUES('x');");
	size_t n0, n1;
	char *before = slurp(dbpath, &n0);
	muh_store *s = NULL;
	muh_diag d;
	diag_clear(&d);
	assert_int_equal(store_open(dbpath, &s, &d), MUH_EINPUT);
	assert_null(s);
	assert_non_null(strstr(d.msg, "not a muh store"));
	/* the store is the diag's file, not a word of its message */
	assert_string_equal(d.file, dbpath);
	assert_null(strstr(d.msg, dbpath));
	assert_int_equal(store_open_ro(dbpath, &s, &d), MUH_EINPUT);
	char *after = slurp(dbpath, &n1);
	assert_int_equal(n0, n1);
	assert_memory_equal(before, after, n0); /* no tables, no WAL header */
	free(before);
	free(after);
}

static void test_empty_and_missing(void **st)
{
	(void)st;
	fresh_db("empty.db");
	muh_store *s = NULL;
	muh_diag d;
	diag_clear(&d);
	/* readers refuse a missing and an empty file, and make neither */
	assert_int_equal(store_open_ro(dbpath, &s, &d), MUH_EINPUT);
	assert_string_equal(d.msg, "no such store");
	assert_string_equal(d.file, dbpath);
	assert_int_equal(access(dbpath, F_OK), -1);
	close(open(dbpath, O_CREAT | O_WRONLY, 0644));
	assert_int_equal(store_open_ro(dbpath, &s, &d), MUH_EINPUT);
	assert_string_equal(d.msg, "not a muh store (an empty file)");
	assert_string_equal(d.file, dbpath);
	struct stat sb;
	assert_int_equal(stat(dbpath, &sb), 0);
	assert_int_equal(sb.st_size, 0);
	/* a writer makes a store in it */
	assert_int_equal(store_open(dbpath, &s, &d), MUH_OK);
	store_close(s);
	assert_int_equal(store_open_ro(dbpath, &s, &d), MUH_OK);
	store_close(s);
}

static void test_future_and_corrupt(void **st)
{
	(void)st;
	fresh_db("future.db");
	make_store();
	sql(dbpath, "UPDATE meta SET value='99' WHERE key='schema_version'");
	size_t n0, n1;
	char *before = slurp(dbpath, &n0);
	muh_store *s = NULL;
	muh_diag d;
	diag_clear(&d);
	assert_int_equal(store_open(dbpath, &s, &d), MUH_EENV);
	assert_non_null(strstr(d.msg, "schema version 99"));
	assert_string_equal(d.file, dbpath);
	assert_int_equal(store_open_ro(dbpath, &s, &d), MUH_EENV);
	char *after = slurp(dbpath, &n1);
	assert_int_equal(n0, n1);
	assert_memory_equal(before, after, n0);
	free(before);
	free(after);

	fresh_db("corrupt.db");
	make_store();
	/* the measurements table's root page (page 5 of 4096 bytes): garbage */
	int fd = open(dbpath, O_WRONLY);
	char junk[512];
	memset(junk, 0x5a, sizeof(junk));
	assert_int_equal(pwrite(fd, junk, sizeof(junk), 4 * 4096), (ssize_t)sizeof(junk));
	close(fd);
	assert_int_equal(store_open_ro(dbpath, &s, &d), MUH_EENV);
	assert_non_null(strstr(d.msg, "corrupt"));
	assert_int_equal(store_open(dbpath, &s, &d), MUH_EENV);
}

static void test_readonly(void **st)
{
	(void)st;
	fresh_db("ro.db");
	make_store();
	size_t n0, n1;
	char *before = slurp(dbpath, &n0);
	chmod(dbpath, 0444);
	muh_store *s;
	muh_diag d;
	diag_clear(&d);
	assert_int_equal(store_open_ro(dbpath, &s, &d), MUH_OK);
	int64_t run;
	assert_int_equal(store_find_run(s, info.spec_hash, 0, NULL, NULL, &run, &d), MUH_OK);
	assert_true(run > 0);
	assert_int_equal(store_count(s, run), 2);
	assert_int_equal(store_has(s, run, "BLOCK=1"), 1);
	/* writes through it fail, and change nothing */
	muh_variant v;
	muh_measurement m;
	make_variant(&v, 7);
	make_measurement(&m, 7);
	assert_int_not_equal(store_put(s, run, &v, &m, &d), MUH_OK);
	measurement_free(&m);
	eval_variant_free(&v);
	store_close(s);
	char *after = slurp(dbpath, &n1);
	assert_int_equal(n0, n1);
	assert_memory_equal(before, after, n0);
	free(before);
	free(after);
	chmod(dbpath, 0644);
}

/* Claims: a live process's holds, a dead one's is taken over, a measured
 * variant cannot be claimed, and store_put says STORE_KEPT. */
static void test_claims(void **st)
{
	(void)st;
	fresh_db("claims.db");
	muh_store *s;
	muh_diag d;
	diag_clear(&d);
	assert_int_equal(store_open(dbpath, &s, &d), MUH_OK);
	int64_t run;
	assert_int_equal(store_begin_run(s, &info, 0, &run, NULL, &d), MUH_OK);
	int go[2], ready[2];
	assert_int_equal(pipe(go), 0);
	assert_int_equal(pipe(ready), 0);
	pid_t live = fork();
	if (live == 0) { /* a second muh: claims BLOCK=1, waits, exits */
		muh_store *c;
		muh_diag cd;
		char b;
		if (store_open(dbpath, &c, &cd) || store_claim(c, run, "BLOCK=1", &cd) != 1)
			_exit(1);
		if (write(ready[1], "r", 1) != 1 || read(go[0], &b, 1) != 1)
			_exit(1);
		store_close(c);
		_exit(0);
	}
	char b;
	assert_int_equal(read(ready[0], &b, 1), 1);
	assert_int_equal(store_claim(s, run, "BLOCK=1", &d), 0); /* live: theirs */
	assert_int_equal(store_claim(s, run, "BLOCK=2", &d), 1);
	assert_int_equal(store_claim(s, run, "BLOCK=2", &d), 1); /* ours already */
	assert_int_equal(write(go[1], "g", 1), 1);
	int status;
	assert_int_equal(waitpid(live, &status, 0), live);
	assert_int_equal(WEXITSTATUS(status), 0);
	/* it died without measuring or releasing: its claim is taken over */
	assert_int_equal(store_claim(s, run, "BLOCK=1", &d), 1);
	muh_variant v;
	muh_measurement m, got;
	make_variant(&v, 1);
	make_measurement(&m, 1);
	assert_int_equal(store_put(s, run, &v, &m, &d), MUH_OK);
	assert_int_equal(store_release(s, run, "BLOCK=1"), MUH_OK);
	assert_int_equal(store_claim(s, run, "BLOCK=1", &d), 0); /* measured */
	assert_int_equal(store_claim_or_get(s, run, "BLOCK=1", &got, &d, NULL), 0);
	assert_string_equal(got.fingerprint, m.fingerprint);
	measurement_free(&got);
	/* another process's row is there first: kept, and said so */
	muh_measurement other;
	make_measurement(&other, 2);
	assert_int_equal(store_put(s, run, &v, &other, &d), STORE_KEPT);
	assert_non_null(strstr(d.msg, "BLOCK=1"));
	assert_int_equal(store_get(s, run, "BLOCK=1", &got), 1);
	assert_string_equal(got.fingerprint, m.fingerprint);
	measurement_free(&got);
	measurement_free(&other);
	measurement_free(&m);
	eval_variant_free(&v);
	close(go[0]);
	close(go[1]);
	close(ready[0]);
	close(ready[1]);
	store_close(s);
}

/* store_foreach_run callback: the spec of the run that kept its text. */
static int spec_of_run_last(void *ud, const store_run *r)
{
	muh_spec **out = ud;
	muh_diag d;
	diag_clear(&d);
	if (!r->spec_text)
		return 0; /* the older store's run */
	assert_non_null(r->spec_abs);
	assert_true(r->spec_abs[0] == '/');
	assert_int_equal(store_run_spec(r, out, &d), MUH_OK);
	return 0;
}

/* The run keeps the spec's text and absolute path; an older store gets the
 * columns on its first write, never on a read. */
static void test_spec_text(void **st)
{
	(void)st;
	fresh_db("spectext.db");
	char spath[600];
	snprintf(spath, sizeof(spath), "%s/spectext.yaml", MUH_BINARY_DIR);
	const char *text = "name: kept\nparams:\n  B: [1, 2]\ndefaults: {B: 2}\n";
	FILE *f = fopen(spath, "w");
	fputs(text, f);
	fclose(f);
	/* an older store: runs without spec_text/spec_abs, no claims table */
	make_store();
	sql(dbpath, "CREATE TABLE r2 AS SELECT id, spec_hash, spec_path, spec_name, instance, problem, backend,"
		    " hw_profile, tool_version, host, noise, created_ms, updated_ms FROM runs;"
		    " DROP TABLE claims; DROP TABLE runs; ALTER TABLE r2 RENAME TO runs;");
	muh_store *s;
	muh_diag d;
	diag_clear(&d);
	size_t n0, n1;
	char *before = slurp(dbpath, &n0);
	assert_int_equal(store_open_ro(dbpath, &s, &d), MUH_OK);
	store_close(s);
	char *after = slurp(dbpath, &n1);
	assert_int_equal(n0, n1);
	assert_memory_equal(before, after, n0);
	free(before);
	free(after);
	store_run_info ri = info;
	ri.spec_hash = "00000000feedface";
	ri.spec_path = spath;
	ri.spec_text = text;
	assert_int_equal(store_open(dbpath, &s, &d), MUH_OK);
	int64_t run;
	assert_int_equal(store_begin_run(s, &ri, 0, &run, NULL, &d), MUH_OK);
	store_close(s);
	unlink(spath); /* the spec moved */
	assert_int_equal(store_open_ro(dbpath, &s, &d), MUH_OK);
	muh_spec *last = NULL;
	assert_true(run > 1);
	assert_int_equal(store_foreach_run(s, spec_of_run_last, &last), 0);
	assert_non_null(last);
	assert_string_equal(last->name, "kept");
	spec_free(last);
	store_close(s);
}

/* store_foreach_run callback: the noise of the run ud points at. */
static int noise_of(void *ud, const store_run *r)
{
	double *out = ud;
	*out = r->noise;
	return 0;
}

/* store_raise_noise keeps the largest noise any tune of the run timed: a
 * lower one changes nothing, a higher one takes its place, a non-finite
 * one changes nothing either. */
static void test_raise_noise(void **st)
{
	(void)st;
	fresh_db("noise.db");
	int64_t run;
	muh_store *s = open_run(&run);
	double n = -1;
	const double to[] = {0.05, 0.01, 0.2, NAN, 0.1}, want[] = {0.05, 0.05, 0.2, 0.2, 0.2};
	for (int i = 0; i < 5; i++) {
		assert_int_equal(store_raise_noise(s, run, to[i]), MUH_OK);
		assert_int_equal(store_foreach_run(s, noise_of, &n), 0);
		assert_true(n == want[i]);
	}
	store_close(s);
}

/* store_with_run callback: counts its calls and keeps the run's id and
 * spec hash; returns *ud's rc. */
struct seen_run {
	int calls, rc;
	int64_t id;
	char hash[64];
};
static int seen_run_cb(void *ud, const store_run *r)
{
	struct seen_run *w = ud;
	w->calls++;
	w->id = r->id;
	snprintf(w->hash, sizeof(w->hash), "%s", r->spec_hash ? r->spec_hash : "");
	return w->rc;
}

/* store_with_run calls its callback once, for the run of that id alone,
 * and returns what it returns; a missing id is MUH_EINPUT with no call; a
 * NULL callback only asks whether the run is there. The same on a store
 * from before the runs kept their spec's text. */
static void test_with_run(void **st)
{
	(void)st;
	fresh_db("withrun.db");
	muh_diag d;
	diag_clear(&d);
	int64_t r1, r2;
	muh_store *s = open_run(&r1);
	store_run_info ri = info;
	ri.spec_hash = "00000000feedface";
	assert_int_equal(store_begin_run(s, &ri, 0, &r2, NULL, &d), MUH_OK);
	assert_true(r1 != r2);
	store_close(s);
	for (int old = 0; old < 2; old++) {
		if (old)
			sql(dbpath, "CREATE TABLE r2 AS SELECT id, spec_hash, spec_path, spec_name, instance, problem,"
				    " backend, hw_profile, tool_version, host, noise, created_ms, updated_ms FROM runs;"
				    " DROP TABLE claims; DROP TABLE runs; ALTER TABLE r2 RENAME TO runs;");
		assert_int_equal(store_open_ro(dbpath, &s, &d), MUH_OK);
		struct seen_run w = {0};
		assert_int_equal(store_with_run(s, r2, seen_run_cb, &w), MUH_OK);
		assert_int_equal(w.calls, 1);
		assert_true(w.id == r2);
		assert_string_equal(w.hash, "00000000feedface");
		w = (struct seen_run){.rc = MUH_ENOMEM};
		assert_int_equal(store_with_run(s, r1, seen_run_cb, &w), MUH_ENOMEM);
		assert_int_equal(w.calls, 1);
		assert_true(w.id == r1);
		assert_string_equal(w.hash, info.spec_hash);
		w = (struct seen_run){0};
		assert_int_equal(store_with_run(s, r2 + 7, seen_run_cb, &w), MUH_EINPUT);
		assert_int_equal(w.calls, 0);
		assert_int_equal(store_with_run(s, r1, NULL, NULL), MUH_OK);
		assert_int_equal(store_with_run(s, 0, NULL, NULL), MUH_EINPUT);
		store_close(s);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_resume_and_fresh),
		cmocka_unit_test(test_raise_noise),
		cmocka_unit_test(test_kill9),
		cmocka_unit_test(test_not_a_store),
		cmocka_unit_test(test_foreign_untouched),
		cmocka_unit_test(test_empty_and_missing),
		cmocka_unit_test(test_future_and_corrupt),
		cmocka_unit_test(test_readonly),
		cmocka_unit_test(test_claims),
		cmocka_unit_test(test_spec_text),
		cmocka_unit_test(test_with_run),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
