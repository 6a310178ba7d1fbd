/*
 * best.c — the best result of a run, ranked (see best.h).
 *
 * Owns: the one answer to "which variant of this run is the best, and how
 * do the others rank", for report, patch and the emitters; and the verdict
 * on a re-timing at sustained clocks, which the session uses when it names
 * a winner and this module uses when it reads the rows back, so that what
 * the tune printed and what the store ranks are the same. Also which params
 * of a variant did not change its compiled artifact (best_inert_params:
 * another variant, differing in that param alone, built the same
 * fingerprint), so that no emitter writes a value that does nothing as if
 * it were tuned.
 *
 * Also the decision stage's verdict (decide.h): its proven winner ranks
 * first, and best_decided is the one answer to "may this be written back";
 * and, for a run that never had a decision stage, what ships (best_shipped),
 * which an emitter writes instead of a gain nobody proved.
 *
 * Reads the store through its API only (store_foreach, store_foreach_retime)
 * and the spec the run kept (store_run_spec). Must never: write, print, or
 * rank by anything but the run's objective.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "muh/best.h"
#include "muh/baseline.h"
#include "muh/fileio.h"
#include "muh/hw.h"
#include "muh/space.h"
#include "muh/muh.h"
#include "strbuf.h"
#include "textfmt.h"

/* The defaults' canonical key of spec s in problem instance `instance`
 * (spec_default_index), as space_key formats it (params in spec order,
 * NAME=VALUE); NULL when out of memory. */
static char *default_key(const muh_spec *s, size_t instance)
{
	size_t cap = 64, o = 0;
	char *k = malloc(cap);
	for (size_t p = 0; k && p < s->nparams; p++) {
		char v[64];
		const muh_param *par = &s->params[p];
		value_fmt(v, sizeof(v), par->values[spec_default_index(s, instance, p)]);
		size_t need = o + strlen(par->name) + strlen(v) + 3;
		if (need > cap) {
			char *nk = realloc(k, cap = need * 2);
			if (!nk)
				free(k);
			k = nk;
			if (!k)
				break;
		}
		o += (size_t)snprintf(k + o, cap - o, "%s%s=%s", p ? "," : "", par->name, v);
	}
	if (k)
		k[o] = '\0';
	return k;
}

/* The rows as store_foreach hands them out, before ranking. */
struct collect {
	muh_best *b;
	best_entry *all; /* every ok feasible row, in measurement order */
	size_t nall, capall, cap, capfps;
	double best;     /* best feasible score so far */
	int rc;
};

int best_wide_ci(const muh_objective *o, double ci_frac, const muh_measurement *m)
{
	return !strcmp(o->metric, "time") && measurement_ci_rel(m) > ci_frac;
}

void best_run_objective(const muh_spec *sp, const store_run *r, muh_objective *o)
{
	muh_diag d;
	if (objective_from_spec(sp, eval_backend_metrics(r->backend), o, &d))
		objective_default(o);
}

