/*
 * test_deploy.c — deployment files read as the server reads them, and
 * written back one argument at a time.
 *
 * The fixtures in tests/fixtures/deploy/ rebuild what the old byte heuristic
 * got wrong: a CRLF YAML argv list where a value-less --trust-remote-code was
 * read with the value "-tp" (so -tp 4 was lost) and a trailing
 * --enable-prefix-caching with the value "env:", after which a patch wrote
 * False over YAML structure. Here every argument must be read right (name,
 * flag, value, type, line), and every edit must: apply with `git apply
 * --check`, leave the file parseable, change exactly one argument (checked by
 * reading both again and comparing), keep CRLF; False removes a flag, True
 * adds it, an absent argument is added, and values that would break the
 * file are refused.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "muh/deploy.h"
#include "muh/fileio.h"
#include "muh/muh.h"

#define FIX "tests/fixtures/deploy/"

static deploy_file *load(const char *path)
{
	deploy_file *f = NULL;
	muh_diag d;
	int rc = deploy_load(path, NULL, &f, &d);
	if (rc)
		fprintf(stderr, "%s:%d:%d: %s\n", d.file, d.line, d.col, d.msg);
	assert_int_equal(rc, MUH_OK);
	assert_non_null(f);
	return f;
}

struct want {
	const char *name, *flag, *value, *type;
	enum deploy_kind kind;
	int line;
};

/* f's arguments are exactly w[0..n), in order. */
static void expect_args(const deploy_file *f, const struct want *w, size_t n)
{
	for (size_t i = 0; i < f->nargs && i < n; i++) {
		const deploy_arg *a = &f->args[i];
		if (strcmp(a->name, w[i].name) || strcmp(a->value, w[i].value) ||
		    strcmp(a->flag, w[i].flag) || strcmp(a->type, w[i].type) ||
		    a->kind != w[i].kind || a->line != w[i].line)
			fail_msg("%s: arg %zu is %s %s=%s (%s, %s, line %d); want %s %s=%s (%s, %s, "
				 "line %d)",
				 f->path, i, deploy_kind_name(a->kind), a->name, a->value, a->flag,
				 a->type, a->line, deploy_kind_name(w[i].kind), w[i].name, w[i].value,
				 w[i].flag, w[i].type, w[i].line);
		/* the value span holds the value's text (flags: the flag) */
		if (a->val_start != (size_t)-1 && a->kind == DEPLOY_OPT)
			assert_memory_equal(f->text + a->val_start, a->value, strlen(a->value));
	}
	assert_int_equal(f->nargs, n);
}

/* Runs `git apply --check` of the diff from f's text to nt. */
static void expect_git_applies(const deploy_file *f, const char *nt, size_t nl)
{
	if (nl == f->len && !memcmp(nt, f->text, nl))
		return; /* no change, no diff */
	char dir[] = "/tmp/muh-test-deploy-XXXXXX";
	assert_non_null(mkdtemp(dir));
	char a[128], b[128], cmd[1024];
	snprintf(a, sizeof(a), "%s/a", dir);
	snprintf(b, sizeof(b), "%s/b", dir);
	FILE *fa = fopen(a, "wb"), *fb = fopen(b, "wb");
	assert_non_null(fa);
	assert_non_null(fb);
	assert_int_equal(fwrite(f->text, 1, f->len, fa), f->len);
	assert_int_equal(fwrite(nt, 1, nl, fb), nl);
	fclose(fa);
	fclose(fb);
	snprintf(cmd, sizeof(cmd),
		 "cd %s && cp a file && diff -u --label a/file --label b/file a b > p.diff; "
		 "[ $? -le 1 ] && git apply --check p.diff && git apply p.diff && cmp -s file b",
		 dir);
	int rc = system(cmd);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd)) {
	}
	if (rc)
		fail_msg("%s: the diff does not apply with git apply", f->path);
}

