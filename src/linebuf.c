/*
 * linebuf.c — lines from a raw file descriptor (see linebuf.h).
 */
#include "linebuf.h"

#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "muh/eval.h"

char *lb_take(linebuf *lb)
{
	char *nl = lb->len ? memchr(lb->buf, '\n', lb->len) : NULL;
	if (!nl)
		return NULL;
	size_t n = (size_t)(nl - lb->buf);
	char *line = malloc(n + 1);
	if (!line)
		return NULL;
	memcpy(line, lb->buf, n);
	line[n] = '\0';
	memmove(lb->buf, nl + 1, lb->len - n - 1);
	lb->len -= n + 1;
	return line;
}

ssize_t lb_fill(linebuf *lb, int fd, int retry)
{
	if (lb->cap - lb->len < 4096) {
		size_t nc = lb->cap ? lb->cap * 2 : 8192;
		char *nb = realloc(lb->buf, nc);
		if (!nb) {
			errno = ENOMEM;
			return -1;
		}
		lb->buf = nb;
		lb->cap = nc;
	}
	ssize_t r;
	do
		r = read(fd, lb->buf + lb->len, lb->cap - lb->len);
	while (r < 0 && errno == EINTR && retry);
	if (r > 0)
		lb->len += (size_t)r;
	return r;
}

char *lb_read_line(linebuf *lb, int fd, double deadline, const volatile sig_atomic_t *stop, enum lb_end *end)
{
	for (;;) {
		char *line = lb_take(lb);
		if (line)
			return line;
		if (lb->len && memchr(lb->buf, '\n', lb->len)) {
			*end = LB_NOMEM; /* a whole line is there: lb_take could not copy it */
			return NULL;
		}
		if (stop && *stop) {
			*end = LB_INTERRUPTED;
			return NULL;
		}
		double left = deadline - eval_now_s();
		if (left <= 0) {
			*end = LB_LATE;
			return NULL;
		}
		struct pollfd p = {.fd = fd, .events = POLLIN};
		int pr = poll(&p, 1, left > 1 ? 1000 : (int)(left * 1000) + 1);
		if (pr < 0 && errno == EINTR && stop) {
			*end = LB_INTERRUPTED;
			return NULL;
		}
		if (pr <= 0)
			continue;
		ssize_t k = lb_fill(lb, fd, stop == NULL);
		if (k < 0 && errno == EINTR) {
			*end = LB_INTERRUPTED;
			return NULL;
		}
		if (k <= 0) {
			*end = k < 0 && errno == ENOMEM ? LB_NOMEM : LB_EOF;
			return NULL;
		}
	}
}

void lb_free(linebuf *lb)
{
	free(lb->buf);
	lb->buf = NULL;
	lb->len = lb->cap = 0;
}
