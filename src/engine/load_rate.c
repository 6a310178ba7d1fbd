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
 * When no rate meets them, the answer is still a measurement: the run that
 * missed them by least and how far (rate_slo_miss, the sum of each miss
 * relative to its limit), so a search can climb towards servers that meet
 * some rate instead of seeing every one fail alike. Not the run at the
 * lowest rate tried: the search starts from each server's own closed-loop
 * rate, so a fast server is only tried at rates that a slow one never
 * sees (on tests/engine/fake-server, 2 ms a token: ttft_p99 127 ms at its
 * lowest rate, 40 req/s; 10 ms a token: 14 ms at its lowest, 10 req/s).
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
#include "muh/textout.h"

/* a run keeps up when it finishes at least this share of the requests per
 * second a server that keeps up would (n / (send span + e2e_p50)) */
#define LOAD_RATE_KEEP_UP 0.75

void load_rate_defaults(load_rate_opts *ro)
{
	memset(ro, 0, sizeof(*ro));
	ro->steps = 10;
	ro->rel_tol = 0.05;
}

/* How far x misses the limit lim (x <= lim holds): (x - lim) / lim, 0 when
 * it holds or there is no limit, 1 when x is not a number. */
static double over(double x, double lim)
{
	if (!(lim > 0))
		return 0;
	if (!isfinite(x))
		return 1;
	return x > lim ? (x - lim) / lim : 0;
}

/* Judges run r against the SLOs into step st: why names the first thing
 * that did not hold, miss sums how far each missed (load.h). */
static void judge(const load_rate_opts *ro, const load_result *r, double rate, load_rate_step *st)
{
	memset(st, 0, sizeof(*st));
	st->rate = rate;
	st->ttft_p99 = r->ttft.p99;
	st->tpot_p99 = r->tpot.p99;
	st->requests_per_s = r->requests_per_s;
	st->errors = r->errors;
	/* a server that keeps up finishes the last request about one request's
	 * time after it was sent (the sends' span is the arrivals' own, which a
	 * seeded Poisson draw of a few requests puts well off n / rate): a short
	 * run ends before a queue that grows shows in its p99 */
	double keep = rate > 0 && r->sent && isfinite(r->e2e.p50)
			      ? LOAD_RATE_KEEP_UP * (double)r->sent / (r->send_span_s + r->e2e.p50)
			      : 0;
	int failed = r->errors || r->truncated || !r->ok;
	double behind = keep > 0 && r->requests_per_s < keep ? (keep - r->requests_per_s) / keep : 0;
	double ttft = over(r->ttft.p99, ro->slo_ttft_p99_s), tpot = over(r->tpot.p99, ro->slo_tpot_p99_s);
	st->miss = (failed ? 1 : 0) + behind + ttft + tpot;
	if (failed)
		snprintf(st->why, sizeof(st->why), "%zu error(s), %zu truncated of %zu sent", r->errors, r->truncated,
			 r->sent);
	else if (behind > 0)
		snprintf(st->why, sizeof(st->why), "fell behind: %.3g req/s done of %.3g offered", r->requests_per_s, rate);
	else if (ttft > 0 || tpot > 0) {
		/* the times as every time muh prints (text_time): 53.75 ms > 1.000 ms */
		char v[32], lim[32];
		text_time(v, sizeof(v), ttft > 0 ? r->ttft.p99 : r->tpot.p99);
		text_time(lim, sizeof(lim), ttft > 0 ? ro->slo_ttft_p99_s : ro->slo_tpot_p99_s);
		snprintf(st->why, sizeof(st->why), "%s %s > %s", ttft > 0 ? "ttft_p99" : "tpot_p99", v, lim);
	} else {
		st->met = 1;
	}
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
	/* the run that missed by least: the answer when none meets (the first
	 * run, closed loop, until another misses by less) */
	load_result nearest = r;
	size_t nearest_step = 0;
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
		if (st->miss < out->steps[nearest_step].miss) {
			nearest = r;
			nearest_step = out->nsteps - 1;
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
	if (out->rate > 0) {
		out->at.max_rate = out->rate;
		out->at.rate_slo_miss = 0;
	} else {
		const load_rate_step *n = &out->steps[nearest_step];
		out->at = nearest;
		out->at.max_rate = NAN;
		out->at.rate_slo_miss = n->miss;
		out->miss_rate = n->rate > 0 ? n->rate : n->requests_per_s; /* the closed loop: what it did */
	}
	return MUH_OK;
}
