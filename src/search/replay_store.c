/*
 * replay_store.c — a replay written to a store (see replay_store.h).
 *
 * Owns: the run of a replayed search and the conversion of each answer
 * (strategy_measurement) into a stored measurement. It wraps any
 * objective, so the replay table itself never reads or writes SQLite.
 * Must never: print, or store anything but what the search was answered.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "muh/eval.h"
#include "muh/muh.h"
#include "muh/replay.h"
#include "muh/replay_store.h"

struct replay_store {
	const muh_space *sp;
	size_t instance;
	muh_store *st;
	int64_t run;
	int resumed;
	strategy_objective inner;
	void *inner_ctx;
	char source[512];
};

int replay_store_open(const char *db, const muh_space *sp, size_t instance, const char *hw_profile,
		      const char *source, int fresh, strategy_objective inner, void *inner_ctx,
		      replay_store **out, muh_diag *d)
{
	const muh_spec *s = space_spec(sp);
	*out = NULL;
	replay_store *rs = calloc(1, sizeof(*rs));
	if (!rs)
		return MUH_ENOMEM;
	rs->sp = sp;
	rs->instance = instance;
	rs->inner = inner;
	rs->inner_ctx = inner_ctx;
	snprintf(rs->source, sizeof(rs->source), "%s", source ? source : "the replay source");
	char hash[17], problem[512];
	store_spec_hash(s->text ? s->text : "", s->text ? strlen(s->text) : 0, hash);
	spec_problem_text(s, instance, problem, sizeof(problem));
	store_run_info ri = {.spec_hash = hash,
			     .spec_path = s->path,
			     .spec_name = s->name,
			     .instance = (int64_t)instance,
			     .problem = problem,
			     .backend = REPLAY_STORE_BACKEND,
			     .hw_profile = hw_profile ? hw_profile : "",
			     .spec_text = s->text};
	int rc = store_open(db, &rs->st, d);
	if (!rc)
		rc = store_begin_run(rs->st, &ri, fresh, &rs->run, &rs->resumed, d);
	if (rc) {
		replay_store_close(rs);
		return rc;
	}
	*out = rs;
	return MUH_OK;
}

/* Now, in unix epoch milliseconds. */
static int64_t now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int replay_store_objective(void *ctx, const uint32_t *cfg, strategy_measurement *m)
{
	replay_store *rs = ctx;
	int rc = rs->inner(rs->inner_ctx, cfg, m);
	return rc ? rc : replay_store_put(rs, cfg, m);
}

int replay_store_put(replay_store *rs, const uint32_t *cfg, const strategy_measurement *m)
{
	int rc;
	muh_variant v;
	if (eval_variant_from_space(rs->sp, cfg, rs->instance, &v))
		return MUH_ENOMEM;
	muh_measurement mm;
	measurement_init(&mm);
	mm.started_ms = mm.finished_ms = now_ms();
	if (m->status == 0) {
		double t = m->time_s;
		mm.samples = malloc(sizeof(double));
		if (!mm.samples) {
			eval_variant_free(&v);
			return MUH_ENOMEM;
		}
		mm.samples[0] = t;
		mm.nsamples = 1;
		mm.status = EVAL_OK;
		mm.median = mm.min = mm.ci_lo = mm.ci_hi = t;
		mm.mad = 0;
	} else if (m->status == REPLAY_NOT_MEASURED) {
		measurement_fail(&mm, EVAL_INVALID, "replay: not measured in %s", rs->source);
	} else {
		enum eval_status stt;
		if (!m->status_text || eval_status_parse(m->status_text, &stt) || stt == EVAL_OK)
			stt = EVAL_INVALID;
		measurement_fail(&mm, stt, "replay: %s in %s", m->status_text ? m->status_text : "failed",
				 rs->source);
	}
	muh_diag d;
	diag_clear(&d);
	rc = store_put(rs->st, rs->run, &v, &mm, &d);
	if (rc == STORE_KEPT)
		rc = MUH_OK; /* resumed: the row from before stays */
	measurement_free(&mm);
	eval_variant_free(&v);
	return rc ? MUH_EENV : MUH_OK;
}

int64_t replay_store_run(const replay_store *rs)
{
	return rs->run;
}

muh_store *replay_store_store(const replay_store *rs)
{
	return rs->st;
}

int replay_store_resumed(const replay_store *rs)
{
	return rs->resumed;
}

void replay_store_close(replay_store *rs)
{
	if (!rs)
		return;
	store_close(rs->st);
	free(rs);
}
