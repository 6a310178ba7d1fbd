/*
 * test_patch.c — the write-back library: byte-exact edits (CRLF, tabs,
 * non-UTF-8 kept), diffs git applies, atomic apply and idempotence,
 * values checked by type and unsafe values by evaluated value, patched
 * files that must still parse, no write outside the tree or through a
 * link, an apply that fails at every possible I/O call (fio fault layer)
 * and leaves the tree whole, rollback and resume from the journal,
 * overlays, and the emitters (vLLM MoE config files, C headers,
 * triton.Config lists).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "muh/fileio.h"
#include "muh/muh.h"
#include "muh/patch.h"

static char dir[256];

static void put(const char *rel, const char *text, size_t n)
{
	char path[512];
	snprintf(path, sizeof(path), "%s/%s", dir, rel);
	FILE *f = fopen(path, "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(text, 1, n, f), n);
	fclose(f);
}

static char *get(const char *rel, size_t *n)
{
	char path[512];
	snprintf(path, sizeof(path), "%s/%s", dir, rel);
	FILE *f = fopen(path, "rb");
	assert_non_null(f);
	char *b = malloc(1 << 16);
	*n = fread(b, 1, 1 << 16, f);
	fclose(f);
	return b;
}

static int setup(void **state)
{
	snprintf(dir, sizeof(dir), "/tmp/muh-test-patch-XXXXXX");
	assert_non_null(mkdtemp(dir));
	return 0;
}

static int teardown(void **state)
{
	char cmd[600];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return system(cmd) == 0 ? 0 : -1;
}

/* A knob over bytes [start, end) of rel, with the file's current hash. */
static muh_knob knob_at(const char *id, const char *rel, const char *text, size_t n, const char *val)
{
	muh_knob k;
	memset(&k, 0, sizeof(k));
	snprintf(k.id, sizeof(k.id), "%s", id);
	k.file = rel;
	k.name = "X";
	k.kind = "constant";
	const char *at = strstr(text, val);
	k.start = (uint32_t)(at - text);
	k.end = k.start + (uint32_t)strlen(val);
	k.file_hash = patch_fnv1a64(text, n);
	k.verdict = SCAN_LIVE;
	return k;
}

static const char crlf[] = "# comment\r\nBLOCK = 64\r\n\tNUM = 8  # tab\r\nbad = b'\xff\xfe'\r\nEND = 1";

static void test_crlf_bytes_kept_and_apply_idempotent(void **state)
{
	size_t n = sizeof(crlf) - 1;
	put("m.py", crlf, n);
	muh_knob a = knob_at("k1", "m.py", crlf, n, "64");
	muh_knob b = knob_at("k2", "m.py", crlf, n, "8");
	muh_patch *p = patch_plan_new(dir);
	muh_diag d;
	assert_int_equal(patch_plan_set(p, &a, -1, "128", 0, &d), MUH_OK);
	assert_int_equal(patch_plan_set(p, &b, -1, "4", 0, &d), MUH_OK);
	assert_int_equal(patch_plan_build(p, &d), MUH_OK);
	assert_int_equal(patch_nchanged(p), 1);
	char *diff = patch_diff(p);
	assert_non_null(strstr(diff, "-BLOCK = 64\r\n+BLOCK = 128\r\n"));
	assert_non_null(strstr(diff, "+\tNUM = 4  # tab\r\n"));
	assert_non_null(strstr(diff, "\\ No newline at end of file"));
	free(diff);
	char bdir[300];
	snprintf(bdir, sizeof(bdir), "%s/backup", dir);
	int w;
	assert_int_equal(patch_apply(p, bdir, &w, &d), MUH_OK);
	assert_int_equal(w, 1);
	size_t m;
	char *after = get("m.py", &m);
	const char want[] = "# comment\r\nBLOCK = 128\r\n\tNUM = 4  # tab\r\nbad = b'\xff\xfe'\r\nEND = 1";
	assert_int_equal(m, sizeof(want) - 1);
	assert_memory_equal(after, want, m);
	free(after);
	char *orig = get("backup/m.py", &m);
	assert_int_equal(m, n);
	assert_memory_equal(orig, crlf, n);
	free(orig);
	/* a second apply writes nothing */
	assert_int_equal(patch_apply(p, bdir, &w, &d), MUH_OK);
	assert_int_equal(w, 0);
	patch_plan_free(p);
}

