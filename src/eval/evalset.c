/*
 * evalset.c — the variants of one eval and what is said of them (see
 * evalset.h).
 *
 * Owns: the --config key a person writes (partial, checked with
 * did-you-mean), and the closing figures of an eval: the fastest against
 * the defaults, the twins, the interleaved verdicts. The comparisons are
 * eval_compare's and eval_compare_interleaved's, the twins rule
 * best_twin_spread's.
 *
 * Must never: print, or measure.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "muh/best.h"
#include "muh/evalset.h"
#include "muh/spec.h"
#include "muh/value.h"
#include "textfmt.h"

/* Checks every NAME=VALUE of a --config key (see evalset.h). */
int evalset_check_key(const muh_space *sp, const char *key, muh_diag *d)
{
	const muh_spec *s = space_spec(sp);
	size_t np = space_nparams(sp);
	const char *q = key;
	if (!*key) {
		diag_at(d, "--config", 1, 1, key);
		return diag_errorf(d, "empty key: expected NAME=VALUE[,NAME=VALUE...]");
	}
	while (1) {
		size_t tlen = strcspn(q, ","), nlen = strcspn(q, "=,");
		int col = (int)(q - key) + 1;
		if (nlen == tlen || nlen == 0) {
			diag_at(d, "--config", 1, col, key);
			return diag_errorf(d, "expected NAME=VALUE at '%.*s'", (int)tlen, q);
		}
		size_t p;
		for (p = 0; p < np; p++)
			if (strlen(s->params[p].name) == nlen && !strncmp(s->params[p].name, q, nlen))
				break;
		if (p == np) {
			/* the nearest param (diag_near), then all of them */
			diag_near near = DIAG_NEAR_INIT;
			char known[512], hint[96];
			size_t kn = 0;
			known[0] = '\0';
			for (size_t i = 0; i < np; i++) {
				diag_near_offer(&near, q, nlen, s->params[i].name);
				text_appendf(known, sizeof(known), &kn, "%s%s", i ? ", " : "",
					     s->params[i].name);
			}
			if (kn >= sizeof(known)) /* cut: say so */
				snprintf(known + sizeof(known) - 5, 5, "...");
			diag_at(d, "--config", 1, col, key);
			return diag_errorf(d, "unknown param '%.*s'%s; the params: %s", (int)nlen, q,
					   diag_near_hint(near.name, hint, sizeof(hint)), known);
		}
		const char *val = q + nlen + 1;
		size_t vlen = tlen - nlen - 1, v;
		for (v = 0; v < s->params[p].nvalues; v++) {
			char buf[64];
			int w = value_fmt(buf, sizeof(buf), s->params[p].values[v]);
			if ((size_t)w == vlen && !strncmp(buf, val, vlen))
				break;
		}
		if (v == s->params[p].nvalues) {
			char list[512];
			value_list_fmt(list, sizeof(list), s->params[p].values, s->params[p].nvalues);
			diag_at(d, "--config", 1, col + (int)nlen + 1, key);
			return diag_errorf(d, "'%.*s' is not a value of '%s' (values: %s)", (int)vlen, val,
					   s->params[p].name, list);
		}
		if (!q[tlen])
			return MUH_OK;
		q += tlen + 1;
	}
}

int evalset_parse_key(const muh_space *sp, const char *key, uint32_t *cfg, muh_diag *d)
{
	const muh_spec *s = space_spec(sp);
	size_t np = space_nparams(sp);
	uint32_t *full = calloc(np + 1, sizeof(uint32_t));
	if (!full)
		return MUH_ENOMEM;
	space_default(sp, full);
	char buf[4096] = "";
	size_t n = 0;
	for (size_t p = 0; p < np; p++) {
		char want[160];
		snprintf(want, sizeof(want), "%s=", s->params[p].name);
		const char *hit = NULL;
		for (const char *q = key; (q = strstr(q, want)); q++)
			if (q == key || q[-1] == ',') {
				hit = q;
				break;
			}
		char val[256];
		if (hit)
			snprintf(val, sizeof(val), "%.*s", (int)strcspn(hit, ","), hit);
		else {
			char v[128];
			value_fmt(v, sizeof(v), space_value(sp, full, p));
			snprintf(val, sizeof(val), "%s=%s", s->params[p].name, v);
		}
		n += (size_t)snprintf(buf + n, sizeof(buf) - n, "%s%s", p ? "," : "", val);
		if (n >= sizeof(buf))
			break;
	}
	free(full);
	return space_parse_key(sp, buf, cfg, d);
}

/* Keeps an ok variant's key, fingerprint and median for the twins line:
 * a fingerprint that proves the artifact (best_fp_proves, as muh report's
 * twins), and time objectives (an engine's fingerprint is its launch, whose
 * time says less than its metrics; muh report keeps to time runs as well). */
