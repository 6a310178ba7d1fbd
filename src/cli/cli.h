/*
 * cli.h — what every subcommand file (src/cli/cmd_<name>.c) provides and may
 * use. The CLI is a thin skin: parse options with getopt_long, call libmuh,
 * print. Tables for people, --json for programs, progress on stderr only
 * when it is a terminal.
 *
 * A subcommand file defines exactly one
 *     const struct muh_command muh_cmd_<name> = { ... };
 * CMake finds the file and adds it to the command table; nothing else needs
 * editing to add a command.
 */
#ifndef MUH_CLI_H
#define MUH_CLI_H

#include <stdint.h>
#include <stdio.h>

#include "muh/muh.h"

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

/* Prints the command's help to f. */
void cli_help(FILE *f, const struct muh_command *c);

/* Prints "muh <cmd>: <msg>" and a hint to see `muh help <cmd>`; returns
 * EXIT_USAGE. */
int cli_usage_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The default case of every subcommand's getopt_long loop (main.c sets
 * opterr = 0, so getopt prints nothing itself): says what was wrong with the
 * option just read, from argv, optind, optopt and the command's table opts:
 * "--budget needs a value", "--json takes no value", "'--frob' is not an
 * option" or "'--b' is ambiguous". Returns EXIT_USAGE. */
struct option;
int cli_bad_option(const char *cmd, char **argv, const struct option *opts);

/* Maps a library status to an exit code. */
int cli_exit(int status);

/* Prints a diagnostic to stderr and returns cli_exit(status). */
int cli_fail(int status, const muh_diag *d);

/* Parses a non-negative decimal number (no sign, nothing after it, at most
 * UINT64_MAX: 99999999999999999999999 is not one) into *v. Returns 0, or -1
 * when s is not one; *v is then untouched. */
int cli_parse_u64(const char *s, uint64_t *v);

/* Makes room for one more element in the array *arr of *n elements of
 * size elem (capacity *cap, doubled from first): 0, or MUH_ENOMEM with
 * *arr untouched. */
int cli_grow(void *arr, size_t *cap, size_t n, size_t elem, size_t first);

/* A time for a person: "-" when not finite, then ns, us (one decimal), ms
 * or s (three). */
void cli_fmt_time(char *buf, size_t n, double s);

/* Formats a count with thousands separators ("1,920"). */
const char *cli_count(char *buf, size_t n, double v);

#endif
