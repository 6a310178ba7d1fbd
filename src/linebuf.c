/*
 * linebuf.c — lines from a raw file descriptor (see linebuf.h).
 */
#include "linebuf.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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

void lb_free(linebuf *lb)
{
	free(lb->buf);
	lb->buf = NULL;
	lb->len = lb->cap = 0;
}
