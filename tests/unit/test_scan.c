/*
 * test_scan.c — muh scan through the library API (scan.h):
 *   - the BI-V100 fork fixture (tests/fixtures/scan/bi-v100) gets the
 *     verdicts the seeds reached, with evidence chains;
 *   - messy input (syntax errors, CRLF, tabs, non-UTF-8, random bytes, a
 *     non-Python file) is scanned without stopping;
 *   - ids survive unrelated edits; byte spans point at the value;
 *   - bad input: a missing path, an empty tree, thousands of files;
 *   - the real vLLM 0.6.3 and 0.33.0 trees in third_party/ (skipped with a
 *     message when scripts/deps.sh has not fetched them).
 * Runs from the source root (ctest sets WORKING_DIRECTORY).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
/* cmocka needs the four headers above first */
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "muh/muh.h"
#include "muh/scan.h"

#define FORK "tests/fixtures/scan/bi-v100"

/* The first knob whose file ends with file_suffix, with this name and kind
 * (kind may be NULL), at line (0 = any). */
static const muh_knob *find(const muh_surface *s, const char *file_suffix, const char *name,
                            const char *kind, int line)
{
	for (size_t i = 0; i < scan_nknobs(s); i++) {
		const muh_knob *k = scan_knob(s, i);
		size_t a = strlen(k->file), b = strlen(file_suffix);
		if (a < b || strcmp(k->file + a - b, file_suffix) || strcmp(k->name, name))
			continue;
		if (kind && strcmp(k->kind, kind))
			continue;
		if (line && k->line != line)
			continue;
		return k;
	}
	return NULL;
}

static const muh_knob *must(const muh_surface *s, const char *file, const char *name,
                            const char *kind, int line)
{
	const muh_knob *k = find(s, file, name, kind, line);
	if (!k)
		fail_msg("no knob %s (%s) in %s", name, kind ? kind : "any kind", file);
	return k;
}

static void expect_verdict(const muh_knob *k, enum scan_verdict v)
{
	if (k->verdict != v)
		fail_msg("%s %s:%d: verdict %s, expected %s (why: %s)", k->name, k->file, k->line,
		         scan_verdict_name(k->verdict), scan_verdict_name(v), k->why);
}

static int evidence_has(const muh_knob *k, const char *file_suffix, const char *note_part)
{
	for (int i = 0; i < k->nevidence; i++) {
		const scan_step *st = &k->evidence[i];
		size_t a = strlen(st->file), b = strlen(file_suffix);
		if (a >= b && !strcmp(st->file + a - b, file_suffix) &&
		    strstr(st->note, note_part) && st->line > 0)
			return 1;
	}
	return 0;
}

static muh_surface *scan_ok(const char *root)
{
	muh_surface *s = NULL;
	muh_diag d;
	diag_clear(&d);
	int rc = scan_tree(root, NULL, &s, &d);
	if (rc)
		fail_msg("scan_tree(%s) = %d: %s", root, rc, d.msg);
	return s;
}

static muh_surface *scan_opt(const char *root, const scan_options *o)
{
	muh_surface *s = NULL;
	muh_diag d;
	diag_clear(&d);
	int rc = scan_tree(root, o, &s, &d);
	if (rc)
		fail_msg("scan_tree(%s) = %d: %s", root, rc, d.msg);
	return s;
}

static char *slurp(const char *path, size_t *n)
{
	FILE *f = fopen(path, "rb");
	assert_non_null(f);
	fseek(f, 0, SEEK_END);
	long len = ftell(f);
	fseek(f, 0, SEEK_SET);
	char *buf = malloc((size_t)len + 1);
	assert_non_null(buf);
	assert_int_equal(fread(buf, 1, (size_t)len, f), (size_t)len);
	buf[len] = '\0';
	fclose(f);
	*n = (size_t)len;
	return buf;
}

/* ---- the seeds' fork ------------------------------------------------------------- */

static void test_fork_use_v1_unsafe(void **state)
{
	muh_surface *s = scan_ok(FORK);
	const muh_knob *k = must(s, "attention/ops/paged_attn.py", "use_v1", "override", 0);
	expect_verdict(k, SCAN_UNSAFE);
	assert_string_equal(k->value, "True");
	assert_int_equal(k->nunsafe, 1);
	assert_string_equal(k->unsafe_values[0], "False");
	/* the chain: the branch, the call, the def, the raise in another module */
	assert_true(evidence_has(k, "paged_attn.py", "overrides the heuristic"));
	assert_true(evidence_has(k, "paged_attn.py", "use_v1 = False takes this branch"));
	assert_true(evidence_has(k, "paged_attn.py", "calls ops.paged_attention_v2"));
	assert_true(evidence_has(k, "vllm/_custom_ops.py", "def paged_attention_v2"));
	assert_true(evidence_has(k, "vllm/_custom_ops.py", "raise NotImplementedError"));
	scan_free(s);
}

