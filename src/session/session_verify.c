/*
 * session_verify.c — the two workflows over a session that are not a
 * search: muh eval's measurement of a list of variants (session_eval), and
 * muh verify's proof that each param reaches the compiled artifact, which
 * flags dead knobs from fingerprints (session_verify).
 *
 * Must never: print, exit, or change the process's signal handling.
 */
#include <errno.h>
#include <cjson/cJSON.h>
#include <stdarg.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "muh/best.h"
#include "muh/deploy.h"
#include "muh/engine.h"
#include "muh/load.h"
#include "muh/muh.h"
#include "muh/replay.h"
#include "muh/replay_store.h"
#include "muh/scan.h"
#include "muh/session.h"
#include "muh/stats.h"
#include "muh/transfer_seeds.h"
#include "muh/baseline.h"
#include "muh/store.h"
#include "u64map.h"
#include "eval_int.h"
#include "overlay_int.h"
#include "session_int.h"

/* ---- muh eval: a list ----------------------------------------------------- */

int session_eval(muh_session *s, uint64_t n, int (*cfg_at)(void *ctx, uint64_t i, uint32_t *cfg), void *ctx,
		 long long limit, int (*on_row)(void *ctx, const session_result *r), session_prepare_info *prepared,
		 muh_diag *d)
{
	diag_clear(d);
	size_t np = s->np;
	uint32_t *cfg = calloc(np + 1, sizeof(uint32_t)), *nx = calloc(np + 1, sizeof(uint32_t));
	int rc = MUH_OK;
	if (!cfg || !nx) {
		free(cfg);
		free(nx);
		return MUH_ENOMEM;
	}
	if (prepared)
		memset(prepared, 0, sizeof(*prepared));
	volatile sig_atomic_t *stop = s->o.stop;
	/* compile first: the batch prepare gets every valid variant still to measure */
	if (s->ev && eval_batch_prepares(s->ev) && !(stop && *stop)) {
		size_t cap = n < 100000 ? (size_t)n : 100000, m = 0;
		uint32_t *cfgs = calloc((cap ? cap : 1) * np + 1, sizeof(uint32_t));
		for (uint64_t i = 0; cfgs && i < n && m < cap && (limit < 0 || (long long)m < limit); i++) {
			uint32_t *c = cfgs + m * np;
			muh_variant v;
			if (cfg_at(ctx, i, c) || !space_is_valid(s->space, c) ||
			    eval_variant_from_space(s->space, c, s->o.instance, &v))
				continue;
			m += !session_in_store(s, &v);
			eval_variant_free(&v);
		}
		session_prepare_cfgs(s, cfgs, m, m, prepared, 0, 1, 0);
		if (prepared)
			prepared->capped = m == cap && cap < n;
		free(cfgs);
	}
	long long measured = 0;
	uint64_t ahead = 0; /* variants before this index have been prefetched */
	for (uint64_t i = 0; i < n && !(stop && *stop) && (limit < 0 || measured < limit); i++) {
		if (cfg_at(ctx, i, cfg))
			continue;
		muh_variant v;
		muh_measurement *m = &s->last;
		if (eval_variant_from_space(s->space, cfg, s->o.instance, &v)) {
			rc = MUH_ENOMEM;
			break;
		}
		if (session_in_store(s, &v)) {
			eval_variant_free(&v);
			continue;
		}
		measurement_free(m);
		measurement_init(m);
		/* claim it, so that a second muh on this run never measures it
		 * too; when that one has (or is), skip it here */
		static volatile sig_atomic_t never = 0;
		int cl = s->st ? store_claim_or_get(s->st, s->run, v.key, m, d, stop ? stop : &never) : 1;
		if (cl < 1) {
			eval_variant_free(&v);
			if (cl < 0) {
				rc = stop && *stop ? MUH_OK : MUH_EENV;
				break;
			}
			continue;
		}
		/* compile while measuring: hand the next variants to the pool */
		if (ahead <= i)
			ahead = i + 1;
		while (s->ev && s->o.jobs > 0 && !eval_batch_prepares(s->ev) && ahead < n &&
		       ahead <= i + (uint64_t)s->o.jobs) {
			muh_variant nv;
			int started = 1;
			if (!cfg_at(ctx, ahead, nx) && space_is_valid(s->space, nx) &&
			    eval_variant_from_space(s->space, nx, s->o.instance, &nv) == MUH_OK) {
				if (!session_in_store(s, &nv))
					started = eval_prefetch(s->ev, &nv);
				eval_variant_free(&nv);
			}
			if (!started)
				break;
			ahead++;
		}
		measurement_free(m);
		measurement_init(m);
		if (!space_is_valid(s->space, cfg)) {
			measurement_fail(m, EVAL_INVALID, "violates the constraints");
		} else if ((rc = eval_measure(s->ev, &v, m, d))) {
			eval_variant_free(&v);
			if (s->st)
				store_release(s->st, s->run, v.key);
			break;
		}
		int put = s->st ? store_put(s->st, s->run, &v, m, d) : MUH_OK;
		if (put == STORE_KEPT) /* another process's row is kept; report that one */
			put = (measurement_free(m), store_get(s->st, s->run, v.key, m)) == 1 ? MUH_OK : MUH_EENV;
		if (s->st)
			store_release(s->st, s->run, v.key);
		if (!measured)
			session_store_noise_once(s);
		measured++;
		s->measured++;
		memcpy(s->cfg, cfg, np * sizeof(uint32_t));
		snprintf(s->key, sizeof(s->key), "%s", v.key);
		session_result res = {.cfg = s->cfg, .key = s->key, .m = m, .source = "measured"};
		session_score_measurement(&s->objective, m, &res.score);
		eval_variant_free(&v);
		int stop_rows = on_row ? on_row(ctx, &res) : 0;
		if (put) {
			rc = MUH_EENV;
			break;
		}
		if (stop_rows)
			break;
	}
	free(cfg);
	free(nx);
	return rc;
}

