/*
 * scan_args.c — engine arguments from every kind of definition, for muh scan.
 *
 * An engine's arguments are defined in one of five ways; each definition is
 * one `engine_arg` knob:
 *   argparse   parser.add_argument('--max-batch-tokens', type=int, default=8)
 *              (any receiver, so add_argument_group()'s groups too): the
 *              name is dest= or the first long option ('-' -> '_'); the
 *              default is default= (store_true: False, store_false: True,
 *              none given: None, which argparse supplies);
 *   click      @click.option('--max-batch-tokens', type=int, default=8),
 *              @click.argument('model'), is_flag / '--a/--no-a' booleans;
 *   dataclass  @dataclass (or vLLM's @config) class XConfig / XArgs / XArguments /
 *              XOptions / XSettings:
 *              `name: T = default`, field(default=...), field(default_factory=...);
 *   pydantic   class XConfig(BaseModel / BaseSettings): `name: T = default`,
 *              Field(default) / Field(default=...);
 *   TypedDict  class XConfig(TypedDict): every key (no default).
 * Classes the per-file analysis already reports as engine-argument classes
 * (*EngineArgs*, *ServerArgs*, ...) are left to it; *Params classes are
 * request data (SamplingParams), not schemas. A command-line argument
 * defined next to a class field of its name, or defaulting to it, is that
 * field (the field gets a step naming the flag; no second knob).
 *
 * The first evidence step of each knob is its definition: how it is defined,
 * dest, type, default and choices. The knob's own span is the default's text
 * (what muh patch rewrites); an argument with no default in the source has
 * an empty span at the definition (nothing to rewrite).
 *
 * Reads are followed by name across the tree: attribute loads `x.NAME`,
 * string-key reads `x["NAME"]` / `x.get("NAME")`, and `getattr(x, "NAME")`.
 * Each read is classified by the scan's reachability rules (scan_host_read_
 * class); the best one decides: live / unknown (read only in code nothing
 * names) / platform / dead (read only from tests, only on unreachable paths,
 * or nowhere). An argument read nowhere by name is `unknown` instead when
 * its module, or a module importing it, reads a namespace or an instance as
 * a whole (vars(), .__dict__, getattr with a computed name on something not
 * imported; for schema fields also asdict(), fields(), model_dump()): the
 * evidence names that site. A click argument's reads are the loads of the
 * command function's parameter. A command-line argument
 * that is not read by name but has the name of an engine-argument class
 * field takes that field's verdict when it is live (vLLM's
 * EngineArgs.from_cli_args copies the namespace into the fields by name).
 *
 * Heuristic, by name: `self.model` anywhere counts as a read of an argument
 * named `model`. Must never: print, write into the tree.
 */
#include "scan_args.h"
#include "scan_host.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "muh/fileio.h"
#include "pyfile.h"
#include "pyfile_node.h"
#include "scan_env.h"
#include "scan_srctext.h"
#include "strbuf.h"

enum arg_how { ARG_ARGPARSE = 0, ARG_CLICK, ARG_DATACLASS, ARG_PYDANTIC, ARG_TYPEDDICT };

static const char *const how_name[] = {"argparse", "click", "dataclass", "pydantic",
                                       "TypedDict"};

/* One definition of an engine argument. */
typedef struct arg_def {
	const char *name; /* dest / field name */
	const char *flag; /* --max-batch-tokens (CLI kinds), or the class name */
	enum arg_how how;
	int fi, scope, dline, line, col, end_line, end_col; /* dline: the definition's */
	int fnscope; /* click: the command function's scope, whose parameter it is */
	uint32_t start, end, at; /* value span; at: the definition's byte */
	const char *value, *eval, *type, *choices;
	/* the accepted set: choices= of literals, or a module-level list, tuple,
	 * set or dict (its keys) that choices= names; "'a', 'b'" and where */
	const char *accepted;
	int acc_line;
	const char *acc_name; /* the named collection, or NULL for a literal */
	int implicit; /* no default in the source */
	int factory;  /* the value is a default_factory (a lambda's: its body) */
	int splat;    /* add_argument(..., **kwargs): type and default from elsewhere */
	/* reads */
	int cls, rfi, rline; /* best reader class, its place */
	int nlive, lfi[3], lline[3], lscript[3]; /* up to 3 live reads */
	int via_fi, via_line; /* the namespace passed whole (F(**vars(args))) to a reader */
} arg_def;

typedef struct argctx {
	muh_surface *s;
	arg_def *defs;
	size_t ndefs, cap;
	/* per file fi, first whole-object read (line 0 = none): [fi] of a
	 * namespace or instance (vars(), .__dict__, getattr with a computed
	 * name), [nf + fi] of a dataclass/model's fields only (asdict(),
	 * fields(), model_dump(), getattr over fields()) */
	int *dyn_line;
	const char **dyn_what;
	int nf;
	int oom;
	struct cinfo *classes; /* schema classes, by name (constructions_of) */
	size_t nclasses;
	/* the surface's knobs by name (knobs_index): per bucket the first and
	 * last knob, per knob the next of its bucket, in knob order */
	size_t *kx_head, *kx_tail, *kx_next, kx_mask;
	/* name_sig bits of every definition's name, and of every schema
	 * class's: a name whose bit is clear names none (most reads) */
	uint64_t def_sigs[64], class_sigs[64];
} argctx;

/* A schema class and how the tree constructs it (default_never_used). */
typedef struct cinfo {
	const char *name;
	int fi, sc;
	int opaque;    /* constructed or read unseen: an attribute of it, cls(...),
	                  handed to a helper, positional or ** arguments */
	int n, cap;    /* constructions outside tests, not on unreachable paths */
	int *cfi, *cci; /* their file and call index */
} cinfo;

typedef struct srcv {
	const char *src;
	size_t n;
	const pyfile *pf;
	int fi, click;
} srcv;

/* The node's text, whitespace runs squashed to one space (none inside
 * brackets' edges or before a comma), at most cap-1. */
static void squash(const srcv *v, TSNode n, char *out, size_t cap)
{
	scan_squash_text(v->src, v->n, n, "([", ")],", out, cap);
}

static int text_is(const srcv *v, TSNode n, const char *s)
{
	uint32_t a = pyts_start_byte(n), b = pyts_end_byte(n);
	size_t l = strlen(s);
	return b <= v->n && b - a == l && !memcmp(v->src + a, s, l);
}

/* The last dotted component of the node's text ends with suf. */
static int text_ends(const srcv *v, TSNode n, const char *suf)
{
	uint32_t a = pyts_start_byte(n), b = pyts_end_byte(n);
	size_t l = strlen(suf);
	if (b > v->n || b - a < l || memcmp(v->src + b - l, suf, l))
		return 0;
	return b - a == l || v->src[b - l - 1] == '.';
}

/* A plain string literal's content (no prefix, no interpolation); 1 if so. */
static int str_lit(const srcv *v, TSNode n, char *out, size_t cap)
{
	TSNode st;
	uint32_t a, b;
	if (!scan_string_body(n, v->n, &st, &a, &b))
		return 0;
	uint32_t q = pyts_start_byte(st); /* a prefix (f, b, r, u) is no plain literal */
	if ((q < v->n && v->src[q] != '\'' && v->src[q] != '"') || b - a + 1 > cap)
		return 0;
	memcpy(out, v->src + a, b - a);
	out[b - a] = '\0';
	return 1;
}

/* The constant a literal node stands for, as Python would print it, or NULL. */
static const char *lit_eval(argctx *e, const srcv *v, TSNode n, const char **type)
{
	char buf[256];
	const char *t = pyts_type(n);
	*type = NULL;
	if (!strcmp(t, "unary_operator")) {
		TSNode x = field(n, "argument");
		if ((is(x, "integer") || is(x, "float")) && text_is(v, pyts_child(n, 0), "-")) {
			squash(v, n, buf, sizeof(buf));
			*type = is(x, "integer") ? "int" : "float";
			return scan_host_str(e->s, buf);
		}
		return NULL;
	}
	if (!strcmp(t, "integer") || !strcmp(t, "float")) {
		squash(v, n, buf, sizeof(buf));
		*type = t[0] == 'i' ? "int" : "float";
		return scan_host_str(e->s, buf);
	}
	if (!strcmp(t, "true") || !strcmp(t, "false")) {
		*type = "bool";
		return t[0] == 't' ? "True" : "False";
	}
	if (!strcmp(t, "none"))
		return "None";
	if (str_lit(v, n, buf, sizeof(buf)) && !strchr(buf, '\'') && !strchr(buf, '\\')) {
		*type = "str";
		return scan_host_fmt(e->s, "'%s'", buf);
	}
	return NULL;
}

/* A new definition, not yet read anywhere; NULL (e->oom set) when memory
 * ran out. */
static arg_def *push_def(argctx *e)
{
	if (array_grow(&e->defs, &e->cap, e->ndefs, sizeof(arg_def), 64)) {
		e->oom = 1;
		return NULL;
	}
	arg_def *d = &e->defs[e->ndefs++];
	memset(d, 0, sizeof(*d));
	d->cls = SCAN_ENV_R_NONE;
	d->rfi = -1;
	d->fnscope = -1;
	return d;
}

/* A new definition of the file v, defined how by the node at (a call, an
 * assignment): where it stands and in which scope; NULL as push_def. */
static arg_def *new_def(argctx *e, const srcv *v, enum arg_how how, TSNode at)
{
	arg_def *d = push_def(e);
	if (!d)
		return NULL;
	d->how = how;
	d->fi = v->fi;
	d->at = pyts_start_byte(at);
	d->dline = (int)ts_node_start_point(at).row + 1;
	d->scope = scan_innermost_scope(v->pf, d->at);
	return d;
}

/* Fills the value span of d from node n (the default expression). */
static void set_value(argctx *e, const srcv *v, arg_def *d, TSNode n)
{
	char buf[256];
	pyfile_node_span(n, &d->line, &d->col, &d->end_line, &d->end_col, &d->start, &d->end);
	squash(v, n, buf, sizeof(buf));
	d->value = scan_host_str(e->s, buf);
	const char *t;
	d->eval = lit_eval(e, v, n, &t);
	if (!d->type && t)
		d->type = t;
}