static size_t count(const char *t, size_t n, const char *s)
{
	size_t c = 0, l = strlen(s);
	for (size_t i = 0; i + l <= n; i++)
		c += !memcmp(t + i, s, l);
	return c;
}

/* Sets name=value; checks everything the acceptance asks; returns the new
 * file (caller frees) for further checks. */
static deploy_file *set_ok(const deploy_file *f, const char *name, const char *value)
{
	char *nt = NULL;
	size_t nl = 0;
	muh_diag d;
	int rc = deploy_set(f, name, value, &nt, &nl, &d);
	if (rc)
		fail_msg("%s: set %s=%s: %s", f->path, name, value, d.msg);
	assert_non_null(nt);
	assert_int_equal(strlen(nt), nl);
	expect_git_applies(f, nt, nl);
	/* CRLF kept: every line of a CRLF file still ends in CRLF */
	if (f->crlf)
		assert_int_equal(count(nt, nl, "\n"), count(nt, nl, "\r\n"));
	deploy_file *g = NULL;
	rc = deploy_parse(f->path, nt, nl, f->schema, &g, &d);
	if (rc)
		fail_msg("%s: after %s=%s it does not parse: %s", f->path, name, value, d.msg);
	free(nt);
	/* exactly one argument differs */
	const deploy_arg *was = deploy_find(f, name), *now = deploy_find(g, name);
	const char *canon = was ? was->name : now ? now->name : name;
	size_t i = 0, j = 0;
	for (;;) {
		while (i < f->nargs && !strcmp(f->args[i].name, canon))
			i++;
		while (j < g->nargs && !strcmp(g->args[j].name, canon))
			j++;
		if (i >= f->nargs || j >= g->nargs)
			break;
		assert_string_equal(f->args[i].name, g->args[j].name);
		assert_string_equal(f->args[i].value, g->args[j].value);
		assert_int_equal(f->args[i].kind, g->args[j].kind);
		i++;
		j++;
	}
	assert_int_equal(i, f->nargs);
	assert_int_equal(j, g->nargs);
	assert_int_equal(g->argc >= g->first_arg, 1);
	return g;
}

static void set_refused(const deploy_file *f, const char *name, const char *value)
{
	char *nt = (char *)"untouched";
	size_t nl = 1;
	muh_diag d;
	int rc = deploy_set(f, name, value, &nt, &nl, &d);
	if (rc != MUH_EINPUT)
		fail_msg("%s: set %s=%s was accepted (rc %d)", f->path, name, value, rc);
	assert_null(nt);
	assert_true(strstr(d.msg, "refusing") != NULL);
}

/* The bug: a CRLF argv list with -tp 4, value-less flags before flags, a
 * flag at the end followed by env:. */
static void test_argv_crlf_read(void **state)
{
	deploy_file *f = load(FIX "argv_crlf.yaml");
	assert_int_equal(f->form, DEPLOY_YAML_LIST);
	assert_true(f->crlf);
	assert_non_null(f->schema);
	assert_string_equal(f->schema->engine, "vllm");
	assert_int_equal(f->first_arg, 3);
	assert_string_equal(f->argv[2], "vllm.entrypoints.openai.api_server");
	struct want w[] = {
	    {"model", "--model", "/models/qwen-moe", "str", DEPLOY_OPT, 7},
	    {"trust_remote_code", "--trust-remote-code", "True", "bool", DEPLOY_FLAG, 9},
	    {"tensor_parallel_size", "-tp", "4", "int", DEPLOY_OPT, 10},
	    {"max_num_seqs", "--max-num-seqs", "128", "int", DEPLOY_OPT, 12},
	    {"gpu_memory_utilization", "--gpu-memory-utilization", "0.85", "float", DEPLOY_OPT, 14},
	    {"enable_prefix_caching", "--enable-prefix-caching", "True", "bool", DEPLOY_FLAG, 15},
	    {"VLLM_USE_V1", "VLLM_USE_V1", "0", "int", DEPLOY_ENV, 17},
	    {"VLLM_ATTENTION_BACKEND", "VLLM_ATTENTION_BACKEND", "XFORMERS", "str", DEPLOY_ENV, 18},
	};
	expect_args(f, w, sizeof(w) / sizeof(w[0]));
	/* by alias, flag and canonical name */
	assert_ptr_equal(deploy_find(f, "-tp"), &f->args[2]);
	assert_ptr_equal(deploy_find(f, "--tensor-parallel-size"), &f->args[2]);
	assert_ptr_equal(deploy_find(f, "tensor_parallel_size"), &f->args[2]);
	assert_ptr_equal(deploy_find(f, "VLLM_USE_V1"), &f->args[6]);
	assert_null(deploy_find(f, "max_model_len"));
	/* deleting a flag removes its whole item line with the CRLF */
	const deploy_arg *t = &f->args[1];
	assert_memory_equal(f->text + t->tok_start, "  - --trust-remote-code\r\n",
			    t->tok_end - t->tok_start);
	deploy_free(f);
}

