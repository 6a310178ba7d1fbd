/*
 * deploy_schema.c — the argument schemas deployment files are read with:
 * the built-in ones (llama.cpp's llama-server, vLLM), the lookups of an option
 * by flag or name, schemas read from argparse definitions or from a surface's
 * engine_arg knobs, and the schema of the engine tree a file sits in (its own
 * parser, found from the file's folder upwards and kept for the process).
 *
 * Must never: print, or write anything.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <libfyaml.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "muh/deploy.h"
#include "muh/fileio.h"
#include "muh/muh.h"
#include "strbuf.h"
#include "yamlcheck.h"
#include "deploy_int.h"

/* ---- built-in schemas ---------------------------------------------------- */

/* llama.cpp tools/server/README.md (llama-server --help). */
static const deploy_option llama_opts[] = {
	{"model", "-m|--model", "str", 1, NULL, NULL, NULL},
	{"ctx_size", "-c|--ctx-size", "int", 1, NULL, "4096", NULL},
	{"parallel", "-np|--parallel", "int", 1, NULL, "1", NULL},
	{"threads", "-t|--threads", "int", 1, NULL, "-1", NULL},
	{"threads_batch", "-tb|--threads-batch", "int", 1, NULL, NULL, NULL},
	{"threads_http", "--threads-http", "int", 1, NULL, "-1", NULL},
	{"batch_size", "-b|--batch-size", "int", 1, NULL, "2048", NULL},
	{"ubatch_size", "-ub|--ubatch-size", "int", 1, NULL, "512", NULL},
	{"n_predict", "-n|--n-predict|--predict", "int", 1, NULL, "-1", NULL},
	{"keep", "--keep", "int", 1, NULL, "0", NULL},
	{"host", "--host", "str", 1, NULL, "127.0.0.1", NULL},
	{"port", "--port", "int", 1, NULL, "8080", NULL},
	{"metrics", "--metrics", "bool", 0, NULL, "False", NULL},
	{"slots", "--slots", "bool", 0, NULL, NULL, "--no-slots"},
	{"cont_batching", "-cb|--cont-batching", "bool", 0, NULL, "True", "-nocb|--no-cont-batching"},
	{"flash_attn", "-fa|--flash-attn", "choice", 2, "on|off|auto", "auto", NULL},
	{"n_gpu_layers", "-ngl|--n-gpu-layers|--gpu-layers", "int", 1, NULL, NULL, NULL},
	{"split_mode", "-sm|--split-mode", "choice", 1, "none|layer|row", "layer", NULL},
	{"tensor_split", "-ts|--tensor-split", "str", 1, NULL, NULL, NULL},
	{"main_gpu", "-mg|--main-gpu", "int", 1, NULL, "0", NULL},
	{"cache_type_k", "-ctk|--cache-type-k", "choice", 1,
	 "f32|f16|bf16|q8_0|q4_0|q4_1|iq4_nl|q5_0|q5_1", "f16", NULL},
	{"cache_type_v", "-ctv|--cache-type-v", "choice", 1,
	 "f32|f16|bf16|q8_0|q4_0|q4_1|iq4_nl|q5_0|q5_1", "f16", NULL},
	{"cache_reuse", "--cache-reuse", "int", 1, NULL, "0", NULL},
	{"defrag_thold", "-dt|--defrag-thold", "float", 1, NULL, NULL, NULL},
	{"mlock", "--mlock", "bool", 0, NULL, "False", NULL},
	{"mmap", "--mmap", "bool", 0, NULL, "True", "--no-mmap"},
	{"seed", "-s|--seed", "int", 1, NULL, "-1", NULL},
	{"timeout", "-to|--timeout", "int", 1, NULL, "600", NULL},
	{"alias", "-a|--alias", "str", 1, NULL, NULL, NULL},
	{"api_key", "--api-key", "str", 1, NULL, NULL, NULL},
	{"jinja", "--jinja", "bool", 0, NULL, "False", "--no-jinja"},
	{"webui", "--webui", "bool", 0, NULL, "True", "--no-webui"},
	{"mmproj", "-mm|--mmproj", "str", 1, NULL, NULL, NULL},
	{"hf_repo", "-hf|-hfr|--hf-repo", "str", 1, NULL, NULL, NULL},
	{"device", "-dev|--device", "str", 1, NULL, NULL, NULL},
	{"n_cpu_moe", "-ncmoe|--n-cpu-moe", "int", 1, NULL, "0", NULL},
	{"draft_max", "--draft-max|--draft|--draft-n", "int", 1, NULL, "16", NULL},
	{"model_draft", "-md|--model-draft", "str", 1, NULL, NULL, NULL},
};

