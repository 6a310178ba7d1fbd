/*
 * deploy.c — deployment files, read as the server reads them and written
 * back one argument at a time (see deploy.h).
 *
 * Owns: the built-in argument schemas (llama.cpp's llama-server, vLLM), the
 * reading of YAML/JSON argv lists, Kubernetes containers, docker-compose
 * services and shell command lines into argv tokens with byte spans, the
 * argparse reading of those tokens into arguments, env entries, and
 * deploy_set's edits.
 *
 * How it reads: libfyaml builds the document; every scalar's token marks give
 * its exact bytes. A list item is one argv token; a string (a YAML scalar, a
 * .sh file) is split by a small shell tokenizer that works on the raw bytes of
 * the file, decoding YAML quoting on the way, so each word keeps its raw span
 * and the span of its content inside quotes. Then one argparse pass over the
 * tokens from the server's first own argument.
 *
 * How it writes: only bytes of one argument (its value inside the quotes, its
 * whole tokens, or a new token/item/entry copied from a neighbour's style).
 * Every result is read again and compared with the original: the one argument
 * must read back as asked and every other argument must be unchanged, or
 * nothing is returned. That check is the safety net for every quoting rule
 * below.
 *
 * Must never: re-emit YAML from the document (comments, quotes and CRLF
 * would be lost); print; return a text that does not read back.
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
#include "muh/scan.h"

#define NOSPAN ((size_t)-1)

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

static const deploy_schema builtin[] = {
	{"llama.cpp", llama_opts, sizeof(llama_opts) / sizeof(llama_opts[0]), 0},
	{"vllm", vllm_opts, sizeof(vllm_opts) / sizeof(vllm_opts[0]), 1},
};

const deploy_schema *deploy_schema_builtin(const char *engine)
{
	if (!engine)
		return NULL;
	for (size_t i = 0; i < sizeof(builtin) / sizeof(builtin[0]); i++)
		if (!strcmp(builtin[i].engine, engine))
			return &builtin[i];
	if (!strcmp(engine, "llama-server") || !strcmp(engine, "llama_cpp"))
		return &builtin[0];
	return NULL;
}

const char *deploy_form_name(enum deploy_form f)
{
	static const char *n[] = {"yaml_list", "json_list", "shell", "k8s", "compose"};
	return (unsigned)f < 5 ? n[f] : "?";
}

const char *deploy_kind_name(enum deploy_kind k)
{
	static const char *n[] = {"opt", "flag", "neg", "env"};
	return (unsigned)k < 4 ? n[k] : "?";
}

/* Is flag one of the '|'-separated alternatives in list? */
static int in_list(const char *list, const char *flag, size_t fl)
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
static const deploy_option *opt_by_flag(const deploy_schema *sc, const char *flag, size_t fl,
					int *neg)
{
	*neg = 0;
	if (!sc)
		return NULL;
	for (size_t i = 0; i < sc->n; i++)
		if (in_list(sc->opts[i].flags, flag, fl))
			return &sc->opts[i];
	for (size_t i = 0; i < sc->n; i++)
		if (in_list(sc->opts[i].neg, flag, fl)) {
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
			    in_list(sc->opts[i].flags, buf, strlen(buf))) {
				*neg = 1;
				return &sc->opts[i];
			}
	}
	return NULL;
}

static const deploy_option *opt_by_name(const deploy_schema *sc, const char *name)
{
	if (!sc || !name)
		return NULL;
	for (size_t i = 0; i < sc->n; i++)
		if (!strcmp(sc->opts[i].name, name))
			return &sc->opts[i];
	int neg;
	const deploy_option *o = opt_by_flag(sc, name, strlen(name), &neg);
	return o && !neg ? o : NULL;
}

/* The long flag of an option ("--max-num-seqs"), into buf. */
static void long_flag(const deploy_option *o, const char *name, char *buf, size_t n)
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

/* ---- small helpers ------------------------------------------------------- */

static char *xstrndup(const char *s, size_t n)
{
	char *r = malloc(n + 1);
	if (!r)
		return NULL;
	memcpy(r, s, n);
	r[n] = '\0';
	return r;
}

static int is_int(const char *s)
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

static int is_float(const char *s)
{
	if (!*s)
		return 0;
	char *e;
	errno = 0;
	strtod(s, &e);
	return *e == '\0' && !isspace((unsigned char)*s) && strcspn(s, "xXpPnNiI") == strlen(s);
}

static int is_true(const char *v)
{
	return !strcmp(v, "True") || !strcmp(v, "true") || !strcmp(v, "1") || !strcmp(v, "yes") ||
	       !strcmp(v, "on") || !strcmp(v, "TRUE");
}

static int is_false(const char *v)
{
	return !strcmp(v, "False") || !strcmp(v, "false") || !strcmp(v, "0") || !strcmp(v, "no") ||
	       !strcmp(v, "off") || !strcmp(v, "FALSE");
}

static void infer_type(const char *v, char type[8])
{
	if (is_int(v))
		snprintf(type, 8, "int");
	else if (is_float(v))
		snprintf(type, 8, "float");
	else if (!strcmp(v, "True") || !strcmp(v, "False") || !strcmp(v, "true") ||
		 !strcmp(v, "false"))
		snprintf(type, 8, "bool");
	else
		snprintf(type, 8, "str");
}

/* A token that argparse takes as an option, not a value: starts with '-',
 * is not "-" and not a negative number. */
static int looks_flag(const char *t)
{
	return t[0] == '-' && t[1] && !is_float(t);
}

static int is_upper_name(const char *s)
{
	if (!*s || isdigit((unsigned char)*s))
		return 0;
	for (; *s; s++)
		if (!(isupper((unsigned char)*s) || isdigit((unsigned char)*s) || *s == '_'))
			return 0;
	return 1;
}

static const char *base_name(const char *p)
{
	const char *s = strrchr(p, '/');
	return s ? s + 1 : p;
}

/* ---- tokens -------------------------------------------------------------- */

enum { T_YITEM, T_FLOW, T_SHELL };

struct deploy_tok {
	char *val;          /* unquoted */
	size_t raw_s, raw_e; /* the token's bytes, quotes included */
	size_t cs, ce;      /* the content inside quotes; NOSPAN when not one range */
	size_t eq;          /* raw offset of the first unquoted '=', NOSPAN if none */
	int ctx;            /* T_YITEM T_FLOW T_SHELL */
	char quote;         /* the token's own quote: 0 '"' '\'' */
	char yq;            /* T_SHELL inside a YAML scalar: its quote (0 plain/block) */
	int grp;            /* tokens of one list / one command share it */
	int cmd;            /* T_SHELL: which command of the string */
};

struct tl {
	struct deploy_tok *v;
	size_t n, cap;
};

static struct deploy_tok *tl_add(struct tl *l)
{
	if (l->n == l->cap) {
		size_t nc = l->cap ? l->cap * 2 : 32;
		struct deploy_tok *nv = realloc(l->v, nc * sizeof(*nv));
		if (!nv)
			return NULL;
		l->v = nv;
		l->cap = nc;
	}
	struct deploy_tok *t = &l->v[l->n++];
	memset(t, 0, sizeof(*t));
	t->cs = t->ce = t->eq = NOSPAN;
	return t;
}

static void tl_free(struct tl *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->v[i].val);
	free(l->v);
	memset(l, 0, sizeof(*l));
}

/* Where env entries live and how a new one is written. */
enum { ENV_NONE, ENV_MAP, ENV_K8S, ENV_LIST, ENV_SHELL, ENV_EXPORT, ENV_FLOWMAP, ENV_FLOWLIST,
       ENV_FLOWK8S };

struct envloc {
	int style;
	size_t ins;      /* insertion point of a new entry (a line start, or before the program) */
	char prefix[128]; /* the line's text before an entry's key/item */
	char quote;      /* the quote of the last value */
	/* no env block yet: where one can be added */
	int can_block;
	size_t block_ins;
	int block_col;   /* the container mapping's key column (0-based) */
	int block_k8s;   /* k8s style (list of name/value) */
	const char *block_key; /* "env" or "environment" */
};

struct priv {
	size_t (*argtok)[2]; /* per server arg: first and last token index */
	int *opt_eq;         /* per server arg: written as --flag=value */
	struct envloc env;
	int has_args;        /* the file has a place for arguments */
};

/* ---- parser state -------------------------------------------------------- */

struct P {
	const char *path, *text;
	size_t len;
	muh_diag *d;
	struct tl toks;
	deploy_arg *args;
	size_t nargs, cap;
	struct envloc env;
	int grp;
	enum deploy_form form;
	int image; /* k8s/compose image names: 1 llama, 2 vllm, 0 neither (decided
	              while the YAML document, which holds the name, still exists) */
};

