/*
 * fuzz_deploy.c — libFuzzer harness for the deployment-file reader.
 *
 * The first input byte picks the file name (.yaml, .json, .sh) and the schema
 * (detected, vllm, llama.cpp); the rest is the file. What parses is touched
 * span by span (every span must lie inside the text), then deploy_set is
 * asked for a few edits: each argument that was read, set to a new value;
 * known options and flags set or added; an env variable; and a value with a
 * newline, which must be refused. Whatever deploy_set accepts must be a
 * NUL-terminated text that parses again. Refusal or acceptance, never a
 * crash. Built only with clang (-DMUH_FUZZ=ON, see cmake/fuzz.cmake).
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "muh/deploy.h"

static size_t touch(const char *s)
{
	return s ? strlen(s) : 0;
}

static void try_set(const deploy_file *f, const char *name, const char *value, int must_refuse)
{
	char *text = NULL;
	size_t len = 0;
	muh_diag d;
	memset(&d, 0, sizeof d);
	int rc = deploy_set(f, name, value, &text, &len, &d);
	if (rc != 0) {
		if (text)
			__builtin_trap(); /* refused: nothing returned */
		return;
	}
	if (must_refuse || !text || text[len] != '\0')
		__builtin_trap();
	deploy_file *g = NULL;
	memset(&d, 0, sizeof d);
	if (deploy_parse(f->path, text, len, f->schema, &g, &d) != 0)
		__builtin_trap(); /* accepted, yet it does not read back */
	deploy_free(g);
	free(text);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1 || size > 16384)
		return 0;
	static const char *const paths[] = {"deploy.yaml", "deploy.json", "launch.sh"};
	static const char *const engines[] = {NULL, "vllm", "llama.cpp"};
	const char *path = paths[data[0] % 3];
	const deploy_schema *sc = engines[(data[0] / 3) % 3] ? deploy_schema_builtin(engines[(data[0] / 3) % 3]) : NULL;
	const char *text = (const char *)data + 1;
	size_t len = size - 1;

	deploy_file *f = NULL;
	muh_diag d;
	memset(&d, 0, sizeof d);
	if (deploy_parse(path, text, len, sc, &f, &d) != 0 || !f) {
		deploy_free(f);
		return 0;
	}
	size_t sum = touch(f->path);
	for (size_t i = 0; i < f->argc; i++)
		sum += touch(f->argv[i]);
	if (f->first_arg > f->argc)
		__builtin_trap();
	for (size_t i = 0; i < f->nargs; i++) {
		const deploy_arg *a = &f->args[i];
		sum += touch(a->name) + touch(a->flag) + touch(a->value);
		/* a value that is not one plain span in the file is NOSPAN, both
		 * ends (deploy_set then refuses to change it) */
		int val_nospan = a->val_start == (size_t)-1 && a->val_end == (size_t)-1;
		if (a->tok_start > a->tok_end || a->tok_end > f->len ||
		    (!val_nospan && (a->val_start > a->val_end || a->val_end > f->len)))
			__builtin_trap();
	}
	(void)sum;

	size_t nset = f->nargs < 4 ? f->nargs : 4;
	for (size_t i = 0; i < nset; i++) {
		const deploy_arg *a = &f->args[i];
		if (!a->name)
			continue;
		(void)deploy_find(f, a->name);
		try_set(f, a->name, a->kind == DEPLOY_OPT ? "7" : "False", 0);
		try_set(f, a->name, a->kind == DEPLOY_OPT ? "a b" : "True", 0);
	}
	try_set(f, "max_num_seqs", "8", 0);
	try_set(f, "tensor_parallel_size", "2", 0);
	try_set(f, "enforce_eager", "True", 0);
	try_set(f, "enforce_eager", "False", 0);
	try_set(f, "ctx_size", "4096", 0);
	try_set(f, "flash_attn", "on", 0);
	try_set(f, "CUDA_VISIBLE_DEVICES", "0,1", 0);
	try_set(f, "max_num_seqs", "8\n--evil 1", 1);
	deploy_free(f);
	return 0;
}
