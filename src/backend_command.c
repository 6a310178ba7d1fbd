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
 * Every other line is ignored. A program that exits nonzero is a
 * launch_error (compile_error in the build step) with its last output as the
 * error text. Without a muh-fingerprint line the fingerprint is the hash of
 * the expanded command line, which proves nothing about injection; `muh
 * verify` says so.
 *
 * Runs inside the evaluator's runner; the program is in the runner's process
 * group, so a hang is killed with it.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "muh/eval.h"
#include "muh/muh.h"

#define CMD_OUT (256 * 1024)

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

/* Runs the command for step; captures stdout (stderr goes to the error text
 * when it fails). Returns the exit status, -1 when it could not start. */
static int run_step(const muh_target *t, const muh_variant *v, const char *step, int warm, char *out,
		    size_t cap)
{
	char *cmd = expand(t->command, v);
	if (!cmd)
		return -1;
	int p[2];
	if (pipe(p) < 0) {
		free(cmd);
		return -1;
	}
	pid_t pid = fork();
	if (pid < 0) {
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
	size_t n = 0;
	for (;;) {
		char buf[4096];
		ssize_t r = read(p[0], buf, sizeof(buf));
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		for (ssize_t i = 0; i < r && n + 1 < cap; i++)
			out[n++] = buf[i];
	}
	out[n] = '\0';
	close(p[0]);
	int st;
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* The last few hundred bytes of out, for error texts. */
static const char *tail(const char *out)
{
	size_t n = strlen(out);
	return n > 600 ? out + n - 600 : out;
}

/* Applies a "muh-status:" line if any. Returns 1 when it set a failure. */
static int apply_status(const char *out, muh_measurement *m)
{
	const char *s = strstr(out, "muh-status:");
	if (!s)
		return 0;
	s += 11;
	while (*s == ' ')
		s++;
	char name[32];
	size_t k = 0;
	while (s[k] && s[k] != ' ' && s[k] != '\n' && k < sizeof(name) - 1) {
		name[k] = s[k];
		k++;
	}
	name[k] = '\0';
	enum eval_status st;
	if (eval_status_parse(name, &st) || st == EVAL_OK)
		return 0;
	const char *rest = s + k;
	while (*rest == ' ')
		rest++;
	measurement_fail(m, st, "%.*s", (int)strcspn(rest, "\n"), rest);
	return 1;
}

static int cmd_build(eval_ctx *c, const muh_variant *v, muh_measurement *m)
{
	char *out = malloc(CMD_OUT);
	if (!out)
		return MUH_ENOMEM;
	int rc = run_step(c->target, v, "build", 0, out, CMD_OUT);
	if (rc != 0) {
		measurement_fail(m, EVAL_COMPILE_ERROR, "command failed (%d) in step build: %s", rc, tail(out));
	} else if (!apply_status(out, m)) {
		const char *fp = strstr(out, "muh-fingerprint:");
		char text[1024];
		if (fp) {
			fp += 16;
			while (*fp == ' ')
				fp++;
			snprintf(text, sizeof(text), "%.*s", (int)strcspn(fp, "\n"), fp);
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
	free(out);
	return MUH_OK;
}

static int cmd_verify(eval_ctx *c, const muh_variant *v, muh_measurement *m)
{
	char *out = malloc(CMD_OUT);
	if (!out)
		return MUH_ENOMEM;
	int rc = run_step(c->target, v, "verify", 0, out, CMD_OUT);
	if (!apply_status(out, m) && rc != 0)
		measurement_fail(m, EVAL_LAUNCH_ERROR, "command failed (%d) in step verify: %s", rc, tail(out));
	free(out);
	return MUH_OK;
}

static int cmd_time(eval_ctx *c, const muh_variant *v, int warm, double *samples, size_t max, size_t *n,
		    muh_measurement *m)
{
	*n = 0;
	char *out = malloc(CMD_OUT);
	if (!out)
		return MUH_ENOMEM;
	int rc = run_step(c->target, v, "time", warm, out, CMD_OUT);
	if (apply_status(out, m)) {
		free(out);
		return MUH_OK;
	}
	if (rc != 0) {
		measurement_fail(m, EVAL_LAUNCH_ERROR, "command failed (%d) in step time: %s", rc, tail(out));
		free(out);
		return MUH_OK;
	}
	for (const char *p = strstr(out, "muh-time:"); p && *n < max; p = strstr(p + 1, "muh-time:")) {
		char *end;
		double x = strtod(p + 9, &end);
		if (end != p + 9 && x >= 0)
			samples[(*n)++] = x;
	}
	if (*n == 0)
		measurement_fail(m, EVAL_LAUNCH_ERROR, "command printed no 'muh-time: <seconds>' line: %s", tail(out));
	free(out);
	return MUH_OK;
}

const eval_backend backend_command = {
	.name = "command",
	.build = cmd_build,
	.verify = cmd_verify,
	.time = cmd_time,
};