static void keep_twin(evalset *E, const char *key, const muh_measurement *m)
{
	if (!best_fp_proves(m) || !E->time)
		return;
	if (E->tn == E->tcap) {
		size_t cap = E->tcap ? 2 * E->tcap : 64;
		char **k = realloc(E->tkey, cap * sizeof(*k));
		if (k)
			E->tkey = k;
		char **f = realloc(E->tfp, cap * sizeof(*f));
		if (f)
			E->tfp = f;
		double *s = realloc(E->tscore, cap * sizeof(*s));
		if (s)
			E->tscore = s;
		if (!k || !f || !s)
			return; /* the line is a note: without memory it counts fewer */
		E->tcap = cap;
	}
	if (!(E->tkey[E->tn] = strdup(key)) || !(E->tfp[E->tn] = strdup(m->fingerprint))) {
		free(E->tkey[E->tn]);
		return;
	}
	E->tscore[E->tn++] = m->median;
}

void evalset_init(evalset *E, const muh_space *sp, int time, int keep_samples)
{
	memset(E, 0, sizeof(*E));
	E->time = time;
	E->keep_samples = keep_samples;
	measurement_init(&E->best);
	measurement_init(&E->defm);
	size_t np = space_nparams(sp);
	uint32_t *def = calloc(np + 1, sizeof(uint32_t));
	if (def && space_default(sp, def))
		space_key(sp, def, E->def_key, sizeof(E->def_key));
	free(def);
}

void evalset_free(evalset *E)
{
	for (size_t i = 0; i < E->nrows; i++) {
		free(E->row[i].samples);
		E->row[i].samples = NULL;
	}
	for (size_t i = 0; i < E->tn; i++) {
		free(E->tkey[i]);
		free(E->tfp[i]);
	}
	free(E->tkey);
	free(E->tfp);
	free(E->tscore);
	E->tkey = E->tfp = NULL;
	E->tscore = NULL;
	E->tn = E->tcap = 0;
}

void evalset_add(evalset *E, const char *key, const muh_measurement *m)
{
	E->measured++;
	E->counts[m->status]++;
	if (m->status == EVAL_OK) {
		muh_measurement lite = *m;
		lite.samples = NULL;
		lite.nsamples = 0;
		lite.fp_detail = NULL;
		lite.metrics = NULL;
		lite.log = NULL;
		if (!(E->best.median <= m->median)) {
			E->best = lite;
			snprintf(E->best_key, sizeof(E->best_key), "%s", key);
		}
		if (!strcmp(key, E->def_key))
			E->defm = lite;
		keep_twin(E, key, m);
	}
	if (E->nrows < EVAL_INTERLEAVE_MAX) {
		muh_measurement lite = *m;
		lite.samples = NULL;
		if (E->keep_samples && m->nsamples && (lite.samples = malloc(m->nsamples * sizeof(double))))
			memcpy(lite.samples, m->samples, m->nsamples * sizeof(double));
		lite.nsamples = lite.samples ? m->nsamples : 0;
		lite.fp_detail = lite.metrics = lite.log = NULL;
		E->row[E->nrows] = lite;
		snprintf(E->row_key[E->nrows++], sizeof(E->row_key[0]), "%s", key);
	}
}

double evalset_twins(const evalset *E, size_t *twins, const char **slow, const char **fast)
{
	size_t s = 0, f = 0;
	*twins = 0;
	double r = best_twin_spread((const char *const *)E->tfp, E->tscore, E->tn, twins, &s, &f);
	*slow = isfinite(r) ? E->tkey[s] : NULL;
	*fast = isfinite(r) ? E->tkey[f] : NULL;
	return r;
}

int evalset_interleaved(const evalset *E, double noise, evalset_verdict *v, size_t *ok, size_t *lo, size_t *hi)
{
	size_t fastest = SIZE_MAX;
	*ok = 0;
	*lo = SIZE_MAX;
	*hi = 0;
	for (size_t i = 0; i < E->nrows; i++)
		if (E->row[i].status == EVAL_OK) {
			(*ok)++;
			*lo = E->row[i].nsamples < *lo ? E->row[i].nsamples : *lo;
			*hi = E->row[i].nsamples > *hi ? E->row[i].nsamples : *hi;
			if (!strcmp(E->row_key[i], E->best_key))
				fastest = i;
		}
	if (*lo == SIZE_MAX || fastest == SIZE_MAX)
		return -1;
	const muh_measurement *f = &E->row[fastest];
	int n = 0;
	for (size_t i = 0; i < E->nrows; i++) {
		const muh_measurement *m = &E->row[i];
		if (m->status != EVAL_OK || i == fastest)
			continue;
		stats_summary ps;
		int slower = eval_compare_interleaved(f, m, isfinite(noise) ? noise : 0, &ps) < 0;
		int paired = ps.n > 0;
		v[n++] = (evalset_verdict){.key = E->row_key[i], .m = m, .ratio = paired ? ps.median : m->median / f->median,
					   .paired = paired, .lo = ps.ci_lo, .hi = ps.ci_hi, .rounds = ps.n,
					   .slower = slower};
	}
	return n;
}
