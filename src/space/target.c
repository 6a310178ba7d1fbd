/*
 * target.c — what to evaluate: the target/verify/measure sections of a spec
 * read into a struct muh_target, and configurations of a space made into
 * variants.
 *
 * Owns: the spec keys of docs/spec.md sections "target", "verify",
 * "measure" (and the engine's, in "engine, load and objective"), their
 * defaults and their errors (file:line:col of the offending value; of the
 * key, for an unknown key, with the section that documents its nearest). Never touches a
 * device or the file system beyond checking that paths exist. (A launch
 * file's blockers are the session's check, session_open: reading the tree
 * it launches is the scanner's job, upstream of the evaluator.)
 */
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "muh/eval.h"
#include "eval_int.h"
#include "muh/deploy.h"
#include "muh/load.h"
#include "muh/muh.h"
#include "muh/strategy.h"
#include "duration.h"

enum kind { K_STR, K_PATH, K_NUM, K_INT, K_DUR };

struct key_desc {
	const char *key;
	enum kind kind;
	size_t off, size;
	double lo, hi;
};

#define S(k, f) {k, K_STR, offsetof(muh_target, f), sizeof(((muh_target *)0)->f), 0, 0}
#define P(k, f) {k, K_PATH, offsetof(muh_target, f), sizeof(((muh_target *)0)->f), 0, 0}
#define N(k, f, lo, hi) {k, K_NUM, offsetof(muh_target, f), 0, lo, hi}
#define T(k, f, lo, hi) {k, K_DUR, offsetof(muh_target, f), 0, lo, hi}
#define I(k, f, lo, hi) {k, K_INT, offsetof(muh_target, f), 0, lo, hi}

static const struct key_desc keys[] = {
	S("target.backend", backend),
	P("target.source", source),
	S("target.entry", entry),
	S("target.cflags", cflags),
	S("target.command", command),
	S("target.worker", worker),
	S("target.baseline", baseline),
	S("target.grid", grid[0]),
	S("target.grid.0", grid[0]),
	S("target.grid.1", grid[1]),
	S("target.grid.2", grid[2]),
	S("target.block", block[0]),
	S("target.block.0", block[0]),
	S("target.block.1", block[1]),
	S("target.block.2", block[2]),
	S("target.smem", smem),
	S("target.buffers.0", buffers[0]),
	S("target.buffers.1", buffers[1]),
	S("target.buffers.2", buffers[2]),
	S("target.buffers.3", buffers[3]),
	S("target.buffers.4", buffers[4]),
	S("target.buffers.5", buffers[5]),
	S("target.buffers.6", buffers[6]),
	S("target.buffers.7", buffers[7]),
	S("target.dtype", dtype),
	P("target.kernel", source),
	P("target.engine_tree", engine_tree),
	S("target.module", module),
	S("verify.entry", ref_entry),
	S("verify.grid", ref_grid[0]),
	S("verify.grid.0", ref_grid[0]),
	S("verify.grid.1", ref_grid[1]),
	S("verify.grid.2", ref_grid[2]),
	S("verify.block", ref_block[0]),
	S("verify.block.0", ref_block[0]),
	S("verify.block.1", ref_block[1]),
	S("verify.block.2", ref_block[2]),
	N("measure.gpu_warm", gpu_warm_s, 0, 600),
	I("target.device", device, 0, 1024),
	S("verify.reference", reference),
	N("verify.rtol", rtol, 0, 1),
	N("verify.atol", atol, 0, 1e30),
	I("verify.checks", checks, 0, 1000),
	N("measure.timeout", timeout_s, 0.001, 86400),
	N("measure.mem_limit_mb", mem_limit_mb, 0, 1e9),
	N("measure.worker_mem_limit_mb", worker_mem_limit_mb, 0, 1e9),
	N("measure.ci", ci_frac, 0, 1),
	N("measure.max_noise", max_noise, 0, 10),
	I("measure.min_samples", min_samples, 1, 1000000),
	I("measure.max_samples", max_samples, 1, 1000000),
	N("measure.max_time", max_time_s, 0, 86400),
	I("measure.warmups", warmups, 0, 100000),
	I("measure.drift_every", drift_every, 0, 1000000),
	I("measure.retime_top", retime_top, 0, 16), /* an interleaved set: EVAL_INTERLEAVE_MAX */
	N("measure.retime_warm", retime_warm_s, 0, 600),
	I("measure.hidden_constraints", hidden, 0, 1),
	N("measure.min_sample_time", min_sample_s, 0, 10),
	I("measure.isolate", isolate, 0, 1),
	I("measure.probe", probe, 0, 1000000), /* engine: requests of a short probe first (0: none) */
	I("measure.halving.eta", halving_eta, 2, 100), /* engine: successive halving over request counts */
	I("measure.halving.min_requests", halving_min, 1, 1000000),
	P("measure.cache_dir", cache_dir),
	P("target.launch", launch),
	S("target.ready.http", ready_http),
	S("target.ready.log", ready_log),
	T("target.ready.timeout", ready_timeout_s, 0.1, 86400),
	T("target.stop_grace", stop_grace_s, 0, 3600),
	I("target.port", port, 0, 65535),
	S("target.port_arg", port_arg),
	S("target.props", props),
};

