/*
 * deploy.h — deployment files: how an engine is launched, read with the
 * server's own argument semantics and written back one argument at a time.
 *
 * A deployment file is one of
 *   DEPLOY_YAML_LIST  a YAML block list of argv tokens (top level, or under
 *                     `command:`), one token per item
 *   DEPLOY_JSON_LIST  a flow list `["vllm", "serve", ...]` (a .json file, or
 *                     `command: [...]` in YAML)
 *   DEPLOY_SHELL      a shell command line: a .sh file, or a YAML string
 *                     (`command: vllm serve m --x 1`); backslash
 *                     continuations, quotes, `KEY=VALUE` prefixes and
 *                     `export KEY=VALUE` lines are env entries
 *   DEPLOY_K8S        a Kubernetes container (`command:` + `args:`, `env:` a
 *                     list of {name, value})
 *   DEPLOY_COMPOSE    a docker-compose service (`services.X.command:` as a
 *                     list or a string, `environment:` a mapping or list)
 * plus a top-level `env:` mapping in any YAML form. `sh -c "..."` commands
 * are read through to the shell string they run.
 *
 * The arguments are read the way the server's argparse reads them:
 * `--flag value`, `--flag=value`, short aliases resolved through a schema
 * (`-tp 4` is tensor_parallel_size), value-less booleans (the schema says so;
 * without one, a flag followed by another flag or by the end), numbers such
 * as -1 are values, `--no-X` negates X. Flags the schema does not know are
 * arguments too, typed from their value.
 *
 * Every argument carries exact byte spans into the file (libfyaml's marks for
 * YAML/JSON, the tokenizer's own for shell text), so that deploy_set changes
 * exactly one argument and keeps everything else: quotes, indentation,
 * comments, CRLF. deploy_set re-reads its result and refuses (MUH_EINPUT)
 * anything that does not read back as asked.
 *
 * The library never prints; errors are muh_diag with file:line:col.
 */
#ifndef MUH_DEPLOY_H
#define MUH_DEPLOY_H

#include <stddef.h>

#include "muh/diag.h"

#include "muh/api.h"

MUH_BEGIN_DECLS

enum deploy_form { DEPLOY_YAML_LIST, DEPLOY_JSON_LIST, DEPLOY_SHELL, DEPLOY_K8S, DEPLOY_COMPOSE };
enum deploy_kind { DEPLOY_OPT, DEPLOY_FLAG, DEPLOY_NEG, DEPLOY_ENV };

typedef struct deploy_arg {
	char *name;  /* canonical: long option without dashes, '-' -> '_'
	                ("max_num_seqs"), alias resolved ("-tp" ->
	                "tensor_parallel_size"); env: the variable name */
	char *flag;  /* as written: "-tp", "--max-num-seqs", "--no-enable-x";
	                env: the name */
	char *value; /* what the server parses, unquoted: "4"; DEPLOY_FLAG
	                "True"; DEPLOY_NEG "False" */
	enum deploy_kind kind;
	char type[8];              /* int float bool choice str: from the schema
	                              when known, else inferred from the value */
	int line, col;             /* of the flag token, 1-based */
	size_t tok_start, tok_end; /* bytes that deleting this argument removes
	                              (flag+value tokens; whole YAML item lines
	                              with their line ending) */
	size_t val_start, val_end; /* bytes of the value text (inside quotes)
	                              that a new value replaces; a flag: the
	                              flag's own text */
} deploy_arg;

struct deploy_tok; /* internal: one argv token with its spans */
struct deploy_schema;

typedef struct deploy_file {
	char *path, *text;
	size_t len;
	enum deploy_form form;
	int crlf;     /* the file's lines end in CRLF */
	char **argv;  /* the command as it would be exec'd, program first, unquoted */
	size_t argc;
	size_t first_arg; /* argv index where the server's own arguments start */
	deploy_arg *args; /* server arguments in order, then env entries */
	size_t nargs;
	/* added: what deploy_set needs to write in the file's own style */
	const struct deploy_schema *schema; /* the schema the file was read with, or NULL */
	struct deploy_tok *toks;            /* internal: argv[i]'s spans */
	void *priv;                         /* internal */
} deploy_file;

typedef struct deploy_option {
	const char *name;    /* canonical name: "tensor_parallel_size" */
	const char *flags;   /* "-tp|--tensor-parallel-size" */
	const char *type;    /* int float bool choice str */
	int takes_value;     /* 0 a value-less flag, 1 one value, 2 an optional
	                        value (taken only when it is one of choices) */
	const char *choices; /* "a|b" or NULL */
	const char *deflt;   /* the server's default as text, NULL when unknown
	                        or computed */
	const char *neg;     /* added: flags that set a bool to False
	                        ("-nocb|--no-cont-batching"), or NULL; a bool
	                        option of a schema with negatable set also takes
	                        --no-<long> */
} deploy_option;

