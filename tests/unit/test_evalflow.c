/*
 * test_evalflow.c — `muh eval`'s workflow as a library call
 * (evalflow_run, evalflow.h), on the cpu backend's small matmul
 * (specs/matmul_cpu.yaml: BLOCK x UNROLL, BLOCK >= UNROLL, 0.5 s a variant
 * at most), measured live into a store in a temporary directory:
 *   - three --config keys (two valid, one breaking the constraint) are
 *     measured: three rows, two ok, one invalid; the best is the ok row
 *     with the smaller median; the rows, the table and the closing count
 *     reach the textout, and the stop hooks come in a pair;
 *   - a second run on the same store resumes: nothing measured again;
 *   - a wrong key (an unknown name, a value the param lacks) is refused
 *     before anything is timed, with the diag at --config:1:COL naming it;
 *     the same variant twice is refused with both keys named;
 *   - options that do not hold together (--all with keys, --interleave of
 *     one key) are a usage error, before the spec is read;
 *   - on_row stops after the first row; --interleave with --json writes
 *     its rows as JSON lines marked interleaved.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "muh/evalflow.h"
#include "muh/muh.h"

#define SPEC "specs/matmul_cpu.yaml"

static char dir[] = "/tmp/muh-test-evalflow-XXXXXX";
static char db[sizeof(dir) + 8];

/* What the run wrote, per stream, and what its hooks saw. */
typedef struct capture {
	char *text[3];
	size_t len[3];
	int begins, ends, rows;
	char keys[8][64];
	double medians[8];
	int stop_after; /* on_row: stop after this many rows (0: never) */
} capture;

static void cap_write(void *ctx, int stream, const char *text)
{
	capture *c = ctx;
	if (!text || stream < 1 || stream > 2)
		return;
	size_t n = strlen(text);
	char *t = realloc(c->text[stream], c->len[stream] + n + 1);
	assert_non_null(t);
	memcpy(t + c->len[stream], text, n + 1);
	c->text[stream] = t;
	c->len[stream] += n;
}

static void cap_measuring(void *ctx, const char *backend, int begin)
{
	capture *c = ctx;
	assert_string_equal(backend, "cpu");
	if (begin)
		c->begins++;
	else
		c->ends++;
}

static int cap_row(void *ctx, const session_result *r)
{
	capture *c = ctx;
	if (c->rows < 8) {
		snprintf(c->keys[c->rows], sizeof(c->keys[0]), "%s", r->key);
		c->medians[c->rows] = r->m && r->m->status == EVAL_OK ? r->m->median : NAN;
	}
	c->rows++;
	return c->stop_after && c->rows >= c->stop_after;
}

static void cap_free(capture *c)
{
	free(c->text[1]);
	free(c->text[2]);
}

static const char *stream(const capture *c, int s)
{
	return c->text[s] ? c->text[s] : "";
}

static evalflow_args args_for(capture *c, const char *const *keys, size_t nkeys)
{
	evalflow_args a = {.keys = keys,
	                   .nkeys = nkeys,
	                   .limit = -1,
	                   .noise = 0,
	                   .who = "muh eval",
	                   .out = {.write = cap_write, .ctx = c},
	                   .on_measuring = cap_measuring,
	                   .on_row = cap_row,
	                   .ctx = c};
	return a;
}

static int setup(void **state)
{
	(void)state;
	if (!mkdtemp(dir))
		return -1;
	snprintf(db, sizeof(db), "%s/m.db", dir);
	char cache[sizeof(dir) + 8];
	snprintf(cache, sizeof(cache), "%s/cache", dir);
	setenv("MUH_CACHE_DIR", cache, 1);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	char cmd[sizeof(dir) + 16];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return system(cmd) ? -1 : 0;
}

