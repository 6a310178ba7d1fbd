/*
 * surface_view.c — which knobs of a surface are shown, in what order (see
 * surface_view.h).
 *
 * Owns: the filters by verdict and kind, and the reading order (launch
 * blockers first: nothing else matters until they go; then scan_rank's
 * priority; then scan order). The priorities themselves are scan_rank's.
 *
 * Must never: print, or change the surface.
 */
#include <stdlib.h>
#include <string.h>

#include "muh/muh.h"
#include "muh/surface_view.h"

/* 1 when v is among list[0..n), or the list is empty. */
static int listed(const char *const *list, int n, const char *v)
{
	if (!n)
		return 1;
	for (int i = 0; i < n; i++)
		if (!strcmp(list[i], v))
			return 1;
	return 0;
}

int surface_view_known_kind(const char *k)
{
	static const char *const kinds[] = {"constant",    "override",   "constexpr",   "autotune",
					    "config_dict", "capability", "json_config", "engine_arg",
					    "env",         "config_lookup"};
	return listed(kinds, (int)(sizeof(kinds) / sizeof(kinds[0])), k);
}

int surface_view_shown(const muh_knob *k, const char *const *verdicts, int nv, const char *const *kinds, int nk)
{
	return listed(verdicts, nv, scan_verdict_name(k->verdict)) && listed(kinds, nk, k->kind);
}

/* The order's comparison: its surface and the knobs' priorities. */
struct order_ctx {
	const muh_surface *s;
	const int *prio;
};

static int cmp_order(const void *a, const void *b, void *ud)
{
	const struct order_ctx *c = ud;
	size_t x = *(const size_t *)a, y = *(const size_t *)b;
	int bx = scan_knob(c->s, x)->verdict == SCAN_BLOCKER;
	int by = scan_knob(c->s, y)->verdict == SCAN_BLOCKER;
	if (bx != by) /* launch blockers first: nothing else matters until they go */
		return by - bx;
	if (c->prio[x] != c->prio[y])
		return c->prio[x] - c->prio[y];
	return x < y ? -1 : x > y;
}

int surface_view_order(const muh_surface *s, const char *const *verdicts, int nv, const char *const *kinds, int nk,
		       size_t top, size_t **order, size_t *n, int **prio)
{
	size_t nk_all = scan_nknobs(s), nshow = 0;
	*prio = scan_rank(s);
	*order = malloc(sizeof(size_t) * (nk_all ? nk_all : 1));
	*n = 0;
	if (!*prio || !*order) {
		free(*prio);
		free(*order);
		*prio = NULL;
		*order = NULL;
		return MUH_ENOMEM;
	}
	for (size_t i = 0; i < nk_all; i++)
		if (surface_view_shown(scan_knob(s, i), verdicts, nv, kinds, nk))
			(*order)[nshow++] = i;
	struct order_ctx c = {s, *prio};
	qsort_r(*order, nshow, sizeof(size_t), cmp_order, &c);
	*n = top && nshow > top ? top : nshow;
	return MUH_OK;
}

void surface_view_counts(const muh_surface *s, int *counts)
{
	memset(counts, 0, sizeof(int) * (SCAN_BLOCKER + 1));
	for (size_t i = 0; i < scan_nknobs(s); i++)
		counts[scan_knob(s, i)->verdict]++;
}