/* target.* keys that belong to other modules and are not ours to reject
 * (muh scan's starter specs name the engine tree, file and scope the knobs
 * come from). */
static const char *const foreign[] = {"target.name", "target.description", "target.kind",
				     "target.file", "target.scope", NULL};

static int diag_kv(const muh_spec *s, const muh_kv *kv, muh_diag *d, const char *fmt, const char *a,
		   const char *b)
{
	spec_diag_at(s, d, kv->line, kv->col);
	return diag_errorf(d, fmt, a, b);
}

/* Resolves p relative to the spec's directory, then the working directory. */
static void resolve_path(const muh_target *t, const char *p, char *out, size_t n)
{
	struct stat st;
	if (p[0] != '/') {
		snprintf(out, n, "%s/%s", t->spec_dir, p);
		if (stat(out, &st) == 0)
			return;
	}
	snprintf(out, n, "%s", p);
}

/* The engine backend's own checks and defaults: a launch file that parses
 * as a deployment file (or target.command), and measure.* defaults for
 * loads that take seconds, not microseconds, each unless the spec sets it. */
static int engine_target_check(const muh_spec *s, muh_target *t, const muh_kv *bk, muh_diag *d)
{
	if (!t->launch[0] && !t->command[0]) {
		spec_diag_at(s, d, bk ? bk->line : 1, bk ? bk->col : 1);
		return diag_errorf(d, "backend engine needs target.launch (a deployment file) or target.command");
	}
	if (t->launch[0]) {
		deploy_file *f;
		muh_diag dd;
		diag_clear(&dd);
		const muh_kv *kv = spec_kv(s, "target.launch");
		if (deploy_load(t->launch, NULL, &f, &dd)) {
			*d = dd; /* the deployment file's own file:line:col */
			if (!dd.file[0] && kv)
				return diag_kv(s, kv, d, "cannot read the deployment file '%s': %s", t->launch, dd.msg);
			return MUH_EINPUT;
		}
		deploy_free(f);
	}
	if (!spec_kv(s, "measure.min_samples"))
		t->min_samples = 3;
	if (!spec_kv(s, "measure.max_samples"))
		t->max_samples = t->min_samples > 5 ? t->min_samples : 5;
	if (!spec_kv(s, "measure.warmups"))
		t->warmups = 0; /* the load has its own warm-up requests */
	if (!spec_kv(s, "measure.ci"))
		t->ci_frac = 0.03;
	if (!spec_kv(s, "measure.max_time"))
		t->max_time_s = 3600;
	if (!spec_kv(s, "measure.mem_limit_mb"))
		t->mem_limit_mb = 0; /* the server has its own memory; the runner only waits */
	if (!spec_kv(s, "verify.checks"))
		t->checks = 0;
	if (!spec_kv(s, "measure.timeout"))
		t->timeout_s = t->ready_timeout_s + 600;
	if (!spec_kv(s, "measure.drift_every"))
		t->drift_every = 8;
	if (!spec_kv(s, "measure.hidden_constraints"))
		t->hidden = 1;
	return MUH_OK;
}

