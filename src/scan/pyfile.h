/*
 * pyfile.h — the per-file half of muh scan: one Python file in, its facts out.
 *
 * pyfile_analyze() parses one file's bytes with tree-sitter (Python grammar,
 * ABI 14) and keeps only what the tree-level analysis (scan_*.c) needs, so the
 * syntax tree and the source can be freed at once:
 *   - scopes: functions and classes, with byte spans, decorators that matter
 *     (@triton.jit, @triton.autotune), tl.constexpr params, and whether the
 *     body raises NotImplementedError unconditionally;
 *   - imports, with the if-guard they sit under;
 *   - if-guards on a name (`if use_v1:`, `if not X:`, `if TYPE_CHECKING:`,
 *     `if current_platform.is_rocm():`) with the byte spans of both branches;
 *   - loads of names and attributes, string-key reads of dicts (`c['K']`,
 *     `c.get('K')`) and `**splats` into calls;
 *   - calls (callee text, whether unconditional in its function body);
 *   - knob candidates of the kinds that one file can show by itself
 *     (constants, overrides, launch bindings, autotune lists, config dicts,
 *     capability functions, JSON name patterns, engine-argument fields).
 *
 * It never fails on bad input: syntax errors are counted and the first one's
 * position kept (tree-sitter recovers and the rest of the file is analyzed);
 * CRLF, tabs and non-UTF-8 bytes are just bytes. Recursion is depth-bounded.
 * All strings live in the file's arena and die with pyfile_free().
 */
#ifndef MUH_PYFILE_H
#define MUH_PYFILE_H

#include <stddef.h>
#include <stdint.h>

enum pf_scope_flag {
	PF_FUNC = 1,
	PF_CLASS = 2,
	PF_JIT = 4,        /* @triton.jit / @jit */
	PF_AUTOTUNE = 8,   /* @triton.autotune */
	PF_RAISES_NIE = 16, /* body raises NotImplementedError unconditionally */
	PF_DECORATED = 32   /* some other decorator: a registry may call it */
};

typedef struct pf_scope {
	const char *name; /* own name */
	const char *qual; /* Class.method, f.inner */
	int parent;       /* scope index, -1 = module */
	unsigned flags;
	int line, raise_line;
	uint32_t start, end;     /* bytes of the whole definition */
	const char **constexprs; /* tl.constexpr parameter names (PF_JIT) */
	int nconstexprs;
	const char **params; /* parameter names in order (self included) */
	int nparams;
	const char *kwparam; /* name of the **kwargs parameter, NULL */
	int *pkill; /* per parameter (as params): when the first statement that
	               mentions it (at a line start) is an assignment or an if
	               binding it on every path without reading it, that line,
	               else 0 (a value passed for it never reaches the body);
	               NULL: none */
	int ret_expr;        /* pf_expr of the body's only `return X`, -1 */
	/* PF_CLASS: a condition the class declares for the device it runs on,
	 * -1: `_enum = PlatformEnum.ROCM` (a PF_X_PLAT), or the sole return of a
	 * `_supports_current_device` method; plat_line is where */
	int plat_expr, plat_line;
} pf_scope;

typedef struct pf_import {
	const char *alias;  /* the local name it binds */
	const char *module; /* absolute dotted module (relative ones resolved) */
	const char *attr;   /* from M import attr; NULL for `import M`; "*" (and alias
	                       "*") for `from M import *` */
	int scope, line;
	uint32_t byte;
	int guard;      /* innermost pf_guard it is under, -1 */
	int guard_else; /* 1 when under that guard's elif/else part */
} pf_import;

enum pf_platform {
	PF_PLAT_NONE = 0,
	PF_PLAT_ROCM,
	PF_PLAT_TPU,
	PF_PLAT_XPU,
	PF_PLAT_CPU,
	PF_PLAT_OTHER,
	PF_PLAT_NPU,
	PF_PLAT_CUDA /* the tuned platform: is_cuda(), torch.version.cuda */
};

/* A condition or module-level value, as far as constant propagation and the
 * platform rules need it (src/scan/scan_resolve.c evaluates it across modules). */