static void test_argv_crlf_write(void **state)
{
	deploy_file *f = load(FIX "argv_crlf.yaml");
	/* False removes the flag, and nothing else: not "- -tp", not "env:" */
	deploy_file *g = set_ok(f, "trust_remote_code", "False");
	assert_null(deploy_find(g, "trust_remote_code"));
	assert_string_equal(deploy_find(g, "-tp")->value, "4");
	assert_int_equal(g->len, f->len - strlen("  - --trust-remote-code\r\n"));
	deploy_free(g);
	/* enable_prefix_caching defaults to None (auto): removing the flag would
	 * not make it False, so the built-in (BooleanOptionalAction) schema
	 * writes --no-X in its place, CRLF kept (issue 25) */
	g = set_ok(f, "enable_prefix_caching", "false");
	assert_int_equal(deploy_find(g, "enable_prefix_caching")->kind, DEPLOY_NEG);
	assert_non_null(strstr(g->text, "  - --no-enable-prefix-caching\r\n"));
	assert_null(strstr(g->text, "  - --enable-prefix-caching\r\n"));
	assert_non_null(strstr(g->text, "\r\nenv:\r\n  VLLM_USE_V1: \"0\"\r\n"));
	deploy_free(g);
	/* an OPT changes only its value, inside the quotes */
	g = set_ok(f, "-tp", "8");
	assert_string_equal(deploy_find(g, "tensor_parallel_size")->value, "8");
	assert_non_null(strstr(g->text, "  - -tp\r\n  - \"8\"\r\n"));
	assert_int_equal(g->len, f->len);
	deploy_free(g);
	g = set_ok(f, "gpu_memory_utilization", "0.95");
	assert_non_null(strstr(g->text, "  - --gpu-memory-utilization=0.95\r\n"));
	deploy_free(g);
	/* True where absent adds the flag as a new item, same indent, CRLF */
	g = set_ok(f, "enforce_eager", "True");
	assert_string_equal(deploy_find(g, "enforce_eager")->value, "True");
	assert_non_null(strstr(g->text, "  - --enable-prefix-caching\r\n  - --enforce-eager\r\nenv:"));
	deploy_free(g);
	/* an absent argument is added after the last one, in the file's style */
	g = set_ok(f, "max_model_len", "4096");
	assert_string_equal(deploy_find(g, "max_model_len")->value, "4096");
	deploy_free(g);
	g = set_ok(f, "max_num_batched_tokens", "8192");
	deploy_free(g);
	/* True on a flag already given changes nothing */
	g = set_ok(f, "trust_remote_code", "True");
	assert_int_equal(g->len, f->len);
	assert_memory_equal(g->text, f->text, f->len);
	deploy_free(g);
	/* env: change and add */
	g = set_ok(f, "VLLM_USE_V1", "1");
	assert_non_null(strstr(g->text, "  VLLM_USE_V1: \"1\"\r\n"));
	deploy_free(g);
	g = set_ok(f, "VLLM_ENGINE_ITERATION_TIMEOUT_S", "120");
	assert_string_equal(deploy_find(g, "VLLM_ENGINE_ITERATION_TIMEOUT_S")->value, "120");
	assert_int_equal(deploy_find(g, "VLLM_ENGINE_ITERATION_TIMEOUT_S")->kind, DEPLOY_ENV);
	deploy_free(g);
	/* values that would break the file, or that the server refuses */
	set_refused(f, "max_num_seqs", "12\n8");
	set_refused(f, "max_num_seqs", "12\r");
	set_refused(f, "max_num_seqs", "lots");
	set_refused(f, "dtype", "float8");
	set_refused(f, "trust_remote_code", "maybe");
	set_refused(f, "VLLM_USE_V1", "a\nb");
	deploy_free(f);
}

