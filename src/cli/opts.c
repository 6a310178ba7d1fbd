/*
 * opts.c — the option tables of the subcommands (cli_parse_opts, cli.h).
 *
 * A command lists its options once, with where each value goes; this file
 * runs getopt_long over them, checks numbers and counts, and says what was
 * wrong in the same words for every command. Never prints but through
 * cli_usage_error / cli_bad_option.
 */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

#define CLI_MAX_OPTS 64

int cli_parse_opts(const char *cmd, int argc, char **argv, const struct cli_opt *t,
		   int (*other)(void *ctx, int i, const char *value), void *ctx, int *first)
{
	struct option lo[CLI_MAX_OPTS + 1];
	char shorts[2 * CLI_MAX_OPTS + 1];
	size_t n = 0, ns = 0;
	for (; t[n].name; n++) {
		if (n == CLI_MAX_OPTS)
			abort(); /* a table this long is a bug of the command */
		int arg = t[n].kind == CLI_FLAG || t[n].kind == CLI_ACTION ? no_argument : required_argument;
		/* an option with a short name answers to it (cli_bad_option then
		 * finds it for "-j needs a value"); the others by their index */
		lo[n] = (struct option){t[n].name, arg, NULL, t[n].short_name ? t[n].short_name : 256 + (int)n};
		if (t[n].short_name) {
			shorts[ns++] = t[n].short_name;
			if (arg == required_argument)
				shorts[ns++] = ':';
		}
	}
	lo[n] = (struct option){NULL, 0, NULL, 0};
	shorts[ns] = '\0';
	int c;
	optind = 1;
	while ((c = getopt_long(argc, argv, shorts, lo, NULL)) != -1) {
		size_t i;
		if (c >= 256 && c < 256 + (int)n) {
			i = (size_t)(c - 256);
		} else {
			for (i = 0; i < n && (c == '?' || c == ':' || t[i].short_name != c); i++)
				;
			if (i == n)
				return cli_bad_option(cmd, argv, lo);
		}
		const struct cli_opt *o = &t[i];
		switch (o->kind) {
		case CLI_FLAG:
			*(int *)o->to = 1;
			break;
		case CLI_STR:
			if (o->expected && !*optarg)
				return cli_usage_error(cmd, "--%s: expected %s", o->name, o->expected);
			*(const char **)o->to = optarg;
			break;
		case CLI_UINT: {
			uint64_t v;
			if (cli_parse_u64(optarg, &v) || v < o->lo || v > o->hi)
				return cli_usage_error(cmd, "--%s %s: expected %s", o->name, optarg,
						       o->expected ? o->expected : "a number");
			*(uint64_t *)o->to = v;
			break;
		}
		case CLI_LIST: {
			struct cli_list *l = o->to;
			if (l->n == l->max)
				return cli_usage_error(cmd, "too many --%s (at most %d)", o->name, l->max);
			if (o->expected && !*optarg)
				return cli_usage_error(cmd, "--%s: expected %s", o->name, o->expected);
			l->v[l->n++] = optarg;
			break;
		}
		case CLI_OTHER:
		case CLI_ACTION: {
			int rc = other ? other(ctx, (int)i, o->kind == CLI_OTHER ? optarg : NULL) : EXIT_USAGE;
			if (rc == -1) {
				*first = -1;
				return 0;
			}
			if (rc)
				return rc;
			break;
		}
		}
	}
	*first = optind;
	return 0;
}