int session_eval_interleaved(muh_session *s, size_t n, int (*cfg_at)(void *ctx, uint64_t i, uint32_t *cfg),
			     void *ctx, int rounds, int (*on_row)(void *ctx, const session_result *r),
			     session_prepare_info *prepared, muh_diag *d)
{
	diag_clear(d);
	if (prepared)
		memset(prepared, 0, sizeof(*prepared));
	if (!s->ev)
		return diag_errorf(d, "the session measures nothing: open it with measure");
	if (!n || n > EVAL_INTERLEAVE_MAX)
		return diag_errorf(d, "%zu configurations to interleave: 1 to %d", n, EVAL_INTERLEAVE_MAX);
	size_t np = s->np, nv = 0;
	uint32_t *cfgs = calloc(n * np + 1, sizeof(uint32_t));
	unsigned char valid[EVAL_INTERLEAVE_MAX] = {0};
	muh_variant vs[EVAL_INTERLEAVE_MAX];
	muh_measurement ms[EVAL_INTERLEAVE_MAX], got[EVAL_INTERLEAVE_MAX];
	size_t at[EVAL_INTERLEAVE_MAX]; /* vs[k] is configuration at[k] */
	int rc = cfgs ? MUH_OK : MUH_ENOMEM;
	for (size_t i = 0; i < n; i++)
		measurement_init(&ms[i]);
	for (size_t i = 0; !rc && i < n; i++) {
		uint32_t *c = cfgs + i * np;
		if (cfg_at(ctx, i, c) || !space_is_valid(s->space, c)) {
			measurement_fail(&ms[i], EVAL_INVALID, "violates the constraints");
			continue;
		}
		if (eval_variant_from_space(s->space, c, s->o.instance, &vs[nv])) {
			rc = MUH_ENOMEM;
			break;
		}
		valid[i] = 1;
		at[nv++] = i;
	}
	uint32_t *todo = rc ? NULL : calloc(nv * np + 1, sizeof(uint32_t));
	for (size_t k = 0; todo && k < nv; k++)
		memcpy(todo + k * np, cfgs + at[k] * np, np * sizeof(uint32_t));
	if (todo && !(s->o.stop && *s->o.stop))
		session_prepare_cfgs(s, todo, nv, nv, prepared, 0, 1, 0);
	free(todo);
	int took = 0, called = 0; /* got[] holds the set's measurements */
	if (!rc && nv) {
		rc = eval_measure_interleaved(s->ev, vs, nv, rounds, got, d);
		took = !rc;
		called = 1;
	}
	for (size_t k = 0; k < nv; k++) {
		if (took) { /* the rows, stored; the first store error is the result */
			ms[at[k]] = got[k];
			session_account(s, &got[k]);
			int put = s->st ? store_replace(s->st, s->run, &vs[k], &got[k], d) : MUH_OK;
			if (put && !rc)
				rc = put;
			if (!s->measured)
				session_store_noise_once(s);
			s->measured++;
		} else if (called) {
			measurement_free(&got[k]);
		}
		eval_variant_free(&vs[k]);
	}
	for (size_t i = 0; !rc && i < n; i++) {
		memcpy(s->cfg, cfgs + i * np, np * sizeof(uint32_t));
		space_key(s->space, s->cfg, s->key, sizeof(s->key));
		session_result res = {.cfg = s->cfg, .key = s->key, .m = &ms[i]};
		res.source = valid[i] ? "measured" : "invalid";
		session_score_measurement(&s->objective, &ms[i], &res.score);
		if (on_row && on_row(ctx, &res))
			break;
	}
	for (size_t i = 0; i < n && cfgs; i++)
		measurement_free(&ms[i]);
	free(cfgs);
	return rc;
}

