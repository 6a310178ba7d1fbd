/*
 * linebuf.c — lines from a raw file descriptor, and the tail of a stream
 * (see linebuf.h).
 *
 * Owns: buffering bytes that a peer (the runner, a worker, a command)
 * writes. Must never hold more than the caller's bound: a line past
 * linebuf.max is refused, a tailbuf keeps its last cap bytes.
 */
#include "linebuf.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "muh/eval.h"
#include "eval_int.h"

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
	if (lb->max && lb->len >= lb->max) {
		errno = EMSGSIZE;
		return -1;
	}
	if (lb->cap - lb->len < 4096) {
		size_t nc = lb->cap ? lb->cap * 2 : 8192;
		if (lb->max && nc > lb->max + 8192)
			nc = lb->max + 8192; /* > cap: cap - len < 4096 and len < max */
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
		if (k < 0 && errno == EMSGSIZE) {
			*end = LB_TOOLONG;
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

/* ---- the tail of a stream ----------------------------------------------- */

void tb_add(tailbuf *tb, const void *data, size_t n)
{
	const char *p = data;
	tb->total += n;
	if (!tb->cap)
		tb->cap = TB_CAP;
	if (!tb->buf && !(tb->buf = malloc(tb->cap)))
		return;
	if (n >= tb->cap) {
		memcpy(tb->buf, p + n - tb->cap, tb->cap);
		tb->len = tb->cap;
		tb->head = 0;
		return;
	}
	while (n) {
		size_t w = tb->len < tb->cap ? tb->len : tb->head;
		size_t k = tb->cap - w < n ? tb->cap - w : n;
		memcpy(tb->buf + w, p, k);
		p += k;
		n -= k;
		if (tb->len < tb->cap) {
			tb->len += k;
			if (tb->len == tb->cap)
				tb->head = 0;
		} else {
			tb->head = (tb->head + k) % tb->cap;
		}
	}
}

void tb_reset(tailbuf *tb)
{
	tb->len = tb->head = 0;
	tb->total = 0;
}

/* Copies the last n held bytes, oldest first, to out. */
static void tb_copy_last(const tailbuf *tb, char *out, size_t n)
{
	size_t skip = tb->len - n, first = tb->len < tb->cap ? 0 : tb->head;
	for (size_t i = 0, j = (first + skip) % (tb->cap ? tb->cap : 1); i < n; i++, j = (j + 1) % tb->cap)
		out[i] = tb->buf[j];
}

char *tb_text(const tailbuf *tb)
{
	if (!tb->total)
		return NULL;
	char note[128] = "";
	size_t len = tb->buf ? tb->len : 0;
	if (tb->total > len)
		snprintf(note, sizeof(note), "[muh: %llu earlier bytes of output dropped; the last %zu follow]\n",
			 tb->total - len, len);
	size_t k = strlen(note);
	char *s = malloc(k + len + 1);
	if (!s)
		return NULL;
	memcpy(s, note, k);
	if (len)
		tb_copy_last(tb, s + k, len);
	text_sanitize(s + k, len);
	s[k + len] = '\0';
	return s;
}

void tb_last(const tailbuf *tb, char *out, size_t n)
{
	size_t len = tb->buf ? tb->len : 0;
	if (n > len)
		n = len;
	if (n)
		tb_copy_last(tb, out, n);
	text_sanitize(out, n);
	out[n] = '\0';
}

void tb_free(tailbuf *tb)
{
	free(tb->buf);
	memset(tb, 0, sizeof(*tb));
}

/* Length of the valid UTF-8 sequence at s[0..n) (lead byte >= 0x80), or 0. */
static size_t utf8_len(const unsigned char *s, size_t n)
{
	size_t k = s[0] >= 0xc2 && s[0] <= 0xdf ? 2 : s[0] >= 0xe0 && s[0] <= 0xef ? 3
		 : s[0] >= 0xf0 && s[0] <= 0xf4 ? 4 : 0;
	if (!k || k > n)
		return 0;
	for (size_t i = 1; i < k; i++)
		if ((s[i] & 0xc0) != 0x80)
			return 0;
	/* overlong forms, surrogates, beyond U+10FFFF */
	if ((s[0] == 0xe0 && s[1] < 0xa0) || (s[0] == 0xed && s[1] > 0x9f) || (s[0] == 0xf0 && s[1] < 0x90) ||
	    (s[0] == 0xf4 && s[1] > 0x8f))
		return 0;
	return k;
}

void text_sanitize(char *s, size_t n)
{
	unsigned char *u = (unsigned char *)s;
	for (size_t i = 0; i < n;) {
		if (u[i] >= 0x80) {
			size_t k = utf8_len(u + i, n - i);
			if (k) {
				i += k;
				continue;
			}
			u[i] = '?';
		} else if ((u[i] < 0x20 && u[i] != '\n' && u[i] != '\t') || u[i] == 0x7f) {
			u[i] = '?';
		}
		i++;
	}
}
