/*
 * test_alloc.c — allocation failure, for every N (issue 29 item 6).
 *
 * This executable is linked with -Wl,--wrap for malloc, calloc, realloc,
 * strdup, strndup and free (CMakeLists.txt), so that every allocation
 * libmuh's objects make goes through the counter below; SQLite's own
 * allocations are routed through it too (SQLITE_CONFIG_MALLOC), and
 * cJSON's (cJSON_InitHooks). One operation is run over and over, the Nth
 * allocation failing on run N, N = 1, 2, ... until a run makes every
 * allocation without reaching N. Every run must:
 *   - not crash (and, in the sanitized build, touch no freed memory);
 *   - return an error when its result is not whole, and that error is
 *     MUH_ENOMEM (the store may say MUH_EENV, SQLite's "out of memory");
 *   - leak nothing: the allocations live after it are those live before
 *     (the wrapped free keeps count, so the plain build checks it too);
 *   - lose nothing: a store written before is readable and intact after a
 *     failed write; a tree is byte-identical after a failed patch apply.
 * The operations: space building (spec parse, profile, space, keys), the
 * store (open, resume a run, put a measurement, close), patch (plan,
 * build, diff, apply with a backup) and the public API's session (open
 * with a store, ask and tell, best, close: session, strategy and store).
 *
 * The hook fails one allocation only (the Nth), as a transient failure;
 * libfyaml's allocations inside its own library, realpath's and stdio's are
 * not counted. MUH_ALLOC_VERBOSE=1 prints N before each run (to find the
 * run that crashed).
 */
#include <malloc.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cjson/cJSON.h>
#include <cmocka.h>
#include <sqlite3.h>
#include <tree_sitter/api.h>

#include "muh/libmuh.h"
#include "muh/eval.h"
#include "muh/fileio.h"
#include "muh/hw.h"
#include "muh/muh.h"
#include "muh/patch.h"
#include "muh/space.h"
#include "muh/spec.h"
#include "muh/store.h"
#include "unit_store.h"

/* ---- the hook ------------------------------------------------------------ */

void *__real_malloc(size_t n);
void *__real_calloc(size_t n, size_t size);
void *__real_realloc(void *p, size_t n);
char *__real_strdup(const char *s);
char *__real_strndup(const char *s, size_t n);
void __real_free(void *p);

static long fault_at;  /* fail the fault_at-th allocation since fault_arm; 0: none */
static long fault_calls; /* allocations since fault_arm */
static int fault_fired;  /* the failure happened */
static int fault_paused; /* inside tree-sitter: nothing fails */
static long fault_run;   /* the run's N, for messages */

/* The live allocations, an open-addressing set of pointers (tombstones
 * marked 1), so that a leak is seen in any build. */
#define LIVE_CAP (1u << 20)
static void **live;
static size_t nlive;

static size_t live_slot(const void *p)
{
	uintptr_t h = (uintptr_t)p;
	h ^= h >> 17;
	h *= 0x9E3779B97F4A7C15ull;
	return (size_t)(h >> 40) & (LIVE_CAP - 1);
}

static void live_add(void *p)
{
	if (!p || !live)
		return;
	size_t i = live_slot(p);
	while (live[i] && live[i] != (void *)1)
		i = (i + 1) & (LIVE_CAP - 1);
	live[i] = p;
	nlive++;
}

static void live_del(void *p)
{
	if (!p || !live)
		return;
	for (size_t i = live_slot(p); live[i]; i = (i + 1) & (LIVE_CAP - 1))
		if (live[i] == p) {
			live[i] = (void *)1;
			nlive--;
			return;
		}
}

/* Called when an allocation fails: a breakpoint for gdb (break fault_here
 * if fault_run == N). */
__attribute__((noinline)) void fault_here(void)
{
	__asm__ volatile("");
}

/* 1 when this allocation is the one to fail. */
static int fault_now(void)
{
	if (!fault_at || fault_fired || fault_paused)
		return 0;
	if (++fault_calls == fault_at) {
		fault_fired = 1;
		fault_here();
		return 1;
	}
	return 0;
}

/* Fails the nth allocation from now (0: none). */
static void fault_arm(long n)
{
	fault_at = n;
	fault_calls = 0;
	fault_fired = 0;
}

void *__wrap_malloc(size_t n)
{
	if (fault_now())
		return NULL;
	void *p = __real_malloc(n);
	live_add(p);
	return p;
}