/* ---- muh verify: the dead-knob proof -------------------------------------- */

/* find_base looks at this many valid configurations at most (all of them
 * when the space has no more, else as many uniform samples) */
#define VERIFY_SEARCH 200000

/* How many params p with want[p] can change one at a time from the valid
 * cfg to another valid configuration (tmp: np scratch values). */
static size_t testable(const muh_space *sp, const uint32_t *cfg, const unsigned char *want, uint32_t *tmp)
{
	const muh_spec *s = space_spec(sp);
	size_t np = space_nparams(sp), n = 0;
	for (size_t p = 0; p < np; p++) {
		if (!want[p])
			continue;
		memcpy(tmp, cfg, np * sizeof(uint32_t));
		for (size_t j = 0; j < s->params[p].nvalues; j++) {
			if (j == cfg[p])
				continue;
			tmp[p] = (uint32_t)j;
			if (space_is_valid(sp, tmp)) {
				n++;
				break;
			}
		}
	}
	return n;
}

/* A base for the params with want[p]: the valid configuration from which
 * the most of them can change one at a time, and of those the nearest to
 * from (fewest params that differ; the first found on a tie). Looks at
 * every valid configuration, or VERIFY_SEARCH uniform samples of a larger
 * space. Writes it to out and returns how many of them it lets change; 0
 * (out untouched) when none. */
static size_t find_base(const muh_space *sp, const uint32_t *from, const unsigned char *want, uint32_t *out)
{
	size_t np = space_nparams(sp), best = 0, bestd = 0, nwant = 0;
	for (size_t p = 0; p < np; p++)
		nwant += want[p] != 0;
	uint32_t *cfg = calloc(np + 1, sizeof(uint32_t)), *tmp = calloc(np + 1, sizeof(uint32_t));
	uint64_t nvalid = space_valid(sp), rng = 0x9e3779b97f4a7c15ull;
	uint64_t n = nvalid <= VERIFY_SEARCH ? nvalid : VERIFY_SEARCH;
	for (uint64_t i = 0; cfg && tmp && i < n; i++) {
		if (nvalid <= VERIFY_SEARCH ? space_config_at(sp, i, cfg) : space_sample(sp, &rng, cfg))
			continue;
		size_t dist = 0;
		for (size_t p = 0; p < np; p++)
			dist += cfg[p] != from[p];
		if (best == nwant && dist >= bestd)
			continue; /* cannot do better than one already found */
		size_t t = testable(sp, cfg, want, tmp);
		if (t > best || (t == best && t && dist < bestd)) {
			best = t;
			bestd = dist;
			memcpy(out, cfg, np * sizeof(uint32_t));
		}
	}
	free(cfg);
	free(tmp);
	return best;
}

/* Fills r->suggest with the nearest base from which the params marked in
 * want can be tested. */