static void test_fork_moe_keys(void **state)
{
	muh_surface *s = scan_ok(FORK);
	const char *f = "fused_moe/fused_moe.py";
	/* both default dicts: M live (the vendor call reads it), N/K/GROUP dead */
	int lines[2] = {0, 0}, nl = 0;
	for (size_t i = 0; i < scan_nknobs(s) && nl < 2; i++) {
		const muh_knob *k = scan_knob(s, i);
		if (!strcmp(k->name, "BLOCK_SIZE_M") && !strcmp(k->kind, "config_dict") &&
		    strstr(k->file, f) && !strcmp(k->scope, "get_default_config"))
			lines[nl++] = k->line;
	}
	assert_int_equal(nl, 2);
	for (int i = 0; i < 2; i++) {
		expect_verdict(must(s, f, "BLOCK_SIZE_M", "config_dict", lines[i]), SCAN_LIVE);
		const muh_knob *n = must(s, f, "BLOCK_SIZE_N", "config_dict", lines[i] + 1);
		expect_verdict(n, SCAN_DEAD);
		assert_true(evidence_has(n, "vllm/_custom_ops.py", "reads only 'BLOCK_SIZE_M'"));
		/* the disabled Triton path's **config does not count */
		assert_true(evidence_has(n, "fused_moe.py", "only on an unreachable path"));
		expect_verdict(must(s, f, "BLOCK_SIZE_K", "config_dict", lines[i] + 2), SCAN_DEAD);
		expect_verdict(must(s, f, "GROUP_SIZE_M", "config_dict", lines[i] + 3), SCAN_DEAD);
	}
	/* in-place updates */
	const muh_knob *upd = NULL;
	for (size_t i = 0; i < scan_nknobs(s); i++) {
		const muh_knob *k = scan_knob(s, i);
		if (!strcmp(k->scope, "fused_experts") && !strcmp(k->name, "BLOCK_SIZE_M"))
			upd = k;
	}
	assert_non_null(upd);
	expect_verdict(upd, SCAN_LIVE);
	/* K is read, but only by a test */
	assert_string_equal(must(s, f, "BLOCK_SIZE_K", "config_dict", 0)->why,
	                    "read only from tests");
	/* a dict handed whole to the vendor: cannot tell */
	expect_verdict(must(s, f, "TOPK_BLOCK", "config_dict", 0), SCAN_UNKNOWN);
	scan_free(s);
}

static void test_fork_prefill_and_capability(void **state)
{
	muh_surface *s = scan_ok(FORK);
	const char *pp = "attention/ops/prefix_prefill.py";
	const muh_knob *block = must(s, pp, "BLOCK", "constant", 0);
	expect_verdict(block, SCAN_LIVE);
	assert_int_equal(block->nalts, 2);
	assert_string_equal(block->alts[0].eval, "128");
	assert_string_equal(block->alts[1].eval, "64");
	assert_null(block->eval);
	expect_verdict(must(s, pp, "NUM_WARPS", "constant", 0), SCAN_LIVE);
	const muh_knob *bm = must(s, pp, "_fwd_kernel.BLOCK_M", "constexpr", 0);
	expect_verdict(bm, SCAN_LIVE);
	assert_non_null(bm->feeds);
	assert_string_equal(bm->feeds, block->id);
	expect_verdict(must(s, pp, "_fwd_kernel.num_warps", "constexpr", 0), SCAN_LIVE);
	expect_verdict(must(s, pp, "_fwd_kernel.UNUSED_FLAG", "constexpr", 0), SCAN_DEAD);
	expect_verdict(must(s, pp, "_UNUSED_TILE", "constant", 0), SCAN_DEAD);
	assert_string_equal(must(s, pp, "_UNUSED_TILE", "constant", 0)->why, "never read");

	const muh_knob *smem =
	    must(s, "vllm/_custom_ops.py", "get_max_shared_memory", "capability", 0);
	assert_string_equal(smem->value, "32 * 1024");
	assert_string_equal(smem->eval, "32768");
	expect_verdict(smem, SCAN_LIVE); /* the Triton prefill path reads it */

	/* read only into max_num_partitions, which feeds only the overwritten
	 * heuristic and the else branch that `use_v1 = True` disables (issue 12:
	 * the seeds' map called it live) */
	const muh_knob *ps = must(s, "paged_attn.py", "_PARTITION_SIZE", "constant", 0);
	expect_verdict(ps, SCAN_DEAD);
	assert_true(evidence_has(ps, "paged_attn.py", "max_num_partitions is assigned here"));
	assert_true(evidence_has(ps, "paged_attn.py", "use_v1 = True here"));
	assert_true(evidence_has(ps, "paged_attn.py", "never runs"));
	expect_verdict(must(s, "vllm/_custom_ops.py", "DEBUG_TILE", "constant", 0), SCAN_DEAD);
	assert_true(evidence_has(must(s, "vllm/_custom_ops.py", "DEBUG_TILE", "constant", 0),
	                         "tests/test_custom_ops.py", "tests"));
	scan_free(s);
}