static void test_refusals(void **state)
{
	const char text[] = "use_v1 = True\nBLOCK = 128 if cap >= 80 else 64\n";
	put("r.py", text, sizeof(text) - 1);
	muh_knob k = knob_at("k3", "r.py", text, sizeof(text) - 1, "True");
	const char *unsafe[] = {"False"};
	scan_step ev[] = {{"r.py", 1, "use_v1 read"}, {"ops.py", 9, "raise NotImplementedError"}};
	k.unsafe_values = unsafe;
	k.nunsafe = 1;
	k.evidence = ev;
	k.nevidence = 2;
	k.verdict = SCAN_UNSAFE;
	muh_patch *p = patch_plan_new(dir);
	muh_diag d;
	diag_clear(&d);
	assert_int_equal(patch_plan_set(p, &k, -1, "False", 1, &d), MUH_EINPUT); /* even forced */
	assert_non_null(strstr(d.msg, "unsafe"));
	assert_non_null(strstr(d.msg, "ops.py:9: raise NotImplementedError"));
	assert_int_equal(patch_plan_set(p, &k, -1, "True", 0, &d), MUH_OK);

	muh_knob dead = knob_at("k4", "r.py", text, sizeof(text) - 1, "True");
	dead.verdict = SCAN_DEAD;
	dead.evidence = ev;
	dead.nevidence = 1;
	assert_int_equal(patch_plan_set(p, &dead, -1, "1", 0, &d), MUH_EINPUT);
	assert_non_null(strstr(d.msg, "dead"));
	assert_int_equal(patch_plan_set(p, &dead, -1, "1", 1, &d), MUH_OK); /* --force */

	muh_knob cond = knob_at("k5", "r.py", text, sizeof(text) - 1, "128 if cap >= 80 else 64");
	scan_alt alts[2] = {{"128", "128", 0, 0, 2}, {"64", "64", 0, 0, 2}};
	alts[0].start = (uint32_t)(strstr(text, "128") - text);
	alts[0].end = alts[0].start + 3;
	alts[1].start = (uint32_t)(strstr(text, "64\n") - text);
	alts[1].end = alts[1].start + 2;
	cond.alts = alts;
	cond.nalts = 2;
	cond.value = "128 if cap >= 80 else 64";
	assert_int_equal(patch_plan_set(p, &cond, -1, "32", 0, &d), MUH_EINPUT);
	assert_non_null(strstr(d.msg, "[0]=32"));
	assert_non_null(strstr(d.msg, "[1]=32"));
	assert_int_equal(patch_plan_set(p, &cond, 2, "32", 0, &d), MUH_EINPUT);
	assert_int_equal(patch_plan_set(p, &cond, 1, "32", 0, &d), MUH_OK);
	patch_plan_free(p);

	/* drift: the file changes after the scan */
	muh_patch *q = patch_plan_new(dir);
	muh_knob k2 = knob_at("k6", "r.py", text, sizeof(text) - 1, "True");
	assert_int_equal(patch_plan_set(q, &k2, -1, "True", 0, &d), MUH_OK);
	put("r.py", "use_v1 = True\n# edited\n", 23);
	assert_int_equal(patch_plan_build(q, &d), MUH_EINPUT);
	assert_non_null(strstr(d.msg, "changed since it was scanned"));
	patch_plan_free(q);
}

/* The values a knob takes: one expression, a literal of the knob's type;
 * unsafe values compare by evaluated value. */
