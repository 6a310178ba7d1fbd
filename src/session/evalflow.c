/*
 * evalflow.c — one `muh eval` driven start to end (see evalflow.h),
 * moved here from the muh program so that it only parses and prints.
 *
 * Owns the order of an eval: session, the engine's refusal of
 * --interleave, the --config keys (checked, parsed, none twice), start,
 * the resume note, the noise, the measuring (session_eval or
 * session_eval_interleaved), the batch prepare's summary, the rows, the
 * closing lines, the note on rows whose usage blocks their load was too
 * short to judge, and which status the whole comes to. How a row reads is
 * eval_text's, the closing lines evalset_text's, the measuring itself the
 * session's. Rows and results go to the textout's result stream (with
 * --json every line but the rows to its notes), notes to its note stream.
 *
 * Must never: print, exit, or handle a signal (the caller's handler sets
 * opts.stop; a->on_measuring says when a stop keeps what was measured).
 *
 * Its name is evalflow, not eval_* or session_*: scripts/layers.py puts
 * those in the measuring and session layers, below evalset_text, which
 * this file calls; unnamed, it takes its place above what it imports, as
 * tune_run does.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "muh/evalflow.h"
#include "muh/evalset.h"

/* The rows of one eval as they come: written, and kept (evalset) for the
 * closing lines. */
typedef struct eval_list {
	const evalflow_args *a;
	const muh_space *sp;
	const uint32_t *cfgs; /* the keys', or the defaults: np + 1 values each */
	int keyw, jobs;
	session_prepare_info pi; /* filled by the measuring before the first row */
	int told_prepare, header_done;
	size_t unjudged;      /* ok rows whose load was too short to judge its usage blocks */
	char unjudged1[1024]; /* ... the first one's key */
	evalset S;
} eval_list;

/* The stop flag of so is set. */
static int stopped(const muh_session_opts *so)
{
	return so->stop && *so->stop;
}

/* What the batch prepare did, once, before the first row (or after none). */
static void write_prepare(eval_list *E)
{
	const evalflow_args *a = E->a;
	const session_prepare_info *pi = &E->pi;
	if (E->told_prepare)
		return;
	E->told_prepare = 1;
	if (pi->capped)
		textout_printf(&a->out, TEXTOUT_NOTE,
		               "%s: note: prepare: the first %zu variants only\n", a->who,
		               pi->asked);
	if (pi->note[0])
		textout_printf(&a->out, TEXTOUT_NOTE,
		               "%s: note: prepare: %s; each build compiles what is missing\n",
		               a->who, pi->note);
	else if (pi->ran)
		textout_printf(&a->out, a->json ? TEXTOUT_NOTE : TEXTOUT_RESULT,
		               "prepare: %zu of %zu variants compiled in %.1f s with %d jobs\n",
		               pi->done, pi->asked, pi->seconds, E->jobs);
}

/* session_eval's cfg_at: configuration i of the space (--all), else of the
 * list. */
static int list_at(void *ctx, uint64_t i, uint32_t *cfg)
{
	eval_list *E = ctx;
	size_t np = space_nparams(E->sp);
	if (E->a->all)
		return space_config_at(E->sp, i, cfg);
	memcpy(cfg, E->cfgs + i * (np + 1), np * sizeof(uint32_t));
	return 0;
}

/* session_eval's on_row: one measured row written (after the prepare's
 * lines and the table's header), remembered for the closing lines, and
 * handed to the caller's on_row. */
static int list_row(void *ctx, const session_result *r)
{
	eval_list *E = ctx;
	const evalflow_args *a = E->a;
	const muh_measurement *m = r->m;
	write_prepare(E);
	if (!a->json && !E->header_done) { /* after the prepare's line; none for no row */
		eval_text_header(&a->out, E->keyw);
		E->header_done = 1;
	}
	evalset_add(&E->S, r->key, m);
	if (m->status == EVAL_OK && eval_usage_checked(m->metrics) == 0 && !E->unjudged++)
		snprintf(E->unjudged1, sizeof(E->unjudged1), "%s", r->key);
	if (a->json) {
		cJSON *o = eval_text_json(r->key, m);
		if (a->interleave)
			cJSON_AddBoolToObject(o, "interleaved", 1);
		char *t = cJSON_PrintUnformatted(o);
		textout_printf(&a->out, TEXTOUT_RESULT, "%s\n", t ? t : "{}");
		free(t);
		cJSON_Delete(o);
	} else {
		eval_text_row(&a->out, r->key, m, E->keyw);
	}
	textout_flush(&a->out, TEXTOUT_RESULT);
	return a->on_row ? a->on_row(a->ctx, r) : 0;
}