int eval_target_new(const muh_spec *s, muh_target **out, muh_diag *d)
{
	*out = malloc(sizeof(**out));
	if (!*out)
		return MUH_ENOMEM;
	int rc = eval_target_from_spec(s, *out, d);
	if (rc) {
		free(*out);
		*out = NULL;
	}
	return rc;
}

void eval_target_free(muh_target *t)
{
	free(t);
}

const char *eval_target_backend(const muh_target *t)
{
	return t->backend;
}

const char *eval_target_launch(const muh_target *t)
{
	return t->launch;
}

double eval_target_timeout_s(const muh_target *t)
{
	return t->timeout_s;
}

double eval_target_max_noise(const muh_target *t)
{
	return t->max_noise;
}

/* The section of docs/spec.md that documents key, a key of keys[] (or,
 * for an unknown one, of its YAML section): the engine backend's own
 * target keys are in "engine, load and objective", the others in the
 * section of their name's first part ("measure" for measure.warmups). */
static void doc_section(const char *key, char *buf, size_t n)
{
	static const char *const engine[] = {"target.launch", "target.ready.", "target.stop_grace",
					     "target.port", "target.props", NULL};
	for (size_t i = 0; engine[i]; i++)
		if (!strncmp(key, engine[i], strlen(engine[i]))) {
			snprintf(buf, n, "engine, load and objective");
			return;
		}
	snprintf(buf, n, "%.*s", (int)strcspn(key, "."), key);
}

/* The description of kv's key when it is one of the target:, verify: or
 * measure: keys this reader takes (*k), NULL when it is another section's
 * or a foreign key read elsewhere; MUH_EINPUT for an unknown key of these
 * sections, at the key (not its value), with the nearest known key of the
 * same section and the docs/spec.md section that documents it. */
static int key_of(const muh_spec *s, const muh_kv *kv, const struct key_desc **k, muh_diag *d)
{
	*k = NULL;
	int ours = !strncmp(kv->key, "target.", 7) || !strncmp(kv->key, "verify.", 7) ||
		   !strncmp(kv->key, "measure.", 8);
	if (!ours)
		return MUH_OK;
	for (size_t j = 0; j < sizeof(keys) / sizeof(keys[0]); j++)
		if (!strcmp(keys[j].key, kv->key))
			*k = &keys[j];
	if (*k)
		return MUH_OK;
	for (size_t j = 0; foreign[j]; j++)
		if (!strcmp(foreign[j], kv->key) || !strncmp(kv->key, "target.name.", 12))
			return MUH_OK;
	/* the nearest known key of the same section, as for names elsewhere */
	diag_near near = DIAG_NEAR_INIT;
	size_t sec = (size_t)(strchr(kv->key, '.') - kv->key) + 1;
	for (size_t j = 0; j < sizeof(keys) / sizeof(keys[0]); j++)
		if (!strncmp(keys[j].key, kv->key, sec)) /* the same section: the prefix costs nothing */
			diag_near_offer(&near, kv->key, strlen(kv->key), keys[j].key);
	char hint[160], sect[64];
	doc_section(near.name ? near.name : kv->key, sect, sizeof(sect));
	spec_diag_at(s, d, kv->kline, kv->kcol);
	return diag_errorf(d, "unknown key '%s'%s; see docs/spec.md, section \"%s\"", kv->key,
			   diag_near_hint(near.name, hint, sizeof(hint)), sect);
}

/* What backend t->backend needs to measure, from spec s (bk: its
 * target.backend entry, may be NULL): a readable source for cpu and cuda, a
 * command, a worker, and the engine's checks (engine_target_check, which
 * also sets its measure.* defaults). MUH_EINPUT at the place that lacks it. */