static int perr(struct P *P, size_t pos, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static int perr(struct P *P, size_t pos, const char *fmt, ...)
{
	if (!P->d)
		return MUH_EINPUT;
	int line = 0, col = 0;
	char *tmp = xstrndup(P->text, P->len);
	if (tmp && pos != NOSPAN && pos <= P->len)
		diag_linecol(tmp, pos, &line, &col);
	diag_at(P->d, P->path, line, col, tmp);
	free(tmp);
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(P->d->msg, sizeof(P->d->msg), fmt, ap);
	va_end(ap);
	return MUH_EINPUT;
}

static deploy_arg *add_arg(struct P *P)
{
	if (P->nargs == P->cap) {
		size_t nc = P->cap ? P->cap * 2 : 16;
		deploy_arg *na = realloc(P->args, nc * sizeof(*na));
		if (!na)
			return NULL;
		P->args = na;
		P->cap = nc;
	}
	deploy_arg *a = &P->args[P->nargs++];
	memset(a, 0, sizeof(*a));
	return a;
}

static size_t line_start(const char *t, size_t p)
{
	while (p > 0 && t[p - 1] != '\n')
		p--;
	return p;
}

/* The offset just past the end of the line holding p (past its '\n'). */
static size_t line_next(const char *t, size_t len, size_t p)
{
	while (p < len && t[p] != '\n')
		p++;
	return p < len ? p + 1 : len;
}

static void set_linecol(struct P *P, deploy_arg *a, size_t pos)
{
	int line = 1, col = 1;
	for (size_t i = 0; i < pos && i < P->len; i++) {
		if (P->text[i] == '\n') {
			line++;
			col = 1;
		} else {
			col++;
		}
	}
	a->line = line;
	a->col = col;
}

/* ---- shell words --------------------------------------------------------- */

/* The next character of a shell string at *p inside a YAML scalar of quote
 * yq, decoding YAML's own quoting ('' in single quotes, \x in double). Sets
 * *c; returns the raw width, 0 at a YAML line continuation (skip). */
static size_t sh_next(const char *t, size_t p, size_t e, char yq, char *c)
{
	*c = t[p];
	if (yq == '\'' && t[p] == '\'' && p + 1 < e && t[p + 1] == '\'')
		return 2;
	if (yq == '"' && t[p] == '\\' && p + 1 < e) {
		char n = t[p + 1];
		switch (n) {
		case 'n': *c = '\n'; break;
		case 't': *c = '\t'; break;
		case 'r': *c = '\r'; break;
		case '0': *c = '\0'; break;
		case '\n': *c = ' '; break;
		default: *c = n; break;
		}
		return 2;
	}
	return 1;
}

/* Splits text[s,e) into shell words (quotes, backslashes, `\`-newline
 * continuations, comments, ; && || | & separators). nl_sep: a newline ends a
 * command (a .sh file, a YAML literal block); else it is blank (a plain or
 * folded YAML scalar). Words get ctx T_SHELL, yq, one grp and their command
 * number. */
static int sh_words(struct P *P, size_t s, size_t e, char yq, int nl_sep)
{
	const char *t = P->text;
	int grp = ++P->grp, cmd = 0;
	size_t p = s;
	while (p < e) {
		char c;
		size_t w = sh_next(t, p, e, yq, &c);
		if (c == ' ' || c == '\t' || c == '\r' || (c == '\n' && !nl_sep)) {
			p += w;
			continue;
		}
		if (c == '\n') {
			cmd++;
			p += w;
			continue;
		}
		if (c == '\\' && p + w < e) { /* continuation? */
			size_t q = p + w;
			if (t[q] == '\r' && q + 1 < e && t[q + 1] == '\n')
				q++;
			if (t[q] == '\n') {
				p = q + 1;
				continue;
			}
		}
		if (c == '#') {
			while (p < e && t[p] != '\n')
				p++;
			continue;
		}
		if (c == ';' || c == '&' || c == '|') {
			cmd++;
			p += w;
			continue;
		}
		/* a word */
		strbuf v = {0};
		struct deploy_tok *tk = tl_add(&P->toks);
		if (!tk)
			return MUH_ENOMEM;
		tk->ctx = T_SHELL;
		tk->yq = yq;
		tk->grp = grp;
		tk->cmd = cmd;
		tk->raw_s = p;
		int nseg = 0, quoted_all = 1, escapes = 0;
		char q0 = 0;
		size_t qs = NOSPAN, qe = NOSPAN;
		while (p < e) {
			w = sh_next(t, p, e, yq, &c);
			if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == ';' || c == '&' ||
			    c == '|')
				break;
			if (c == '\'' || c == '"') {
				char qc = c;
				nseg++;
				q0 = qc;
				p += w;
				qs = p;
				while (p < e) {
					w = sh_next(t, p, e, yq, &c);
					if (c == qc)
						break;
					if (qc == '"' && c == '\\' && p + w < e) {
						char c2;
						size_t w2 = sh_next(t, p + w, e, yq, &c2);
						if (c2 == '"' || c2 == '\\' || c2 == '$' || c2 == '`') {
							strbuf_ch(&v, c2);
							p += w + w2;
							escapes = 1;
							continue;
						}
					}
					strbuf_ch(&v, c);
					if (w != 1)
						escapes = 1;
					p += w;
				}
				qe = p;
				if (p < e)
					p += w; /* the closing quote */
				continue;
			}
			quoted_all = 0;
			if (c == '\\' && p + w < e) {
				char c2;
				size_t w2 = sh_next(t, p + w, e, yq, &c2);
				if (c2 == '\n') { /* continuation inside a word */
					p += w + w2;
					continue;
				}
				strbuf_ch(&v, c2);
				p += w + w2;
				escapes = 1;
				continue;
			}
			if (c == '=' && tk->eq == NOSPAN && !nseg)
				tk->eq = p;
			strbuf_ch(&v, c);
			if (w != 1)
				escapes = 1;
			p += w;
		}
		tk->raw_e = p;
		if (v.oom)
			return MUH_ENOMEM;
		tk->val = v.b ? v.b : strdup("");
		if (!tk->val)
			return MUH_ENOMEM;
		if (!escapes && nseg == 0) {
			tk->cs = tk->raw_s;
			tk->ce = tk->raw_e;
		} else if (!escapes && nseg == 1 && quoted_all) {
			tk->cs = qs;
			tk->ce = qe;
			tk->quote = q0;
		}
	}
	return MUH_OK;
}

/* ---- YAML ---------------------------------------------------------------- */

static size_t tok_start(struct fy_node *n)
{
	struct fy_token *t = fy_node_get_scalar_token(n);
	const struct fy_mark *m = t ? fy_token_start_mark(t) : NULL;
	return m ? m->input_pos : NOSPAN;
}

static size_t tok_end(struct fy_node *n)
{
	struct fy_token *t = fy_node_get_scalar_token(n);
	const struct fy_mark *m = t ? fy_token_end_mark(t) : NULL;
	return m ? m->input_pos : NOSPAN;
}

static int is_scalar(struct fy_node *n)
{
	return n && fy_node_get_type(n) == FYNT_SCALAR;
}

static int is_map(struct fy_node *n)
{
	return n && fy_node_get_type(n) == FYNT_MAPPING;
}

static int is_seq(struct fy_node *n)
{
	return n && fy_node_get_type(n) == FYNT_SEQUENCE;
}

static struct fy_node *lookup(struct fy_node *map, const char *key)
{
	return is_map(map) ? fy_node_mapping_lookup_by_string(map, key, FY_NT) : NULL;
}

static char *scalar_dup(struct fy_node *n)
{
	size_t l = 0;
	const char *v = fy_node_get_scalar(n, &l);
	return xstrndup(v ? v : "", v ? l : 0);
}

/* The byte range of a scalar's content and its quote: inside the quotes for
 * quoted scalars, after the header line for block scalars. */
static void scalar_region(struct P *P, struct fy_node *n, size_t *s, size_t *e, char *q,
			  int *literal, int *block)
{
	*s = tok_start(n);
	*e = tok_end(n);
	*q = 0;
	*literal = *block = 0;
	if (*s == NOSPAN || *e == NOSPAN)
		return;
	enum fy_node_style st = fy_node_get_style(n);
	if (st == FYNS_SINGLE_QUOTED || st == FYNS_DOUBLE_QUOTED) {
		*q = st == FYNS_SINGLE_QUOTED ? '\'' : '"';
		/* libfyaml's start mark is past the opening quote (older
		 * versions: at it); the end mark is past the closing one */
		if (*s > 0 && P->text[*s - 1] != *q && *s < P->len && P->text[*s] == *q)
			(*s)++;
		if (*e < P->len && P->text[*e] == *q)
			; /* the end mark is before the closing quote */
		else if (*e > *s && P->text[*e - 1] == *q)
			(*e)--;
	} else if (st == FYNS_LITERAL || st == FYNS_FOLDED) {
		*block = 1;
		*literal = st == FYNS_LITERAL;
		if (*s < P->len && (P->text[*s] == '|' || P->text[*s] == '>'))
			*s = line_next(P->text, P->len, *s);
	}
}

/* One list item as an argv token. */
static int item_tok(struct P *P, struct fy_node *n, int ctx, int grp)
{
	struct deploy_tok *tk = tl_add(&P->toks);
	if (!tk)
		return MUH_ENOMEM;
	tk->ctx = ctx;
	tk->grp = grp;
	tk->val = scalar_dup(n);
	if (!tk->val)
		return MUH_ENOMEM;
	tk->raw_s = tok_start(n);
	tk->raw_e = tok_end(n);
	if (tk->raw_s == NOSPAN || tk->raw_e == NOSPAN || tk->raw_e > P->len)
		return perr(P, NOSPAN, "no position for a list item");
	size_t s, e;
	char q;
	int lit, blk;
	scalar_region(P, n, &s, &e, &q, &lit, &blk);
	tk->quote = q;
	/* the raw token includes its quotes (libfyaml's marks exclude them) */
	if (q && tk->raw_s > 0 && P->text[tk->raw_s] != q && P->text[tk->raw_s - 1] == q)
		tk->raw_s--;
	if (q && e < P->len && P->text[e] == q && tk->raw_e <= e)
		tk->raw_e = e + 1;
	/* the content span only when the bytes are exactly the value */
	if (!blk && e - s == strlen(tk->val) && !memcmp(P->text + s, tk->val, e - s)) {
		tk->cs = s;
		tk->ce = e;
	}
	char *eqp = strchr(tk->val, '=');
	if (eqp && tk->cs != NOSPAN && tk->val[0] == '-')
		tk->eq = tk->cs + (size_t)(eqp - tk->val);
	return MUH_OK;
}

/* A command from a YAML node: a list of items, or a string of shell words. */
static int node_cmd(struct P *P, struct fy_node *n)
{
	if (is_seq(n)) {
		int ctx = fy_node_get_style(n) == FYNS_FLOW ? T_FLOW : T_YITEM;
		int grp = ++P->grp;
		void *it = NULL;
		struct fy_node *item;
		while ((item = fy_node_sequence_iterate(n, &it))) {
			if (!is_scalar(item))
				return perr(P, NOSPAN, "an argv item that is not a string");
			int rc = item_tok(P, item, ctx, grp);
			if (rc)
				return rc;
		}
		return MUH_OK;
	}
	if (is_scalar(n)) {
		size_t s, e;
		char q;
		int lit, blk;
		scalar_region(P, n, &s, &e, &q, &lit, &blk);
		if (s == NOSPAN || e == NOSPAN || e > P->len)
			return perr(P, NOSPAN, "no position for the command");
		if (q == '"' && memchr(P->text + s, '\\', e - s))
			return perr(P, s, "a double-quoted command with YAML escapes is not read; "
					  "write it as a list or in single quotes");
		return sh_words(P, s, e, q, lit);
	}
	return perr(P, NOSPAN, "the command is neither a list nor a string");
}

/* The end (offset) of the last scalar under n. */
static size_t last_end(struct fy_node *n)
{
	size_t best = 0;
	if (is_scalar(n)) {
		size_t e = tok_end(n);
		return e == NOSPAN ? 0 : e;
	}
	void *it = NULL;
	if (is_map(n)) {
		struct fy_node_pair *pr;
		while ((pr = fy_node_mapping_iterate(n, &it))) {
			size_t a = last_end(fy_node_pair_key(pr)), b = last_end(fy_node_pair_value(pr));
			if (a > best)
				best = a;
			if (b > best)
				best = b;
		}
	} else if (is_seq(n)) {
		struct fy_node *c;
		while ((c = fy_node_sequence_iterate(n, &it))) {
			size_t b = last_end(c);
			if (b > best)
				best = b;
		}
	}
	return best;
}

static void set_prefix(struct P *P, size_t key_s)
{
	size_t ls = line_start(P->text, key_s);
	size_t l = key_s - ls;
	if (l >= sizeof(P->env.prefix))
		l = sizeof(P->env.prefix) - 1;
	memcpy(P->env.prefix, P->text + ls, l);
	P->env.prefix[l] = '\0';
}

