/*
 * pyfile_node.c — the lowest layer of the per-file analysis: the arena every
 * string and array of a pyfile lives in, and the syntax-node helpers every
 * part of the walk reads nodes with (their text, copied into the arena;
 * string literals' values; a call's callee; `global` declarations), and
 * the grammar's field ids by name (a table made once, read by every thread,
 * and a memo of each call site's answer by the literal's address).
 *
 * Calls nothing of pyfile.c, pyfile_expr.c or pyfile_overwrite.c, which all
 * call it. Must never: print, or keep pointers into the caller's source
 * buffer (every text is copied).
 */
#include <ctype.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <tree_sitter/api.h>

#include "pyfile.h"
#include "pyfile_int.h"

/* ---- field ids ---- */

#define FIELD_SLOTS 256 /* a power of two, well above the grammar's field count */

static struct {
	const char *name;
	TSFieldId id;
} field_tab[FIELD_SLOTS];
static pthread_once_t field_once = PTHREAD_ONCE_INIT;

static uint32_t field_hash(const char *s)
{
	uint32_t h = 2166136261u;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 16777619u;
	return h;
}

/* Fills field_tab from the grammar (once, whichever thread comes first). */
static void field_init(void)
{
	const TSLanguage *l = tree_sitter_python();
	uint32_t n = ts_language_field_count(l);
	for (uint32_t id = 1; id <= n && id < FIELD_SLOTS; id++) {
		const char *nm = ts_language_field_name_for_id(l, (TSFieldId)id);
		if (!nm)
			continue;
		uint32_t h = field_hash(nm) & (FIELD_SLOTS - 1);
		while (field_tab[h].name)
			h = (h + 1) & (FIELD_SLOTS - 1);
		field_tab[h].name = nm;
		field_tab[h].id = (TSFieldId)id;
	}
}

TSFieldId pyfile_field_id(const char *name)
{
	pthread_once(&field_once, field_init);
	uint32_t h = field_hash(name) & (FIELD_SLOTS - 1);
	while (field_tab[h].name) {
		if (!strcmp(field_tab[h].name, name))
			return field_tab[h].id;
		h = (h + 1) & (FIELD_SLOTS - 1);
	}
	return 0;
}

/* Each slot holds a string's address (its low 48 bits, all a user-space
 * address has on x86-64 and arm64) and that string's field id (the low 16):
 * one atomic word, so a thread reads a whole entry another wrote or none;
 * a slot two addresses share only costs lookups, never a wrong id. */
#define MEMO_SLOTS 1024 /* a power of two, a few times the call sites */
static _Atomic uint64_t field_memo[MEMO_SLOTS];

TSFieldId pyfile_field_id_at(const char *name)
{
	uint64_t a = (uint64_t)(uintptr_t)name & 0xFFFFFFFFFFFFull;
	_Atomic uint64_t *slot = &field_memo[(a ^ (a >> 10)) & (MEMO_SLOTS - 1)];
	uint64_t v = atomic_load_explicit(slot, memory_order_relaxed);
	if (v && v >> 16 == a)
		return (TSFieldId)(v & 0xFFFF);
	TSFieldId id = pyfile_field_id(name);
	if ((uint64_t)(uintptr_t)name >> 48 == 0) /* the address fits the key */
		atomic_store_explicit(slot, a << 16 | id, memory_order_relaxed);
	return id;
}

/* ---- the arena ---- */

void *pyfile_ar_alloc(pyfile *f, size_t n)
{
	void *p = scan_arena_alloc(&f->arena, n, 60000);
	if (p)
		memset(p, 0, n);
	return p;
}

const char *pyfile_ar_strn(pyfile *f, const char *s, size_t n)
{
	char *p = pyfile_ar_alloc(f, n + 1);
	if (!p)
		return "";
	memcpy(p, s, n);
	p[n] = '\0';
	return p;
}

