/*
 * backend_command.c — the command backend: any program, the escape hatch.
 *
 * Owns: running target.command once per step with the variant's values
 * substituted for {NAME} in the command line and exported as environment
 * variables (NAME=value and MUH_NAME=value), plus MUH_STEP=build|verify|time
 * and MUH_WARMUP=0|1, and reading back what it prints on stdout
 * (docs/evaluator.md, "command"):
 *
 *   muh-time: <seconds>            one sample (any number of lines per run)
 *   muh-fingerprint: <text>        proof of what was built (build step)
 *   muh-status: <status> [text]    e.g. "muh-status: wrong_result C[3] off"
 *
 * Every other line is ignored. The output is read as a stream, line by
 * line, however long it is: a muh-* line is found wherever it is (within the
 * first CMD_LINE bytes of its line; a NUL byte is a byte like any other), and
 * only the last TB_CAP bytes are kept, for the error text and the variant's
 * log (written to the runner's stderr, which the evaluator keeps as
 * measurement.log). Numbers are decimal: "muh-time: 0x10" is invalid, not
 * 16 s; the evaluator checks every time it gets (eval.c, samples_check).
 * A program that exits nonzero is a
 * launch_error (compile_error in the build step) with its last output as the
 * error text. Without a muh-fingerprint line the fingerprint is the hash of
 * the expanded command line, which proves nothing about injection; `muh
 * verify` says so.
 *
 * Runs inside the evaluator's runner; the program is in the runner's process
 * group, so a hang is killed with it.
 */
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "linebuf.h"
#include "muh/eval.h"
#include "eval_int.h"
#include "muh/muh.h"

#define CMD_LINE 4096 /* of each line, the part searched for muh-* tags */

/* What one run of the program printed, read as it streams. */
typedef struct cmd_out {
	double *samples; /* muh-time values, at most max (may be NULL: not collected) */
	size_t max, n;
	char bad_time[80];   /* the first muh-time value that is not a decimal number; "" none */
	char status[1024];   /* the first muh-status line's text after the tag; "" none */
	int has_status;
	char fp[1024];       /* the first muh-fingerprint line's text after the tag */
	int has_fp;
	char line[CMD_LINE + 1]; /* the current line, its first CMD_LINE bytes */
	size_t linelen;
	tailbuf tail;        /* the last TB_CAP bytes of the output */
	int start_errno;     /* why the command could not start (run_step -1): pipe's or fork's errno */
} cmd_out;

/* Expands {NAME} in tmpl with v's values. malloc'd. */
static char *expand(const char *tmpl, const muh_variant *v)
{
	size_t cap = strlen(tmpl) + 1024, n = 0;
	char *out = malloc(cap);
	if (!out)
		return NULL;
	for (const char *p = tmpl; *p;) {
		const char *close = *p == '{' ? strchr(p, '}') : NULL;
		char val[256] = "";
		int hit = 0;
		if (close) {
			char name[128];
			size_t len = (size_t)(close - p - 1);
			if (len < sizeof(name)) {
				memcpy(name, p + 1, len);
				name[len] = '\0';
				const muh_value *x = eval_variant_get(v, name);
				if (x) {
					value_fmt(val, sizeof(val), *x);
					hit = 1;
				}
			}
		}
		const char *piece = hit ? val : p;
		size_t plen = hit ? strlen(val) : 1;
		if (n + plen + 1 > cap) {
			cap = (cap + plen) * 2;
			char *nb = realloc(out, cap);
			if (!nb) {
				free(out);
				return NULL;
			}
			out = nb;
		}
		memcpy(out + n, piece, plen);
		n += plen;
		p = hit ? close + 1 : p + 1;
	}
	out[n] = '\0';
	return out;
}

/* Parses a time as muh reads one: a decimal number ([+-]digits[.digits]
 * [e[+-]digits], or inf/nan, which the evaluator then refuses) followed by
 * the end or a blank. Returns 0 and sets *x, or -1 (hex, words, nothing). */
