/*
 * textout.h — where libmuh's text for a person goes (internal to libmuh).
 *
 * libmuh renders what a command shows (tables, summaries, notes) but
 * never prints: it hands the text to a textout, two streams of it, results
 * (TEXTOUT_RESULT: the muh program's stdout) and notes (TEXTOUT_NOTE: its
 * stderr). The muh program writes them to its stdout and stderr; an engine
 * embedding libmuh may log them, keep them, or drop them. A NULL write
 * drops everything. Pieces arrive in order, each whole lines or the part
 * of a line written so far; a flush says the text so far should be shown
 * now (a line before a long wait).
 *
 * The number formats every table shares live here too: times for a
 * person, counts with thousands separators.
 */
#ifndef MUH_TEXTOUT_H
#define MUH_TEXTOUT_H

#include <stddef.h>

#include "muh/api.h"

MUH_BEGIN_DECLS

enum { TEXTOUT_RESULT = 1, TEXTOUT_NOTE = 2 };

typedef struct textout {
	/* text NULL: flush that stream */
	void (*write)(void *ctx, int stream, const char *text);
	void *ctx;
} textout;

/* printf-style text (any length) to stream of o; nothing when o or its
 * write is NULL, or when out of memory. */
void textout_printf(const textout *o, int stream, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* The string text, as it is. */
void textout_str(const textout *o, int stream, const char *text);
/* Asks that the text of stream so far be shown now. */
void textout_flush(const textout *o, int stream);

/* j as JSON (indented when pretty, else on one line) and a newline to o's
 * results, nothing when out of memory; then deletes j. */
struct cJSON;
void textout_json(const textout *o, struct cJSON *j, int pretty);

/* A time for a person, the one format of every time muh shows: "-" when
 * not finite, else in ns, us, ms or s (the unit that puts it in [1, 1000))
 * to 4 significant digits: "12.50 ns", "36.70 us", "574.1 us", "1.170 ms",
 * "12.35 ms", "2.500 s" (from 1000 s on, whole seconds). */
void text_time(char *buf, size_t n, double s);

/* A count with thousands separators ("1,920"); %.3g from 1e18 up.
 * Returns buf. */
const char *text_count(char *buf, size_t n, double v);

MUH_END_DECLS

#endif
