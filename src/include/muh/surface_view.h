/*
 * surface_view.h — which knobs of a surface a reader is shown, and in what
 * order: the --verdict and --kind filters of `muh scan`, launch blockers
 * first, then by priority (scan_rank), then in scan order.
 *
 * One answer for the table, so that an engine listing a surface shows the
 * same knobs first. Nothing here prints.
 */
#ifndef MUH_SURFACE_VIEW_H
#define MUH_SURFACE_VIEW_H

#include <stddef.h>

#include "muh/scan.h"

#include "muh/api.h"

MUH_BEGIN_DECLS

/* 1 when k names a knob kind the scan reports (constant, override,
 * constexpr, autotune, config_dict, capability, json_config, engine_arg,
 * env, config_lookup). */
int surface_view_known_kind(const char *k);

/* 1 when k passes the filters: its verdict's name among verdicts[0..nv)
 * and its kind among kinds[0..nk) (an empty list passes all). */
int surface_view_shown(const muh_knob *k, const char *const *verdicts, int nv, const char *const *kinds,
			       int nk);

/* The knobs of s that pass the filters, in the order a reader sees them:
 * launch blockers first, then by priority (*prio: scan_rank's, one per
 * knob of s), then in scan order; at most top (0: all). *order holds the
 * knob indexes, *n of them; free both. MUH_OK or MUH_ENOMEM. */
int surface_view_order(const muh_surface *s, const char *const *verdicts, int nv, const char *const *kinds,
			       int nk, size_t top, size_t **order, size_t *n, int **prio);

/* How many knobs of s have each verdict (counts[SCAN_BLOCKER + 1]). */
void surface_view_counts(const muh_surface *s, int *counts);

MUH_END_DECLS

#endif
