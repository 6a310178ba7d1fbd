/*
 * test_store.c — the store: resume, fresh, exports, and kill -9 at random
 * points (no finished row lost or duplicated).
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
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "muh/eval.h"
#include "muh/muh.h"
#include "muh/store.h"

static char dbpath[512];

static void fresh_db(const char *name)
{
	snprintf(dbpath, sizeof(dbpath), "%s/%s", MUH_BINARY_DIR, name);
	char p[600];
	unlink(dbpath);
	snprintf(p, sizeof(p), "%s-wal", dbpath);
	unlink(p);
	snprintf(p, sizeof(p), "%s-shm", dbpath);
	unlink(p);
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
		assert_int_equal(store_put(s, run, &v, &m, &d), MUH_OK); /* duplicate: ignored */
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
	assert_int_equal(store_export(s, f, STORE_CSV, 0, &d), MUH_OK);
	fclose(f);
	f = fopen(out, "r");
	char line[2048];
	int lines = 0;
	assert_non_null(fgets(line, sizeof(line), f));
	assert_non_null(strstr(line, "key,BLOCK,status,median_s"));
	while (fgets(line, sizeof(line), f))
		lines++;
	fclose(f);
	assert_int_equal(lines, 5);
	snprintf(out, sizeof(out), "%s/test_store.t4.json", MUH_BINARY_DIR);
	f = fopen(out, "w");
	assert_int_equal(store_export(s, f, STORE_T4, run, &d), MUH_OK);
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
	assert_int_equal(store_open(p, &s, &d), MUH_EENV);
	assert_non_null(strstr(d.msg, "not a muh store"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_resume_and_fresh),
		cmocka_unit_test(test_kill9),
		cmocka_unit_test(test_not_a_store),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
