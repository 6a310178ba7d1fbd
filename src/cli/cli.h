/*
 * cli.h — what every subcommand file (src/cli/cmd_<name>.c) provides and may
 * use. The CLI is a thin skin: parse options with getopt_long, call libmuh,
 * print. Tables for people, --json for programs, progress on stderr only
 * when it is a terminal.
 *
 * A subcommand file defines exactly one command, with
 *     MUH_COMMAND(<name>, order, "summary");
 * (its `help` text and `run` function are the file's statics). CMake finds
 * the file and adds it to the command table; nothing else needs editing to
 * add a command.
 */
#ifndef MUH_CLI_H
#define MUH_CLI_H

#include <stdint.h>
#include <stdio.h>

#include "muh/muh.h"
#include "muh/textout.h"

/* Exit codes, documented in `muh --help` and README.md. */
enum {
	EXIT_OK = 0,
	EXIT_FINDING = 1,
	EXIT_USAGE = 2,
	EXIT_ENV = 3,
	EXIT_INTERRUPTED = 130, /* Ctrl-C, after saving what was finished (128 + SIGINT) */
};

struct muh_command {
	const char *name;
	int order;           /* position in `muh --help` */
	const char *summary; /* one line */
	const char *help;    /* the full text of `muh help <name>` */
	int (*run)(int argc, char **argv); /* argv[0] is the command name */
};

/* Defines muh_cmd_<cmd>, the command called "<cmd>" (its file is
 * src/cli/cmd_<cmd>.c), at position ord in `muh --help`, with one line of
 * summary and the file's static `help` text and `run` function. */
#define MUH_COMMAND(cmd, ord, sum)                                                                       \
	const struct muh_command muh_cmd_##cmd = {                                                        \
		.name = #cmd, .order = (ord), .summary = (sum), .help = help, .run = run}

/* Prints the command's help to f. */
void cli_help(FILE *f, const struct muh_command *c);

/* Prints "muh <cmd>: <msg>" and a hint to see `muh help <cmd>` (stdout
 * flushed first, so that it comes after the results printed before it);
 * returns EXIT_USAGE. */
int cli_usage_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The default case of every subcommand's getopt_long loop (main.c sets
 * opterr = 0, so getopt prints nothing itself): says what was wrong with the
 * option just read, from argv, optind, optopt and the command's table opts:
 * "--budget needs a value", "--json takes no value", "'--frob' is not an
 * option" or "'--b' is ambiguous". Returns EXIT_USAGE. */
struct option;
int cli_bad_option(const char *cmd, char **argv, const struct option *opts);

/* One option of a command's table for cli_parse_opts: where its value goes.
 *   CLI_FLAG   no value; the int at `to` becomes 1
 *   CLI_STR    the const char * at `to` becomes the value; with `expected`,
 *              an empty value is refused ("--cache: expected a file")
 *   CLI_UINT   a decimal number in [lo, hi] into the uint64_t at `to`;
 *              anything else: "--jobs 99: expected 1 to 16" (expected says)
 *   CLI_LIST   appended to the struct cli_list at `to` (at most its max);
 *              with `expected`, an empty value is refused
 *   CLI_OTHER  handed to the table's callback (validation of its own)
 *   CLI_ACTION no value; the callback is called with NULL (--help)
 * short_name (0: none) also accepts -X. */
enum cli_kind { CLI_FLAG, CLI_STR, CLI_UINT, CLI_LIST, CLI_OTHER, CLI_ACTION };
struct cli_list {
	const char **v;
	int n, max;
};
struct cli_opt {
	const char *name;
	enum cli_kind kind;
	void *to;
	char short_name;
	uint64_t lo, hi;      /* CLI_UINT */
	const char *expected; /* what the refusal says was expected */
};

/* A table entry: CLI_OPT("jobs", CLI_UINT, &jobs, .lo = 1, .hi = 16,
 * .expected = "1 to 16"); the table ends with CLI_END. */
#define CLI_OPT(n, k, p, ...) {.name = (n), .kind = (k), .to = (p), __VA_ARGS__}
#define CLI_END {.name = NULL}

/* Parses argv's options (argv[0] the command cmd) with getopt_long by the
 * table t (ended by a NULL name), from argv[1]; *first is then the index of
 * the first operand. CLI_OTHER and CLI_ACTION options go to other(ctx,
 * index in t, value or NULL), which returns 0 or an exit code (-1: stop
 * here, and return 0 with *first = -1: the callback answered, e.g. --help). Returns 0, or the exit code of a usage
 * error it printed (cli_bad_option's words for an unknown option). */
int cli_parse_opts(const char *cmd, int argc, char **argv, const struct cli_opt *t,
		   int (*other)(void *ctx, int i, const char *value), void *ctx, int *first);

/* Maps a library status to an exit code. */
int cli_exit(int status);

/* For a command with nothing to save when Ctrl-C comes (load, scan): a
 * SIGINT handler that says at once what stops ("muh CMD: stopping (Ctrl-C):
 * WHAT"), then lets SIGINT end the process (exit 130 to the shell). */
void cli_ctrl_c_ends(const char *cmd, const char *what);

/* The line a Ctrl-C says ("muh CMD: stopping (Ctrl-C): WHAT"), set outside
 * the handler; and said from inside it (async-signal-safe: one write to
 * stderr). */
void cli_ctrl_c_text(const char *cmd, const char *what);
void cli_ctrl_c_say(void);

/* Prints what a failure of libmuh says to stderr (stdout flushed first,
 * as cli_usage_error) and returns cli_exit(status): a diagnostic that
 * names a file at its place (file:line:col: error: ..., diag_print), one
 * that does not as the command's ("muh CMD: ..."), never a bare "error:";
 * MUH_ENOMEM without a message as "muh CMD: out of memory". d may be NULL. */
int cli_fail(const char *cmd, int status, const muh_diag *d);

/* Parses a non-negative decimal number (no sign, nothing after it, at most
 * UINT64_MAX: 99999999999999999999999 is not one) into *v. Returns 0, or -1
 * when s is not one; *v is then untouched. */
int cli_parse_u64(const char *s, uint64_t *v);

/* libmuh's text (textout.h) written out: results to stdout, notes to
 * stderr, a flush as fflush; a note flushes stdout first, so that text
 * written in order reads in order where both streams go to one place. */
extern const textout cli_out;

#endif
