/*
 * api.c — libmuh's public boundary (include/muh/libmuh.h): thin wrappers
 * over the internal modules, and the one place where an internal muh_diag
 * becomes the thread-local message muh_last_error() returns.
 *
 * What this file owns: argument checks a C caller can get wrong (NULL
 * handles, a wrong options version, an index out of range), the mapping of
 * the internals' int returns onto muh_status, and the message. What it must
 * never do: decide anything the internals decide (the session, the space
 * and best.c own every answer), print, or exit. Each public handle is the
 * internal object itself (struct muh_space is space.c's, ...), so a wrapper
 * is a call, never a copy.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "muh/libmuh.h"
#include "muh/muh.h"
#include "muh/best.h"
#include "muh/diag.h"
#include "muh/session.h"
#include "muh/space.h"
#include "muh/spec.h"
#include "muh/store.h"

static _Thread_local char last_error[MUH_DIAG_PATH + MUH_DIAG_MSG + 32];

/* Sets this thread's message from d (file:line:col: msg, as diag_print's
 * first line without "error:"; MUH_ENOMEM may come without a message, as
 * the CLI's "out of memory") and returns rc as a status. */
static muh_status fail_diag(int rc, const muh_diag *d)
{
	if (d->file[0] && d->line > 0)
		snprintf(last_error, sizeof(last_error), "%s:%d:%d: %s", d->file, d->line, d->col > 0 ? d->col : 1,
			 d->msg);
	else if (d->file[0])
		snprintf(last_error, sizeof(last_error), "%s: %s", d->file, d->msg);
	else
		snprintf(last_error, sizeof(last_error), "%s",
			 d->msg[0] ? d->msg : rc == MUH_ENOMEM ? "out of memory" : "unknown error");
	if (rc < MUH_EFINDING || rc > MUH_ENOMEM) /* an internal code (STORE_KEPT, -1): the environment's */
		rc = MUH_EENV;
	return (muh_status)rc;
}

/* Sets this thread's message to the formatted text and returns rc. */
__attribute__((format(printf, 2, 3))) static muh_status fail(muh_status rc, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(last_error, sizeof(last_error), fmt, ap);
	va_end(ap);
	return rc;
}

const char *muh_last_error(void)
{
	return last_error;
}

const char *muh_version(void)
{
	return MUH_VERSION;
}

/* ---- spec ----------------------------------------------------------------- */

muh_status muh_spec_open(const char *path, muh_spec **out)
{
	if (!out)
		return fail(MUH_EINPUT, "muh_spec_open: out is NULL");
	*out = NULL;
	if (!path)
		return fail(MUH_EINPUT, "muh_spec_open: path is NULL");
	muh_diag d;
	diag_clear(&d);
	int rc = spec_load(path, out, &d);
	if (rc) {
		*out = NULL;
		return fail_diag(rc, &d);
	}
	return MUH_OK;
}

void muh_spec_close(muh_spec *spec)
{
	if (spec)
		spec_free(spec);
}

const char *muh_spec_name(const muh_spec *spec)
{
	return spec ? spec->name : NULL;
}

size_t muh_spec_ninstances(const muh_spec *spec)
{
	return spec ? spec_ninstances(spec) : 0;
}

/* ---- space ---------------------------------------------------------------- */

/* 1 when every index of cfg names one of its param's values: the internals
 * index with cfg unchecked, so the boundary checks what a caller hands in. */
static int cfg_in_range(const muh_space *sp, const uint32_t *cfg)
{
	const muh_spec *s = space_spec(sp);
	for (size_t p = 0; p < s->nparams; p++)
		if (cfg[p] >= s->params[p].nvalues)
			return 0;
	return 1;
}

/* MUH_EINPUT, said for function fn, for a cfg out of range. */
static muh_status out_of_range(const char *fn)
{
	return fail(MUH_EINPUT, "%s: the configuration holds a value index out of range", fn);
}