/* vLLM's EngineArgs / FrontendArgs (vllm serve --help). Defaults that
 * depend on the version or are computed (max_num_batched_tokens,
 * enable_chunked_prefill, enable_prefix_caching) are NULL. */
static const deploy_option vllm_opts[] = {
	{"model", "--model", "str", 1, NULL, NULL, NULL},
	{"tokenizer", "--tokenizer", "str", 1, NULL, NULL, NULL},
	{"served_model_name", "--served-model-name", "str", 1, NULL, NULL, NULL},
	{"host", "--host", "str", 1, NULL, NULL, NULL},
	{"port", "--port", "int", 1, NULL, "8000", NULL},
	{"api_key", "--api-key", "str", 1, NULL, NULL, NULL},
	{"tensor_parallel_size", "-tp|--tensor-parallel-size", "int", 1, NULL, "1", NULL},
	{"pipeline_parallel_size", "-pp|--pipeline-parallel-size", "int", 1, NULL, "1", NULL},
	{"data_parallel_size", "-dp|--data-parallel-size", "int", 1, NULL, "1", NULL},
	{"enable_expert_parallel", "--enable-expert-parallel", "bool", 0, NULL, "False", NULL},
	{"max_num_seqs", "--max-num-seqs", "int", 1, NULL, "256", NULL},
	{"max_num_batched_tokens", "--max-num-batched-tokens", "int", 1, NULL, NULL, NULL},
	{"max_model_len", "--max-model-len", "int", 1, NULL, NULL, NULL},
	{"enable_chunked_prefill", "--enable-chunked-prefill", "bool", 0, NULL, NULL, NULL},
	{"enable_prefix_caching", "--enable-prefix-caching", "bool", 0, NULL, NULL, NULL},
	{"gpu_memory_utilization", "--gpu-memory-utilization", "float", 1, NULL, "0.9", NULL},
	{"block_size", "--block-size", "choice", 1, "1|8|16|32|64|128", "16", NULL},
	{"swap_space", "--swap-space", "float", 1, NULL, "4", NULL},
	{"cpu_offload_gb", "--cpu-offload-gb", "float", 1, NULL, "0", NULL},
	{"trust_remote_code", "--trust-remote-code", "bool", 0, NULL, "False", NULL},
	{"dtype", "--dtype", "choice", 1, "auto|half|float16|bfloat16|float|float32", "auto",
	 NULL},
	{"kv_cache_dtype", "--kv-cache-dtype", "choice", 1, "auto|fp8|fp8_e5m2|fp8_e4m3", "auto",
	 NULL},
	{"quantization", "-q|--quantization", "str", 1, NULL, NULL, NULL},
	{"load_format", "--load-format", "str", 1, NULL, "auto", NULL},
	{"enforce_eager", "--enforce-eager", "bool", 0, NULL, "False", NULL},
	{"max_seq_len_to_capture", "--max-seq-len-to-capture", "int", 1, NULL, "8192", NULL},
	{"disable_log_requests", "--disable-log-requests", "bool", 0, NULL, "False", NULL},
	{"disable_log_stats", "--disable-log-stats", "bool", 0, NULL, "False", NULL},
	{"disable_custom_all_reduce", "--disable-custom-all-reduce", "bool", 0, NULL, "False",
	 NULL},
	{"seed", "--seed", "int", 1, NULL, NULL, NULL},
	{"num_scheduler_steps", "--num-scheduler-steps", "int", 1, NULL, "1", NULL},
	{"scheduling_policy", "--scheduling-policy", "choice", 1, "fcfs|priority", "fcfs", NULL},
	{"distributed_executor_backend", "--distributed-executor-backend", "choice", 1,
	 "ray|mp|uni|external_launcher", NULL, NULL},
	{"max_num_partial_prefills", "--max-num-partial-prefills", "int", 1, NULL, "1", NULL},
	{"long_prefill_token_threshold", "--long-prefill-token-threshold", "int", 1, NULL, "0",
	 NULL},
	{"speculative_config", "--speculative-config", "str", 1, NULL, NULL, NULL},
	{"compilation_config", "-O|--compilation-config", "str", 1, NULL, NULL, NULL},
	{"tokenizer_mode", "--tokenizer-mode", "choice", 1, "auto|slow|mistral|custom", "auto",
	 NULL},
	{"download_dir", "--download-dir", "str", 1, NULL, NULL, NULL},
	{"revision", "--revision", "str", 1, NULL, NULL, NULL},
	{"max_logprobs", "--max-logprobs", "int", 1, NULL, "20", NULL},
	{"enable_lora", "--enable-lora", "bool", 0, NULL, "False", NULL},
	{"max_loras", "--max-loras", "int", 1, NULL, "1", NULL},
	{"max_lora_rank", "--max-lora-rank", "int", 1, NULL, "16", NULL},
	{"async_scheduling", "--async-scheduling", "bool", 0, NULL, "False", NULL},
	{"uvicorn_log_level", "--uvicorn-log-level", "choice", 1,
	 "debug|info|warning|error|critical|trace", "info", NULL},
};

