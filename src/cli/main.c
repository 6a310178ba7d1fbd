/*
 * main.c — the muh command line: find the subcommand, hand it argv.
 *
 * Global options are only --help, --version and `help <command>`; everything
 * else belongs to a subcommand. The command table is generated from the
 * files src/cli/cmd_*.c (see CMakeLists.txt).
 *
 * Before any command runs: stderr is line-buffered (a message is one write,
 * not one per byte), SIGXFSZ is ignored (past `ulimit -f` a write fails with
 * EFBIG and is reported, instead of killing muh without a word), and getopt
 * prints nothing itself (cli_bad_option says what was wrong). After it: a
 * stdout that could not be written is an environment error (exit 3).
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "muh/pool.h"

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

/* "muh: no command 'NAME'", with the nearest command's name, and where
 * the list is; EXIT_USAGE. */
static int no_command(const char *name)
{
	diag_near near = DIAG_NEAR_INIT;
	for (size_t i = 0; i < NCOMMANDS; i++)
		diag_near_offer(&near, name, strlen(name), commands[i]->name);
	char hint[96];
	fprintf(stderr, "muh: no command '%s'%s; see `muh --help`\n", name,
		diag_near_hint(near.name, hint, sizeof(hint)));
	return EXIT_USAGE;
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
	fflush(stdout); /* after the results before it (out_write) */
	fprintf(stderr, "muh %s: ", cmd);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\n(see `muh help %s`)\n", cmd);
	return EXIT_USAGE;
}

/* The long option named by arg ("--name" or "--name=value"): the exact
 * match, else the one option it abbreviates; NULL when none, and *ambiguous
 * set when more than one. */
static const struct option *long_option(const struct option *opts, const char *arg, int *ambiguous)
{
	size_t len = strcspn(arg, "=");
	const struct option *hit = NULL;
	int n = 0;
	*ambiguous = 0;
	for (const struct option *o = opts; o && o->name; o++) {
		if (strncmp(o->name, arg, len))
			continue;
		if (strlen(o->name) == len)
			return o;
		hit = o;
		n++;
	}
	*ambiguous = n > 1;
	return n == 1 ? hit : NULL;
}

int cli_bad_option(const char *cmd, char **argv, const struct option *opts)
{
	const char *arg = optind > 0 ? argv[optind - 1] : NULL;
	int ambiguous = 0;
	if (arg && !strncmp(arg, "--", 2) && arg[2]) {
		const struct option *o = long_option(opts, arg + 2, &ambiguous);
		int len = (int)strcspn(arg, "=");
		/* a short option inside a bundle after this one is not this one */
		if (o && (!optopt || optopt == o->val || o->flag)) {
			if (o->has_arg == required_argument && !strchr(arg, '='))
				return cli_usage_error(cmd, "--%s needs a value", o->name);
			if (o->has_arg == no_argument && strchr(arg, '='))
				return cli_usage_error(cmd, "--%s takes no value", o->name);
		}
		if (!optopt || (o && optopt == o->val)) {
			if (ambiguous) { /* the options it could mean, as many as fit */
				char which[256] = "";
				size_t w = 0, plen = (size_t)len - 2;
				for (const struct option *q = opts; q && q->name && w < sizeof(which); q++)
					if (!strncmp(q->name, arg + 2, plen))
						w += (size_t)snprintf(which + w, sizeof(which) - w, "%s--%s",
								      w ? ", " : "", q->name);
				return cli_usage_error(cmd, "'%.*s' is ambiguous: it starts %s; give more of the name",
						       len, arg, which);
			}
			/* the nearest option's name, as for unknown names elsewhere */
			diag_near near = DIAG_NEAR_INIT;
			for (const struct option *q = opts; q && q->name; q++)
				diag_near_offer(&near, arg + 2, (size_t)len - 2, q->name);
			if (near.name)
				return cli_usage_error(cmd, "'%.*s' is not an option; did you mean '--%s'?", len, arg,
						       near.name);
			return cli_usage_error(cmd, "'%.*s' is not an option", len, arg);
		}
	}
	if (optopt > ' ' && optopt < 127) {
		/* a short option: with a value it needs, it was last on the line */
		for (const struct option *o = opts; o && o->name; o++)
			if (!o->flag && o->val == optopt && o->has_arg == required_argument && optind >= 1 &&
			    arg && arg[0] == '-' && arg[1] != '-' && arg[strlen(arg) - 1] == optopt &&
			    !argv[optind])
				return cli_usage_error(cmd, "-%c needs a value", optopt);
		return cli_usage_error(cmd, "'-%c' is not an option", optopt);
	}
	return cli_usage_error(cmd, "'%s' is not an option", arg ? arg : "?");
}

static char ctrl_c_line[512];
static volatile size_t ctrl_c_len;