/* An argument with no default in the source: an empty span at node n. */
static void set_implicit(argctx *e, arg_def *d, TSNode n, const char *value, const char *eval)
{
	TSPoint p = ts_node_start_point(n);
	d->start = d->end = pyts_start_byte(n);
	d->line = d->end_line = (int)p.row + 1;
	d->col = d->end_col = (int)p.column + 1;
	d->value = scan_host_str(e->s, value);
	d->eval = eval;
	d->implicit = 1;
}

static void dest_of(const char *flag, char *out, size_t cap)
{
	while (*flag == '-')
		flag++;
	size_t o = 0;
	for (; *flag && *flag != '/' && o + 1 < cap; flag++)
		out[o++] = *flag == '-' ? '_' : *flag;
	out[o] = '\0';
}

/* "'a', 'b'" from a list, tuple or set of literals (or a dict's literal
 * keys), into buf; 0 when some element is not a literal or there is none. */
static int literal_set(const srcv *v, TSNode n, char *buf, size_t cap)
{
	int dict = is(n, "dictionary");
	if (!dict && !is(n, "list") && !is(n, "tuple") && !is(n, "set"))
		return 0;
	size_t o = 0;
	int k = 0;
	buf[0] = '\0';
	uint32_t cnt = pyts_named_child_count(n);
	for (uint32_t i = 0; i < cnt; i++) {
		TSNode x = pyts_named_child(n, i);
		if (is(x, "comment"))
			continue;
		if (dict) {
			if (!is(x, "pair"))
				return 0;
			x = field(x, "key");
		}
		if (!is(x, "string") && !is(x, "integer") && !is(x, "float") && !is(x, "none") &&
		    !is(x, "true") && !is(x, "false"))
			return 0;
		if (is(x, "string") && pyts_named_child_count(x) > 0) {
			for (uint32_t j = 0; j < pyts_named_child_count(x); j++)
				if (is(pyts_named_child(x, j), "interpolation"))
					return 0;
		}
		char t[128];
		squash(v, x, t, sizeof(t));
		int w = snprintf(buf + o, cap - o, "%s%s", k++ ? ", " : "", t);
		if (w < 0 || (size_t)w >= cap - o)
			return 0;
		o += (size_t)w;
	}
	return k > 0;
}

/* The accepted set of an argument from its choices= node: literals, or a
 * name bound at module level of the same file to a collection of literals
 * (sglang's LORA_BACKEND_CHOICES). Fills d->accepted / acc_line / acc_name. */
static void accepted_of(argctx *e, const srcv *v, arg_def *d, TSNode choices)
{
	char buf[600];
	if (literal_set(v, choices, buf, sizeof(buf))) {
		d->accepted = scan_host_str(e->s, buf);
		d->acc_line = (int)ts_node_start_point(choices).row + 1;
		return;
	}
	if (!is(choices, "identifier"))
		return;
	TSNode root = ts_tree_root_node(choices.tree);
	uint32_t cnt = pyts_named_child_count(root);
	char name[128];
	squash(v, choices, name, sizeof(name));
	TSNode found = {0};
	int nbind = 0;
	for (uint32_t i = 0; i < cnt; i++) {
		TSNode a = pyfile_stmt_assignment(pyts_named_child(root, i), 0);
		if (pyts_is_null(a) || !text_is(v, field(a, "left"), name))
			continue;
		nbind++;
		found = field(a, "right");
	}
	if (nbind != 1 || pyts_is_null(found) || !literal_set(v, found, buf, sizeof(buf)))
		return; /* bound twice, or built: not a fixed set this file shows */
	d->accepted = scan_host_str(e->s, buf);
	d->acc_line = (int)ts_node_start_point(found).row + 1;
	d->acc_name = scan_host_str(e->s, name);
}

/* parser.add_argument(...) or @click.option(...) / @click.argument(...). */
static void cli_def(argctx *e, const srcv *v, TSNode call, enum arg_how how, int positional_kind)
{
	TSNode args = field(call, "arguments");
	if (!is(args, "argument_list"))
		return;
	char flag[256] = "", longf[256] = "", name[256] = "", buf[256];
	TSNode dflt = {0}, type = {0}, action = {0}, choices = {0}, dest = {0};
	int is_flag = 0, slash = 0, splat = 0;
	uint32_t cnt = pyts_named_child_count(args);
	for (uint32_t i = 0; i < cnt; i++) {
		TSNode a = pyts_named_child(args, i);
		if (is(a, "keyword_argument")) {
			TSNode k = field(a, "name"), val = field(a, "value");
			if (text_is(v, k, "default"))
				dflt = val;
			else if (text_is(v, k, "type"))
				type = val;
			else if (text_is(v, k, "action"))
				action = val;
			else if (text_is(v, k, "choices"))
				choices = val;
			else if (text_is(v, k, "dest"))
				dest = val;
			else if (text_is(v, k, "is_flag") && is(val, "true"))
				is_flag = 1;
			continue;
		}
		if (is(a, "dictionary_splat") || is(a, "list_splat")) {
			splat = 1;
			continue;
		}
		if (!str_lit(v, a, buf, sizeof(buf)) || !buf[0])
			continue;
		if (buf[0] == '-') {
			if (!flag[0])
				snprintf(flag, sizeof(flag), "%s", buf);
			if (buf[1] == '-' && !longf[0])
				snprintf(longf, sizeof(longf), "%s", buf);
			slash |= strchr(buf, '/') != NULL;
		} else if (!name[0]) {
			snprintf(name, sizeof(name), "%s", buf);
		}
	}
	if (!flag[0] && !name[0])
		return;
	if (positional_kind && !name[0] && flag[0])
		return; /* click.argument takes a name */
	char dn[256];
	if (!pyts_is_null(dest) && str_lit(v, dest, buf, sizeof(buf)) && buf[0])
		snprintf(dn, sizeof(dn), "%s", buf);
	else if (how == ARG_CLICK && name[0])
		snprintf(dn, sizeof(dn), "%s", name);
	else if (how == ARG_ARGPARSE && !flag[0])
		snprintf(dn, sizeof(dn), "%s", name);
	else
		dest_of(longf[0] ? longf : flag, dn, sizeof(dn));
	if (!dn[0] || !strcmp(dn, "help") || !strcmp(dn, "version"))
		return;
	char act[64] = "";
	if (!pyts_is_null(action) && !str_lit(v, action, act, sizeof(act)))
		squash(v, action, act, sizeof(act));
	if (!strcmp(act, "help") || !strcmp(act, "version"))
		return;
	arg_def *d = new_def(e, v, how, call);
	if (!d)
		return;
	d->name = scan_host_str(e->s, dn);
	d->flag = scan_host_str(e->s, longf[0] ? longf : flag[0] ? flag : name);
	int boolean = is_flag || slash || !strcmp(act, "store_true") ||
	              !strcmp(act, "store_false") || strstr(act, "BooleanOptionalAction");
	if (!pyts_is_null(type)) {
		if (pyts_is_null(choices) && is(type, "call") &&
		    text_ends(v, field(type, "function"), "Choice") &&
		    pyts_named_child_count(field(type, "arguments")))
			choices = pyts_named_child(field(type, "arguments"), 0);
		squash(v, type, buf, sizeof(buf));
		d->type = scan_host_str(e->s, buf);
	} else if (boolean) {
		d->type = "bool";
	} else if (!strcmp(act, "count")) {
		d->type = "int";
	} else if (!strncmp(act, "append", 6)) {
		d->type = "list";
	}
	if (!pyts_is_null(choices)) {
		squash(v, choices, buf, sizeof(buf));
		d->choices = scan_host_str(e->s, buf);
		accepted_of(e, v, d, choices);
	}
	if (!pyts_is_null(dflt)) {
		set_value(e, v, d, dflt);
	} else if (splat) {
		d->splat = 1;
		set_implicit(e, d, call, "(from **kwargs)", NULL);
	} else if (!strcmp(act, "store_true") || (how == ARG_CLICK && boolean)) {
		set_implicit(e, d, call, "False", "False");
	} else if (!strcmp(act, "store_false")) {
		set_implicit(e, d, call, "True", "True");
	} else {
		set_implicit(e, d, call, "None", "None");
	}
	if (!d->type && how == ARG_ARGPARSE && !splat)
		d->type = "str"; /* argparse's default type */
	if (how == ARG_CLICK) { /* the decorated function: its parameter */
		TSNode dd = ts_node_parent(ts_node_parent(call));
		TSNode fn = is(dd, "decorated_definition") ? field(dd, "definition") : (TSNode){0};
		TSNode body = is(fn, "function_definition") ? field(fn, "body") : (TSNode){0};
		if (!pyts_is_null(body))
			d->fnscope = scan_innermost_scope(v->pf, pyts_start_byte(body));
	}
}

/* Is a class of this name an argument schema, by its name (*Config, *Args,
 * ...)? Not the classes the per-file analysis reports already (*EngineArgs*,
 * *ServerArgs*, *FrontendArgs*, Engine*Args). */
static int schema_name(const char *name)
{
	/* not *Params: request-level data (SamplingParams) and holders
	 * (MambaCacheParams), not what an engine is started with */
	static const char *const sufs[] = {"Args",    "Arguments", "Config",
	                                   "Configs", "Options",   "Settings"};
	size_t l = strlen(name);
	int ok = 0;
	for (size_t i = 0; i < sizeof(sufs) / sizeof(*sufs); i++) {
		size_t sl = strlen(sufs[i]);
		ok |= l > sl && !strcmp(name + l - sl, sufs[i]);
	}
	return ok && !strstr(name, "EngineArgs") && !strstr(name, "FrontendArgs") &&
	       !strstr(name, "ServerArgs") && !(strstr(name, "Engine") && !strcmp(name + l - 4, "Args"));
}