muh_status muh_space_build(const muh_spec *spec, const char *hw, size_t instance, muh_space **out)
{
	if (!out)
		return fail(MUH_EINPUT, "muh_space_build: out is NULL");
	*out = NULL;
	if (!spec)
		return fail(MUH_EINPUT, "muh_space_build: spec is NULL");
	if (instance >= spec_ninstances(spec))
		return fail(MUH_EINPUT, "muh_space_build: instance %zu, the spec has %zu", instance,
			    spec_ninstances(spec));
	muh_diag d;
	diag_clear(&d);
	muh_hw profile, *hwp = NULL;
	const char *ref = hw ? hw : spec->hw_ref;
	if (ref) {
		int rc = hw_resolve(ref, &profile, &d);
		if (rc)
			return fail_diag(rc, &d);
		hwp = &profile;
	}
	int rc = space_build(spec, hwp, instance, out, &d);
	if (rc) {
		*out = NULL;
		return fail_diag(rc, &d);
	}
	return MUH_OK;
}

void muh_space_free(muh_space *sp)
{
	if (sp)
		space_free(sp);
}

size_t muh_space_nparams(const muh_space *sp)
{
	return sp ? space_nparams(sp) : 0;
}

const char *muh_space_param_name(const muh_space *sp, size_t p)
{
	return sp && p < space_nparams(sp) ? space_spec(sp)->params[p].name : NULL;
}

long muh_space_param_index(const muh_space *sp, const char *name)
{
	for (size_t p = 0; sp && name && p < space_nparams(sp); p++)
		if (!strcmp(space_spec(sp)->params[p].name, name))
			return (long)p;
	return -1;
}

double muh_space_cartesian(const muh_space *sp)
{
	return sp ? space_cartesian(sp) : 0;
}

uint64_t muh_space_valid(const muh_space *sp)
{
	return sp ? space_valid(sp) : 0;
}

size_t muh_space_nconstraints(const muh_space *sp)
{
	return sp ? space_nconstraints(sp) : 0;
}

const char *muh_space_constraint(const muh_space *sp, size_t c)
{
	return sp && c < space_nconstraints(sp) ? space_spec(sp)->constraints[c].src : NULL;
}

double muh_space_rejected(const muh_space *sp, size_t c)
{
	return sp && c < space_nconstraints(sp) ? space_rejected(sp, c) : 0;
}

muh_status muh_space_config(const muh_space *sp, uint64_t i, uint32_t *cfg)
{
	if (!sp || !cfg)
		return fail(MUH_EINPUT, "muh_space_config: a NULL argument");
	if (i >= space_valid(sp))
		return fail(MUH_EINPUT, "muh_space_config: index %llu, the space has %llu valid configurations",
			    (unsigned long long)i, (unsigned long long)space_valid(sp));
	int rc = space_config_at(sp, i, cfg);
	if (rc)
		return fail(rc == MUH_ENOMEM ? MUH_ENOMEM : MUH_EINPUT, "muh_space_config: configuration %llu",
			    (unsigned long long)i);
	return MUH_OK;
}

muh_status muh_space_default(const muh_space *sp, uint32_t *cfg)
{
	if (!sp || !cfg)
		return fail(MUH_EINPUT, "muh_space_default: a NULL argument");
	return space_default(sp, cfg) ? MUH_OK : fail(MUH_EFINDING, "the defaults break a constraint");
}

muh_status muh_space_key(const muh_space *sp, const uint32_t *cfg, char *buf, size_t n)
{
	if (!sp || !cfg || (!buf && n))
		return fail(MUH_EINPUT, "muh_space_key: a NULL argument");
	if (!cfg_in_range(sp, cfg)) {
		if (n)
			buf[0] = '\0';
		return out_of_range("muh_space_key");
	}
	int len = space_key(sp, cfg, buf, n);
	if (len < 0 || (size_t)len >= n) {
		if (n)
			buf[0] = '\0';
		return fail(MUH_EINPUT, "muh_space_key: the key needs %d bytes, the buffer has %zu", len + 1, n);
	}
	return MUH_OK;
}

muh_status muh_space_parse_key(const muh_space *sp, const char *key, uint32_t *cfg)
{
	if (!sp || !key || !cfg)
		return fail(MUH_EINPUT, "muh_space_parse_key: a NULL argument");
	muh_diag d;
	diag_clear(&d);
	int rc = space_parse_key(sp, key, cfg, &d);
	return rc ? fail_diag(rc, &d) : MUH_OK;
}