static int env_entry(struct P *P, const char *name, size_t nlen, struct fy_node *val, size_t tok_s,
		     size_t tok_e, size_t at, size_t vs, size_t ve)
{
	deploy_arg *a = add_arg(P);
	if (!a)
		return MUH_ENOMEM;
	a->kind = DEPLOY_ENV;
	a->name = xstrndup(name, nlen);
	a->flag = xstrndup(name, nlen);
	a->value = val ? scalar_dup(val) : NULL;
	if (!a->name || !a->flag || (val && !a->value))
		return MUH_ENOMEM;
	infer_type(a->value ? a->value : "", a->type);
	set_linecol(P, a, at);
	a->tok_start = tok_s;
	a->tok_end = tok_e;
	a->val_start = vs;
	a->val_end = ve;
	return MUH_OK;
}

/* The value span of a YAML scalar (inside quotes). */
static void value_span(struct P *P, struct fy_node *v, size_t *vs, size_t *ve, char *q)
{
	int lit, blk;
	scalar_region(P, v, vs, ve, q, &lit, &blk);
}

static int read_env_entries(struct P *P, struct fy_node *env);

/* Where the flow collection n ({...} or [...]) closes: the offset of its
 * close character (after its last entry, past spaces, line ends, a comma
 * and comments), or NOSPAN. */
static size_t flow_close(const struct P *P, struct fy_node *n, char close)
{
	size_t i = last_end(n);
	while (i && i < P->len) {
		char c = P->text[i];
		if (c == close)
			return i;
		if (c == '#')
			while (i < P->len && P->text[i] != '\n')
				i++;
		else if (c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == ',' || c == '"' || c == '\'')
			i++; /* a closing quote: last_end is inside it */
		else
			return NOSPAN;
	}
	return NOSPAN;
}

/* A flow-style env ({A: 1} or ["A=1"]) with entries gets a new entry just
 * before its close, as ", KEY: value": a new line would be a second env
 * key (the write failed with "duplicate key"). */
static void flow_env(struct P *P, struct fy_node *env)
{
	if (P->env.style == ENV_NONE || fy_node_get_style(env) != FYNS_FLOW)
		return;
	int map = P->env.style == ENV_MAP;
	size_t at = flow_close(P, env, map ? '}' : ']');
	P->env.style = at == NOSPAN ? ENV_NONE
		       : map        ? ENV_FLOWMAP
		       : P->env.style == ENV_LIST ? ENV_FLOWLIST : ENV_FLOWK8S;
	P->env.ins = at == NOSPAN ? 0 : at;
}

/* env: a mapping (KEY: value), a k8s list of {name, value}, or a compose
 * list of "KEY=VALUE"; block or flow style. */
static int read_env(struct P *P, struct fy_node *env)
{
	int rc = read_env_entries(P, env);
	if (!rc)
		flow_env(P, env);
	return rc;
}

/* read_env's entries. */
static int read_env_entries(struct P *P, struct fy_node *env)
{
	const char *t = P->text;
	if (is_map(env)) {
		void *it = NULL;
		struct fy_node_pair *pr;
		while ((pr = fy_node_mapping_iterate(env, &it))) {
			struct fy_node *k = fy_node_pair_key(pr), *v = fy_node_pair_value(pr);
			if (!is_scalar(k) || (v && !is_scalar(v)))
				continue;
			size_t kl;
			const char *kn = fy_node_get_scalar(k, &kl);
			size_t ks = tok_start(k), vs = NOSPAN, ve = NOSPAN;
			char q = 0;
			if (ks == NOSPAN)
				continue; /* no place in the file (an alias, a merge): not an entry we can write */
			if (v)
				value_span(P, v, &vs, &ve, &q);
			size_t end = line_next(t, P->len, v ? tok_end(v) : tok_end(k));
			int rc = env_entry(P, kn, kl, v, line_start(t, ks), end, ks, vs, ve);
			if (rc)
				return rc;
			P->env.style = ENV_MAP;
			P->env.ins = end;
			P->env.quote = q;
			set_prefix(P, ks);
		}
		return MUH_OK;
	}
	if (!is_seq(env))
		return MUH_OK;
	void *it = NULL;
	struct fy_node *item;
	while ((item = fy_node_sequence_iterate(env, &it))) {
		if (is_map(item)) {
			struct fy_node *n = lookup(item, "name"), *v = lookup(item, "value");
			if (!is_scalar(n) || !is_scalar(v))
				continue; /* valueFrom: not a value in this file */
			size_t nl;
			const char *nm = fy_node_get_scalar(n, &nl);
			size_t first = tok_start(n), vs = NOSPAN, ve = NOSPAN;
			char q = 0;
			/* the item's first key is where its "- " is */
			void *it2 = NULL;
			struct fy_node_pair *p0 = fy_node_mapping_iterate(item, &it2);
			if (p0 && tok_start(fy_node_pair_key(p0)) < first)
				first = tok_start(fy_node_pair_key(p0));
			if (first == NOSPAN)
				continue; /* no place in the file */
			if (v)
				value_span(P, v, &vs, &ve, &q);
			size_t end = line_next(t, P->len, last_end(item));
			int rc = env_entry(P, nm, nl, v, line_start(t, first), end, first, vs, ve);
			if (rc)
				return rc;
			P->env.style = ENV_K8S;
			P->env.ins = end;
			P->env.quote = q ? q : '"';
			set_prefix(P, first);
		} else if (is_scalar(item)) {
			size_t l;
			const char *s = fy_node_get_scalar(item, &l);
			const char *eq = memchr(s, '=', l);
			if (!eq || tok_start(item) == NOSPAN)
				continue;
			size_t cs, ce;
			char q;
			value_span(P, item, &cs, &ce, &q);
			size_t vs = NOSPAN, ve = NOSPAN;
			if (ce - cs == l && !memcmp(t + cs, s, l)) {
				vs = cs + (size_t)(eq - s) + 1;
				ve = ce;
			}
			size_t end = line_next(t, P->len, tok_end(item));
			deploy_arg *a = add_arg(P);
			if (!a)
				return MUH_ENOMEM;
			a->kind = DEPLOY_ENV;
			a->name = xstrndup(s, (size_t)(eq - s));
			a->flag = xstrndup(s, (size_t)(eq - s));
			a->value = xstrndup(eq + 1, l - (size_t)(eq - s) - 1);
			if (!a->name || !a->flag || !a->value)
				return MUH_ENOMEM;
			infer_type(a->value, a->type);
			set_linecol(P, a, tok_start(item));
			a->tok_start = line_start(t, tok_start(item));
			a->tok_end = end;
			a->val_start = vs;
			a->val_end = ve;
			P->env.style = ENV_LIST;
			P->env.ins = end;
			P->env.quote = q;
			set_prefix(P, tok_start(item));
		}
	}
	return MUH_OK;
}

/* Does this node's text mention a server program? */
static int mentions_server(struct fy_node *n)
{
	if (is_scalar(n)) {
		size_t l;
		const char *s = fy_node_get_scalar(n, &l);
		static const char *w[] = {"vllm", "api_server", "llama-server", "llama_server",
					  "serve", "llama.cpp", NULL};
		for (int i = 0; w[i]; i++)
			if (s && memmem(s, l, w[i], strlen(w[i])))
				return 1;
		return 0;
	}
	void *it = NULL;
	struct fy_node *c;
	if (is_seq(n)) {
		while ((c = fy_node_sequence_iterate(n, &it)))
			if (mentions_server(c))
				return 1;
	}
	return 0;
}

/* Finds a container: a mapping with `command` or `args`. *under tells
 * 1 = below "containers", 2 = below "services". Prefers one whose command
 * names a server. */
static struct fy_node *find_container(struct fy_node *n, int depth, int under, int *got_under,
				      int want_server)
{
	if (!n || depth > 8)
		return NULL;
	if (is_map(n)) {
		struct fy_node *c = lookup(n, "command"), *a = lookup(n, "args");
		if ((c && (is_seq(c) || is_scalar(c))) || (a && (is_seq(a) || is_scalar(a)))) {
			if (!want_server || (c && mentions_server(c)) || (a && mentions_server(a))) {
				*got_under = under;
				return n;
			}
		}
		void *it = NULL;
		struct fy_node_pair *pr;
		while ((pr = fy_node_mapping_iterate(n, &it))) {
			struct fy_node *k = fy_node_pair_key(pr);
			size_t kl = 0;
			const char *ks = is_scalar(k) ? fy_node_get_scalar(k, &kl) : NULL;
			int u = under;
			if (ks && kl == 10 && !strncmp(ks, "containers", 10))
				u = 1;
			else if (ks && kl == 8 && !strncmp(ks, "services", 8))
				u = 2;
			else if (ks && kl == 14 && !strncmp(ks, "initContainers", 14))
				continue;
			struct fy_node *r =
			    find_container(fy_node_pair_value(pr), depth + 1, u, got_under, want_server);
			if (r)
				return r;
		}
	} else if (is_seq(n)) {
		void *it = NULL;
		struct fy_node *c;
		while ((c = fy_node_sequence_iterate(n, &it))) {
			struct fy_node *r = find_container(c, depth + 1, under, got_under, want_server);
			if (r)
				return r;
		}
	}
	return NULL;
}

/* The first key's column of mapping m (0-based) and its start. */
static int map_key_col(struct P *P, struct fy_node *m)
{
	void *it = NULL;
	struct fy_node_pair *pr = fy_node_mapping_iterate(m, &it);
	if (!pr)
		return -1;
	size_t s = tok_start(fy_node_pair_key(pr));
	if (s == NOSPAN)
		return -1;
	return (int)(s - line_start(P->text, s));
}

static int read_yaml_doc(struct P *P, struct fy_node *root)
{
	if (is_scalar(root)) {
		P->form = DEPLOY_SHELL;
		return node_cmd(P, root);
	}
	if (is_seq(root)) {
		P->form = fy_node_get_style(root) == FYNS_FLOW ? DEPLOY_JSON_LIST : DEPLOY_YAML_LIST;
		return node_cmd(P, root);
	}
	if (!is_map(root))
		return perr(P, 0, "not a launch file: empty document");
	int under = 0;
	struct fy_node *c = find_container(root, 0, 0, &under, 1);
	if (!c)
		c = find_container(root, 0, 0, &under, 0);
	if (!c)
		return perr(P, 0, "not a launch file: no command, args or argv list");
	struct fy_node *cmd = lookup(c, "command"), *args = lookup(c, "args");
	struct fy_node *img = lookup(c, "image");
	if (is_scalar(img)) {
		size_t ilen = 0;
		const char *iname = fy_node_get_scalar(img, &ilen);
		if (iname && memmem(iname, ilen, "llama", 5))
			P->image = 1;
		else if (iname && memmem(iname, ilen, "vllm", 4))
			P->image = 2;
	}
	if (under == 1 || (args && img))
		P->form = DEPLOY_K8S;
	else if (under == 2)
		P->form = DEPLOY_COMPOSE;
	else if (cmd && is_seq(cmd))
		P->form = fy_node_get_style(cmd) == FYNS_FLOW ? DEPLOY_JSON_LIST : DEPLOY_YAML_LIST;
	else
		P->form = DEPLOY_SHELL;
	int rc = MUH_OK;
	if (cmd)
		rc = node_cmd(P, cmd);
	if (!rc && args)
		rc = node_cmd(P, args);
	if (rc)
		return rc;
	/* env: the container's own, then a top-level env: mapping */
	const char *ekey = P->form == DEPLOY_COMPOSE ? "environment" : "env";
	struct fy_node *env = lookup(c, ekey);
	if (!env)
		env = lookup(c, P->form == DEPLOY_COMPOSE ? "env" : "environment");
	if (env)
		rc = read_env(P, env);
	if (!rc && c != root && lookup(root, "env"))
		rc = read_env(P, lookup(root, "env"));
	if (!env && P->env.style == ENV_NONE) {
		int col = map_key_col(P, c);
		size_t end = last_end(c);
		if (col >= 0 && end) {
			P->env.can_block = 1;
			P->env.block_ins = line_next(P->text, P->len, end);
			P->env.block_col = col;
			P->env.block_k8s = P->form == DEPLOY_K8S;
			P->env.block_key = P->form == DEPLOY_COMPOSE ? "environment" : "env";
		}
	}
	return rc;
}