/* Which schema a class is (-1: none): by decorator or base, and by name. */
static int schema_of(const srcv *v, TSNode cls, TSNode decorated)
{
	char name[256];
	squash(v, field(cls, "name"), name, sizeof(name));
	if (!schema_name(name))
		return -1;
	TSNode sup = field(cls, "superclasses");
	uint32_t cnt = is(sup, "argument_list") ? pyts_named_child_count(sup) : 0;
	for (uint32_t i = 0; i < cnt; i++) {
		TSNode b = pyts_named_child(sup, i);
		if (text_ends(v, b, "TypedDict"))
			return ARG_TYPEDDICT;
		if (text_ends(v, b, "BaseModel") || text_ends(v, b, "BaseSettings"))
			return ARG_PYDANTIC;
	}
	if (pyts_is_null(decorated))
		return -1;
	cnt = pyts_named_child_count(decorated);
	for (uint32_t i = 0; i < cnt; i++) {
		TSNode dc = pyts_named_child(decorated, i);
		if (!is(dc, "decorator"))
			continue;
		TSNode x = pyts_named_child(dc, 0);
		if (is(x, "call"))
			x = field(x, "function");
		/* @dataclass, @dataclasses.dataclass, pydantic's; vLLM's own
		 * @config (a dataclass_transform that makes a pydantic dataclass) */
		if (text_ends(v, x, "dataclass") || text_ends(v, x, "config"))
			return ARG_DATACLASS;
	}
	return -1;
}

/* The fields of a schema class: `name: T [= default]` at class level. */
static void schema_fields(argctx *e, const srcv *v, TSNode cls, enum arg_how how)
{
	char cname[256], buf[256];
	squash(v, field(cls, "name"), cname, sizeof(cname));
	TSNode body = field(cls, "body");
	uint32_t cnt = is(body, "block") ? pyts_named_child_count(body) : 0;
	for (uint32_t i = 0; i < cnt; i++) {
		TSNode l, r, t;
		TSNode a = pyfile_annotated_field(pyts_named_child(body, i), &l, &r, &t);
		if (pyts_is_null(a))
			continue;
		squash(v, t, buf, sizeof(buf));
		if (!strncmp(buf, "ClassVar", 8) || strstr(buf, ".ClassVar") ||
		    !strncmp(buf, "InitVar", 7))
			continue;
		TSNode val = r;
		int factory = 0;
		const char *ftext = NULL;
		if (is(r, "call")) {
			TSNode fn = field(r, "function"), args = field(r, "arguments");
			if (text_ends(v, fn, "field") || text_ends(v, fn, "Field")) {
				val = (TSNode){0};
				uint32_t na = is(args, "argument_list") ? pyts_named_child_count(args) : 0;
				for (uint32_t j = 0; j < na; j++) {
					TSNode x = pyts_named_child(args, j);
					if (is(x, "keyword_argument")) {
						TSNode k = field(x, "name");
						if (text_is(v, k, "default")) {
							val = field(x, "value");
							break;
						}
						if (text_is(v, k, "default_factory")) {
							val = field(x, "value");
							factory = 1;
							if (is(val, "lambda")) /* its body is the value */
								val = field(val, "body");
						}
					} else if (j == 0 && text_ends(v, fn, "Field") &&
					           !is(x, "ellipsis")) {
						val = x; /* Field(default, ...) */
						break;
					}
				}
			}
		}
		if (pyts_is_null(val) && how != ARG_TYPEDDICT)
			continue; /* required: no value to tune */
		arg_def *d = new_def(e, v, how, a);
		if (!d)
			return;
		squash(v, l, buf, sizeof(buf));
		d->name = scan_host_str(e->s, buf);
		d->flag = scan_host_str(e->s, cname);
		squash(v, t, buf, sizeof(buf));
		d->type = scan_host_str(e->s, buf);
		if (pyts_is_null(val)) {
			set_implicit(e, d, l, "", NULL);
		} else {
			set_value(e, v, d, val);
			if (factory)
				ftext = "default_factory";
		}
		d->factory = ftext != NULL;
	}
}

static int imports_click(const pyfile *pf)
{
	for (int i = 0; i < pf->nimports; i++)
		if (!strcmp(pf->imports[i].module, "click"))
			return 1;
	return 0;
}

/* Does file fi hold anything this file looks for? (from the per-file facts,
 * so that only those files are read and parsed again) */
static int candidate(const pyfile *pf)
{
	for (int i = 0; i < pf->ncalls; i++) {
		const char *f = pf->calls[i].fname;
		if (f && (!strcmp(f, "add_argument") || !strcmp(f, "option") ||
		          !strcmp(f, "argument")))
			return 1;
	}
	for (int i = 0; i < pf->nscopes; i++) {
		const pf_scope *sc = &pf->scopes[i];
		if (!(sc->flags & PF_CLASS))
			continue;
		if (schema_name(sc->name))
			return 1;
	}
	return 0;
}

/* Any of the words an argument definition needs (a *Config class of
 * another kind has nothing to walk again for)? */
static int has_trigger(const char *src, size_t n)
{
	static const char *const triggers[] = {"add_argument", "click",     "dataclass",
	                                       "BaseModel",    "TypedDict", "BaseSettings"};
	for (size_t i = 0; i < sizeof(triggers) / sizeof(*triggers); i++)
		if (memmem(src, n, triggers[i], strlen(triggers[i])))
			return 1;
	return 0;
}

int scan_args_wants(const pyfile *pf, const char *src, size_t n)
{
	return candidate(pf) && has_trigger(src, n);
}

/* What walk_file's walk carries from node to node. */
typedef struct file_walk {
	argctx *e;
	srcv v;
} file_walk;

/* pyts_preorder's visit for walk_file: an argument definition at node (an
 * add_argument call, a click decorator, a schema class); nonzero (stop)
 * when memory ran out. */
static int file_node(TSNode node, void *arg)
{
	file_walk *fw = arg;
	argctx *e = fw->e;
	const srcv *v = &fw->v;
	if (pyts_type(node)[0] != 'c') /* neither a call nor a class_definition */
		return e->oom;
	if (is(node, "call")) {
		TSNode fn = field(node, "function");
		TSNode parent = ts_node_parent(node);
		if (is(fn, "attribute") && text_is(v, field(fn, "attribute"), "add_argument"))
			cli_def(e, v, node, ARG_ARGPARSE, 0);
		else if (is(parent, "decorator") &&
		         (text_is(v, fn, "click.option") || (v->click && text_is(v, fn, "option"))))
			cli_def(e, v, node, ARG_CLICK, 0);
		else if (is(parent, "decorator") &&
		         (text_is(v, fn, "click.argument") ||
		          (v->click && text_is(v, fn, "argument"))))
			cli_def(e, v, node, ARG_CLICK, 1);
	} else if (is(node, "class_definition")) {
		TSNode parent = ts_node_parent(node);
		int how = schema_of(v, node, is(parent, "decorated_definition") ? parent : (TSNode){0});
		if (how >= 0)
			schema_fields(e, v, node, (enum arg_how)how);
	}
	return e->oom;
}

/* Collects the argument definitions of one file (facts pf, source src,
 * syntax tree tree) into e (strings in e->s's arena). */
static void walk_file(argctx *e, int fi, const pyfile *pf, const char *src, size_t n,
                      const TSTree *tree)
{
	file_walk fw = {e, {src, n, pf, fi, imports_click(pf)}};
	if (pyts_preorder(ts_tree_root_node(tree), file_node, &fw))
		e->oom = 1;
}

/* One file's definitions (scan_args_collect); e.s is NULL. */
struct scan_args_part {
	argctx e;
};

scan_args_part *scan_args_collect(muh_surface *arena, const pyfile *pf, const char *src,
                                  size_t n, const TSTree *tree, int *oom)
{
	if (!pf || !tree || n > UINT32_MAX / 2 || !scan_args_wants(pf, src, n))
		return NULL;
	argctx e = {0};
	e.s = arena;
	walk_file(&e, 0, pf, src, n, tree);
	scan_args_part *part = scan_host_part(&e, sizeof(*part), e.ndefs > 0, e.oom, oom);
	if (!part) {
		free(e.defs);
		return NULL;
	}
	part->e.s = NULL;
	return part;
}

void scan_args_part_free(scan_args_part *p)
{
	if (!p)
		return;
	free(p->e.defs);
	free(p);
}

/* ---- reads ------------------------------------------------------------------ */

static int cmp_def_name(const void *a, const void *b)
{
	const arg_def *const *x = a, *const *y = b;
	return strcmp((*x)->name, (*y)->name);
}

/* The defs named name in the sorted index: first index, count in *n. */
/* A 12-bit signature of name (its length and first, second and last
 * bytes): equal names have equal signatures, so a name whose signature no
 * definition (class) has is none of them, without a binary search. */
static unsigned name_sig(const char *name)
{
	size_t len = strlen(name);
	const unsigned char *u = (const unsigned char *)name;
	unsigned h = (unsigned)len * 131u + (len ? u[0] * 31u + u[len - 1] : 0u) +
	             (len > 1 ? u[1] * 7u : 0u);
	return (h ^ (h >> 12)) & 4095u;
}

static void sig_add(uint64_t *bits, const char *name)
{
	unsigned h = name_sig(name);
	bits[h >> 6] |= 1ull << (h & 63);
}

static int sig_has(const uint64_t *bits, const char *name)
{
	unsigned h = name_sig(name);
	return (bits[h >> 6] >> (h & 63)) & 1;
}

/* The definitions named name: [returned, returned + *cnt) of idx (n
 * of them, sorted by name); the start means nothing when *cnt is 0. */