/* A shell launch: export lines, KEY=VALUE prefixes, exec, continuations,
 * llama-server's short aliases and value-less flags. */
static void test_shell(void **state)
{
	deploy_file *f = load(FIX "launch.sh");
	assert_int_equal(f->form, DEPLOY_SHELL);
	assert_string_equal(f->schema->engine, "llama.cpp");
	assert_string_equal(f->argv[0], "llama-server");
	assert_int_equal(f->first_arg, 1);
	struct want w[] = {
	    {"model", "-m", "/models/qwen-7b-q4.gguf", "str", DEPLOY_OPT, 5},
	    {"ctx_size", "-c", "8192", "int", DEPLOY_OPT, 6},
	    {"parallel", "-np", "4", "int", DEPLOY_OPT, 6},
	    {"cont_batching", "--cont-batching", "True", "bool", DEPLOY_FLAG, 7},
	    {"flash_attn", "-fa", "True", "choice", DEPLOY_FLAG, 7},
	    {"port", "--port", "8081", "int", DEPLOY_OPT, 8},
	    {"metrics", "--metrics", "True", "bool", DEPLOY_FLAG, 8},
	    {"n_gpu_layers", "-ngl", "99", "int", DEPLOY_OPT, 9},
	    {"LLAMA_ARG_THREADS", "LLAMA_ARG_THREADS", "8", "int", DEPLOY_ENV, 3},
	    {"CUDA_VISIBLE_DEVICES", "CUDA_VISIBLE_DEVICES", "0", "int", DEPLOY_ENV, 4},
	    {"GGML_CUDA_NO_PINNED", "GGML_CUDA_NO_PINNED", "1", "int", DEPLOY_ENV, 4},
	};
	expect_args(f, w, sizeof(w) / sizeof(w[0]));
	deploy_file *g = set_ok(f, "ctx_size", "16384");
	assert_non_null(strstr(g->text, "    -c 16384 -np 4 \\\n"));
	deploy_free(g);
	g = set_ok(f, "metrics", "False");
	assert_null(deploy_find(g, "metrics"));
	deploy_free(g);
	/* the last argument of a continued command */
	g = set_ok(f, "-ngl", "0");
	deploy_free(g);
	/* a default-True flag set False: its negation is written instead */
	g = set_ok(f, "cont_batching", "False");
	assert_int_equal(deploy_find(g, "cont_batching")->kind, DEPLOY_NEG);
	deploy_free(g);
	g = set_ok(f, "threads_batch", "4");
	assert_string_equal(deploy_find(g, "-tb")->value, "4");
	deploy_free(g);
	g = set_ok(f, "alias", "qwen 7b"); /* quoted as a shell word */
	assert_string_equal(deploy_find(g, "alias")->value, "qwen 7b");
	deploy_free(g);
	g = set_ok(f, "CUDA_VISIBLE_DEVICES", "0,1");
	assert_non_null(strstr(g->text, "\nCUDA_VISIBLE_DEVICES=0,1 GGML"));
	deploy_free(g);
	g = set_ok(f, "LLAMA_ARG_THREADS", "16");
	deploy_free(g);
	g = set_ok(f, "LLAMA_ARG_BATCH", "1024");
	assert_int_equal(deploy_find(g, "LLAMA_ARG_BATCH")->kind, DEPLOY_ENV);
	deploy_free(g);
	set_refused(f, "ctx_size", "1\n2");
	deploy_free(f);
}