static void test_values(void **state)
{
	const char text[] = "N = 64\nF = 0.5\nB = True\nS = 'ld'\nO = None\n";
	size_t n = sizeof(text) - 1;
	put("v.py", text, n);
	muh_knob ik = knob_at("k10", "v.py", text, n, "64");
	ik.eval = "64";
	muh_knob fk = knob_at("k11", "v.py", text, n, "0.5");
	fk.eval = "0.5";
	muh_knob bk = knob_at("k12", "v.py", text, n, "True");
	bk.eval = "True";
	muh_knob sk = knob_at("k13", "v.py", text, n, "'ld'");
	sk.eval = "'ld'";
	muh_knob nk = knob_at("k14", "v.py", text, n, "None");
	nk.eval = "None";
	muh_patch *p = patch_plan_new(dir);
	muh_diag d;
	const char *int_bad[] = {"banana", "(", "4; import os", "4.5", "True", "'64'", "None",
				 "4)\nimport os\n(5", "64 64", ""};
	for (size_t i = 0; i < sizeof(int_bad) / sizeof(*int_bad); i++) {
		diag_clear(&d);
		assert_int_equal(patch_plan_set(p, &ik, -1, int_bad[i], 0, &d), MUH_EINPUT);
		assert_true(d.msg[0]);
	}
	diag_clear(&d);
	patch_plan_set(p, &ik, -1, "banana", 0, &d);
	assert_non_null(strstr(d.msg, "an int"));
	patch_plan_set(p, &ik, -1, "4; import os", 0, &d);
	assert_non_null(strstr(d.msg, "more than one statement"));
	const char *int_ok[] = {"128", "(128)", "0x40", "1_024", "-1", "128  # tuned"};
	for (size_t i = 0; i < sizeof(int_ok) / sizeof(*int_ok); i++)
		assert_int_equal(patch_plan_set(p, &ik, -1, int_ok[i], 0, &d), MUH_OK);
	assert_int_equal(patch_plan_set(p, &fk, -1, "1", 0, &d), MUH_OK);
	assert_int_equal(patch_plan_set(p, &fk, -1, "1e-3", 0, &d), MUH_OK);
	assert_int_equal(patch_plan_set(p, &fk, -1, "'x'", 0, &d), MUH_EINPUT);
	assert_int_equal(patch_plan_set(p, &bk, -1, "False", 0, &d), MUH_OK);
	assert_int_equal(patch_plan_set(p, &bk, -1, "not False", 0, &d), MUH_OK);
	assert_int_equal(patch_plan_set(p, &bk, -1, "2", 0, &d), MUH_EINPUT);
	assert_int_equal(patch_plan_set(p, &sk, -1, "\"xy\"", 0, &d), MUH_OK);
	assert_int_equal(patch_plan_set(p, &sk, -1, "5", 0, &d), MUH_EINPUT);
	assert_int_equal(patch_plan_set(p, &nk, -1, "7", 0, &d), MUH_OK);
	assert_int_equal(patch_plan_set(p, &nk, -1, "foo(1)", 0, &d), MUH_OK);
	assert_int_equal(patch_plan_set(p, &nk, -1, "foo(", 0, &d), MUH_EINPUT);
	patch_plan_free(p);

	/* unsafe False, however it is spelled */
	const char *unsafe[] = {"False"};
	scan_step ev[] = {{"ops.py", 9, "raise NotImplementedError"}};
	bk.unsafe_values = unsafe;
	bk.nunsafe = 1;
	bk.evidence = ev;
	bk.nevidence = 1;
	bk.verdict = SCAN_UNSAFE;
	const char *spell[] = {"False", "(False)", "not True", "0", "0.0", "None", "''", "\"\"",
			       "False  # tuned", " ((not  True)) "};
	p = patch_plan_new(dir);
	for (size_t i = 0; i < sizeof(spell) / sizeof(*spell); i++) {
		diag_clear(&d);
		assert_int_equal(patch_plan_set(p, &bk, -1, spell[i], 1, &d), MUH_EINPUT);
		assert_non_null(strstr(d.msg, "unsafe"));
	}
	assert_int_equal(patch_plan_set(p, &bk, -1, "(True)", 0, &d), MUH_OK);
	/* a numeric unsafe value matches the same number however spelled */
	const char *unsafe0[] = {"64"};
	ik.unsafe_values = unsafe0;
	ik.nunsafe = 1;
	assert_int_equal(patch_plan_set(p, &ik, -1, "0x40", 1, &d), MUH_EINPUT);
	assert_int_equal(patch_plan_set(p, &ik, -1, "(64)  # c", 1, &d), MUH_EINPUT);
	assert_int_equal(patch_plan_set(p, &ik, -1, "65", 1, &d), MUH_OK);
	patch_plan_free(p);
}

/* A patched file must still parse: Python, YAML, JSON. */
static void test_parse_check(void **state)
{
	const char py[] = "def f():\n    return 1\n";
	put("ok.py", py, sizeof(py) - 1);
	put("ok.yaml", "a: [1, 2]\n", 10);
	put("ok.json", "{\"a\": 1}\n", 9);
	struct {
		const char *rel, *bad, *good;
	} c[] = {{"ok.py", "def f(:\n    return 1\n", "def f():\n    return 2\n"},
		 {"ok.yaml", "a: [1, 2\n", "a: [1, 3]\n"},
		 {"ok.json", "{\"a\": 1,,}\n", "{\"a\": 2}\n"}};
	for (size_t i = 0; i < 3; i++) {
		muh_patch *p = patch_plan_new(dir);
		muh_diag d;
		diag_clear(&d);
		assert_int_equal(patch_plan_set_file(p, c[i].rel, c[i].bad, strlen(c[i].bad), &d), MUH_OK);
		assert_int_equal(patch_plan_build(p, &d), MUH_EINPUT);
		assert_non_null(strstr(d.msg, "would not parse"));
		patch_plan_free(p);
		p = patch_plan_new(dir);
		assert_int_equal(patch_plan_set_file(p, c[i].rel, c[i].good, strlen(c[i].good), &d), MUH_OK);
		assert_int_equal(patch_plan_build(p, &d), MUH_OK);
		patch_plan_free(p);
	}
}

/* Runs sh -c cmd; its exit status. */
static int sh(const char *fmt, ...)
{
	char cmd[2048];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	return system(cmd);
}