void *__wrap_calloc(size_t n, size_t size)
{
	if (fault_now())
		return NULL;
	void *p = __real_calloc(n, size);
	live_add(p);
	return p;
}

void *__wrap_realloc(void *p, size_t n)
{
	if (fault_now())
		return NULL;
	void *q = __real_realloc(p, n);
	if (q || !n) {
		live_del(p);
		live_add(q);
	}
	return q;
}

char *__wrap_strdup(const char *s)
{
	if (fault_now())
		return NULL;
	char *p = __real_strdup(s);
	live_add(p);
	return p;
}

char *__wrap_strndup(const char *s, size_t n)
{
	if (fault_now())
		return NULL;
	char *p = __real_strndup(s, n);
	live_add(p);
	return p;
}

void __wrap_free(void *p)
{
	live_del(p);
	__real_free(p);
}

/* Tree-sitter is outside the hook: its runtime aborts on an allocation
 * failure by design (ts_malloc_default), and the grammar's scanner, which
 * the runtime calls during set_language and parse, allocates unchecked
 * (third_party). Its calls from libmuh run with the counter paused. */
bool __real_ts_parser_set_language(TSParser *p, const TSLanguage *l);
TSTree *__real_ts_parser_parse_string(TSParser *p, const TSTree *old, const char *s, uint32_t n);

bool __wrap_ts_parser_set_language(TSParser *p, const TSLanguage *l)
{
	fault_paused++;
	bool ok = __real_ts_parser_set_language(p, l);
	fault_paused--;
	return ok;
}

TSTree *__wrap_ts_parser_parse_string(TSParser *p, const TSTree *old, const char *s, uint32_t n)
{
	fault_paused++;
	TSTree *t = __real_ts_parser_parse_string(p, old, s, n);
	fault_paused--;
	return t;
}

/* SQLite's allocator, through the same counter and set. */
static void *sq_malloc(int n)
{
	return __wrap_malloc((size_t)n);
}
static void sq_free(void *p)
{
	__wrap_free(p);
}
static void *sq_realloc(void *p, int n)
{
	return __wrap_realloc(p, (size_t)n);
}
static int sq_size(void *p)
{
	return p ? (int)malloc_usable_size(p) : 0;
}
static int sq_roundup(int n)
{
	return (n + 7) & ~7;
}
static int sq_init(void *x)
{
	return SQLITE_OK;
}
static void sq_shutdown(void *x)
{
}

static void hook_install(void)
{
	live = __real_calloc(LIVE_CAP, sizeof(void *));
	static const sqlite3_mem_methods mem = {sq_malloc, sq_free,  sq_realloc,  sq_size,
						sq_roundup, sq_init, sq_shutdown, NULL};
	sqlite3_config(SQLITE_CONFIG_MALLOC, &mem);
	cJSON_Hooks hooks = {__wrap_malloc, __wrap_free};
	cJSON_InitHooks(&hooks);
}

static int verbose;

/* Runs op(ctx) with the nth allocation failing, n = 1, 2, ..., until a run
 * reaches no failure; check(ctx, rc, fired) judges every run. The live
 * allocations after each run must be those before it. Returns the runs. */
static long fault_loop(const char *what, int (*op)(void *ctx), void (*check)(void *ctx, int rc, int fired), void *ctx)
{
	/* a warm-up run: what is made once per process (SQLite's and the
	 * VFS's globals, caches) is made here, not counted as a leak */
	fault_arm(0);
	check(ctx, op(ctx), 0);
	for (long n = 1; n < 200000; n++) {
		if (verbose)
			fprintf(stderr, "%s: failing allocation %ld\n", what, n);
		size_t before = nlive;
		fault_run = n;
		fault_arm(n);
		int rc = op(ctx);
		int fired = fault_fired;
		fault_arm(0);
		if (nlive != before)
			fail_msg("%s: failing allocation %ld of the run: %zu allocations live after it, %zu before (rc %d)",
				 what, n, nlive, before, rc);
		check(ctx, rc, fired);
		if (!fired)
			return n;
	}
	fail_msg("%s: still failing after 200000 runs", what);
	return 0;
}

/* ---- space building ------------------------------------------------------ */