/* Kubernetes: command + args, env a list of name/value (valueFrom skipped),
 * an initContainer's sh -c not taken for the server. */
static void test_k8s(void **state)
{
	deploy_file *f = load(FIX "k8s.yaml");
	assert_int_equal(f->form, DEPLOY_K8S);
	assert_string_equal(f->schema->engine, "vllm");
	struct want w[] = {
	    {"model", "--model", "/models/qwen-moe", "str", DEPLOY_OPT, 18},
	    {"max_num_seqs", "--max-num-seqs", "64", "int", DEPLOY_OPT, 20},
	    {"max_num_batched_tokens", "--max-num-batched-tokens", "8192", "int", DEPLOY_OPT, 22},
	    {"enable_chunked_prefill", "--enable-chunked-prefill", "True", "bool", DEPLOY_FLAG, 23},
	    {"enable_prefix_caching", "--no-enable-prefix-caching", "False", "bool", DEPLOY_NEG, 24},
	    {"VLLM_WORKER_MULTIPROC_METHOD", "VLLM_WORKER_MULTIPROC_METHOD", "spawn", "str",
	     DEPLOY_ENV, 26},
	    {"NCCL_DEBUG", "NCCL_DEBUG", "WARN", "str", DEPLOY_ENV, 31},
	};
	expect_args(f, w, sizeof(w) / sizeof(w[0]));
	deploy_file *g = set_ok(f, "max_num_seqs", "128");
	assert_non_null(strstr(g->text, "            - \"128\"\n"));
	deploy_free(g);
	g = set_ok(f, "max_num_batched_tokens", "16384");
	assert_non_null(strstr(g->text, "            - \"--max-num-batched-tokens=16384\"\n"));
	deploy_free(g);
	g = set_ok(f, "enable_prefix_caching", "True"); /* --no-X removed */
	assert_null(strstr(g->text, "--no-enable-prefix-caching"));
	deploy_free(g);
	g = set_ok(f, "enable_chunked_prefill", "False");
	deploy_free(g);
	/* added as quoted items: Kubernetes args are strings */
	g = set_ok(f, "tensor_parallel_size", "2");
	assert_non_null(strstr(g->text, "            - \"--tensor-parallel-size=2\"\n"));
	deploy_free(g);
	g = set_ok(f, "NCCL_DEBUG", "INFO");
	deploy_free(g);
	g = set_ok(f, "VLLM_USE_V1", "0");
	assert_non_null(strstr(g->text, "            - name: VLLM_USE_V1\n              value: \"0\"\n"));
	deploy_free(g);
	set_refused(f, "max_num_seqs", "-");
	deploy_free(f);
}

/* docker-compose: the command as a string, environment as a list; and a
 * list command for llama-server with -nocb and a negative number value. */