/* No write leaves the tree, and no link is replaced by a file. */
static void test_symlinks(void **state)
{
	const char text[] = "BLOCK = 64\n";
	size_t n = sizeof(text) - 1;
	char out[400];
	snprintf(out, sizeof(out), "%s.outside", dir);
	assert_int_equal(sh("rm -rf '%s' && mkdir -p '%s/ops' '%s/sub' && printf 'BLOCK = 64\\n' > "
			    "'%s/ops/a.py' && ln -s '%s/ops' '%s/ops' && printf 'BLOCK = 64\\n' > "
			    "'%s/sub/real.py' && ln -s real.py '%s/sub/link.py' && ln -s '%s/ops/a.py' "
			    "'%s/out.py'",
			    out, out, dir, out, out, dir, dir, dir, out, dir),
			 0);
	struct {
		const char *rel;
		int follow, want;
		const char *msg;
	} c[] = {{"ops/a.py", 0, MUH_EINPUT, "outside the tree"},
		 {"ops/a.py", 1, MUH_EINPUT, "outside the tree"},
		 {"sub/link.py", 0, MUH_EINPUT, "symbolic link"},
		 {"out.py", 1, MUH_EINPUT, "outside"},
		 {"sub/link.py", 1, MUH_OK, NULL}};
	for (size_t i = 0; i < sizeof(c) / sizeof(*c); i++) {
		muh_knob k = knob_at("k20", c[i].rel, text, n, "64");
		muh_patch *p = patch_plan_new(dir);
		patch_plan_follow_symlinks(p, c[i].follow);
		muh_diag d;
		diag_clear(&d);
		int w = 0;
		assert_int_equal(patch_plan_set(p, &k, -1, "32", 0, &d), MUH_OK);
		assert_int_equal(patch_plan_build(p, &d), MUH_OK);
		assert_int_equal(patch_apply(p, NULL, &w, &d), c[i].want);
		if (c[i].msg)
			assert_non_null(strstr(d.msg, c[i].msg));
		patch_plan_free(p);
	}
	/* the file outside is untouched; the followed link is still a link, its
	 * target inside the tree patched */
	assert_int_equal(sh("grep -qx 'BLOCK = 64' '%s/ops/a.py'", out), 0);
	assert_int_equal(sh("test -L '%s/sub/link.py' && grep -qx 'BLOCK = 32' '%s/sub/real.py'", dir,
			    dir),
			 0);
	assert_int_equal(sh("rm -rf '%s'", out), 0);
}

static const char *three_rel[3] = {"a.py", "pkg/b.py", "pkg/c.py"};
static const char *three_old[3] = {"A = 1\n", "B = 2\n", "C = 3\n"};
static const char *three_new[3] = {"A = 10\n", "B = 20\n", "C = 30\n"};

/* The state of the three files: 'o' all original, 'n' all patched, 'm'
 * mixed, 'x' something else. */
static char three_state(void)
{
	int no = 0, nn = 0;
	for (int i = 0; i < 3; i++) {
		size_t m;
		char *b = get(three_rel[i], &m);
		no += m == strlen(three_old[i]) && !memcmp(b, three_old[i], m);
		nn += m == strlen(three_new[i]) && !memcmp(b, three_new[i], m);
		free(b);
	}
	return no == 3 ? 'o' : nn == 3 ? 'n' : no + nn == 3 ? 'm' : 'x';
}

static muh_patch *three_plan(void)
{
	char sub[400];
	snprintf(sub, sizeof(sub), "%s/pkg", dir);
	mkdir(sub, 0777);
	muh_patch *p = patch_plan_new(dir);
	muh_diag d;
	for (int i = 0; i < 3; i++) {
		size_t n = strlen(three_old[i]);
		put(three_rel[i], three_old[i], n);
		const char *v = strchr(three_old[i], '=') + 2;
		char val[8];
		snprintf(val, sizeof(val), "%.1s", v);
		muh_knob k = knob_at(i == 0 ? "ka" : i == 1 ? "kb" : "kc", three_rel[i], three_old[i], n,
				     val);
		k.end = k.start + 1;
		char nv[8];
		snprintf(nv, sizeof(nv), "%.2s", strchr(three_new[i], '=') + 2);
		assert_int_equal(patch_plan_set(p, &k, -1, nv, 0, &d), MUH_OK);
	}
	assert_int_equal(patch_plan_build(p, &d), MUH_OK);
	assert_int_equal(patch_nchanged(p), 3);
	return p;
}

/* SQLite's loop: fail the Nth I/O call of a three-file apply for N = 1, 2,
 * 3, ... until it succeeds; after each failure the files are byte-identical
 * to the originals, no temporary file is left and the message says so. */
static void test_apply_fault_loop(void **state)
{
	muh_patch *p = three_plan();
	long n;
	int rc = -1;
	for (n = 1; n < 200; n++) {
		char bdir[400];
		snprintf(bdir, sizeof(bdir), "%s.bk%ld", dir, n);
		muh_diag d;
		diag_clear(&d);
		int w = 0;
		fio_fault_arm(n);
		rc = patch_apply(p, bdir, &w, &d);
		fio_fault_arm(0);
		sh("rm -rf '%s'", bdir);
		assert_int_equal(sh("find '%s' -name '*.muh-tmp.*' | grep -q .", dir) == 0, 0);
		if (rc == MUH_OK) {
			assert_int_equal(w, 3);
			break;
		}
		assert_int_equal(rc, MUH_EENV);
		assert_int_equal(three_state(), 'o');
		assert_non_null(strstr(d.msg, "no file changed"));
	}
	assert_int_equal(rc, MUH_OK);
	assert_true(n > 10); /* backups, journal, temps and renames all failed once */
	assert_int_equal(three_state(), 'n');
	patch_plan_free(p);
}

/* Rollback and resume from the journal, and rollback under faults: a
 * rollback that fails part way is finished by the next one. */