static const char space_spec_text[] = "name: alloc_space\n"
				      "params:\n"
				      "  BM: [16, 32, 64, 128]\n"
				      "  BN: [16, 32, 64, 128]\n"
				      "  STAGES: [1, 2, 3, 4]\n"
				      "  WARPS: [1, 2, 4, 8]\n"
				      "  LAYOUT: [\"row\", \"col\"]\n"
				      "  SPLIT: [1, 2, 4]\n"
				      "constraints:\n"
				      "  - (BM * 4 + BN * 4) * STAGES * 16 <= hw.smem_per_block\n"
				      "  - BM * BN >= WARPS * 32 * 4\n"
				      "  - SPLIT <= K / 256\n"
				      "problem:\n"
				      "  K: [512, 1024]\n"
				      "defaults: {BM: 64, BN: 64, STAGES: 2, WARPS: 4, LAYOUT: \"row\", SPLIT: 1}\n";

struct space_run {
	uint64_t valid;     /* what the run without failure counts */
	double rejected[8];
	char key[256];      /* its 7th valid configuration's key */
	uint64_t got_valid; /* what this run counted */
	double got_rejected[8];
	char got_key[256];
};

static int space_op(void *ctx)
{
	struct space_run *r = ctx;
	muh_diag d;
	diag_clear(&d);
	muh_spec *s = NULL;
	muh_space *sp = NULL;
	muh_hw hw;
	int rc = spec_parse("alloc_space.yaml", space_spec_text, sizeof(space_spec_text) - 1, &s, &d);
	if (!rc)
		rc = hw_builtin("h200", &hw, &d);
	if (!rc)
		rc = space_build(s, &hw, 1, &sp, &d);
	if (!rc) {
		r->got_valid = space_valid(sp);
		for (size_t c = 0; c < space_nconstraints(sp) && c < 8; c++)
			r->got_rejected[c] = space_rejected(sp, c);
		uint32_t cfg[8];
		rc = space_config_at(sp, 7, cfg);
		if (!rc && space_key(sp, cfg, r->got_key, sizeof(r->got_key)) <= 0)
			rc = MUH_EINPUT;
	}
	space_free(sp);
	spec_free(s);
	return rc;
}

static void space_check(void *ctx, int rc, int fired)
{
	struct space_run *r = ctx;
	if (!fired) { /* no failure: the answer, the first time kept */
		assert_int_equal(rc, MUH_OK);
		if (!r->valid) {
			r->valid = r->got_valid;
			memcpy(r->rejected, r->got_rejected, sizeof(r->rejected));
			snprintf(r->key, sizeof(r->key), "%s", r->got_key);
		}
	}
	if (rc == MUH_OK) { /* whole, failure or not */
		assert_true(r->got_valid == r->valid);
		assert_memory_equal(r->got_rejected, r->rejected, sizeof(r->rejected));
		assert_string_equal(r->got_key, r->key);
	} else {
		if (rc != MUH_ENOMEM)
			fail_msg("space: failing allocation %ld returned %d, not MUH_ENOMEM", fault_run, rc);
	}
	memset(r->got_rejected, 0, sizeof(r->got_rejected));
	r->got_valid = 0;
	r->got_key[0] = '\0';
}

static void test_space_build(void **state)
{
	struct space_run r;
	memset(&r, 0, sizeof(r));
	long runs = fault_loop("space", space_op, space_check, &r);
	assert_true(r.valid > 0 && r.valid < 4 * 4 * 4 * 4 * 2 * 3);
	assert_true(runs > 20); /* the hook saw the build's allocations */
	print_message("space: %ld runs, each failing one allocation\n", runs - 1);
}

/* ---- the store ----------------------------------------------------------- */

static char store_dir[256], pristine[512], work[512];
static char store_msg[MUH_DIAG_MSG]; /* the write's message */

static store_run_info run_info = {
	.spec_hash = "00000000a110cf00", .spec_name = "alloc", .backend = "cpu", .hw_profile = "test",
	.problem = "N=256", .spec_text = "name: alloc\n"};

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
	m->status = EVAL_OK;
	m->nsamples = 3;
	m->samples = malloc(3 * sizeof(double));
	assert_non_null(m->samples);
	for (int k = 0; k < 3; k++)
		m->samples[k] = 1e-3 * (1 + i) + 1e-6 * k;
	m->median = m->samples[1];
	m->min = m->samples[0];
	m->ci_lo = m->samples[0];
	m->ci_hi = m->samples[2];
	m->mad = 1e-6;
	snprintf(m->fingerprint, sizeof(m->fingerprint), "%016x", i * 7919);
	m->started_ms = 1700000000000LL + i;
	m->finished_ms = m->started_ms + 5;
}

