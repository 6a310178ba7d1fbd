/*
 * load.h — muh's load generator: the requests muh sends an inference server
 * (OpenAI-style /v1/completions or /v1/chat/completions, streamed as SSE) and
 * what each one measured (TTFT, ITL, TPOT, end-to-end, tokens).
 *
 * One thread drives every request through libcurl's multi interface, so the
 * generator's own cost per streamed token stays far below the server's. The
 * loop is closed (a fixed number of requests in flight) or open (arrivals at
 * a mean rate, Poisson or gamma-distributed gaps, seeded). Warm-up requests
 * run first, to completion, and are kept out of every statistic.
 *
 * Failures of the server (refused, reset, HTTP errors, timeouts, malformed
 * SSE) are counted in the result, never fatal: a load run always says how
 * far it got. See docs/load.md for every option and metric.
 */
#ifndef MUH_LOAD_H
#define MUH_LOAD_H

#include <stddef.h>
#include <stdint.h>

#include "muh/diag.h"
#include "muh/textout.h"

#include "muh/api.h"

MUH_BEGIN_DECLS

typedef struct load_opts {
	char url[512];            /* server base, "http://127.0.0.1:8080" */
	char endpoint[64];        /* "/v1/completions" (default) or "/v1/chat/completions" */
	char model[128];          /* the request's "model" field; default "muh" */
	int concurrency;          /* closed loop: this many requests in flight (default 1) */
	double rate;              /* open loop when > 0: mean arrivals per second */
	double burstiness;        /* gamma shape of inter-arrival times; 1 = Poisson (default) */
	int requests;             /* measured requests; -1 (default): 32, or none when duration_s > 0 */
	double duration_s;
	int warmup;               /* requests sent first and kept out of the statistics (default 0) */
	int prompt_tokens, output_tokens, prefix_tokens; /* synthetic prompts (defaults 64, 32, 0) */
	uint64_t seed;            /* default 1 */
	char dataset[1024];       /* JSONL of {"prompt": ...} or ShareGPT-style JSON; "" = synthetic */
	int ignore_eos;           /* default 1: ask for exactly output_tokens (ignore_eos, min_tokens) */
	double request_timeout_s; /* default 60; a request past it is an error */
	double slo_ttft_s, slo_tpot_s; /* goodput counts requests within both; 0 = no limit */
	double deadline_s;        /* whole run gives up after this (default 0: none) */
	double chunk_tolerance;   /* over a run, the usage blocks may claim at most (1 + this) x the
				   * chunks streamed with text, + 1 a request (default 0.75): a chunk
				   * may carry several tokens (llama.cpp bundles byte tokens: 1.26-1.4x
				   * on the tests' tiny model); more, and no request of the run is ok */
	int find_rate;            /* engine backend: each sample is load_find_rate's (default 0) */
	int find_rate_steps;      /* its load runs at most (default 10) */
} load_opts;

typedef struct load_dist {
	double mean, p50, p90, p99, max; /* seconds; NAN when none */
} load_dist;

/* Connections refused in a row, with nothing answered between, after which
 * a run takes the server as gone and sends no more: nobody listens on the
 * port (an overloaded server drops connections; it does not refuse them). */
#define LOAD_GONE_AFTER 32

/* The usage blocks' completion tokens, summed over a run, are held against
 * the chunks with text that run streamed: at most (1 + load.chunk_tolerance)
 * x the chunks + 1 a request once there are LOAD_USAGE_MIN_CHUNKS of them.
 * Fewer are too few to tell a liar from a detokenizer that bundles: one
 * character of byte tokens may come as one chunk of up to
 * LOAD_CHUNK_TOKENS_MAX tokens, so an honest run of 2 requests x 4 tokens
 * can stream 2 chunks, 4x. Such a run is held to the larger of the two
 * ratios instead (load_result.usage_checked is 0): a claim with no text
 * behind it is still caught, a 2x claim is not. A run of 4 requests and 32
 * chunks that claims 2x (64 > 1.75 x 32 + 4) is. */
#define LOAD_USAGE_MIN_CHUNKS 32
#define LOAD_CHUNK_TOKENS_MAX 4

