/*
 * fileio.h — reading a whole file, the one way the library does it.
 */
#ifndef MUH_FILEIO_H
#define MUH_FILEIO_H

#include <stddef.h>

/* Reads path whole into a malloc'd, NUL-terminated buffer and sets *len
 * (the NUL is not counted). Returns NULL with errno set when the file cannot
 * be read (ENOMEM when memory runs out). Works for pipes and files whose
 * size changes while read. */
char *file_read(const char *path, size_t *len);

#endif