static void test_rollback_resume(void **state)
{
	muh_patch *p = three_plan();
	char bdir[400];
	snprintf(bdir, sizeof(bdir), "%s/.bk", dir);
	muh_diag d;
	int w;
	assert_int_equal(patch_apply(p, bdir, &w, &d), MUH_OK);
	assert_int_equal(three_state(), 'n');
	patch_recovery r;
	for (long n = 1;; n++) {
		fio_fault_arm(n);
		int rc = patch_rollback(bdir, &r, &d);
		fio_fault_arm(0);
		char s = three_state();
		assert_true(s == 'o' || s == 'n' || s == 'm');
		if (rc == MUH_OK)
			break;
		assert_int_equal(patch_rollback(bdir, &r, &d), MUH_OK);
		assert_int_equal(three_state(), 'o');
		assert_int_equal(patch_resume(bdir, &r, &d), MUH_OK); /* nothing to finish: */
		assert_int_equal(r.incomplete, 1);                    /* temps are gone */
		assert_int_equal(three_state(), 'o');
		assert_int_equal(patch_apply(p, bdir, &w, &d), MUH_OK);
		assert_int_equal(three_state(), 'n');
	}
	assert_int_equal(three_state(), 'o');
	assert_int_equal(r.changed, 3);
	/* a kill after the temps and one rename: resume finishes it */
	assert_int_equal(patch_apply(p, bdir, &w, &d), MUH_OK);
	assert_int_equal(patch_rollback(bdir, &r, &d), MUH_OK);
	char tmp[600];
	for (int i = 1; i < 3; i++) {
		snprintf(tmp, sizeof(tmp), "%s.muh-tmp.%ld.%d", three_rel[i], (long)getpid(), i);
		put(tmp, three_new[i], strlen(three_new[i]));
	}
	/* the journal of the last apply names these temporary files */
	assert_int_equal(sh("grep -q 'muh-tmp.%ld.2' '%s/journal.json'", (long)getpid(), bdir), 0);
	put(three_rel[0], three_new[0], strlen(three_new[0]));
	assert_int_equal(three_state(), 'm');
	assert_int_equal(patch_resume(bdir, &r, &d), MUH_OK);
	assert_int_equal(r.changed, 2);
	assert_int_equal(three_state(), 'n');
	assert_int_equal(sh("find '%s' -name '*.muh-tmp.*' | grep -q .", dir) == 0, 0);
	/* a file changed by someone else since: both refuse, nothing changes */
	put(three_rel[1], "B = 99\n", 7);
	assert_int_equal(patch_rollback(bdir, &r, &d), MUH_EINPUT);
	assert_non_null(strstr(d.msg, "pkg/b.py"));
	assert_int_equal(patch_resume(bdir, &r, &d), MUH_EINPUT);
	patch_plan_free(p);
}

static void test_overlay(void **state)
{
	const char text[] = "BLOCK = 64\n";
	char sub[400];
	snprintf(sub, sizeof(sub), "%s/pkg", dir);
	mkdir(sub, 0777);
	put("pkg/a.py", text, sizeof(text) - 1);
	put("pkg/b.py", "X = 1\n", 6);
	muh_knob k = knob_at("k7", "pkg/a.py", text, sizeof(text) - 1, "64");
	muh_patch *p = patch_plan_new(dir);
	muh_diag d;
	assert_int_equal(patch_plan_set(p, &k, -1, "32", 0, &d), MUH_OK);
	assert_int_equal(patch_plan_build(p, &d), MUH_OK);
	char ov[400];
	snprintf(ov, sizeof(ov), "%s.overlay", dir);
	assert_int_equal(patch_overlay(p, ov, &d), MUH_OK);
	char path[500], buf[64] = {0};
	snprintf(path, sizeof(path), "%s/pkg/a.py", ov);
	FILE *f = fopen(path, "rb");
	assert_non_null(f);
	assert_true(fread(buf, 1, sizeof(buf) - 1, f) > 0);
	fclose(f);
	assert_string_equal(buf, "BLOCK = 32\n");
	struct stat st;
	snprintf(path, sizeof(path), "%s/pkg/b.py", ov);
	assert_int_equal(lstat(path, &st), 0);
	assert_true(S_ISLNK(st.st_mode)); /* unchanged files are links */
	/* the original is untouched */
	size_t m;
	char *orig = get("pkg/a.py", &m);
	assert_memory_equal(orig, text, m);
	free(orig);
	/* Python imports the patched module from the overlay */
	char cmd[900];
	snprintf(cmd, sizeof(cmd),
		 "cd / && python3 -c 'import sys; sys.path.insert(0, \"%s\"); import pkg.a; "
		 "assert pkg.a.BLOCK == 32'",
		 ov);
	assert_int_equal(system(cmd), 0);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", ov);
	assert_int_equal(system(cmd), 0);
	patch_plan_free(p);
}

