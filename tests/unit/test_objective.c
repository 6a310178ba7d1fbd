/*
 * test_objective.c — objectives and SLOs: read from a spec with errors at
 * file:line:col, scores that strategies minimize, feasibility, and metrics
 * kept through the store (including a store written before metrics).
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <sqlite3.h>

#include "muh/eval.h"
#include "muh/muh.h"
#include "muh/objective.h"
#include "muh/store.h"
#include "unit_store.h"

static const char *const metrics[] = {"output_tokens_per_s", "ttft_p99", "errors", NULL};

static int parse(const char *text, muh_objective *o, muh_diag *d)
{
	muh_spec *s;
	diag_clear(d);
	int rc = spec_parse("t.yaml", text, strlen(text), &s, d);
	assert_int_equal(rc, MUH_OK);
	rc = objective_from_spec(s, metrics, o, d);
	spec_free(s);
	return rc;
}

static void test_parse(void **state)
{
	muh_objective o;
	muh_diag d;
	assert_int_equal(parse("params: {A: [1, 2]}\n", &o, &d), MUH_OK);
	assert_true(objective_is_time(&o));
	assert_int_equal(parse("params: {A: [1, 2]}\nobjective:\n  maximize: output_tokens_per_s\n"
			       "  subject_to: [\"ttft_p99 <= 250ms\", \"errors == 0\"]\n",
			       &o, &d),
			 MUH_OK);
	assert_false(objective_is_time(&o));
	assert_string_equal(o.metric, "output_tokens_per_s");
	assert_int_equal(o.maximize, 1);
	assert_int_equal(o.nslo, 2);
	assert_true(fabs(o.slo[0].value - 0.25) < 1e-12);
	assert_int_equal(o.slo[0].op, OBJ_LE);
	/* an unknown metric is an error at its place, listing the known ones */
	assert_int_equal(parse("params: {A: [1, 2]}\nobjective: {maximize: tokens}\n", &o, &d), MUH_EINPUT);
	assert_int_equal(d.line, 2);
	assert_non_null(strstr(d.msg, "unknown metric 'tokens'"));
	assert_non_null(strstr(d.msg, "output_tokens_per_s"));
	assert_int_equal(parse("params: {A: [1, 2]}\nobjective:\n  minimize: time\n  subject_to: [\"ttft_p99 <= 2 h\"]\n",
			       &o, &d),
			 MUH_EINPUT);
	assert_int_equal(d.line, 4);
	assert_non_null(strstr(d.msg, "unit"));
	assert_int_equal(parse("params: {A: [1, 2]}\nobjective: {maximize: time, goal: 3}\n", &o, &d), MUH_EINPUT);
	assert_non_null(strstr(d.msg, "objective.goal"));
	assert_int_equal(parse("params: {A: [1, 2]}\nobjective: {subject_to: [\"errors 0\"]}\n", &o, &d), MUH_EINPUT);
}

static void test_score(void **state)
{
	muh_objective o;
	muh_diag d;
	assert_int_equal(parse("params: {A: [1]}\nobjective: {maximize: output_tokens_per_s, "
			       "subject_to: [\"ttft_p99 <= 2s\"]}\n",
			       &o, &d),
			 MUH_OK);
	muh_measurement fast, slow;
	measurement_init(&fast);
	measurement_init(&slow);
	fast.status = slow.status = EVAL_OK;
	fast.metrics = strdup("{\"output_tokens_per_s\": 800, \"ttft_p99\": 3.5}");
	slow.metrics = strdup("{\"output_tokens_per_s\": 400, \"ttft_p99\": 0.5}");
	/* higher throughput: lower score */
	assert_true(objective_score(&o, &fast) < objective_score(&o, &slow));
	assert_true(fabs(objective_value(&o, objective_score(&o, &fast)) - 800) < 1e-9);
	char why[256];
	assert_int_equal(objective_feasible(&o, &fast, why, sizeof(why)), 0);
	assert_non_null(strstr(why, "ttft_p99 = 3.500 s"));
	assert_int_equal(objective_feasible(&o, &slow, why, sizeof(why)), 1);
	/* not ok, or missing the metric: no score */
	slow.status = EVAL_WRONG_RESULT;
	assert_true(isnan(objective_score(&o, &slow)));
	free(fast.metrics);
	fast.metrics = strdup("{\"ttft_p99\": 1}");
	assert_true(isnan(objective_score(&o, &fast)));
	/* a missing SLO metric does not meet it */
	free(fast.metrics);
	fast.metrics = strdup("{\"output_tokens_per_s\": 1}");
	assert_int_equal(objective_feasible(&o, &fast, why, sizeof(why)), 0);
	measurement_free(&fast);
	measurement_free(&slow);
	char buf[64];
	objective_format("ttft_p99", 0.2104, buf, sizeof(buf));
	assert_string_equal(buf, "210.4 ms");
	objective_format("output_tokens_per_s", 812.54, buf, sizeof(buf));
	assert_string_equal(buf, "812.5 tok/s");
	/* a time reads as text_time writes it, 4 significant digits in any
	 * unit: tune's SLO table had '1.1 ms' beside '353.2 us' */
	objective_format("time", 1.1e-3, buf, sizeof(buf));
	assert_string_equal(buf, "1.100 ms");
	objective_format("tpot_p99", 353.24e-6, buf, sizeof(buf));
	assert_string_equal(buf, "353.2 us");
	objective_format("itl_p50", 36.7e-6, buf, sizeof(buf));
	assert_string_equal(buf, "36.70 us");
	objective_format("time", 999.96e-6, buf, sizeof(buf));
	assert_string_equal(buf, "1.000 ms");
	objective_format("e2e_p99", 2.5, buf, sizeof(buf));
	assert_string_equal(buf, "2.500 s");
	objective_format("ttft_p99", NAN, buf, sizeof(buf));
	assert_string_equal(buf, "-");
}