static int read_yaml(struct P *P, int json)
{
	size_t bad = yaml_bad_directive(P->text, P->len);
	if (bad != (size_t)-1)
		return perr(P, bad, "a YAML directive ('%%' in column 1) holds a byte that is not UTF-8");
	struct fy_diag_cfg dcfg;
	fy_diag_cfg_default(&dcfg);
	dcfg.fp = NULL;
	dcfg.output_fn = NULL;
	dcfg.level = FYET_ERROR;
	struct fy_diag *fd = fy_diag_create(&dcfg);
	if (fd)
		fy_diag_set_collect_errors(fd, true);
	struct fy_parse_cfg cfg = {
	    .flags = FYPCF_QUIET | FYPCF_COLLECT_DIAG |
		     (json ? FYPCF_JSON_FORCE : FYPCF_JSON_AUTO),
	    .diag = fd,
	};
	cfg.search_path = "";
	struct fy_document *doc = fy_document_build_from_string(&cfg, P->text, P->len);
	int rc;
	if (!doc) {
		size_t pos = NOSPAN;
		const char *msg = "not valid YAML";
		void *it = NULL;
		struct fy_diag_error *err = fd ? fy_diag_errors_iterate(fd, &it) : NULL;
		char buf[512] = "";
		if (err) {
			snprintf(buf, sizeof(buf), "not valid %s: %s", json ? "JSON" : "YAML",
				 err->msg ? err->msg : "syntax error");
			msg = buf;
			/* libfyaml counts lines with \r too: place by our own count */
			if (err->line >= 0) {
				size_t p = 0;
				int l = 0;
				while (p < P->len && l < err->line) {
					if (P->text[p] == '\n')
						l++;
					p++;
				}
				pos = p + (size_t)(err->column > 0 ? err->column : 0);
				if (pos > P->len)
					pos = P->len;
			}
		}
		rc = perr(P, pos, "%s", msg);
	} else {
		rc = read_yaml_doc(P, fy_document_root(doc));
		fy_document_destroy(doc);
	}
	if (fd)
		fy_diag_destroy(fd);
	return rc;
}

/* ---- the command and its arguments --------------------------------------- */

static int is_server_prog(const char *p)
{
	const char *b = base_name(p);
	return !strncmp(b, "python", 6) || strstr(b, "vllm") || strstr(b, "llama") ||
	       !strcmp(b, "server") || strstr(p, "api_server");
}

/* Is t a shell assignment KEY=VALUE (a name, then an unquoted '=')? */
static int is_assign(const struct deploy_tok *t)
{
	if (t->ctx != T_SHELL || t->eq == NOSPAN || t->val[0] == '-')
		return 0;
	const char *eq = strchr(t->val, '=');
	if (!eq || eq == t->val || isdigit((unsigned char)t->val[0]))
		return 0;
	for (const char *p = t->val; p < eq; p++)
		if (!(isalnum((unsigned char)*p) || *p == '_'))
			return 0;
	return 1;
}

/* Keeps only the tokens of the command that runs the server: reads `sh -c
 * STRING` through, drops other commands of a shell string (pip install ...
 * && vllm serve ...), and turns KEY=VALUE prefixes and `export KEY=VALUE`
 * into env entries. */
static int pick_command(struct P *P)
{
	struct tl *L = &P->toks;
	/* sh -c "string": the string's words replace the list */
	for (int round = 0; round < 2; round++) {
		if (L->n < 3)
			break;
		const char *b = base_name(L->v[0].val);
		if (strcmp(b, "sh") && strcmp(b, "bash") && strcmp(b, "dash") && strcmp(b, "zsh"))
			break;
		size_t k = 1;
		while (k < L->n && L->v[k].val[0] == '-' && strcmp(L->v[k].val, "-c"))
			k++;
		if (k + 1 >= L->n || strcmp(L->v[k].val, "-c"))
			break;
		struct deploy_tok str = L->v[k + 1];
		if (str.ctx == T_SHELL || str.cs == NOSPAN)
			return perr(P, str.raw_s, "a sh -c string with escapes is not read");
		for (size_t i = 0; i < L->n; i++)
			if (i != k + 1)
				free(L->v[i].val);
		free(L->v);
		memset(L, 0, sizeof(*L));
		int lit = str.quote == 0 && memchr(P->text + str.cs, '\n', str.ce - str.cs);
		int rc = sh_words(P, str.cs, str.ce, str.quote, lit);
		free(str.val);
		if (rc)
			return rc;
	}
	if (!L->n)
		return perr(P, 0, "not a launch file: the command is empty");
	/* the command that runs the server: per (grp, cmd), shell words only */
	int sel_grp = -1, sel_cmd = -1;
	int nsh = 0;
	for (size_t i = 0; i < L->n; i++)
		nsh += L->v[i].ctx == T_SHELL;
	if (nsh == (int)L->n) {
		for (size_t i = 0; i < L->n && sel_cmd < 0; i++) {
			size_t j = i;
			if (i && L->v[i - 1].cmd == L->v[i].cmd && L->v[i - 1].grp == L->v[i].grp)
				continue;
			while (j < L->n && L->v[j].cmd == L->v[i].cmd && L->v[j].grp == L->v[i].grp &&
			       is_assign(&L->v[j]))
				j++;
			if (j < L->n && !strcmp(L->v[j].val, "exec"))
				j++;
			if (j < L->n && L->v[j].cmd == L->v[i].cmd && is_server_prog(L->v[j].val)) {
				sel_grp = L->v[i].grp;
				sel_cmd = L->v[i].cmd;
			}
		}
		if (sel_cmd < 0) {
			/* one command only: take it */
			int one = 1;
			for (size_t i = 1; i < L->n; i++)
				one &= L->v[i].cmd == L->v[0].cmd && L->v[i].grp == L->v[0].grp;
			if (!one)
				return perr(P, L->v[0].raw_s,
					    "not a launch file: no command runs a server (vllm, "
					    "python -m ..., llama-server)");
			sel_grp = L->v[0].grp;
			sel_cmd = L->v[0].cmd;
		}
		/* export KEY=VALUE commands before it are env entries */
		for (size_t i = 0; i + 1 < L->n; i++) {
			struct deploy_tok *a = &L->v[i], *b = &L->v[i + 1];
			if (strcmp(a->val, "export") || b->cmd != a->cmd || b->grp != a->grp ||
			    (a->grp == sel_grp && a->cmd >= sel_cmd) || b->eq == NOSPAN)
				continue;
			const char *eq = strchr(b->val, '=');
			if (!eq)
				continue;
			deploy_arg *e = add_arg(P);
			if (!e)
				return MUH_ENOMEM;
			e->kind = DEPLOY_ENV;
			e->name = xstrndup(b->val, (size_t)(eq - b->val));
			e->flag = strdup(e->name ? e->name : "");
			e->value = strdup(eq + 1);
			if (!e->name || !e->flag || !e->value)
				return MUH_ENOMEM;
			infer_type(e->value, e->type);
			set_linecol(P, e, b->raw_s);
			e->tok_start = line_start(P->text, a->raw_s);
			e->tok_end = line_next(P->text, P->len, b->raw_e);
			e->val_start = b->cs != NOSPAN ? b->eq + 1 : NOSPAN;
			e->val_end = b->cs != NOSPAN ? b->ce : NOSPAN;
			if (b->quote && b->cs != NOSPAN) {
				e->val_start = b->cs + (size_t)(eq - b->val) + 1;
			}
			P->env.style = ENV_EXPORT;
			P->env.ins = e->tok_end;
			P->env.prefix[0] = '\0';
		}
		size_t o = 0;
		for (size_t i = 0; i < L->n; i++) {
			if (L->v[i].grp == sel_grp && L->v[i].cmd == sel_cmd)
				L->v[o++] = L->v[i];
			else
				free(L->v[i].val);
		}
		L->n = o;
	}
	/* KEY=VALUE prefixes (and `env`, `exec`) before the program */
	size_t skip = 0;
	while (skip < L->n) {
		struct deploy_tok *t = &L->v[skip];
		const char *eq = strchr(t->val, '=');
		if (t->ctx == T_SHELL && eq && t->eq != NOSPAN && t->val[0] != '-') {
			char nm[256];
			snprintf(nm, sizeof(nm), "%.*s", (int)(eq - t->val), t->val);
			int ok = nm[0] && !isdigit((unsigned char)nm[0]);
			for (const char *p = nm; *p && ok; p++)
				ok = isalnum((unsigned char)*p) || *p == '_';
			if (!ok)
				break;
			deploy_arg *e = add_arg(P);
			if (!e)
				return MUH_ENOMEM;
			e->kind = DEPLOY_ENV;
			e->name = strdup(nm);
			e->flag = strdup(nm);
			e->value = strdup(eq + 1);
			if (!e->name || !e->flag || !e->value)
				return MUH_ENOMEM;
			infer_type(e->value, e->type);
			set_linecol(P, e, t->raw_s);
			e->tok_start = t->raw_s;
			e->tok_end = skip + 1 < L->n ? L->v[skip + 1].raw_s : t->raw_e;
			if (t->cs != NOSPAN) {
				e->val_start = t->quote ? t->cs + (size_t)(eq - t->val) + 1 : t->eq + 1;
				e->val_end = t->ce;
			} else {
				e->val_start = e->val_end = NOSPAN;
			}
			if (P->env.style != ENV_EXPORT) {
				P->env.style = ENV_SHELL;
			}
			skip++;
			continue;
		}
		if (t->ctx == T_SHELL && (!strcmp(t->val, "env") || !strcmp(t->val, "exec"))) {
			skip++;
			continue;
		}
		break;
	}
	if (skip >= L->n)
		return perr(P, L->n ? L->v[0].raw_s : 0, "not a launch file: no program");
	if (L->v[skip].ctx == T_SHELL && P->env.style != ENV_EXPORT) {
		P->env.style = ENV_SHELL;
		P->env.ins = L->v[skip].raw_s;
	}
	for (size_t i = 0; i < skip; i++)
		free(L->v[i].val);
	memmove(L->v, L->v + skip, (L->n - skip) * sizeof(*L->v));
	L->n -= skip;
	return MUH_OK;
}