typedef struct deploy_schema {
	const char *engine;
	const deploy_option *opts;
	size_t n;
	int negatable; /* added: every bool option takes --no-X (BooleanOptionalAction) */
} deploy_schema;

/* Built-in schemas: "llama.cpp" (llama-server) and "vllm" (vllm serve and
 * the OpenAI api_server). NULL when unknown. */
const deploy_schema *deploy_schema_builtin(const char *engine);

/* Which built-in schema fits f's program ("llama-server" -> llama.cpp,
 * vllm / api_server -> vllm); NULL if none. */
const deploy_schema *deploy_schema_detect(const deploy_file *f);

/* Reads a deployment file from text (len bytes; need not be NUL-terminated;
 * path names it in diagnostics and decides .sh/.json). sc NULL: detect the
 * schema from the program. Returns MUH_OK and *out (free with deploy_free),
 * MUH_EINPUT with file:line:col when it is not a launch file or cannot be
 * parsed, MUH_ENOMEM. The schema must outlive *out. */
int deploy_parse(const char *path, const char *text, size_t len, const deploy_schema *sc,
		 deploy_file **out, muh_diag *d);

/* deploy_parse on the file at path; MUH_EENV when it cannot be read. */
int deploy_load(const char *path, const deploy_schema *sc, deploy_file **out, muh_diag *d);

void deploy_free(deploy_file *f);

/* The argument with this canonical name (or any of its flags as written,
 * or an env name); NULL when absent. */
const deploy_arg *deploy_find(const deploy_file *f, const char *name);

/* New text of f with argument `name` set to `value` (*text malloc'd,
 * NUL-terminated, *len its length):
 *   - an OPT changes only its value token (quotes and line endings kept);
 *   - a bool flag set to False/false/0 removes that flag's token(s) and
 *     nothing else (a --no-X is added only where the default is True);
 *     set True where absent adds it; a --no-X set True is removed;
 *   - a bool whose default is unknown or None (vLLM's auto: an
 *     Optional[bool], StoreBoolean) is never dropped: False is written
 *     out in the form the schema's parser takes (StoreBoolean: `--x
 *     False` after the flag; else `--no-x` in its place), a --no-X set True
 *     becomes --X; refused when the parser has no explicit false;
 *   - an absent argument is added after the last server argument in the
 *     file's own style (YAML item with the same indent and quoting, JSON
 *     element, shell token);
 *   - env names (DEPLOY_ENV, or names in UPPER_CASE) change or add the env
 *     entry.
 * The result is parsed again; if it no longer parses, or any other argument
 * changed, or this one does not read back as value: MUH_EINPUT with why,
 * nothing returned. A value with a newline, CR or NUL is refused. */
int deploy_set(const deploy_file *f, const char *name, const char *value, char **text,
	       size_t *len, muh_diag *d);

/* A schema built from definitions: every add_argument('--flag', '-alias',
 * type=..., default=..., action='store_true', choices=[...]) call in text
 * (Python source of an engine's argument parser). *out is freed with
 * deploy_schema_free. Returns MUH_OK (n may be 0), MUH_ENOMEM. */
int deploy_schema_from_argparse(const char *engine, const char *text, size_t len,
				deploy_schema **out);

void deploy_schema_free(deploy_schema *sc);

/* deploy_parse/deploy_load with sc NULL read a deployment file that sits in
 * the engine tree it launches (the program's module found from the file's
 * directory upwards: `-m a.b.c` -> a/b/c.py, `vllm` -> vllm/__init__.py)
 * with that tree's own add_argument definitions, the built-in schema's
 * other options after them: a StoreBoolean (vLLM 0.6.3) is a bool that
 * takes an optional true/false, a BooleanOptionalAction takes --no-X, a
 * bool's non-literal default is unknown. A relative path is looked up under
 * the trees named here first (scan_tree names the tree it scans; at most 4
 * are kept, the process's lifetime), then the working directory. */
void deploy_tree_hint(const char *root);

/* The engine tree f launches, found as above (its root directory, absolute,
 * into root): 0, or -1 when f's program is not a module found there. */
int deploy_tree_root(const deploy_file *f, char *root, size_t cap);

/* The name of an argument kind: "opt" "flag" "neg" "env". */
const char *deploy_kind_name(enum deploy_kind k);

MUH_END_DECLS

#endif