static void test_fork_dead_paths_and_platform(void **state)
{
	muh_surface *s = scan_ok(FORK);
	const char *f = "fused_moe/fused_moe.py";
	/* under `if USE_TRITON_MOE:` with the constant imported from envs_fork */
	const muh_knob *st = must(s, f, "TRITON_MOE_STAGES", "constant", 0);
	expect_verdict(st, SCAN_DEAD);
	/* after a return */
	expect_verdict(must(s, f, "LEGACY_TILE", "constant", 0), SCAN_DEAD);
	/* guarded import that never happens */
	expect_verdict(must(s, "triton_moe.py", "TRITON_MOE_BLOCK", "constant", 0), SCAN_DEAD);
	/* ROCm only: by the importer's path, and by a platform check */
	const muh_knob *at =
	    must(s, "triton_flash_attention.py", "attn_fwd.configs", "autotune", 0);
	expect_verdict(at, SCAN_PLATFORM);
	assert_int_equal(at->nalts, 2);
	expect_verdict(
	    must(s, "triton_flash_attention.py", "get_autotune_configs()", "autotune", 0),
	    SCAN_PLATFORM);
	expect_verdict(must(s, "wave_attention.py", "WAVES_PER_EU", "constant", 0), SCAN_PLATFORM);
	/* JSON configs by name pattern; a non-matching JSON is no knob. A file
	 * named for a device is platform until --device says which one runs */
	expect_verdict(must(s, "device_name=Iluvatar_BI-V100.json",
	                    "E=8,N=1024,device_name=Iluvatar_BI-V100.json", "json_config", 0),
	               SCAN_PLATFORM);
	{
		scan_options o = {0};
		o.device = "Iluvatar BI-V100";
		muh_surface *sd = scan_opt(FORK, &o);
		expect_verdict(must(sd, "device_name=Iluvatar_BI-V100.json",
		                    "E=8,N=1024,device_name=Iluvatar_BI-V100.json", "json_config", 0),
		               SCAN_LIVE);
		o.device = "NVIDIA H200";
		scan_free(sd);
		sd = scan_opt(FORK, &o);
		expect_verdict(must(sd, "device_name=Iluvatar_BI-V100.json",
		                    "E=8,N=1024,device_name=Iluvatar_BI-V100.json", "json_config", 0),
		               SCAN_PLATFORM);
		/* the lookup site is a knob of its own */
		const muh_knob *lk =
		    must(sd, "fused_moe/fused_moe.py", "E=*,N=*,device_name=*.json", "config_lookup", 0);
		expect_verdict(lk, SCAN_LIVE);
		assert_int_equal(lk->lookup_files, 1);
		scan_free(sd);
	}
	assert_null(find(s, "README.json", "README.json", NULL, 0));
	/* engine arguments: class defaults and the deployment command line */
	expect_verdict(must(s, "engine/arg_utils.py", "max_num_seqs", "engine_arg", 0), SCAN_LIVE);
	const muh_knob *dep = must(s, "computility-run.yaml", "max_num_seqs", "engine_arg", 0);
	assert_string_equal(dep->value, "1");
	expect_verdict(dep, SCAN_LIVE);
	expect_verdict(must(s, "computility-run.yaml", "kv_cache_dtype", "engine_arg", 0),
	               SCAN_UNKNOWN);
	const muh_knob *eq = must(s, "deploy-debug.yaml", "max_num_seqs", "engine_arg", 0);
	assert_string_equal(eq->value, "4");
	expect_verdict(eq, SCAN_LIVE);
	const muh_knob *neg =
	    must(s, "deploy-debug.yaml", "no_enable_chunked_prefill", "engine_arg", 0);
	expect_verdict(neg, SCAN_LIVE);
	assert_string_equal(neg->why, "negates EngineArgs.enable_chunked_prefill");
	scan_free(s);
}

/* `kernel[grid](..., **config)` reads every key, in-place updates too. */
static void test_splat(void **state)
{
	muh_surface *s = scan_ok("tests/fixtures/scan/splat");
	const char *keys[] = {"BLOCK_SIZE_M", "BLOCK_SIZE_N", "GROUP_SIZE_M"};
	for (int i = 0; i < 3; i++) {
		const muh_knob *k = must(s, "moe/layer.py", keys[i], "config_dict", 5);
		expect_verdict(k, SCAN_LIVE);
		/* the dict default_config() returns flows into the launch */
		assert_non_null(strstr(k->why, "read: **config into moe_gemm[grid]"));
	}
	expect_verdict(must(s, "moe/layer.py", "GROUP_SIZE_M", "config_dict", 10), SCAN_LIVE);
	assert_int_equal(scan_nknobs(s), 4);
	scan_free(s);
}