static int target_needs(const muh_spec *s, muh_target *t, const muh_kv *bk, muh_diag *d)
{
	int needs_source = eval_backend_is(t->backend, EVAL_SOURCE);
	if (needs_source && !t->source[0]) {
		spec_diag_at(s, d, bk ? bk->line : 1, bk ? bk->col : 1);
		return diag_errorf(d, "backend %s needs target.source", t->backend);
	}
	if (t->source[0] && access(t->source, R_OK) != 0) {
		const muh_kv *kv = spec_kv(s, "target.source");
		return diag_kv(s, kv, d, "cannot read kernel source '%s'%s", t->source, "");
	}
	if (!strcmp(t->backend, "command") && !t->command[0]) {
		spec_diag_at(s, d, bk ? bk->line : 1, bk ? bk->col : 1);
		return diag_errorf(d, "backend command needs target.command");
	}
	if (!strcmp(t->backend, "worker") && !t->worker[0]) {
		spec_diag_at(s, d, bk ? bk->line : 1, bk ? bk->col : 1);
		return diag_errorf(d, "backend worker needs target.worker");
	}
	if (!strcmp(t->backend, "engine")) {
		int rc = engine_target_check(s, t, bk, d);
		if (rc)
			return rc;
	}
	return MUH_OK;
}

/* eval_target_from_spec's reading. measure 0 (eval_target_check) stops
 * after what the spec's text alone decides: the names, the values, the
 * buffers, the backend's name and the load's keys; the backend's needs
 * (a source, a command, a worker, a launch file that parses) and files
 * that must exist are checked only when measuring. */
