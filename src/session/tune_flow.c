/*
 * tune_flow.c — a tune's decisions around the search (see tune_flow.h).
 *
 * Owns: the meaning of a budget ("N", "N%"), the device list of a pool and
 * the pool's options, when the decision stage follows a search (how many
 * finalists, which baseline), and the --json events of a search. The search itself is the session's
 * (session.h), the stage's verdict decide.h's.
 *
 * Must never: print, exit, or start a decision stage itself.
 */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "muh/baseline.h"
#include "muh/eval.h"
#include "muh/hw.h"
#include "muh/space.h"
#include "muh/spec.h"
#include "muh/tune_flow.h"

int tune_flow_budget(const char *budget, uint64_t valid, uint64_t *out, muh_diag *d)
{
	size_t n = strlen(budget);
	char *end;
	if (n && budget[n - 1] == '%') {
		double pct = strtod(budget, &end);
		if (end != budget + n - 1 || !(pct > 0 && pct <= 100))
			return diag_errorf(d, "--budget N%% needs 0 < N <= 100");
		*out = (uint64_t)floor(pct / 100.0 * (double)valid + 1e-9);
		if (!*out)
			*out = 1;
		return MUH_OK;
	}
	uint64_t v = 0;
	for (const char *p = budget; *p; p++) {
		if (*p < '0' || *p > '9' || v > (UINT64_MAX - (uint64_t)(*p - '0')) / 10)
			return diag_errorf(d, "--budget needs a positive number or a percentage");
		v = v * 10 + (uint64_t)(*p - '0');
	}
	if (!n || !v)
		return diag_errorf(d, "--budget needs a positive number or a percentage");
	/* no search runs a billion evaluations: a typo, or a space size */
	if (v > 1000000000)
		return diag_errorf(d, "--budget %s is more than 1000000000 evaluations; leave it out to "
				      "evaluate the whole space",
				   budget);
	*out = v;
	return MUH_OK;
}

void tune_flow_devices_free(char *list[TUNE_FLOW_MAX_DEVICES], size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(list[i]);
		list[i] = NULL;
	}
}

/* A device number of a list: decimal, at most 1023. 0 or -1. */
static int device_number(const char *tok, uint64_t *id)
{
	uint64_t v = 0;
	if (!*tok)
		return -1;
	for (const char *p = tok; *p; p++) {
		if (*p < '0' || *p > '9' || v > 1023)
			return -1;
		v = v * 10 + (uint64_t)(*p - '0');
	}
	*id = v;
	return v > 1023 ? -1 : 0;
}

int tune_flow_devices(const char *devices, char *list[TUNE_FLOW_MAX_DEVICES], size_t *n, muh_diag *d)
{
	char buf[512];
	*n = 0;
	if (!devices)
		return MUH_OK;
	if (!strcmp(devices, "all")) {
		int count = 0;
		muh_diag hd;
		diag_clear(&hd);
		if (hw_device_count(&count, &hd) || count < 1)
			return diag_errorf(d, "--devices all: %s", hd.msg[0] ? hd.msg : "no CUDA device"),
			       MUH_EENV;
		for (int i = 0; i < count && i < TUNE_FLOW_MAX_DEVICES; i++) {
			snprintf(buf, sizeof(buf), "%d", i);
			list[(*n)++] = strdup(buf);
		}
		return MUH_OK;
	}
	uint64_t ids[TUNE_FLOW_MAX_DEVICES];
	snprintf(buf, sizeof(buf), "%s", devices);
	char *save = NULL;
	for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		uint64_t id;
		if (*n == TUNE_FLOW_MAX_DEVICES || device_number(tok, &id)) {
			tune_flow_devices_free(list, *n);
			*n = 0;
			return diag_errorf(d, "--devices needs device numbers such as 0,1,3 (at most 64), or all; not '%s'",
					   devices);
		}
		for (size_t i = 0; i < *n; i++)
			if (ids[i] == id) {
				tune_flow_devices_free(list, *n);
				*n = 0;
				return diag_errorf(d, "--devices names device %s twice ('%s'): one worker per device", tok,
						   devices);
			}
		ids[*n] = id;
		list[(*n)++] = strdup(tok);
	}
	return MUH_OK;
}