const deploy_schema deploy_builtin[] = {
	{"llama.cpp", llama_opts, sizeof(llama_opts) / sizeof(llama_opts[0]), 0},
	{"vllm", vllm_opts, sizeof(vllm_opts) / sizeof(vllm_opts[0]), 1},
};

const deploy_schema *deploy_schema_builtin(const char *engine)
{
	if (!engine)
		return NULL;
	for (size_t i = 0; i < sizeof(deploy_builtin) / sizeof(deploy_builtin[0]); i++)
		if (!strcmp(deploy_builtin[i].engine, engine))
			return &deploy_builtin[i];
	if (!strcmp(engine, "llama-server") || !strcmp(engine, "llama_cpp"))
		return &deploy_builtin[0];
	return NULL;
}

const char *deploy_kind_name(enum deploy_kind k)
{
	static const char *n[] = {"opt", "flag", "neg", "env"};
	return (unsigned)k < 4 ? n[k] : "?";
}

/* Is flag one of the '|'-separated alternatives in list? */
int deploy_in_list(const char *list, const char *flag, size_t fl)
{
	if (!list)
		return 0;
	for (const char *p = list; *p;) {
		size_t l = strcspn(p, "|");
		if (l == fl && !strncmp(p, flag, fl))
			return 1;
		p += l;
		if (*p)
			p++;
	}
	return 0;
}

/* The option a flag names in sc; *neg set when the flag negates it. */
const deploy_option *deploy_opt_by_flag(const deploy_schema *sc, const char *flag, size_t fl,
					int *neg)
{
	*neg = 0;
	if (!sc)
		return NULL;
	for (size_t i = 0; i < sc->n; i++)
		if (deploy_in_list(sc->opts[i].flags, flag, fl))
			return &sc->opts[i];
	for (size_t i = 0; i < sc->n; i++)
		if (deploy_in_list(sc->opts[i].neg, flag, fl)) {
			*neg = 1;
			return &sc->opts[i];
		}
	if (fl > 5 && !strncmp(flag, "--no-", 5)) {
		char buf[256];
		if (fl - 3 >= sizeof(buf))
			return NULL;
		snprintf(buf, sizeof(buf), "--%.*s", (int)(fl - 5), flag + 5);
		for (size_t i = 0; i < sc->n; i++)
			if (!strcmp(sc->opts[i].type, "bool") && !sc->opts[i].takes_value &&
			    deploy_in_list(sc->opts[i].flags, buf, strlen(buf))) {
				*neg = 1;
				return &sc->opts[i];
			}
	}
	return NULL;
}

