/*
 * expr_int.h — what the expression engine shares inside libmuh: the name
 * distance behind its "did you mean" (diag_near_offer, which every unknown
 * name's error uses). Not installed.
 */
#ifndef MUH_EXPR_INT_H
#define MUH_EXPR_INT_H

#include <stddef.h>

/* Case-insensitive edit distance between a[0..la) and b[0..lb), capped:
 * names longer than 63 bytes are "far" (99). */
int expr_edit_distance(const char *a, size_t la, const char *b, size_t lb);

#endif
