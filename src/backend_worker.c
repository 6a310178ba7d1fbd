/*
 * backend_worker.c — the worker backend: a long-lived program (Python with
 * Triton, or anything) that speaks JSON lines on stdin/stdout.
 *
 * Owns: starting the worker (target.worker, run by /bin/sh in the spec's
 * directory), the hello/capabilities handshake, and one request/reply per
 * step (docs/worker-protocol.md). The worker lives inside the evaluator's
 * runner process group: when it crashes or hangs, the runner is killed and
 * restarted with a fresh worker, and the variant gets crash/timeout.
 *
 * The fingerprint is the hash of the worker's "fingerprint" text; the
 * worker's "metadata" object (Triton: kernel hash, constexprs, num_warps,
 * num_stages, shared memory, registers, spills) is kept as fp_detail.
 */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "muh/eval.h"
#include "muh/muh.h"
#include "muh/patch.h"
#include "muh/scan.h"

typedef struct worker_state {
	pid_t pid;
	FILE *in;  /* to the worker */
	FILE *out; /* from the worker */
	int id;
	int can_verify;
	int dead; /* the worker died; the next build starts a new one */
	char name[128];
	muh_surface *surf; /* the engine tree's knobs, when the target has one */
	char overlay[PATH_MAX]; /* the current variant's overlay; "" when none */
} worker_state;

/* Builds the overlay of variant v: the engine tree with the variant's
 * values written into the knobs the spec maps them to, by muh patch's own
 * code (what is measured is what ships). Returns 0, or -1 with m failed. */
static int make_overlay(eval_ctx *c, const muh_variant *v, muh_measurement *m)
{
	worker_state *w = c->state;
	const muh_target *t = c->target;
	muh_diag d;
	diag_clear(&d);
	if (!w->surf && scan_tree(t->engine_tree, NULL, &w->surf, &d)) {
		measurement_fail(m, EVAL_INVALID, "engine tree %s: %s", t->engine_tree, d.msg);
		return -1;
	}
	muh_patch *p = patch_plan_new(t->engine_tree);
	int rc = p ? MUH_OK : MUH_ENOMEM;
	for (int i = 0; i < t->nknobs && !rc; i++) {
		size_t j;
		for (j = 0; j < v->nparams && strcmp(v->names[j], t->knob_param[i]); j++)
			;
		if (j == v->nparams)
			continue;
		char id[48], val[64];
		int alt;
		value_fmt(val, sizeof(val), v->values[j]);
		const muh_knob *k = NULL;
		if (patch_parse_id(t->knob_id[i], id, sizeof(id), &alt) == 0)
			k = scan_find(w->surf, id);
		if (!k) {
			diag_errorf(&d, "knobs.%s: no knob '%s' in %s", t->knob_param[i], t->knob_id[i],
				    t->engine_tree);
			rc = MUH_EINPUT;
			break;
		}
		/* measuring a dead knob is allowed (the fingerprint shows it); an
		 * unsafe value is refused as it would be in the final patch */
		rc = patch_plan_set(p, k, alt, patch_value_text(k, val), 1, &d);
	}
	if (!rc)
		rc = patch_plan_build(p, &d);
	if (!rc) {
		snprintf(w->overlay, sizeof(w->overlay), "%s/overlay-%016llx", t->cache_dir,
			 (unsigned long long)patch_fnv1a64(v->key, strlen(v->key)));
		if (eval_mkdirs(t->cache_dir) < 0 || patch_overlay_remove(w->overlay))
			rc = MUH_EENV, diag_errorf(&d, "cannot prepare %s: %s", w->overlay,
						   strerror(errno));
	}
	if (!rc)
		rc = patch_overlay(p, w->overlay, &d);
	patch_plan_free(p);
	if (rc) {
		w->overlay[0] = '\0';
		measurement_fail(m, EVAL_INVALID, "overlay: %s", d.msg);
		return -1;
	}
	return 0;
}

