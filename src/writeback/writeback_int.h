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

/* The sizes or runs a write-back leaves out for want of a proven gain,
 * gathered so that each reason is said once, on one line that lists them
 * all (writeback_left_say). one/many: what is not written, said of one
 * ("this size is", "its best is") and of several ("these sizes are",
 * "their bests are"). */
struct writeback_left_one;
typedef struct writeback_left {
	const char *one, *many;
	struct writeback_left_one *e;
	size_t n, cap;
} writeback_left;
#define WRITEBACK_LEFT_INIT(one, many) {(one), (many), NULL, 0, 0}

/* Records that size (M; -1 for a run with none) of run is left out or
 * kept: "no proven gain: WHY; TAIL" (tail_one said of one, tail_many of
 * several). Said at once on ob instead when memory runs out: a line is
 * never lost. */
void writeback_left_add(writeback_left *L, long long size, int64_t run, const char *why, const char *tail_one,
			const char *tail_many, const writeback_observer *ob);

/* Says on ob one line per reason recorded in L, in the order each reason
 * first came: "M=1,16,64 (runs 3-5): no proven gain: WHY; these sizes
 * are not written (...)", or with one entry "M=16: run 4: ..." ("run 3:
 * ..." without sizes), then empties L (writeback_left_free). */
void writeback_left_say(writeback_left *L, const writeback_observer *ob);
void writeback_left_free(writeback_left *L);

/* The one gate of a best that no decision proved (why: best_proof's
 * sentence) of run, at batch size size (-1: none), about to be written:
 * without force it records "no proven gain: WHY; WHAT not written (...)"
 * in left (said later, once per reason: writeback_left_say) and returns
 * 0; with force it says "LEAD: written with --force, NOT a proven gain"
 * (LEAD: "M=16: run 4", "run 3") and what the decision stage measured of
 * the finalist written, sets *key to it (muh_best.forced_key) and
 * returns 1. */
int writeback_force_gate(const muh_best *b, const char *why, int force, long long size, int64_t run,
			 const char **key, writeback_left *left, const writeback_observer *ob);

/* Gives ob one line for a person (printf-style, of any length; ob or its
 * note may be NULL: nothing). */
void writeback_say(const writeback_observer *ob, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The store_run that b was read from (its strings are b's). */
store_run writeback_run_store(const writeback_run *b);

/* The spec of run b as the store kept it, else its file (store_run_spec). */
int writeback_run_spec(const writeback_run *b, muh_spec **s, muh_diag *d);

#endif