static int on_row(void *ud, const store_row *row)
{
	struct collect *c = ud;
	muh_best *b = c->b;
	const muh_measurement *m = row->m;
	if (b->nmeasured == c->cap) { /* so_far and ok_scores: nok <= nmeasured */
		size_t cap = c->cap;
		if (array_grow(&b->so_far, &cap, b->nmeasured, sizeof(double), 64))
			return c->rc = MUH_ENOMEM;
		cap = c->cap;
		if (array_grow(&b->ok_scores, &cap, b->nmeasured, sizeof(double), 64))
			return c->rc = MUH_ENOMEM;
		c->cap = cap;
	}
	if ((int)m->status >= 0 && (int)m->status < EVAL_NSTATUS)
		b->status[m->status]++;
	double score = objective_score(&b->objective, m);
	if (m->status == EVAL_OK && isfinite(score)) {
		b->ok_scores[b->nok++] = score;
		if (best_wide_ci(&b->objective, b->ci_frac, m))
			b->nwide++;
		if (!(score >= b->any_score)) {
			free((char *)b->any_key);
			b->any_key = strdup(row->key);
			b->any_score = score;
		}
		if (b->default_key && !strcmp(b->default_key, row->key))
			b->default_score = score;
		if (objective_feasible(&b->objective, m, NULL, 0)) {
			b->nfeasible++;
			if (array_grow(&c->all, &c->capall, c->nall, sizeof(*c->all), 64))
				return c->rc = MUH_ENOMEM;
			char *key = strdup(row->key);
			if (!key)
				return c->rc = MUH_ENOMEM;
			c->all[c->nall++] = (best_entry){key, score, score, m->sm_clock_mhz, 0};
			if (!(score >= c->best))
				c->best = score;
		}
	}
	b->so_far[b->nmeasured++] = c->best;
	if (best_fp_proves(m)) {
		size_t cap = c->capfps;
		if (array_grow(&b->fps, &cap, b->nfps, sizeof(*b->fps), 64))
			return c->rc = MUH_ENOMEM;
		c->capfps = cap;
		char *key = strdup(row->key), *fp = strdup(m->fingerprint);
		if (!key || !fp) {
			free(key);
			free(fp);
			return c->rc = MUH_ENOMEM;
		}
		b->fps[b->nfps++] = (best_fp){key, fp};
	}
	return 0;
}

/* The next NAME=VALUE of a canonical key from *p: name [n, nl), value
 * [v, vl); *p moves past it. 0 at the end or at a part without '='. */
static int key_part(const char **p, const char **n, size_t *nl, const char **v, size_t *vl)
{
	if (!**p)
		return 0;
	const char *eq = strchr(*p, '='), *end = strchr(*p, ',');
	if (!end)
		end = *p + strlen(*p);
	if (!eq || eq > end)
		return 0;
	*n = *p;
	*nl = (size_t)(eq - *p);
	*v = eq + 1;
	*vl = (size_t)(end - eq - 1);
	*p = *end ? end + 1 : end;
	return 1;
}

/* The one param in which keys a and b differ, its index in a; -1 when they
 * differ in none, in several, or do not name the same params in order. */
static int differ_in_one(const char *a, const char *b, const char **bv, size_t *bvl)
{
	const char *pa = a, *pb = b;
	int i = 0, at = -1;
	for (;; i++) {
		const char *na, *va, *nb, *vb;
		size_t nal, val, nbl, vbl;
		int ha = key_part(&pa, &na, &nal, &va, &val), hb = key_part(&pb, &nb, &nbl, &vb, &vbl);
		if (!ha || !hb) {
			if (ha || hb || *pa || *pb)
				return -1; /* different lengths, or a part without '=' */
			return at;
		}
		if (nal != nbl || memcmp(na, nb, nal))
			return -1;
		if (val == vbl && !memcmp(va, vb, val))
			continue;
		if (at >= 0)
			return -1;
		at = i;
		*bv = vb;
		*bvl = vbl;
	}
}

void best_inert_note(const best_inert *e, char *buf, size_t n)
{
	snprintf(buf, n, "did not change the compiled artifact: %s=%.*s built the same (fingerprint %s)", e->name,
		 (int)e->value_len, e->value, e->fingerprint);
}

size_t best_inert_params(const muh_best *b, const char *key, best_inert *out, size_t max)
{
	const char *fp = NULL;
	for (size_t i = 0; i < b->nfps && !fp; i++)
		if (!strcmp(b->fps[i].key, key))
			fp = b->fps[i].fingerprint;
	if (!fp)
		return 0;
	size_t n = 0;
	const char *p = key, *nm, *v;
	size_t nl, vl;
	for (int idx = 0; n < max && key_part(&p, &nm, &nl, &v, &vl); idx++) {
		for (size_t i = 0; i < b->nfps; i++) {
			const char *wv = NULL;
			size_t wvl = 0;
			if (strcmp(b->fps[i].fingerprint, fp) || differ_in_one(key, b->fps[i].key, &wv, &wvl) != idx)
				continue;
			best_inert *e = &out[n++];
			snprintf(e->name, sizeof(e->name), "%.*s", (int)nl, nm);
			e->witness = b->fps[i].key;
			e->value = wv;
			e->value_len = wvl;
			e->fingerprint = b->fps[i].fingerprint;
			break;
		}
	}
	return n;
}