enum pf_xop {
	PF_X_OTHER = 0, /* anything else: undecided */
	PF_X_CONST,     /* literal; val is its truth (None, 0, '' are false) */
	PF_X_NAME,      /* name, or obj.name (obj a dotted name) */
	PF_X_NOT,       /* not a */
	PF_X_AND,       /* a and b */
	PF_X_OR,        /* a or b */
	PF_X_PLAT,      /* a platform predicate: plat says which */
	PF_X_CAP,       /* a device-capability check: cap (e.g. 90), capop */
	PF_X_CALL,      /* a call of a plain function name / obj.name() (helper predicate) */
	PF_X_MAIN       /* __name__ == '__main__': true only when the file runs as a script */
};

typedef struct pf_expr {
	int op;
	int a, b;         /* operands (expr indices), -1 */
	const char *name; /* NAME / CALL: the name */
	const char *obj;  /* NAME / CALL: the object, NULL */
	int val;          /* CONST: truth */
	int plat;         /* PLAT: enum pf_platform */
	int cap;          /* CAP: capability as major*10+minor */
	int capop;        /* CAP: '>' '<' 'g' (>=) 'l' (<=) '=', 'f' (same major: a family) */
	const char *text; /* the source text (squashed, short) */
} pf_expr;

/* A module-level `NAME = value` (for constants across modules). */
typedef struct pf_bind {
	const char *name;
	int expr; /* pf_expr of the value */
	int line;
	uint32_t byte;
	int guarded; /* under an if, a try, a loop or a with */
} pf_bind;

typedef struct pf_guard {
	const char *name; /* condition name; NULL when not a name */
	const char *obj;  /* module alias for `if m.NAME:`; NULL */
	int negated;      /* `if not NAME:` */
	int constval;     /* -1 unknown, else the literal truth of the condition */
	int platform;     /* enum pf_platform for current_platform.is_rocm() etc. */
	int scope, line, else_line;
	uint32_t cons_start, cons_end; /* the consequence block */
	uint32_t alt_start, alt_end;   /* elif/else part; 0,0 if none */
	uint32_t byte;                 /* start of the if/elif */
	int cexpr;                     /* pf_expr of the condition, -1 */
	const char *cond;              /* the condition's text (squashed, short) */
	int over_line;    /* constval decided by a literal assignment at this line */
	int chain;        /* the `if` of this if/elif chain (itself for the if) */
	int cons_raise;   /* a raise / assert False first in the consequence: line */
	const char *cons_exc;
	int else_raise;   /* the chain's else body raises first: line (on the if) */
	const char *else_exc;
	/* `NAME == 'lit'`, `obj.NAME != 'lit'`, `NAME in ('a', 'b')` */
	const char *cmp_name, *cmp_obj;
	int cmp_op; /* '=' '!' 'i' (in) 'n' (not in); 0 none */
	const char **cmp_vals; /* the literals, as source text */
	int ncmp;
} pf_guard;

enum pf_ref_flag {
	PF_R_ATTR = 1,   /* obj.name */
	PF_R_KEY = 2,    /* obj['name'] or obj.get('name') read */
	PF_R_SPLAT = 4,  /* **name inside call `call` */
	PF_R_UNREACH = 8, /* after return/raise in its block */
	PF_R_DEAD = 16,   /* inside a dead store or a disabled branch: see pf_ref.dead */
	PF_R_STR = 32     /* a string naming a definition by its dotted path: obj is the
	                     module part ('vllm.core.scheduler.Scheduler': obj
	                     vllm.core.scheduler, name Scheduler), or a sibling string
	                     argument of a call that also passes a module path
	                     (register('p2p', 'pkg.p2p.manager', 'P2PManager')), or
	                     an identifier string at most two lines after a module
	                     path in the same block (mod = 'pkg.w'; cls = 'Worker') */
};

typedef struct pf_ref {
	const char *name;
	const char *obj; /* for ATTR/KEY: the object's text (short); STR: the module path */
	int scope, line, call;
	uint32_t byte;
	unsigned flags;
	int dead; /* PF_R_DEAD: the pf_dead it sits in */
} pf_ref;