const char *pyfile_ar_str(pyfile *f, const char *s)
{
	return s ? pyfile_ar_strn(f, s, strlen(s)) : NULL;
}

/* The node's text, copied (at most max bytes; whitespace runs collapse to one
 * space when squash). */
const char *pyfile_text_of(walker *w, TSNode n, size_t max, int squash)
{
	uint32_t s = pyts_start_byte(n), e = pyts_end_byte(n);
	if (e > w->n)
		e = (uint32_t)w->n;
	if (s > e)
		s = e;
	size_t len = e - s;
	if (len > max)
		len = max;
	if (!squash)
		return pyfile_ar_strn(w->f, w->src + s, len);
	char *out = pyfile_ar_alloc(w->f, len + 1);
	if (!out)
		return "";
	size_t o = 0;
	int sp = 0;
	for (size_t i = 0; i < len; i++) {
		char c = w->src[s + i];
		if (c == '\n' || c == '\r' || c == '\t' || c == ' ') {
			sp = 1;
			continue;
		}
		if (sp && o && out[o - 1] != '(' && out[o - 1] != '[' && out[o - 1] != '{' &&
		    c != ')' && c != ']' && c != '}' && c != ',')
			out[o++] = ' ';
		sp = 0;
		out[o++] = c;
	}
	out[o] = '\0';
	return out;
}

int pyfile_text_eq(walker *w, TSNode n, const char *s)
{
	uint32_t a = pyts_start_byte(n), b = pyts_end_byte(n);
	size_t len = strlen(s);
	return b <= w->n && b - a == len && memcmp(w->src + a, s, len) == 0;
}

int pyfile_prefix_has(walker *w, TSNode start, const char *letters)
{
	uint32_t a = pyts_start_byte(start), b = pyts_end_byte(start);
	for (uint32_t j = a; j < b && j < w->n; j++)
		if (w->src[j] && strchr(letters, w->src[j]))
			return 1;
	return 0;
}

/* The content of a plain string literal ('abc' -> abc); NULL for f-strings,
 * concatenations or anything else. */
const char *pyfile_string_value(walker *w, TSNode n)
{
	if (!is(n, "string"))
		return NULL;
	uint32_t c = pyts_named_child_count(n);
	const char *content = "";
	for (uint32_t i = 0; i < c; i++) {
		TSNode k = pyts_named_child(n, i);
		const char *t = pyts_type(k);
		if (!strcmp(t, "string_start")) {
			if (pyfile_prefix_has(w, k, "fF"))
				return NULL;
		} else if (!strcmp(t, "string_content")) {
			content = pyfile_text_of(w, k, 256, 0);
		} else if (!strcmp(t, "interpolation")) {
			return NULL;
		}
	}
	return content;
}

/* Name of a call's function for linking: f for f(), ops.f -> f (obj ops),
 * k[grid] -> k (launch). */
void pyfile_callee_names(walker *w, TSNode fn, const char **fname, const char **obj, int *launch)
{
	*fname = NULL;
	*obj = NULL;
	*launch = 0;
	if (is(fn, "subscript")) {
		*launch = 1;
		fn = field(fn, "value");
	}
	if (is(fn, "identifier")) {
		*fname = pyfile_text_of(w, fn, 128, 0);
	} else if (is(fn, "attribute")) {
		TSNode a = field(fn, "attribute"), o = field(fn, "object");
		if (!pyts_is_null(a))
			*fname = pyfile_text_of(w, a, 128, 0);
		if (!pyts_is_null(o) && pyts_end_byte(o) - pyts_start_byte(o) < 96)
			*obj = pyfile_text_of(w, o, 96, 1);
	}
}

int pyfile_is_global_in(walker *w, int scope, const char *name)
{
	for (int i = 0; i < w->nglobals; i++)
		if (w->globals[i].scope == scope && !strcmp(w->globals[i].name, name))
			return 1;
	return 0;
}