static void test_emitters(void **state)
{
	const char *names[] = {"BLOCK_SIZE_M", "BLOCK_SIZE_N", "BLOCK_SIZE_K",
			       "GROUP_SIZE_M", "num_warps",    "num_stages"};
	const char *v1[] = {"16", "64", "128", "1", "4", "3"}, *v2[] = {"64", "128", "64", "16", "8", "4"},
		   *v3[] = {"32", "256", "128", "16", "4", "2"};
	patch_best b[3] = {{"NVIDIA H200", 256, 6, names, v3, NULL},
			   {"NVIDIA H200", 1, 6, names, v1, NULL},
			   {"NVIDIA H200", 4096, 6, names, v2, NULL}};
	char fname[200];
	patch_moe_filename(fname, sizeof(fname), 128, 768, "NVIDIA H200", NULL);
	assert_string_equal(fname, "E=128,N=768,device_name=NVIDIA_H200.json");
	char *json;
	muh_diag d;
	assert_int_equal(patch_moe_json(b, 3, &json, &d), MUH_OK);
	/* keys ascend */
	assert_true(strstr(json, "\"1\"") < strstr(json, "\"256\""));
	assert_true(strstr(json, "\"256\"") < strstr(json, "\"4096\""));
	char path[700];
	snprintf(path, sizeof(path), "%s/%s", dir, fname);
	FILE *f = fopen(path, "w");
	fputs(json, f);
	fclose(f);
	free(json);
	char cmd[1600];
	snprintf(cmd, sizeof(cmd),
		 "python3 tests/patch/moe_loader_check.py '%s' 1 2 200 300 5000 > '%s/chosen'", path,
		 dir);
	assert_int_equal(system(cmd), 0);
	size_t m;
	char *chosen = get("chosen", &m);
	chosen[m] = '\0';
	assert_string_equal(chosen, "1 -> 1\n2 -> 1\n200 -> 256\n300 -> 256\n5000 -> 4096\n");
	free(chosen);
	/* a result without num_stages cannot become a vLLM config */
	patch_best bad = {"NVIDIA H200", 8, 5, names, v1, NULL};
	assert_int_equal(patch_moe_json(&bad, 1, &json, &d), MUH_EINPUT);
	assert_non_null(strstr(d.msg, "num_stages"));

	/* C header: compiles for each target and for the default */
	const char *hn[] = {"BLOCK", "UNROLL"};
	const char *h1[] = {"128", "4"}, *h2[] = {"64", "2"}, *hd[] = {"32", "1"};
	patch_best hb[2] = {{"NVIDIA H200", 0, 2, hn, h1, NULL}, {"bi-v100", 0, 2, hn, h2, NULL}};
	patch_best def = {"default", 0, 2, hn, hd, NULL};
	char *hdr;
	assert_int_equal(patch_c_header(hb, 2, &def, "tuned.h", &hdr, &d), MUH_OK);
	assert_non_null(strstr(hdr, "#if defined(TARGET_NVIDIA_H200)"));
	assert_non_null(strstr(hdr, "#elif defined(TARGET_BI_V100)"));
	snprintf(path, sizeof(path), "%s/tuned.h", dir);
	f = fopen(path, "w");
	fputs(hdr, f);
	fclose(f);
	free(hdr);
	snprintf(path, sizeof(path), "%s/use.c", dir);
	f = fopen(path, "w");
	fputs("#include \"tuned.h\"\n_Static_assert(BLOCK == WANT_BLOCK && UNROLL == WANT_UNROLL, "
	      "\"tuned value\");\nint main(void) { return 0; }\n",
	      f);
	fclose(f);
	const char *flags[] = {"-DTARGET_NVIDIA_H200 -DWANT_BLOCK=128 -DWANT_UNROLL=4",
			       "-DTARGET_BI_V100 -DWANT_BLOCK=64 -DWANT_UNROLL=2",
			       "-DWANT_BLOCK=32 -DWANT_UNROLL=1"};
	for (int i = 0; i < 3; i++) {
		snprintf(cmd, sizeof(cmd), "cc -std=c11 -Wall -Werror %s -fsyntax-only '%s/use.c'",
			 flags[i], dir);
		assert_int_equal(system(cmd), 0);
	}
	/* and fails for a wrong expectation, so the check can fail */
	snprintf(cmd, sizeof(cmd),
		 "cc -std=c11 -DWANT_BLOCK=128 -DWANT_UNROLL=4 -fsyntax-only '%s/use.c' 2>/dev/null",
		 dir);
	assert_int_not_equal(system(cmd), 0);

	/* a result without a device (cpu, worker runs) is TARGET_HOST, said in
	 * the comment; never an empty TARGET_ */
	patch_best hh[2] = {{"", 0, 2, hn, h1, NULL}, {"bi-v100", 0, 2, hn, h2, NULL}};
	assert_int_equal(patch_c_header(hh, 2, &def, "tuned.h", &hdr, &d), MUH_OK);
	assert_non_null(strstr(hdr, "#if defined(TARGET_HOST)\n#define BLOCK 128\n"));
	assert_non_null(strstr(hdr, "TARGET_HOST: runs that name no device"));
	assert_null(strstr(hdr, "TARGET_)"));
	free(hdr);
	hh[0].device = NULL;
	assert_int_equal(patch_c_header(hh, 1, NULL, "tuned.h", &hdr, &d), MUH_OK);
	assert_non_null(strstr(hdr, "#if defined(TARGET_HOST)"));
	free(hdr);
	/* two devices that become one macro would make the second block dead */
	patch_best same[2] = {{"NVIDIA H200", 0, 2, hn, h1, NULL}, {"nvidia-h200", 0, 2, hn, h2, NULL}};
	assert_int_equal(patch_c_header(same, 2, &def, "tuned.h", &hdr, &d), MUH_EINPUT);
	assert_null(hdr);
	assert_non_null(strstr(d.msg, "both become TARGET_NVIDIA_H200"));
	patch_best hosts[2] = {{"", 0, 2, hn, h1, NULL}, {"host", 0, 2, hn, h2, NULL}};
	assert_int_equal(patch_c_header(hosts, 2, &def, "tuned.h", &hdr, &d), MUH_EINPUT);

	/* triton.Config list: valid Python with the measured values */
	char *cfgs;
	assert_int_equal(patch_triton_configs(b, 2, "", &cfgs, &d), MUH_OK);
	assert_non_null(strstr(cfgs, "triton.Config({'BLOCK_SIZE_M': 32, 'BLOCK_SIZE_N': 256, "
				     "'BLOCK_SIZE_K': 128, 'GROUP_SIZE_M': 16}, num_warps=4, "
				     "num_stages=2)"));
	snprintf(path, sizeof(path), "%s/cfg.py", dir);
	f = fopen(path, "w");
	fprintf(f, "class triton:\n    Config = staticmethod(lambda kw, **o: (kw, o))\nconfigs = %s\n"
		   "assert len(configs) == 2 and configs[1][1]['num_stages'] == 3\n",
		cfgs);
	fclose(f);
	free(cfgs);
	snprintf(cmd, sizeof(cmd), "python3 '%s/cfg.py'", dir);
	assert_int_equal(system(cmd), 0);

	/* float and string params: written as measured (they were cut to
	 * integers: 1.5 became 1, 'cg' became 0) */
	const char *fn[] = {"RATIO", "MOD"}, *fv[] = {"1.5", "cg"}, *fd[] = {"0.25", "ld"};
	patch_best fb = {"NVIDIA H200", 0, 2, fn, fv, NULL}, fdef = {"default", 0, 2, fn, fd, NULL};
	char *fh;
	assert_int_equal(patch_c_header(&fb, 1, &fdef, "tuned.h", &fh, &d), MUH_OK);
	assert_non_null(strstr(fh, "#define RATIO 1.5"));
	assert_non_null(strstr(fh, "#define MOD cg"));
	assert_non_null(strstr(fh, "#define RATIO 0.25"));
	free(fh);
	assert_int_equal(patch_triton_configs(&fb, 1, "", &fh, &d), MUH_OK);
	assert_non_null(strstr(fh, "triton.Config({'RATIO': 1.5, 'MOD': 'cg'})"));
	free(fh);
}

