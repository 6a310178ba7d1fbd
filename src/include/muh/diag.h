/*
 * diag.h — diagnostics: where in what the user wrote something is wrong.
 *
 * A muh_diag carries file, line, column (1-based), a message and a copy of the
 * offending source line, so it can be printed as
 *
 *     spec.yaml:7:14: error: unknown name 'BLOCKM'; known: BLOCK_M, BLOCK_N
 *       - BLOCK_M * BLOCKM <= 4096
 *                   ^
 *
 * Modules that parse text fill one; only the CLI prints it.
 */
#ifndef MUH_DIAG_H
#define MUH_DIAG_H

#include <stdio.h>

#include "muh/api.h"

MUH_BEGIN_DECLS

#define MUH_DIAG_MSG 1024
#define MUH_DIAG_LINE 512
#define MUH_DIAG_PATH 512

typedef struct muh_diag {
	char file[MUH_DIAG_PATH]; /* "" when the input has no file */
	int line;                 /* 1-based; 0 when unknown */
	int col;                  /* 1-based; 0 when unknown */
	char msg[MUH_DIAG_MSG];
	char src[MUH_DIAG_LINE]; /* the source line, without its newline; "" if unknown */
} muh_diag;

/* Clears d so that diag_is_set(d) is false. */
void diag_clear(muh_diag *d);

/* True when d holds an error. */
int diag_is_set(const muh_diag *d);

/* Sets the message (printf-style); keeps file/line/col. Returns MUH_EINPUT so
 * callers can `return diag_errorf(d, ...)`. d may be NULL. */
int diag_errorf(muh_diag *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Sets the location: file (may be NULL), line, col, and the source line taken
 * from text (the whole input, NUL-terminated; may be NULL). */
void diag_at(muh_diag *d, const char *file, int line, int col, const char *text);

/* Reads the file path whole, as file_read does (fileio.h); on failure
 * NULL, with d at path saying "cannot read the <what>: <why>" and errno
 * as file_read left it. */
char *diag_file_read(const char *path, size_t *len, const char *what, muh_diag *d);

/* Shifts a diagnostic produced on a substring (e.g. an expression taken from a
 * YAML scalar) to its place in the file: line/col become line0 + (line-1) and,
 * on the first line, col0 + (col-1). text is the whole file for the source line. */
void diag_rebase(muh_diag *d, const char *file, int line0, int col0, const char *text);

/* Line and column (1-based) of byte offset pos in text. Only '\n' ends a
 * line, so CRLF files count right (libfyaml's own line numbers count '\r'
 * too). Columns count bytes. */
void diag_linecol(const char *text, size_t pos, int *line, int *col);

/* Prints "file:line:col: error: msg" ("file: error: msg" without a line),
 * then the source line and a caret. A diagnostic without a file is said as
 * who's ("muh patch: msg"; who NULL: "muh: msg"): every error names what it
 * is about, the file or the command. */
void diag_print(FILE *f, const char *who, const muh_diag *d);

/* ---- did you mean (diag_near.c) ----
 * The nearest known name to an unknown one, by one rule for every error
 * that names an unknown name: case-insensitive edit distance, an adjacent
 * swap counting one, at most 2 (the first of equals). */

/* The edit distance between a[0..la) and b[0..lb) (99 when either is
 * longer than 63 bytes). */
int diag_near_distance(const char *a, size_t la, const char *b, size_t lb);

/* Offer each known name in turn; n->name ends as the nearest one within
 * distance 2, or NULL. Start from DIAG_NEAR_INIT. A NULL name is skipped. */
typedef struct diag_near {
	const char *name;
	int dist;
} diag_near;
#define DIAG_NEAR_INIT {NULL, 3}
void diag_near_offer(diag_near *n, const char *word, size_t len, const char *name);

/* The nearest of names (a NULL-terminated list) to word[0..len), or NULL. */
const char *diag_near_among(const char *word, size_t len, const char *const *names);

/* The hint an error puts after the unknown name: " (did you mean 'NAME'?)"
 * in buf (size bytes), or "" when name is NULL or does not fit. Returns
 * buf. */
const char *diag_near_hint(const char *name, char *buf, size_t size);

MUH_END_DECLS

#endif
