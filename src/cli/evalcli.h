/*
 * evalcli.h — what muh tune, muh eval, muh verify and muh space share (see
 * evalcli.c): --problem, a space build's progress and Ctrl-C's words;
 * their errors are cli_fail's (cli.h).
 */
#ifndef MUH_EVALCLI_H
#define MUH_EVALCLI_H

#include <cjson/cJSON.h>

#include "cli.h"
#include "muh/eval.h"
#include "muh/session.h"
#include "muh/store.h"

/* The options every command over a session shares: --hw, --problem,
 * --jobs, --json. EVALCLI_OPTIONS goes in the command's getopt_long table;
 * evalcli_option handles them. */
#define EVALCLI_OPTIONS                                                                                   \
	{"json", no_argument, NULL, 'j'}, {"hw", required_argument, NULL, 'w'},                          \
	    {"problem", required_argument, NULL, 'P'}, {"jobs", required_argument, NULL, 'J'}
struct evalcli_opts {
	muh_session_opts so;
	const char *problem; /* the --problem text ("0" when not given) */
	int json, has_jobs;
	size_t nth; /* evalcli_each_problem: 0 for the first instance, 1 for the next ... */
};
/* Handles option c (with its argument) when it is one of EVALCLI_OPTIONS:
 * returns 0; an exit code when its value is wrong, or when c is none of
 * them (cli_bad_option over argv and the command's table opts), having said
 * why: the default case of a command's getopt loop. */
struct option;
int evalcli_option(const char *cmd, int c, const char *arg, char **argv, const struct option *opts,
		   struct evalcli_opts *o);

/* The rest of a session command's run, after its options: one SPEC
 * argument, the instances --problem names, and one(path, o with
 * o->so.instance set, ctx) for each; stops at the first usage or
 * environment error. Returns the worst exit code. */
int evalcli_each_problem(const char *cmd, int argc, char **argv, struct evalcli_opts *o,
			 int (*one)(const char *path, const struct evalcli_opts *o, const void *ctx), const void *ctx);

/* The problem instances --problem TEXT names in the spec at path
 * (session_parse_problem): their count, with *out malloc'd; or minus an
 * exit code, having printed why. */
long evalcli_problems(const char *cmd, const char *path, const char *text, size_t **out);
/* Opens (session_open + session_start) a session for cmd; prints the
 * error and returns an exit code otherwise. */
int evalcli_session(const char *cmd, const char *path, const muh_session_opts *o, muh_session **s);

/* While a space is built (space_build, inside session_open): after 2 s a
 * progress line on stderr when it is a terminal, and *stop (set by the
 * command's SIGINT handler) ends the build. cmd names the command. Off again
 * with evalcli_space_progress(NULL, NULL). */
#include <signal.h>
void evalcli_space_progress(const char *cmd, volatile sig_atomic_t *stop);

/* What a Ctrl-C stops, said at once by the command's SIGINT handler
 * (cli_ctrl_c_say, async-signal-safe: one write to stderr): "muh CMD:
 * stopping (Ctrl-C): the variant in flight is given up and its server
 * stopped; KEPT (Ctrl-C again kills muh)", its runner rather than its
 * server for a backend other than engine, the work in flight while the
 * backend is not known (NULL). Set it (outside the handler) when the
 * backend becomes known. */
void evalcli_ctrl_c_text(const char *cmd, const char *backend, const char *kept);

/* Clears *flag and installs a SIGINT handler that sets it and says the
 * line (cli_ctrl_c_say), after which a second Ctrl-C kills. Returns the
 * handler it replaced (for signal(SIGINT, ...) when done). */
void (*evalcli_stop_on_ctrl_c(volatile sig_atomic_t *flag))(int);

#endif