/* A whole-file rewrite (an engine winner's deployment file) diffs as lines:
 * two values changed far apart are two hunks, and a new value equal to
 * another line's old value does not turn the diff into moved lines. */
static void test_whole_file_line_diff(void **state)
{
	const char *old = "command:\n  - srv\n  - -b\n  - \"256\"\n  - -ub\n  - \"64\"\n  - a\n  - b\n  - c\n"
			  "  - d\n  - e\n  - f\n  - g\n  - -c\n  - \"4096\"\n  - --port\n";
	const char *new = "command:\n  - srv\n  - -b\n  - \"64\"\n  - -ub\n  - \"32\"\n  - a\n  - b\n  - c\n"
			  "  - d\n  - e\n  - f\n  - g\n  - -c\n  - \"2048\"\n  - --port\n";
	put("d.yaml", old, strlen(old));
	muh_patch *p = patch_plan_new(dir);
	muh_diag d;
	diag_clear(&d);
	assert_int_equal(patch_plan_set_file(p, "d.yaml", new, strlen(new), &d), MUH_OK);
	assert_int_equal(patch_plan_build(p, &d), MUH_OK);
	char *diff = patch_diff(p);
	assert_non_null(diff);
	size_t hunks = 0, minus = 0, plus = 0;
	for (const char *l = diff; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
		hunks += !strncmp(l, "@@ ", 3);
		minus += l[0] == '-' && strncmp(l, "--- ", 4);
		plus += l[0] == '+' && strncmp(l, "+++ ", 4);
	}
	assert_int_equal(hunks, 2);
	assert_int_equal(minus, 3);
	assert_int_equal(plus, 3);
	assert_null(strstr(diff, "-  - -ub"));
	assert_non_null(strstr(diff, "-  - \"256\"\n+  - \"64\"\n"));
	free(diff);
	/* a path outside the tree is refused */
	assert_int_equal(patch_plan_set_file(p, "../x.yaml", new, strlen(new), &d), MUH_EINPUT);
	patch_plan_free(p);
}

/* An autotune list in place: CRLF kept, a comment on the last entry kept on
 * its line, bools where the list has bools, the list's quotes and keyword
 * order; replace writes exactly the given configs. */