static void test_compose(void **state)
{
	deploy_file *f = load(FIX "compose.yaml");
	assert_int_equal(f->form, DEPLOY_COMPOSE);
	assert_int_equal(f->first_arg, 3);
	struct want w[] = {
	    {"max_num_seqs", "--max-num-seqs", "32", "int", DEPLOY_OPT, 5},
	    {"tensor_parallel_size", "-tp", "2", "int", DEPLOY_OPT, 5},
	    {"enforce_eager", "--enforce-eager", "True", "bool", DEPLOY_FLAG, 5},
	    {"dtype", "--dtype", "bfloat16", "choice", DEPLOY_OPT, 5},
	    {"VLLM_LOGGING_LEVEL", "VLLM_LOGGING_LEVEL", "INFO", "str", DEPLOY_ENV, 7},
	    {"OMP_NUM_THREADS", "OMP_NUM_THREADS", "4", "int", DEPLOY_ENV, 8},
	};
	expect_args(f, w, sizeof(w) / sizeof(w[0]));
	deploy_file *g = set_ok(f, "dtype", "float16");
	deploy_free(g);
	g = set_ok(f, "enforce_eager", "False");
	assert_non_null(strstr(g->text, "-tp 2 --dtype bfloat16\"\n"));
	deploy_free(g);
	g = set_ok(f, "dtype", "auto");
	deploy_free(g);
	g = set_ok(f, "max_num_batched_tokens", "4096");
	assert_non_null(strstr(g->text, "--dtype bfloat16 --max-num-batched-tokens 4096\"\n"));
	deploy_free(g);
	g = set_ok(f, "OMP_NUM_THREADS", "8");
	assert_non_null(strstr(g->text, "      - OMP_NUM_THREADS=8\n"));
	deploy_free(g);
	g = set_ok(f, "VLLM_USE_V1", "1");
	deploy_free(g);
	/* a double quote inside the YAML double-quoted command is escaped or refused */
	set_refused(f, "served_model_name", "a\"b'c");
	deploy_free(f);

	f = load(FIX "compose_list.yaml");
	assert_int_equal(f->form, DEPLOY_COMPOSE);
	struct want w2[] = {
	    {"model", "-m", "/models/m.gguf", "str", DEPLOY_OPT, 4},
	    {"ctx_size", "--ctx-size", "4096", "int", DEPLOY_OPT, 4},
	    {"cont_batching", "-nocb", "False", "bool", DEPLOY_NEG, 4},
	    {"seed", "--seed", "-1", "int", DEPLOY_OPT, 4},
	};
	expect_args(f, w2, sizeof(w2) / sizeof(w2[0]));
	g = set_ok(f, "cont_batching", "True");
	assert_non_null(strstr(g->text, "\"4096\", \"--seed\", \"-1\"]"));
	deploy_free(g);
	g = set_ok(f, "seed", "42");
	deploy_free(g);
	g = set_ok(f, "parallel", "8");
	assert_non_null(strstr(g->text, "\"-1\", \"--parallel\", \"8\"]"));
	deploy_free(g);
	deploy_free(f);
}

/* A JSON argv list (vllm serve MODEL ...), and the old fixtures' forms. */
static void test_json_and_strings(void **state)
{
	deploy_file *f = load(FIX "argv.json");
	assert_int_equal(f->form, DEPLOY_JSON_LIST);
	assert_int_equal(f->first_arg, 3);
	struct want w[] = {
	    {"max_num_seqs", "--max-num-seqs", "16", "int", DEPLOY_OPT, 1},
	    {"block_size", "--block-size", "32", "choice", DEPLOY_OPT, 1},
	    {"enforce_eager", "--enforce-eager", "True", "bool", DEPLOY_FLAG, 1},
	};
	expect_args(f, w, sizeof(w) / sizeof(w[0]));
	deploy_file *g = set_ok(f, "enforce_eager", "False");
	assert_non_null(strstr(g->text, "\"32\"]\n"));
	deploy_free(g);
	g = set_ok(f, "max_num_seqs", "1");
	deploy_free(g);
	g = set_ok(f, "enable_chunked_prefill", "True");
	assert_non_null(strstr(g->text, "\"--enforce-eager\", \"--enable-chunked-prefill\"]"));
	deploy_free(g);
	set_refused(f, "block_size", "24");
	set_refused(f, "VLLM_X", "1"); /* a bare list has no place for env */
	deploy_free(f);

	/* a string command, --flag=value and an unknown negation, no schema */
	const char *t = "command: vllm serve /m --no-enable-chunked-prefill --max-num-seqs=4 "
			"--custom-thing 7 --last\n";
	muh_diag d;
	int rc = deploy_parse("x.yaml", t, strlen(t), NULL, &f, &d);
	assert_int_equal(rc, MUH_OK);
	struct want w3[] = {
	    {"enable_chunked_prefill", "--no-enable-chunked-prefill", "False", "bool", DEPLOY_NEG,
	     1},
	    {"max_num_seqs", "--max-num-seqs", "4", "int", DEPLOY_OPT, 1},
	    {"custom_thing", "--custom-thing", "7", "int", DEPLOY_OPT, 1},
	    {"last", "--last", "True", "bool", DEPLOY_FLAG, 1},
	};
	expect_args(f, w3, sizeof(w3) / sizeof(w3[0]));
	g = set_ok(f, "max_num_seqs", "8");
	assert_non_null(strstr(g->text, "--max-num-seqs=8 "));
	deploy_free(g);
	g = set_ok(f, "custom_thing", "9");
	deploy_free(g);
	deploy_free(f);

	/* sh -c "pip install ... && vllm serve ...": the server's command */
	t = "command: [\"/bin/sh\", \"-c\"]\nargs: [\"pip install x && exec vllm serve /m -tp 2 "
	    "--enforce-eager\"]\nimage: vllm/vllm-openai\n";
	rc = deploy_parse("pod.yaml", t, strlen(t), NULL, &f, &d);
	if (rc)
		fail_msg("%s", d.msg);
	assert_int_equal(f->nargs, 2);
	assert_string_equal(f->args[0].name, "tensor_parallel_size");
	g = set_ok(f, "-tp", "4");
	deploy_free(g);
	deploy_free(f);
}