/* The byte span of a value is exactly the value's text in the file. */
static void test_spans(void **state)
{
	muh_surface *s = scan_ok(FORK);
	const char *names[][3] = {{"paged_attn.py", "use_v1", "True"},
	                          {"prefix_prefill.py", "NUM_WARPS", "8"},
	                          {"computility-run.yaml", "max_num_seqs", "1"},
	                          {"vllm/_custom_ops.py", "get_max_shared_memory", "32 * 1024"}};
	for (int i = 0; i < 4; i++) {
		const muh_knob *k = must(s, names[i][0], names[i][1], NULL, 0);
		char path[1024];
		snprintf(path, sizeof(path), "%s/%s", FORK, k->file);
		size_t n;
		char *txt = slurp(path, &n);
		assert_true(k->end <= n && k->start < k->end);
		assert_int_equal(k->end - k->start, strlen(names[i][2]));
		assert_memory_equal(txt + k->start, names[i][2], k->end - k->start);
		free(txt);
	}
	/* the alternatives of BLOCK = 128 if ... else 64 (a CRLF file) */
	const muh_knob *b = must(s, "prefix_prefill.py", "BLOCK", "constant", 0);
	size_t n;
	char *txt = slurp(FORK "/vllm/attention/ops/prefix_prefill.py", &n);
	assert_memory_equal(txt + b->alts[0].start, "128", 3);
	assert_memory_equal(txt + b->alts[1].start, "64", 2);
	free(txt);
	scan_free(s);
}

static int cp_tree(const char *from, const char *to)
{
	char cmd[2048];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s' && cp -r '%s' '%s'", to, from, to);
	return system(cmd);
}

/* Ids are the same run to run, and survive an edit above the knob. */
static void test_ids_stable(void **state)
{
	char dir[] = "/tmp/muh_scan_ids_XXXXXX";
	assert_non_null(mkdtemp(dir));
	char tree[600];
	snprintf(tree, sizeof(tree), "%s/t", dir);
	assert_int_equal(cp_tree(FORK, tree), 0);
	muh_surface *a = scan_ok(tree);
	muh_surface *b = scan_ok(tree);
	assert_int_equal(scan_nknobs(a), scan_nknobs(b));
	for (size_t i = 0; i < scan_nknobs(a); i++)
		assert_string_equal(scan_knob(a, i)->id, scan_knob(b, i)->id);
	/* ids are unique */
	for (size_t i = 0; i < scan_nknobs(a); i++)
		for (size_t j = i + 1; j < scan_nknobs(a); j++)
			if (!strcmp(scan_knob(a, i)->id, scan_knob(a, j)->id))
				fail_msg("duplicate id %s (%s, %s)", scan_knob(a, i)->id,
				         scan_knob(a, i)->name, scan_knob(a, j)->name);
	/* insert lines at the top of paged_attn.py: lines move, ids do not */
	char path[700];
	snprintf(path, sizeof(path), "%s/vllm/attention/ops/paged_attn.py", tree);
	size_t n;
	char *txt = slurp(path, &n);
	FILE *f = fopen(path, "wb");
	assert_non_null(f);
	fputs("# a new comment\n\nimport os\n", f);
	fwrite(txt, 1, n, f);
	fclose(f);
	free(txt);
	muh_surface *c = scan_ok(tree);
	const muh_knob *k1 = must(a, "paged_attn.py", "use_v1", NULL, 0);
	const muh_knob *k2 = must(c, "paged_attn.py", "use_v1", NULL, 0);
	assert_string_equal(k1->id, k2->id);
	assert_int_equal(k2->line, k1->line + 3);
	assert_non_null(scan_find(c, k1->id));
	assert_true(k1->file_hash != k2->file_hash);
	scan_free(a);
	scan_free(b);
	scan_free(c);
	char cmd[700];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);
}

/* ---- messy and bad input ------------------------------------------------------------ */

static void test_messy(void **state)
{
	muh_surface *s = scan_ok("tests/fixtures/scan/messy");
	/* syntax errors are reported (with the line) and the rest is scanned */
	assert_true(scan_ndiags(s) >= 2);
	int saw_bad = 0;
	for (size_t i = 0; i < scan_ndiags(s); i++) {
		const muh_diag *d = scan_diag(s, i);
		if (strstr(d->file, "bad_syntax.py")) {
			saw_bad = 1;
			assert_int_equal(d->line, 2);
			assert_string_equal(d->src, "x = = 3");
		}
	}
	assert_true(saw_bad);
	expect_verdict(must(s, "bad_syntax.py", "BROKEN_BEFORE", "constant", 0), SCAN_LIVE);
	expect_verdict(must(s, "bad_syntax.py", "BROKEN_AFTER", "constant", 0), SCAN_LIVE);
	expect_verdict(must(s, "latin1.py", "LATIN_TILE", "constant", 0), SCAN_LIVE);
	expect_verdict(must(s, "tabs.py", "TAB_TILE", "constant", 0), SCAN_LIVE);
	/* `global X; X = 0` in a function reassigns the module knob: no new knob */
	int nofl = 0;
	for (size_t i = 0; i < scan_nknobs(s); i++)
		nofl += !strcmp(scan_knob(s, i)->name, "_OFFLOAD_BYTES");
	assert_int_equal(nofl, 1);
	expect_verdict(must(s, "empty_consumer.py", "BLOCK_M", "config_dict", 0), SCAN_DEAD);
	/* notes.txt is not Python: ignored */
	assert_null(find(s, "notes.txt", "BLOCK", NULL, 0));
	scan_free(s);
}

