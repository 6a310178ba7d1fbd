/*
 * deploy_write.c — deploy_set: the text of a deployment file with one
 * argument changed, and nothing else. Only bytes of that argument change (its
 * value inside the quotes, its whole tokens, or a new token, item or entry
 * copied from a neighbour's style); the result is read again (deploy.c) and
 * must give the one argument as asked and every other argument unchanged, or
 * nothing is returned.
 *
 * Must never: re-emit YAML from the document, print, or return a text that
 * does not read back.
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
	return deploy_is_int(v) || deploy_is_float(v) || !strcmp(v, "true") || !strcmp(v, "false") ||
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
		size_t ls = deploy_line_start(f->text, ref->raw_s);
		size_t nl = deploy_line_next(f->text, f->len, ref->raw_e);
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
					strings_only || deploy_is_true(words[k]) || deploy_is_false(words[k]));
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
		return (deploy_is_true(a) && deploy_is_true(b)) || (deploy_is_false(a) && deploy_is_false(b));
	return 0;
}

/* The value an absent argument has: a bool's default, else NULL. */
static const char *absent_value(const deploy_schema *sc, const char *name, int is_bool)
{
	const deploy_option *o = deploy_opt_by_name(sc, name);
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
		const deploy_option *o = deploy_opt_by_name(f->schema, name);
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

/* Starts a new entry line of the block env collection E at its insertion
 * point: ends the file's last line first when E inserts at the end of a
 * file whose last line has no newline, then E's indent (prefix). */
static void start_env_line(strbuf *s, const deploy_file *f, const struct envloc *E)
{
	if (E->ins == f->len && f->len && f->text[f->len - 1] != '\n')
		strbuf_str(s, eol(f));
	strbuf_str(s, E->prefix);
}

/* name=value as one YAML scalar of a list entry, quoted with q (0: as
 * put_yaml_scalar chooses). */
static void put_env_list_item(strbuf *s, const char *name, const char *value, char q)
{
	strbuf kv = {0};
	strbuf_str(&kv, name);
	strbuf_ch(&kv, '=');
	strbuf_str(&kv, value);
	put_yaml_scalar(s, kv.b ? kv.b : "", q, 1);
	free(kv.b);
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
	case ENV_FLOWLIST:
		*es = *ee = E->ins;
		strbuf_str(s, ", ");
		put_env_list_item(s, name, value, E->quote ? E->quote : '"');
		return MUH_OK;
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
		start_env_line(s, f, E);
		strbuf_str(s, name);
		strbuf_str(s, ": ");
		put_yaml_scalar(s, value, E->quote ? E->quote : '"', 1);
		strbuf_str(s, eol(f));
		return MUH_OK;
	case ENV_K8S: {
		*es = *ee = E->ins;
		start_env_line(s, f, E);
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
	case ENV_LIST:
		*es = *ee = E->ins;
		start_env_line(s, f, E);
		put_env_list_item(s, name, value, E->quote);
		strbuf_str(s, eol(f));
		return MUH_OK;
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
	int env = (a && a->kind == DEPLOY_ENV) || (!a && deploy_is_upper_name(name));
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
		const deploy_option *o = a ? deploy_opt_by_name(f->schema, a->name) : deploy_opt_by_name(f->schema, name);
		if (a)
			snprintf(cname, sizeof(cname), "%s", a->name);
		else if (o)
			snprintf(cname, sizeof(cname), "%s", o->name);
		else
			deploy_flag_name(name, cname, sizeof(cname));
		canon = cname;
		is_bool = (o && !strcmp(o->type, "bool") && !o->takes_value) ||
			  (a && (a->kind == DEPLOY_FLAG || a->kind == DEPLOY_NEG)) ||
			  (!a && !o && (deploy_is_true(value) || deploy_is_false(value)) && !deploy_is_int(value));
		if (a && a->kind == DEPLOY_OPT)
			is_bool = 0;
		if (is_bool && !deploy_is_true(value) && !deploy_is_false(value))
			return refuse(f, a, d, "refusing %s=%s: %s is a flag (True or False)", name,
				      value, cname);
		if (!f->argc)
			return refuse(f, a, d, "refusing %s=%s: no command", name, value);
		/* the schema's type: what the server's argparse would accept */
		if (o && !is_bool && o->takes_value == 1) {
			int fits = !strcmp(o->type, "int")     ? deploy_is_int(value)
				   : !strcmp(o->type, "float") ? deploy_is_float(value)
				   : o->choices ? deploy_in_list(o->choices, value, strlen(value))
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
		} else if (a && ((a->kind == DEPLOY_FLAG && deploy_is_true(value)) ||
				 (a->kind == DEPLOY_NEG && deploy_is_false(value)))) {
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
			deploy_long_flag(o, canon, lf, sizeof(lf));
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
				int want = deploy_is_true(value);
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
						size_t ls = deploy_line_start(f->text, t0->raw_s);
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
				int want = deploy_is_true(value);
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