static void copy_file(const char *from, const char *to)
{
	FILE *in = fopen(from, "rb"), *out = fopen(to, "wb");
	assert_non_null(in);
	assert_non_null(out);
	char buf[65536];
	size_t n;
	while ((n = fread(buf, 1, sizeof(buf), in)) > 0)
		assert_int_equal(fwrite(buf, 1, n, out), n);
	fclose(in);
	assert_int_equal(fclose(out), 0);
}

/* The store before the run: one run with BLOCK=1 measured. */
static void store_pristine(void)
{
	snprintf(store_dir, sizeof(store_dir), "/tmp/muh-test-alloc-XXXXXX");
	assert_non_null(mkdtemp(store_dir));
	snprintf(pristine, sizeof(pristine), "%s/pristine.db", store_dir);
	snprintf(work, sizeof(work), "%s/work.db", store_dir);
	muh_store *st;
	muh_diag d;
	diag_clear(&d);
	assert_int_equal(store_open(pristine, &st, &d), MUH_OK);
	int64_t run;
	int resumed;
	assert_int_equal(store_begin_run(st, &run_info, 0, &run, &resumed, &d), MUH_OK);
	muh_variant v;
	muh_measurement m;
	make_variant(&v, 1);
	make_measurement(&m, 1);
	assert_int_equal(store_put(st, run, &v, &m, &d), MUH_OK);
	measurement_free(&m);
	eval_variant_free(&v);
	store_close(st);
	/* every commit is in the file itself: no -wal left beside it */
	char wal[600];
	snprintf(wal, sizeof(wal), "%s-wal", pristine);
	assert_int_equal(access(wal, F_OK), -1);
}

/* The write under test: resume the run, add BLOCK=2, close. */
static int store_op(void *ctx)
{
	unit_rm_store(work);
	copy_file(pristine, work);
	muh_diag d;
	diag_clear(&d);
	muh_store *st = NULL;
	int rc = store_open(work, &st, &d);
	int64_t run = 0;
	int resumed = 0;
	if (!rc)
		rc = store_begin_run(st, &run_info, 0, &run, &resumed, &d);
	if (!rc && !resumed)
		fail_msg("store: failing allocation %ld: the run was not resumed", fault_run);
	if (!rc) {
		muh_variant v;
		muh_measurement m;
		memset(&v, 0, sizeof(v));
		int vrc = eval_variant_make(&v, "BLOCK=2", 1, 1, (const char *[]){"BLOCK", "N"},
					    (muh_value[]){value_int(2), value_int(256)});
		measurement_init(&m);
		if (vrc)
			rc = vrc;
		else {
			m.status = EVAL_OK;
			m.median = m.min = m.ci_lo = m.ci_hi = 2e-3;
			snprintf(m.fingerprint, sizeof(m.fingerprint), "%016x", 2 * 7919);
			m.started_ms = 1700000000002LL;
			m.finished_ms = m.started_ms + 5;
			rc = store_put(st, run, &v, &m, &d);
		}
		measurement_free(&m);
		eval_variant_free(&v);
	}
	store_close(st);
	snprintf(store_msg, sizeof(store_msg), "%s", d.msg);
	if (rc && rc != MUH_ENOMEM && !diag_is_set(&d)) /* ENOMEM needs none: "out of memory" */
		fail_msg("store: error %d without a message (failing allocation %ld)", rc, fault_run);
	return rc;
}

/* After every run: the store opens read-only, BLOCK=1 is there as written,
 * and BLOCK=2 is there exactly when the write returned MUH_OK. */
static void store_check(void *ctx, int rc, int fired)
{
	if (!fired)
		assert_int_equal(rc, MUH_OK);
	if (rc != MUH_OK && rc != MUH_ENOMEM && rc != MUH_EENV)
		fail_msg("store: failing allocation %ld returned %d, not MUH_ENOMEM or MUH_EENV", fault_run, rc);
	/* the store is a good one: short of memory, muh never calls it foreign
	 * or corrupt (a user would throw away a good store) */
	if (rc && (strstr(store_msg, "not a muh store") || strstr(store_msg, "corrupt")))
		fail_msg("store: failing allocation %ld: %s", fault_run, store_msg);
	muh_store *st;
	muh_diag d;
	diag_clear(&d);
	if (store_open_ro(work, &st, &d) != MUH_OK)
		fail_msg("store: unreadable after a write that returned %d: %s", rc, d.msg);
	int64_t run = 0;
	assert_int_equal(store_find_run(st, run_info.spec_hash, 0, "cpu", "test", &run, &d), MUH_OK);
	assert_true(run > 0);
	muh_measurement m;
	assert_int_equal(store_get(st, run, "BLOCK=1", &m), 1);
	assert_int_equal(m.status, EVAL_OK);
	assert_int_equal(m.nsamples, 3);
	assert_true(m.median == 1e-3 * 2 + 1e-6);
	assert_string_equal(m.fingerprint, "0000000000001eef");
	measurement_free(&m);
	int has2 = store_get(st, run, "BLOCK=2", &m);
	if (has2 == 1) {
		assert_true(m.median == 2e-3);
		measurement_free(&m);
	}
	if (rc == MUH_OK && has2 != 1)
		fail_msg("store: the write returned MUH_OK and BLOCK=2 is not stored");
	assert_int_equal(store_count(st, run), has2 == 1 ? 2 : 1);
	store_close(st);
}