static int worker_open(eval_ctx *c, muh_diag *d)
{
	int to[2], from[2];
	if (pipe(to) < 0 || pipe(from) < 0) {
		snprintf(d->msg, sizeof(d->msg), "pipe: %s", strerror(errno));
		return MUH_EENV;
	}
	pid_t pid = fork();
	if (pid < 0) {
		snprintf(d->msg, sizeof(d->msg), "fork: %s", strerror(errno));
		return MUH_EENV;
	}
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		dup2(to[0], 0);
		dup2(from[1], 1);
		close(to[0]);
		close(to[1]);
		close(from[0]);
		close(from[1]);
		if (c->target->spec_dir[0] && chdir(c->target->spec_dir) != 0) {
			/* stay */
		}
		execl("/bin/sh", "sh", "-c", c->target->worker, (char *)NULL);
		_exit(127);
	}
	close(to[0]);
	close(from[1]);
	worker_state *w = calloc(1, sizeof(*w));
	if (!w)
		return MUH_ENOMEM;
	w->pid = pid;
	w->in = fdopen(to[1], "w");
	w->out = fdopen(from[0], "r");
	c->state = w;
	char *line = NULL;
	size_t cap = 0;
	cJSON *hello = NULL;
	if (getline(&line, &cap, w->out) > 0)
		hello = cJSON_Parse(line);
	free(line);
	const cJSON *h = hello ? cJSON_GetObjectItemCaseSensitive(hello, "hello") : NULL;
	if (!cJSON_IsString(h)) {
		snprintf(d->msg, sizeof(d->msg), "worker '%.800s' did not say hello (see docs/worker-protocol.md)",
			 c->target->worker);
		cJSON_Delete(hello);
		return MUH_EENV;
	}
	const cJSON *err = cJSON_GetObjectItemCaseSensitive(hello, "error");
	if (cJSON_IsString(err)) {
		snprintf(d->msg, sizeof(d->msg), "worker: %.900s", err->valuestring);
		cJSON_Delete(hello);
		return MUH_EENV;
	}
	snprintf(w->name, sizeof(w->name), "%s", h->valuestring);
	const cJSON *caps = cJSON_GetObjectItemCaseSensitive(hello, "capabilities"), *x;
	cJSON_ArrayForEach(x, caps)
	{
		if (cJSON_IsString(x) && !strcmp(x->valuestring, "verify"))
			w->can_verify = 1;
	}
	cJSON_Delete(hello);
	return MUH_OK;
}

static void worker_close(eval_ctx *c)
{
	worker_state *w = c->state;
	if (!w)
		return;
	if (w->in) {
		if (!w->dead)
			fputs("{\"op\":\"bye\"}\n", w->in);
		fclose(w->in);
	}
	if (w->out)
		fclose(w->out);
	int st;
	if (!w->dead) {
		for (int i = 0; i < 100 && waitpid(w->pid, &st, WNOHANG) == 0; i++)
			usleep(10000);
		kill(w->pid, SIGKILL);
		waitpid(w->pid, &st, 0);
	}
	if (w->overlay[0])
		patch_overlay_remove(w->overlay);
	scan_free(w->surf);
	free(w);
	c->state = NULL;
}

/* Sends one request and reads its reply. Returns the reply (caller deletes)
 * or NULL with m failed. */