static int target_read(const muh_spec *s, muh_target *t, int measure, muh_diag *d)
{
	eval_target_defaults(t);
	if (s->path) {
		snprintf(t->spec_dir, sizeof(t->spec_dir), "%s", s->path);
		char *sl = strrchr(t->spec_dir, '/');
		if (sl)
			*sl = '\0';
		else
			snprintf(t->spec_dir, sizeof(t->spec_dir), ".");
	}
	load_opts lo; /* the load: block's keys together, for the checks across them */
	const muh_kv *lo_requests = NULL, *lo_duration = NULL;
	load_defaults(&lo);
	for (size_t i = 0; i < s->nkv; i++) {
		const muh_kv *kv = &s->kv[i];
		if (!strncmp(kv->key, "load.", 5)) { /* the engine's load, checked by its reader */
			char why[512];
			if (!strcmp(kv->key, "load.requests"))
				lo_requests = kv;
			if (!strcmp(kv->key, "load.duration"))
				lo_duration = kv;
			if (t->nload == 32)
				return diag_kv(s, kv, d, "more than 32 keys under load:%s%s", "", "");
			if (strlen(kv->key + 5) >= sizeof(t->load_key[0]) || strlen(kv->value) >= sizeof(t->load_val[0]))
				return diag_kv(s, kv, d, "%s is too long%s", kv->key, "");
			int lrc = load_opts_set(&lo, kv->key + 5, kv->value, why, sizeof(why));
			if (lrc == -2) { /* an unknown key: the caret under it */
				spec_diag_at(s, d, kv->kline, kv->kcol);
				return diag_errorf(d, "%s: %s; see docs/load.md", kv->key, why);
			}
			if (lrc)
				return diag_kv(s, kv, d, "%s: %s", kv->key, why);
			snprintf(t->load_key[t->nload], sizeof(t->load_key[0]), "%s", kv->key + 5);
			snprintf(t->load_val[t->nload], sizeof(t->load_val[0]), "%s", kv->value);
			t->nload++;
			continue;
		}
		if (!strncmp(kv->key, "knobs.", 6)) { /* param -> knob id, for overlays */
			if (t->nknobs == 16)
				return diag_kv(s, kv, d, "more than 16 knobs%s%s", "", "");
			if (strlen(kv->key + 6) >= sizeof(t->knob_param[0]) ||
			    strlen(kv->value) >= sizeof(t->knob_id[0]))
				return diag_kv(s, kv, d, "%s is too long%s", kv->key, "");
			snprintf(t->knob_param[t->nknobs], sizeof(t->knob_param[0]), "%s", kv->key + 6);
			snprintf(t->knob_id[t->nknobs], sizeof(t->knob_id[0]), "%s", kv->value);
			t->nknobs++;
			continue;
		}
		const struct key_desc *k = NULL;
		int rc = key_of(s, kv, &k, d);
		if (rc)
			return rc;
		if (!k)
			continue;
		char *base = (char *)t + k->off;
		if (k->kind == K_STR || k->kind == K_PATH) {
			if (strlen(kv->value) >= k->size)
				return diag_kv(s, kv, d, "%s is too long%s", kv->key, "");
			if (k->kind == K_PATH)
				resolve_path(t, kv->value, base, k->size);
			else
				snprintf(base, k->size, "%s", kv->value);
			continue;
		}
		char *end;
		if (k->kind == K_DUR) {
			double x;
			if (duration_parse(kv->value, &x) || !(x >= k->lo && x <= k->hi))
				return diag_kv(s, kv, d, "%s: '%s' is not a duration (such as 600s, 10m, 2)",
					       kv->key, kv->value);
			*(double *)base = x;
			continue;
		}
		double x = strtod(kv->value, &end);
		if (!strcmp(kv->value, "true") || !strcmp(kv->value, "True"))
			x = 1, end = "";
		else if (!strcmp(kv->value, "false") || !strcmp(kv->value, "False"))
			x = 0, end = "";
		if (end == kv->value || *end || !(x >= k->lo && x <= k->hi) ||
		    (k->kind == K_INT && x != floor(x))) {
			char msg[400];
			if (k->kind == K_INT && k->lo == 0 && k->hi == 1)
				snprintf(msg, sizeof(msg), "'%.200s' is not a valid value: expected true or false",
					 kv->value);
			else
				snprintf(msg, sizeof(msg), "'%.200s' is not a valid value: expected %s from %g to %g",
					 kv->value, k->kind == K_INT ? "an integer" : "a number", k->lo, k->hi);
			return diag_kv(s, kv, d, "%s: %s", kv->key, msg);
		}
		if (k->kind == K_NUM)
			*(double *)base = x;
		else
			*(int *)base = (int)x;
	}
	for (size_t i = 0; i < s->nkv; i++) { /* cuda buffers: their shape, here, at file:line */
		const muh_kv *kv = &s->kv[i];
		eval_buffer b;
		char why[512];
		if (!strncmp(kv->key, "target.buffers", 14) && eval_parse_buffer(kv->value, &b, why, sizeof(why)))
			return diag_kv(s, kv, d, "%s%s", why, "");
	}
	const muh_kv *bk = spec_kv(s, "target.backend");
	if (!strcmp(t->backend, "none")) { /* a space whose times come from elsewhere */
		if (measure)
			return diag_kv(s, bk, d, "backend none measures nothing: this spec's times come from "
				       "elsewhere (a replay, muh tune SPEC --replay FILE, or a program that tunes "
				       "online through libmuh)%s%s", "", "");
	} else if (!eval_backend_find(t->backend)) {
		static const char *const backends[] = {"cpu", "cuda", "worker", "command", "engine", NULL};
		const char *nb = diag_near_among(t->backend, strlen(t->backend), backends);
		char hint[96];
		if (bk)
			return diag_kv(s, bk, d, "unknown backend '%s'%s; known: cpu, cuda, worker, command, engine",
				       t->backend, diag_near_hint(nb, hint, sizeof(hint)));
		return diag_errorf(d, "unknown backend '%s'", t->backend);
	} else if (measure) {
		int rc = target_needs(s, t, bk, d);
		if (rc)
			return rc;
	}
	if (lo_duration && lo.duration_s > 0 && lo.requests > 0)
		return diag_kv(s, lo_duration, d,
			       "load: requests (%s) and duration are both given: a load sends a number of requests "
			       "or sends for a duration, not both%s",
			       lo_requests ? lo_requests->value : "?", "");
	if (t->max_samples < t->min_samples)
		t->max_samples = t->min_samples;
	/* a GPU compiler rejects some configs for structural reasons: learn the
	 * pattern (session.c's pattern model) rather than compile its neighbours */
	if (eval_backend_is(t->backend, EVAL_DEVICE) && !spec_kv(s, "measure.hidden_constraints"))
		t->hidden = 2; /* the pattern model only: a kernel's failure is no matter of size */
	if (t->retime_top < 0) /* a GPU's clock may fall under load: re-time the best there */
		t->retime_top = eval_backend_is(t->backend, EVAL_DEVICE) ? 3 : 0;
	return MUH_OK;
}