/* Flow-style env (issue 30): a new entry goes inside the braces or
 * brackets ({A: 1} took a second line "env: {B: ..." and failed with
 * "duplicate key"); an existing one is changed in place. */
static void test_flow_env(void **state)
{
	const char *t = "command: [vllm, serve, /m, --max-num-seqs, \"4\"]\nenv: {A: 1, VLLM_USE_V1: \"1\"}\n";
	deploy_file *f = NULL, *g;
	muh_diag d;
	if (deploy_parse("x.yaml", t, strlen(t), NULL, &f, &d))
		fail_msg("%s", d.msg);
	g = set_ok(f, "NEW_VAR", "a, b}");
	assert_string_equal(g->text, "command: [vllm, serve, /m, --max-num-seqs, \"4\"]\n"
				     "env: {A: 1, VLLM_USE_V1: \"1\", NEW_VAR: \"a, b}\"}\n");
	assert_string_equal(deploy_find(g, "NEW_VAR")->value, "a, b}");
	deploy_free(g);
	g = set_ok(f, "A", "2");
	assert_non_null(strstr(g->text, "env: {A: 2, VLLM_USE_V1: \"1\"}\n"));
	deploy_free(g);
	deploy_free(f);
	/* over several lines, with a comment before the close */
	t = "command: [vllm, serve, /m]\nenv: {\n  A: 1,\n  B: x  # the last\n  }\n";
	if (deploy_parse("x.yaml", t, strlen(t), NULL, &f, &d))
		fail_msg("%s", d.msg);
	g = set_ok(f, "C", "3");
	assert_string_equal(deploy_find(g, "C")->value, "3");
	deploy_free(g);
	deploy_free(f);
	/* compose's flow list of KEY=VALUE */
	t = "services:\n  vllm:\n    image: vllm/vllm-openai\n    command: [--model, /m, --max-num-seqs, \"8\"]\n"
	    "    environment: [\"A=1\"]\n";
	if (deploy_parse("docker-compose.yaml", t, strlen(t), NULL, &f, &d))
		fail_msg("%s", d.msg);
	g = set_ok(f, "B", "2");
	assert_non_null(strstr(g->text, "environment: [\"A=1\", \"B=2\"]\n"));
	deploy_free(g);
	deploy_free(f);
	/* an empty flow map has no entry to write after: refused, not broken */
	t = "command: [vllm, serve, /m]\nenv: {}\n";
	if (deploy_parse("x.yaml", t, strlen(t), NULL, &f, &d))
		fail_msg("%s", d.msg);
	set_refused(f, "A", "1");
	deploy_free(f);
}