static void test_bad_input(void **state)
{
	muh_surface *s = (muh_surface *)1;
	muh_diag d;
	diag_clear(&d);
	assert_int_equal(scan_tree("tests/fixtures/scan/does-not-exist", NULL, &s, &d), MUH_EINPUT);
	assert_null(s);
	assert_non_null(strstr(d.msg, "does-not-exist"));
	assert_non_null(strstr(d.msg, "No such file"));
	diag_clear(&d);
	assert_int_equal(scan_tree("tests/fixtures/scan/messy/pkg/notes.txt", NULL, &s, &d),
	                 MUH_EINPUT);
	assert_non_null(strstr(d.msg, "not a directory or a .py file"));
	/* one .py file is a tree of one */
	s = scan_ok("tests/fixtures/scan/messy/pkg/tabs.py");
	assert_int_equal(scan_nfiles(s), 1);
	must(s, "tabs.py", "TAB_TILE", NULL, 0);
	scan_free(s);
	/* empty tree */
	char dir[] = "/tmp/muh_scan_empty_XXXXXX";
	assert_non_null(mkdtemp(dir));
	s = scan_ok(dir);
	assert_int_equal(scan_nknobs(s), 0);
	assert_int_equal(scan_nfiles(s), 0);
	char *json = scan_to_json(s);
	assert_non_null(json);
	assert_non_null(strstr(json, "\"knobs\":\t[]"));
	free(json);
	scan_free(s);
	rmdir(dir);
}

/* A generated tree of 3000 files in 30 packages. */
static void test_many_files(void **state)
{
	char dir[] = "/tmp/muh_scan_many_XXXXXX";
	assert_non_null(mkdtemp(dir));
	for (int p = 0; p < 30; p++) {
		char pkg[600];
		snprintf(pkg, sizeof(pkg), "%s/pkg%d", dir, p);
		assert_int_equal(mkdir(pkg, 0777), 0);
		for (int i = 0; i < 100; i++) {
			char path[700];
			snprintf(path, sizeof(path), "%s/m%d.py", pkg, i);
			FILE *f = fopen(path, "w");
			assert_non_null(f);
			fprintf(f,
			        "from pkg%d.m%d import TILE_%d\n\nTILE_%d = %d\n\n\ndef f():\n    "
			        "return TILE_%d\n",
			        p, (i + 1) % 100, (i + 1) % 100, i, 16 << (i % 4), (i + 1) % 100);
			fclose(f);
		}
	}
	muh_surface *s = scan_ok(dir);
	assert_int_equal(scan_nfiles(s), 3000);
	assert_int_equal(scan_nknobs(s), 3000);
	const muh_knob *k = must(s, "pkg7/m42.py", "TILE_42", "constant", 0);
	assert_string_equal(k->eval, "64");
	scan_free(s);
	char cmd[700];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);
}

/* ---- real vLLM trees ----------------------------------------------------------------- */

static muh_surface *real_tree(const char *root)
{
	struct stat st;
	if (stat(root, &st)) {
		print_message("skipped: %s missing (run scripts/deps.sh)\n", root);
		return NULL;
	}
	return scan_ok(root);
}