static void test_measures_and_resumes(void **state)
{
	(void)state;
	static const char *const keys[] = {"BLOCK=32,UNROLL=8", "BLOCK=16", "BLOCK=4,UNROLL=8"};
	muh_session_opts so = {.measure = 1, .db = db};
	capture c = {0};
	evalflow_args a = args_for(&c, keys, 3);
	evalflow_result r;
	enum evalflow_say say;
	muh_diag d;
	int rc = evalflow_run(SPEC, &so, &a, &r, &say, &d);
	if (rc)
		fail_msg("evalflow_run: %d (%s)", rc, d.msg);
	assert_int_equal(say, EVALFLOW_SAID);
	assert_int_equal(r.measured, 3);
	assert_int_equal(c.rows, 3);
	assert_int_equal(r.counts[EVAL_OK], 2);
	assert_int_equal(r.counts[EVAL_INVALID], 1);
	assert_false(r.resumed);
	assert_false(r.interrupted);
	assert_true(isnan(r.noise)); /* .noise = 0: not timed */
	assert_int_equal(c.begins, 1);
	assert_int_equal(c.ends, 1);
	/* the rows come in the keys' order, the partial key completed */
	assert_string_equal(c.keys[0], "BLOCK=32,UNROLL=8");
	assert_string_equal(c.keys[1], "BLOCK=16,UNROLL=1");
	assert_string_equal(c.keys[2], "BLOCK=4,UNROLL=8");
	assert_true(isnan(c.medians[2]));
	/* the best: the ok row with the smaller median */
	int b = c.medians[0] <= c.medians[1] ? 0 : 1;
	assert_string_equal(r.best_key, c.keys[b]);
	assert_true(r.best_median == c.medians[b]);
	/* the table and the closing lines on the textout */
	const char *out = stream(&c, TEXTOUT_RESULT), *err = stream(&c, TEXTOUT_NOTE);
	assert_non_null(strstr(out, "variant "));
	assert_non_null(strstr(out, "BLOCK=16,UNROLL=1 "));
	assert_non_null(strstr(out, "invalid"));
	assert_non_null(strstr(out, "best: "));
	assert_null(strstr(out, "noise: "));
	assert_non_null(strstr(err, "muh eval: 3 measured, 2 ok"));
	cap_free(&c);

	/* again on the same store: the run resumes and measures nothing */
	capture c2 = {0};
	a = args_for(&c2, keys, 3);
	rc = evalflow_run(SPEC, &so, &a, &r, &say, &d);
	if (rc)
		fail_msg("evalflow_run again: %d (%s)", rc, d.msg);
	assert_true(r.resumed);
	assert_int_equal(r.measured, 0);
	assert_int_equal(c2.rows, 0);
	assert_string_equal(r.best_key, "");
	assert_non_null(strstr(stream(&c2, TEXTOUT_NOTE), "muh eval: resuming run "));
	cap_free(&c2);
}

/* Runs the eval of keys, which must be refused before anything is timed:
 * returns the diag, having checked the status, how to say it, and that
 * nothing was measured. */
static muh_diag refused(const char *const *keys, size_t nkeys, int all, int interleave,
                        enum evalflow_say want)
{
	muh_session_opts so = {.measure = 1};
	capture c = {0};
	evalflow_args a = args_for(&c, keys, nkeys);
	a.all = all;
	a.interleave = interleave;
	evalflow_result r;
	enum evalflow_say say;
	muh_diag d;
	assert_int_equal(evalflow_run(SPEC, &so, &a, &r, &say, &d), MUH_EINPUT);
	assert_int_equal(say, want);
	assert_int_equal(r.measured, 0);
	assert_int_equal(c.rows + c.begins + c.ends, 0);
	assert_int_equal(c.len[TEXTOUT_RESULT], 0);
	cap_free(&c);
	return d;
}