int evalflow_check(const evalflow_args *a, muh_diag *d)
{
	diag_clear(d);
	if (a->all && a->nkeys)
		return diag_errorf(d, "--all and --config exclude each other");
	if (a->interleave && (a->all || a->limit >= 0))
		return diag_errorf(
		    d, "--interleave compares the --config variants: not with --all or --limit");
	if (a->interleave && (a->nkeys < 2 || a->nkeys > EVAL_INTERLEAVE_MAX))
		return diag_errorf(d, "--interleave needs 2 to 16 --config");
	return MUH_OK;
}

/* The --config keys of a into cfgs (np + 1 values each): each checked
 * against the spec (evalset_check_key: d at --config:1:COL), parsed, and
 * none the same variant as another. MUH_OK or MUH_EINPUT with d. */
static int parse_keys(const muh_space *sp, const evalflow_args *a, uint32_t *cfgs, muh_diag *d)
{
	size_t np = space_nparams(sp);
	muh_diag pd;
	for (size_t k = 0; k < a->nkeys; k++) {
		diag_clear(d);
		if (evalset_check_key(sp, a->keys[k], d))
			return MUH_EINPUT;
		diag_clear(&pd);
		if (evalset_parse_key(sp, a->keys[k], cfgs + k * (np + 1), &pd)) {
			diag_clear(d);
			return diag_errorf(d, "--config %s: %s", a->keys[k], pd.msg);
		}
		/* the same variant twice: an interleaved set of one, or a row twice */
		for (size_t j = 0; j < k; j++)
			if (!memcmp(cfgs + j * (np + 1), cfgs + k * (np + 1),
			            np * sizeof(uint32_t))) {
				diag_clear(d);
				return diag_errorf(
				    d, "--config %s and --config %s are the same variant",
				    a->keys[j], a->keys[k]);
			}
	}
	return MUH_OK;
}

/* The noise before the table (the batch prepare runs inside the measuring,
 * before the first row): *noise and its lines written, or a note saying
 * why not. MUH_OK, or MUH_EENV / MUH_ENOMEM when muh's environment leaves
 * nothing to measure with (d says why). */
static int time_noise(muh_session *s, const muh_session_opts *so, const evalflow_args *a,
                      double *noise, muh_diag *d)
{
	int noisy = 0; /* beyond measure.max_noise in 3 pairs */
	double maxn = eval_target_max_noise(session_target(s));
	int nrc = session_noise(s, noise, &noisy, d);
	if ((nrc == MUH_EENV || nrc == MUH_ENOMEM) && !stopped(so))
		return nrc;
	if (nrc == MUH_OK) {
		textout_printf(&a->out, a->json ? TEXTOUT_NOTE : TEXTOUT_RESULT,
		               "noise: %.2f%% (the defaults timed twice%s)\n", 100 * *noise,
		               noisy ? ", 3 times over" : "");
		if (noisy)
			textout_printf(
			    &a->out, TEXTOUT_NOTE,
			    "%s: noisy machine: the defaults' two timings differed by more than "
			    "measure.max_noise (%.1f%%) in 3 pairs (%.1f%% over all): compare "
			    "these "
			    "times with care\n",
			    a->who, 100 * maxn, 100 * *noise);
	} else {
		textout_printf(&a->out, TEXTOUT_NOTE, "%s: noise: %s\n", a->who, d->msg);
	}
	return MUH_OK;
}

/* The lines under the rows: --interleave's comparison, the best against
 * the defaults, the twins, the counts. */
static void write_closing(muh_session *s, const evalflow_args *a, const evalset *S, double noise,
                          int interrupted)
{
	if (a->interleave && S->best_key[0])
		evalset_text_interleaved(&a->out, S, noise, a->json);
	if (!a->json)
		evalset_text_best(&a->out, S, noise);
	evalset_text_twins(&a->out, S, noise, a->json);
	if (!a->json)
		evalset_text_counts(&a->out, a->who, S, interrupted,
		                    eval_restarts(session_evaluator(s)));
}

/* r from the set the run measured. */
static void fill_result(evalflow_result *r, const evalset *S, double noise, int resumed,
                        int interrupted)
{
	r->measured = S->measured;
	memcpy(r->counts, S->counts, sizeof(r->counts));
	snprintf(r->best_key, sizeof(r->best_key), "%s", S->best_key);
	r->best_median = S->best_key[0] ? S->best.median : NAN;
	r->noise = noise;
	r->resumed = resumed;
	r->interrupted = interrupted;
}