/* Why a piece of a function is dead (the def-use layer, src/scan/pyflow.c). */
enum pf_dead_kind {
	PF_D_OVERWRITE = 1, /* NAME = ... is overwritten on every path before a read */
	PF_D_UNUSED,        /* NAME = ... is read only by dead code (via: that code) */
	PF_D_BRANCH         /* a branch an assignment of a literal disables (guard) */
};

typedef struct pf_dead {
	int kind;
	const char *name; /* the variable (BRANCH: the guard's name) */
	int scope, line;  /* the store / the if */
	uint32_t start, end;
	int kill_line; /* OVERWRITE: first overwrite; UNUSED: a dead read; BRANCH: the literal */
	int via;       /* UNUSED: the pf_dead of that read, -1 */
	int guard;     /* BRANCH: the pf_guard */
	int nkill;     /* OVERWRITE: how many branches overwrite */
	int kills[4];  /* OVERWRITE: the overwrites' lines (first nkill, at most 4) */
} pf_dead;

/* An identifier assignment inside a function (for reaching definitions). */
typedef struct pf_asg {
	const char *name;
	int scope, line;
	uint32_t start, end;         /* the statement */
	uint32_t blk_start, blk_end; /* the block holding it */
	int lit;                     /* literal right-hand side: its truth, else -1 */
	const char *lit_text;
	int in_loop;
	int simple; /* one identifier target (not unpacking, augmented, a loop target) */
	int attr;   /* an attribute store `self.x = ...`: name is "self.x",
	               simple 0 (def-use across calls, src/scan/scan_flow.c) */
} pf_asg;

/* A function's assignment to a module global it declares `global` (a
 * setter: `global _ENABLED; _ENABLED = enable`). */
typedef struct pf_gset {
	const char *name;
	int scope, line;
	int uncond; /* directly in the function body (not under if/loop/try) */
} pf_gset;

/* An assert, or the raise a value leads to (unsafe values). */
typedef struct pf_assert {
	int scope, line, guard, guard_else;
	uint32_t byte;
	const char *text;       /* the condition */
	const char *lname, *rname; /* `a.b >= c` sides: last names (NULL when literal) */
	const char *lobj, *robj;
	const char *lval, *rval;   /* literal sides (folded), NULL */
	int op;                    /* '>' '<' 'g' 'l' '=' '!' */
} pf_assert;

/* A return statement: `return NAME` / `return CALL(...)`. */
typedef struct pf_ret {
	int scope, line;
	const char *name; /* returned identifier, NULL */
	int call;         /* returned call, -1 */
} pf_ret;

enum pf_call_flag { PF_C_LAUNCH = 1, PF_C_UNCOND = 2, PF_C_UNREACH = 4 };

/* One argument of a call: `x`, `k=x`, `*x`, `**x` (ident NULL when not a name). */
typedef struct pf_arg {
	const char *kw;    /* keyword, NULL */
	const char *ident; /* the value when it is an identifier */
	int pos;           /* positional index, -1 */
	int splat;         /* 1: *x, 2: **x */
} pf_arg;

typedef struct pf_call {
	const char *callee; /* text of the function expression, e.g. ops.f, k[grid] */
	const char *fname;  /* last name: f for ops.f, k for k[grid] */
	const char *obj;    /* ops for ops.f; NULL */
	int scope, line;
	uint32_t byte, end;
	unsigned flags;
	pf_arg *args;
	int nargs;
	const char *assigned; /* x of `x = call(...)`, NULL */
	const char *partial;  /* functools.partial(f, ...): f */
} pf_call;

enum pf_kind {
	PF_K_CONSTANT = 0,
	PF_K_OVERRIDE,
	PF_K_CONSTEXPR,
	PF_K_AUTOTUNE,
	PF_K_CONFIG_DICT,
	PF_K_CAPABILITY,
	PF_K_JSON_CONFIG,
	PF_K_ENGINE_ARG,
	PF_K_NKINDS
};

typedef struct pf_alt {
	const char *text, *eval; /* eval NULL when not constant */
	uint32_t start, end;
	int line;
} pf_alt;