static void test_autotune_list(void **state)
{
	(void)state;
	const char *text = "@triton.autotune(\r\n"
			   "    configs=[\r\n"
			   "        triton.Config({'BM': 64, 'PRE': False}, num_stages=1, num_warps=4),  # a\r\n"
			   "    ],\r\n"
			   "    key=[])\r\n";
	const char *list = strchr(text, '[');
	const char *close = strstr(text, "    ],") + 4;
	const char *alt = strstr(text, "triton.Config");
	const char *altend = strstr(alt, "),  #") + 1;
	scan_alt a = {.text = "triton.Config({'BM': 64, 'PRE': False}, num_stages=1, num_warps=4)",
		      .start = (uint32_t)(alt - text), .end = (uint32_t)(altend - text), .line = 3};
	muh_knob k = {.id = "k0000000000000001", .file = "f.py", .name = "configs", .kind = "autotune",
		      .start = (uint32_t)(list - text), .end = (uint32_t)(close - text + 1), .alts = &a,
		      .nalts = 1};
	const char *names[] = {"BM", "PRE", "num_warps", "num_stages"};
	const char *v1[] = {"32", "1", "8", "2"};
	patch_best b[1] = {{"h200", 0, 4, names, v1, NULL}};
	char *out = NULL;
	muh_diag d;
	diag_clear(&d);
	assert_int_equal(patch_autotune_list(text, strlen(text), &k, b, 1, 1, "muh: from h200", &out, &d), MUH_OK);
	assert_string_equal(out, "[\r\n"
				 "        triton.Config({'BM': 64, 'PRE': False}, num_stages=1, num_warps=4),  # a\r\n"
				 "        # muh: from h200\r\n"
				 "        triton.Config({'BM': 32, 'PRE': True}, num_stages=2, num_warps=8),\r\n"
				 "    ]");
	free(out);
	assert_int_equal(patch_autotune_list(text, strlen(text), &k, b, 1, 0, NULL, &out, &d), MUH_OK);
	assert_string_equal(out, "[\r\n"
				 "        triton.Config({'BM': 32, 'PRE': True}, num_stages=2, num_warps=8),\r\n"
				 "    ]");
	free(out);
	/* a knob that is not an autotune list, and a comment over lines */
	muh_knob c = k;
	c.kind = "constant";
	assert_int_equal(patch_autotune_list(text, strlen(text), &c, b, 1, 0, NULL, &out, &d), MUH_EINPUT);
	assert_non_null(strstr(d.msg, "not an @triton.autotune configs list"));
	assert_int_equal(patch_autotune_list(text, strlen(text), &k, b, 1, 0, "a\nb", &out, &d), MUH_EINPUT);
	/* the dtype an emitter is asked for against what was measured */
	assert_true(patch_dtype_matches("fp8_w8a8", "fp8"));
	assert_true(patch_dtype_matches("BF16", "bf16"));
	assert_false(patch_dtype_matches("fp8_w8a8", "bf16"));
	assert_false(patch_dtype_matches("bf16", ""));
	assert_false(patch_dtype_matches("int8_w8a16", NULL));
	/* who reads a file: lookup-site knobs */
	muh_knob lk = {.id = "k0000000000000002", .file = "m.py", .line = 7, .kind = "lookup_site",
		       .name = "cfg", .value = "f\"E={E},N={N},device_name={d}.json\"", .verdict = SCAN_LIVE};
	const muh_knob *ks[] = {&k, &lk};
	char why[512];
	assert_int_equal(patch_engine_reads(ks, 1, "E=1,N=2,device_name=X.json", why, sizeof(why)), PATCH_READS_UNKNOWN);
	assert_int_equal(patch_engine_reads(ks, 2, "E=1,N=2,device_name=X.json", why, sizeof(why)), PATCH_READS_YES);
	assert_non_null(strstr(why, "m.py:7"));
	assert_int_equal(patch_engine_reads(ks, 2, "other.json", why, sizeof(why)), PATCH_READS_UNKNOWN);
	lk.verdict = SCAN_DEAD;
	assert_int_equal(patch_engine_reads(ks, 2, "E=1,N=2,device_name=X.json", why, sizeof(why)), PATCH_READS_NO);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_crlf_bytes_kept_and_apply_idempotent, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_refusals, setup, teardown),
		cmocka_unit_test_setup_teardown(test_whole_file_line_diff, setup, teardown),
		cmocka_unit_test_setup_teardown(test_values, setup, teardown),
		cmocka_unit_test_setup_teardown(test_parse_check, setup, teardown),
		cmocka_unit_test_setup_teardown(test_symlinks, setup, teardown),
		cmocka_unit_test_setup_teardown(test_apply_fault_loop, setup, teardown),
		cmocka_unit_test_setup_teardown(test_rollback_resume, setup, teardown),
		cmocka_unit_test_setup_teardown(test_overlay, setup, teardown),
		cmocka_unit_test_setup_teardown(test_emitters, setup, teardown),
		cmocka_unit_test(test_autotune_list),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
