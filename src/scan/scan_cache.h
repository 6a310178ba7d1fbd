/*
 * scan_cache.h — muh scan's cache of whole surfaces, keyed by the hashes of
 * the files scanned (src/scan/scan_cache.c); it fills a surface through
 * src/scan/scan_host.h. Internal to libmuh; not installed.
 */
#ifndef MUH_SCAN_CACHE_H
#define MUH_SCAN_CACHE_H

#include <stddef.h>

#include "muh/scan.h"

/* The cache key of a scan (33 chars with the NUL, hex): the build of libmuh
 * that scans (its file's size, mtime and inode), the options that change the
 * result (with_tests, with_vendored, the globs), and for every path the walk
 * found (the .py files in order, then the .json and .yaml ones) its relative
 * path and the FNV-1a 64 of its bytes. Reads every file. Returns 0, or -1
 * when a file could not be read or memory ran out (no key: do not cache). */
int scan_cache_key(const char *root, const scan_options *opt, char *const *py, size_t npy,
                   char *const *json, size_t njson, char *const *yaml, size_t nyaml,
                   char key[33]);

/* Fills the surface s, which has only its walk yet, with the surface stored
 * under key in the cache file path (knobs, diagnostics, file and byte counts).
 * Returns 1 on a hit, 0 on a miss or when the cache cannot be read (s is then
 * unchanged; scan_cache_status says why), -1 when memory ran out. */
int scan_cache_load(muh_surface *s, const char *path, const char *key);

/* Stores s under key (keeping the 8 newest surfaces). A cache that cannot
 * be written is not an error of the scan: scan_cache_status says why. */
void scan_cache_store(muh_surface *s, const char *path, const char *key);

#endif