static int parse_decimal(const char *s, double *x)
{
	const char *p = s;
	if (*p == '+' || *p == '-')
		p++;
	size_t word = strspn(p, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ");
	if ((word == 3 && (!strncasecmp(p, "inf", 3) || !strncasecmp(p, "nan", 3))) ||
	    (word == 8 && !strncasecmp(p, "infinity", 8))) {
		p += word;
	} else {
		size_t d = strspn(p, "0123456789");
		p += d;
		if (*p == '.') {
			size_t f = strspn(p + 1, "0123456789");
			if (!d && !f)
				return -1;
			p += 1 + f;
		} else if (!d) {
			return -1;
		}
		if (*p == 'e' || *p == 'E') {
			const char *e = p + 1 + (p[1] == '+' || p[1] == '-');
			size_t k = strspn(e, "0123456789");
			if (!k)
				return -1;
			p = e + k;
		}
	}
	if (*p && *p != ' ' && *p != '\t')
		return -1;
	char *end;
	*x = strtod(s, &end);
	return end == p ? 0 : -1;
}

/* The text after tag in line, blanks skipped, or NULL when the line has no tag. */
static const char *after_tag(const char *line, const char *tag)
{
	const char *p = strstr(line, tag);
	if (!p)
		return NULL;
	p += strlen(tag);
	while (*p == ' ' || *p == '\t')
		p++;
	return p;
}

/* Takes one whole line (o->line) into o. */
static void take_line(cmd_out *o)
{
	char *l = o->line;
	l[o->linelen] = '\0';
	if (o->linelen && l[o->linelen - 1] == '\r')
		l[o->linelen - 1] = '\0';
	o->linelen = 0;
	const char *p;
	if ((p = after_tag(l, "muh-time:"))) {
		double x;
		if (parse_decimal(p, &x)) {
			if (!o->bad_time[0]) {
				snprintf(o->bad_time, sizeof(o->bad_time), "%.*s", (int)strcspn(p, " \t"), p);
				if (!o->bad_time[0])
					snprintf(o->bad_time, sizeof(o->bad_time), "(nothing)");
				text_sanitize(o->bad_time, strlen(o->bad_time));
			}
		} else if (o->samples && o->n < o->max) {
			o->samples[o->n++] = x;
		}
	}
	if (!o->has_status && (p = after_tag(l, "muh-status:"))) {
		o->has_status = 1;
		snprintf(o->status, sizeof(o->status), "%s", p);
	}
	if (!o->has_fp && (p = after_tag(l, "muh-fingerprint:"))) {
		o->has_fp = 1;
		snprintf(o->fp, sizeof(o->fp), "%s", p);
	}
}

/* Feeds n bytes of output to o: lines are split as they come; of a line only
 * its first CMD_LINE bytes are looked at, a NUL in it is read as a blank. */
static void feed(cmd_out *o, const char *buf, size_t n)
{
	tb_add(&o->tail, buf, n);
	for (size_t i = 0; i < n; i++) {
		if (buf[i] == '\n')
			take_line(o);
		else if (o->linelen < CMD_LINE)
			o->line[o->linelen++] = buf[i] ? buf[i] : ' ';
	}
}

/* Runs the command for step, its stdout and stderr read into *o (zeroed
 * here but for samples/max). Its output's last TB_CAP bytes are written to
 * our stderr (the variant's log). Returns the exit status, -1 when it could
 * not start. */
static int run_step(const muh_target *t, const muh_variant *v, const char *step, int warm, cmd_out *o)
{
	double *samples = o->samples;
	size_t max = o->max;
	memset(o, 0, sizeof(*o));
	o->samples = samples;
	o->max = max;
	char *cmd = expand(t->command, v);
	if (!cmd) {
		o->start_errno = ENOMEM;
		return -1;
	}
	int p[2];
	if (pipe(p) < 0) {
		o->start_errno = errno;
		free(cmd);
		return -1;
	}
	pid_t pid = fork();
	if (pid < 0) {
		o->start_errno = errno;
		free(cmd);
		close(p[0]);
		close(p[1]);
		return -1;
	}
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		dup2(p[1], 1);
		dup2(p[1], 2);
		close(p[0]);
		close(p[1]);
		for (size_t i = 0; i < v->nparams + v->nsyms; i++) {
			char val[256], name[160];
			value_fmt(val, sizeof(val), v->values[i]);
			setenv(v->names[i], val, 1);
			snprintf(name, sizeof(name), "MUH_%s", v->names[i]);
			setenv(name, val, 1);
		}
		setenv("MUH_STEP", step, 1);
		setenv("MUH_WARMUP", warm ? "1" : "0", 1);
		setenv("MUH_KEY", v->key, 1);
		if (t->spec_dir[0] && chdir(t->spec_dir) != 0) {
			/* run where we are */
		}
		execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
		_exit(127);
	}
	free(cmd);
	close(p[1]);
	for (;;) {
		char buf[65536];
		ssize_t r = read(p[0], buf, sizeof(buf));
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		feed(o, buf, (size_t)r);
	}
	if (o->linelen)
		take_line(o); /* the last line, without its '\n' */
	close(p[0]);
	int st;
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	char *log = tb_text(&o->tail);
	if (log) {
		fprintf(stderr, "[muh: command, step %s%s]\n%s%s", step, warm ? " (warm-up)" : "", log,
			log[0] && log[strlen(log) - 1] != '\n' ? "\n" : "");
		fflush(stderr);
		free(log);
	}
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* The last few hundred bytes of the output, for error texts (out: 601 bytes). */
static const char *tail(const cmd_out *o, char *out)
{
	tb_last(&o->tail, out, 600);
	return out;
}

/* The command of step could not start for want of muh's own descriptors,
 * memory or processes (o->start_errno): muh's environment, not the
 * variant's (eval_env_fail). Returns 1 when so, else 0. */
static int start_env(eval_ctx *c, const cmd_out *o, int rc, const char *step, muh_measurement *m)
{
	if (rc >= 0 || !eval_env_errno(o->start_errno))
		return 0;
	char w[160];
	eval_env_what(o->start_errno, w, sizeof(w));
	eval_env_fail(c, m, "the command could not start in step %s: muh ran out of %s; muh's environment, not the "
		      "variant's fault", step, w);
	return 1;
}

/* Applies a "muh-status:" line if any. Returns 1 when it set a failure. */
static int apply_status(const cmd_out *o, muh_measurement *m)
{
	if (!o->has_status)
		return 0;
	const char *s = o->status;
	char name[32];
	size_t k = 0;
	while (s[k] && s[k] != ' ' && s[k] != '\t' && k < sizeof(name) - 1) {
		name[k] = s[k];
		k++;
	}
	name[k] = '\0';
	enum eval_status st;
	if (eval_status_parse(name, &st) || st == EVAL_OK)
		return 0;
	const char *rest = s + k;
	while (*rest == ' ' || *rest == '\t')
		rest++;
	char text[sizeof(o->status)];
	snprintf(text, sizeof(text), "%s", rest);
	text_sanitize(text, strlen(text));
	measurement_fail(m, st, "%s", text);
	return 1;
}

/* Runs step for v (warm: a warm-up run of "time") into a new cmd_out whose
 * muh-time lines go to samples (max of them; NULL for other steps); *rc is
 * run_step's result. NULL when out of memory. Free with cmd_out_free. */
static cmd_out *run_step_new(eval_ctx *c, const muh_variant *v, const char *step, int warm, double *samples,
			     size_t max, int *rc)
{
	cmd_out *o = calloc(1, sizeof(*o));
	if (!o)
		return NULL;
	o->samples = samples;
	o->max = max;
	*rc = run_step(c->target, v, step, warm, o);
	return o;
}

static void cmd_out_free(cmd_out *o)
{
	tb_free(&o->tail);
	free(o);
}

static int cmd_build(eval_ctx *c, const muh_variant *v, muh_measurement *m)
{
	int rc;
	cmd_out *o = run_step_new(c, v, "build", 0, NULL, 0, &rc);
	if (!o)
		return MUH_ENOMEM;
	char last[601];
	if (start_env(c, o, rc, "build", m)) {
		/* the run stops */
	} else if (rc != 0) {
		measurement_fail(m, EVAL_COMPILE_ERROR, "command failed (%d) in step build: %s", rc, tail(o, last));
	} else if (!apply_status(o, m)) {
		char text[1024];
		if (o->has_fp) {
			snprintf(text, sizeof(text), "%s", o->fp);
			m->fp_detail = strdup("{\"source\":\"program\"}");
		} else {
			char *cmd = expand(c->target->command, v);
			snprintf(text, sizeof(text), "%s", cmd ? cmd : "");
			free(cmd);
			m->fp_detail = strdup("{\"source\":\"command line\",\"proof\":false}");
		}
		snprintf(m->fingerprint, sizeof(m->fingerprint), "%016llx",
			 (unsigned long long)eval_hash(text, strlen(text), EVAL_HASH_INIT));
	}
	cmd_out_free(o);
	return MUH_OK;
}

/* The verdict of step verify or time, whose command ended with rc: the
 * run stops (start_env), the program's own muh-status, or a launch error
 * for a nonzero exit, in that order. Returns 1 when one of them holds (m
 * says which), 0 when the step went well so far. */
static int step_failed(eval_ctx *c, const cmd_out *o, int rc, const char *step, muh_measurement *m)
{
	if (start_env(c, o, rc, step, m) || apply_status(o, m))
		return 1;
	if (rc == 0)
		return 0;
	char last[601];
	measurement_fail(m, EVAL_LAUNCH_ERROR, "command failed (%d) in step %s: %s", rc, step, tail(o, last));
	return 1;
}

static int cmd_verify(eval_ctx *c, const muh_variant *v, muh_measurement *m)
{
	int rc;
	cmd_out *o = run_step_new(c, v, "verify", 0, NULL, 0, &rc);
	if (!o)
		return MUH_ENOMEM;
	step_failed(c, o, rc, "verify", m);
	cmd_out_free(o);
	return MUH_OK;
}

static int cmd_time(eval_ctx *c, const muh_variant *v, int warm, double *samples, size_t max, size_t *n,
		    muh_measurement *m)
{
	*n = 0;
	int rc;
	cmd_out *o = run_step_new(c, v, "time", warm, samples, max, &rc);
	if (!o)
		return MUH_ENOMEM;
	char last[601];
	if (step_failed(c, o, rc, "time", m)) {
		/* m says why */
	} else if (o->bad_time[0]) {
		measurement_fail(m, EVAL_WRONG_RESULT, "command printed 'muh-time: %s', which is not a decimal number of "
				 "seconds", o->bad_time);
	} else if (o->n == 0) {
		measurement_fail(m, EVAL_LAUNCH_ERROR, "command printed no 'muh-time: <seconds>' line: %s",
				 tail(o, last));
	} else {
		*n = o->n;
	}
	cmd_out_free(o);
	return MUH_OK;
}

const eval_backend backend_command = {
	.name = "command",
	.traits = EVAL_HOST_TIMED,
	.build = cmd_build,
	.verify = cmd_verify,
	.time = cmd_time,
};