static size_t defs_named(const argctx *e, arg_def *const *idx, size_t n, const char *name,
                         size_t *cnt)
{
	if (!sig_has(e->def_sigs, name)) {
		*cnt = 0;
		return 0;
	}
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (strcmp(idx[mid]->name, name) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	size_t k = lo;
	while (k < n && !strcmp(idx[k]->name, name))
		k++;
	*cnt = k - lo;
	return lo;
}

/* Is rel a script beside the engine (benchmarks/, examples/, tools/,
 * scripts/) rather than the engine's own code? Its reads count, but the
 * evidence cites the engine's own reads first. */
static int script_path(const char *rel)
{
	return !strncmp(rel, "benchmarks/", 11) || !strncmp(rel, "examples/", 9) ||
	       !strncmp(rel, "tools/", 6) || !strncmp(rel, "scripts/", 8);
}

static void note_read(argctx *e, arg_def *const *idx, size_t n, const char *name, int fi, int cls,
                      int line)
{
	size_t cnt, i0 = defs_named(e, idx, n, name, &cnt);
	const char *rel, *mod;
	int is_test;
	scan_host_file(e->s, fi, &rel, &mod, &is_test);
	int script = script_path(rel);
	for (size_t i = i0; i < i0 + cnt; i++) {
		arg_def *d = idx[i];
		if (cls == SCAN_ENV_R_LIVE) {
			int slot = d->nlive < 3 ? d->nlive++ : -1;
			for (int j = 0; slot < 0 && !script && j < 3; j++)
				if (d->lscript[j])
					slot = j; /* an engine read replaces a script's */
			if (slot >= 0) {
				d->lfi[slot] = fi;
				d->lline[slot] = line;
				d->lscript[slot] = script;
			}
		}
		if (cls < d->cls) {
			d->cls = cls;
			d->rfi = fi;
			d->rline = line;
		}
	}
}

/* getattr(obj, "NAME"[, d]) at src[byte]: the literal name into out (1), a
 * computed name (0), or not a getattr call here (-1). obj's text (trimmed,
 * at most cap-1 bytes) goes to objout. */
static int getattr_name(const char *src, size_t n, uint32_t byte, char *out, size_t cap,
                        char *objout, size_t ocap)
{
	size_t i = byte;
	while (i < n && src[i] != '(')
		i++;
	if (i >= n)
		return -1;
	int depth = 0;
	char q = 0;
	size_t o0 = i + 1;
	objout[0] = '\0';
	for (i++; i < n; i++) { /* skip the first argument */
		char c = src[i];
		if (q) {
			if (c == '\\')
				i++;
			else if (c == q)
				q = 0;
		} else if (c == '\'' || c == '"') {
			q = c;
		} else if (c == '(' || c == '[' || c == '{') {
			depth++;
		} else if (c == ')' || c == ']' || c == '}') {
			if (!depth--)
				return -1;
		} else if (c == ',' && !depth) {
			break;
		}
	}
	while (o0 < i && (src[o0] == ' ' || src[o0] == '\n' || src[o0] == '\t'))
		o0++;
	size_t ol = 0;
	while (o0 + ol < i && ol + 1 < ocap && src[o0 + ol] != ' ' && src[o0 + ol] != '\n' &&
	       src[o0 + ol] != ',')
		ol++;
	memcpy(objout, src + o0, ol);
	objout[ol] = '\0';
	for (i++; i < n && (src[i] == ' ' || src[i] == '\t' || src[i] == '\n' || src[i] == '\r');)
		i++;
	if (i >= n || (src[i] != '\'' && src[i] != '"'))
		return 0;
	char qq = src[i++];
	size_t o = 0;
	while (i < n && src[i] != qq && src[i] != '\n' && o + 1 < cap)
		out[o++] = src[i++];
	out[o] = '\0';
	return i < n && src[i] == qq && o > 0;
}

/* Is obj a parameter of function scope sc annotated with a type that is no
 * argument schema of the tree: a plain one (`hf_config: list`, `d: dict[str,
 * int]`) or another class (`inputs: SamplingInputs`; Optional[X] and X | None
 * look at X)? A whole read of obj then reads that, not a namespace of
 * arguments or a schema. Unannotated, Any, object and Namespace: 0. */
static int annotated_other(const char *src, size_t n, const pyfile *pf, int sc, const char *obj,
                           arg_def *const *idx, size_t nidx)
{
	if (sc < 0 || !(pf->scopes[sc].flags & PF_FUNC) || !*obj)
		return 0;
	size_t a = pf->scopes[sc].start, b = pf->scopes[sc].end, ol = strlen(obj);
	if (b > n)
		b = n;
	/* the parameter list: from the first '(' after `def` to its ')' */
	const char *d = a < b ? memmem(src + a, b - a, "def ", 4) : NULL;
	const char *p = d ? memchr(d, '(', (size_t)(src + b - d)) : NULL;
	int depth = 0;
	for (const char *q = p; q && q < src + b; q++) {
		if (*q == '(' || *q == '[')
			depth++;
		else if (*q == ')' || *q == ']') {
			if (--depth == 0)
				break;
		} else if (depth == 1 && !strncmp(q, obj, ol) && (q[-1] == '(' || q[-1] == ' ' ||
		                                                  q[-1] == ',' || q[-1] == '\n')) {
			const char *r = q + ol;
			while (r < src + b && *r == ' ')
				r++;
			if (*r != ':')
				continue;
			for (r++; r < src + b && (*r == ' ' || *r == '\'' || *r == '"');)
				r++;
			char t[96];
			for (int hop = 0; hop < 2; hop++) {
				size_t o = 0;
				while (r + o < src + b && o + 1 < sizeof(t) &&
				       ((r[o] >= 'a' && r[o] <= 'z') || (r[o] >= 'A' && r[o] <= 'Z') ||
				        r[o] == '_' || r[o] == '.' || (o && r[o] >= '0' && r[o] <= '9'))) {
					t[o] = r[o];
					o++;
				}
				t[o] = '\0';
				if ((strcmp(t, "Optional") && strcmp(t, "typing.Optional")) || r[o] != '[')
					break;
				r += o + 1;
			}
			const char *last = strrchr(t, '.') ? strrchr(t, '.') + 1 : t;
			if (!*last || !strcmp(last, "Any") || !strcmp(last, "object") ||
			    !strcmp(last, "Namespace") || strstr(last, "Args") || strstr(last, "Namespace"))
				return 0;
			for (size_t i = 0; i < nidx; i++)
				if (idx[i]->how > ARG_CLICK && !strcmp(idx[i]->flag, last))
					return 0; /* one of the schemas: a whole read of it */
			return 1;
		}
	}
	return 0;
}

/* Is name, in scope sc, assigned a module (`m = importlib.import_module(...)`,
 * `__import__(...)`)? getattr(m, name) then looks a definition up. */
static int module_var(const pyfile *pf, int sc, const char *name)
{
	for (int i = 0; i < pf->ncalls; i++) {
		const pf_call *c = &pf->calls[i];
		if (c->scope == sc && c->assigned && c->fname && !strcmp(c->assigned, name) &&
		    (!strcmp(c->fname, "import_module") || !strcmp(c->fname, "__import__")))
			return 1;
	}
	return 0;
}

/* Is getattr call ci method dispatch: `getattr(x, m)(...)`, or `f =
 * getattr(x, m)` with f called in the same function? */
static int is_dispatch(const pyfile *pf, int ci)
{
	const pf_call *g = &pf->calls[ci];
	for (int i = 0; i < pf->ncalls; i++) {
		const pf_call *c = &pf->calls[i];
		if (c->scope != g->scope || !c->fname)
			continue;
		if (c->byte == g->byte && i != ci && !strncmp(c->callee, "getattr(", 8))
			return 1; /* getattr(x, m)(...): the outer call starts where it does */
		if (g->assigned && c->byte > g->byte && !c->obj && !strcmp(c->fname, g->assigned))
			return 1;
	}
	return 0;
}

/* getattr(obj, NAME) at src[byte] where NAME is the variable of an
 * enclosing `for NAME in ('a', 'b'):` over string literals only (in the same
 * function): it reads those attributes, not every one. */
static int name_from_literals(const char *src, size_t n, const pyfile *pf, int sc, uint32_t byte)
{
	if (sc < 0 || byte >= n)
		return 0;
	/* the second argument's identifier */
	size_t i = byte;
	while (i < n && src[i] != '(')
		i++;
	int depth = 0;
	for (i++; i < n; i++) {
		if (src[i] == '(' || src[i] == '[')
			depth++;
		else if (src[i] == ')' || src[i] == ']')
			depth--;
		else if (src[i] == ',' && !depth)
			break;
		if (depth < 0)
			return 0;
	}
	for (i++; i < n && (src[i] == ' ' || src[i] == '\n');)
		i++;
	char nm[64];
	size_t o = 0;
	while (i < n && o + 1 < sizeof(nm) &&
	       ((src[i] >= 'a' && src[i] <= 'z') || (src[i] >= 'A' && src[i] <= 'Z') ||
	        src[i] == '_' || (o && src[i] >= '0' && src[i] <= '9')))
		nm[o++] = src[i++];
	nm[o] = '\0';
	if (!o)
		return 0;
	char pat[80];
	snprintf(pat, sizeof(pat), "for %s in ", nm);
	size_t a = pf->scopes[sc].start, pl = strlen(pat);
	for (size_t j = byte; j > a + pl; j--) {
		if (strncmp(src + j - pl, pat, pl))
			continue;
		size_t k = j;
		if (k >= n || (src[k] != '(' && src[k] != '['))
			return 0;
		char close = src[k] == '(' ? ')' : ']';
		int strings = 0;
		for (k++; k < n && src[k] != close; k++) {
			char ch = src[k];
			if (ch == '\'' || ch == '"') {
				for (k++; k < n && src[k] != ch && src[k] != '\n'; k++)
					;
				strings++;
			} else if (ch != ' ' && ch != ',' && ch != '\n') {
				return 0;
			}
		}
		return strings > 0;
	}
	return 0;
}

/* Is name bound by an import in pf (getattr(torch, dtype) reads a module,
 * not a namespace of arguments)? */
static int is_module_alias(const pyfile *pf, const char *name)
{
	for (int i = 0; i < pf->nimports; i++)
		if (!strcmp(pf->imports[i].alias, name))
			return 1;
	return 0;
}

static int dyn_call(const char *f)
{
	return !strcmp(f, "vars") || !strcmp(f, "asdict") || !strcmp(f, "astuple") ||
	       !strcmp(f, "fields") || !strcmp(f, "model_dump") || !strcmp(f, "model_fields");
}

/* fields(self), asdict(self), vars(cls) ...: a class reading its own
 * fields (self_dyn decides for that class only). */
static int of_self(const pf_call *c)
{
	return c->nargs >= 1 && c->args[0].ident &&
	       (!strcmp(c->args[0].ident, "self") || !strcmp(c->args[0].ident, "cls"));
}

/* A whole read of its own instance inside class scope cls of pf (fields(self),
 * asdict(self), vars(self), self.__dict__): its line, else 0. */
static int self_dyn(const pyfile *pf, int cls, const char **what)
{
	if (cls < 0)
		return 0;
	for (int i = 0; i < pf->ncalls; i++) {
		const pf_call *c = &pf->calls[i];
		if (!c->fname || !dyn_call(c->fname) || !of_self(c) ||
		    c->byte < pf->scopes[cls].start || c->byte >= pf->scopes[cls].end)
			continue;
		*what = c->fname;
		return c->line;
	}
	for (int i = 0; i < pf->nrefs; i++) {
		const pf_ref *r = &pf->refs[i];
		if ((r->flags & PF_R_ATTR) && !strcmp(r->name, "__dict__") && r->obj &&
		    !strcmp(r->obj, "self") && r->byte >= pf->scopes[cls].start &&
		    r->byte < pf->scopes[cls].end) {
			*what = "__dict__";
			return r->line;
		}
	}
	return 0;
}

static void set_dyn(argctx *e, int kind, int fi, int line, const char *what)
{
	int i = kind * e->nf + fi;
	if (!e->dyn_line[i]) {
		e->dyn_line[i] = line;
		e->dyn_what[i] = what;
	}
}

/* Does `what` occur on the lines around src[byte] (the statement, roughly:
 * two lines before to one after)? */
static int near(const char *src, size_t n, uint32_t byte, const char *what)
{
	size_t a = byte, b = byte;
	for (int k = 0; k < 3 && a > 0; a--)
		k += src[a - 1] == '\n';
	for (int k = 0; k < 2 && b < n; b++)
		k += src[b] == '\n';
	size_t l = strlen(what);
	return b > a && memmem(src + a, b - a, what, l) != NULL;
}

/* Every read of a defined name in the tree, and each file's first read of a
 * namespace or instance as a whole. */
static void collect_reads(argctx *e, arg_def *const *idx, size_t n)
{
	int nf = scan_host_nfiles(e->s);
	for (int fi = 0; fi < nf; fi++) {
		const char *rel, *mod;
		int is_test;
		const pyfile *pf = scan_host_file(e->s, fi, &rel, &mod, &is_test);
		for (int i = 0; i < pf->nrefs; i++) {
			const pf_ref *r = &pf->refs[i];
			if (!(r->flags & (PF_R_ATTR | PF_R_KEY)))
				continue;
			if ((r->flags & PF_R_ATTR) && !strcmp(r->name, "__dict__") && !is_test &&
			    !(r->obj && (!strcmp(r->obj, "self") || !strcmp(r->obj, "cls"))))
				set_dyn(e, 0, fi, r->line, "__dict__");
			size_t cnt;
			defs_named(e, idx, n, r->name, &cnt);
			if (!cnt)
				continue;
			int cls = scan_host_read_class(e->s, fi, r->scope, r->byte, r->line, r->flags);
			note_read(e, idx, n, r->name, fi, cls, r->line);
		}
		int want_src = 0;
		for (int i = 0; i < pf->ncalls; i++) {
			const pf_call *c = &pf->calls[i];
			if (!c->fname)
				continue;
			if (!strcmp(c->fname, "getattr") ||
			    (dyn_call(c->fname) && !is_test && !of_self(c)))
				want_src = 1;
		}
		if (!want_src)
			continue;
		char path[8192];
		snprintf(path, sizeof(path), "%s/%s", scan_root(e->s), rel);
		size_t sn;
		char *src = file_read(path, &sn);
		int same = src && pyfile_hash(src, sn) == pf->hash;
		/* vars(x), fields(x), asdict(x) ...: unless x is declared another type */
		for (int i = 0; i < pf->ncalls; i++) {
			const pf_call *c = &pf->calls[i];
			if (c->fname && dyn_call(c->fname) && !is_test && !of_self(c) &&
			    !(same && c->nargs >= 1 && c->args[0].ident &&
			      annotated_other(src, sn, pf, c->scope, c->args[0].ident, idx, n)))
				set_dyn(e, strcmp(c->fname, "vars") ? 1 : 0, fi, c->line, c->fname);
		}
		if (same) {
			for (int i = 0; i < pf->ncalls; i++) {
				const pf_call *c = &pf->calls[i];
				if (!c->fname || strcmp(c->fname, "getattr"))
					continue;
				char nm[256], obj[128];
				int g = getattr_name(src, sn, c->byte, nm, sizeof(nm), obj, sizeof(obj));
				if (g == 0 && !is_test && !is_module_alias(pf, obj) &&
				    strcmp(obj, "self") && strcmp(obj, "cls") &&
				    !module_var(pf, c->scope, obj) &&
				    !annotated_other(src, sn, pf, c->scope, obj, idx, n) &&
				    !name_from_literals(src, sn, pf, c->scope, c->byte) &&
				    !is_dispatch(pf, i)) {
					/* getattr(args, f.name) for f in fields(cls): fields only */
					int over = near(src, sn, c->byte, "fields(");
					set_dyn(e, over, fi, c->line,
					        over ? "getattr over fields()"
					             : "getattr with a computed name");
				}
				/* getattr(x, "NAME") is an attribute ref of pyfile's: read above */
			}
		}
		free(src);
	}
}

/* Does function (fi, sc) turn a namespace into a dict (vars(x),
 * x._get_kwargs(), x.__dict__)? */
static int makes_kwargs(const pyfile *pf, int sc)
{
	const pf_scope *f = &pf->scopes[sc];
	for (int i = 0; i < pf->ncalls; i++) {
		const pf_call *c = &pf->calls[i];
		if (c->fname && c->byte >= f->start && c->byte < f->end &&
		    (!strcmp(c->fname, "vars") || !strcmp(c->fname, "_get_kwargs")))
			return 1;
	}
	for (int i = 0; i < pf->nrefs; i++)
		if ((pf->refs[i].flags & PF_R_ATTR) && !strcmp(pf->refs[i].name, "__dict__") &&
		    pf->refs[i].byte >= f->start && pf->refs[i].byte < f->end)
			return 1;
	return 0;
}

/* Is the **splat argument of call c (in scope sc of pf) a namespace turned
 * into a dict: **vars(args), **args.__dict__, or **K with K = vars(args) /
 * K = convert_args(args) where convert_args does so (one call away)? */
static int splat_of_namespace(argctx *e, int fi, const pyfile *pf, const pf_call *c,
                              const pf_arg *a)
{
	if (!a->ident) { /* **vars(args) in the call itself */
		for (int i = 0; i < pf->ncalls; i++) {
			const pf_call *g = &pf->calls[i];
			if (g->fname && g->byte > c->byte && g->byte < c->end &&
			    (!strcmp(g->fname, "vars") || !strcmp(g->fname, "_get_kwargs")))
				return 1;
		}
		return 0;
	}
	for (int i = 0; i < pf->ncalls; i++) {
		const pf_call *g = &pf->calls[i];
		if (g->scope != c->scope || !g->assigned || strcmp(g->assigned, a->ident) ||
		    g->byte >= c->byte || !g->fname)
			continue;
		if (!strcmp(g->fname, "vars") || !strcmp(g->fname, "_get_kwargs"))
			return 1;
		int tf, ts;
		if (scan_host_call_def(e->s, fi, g, &tf, &ts)) {
			const char *r, *m;
			int t;
			const pyfile *tp = scan_host_file(e->s, tf, &r, &m, &t);
			if ((tp->scopes[ts].flags & PF_FUNC) && makes_kwargs(tp, ts))
				return 1;
		}
	}
	return 0;
}

/* An argparse namespace handed whole to a function as keyword arguments
 * (`kwargs = convert_args(args); proxy(**kwargs)`, `serve(**vars(args))`):
 * each parameter of that function is an argument of the same name, and its
 * loads inside the function are that argument's reads. */
static void namespace_splat_reads(argctx *e, arg_def *const *idx, size_t n)
{
	int nf = scan_host_nfiles(e->s);
	for (int fi = 0; fi < nf; fi++) {
		const char *rel, *mod;
		int is_test;
		const pyfile *pf = scan_host_file(e->s, fi, &rel, &mod, &is_test);
		if (is_test)
			continue;
		for (int i = 0; i < pf->ncalls; i++) {
			const pf_call *c = &pf->calls[i];
			const pf_arg *sp = NULL;
			for (int a = 0; a < c->nargs && !sp; a++)
				if (c->args[a].splat == 2)
					sp = &c->args[a];
			int tf, ts;
			if (!sp || !splat_of_namespace(e, fi, pf, c, sp) ||
			    !scan_host_call_def(e->s, fi, c, &tf, &ts))
				continue;
			const char *tr, *tm;
			int tt;
			const pyfile *tp = scan_host_file(e->s, tf, &tr, &tm, &tt);
			const pf_scope *fn = &tp->scopes[ts];
			if (!(fn->flags & PF_FUNC))
				continue;
			for (int p = 0; p < fn->nparams; p++) {
				size_t cnt, i0 = defs_named(e, idx, n, fn->params[p], &cnt);
				for (size_t k = i0; k < i0 + cnt; k++) {
					arg_def *d = idx[k];
					if (d->how != ARG_ARGPARSE)
						continue;
					for (int r = 0; r < tp->nrefs; r++) {
						const pf_ref *ref = &tp->refs[r];
						if ((ref->flags & (PF_R_ATTR | PF_R_KEY | PF_R_STR | PF_R_SPLAT)) ||
						    ref->byte < fn->start || ref->byte >= fn->end ||
						    strcmp(ref->name, d->name))
							continue;
						int cls = scan_host_read_class(e->s, tf, ref->scope, ref->byte,
						                               ref->line, ref->flags);
						if (cls == SCAN_ENV_R_LIVE && !d->via_line) {
							d->via_fi = fi;
							d->via_line = c->line;
						}
						arg_def *one = d;
						note_read(e, &one, 1, d->name, tf, cls, ref->line);
					}
				}
			}
		}
	}
}

/* A click argument is a parameter of the command function: the loads of
 * that name inside it (click calls the function, so a read that is not on
 * an unreachable path is live). */
static void click_reads(argctx *e, arg_def *d)
{
	const char *rel, *mod;
	int is_test;
	const pyfile *pf = scan_host_file(e->s, d->fi, &rel, &mod, &is_test);
	if (d->fnscope < 0)
		return;
	for (int i = 0; i < pf->nrefs; i++) {
		const pf_ref *r = &pf->refs[i];
		if ((r->flags & (PF_R_ATTR | PF_R_KEY | PF_R_STR)) || strcmp(r->name, d->name))
			continue;
		int sc = r->scope;
		while (sc >= 0 && sc != d->fnscope)
			sc = pf->scopes[sc].parent;
		if (sc < 0)
			continue;
		int cls = scan_host_read_class(e->s, d->fi, r->scope, r->byte, r->line, r->flags);
		if (cls == SCAN_ENV_R_UNKNOWN || cls == SCAN_ENV_R_NONE)
			cls = SCAN_ENV_R_LIVE;
		arg_def *one = d;
		note_read(e, &one, 1, d->name, d->fi, cls, r->line);
	}
}

/* The first whole-object read of the kinds `kinds` reads (1: namespace,
 * 3: also fields-only) in file fi or in a file that imports fi's module: its
 * file (or -1), line and what it is. */
static int dyn_site(argctx *e, int fi, int kinds, int *line, const char **what)
{
	for (int k = 0; k < 2; k++)
		if ((kinds >> k & 1) && e->dyn_line[k * e->nf + fi]) {
			*line = e->dyn_line[k * e->nf + fi];
			*what = e->dyn_what[k * e->nf + fi];
			return fi;
		}
	const char *rel, *mod;
	int is_test;
	scan_host_file(e->s, fi, &rel, &mod, &is_test);
	size_t ml = strlen(mod);
	int nf = scan_host_nfiles(e->s);
	for (int gi = 0; gi < nf; gi++) {
		int k = (kinds & 1) && e->dyn_line[gi] ? 0 : (kinds & 2) && e->dyn_line[nf + gi] ? 1 : -1;
		if (k < 0)
			continue;
		const char *r2, *m2;
		int t2;
		const pyfile *pf = scan_host_file(e->s, gi, &r2, &m2, &t2);
		for (int i = 0; i < pf->nimports; i++) {
			const pf_import *im = &pf->imports[i];
			size_t il = strlen(im->module);
			if (!strcmp(im->module, mod) ||
			    (im->attr && il < ml && !strncmp(mod, im->module, il) &&
			     mod[il] == '.' && !strcmp(mod + il + 1, im->attr))) {
				*line = e->dyn_line[k * nf + gi];
				*what = e->dyn_what[k * nf + gi];
				return gi;
			}
		}
	}
	return -1;
}

/* ---- knobs ------------------------------------------------------------------ */

typedef struct steps {
	scan_step st[8];
	int n;
} steps;

static void add_step(argctx *e, steps *s, int fi, int line, const char *note)
{
	if (s->n >= 8)
		return;
	const char *rel, *mod;
	int is_test;
	scan_host_file(e->s, fi, &rel, &mod, &is_test);
	s->st[s->n].file = rel;
	s->st[s->n].line = line;
	s->st[s->n].note = note;
	s->n++;
}

/* A definition read only by readers of one class, d->cls (unknown,
 * platform, test, unreachable): its verdict (scan_env's for the class),
 * why, and the read's step. */
static void read_only_by_class(argctx *e, steps *st, const arg_def *d, enum scan_verdict *v,
                               const char **why)
{
	static const struct {
		const char *why, *note; /* note: printf format of the name */
	} by_class[SCAN_ENV_R_NONE] = {
	    [SCAN_ENV_R_UNKNOWN] = {"read only in functions nothing names statically",
	                            "%s read here"},
	    [SCAN_ENV_R_PLATFORM] = {"read only in another platform's modules", "%s read here"},
	    [SCAN_ENV_R_TEST] = {"read only from tests", "%s read here (a test)"},
	    [SCAN_ENV_R_UNREACH] = {"read only on unreachable paths",
	                            "%s read here, after a return or under a false `if`"},
	};
	*v = scan_env_class_verdict(d->cls);
	*why = by_class[d->cls].why;
	add_step(e, st, d->rfi, d->rline, scan_host_fmt(e->s, by_class[d->cls].note, d->name));
}

static const char *def_note(argctx *e, const arg_def *d)
{
	char buf[900];
	int o;
	if (d->how <= ARG_CLICK)
		o = snprintf(buf, sizeof(buf), "%s %s: dest %s, type %s, default %s%s", how_name[d->how],
		             d->flag, d->name, d->type ? d->type : "unknown", d->value,
		             d->implicit && d->value[0] != '(' ? " (implicit)" : "");
	else
		o = snprintf(buf, sizeof(buf), "%s %s.%s: type %s, %s%s", how_name[d->how], d->flag,
		             d->name, d->type ? d->type : "unknown",
		             d->implicit  ? "no default"
		             : d->factory ? "default_factory "
		                          : "default ",
		             d->implicit ? "" : d->value);
	if (d->choices && o > 0 && (size_t)o < sizeof(buf))
		snprintf(buf + o, sizeof(buf) - (size_t)o, ", choices %s", d->choices);
	return scan_host_str(e->s, buf);
}

/* ---- the knobs by name ------------------------------------------------------ */

/* emit_def asks, for each definition, which earlier knobs have its name (a
 * field to merge into, a knob already reported, the occurrence count of its
 * id); a walk over every knob each time was quadratic (0.37 G instructions
 * of one thread on SGLang 0.5.10). The index is a chained hash of names
 * whose chains list knobs in knob order, so each question reads only the
 * knobs of its name's bucket and stops at its limit, with the same tests in
 * the same order as a walk over all of them. */

#define KX_NONE ((size_t)-1)

static size_t kx_bucket(const argctx *e, const char *name)
{
	size_t h = 14695981039346656037ULL;
	for (; *name; name++)
		h = (h ^ (unsigned char)*name) * 1099511628211ULL;
	return h & e->kx_mask;
}

/* Adds knob i (the last one indexed + 1) to its name's chain. */
static void kx_add(argctx *e, size_t i)
{
	size_t b = kx_bucket(e, scan_host_knob(e->s, i)->name);
	e->kx_next[i] = KX_NONE;
	if (e->kx_head[b] == KX_NONE)
		e->kx_head[b] = i;
	else
		e->kx_next[e->kx_tail[b]] = i;
	e->kx_tail[b] = i;
}

/* Indexes the first n knobs, with room for up to extra more; -1 when
 * memory ran out. */
static int knobs_index(argctx *e, size_t n, size_t extra)
{
	size_t nb = 16;
	while (nb < 2 * (n + extra))
		nb *= 2;
	e->kx_head = malloc(nb * sizeof(size_t));
	e->kx_tail = malloc(nb * sizeof(size_t));
	e->kx_next = malloc((n + extra + 1) * sizeof(size_t));
	if (!e->kx_head || !e->kx_tail || !e->kx_next)
		return -1;
	e->kx_mask = nb - 1;
	for (size_t b = 0; b < nb; b++)
		e->kx_head[b] = KX_NONE;
	for (size_t i = 0; i < n; i++)
		kx_add(e, i);
	return 0;
}

/* The first indexed knob of name's bucket (KX_NONE: none); the next one
 * after i is e->kx_next[i]. Chains are in knob order. */
static size_t kx_first(const argctx *e, const char *name)
{
	return e->kx_head[kx_bucket(e, name)];
}

/* A live class-field engine argument (not a deployment flag, not a CLI one)
 * named name, among the first n knobs (those before the CLI arguments). */
static const muh_knob *field_named(argctx *e, size_t nold, const char *name)
{
	for (size_t i = kx_first(e, name); i != KX_NONE && i < nold; i = e->kx_next[i]) {
		const muh_knob *k = scan_host_knob(e->s, i);
		if (!strcmp(k->kind, "engine_arg") && strcmp(k->scope, "<deployment>") &&
		    k->verdict == SCAN_LIVE && !strcmp(k->name, name))
			return k;
	}
	return NULL;
}

/* The class-field engine argument named name among the first n knobs, one in
 * file rel first; NULL when there is none. */
static muh_knob *field_any(argctx *e, size_t n, const char *name, const char *rel)
{
	muh_knob *best = NULL;
	for (size_t i = kx_first(e, name); i != KX_NONE && i < n; i = e->kx_next[i]) {
		muh_knob *k = scan_host_knob(e->s, i);
		if (strcmp(k->kind, "engine_arg") || !strcmp(k->scope, "<deployment>") ||
		    strcmp(k->name, name) || !k->line)
			continue;
		if (!strcmp(k->file, rel))
			return k;
		if (!best)
			best = k;
	}
	return best;
}

/* The accepted set of CLI argument d (file rel) on knob k, which it sets: a
 * live (or already unsafe) knob becomes unsafe with `not in (...)`, a step
 * naming the set and where it is, and (when it was live) the why. The
 * parser exits on any other value ("invalid choice"), so those values never
 * reach the engine. */
static void apply_accepted(argctx *e, muh_knob *k, const arg_def *d, const char *rel)
{
	if (!d->accepted || (k->verdict != SCAN_LIVE && k->verdict != SCAN_UNSAFE))
		return;
	muh_surface *s = e->s;
	const char *u = scan_host_fmt(s, "not in (%s)", d->accepted);
	for (int i = 0; i < k->nunsafe; i++)
		if (!strcmp(k->unsafe_values[i], u))
			return; /* the same set, found by another rule */
	const char **uv = scan_host_alloc(s, sizeof(char *) * (size_t)(k->nunsafe + 1));
	scan_step *ev = scan_host_alloc(s, sizeof(scan_step) * (size_t)(k->nevidence + 1));
	if (!uv || !ev) {
		e->oom = 1;
		return;
	}
	for (int i = 0; i < k->nunsafe; i++)
		uv[i] = k->unsafe_values[i];
	uv[k->nunsafe] = u;
	if (k->nevidence)
		memcpy(ev, k->evidence, sizeof(scan_step) * (size_t)k->nevidence);
	ev[k->nevidence].file = rel;
	ev[k->nevidence].line = d->acc_line;
	ev[k->nevidence].note =
	    d->acc_name
	        ? scan_host_fmt(s, "%s %s accepts only %s (%s): any other value exits the parser",
	                        how_name[d->how], d->flag, d->acc_name, d->accepted)
	        : scan_host_fmt(s, "%s %s accepts only choices (%s): any other value exits the parser",
	                        how_name[d->how], d->flag, d->accepted);
	k->unsafe_values = uv;
	k->nunsafe++;
	k->evidence = ev;
	k->nevidence++;
	if (k->verdict == SCAN_LIVE)
		k->why = scan_host_fmt(s, "%s outside (%s) is refused by %s %s (%s:%d)", k->name,
		                       d->accepted, how_name[d->how], d->flag, rel, d->acc_line);
	k->verdict = SCAN_UNSAFE;
}

/* A command-line argument defined next to a class field of its name (vLLM's
 * EngineArgs.add_cli_args), or whose default is the field itself
 * (default=EngineArgs.max_num_seqs) or comes from **kwargs made from the
 * fields (vLLM 0.8.5's get_kwargs(SchedulerConfig)), is the same knob as
 * that field: the field gets a step naming the flag; 1 when so. */
static int merge_into_field(argctx *e, const arg_def *d, size_t nfields, const char *rel)
{
	size_t ln = strlen(d->name), lv = strlen(d->value);
	int self_default = !d->implicit && lv > ln + 1 && d->value[lv - ln - 1] == '.' &&
	                   !strcmp(d->value + lv - ln, d->name);
	if (d->how != ARG_ARGPARSE)
		return 0;
	muh_knob *k = field_any(e, nfields, d->name, rel);
	if (!k || (strcmp(k->file, rel) && !self_default && !d->splat))
		return 0;
	scan_step *ev = scan_host_alloc(e->s, sizeof(scan_step) * (size_t)(k->nevidence + 1));
	if (!ev)
		return 1;
	if (k->nevidence)
		memcpy(ev, k->evidence, sizeof(scan_step) * (size_t)k->nevidence);
	ev[k->nevidence].file = rel;
	ev[k->nevidence].line = d->dline;
	ev[k->nevidence].note = scan_host_fmt(
	    e->s, "the command line sets it: argparse %s (default %s)", d->flag, d->value);
	k->evidence = ev;
	k->nevidence++;
	apply_accepted(e, k, d, rel);
	return 1;
}

/* Is an engine argument name at rel:line among the first nold knobs? */
static int already_known(argctx *e, size_t nold, const char *rel, int line, const char *name)
{
	for (size_t i = kx_first(e, name); i != KX_NONE && i < nold; i = e->kx_next[i]) {
		const muh_knob *k = scan_host_knob(e->s, i);
		if (k->line == line && !strcmp(k->kind, "engine_arg") && !strcmp(k->name, name) &&
		    !strcmp(k->file, rel))
			return 1;
	}
	return 0;
}

static int cmp_cinfo(const void *a, const void *b)
{
	return strcmp(((const cinfo *)a)->name, ((const cinfo *)b)->name);
}

/* Marks opaque the schema classes of file fi (pf) whose body holds byte:
 * `cls` used there is the class itself. */
static void classes_around_opaque(argctx *e, int fi, const pyfile *pf, uint32_t byte)
{
	for (size_t k = 0; k < e->nclasses; k++) {
		cinfo *c = &e->classes[k];
		if (c->fi == fi && byte >= pf->scopes[c->sc].start && byte < pf->scopes[c->sc].end)
			c->opaque = 1;
	}
}

/* The classes named name: [*lo, *lo + returned count); *lo means nothing
 * when the count is 0. */
static size_t classes_named(const argctx *e, const char *name, size_t *lo)
{
	if (!sig_has(e->class_sigs, name)) {
		*lo = 0;
		return 0;
	}
	return scan_host_named(e->classes, e->nclasses, sizeof(cinfo), name, lo);
}

/* One pass over the tree for every schema class with a defaulted field:
 * its constructions (calls resolving to it outside tests, not on an
 * unreachable path, keyword arguments only), or opaque when anything could
 * construct it or read its defaults unseen: `Class.attr` (a default read,
 * `Class.from_dict(...)`), `cls.x` or `cls(...)` inside it, the class handed
 * to a helper (fields(Class), get_kwargs(Class)), a construction with
 * positional or ** arguments. Returns -1 when memory runs out. */
static int constructions_of(argctx *e)
{
	muh_surface *s = e->s;
	for (size_t i = 0; i < e->ndefs; i++) {
		const arg_def *d = &e->defs[i];
		const char *rel, *mod;
		int t;
		const pyfile *pf = scan_host_file(s, d->fi, &rel, &mod, &t);
		if (d->how <= ARG_CLICK || d->implicit || d->scope < 0 ||
		    !(pf->scopes[d->scope].flags & PF_CLASS) || pf->scopes[d->scope].parent >= 0)
			continue;
		int seen = 0;
		for (size_t k = 0; k < e->nclasses && !seen; k++)
			seen = e->classes[k].fi == d->fi && e->classes[k].sc == d->scope;
		if (seen)
			continue;
		cinfo *nc = realloc(e->classes, sizeof(cinfo) * (e->nclasses + 1));
		if (!nc)
			return -1;
		e->classes = nc;
		nc[e->nclasses++] = (cinfo){pf->scopes[d->scope].name, d->fi, d->scope, 0, 0, 0, NULL, NULL};
	}
	if (!e->nclasses)
		return 0;
	qsort(e->classes, e->nclasses, sizeof(cinfo), cmp_cinfo);
	for (size_t k = 0; k < e->nclasses; k++)
		sig_add(e->class_sigs, e->classes[k].name);
	int nf = scan_host_nfiles(s);
	for (int fi = 0; fi < nf; fi++) {
		const char *rel, *mod;
		int is_test;
		const pyfile *pf = scan_host_file(s, fi, &rel, &mod, &is_test);
		if (is_test)
			continue;
		size_t lo, n;
		for (int i = 0; i < pf->nrefs; i++) {
			const pf_ref *r = &pf->refs[i];
			if (!(r->flags & PF_R_ATTR) || !r->obj)
				continue;
			if (!strcmp(r->obj, "cls")) { /* cls.x inside the class */
				classes_around_opaque(e, fi, pf, r->byte);
				continue;
			}
			n = classes_named(e, r->obj, &lo);
			for (size_t k = lo; k < lo + n; k++)
				e->classes[k].opaque = 1;
		}
		for (int i = 0; i < pf->ncalls; i++) {
			const pf_call *c = &pf->calls[i];
			if (!c->fname)
				continue;
			for (int a = 0; a < c->nargs; a++) /* the class handed to a helper */
				if (c->args[a].ident && (n = classes_named(e, c->args[a].ident, &lo)))
					for (size_t k = lo; k < lo + n; k++)
						e->classes[k].opaque = 1;
			if (!strcmp(c->fname, "cls") && !c->obj) {
				classes_around_opaque(e, fi, pf, c->byte);
				continue;
			}
			if (!(n = classes_named(e, c->fname, &lo)))
				continue;
			int tf, ts;
			if (!scan_host_call_def(s, fi, c, &tf, &ts))
				continue;
			for (size_t k = lo; k < lo + n; k++) {
				cinfo *ci = &e->classes[k];
				if (ci->fi != tf || ci->sc != ts)
					continue;
				if (scan_host_read_class(s, fi, c->scope, c->byte, c->line,
				                         c->flags & PF_C_UNREACH ? PF_R_UNREACH : 0) ==
				    SCAN_ENV_R_UNREACH)
					continue; /* a construction that never runs */
				for (int a = 0; a < c->nargs; a++)
					if (c->args[a].splat || c->args[a].pos >= 0)
						ci->opaque = 1;
				if (ci->n == ci->cap) {
					int cap = ci->cap ? 2 * ci->cap : 4;
					int *x = realloc(ci->cfi, sizeof(int) * (size_t)cap);
					if (!x)
						return -1;
					ci->cfi = x;
					int *y = realloc(ci->cci, sizeof(int) * (size_t)cap);
					if (!y)
						return -1;
					ci->cci = y;
					ci->cap = cap;
				}
				ci->cfi[ci->n] = fi;
				ci->cci[ci->n++] = i;
			}
		}
	}
	return 0;
}

/* A schema field whose default no construction uses: its class is not
 * opaque (constructions_of), has at least one construction and every one
 * passes the field by keyword. 1 with a step per construction (at most 5,
 * then one that counts the rest) and the first one's place. Not with --library (callers outside the tree
 * may construct it). Heuristic: subclasses are not seen. */
static int default_never_used(argctx *e, const arg_def *d, steps *st, int *first_fi,
                              int *first_line)
{
	muh_surface *s = e->s;
	const cinfo *ci = NULL;
	for (size_t k = 0; k < e->nclasses && !ci; k++)
		if (e->classes[k].fi == d->fi && e->classes[k].sc == d->scope)
			ci = &e->classes[k];
	if (!ci || ci->opaque || !ci->n)
		return 0;
	for (int j = 0; j < ci->n; j++) {
		const char *rel, *mod;
		int t;
		const pf_call *c = &scan_host_file(s, ci->cfi[j], &rel, &mod, &t)->calls[ci->cci[j]];
		int kw = 0;
		for (int a = 0; a < c->nargs && !kw; a++)
			kw = c->args[a].kw && !strcmp(c->args[a].kw, d->name);
		if (!kw)
			return 0;
	}
	for (int j = 0; j < ci->n; j++) {
		const char *rel, *mod;
		int t;
		const pf_call *c = &scan_host_file(s, ci->cfi[j], &rel, &mod, &t)->calls[ci->cci[j]];
		if (!j) {
			*first_fi = ci->cfi[j];
			*first_line = c->line;
		}
		if (j < 5)
			add_step(
			    e, st, ci->cfi[j], c->line,
			    scan_host_fmt(s, "%s(..., %s=...) here passes it", ci->name, d->name));
		else if (j == 5)
			add_step(e, st, ci->cfi[j], c->line,
			         scan_host_fmt(s, "and %d more constructions pass it, from here on",
			                       ci->n - 5));
	}
	return 1;
}

static void emit_def(argctx *e, arg_def *d, size_t nold, size_t nfields)
{
	muh_surface *s = e->s;
	const char *rel, *mod;
	int is_test;
	const pyfile *pf = scan_host_file(s, d->fi, &rel, &mod, &is_test);
	if (already_known(e, nold, rel, d->line, d->name) || merge_into_field(e, d, nfields, rel))
		return;
	int dline = d->dline;
	steps st = {{{0}}, 0};
	add_step(e, &st, d->fi, dline, def_note(e, d));
	enum scan_verdict v;
	const char *why;
	int place = scan_host_read_class(s, d->fi, d->scope, d->at, dline, 0);
	/* a schema's fields are read through its instances wherever they are
	 * made: only an unreachable or another platform's definition counts */
	if (d->how > ARG_CLICK && place != SCAN_ENV_R_UNREACH && place != SCAN_ENV_R_PLATFORM)
		place = SCAN_ENV_R_LIVE;
	if (place == SCAN_ENV_R_UNREACH) {
		v = SCAN_DEAD;
		why = "defined on an unreachable path";
		add_step(e, &st, d->fi, dline, "after a return, or under an `if` that constants make false");
	} else if (place == SCAN_ENV_R_PLATFORM) {
		v = SCAN_PLATFORM;
		why = "defined in another platform's module";
	} else if (d->cls == SCAN_ENV_R_LIVE) {
		v = SCAN_LIVE;
		for (int i = 1; i < d->nlive; i++) /* the engine's own reads first */
			for (int j = i; j > 0 && d->lscript[j - 1] > d->lscript[j]; j--) {
				int t = d->lfi[j], u = d->lline[j], w = d->lscript[j];
				d->lfi[j] = d->lfi[j - 1];
				d->lline[j] = d->lline[j - 1];
				d->lscript[j] = d->lscript[j - 1];
				d->lfi[j - 1] = t;
				d->lline[j - 1] = u;
				d->lscript[j - 1] = w;
			}
		if (d->via_line)
			add_step(
			    e, &st, d->via_fi, d->via_line,
			    scan_host_fmt(s,
			                  "the parsed namespace is passed whole here, as keyword "
			                  "arguments: its %s is the parameter %s",
			                  d->name, d->name));
		for (int i = 0; i < d->nlive; i++) {
			const char *r, *m;
			int t;
			scan_host_file(s, d->lfi[i], &r, &m, &t);
			(void)r;
			add_step(e, &st, d->lfi[i], d->lline[i],
			         scan_host_fmt(s, "%s read here", d->name));
		}
		const char *rr, *mm;
		int tt;
		scan_host_file(s, d->lfi[0], &rr, &mm, &tt);
		why = scan_host_fmt(s, "engine argument read at %s:%d", rr, d->lline[0]);
		if (d->how == ARG_ARGPARSE &&
		    (place == SCAN_ENV_R_UNKNOWN || place == SCAN_ENV_R_NONE)) {
			v = SCAN_UNKNOWN;
			why = scan_host_fmt(
			    s, "read at %s:%d, but defined in a function nothing names", rr,
			    d->lline[0]);
		}
	} else {
		const muh_knob *fk = d->how <= ARG_CLICK ? field_named(e, nfields, d->name) : NULL;
		int dl = 0, dfi = -1;
		const char *dwhat = NULL;
		if (fk) {
			v = SCAN_LIVE;
			why = scan_host_fmt(
			    s, "copied by name into the engine-argument field %s (%s:%d)",
			    fk->scope, fk->file, fk->line);
			if (st.n < 8) {
				st.st[st.n].file = fk->file;
				st.st[st.n].line = fk->line;
				st.st[st.n].note =
				    scan_host_fmt(s, "field %s.%s of the same name: %s", fk->scope,
				                  fk->name, fk->why);
				st.n++;
			}
		} else if (d->cls == SCAN_ENV_R_UNKNOWN || d->cls == SCAN_ENV_R_PLATFORM) {
			read_only_by_class(e, &st, d, &v, &why);
		} else if ((d->how > ARG_CLICK && (dl = self_dyn(pf, d->scope, &dwhat)) > 0 &&
		            (dfi = d->fi) >= 0) ||
		           (dfi = dyn_site(e, d->fi, d->how <= ARG_CLICK ? 1 : 3, &dl, &dwhat)) >=
		               0) {
			v = SCAN_UNKNOWN;
			const char *r, *m;
			int t;
			scan_host_file(s, dfi, &r, &m, &t);
			why = scan_host_fmt(
			    s,
			    "not read by name; %s:%d reads a namespace or instance as a whole (%s)",
			    r, dl, dwhat);
			add_step(
			    e, &st, dfi, dl,
			    scan_host_fmt(s, "%s: every field could be read from here", dwhat));
		} else if (d->cls == SCAN_ENV_R_TEST || d->cls == SCAN_ENV_R_UNREACH) {
			read_only_by_class(e, &st, d, &v, &why);
		} else {
			v = SCAN_DEAD;
			why = scan_host_fmt(s, "defined at %s:%d, read nowhere in the tree", rel,
			                    dline);
			add_step(e, &st, d->fi, dline,
			         scan_host_fmt(
			             s, "no .%s, [\"%s\"] or getattr(..., \"%s\") in any module",
			             d->name, d->name, d->name));
		}
	}
	int cfi = -1, cline = 0;
	if (d->how > ARG_CLICK && !d->implicit && (v == SCAN_LIVE || v == SCAN_UNKNOWN) &&
	    !scan_host_library(s) && default_never_used(e, d, &st, &cfi, &cline)) {
		const char *r2, *m2;
		int t2;
		scan_host_file(s, cfi, &r2, &m2, &t2);
		v = SCAN_DEAD;
		why = scan_host_fmt(
		    s,
		    "every construction of %s passes %s (first at %s:%d): the default is "
		    "never used",
		    pf->scopes[d->scope].name, d->name, r2, cline);
	}
	muh_knob *o = scan_host_push_knob(s);
	if (!o) {
		e->oom = 1;
		return;
	}
	o->file = rel;
	o->name = d->name;
	o->kind = "engine_arg";
	o->scope = d->scope >= 0 ? pf->scopes[d->scope].qual : "<module>";
	o->line = d->line;
	o->col = d->col;
	o->end_line = d->end_line;
	o->end_col = d->end_col;
	o->start = d->start;
	o->end = d->end;
	o->value = d->value;
	o->eval = d->eval;
	o->file_hash = pf->hash;
	o->verdict = v;
	o->why = why;
	scan_step *ev = scan_host_alloc(s, sizeof(scan_step) * (size_t)st.n);
	if (ev) {
		memcpy(ev, st.st, sizeof(scan_step) * (size_t)st.n);
		o->evidence = ev;
		o->nevidence = st.n;
	}
	if (d->how <= ARG_CLICK)
		apply_accepted(e, o, d, rel);
	size_t oi = (size_t)(o - scan_host_knob(s, 0));
	int occ = 0;
	for (size_t i = kx_first(e, o->name); i != KX_NONE && i < oi; i = e->kx_next[i]) {
		const muh_knob *k = scan_host_knob(s, i);
		occ += !strcmp(k->file, o->file) && !strcmp(k->scope, o->scope) &&
		       !strcmp(k->name, o->name) && !strcmp(k->kind, o->kind);
	}
	kx_add(e, oi);
	scan_host_knob_id(s, o->file, o->scope, o->name, o->kind, occ, o->id);
}

int scan_args_resolve(muh_surface *s)
{
	argctx e = {0};
	e.s = s;
	int nf = scan_host_nfiles(s);
	/* the parse workers' per-file definitions (test files' only with
	 * --with-tests), in file order */
	for (int fi = 0; fi < nf && !e.oom; fi++) {
		const scan_args_part *p = scan_host_args_part(s, fi);
		if (p && scan_host_append(&e.defs, &e.ndefs, &e.cap, p->e.defs, p->e.ndefs,
		                          sizeof(arg_def), offsetof(arg_def, fi), fi))
			e.oom = 1;
	}
	if (!e.ndefs || e.oom) {
		free(e.defs);
		return e.oom ? -1 : 0;
	}
	arg_def **idx = malloc(sizeof(*idx) * e.ndefs);
	e.nf = nf;
	e.dyn_line = calloc(2 * (size_t)nf + 1, sizeof(int));
	e.dyn_what = calloc(2 * (size_t)nf + 1, sizeof(char *));
	if (!idx || !e.dyn_line || !e.dyn_what) {
		free(idx);
		free(e.dyn_line);
		free(e.dyn_what);
		free(e.defs);
		return -1;
	}
	for (size_t i = 0; i < e.ndefs; i++) {
		idx[i] = &e.defs[i];
		sig_add(e.def_sigs, e.defs[i].name);
	}
	qsort(idx, e.ndefs, sizeof(*idx), cmp_def_name);
	collect_reads(&e, idx, e.ndefs);
	namespace_splat_reads(&e, idx, e.ndefs);
	for (size_t i = 0; i < e.ndefs; i++)
		if (e.defs[i].how == ARG_CLICK)
			click_reads(&e, &e.defs[i]);
	if (!scan_host_library(s) && constructions_of(&e))
		e.oom = 1;
	size_t nold = 0;
	while (scan_host_knob(s, nold))
		nold++;
	if (!e.oom && knobs_index(&e, nold, e.ndefs)) /* emit_def adds at most one each */
		e.oom = 1;
	/* class fields first, so that a CLI argument can take a field's verdict */
	size_t nfields = nold;
	for (int pass = 0; pass < 2 && !e.oom; pass++) {
		for (size_t i = 0; i < e.ndefs && !e.oom; i++)
			if ((e.defs[i].how > ARG_CLICK) == !pass)
				emit_def(&e, &e.defs[i], nold, nfields);
		while (scan_host_knob(s, nfields))
			nfields++;
	}
	free(idx);
	free(e.kx_head);
	free(e.kx_tail);
	free(e.kx_next);
	free(e.dyn_line);
	free(e.dyn_what);
	for (size_t k = 0; k < e.nclasses; k++) {
		free(e.classes[k].cfi);
		free(e.classes[k].cci);
	}
	free(e.classes);
	free(e.defs);
	return e.oom ? -1 : 0;
}
