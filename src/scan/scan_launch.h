/*
 * scan_launch.h — a deployment file's arguments judged by the engine tree's
 * own command-line parser, for muh scan (src/scan/scan_launch.c). Internal to
 * libmuh; not installed.
 */
#ifndef MUH_SCAN_LAUNCH_H
#define MUH_SCAN_LAUNCH_H

#include "muh/deploy.h"
#include "muh/scan.h"

typedef struct scan_launch scan_launch;

/* What the tree's parser accepts, read from s's parsed files (not tests):
 * every add_argument option string, the parse_args() sites, the names
 * registered with @X.register_module(...) / @X.register(...), and the checks
 * `args.DEST not in Y`. NULL when out of memory. Free with scan_launch_free. */
scan_launch *scan_launch_new(muh_surface *s);
void scan_launch_free(scan_launch *L);

/* At most this many evidence steps per judged argument. */
#define SCAN_LAUNCH_STEPS 6

/* Judges one server argument a of the deployment file df:
 *   SCAN_BLOCKER  the program is the tree's (python -m MOD, a script of the
 *                 tree, or its top-level package's command), the tree parses
 *                 with parse_args() (which exits on unrecognized arguments),
 *                 and no add_argument defines a's flag (nor a longer flag it
 *                 abbreviates, nor a dataclass field where flags are computed);
 *   SCAN_UNSAFE   a's value is not among the values the parser's choices=
 *                 or a registry that the tree checks it against accepts
 *                 (*unsafe: "not in ('a', 'b')").
 * Returns 1 with *v, *why, *unsafe (NULL for a blocker) and up to
 * SCAN_LAUNCH_STEPS steps (the parser's or the registry's file:line first)
 * when it decides; 0 when it has nothing to say (the caller's verdict
 * stands). Strings are the surface's. */
int scan_launch_judge(scan_launch *L, const deploy_file *df, const deploy_arg *a,
                      enum scan_verdict *v, const char **why, const char **unsafe,
                      scan_step *steps, int *nsteps);

#endif