const deploy_option *deploy_opt_by_name(const deploy_schema *sc, const char *name)
{
	if (!sc || !name)
		return NULL;
	for (size_t i = 0; i < sc->n; i++)
		if (!strcmp(sc->opts[i].name, name))
			return &sc->opts[i];
	int neg;
	const deploy_option *o = deploy_opt_by_flag(sc, name, strlen(name), &neg);
	return o && !neg ? o : NULL;
}

/* The long flag of an option ("--max-num-seqs"), into buf. */
void deploy_long_flag(const deploy_option *o, const char *name, char *buf, size_t n)
{
	if (o) {
		for (const char *p = o->flags; *p;) {
			size_t l = strcspn(p, "|");
			if (l > 2 && p[0] == '-' && p[1] == '-') {
				snprintf(buf, n, "%.*s", (int)l, p);
				return;
			}
			p += l;
			if (*p)
				p++;
		}
	}
	size_t o2 = snprintf(buf, n, "--");
	for (const char *p = name; *p && o2 + 1 < n; p++)
		buf[o2++] = *p == '_' ? '-' : *p;
	buf[o2 < n ? o2 : n - 1] = '\0';
}

/* ---- schemas from definitions -------------------------------------------- */

struct own_schema {
	deploy_schema sc;
	deploy_option *opts;
	char **strs;
	size_t nstrs, capstrs;
};

void deploy_schema_free(deploy_schema *sc)
{
	if (!sc)
		return;
	struct own_schema *o = (struct own_schema *)sc;
	for (size_t i = 0; i < o->nstrs; i++)
		free(o->strs[i]);
	free(o->strs);
	free(o->opts);
	free(o);
}

static const char *own_str(struct own_schema *o, const char *s, size_t n)
{
	if (o->nstrs == o->capstrs) {
		size_t nc = o->capstrs ? o->capstrs * 2 : 64;
		char **ns = realloc(o->strs, nc * sizeof(*ns));
		if (!ns)
			return NULL;
		o->strs = ns;
		o->capstrs = nc;
	}
	char *c = strdup_n(s, n);
	if (!c)
		return NULL;
	o->strs[o->nstrs++] = c;
	return c;
}

static int own_add(struct own_schema *o, size_t *cap, const deploy_option *op)
{
	if (array_grow(&o->opts, cap, o->sc.n, sizeof(*o->opts), 32))
		return MUH_ENOMEM;
	o->opts[o->sc.n++] = *op;
	o->sc.opts = o->opts;
	return MUH_OK;
}

/* A Python string literal at p ('...' or "..."): its content. */
static const char *py_str(const char *p, const char *end, size_t *n, const char **after)
{
	if (p >= end || (*p != '\'' && *p != '"'))
		return NULL;
	char q = *p++;
	const char *s = p;
	while (p < end && *p != q && *p != '\n')
		p++;
	if (p >= end || *p != q)
		return NULL;
	*n = (size_t)(p - s);
	*after = p + 1;
	return s;
}