static int on_retime(void *ud, const store_retime *r)
{
	struct collect *c = ud;
	muh_best *b = c->b;
	size_t cap = b->nretimes; /* grown one at a time: k is small */
	store_retime *a = realloc(b->retimes, (cap + 1) * sizeof(*a));
	if (!a)
		return c->rc = MUH_ENOMEM;
	b->retimes = a;
	a[b->nretimes] = *r;
	a[b->nretimes].key = strdup(r->key ? r->key : "");
	if (!a[b->nretimes].key)
		return c->rc = MUH_ENOMEM;
	b->nretimes++;
	return 0;
}

/* A ranked entry's sort key: re-timed variants (group 0) ahead of the
 * others (group 1), then the score, then the order they were measured in. */
struct ix {
	int group;
	double score;
	size_t at;
};

static int by_score(const void *x, const void *y)
{
	const struct ix *a = x, *b = y;
	if (a->group != b->group)
		return a->group - b->group;
	if (a->score != b->score)
		return a->score < b->score ? -1 : 1;
	return a->at < b->at ? -1 : a->at > b->at;
}

int best_retime_verdict(const store_retime *rows, size_t n, size_t *winner)
{
	/* Whether the clock fell or held, the re-timed rows were timed
	 * interleaved, the search's one after the other: at M=4096 on the H200
	 * the search ranked under a clock already down to 1665 MHz, its best
	 * "held" it, and the re-timing that found the second 1.9% faster was
	 * set aside; the emitted config then lost 1.0% to it (session 8). */
	size_t w = SIZE_MAX;
	for (size_t i = 0; i < n; i++)
		if (isfinite(rows[i].sustained_s) && (w == SIZE_MAX || rows[i].sustained_s < rows[w].sustained_s))
			w = i;
	if (w == SIZE_MAX)
		return 0;
	*winner = w;
	return 1;
}

enum best_clock best_retime_clock(const store_retime *rows, size_t n)
{
	if (!n || !isfinite(rows[0].sustained_mhz) || !isfinite(rows[0].burst_mhz))
		return BEST_CLOCK_UNKNOWN;
	return rows[0].sustained_mhz < 0.99 * rows[0].burst_mhz ? BEST_CLOCK_FELL : BEST_CLOCK_HELD;
}

const char *best_clock_name(enum best_clock c)
{
	return c == BEST_CLOCK_FELL ? "fell" : c == BEST_CLOCK_HELD ? "held" : "unknown";
}

/* Fills b->ranked from the feasible rows c->all (consumed): the re-timed
 * ones first by their sustained score when one passed, then the rest
 * by score, ties in measurement order. */
static int rank(struct collect *c)
{
	muh_best *b = c->b;
	struct ix *ix = calloc(c->nall + 1, sizeof(*ix));
	b->ranked = calloc(c->nall + 1, sizeof(*b->ranked));
	if (!ix || !b->ranked) {
		free(ix);
		return MUH_ENOMEM;
	}
	size_t w;
	b->regime = best_retime_verdict(b->retimes, b->nretimes, &w) ? BEST_SUSTAINED : BEST_BURST;
	if (b->regime == BEST_SUSTAINED)
		b->retime_winner = w;
	for (size_t i = 0; i < c->nall; i++) {
		ix[i] = (struct ix){1, c->all[i].score, i};
		if (b->regime != BEST_SUSTAINED)
			continue;
		for (size_t k = 0; k < b->nretimes; k++) {
			const store_retime *r = &b->retimes[k];
			if (!isfinite(r->sustained_s) || strcmp(r->key, c->all[i].key))
				continue;
			ix[i] = (struct ix){0, r->sustained_s, i};
			c->all[i].score = r->sustained_s;
			c->all[i].sm_clock_mhz = r->sustained_mhz;
			c->all[i].sustained = 1;
		}
	}
	qsort(ix, c->nall, sizeof(*ix), by_score);
	for (size_t i = 0; i < c->nall; i++)
		b->ranked[i] = c->all[ix[i].at];
	b->nranked = c->nall;
	free(ix);
	free(c->all);
	c->all = NULL;
	c->nall = 0;
	return MUH_OK;
}

