/*
 * deploy_int.h — what the files of deployment-file handling share: the
 * token list, the reader's state, and the functions one of them calls in
 * another. Internal to libmuh; not installed.
 *
 * The files: deploy.c (reading: YAML, shell words, the argparse pass),
 * deploy_write.c (deploy_set: one argument's edit, read back and checked),
 * deploy_schema.c (the servers' argument schemas: built in, from argparse
 * definitions, from a surface, from the engine tree's own parser).
 */
#ifndef MUH_DEPLOY_INT_H
#define MUH_DEPLOY_INT_H

#include <stddef.h>

#include "muh/deploy.h"

#define NOSPAN ((size_t)-1)

/* ---- tokens and the reader's state (deploy.c reads, deploy_write.c edits) ---- */

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

/* The built-in schemas: [0] llama.cpp's llama-server, [1] vLLM (deploy_schema.c). */
extern const deploy_schema deploy_builtin[2];

/* ---- deploy.c ---- */

/* Is s an UPPER_CASE name (upper letters, digits, '_'; not starting with a digit)? */
int deploy_is_upper_name(const char *s);

/* The offset of the start of the line holding offset p of t. */
size_t deploy_line_start(const char *t, size_t p);

/* The offset just past the end of the line holding p (past its '\n'). */
size_t deploy_line_next(const char *t, size_t len, size_t p);

/* ---- deploy_schema.c ---- */

/* The part of path p after its last '/'. */
const char *deploy_base_name(const char *p);

/* Writes the type v reads as into type: "int", "float", "bool" (True,
 * False, true, false) or "str". */
void deploy_infer_type(const char *v, char type[8]);

/* Is v a false spelling: False, false, FALSE, 0, no, off? */
int deploy_is_false(const char *v);

/* Is v a true spelling: True, true, TRUE, 1, yes, on? */
int deploy_is_true(const char *v);

/* Is s a whole strtod number (no hex, inf or nan spellings, no leading
 * space)? */
int deploy_is_float(const char *s);

/* Is s an optional sign and one or more decimal digits? */
int deploy_is_int(const char *s);

/* Is flag one of the '|'-separated alternatives in list? */
int deploy_in_list(const char *list, const char *flag, size_t fl);

/* The option name a command-line flag spells: leading '-'s dropped, the
 * other '-'s made '_' ("--max-num-seqs" -> "max_num_seqs"), cut to fit buf
 * (n > 0 bytes, NUL-terminated). */
void deploy_flag_name(const char *flag, char *buf, size_t n);

/* The option a flag names in sc; *neg set when the flag negates it. */
const deploy_option *deploy_opt_by_flag(const deploy_schema *sc, const char *flag, size_t fl,
					int *neg);

/* The option of sc named name, else the one whose flag is name (not a
 * negation), or NULL. */
const deploy_option *deploy_opt_by_name(const deploy_schema *sc, const char *name);

/* The long flag of an option ("--max-num-seqs"), into buf. */
void deploy_long_flag(const deploy_option *o, const char *name, char *buf, size_t n);

/* The schema of the engine tree the file at path launches (its own
 * parser's options over base's), or NULL when f's program is no module
 * of a tree found from path upwards. Kept for the process. */
const deploy_schema *deploy_tree_schema(const char *path, const deploy_file *f,
				       const deploy_schema *base);

#endif