static void test_store_write(void **state)
{
	/* the pristine store is made without failures, outside the loop */
	store_pristine();
	long runs = fault_loop("store", store_op, store_check, NULL);
	assert_true(runs > 20);
	print_message("store: %ld runs, each failing one allocation\n", runs - 1);
	char cmd[400];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", store_dir);
	assert_int_equal(system(cmd), 0);
}

/* ---- patch --------------------------------------------------------------- */

static char tree[256];
static const char file_a[] = "# kernel config\nBLOCK = 64\nNUM_WARPS = 4\n";
static const char file_b[] = "STAGES = 2\n\tSPLIT = 1  # tab\n";
static const char want_a[] = "# kernel config\nBLOCK = 128\nNUM_WARPS = 8\n";
static const char want_b[] = "STAGES = 3\n\tSPLIT = 1  # tab\n";

static void put(const char *rel, const char *text)
{
	char path[512];
	snprintf(path, sizeof(path), "%s/%s", tree, rel);
	FILE *f = fopen(path, "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(text, 1, strlen(text), f), strlen(text));
	assert_int_equal(fclose(f), 0);
}

/* 1 when file rel holds exactly text. */
static int holds(const char *rel, const char *text)
{
	char path[512], buf[4096];
	snprintf(path, sizeof(path), "%s/%s", tree, rel);
	FILE *f = fopen(path, "rb");
	assert_non_null(f);
	size_t n = fread(buf, 1, sizeof(buf), f);
	fclose(f);
	return n == strlen(text) && !memcmp(buf, text, n);
}

/* A knob over the first val after anchor in text, the file rel's content. */
static muh_knob knob_at(const char *id, const char *rel, const char *text, const char *anchor, const char *val)
{
	muh_knob k;
	memset(&k, 0, sizeof(k));
	snprintf(k.id, sizeof(k.id), "%s", id);
	k.file = rel;
	k.name = "X";
	k.kind = "constant";
	const char *at = strstr(strstr(text, anchor), val);
	k.start = (uint32_t)(at - text);
	k.end = k.start + (uint32_t)strlen(val);
	k.file_hash = patch_fnv1a64(text, strlen(text));
	k.verdict = SCAN_LIVE;
	return k;
}

static int patch_op(void *ctx)
{
	char bdir[400], cmd[500];
	snprintf(bdir, sizeof(bdir), "%s/backup", tree);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", bdir);
	assert_int_equal(system(cmd), 0);
	put("a.py", file_a);
	put("b.py", file_b);
	muh_knob ka = knob_at("a1", "a.py", file_a, "BLOCK", "64");
	muh_knob kw = knob_at("a2", "a.py", file_a, "NUM_WARPS", "4");
	muh_knob kb = knob_at("b1", "b.py", file_b, "STAGES", "2");
	muh_diag d;
	diag_clear(&d);
	muh_patch *p = patch_plan_new(tree);
	if (!p)
		return MUH_ENOMEM;
	int rc = patch_plan_set(p, &ka, -1, "128", 0, &d);
	if (!rc)
		rc = patch_plan_set(p, &kw, -1, "8", 0, &d);
	if (!rc)
		rc = patch_plan_set(p, &kb, -1, "3", 0, &d);
	if (!rc)
		rc = patch_plan_build(p, &d);
	if (!rc) {
		char *diff = patch_diff(p);
		if (!diff)
			rc = MUH_ENOMEM;
		else if (!strstr(diff, "+BLOCK = 128\n"))
			fail_msg("patch: the diff lacks the edit:\n%s", diff);
		free(diff);
	}
	int w = 0;
	if (!rc)
		rc = patch_apply(p, bdir, &w, &d);
	if (!rc && w != 2)
		fail_msg("patch: %d files written, 2 expected", w);
	patch_plan_free(p);
	return rc;
}

static void patch_check(void *ctx, int rc, int fired)
{
	if (!fired)
		assert_int_equal(rc, MUH_OK);
	if (rc == MUH_OK) {
		assert_true(holds("a.py", want_a));
		assert_true(holds("b.py", want_b));
		return;
	}
	if (rc != MUH_ENOMEM)
		fail_msg("patch: a failed allocation returned %d, not MUH_ENOMEM", rc);
	if (!holds("a.py", file_a) || !holds("b.py", file_b))
		fail_msg("patch: a failed apply (rc %d) changed the tree", rc);
	/* no temporary file is left beside a target */
	char cmd[400];
	snprintf(cmd, sizeof(cmd), "test $(ls -A '%s' | grep -v '^backup$' | wc -l) = 2", tree);
	if (system(cmd) != 0)
		fail_msg("patch: a failed apply left files in the tree");
}

static void test_patch_apply(void **state)
{
	snprintf(tree, sizeof(tree), "/tmp/muh-test-alloc-tree-XXXXXX");
	assert_non_null(mkdtemp(tree));
	long runs = fault_loop("patch", patch_op, patch_check, NULL);
	assert_true(runs > 10);
	print_message("patch: %ld runs, each failing one allocation\n", runs - 1);
	char cmd[400];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tree);
	assert_int_equal(system(cmd), 0);
}