/* Not a launch file, broken YAML: MUH_EINPUT with file:line:col. */
static void test_errors(void **state)
{
	deploy_file *f = NULL;
	muh_diag d;
	assert_int_equal(deploy_load(FIX "not_launch.yaml", NULL, &f, &d), MUH_EINPUT);
	assert_null(f);
	assert_non_null(strstr(d.msg, "not a launch file"));
	assert_string_equal(d.file, FIX "not_launch.yaml");
	assert_int_equal(deploy_load(FIX "broken.yaml", NULL, &f, &d), MUH_EINPUT);
	assert_non_null(strstr(d.msg, "not valid YAML"));
	assert_true(d.line > 0);
	assert_int_equal(deploy_load(FIX "nowhere.yaml", NULL, &f, &d), MUH_EENV);
	const char *t = "pip install vllm && echo done\n";
	assert_int_equal(deploy_parse("x.sh", t, strlen(t), NULL, &f, &d), MUH_EINPUT);
	t = "command: \"\"\n";
	assert_int_equal(deploy_parse("x.yaml", t, strlen(t), NULL, &f, &d), MUH_EINPUT);
}

/* Schemas: built-ins, and one built from argparse definitions. */
static void test_schemas(void **state)
{
	assert_non_null(deploy_schema_builtin("vllm"));
	assert_non_null(deploy_schema_builtin("llama.cpp"));
	assert_null(deploy_schema_builtin("tgi"));
	const char *py =
	    "parser.add_argument('--tensor-parallel-size', '-tp', type=int, default=1)\n"
	    "parser.add_argument(\"--max-num-seqs\", type=int, default=256,\n"
	    "                    help='(see below)')\n"
	    "parser.add_argument('--trust-remote-code', action='store_true')\n"
	    "parser.add_argument('--enable-prefix-caching', action=argparse.BooleanOptionalAction)\n"
	    "parser.add_argument('--dtype', type=str, default='auto', choices=['auto', 'half'])\n";
	deploy_schema *sc = NULL;
	assert_int_equal(deploy_schema_from_argparse("fork", py, strlen(py), &sc), MUH_OK);
	assert_int_equal(sc->n, 5);
	assert_string_equal(sc->opts[0].name, "tensor_parallel_size");
	assert_string_equal(sc->opts[0].flags, "--tensor-parallel-size|-tp");
	assert_string_equal(sc->opts[0].type, "int");
	assert_string_equal(sc->opts[0].deflt, "1");
	assert_int_equal(sc->opts[2].takes_value, 0);
	assert_string_equal(sc->opts[3].neg, "--no-enable-prefix-caching");
	assert_string_equal(sc->opts[4].choices, "auto|half");
	/* with it, -tp is resolved and --trust-remote-code takes no value */
	const char *t = "[\"python3\", \"-m\", \"fork.server\", \"--trust-remote-code\", \"-tp\", "
			"\"4\", \"--no-enable-prefix-caching\"]";
	deploy_file *f = NULL;
	muh_diag d;
	assert_int_equal(deploy_parse("x.json", t, strlen(t), sc, &f, &d), MUH_OK);
	assert_int_equal(f->nargs, 3);
	assert_string_equal(f->args[1].name, "tensor_parallel_size");
	assert_string_equal(f->args[1].value, "4");
	assert_int_equal(f->args[2].kind, DEPLOY_NEG);
	deploy_file *g = set_ok(f, "enable_prefix_caching", "True");
	deploy_free(g);
	set_refused(f, "dtype", "float");
	deploy_free(f);
	deploy_schema_free(sc);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_argv_crlf_read), cmocka_unit_test(test_argv_crlf_write),
	    cmocka_unit_test(test_shell),          cmocka_unit_test(test_k8s),
	    cmocka_unit_test(test_compose),        cmocka_unit_test(test_json_and_strings),
	    cmocka_unit_test(test_errors),         cmocka_unit_test(test_schemas),
	    cmocka_unit_test(test_flow_env),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