int tune_flow_pool_open(const char *path, muh_session *s, const muh_session_opts *so, char *const *list,
			size_t n, int mpi, muh_pool **out, muh_diag *d)
{
	static const char *const argv_[] = {"/proc/self/exe", "pool-worker", NULL};
	const muh_target *t = session_target(s);
	pool_opts po = {.spec_path = path,
			.hw = so->hw,
			.instance = so->instance,
			.nparams = space_nparams(session_space(s)),
			.nworkers = n,
			.devices = (const char *const *)list,
			.worker_argv = argv_,
			.mpi = mpi,
			.hang_s = t && eval_target_timeout_s(t) > 0 ? 4 * eval_target_timeout_s(t) + 60 : 0};
	*out = NULL;
	return pool_open(&po, out, d);
}

int tune_flow_is_engine(muh_session *s)
{
	const muh_target *tg = session_target(s);
	return tg && eval_backend_is(eval_target_backend(tg), EVAL_SERVER);
}

long tune_flow_finalists(long asked)
{
	return asked >= 0 ? asked : 2; /* every live run: a kernel's best timed once is no decision either */
}

int tune_flow_can_decide(muh_session *s, int local_pool)
{
	return session_evaluator(s) || (local_pool && session_target(s) && !tune_flow_is_engine(s));
}

int tune_flow_decides_after(muh_session *s, int local_pool, long asked, int interrupted, const strategy_result *r,
			    int rc)
{
	return rc == MUH_OK && !interrupted && tune_flow_can_decide(s, local_pool) && tune_flow_found(r) &&
	       tune_flow_finalists(asked) > 0;
}

void tune_flow_decide_opts(muh_session *s, long k, int rounds, decide_opts *o)
{
	const baseline_pick *bp = session_baseline(s);
	decide_defaults(o);
	o->finalists = (size_t)k;
	o->baseline_key = bp && bp->valid && !bp->is_defaults ? bp->key : NULL;
	if (rounds)
		o->max_rounds = rounds;
}

/* A configuration's values as a JSON object, by param name. */
static cJSON *config_json(const muh_space *sp, const uint32_t *cfg)
{
	const muh_spec *s = space_spec(sp);
	cJSON *o = cJSON_CreateObject();
	for (size_t p = 0; p < space_nparams(sp); p++) {
		muh_value v = space_value(sp, cfg, p);
		if (v.t == MUH_INT)
			cJSON_AddNumberToObject(o, s->params[p].name, (double)v.u.i);
		else if (v.t == MUH_FLOAT)
			cJSON_AddNumberToObject(o, s->params[p].name, v.u.f);
		else
			cJSON_AddStringToObject(o, s->params[p].name, v.u.s);
	}
	return o;
}

/* o as unformatted text, o deleted. */
static char *json_text(cJSON *o)
{
	char *t = o ? cJSON_PrintUnformatted(o) : NULL;
	cJSON_Delete(o);
	return t;
}

