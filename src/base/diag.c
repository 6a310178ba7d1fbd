/*
 * diag.c — diagnostics for what the user wrote (see diag.h).
 *
 * Owns: filling and printing struct muh_diag. Works when memory is short: a
 * message too long for its buffer is cut at a word with "... (N more
 * characters)" (textcut.h, which formats it whole on the heap when it can,
 * and cuts what fitted when it cannot); a long source line is truncated.
 * A diagnostic is built in a fixed buffer and written with one write(2), so a
 * caret far out on a 10 MB line costs one write, not one per byte; the caret
 * stands at most one past the copied source line.
 */
#include <errno.h>
#include <stdarg.h>
#include <string.h>
#include <unistd.h>

#include "muh/diag.h"
#include "muh/fileio.h"
#include "muh/muh.h"
#include "textcut.h"
#include "textfmt.h"

void diag_clear(muh_diag *d)
{
	if (!d)
		return;
	memset(d, 0, sizeof(*d));
}

int diag_is_set(const muh_diag *d)
{
	return d && d->msg[0] != '\0';
}

int diag_errorf(muh_diag *d, const char *fmt, ...)
{
	if (!d)
		return MUH_EINPUT;
	va_list ap;
	va_start(ap, fmt);
	text_vfmt(d->msg, sizeof(d->msg), fmt, ap);
	va_end(ap);
	return MUH_EINPUT;
}

/* Copies line number `line` (1-based) of text into buf, without the line end. */
static void copy_line(char *buf, size_t n, const char *text, int line)
{
	buf[0] = '\0';
	if (!text || line < 1)
		return;
	const char *p = text;
	for (int l = 1; l < line && p; l++) {
		p = strchr(p, '\n');
		if (p)
			p++;
	}
	if (!p)
		return;
	size_t len = strcspn(p, "\r\n");
	if (len >= n)
		len = n - 1;
	memcpy(buf, p, len);
	buf[len] = '\0';
}

void diag_at(muh_diag *d, const char *file, int line, int col, const char *text)
{
	if (!d)
		return;
	if (file)
		snprintf(d->file, sizeof(d->file), "%s", file);
	d->line = line;
	d->col = col;
	if (text)
		copy_line(d->src, sizeof(d->src), text, line);
}

void diag_rebase(muh_diag *d, const char *file, int line0, int col0, const char *text)
{
	if (!d)
		return;
	int line = d->line > 0 ? d->line : 1;
	int col = d->col > 0 ? d->col : 1;
	int nline = line0 + (line - 1);
	int ncol = line == 1 ? col0 + (col - 1) : col;
	diag_at(d, file, nline, ncol, text);
}

void diag_print(FILE *f, const char *who, const muh_diag *d)
{
	if (!d)
		return;
	/* header + source line + caret line: each part is bounded by the struct */
	char out[MUH_DIAG_PATH + MUH_DIAG_MSG + 2 * MUH_DIAG_LINE + 64];
	size_t n = 0;
	if (d->file[0] && d->line > 0)
		text_appendf(out, sizeof(out), &n, "%s:%d:%d: error: %s\n", d->file, d->line, d->col > 0 ? d->col : 1,
			     d->msg);
	else if (d->file[0])
		text_appendf(out, sizeof(out), &n, "%s: error: %s\n", d->file, d->msg);
	else /* no file: the error is the command's (who), never a bare "error:" */
		text_appendf(out, sizeof(out), &n, "%s: %s\n", who && *who ? who : "muh", d->msg);
	if (d->src[0] && d->line > 0) {
		text_appendf(out, sizeof(out), &n, "  %s\n  ", d->src);
		/* keep tabs so the caret lines up under tab-indented text; a
		 * column past the copied text puts the caret just after it */
		size_t col = d->col > 0 ? (size_t)d->col : 1, srclen = strlen(d->src);
		if (col > srclen + 1)
			col = srclen + 1;
		for (size_t i = 0; i + 1 < col && n + 1 < sizeof(out); i++)
			out[n++] = d->src[i] == '\t' ? '\t' : ' ';
		text_appendf(out, sizeof(out), &n, "^\n");
	}
	if (n >= sizeof(out)) { /* truncated: still end with a newline */
		n = sizeof(out) - 1;
		out[n - 1] = '\n';
	}
	/* one write(2) for the whole message: what f holds goes first, then the
	 * message past f's buffer (stderr is line-buffered: fwrite would write
	 * each line on its own); a FILE without a descriptor takes fwrite */
	int fd = fflush(f) == 0 ? fileno(f) : -1;
	size_t done = 0;
	while (fd >= 0 && done < n) {
		ssize_t w = write(fd, out + done, n - done);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			break;
		done += (size_t)w;
	}
	if (fd < 0)
		fwrite(out, 1, n, f);
}

char *diag_file_read(const char *path, size_t *len, const char *what, muh_diag *d)
{
	char *text = file_read(path, len);
	if (!text) {
		int e = errno;
		diag_at(d, path, 0, 0, NULL);
		diag_errorf(d, "cannot read the %s: %s", what, strerror(e));
		errno = e;
	}
	return text;
}

void diag_linecol(const char *text, size_t pos, int *line, int *col)
{
	int l = 1;
	size_t start = 0;
	for (size_t i = 0; i < pos && text[i]; i++)
		if (text[i] == '\n') {
			l++;
			start = i + 1;
		}
	*line = l;
	*col = (int)(pos - start) + 1;
}
