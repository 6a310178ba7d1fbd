/*
 * diag_near.c — "did you mean": the known name nearest to an unknown one.
 *
 * Owns: the one edit distance of muh's errors for unknown names (commands,
 * options, spec sections and keys, params, --config keys, knob ids) and
 * the words of its hint, so that every such error offers a name by the
 * same rule: case-insensitive, an adjacent swap ("tnue" for "tune") costs
 * one like an insertion, a deletion or a change, and a name at distance 3
 * or more is not offered. Unknown names stay errors; the hint only helps.
 * Never allocates: names longer than 63 bytes are "far".
 */
#include <string.h>

#include "muh/diag.h"
#include "textfmt.h"

#define NEAR_MAX 63

static int lower(char c)
{
	return c >= 'A' && c <= 'Z' ? c | 0x20 : c;
}

int diag_near_distance(const char *a, size_t la, const char *b, size_t lb)
{
	if (la > NEAR_MAX || lb > NEAR_MAX)
		return 99;
	/* optimal string alignment: three rows of the Levenshtein table, the
	 * one before the previous for a swap of two neighbours */
	int r0[NEAR_MAX + 1], r1[NEAR_MAX + 1], r2[NEAR_MAX + 1];
	int *pp = r0, *prev = r1, *cur = r2;
	for (size_t j = 0; j <= lb; j++)
		prev[j] = (int)j;
	for (size_t i = 1; i <= la; i++) {
		cur[0] = (int)i;
		for (size_t j = 1; j <= lb; j++) {
			int ca = lower(a[i - 1]), cb = lower(b[j - 1]);
			int best = prev[j - 1] + (ca != cb);
			if (prev[j] + 1 < best)
				best = prev[j] + 1;
			if (cur[j - 1] + 1 < best)
				best = cur[j - 1] + 1;
			int swap = i > 1 && j > 1 && ca == lower(b[j - 2]) && lower(a[i - 2]) == cb;
			if (swap && pp[j - 2] + 1 < best)
				best = pp[j - 2] + 1;
			cur[j] = best;
		}
		int *t = pp;
		pp = prev;
		prev = cur;
		cur = t;
	}
	return prev[lb];
}

void diag_near_offer(diag_near *n, const char *word, size_t len, const char *name)
{
	if (!name)
		return;
	int d = diag_near_distance(word, len, name, strlen(name));
	if (d < n->dist) {
		n->dist = d;
		n->name = name;
	}
}

const char *diag_near_among(const char *word, size_t len, const char *const *names)
{
	diag_near n = DIAG_NEAR_INIT;
	for (; names && *names; names++)
		diag_near_offer(&n, word, len, *names);
	return n.name;
}

const char *diag_near_hint(const char *name, char *buf, size_t size)
{
	if (!size)
		return "";
	buf[0] = '\0';
	size_t n = 0;
	if (name)
		text_appendf(buf, size, &n, " (did you mean '%s'?)", name);
	if (n >= size) /* cut: no half a name */
		buf[0] = '\0';
	return buf;
}