static cJSON *request(eval_ctx *c, const char *op, const muh_variant *v, int count, int warm,
		      muh_measurement *m)
{
	worker_state *w = c->state;
	if (c->target->engine_tree[0] && !strcmp(op, "build")) {
		if (w->overlay[0])
			patch_overlay_remove(w->overlay); /* the last variant's */
		if (make_overlay(c, v, m))
			return NULL;
	}
	cJSON *req = cJSON_CreateObject();
	cJSON_AddNumberToObject(req, "id", ++w->id);
	cJSON_AddStringToObject(req, "op", op);
	cJSON *var = cJSON_AddObjectToObject(req, "variant");
	cJSON_AddStringToObject(var, "key", v->key);
	cJSON *params = cJSON_AddObjectToObject(var, "params");
	cJSON *problem = cJSON_AddObjectToObject(var, "problem");
	for (size_t i = 0; i < v->nparams + v->nsyms; i++) {
		const muh_value *x = &v->values[i];
		cJSON *j = x->t == MUH_STR ? cJSON_CreateString(x->u.s)
			 : x->t == MUH_INT ? cJSON_CreateNumber((double)x->u.i)
					   : cJSON_CreateNumber(x->u.f);
		cJSON_AddItemToObject(i < v->nparams ? params : problem, v->names[i], j);
	}
	cJSON *tg = cJSON_AddObjectToObject(req, "target");
	/* the worker runs in the spec's directory: give it an absolute path */
	char abs[PATH_MAX];
	const char *src = c->target->source;
	if (src[0] && src[0] != '/' && realpath(src, abs))
		src = abs;
	cJSON_AddStringToObject(tg, "source", src);
	cJSON_AddStringToObject(tg, "entry", c->target->entry);
	if (c->target->dtype[0])
		cJSON_AddStringToObject(tg, "dtype", c->target->dtype);
	if (c->target->rtol >= 0)
		cJSON_AddNumberToObject(tg, "rtol", c->target->rtol);
	if (w->overlay[0]) {
		cJSON_AddStringToObject(tg, "overlay", w->overlay);
		cJSON_AddStringToObject(tg, "module", c->target->module);
		char tree[PATH_MAX];
		cJSON_AddStringToObject(tg, "engine_tree",
					realpath(c->target->engine_tree, tree) ? tree : c->target->engine_tree);
	}
	if (!strcmp(op, "time")) {
		cJSON_AddNumberToObject(req, "count", count);
		cJSON_AddBoolToObject(req, "warmup", warm);
	}
	char *s = cJSON_PrintUnformatted(req);
	cJSON_Delete(req);
	if (!s || fprintf(w->in, "%s\n", s) < 0 || fflush(w->in) != 0) {
		free(s);
		measurement_fail(m, EVAL_CRASH, "worker %s: cannot send %s (worker gone)", w->name, op);
		return NULL;
	}
	free(s);
	char *line = NULL;
	size_t cap = 0;
	cJSON *rep = NULL;
	while (!rep) {
		if (getline(&line, &cap, w->out) <= 0) {
			free(line);
			int ws = 0;
			w->dead = 1;
			if (waitpid(w->pid, &ws, 0) == w->pid && WIFSIGNALED(ws))
				measurement_fail(m, EVAL_CRASH, "worker %s died of signal %d during %s", w->name,
						 WTERMSIG(ws), op);
			else
				measurement_fail(m, EVAL_CRASH, "worker %s exited (status %d) during %s", w->name,
						 WIFEXITED(ws) ? WEXITSTATUS(ws) : -1, op);
			return NULL;
		}
		rep = cJSON_Parse(line);
		const cJSON *id = rep ? cJSON_GetObjectItemCaseSensitive(rep, "id") : NULL;
		if (rep && (!cJSON_IsNumber(id) || (int)id->valuedouble != w->id)) {
			cJSON_Delete(rep); /* a log line or a stale reply */
			rep = NULL;
		}
	}
	free(line);
	const cJSON *st = cJSON_GetObjectItemCaseSensitive(rep, "status");
	enum eval_status status = EVAL_LAUNCH_ERROR;
	if (cJSON_IsString(st))
		eval_status_parse(st->valuestring, &status);
	if (status != EVAL_OK) {
		const cJSON *er = cJSON_GetObjectItemCaseSensitive(rep, "error");
		measurement_fail(m, status, "%s", cJSON_IsString(er) ? er->valuestring : "worker reported a failure");
	}
	return rep;
}