int deploy_schema_from_argparse(const char *engine, const char *text, size_t len,
				deploy_schema **out)
{
	*out = NULL;
	struct own_schema *o = calloc(1, sizeof(*o));
	if (!o)
		return MUH_ENOMEM;
	o->sc.engine = own_str(o, engine ? engine : "", engine ? strlen(engine) : 0);
	size_t cap = 0;
	const char *end = text + len, *p = text;
	int rc = MUH_OK;
	while (!rc && (p = memmem(p, (size_t)(end - p), "add_argument(", 13))) {
		p += 13;
		/* the call's text up to its closing parenthesis */
		const char *c = p;
		int depth = 1;
		while (c < end && depth) {
			if (*c == '(' || *c == '[' || *c == '{')
				depth++;
			else if (*c == ')' || *c == ']' || *c == '}')
				depth--;
			else if (*c == '\'' || *c == '"') {
				char q = *c++;
				while (c < end && *c != q && *c != '\n')
					c++;
			}
			c++;
		}
		const char *ce = c;
		strbuf flags = {0};
		char longest[256] = "";
		const char *type = NULL, *deflt = NULL, *choices = NULL;
		int takes = 1, is_bool = 0, neg = 0, sbool = 0;
		const char *implied = NULL; /* store_true's default */
		const char *q = p;
		/* positional string arguments: the flags */
		while (q < ce) {
			while (q < ce && (isspace((unsigned char)*q) || *q == ','))
				q++;
			size_t n;
			const char *after;
			const char *s = py_str(q, ce, &n, &after);
			if (!s || !n || s[0] != '-')
				break;
			if (flags.n)
				strbuf_ch(&flags, '|');
			strbuf_put(&flags, s, n);
			if (n > 2 && s[1] == '-' && n - 2 > strlen(longest) && n < sizeof(longest))
				snprintf(longest, sizeof(longest), "%.*s", (int)(n - 2), s + 2);
			q = after;
		}
		/* keywords */
		for (const char *k = q; k < ce; k++) {
			if (!strncmp(k, "type=", 5)) {
				const char *v = k + 5;
				if (!strncmp(v, "int", 3))
					type = "int";
				else if (!strncmp(v, "float", 5))
					type = "float";
				else if (!strncmp(v, "str", 3))
					type = "str";
				else if (!strncmp(v, "bool", 4))
					type = "bool";
			} else if (!strncmp(k, "action=", 7)) {
				const char *v = k + 7;
				if (!strncmp(v + 1, "store_true", 10)) {
					takes = 0;
					is_bool = 1;
					implied = "False";
				} else if (!strncmp(v + 1, "store_false", 11)) {
					takes = 0;
					is_bool = 1;
					implied = "True";
				} else if (!strncmp(v, "argparse.BooleanOptionalAction", 30) ||
					   !strncmp(v, "BooleanOptionalAction", 21)) {
					takes = 0;
					is_bool = 1;
					neg = 1;
				} else if (strcspn(v, ",)") >= 12 &&
					   memmem(v, strcspn(v, ",)"), "StoreBoolean", 12)) {
					/* vLLM's StoreBoolean (nargs="?", const="True"): a bare
					 * flag is True, `--x false` / `--x=false` is False */
					takes = 2;
					is_bool = 1;
					sbool = 1;
				}
			} else if (!strncmp(k, "default=", 8) && !deflt) {
				const char *v = k + 8;
				size_t n;
				const char *after;
				const char *s = py_str(v, ce, &n, &after);
				if (s)
					deflt = own_str(o, s, n);
				else {
					size_t l = strcspn(v, ",)\n");
					while (l && isspace((unsigned char)v[l - 1]))
						l--;
					if (l && strncmp(v, "None", 4))
						deflt = own_str(o, v, l);
				}
			} else if (!strncmp(k, "choices=[", 9)) {
				strbuf ch = {0};
				const char *v = k + 9;
				while (v < ce && *v != ']') {
					size_t n;
					const char *after;
					const char *s = py_str(v, ce, &n, &after);
					if (s) {
						if (ch.n)
							strbuf_ch(&ch, '|');
						strbuf_put(&ch, s, n);
						v = after;
					} else {
						v++;
					}
				}
				if (ch.b)
					choices = own_str(o, ch.b, ch.n);
				free(ch.b);
			}
		}
		if (flags.b && longest[0]) {
			char nm[256];
			for (size_t i = 0; i <= strlen(longest); i++)
				nm[i] = longest[i] == '-' ? '_' : longest[i];
			deploy_option op = {0};
			op.name = own_str(o, nm, strlen(nm));
			op.flags = own_str(o, flags.b, flags.n);
			op.type = is_bool ? "bool" : choices ? "choice" : type ? type : "str";
			op.takes_value = takes;
			op.choices = sbool ? "True|False|true|false" : choices;
			/* a bool's default is known only as a literal: a name
			 * (EngineArgs.x, often None = auto) is unknown, and an unknown
			 * default is never reached by removing the flag */
			if (is_bool && deflt && strcmp(deflt, "True") && strcmp(deflt, "False"))
				deflt = NULL;
			op.deflt = deflt ? deflt : is_bool && !sbool && !neg ? implied : NULL;
			if (neg) {
				char nf[270];
				snprintf(nf, sizeof(nf), "--no-%s", longest);
				op.neg = own_str(o, nf, strlen(nf));
			}
			if (!op.name || !op.flags)
				rc = MUH_ENOMEM;
			else
				rc = own_add(o, &cap, &op);
		}
		free(flags.b);
		p = ce;
	}
	if (rc) {
		deploy_schema_free(&o->sc);
		return rc;
	}
	*out = &o->sc;
	return MUH_OK;
}