/* Where the server's own arguments start. */
static size_t first_arg_of(char **argv, size_t argc, int args_only)
{
	if (args_only || !argc)
		return 0;
	const char *b = base_name(argv[0]);
	if (!strncmp(b, "python", 6)) {
		size_t i = 1;
		while (i < argc && argv[i][0] == '-' && strcmp(argv[i], "-m"))
			i++; /* interpreter options (-u, -O) */
		if (i < argc && !strcmp(argv[i], "-m"))
			return i + 2 <= argc ? i + 2 : argc;
		return i + 1 <= argc ? i + 1 : argc;
	}
	if (strstr(b, "vllm") && argc > 1 && !strcmp(argv[1], "serve")) {
		if (argc > 2 && argv[2][0] != '-')
			return 3;
		return 2;
	}
	return 1;
}

const deploy_schema *deploy_schema_detect(const deploy_file *f)
{
	if (!f || !f->argc)
		return NULL;
	for (size_t i = 0; i < f->first_arg && i < f->argc; i++) {
		const char *a = f->argv[i];
		const char *b = base_name(a);
		if (strstr(b, "llama-server") || strstr(b, "llama_server") || strstr(a, "llama.cpp"))
			return &builtin[0];
		if (strstr(a, "vllm"))
			return &builtin[1];
	}
	if (!strcmp(base_name(f->argv[0]), "server"))
		return &builtin[0];
	return NULL;
}

static const deploy_schema *tree_schema(const char *path, const deploy_file *f,
				       const deploy_schema *base);

/* argparse over the tokens from first. */
static int read_args(struct P *P, const deploy_schema *sc, size_t first, struct priv *pv)
{
	struct tl *L = &P->toks;
	deploy_arg *envs = NULL; /* env entries read so far go behind */
	size_t nenv = P->nargs;
	if (nenv) {
		envs = malloc(nenv * sizeof(*envs));
		if (!envs)
			return MUH_ENOMEM;
		memcpy(envs, P->args, nenv * sizeof(*envs));
		P->nargs = 0;
	}
	size_t cap = L->n + 1;
	pv->argtok = calloc(cap, sizeof(*pv->argtok));
	pv->opt_eq = calloc(cap, sizeof(*pv->opt_eq));
	int rc = MUH_OK;
	if (!pv->argtok || !pv->opt_eq)
		rc = MUH_ENOMEM;
	for (size_t i = first; i < L->n && !rc;) {
		struct deploy_tok *t = &L->v[i];
		const char *v = t->val;
		if (!strcmp(v, "--"))
			break;
		if (!looks_flag(v)) {
			i++; /* a positional */
			continue;
		}
		const char *eq = strchr(v, '=');
		size_t fl = eq ? (size_t)(eq - v) : strlen(v);
		int neg = 0;
		const deploy_option *o = opt_by_flag(sc, v, fl, &neg);
		deploy_arg *a = add_arg(P);
		if (!a) {
			rc = MUH_ENOMEM;
			break;
		}
		size_t ai = P->nargs - 1;
		a->flag = xstrndup(v, fl);
		set_linecol(P, a, t->raw_s);
		size_t last = i;
		const char *val = NULL;
		size_t vs = NOSPAN, ve = NOSPAN;
		if (eq) {
			val = eq + 1;
			if (t->eq != NOSPAN && t->ce != NOSPAN) {
				vs = t->eq + 1;
				ve = t->ce;
				if (t->ctx == T_SHELL && t->quote)
					vs = t->cs + fl + 1; /* "--x=v" all quoted */
			}
			pv->opt_eq[ai] = 1;
		} else {
			int takes;
			if (neg)
				takes = 0;
			else if (o)
				takes = o->takes_value;
			else if (fl > 5 && !strncmp(v, "--no-", 5))
				takes = i + 1 < L->n && !looks_flag(L->v[i + 1].val) ? 1 : 0;
			else
				takes = i + 1 < L->n && !looks_flag(L->v[i + 1].val) &&
					strcmp(L->v[i + 1].val, "--");
			if (takes == 2) {
				takes = i + 1 < L->n && o && o->choices &&
					in_list(o->choices, L->v[i + 1].val, strlen(L->v[i + 1].val));
			}
			if (takes == 1 && i + 1 < L->n && !looks_flag(L->v[i + 1].val)) {
				last = i + 1;
				val = L->v[i + 1].val;
				vs = L->v[i + 1].cs;
				ve = L->v[i + 1].ce;
			} else if (takes == 1) {
				val = ""; /* argparse would say: expected one argument */
			}
		}
		/* name, kind, value */
		char name[256];
		if (o) {
			snprintf(name, sizeof(name), "%s", o->name);
		} else {
			const char *p = v;
			size_t l = fl;
			while (l && *p == '-') {
				p++;
				l--;
			}
			if (!val && l > 3 && !strncmp(p, "no-", 3) && v[1] == '-') {
				neg = 1;
				p += 3;
				l -= 3;
			}
			size_t k = 0;
			for (; k < l && k + 1 < sizeof(name); k++)
				name[k] = p[k] == '-' ? '_' : p[k];
			name[k] = '\0';
		}
		a->name = strdup(name);
		if (neg && !val) {
			a->kind = DEPLOY_NEG;
			a->value = strdup("False");
		} else if (!val) {
			a->kind = DEPLOY_FLAG;
			a->value = strdup("True");
		} else {
			a->kind = DEPLOY_OPT;
			a->value = strdup(val);
		}
		if (!a->name || !a->flag || !a->value) {
			rc = MUH_ENOMEM;
			break;
		}
		if (o)
			snprintf(a->type, sizeof(a->type), "%s", o->type);
		else if (a->kind != DEPLOY_OPT)
			snprintf(a->type, sizeof(a->type), "bool");
		else
			infer_type(a->value, a->type);
		if (a->kind != DEPLOY_OPT) {
			vs = t->cs;
			ve = t->ce;
		}
		a->val_start = vs;
		a->val_end = ve;
		pv->argtok[ai][0] = i;
		pv->argtok[ai][1] = last;
		/* what deleting removes */
		struct deploy_tok *f0 = &L->v[i], *f1 = &L->v[last];
		if (f0->ctx == T_YITEM) {
			a->tok_start = line_start(P->text, f0->raw_s);
			a->tok_end = line_next(P->text, P->len, f1->raw_e);
		} else if (last + 1 < L->n && L->v[last + 1].grp == f1->grp) {
			a->tok_start = f0->raw_s;
			a->tok_end = L->v[last + 1].raw_s;
		} else if (i > 0 && L->v[i - 1].grp == f0->grp) {
			a->tok_start = L->v[i - 1].raw_e;
			a->tok_end = f1->raw_e;
		} else {
			a->tok_start = f0->raw_s;
			a->tok_end = f1->raw_e;
		}
		i = last + 1;
	}
	if (!rc && nenv) {
		for (size_t k = 0; k < nenv && !rc; k++) {
			deploy_arg *a = add_arg(P);
			if (!a)
				rc = MUH_ENOMEM;
			else
				*a = envs[k];
		}
		if (rc)
			for (size_t k = 0; k < nenv; k++) {
				free(envs[k].name);
				free(envs[k].flag);
				free(envs[k].value);
			}
	}
	free(envs);
	return rc;
}

void deploy_free(deploy_file *f)
{
	if (!f)
		return;
	for (size_t i = 0; i < f->nargs; i++) {
		free(f->args[i].name);
		free(f->args[i].flag);
		free(f->args[i].value);
	}
	free(f->args);
	for (size_t i = 0; i < f->argc; i++)
		free(f->argv[i]);
	free(f->argv);
	free(f->toks); /* its vals are argv's strings */
	struct priv *pv = f->priv;
	if (pv) {
		free(pv->argtok);
		free(pv->opt_eq);
		free(pv);
	}
	free(f->path);
	free(f->text);
	free(f);
}

static int ends_with(const char *s, const char *suf)
{
	size_t a = strlen(s), b = strlen(suf);
	return a >= b && !strcmp(s + a - b, suf);
}

int deploy_parse(const char *path, const char *text, size_t len, const deploy_schema *sc,
		 deploy_file **out, muh_diag *d)
{
	*out = NULL;
	if (d)
		diag_clear(d);
	if (!path)
		path = "";
	struct P P = {.path = path, .text = text, .len = len, .d = d};
	int rc;
	int shell = ends_with(path, ".sh") || ends_with(path, ".bash") ||
		    (len > 2 && text[0] == '#' && text[1] == '!');
	if (memchr(text, '\0', len))
		return perr(&P, (size_t)((const char *)memchr(text, '\0', len) - text),
			    "not a launch file: a NUL byte");
	if (shell) {
		P.form = DEPLOY_SHELL;
		rc = sh_words(&P, 0, len, 0, 1);
	} else {
		rc = read_yaml(&P, ends_with(path, ".json"));
	}
	if (!rc)
		rc = pick_command(&P);
	deploy_file *f = NULL;
	struct priv *pv = NULL;
	if (!rc) {
		f = calloc(1, sizeof(*f));
		pv = calloc(1, sizeof(*pv));
		if (!f || !pv)
			rc = MUH_ENOMEM;
	}
	if (!rc) {
		f->priv = pv;
		f->form = P.form;
		f->argc = P.toks.n;
		f->argv = calloc(P.toks.n + 1, sizeof(char *));
		f->path = strdup(path);
		f->text = xstrndup(text, len);
		f->len = len;
		if (!f->argv || !f->path || !f->text)
			rc = MUH_ENOMEM;
	}
	if (!rc) {
		for (size_t i = 0; i < P.toks.n; i++)
			f->argv[i] = P.toks.v[i].val; /* moved */
		f->toks = P.toks.v;
		P.toks.v = NULL;
		P.toks.n = 0;
		f->crlf = memmem(text, len, "\r\n", 2) != NULL;
		int args_only = P.form == DEPLOY_K8S && f->argc && looks_flag(f->argv[0]);
		f->first_arg = first_arg_of(f->argv, f->argc, args_only);
		if (!sc) {
			sc = deploy_schema_detect(f);
			const deploy_schema *ts = tree_schema(path, f, sc);
			if (ts)
				sc = ts;
		}
		if (!sc && P.image)
			sc = &builtin[P.image == 1 ? 0 : 1];
		f->schema = sc;
		struct tl L = {.v = f->toks, .n = f->argc, .cap = f->argc};
		P.toks = L;
		rc = read_args(&P, sc, f->first_arg, pv);
		P.toks.v = NULL;
		P.toks.n = 0;
		pv->env = P.env;
		f->args = P.args;
		f->nargs = P.nargs;
		P.args = NULL;
		P.nargs = 0;
	}
	tl_free(&P.toks);
	for (size_t i = 0; i < P.nargs; i++) {
		free(P.args[i].name);
		free(P.args[i].flag);
		free(P.args[i].value);
	}
	free(P.args);
	if (rc) {
		if (f) {
			if (!f->priv)
				free(pv);
			deploy_free(f);
		} else {
			free(pv);
		}
		return rc;
	}
	*out = f;
	return MUH_OK;
}