void cli_ctrl_c_text(const char *cmd, const char *what)
{
	ctrl_c_len = 0;
	int n = snprintf(ctrl_c_line, sizeof(ctrl_c_line), "muh %s: stopping (Ctrl-C): %s\n", cmd, what);
	ctrl_c_len = n > 0 && (size_t)n < sizeof(ctrl_c_line) ? (size_t)n : 0;
}

void cli_ctrl_c_say(void)
{
	if (ctrl_c_len && write(2, ctrl_c_line, ctrl_c_len) < 0)
		ctrl_c_len = 0;
}

/* cli_ctrl_c_ends' handler: the line, then SIGINT's default (the end). */
static void ctrl_c_end(int sig)
{
	cli_ctrl_c_say();
	signal(sig, SIG_DFL);
	raise(sig);
}

void cli_ctrl_c_ends(const char *cmd, const char *what)
{
	cli_ctrl_c_text(cmd, what);
	signal(SIGINT, ctrl_c_end);
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

int cli_fail(const char *cmd, int status, const muh_diag *d)
{
	char who[64];
	snprintf(who, sizeof(who), "muh %s", cmd);
	fflush(stdout); /* after the results before it (out_write) */
	if (d && diag_is_set(d))
		diag_print(stderr, who, d);
	else if (status == MUH_ENOMEM)
		fprintf(stderr, "%s: out of memory\n", who);
	else
		fprintf(stderr, "%s: failed (status %d) with no message\n", who, status);
	return cli_exit(status);
}

/* cli_out's write: libmuh's results on stdout, its notes on stderr. A
 * note first flushes the results before it: stderr is written a line at a
 * time, stdout (into a pipe or a file) in blocks, so a note would otherwise
 * overtake results libmuh handed over before it, and where both streams go
 * to one place (2>&1, a CI log) it would land inside lines it comes after. */
static void out_write(void *ctx, int stream, const char *text)
{
	FILE *f = stream == TEXTOUT_NOTE ? stderr : stdout;
	(void)ctx;
	if (text && stream == TEXTOUT_NOTE)
		fflush(stdout);
	if (text)
		fputs(text, f);
	else
		fflush(f);
}

const textout cli_out = {.write = out_write};

int cli_parse_u64(const char *s, uint64_t *v)
{
	char *end;
	if (!*s || *s < '0' || *s > '9')
		return -1;
	errno = 0;
	unsigned long long x = strtoull(s, &end, 10);
	if (*end || errno == ERANGE)
		return -1;
	*v = x;
	return 0;
}

/* Flushes stdout; a write that failed (a full disk, `ulimit -f`, a closed
 * pipe) is said on stderr and turns an exit 0 or 1 into 3. */
static int finish(int ex)
{
	int bad = fflush(stdout) != 0;
	int err = errno;
	if (bad || ferror(stdout)) {
		fprintf(stderr, "muh: cannot write the output: %s\n", bad ? strerror(err) : "write error");
		if (ex == EXIT_OK || ex == EXIT_FINDING)
			ex = EXIT_ENV;
	}
	return ex;
}

int main(int argc, char **argv)
{
	/* stderr: one write per line, so a long message is not a syscall a byte */
	static char errbuf[1 << 16];
	setvbuf(stderr, errbuf, _IOLBF, sizeof(errbuf));
	signal(SIGXFSZ, SIG_IGN);
	opterr = 0;
	/* under mpirun/srun: rank 0 is muh as typed, the other ranks measure */
	int mpi_size = 1;
	if (pool_mpi_init(&argc, &argv, &mpi_size) > 0) {
		int rc = pool_mpi_serve();
		pool_mpi_finalize();
		return rc ? EXIT_ENV : EXIT_OK;
	}
	if (argc >= 2 && !strcmp(argv[1], "pool-worker")) /* internal: one worker of a pool (pool.h) */
		return pool_worker_serve(0, 1) ? EXIT_ENV : EXIT_OK;
	if (argc < 2) {
		usage(stderr);
		return EXIT_USAGE;
	}
	const char *a = argv[1];
	if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
		usage(stdout);
		return finish(EXIT_OK);
	}
	if (!strcmp(a, "--version") || !strcmp(a, "-V")) {
		printf("muh %s\n", MUH_VERSION);
		return finish(EXIT_OK);
	}
	if (!strcmp(a, "help")) {
		if (argc < 3) {
			usage(stdout);
			return finish(EXIT_OK);
		}
		const struct muh_command *c = find(argv[2]);
		if (!c)
			return no_command(argv[2]);
		cli_help(stdout, c);
		return finish(EXIT_OK);
	}
	const struct muh_command *c = find(a);
	if (!c)
		return no_command(a);
	for (int i = 2; i < argc; i++) {
		if (!strcmp(argv[i], "--"))
			break;
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			cli_help(stdout, c);
			return finish(EXIT_OK);
		}
	}
	int ex = finish(c->run(argc - 1, argv + 1));
	pool_mpi_finalize();
	return ex;
}
