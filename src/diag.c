/*
 * diag.c — diagnostics for what the user wrote (see diag.h).
 *
 * Owns: filling and printing struct muh_diag. Never allocates, so it works
 * when memory is short; long messages and lines are truncated, not dropped.
 */
#include <stdarg.h>
#include <string.h>

#include "muh/diag.h"
#include "muh/muh.h"

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
	vsnprintf(d->msg, sizeof(d->msg), fmt, ap);
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

void diag_print(FILE *f, const muh_diag *d)
{
	if (!d)
		return;
	if (d->file[0] && d->line > 0)
		fprintf(f, "%s:%d:%d: error: %s\n", d->file, d->line, d->col > 0 ? d->col : 1,
			d->msg);
	else if (d->file[0])
		fprintf(f, "%s: error: %s\n", d->file, d->msg);
	else
		fprintf(f, "error: %s\n", d->msg);
	if (d->src[0] && d->line > 0) {
		fprintf(f, "  %s\n  ", d->src);
		/* keep tabs so the caret lines up under tab-indented text */
		int col = d->col > 0 ? d->col : 1;
		size_t srclen = strlen(d->src);
		for (int i = 0; i < col - 1; i++)
			fputc((size_t)i < srclen && d->src[i] == '\t' ? '\t' : ' ', f);
		fputs("^\n", f);
	}
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