static int worker_build(eval_ctx *c, const muh_variant *v, muh_measurement *m)
{
	worker_state *w = c->state;
	if (w->dead) {
		/* restart the worker; the runner goes on */
		worker_close(c);
		muh_diag d;
		diag_clear(&d);
		if (worker_open(c, &d) != MUH_OK) {
			measurement_fail(m, EVAL_CRASH, "worker restart failed: %s", d.msg);
			return MUH_EENV;
		}
	}
	cJSON *rep = request(c, "build", v, 0, 0, m);
	if (!rep || m->status != EVAL_OK) {
		cJSON_Delete(rep);
		return MUH_OK;
	}
	const cJSON *fp = cJSON_GetObjectItemCaseSensitive(rep, "fingerprint");
	const cJSON *md = cJSON_GetObjectItemCaseSensitive(rep, "metadata");
	if (!cJSON_IsString(fp) || !fp->valuestring[0]) {
		measurement_fail(m, EVAL_COMPILE_ERROR, "worker build reply has no fingerprint");
	} else {
		snprintf(m->fingerprint, sizeof(m->fingerprint), "%016llx",
			 (unsigned long long)eval_hash(fp->valuestring, strlen(fp->valuestring), EVAL_HASH_INIT));
		m->fp_detail = md ? cJSON_PrintUnformatted(md) : strdup(fp->valuestring);
	}
	cJSON_Delete(rep);
	return MUH_OK;
}

static int worker_verify(eval_ctx *c, const muh_variant *v, muh_measurement *m)
{
	worker_state *w = c->state;
	if (!w->can_verify)
		return MUH_OK;
	cJSON *rep = request(c, "verify", v, 0, 0, m);
	if (rep) {
		const cJSON *a = cJSON_GetObjectItemCaseSensitive(rep, "max_abs_err");
		const cJSON *l = cJSON_GetObjectItemCaseSensitive(rep, "rel_l2_err");
		if (cJSON_IsNumber(a))
			m->max_abs_err = a->valuedouble;
		if (cJSON_IsNumber(l))
			m->rel_l2_err = l->valuedouble;
	}
	cJSON_Delete(rep);
	return MUH_OK;
}

static int worker_time(eval_ctx *c, const muh_variant *v, int warm, double *out, size_t max, size_t *n,
		       muh_measurement *m)
{
	*n = 0;
	if (warm) {
		cJSON_Delete(request(c, "run", v, 0, 1, m));
		return MUH_OK;
	}
	cJSON *rep = request(c, "time", v, (int)(max < 5 ? max : 5), 0, m);
	if (rep && m->status == EVAL_OK) {
		const cJSON *arr = cJSON_GetObjectItemCaseSensitive(rep, "samples"), *x;
		cJSON_ArrayForEach(x, arr)
		{
			if (cJSON_IsNumber(x) && *n < max)
				out[(*n)++] = x->valuedouble;
		}
		const cJSON *s;
		if ((s = cJSON_GetObjectItemCaseSensitive(rep, "sm_clock_mhz")) && cJSON_IsNumber(s))
			m->sm_clock_mhz = s->valuedouble;
		if ((s = cJSON_GetObjectItemCaseSensitive(rep, "power_w")) && cJSON_IsNumber(s))
			m->power_w = s->valuedouble;
		if ((s = cJSON_GetObjectItemCaseSensitive(rep, "temp_c")) && cJSON_IsNumber(s))
			m->temp_c = s->valuedouble;
		if (*n == 0)
			measurement_fail(m, EVAL_LAUNCH_ERROR, "worker time reply has no samples");
	}
	cJSON_Delete(rep);
	return MUH_OK;
}

const eval_backend backend_worker = {
	.name = "worker",
	.open = worker_open,
	.build = worker_build,
	.verify = worker_verify,
	.time = worker_time,
	.close = worker_close,
};