int deploy_load(const char *path, const deploy_schema *sc, deploy_file **out, muh_diag *d)
{
	*out = NULL;
	size_t n;
	char *t = file_read(path, &n);
	if (!t) {
		if (errno == ENOMEM)
			return MUH_ENOMEM;
		if (d) {
			diag_clear(d);
			diag_at(d, path, 0, 0, NULL);
		}
		diag_errorf(d, "cannot read: %s", strerror(errno));
		return MUH_EENV;
	}
	int rc = deploy_parse(path, t, n, sc, out, d);
	free(t);
	return rc;
}

const deploy_arg *deploy_find(const deploy_file *f, const char *name)
{
	if (!f || !name)
		return NULL;
	for (size_t i = 0; i < f->nargs; i++)
		if (!strcmp(f->args[i].name, name))
			return &f->args[i];
	for (size_t i = 0; i < f->nargs; i++)
		if (!strcmp(f->args[i].flag, name))
			return &f->args[i];
	/* an alias of the schema */
	const deploy_option *o = opt_by_name(f->schema, name);
	if (o)
		for (size_t i = 0; i < f->nargs; i++)
			if (f->args[i].kind != DEPLOY_ENV && !strcmp(f->args[i].name, o->name))
				return &f->args[i];
	/* "--max-num-seqs" or "max-num-seqs" for max_num_seqs */
	char buf[256];
	const char *p = name;
	while (*p == '-')
		p++;
	size_t k = 0;
	for (; p[k] && k + 1 < sizeof(buf); k++)
		buf[k] = p[k] == '-' ? '_' : p[k];
	buf[k] = '\0';
	if (strcmp(buf, name))
		for (size_t i = 0; i < f->nargs; i++)
			if (f->args[i].kind != DEPLOY_ENV && !strcmp(f->args[i].name, buf))
				return &f->args[i];
	return NULL;
}

/* ---- writing ------------------------------------------------------------- */

/* Can v stand as a plain YAML scalar and read back as the same string? */
static int yaml_plain_ok(const char *v)
{
	if (!*v || strchr("[]{},#&*!|>'\"%@`", v[0]) || v[0] == ' ' || v[strlen(v) - 1] == ' ')
		return 0;
	if ((v[0] == '-' || v[0] == '?' || v[0] == ':') && (v[1] == ' ' || !v[1]))
		return 0;
	if (strstr(v, ": ") || strstr(v, " #") || strchr(v, '\t') || (strlen(v) && v[strlen(v) - 1] == ':'))
		return 0;
	return 1;
}

/* Does a plain YAML scalar v resolve to a non-string (number, bool, null)? */
static int yaml_nonstring(const char *v)
{
	return is_int(v) || is_float(v) || !strcmp(v, "true") || !strcmp(v, "false") ||
	       !strcmp(v, "True") || !strcmp(v, "False") || !strcmp(v, "null") || !strcmp(v, "~") ||
	       !strcmp(v, "yes") || !strcmp(v, "no");
}

/* v escaped for the inside of a YAML scalar with quote q (0: as is). */
static void put_yaml_in(strbuf *s, const char *v, char q)
{
	for (const char *p = v; *p; p++) {
		if (q == '"' && (*p == '"' || *p == '\\'))
			strbuf_ch(s, '\\');
		if (q == '\'' && *p == '\'')
			strbuf_ch(s, '\'');
		strbuf_ch(s, *p);
	}
}

/* v as a whole YAML scalar in the quote q (0: plain when possible). */
static void put_yaml_scalar(strbuf *s, const char *v, char q, int strings_only)
{
	if (!q && (!yaml_plain_ok(v) || (strings_only && yaml_nonstring(v))))
		q = '"';
	if (q)
		strbuf_ch(s, q);
	put_yaml_in(s, v, q);
	if (q)
		strbuf_ch(s, q);
}

static int sh_safe(const char *v)
{
	if (!*v)
		return 0;
	for (const char *p = v; *p; p++)
		if (!(isalnum((unsigned char)*p) || strchr("_./:@%+=,-", *p)))
			return 0;
	return 1;
}

/* v as shell text inside the shell quote sq (0: a bare word, so v must be
 * safe), then escaped for the YAML scalar around it (yq). Returns 0 when v
 * cannot be written there. */
static int put_shell(strbuf *s, const char *v, char sq, char yq)
{
	if (!sq && !sh_safe(v))
		return 0;
	if (sq == '\'' && strchr(v, '\''))
		return 0;
	if (sq == '"' && strpbrk(v, "\"\\$`"))
		return 0;
	put_yaml_in(s, v, yq);
	return 1;
}

/* A whole shell word for v (quoted as needed), YAML-escaped for yq. */
static int put_shell_word(strbuf *s, const char *v, char yq)
{
	char sq = 0;
	if (!sh_safe(v))
		sq = (strchr(v, '\'') || yq == '\'') ? '"' : '\'';
	if (sq) {
		char qs[2] = {sq, 0};
		put_yaml_in(s, qs, yq);
	}
	if (!put_shell(s, v, sq ? sq : 0, yq))
		return 0;
	if (sq) {
		char qs[2] = {sq, 0};
		put_yaml_in(s, qs, yq);
	}
	return 1;
}

/* The text of a replacement for the value of token t (inside its quotes,
 * at [vs, ve)); *whole set when the whole token [raw_s, raw_e) must be
 * rewritten instead (then s gets the whole token). */
static int value_text(const deploy_file *f, const struct deploy_tok *t, const char *flagpart,
		      const char *v, strbuf *s, int *whole)
{
	*whole = 0;
	int strings_only = f->form == DEPLOY_K8S || f->form == DEPLOY_COMPOSE;
	if (t->ctx == T_SHELL) {
		if (t->quote)
			return put_shell(s, v, t->quote, t->yq);
		if (sh_safe(v)) {
			put_yaml_in(s, v, t->yq);
			return 1;
		}
		*whole = 1;
		if (flagpart) {
			put_yaml_in(s, flagpart, t->yq);
			put_yaml_in(s, "=", t->yq);
		}
		return put_shell_word(s, v, t->yq);
	}
	/* a YAML/JSON scalar */
	const char *full = v;
	char *tmp = NULL;
	if (flagpart) {
		tmp = malloc(strlen(flagpart) + strlen(v) + 2);
		if (!tmp)
			return 0;
		sprintf(tmp, "%s=%s", flagpart, v);
		full = tmp;
	}
	if (t->quote || (yaml_plain_ok(full) && !(strings_only && yaml_nonstring(full) &&
						  !yaml_nonstring(t->val)))) {
		put_yaml_in(s, v, t->quote);
	} else {
		*whole = 1;
		put_yaml_scalar(s, full, t->ctx == T_FLOW ? '"' : 0, strings_only);
	}
	free(tmp);
	return 1;
}

static int apply_edit(const deploy_file *f, size_t s, size_t e, const char *ins, size_t il,
		      char **text, size_t *len)
{
	size_t n = f->len - (e - s) + il;
	char *b = malloc(n + 1);
	if (!b)
		return MUH_ENOMEM;
	memcpy(b, f->text, s);
	memcpy(b + s, ins, il);
	memcpy(b + s + il, f->text + e, f->len - e);
	b[n] = '\0';
	*text = b;
	*len = n;
	return MUH_OK;
}

static const char *eol(const deploy_file *f)
{
	return f->crlf ? "\r\n" : "\n";
}

/* The text of new argv tokens (one or two words: flag [value]) placed
 * after the token ref, in ref's style; *at gets the insertion point. */
/* The tokens an argument is written as: flag and value (words[1] NULL for a
 * value-less flag), or one "flag=value" token when the file writes its
 * arguments that way (eqform; *joined is then malloc'd). Nonzero when out
 * of memory. */
static int split_words(const char *w1, const char *w2, int eqform, const char *words[2], char **joined)
{
	words[0] = w1;
	words[1] = w2;
	*joined = NULL;
	if (!w2 || !eqform)
		return 0;
	if (!(*joined = malloc(strlen(w1) + strlen(w2) + 2)))
		return 1;
	sprintf(*joined, "%s=%s", w1, w2);
	words[0] = *joined;
	words[1] = NULL;
	return 0;
}

static int new_tokens(const deploy_file *f, const struct deploy_tok *ref, const char *w1,
		      const char *w2, int eqform, strbuf *s, size_t *at)
{
	int strings_only = f->form == DEPLOY_K8S || f->form == DEPLOY_COMPOSE;
	if (ref->ctx == T_YITEM) {
		size_t ls = line_start(f->text, ref->raw_s);
		size_t nl = line_next(f->text, f->len, ref->raw_e);
		*at = nl;
		if (nl == f->len && (nl == 0 || f->text[nl - 1] != '\n'))
			strbuf_str(s, eol(f));
		const char *words[2];
		char *joined = NULL;
		if (split_words(w1, w2, eqform, words, &joined))
			return MUH_ENOMEM;
		for (int k = 0; k < 2 && words[k]; k++) {
			strbuf_put(s, f->text + ls, ref->raw_s - ls);
			put_yaml_scalar(s, words[k], ref->quote,
					strings_only || is_true(words[k]) || is_false(words[k]));
			strbuf_str(s, eol(f));
		}
		free(joined);
		return s->oom ? MUH_ENOMEM : MUH_OK;
	}
	if (ref->ctx == T_FLOW) {
		*at = ref->raw_e;
		char q = ref->quote ? ref->quote : '"';
		const char *words[2];
		char *joined = NULL;
		if (split_words(w1, w2, eqform, words, &joined))
			return MUH_ENOMEM;
		for (int k = 0; k < 2 && words[k]; k++) {
			strbuf_str(s, ", ");
			put_yaml_scalar(s, words[k], q, strings_only);
		}
		free(joined);
		return s->oom ? MUH_ENOMEM : MUH_OK;
	}
	*at = ref->raw_e;
	strbuf_str(s, " ");
	put_yaml_in(s, w1, ref->yq);
	if (w2) {
		if (eqform)
			put_yaml_in(s, "=", ref->yq);
		else
			strbuf_str(s, " ");
		if (!put_shell_word(s, w2, ref->yq))
			return MUH_EINPUT;
	}
	return s->oom ? MUH_ENOMEM : MUH_OK;
}

static int norm_eq(const char *type, const char *a, const char *b)
{
	if (!strcmp(a, b))
		return 1;
	if (type && !strcmp(type, "bool"))
		return (is_true(a) && is_true(b)) || (is_false(a) && is_false(b));
	return 0;
}

