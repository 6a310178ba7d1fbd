/*
 * linebuf.h — lines from a raw file descriptor (internal).
 *
 * The evaluator reads its runner's JSON lines from a socket, and the worker
 * backend's batch prepare reads a worker's from a pipe, both under a
 * deadline with poll(): stdio's buffer would hide a line that arrived in the
 * same read as the one before it, so both read raw bytes into a linebuf and
 * take whole lines out of it (lb_read_line). A linebuf with a max refuses a
 * line longer than that (LB_TOOLONG), so that a peer that never ends its line
 * cannot grow muh without bound.
 *
 * A tailbuf keeps the last `cap` bytes of a byte stream that may be far
 * longer (a kernel's output, a command's output), counting what it dropped;
 * tb_text gives it back as text that is safe in JSON and on a terminal.
 */
#ifndef MUH_LINEBUF_H
#define MUH_LINEBUF_H

#include <signal.h>
#include <stddef.h>
#include <sys/types.h>

typedef struct linebuf {
	char *buf;
	size_t len, cap;
	size_t max; /* 0: no limit; else a line (without '\n') may be at most this long */
} linebuf;

/* A malloc'd line (without its '\n') when one is complete in lb, else NULL
 * (also when out of memory). */
char *lb_take(linebuf *lb);

/* Reads what fd has into lb (one read). Returns the bytes read, 0 at EOF, -1
 * on error with errno set; with retry, a read interrupted by a signal is
 * tried again, without it the caller sees -1 and EINTR. With lb->max set and
 * max bytes held without a '\n', reads nothing and fails with EMSGSIZE: lb
 * never holds much more than max + 8 KiB. */
ssize_t lb_fill(linebuf *lb, int fd, int retry);

/* Why lb_read_line returned no line. */
enum lb_end { LB_LATE = 1, LB_EOF, LB_INTERRUPTED, LB_NOMEM, LB_TOOLONG };

/* The next line of fd (malloc'd, without its '\n') if it arrives before
 * deadline (eval_now_s() seconds); NULL with *end set otherwise. With stop
 * (may be NULL) a signal (EINTR) or *stop set ends the wait as
 * LB_INTERRUPTED, seen within a second; without it signals are ridden out. */
char *lb_read_line(linebuf *lb, int fd, double deadline, const volatile sig_atomic_t *stop, enum lb_end *end);

/* Frees lb's buffer; lb is empty again (max is kept). */
void lb_free(linebuf *lb);

/* The last cap bytes of a stream, and how many bytes it had in all. Zero
 * it, then set cap (0 takes TB_CAP); the buffer is allocated on first use. */
typedef struct tailbuf {
	char *buf;
	size_t cap;
	size_t len;            /* bytes held, <= cap */
	size_t head;           /* where the oldest held byte is, when len == cap */
	unsigned long long total; /* bytes added since the last reset */
} tailbuf;
#define TB_CAP (64 * 1024)

/* Adds n bytes; only the last cap are kept. Out of memory: counted, not kept. */
void tb_add(tailbuf *tb, const void *p, size_t n);
/* Forgets what was added (keeps the buffer). */
void tb_reset(tailbuf *tb);
/* What is held, as malloc'd text: a note "[muh: N earlier bytes dropped]"
 * first when bytes were dropped, then the bytes with NUL, other control
 * characters (but \n and \t) and invalid UTF-8 each shown as '?'. NULL
 * when nothing was added or out of memory. */
char *tb_text(const tailbuf *tb);
/* The last (at most) n bytes held, made safe as tb_text's, into out (size
 * n + 1, NUL-terminated), without the note. */
void tb_last(const tailbuf *tb, char *out, size_t n);
void tb_free(tailbuf *tb);

/* Makes s[0..n) safe text in place: NUL and control bytes (but \n, \t) and
 * bytes of invalid UTF-8 become '?'. */
void text_sanitize(char *s, size_t n);

#endif