static void test_vllm_063(void **state)
{
	muh_surface *s = real_tree("third_party/vllm-0.6.3");
	if (!s)
		return;
	const char *pp = "vllm/attention/ops/prefix_prefill.py";
	expect_verdict(must(s, pp, "BLOCK", "constant", 0), SCAN_LIVE);
	expect_verdict(must(s, pp, "NUM_WARPS", "constant", 0), SCAN_LIVE);
	const char *fm = "vllm/model_executor/layers/fused_moe/fused_moe.py";
	const char *keys[] = {"BLOCK_SIZE_M", "BLOCK_SIZE_N", "BLOCK_SIZE_K", "GROUP_SIZE_M"};
	for (int i = 0; i < 4; i++) {
		const muh_knob *k = must(s, fm, keys[i], "config_dict", 0);
		expect_verdict(k, SCAN_LIVE);
		assert_string_equal(k->why, "read: **config into fused_moe_kernel[grid]");
	}
	/* the MoE JSON configs are each for one device: platform until --device
	 * names it; with --device the H100 ones are live, the others platform */
	int njson = 0;
	for (size_t i = 0; i < scan_nknobs(s); i++) {
		const muh_knob *k = scan_knob(s, i);
		if (strcmp(k->kind, "json_config"))
			continue;
		njson++;
		expect_verdict(k, SCAN_PLATFORM);
		assert_non_null(strstr(k->file, "fused_moe/configs/E="));
	}
	assert_true(njson >= 50);
	{
		scan_options o = {0};
		o.device = "NVIDIA H100 80GB HBM3";
		muh_surface *sd = scan_opt("third_party/vllm-0.6.3", &o);
		int nlive = 0, nplat = 0;
		for (size_t i = 0; i < scan_nknobs(sd); i++) {
			const muh_knob *k = scan_knob(sd, i);
			if (strcmp(k->kind, "json_config"))
				continue;
			int h100 = strstr(k->file, "device_name=NVIDIA_H100_80GB_HBM3") != NULL;
			expect_verdict(k, h100 ? SCAN_LIVE : SCAN_PLATFORM);
			nlive += h100;
			nplat += !h100;
		}
		assert_true(nlive >= 10 && nplat >= 10);
		const muh_knob *lk = must(sd, fm, "E=*,N=*,device_name=*.json", "config_lookup", 0);
		expect_verdict(lk, SCAN_LIVE);
		assert_true(lk->lookup_files >= 50);
		scan_free(sd);
	}
	expect_verdict(
	    must(s, "vllm/attention/ops/paged_attn.py", "_PARTITION_SIZE", "constant", 0),
	    SCAN_LIVE);
	const muh_knob *at = must(s, "vllm/attention/ops/triton_flash_attention.py",
	                          "attn_fwd.configs", "autotune", 0);
	expect_verdict(at, SCAN_PLATFORM);
	assert_true(at->nalts >= 8);
	assert_true(evidence_has(at, "vllm/attention/backends/rocm_flash_attn.py", "importer"));
	const muh_knob *g1 =
	    must(s, "vllm/_custom_ops.py", "get_max_shared_memory_per_block_device_attribute",
	         "capability", 0);
	expect_verdict(g1, SCAN_DEAD);
	assert_non_null(strstr(g1->why, "only from tests"));
	expect_verdict(must(s, "vllm/utils.py", "get_max_shared_memory_bytes", "capability", 0),
	               SCAN_DEAD);
	/* unsafe in upstream: the two values checked by reading the source
	 * (issue 12's unsafe values): `assert self.cpu_offload_gb >= 0`
	 * (engine/arg_utils.py:895) and PromptAdapterConfig's
	 * `if self.max_prompt_adapter_token == 0: raise ValueError` (config.py:1590);
	 * every other unsafe knob is an argument whose parser accepts a fixed
	 * set (choices=, issue 28): `not in (...)`, the set as evidence */
	int nunsafe = 0, nchoices = 0;
	for (size_t i = 0; i < scan_nknobs(s); i++) {
		const muh_knob *k = scan_knob(s, i);
		if (k->verdict != SCAN_UNSAFE)
			continue;
		if (!strcmp(k->name, "cpu_offload_gb") || !strcmp(k->name, "max_prompt_adapter_token")) {
			nunsafe++;
			continue;
		}
		int set = k->nunsafe >= 1 && !strncmp(k->unsafe_values[0], "not in (", 8);
		int ev = 0;
		for (int j = 0; j < k->nevidence; j++)
			ev |= strstr(k->evidence[j].note, " accepts only ") != NULL;
		if (!set || !ev || strcmp(k->kind, "engine_arg"))
			fail_msg("unexpected unsafe knob %s (%s)", k->name, k->why);
		nchoices++;
	}
	assert_int_equal(nunsafe, 2);
	assert_true(nchoices >= 10);
	const muh_knob *bs = must(s, "vllm/engine/arg_utils.py", "block_size", "engine_arg", 0);
	expect_verdict(bs, SCAN_UNSAFE);
	assert_string_equal(bs->unsafe_values[0], "not in (8, 16, 32)");
	const muh_knob *cg = must(s, "vllm/engine/arg_utils.py", "cpu_offload_gb", "engine_arg", 0);
	assert_string_equal(cg->unsafe_values[0], "< 0");
	assert_true(evidence_has(cg, "vllm/engine/arg_utils.py", "assert self.cpu_offload_gb >= 0"));
	scan_free(s);
}

static void test_vllm_033(void **state)
{
	muh_surface *s = real_tree("third_party/vllm-0.33.0");
	if (!s)
		return;
	const char *fm = "vllm/model_executor/layers/fused_moe/fused_moe.py";
	const muh_knob *n = must(s, fm, "BLOCK_SIZE_N", "config_dict", 0);
	expect_verdict(n, SCAN_LIVE);
	int njson = 0;
	for (size_t i = 0; i < scan_nknobs(s); i++) {
		const muh_knob *k = scan_knob(s, i);
		if (!strcmp(k->kind, "json_config") && strstr(k->file, "fused_moe/configs/E=")) {
			njson++;
			expect_verdict(k, strstr(k->file, "device_name=") ? SCAN_PLATFORM : SCAN_LIVE);
		}
	}
	assert_true(njson >= 100);
	/* in 0.33.0 the shared-memory query has a live caller (mem_utils) */
	expect_verdict(must(s, "vllm/_custom_ops.py",
	                    "get_max_shared_memory_per_block_device_attribute", "capability", 0),
	               SCAN_LIVE);
	expect_verdict(must(s, "vllm/engine/arg_utils.py", "max_num_seqs", "engine_arg", 0),
	               SCAN_LIVE);
	scan_free(s);
}

/* ---- environment registries (tests/fixtures/scan/envs, src/scan/scan_env.c) ----------- */

