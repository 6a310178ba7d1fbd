/*
 * scan_args.h — engine arguments of an engine tree from every kind of
 * definition (argparse, click, dataclasses, pydantic models, TypedDict
 * schemas), for muh scan. Works through the surface's host view (scan_host.h).
 * Internal to libmuh; not installed.
 */
#ifndef MUH_SCAN_ARGS_H
#define MUH_SCAN_ARGS_H

#include <stddef.h>

#include <tree_sitter/api.h>

#include "muh/scan.h"
#include "pyfile.h"

/* Adds one `engine_arg` knob per argument definition found in s's parsed
 * files (not already reported as an engine-argument class field), each with
 * its definition (file:line, how it is defined, type, default, choices) as
 * the first evidence step and a verdict from the reads of its name across
 * the tree (`args.NAME`, `getattr(x, "NAME")`, `x["NAME"]`). Call after the
 * per-file knobs exist and before the deployment files' knobs (which take
 * the verdict of the argument of their name). Returns 0, or -1 when memory
 * ran out (the surface is then still consistent). */
int scan_args_resolve(muh_surface *s);

/* Does scan_args_collect walk the syntax tree of this file (facts pf,
 * source src[0..n))? */
int scan_args_wants(const pyfile *pf, const char *src, size_t n);

/* One file's argument definitions, found in its syntax tree by the parse
 * worker (any thread: it reads only its arguments and allocates strings in
 * arena's arena, which no other thread may use meanwhile); scan_args_resolve
 * merges the files' parts in file order. */
typedef struct scan_args_part scan_args_part;

/* The part of a file with facts pf, source src[0..n) and syntax tree tree,
 * or NULL when it defines no argument (or does not scan_args_wants, or memory
 * ran out: *oom set). The caller leaves test files out unless the scan
 * reports them (scan_options.with_tests). Free with scan_args_part_free. */
scan_args_part *scan_args_collect(muh_surface *arena, const pyfile *pf, const char *src,
                                  size_t n, const TSTree *tree, int *oom);

/* Frees a part (NULL: nothing). */
void scan_args_part_free(scan_args_part *p);

#endif