/* ---- the engine tree's own parser ------------------------------------------
 *
 * A deployment file that sits in (or below) the engine tree it launches is
 * read with that tree's argparse definitions, so that deploy_set writes what
 * this tree's parser takes (vLLM 0.6.3's StoreBoolean: `--x False`; later
 * vLLM's BooleanOptionalAction: `--no-x`). The tree is found from the file's
 * directory upwards (at most 6 levels): the directory where the program's
 * module is (`-m a.b.c` -> a/b/c.py or a/b/c/__main__.py; a program `vllm`
 * -> vllm/__init__.py). Its package's .py files that call add_argument are
 * read once per process (the schema is kept, keyed by the tree and package,
 * for the process's life); the built-in schema's options that the tree does
 * not define follow the tree's. */

struct tree_cache {
	char key[PATH_MAX + 256];
	deploy_schema *sc;
};
static struct tree_cache tcache[8];
static int ntcache;
static pthread_mutex_t tlock = PTHREAD_MUTEX_INITIALIZER;
static char hints[4][PATH_MAX];
static int nhint;

void deploy_tree_hint(const char *root)
{
	char r[PATH_MAX];
	if (!root || !realpath(root, r))
		return;
	pthread_mutex_lock(&tlock);
	int seen = 0;
	for (int i = 0; i < nhint && !seen; i++)
		seen = !strcmp(hints[i], r);
	if (!seen) {
		if (nhint == 4) {
			memmove(hints[0], hints[1], sizeof(hints[0]) * 3);
			nhint = 3;
		}
		snprintf(hints[nhint++], sizeof(hints[0]), "%s", r);
	}
	pthread_mutex_unlock(&tlock);
}

/* Appends the add_argument-calling .py files under dir (not tests, hidden
 * or vendored directories) to b; at most 64 MiB. */
static void tree_texts(const char *dir, int depth, strbuf *b)
{
	if (depth > 12 || b->n > (64u << 20))
		return;
	DIR *d = opendir(dir);
	if (!d)
		return;
	struct dirent *e;
	while ((e = readdir(d))) {
		const char *n = e->d_name;
		if (n[0] == '.' || !strcmp(n, "__pycache__") || !strcmp(n, "tests") ||
		    !strcmp(n, "third_party") || !strcmp(n, "vendor"))
			continue;
		char p[PATH_MAX];
		if ((size_t)snprintf(p, sizeof(p), "%s/%s", dir, n) >= sizeof(p))
			continue;
		struct stat st;
		if (lstat(p, &st))
			continue;
		if (S_ISDIR(st.st_mode)) {
			tree_texts(p, depth + 1, b);
		} else if (S_ISREG(st.st_mode) && strlen(n) > 3 && !strcmp(n + strlen(n) - 3, ".py") &&
			   strncmp(n, "test_", 5)) {
			size_t len;
			char *s = file_read(p, &len);
			if (s && memmem(s, len, "add_argument(", 13)) {
				strbuf_put(b, s, len);
				strbuf_ch(b, '\n');
			}
			free(s);
		}
	}
	closedir(d);
}