/* Moves the ranked entry with key to ranked[0], the others keeping their
 * order; 1 when it was there. */
static int to_front(muh_best *b, const char *key)
{
	for (size_t i = 0; i < b->nranked; i++)
		if (!strcmp(b->ranked[i].key, key)) {
			best_entry w = b->ranked[i];
			memmove(b->ranked + 1, b->ranked, i * sizeof(*b->ranked));
			b->ranked[0] = w;
			return 1;
		}
	return 0;
}

/* b->forced_key: of the decision's finalists other than the defaults, each
 * repeat ok and within the SLOs, the one of highest paired gain that the
 * search ranked; none: the search's best stays. A search's best timed once
 * can be a fluke that the stage's paired rounds put below the defaults
 * (0.736x on the quick start's engine run, while another finalist showed
 * 1.195x): --force then writes what the stage measured best. */
static void pick_forced(muh_best *b)
{
	const decide_summary *sm = b->decision;
	double top = -INFINITY;
	for (size_t i = 0; i < sm->nf; i++) {
		const decide_finalist *f = &sm->f[i];
		if ((int)i == sm->defaults_f || !f->ok || f->ok != f->repeats || f->slo_met != f->repeats ||
		    !isfinite(f->gain.ratio) || f->gain.ratio <= top)
			continue;
		for (size_t k = 0; k < b->nranked; k++)
			if (!strcmp(b->ranked[k].key, f->key)) {
				top = f->gain.ratio;
				b->forced_key = b->ranked[k].key;
				b->forced_f = (int)i;
				break;
			}
	}
}

/* The run's decision stage into b->decision (none: NULL); its proven
 * winner moved to ranked[0], the others keeping their order. Without a
 * winner, what stays is ranked[0] (b->keeps_baseline): a baseline that is
 * not the defaults (what an engine ships), or, when the stage re-measured
 * finalists against the defaults and proved none, the defaults. */
static int take_decision(muh_store *st, muh_best *b, muh_diag *d)
{
	b->search_key = b->nranked ? b->ranked[0].key : NULL;
	b->forced_key = b->search_key;
	b->forced_f = -1;
	decide_summary *sm = malloc(sizeof(*sm));
	if (!sm)
		return MUH_ENOMEM;
	int rc = decide_of_run(st, b->run, &b->objective, sm, d);
	if (rc || !sm->present) {
		free(sm);
		return rc;
	}
	b->decision = sm;
	pick_forced(b);
	if (sm->winner >= 0)
		to_front(b, sm->f[sm->winner].key);
	else if (!decide_baseline_ships(sm, b->default_key) && b->default_key)
		b->keeps_baseline = to_front(b, b->default_key); /* within the SLOs: ranked */
	else if (sm->baseline[0] && b->default_key && strcmp(sm->baseline, b->default_key) && sm->base_ok &&
		 !(b->keeps_baseline = to_front(b, sm->baseline))) {
		/* measured in the stage's rounds only (the search stopped before
		 * it): it stays all the same, at its rounds' median */
		best_entry *nr = realloc(b->ranked, (b->nranked + 1) * sizeof(*nr));
		char *key = strdup(sm->baseline);
		if (!nr || !key) {
			free(key);
			if (nr)
				b->ranked = nr;
			return MUH_ENOMEM;
		}
		b->ranked = nr;
		memmove(b->ranked + 1, b->ranked, b->nranked * sizeof(*b->ranked));
		double score = b->objective.maximize ? 1.0 / sm->base_value : sm->base_value;
		b->ranked[0] = (best_entry){.key = key, .score = score, .burst_score = score, .sm_clock_mhz = NAN};
		b->nranked++;
		b->keeps_baseline = 1;
	}
	return MUH_OK;
}

