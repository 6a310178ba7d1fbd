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

/* The one gate of a best that no decision proved (why: best_proof's
 * sentence), about to be written as lead ("run 3", "M=16: run 3"): without
 * force it says "LEAD: no proven gain: WHY; WHAT not written (...)" on ob
 * and returns 0 (what: "its best is"); with force it says "written with
 * --force, NOT a proven gain", and what the decision stage measured of the
 * finalist written, sets *key to it (muh_best.forced_key) and returns 1. */
int writeback_force_gate(const muh_best *b, const char *why, int force, const char *lead, const char *what,
			 const char **key, const writeback_observer *ob);

/* Gives ob one line for a person (printf-style, of any length; ob or its
 * note may be NULL: nothing). */
void writeback_say(const writeback_observer *ob, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The store_run that b was read from (its strings are b's). */
store_run writeback_run_store(const writeback_run *b);

/* The spec of run b as the store kept it, else its file (store_run_spec). */
int writeback_run_spec(const writeback_run *b, muh_spec **s, muh_diag *d);

#endif
