/*
 * scan_env.h — environment variables of an engine tree, resolved through the
 * engine's own registry (vLLM's envs.py), for muh scan.
 *
 * scan_env_collect(), called by scan.c's parse workers on each file's syntax
 * tree, finds the registries and the reads of one file; scan_env_resolve(),
 * in src/scan/scan_env.c, merges the files' finds, makes one `env` knob per
 * variable and gives deployment-file env entries their verdicts, working
 * through the surface's host view (src/scan/scan_host.h); the syntax-tree
 * walks below are shared with scan_args.c.
 * Internal to libmuh; not installed.
 */
#ifndef MUH_SCAN_ENV_H
#define MUH_SCAN_ENV_H

#include <stddef.h>
#include <stdint.h>

#include <tree_sitter/api.h>

#include "muh/scan.h"
#include "pyfile.h"
#include "scan_host.h"

/* The kind of an environment-variable knob, as written in output. */
#define SCAN_ENV_KIND "env"

/* Adds one SCAN_ENV_KIND knob per variable of every environment registry in
 * s's parsed files (verdicts from the reads of the variable elsewhere in the
 * tree), drops the registry module's own declarations of those names (the
 * `if TYPE_CHECKING:` constants the env knob replaces), and rewrites the
 * verdict, why and evidence of each deployment-file env entry from the
 * registry and the reads. Call once, after every other knob exists. Returns
 * 0, or -1 when memory ran out (the surface is then still consistent). */
int scan_env_resolve(muh_surface *s);

/* Does scan_env_collect walk the syntax tree of this source (it mentions
 * getenv or environ)? */
int scan_env_wants(const char *src, size_t n);

/* One file's environment registries and environment reads, found in its
 * syntax tree by the parse worker (any thread: it reads only its arguments
 * and allocates strings in arena's arena, which no other thread may use
 * meanwhile); scan_env_resolve merges the files' parts in file order and
 * classifies the reads. */
typedef struct scan_env_part scan_env_part;

/* The part of a file with facts pf, source src[0..n) and syntax tree tree
 * (is_test: a test file, whose registries are not knobs), or NULL when the
 * file has no registry and no read (or the source does not scan_env_wants,
 * or memory ran out: *oom set). Free with scan_env_part_free. */
scan_env_part *scan_env_collect(muh_surface *arena, const pyfile *pf, int is_test,
                                const char *src, size_t n, const TSTree *tree, int *oom);

/* Frees a part (NULL: nothing). */
void scan_env_part_free(scan_env_part *p);

/* The verdict of a definition whose best reader is of class c: live,
 * unknown, platform, or dead (tests only, unreachable, none). */
enum scan_verdict scan_env_class_verdict(enum scan_env_reader c);

/* ---- syntax-tree walks, shared with scan_args.c (defined in scan_env.c) -- */

/* The innermost scope of pf (function or class) whose span holds byte, or -1
 * (module level); shared with scan_args.c. */
int scan_innermost_scope(const pyfile *pf, uint32_t byte);

#endif