typedef struct load_result {
	size_t sent, ok, errors, truncated; /* measured requests only; truncated: completion shorter than asked (ignore_eos) */
	size_t unreachable;                 /* of errors: could not connect at all (refused, no route, DNS) */
	size_t timed_out;                   /* of errors: not answered within request_timeout */
	size_t miscounted;                  /* of errors: the server's token count cannot be true (more
					     * than max_tokens, or its usage block against the chunks) */
	size_t good;                        /* ok requests within both SLOs (goodput_rps = good / wall_s) */
	double wall_s;                      /* first measured send to last measured finish */
	double send_span_s;                 /* first measured send to last measured send */
	double sent_per_s;                  /* an open loop's (load.rate) arrival rate as realized: (sent -
					     * 1) / send_span_s; NAN for a closed loop or under 2 sent. Its
					     * gaps are gamma (Poisson at burstiness 1), so a run of n holds
					     * the rate to about 1 / sqrt(burstiness x (n - 1)), one standard
					     * deviation (18% at 32), and req/s may exceed the rate */
	double output_tokens_per_s, requests_per_s, goodput_rps;
	long long prompt_tokens, completion_tokens; /* from each response's usage block; if absent, counted chunks */
	load_dist ttft, itl, tpot, e2e;
	char first_error[256]; /* e.g. "request 3: HTTP 500: ...", "request 0: connection refused" */
	int server_gone;       /* sending stopped early: LOAD_GONE_AFTER connections in a row were refused */
	size_t usage_requests; /* completed requests (ok or truncated) whose usage block gave their count */
	int usage_checked;     /* 1: those usage blocks were held to load.chunk_tolerance against their
				* chunks (at least LOAD_USAGE_MIN_CHUNKS of them); 0: no usage block, or too
				* few chunks, and then held to LOAD_CHUNK_TOKENS_MAX a chunk at most */
	double max_rate;       /* load_find_rate's answer (req/s); NAN for a plain run */
	double rate_slo_miss;  /* load_find_rate when no rate met the SLOs: how far the run that missed
				* them by least misses them (the sum of each miss relative to its limit,
				* load_rate_step.miss); 0 when a rate met them; NAN for a plain run */
} load_result;

/* Fills o with the defaults written above (url empty). */
void load_defaults(load_opts *o);

/* Sets one option from text, as spec files (load: block) and the CLI write
 * it: key is the field name (concurrency, rate, burstiness, requests,
 * duration, warmup, prompt_tokens, output_tokens, prefix_tokens, seed,
 * dataset, ignore_eos, request_timeout, slo_ttft, slo_tpot, deadline,
 * chunk_tolerance, find_rate, find_rate_steps,
 * endpoint, model, url); durations accept "2s", "500ms", "2". Returns 0, or
 * -1 with why (n bytes) saying what was expected; an unknown key is -2,
 * why naming the nearest known one. */
int load_opts_set(load_opts *o, const char *key, const char *value, char *why, size_t n);

/* The measured requests o sends: its requests when given, else 32, or 0
 * (send for duration_s) when a duration is given. */
int load_requests(const load_opts *o);

/* The most completion tokens a chunk with text the usage blocks of a run
 * may claim, on average (beside + 1 a request): 1 + o->chunk_tolerance
 * when the run was judged (usage_checked), else the larger of that and
 * LOAD_CHUNK_TOKENS_MAX. */
double load_usage_ratio(const load_opts *o, int usage_checked);

/* Checks o as a whole (url set, counts in range, prefix_tokens <=
 * prompt_tokens, ...). Returns MUH_OK or MUH_EINPUT with d saying why. */
int load_opts_check(const load_opts *o, muh_diag *d);

/* Runs the load against o->url. Server-side failures (refused, reset, HTTP
 * errors, timeouts, malformed SSE) are counted in r, never fatal; returns
 * MUH_EENV only when curl itself cannot start, MUH_EINPUT for bad opts or an
 * unreadable dataset (d says why), MUH_ENOMEM when memory runs out. */
int load_run(const load_opts *o, load_result *r, muh_diag *d);

/* Opens libcurl, the HTTP client of load_run and the engine backend, if it
 * is not open yet: MUH_OK, or MUH_EENV with d naming the library that is
 * missing and the package that has it. A caller checks this before it
 * prints anything of a load (load_run itself also does). */
int load_http_open(muh_diag *d);

/* GET url within timeout_s; returns the HTTP status (0 when nothing
 * answered, or libcurl.so.4 is missing) and, when body is not NULL, the body (malloc'd, NUL-terminated,
 * NULL when empty; at most 1 MiB) through *body. Proxies are never used. */
long load_http_get(const char *url, double timeout_s, char **body);