/* The value an absent argument has: a bool's default, else NULL. */
static const char *absent_value(const deploy_schema *sc, const char *name, int is_bool)
{
	const deploy_option *o = opt_by_name(sc, name);
	if (o && o->deflt)
		return o->deflt;
	return is_bool ? "False" : NULL;
}

/* Checks that nt reads like f except that `name` reads `value` (or is
 * absent with that as its default). */
static int verify(const deploy_file *f, const char *name, int env, const char *value,
		  int is_bool, const char *nt, size_t nl, muh_diag *d)
{
	deploy_file *g = NULL;
	muh_diag dd;
	int rc = deploy_parse(f->path, nt, nl, f->schema, &g, &dd);
	if (rc == MUH_ENOMEM)
		return rc;
	if (rc) {
		if (d) {
			*d = dd;
			char m[MUH_DIAG_MSG + 600];
			snprintf(m, sizeof(m), "refusing %.200s=%.200s: the result would not read back (%s)",
				 name, value, dd.msg);
			snprintf(d->msg, sizeof(d->msg), "%.*s", (int)sizeof(d->msg) - 1, m);
		}
		return MUH_EINPUT;
	}
	/* every other argument the same, in order */
	size_t i = 0, j = 0;
	const deploy_arg *got = NULL;
	int ok = 1;
	while (ok && (i < f->nargs || j < g->nargs)) {
		while (i < f->nargs && (f->args[i].kind == DEPLOY_ENV) == env &&
		       !strcmp(f->args[i].name, name))
			i++;
		while (j < g->nargs && (g->args[j].kind == DEPLOY_ENV) == env &&
		       !strcmp(g->args[j].name, name)) {
			got = &g->args[j];
			j++;
		}
		if (i >= f->nargs || j >= g->nargs) {
			ok = i >= f->nargs && j >= g->nargs;
			break;
		}
		const deploy_arg *a = &f->args[i], *b = &g->args[j];
		ok = !strcmp(a->name, b->name) && a->kind == b->kind && !strcmp(a->value, b->value);
		i++;
		j++;
	}
	const char *why = NULL;
	if (!ok)
		why = "another argument would change";
	else if (f->argc != g->argc && 0)
		why = "the command would change";
	else if (got && !norm_eq(is_bool ? "bool" : got->type, got->value, value))
		why = "it would read back differently";
	else if (!got) {
		/* absent: a bool reads as its default; an unknown default is taken
		 * as what removing the flag asked for */
		const deploy_option *o = opt_by_name(f->schema, name);
		const char *dv = env ? NULL : absent_value(f->schema, name, is_bool);
		int unknown = is_bool && (!o || !o->deflt) && deploy_find(f, name);
		if (!unknown && (!dv || !norm_eq("bool", dv, value)))
			why = "it would be absent";
	}
	if (ok && !why) {
		/* the program and its leading words unchanged */
		if (g->first_arg != f->first_arg)
			why = "the command would change";
		for (size_t k = 0; !why && k < f->first_arg && k < g->argc; k++)
			if (strcmp(f->argv[k], g->argv[k]))
				why = "the command would change";
	}
	deploy_free(g);
	if (why) {
		if (d) {
			diag_clear(d);
			diag_at(d, f->path, 0, 0, NULL);
		}
		return diag_errorf(d, "refusing %s=%s in %s: %s", name, value, f->path, why);
	}
	return MUH_OK;
}

