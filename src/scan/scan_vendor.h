/*
 * scan_vendor.h — vendored-code detection and path globs for muh scan's
 * walk (src/scan/scan_vendor.c). Internal to libmuh; not installed.
 */
#ifndef MUH_SCAN_VENDOR_H
#define MUH_SCAN_VENDOR_H

#include <stddef.h>

/* Is the relative path rel (a file or a directory) vendored third-party
 * code, by its components' names? 1 with the vendoring component's path
 * (`vllm/third_party/`, or the file `vllm/pynvml.py`) in dir; else 0. */
int scan_vendored(const char *rel, int is_dir, char *dir, size_t cap);

/* The index of the first of n fnmatch globs that matches rel, or -1. */
int scan_glob_match(const char *const *globs, int n, const char *rel);

#endif