/* Polls GET url+path (path NULL or "": /health) every 0.2 s until it
 * answers 200 or timeout_s passes. Returns MUH_OK, or MUH_EENV with d
 * saying what the last answer was. */
int load_wait_ready(const char *url, const char *path, double timeout_s, muh_diag *d);

/* The result as named metrics (names: output_tokens_per_s, requests_per_s,
 * goodput_rps, errors, truncated, ok, prompt_tokens, completion_tokens,
 * max_rate, rate_slo_miss,
 * ttft_p50, ttft_p90, ttft_p99, ttft_mean, itl_p50.., tpot_p50..,
 * e2e_p50..). Fills at most max; returns the count. names point to static
 * strings. */
size_t load_metrics(const load_result *r, const char **names, double *values, size_t max);

/* The highest arrival rate a server sustains within latency SLOs, found as
 * MLPerf LoadGen's server scenario finds it: open-loop Poisson arrivals
 * (o's burstiness, requests and prompts; its rate replaced) at a rate, the
 * run judged by its errors, its percentiles, and whether it kept up (it
 * finished at least 75% of the requests per second a server that keeps up
 * would: n / (the span of its sends + e2e_p50)), the rate bisected. The bracket
 * starts from a closed-loop run at o->concurrency (its requests_per_s is
 * the first rate tried), doubles while the SLOs hold and halves while they
 * do not, then bisects until hi/lo - 1 <= rel_tol or steps are spent. */
typedef struct load_rate_opts {
	double slo_ttft_p99_s; /* ttft_p99 <= this; 0: no limit */
	double slo_tpot_p99_s; /* tpot_p99 <= this; 0: no limit */
	int steps;             /* load runs at most, the first closed-loop one included (default 10) */
	double rel_tol;        /* stop when the bracket is this narrow (default 0.05) */
} load_rate_opts;

#define LOAD_RATE_MAX_STEPS 32
/* The warm-up of each step of a sweep (muh load --sweep) when none is
 * given. On a freshly started llama.cpp server the sweep's first step ran at
 * 0.79-0.92x the tokens/s of the same step run again (seven samples of 12 to
 * 20 starts, each one's 95% CI below 1); warmed by 4 requests it reached
 * 0.85-0.87x, by 8 0.94-1.01x, by 16 0.96x, by 32 0.97x (bench/load_cold.sh,
 * docs/results/load.md). That first step sets the sweep's rates. */
#define LOAD_SWEEP_WARMUP 8
typedef struct load_rate_step {
	double rate;      /* req/s offered; 0 for the closed-loop start */
	int met;          /* 1: errors == 0, nothing truncated, and every SLO held */
	double ttft_p99, tpot_p99, requests_per_s;
	size_t errors;
	double miss;      /* how far it missed: the sum over what did not hold of its miss relative to
			   * its limit ((p99 - slo) / slo; the share of the kept-up rate it fell
			   * short; 1 for errors or truncations); 0 when met */
	char why[160];    /* what did not hold */
} load_rate_step;

typedef struct load_rate_result {
	double rate;      /* the highest rate that met the SLOs; 0 when none did */
	double lo, hi;    /* the last bracket: lo met, hi did not (hi INFINITY: none failed) */
	load_result at;   /* the run at `rate` (at.max_rate = rate, at.rate_slo_miss = 0); when none
			   * met: the run that missed by least (the closed loop counts), at.max_rate
			   * NAN and at.rate_slo_miss its step's miss, so a search can rank servers
			   * that meet no rate by how far they miss */
	double miss_rate; /* when none met: that run's rate (the closed loop's req/s); 0 otherwise */
	size_t nsteps;
	load_rate_step steps[LOAD_RATE_MAX_STEPS];
} load_rate_result;

/* Sets steps 10, rel_tol 0.05, no SLO. */
void load_rate_defaults(load_rate_opts *ro);
/* Runs the search against o->url. MUH_OK (also when no rate met the SLOs:
 * rate 0); MUH_EENV when no request of a run could connect (nobody listens
 * there); load_run's errors otherwise. */
int load_find_rate(const load_opts *o, const load_rate_opts *ro, load_rate_result *out, muh_diag *d);

/* The result as a JSON object (seconds; NAN as null). malloc'd; NULL when
 * out of memory. */
char *load_result_to_json(const load_result *r);

/* ---- what muh load shows (load_text.c), on a textout's result stream ---- */

/* The opening line (target, prompts, output, requests or duration, and the
 * warm-up: of each step when sweep is 1); the table's header comes with its
 * first row (load_text_header). */
