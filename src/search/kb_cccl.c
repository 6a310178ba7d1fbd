/*
 * kb_cccl.c — CUB's tuning policies read from the installed CCCL headers,
 * and seeds made from them (include/muh/kb.h, docs/kb.md).
 *
 * Owns: finding cub/device/dispatch/tuning, a lexical reader of its
 * tuning_*.cuh files (comments and preprocessor lines blanked, tokens, a
 * brace stack that knows which braces open a struct), and the mapping of
 * policy fields onto a spec's params. Never compiles C++, never prints,
 * never exits; a header it cannot make sense of yields fewer policies, not
 * an error.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "muh/fileio.h"
#include "muh/kb.h"
#include "muh/muh.h"
#include "strbuf.h"

/* ------------------------------------------------------------ finding */

static int is_dir(const char *p)
{
	struct stat st;
	return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

static int try_root(const char *root, char *dir, size_t n)
{
	static const char *const tails[] = {"", "/cub/device/dispatch/tuning", "/include/cccl/cub/device/dispatch/tuning",
					    "/include/cub/device/dispatch/tuning", "/cccl/cub/device/dispatch/tuning",
					    "/device/dispatch/tuning", NULL};
	char p[2048];
	for (int i = 0; tails[i]; i++) {
		snprintf(p, sizeof(p), "%s%s", root, tails[i]);
		size_t l = strlen(p);
		if (l >= 7 && !strcmp(p + l - 7, "/tuning") && is_dir(p)) {
			snprintf(dir, n, "%s", p);
			return 1;
		}
	}
	return 0;
}

int kb_cccl_find(const char *hint, char *dir, size_t n, muh_diag *d)
{
	if (hint) {
		if (try_root(hint, dir, n))
			return MUH_OK;
		diag_errorf(d, "no CCCL tuning headers (cub/device/dispatch/tuning/tuning_*.cuh) under '%s'", hint);
		return MUH_EENV;
	}
	const char *env[] = {getenv("CUDA_HOME"), getenv("CUDA_PATH"), "/usr/local/cuda", "/usr/include", "/usr", NULL};
	for (int i = 0; i < 5; i++)
		if (env[i] && env[i][0] && try_root(env[i], dir, n))
			return MUH_OK;
	diag_errorf(d, "no CCCL headers found (looked for cub/device/dispatch/tuning under $CUDA_HOME, $CUDA_PATH, "
		       "/usr/local/cuda, /usr/include; directly and under include/cccl); install the CUDA toolkit "
		       "or CCCL, or give the path");
	return MUH_EENV;
}

/* ------------------------------------------------------------ lexing */

enum tok_kind { T_ID, T_NUM, T_PUNCT };

typedef struct tok {
	enum tok_kind kind;
	const char *s;
	int len;
	int line;
} tok;

typedef struct lexed {
	char *buf; /* the text with comments and preprocessor lines blanked */
	tok *t;
	size_t n, cap;
} lexed;

/* Blanks comments, string/char literals and preprocessor lines, keeping
 * newlines so that lines still count. */
static void blank(char *b, size_t len)
{
	size_t i = 0;
	int bol = 1;
	while (i < len) {
		char c = b[i];
		if (c == '\n') {
			bol = 1;
			i++;
			continue;
		}
		if (bol && (c == ' ' || c == '\t')) {
			i++;
			continue;
		}
		if (bol && c == '#') { /* a directive, with continuations */
			while (i < len && b[i] != '\n') {
				if (b[i] == '\\' && i + 1 < len && b[i + 1] == '\n') {
					b[i] = ' ';
					i += 2;
					continue;
				}
				b[i++] = ' ';
			}
			continue;
		}
		bol = 0;
		if (c == '/' && i + 1 < len && b[i + 1] == '/') {
			while (i < len && b[i] != '\n')
				b[i++] = ' ';
			continue;
		}
		if (c == '/' && i + 1 < len && b[i + 1] == '*') {
			b[i++] = ' ';
			b[i++] = ' ';
			while (i < len && !(b[i] == '*' && i + 1 < len && b[i + 1] == '/')) {
				if (b[i] != '\n')
					b[i] = ' ';
				i++;
			}
			if (i < len)
				b[i++] = ' ';
			if (i < len)
				b[i++] = ' ';
			continue;
		}
		if (c == '"' || c == '\'') {
			b[i++] = ' ';
			while (i < len && b[i] != c && b[i] != '\n') {
				if (b[i] == '\\' && i + 1 < len)
					b[i++] = ' ';
				b[i++] = ' ';
			}
			if (i < len && b[i] == c)
				b[i++] = ' ';
			continue;
		}
		i++;
	}
}

static int push_tok(lexed *L, enum tok_kind k, const char *s, int len, int line)
{
	if (array_grow(&L->t, &L->cap, L->n, sizeof(tok), 1024))
		return MUH_ENOMEM;
	L->t[L->n++] = (tok){k, s, len, line};
	return MUH_OK;
}

static int lex(const char *text, size_t len, lexed *L)
{
	memset(L, 0, sizeof(*L));
	L->buf = malloc(len + 1);
	if (!L->buf)
		return MUH_ENOMEM;
	memcpy(L->buf, text, len);
	L->buf[len] = '\0';
	blank(L->buf, len);
	const char *b = L->buf;
	int line = 1;
	for (size_t i = 0; i < len;) {
		char c = b[i];
		if (c == '\n') {
			line++;
			i++;
		} else if (isspace((unsigned char)c) || c == '\0') {
			i++;
		} else if (isalpha((unsigned char)c) || c == '_') {
			size_t j = i;
			while (j < len && (isalnum((unsigned char)b[j]) || b[j] == '_'))
				j++;
			if (push_tok(L, T_ID, b + i, (int)(j - i), line))
				return MUH_ENOMEM;
			i = j;
		} else if (isdigit((unsigned char)c)) {
			size_t j = i;
			while (j < len && (isalnum((unsigned char)b[j]) || b[j] == '.' || b[j] == '\''))
				j++;
			if (push_tok(L, T_NUM, b + i, (int)(j - i), line))
				return MUH_ENOMEM;
			i = j;
		} else if (c == ':' && i + 1 < len && b[i + 1] == ':') {
			if (push_tok(L, T_PUNCT, b + i, 2, line))
				return MUH_ENOMEM;
			i += 2;
		} else {
			if (push_tok(L, T_PUNCT, b + i, 1, line))
				return MUH_ENOMEM;
			i++;
		}
	}
	return MUH_OK;
}

static void lexed_free(lexed *L)
{
	free(L->buf);
	free(L->t);
}

static int is(const tok *t, const char *s)
{
	return (int)strlen(s) == t->len && !strncmp(t->s, s, (size_t)t->len);
}

static void tok_copy(const tok *t, char *out, size_t n)
{
	snprintf(out, n, "%.*s", t->len, t->s);
}

/* Text of tokens [a, b), single-spaced between identifiers, into out. */
static void span_text(const tok *t, size_t a, size_t b, char *out, size_t n)
{
	size_t o = 0;
	out[0] = '\0';
	for (size_t i = a; i < b && o + 1 < n; i++) {
		int sp = i > a && t[i].kind != T_PUNCT && t[i - 1].kind != T_PUNCT;
		int w = snprintf(out + o, n - o, "%s%.*s", sp ? " " : (i > a && is(&t[i - 1], ",") ? " " : ""),
				 t[i].len, t[i].s);
		if (w < 0)
			break;
		o += (size_t)w;
		if (o >= n)
			o = n - 1;
	}
}

/* ------------------------------------------------------------ scopes */

#define MAX_CONST 64
#define MAX_TPARAMS 16

typedef struct konst {
	char name[KB_NAME];
	int has_num;
	long long num;
	char word[KB_NAME]; /* an enum name (last component) when not a number */
	int used_by_agent;
} konst;

typedef struct scope {
	int is_struct;
	char name[KB_NAME];
	char variant[KB_TEXT];
	int cc;
	int line;
	int nagents;
	konst k[MAX_CONST];
	int nk;
	int ntp;                   /* template parameters of the struct, in order */
	char tp[MAX_TPARAMS][KB_NAME];
} scope;

/* A struct template whose constants are its template parameters
 * (sm90_tuning_vals<T, int Threads, int Items> { threads = Threads; ... }):
 * structs deriving from it take their values from the base's arguments. */
typedef struct vals_tmpl {
	char name[KB_NAME];
	int ntp;
	char tp[MAX_TPARAMS][KB_NAME];
	int nk;
	konst k[MAX_CONST];
} vals_tmpl;

#define MAX_DEPTH 64
#define MAX_VALS_TMPL 32

/* Last identifier of a qualified name at [a, b): cub::LOAD_LDG -> LOAD_LDG. */
static const tok *last_id(const tok *t, size_t a, size_t b)
{
	const tok *r = NULL;
	for (size_t i = a; i < b; i++)
		if (t[i].kind == T_ID)
			r = &t[i];
		else if (!is(&t[i], "::"))
			return NULL;
	return r;
}

static int parse_num(const tok *t, long long *v)
{
	char buf[32], *end;
	if (t->kind != T_NUM || t->len >= (int)sizeof(buf))
		return 0;
	tok_copy(t, buf, sizeof(buf));
	errno = 0;
	long long x = strtoll(buf, &end, 0);
	while (*end == 'u' || *end == 'U' || *end == 'l' || *end == 'L')
		end++;
	if (errno || *end)
		return 0;
	*v = x;
	return 1;
}

/* Classifies an enum name into the policy field it sets; NULL if none. */
static char *enum_field(kb_policy *p, const char *w)
{
	if (!strncmp(w, "BLOCK_LOAD_", 11))
		return p->load_algorithm;
	if (!strncmp(w, "BLOCK_STORE_", 12))
		return p->store_algorithm;
	if (!strncmp(w, "LOAD_", 5))
		return p->load_modifier;
	if (!strncmp(w, "BLOCK_REDUCE_", 13) || !strncmp(w, "BLOCK_SCAN_", 11) || !strncmp(w, "BLOCK_HISTO_", 12) ||
	    !strncmp(w, "RADIX_RANK_", 11) || !strncmp(w, "BLOCK_HISTOGRAM_", 16))
		return p->block_algorithm;
	return NULL;
}

static int name_has(const char *name, const char *part)
{
	char low[KB_NAME];
	size_t i = 0;
	for (; name[i] && i + 1 < sizeof(low); i++)
		low[i] = (char)tolower((unsigned char)name[i]);
	low[i] = '\0';
	return strstr(low, part) != NULL;
}

static const konst *find_const(scope *st, int depth, const char *name)
{
	for (int s = depth; s >= 0; s--)
		for (int i = 0; i < st[s].nk; i++)
			if (!strcmp(st[s].k[i].name, name))
				return &st[s].k[i];
	return NULL;
}

static int add_policy(kb_cccl *kb, kb_policy **out)
{
	if (array_grow(&kb->v, &kb->cap, kb->n, sizeof(kb_policy), 64))
		return MUH_ENOMEM;
	*out = &kb->v[kb->n++];
	memset(*out, 0, sizeof(**out));
	(*out)->threads = (*out)->items_per_thread = (*out)->vector_load_length = -1;
	return MUH_OK;
}

/* The innermost struct scope at or below depth, with its cc and name. */
static void fill_origin(kb_policy *p, scope *st, int depth, const char *algorithm, const char *file, int line)
{
	snprintf(p->algorithm, sizeof(p->algorithm), "%s", algorithm);
	snprintf(p->file, sizeof(p->file), "%s", file);
	p->line = line;
	for (int s = depth; s >= 0; s--)
		if (st[s].is_struct) {
			if (!p->policy[0]) {
				snprintf(p->policy, sizeof(p->policy), "%s", st[s].name);
				snprintf(p->variant, sizeof(p->variant), "%s", st[s].variant);
			}
			if (st[s].cc) {
				p->cc = st[s].cc;
				break;
			}
		}
}

/* using NAME = Agent...Policy<args>; at tokens [a, end): records a policy. */
static int agent_policy(kb_cccl *kb, const tok *t, size_t a, size_t end, const char *name, scope *st, int depth,
			const char *algorithm, const char *file)
{
	/* a is the Agent...Policy identifier, a+1 is '<' */
	size_t args[24][2];
	int nargs = 0, nest = 0;
	size_t start = a + 2;
	for (size_t i = a + 2; i < end; i++) {
		if (is(&t[i], "<") || is(&t[i], "(") || is(&t[i], "["))
			nest++;
		else if (is(&t[i], ">") || is(&t[i], ")") || is(&t[i], "]")) {
			if (nest == 0) {
				if (nargs < 24 && i > start)
					args[nargs][0] = start, args[nargs++][1] = i;
				break;
			}
			nest--;
		} else if (is(&t[i], ",") && nest == 0) {
			if (nargs < 24)
				args[nargs][0] = start, args[nargs++][1] = i;
			start = i + 1;
		}
	}
	kb_policy *p;
	if (add_policy(kb, &p))
		return MUH_ENOMEM;
	snprintf(p->agent, sizeof(p->agent), "%s", name);
	fill_origin(p, st, depth, algorithm, file, t[a].line);
	int npos = 0; /* numeric args seen, for threads/items by position */
	int is_reduce_agent = is(&t[a], "AgentReducePolicy");
	for (int j = 0; j < nargs; j++) {
		size_t x = args[j][0], y = args[j][1];
		long long v;
		int has = 0;
		const char *word = NULL;
		const char *cname = NULL;
		char wbuf[KB_NAME];
		if (y == x + 1 && parse_num(&t[x], &v)) {
			has = 1;
		} else {
			const tok *id = last_id(t, x, y);
			if (id) {
				tok_copy(id, wbuf, sizeof(wbuf));
				/* a member of this struct (or an enclosing one), unqualified only */
				const konst *k = (y == x + 1) ? find_const(st, depth, wbuf) : NULL;
				if (k) {
					cname = k->name;
					if (k->has_num)
						has = 1, v = k->num;
					else if (k->word[0])
						word = k->word;
				} else if (enum_field(p, wbuf)) {
					word = wbuf;
				}
			}
		}
		if (word) {
			char *f = enum_field(p, word);
			if (f)
				snprintf(f, KB_NAME, "%s", word);
			continue;
		}
		/* a value that is a type (AccumT) or unresolved keeps its place:
		 * threads and items are the first two args of every CUB agent policy */
		if (cname && name_has(cname, "vec")) {
			if (has)
				p->vector_load_length = (int)v;
			continue;
		}
		if (j == 0 && has)
			p->threads = (int)v;
		else if (j == 1 && has)
			p->items_per_thread = (int)v;
		else if (j == 3 && is_reduce_agent && has)
			p->vector_load_length = (int)v;
		if (has)
			npos++;
	}
	(void)npos;
	st[depth].nagents++;
	return MUH_OK;
}

/* static constexpr TYPE NAME = VALUE; at [a, end): remembers NAME. */
static void constant(const tok *t, size_t a, size_t end, scope *sc)
{
	size_t eq = 0;
	for (size_t i = a; i < end; i++)
		if (is(&t[i], "=")) {
			eq = i;
			break;
		}
	if (!eq || eq == a || t[eq - 1].kind != T_ID || sc->nk >= MAX_CONST)
		return;
	konst *k = &sc->k[sc->nk];
	memset(k, 0, sizeof(*k));
	tok_copy(&t[eq - 1], k->name, sizeof(k->name));
	if (end == eq + 2 && parse_num(&t[eq + 1], &k->num)) {
		k->has_num = 1;
	} else {
		const tok *id = last_id(t, eq + 1, end);
		if (!id)
			return;
		tok_copy(id, k->word, sizeof(k->word));
	}
	sc->nk++;
}

/* A tuning struct with no agent of its own (smNN_tuning): a policy from its
 * named constants, if it has threads or items. */
static int struct_policy(kb_cccl *kb, scope *st, int depth, const char *algorithm, const char *file)
{
	scope *sc = &st[depth];
	int threads = -1, items = -1, vec = -1;
	const char *words[MAX_CONST];
	int nw = 0;
	for (int i = 0; i < sc->nk; i++) {
		const konst *k = &sc->k[i];
		if (!k->has_num) {
			if (k->word[0])
				words[nw++] = k->word;
			continue;
		}
		if (name_has(k->name, "vec"))
			vec = (int)k->num;
		else if (name_has(k->name, "thread") && !name_has(k->name, "items"))
			threads = (int)k->num;
		else if (name_has(k->name, "items") || !strcmp(k->name, "ITEMS"))
			items = (int)k->num;
	}
	if (threads < 0 && items < 0)
		return MUH_OK;
	kb_policy *p;
	if (add_policy(kb, &p))
		return MUH_ENOMEM;
	fill_origin(p, st, depth, algorithm, file, sc->line);
	p->threads = threads;
	p->items_per_thread = items;
	p->vector_load_length = vec;
	for (int i = 0; i < nw; i++) {
		char *f = enum_field(p, words[i]);
		if (f)
			snprintf(f, KB_NAME, "%s", words[i]);
	}
	return MUH_OK;
}

/* cc from a struct header: ChainedPolicy<NNN, ...> gives NNN/10; a name
 * smNN_... or smNN gives NN. */
static int header_cc(const tok *t, size_t a, size_t b, const char *name)
{
	for (size_t i = a; i + 2 < b; i++)
		if (is(&t[i], "ChainedPolicy") && is(&t[i + 1], "<")) {
			long long v;
			if (parse_num(&t[i + 2], &v) && v >= 100)
				return (int)(v / 10);
		}
	if (!strncmp(name, "sm", 2) && isdigit((unsigned char)name[2]))
		return atoi(name + 2);
	const char *p = strstr(name, "_sm");
	if (p && isdigit((unsigned char)p[3]))
		return atoi(p + 3);
	return 0;
}

/* Calls each(ctx, t, s, e) for every argument [s, e) of the bracketed
 * list that opens at token open (a `<`), in order: the arguments are split
 * at the commas outside inner `<...>` and `(...)`, and the list ends at its
 * closing bracket. An argument that no comma or bracket before b ends is
 * not visited. */
static void each_bracket_arg(const tok *t, size_t open, size_t b,
			     void (*each)(void *ctx, const tok *t, size_t s, size_t e), void *ctx)
{
	int nest = 0;
	size_t start = open + 1;
	for (size_t k = open; k < b; k++) {
		if (is(&t[k], "<") || is(&t[k], "(")) {
			nest++;
			continue;
		}
		int close = is(&t[k], ">") || is(&t[k], ")");
		if ((close || is(&t[k], ",")) && nest == 1) {
			each(ctx, t, start, k);
			start = k + 1;
			if (close)
				return;
			continue;
		}
		if (close)
			nest--;
	}
}

/* each_bracket_arg callback of template_params: the parameter's name (the
 * last identifier outside inner brackets, before any default `= ...`) into
 * the scope ctx's tp. */
static void add_template_param(void *ctx, const tok *t, size_t s, size_t e)
{
	scope *sc = ctx;
	int nest = 0, in_default = 0;
	const tok *last = NULL;
	for (size_t i = s; i < e; i++) {
		if (is(&t[i], "<") || is(&t[i], "("))
			nest++;
		else if (is(&t[i], ">") || is(&t[i], ")"))
			nest--;
		else if (nest == 0 && is(&t[i], "="))
			in_default = 1;
		else if (nest == 0 && !in_default && t[i].kind == T_ID)
			last = &t[i];
	}
	if (last && sc->ntp < MAX_TPARAMS)
		tok_copy(last, sc->tp[sc->ntp++], KB_NAME);
}

/* Template parameter names of `template <...>` at tokens [a, b) (a is
 * `template`), into sc->tp. */
static void template_params(const tok *t, size_t a, size_t b, scope *sc)
{
	if (a + 1 >= b || !is(&t[a + 1], "<"))
		return;
	each_bracket_arg(t, a + 1, b, add_template_param, sc);
}

/* A template's arguments as token ranges (vals_inherit). */
struct arg_spans {
	size_t at[MAX_TPARAMS][2];
	int n;
};

/* each_bracket_arg callback of vals_inherit: keeps [s, e) in the
 * arg_spans ctx (the first MAX_TPARAMS). */
static void add_arg_span(void *ctx, const tok *t, size_t s, size_t e)
{
	struct arg_spans *a = ctx;
	(void)t;
	if (a->n < MAX_TPARAMS)
		a->at[a->n][0] = s, a->at[a->n++][1] = e;
}

/* Registers scope sc as a vals template if a constant of it is one of its
 * template parameters. */
static void vals_register(const scope *sc, vals_tmpl *vt, int *nvt)
{
	if (!sc->ntp || *nvt >= MAX_VALS_TMPL)
		return;
	int uses = 0;
	for (int i = 0; i < sc->nk && !uses; i++)
		for (int j = 0; j < sc->ntp; j++)
			uses |= !sc->k[i].has_num && !strcmp(sc->k[i].word, sc->tp[j]);
	if (!uses)
		return;
	vals_tmpl *v = &vt[(*nvt)++];
	snprintf(v->name, sizeof(v->name), "%s", sc->name);
	v->ntp = sc->ntp;
	memcpy(v->tp, sc->tp, sizeof(v->tp));
	v->nk = sc->nk;
	memcpy(v->k, sc->k, sizeof(v->k));
}

/* For a struct whose base list [a, b) names a vals template with arguments,
 * copies that template's constants into sc, each template parameter
 * replaced by its argument. */
static void vals_inherit(const tok *t, size_t a, size_t b, scope *sc, const vals_tmpl *vt, int nvt)
{
	for (size_t i = a; i + 1 < b; i++) {
		if (t[i].kind != T_ID || !is(&t[i + 1], "<"))
			continue;
		const vals_tmpl *v = NULL;
		for (int j = 0; j < nvt && !v; j++)
			if (is(&t[i], vt[j].name))
				v = &vt[j];
		if (!v)
			continue;
		struct arg_spans as = {.n = 0};
		each_bracket_arg(t, i + 1, b, add_arg_span, &as);
		size_t (*arg)[2] = as.at;
		int na = as.n;
		for (int c = 0; c < v->nk && sc->nk < MAX_CONST; c++) {
			konst k = v->k[c];
			for (int j = 0; j < v->ntp && j < na; j++)
				if (!k.has_num && !strcmp(k.word, v->tp[j])) {
					k.word[0] = '\0';
					if (arg[j][1] == arg[j][0] + 1 && parse_num(&t[arg[j][0]], &k.num))
						k.has_num = 1;
					else if (last_id(t, arg[j][0], arg[j][1]))
						tok_copy(last_id(t, arg[j][0], arg[j][1]), k.word, sizeof(k.word));
				}
			sc->k[sc->nk++] = k;
		}
		return;
	}
}

int kb_cccl_parse(const char *text, size_t len, const char *algorithm, const char *file, kb_cccl *kb)
{
	lexed L;
	if (lex(text, len, &L)) {
		lexed_free(&L);
		return MUH_ENOMEM;
	}
	scope *st = calloc(MAX_DEPTH, sizeof(scope));
	if (!st) {
		lexed_free(&L);
		return MUH_ENOMEM;
	}
	vals_tmpl *vt = calloc(MAX_VALS_TMPL, sizeof(vals_tmpl));
	if (!vt) {
		free(st);
		lexed_free(&L);
		return MUH_ENOMEM;
	}
	int nvt = 0;
	const tok *t = L.t;
	int depth = 0, overflow = 0, rc = MUH_OK;
	size_t stmt = 0; /* first token of the current statement */
	for (size_t i = 0; i < L.n && rc == MUH_OK; i++) {
		if (is(&t[i], "{")) {
			/* does it open a struct? look back over the statement */
			size_t kw = SIZE_MAX;
			int angle = 0; /* skip template <class T, ...> parameter lists */
			for (size_t j = stmt; j < i; j++) {
				if (is(&t[j], "<"))
					angle++;
				else if (is(&t[j], ">") && angle > 0)
					angle--;
				else if (angle == 0 && (is(&t[j], "struct") || is(&t[j], "class")) &&
					 !(j > 0 && is(&t[j - 1], "enum")) && j + 1 < i && t[j + 1].kind == T_ID) {
					kw = j;
					break;
				}
			}
			if (depth + 1 >= MAX_DEPTH) {
				overflow++;
			} else {
				scope *sc = &st[++depth];
				memset(sc, 0, sizeof(*sc));
				if (kw != SIZE_MAX) {
					sc->is_struct = 1;
					sc->line = t[kw].line;
					tok_copy(&t[kw + 1], sc->name, sizeof(sc->name));
					size_t k = kw + 2;
					if (k < i && is(&t[k], "<")) {
						int nest = 0;
						size_t e = k;
						for (; e < i; e++) {
							if (is(&t[e], "<"))
								nest++;
							else if (is(&t[e], ">") && --nest == 0)
								break;
						}
						span_text(t, k + 1, e < i ? e : i, sc->variant, sizeof(sc->variant));
						k = e + 1;
					}
					sc->cc = header_cc(t, kw, i, sc->name);
					if (is(&t[stmt], "template"))
						template_params(t, stmt, kw, sc);
					if (k < i && is(&t[k], ":"))
						vals_inherit(t, k + 1, i, sc, vt, nvt);
				}
			}
			stmt = i + 1;
			continue;
		}
		if (is(&t[i], "}")) {
			if (overflow) {
				overflow--;
			} else if (depth > 0) {
				if (st[depth].is_struct)
					vals_register(&st[depth], vt, &nvt);
				if (st[depth].is_struct && st[depth].nagents == 0)
					rc = struct_policy(kb, st, depth, algorithm, file);
				depth--;
			}
			stmt = i + 1;
			continue;
		}
		if (!is(&t[i], ";"))
			continue;
		/* a statement [stmt, i) directly inside a struct */
		if (depth > 0 && st[depth].is_struct && !overflow && i > stmt) {
			size_t a = stmt;
			if (is(&t[a], "static") && a + 1 < i && is(&t[a + 1], "constexpr"))
				constant(t, a + 2, i, &st[depth]);
			else if (is(&t[a], "using") && a + 3 < i && t[a + 1].kind == T_ID && is(&t[a + 2], "=")) {
				/* using NAME = [cub::]Agent...Policy<...> */
				size_t x = a + 3;
				while (x + 1 < i && (t[x].kind == T_ID && is(&t[x + 1], "::")))
					x += 2;
				if (x + 1 < i && t[x].kind == T_ID && t[x].len > 11 && !strncmp(t[x].s, "Agent", 5) &&
				    !strncmp(t[x].s + t[x].len - 6, "Policy", 6) && is(&t[x + 1], "<")) {
					char name[KB_NAME];
					tok_copy(&t[a + 1], name, sizeof(name));
					rc = agent_policy(kb, t, x, i, name, st, depth, algorithm, file);
				}
			}
		}
		stmt = i + 1;
	}
	free(vt);
	free(st);
	lexed_free(&L);
	return rc;
}

/* ------------------------------------------------------------ reading */

/* algorithm name of a header: tuning_reduce.cuh -> reduce */
static int header_algorithm(const char *base, char *alg, size_t n)
{
	size_t l = strlen(base);
	if (strncmp(base, "tuning_", 7) || l < 7 + 4 + 1 || strcmp(base + l - 4, ".cuh"))
		return 0;
	snprintf(alg, n, "%.*s", (int)(l - 7 - 4), base + 7);
	return 1;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Reads and parses one header into kb; a file that cannot be read is an
 * error in d (MUH_EENV), memory running out is MUH_ENOMEM without one. */
static int read_one(const char *path, const char *base, const char *alg, kb_cccl *kb, muh_diag *d)
{
	size_t len;
	char *text = file_read(path, &len);
	if (!text) {
		if (errno == ENOMEM)
			return MUH_ENOMEM;
		diag_errorf(d, "cannot read %s: %s", path, strerror(errno));
		return MUH_EENV;
	}
	int rc = kb_cccl_parse(text, len, alg, base, kb);
	free(text);
	kb->nfiles++;
	return rc;
}

int kb_cccl_read(const char *path, kb_cccl *kb, muh_diag *d)
{
	struct stat st;
	if (stat(path, &st) != 0) {
		diag_errorf(d, "cannot read %s: %s", path, strerror(errno));
		return MUH_EENV;
	}
	if (!S_ISDIR(st.st_mode)) {
		const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
		char alg[KB_NAME];
		if (!header_algorithm(base, alg, sizeof(alg)))
			snprintf(alg, sizeof(alg), "%s", base);
		return read_one(path, base, alg, kb, d);
	}
	snprintf(kb->dir, sizeof(kb->dir), "%s", path);
	DIR *dir = opendir(path);
	if (!dir) {
		diag_errorf(d, "cannot read %s: %s", path, strerror(errno));
		return MUH_EENV;
	}
	char **names = NULL;
	size_t nn = 0, cap = 0;
	int rc = MUH_OK;
	struct dirent *e;
	while ((e = readdir(dir))) {
		char alg[KB_NAME];
		if (!header_algorithm(e->d_name, alg, sizeof(alg)))
			continue;
		if (nn == cap) {
			cap = cap ? cap * 2 : 32;
			char **nv = realloc(names, cap * sizeof(char *));
			if (!nv) {
				rc = MUH_ENOMEM;
				break;
			}
			names = nv;
		}
		if (!(names[nn] = strdup(e->d_name))) {
			rc = MUH_ENOMEM;
			break;
		}
		nn++;
	}
	closedir(dir);
	if (rc == MUH_OK && nn == 0) {
		diag_errorf(d, "no tuning_*.cuh headers in %s", path);
		rc = MUH_EENV;
	}
	if (rc == MUH_OK)
		qsort(names, nn, sizeof(char *), cmp_str);
	for (size_t i = 0; i < nn && rc == MUH_OK; i++) {
		char full[2048], alg[KB_NAME];
		snprintf(full, sizeof(full), "%s/%s", path, names[i]);
		header_algorithm(names[i], alg, sizeof(alg));
		rc = read_one(full, names[i], alg, kb, d);
	}
	for (size_t i = 0; i < nn; i++)
		free(names[i]);
	free(names);
	return rc;
}

void kb_cccl_free(kb_cccl *kb)
{
	if (!kb)
		return;
	free(kb->v);
	memset(kb, 0, sizeof(*kb));
}

/* ------------------------------------------------------------ selection */

const kb_policy *kb_cccl_select(const kb_cccl *kb, const char *algorithm, const char *agent, int cc)
{
	const kb_policy *best = NULL;
	for (size_t i = 0; i < kb->n; i++) {
		const kb_policy *p = &kb->v[i];
		if (strcmp(p->algorithm, algorithm) || p->variant[0] || p->threads < 0 || !p->agent[0])
			continue;
		if (agent && strcmp(p->agent, agent))
			continue;
		if (p->cc > cc || p->cc == 0)
			continue;
		if (!best || p->cc > best->cc)
			best = p;
	}
	return best;
}

int kb_cccl_applies(const kb_cccl *kb, const kb_policy *p, int cc)
{
	if (!p->variant[0] && p->agent[0])
		return kb_cccl_select(kb, p->algorithm, p->agent, cc) == p;
	if (p->cc == 0 || p->cc > cc)
		return 0;
	for (size_t i = 0; i < kb->n; i++) {
		const kb_policy *q = &kb->v[i];
		if (!strcmp(q->algorithm, p->algorithm) && (q->variant[0] || !q->agent[0]) && q->cc > p->cc &&
		    q->cc <= cc)
			return 0;
	}
	return 1;
}

/* ------------------------------------------------------------ seeds */

enum field { F_THREADS, F_ITEMS, F_VEC, F_LOAD_MOD, F_LOAD_ALG, F_STORE_ALG, F_BLOCK_ALG, F_NONE };

static enum field field_of(const char *name)
{
	static const struct {
		const char *name;
		enum field f;
	} names[] = {
		{"threads", F_THREADS},
		{"block_threads", F_THREADS},
		{"threads_per_block", F_THREADS},
		{"items_per_thread", F_ITEMS},
		{"items", F_ITEMS},
		{"vector_load_length", F_VEC},
		{"items_per_vec_load", F_VEC},
		{"vec", F_VEC},
		{"load_modifier", F_LOAD_MOD},
		{"load_algorithm", F_LOAD_ALG},
		{"store_algorithm", F_STORE_ALG},
		{"block_algorithm", F_BLOCK_ALG},
		{"algorithm", F_BLOCK_ALG},
	};
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (!strcmp(names[i].name, name))
			return names[i].f;
	return F_NONE;
}

static const char *field_word(const kb_policy *p, enum field f)
{
	switch (f) {
	case F_LOAD_MOD: return p->load_modifier;
	case F_LOAD_ALG: return p->load_algorithm;
	case F_STORE_ALG: return p->store_algorithm;
	case F_BLOCK_ALG: return p->block_algorithm;
	default: return NULL;
	}
}

static int field_num(const kb_policy *p, enum field f)
{
	switch (f) {
	case F_THREADS: return p->threads;
	case F_ITEMS: return p->items_per_thread;
	case F_VEC: return p->vector_load_length;
	default: return -1;
	}
}

typedef struct map_entry {
	size_t param;
	enum field f;
	const muh_kv *where;
} map_entry;

/* Index of value v (an int, or a word) among param p's values; SIZE_MAX if absent. */
static size_t value_index(const muh_param *p, int is_word, long long num, const char *word)
{
	for (size_t i = 0; i < p->nvalues; i++) {
		muh_value v = p->values[i];
		if (is_word) {
			if (v.t == MUH_STR && !strcmp(v.u.s, word))
				return i;
		} else if ((v.t == MUH_INT && v.u.i == num) || (v.t == MUH_FLOAT && v.u.f == (double)num)) {
			return i;
		}
	}
	return SIZE_MAX;
}

void kb_seeds_free(kb_seed *v, size_t n)
{
	if (!v)
		return;
	for (size_t i = 0; i < n; i++)
		free(v[i].idx);
	free(v);
}

static int kv_diag(const muh_spec *s, const muh_kv *kv, muh_diag *d)
{
	spec_diag_at(s, d, kv ? kv->line : 1, kv ? kv->col : 1);
	return MUH_EINPUT;
}

/* Notes in sd->why that param `name` kept its default (the policy does not
 * set the field it maps to). */
static void note_default(kb_seed *sd, const char *name)
{
	size_t l = strlen(sd->why);
	snprintf(sd->why + l, sizeof(sd->why) - l, "%s%s", l ? ", " : "default ", name);
}

/* The policy leaves par's field unset: par keeps its default (noted);
 * without one the seed is not ok (sd->ok 0, sd->why says so). */
static void seed_unset_field(kb_seed *sd, const muh_param *par)
{
	if (par->has_default) {
		note_default(sd, par->name);
		return;
	}
	snprintf(sd->why, sizeof(sd->why), "%s: the policy does not set it", par->name);
	sd->ok = 0;
}

/* Makes the seed of policy p into *sd: each mapped param from p's field,
 * a field p leaves unset from the param's default (noted in sd->why). */
static int make_seed(const kb_cccl *kb, const muh_spec *s, const map_entry *m, size_t nm, const kb_policy *p, int cc,
		     kb_seed *sd)
{
	memset(sd, 0, sizeof(*sd));
	sd->from = p;
	sd->ok = 1;
	sd->applies = kb_cccl_applies(kb, p, cc);
	sd->idx = malloc((s->nparams ? s->nparams : 1) * sizeof(size_t));
	if (!sd->idx)
		return MUH_ENOMEM;
	for (size_t k = 0; k < s->nparams; k++)
		sd->idx[k] = s->params[k].has_default ? s->params[k].default_idx : SIZE_MAX;
	for (size_t j = 0; j < nm && sd->ok; j++) {
		const muh_param *par = &s->params[m[j].param];
		const char *w = field_word(p, m[j].f);
		size_t at;
		if (w) {
			if (!w[0]) {
				seed_unset_field(sd, par); /* sd->ok 0 ends the loop */
				continue;
			}
			/* a values table kb.map.PARAM.values.WORD, else the word itself */
			char key[256];
			snprintf(key, sizeof(key), "kb.map.%s.values.%s", par->name, w);
			const muh_kv *tv = spec_kv(s, key);
			if (tv) {
				char *end;
				long long x = strtoll(tv->value, &end, 10);
				at = (*end || end == tv->value) ? value_index(par, 1, 0, tv->value)
								: value_index(par, 0, x, NULL);
			} else {
				at = value_index(par, 1, 0, w);
			}
			if (at == SIZE_MAX) {
				snprintf(sd->why, sizeof(sd->why), "%s: %s is not one of its values%s", par->name, w,
					 tv ? "" : " (map it with values:)");
				sd->ok = 0;
			}
		} else {
			int x = field_num(p, m[j].f);
			if (x < 0) {
				seed_unset_field(sd, par);
				continue;
			}
			at = value_index(par, 0, x, NULL);
			if (at == SIZE_MAX) {
				snprintf(sd->why, sizeof(sd->why), "%s: %d is not one of its values", par->name, x);
				sd->ok = 0;
			}
		}
		if (sd->ok)
			sd->idx[m[j].param] = at;
	}
	return MUH_OK;
}

int kb_cccl_seeds(const kb_cccl *kb, const muh_spec *s, int cc, kb_seed **out, size_t *nout, muh_diag *d)
{
	*out = NULL;
	*nout = 0;
	const muh_kv *alg = spec_kv(s, "kb.cccl");
	if (!alg) {
		spec_diag_at(s, d, 1, 1);
		return diag_errorf(d, "the spec has no kb: {cccl: ALGORITHM, map: {PARAM: FIELD, ...}} (docs/kb.md)");
	}
	map_entry *m = calloc(s->nparams + 1, sizeof(map_entry));
	if (!m)
		return MUH_ENOMEM;
	size_t nm = 0;
	const muh_kv *kv;
	const char *rest;
	for (size_t i = 0; (kv = spec_kv_under(s, "kb.map.", &i, &rest)); i++) {
		char pname[256];
		const char *dot = strchr(rest, '.');
		const char *fname = kv->value;
		if (dot) {
			if (strcmp(dot, ".field") != 0)
				continue; /* PARAM.values.WORD: read when used */
			snprintf(pname, sizeof(pname), "%.*s", (int)(dot - rest), rest);
		} else {
			snprintf(pname, sizeof(pname), "%s", rest);
		}
		size_t pi = SIZE_MAX;
		for (size_t k = 0; k < s->nparams; k++)
			if (!strcmp(s->params[k].name, pname))
				pi = k;
		if (pi == SIZE_MAX) {
			free(m);
			kv_diag(s, kv, d);
			return diag_errorf(d, "kb.map: '%s' is not a param of the spec", pname);
		}
		enum field f = field_of(fname);
		if (f == F_NONE) {
			free(m);
			kv_diag(s, kv, d);
			return diag_errorf(d, "kb.map: unknown policy field '%s' (threads, items_per_thread, "
					      "vector_load_length, load_modifier, load_algorithm, store_algorithm, "
					      "block_algorithm)", fname);
		}
		if (nm < s->nparams)
			m[nm++] = (map_entry){pi, f, kv};
	}
	if (nm == 0) {
		free(m);
		kv_diag(s, alg, d);
		return diag_errorf(d, "kb.cccl is set but kb.map maps no param");
	}
	size_t np = 0;
	for (size_t i = 0; i < kb->n; i++)
		np += !strcmp(kb->v[i].algorithm, alg->value);
	if (np == 0) {
		free(m);
		kv_diag(s, alg, d);
		return diag_errorf(d, "kb.cccl: no policies of algorithm '%s' in the headers read", alg->value);
	}
	kb_seed *v = calloc(np, sizeof(kb_seed));
	if (!v) {
		free(m);
		return MUH_ENOMEM;
	}
	/* order: applying policies first, then by cc descending, then as read */
	size_t *ord = malloc(np * sizeof(size_t));
	if (!ord) {
		free(m);
		free(v);
		return MUH_ENOMEM;
	}
	size_t no = 0;
	for (size_t i = 0; i < kb->n; i++)
		if (!strcmp(kb->v[i].algorithm, alg->value))
			ord[no++] = i;
	for (size_t a = 1; a < no; a++) /* insertion sort: stable, np is small */
		for (size_t b = a; b > 0; b--) {
			const kb_policy *x = &kb->v[ord[b - 1]], *y = &kb->v[ord[b]];
			int ax = kb_cccl_applies(kb, x, cc), ay = kb_cccl_applies(kb, y, cc);
			if (ay > ax || (ay == ax && y->cc > x->cc)) {
				size_t tmp = ord[b];
				ord[b] = ord[b - 1];
				ord[b - 1] = tmp;
			} else {
				break;
			}
		}
	size_t n = 0;
	int rc = MUH_OK;
	for (size_t o = 0; o < no && rc == MUH_OK; o++) {
		rc = make_seed(kb, s, m, nm, &kb->v[ord[o]], cc, &v[n]);
		if (rc)
			break;
		int dup = 0;
		for (size_t j = 0; j < n && v[n].ok && !dup; j++)
			dup = v[j].ok && !memcmp(v[j].idx, v[n].idx, s->nparams * sizeof(size_t));
		if (dup) {
			free(v[n].idx);
			memset(&v[n], 0, sizeof(v[n]));
		} else {
			n++;
		}
	}
	free(ord);
	free(m);
	if (rc) {
		kb_seeds_free(v, n + 1);
		return rc;
	}
	*out = v;
	*nout = n;
	return MUH_OK;
}
