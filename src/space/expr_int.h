/*
 * expr_int.h — what the files of the expression engine share: the opcodes,
 * the bytecode (ins, prog, struct muh_expr), the limits, and the functions one
 * of them calls in another. Internal to libmuh; not installed.
 *
 * The files: expr.c (value arithmetic, the two interpreters, evaluation),
 * expr_compile.c (lexer, parser, emitter, monotonicity: text to bytecode),
 * expr_list.c (BAT value lists). Must never: be included outside them.
 */
#ifndef MUH_EXPR_INT_H
#define MUH_EXPR_INT_H

#include <stddef.h>
#include <stdint.h>

#include "muh/expr.h"

#define MAX_DEPTH    256       /* value stack slots; deeper expressions are refused */
#define MAX_NEST     200       /* parser recursion limit (parentheses, unary chains) */
#define LIST_CAP     10000000u /* longest list expr_eval_list produces */
#define NAMES_LISTED 40        /* known names listed in an unknown-name message */

/* ---------------------------------------------------------------- opcodes */

#define BINOPS(X)                                                                                  \
	X(ADD)                                                                                     \
	X(SUB)                                                                                     \
	X(MUL)                                                                                     \
	X(TDIV)                                                                                    \
	X(FDIV)                                                                                    \
	X(MOD) X(POW) X(BAND) X(BOR) X(BXOR) X(SHL) X(SHR) X(EQ) X(NE) X(LT) X(LE) X(GT) X(GE)

enum binop {
#define X(n) B_##n,
	BINOPS(X)
#undef X
	    B_COUNT
};

enum opcode {
	OP_END,
	OP_PUSH_K,
	OP_PUSH_S,
	OP_NEG,
	OP_POS,
	OP_INV,
	OP_NOT,
	OP_JF_OR_POP, /* and: if top is false jump, else pop */
	OP_JT_OR_POP, /* or: if top is true jump, else pop */
	OP_JF_POP,    /* conditional expression: pop, jump if false */
	OP_JMP,
	OP_CHAIN_EQ, /* chained comparison; same order as B_EQ..B_GE */
	OP_CHAIN_NE,
	OP_CHAIN_LT,
	OP_CHAIN_LE,
	OP_CHAIN_GT,
	OP_CHAIN_GE,
	OP_MIN, /* operand: argument count */
	OP_MAX,
	OP_ABS,
	OP_CEILDIV,
	OP_ISPOW2,
	OP_LOG2,
	OP_INT,
	OP_FLOAT,
	OP_ROUND,
	OP_CEIL,
	OP_FLOOR,
	OP_BIN0, /* then B_COUNT * 3 binary opcodes: OP_BIN0 + 3*binop + mode */
};

enum { MODE_X = 0, MODE_S = 1, MODE_K = 2 };

#define BINOP(b, mode) (OP_BIN0 + 3 * (b) + (mode))

/* List-only "functions", never emitted as bytecode. */
enum { FN_RANGE = 1000, FN_LIST };

typedef struct ins {
	int32_t op;
	int32_t a;
} ins;

typedef struct prog {
	ins *code;
	int *ipos; /* source offset of each instruction, for error columns */
	int ncode, capcode;
	muh_value *k;
	int nk, capk;
	int *slots; /* distinct slots read, ascending after compile */
	int nslots, capslots;
	int maxdepth;
	int int_ok; /* the integer interpreter may run it */
} prog;

struct muh_expr {
	prog p;
	char *src;
	char *pool; /* string literal contents; constants point into it */
	struct node *nodes; /* the folded AST, kept for expr_falls (names carry slots) */
	int root;
};

/* Token kinds of the lexer. */
enum tokkind {
	T_END,
	T_ERR,
	T_INT,
	T_FLOAT,
	T_STR,
	T_NAME,
	/* keywords */
	T_AND,
	T_OR,
	T_NOT,
	T_TRUE,
	T_FALSE,
	T_FOR,
	T_IN,
	T_IF,
	T_ELSE,
	/* punctuation */
	T_LPAREN,
	T_RPAREN,
	T_LBRACK,
	T_RBRACK,
	T_COMMA,
	T_PLUS,
	T_MINUS,
	T_STAR,
	T_SLASH,
	T_DSLASH,
	T_PERCENT,
	T_POW,
	T_TILDE,
	T_AMP,
	T_PIPE,
	T_CARET,
	T_SHL,
	T_SHR,
	T_EQ,
	T_NE,
	T_LT,
	T_LE,
	T_GT,
	T_GE,
	T_ANDAND,
	T_OROR,
	T_BANG,
	T_ASSIGN,
	T_OTHER, /* a character that starts nothing */
};