int evalflow_run(const char *path, const muh_session_opts *so, const evalflow_args *a,
                 evalflow_result *r, enum evalflow_say *say, muh_diag *d)
{
	evalflow_result r_;
	muh_session *s;
	if (!r)
		r = &r_;
	memset(r, 0, sizeof(*r));
	r->best_median = r->noise = NAN;
	*say = EVALFLOW_SAY_USAGE;
	int rc = evalflow_check(a, d);
	if (rc)
		return rc;
	*say = EVALFLOW_SAY_SESSION;
	if ((rc = session_open(path, so, &s, d)))
		return rc;
	/* before any work (the noise alone starts two servers): the engine
	 * backend runs one server at a time and cannot interleave */
	const muh_target *tg = session_target(s);
	const char *backend = tg ? eval_target_backend(tg) : NULL;
	if (a->interleave && eval_backend_is(backend, EVAL_SERVER)) {
		session_close(s);
		*say = EVALFLOW_SAY_USAGE;
		diag_clear(d);
		return diag_errorf(
		    d,
		    "--interleave on %s: the engine backend runs one server at a time and "
		    "cannot keep variants ready to interleave (measure them one by one)",
		    path);
	}
	const muh_space *sp = session_space(s);
	size_t np = space_nparams(sp);
	uint64_t total = a->all ? space_valid(sp) : (uint64_t)(a->nkeys ? a->nkeys : 1);
	uint32_t *cfgs = calloc((size_t)(a->all ? 1 : total) * (np + 1), sizeof(uint32_t));
	eval_list E = {.a = a,
	               .sp = sp,
	               .cfgs = cfgs,
	               .keyw = eval_text_keyw(session_spec(s)),
	               .jobs = so->jobs};
	int measuring = 0, want_noise = a->noise;
	double noise = NAN;
	session_store_info si = {0};
	evalset_init(&E.S, sp, objective_is_time(session_objective(s)), a->interleave);
	if (!cfgs) {
		diag_clear(d);
		rc = MUH_ENOMEM;
		goto out;
	}
	if ((rc = parse_keys(sp, a, cfgs, d)))
		goto out;
	if (!a->all && !a->nkeys && !space_default(sp, cfgs))
		textout_printf(&a->out, TEXTOUT_NOTE,
		               "%s: note: the defaults violate the constraints\n", a->who);
	if ((rc = session_start(s, d)))
		goto out;
	session_store_stats(s, &si);
	if (si.resumed && !a->json)
		textout_printf(&a->out, TEXTOUT_NOTE,
		               "%s: resuming run %lld of %s: %lld variant(s) already measured\n",
		               a->who, (long long)si.run, so->db, si.rows);
	/* a stop from here on: a prepare in flight is cut short (its group
	 * killed), the variant in flight finishes, the store keeps all */
	if (a->on_measuring)
		a->on_measuring(a->ctx, backend, 1);
	measuring = 1;
	if (want_noise < 0)
		want_noise = total > 1 && !si.resumed;
	if (want_noise && !stopped(so) && (rc = time_noise(s, so, a, &noise, d)))
		goto out;
	*say = EVALFLOW_SAID;
	if (a->interleave)
		rc = session_eval_interleaved(s, a->nkeys, list_at, &E, a->rounds, list_row, &E.pi,
		                              d);
	else
		rc = session_eval(s, total, list_at, &E, a->limit, list_row, &E.pi, d);
	write_prepare(&E);
	if (rc && stopped(so)) /* what a stop cut short is no error */
		rc = MUH_OK;
	if (rc)
		textout_printf(&a->out, TEXTOUT_NOTE, "%s: %s\n", a->who, d->msg);
	if (a->on_measuring)
		a->on_measuring(a->ctx, backend, 0);
	measuring = 0;
	/* ties among variants an earlier eval of a resumed run timed are
	 * judged by its stored noise too (session_judge_noise) */
	session_store_stats(s, &si);
	write_closing(s, a, &E.S, session_judge_noise(&si), stopped(so));
	eval_text_usage_note(&a->out, a->who, tg, E.unjudged, E.unjudged1);
out:
	if (measuring && a->on_measuring)
		a->on_measuring(a->ctx, backend, 0);
	fill_result(r, &E.S, noise, si.resumed, stopped(so));
	evalset_free(&E.S);
	session_close(s);
	free(cfgs);
	return rc;
}
