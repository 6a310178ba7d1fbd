/*
 * main.c — the muh command line: find the subcommand, hand it argv.
 *
 * Global options are only --help, --version and `help <command>`; everything
 * else belongs to a subcommand. The command table is generated from the
 * files src/cli/cmd_*.c (see CMakeLists.txt).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

#define X(name) extern const struct muh_command muh_cmd_##name;
#include "muh_commands.h"
#undef X

static const struct muh_command *const commands[] = {
#define X(name) &muh_cmd_##name,
#include "muh_commands.h"
#undef X
};
#define NCOMMANDS (sizeof(commands) / sizeof(commands[0]))

static const struct muh_command *find(const char *name)
{
	for (size_t i = 0; i < NCOMMANDS; i++)
		if (strcmp(commands[i]->name, name) == 0)
			return commands[i];
	return NULL;
}

static int by_order(const void *a, const void *b)
{
	const struct muh_command *x = *(const struct muh_command *const *)a;
	const struct muh_command *y = *(const struct muh_command *const *)b;
	return x->order - y->order;
}

static void usage(FILE *f)
{
	const struct muh_command *sorted[NCOMMANDS];
	memcpy(sorted, commands, sizeof(sorted));
	qsort(sorted, NCOMMANDS, sizeof(sorted[0]), by_order);
	fprintf(f, "muh %s — find, prove, measure and write back the tuning knobs of an\n"
		   "LLM inference engine, on whatever accelerator it runs on.\n\n"
		   "usage: muh <command> [options]\n"
		   "       muh help <command>     the full help of one command\n"
		   "       muh --version\n\n"
		   "commands:\n",
		MUH_VERSION);
	for (size_t i = 0; i < NCOMMANDS; i++)
		fprintf(f, "  %-10s %s\n", sorted[i]->name, sorted[i]->summary);
	fprintf(f, "\nexit codes:\n"
		   "  0  ok\n"
		   "  1  findings or a shortfall (a dead knob, a target missed)\n"
		   "  2  usage or input error (printed as file:line:col with a caret)\n"
		   "  3  environment error (no device, a missing library, I/O)\n\n"
		   "Every command that prints results takes --json.\n");
}

void cli_help(FILE *f, const struct muh_command *c)
{
	fprintf(f, "%s", c->help);
}

int cli_usage_error(const char *cmd, const char *fmt, ...)
{
	va_list ap;
	fprintf(stderr, "muh %s: ", cmd);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\n(see `muh help %s`)\n", cmd);
	return EXIT_USAGE;
}

int cli_exit(int status)
{
	switch (status) {
	case MUH_OK:
		return EXIT_OK;
	case MUH_EFINDING:
		return EXIT_FINDING;
	case MUH_EINPUT:
		return EXIT_USAGE;
	default:
		return EXIT_ENV;
	}
}

int cli_fail(int status, const muh_diag *d)
{
	if (d && diag_is_set(d))
		diag_print(stderr, d);
	else if (status == MUH_ENOMEM)
		fprintf(stderr, "error: out of memory\n");
	return cli_exit(status);
}

int cli_parse_u64(const char *s, uint64_t *v)
{
	char *end;
	if (!*s || *s < '0' || *s > '9')
		return -1;
	errno = 0;
	unsigned long long x = strtoull(s, &end, 10);
	if (*end || errno)
		return -1;
	*v = x;
	return 0;
}

const char *cli_count(char *buf, size_t n, double v)
{
	char tmp[64];
	if (v >= 1e18) {
		snprintf(buf, n, "%.3g", v);
		return buf;
	}
	snprintf(tmp, sizeof(tmp), "%.0f", v);
	size_t len = strlen(tmp), o = 0;
	for (size_t i = 0; i < len && o + 2 < n; i++) {
		buf[o++] = tmp[i];
		size_t left = len - i - 1;
		if (left && left % 3 == 0 && tmp[i] != '-')
			buf[o++] = ',';
	}
	buf[o] = '\0';
	return buf;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return EXIT_USAGE;
	}
	const char *a = argv[1];
	if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
		usage(stdout);
		return EXIT_OK;
	}
	if (!strcmp(a, "--version") || !strcmp(a, "-V")) {
		printf("muh %s\n", MUH_VERSION);
		return EXIT_OK;
	}
	if (!strcmp(a, "help")) {
		if (argc < 3) {
			usage(stdout);
			return EXIT_OK;
		}
		const struct muh_command *c = find(argv[2]);
		if (!c) {
			fprintf(stderr, "muh: no command '%s' (see `muh --help`)\n", argv[2]);
			return EXIT_USAGE;
		}
		cli_help(stdout, c);
		return EXIT_OK;
	}
	const struct muh_command *c = find(a);
	if (!c) {
		fprintf(stderr, "muh: no command '%s' (see `muh --help`)\n", a);
		return EXIT_USAGE;
	}
	for (int i = 2; i < argc; i++) {
		if (!strcmp(argv[i], "--"))
			break;
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			cli_help(stdout, c);
			return EXIT_OK;
		}
	}
	return c->run(argc - 1, argv + 1);
}
