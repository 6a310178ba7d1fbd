/*
 * linebuf.h — lines from a raw file descriptor (internal).
 *
 * The evaluator reads its runner's JSON lines from a socket, and the worker
 * backend's batch prepare reads a worker's from a pipe, both under a
 * deadline with poll(): stdio's buffer would hide a line that arrived in the
 * same read as the one before it, so both read raw bytes into a linebuf and
 * take whole lines out of it (lb_read_line).
 */
#ifndef MUH_LINEBUF_H
#define MUH_LINEBUF_H

#include <signal.h>
#include <stddef.h>
#include <sys/types.h>

typedef struct linebuf {
	char *buf;
	size_t len, cap;
} linebuf;

/* A malloc'd line (without its '\n') when one is complete in lb, else NULL
 * (also when out of memory). */
char *lb_take(linebuf *lb);

/* Reads what fd has into lb (one read). Returns the bytes read, 0 at EOF, -1
 * on error with errno set; with retry, a read interrupted by a signal is
 * tried again, without it the caller sees -1 and EINTR. */
ssize_t lb_fill(linebuf *lb, int fd, int retry);

/* Why lb_read_line returned no line. */
enum lb_end { LB_LATE = 1, LB_EOF, LB_INTERRUPTED, LB_NOMEM };

/* The next line of fd (malloc'd, without its '\n') if it arrives before
 * deadline (eval_now_s() seconds); NULL with *end set otherwise. With stop
 * (may be NULL) a signal (EINTR) or *stop set ends the wait as
 * LB_INTERRUPTED, seen within a second; without it signals are ridden out. */
char *lb_read_line(linebuf *lb, int fd, double deadline, const volatile sig_atomic_t *stop, enum lb_end *end);

/* Frees lb's buffer; lb is empty again. */
void lb_free(linebuf *lb);

#endif
