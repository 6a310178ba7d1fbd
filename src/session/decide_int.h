/*
 * decide_int.h — what decide.c (the verdicts, from stored rows) and
 * decide_run.c (the stage that measures the rows through a session) share.
 * Internal to libmuh; not installed.
 */
#ifndef MUH_DECIDE_INT_H
#define MUH_DECIDE_INT_H

#include <stddef.h>
#include <stdint.h>

#include "muh/decide.h"
#include "muh/store.h"

/* The rows of a run, copied (their strings too). */
struct rows {
	store_decision *v;
	size_t n, cap;
	int oom;
};

/* ---- decide.c ---- */

/* Copies src (NULL: "") into dst of n bytes, cut to fit. */
void decide_copy_text(char *dst, size_t n, const char *src);

/* Frees R's rows. */
void decide_rows_free(struct rows *R);

/* Reads run's decision rows from st into R (free with decide_rows_free):
 * MUH_OK, MUH_ENOMEM, or MUH_EENV with d set. */
int decide_read_rows(muh_store *st, int64_t run, struct rows *R, muh_diag *d);

#endif