int best_decided(const muh_best *b)
{
	if (!b->decision)
		return -1;
	return b->decision->winner >= 0 && b->nranked &&
	       !strcmp(b->ranked[0].key, b->decision->f[b->decision->winner].key);
}

int best_proof(const muh_best *b, char *why, size_t n)
{
	int d = best_decided(b);
	if (d == 1)
		snprintf(why, n, "%s", "");
	else if (d == 0)
		snprintf(why, n, "%s", b->decision->why);
	else
		snprintf(why, n, "no decision stage ran (a replay, --finalists 0, stopped first, or an earlier "
				 "muh): a search's best is timed once, unpaired; muh tune on the store runs the stage");
	return d;
}

/* 1 when best_speedup is the decision's paired ratio over the defaults */
static int speedup_is_decided(const muh_best *b)
{
	return b->decision && isfinite(b->decision->vs_defaults.ratio) &&
	       (best_decided(b) == 1 || b->keeps_baseline);
}

int best_decided_values(const muh_best *b, double *best, double *dflt)
{
	if (!speedup_is_decided(b))
		return 0;
	const decide_summary *sm = b->decision;
	*best = best_decided(b) == 1 ? sm->f[sm->winner].value : sm->base_value;
	if (sm->defaults_f >= 0)
		*dflt = sm->f[sm->defaults_f].value;
	else if (!decide_baseline_ships(sm, b->default_key) && sm->baseline[0])
		*dflt = sm->base_value; /* the baseline is the defaults */
	else
		*dflt = NAN;
	return 1;
}

int best_of_run(muh_store *st, const store_run *r, muh_best *out, muh_diag *d)
{
	memset(out, 0, sizeof(*out));
	out->run = r->id;
	out->any_score = INFINITY;
	out->default_score = NAN;
	out->ci_frac = NAN;
	objective_default(&out->objective);
	muh_spec *sp;
	muh_diag sd;
	/* the spec as the store kept it (any directory, the file moved), else its file */
	if (!store_run_spec(r, &sp, &sd)) {
		out->default_key = default_key(sp, r->instance >= 0 ? (size_t)r->instance : 0);
		best_run_objective(sp, r, &out->objective);
		out->ci_frac = eval_target_ci_of_spec(sp);
		spec_free(sp);
	}
	struct collect c = {.b = out, .best = NAN};
	int rc = store_foreach(st, r->id, on_row, &c);
	if (!rc)
		rc = store_foreach_retime(st, r->id, on_retime, &c);
	if (!rc)
		rc = rank(&c);
	if (!rc)
		rc = take_decision(st, out, d);
	if (!isfinite(out->any_score))
		out->any_score = NAN;
	for (size_t i = 0; i < c.nall; i++)
		free((char *)c.all[i].key);
	free(c.all);
	if (rc) {
		best_free(out);
		if (c.rc == MUH_ENOMEM || rc == MUH_ENOMEM)
			return MUH_ENOMEM;
		if (d)
			snprintf(d->msg, sizeof(d->msg), "run %lld: cannot read its measurements from the store",
				 (long long)r->id);
		return MUH_EENV;
	}
	return MUH_OK;
}

int best_fp_proves(const muh_measurement *m)
{
	return m->fingerprint[0] && !(m->fp_detail && strstr(m->fp_detail, "\"proof\":false"));
}

double best_speedup(const muh_best *b)
{
	if (speedup_is_decided(b))
		return b->decision->vs_defaults.ratio; /* the paired rounds' ratio, not one search measurement's */
	double best = b->nranked ? b->ranked[0].burst_score : NAN;
	return isfinite(b->default_score) && isfinite(best) ? b->default_score / best : NAN;
}