/* AST node kinds. Children are created before their parent, so a forward
 * pass over the node array visits them bottom-up. */
enum nodekind { N_CONST, N_NAME, N_BIN, N_UN, N_AND, N_OR, N_CMP, N_COND, N_CALL, N_LIST, N_COMP };

typedef struct tok {
	int kind;
	int pos, len; /* byte offset and length in src */
	muh_value v;  /* T_INT, T_FLOAT */
} tok;

typedef struct node {
	int kind;
	int op;       /* binop, unary opcode or function */
	int pos, len; /* where it is in src; for N_NAME the name */
	int a, b, c;  /* children; -1 when absent */
	int kids;     /* first child of N_CMP/N_CALL/N_LIST; siblings through next */
	int nkids;
	int next;
	int cmpop;      /* in a comparison chain: the operator before this operand */
	int vpos, vlen; /* N_COMP: the loop variable */
	int soff;       /* N_CONST strings: offset of the contents in the pool */
	int slot;       /* N_NAME: the slot it resolved to (after compile) */
	muh_value k;
} node;

typedef struct parser {
	const char *src;
	size_t p; /* lexer position */
	tok t;
	node *nodes;
	int nn, capn;
	char *pool;
	size_t npool, cappool;
	muh_diag *d;
	int nest;
	int err; /* 0, MUH_EINPUT or MUH_ENOMEM */
	int list_mode;
	int *spine; /* left spines walked without recursion (spine_push) */
	int nspine, capspine;
} parser;

/* Result of an operation: ok, a reason for EXPR_ERROR, or (integer
 * interpreter only) "needs the general path". */
enum {
	R_OK = 0,
	R_ZERODIV,
	R_OVERFLOW,
	R_TYPE,
	R_NEGSHIFT,
	R_DOMAIN,
	R_BAIL,
};

/* ---- expr.c ---- */

/* Frees what p owns and zeroes it. */
void expr_prog_free(prog *p);

/* Python truthiness: 0, 0.0 and "" are false; everything else (NaN too) true. */
int expr_truthy(muh_value v);

/* Any binary operation on any values, with Python's meaning. */
int expr_gen_binop(int b, muh_value x, muh_value y, muh_value *r);

/* Unary operators (OP_NEG, OP_POS, OP_INV, OP_NOT) on any value. */
int expr_gen_unop(int op, muh_value x, muh_value *r);

/* The general interpreter. Returns R_OK with *res, or an error reason and
 * the index of the failing instruction in *errpc. */
int expr_run_gen(const prog *p, const muh_value *slots, muh_value *res, int *errpc);

/* ---- expr_compile.c ---- */

/* Records an error at byte offset pos of src (only the first one counts). */
void expr_perr(parser *ps, int pos, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Records an allocation failure (MUH_ENOMEM); the diag says "out of memory". */
void expr_perr_nomem(parser *ps);

/* The answer to a NULL source text: d (when not NULL) cleared and saying
 * "no expression"; returns MUH_EINPUT. */
int expr_no_source(muh_diag *d);

/* Parses the whole of src; returns the root node or -1 (diag filled). */
int expr_parse_all(parser *ps);

/* Folds operators whose operands are constants, bottom-up (children come
 * before parents in the node array). Operations that fail are left for run
 * time, where they yield EXPR_ERROR. */
void expr_fold(parser *ps);

/* Pushes node ni onto ps's spine stack; -1 when out of memory. */
int expr_spine_push(parser *ps, int ni);

/* Compiles the subtree at root into p. Returns 0, or -1 with ps->err set. */
int expr_compile_node(parser *ps, int root, const char *const *names, int nnames, int list_var,
                      prog *p);

/* Starts a parser over src; list_mode adds range(), list() and the
 * "only the comprehension variable" rule for names. */
void expr_parser_init(parser *ps, const char *src, muh_diag *d, int list_mode);

/* Frees the AST and the string pool (unless handed over). */
void expr_parser_free(parser *ps);

#endif