int eval_target_load(const muh_target *t, load_opts *o, char *why, size_t n)
{
	load_defaults(o);
	for (int i = 0; t && i < t->nload; i++)
		if (load_opts_set(o, t->load_key[i], t->load_val[i], why, n))
			return i;
	return -1;
}

int eval_target_check(const muh_spec *s, muh_diag *d)
{
	muh_target *t = malloc(sizeof(*t));
	if (!t)
		return MUH_ENOMEM;
	int rc = target_read(s, t, 0, d);
	free(t);
	return rc;
}

double eval_target_ci_of_spec(const muh_spec *s)
{
	muh_target *t = malloc(sizeof(*t));
	muh_diag d;
	double ci = t && !target_read(s, t, 0, &d) ? t->ci_frac : NAN;
	free(t);
	return ci;
}

int eval_target_from_spec(const muh_spec *s, muh_target *t, muh_diag *d)
{
	return target_read(s, t, 1, d);
}

int eval_variant_from_key(const muh_spec *s, const char *key, muh_variant *v, char *why, size_t n)
{
	memset(v, 0, sizeof(*v));
	const char **names = calloc(s->nparams + 1, sizeof(char *));
	muh_value *vals = calloc(s->nparams + 1, sizeof(muh_value));
	int rc = names && vals ? MUH_OK : MUH_ENOMEM;
	for (size_t p = 0; p < s->nparams && !rc; p++) {
		const muh_param *par = &s->params[p];
		char want[256], have[256];
		if (space_key_value(key, par->name, want, sizeof(want))) {
			snprintf(why, n, "the stored variant %s has no value for %s", key, par->name);
			rc = MUH_EINPUT;
			break;
		}
		size_t k;
		for (k = 0; k < par->nvalues; k++) {
			value_fmt(have, sizeof(have), par->values[k]);
			if (!strcmp(have, want))
				break;
		}
		if (k == par->nvalues) {
			snprintf(why, n, "%s=%s of the stored variant is not a value of the spec's %s any more",
				 par->name, want, par->name);
			rc = MUH_EINPUT;
			break;
		}
		names[p] = par->name;
		vals[p] = par->values[k];
	}
	if (!rc)
		rc = eval_variant_make(v, key, s->nparams, 0, names, vals);
	free(names);
	free(vals);
	return rc;
}

int eval_variant_from_space(const muh_space *sp, const uint32_t *cfg, size_t instance, muh_variant *v)
{
	const muh_spec *s = space_spec(sp);
	size_t np = space_nparams(sp), ns = s->nproblem, n = np + ns;
	const char **names = calloc(n + 1, sizeof(char *));
	muh_value *vals = calloc(n + 1, sizeof(muh_value));
	char key[4096];
	if (!names || !vals) {
		free(names);
		free(vals);
		return MUH_ENOMEM;
	}
	for (size_t p = 0; p < np; p++) {
		names[p] = s->params[p].name;
		vals[p] = space_value(sp, cfg, p);
	}
	for (size_t k = 0; k < ns; k++) {
		names[np + k] = s->problem[k].name;
		vals[np + k] = spec_problem_value(s, k, instance);
	}
	space_key(sp, cfg, key, sizeof(key));
	int rc = eval_variant_make(v, key, np, ns, names, vals);
	free(names);
	free(vals);
	return rc;
}

