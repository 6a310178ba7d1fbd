/*
 * fileio.c — reading whole files (see fileio.h). Owns nothing else: atomic
 * writes live with their users (patch.c, the CLI), which need the rename.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "muh/fileio.h"

char *file_read(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	size_t cap = 1 << 16, n = 0, r;
	char *b = malloc(cap + 1);
	while (b && (r = fread(b + n, 1, cap - n, f)) > 0) {
		n += r;
		if (n == cap) {
			char *nb = realloc(b, (cap *= 2) + 1);
			if (!nb)
				free(b);
			b = nb;
		}
	}
	int err = ferror(f) ? EIO : 0;
	fclose(f);
	if (!b) {
		errno = ENOMEM;
		return NULL;
	}
	if (err) {
		free(b);
		errno = err;
		return NULL;
	}
	b[n] = '\0';
	*len = n;
	return b;
}
