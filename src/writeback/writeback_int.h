/*
 * writeback_int.h — what writeback.c and writeback_emit.c share inside
 * libmuh (never exported).
 */
#ifndef MUH_WRITEBACK_INT_H
#define MUH_WRITEBACK_INT_H

#include "muh/spec.h"
#include "muh/writeback.h"

/* What --force does where no gain was proven: said by every "no proven
 * gain" line of a write-back, kernel or engine, knob diff or emitter. */
#define FORCE_HINT "--force writes the best measured finalist anyway, else the search's best, marked as unproven"

/* Gives ob one line for a person (printf-style, of any length; ob or its
 * note may be NULL: nothing). */
void writeback_say(const writeback_observer *ob, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The store_run that b was read from (its strings are b's). */
store_run writeback_run_store(const writeback_run *b);

/* The spec of run b as the store kept it, else its file (store_run_spec). */
int writeback_run_spec(const writeback_run *b, muh_spec **s, muh_diag *d);

#endif