void load_text_opening(const textout *out, const load_opts *o, int sweep);
/* The table's two header lines, and one run of it (label: its step). */
void load_text_header(const textout *o);
void load_text_row(const textout *o, const char *label, const load_result *r);
/* One run as a JSON line, with its step (label) and its shape (rate and
 * burstiness, or concurrency); flushed. */
void load_text_json(const textout *out, const char *label, const load_opts *o, const load_result *r);
/* Under one run's row: its wall time, tokens and requests within the SLOs. */
void load_text_wall(const textout *o, const load_result *r);
/* To the notes, after the rows of open-loop runs of `sent` requests with
 * o's burstiness: how closely such a run realizes its rate (one standard
 * deviation, 1 / sqrt(burstiness x (sent - 1))), why its req/s can exceed
 * the rate named, and what the sent/s column is. Nothing under 2 requests. */
void load_text_rate_note(const textout *out, const load_opts *o, size_t sent);
/* Into b[0..n): why a run's usage blocks were held to a looser bound (its
 * usage_checked is false): "too few chunks with text (fewer than N) to hold
 * the usage blocks to Rx of them (load.chunk_tolerance); held to Mx, the
 * most tokens a chunk carries", with o's bounds (load_usage_ratio). The one
 * wording of muh load's note and eval's. Returns b. */
const char *load_text_usage_held(char *b, size_t n, const load_opts *o);
/* load_find_rate's steps and its answer as a table, or one JSON object. */
void load_text_rate(const textout *out, const load_opts *o, const load_rate_result *fr, int json);

/* ---- the pieces, exposed for tests and for clients with their own loop ---- */

/* Summary of x[0..n) (sorts x in place): mean, max and percentiles by linear
 * interpolation between order statistics (numpy's default): p(q) =
 * x[floor(h)] + (h - floor(h)) * (x[floor(h)+1] - x[floor(h)]), h = q*(n-1).
 * n == 0 gives all NAN. */
load_dist load_dist_of(double *x, size_t n);

/* An incremental reader of a text/event-stream: fed bytes in any split, it
 * calls on_data once per event with the event's data (its data: lines joined
 * by '\n', NUL-terminated, without the final newline). Comment, event:, id:
 * and retry: lines are skipped. A line longer than the buffer can hold
 * grows it; growth failing sets oom. */
typedef struct load_sse {
	char *buf;          /* the line being read */
	size_t len, cap;
	char *data;         /* the event being assembled */
	size_t dlen, dcap;
	int has_data;       /* a data: line was seen since the last dispatch */
	int oom;
} load_sse;

typedef void (*load_sse_fn)(void *ctx, const char *data, size_t len);

void load_sse_init(load_sse *p);
/* Feeds n bytes; calls fn(ctx, data, len) for each event they complete. */
void load_sse_feed(load_sse *p, const char *bytes, size_t n, load_sse_fn fn, void *ctx);
/* The stream ended: dispatches a last line and event that lacked their
 * terminators. */
void load_sse_finish(load_sse *p, load_sse_fn fn, void *ctx);
void load_sse_free(load_sse *p);

/* The prompts of a run: synthetic (seeded words, made when asked for) or
 * read from o->dataset (request i sends text[i % n]). */
typedef struct load_prompts {
	char **text;     /* the dataset's prompts; NULL when synthetic */
	size_t n;
	char *prefix;    /* synthetic: the shared prefix ("" when none) */
	size_t prefix_len;
	int words;       /* synthetic: words after the prefix */
	uint64_t seed;
	char *scratch;   /* synthetic: the last prompt made */
	size_t scap;
} load_prompts;

/* Sets up the prompts of o. Synthetic prompts are ASCII words of a fixed
 * list of 30 common short English words (each one token, with its leading
 * space, in GPT-2, Llama and muh's tiny test vocabularies), prompt_tokens
 * words in all, the first prefix_tokens of them the same for every request;
 * the same seed gives the same prompts. A dataset gives its prompts in file
 * order. Returns MUH_OK, MUH_EINPUT with d naming file:line for an
 * unreadable or malformed dataset, or MUH_ENOMEM. */
int load_prompts_build(const load_opts *o, load_prompts *p, muh_diag *d);

/* The prompt of request i: valid until the next call on p; NULL when out of
 * memory. */
const char *load_prompt_at(load_prompts *p, size_t i);
void load_prompts_free(load_prompts *p);

MUH_END_DECLS

#endif