static void suggest_base(const muh_session *s, const uint32_t *from, const unsigned char *want,
			 session_verify_result *r)
{
	uint32_t *b = calloc(s->np + 1, sizeof(uint32_t));
	size_t n = b ? find_base(s->space, from, want, b) : 0;
	r->suggest[0] = '\0';
	if (n)
		space_key(s->space, b, r->suggest, sizeof(r->suggest));
	free(b);
	r->suggest_n = n;
	r->suggest_of = 0;
	for (size_t p = 0; p < s->np; p++)
		r->suggest_of += want[p] != 0;
}

static int verify_add(session_verify_result *r, const char *key, muh_measurement *m)
{
	char **nk = realloc(r->keys, (r->nvariants + 1) * sizeof(*nk));
	if (!nk)
		return MUH_ENOMEM;
	r->keys = nk;
	muh_measurement *nm = realloc(r->m, (r->nvariants + 1) * sizeof(*nm));
	if (!nm)
		return MUH_ENOMEM;
	r->m = nm;
	if (!(r->keys[r->nvariants] = strdup(key)))
		return MUH_ENOMEM;
	r->m[r->nvariants++] = *m; /* owns its buffers now */
	return MUH_OK;
}

int session_verify(muh_session *s, const char *from_key, session_verify_result *r, muh_diag *d)
{
	memset(r, 0, sizeof(*r));
	r->noise = NAN;
	diag_clear(d);
	const muh_spec *sp = s->spec;
	size_t np = s->np;
	uint32_t *def = calloc(np + 1, sizeof(uint32_t)), *cfg = calloc(np + 1, sizeof(uint32_t));
	unsigned char *untested = calloc(np + 1, 1);
	r->params = calloc(np + 1, sizeof(*r->params));
	int rc = MUH_OK;
	if (!def || !cfg || !untested || !r->params) {
		rc = MUH_ENOMEM;
		goto out;
	}
	r->from = from_key != NULL;
	if (from_key) {
		if (space_parse_key(s->space, from_key, def, d)) {
			char msg[MUH_DIAG_MSG];
			snprintf(msg, sizeof(msg), "%s", d->msg);
			diag_clear(d);
			rc = diag_errorf(d, "--from %s: %s", from_key, msg);
			goto out;
		}
		if (!space_is_valid(s->space, def)) {
			rc = diag_errorf(d, "--from %s violates the constraints", from_key);
			goto out;
		}
	} else if (!space_default(s->space, def)) {
		memset(untested, 1, np);
		suggest_base(s, def, untested, r);
		rc = diag_errorf(d, "the defaults of %s violate the constraints", sp->path);
		goto out;
	}
	space_key(s->space, def, r->base, sizeof(r->base));
	/* the designed sample, known before anything is measured: compile it first */
	{
		size_t total = 1;
		for (size_t p = 0; p < np; p++)
			total += sp->params[p].nvalues;
		uint32_t *all = calloc(total * np + 1, sizeof(uint32_t));
		size_t n = 0;
		if (all) {
			memcpy(all, def, np * sizeof(uint32_t));
			n = 1;
			for (size_t p = 0; p < np; p++)
				for (size_t j = 0; j < sp->params[p].nvalues; j++) {
					if (j == def[p])
						continue;
					memcpy(all + n * np, def, np * sizeof(uint32_t));
					all[n * np + p] = (uint32_t)j;
					if (space_is_valid(s->space, all + n * np))
						n++;
				}
			session_prepare_cfgs(s, all, n, n, &r->prepared, 0, 1, 0);
		}
		free(all);
	}
	muh_variant v;
	if (eval_variant_from_space(s->space, def, s->o.instance, &v)) {
		rc = MUH_ENOMEM;
		goto out;
	}
	/* the base, SESSION_VERIFY_TIMINGS times: the spread of their medians is the noise */
	for (int k = 0; k < SESSION_VERIFY_TIMINGS; k++) {
		muh_measurement m;
		if ((rc = eval_measure(s->ev, &v, &m, d)) || (rc = verify_add(r, v.key, &m))) {
			eval_variant_free(&v);
			goto out;
		}
		r->nbase++;
		/* a base that did not even run (did not build, start or finish) says
		 * nothing a variant measured against it could: stop here, as a
		 * server that fails to start would fail again for every variant */
		if (r->m[0].status != EVAL_OK && r->m[0].status != EVAL_WRONG_RESULT) {
			r->base_stopped = 1;
			break;
		}
	}
	eval_variant_free(&v);
	const muh_measurement *mdef = r->m, *ref = &mdef[0];
	int defaults_ok = mdef[0].fingerprint[0] != 0;
	double lo = INFINITY, hi = 0;
	for (size_t k = 0; k < r->nbase; k++) {
		defaults_ok &= !strcmp(mdef[k].fingerprint, mdef[0].fingerprint);
		if (mdef[k].status != EVAL_OK && !r->base_fail)
			r->base_fail = &mdef[k]; /* the base must pass its own check: failures prove nothing */
		lo = fmin(lo, mdef[k].median);
		hi = fmax(hi, mdef[k].median);
	}
	if (!r->base_fail) {
		r->noise = (hi - lo) / lo;
		/* the reference: the timing whose median is the median of the medians */
		for (size_t k = 0; k < r->nbase; k++) {
			size_t below = 0;
			for (size_t j = 0; j < r->nbase; j++)
				below += mdef[j].median < mdef[k].median || (mdef[j].median == mdef[k].median && j < k);
			if (below == r->nbase / 2)
				ref = &mdef[k];
		}
	}
	size_t iref = (size_t)(ref - r->m), ifail = r->base_fail ? (size_t)(r->base_fail - r->m) : 0;
	char fp0[EVAL_FP_HEX];
	snprintf(fp0, sizeof(fp0), "%s", mdef[0].fingerprint);
	for (size_t p = 0; p < np && !r->base_stopped; p++) {
		session_verify_param *ps = &r->params[p];
		for (size_t j = 0; j < sp->params[p].nvalues; j++) {
			if (j == def[p])
				continue;
			memcpy(cfg, def, np * sizeof(uint32_t));
			cfg[p] = (uint32_t)j;
			if (!space_is_valid(s->space, cfg)) {
				ps->skipped++;
				continue;
			}
			muh_measurement m;
			eval_variant_from_space(s->space, cfg, s->o.instance, &v);
			if ((rc = eval_measure(s->ev, &v, &m, d))) {
				eval_variant_free(&v);
				goto out;
			}
			ps->tested++;
			if (m.fingerprint[0] && strcmp(m.fingerprint, fp0))
				ps->fp_changed++;
			if (m.status != EVAL_OK)
				ps->failed++;
			else if (!r->base_fail && eval_compare(&m, &r->m[iref], r->noise) != 0)
				ps->time_changed++;
			rc = verify_add(r, v.key, &m);
			eval_variant_free(&v);
			if (rc)
				goto out;
		}
	}
	if (r->base_fail)
		r->base_fail = &r->m[ifail]; /* r->m moved as it grew */
	for (size_t p = 0; p < np; p++) {
		session_verify_param *ps = &r->params[p];
		if (sp->params[p].nvalues < 2)
			ps->verdict = "single value";
		else if (r->base_stopped) {
			ps->verdict = "UNTESTED: the base itself failed; nothing was measured against it";
			ps->untested = 1;
			r->untested++;
		} else if (ps->tested == 0) {
			ps->verdict = from_key ? "UNTESTED: no one-at-a-time change from the base is valid"
					       : "UNTESTED: no one-at-a-time change from the defaults is valid";
			untested[p] = 1;
			ps->untested = 1;
			r->untested++;
		} else if (!defaults_ok)
			ps->verdict = "unknown: the base has no stable fingerprint";
		else if (ps->fp_changed == 0) {
			ps->verdict = "NOT REACHING THE KERNEL: every value builds the same artifact";
			ps->dead = 1;
			r->dead++;
		} else
			ps->verdict = "reaches the kernel";
	}
	if (!defaults_ok || r->base_fail) {
		r->base_failed = 1;
		if (!r->base_fail)
			r->base_fail = &r->m[0];
		r->dead++;
	}
	if (r->untested && !r->base_stopped)
		suggest_base(s, def, untested, r);
out:
	free(def);
	free(cfg);
	free(untested);
	return rc;
}

void session_verify_free(session_verify_result *r)
{
	for (size_t i = 0; i < r->nvariants; i++) {
		free(r->keys[i]);
		measurement_free(&r->m[i]);
	}
	free(r->keys);
	free(r->m);
	free(r->params);
	memset(r, 0, sizeof(*r));
}