int best_is_tie(double speedup, double noise)
{
	return isfinite(speedup) && isfinite(noise) && fabs(speedup - 1) <= noise;
}

struct twin {
	const char *fp;
	double score;
	size_t i;
};

static int twin_cmp(const void *a, const void *b)
{
	const struct twin *x = a, *y = b;
	int c = strcmp(x->fp, y->fp);
	return c ? c : (x->score > y->score) - (x->score < y->score);
}

double best_twin_spread(const char *const *fps, const double *scores, size_t n, size_t *twins, size_t *slow,
			size_t *fast)
{
	struct twin *t = malloc((n + 1) * sizeof(*t));
	size_t m = 0;
	double worst = NAN;
	*twins = 0;
	if (!t)
		return NAN;
	for (size_t i = 0; i < n; i++)
		if (fps[i] && fps[i][0] && isfinite(scores[i]) && scores[i] > 0)
			t[m++] = (struct twin){fps[i], scores[i], i};
	qsort(t, m, sizeof(*t), twin_cmp); /* by artifact, then fastest first */
	for (size_t a = 0, b; a < m; a = b) {
		for (b = a + 1; b < m && !strcmp(t[a].fp, t[b].fp); b++)
			;
		if (b - a < 2)
			continue;
		*twins += b - a;
		double r = t[b - 1].score / t[a].score;
		if (!(r <= worst)) {
			worst = r;
			*slow = t[b - 1].i;
			*fast = t[a].i;
		}
	}
	free(t);
	return worst;
}

static int fp_key_cmp(const void *a, const void *b)
{
	return strcmp(((const best_fp *)a)->key, ((const best_fp *)b)->key);
}

double best_twins(const muh_best *b, size_t *twins, const char **slow, const char **fast)
{
	const char **fps = calloc(b->nranked + 1, sizeof(*fps));
	double *scores = calloc(b->nranked + 1, sizeof(*scores));
	best_fp *byk = malloc((b->nfps + 1) * sizeof(*byk)); /* by key: one lookup per ranked variant */
	double r = NAN;
	size_t s = 0, f = 0;
	*twins = 0;
	if (fps && scores && byk) {
		if (b->nfps) { /* fps is NULL without any (memcpy and qsort want a pointer) */
			memcpy(byk, b->fps, b->nfps * sizeof(*byk));
			qsort(byk, b->nfps, sizeof(*byk), fp_key_cmp);
		}
		for (size_t i = 0; i < b->nranked; i++) {
			best_fp want = {b->ranked[i].key, NULL};
			const best_fp *hit = b->nfps ? bsearch(&want, byk, b->nfps, sizeof(*byk), fp_key_cmp) : NULL;
			scores[i] = b->ranked[i].burst_score;
			fps[i] = hit ? hit->fingerprint : NULL;
		}
		r = best_twin_spread(fps, scores, b->nranked, twins, &s, &f);
		if (isfinite(r)) {
			*slow = b->ranked[s].key;
			*fast = b->ranked[f].key;
		}
	}
	free(fps);
	free(scores);
	free(byk);
	return r;
}

void best_twins_note(char *buf, size_t n, size_t twins, double spread, const char *slow, const char *fast,
		     double noise, int paired)
{
	size_t at = 0;
	text_appendf(buf, n, &at,
		     "twins: %zu variants built the same artifact as another (fingerprint); the same code timed up "
		     "to %.3fx apart (%s against %s): the spread between identical builds over the whole run, "
		     "drift included",
		     twins, spread, slow, fast);
	if (isfinite(noise))
		text_appendf(buf, n, &at,
			     ", where the noise (%.2f%%) is only the defaults timed twice, back to back", 100 * noise);
	text_appendf(buf, n, &at,
		     "; variants timed once each and less than %.3fx apart may differ by this machine, not by the "
		     "params",
		     spread);
	if (paired)
		text_appendf(buf, n, &at, "; the decision's speedup ('+') is paired in alternating rounds, which "
					  "cancel such drift");
}

