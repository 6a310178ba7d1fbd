/*
 * load_rate.c — the highest arrival rate within latency SLOs (load.h,
 * load_find_rate), as MLPerf LoadGen's server scenario and vLLM's
 * auto_tune search it: open-loop Poisson arrivals at a rate, the run judged
 * by errors, truncations and p99 latencies, the rate bracketed and bisected.
 *
 * A rate is met when its run has no error and nothing truncated, its p99s
 * are within the SLOs, and it kept up with the arrivals (LOAD_RATE_KEEP_UP):
 * a run of a few dozen requests ends before an overloaded server's queue
 * shows in its percentiles.
 *
 * Owns the search only: every run is load_run's, with o's requests,
 * prompts and burstiness and the rate replaced. Must never print, and never
 * call a rate met when a request failed or came back short.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "muh/load.h"
#include "muh/muh.h"

/* a run keeps up when it finishes at least this share of the requests per
 * second a server that keeps up would (n / (send span + e2e_p50)) */
#define LOAD_RATE_KEEP_UP 0.75

void load_rate_defaults(load_rate_opts *ro)
{
	memset(ro, 0, sizeof(*ro));
	ro->steps = 10;
	ro->rel_tol = 0.05;
}

/* Judges run r against the SLOs into step st. */
static void judge(const load_rate_opts *ro, const load_result *r, double rate, load_rate_step *st)
{
	memset(st, 0, sizeof(*st));
	st->rate = rate;
	st->ttft_p99 = r->ttft.p99;
	st->tpot_p99 = r->tpot.p99;
	st->requests_per_s = r->requests_per_s;
	st->errors = r->errors;
	if (r->errors || r->truncated || !r->ok)
		snprintf(st->why, sizeof(st->why), "%zu error(s), %zu truncated of %zu sent", r->errors, r->truncated,
			 r->sent);
	else if (rate > 0 && r->sent && isfinite(r->e2e.p50) &&
		 r->requests_per_s < LOAD_RATE_KEEP_UP * (double)r->sent / (r->send_span_s + r->e2e.p50))
		/* a short run ends before a queue that grows shows in its p99: a
		 * server that keeps up finishes the last request about one request's
		 * time after it was sent (the sends' span is the arrivals' own, which
		 * a seeded Poisson draw of a few requests puts well off n / rate) */
		snprintf(st->why, sizeof(st->why), "fell behind: %.3g req/s done of %.3g offered", r->requests_per_s, rate);
	else if (ro->slo_ttft_p99_s > 0 && !(r->ttft.p99 <= ro->slo_ttft_p99_s))
		snprintf(st->why, sizeof(st->why), "ttft_p99 %.3f s > %.3f s", r->ttft.p99, ro->slo_ttft_p99_s);
	else if (ro->slo_tpot_p99_s > 0 && !(r->tpot.p99 <= ro->slo_tpot_p99_s))
		snprintf(st->why, sizeof(st->why), "tpot_p99 %.4f s > %.4f s", r->tpot.p99, ro->slo_tpot_p99_s);
	else
		st->met = 1;
}

int load_find_rate(const load_opts *o, const load_rate_opts *ro_in, load_rate_result *out, muh_diag *d)
{
	load_rate_opts ro = *ro_in;
	if (ro.steps < 2)
		ro.steps = 2;
	if (ro.steps > LOAD_RATE_MAX_STEPS)
		ro.steps = LOAD_RATE_MAX_STEPS;
	if (!(ro.rel_tol > 0))
		ro.rel_tol = 0.05;
	memset(out, 0, sizeof(*out));
	out->hi = INFINITY;
	load_opts run = *o;
	load_result r;
	/* the start: closed loop at the spec's concurrency, what the server does flat out */
	run.rate = 0;
	int rc = load_run(&run, &r, d);
	if (rc)
		return rc;
	if (r.sent && r.unreachable == r.sent)
		/* nobody there: halving the rate would only wait longer for nothing */
		return diag_errorf(d, "%s cannot be reached: %s", o->url, r.first_error), MUH_EENV;
	load_rate_step *st = &out->steps[out->nsteps++];
	judge(&ro, &r, 0, st);
	double rate = r.requests_per_s > 0 ? r.requests_per_s : 1;
	double lo = 0, hi = INFINITY;
	while ((int)out->nsteps < ro.steps) {
		run = *o;
		run.rate = rate;
		if ((rc = load_run(&run, &r, d)))
			return rc;
		if (r.sent && r.unreachable == r.sent)
			return diag_errorf(d, "%s stopped answering during the search: %s", o->url, r.first_error),
			       MUH_EENV;
		st = &out->steps[out->nsteps++];
		judge(&ro, &r, rate, st);
		if (st->met) {
			lo = rate;
			out->rate = rate;
			out->at = r;
		} else {
			hi = rate;
		}
		if (isfinite(hi) && lo > 0 && hi / lo - 1 <= ro.rel_tol)
			break;
		if (!isfinite(hi))
			rate = 2 * rate;          /* every rate so far held: go higher */
		else if (lo == 0)
			rate = rate / 2;          /* none held yet: go lower */
		else
			rate = sqrt(lo * hi);     /* bisect, in the log */
		if (rate < 1e-3)
			break;
	}
	out->lo = lo;
	out->hi = hi;
	if (out->rate > 0)
		out->at.max_rate = out->rate;
	return MUH_OK;
}