muh_status muh_space_value_int(const muh_space *sp, const uint32_t *cfg, size_t p, long long *out)
{
	if (!sp || !cfg || !out)
		return fail(MUH_EINPUT, "muh_space_value_int: a NULL argument");
	if (p >= space_nparams(sp))
		return fail(MUH_EINPUT, "muh_space_value_int: param %zu, the space has %zu", p, space_nparams(sp));
	if (!cfg_in_range(sp, cfg))
		return out_of_range("muh_space_value_int");
	muh_value v = space_value(sp, cfg, p);
	if (v.t != MUH_INT)
		return fail(MUH_EINPUT, "param %s is not an integer", space_spec(sp)->params[p].name);
	*out = (long long)v.u.i;
	return MUH_OK;
}

/* ---- session -------------------------------------------------------------- */

muh_status muh_session_open(const char *path, const muh_session_options *o, muh_session **out)
{
	if (!out)
		return fail(MUH_EINPUT, "muh_session_open: out is NULL");
	*out = NULL;
	if (!path)
		return fail(MUH_EINPUT, "muh_session_open: path is NULL");
	if (o && o->version != MUH_SESSION_OPTIONS_VERSION)
		return fail(MUH_EINPUT, "muh_session_open: options of version %u, this libmuh (%s) reads version %d",
			    o->version, MUH_VERSION, MUH_SESSION_OPTIONS_VERSION);
	muh_session_opts so;
	memset(&so, 0, sizeof(so));
	if (o) {
		so.hw = o->hw;
		so.instance = o->instance;
		so.db = o->db;
		so.fresh = o->fresh;
		so.search.strategy = o->strategy;
		so.search.budget = o->budget;
		so.search.seed = o->seed;
	}
	muh_diag d;
	diag_clear(&d);
	muh_session *s = NULL;
	int rc = session_open(path, &so, &s, &d);
	if (!rc && (rc = session_start(s, &d))) {
		session_close(s);
		s = NULL;
	}
	if (rc)
		return fail_diag(rc, &d);
	*out = s;
	return MUH_OK;
}

void muh_session_close(muh_session *s)
{
	if (s)
		session_close(s);
}

const muh_space *muh_session_space(const muh_session *s)
{
	return s ? session_space(s) : NULL;
}

const char *muh_session_problem(const muh_session *s)
{
	return s ? session_problem(s) : "";
}

muh_status muh_session_next(muh_session *s, uint32_t *cfgs, size_t k, size_t *n)
{
	if (n)
		*n = 0;
	if (!s || !n || (!cfgs && k))
		return fail(MUH_EINPUT, "muh_session_next: a NULL argument");
	muh_diag d;
	diag_clear(&d);
	long got = session_next(s, cfgs, k, &d);
	if (got < 0)
		return fail_diag((int)-got, &d);
	*n = (size_t)got;
	return MUH_OK;
}

muh_status muh_session_lookup(muh_session *s, const uint32_t *cfg, int *answered)
{
	if (answered)
		*answered = 0;
	if (!s || !cfg || !answered)
		return fail(MUH_EINPUT, "muh_session_lookup: a NULL argument");
	if (!cfg_in_range(session_space(s), cfg))
		return out_of_range("muh_session_lookup");
	muh_diag d;
	diag_clear(&d);
	int rc = session_lookup(s, cfg, NULL, &d);
	if (rc < 0)
		return fail_diag(-rc, &d);
	*answered = rc == 1;
	return MUH_OK;
}

muh_status muh_session_record(muh_session *s, const uint32_t *cfg, double seconds, int failed)
{
	if (!s || !cfg)
		return fail(MUH_EINPUT, "muh_session_record: a NULL argument");
	if (!cfg_in_range(session_space(s), cfg))
		return out_of_range("muh_session_record");
	muh_diag d;
	diag_clear(&d);
	int rc = session_record(s, cfg, seconds, failed != 0, &d);
	return rc ? fail_diag(rc, &d) : MUH_OK;
}