/* ---- the public API: a session asked and told, with a store ------------- */

static char session_dir[256], session_spec[512], session_db[512];

/* Opens a session on the example's spec with a store, asks and tells six
 * configurations (their time: 1 ms per BLOCK step), names the best and
 * closes; the store starts empty each run. */
static int session_op(void *ctx)
{
	unit_rm_store(session_db);
	muh_session_options o = MUH_SESSION_OPTIONS_INIT;
	o.budget = 6;
	o.seed = 1;
	o.db = session_db;
	muh_session *s = NULL;
	muh_status rc = muh_session_open(session_spec, &o, &s);
	uint32_t cfg[4];
	size_t n = 0;
	while (!rc && !(rc = muh_session_next(s, cfg, 1, &n)) && n == 1)
		rc = muh_session_record(s, cfg, 1e-3 * (1 + cfg[0]) + 1e-5 * cfg[1], 0);
	char *key = ctx;
	if (!rc && !(rc = muh_session_best(s, cfg, NULL)))
		rc = muh_space_key(muh_session_space(s), cfg, key, 64);
	muh_session_close(s);
	if (rc && !*muh_last_error())
		fail_msg("session: status %d without muh_last_error (failing allocation %ld)", rc, fault_run);
	return rc;
}

static void session_check(void *ctx, int rc, int fired)
{
	static char want[64];
	char *key = ctx;
	if (!fired) {
		assert_int_equal(rc, MUH_OK);
		if (!want[0])
			snprintf(want, sizeof(want), "%s", key);
	}
	if (rc == MUH_OK)
		assert_string_equal(key, want);
	else if (rc != MUH_ENOMEM && rc != MUH_EENV)
		fail_msg("session: failing allocation %ld returned %d (%s), not MUH_ENOMEM or MUH_EENV", fault_run,
			 rc, muh_last_error());
	key[0] = '\0';
}

static void test_session_public(void **state)
{
	snprintf(session_dir, sizeof(session_dir), "/tmp/muh-test-alloc-session-XXXXXX");
	assert_non_null(mkdtemp(session_dir));
	snprintf(session_spec, sizeof(session_spec), "%s/examples/online.yaml", MUH_SOURCE_DIR);
	snprintf(session_db, sizeof(session_db), "%s/s.db", session_dir);
	char key[64] = "";
	long runs = fault_loop("session", session_op, session_check, key);
	assert_true(runs > 50);
	print_message("session: %ld runs, each failing one allocation\n", runs - 1);
	char cmd[400];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", session_dir);
	assert_int_equal(system(cmd), 0);
}

int main(void)
{
	hook_install();
	verbose = getenv("MUH_ALLOC_VERBOSE") && *getenv("MUH_ALLOC_VERBOSE") == '1';
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_space_build),
		cmocka_unit_test(test_store_write),
		cmocka_unit_test(test_patch_apply),
		cmocka_unit_test(test_session_public),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