/* best_marks's walk over the runs. */
typedef struct marks_walk {
	muh_store *st;
	int64_t run; /* 0: every run */
	store_mark *m;
	size_t n;
	muh_diag *d;
} marks_walk;

/* store_foreach_run callback: appends run r's best to w->m; nonzero stops. */
static int mark_run(void *ud, const store_run *r)
{
	marks_walk *w = ud;
	if (w->run && r->id != w->run)
		return 0;
	muh_best b;
	int rc = best_of_run(w->st, r, &b, w->d);
	if (!rc && b.nranked) {
		store_mark *nm = realloc(w->m, (w->n + 1) * sizeof(*nm));
		char *key = strdup(b.ranked[0].key);
		if (!nm || !key) {
			free(key);
			if (nm)
				w->m = nm;
			rc = MUH_ENOMEM;
		} else {
			w->m = nm;
			w->m[w->n++] = (store_mark){.run = r->id, .key = key};
		}
	}
	best_free(&b);
	return rc;
}

int best_marks(muh_store *st, int64_t run, store_mark **out, size_t *n, muh_diag *d)
{
	marks_walk w = {.st = st, .run = run, .d = d};
	int rc = store_foreach_run(st, mark_run, &w);
	if (rc) {
		best_marks_free(w.m, w.n);
		w.m = NULL;
		w.n = 0;
	}
	*out = w.m;
	*n = w.n;
	return rc;
}

void best_marks_free(store_mark *m, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free((char *)m[i].key);
	free(m);
}

void best_free(muh_best *b)
{
	if (!b)
		return;
	for (size_t i = 0; i < b->nranked; i++)
		free((char *)b->ranked[i].key);
	for (size_t i = 0; i < b->nretimes; i++)
		free((char *)b->retimes[i].key);
	free(b->ranked);
	free(b->retimes);
	free((char *)b->any_key);
	free((char *)b->default_key);
	free(b->so_far);
	free(b->ok_scores);
	for (size_t i = 0; i < b->nfps; i++) {
		free((char *)b->fps[i].key);
		free((char *)b->fps[i].fingerprint);
	}
	free(b->fps);
	free(b->decision);
	memset(b, 0, sizeof(*b));
}

int best_shipped(const store_run *r, baseline_pick *out, int *found, muh_diag *d)
{
	*found = 0;
	memset(out, 0, sizeof(*out));
	muh_spec *sp = NULL;
	int rc = store_run_spec(r, &sp, d);
	if (rc)
		return rc;
	if (!file_dir_exists(sp->path) && r->spec_text && r->spec_path && *r->spec_path) {
		/* measured on another machine: its paths as given there, from here */
		muh_spec *here;
		if (!spec_parse(r->spec_path, r->spec_text, strlen(r->spec_text), &here, NULL)) {
			spec_free(sp);
			sp = here;
		}
	}
	muh_hw hw;
	muh_diag hd;
	if (!r->hw_profile || !*r->hw_profile || hw_resolve(r->hw_profile, &hw, &hd)) {
		spec_free(sp);
		return MUH_OK; /* no device: no file name to fill in */
	}
	size_t inst = r->instance > 0 ? (size_t)r->instance : 0;
	char path[4096];
	rc = baseline_path(sp, inst, &hw, NULL, path, sizeof(path), found, d);
	muh_space *space = NULL;
	if (!rc && *found)
		rc = space_build(sp, &hw, inst, &space, d);
	uint32_t *cfg = !rc && *found ? calloc(space_nparams(space) + 1, sizeof(uint32_t)) : NULL;
	if (!rc && *found && !cfg)
		rc = MUH_ENOMEM;
	if (!rc && *found)
		rc = baseline_entry(space, path, cfg, out, d);
	if (rc)
		*found = 0;
	free(cfg);
	space_free(space);
	spec_free(sp);
	return rc;
}