typedef struct pf_knob {
	int kind;
	const char *name;
	int scope;                        /* enclosing scope, -1 = module */
	int line, col, end_line, end_col; /* of the value, 1-based */
	uint32_t start, end;              /* bytes of the value */
	const char *text;                 /* the value's source text */
	const char *eval;                 /* evaluated constant, NULL if not */
	pf_alt *alts;                     /* conditional alternatives / configs */
	int nalts;
	const char *aux;  /* constexpr: kernel name; dict: var; override: - */
	const char *feed; /* constexpr: identifier bound (BLOCK), else NULL */
	int aux_line;     /* override: line of the heuristic; launch: call line */
	int call;         /* constexpr: index of the launch call */
	unsigned unreach;
	int dead; /* overwritten before any read: the pf_dead (PF_D_OVERWRITE), -1 */
	int param; /* a parameter's default (def f(BLKQ=64)): 1 + its index, else 0 */
} pf_knob;

typedef struct pf_json {
	const char *glob; /* E=*,N=*,device_name=**.json */
	int scope, line;
	uint32_t start, end; /* the f-string */
	int col, end_line, end_col;
	const char *text;
} pf_json;

typedef struct pyfile pyfile;
struct pyfile {
	const char *module; /* dotted module name given by the caller */
	int is_package;     /* __init__.py */
	pf_scope *scopes;
	int nscopes;
	pf_import *imports;
	int nimports;
	pf_guard *guards;
	int nguards;
	pf_ref *refs;
	int nrefs;
	pf_call *calls;
	int ncalls;
	pf_knob *knobs;
	int nknobs;
	pf_json *jsons;
	int njsons;
	pf_expr *exprs;
	int nexprs;
	pf_bind *binds;
	int nbinds;
	pf_dead *deads;
	int ndeads;
	pf_asg *asgs;
	int nasgs;
	pf_assert *asserts;
	int nasserts;
	pf_ret *rets;
	int nrets;
	pf_gset *gsets;
	int ngsets;
	int nerrors;           /* syntax error nodes */
	int err_line, err_col; /* the first one, 1-based */
	uint64_t hash;         /* FNV-1a 64 of the bytes */
	size_t size;
	struct scan_block *arena; /* its strings and arrays (scan_arena.h) */
};

/* Analyzes src[0..n) as the Python module `module` (dotted; may be "" for a
 * loose file; is_package for __init__.py, which changes how relative imports
 * resolve). Returns NULL only when memory runs out. The result owns copies
 * of everything it needs; src may be freed right after. */
pyfile *pyfile_analyze(const char *src, size_t n, const char *module, int is_package);

/* pyfile_analyze, and the syntax tree it walked given to *tree (the caller
 * frees it with ts_tree_delete; NULL when there is none) when tree is not
 * NULL: muh scan's later passes over the same file (environment registries,
 * engine arguments) walk it instead of parsing the file again. */
struct TSTree;
pyfile *pyfile_analyze_tree(const char *src, size_t n, const char *module, int is_package,
                            struct TSTree **tree);

void pyfile_free(pyfile *f);

/* The def-use layer over one file's facts (src/scan/pyflow.c): marks refs inside
 * dead stores and disabled branches (PF_R_DEAD) and adds the pf_dead records
 * saying why. Stores overwritten on every path (PF_D_OVERWRITE) are found
 * during the walk; this adds stores whose value only dead code reads
 * (PF_D_UNUSED) and branches that a local literal assignment disables
 * (PF_D_BRANCH, also set as the guard's constval), to a fixpoint. Returns -1
 * when memory runs out. */
int pyflow_run(pyfile *f);

/* The name of a knob kind as written in output ("constant", "override",
 * "constexpr", "autotune", "config_dict", "capability", "json_config",
 * "engine_arg"). */
const char *pyfile_kind_name(int kind);

/* The name a verdict prints for platform plat ("ROCm", "CUDA"; "another
 * platform" for PF_PLAT_OTHER and none). */
const char *pyfile_plat_name(int plat);

/* FNV-1a 64 of n bytes. */
uint64_t pyfile_hash(const void *p, size_t n);

#endif