char *tune_flow_event_json(muh_session *s, const strategy_event *ev, const char *problem)
{
	const muh_space *sp = session_space(s);
	const muh_objective *objective = session_objective(s);
	char key[4096];
	cJSON *o = cJSON_CreateObject();
	if (ev->kind == STRATEGY_EV_PREDICTED) {
		space_key(sp, ev->cfg, key, sizeof(key));
		cJSON_AddStringToObject(o, "event", "predicted_fail");
		cJSON_AddStringToObject(o, "key", key);
		cJSON_AddStringToObject(o, "reason", ev->reason);
		return json_text(o);
	}
	if (ev->kind == STRATEGY_EV_SEED_SKIPPED || ev->kind == STRATEGY_EV_DEFAULT_INVALID) {
		cJSON_AddStringToObject(o, "event",
					ev->kind == STRATEGY_EV_SEED_SKIPPED ? "seed_skipped" : "default_invalid");
		if (ev->kind == STRATEGY_EV_SEED_SKIPPED) {
			cJSON_AddNumberToObject(o, "seed", (double)ev->seed);
			cJSON_AddNumberToObject(o, "line", ev->seed_line);
		}
		if (ev->cfg) {
			space_key(sp, ev->cfg, key, sizeof(key));
			cJSON_AddStringToObject(o, "key", key);
		}
		cJSON_AddStringToObject(o, "reason", ev->reason);
		return json_text(o);
	}
	cJSON_AddStringToObject(o, "event", "variant");
	cJSON_AddStringToObject(o, "problem", problem);
	cJSON_AddNumberToObject(o, "n", (double)ev->evaluated);
	cJSON_AddNumberToObject(o, "budget", (double)ev->budget);
	space_key(sp, ev->cfg, key, sizeof(key));
	cJSON_AddStringToObject(o, "key", key);
	cJSON_AddItemToObject(o, "config", config_json(sp, ev->cfg));
	cJSON_AddStringToObject(o, "status", ev->m->status_text ? ev->m->status_text : ev->m->status ? "failed" : "ok");
	if (ev->m->status == 0 && isfinite(ev->m->time_s) && !session_is_slo_miss(ev->m->time_s))
		cJSON_AddNumberToObject(o, "time_s", ev->m->time_s);
	else
		cJSON_AddNullToObject(o, "time_s");
	cJSON_AddBoolToObject(o, "improved", ev->improved);
	if (isfinite(ev->best_s) && !session_is_slo_miss(ev->best_s))
		cJSON_AddNumberToObject(o, "best_s", ev->best_s);
	else
		cJSON_AddNullToObject(o, "best_s");
	cJSON_AddStringToObject(o, "source", ev->source);
	cJSON_AddNumberToObject(o, "elapsed_s", ev->elapsed_s);
	const char *lm = session_last_metrics(s);
	if (lm && objective && strcmp(objective->metric, "time")) {
		cJSON *mx = cJSON_Parse(lm);
		const cJSON *v = cJSON_GetObjectItemCaseSensitive(mx, objective->metric);
		if (cJSON_IsNumber(v))
			cJSON_AddNumberToObject(o, "value", v->valuedouble);
		if (mx)
			cJSON_AddItemToObject(o, "metrics", mx);
	}
	return json_text(o);
}

char *tune_flow_drift_json(const session_note *n, const char *problem)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "event", "drift");
	cJSON_AddStringToObject(o, "problem", problem ? problem : "");
	cJSON_AddStringToObject(o, "defaults", n->key);
	cJSON_AddNumberToObject(o, "moved", n->moved);
	cJSON_AddNumberToObject(o, "threshold", n->threshold);
	cJSON_AddNumberToObject(o, "remeasure", (double)n->count);
	return json_text(o);
}

int tune_flow_found(const strategy_result *r)
{
	return r->have_best && !session_is_slo_miss(r->records[r->best].time_s);
}

int tune_flow_open_pool(const char *path, muh_session *s, const muh_session_opts *so, const char *devices, int mpi,
			muh_pool **out, int *bad_list, muh_diag *d)
{
	char *list[TUNE_FLOW_MAX_DEVICES] = {0};
	size_t n = 0;
	*out = NULL;
	int rc = tune_flow_devices(devices, list, &n, d);
	*bad_list = rc == MUH_EINPUT;
	if (!rc)
		rc = tune_flow_pool_open(path, s, so, list, n, mpi, out, d);
	tune_flow_devices_free(list, n);
	return rc;
}
