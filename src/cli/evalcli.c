/*
 * evalcli.c — what the commands over a session share: the --problem
 * argument, the progress of a long space build, and what a Ctrl-C stops. CLI only; the
 * work is in libmuh (session.c), and so are the measurements' rows
 * (eval_text_*, eval.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "evalcli.h"

int evalcli_option(const char *cmd, int c, const char *arg, char **argv, const struct option *opts,
		   struct evalcli_opts *o)
{
	uint64_t v;
	if (!o->problem)
		o->problem = "0";
	switch (c) {
	case 'j':
		o->json = 1;
		return 0;
	case 'w':
		o->so.hw = arg;
		return 0;
	case 'P':
		o->problem = arg;
		return 0;
	case 'J':
		if (cli_parse_u64(arg, &v) || v > 64)
			return cli_usage_error(cmd, "--jobs needs a count from 0 to 64");
		o->so.jobs = (int)v;
		o->has_jobs = 1;
		return 0;
	default:
		return cli_bad_option(cmd, argv, opts);
	}
}

long evalcli_problems(const char *cmd, const char *path, const char *text, size_t **out)
{
	muh_spec *s;
	muh_diag d;
	int rc = spec_load(path, &s, &d);
	if (rc)
		return -cli_fail(cmd, rc, &d);
	size_t n = spec_ninstances(s);
	*out = calloc(n + 1, sizeof(size_t));
	long k = *out ? session_parse_problem(s, text, *out, n, &d) : (diag_errorf(&d, "out of memory"), -1);
	spec_free(s);
	if (k < 0) {
		free(*out);
		*out = NULL;
		fprintf(stderr, "muh %s: %s\n", cmd, d.msg);
		return -EXIT_USAGE;
	}
	return k;
}

int evalcli_each_problem(const char *cmd, int argc, char **argv, struct evalcli_opts *o,
			 int (*one)(const char *path, const struct evalcli_opts *o, const void *ctx), const void *ctx)
{
	if (optind != argc - 1)
		return cli_usage_error(cmd, "expected one SPEC file");
	size_t *inst = NULL;
	long n = evalcli_problems(cmd, argv[optind], o->problem ? o->problem : "0", &inst);
	if (n < 0)
		return (int)-n;
	int ex = EXIT_OK;
	for (long i = 0; i < n; i++) {
		o->so.instance = inst[i];
		o->nth = (size_t)i;
		int e = one(argv[optind], o, ctx);
		if (e > ex)
			ex = e;
		if (e >= EXIT_USAGE || (o->so.stop && *o->so.stop))
			break;
	}
	free(inst);
	return ex;
}

int evalcli_session(const char *cmd, const char *path, const muh_session_opts *o, muh_session **s)
{
	muh_diag d;
	int rc = session_open(path, o, s, &d);
	if (!rc && (rc = session_start(*s, &d))) {
		session_close(*s);
		*s = NULL;
	}
	return rc ? cli_fail(cmd, rc, &d) : EXIT_OK;
}

/* ---- progress of a long space build ---------------------------------------- */

static struct {
	const char *cmd;
	volatile sig_atomic_t *stop;
	double last;  /* when the line was last drawn */
	int drawn;
} prog;

static int on_space_progress(void *ctx, double fraction, double seconds)
{
	(void)ctx;
	if (seconds >= 2 && seconds - prog.last >= 0.25 && isatty(2)) {
		fprintf(stderr, "\rmuh %s: counting the space: %.1f%% walked in %.1f s (Ctrl-C stops)\033[K",
			prog.cmd, 100 * fraction, seconds);
		fflush(stderr);
		prog.last = seconds;
		prog.drawn = 1;
	}
	int stop = prog.stop && *prog.stop;
	if (prog.drawn && stop) {
		fputs("\r\033[K", stderr);
		prog.drawn = 0;
	}
	return stop;
}

void evalcli_space_progress(const char *cmd, volatile sig_atomic_t *stop)
{
	if (prog.drawn) { /* the line is replaced by whatever comes next */
		fputs("\r\033[K", stderr);
		fflush(stderr);
	}
	prog.cmd = cmd;
	prog.stop = stop;
	prog.last = 0;
	prog.drawn = 0;
	space_set_progress(cmd ? on_space_progress : NULL, NULL);
}

void evalcli_ctrl_c_text(const char *cmd, const char *backend, const char *kept)
{
	char what[400];
	snprintf(what, sizeof(what), "%s; %s (Ctrl-C again kills muh)",
		 !backend ? "the work in flight is given up"
		 : eval_backend_is(backend, EVAL_SERVER) ? "the variant in flight is given up and its server stopped"
					      : "the variant in flight is given up and its runner stopped",
		 kept);
	cli_ctrl_c_text(cmd, what);
}

static volatile sig_atomic_t *ctrl_c_flag;

/* evalcli_stop_on_ctrl_c's handler: the flag set, the line said, and the
 * next Ctrl-C left to kill. */
static void on_sigint(int sig)
{
	*ctrl_c_flag = 1;
	signal(sig, SIG_DFL); /* a second Ctrl-C kills */
	cli_ctrl_c_say();
}

void (*evalcli_stop_on_ctrl_c(volatile sig_atomic_t *flag))(int)
{
	*flag = 0;
	ctrl_c_flag = flag;
	return signal(SIGINT, on_sigint);
}
