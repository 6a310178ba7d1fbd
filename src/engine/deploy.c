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
 * This file reads; src/engine/deploy_write.c writes (deploy_set), src/engine/deploy_schema.c
 * holds the schemas (shared state: src/engine/deploy_int.h).
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
#include "deploy_int.h"

/* ---- small helpers (the ones deploy_schema.c and deploy_write.c share are in
 * deploy_schema.c) ------------------------------------------------------- */

/* A token that argparse takes as an option, not a value: starts with '-',
 * is not "-" and not a negative number. */
static int looks_flag(const char *t)
{
	return t[0] == '-' && t[1] && !deploy_is_float(t);
}

int deploy_is_upper_name(const char *s)
{
	if (!*s || isdigit((unsigned char)*s))
		return 0;
	for (; *s; s++)
		if (!(isupper((unsigned char)*s) || isdigit((unsigned char)*s) || *s == '_'))
			return 0;
	return 1;
}

/* ---- tokens -------------------------------------------------------------- */

static struct deploy_tok *tl_add(struct tl *l)
{
	if (array_grow(&l->v, &l->cap, l->n, sizeof(*l->v), 32))
		return NULL;
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
static int perr(struct P *P, size_t pos, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static int perr(struct P *P, size_t pos, const char *fmt, ...)
{
	if (!P->d)
		return MUH_EINPUT;
	int line = 0, col = 0;
	char *tmp = strdup_n(P->text, P->len);
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
	if (array_grow(&P->args, &P->cap, P->nargs, sizeof(*P->args), 16))
		return NULL;
	deploy_arg *a = &P->args[P->nargs++];
	memset(a, 0, sizeof(*a));
	return a;
}

size_t deploy_line_start(const char *t, size_t p)
{
	while (p > 0 && t[p - 1] != '\n')
		p--;
	return p;
}

/* The offset just past the end of the line holding p (past its '\n'). */
size_t deploy_line_next(const char *t, size_t len, size_t p)
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

static struct fy_node *lookup(struct fy_node *map, const char *key)
{
	return yaml_is_map(map) ? fy_node_mapping_lookup_by_string(map, key, FY_NT) : NULL;
}

static char *scalar_dup(struct fy_node *n)
{
	size_t l = 0;
	const char *v = fy_node_get_scalar(n, &l);
	return strdup_n(v ? v : "", v ? l : 0);
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
			*s = deploy_line_next(P->text, P->len, *s);
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
	if (yaml_is_seq(n)) {
		int ctx = fy_node_get_style(n) == FYNS_FLOW ? T_FLOW : T_YITEM;
		int grp = ++P->grp;
		void *it = NULL;
		struct fy_node *item;
		while ((item = fy_node_sequence_iterate(n, &it))) {
			if (!yaml_is_scalar(item))
				return perr(P, NOSPAN, "an argv item that is not a string");
			int rc = item_tok(P, item, ctx, grp);
			if (rc)
				return rc;
		}
		return MUH_OK;
	}
	if (yaml_is_scalar(n)) {
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
	if (yaml_is_scalar(n)) {
		size_t e = tok_end(n);
		return e == NOSPAN ? 0 : e;
	}
	void *it = NULL;
	if (yaml_is_map(n)) {
		struct fy_node_pair *pr;
		while ((pr = fy_node_mapping_iterate(n, &it))) {
			size_t a = last_end(fy_node_pair_key(pr)), b = last_end(fy_node_pair_value(pr));
			if (a > best)
				best = a;
			if (b > best)
				best = b;
		}
	} else if (yaml_is_seq(n)) {
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
	size_t ls = deploy_line_start(P->text, key_s);
	size_t l = key_s - ls;
	if (l >= sizeof(P->env.prefix))
		l = sizeof(P->env.prefix) - 1;
	memcpy(P->env.prefix, P->text + ls, l);
	P->env.prefix[l] = '\0';
}

/* Appends an environment entry named name (nlen bytes; its flag is the
 * name too), value not set yet. NULL when out of memory (an entry may
 * have been appended: deploy_free frees it). */
static deploy_arg *add_env_arg(struct P *P, const char *name, size_t nlen)
{
	deploy_arg *a = add_arg(P);
	if (!a)
		return NULL;
	a->kind = DEPLOY_ENV;
	a->name = strdup_n(name, nlen);
	a->flag = strdup_n(name, nlen);
	return a->name && a->flag ? a : NULL;
}

static int env_entry(struct P *P, const char *name, size_t nlen, struct fy_node *val, size_t tok_s,
		     size_t tok_e, size_t at, size_t vs, size_t ve)
{
	deploy_arg *a = add_env_arg(P, name, nlen);
	if (!a)
		return MUH_ENOMEM;
	a->value = val ? scalar_dup(val) : NULL;
	if (val && !a->value)
		return MUH_ENOMEM;
	deploy_infer_type(a->value ? a->value : "", a->type);
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
	if (yaml_is_map(env)) {
		void *it = NULL;
		struct fy_node_pair *pr;
		while ((pr = fy_node_mapping_iterate(env, &it))) {
			struct fy_node *k = fy_node_pair_key(pr), *v = fy_node_pair_value(pr);
			if (!yaml_is_scalar(k) || (v && !yaml_is_scalar(v)))
				continue;
			size_t kl;
			const char *kn = fy_node_get_scalar(k, &kl);
			size_t ks = tok_start(k), vs = NOSPAN, ve = NOSPAN;
			char q = 0;
			if (ks == NOSPAN)
				continue; /* no place in the file (an alias, a merge): not an entry we can write */
			if (v)
				value_span(P, v, &vs, &ve, &q);
			size_t end = deploy_line_next(t, P->len, v ? tok_end(v) : tok_end(k));
			int rc = env_entry(P, kn, kl, v, deploy_line_start(t, ks), end, ks, vs, ve);
			if (rc)
				return rc;
			P->env.style = ENV_MAP;
			P->env.ins = end;
			P->env.quote = q;
			set_prefix(P, ks);
		}
		return MUH_OK;
	}
	if (!yaml_is_seq(env))
		return MUH_OK;
	void *it = NULL;
	struct fy_node *item;
	while ((item = fy_node_sequence_iterate(env, &it))) {
		if (yaml_is_map(item)) {
			struct fy_node *n = lookup(item, "name"), *v = lookup(item, "value");
			if (!yaml_is_scalar(n) || !yaml_is_scalar(v))
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
			size_t end = deploy_line_next(t, P->len, last_end(item));
			int rc = env_entry(P, nm, nl, v, deploy_line_start(t, first), end, first, vs, ve);
			if (rc)
				return rc;
			P->env.style = ENV_K8S;
			P->env.ins = end;
			P->env.quote = q ? q : '"';
			set_prefix(P, first);
		} else if (yaml_is_scalar(item)) {
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
			size_t end = deploy_line_next(t, P->len, tok_end(item));
			deploy_arg *a = add_arg(P);
			if (!a)
				return MUH_ENOMEM;
			a->kind = DEPLOY_ENV;
			a->name = strdup_n(s, (size_t)(eq - s));
			a->flag = strdup_n(s, (size_t)(eq - s));
			a->value = strdup_n(eq + 1, l - (size_t)(eq - s) - 1);
			if (!a->name || !a->flag || !a->value)
				return MUH_ENOMEM;
			deploy_infer_type(a->value, a->type);
			set_linecol(P, a, tok_start(item));
			a->tok_start = deploy_line_start(t, tok_start(item));
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
	if (yaml_is_scalar(n)) {
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
	if (yaml_is_seq(n)) {
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
	if (yaml_is_map(n)) {
		struct fy_node *c = lookup(n, "command"), *a = lookup(n, "args");
		if ((c && (yaml_is_seq(c) || yaml_is_scalar(c))) || (a && (yaml_is_seq(a) || yaml_is_scalar(a)))) {
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
			const char *ks = yaml_is_scalar(k) ? fy_node_get_scalar(k, &kl) : NULL;
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
	} else if (yaml_is_seq(n)) {
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
	return (int)(s - deploy_line_start(P->text, s));
}

static int read_yaml_doc(struct P *P, struct fy_node *root)
{
	if (yaml_is_scalar(root)) {
		P->form = DEPLOY_SHELL;
		return node_cmd(P, root);
	}
	if (yaml_is_seq(root)) {
		P->form = fy_node_get_style(root) == FYNS_FLOW ? DEPLOY_JSON_LIST : DEPLOY_YAML_LIST;
		return node_cmd(P, root);
	}
	if (!yaml_is_map(root))
		return perr(P, 0, "not a launch file: empty document");
	int under = 0;
	struct fy_node *c = find_container(root, 0, 0, &under, 1);
	if (!c)
		c = find_container(root, 0, 0, &under, 0);
	if (!c)
		return perr(P, 0, "not a launch file: no command, args or argv list");
	struct fy_node *cmd = lookup(c, "command"), *args = lookup(c, "args");
	struct fy_node *img = lookup(c, "image");
	if (yaml_is_scalar(img)) {
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
	else if (cmd && yaml_is_seq(cmd))
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
			P->env.block_ins = deploy_line_next(P->text, P->len, end);
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
	const char *b = deploy_base_name(p);
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

/* Appends an environment entry of the shell line: name (nlen bytes) =
 * value, its type inferred from value. NULL when out of memory. */
static deploy_arg *add_shell_env(struct P *P, const char *name, size_t nlen, const char *value)
{
	deploy_arg *e = add_env_arg(P, name, nlen);
	if (!e || !(e->value = strdup(value)))
		return NULL;
	deploy_infer_type(e->value, e->type);
	return e;
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
		const char *b = deploy_base_name(L->v[0].val);
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
			deploy_arg *e = add_shell_env(P, b->val, (size_t)(eq - b->val), eq + 1);
			if (!e)
				return MUH_ENOMEM;
			set_linecol(P, e, b->raw_s);
			e->tok_start = deploy_line_start(P->text, a->raw_s);
			e->tok_end = deploy_line_next(P->text, P->len, b->raw_e);
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
			deploy_arg *e = add_shell_env(P, nm, strlen(nm), eq + 1);
			if (!e)
				return MUH_ENOMEM;
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
	const char *b = deploy_base_name(argv[0]);
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
		const char *b = deploy_base_name(a);
		if (strstr(b, "llama-server") || strstr(b, "llama_server") || strstr(a, "llama.cpp"))
			return &deploy_builtin[0];
		if (strstr(a, "vllm"))
			return &deploy_builtin[1];
	}
	if (!strcmp(deploy_base_name(f->argv[0]), "server"))
		return &deploy_builtin[0];
	return NULL;
}

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
		const deploy_option *o = deploy_opt_by_flag(sc, v, fl, &neg);
		deploy_arg *a = add_arg(P);
		if (!a) {
			rc = MUH_ENOMEM;
			break;
		}
		size_t ai = P->nargs - 1;
		a->flag = strdup_n(v, fl);
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
					deploy_in_list(o->choices, L->v[i + 1].val, strlen(L->v[i + 1].val));
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
			deploy_infer_type(a->value, a->type);
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
			a->tok_start = deploy_line_start(P->text, f0->raw_s);
			a->tok_end = deploy_line_next(P->text, P->len, f1->raw_e);
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
		f->text = strdup_n(text, len);
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
			const deploy_schema *ts = deploy_tree_schema(path, f, sc);
			if (ts)
				sc = ts;
		}
		if (!sc && P.image)
			sc = &deploy_builtin[P.image == 1 ? 0 : 1];
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
	const deploy_option *o = deploy_opt_by_name(f->schema, name);
	if (o)
		for (size_t i = 0; i < f->nargs; i++)
			if (f->args[i].kind != DEPLOY_ENV && !strcmp(f->args[i].name, o->name))
				return &f->args[i];
	/* "--max-num-seqs" or "max-num-seqs" for max_num_seqs */
	char buf[256];
	deploy_flag_name(name, buf, sizeof(buf));
	if (strcmp(buf, name))
		for (size_t i = 0; i < f->nargs; i++)
			if (f->args[i].kind != DEPLOY_ENV && !strcmp(f->args[i].name, buf))
				return &f->args[i];
	return NULL;
}
