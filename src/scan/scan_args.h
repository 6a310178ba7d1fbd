/*
 * scan_args.h — engine arguments of an engine tree from every kind of
 * definition (argparse, click, dataclasses, pydantic models, TypedDict
 * schemas), for muh scan. Works through the surface's host view (scan_host.h).
 * Internal to libmuh; not installed.
 */
#ifndef MUH_SCAN_ARGS_H
#define MUH_SCAN_ARGS_H

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

/* Does scan_args_resolve walk the syntax tree of this file (facts pf,
 * source src[0..n))? scan.c keeps the parse's tree for such a file. */
int scan_args_wants(const pyfile *pf, const char *src, size_t n);

#endif