static int is_file(const char *p)
{
	struct stat st;
	return !stat(p, &st) && S_ISREG(st.st_mode);
}

/* The module f's program runs, '/'-separated (`-m a.b.c` -> a/b/c, pkg 0;
 * a program `vllm` -> vllm, pkg 1): 0, or -1 when it names none. */
static int entry_mod(const deploy_file *f, char *mod, size_t cap, int *pkg)
{
	if (!f || !f->argc)
		return -1;
	mod[0] = '\0';
	*pkg = 0;
	for (size_t i = 0; i + 1 < f->first_arg && i + 1 < f->argc; i++)
		if (!strcmp(f->argv[i], "-m")) {
			snprintf(mod, cap, "%s", f->argv[i + 1]);
			break;
		}
	if (!mod[0]) {
		snprintf(mod, cap, "%s", deploy_base_name(f->argv[0]));
		*pkg = 1;
	}
	for (char *c = mod; *c; c++) {
		if (*c == '.')
			*c = '/';
		else if (!isalnum((unsigned char)*c) && *c != '_')
			return -1;
	}
	return mod[0] ? 0 : -1;
}

/* The directory, from path's upwards (at most 6 levels), where the module
 * mod ('/'-separated; pkg: a package's __init__.py) is: into root. 0 if
 * found, -1 if not. */
static int tree_root_of(const char *path, const char *mod, int pkg, char *root, size_t cap)
{
	char dir[PATH_MAX];
	root[0] = '\0';
	if (path[0] != '/') {
		/* relative to a tree this process scanned (muh patch reads root/rel
		 * and names it rel), else to the working directory */
		pthread_mutex_lock(&tlock);
		int got = 0;
		for (int i = nhint - 1; i >= 0 && !got; i--) {
			char p[PATH_MAX * 2];
			snprintf(p, sizeof(p), "%s/%s", hints[i], path);
			got = is_file(p) && realpath(p, dir);
		}
		pthread_mutex_unlock(&tlock);
		if (!got && !realpath(path, dir))
			return -1;
	} else if (!realpath(path, dir)) {
		return -1;
	}
	char *sl = strrchr(dir, '/');
	if (!sl)
		return -1;
	*sl = '\0';
	for (int up = 0; up < 6 && dir[0]; up++) {
		char p[PATH_MAX + 600];
		int hit;
		if (pkg) {
			snprintf(p, sizeof(p), "%s/%s/__init__.py", dir, mod);
			hit = is_file(p);
		} else {
			snprintf(p, sizeof(p), "%s/%s.py", dir, mod);
			hit = is_file(p);
			snprintf(p, sizeof(p), "%s/%s/__main__.py", dir, mod);
			hit = hit || is_file(p);
		}
		if (hit) {
			snprintf(root, cap, "%s", dir);
			break;
		}
		sl = strrchr(dir, '/');
		if (!sl || sl == dir)
			break;
		*sl = '\0';
	}
	return root[0] ? 0 : -1;
}