static void test_bad_keys(void **state)
{
	(void)state;
	static const char *const unknown[] = {"BLOCK=32", "BLOKC=16"};
	muh_diag d = refused(unknown, 2, 0, 0, EVALFLOW_SAY_SESSION);
	assert_string_equal(d.file, "--config");
	assert_int_equal(d.line, 1);
	assert_int_equal(d.col, 1);
	assert_string_equal(d.src, "BLOKC=16");
	assert_non_null(strstr(d.msg, "BLOKC"));
	assert_non_null(strstr(d.msg, "BLOCK")); /* did you mean */

	static const char *const value[] = {"BLOCK=16,UNROLL=3"};
	d = refused(value, 1, 0, 0, EVALFLOW_SAY_SESSION);
	assert_string_equal(d.file, "--config");
	assert_int_equal(d.col, 17);
	assert_non_null(strstr(d.msg, "'3' is not a value of 'UNROLL'"));

	static const char *const twice[] = {"BLOCK=8", "BLOCK=8,UNROLL=1"};
	d = refused(twice, 2, 0, 0, EVALFLOW_SAY_SESSION);
	assert_string_equal(d.file, "");
	assert_string_equal(d.msg,
	                    "--config BLOCK=8 and --config BLOCK=8,UNROLL=1 are the same variant");
}

static void test_bad_args(void **state)
{
	(void)state;
	static const char *const keys[] = {"BLOCK=8"};
	muh_diag d = refused(keys, 1, 1, 0, EVALFLOW_SAY_USAGE);
	assert_string_equal(d.msg, "--all and --config exclude each other");
	d = refused(keys, 1, 0, 1, EVALFLOW_SAY_USAGE);
	assert_string_equal(d.msg, "--interleave needs 2 to 16 --config");
	evalflow_args a = {.keys = keys, .nkeys = 1, .limit = -1};
	assert_int_equal(evalflow_check(&a, &d), MUH_OK);
	a.interleave = 1;
	a.nkeys = 0;
	a.all = 1;
	assert_int_equal(evalflow_check(&a, &d), MUH_EINPUT);
	assert_non_null(strstr(d.msg, "not with --all or --limit"));
}

static void test_on_row_stops_and_interleave_json(void **state)
{
	(void)state;
	static const char *const keys[] = {"BLOCK=32,UNROLL=4", "BLOCK=64,UNROLL=2"};
	muh_session_opts so = {.measure = 1};
	capture c = {.stop_after = 1};
	evalflow_args a = args_for(&c, keys, 2);
	evalflow_result r;
	enum evalflow_say say;
	muh_diag d;
	int rc = evalflow_run(SPEC, &so, &a, &r, &say, &d);
	if (rc)
		fail_msg("evalflow_run: %d (%s)", rc, d.msg);
	assert_int_equal(r.measured, 1);
	assert_int_equal(c.rows, 1);
	cap_free(&c);

	capture j = {0};
	a = args_for(&j, keys, 2);
	a.interleave = 1;
	a.rounds = 3;
	a.json = 1;
	rc = evalflow_run(SPEC, &so, &a, &r, &say, &d);
	if (rc)
		fail_msg("evalflow_run --interleave: %d (%s)", rc, d.msg);
	assert_int_equal(r.measured, 2);
	assert_int_equal(r.counts[EVAL_OK], 2);
	assert_true(!strcmp(r.best_key, keys[0]) || !strcmp(r.best_key, keys[1]));
	/* stdout holds JSON lines only: the rows, then the comparison */
	const char *out = stream(&j, TEXTOUT_RESULT), *p = out;
	int lines = 0;
	for (; *p; lines++) {
		assert_int_equal(*p, '{');
		const char *nl = strchr(p, '\n');
		assert_non_null(nl);
		if (lines < 2)
			assert_non_null(strstr(p, "\"interleaved\":true"));
		p = nl + 1;
	}
	assert_int_equal(lines, 3);
	assert_non_null(strstr(out, "{\"event\":\"interleaved\""));
	assert_null(
	    strstr(stream(&j, TEXTOUT_NOTE), "measured,")); /* no closing count with --json */
	cap_free(&j);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_measures_and_resumes),
	    cmocka_unit_test(test_bad_keys),
	    cmocka_unit_test(test_bad_args),
	    cmocka_unit_test(test_on_row_stops_and_interleave_json),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
