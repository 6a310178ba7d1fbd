/*
 * pyfile.h — the per-file half of muh scan: one Python file in, its facts out.
 *
 * pyfile_analyze() parses one file's bytes with tree-sitter (Python grammar,
 * ABI 14) and keeps only what the tree-level analysis (scan.c) needs, so the
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
	PF_RAISES_NIE = 16 /* body raises NotImplementedError unconditionally */
};

typedef struct pf_scope {
	const char *name; /* own name */
	const char *qual; /* Class.method, f.inner */
	int parent;       /* scope index, -1 = module */
	unsigned flags;
	int line, raise_line;
	uint32_t start, end; /* bytes of the whole definition */
	const char **constexprs; /* tl.constexpr parameter names (PF_JIT) */
	int nconstexprs;
} pf_scope;

typedef struct pf_import {
	const char *alias;  /* the local name it binds */
	const char *module; /* absolute dotted module (relative ones resolved) */
	const char *attr;   /* from M import attr; NULL for `import M` */
	int scope, line;
	uint32_t byte;
	int guard;       /* innermost pf_guard it is under, -1 */
	int guard_else;  /* 1 when under that guard's elif/else part */
} pf_import;

enum pf_platform { PF_PLAT_NONE = 0, PF_PLAT_ROCM, PF_PLAT_TPU, PF_PLAT_XPU, PF_PLAT_CPU, PF_PLAT_OTHER };

typedef struct pf_guard {
	const char *name; /* condition name; NULL when not a name */
	const char *obj;  /* module alias for `if m.NAME:`; NULL */
	int negated;      /* `if not NAME:` */
	int constval;     /* -1 unknown, else the literal truth of the condition */
	int platform;     /* enum pf_platform for current_platform.is_rocm() etc. */
	int scope, line, else_line;
	uint32_t cons_start, cons_end; /* the consequence block */
	uint32_t alt_start, alt_end;   /* elif/else part; 0,0 if none */
} pf_guard;

enum pf_ref_flag {
	PF_R_ATTR = 1,   /* obj.name */
	PF_R_KEY = 2,    /* obj['name'] or obj.get('name') read */
	PF_R_SPLAT = 4,  /* **name inside call `call` */
	PF_R_UNREACH = 8 /* after return/raise in its block */
};

typedef struct pf_ref {
	const char *name;
	const char *obj; /* for ATTR/KEY: the object's text (short) */
	int scope, line, call;
	uint32_t byte;
	unsigned flags;
} pf_ref;

enum pf_call_flag { PF_C_LAUNCH = 1, PF_C_UNCOND = 2, PF_C_UNREACH = 4 };

typedef struct pf_call {
	const char *callee; /* text of the function expression, e.g. ops.f, k[grid] */
	const char *fname;  /* last name: f for ops.f, k for k[grid] */
	const char *obj;    /* ops for ops.f; NULL */
	int scope, line;
	uint32_t byte;
	unsigned flags;
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
	int scope; /* enclosing scope, -1 = module */
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
} pf_knob;

typedef struct pf_json {
	const char *glob; /* E=*,N=*,device_name=**.json */
	int scope, line;
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
	int nerrors;          /* syntax error nodes */
	int err_line, err_col; /* the first one, 1-based */
	uint64_t hash;         /* FNV-1a 64 of the bytes */
	size_t size;
	void *arena;
};

/* Analyzes src[0..n) as the Python module `module` (dotted; may be "" for a
 * loose file; is_package for __init__.py, which changes how relative imports
 * resolve). Returns NULL only when memory runs out. The result owns copies
 * of everything it needs; src may be freed right after. */
pyfile *pyfile_analyze(const char *src, size_t n, const char *module, int is_package);

void pyfile_free(pyfile *f);

/* The name of a knob kind as written in output ("constant", "override",
 * "constexpr", "autotune", "config_dict", "capability", "json_config",
 * "engine_arg"). */
const char *pyfile_kind_name(int kind);

/* FNV-1a 64 of n bytes. */
uint64_t pyfile_hash(const void *p, size_t n);

#endif