/* Metrics survive the store and the runner's JSON; a store made before the
 * metrics column is read unchanged and gains the column on the first write. */
static void test_store_metrics(void **state)
{
	char path[512];
	snprintf(path, sizeof(path), "%s/objective_old.db", MUH_BINARY_DIR);
	unit_rm_store(path);
	sqlite3 *db;
	assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
	/* a store as muh wrote it before this column: meta, runs, variants, measurements */
	assert_int_equal(sqlite3_exec(db,
				      "CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT);"
				      "INSERT INTO meta VALUES('schema_version','1');"
				      "INSERT INTO meta VALUES('created_by','muh 0.1.0');"
				      "CREATE TABLE runs(id INTEGER PRIMARY KEY AUTOINCREMENT, spec_hash TEXT NOT NULL,"
				      " spec_path TEXT, spec_name TEXT, instance INTEGER NOT NULL DEFAULT 0, problem TEXT,"
				      " backend TEXT NOT NULL, hw_profile TEXT NOT NULL DEFAULT '', tool_version TEXT,"
				      " host TEXT, noise REAL, created_ms INTEGER, updated_ms INTEGER);"
				      "CREATE TABLE variants(id INTEGER PRIMARY KEY, spec_hash TEXT NOT NULL, key TEXT NOT NULL,"
				      " config TEXT, UNIQUE(spec_hash, key));"
				      "CREATE TABLE measurements(id INTEGER PRIMARY KEY, run_id INTEGER NOT NULL,"
				      " variant_id INTEGER NOT NULL, status TEXT NOT NULL, samples TEXT, nsamples INTEGER,"
				      " median REAL, min REAL, mad REAL, ci_lo REAL, ci_hi REAL, warmups INTEGER,"
				      " fingerprint TEXT, fp_detail TEXT, error TEXT, max_abs_err REAL, rel_l2_err REAL,"
				      " sm_clock_mhz REAL, power_w REAL, temp_c REAL, t_build REAL, t_verify REAL,"
				      " t_time REAL, started_ms INTEGER, finished_ms INTEGER, UNIQUE(run_id, variant_id));",
				      NULL, NULL, NULL),
			 SQLITE_OK);
	sqlite3_close(db);
	muh_store *st;
	muh_diag d;
	assert_int_equal(store_open(path, &st, &d), MUH_OK);
	store_run_info ri = {.spec_hash = "abc", .backend = "engine"};
	int64_t run;
	int resumed;
	assert_int_equal(store_begin_run(st, &ri, 0, &run, &resumed, &d), MUH_OK);
	const char *names[1] = {"parallel"};
	muh_value vals[1] = {value_int(4)};
	muh_variant v;
	assert_int_equal(eval_variant_make(&v, "parallel=4", 1, 0, names, vals), MUH_OK);
	muh_measurement m;
	measurement_init(&m);
	m.status = EVAL_OK;
	m.median = 0.002;
	m.metrics = strdup("{\"output_tokens_per_s\":512.5,\"ttft_p99\":0.125}");
	/* through the runner's JSON */
	char *js = measurement_to_json(&m);
	muh_measurement back;
	assert_int_equal(measurement_from_json(js, &back), MUH_OK);
	free(js);
	assert_true(fabs(measurement_metric(&back, "output_tokens_per_s") - 512.5) < 1e-9);
	assert_true(fabs(measurement_metric(&back, "time") - 0.002) < 1e-12);
	assert_true(isnan(measurement_metric(&back, "nope")));
	measurement_free(&back);
	assert_int_equal(store_put(st, run, &v, &m, &d), MUH_OK);
	muh_measurement got;
	assert_int_equal(store_get(st, run, "parallel=4", &got), 1);
	assert_true(fabs(measurement_metric(&got, "ttft_p99") - 0.125) < 1e-12);
	measurement_free(&got);
	measurement_free(&m);
	eval_variant_free(&v);
	store_close(st);
	unit_rm_store(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse),
		cmocka_unit_test(test_score),
		cmocka_unit_test(test_store_metrics),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