static int refuse(const deploy_file *f, const deploy_arg *a, muh_diag *d, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static int refuse(const deploy_file *f, const deploy_arg *a, muh_diag *d, const char *fmt, ...)
{
	if (!d)
		return MUH_EINPUT;
	diag_clear(d);
	diag_at(d, f->path, a ? a->line : 0, a ? a->col : 0, f->text);
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(d->msg, sizeof(d->msg), fmt, ap);
	va_end(ap);
	return MUH_EINPUT;
}

/* The env edit: change the entry's value or add an entry. */
static int set_env(const deploy_file *f, const deploy_arg *a, const char *name, const char *value,
		   strbuf *s, size_t *es, size_t *ee, muh_diag *d)
{
	const struct priv *pv = f->priv;
	const struct envloc *E = &pv->env;
	if (a) {
		if (a->val_start == NOSPAN)
			return refuse(f, a, d, "refusing %s=%s: its value is not a plain span", name,
				      value);
		*es = a->val_start;
		*ee = a->val_end;
		char q = a->val_start > 0 ? f->text[a->val_start - 1] : 0;
		if (q != '"' && q != '\'')
			q = 0;
		if (E->style == ENV_SHELL || E->style == ENV_EXPORT) {
			/* find the token to know its YAML quote */
			char yq = 0;
			for (size_t i = 0; i < f->argc; i++)
				if (f->toks[i].ctx == T_SHELL)
					yq = f->toks[i].yq;
			if (q && !put_shell(s, value, q, yq))
				return refuse(f, a, d, "refusing %s=%s: the value cannot be quoted there",
					      name, value);
			if (!q) {
				if (!sh_safe(value)) {
					if (!put_shell_word(s, value, yq))
						return refuse(f, a, d, "refusing %s=%s: cannot quote it",
							      name, value);
				} else {
					put_yaml_in(s, value, yq);
				}
			}
			return MUH_OK;
		}
		if (!q && (!yaml_plain_ok(value) ||
			   ((f->form == DEPLOY_K8S || f->form == DEPLOY_COMPOSE) &&
			    yaml_nonstring(value) && E->style != ENV_LIST))) {
			if (E->style == ENV_LIST)
				return refuse(f, a, d, "refusing %s=%s: the value needs quotes", name,
					      value);
			strbuf_ch(s, '"');
			put_yaml_in(s, value, '"');
			strbuf_ch(s, '"');
			return MUH_OK;
		}
		put_yaml_in(s, value, q);
		return MUH_OK;
	}
	switch (E->style) {
	case ENV_FLOWMAP:
		*es = *ee = E->ins;
		strbuf_str(s, ", ");
		put_yaml_scalar(s, name, name[strcspn(name, ",[]{}:#'\" ")] ? '"' : 0, 1);
		strbuf_str(s, ": ");
		put_yaml_scalar(s, value, E->quote ? E->quote : '"', 1);
		return MUH_OK;
	case ENV_FLOWLIST: {
		*es = *ee = E->ins;
		strbuf_str(s, ", ");
		strbuf kv = {0};
		strbuf_str(&kv, name);
		strbuf_ch(&kv, '=');
		strbuf_str(&kv, value);
		put_yaml_scalar(s, kv.b ? kv.b : "", E->quote ? E->quote : '"', 1);
		free(kv.b);
		return MUH_OK;
	}
	case ENV_FLOWK8S:
		*es = *ee = E->ins;
		strbuf_str(s, ", {name: ");
		put_yaml_scalar(s, name, '"', 1);
		strbuf_str(s, ", value: ");
		put_yaml_scalar(s, value, E->quote ? E->quote : '"', 1);
		strbuf_ch(s, '}');
		return MUH_OK;
	case ENV_MAP:
		*es = *ee = E->ins;
		if (E->ins == f->len && f->len && f->text[f->len - 1] != '\n')
			strbuf_str(s, eol(f));
		strbuf_str(s, E->prefix);
		strbuf_str(s, name);
		strbuf_str(s, ": ");
		put_yaml_scalar(s, value, E->quote ? E->quote : '"', 1);
		strbuf_str(s, eol(f));
		return MUH_OK;
	case ENV_K8S: {
		*es = *ee = E->ins;
		if (E->ins == f->len && f->len && f->text[f->len - 1] != '\n')
			strbuf_str(s, eol(f));
		strbuf_str(s, E->prefix);
		strbuf_str(s, "name: ");
		put_yaml_scalar(s, name, 0, 1);
		strbuf_str(s, eol(f));
		for (size_t k = 0; E->prefix[k]; k++)
			strbuf_ch(s, E->prefix[k] == '\t' ? '\t' : ' ');
		strbuf_str(s, "value: ");
		put_yaml_scalar(s, value, E->quote ? E->quote : '"', 1);
		strbuf_str(s, eol(f));
		return MUH_OK;
	}
	case ENV_LIST: {
		*es = *ee = E->ins;
		if (E->ins == f->len && f->len && f->text[f->len - 1] != '\n')
			strbuf_str(s, eol(f));
		strbuf_str(s, E->prefix);
		strbuf kv = {0};
		strbuf_str(&kv, name);
		strbuf_ch(&kv, '=');
		strbuf_str(&kv, value);
		put_yaml_scalar(s, kv.b ? kv.b : "", E->quote, 1);
		free(kv.b);
		strbuf_str(s, eol(f));
		return MUH_OK;
	}
	case ENV_EXPORT:
		*es = *ee = E->ins;
		strbuf_str(s, "export ");
		strbuf_str(s, name);
		strbuf_ch(s, '=');
		if (!put_shell_word(s, value, 0))
			return refuse(f, NULL, d, "refusing %s=%s: cannot quote it", name, value);
		strbuf_str(s, eol(f));
		return MUH_OK;
	case ENV_SHELL: {
		*es = *ee = E->ins;
		char yq = f->argc ? f->toks[0].yq : 0;
		put_yaml_in(s, name, yq);
		put_yaml_in(s, "=", yq);
		if (!put_shell_word(s, value, yq))
			return refuse(f, NULL, d, "refusing %s=%s: cannot quote it", name, value);
		strbuf_str(s, " ");
		return MUH_OK;
	}
	default:
		break;
	}
	if (E->can_block) {
		*es = *ee = E->block_ins;
		if (E->block_ins == f->len && f->len && f->text[f->len - 1] != '\n')
			strbuf_str(s, eol(f));
		char ind[130];
		int c = E->block_col < 120 ? E->block_col : 120;
		memset(ind, ' ', (size_t)c);
		ind[c] = '\0';
		strbuf_str(s, ind);
		strbuf_str(s, E->block_key);
		strbuf_ch(s, ':');
		strbuf_str(s, eol(f));
		strbuf_str(s, ind);
		if (E->block_k8s) {
			strbuf_str(s, "- name: ");
			put_yaml_scalar(s, name, 0, 1);
			strbuf_str(s, eol(f));
			strbuf_str(s, ind);
			strbuf_str(s, "  value: ");
		} else {
			strbuf_str(s, "  ");
			strbuf_str(s, name);
			strbuf_str(s, ": ");
		}
		put_yaml_scalar(s, value, '"', 1);
		strbuf_str(s, eol(f));
		return MUH_OK;
	}
	return refuse(f, NULL, d, "refusing %s=%s: %s has no place for environment variables", name,
		      value, f->path);
}

int deploy_set(const deploy_file *f, const char *name, const char *value, char **text,
	       size_t *len, muh_diag *d)
{
	*text = NULL;
	*len = 0;
	if (d)
		diag_clear(d);
	if (!name || !*name || !value)
		return refuse(f, NULL, d, "deploy_set: a name and a value are needed");
	if (strpbrk(value, "\n\r"))
		return refuse(f, NULL, d, "refusing %s: a value must be one line", name);
	const struct priv *pv = f->priv;
	const deploy_arg *a = deploy_find(f, name);
	int env = (a && a->kind == DEPLOY_ENV) || (!a && is_upper_name(name));
	if (a && !env && a->kind == DEPLOY_ENV)
		a = NULL;
	strbuf s = {0};
	size_t es = 0, ee = 0;
	int rc = MUH_OK;
	const char *canon = name;
	char cname[256];
	int is_bool = 0;
	if (env) {
		rc = set_env(f, a, name, value, &s, &es, &ee, d);
		if (a)
			canon = a->name;
	} else {
		const deploy_option *o = a ? opt_by_name(f->schema, a->name) : opt_by_name(f->schema, name);
		if (a)
			snprintf(cname, sizeof(cname), "%s", a->name);
		else if (o)
			snprintf(cname, sizeof(cname), "%s", o->name);
		else {
			const char *p = name;
			while (*p == '-')
				p++;
			size_t k = 0;
			for (; p[k] && k + 1 < sizeof(cname); k++)
				cname[k] = p[k] == '-' ? '_' : p[k];
			cname[k] = '\0';
		}
		canon = cname;
		is_bool = (o && !strcmp(o->type, "bool") && !o->takes_value) ||
			  (a && (a->kind == DEPLOY_FLAG || a->kind == DEPLOY_NEG)) ||
			  (!a && !o && (is_true(value) || is_false(value)) && !is_int(value));
		if (a && a->kind == DEPLOY_OPT)
			is_bool = 0;
		if (is_bool && !is_true(value) && !is_false(value))
			return refuse(f, a, d, "refusing %s=%s: %s is a flag (True or False)", name,
				      value, cname);
		if (!f->argc)
			return refuse(f, a, d, "refusing %s=%s: no command", name, value);
		/* the schema's type: what the server's argparse would accept */
		if (o && !is_bool && o->takes_value == 1) {
			int fits = !strcmp(o->type, "int")     ? is_int(value)
				   : !strcmp(o->type, "float") ? is_float(value)
				   : o->choices ? in_list(o->choices, value, strlen(value))
						: 1;
			if (!fits)
				return refuse(f, a, d, "refusing %s=%s: %s takes %s%s%s", name, value,
					      o->name, o->choices ? "one of " : "an ",
					      o->choices ? o->choices : o->type, "");
		}
		size_t idx = a ? (size_t)(a - f->args) : 0;
		if (a && a->kind == DEPLOY_OPT) {
			const struct deploy_tok *vt = &f->toks[pv->argtok[idx][1]];
			if (a->val_start == NOSPAN)
				return refuse(f, a, d, "refusing %s=%s: its value is not one plain span in "
						       "the file",
					      name, value);
			int whole;
			const char *fp = pv->opt_eq[idx] ? a->flag : NULL;
			if (!value_text(f, vt, fp, value, &s, &whole)) {
				free(s.b);
				return refuse(f, a, d, "refusing %s=%s: the value cannot be quoted there",
					      name, value);
			}
			es = whole ? vt->raw_s : a->val_start;
			ee = whole ? vt->raw_e : a->val_end;
		} else if (a && ((a->kind == DEPLOY_FLAG && is_true(value)) ||
				 (a->kind == DEPLOY_NEG && is_false(value)))) {
			es = ee = 0; /* nothing to change */
		} else {
			/* the reference token for a new one: the last server argument's */
			size_t nserver = 0;
			for (size_t i = 0; i < f->nargs; i++)
				nserver += f->args[i].kind != DEPLOY_ENV;
			size_t reft = nserver ? pv->argtok[nserver - 1][1] : f->argc - 1;
			int eqform = 0;
			for (size_t i = 0; i < nserver; i++)
				if (f->args[i].kind == DEPLOY_OPT)
					eqform = pv->opt_eq[i];
			const char *absent = absent_value(f->schema, canon, is_bool);
			char lf[260];
			long_flag(o, canon, lf, sizeof(lf));
			const char *w1 = NULL, *w2 = NULL;
			char negf[270];
			/* a bool whose default is unknown or None (vLLM's "auto"): removing
			 * the flag does not make it False, so it is written out */
			int tri = o && !strcmp(o->type, "bool") && !o->deflt;
			if (a && tri && o->takes_value == 2 && a->kind == DEPLOY_FLAG) {
				/* StoreBoolean: `--x` stays, an explicit value follows it */
				rc = new_tokens(f, &f->toks[pv->argtok[idx][0]], "False", NULL, 0, &s, &es);
				ee = es;
			} else if (a) {
				/* remove the flag (or --no-X); put the other one only where
				 * the default is known to differ */
				es = a->tok_start;
				ee = a->tok_end;
				int want = is_true(value);
				absent = o ? o->deflt : NULL;
				if (tri && want)
					w1 = lf; /* --no-x set True: --x in its place */
				else if (tri && !(o->neg || (f->schema && f->schema->negatable)))
					return refuse(f, a, d,
						      "refusing %s=%s: %s defaults to None (auto) and the "
						      "tree's parser takes no explicit false for it",
						      name, value, lf);
				else if (!tri && (!absent || norm_eq("bool", absent, want ? "True" : "False")))
					w1 = NULL;
				else if (want)
					w1 = lf;
				else if (o && o->neg) {
					snprintf(negf, sizeof(negf), "%.*s", (int)strcspn(o->neg, "|"), o->neg);
					if (strchr(o->neg, '|') && !strncmp(o->neg, "-", 1) && o->neg[1] != '-') {
						const char *l2 = strchr(o->neg, '|') + 1;
						snprintf(negf, sizeof(negf), "%.*s", (int)strcspn(l2, "|"), l2);
					}
					w1 = negf;
				} else if ((f->schema && f->schema->negatable) || !o) {
					snprintf(negf, sizeof(negf), "--no-%s", lf + 2);
					w1 = negf;
				}
				if (w1) {
					/* in the place of the removed one */
					const struct deploy_tok *t0 = &f->toks[pv->argtok[idx][0]];
					if (t0->ctx == T_YITEM) {
						size_t ls = line_start(f->text, t0->raw_s);
						strbuf_put(&s, f->text + ls, t0->raw_s - ls);
						put_yaml_scalar(&s, w1, t0->quote, 0);
						strbuf_str(&s, eol(f));
					} else {
						es = t0->raw_s;
						ee = t0->raw_e;
						if (t0->ctx == T_FLOW)
							put_yaml_scalar(&s, w1, t0->quote ? t0->quote : '"', 0);
						else
							put_yaml_in(&s, w1, t0->yq);
					}
				}
			} else if (is_bool || (tri && o->takes_value == 2)) {
				int want = is_true(value);
				if (tri && o->takes_value == 2 && !want)
					w2 = "False"; /* StoreBoolean: `--x False` */
				if (!tri && absent && norm_eq("bool", absent, want ? "True" : "False"))
					w1 = NULL; /* already so */
				else if (w2 || want)
					w1 = lf;
				else if (want)
					w1 = lf;
				else if (o && o->neg) {
					const char *p = o->neg;
					const char *lng = strstr(p, "--");
					snprintf(negf, sizeof(negf), "%.*s", (int)strcspn(lng ? lng : p, "|"),
						 lng ? lng : p);
					w1 = negf;
				} else if ((f->schema && f->schema->negatable) || !o) {
					snprintf(negf, sizeof(negf), "--no-%s", lf + 2);
					w1 = negf;
				} else {
					return refuse(f, NULL, d, "refusing %s=%s: %s has no negation", name,
						      value, lf);
				}
				if (w1)
					rc = new_tokens(f, &f->toks[reft], w1, w2, eqform, &s, &es);
				ee = es;
			} else {
				w1 = lf;
				w2 = value;
				rc = new_tokens(f, &f->toks[reft], w1, w2, eqform, &s, &es);
				ee = es;
			}
		}
	}
	if (rc || s.oom) {
		free(s.b);
		if (s.oom)
			return MUH_ENOMEM;
		if (rc == MUH_EINPUT && d && !diag_is_set(d))
			return refuse(f, a, d, "refusing %s=%s: the value cannot be written there", name,
				      value);
		return rc;
	}
	char *nt;
	size_t nl;
	rc = apply_edit(f, es, ee, s.b ? s.b : "", s.n, &nt, &nl);
	free(s.b);
	if (rc)
		return rc;
	rc = verify(f, canon, env, value, is_bool, nt, nl, d);
	if (rc) {
		free(nt);
		return rc;
	}
	*text = nt;
	*len = nl;
	return MUH_OK;
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
	char *c = xstrndup(s, n);
	if (!c)
		return NULL;
	o->strs[o->nstrs++] = c;
	return c;
}

static int own_add(struct own_schema *o, size_t *cap, const deploy_option *op)
{
	if (o->sc.n == *cap) {
		size_t nc = *cap ? *cap * 2 : 32;
		deploy_option *no = realloc(o->opts, nc * sizeof(*no));
		if (!no)
			return MUH_ENOMEM;
		o->opts = no;
		*cap = nc;
	}
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

int deploy_schema_from_surface(const struct muh_surface *s, const deploy_schema *base,
			       deploy_schema **out)
{
	*out = NULL;
	struct own_schema *o = calloc(1, sizeof(*o));
	if (!o)
		return MUH_ENOMEM;
	o->sc.engine = base ? base->engine : "tree";
	o->sc.negatable = base ? base->negatable : 1;
	size_t cap = 0;
	int rc = MUH_OK;
	for (size_t i = 0; base && i < base->n && !rc; i++)
		rc = own_add(o, &cap, &base->opts[i]);
	size_t nk = s ? scan_nknobs(s) : 0;
	for (size_t i = 0; i < nk && !rc; i++) {
		const muh_knob *k = scan_knob(s, i);
		if (strcmp(k->kind, "engine_arg") || !strcmp(k->scope, "<deployment>") ||
		    !k->name || !*k->name)
			continue;
		int dup = 0;
		for (size_t j = 0; j < o->sc.n && !dup; j++)
			dup = !strcmp(o->opts[j].name, k->name);
		if (dup)
			continue;
		char fl[260];
		long_flag(NULL, k->name, fl, sizeof(fl));
		const char *v = k->eval ? k->eval : k->value ? k->value : "";
		char type[8];
		infer_type(v, type);
		deploy_option op = {0};
		op.name = own_str(o, k->name, strlen(k->name));
		op.flags = own_str(o, fl, strlen(fl));
		op.type = !strcmp(type, "bool") ? "bool"
			  : !strcmp(type, "int")  ? "int"
			  : !strcmp(type, "float") ? "float"
						   : "str";
		op.takes_value = strcmp(type, "bool") != 0;
		op.deflt = strcmp(v, "None") ? own_str(o, v, strlen(v)) : NULL;
		if (!op.name || !op.flags)
			rc = MUH_ENOMEM;
		else
			rc = own_add(o, &cap, &op);
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
		snprintf(mod, cap, "%s", base_name(f->argv[0]));
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

static const deploy_schema *tree_schema(const char *path, const deploy_file *f,
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