muh_status muh_session_best(const muh_session *s, uint32_t *cfg, double *seconds)
{
	if (!s)
		return fail(MUH_EINPUT, "muh_session_best: s is NULL");
	return session_best(s, cfg, seconds) ? MUH_OK : fail(MUH_EFINDING, "no configuration was told ok");
}

size_t muh_session_pending(const muh_session *s)
{
	return s ? session_pending(s) : 0;
}

int muh_session_done(const muh_session *s)
{
	return s ? session_done(s) : 1;
}

/* ---- store ---------------------------------------------------------------- */

muh_status muh_store_open(const char *path, muh_store **out)
{
	if (!out)
		return fail(MUH_EINPUT, "muh_store_open: out is NULL");
	*out = NULL;
	if (!path)
		return fail(MUH_EINPUT, "muh_store_open: path is NULL");
	muh_diag d;
	diag_clear(&d);
	int rc = store_open_ro(path, out, &d);
	if (rc) {
		*out = NULL;
		return fail_diag(rc, &d);
	}
	return MUH_OK;
}

void muh_store_close(muh_store *st)
{
	if (st)
		store_close(st);
}

struct latest_run {
	const char *spec_name, *problem;
	int64_t id;
};

/* store_foreach_run callback: keeps the last (latest) run that matches. */
static int latest_run_cb(void *ud, const store_run *r)
{
	struct latest_run *l = ud;
	if (l->spec_name && (!r->spec_name || strcmp(r->spec_name, l->spec_name)))
		return 0;
	if (l->problem && (!r->problem || strcmp(r->problem, l->problem)))
		return 0;
	l->id = r->id;
	return 0;
}

muh_status muh_store_find_run(muh_store *st, const char *spec_name, const char *problem, int64_t *run)
{
	if (!st || !run)
		return fail(MUH_EINPUT, "muh_store_find_run: a NULL argument");
	struct latest_run l = {.spec_name = spec_name, .problem = problem, .id = 0};
	if (store_foreach_run(st, latest_run_cb, &l))
		return fail(MUH_EENV, "the store's runs could not be read");
	if (!l.id)
		return fail(MUH_EINPUT, "the store holds no run%s%s%s%s", spec_name ? " of " : "",
			    spec_name ? spec_name : "", problem ? " at " : "", problem ? problem : "");
	*run = l.id;
	return MUH_OK;
}

struct run_best {
	muh_store *st;
	int rc;
	muh_best b;
	muh_diag d;
};

/* store_with_run callback: ranks the run (best_of_run) into f->b, its
 * status into f->rc. */
static int run_best_cb(void *ud, const store_run *r)
{
	struct run_best *f = ud;
	f->rc = best_of_run(f->st, r, &f->b, &f->d);
	return MUH_OK;
}

muh_status muh_store_best(muh_store *st, int64_t run, char *key, size_t n, double *score, size_t *nmeasured)
{
	if (!st || !key)
		return fail(MUH_EINPUT, "muh_store_best: a NULL argument");
	if (n)
		key[0] = '\0';
	struct run_best f;
	memset(&f, 0, sizeof(f));
	f.st = st;
	diag_clear(&f.d);
	int wr = store_with_run(st, run, run_best_cb, &f);
	if (wr == MUH_EINPUT)
		return fail(MUH_EINPUT, "the store holds no run %lld", (long long)run);
	if (wr)
		return fail(MUH_EENV, "the store's runs could not be read");
	muh_status rc = MUH_OK;
	if (f.rc)
		rc = fail_diag(f.rc, &f.d);
	else if (!f.b.nranked)
		rc = fail(MUH_EFINDING, "run %lld has no ok variant%s", (long long)run,
			  f.b.objective.nslo ? " within its SLOs" : "");
	else if (strlen(f.b.ranked[0].key) >= n)
		rc = fail(MUH_EINPUT, "the best's key needs %zu bytes, the buffer has %zu",
			  strlen(f.b.ranked[0].key) + 1, n);
	else {
		memcpy(key, f.b.ranked[0].key, strlen(f.b.ranked[0].key) + 1);
		if (score)
			*score = f.b.ranked[0].score;
		if (nmeasured)
			*nmeasured = f.b.nmeasured;
	}
	best_free(&f.b);
	return rc;
}