#define ENVS "tests/fixtures/scan/envs"

/* Each variable of the fixture's registry: the default as the server computes
 * it unset, the type, the definition (key) line, the verdict, and where it is
 * read (file:line, NULL when nowhere). */
static void test_env_registry(void **state)
{
	(void)state;
	muh_surface *s = scan_ok(ENVS);
	static const struct {
		const char *name, *eval, *type;
		int def_line;
		enum scan_verdict v;
		const char *read_file;
		int read_line;
		const char *read_note;
	} cases[] = {
	    {"TINY_MAX_BATCH", "256", "int", 16, SCAN_LIVE, "tinyserve/scheduler.py", 6,
	     "read as tenv.TINY_MAX_BATCH"},
	    {"TINY_USE_FAST_PATH", "False", "bool", 18, SCAN_LIVE, "tinyserve/scheduler.py", 7,
	     "read as tenv.TINY_USE_FAST_PATH"},
	    {"TINY_MOE_CHUNK", "32768", "int", 20, SCAN_LIVE, "tinyserve/kernels/moe.py", 5,
	     "read as envs.TINY_MOE_CHUNK"},
	    {"TINY_SPILL_RATIO", "0.25", "float", 22, SCAN_LIVE, "tinyserve/kernels/moe.py", 6,
	     "read as envs.TINY_SPILL_RATIO"},
	    {"TINY_ATTN_BACKEND", "None", "str|None", 24, SCAN_LIVE, "tinyserve/attn.py", 5,
	     "os.getenv(\"TINY_ATTN_BACKEND\")"},
	    {"TINY_HOST", "'127.0.0.1'", "str", 26, SCAN_LIVE, "tinyserve/server.py", 12,
	     "read as tenv.TINY_HOST"},
	    {"TINY_LOG_LEVEL", "'info'", "str", 28, SCAN_LIVE, "tinyserve/server.py", 8,
	     "os.environ.get(\"TINY_LOG_LEVEL\")"},
	    {"TINY_STRICT", "False", "bool", 30, SCAN_LIVE, "tinyserve/server.py", 13,
	     "in os.environ"},
	    {"TINY_DEBUG_DUMP", "False", "bool", 32, SCAN_DEAD, "tests/test_envs.py", 5,
	     "reached only from tests"},
	    {"TINY_PREFETCH_DEPTH", "2", "int", 34, SCAN_DEAD, NULL, 0, NULL},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const muh_knob *k = must(s, "tinyserve/envs.py", cases[i].name, "env", 0);
		expect_verdict(k, cases[i].v);
		assert_string_equal(k->scope, "<module>");
		if (!k->eval || strcmp(k->eval, cases[i].eval))
			fail_msg("%s: default %s, expected %s", k->name, k->eval ? k->eval : "NULL",
			         cases[i].eval);
		char def[160];
		snprintf(def, sizeof(def), "registry ENV_REGISTRY: %s, default %s", cases[i].type,
		         cases[i].eval);
		assert_true(k->nevidence >= 1);
		assert_string_equal(k->evidence[0].file, "tinyserve/envs.py");
		assert_int_equal(k->evidence[0].line, cases[i].def_line);
		if (!strstr(k->evidence[0].note, def))
			fail_msg("%s: definition step '%s' lacks '%s'", k->name,
			         k->evidence[0].note, def);
		/* the value span is the default (or the read) on the entry's lambda line */
		assert_int_equal(k->line, cases[i].def_line + 1);
		assert_true(k->end > k->start);
		if (cases[i].read_file) {
			assert_int_equal(k->nevidence, 2);
			assert_string_equal(k->evidence[1].file, cases[i].read_file);
			assert_int_equal(k->evidence[1].line, cases[i].read_line);
			if (!strstr(k->evidence[1].note, cases[i].read_note))
				fail_msg("%s: read step '%s' lacks '%s'", k->name,
				         k->evidence[1].note, cases[i].read_note);
		} else {
			assert_int_equal(k->nevidence, 1);
			assert_string_equal(
			    k->why, "defined in tinyserve/envs.py:34, read nowhere in the tree");
		}
	}
	/* the TYPE_CHECKING declarations are replaced by the env knobs */
	assert_null(find(s, "tinyserve/envs.py", "TINY_MAX_BATCH", "constant", 0));
	assert_null(find(s, "tinyserve/envs.py", "TINY_MOE_CHUNK", "constant", 0));
	/* the fallback of the `or` chain is named */
	const muh_knob *host = must(s, "tinyserve/envs.py", "TINY_HOST", "env", 0);
	assert_non_null(strstr(host->evidence[0].note, "falls back to HOST_ADDR"));
	/* the value span of TINY_MOE_CHUNK is its default literal "32768" */
	size_t n;
	char *src = slurp(ENVS "/tinyserve/envs.py", &n);
	const muh_knob *chunk = must(s, "tinyserve/envs.py", "TINY_MOE_CHUNK", "env", 0);
	assert_true(chunk->end <= n);
	assert_int_equal(chunk->end - chunk->start, 7);
	assert_memory_equal(src + chunk->start, "\"32768\"", 7);
	free(src);

	/* deployment env entries take the registry's verdicts */
	const muh_knob *d1 = must(s, "deploy.yaml", "TINY_MOE_CHUNK", "engine_arg", 0);
	expect_verdict(d1, SCAN_LIVE);
	assert_string_equal(d1->scope, "<deployment>");
	assert_string_equal(d1->value, "16384");
	assert_string_equal(d1->why, "sets TINY_MOE_CHUNK (tinyserve/envs.py:20, read at "
	                             "tinyserve/kernels/moe.py:5)");
	assert_true(
	    evidence_has(d1, "deploy.yaml", "sets the environment variable TINY_MOE_CHUNK"));
	assert_true(evidence_has(d1, "tinyserve/envs.py", "default 32768"));
	assert_true(evidence_has(d1, "tinyserve/kernels/moe.py", "envs.TINY_MOE_CHUNK"));
	const muh_knob *d2 = must(s, "deploy.yaml", "TINY_PREFETCH_DEPTH", "engine_arg", 0);
	expect_verdict(d2, SCAN_DEAD);
	assert_string_equal(
	    d2->why, "sets TINY_PREFETCH_DEPTH (tinyserve/envs.py:34, read nowhere in the tree)");
	const muh_knob *d3 = must(s, "deploy.yaml", "VENDOR_FAST_MATH", "engine_arg", 0);
	expect_verdict(d3, SCAN_UNKNOWN);
	assert_non_null(strstr(d3->why, "no environment registry defines it and nothing in the "
	                                "tree reads it"));
	/* the server flag next to them is untouched */
	expect_verdict(must(s, "deploy.yaml", "max_num_seqs", "engine_arg", 0), SCAN_UNKNOWN);
	/* JSON carries the new kind */
	char *json = scan_to_json(s);
	assert_non_null(json);
	assert_non_null(strstr(json, "\"kind\":\t\"env\""));
	free(json);
	scan_free(s);
}