const deploy_schema *deploy_tree_schema(const char *path, const deploy_file *f,
				       const deploy_schema *base)
{
	char mod[512];
	int pkg;
	if (!path || entry_mod(f, mod, sizeof(mod), &pkg))
		return NULL;
	char root[PATH_MAX] = "";
	if (tree_root_of(path, mod, pkg, root, sizeof(root)))
		return NULL;
	char top[256];
	snprintf(top, sizeof(top), "%.*s", (int)strcspn(mod, "/"), mod);
	char key[sizeof(tcache[0].key)];
	snprintf(key, sizeof(key), "%s/%s", root, top);
	pthread_mutex_lock(&tlock);
	for (int i = 0; i < ntcache; i++)
		if (!strcmp(tcache[i].key, key)) {
			const deploy_schema *sc = tcache[i].sc;
			pthread_mutex_unlock(&tlock);
			return sc;
		}
	strbuf b = {0};
	tree_texts(key, 0, &b);
	deploy_schema *ts = NULL;
	if (b.b && !b.oom && deploy_schema_from_argparse(base ? base->engine : "tree", b.b, b.n, &ts))
		ts = NULL;
	free(b.b);
	if (ts && !ts->n) {
		deploy_schema_free(ts);
		ts = NULL;
	}
	if (ts && base) {
		/* the built-in options the tree does not define, after the tree's */
		struct own_schema *o = (struct own_schema *)ts;
		size_t cap = ts->n, n0 = ts->n;
		for (size_t i = 0; i < base->n; i++) {
			int dup = 0;
			for (size_t j = 0; j < n0 && !dup; j++)
				dup = !strcmp(o->opts[j].name, base->opts[i].name);
			if (!dup && own_add(o, &cap, &base->opts[i]))
				break;
		}
	}
	if (ts && ntcache < (int)(sizeof(tcache) / sizeof(tcache[0]))) {
		snprintf(tcache[ntcache].key, sizeof(tcache[ntcache].key), "%s", key);
		tcache[ntcache].sc = ts;
		ntcache++;
	} else if (ts) {
		deploy_schema_free(ts); /* the cache is full: read as the built-in */
		ts = NULL;
	}
	pthread_mutex_unlock(&tlock);
	return ts;
}

int deploy_tree_root(const deploy_file *f, char *root, size_t cap)
{
	char mod[512];
	int pkg;
	if (!f || !f->path || !cap || entry_mod(f, mod, sizeof(mod), &pkg))
		return -1;
	return tree_root_of(f->path, mod, pkg, root, cap);
}

/* ---- small helpers ------------------------------------------------------- */

int deploy_is_int(const char *s)
{
	if (*s == '-' || *s == '+')
		s++;
	if (!*s)
		return 0;
	for (; *s; s++)
		if (!isdigit((unsigned char)*s))
			return 0;
	return 1;
}

void deploy_flag_name(const char *flag, char *buf, size_t n)
{
	const char *p = flag;
	while (*p == '-')
		p++;
	size_t k = 0;
	for (; p[k] && k + 1 < n; k++)
		buf[k] = p[k] == '-' ? '_' : p[k];
	buf[k] = '\0';
}

int deploy_is_float(const char *s)
{
	if (!*s)
		return 0;
	char *e;
	errno = 0;
	strtod(s, &e);
	return *e == '\0' && !isspace((unsigned char)*s) && strcspn(s, "xXpPnNiI") == strlen(s);
}

int deploy_is_true(const char *v)
{
	return !strcmp(v, "True") || !strcmp(v, "true") || !strcmp(v, "1") || !strcmp(v, "yes") ||
	       !strcmp(v, "on") || !strcmp(v, "TRUE");
}

int deploy_is_false(const char *v)
{
	return !strcmp(v, "False") || !strcmp(v, "false") || !strcmp(v, "0") || !strcmp(v, "no") ||
	       !strcmp(v, "off") || !strcmp(v, "FALSE");
}

void deploy_infer_type(const char *v, char type[8])
{
	if (deploy_is_int(v))
		snprintf(type, 8, "int");
	else if (deploy_is_float(v))
		snprintf(type, 8, "float");
	else if (!strcmp(v, "True") || !strcmp(v, "False") || !strcmp(v, "true") ||
		 !strcmp(v, "false"))
		snprintf(type, 8, "bool");
	else
		snprintf(type, 8, "str");
}

const char *deploy_base_name(const char *p)
{
	const char *s = strrchr(p, '/');
	return s ? s + 1 : p;
}
