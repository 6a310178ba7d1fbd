/*
 * test_patch.c — the write-back library: byte-exact edits (CRLF, tabs,
 * non-UTF-8 kept), diffs git applies, atomic apply and idempotence,
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
	const long long v1[] = {16, 64, 128, 1, 4, 3}, v2[] = {64, 128, 64, 16, 8, 4},
			v3[] = {32, 256, 128, 16, 4, 2};
	patch_best b[3] = {{"NVIDIA H200", 256, 6, names, v3},
			   {"NVIDIA H200", 1, 6, names, v1},
			   {"NVIDIA H200", 4096, 6, names, v2}};
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
	patch_best bad = {"NVIDIA H200", 8, 5, names, v1};
	assert_int_equal(patch_moe_json(&bad, 1, &json, &d), MUH_EINPUT);
	assert_non_null(strstr(d.msg, "num_stages"));

	/* C header: compiles for each target and for the default */
	const char *hn[] = {"BLOCK", "UNROLL"};
	const long long h1[] = {128, 4}, h2[] = {64, 2}, hd[] = {32, 1};
	patch_best hb[2] = {{"NVIDIA H200", 0, 2, hn, h1}, {"bi-v100", 0, 2, hn, h2}};
	patch_best def = {"default", 0, 2, hn, hd};
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
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_crlf_bytes_kept_and_apply_idempotent, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_refusals, setup, teardown),
		cmocka_unit_test_setup_teardown(test_overlay, setup, teardown),
		cmocka_unit_test_setup_teardown(test_emitters, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