/* vLLM 0.6.3's envs.py: VLLM_FUSED_MOE_CHUNK_SIZE is
 * `int(os.getenv("VLLM_FUSED_MOE_CHUNK_SIZE", "32768"))` (envs.py:364-365),
 * read as envs.VLLM_FUSED_MOE_CHUNK_SIZE in fused_moe.py; VLLM_USE_V1-style
 * bools evaluate through bool(int()); setup.py reads envs loaded by path. */
static void test_env_vllm_063(void **state)
{
	(void)state;
	muh_surface *s = real_tree("third_party/vllm-0.6.3");
	if (!s)
		return;
	const muh_knob *k = must(s, "vllm/envs.py", "VLLM_FUSED_MOE_CHUNK_SIZE", "env", 0);
	expect_verdict(k, SCAN_LIVE);
	assert_string_equal(k->eval, "32768");
	assert_int_equal(k->evidence[0].line, 364);
	assert_non_null(strstr(k->evidence[0].note, ": int, default 32768"));
	assert_true(evidence_has(k, "vllm/model_executor/layers/fused_moe/fused_moe.py",
	                         "envs.VLLM_FUSED_MOE_CHUNK_SIZE"));
	const muh_knob *p = must(s, "vllm/envs.py", "VLLM_USE_TRITON_AWQ", "env", 0);
	assert_string_equal(p->eval, "False");
	expect_verdict(p, SCAN_LIVE);
	const muh_knob *h = must(s, "vllm/envs.py", "VLLM_HOST_IP", "env", 0);
	assert_string_equal(h->eval, "''");
	assert_non_null(strstr(h->evidence[0].note, "falls back to HOST_IP"));
	assert_string_equal(must(s, "vllm/envs.py", "VLLM_PLUGINS", "env", 0)->eval, "None");
	expect_verdict(must(s, "vllm/envs.py", "VLLM_TARGET_DEVICE", "env", 0), SCAN_LIVE);
	expect_verdict(must(s, "vllm/envs.py", "VLLM_NO_DEPRECATION_WARNING", "env", 0), SCAN_DEAD);
	/* the TYPE_CHECKING declarations are gone */
	assert_null(find(s, "vllm/envs.py", "VLLM_FUSED_MOE_CHUNK_SIZE", "constant", 0));
	scan_free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_fork_use_v1_unsafe),
	    cmocka_unit_test(test_fork_moe_keys),
	    cmocka_unit_test(test_fork_prefill_and_capability),
	    cmocka_unit_test(test_fork_dead_paths_and_platform),
	    cmocka_unit_test(test_splat),
	    cmocka_unit_test(test_spans),
	    cmocka_unit_test(test_ids_stable),
	    cmocka_unit_test(test_messy),
	    cmocka_unit_test(test_bad_input),
	    cmocka_unit_test(test_many_files),
	    cmocka_unit_test(test_vllm_063),
	    cmocka_unit_test(test_vllm_033),
	    cmocka_unit_test(test_env_registry),
	    cmocka_unit_test(test_env_vllm_063),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
