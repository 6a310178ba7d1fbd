/*
 * load.c — the load generator: OpenAI-style streamed requests to a running
 * inference server, timed per token, on libcurl's multi interface in one
 * thread.
 *
 * It owns: load options (defaults, text form, checks), prompts (synthetic
 * seeded words or a dataset), the request body, the SSE reader, the arrival
 * process (closed loop at a concurrency, open loop with gamma gaps), the
 * timing of each request (CLOCK_MONOTONIC) and the statistics of a run.
 *
 * It must never: print, exit, or treat anything the server does (refuse,
 * reset, HTTP errors, time-outs, malformed SSE) as fatal: those are counted
 * in the result. It starts no threads and touches no global state besides
 * curl_global_init (once). libcurl is opened on first use (curl_dl.h), so
 * that a muh process that sends no request never loads it.
 *
 * One request's life: a slot (an easy handle, reused so the connection is
 * too) gets a body, joins the multi handle and streams; the write callback
 * feeds the SSE reader, each event's JSON is read with cJSON, and a chunk
 * that carries text is a token chunk: the first sets TTFT, later ones add an
 * ITL gap. When curl says the transfer is done, the request is classified
 * (ok, truncated, error) and its numbers join the run's arrays.
 */
#include "muh/load.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/resource.h>

#include <cjson/cJSON.h>
#include "json_int.h"
#include "curl_dl.h"
#include "strbuf.h"

#include "muh/fileio.h"
#include "muh/muh.h"
#include "muh/stats.h"
#include "muh/strategy.h"
#include "duration.h"

/* ------------------------------------------------------------ options */

void load_defaults(load_opts *o)
{
	memset(o, 0, sizeof(*o));
	snprintf(o->endpoint, sizeof(o->endpoint), "/v1/completions");
	snprintf(o->model, sizeof(o->model), "muh");
	o->concurrency = 1;
	o->burstiness = 1;
	o->requests = -1; /* not given: 32, or none when a duration is */
	o->prompt_tokens = 64;
	o->output_tokens = 32;
	o->seed = 1;
	o->ignore_eos = 1;
	o->request_timeout_s = 60;
	o->chunk_tolerance = 0.75;
	o->find_rate_steps = 10;
}

/* Parses a count from 0 to INT_MAX into *v; -1 when s is not one. */
static int parse_int(const char *s, int *v)
{
	char *end;
	if (!isdigit((unsigned char)*s))
		return -1;
	errno = 0;
	long x = strtol(s, &end, 10);
	if (*end || errno || x > 0x7fffffff)
		return -1;
	*v = (int)x;
	return 0;
}

/* Parses a finite non-negative number into *v; -1 when s is not one. */
static int parse_num(const char *s, double *v)
{
	char *end;
	if (!*s || isspace((unsigned char)*s) || *s == '-')
		return -1;
	errno = 0;
	double x = strtod(s, &end);
	if (*end || errno || !isfinite(x) || x < 0)
		return -1;
	*v = x;
	return 0;
}

/* A duration ("2s", "500ms", "1.5m", "1h30m", "2" meaning seconds) in
 * seconds, as everywhere in muh (duration_parse), and "0" (none);
 * -1 when s is not one. */
static int parse_duration(const char *s, double *v)
{
	if (!strcmp(s, "0") || !strcmp(s, "0s")) {
		*v = 0;
		return 0;
	}
	return duration_parse(s, v);
}

static int parse_bool(const char *s, int *v)
{
	if (!strcmp(s, "1") || !strcmp(s, "true") || !strcmp(s, "yes") || !strcmp(s, "on"))
		*v = 1;
	else if (!strcmp(s, "0") || !strcmp(s, "false") || !strcmp(s, "no") || !strcmp(s, "off"))
		*v = 0;
	else
		return -1;
	return 0;
}

/* Copies s into dst (cap bytes); -1 when it does not fit. */
static int set_text(char *dst, size_t cap, const char *s)
{
	if (strlen(s) >= cap)
		return -1;
	memcpy(dst, s, strlen(s) + 1);
	return 0;
}

enum kind { K_INT, K_NUM, K_DUR, K_BOOL, K_U64, K_TEXT };

static const struct {
	const char *key;
	enum kind kind;
	size_t off, cap;
} load_keys[] = {
#define F(k, kind, field) {k, kind, offsetof(load_opts, field), sizeof(((load_opts *)0)->field)}
	F("concurrency", K_INT, concurrency),
	F("rate", K_NUM, rate),
	F("burstiness", K_NUM, burstiness),
	F("requests", K_INT, requests),
	F("duration", K_DUR, duration_s),
	F("warmup", K_INT, warmup),
	F("prompt_tokens", K_INT, prompt_tokens),
	F("output_tokens", K_INT, output_tokens),
	F("prefix_tokens", K_INT, prefix_tokens),
	F("seed", K_U64, seed),
	F("dataset", K_TEXT, dataset),
	F("ignore_eos", K_BOOL, ignore_eos),
	F("request_timeout", K_DUR, request_timeout_s),
	F("slo_ttft", K_DUR, slo_ttft_s),
	F("slo_tpot", K_DUR, slo_tpot_s),
	F("deadline", K_DUR, deadline_s),
	F("chunk_tolerance", K_NUM, chunk_tolerance),
	F("find_rate", K_BOOL, find_rate),
	F("find_rate_steps", K_INT, find_rate_steps),
	F("endpoint", K_TEXT, endpoint),
	F("model", K_TEXT, model),
	F("url", K_TEXT, url),
#undef F
};
#define NKEYS (sizeof(load_keys) / sizeof(load_keys[0]))

int load_opts_set(load_opts *o, const char *key, const char *value, char *why, size_t n)
{
	static const char *const expect[] = {
		[K_INT] = "a count (0, 1, 2, ...)",
		[K_NUM] = "a non-negative number",
		[K_DUR] = "a duration (2s, 500ms, 1.5m, 1h30m or seconds)",
		[K_BOOL] = "true or false (1/0, yes/no)",
		[K_U64] = "a non-negative integer",
		[K_TEXT] = "shorter text",
	};
	for (size_t i = 0; i < NKEYS; i++) {
		if (strcmp(load_keys[i].key, key))
			continue;
		char *f = (char *)o + load_keys[i].off;
		int rc = -1;
		switch (load_keys[i].kind) {
		case K_INT:
			rc = parse_int(value, (int *)(void *)f);
			break;
		case K_NUM:
			rc = parse_num(value, (double *)(void *)f);
			break;
		case K_DUR:
			rc = parse_duration(value, (double *)(void *)f);
			break;
		case K_BOOL:
			rc = parse_bool(value, (int *)(void *)f);
			break;
		case K_U64: {
			char *end;
			errno = 0;
			unsigned long long x = isdigit((unsigned char)*value) ? strtoull(value, &end, 10) : 0;
			if (isdigit((unsigned char)*value) && !*end && !errno) {
				*(uint64_t *)(void *)f = x;
				rc = 0;
			}
			break;
		}
		case K_TEXT:
			rc = set_text(f, load_keys[i].cap, value);
			break;
		}
		if (rc && why)
			snprintf(why, n, "%s: expected %s, got '%s'", key, expect[load_keys[i].kind], value);
		return rc;
	}
	if (why) {
		diag_near near = DIAG_NEAR_INIT;
		for (size_t i = 0; i < NKEYS; i++)
			diag_near_offer(&near, key, strlen(key), load_keys[i].key);
		char hint[96];
		size_t k = (size_t)snprintf(why, n, "unknown load option '%s'%s; known:", key,
					    diag_near_hint(near.name, hint, sizeof(hint)));
		for (size_t i = 0; i < NKEYS && k < n; i++)
			k += (size_t)snprintf(why + k, n - k, "%s %s", i ? "," : "", load_keys[i].key);
	}
	return -2;
}

int load_requests(const load_opts *o)
{
	return o->requests >= 0 ? o->requests : o->duration_s > 0 ? 0 : 32;
}

double load_usage_ratio(const load_opts *o, int usage_checked)
{
	double ratio = 1 + o->chunk_tolerance;
	return usage_checked || ratio >= LOAD_CHUNK_TOKENS_MAX ? ratio : LOAD_CHUNK_TOKENS_MAX;
}

int load_opts_check(const load_opts *o, muh_diag *d)
{
	if (!(o->chunk_tolerance >= 0 && o->chunk_tolerance <= 1000))
		return diag_errorf(d, "chunk_tolerance must be from 0 to 1000, not %g", o->chunk_tolerance);
	if (strncmp(o->url, "http://", 7) && strncmp(o->url, "https://", 8))
		return diag_errorf(d, "the server URL must start with http:// or https:// (got '%s')", o->url);
	if (o->endpoint[0] != '/')
		return diag_errorf(d, "endpoint must start with '/' (got '%s')", o->endpoint);
	if (o->concurrency < 1)
		return diag_errorf(d, "concurrency must be at least 1");
	if (o->requests > 0 && o->duration_s > 0)
		return diag_errorf(d, "requests (%d) and duration (%g s) are both given: a run sends a number of "
				   "requests or sends for a duration, not both", o->requests, o->duration_s);
	if (o->requests == 0 && !(o->duration_s > 0))
		return diag_errorf(d, "requests is 0 and no duration is given: nothing to send");
	if (o->rate > 0 && !(o->burstiness > 0))
		return diag_errorf(d, "burstiness (the gamma shape) must be above 0");
	if (o->output_tokens < 1)
		return diag_errorf(d, "output_tokens must be at least 1");
	if (!o->dataset[0] && o->prompt_tokens < 1)
		return diag_errorf(d, "prompt_tokens must be at least 1");
	if (o->prefix_tokens > o->prompt_tokens)
		return diag_errorf(d, "prefix_tokens (%d) exceeds prompt_tokens (%d): the prefix is part of the prompt",
				   o->prefix_tokens, o->prompt_tokens);
	if (!(o->request_timeout_s > 0))
		return diag_errorf(d, "request_timeout must be above 0");
	return MUH_OK;
}

/* ------------------------------------------------------- random numbers */

/* splitmix64: a seeded, portable stream; the same seed gives the same run. */
static uint64_t rng_next(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* Uniform in (0, 1). */
static double rng_unit(uint64_t *s)
{
	return ((double)(rng_next(s) >> 11) + 0.5) / 9007199254740992.0;
}

static double rng_normal(uint64_t *s)
{
	return sqrt(-2 * log(rng_unit(s))) * cos(6.283185307179586 * rng_unit(s));
}

/* Gamma(shape k, scale 1) by Marsaglia and Tsang; k < 1 by boosting. */
static double rng_gamma(uint64_t *s, double k)
{
	if (k < 1)
		return rng_gamma(s, k + 1) * pow(rng_unit(s), 1 / k);
	double dd = k - 1.0 / 3, c = 1 / sqrt(9 * dd);
	for (;;) {
		double x = rng_normal(s), v = 1 + c * x;
		if (v <= 0)
			continue;
		v = v * v * v;
		double u = rng_unit(s);
		if (log(u) < 0.5 * x * x + dd - dd * v + dd * log(v))
			return dd * v;
	}
}

/* ------------------------------------------------------------- prompts */

/* Each is one token with its leading space in GPT-2, Llama and the tiny
 * test vocabulary (tests/engine/make_tiny_gguf.py has the same words). */
static const char *const load_words[] = {
	"the", "and", "of", "to", "in", "is", "that", "it", "for", "on",
	"with", "as", "was", "at", "by", "an", "be", "this", "are", "or",
	"from", "one", "all", "we", "you", "can", "will", "not", "have", "but",
};
#define NWORDS (sizeof(load_words) / sizeof(load_words[0]))

/* Appends words seeded words to buf (grown as needed; *len, *cap), each
 * after a space unless it is the first of buf. -1 when out of memory. */
static int add_words(char **buf, size_t *len, size_t *cap, int words, uint64_t seed)
{
	uint64_t s = seed;
	for (int w = 0; w < words; w++) {
		const char *t = load_words[rng_next(&s) % NWORDS];
		size_t k = strlen(t);
		if (*len + k + 2 > *cap) {
			size_t nc = (*cap ? *cap * 2 : 256) + k + 2;
			char *nb = realloc(*buf, nc);
			if (!nb)
				return -1;
			*buf = nb;
			*cap = nc;
		}
		if (*len)
			(*buf)[(*len)++] = ' ';
		memcpy(*buf + *len, t, k);
		*len += k;
		(*buf)[*len] = '\0';
	}
	return 0;
}

/* Appends a prompt to p->text; -1 when out of memory. */
static int prompts_add(load_prompts *p, size_t *cap, const char *s)
{
	if (array_grow(&p->text, cap, p->n, sizeof(*p->text), 64))
		return -1;
	if (!(p->text[p->n] = strdup(s)))
		return -1;
	p->n++;
	return 0;
}

/* The human's first turn of a ShareGPT entry, or its "prompt"; NULL if none. */
static const char *sharegpt_prompt(const cJSON *e)
{
	const cJSON *pr = cJSON_GetObjectItemCaseSensitive(e, "prompt");
	if (cJSON_IsString(pr))
		return pr->valuestring;
	const cJSON *conv = cJSON_GetObjectItemCaseSensitive(e, "conversations");
	const cJSON *t;
	cJSON_ArrayForEach(t, conv)
	{
		const cJSON *from = cJSON_GetObjectItemCaseSensitive(t, "from");
		const cJSON *val = cJSON_GetObjectItemCaseSensitive(t, "value");
		if (cJSON_IsString(from) && cJSON_IsString(val) &&
		    (!strcmp(from->valuestring, "human") || !strcmp(from->valuestring, "user")))
			return val->valuestring;
	}
	return NULL;
}

/* Reads the dataset of path (text, len) into p. */
static int dataset_parse(const char *path, const char *text, size_t len, load_prompts *p, muh_diag *d)
{
	size_t cap = 0, i = 0;
	while (i < len && isspace((unsigned char)text[i]))
		i++;
	if (i < len && text[i] == '[') { /* ShareGPT: one JSON array */
		const char *end = NULL;
		cJSON *root = cJSON_ParseWithLengthOpts(text, len, &end, 0);
		if (!root) {
			int line, col;
			diag_linecol(text, end ? (size_t)(end - text) : 0, &line, &col);
			diag_at(d, path, line, col, text);
			return diag_errorf(d, "not valid JSON (a ShareGPT file is one JSON array)");
		}
		const cJSON *e;
		int rc = MUH_OK;
		cJSON_ArrayForEach(e, root)
		{
			const char *s = sharegpt_prompt(e);
			if (s && *s && prompts_add(p, &cap, s)) {
				rc = MUH_ENOMEM;
				break;
			}
		}
		cJSON_Delete(root);
		if (rc)
			return rc;
		if (!p->n) {
			diag_at(d, path, 1, 1, text);
			return diag_errorf(d, "no prompts: no entry has a \"prompt\" or a human turn in \"conversations\"");
		}
		return MUH_OK;
	}
	/* JSONL: one object with a "prompt" string per line */
	int line = 0;
	for (size_t at = 0; at < len;) {
		size_t eol = at;
		while (eol < len && text[eol] != '\n')
			eol++;
		line++;
		size_t b = at;
		while (b < eol && isspace((unsigned char)text[b]))
			b++;
		if (b < eol) {
			const char *end = NULL;
			cJSON *j = cJSON_ParseWithLengthOpts(text + b, eol - b, &end, 0);
			const cJSON *pr = j ? cJSON_GetObjectItemCaseSensitive(j, "prompt") : NULL;
			if (!j || !cJSON_IsString(pr)) {
				int col = !j && end ? (int)(end - text - (long)at) + 1 : (int)(b - at) + 1;
				cJSON_Delete(j);
				diag_at(d, path, line, col, text);
				return diag_errorf(d, j ? "expected an object with a \"prompt\" string"
							: "not valid JSON (expected {\"prompt\": \"...\"} on each line)");
			}
			int rc = prompts_add(p, &cap, pr->valuestring);
			cJSON_Delete(j);
			if (rc)
				return MUH_ENOMEM;
		}
		at = eol + 1;
	}
	if (!p->n) {
		diag_at(d, path, 0, 0, NULL);
		return diag_errorf(d, "no prompts: the dataset is empty");
	}
	return MUH_OK;
}

int load_prompts_build(const load_opts *o, load_prompts *p, muh_diag *d)
{
	memset(p, 0, sizeof(*p));
	p->seed = o->seed;
	if (o->dataset[0]) {
		size_t len;
		char *text = file_read(o->dataset, &len);
		if (!text) {
			if (errno == ENOMEM)
				return MUH_ENOMEM;
			diag_at(d, o->dataset, 0, 0, NULL);
			return diag_errorf(d, "cannot read the dataset: %s", strerror(errno));
		}
		int rc = dataset_parse(o->dataset, text, len, p, d);
		free(text);
		if (rc)
			load_prompts_free(p);
		return rc;
	}
	size_t cap = 0;
	uint64_t s = o->seed ^ 0x5eedf00dull;
	if (add_words(&p->prefix, &p->prefix_len, &cap, o->prefix_tokens, rng_next(&s)))
		return MUH_ENOMEM;
	if (!p->prefix && !(p->prefix = calloc(1, 1)))
		return MUH_ENOMEM;
	p->words = o->prompt_tokens - o->prefix_tokens;
	return MUH_OK;
}

const char *load_prompt_at(load_prompts *p, size_t i)
{
	if (p->text)
		return p->text[i % p->n];
	size_t len = p->prefix_len;
	if (p->scap < len + 1) {
		char *nb = realloc(p->scratch, len + 256);
		if (!nb)
			return NULL;
		p->scratch = nb;
		p->scap = len + 256;
	}
	memcpy(p->scratch, p->prefix, len + 1);
	uint64_t s = p->seed * 0x9e3779b97f4a7c15ull + i + 1;
	if (add_words(&p->scratch, &len, &p->scap, p->words, rng_next(&s) ^ rng_next(&s)))
		return NULL;
	return p->scratch;
}

void load_prompts_free(load_prompts *p)
{
	for (size_t i = 0; i < p->n; i++)
		free(p->text[i]);
	free(p->text);
	free(p->prefix);
	free(p->scratch);
	memset(p, 0, sizeof(*p));
}

/* ---------------------------------------------------------- SSE reader */

void load_sse_init(load_sse *p)
{
	memset(p, 0, sizeof(*p));
}

void load_sse_free(load_sse *p)
{
	free(p->buf);
	free(p->data);
	memset(p, 0, sizeof(*p));
}

/* Grows *b (cap *cap) to hold need bytes; -1 when out of memory. */
static int grow(char **b, size_t *cap, size_t need)
{
	if (need <= *cap)
		return 0;
	size_t nc = *cap ? *cap : 512;
	while (nc < need)
		nc *= 2;
	char *nb = realloc(*b, nc);
	if (!nb)
		return -1;
	*b = nb;
	*cap = nc;
	return 0;
}

static void sse_dispatch(load_sse *p, load_sse_fn fn, void *ctx)
{
	if (p->has_data && p->data) {
		p->data[p->dlen] = '\0';
		fn(ctx, p->data, p->dlen);
	}
	p->dlen = 0;
	p->has_data = 0;
}

/* One complete line (without its terminator). */
static void sse_line(load_sse *p, const char *l, size_t n, load_sse_fn fn, void *ctx)
{
	if (n && l[n - 1] == '\r')
		n--;
	if (n == 0) {
		sse_dispatch(p, fn, ctx);
		return;
	}
	if (n < 5 || memcmp(l, "data:", 5))
		return; /* a comment, event:, id:, retry: or unknown field */
	l += 5, n -= 5;
	if (n && *l == ' ')
		l++, n--;
	if (grow(&p->data, &p->dcap, p->dlen + n + 2)) {
		p->oom = 1;
		return;
	}
	if (p->has_data)
		p->data[p->dlen++] = '\n';
	memcpy(p->data + p->dlen, l, n);
	p->dlen += n;
	p->has_data = 1;
}

void load_sse_feed(load_sse *p, const char *bytes, size_t n, load_sse_fn fn, void *ctx)
{
	while (n) {
		const char *nl = memchr(bytes, '\n', n);
		size_t k = nl ? (size_t)(nl - bytes) : n;
		if (!nl) { /* keep the partial line */
			if (grow(&p->buf, &p->cap, p->len + k + 1)) {
				p->oom = 1;
				return;
			}
			memcpy(p->buf + p->len, bytes, k);
			p->len += k;
			return;
		}
		if (p->len) { /* finishes a line begun earlier */
			if (grow(&p->buf, &p->cap, p->len + k + 1)) {
				p->oom = 1;
				return;
			}
			memcpy(p->buf + p->len, bytes, k);
			sse_line(p, p->buf, p->len + k, fn, ctx);
			p->len = 0;
		} else {
			sse_line(p, bytes, k, fn, ctx);
		}
		bytes += k + 1;
		n -= k + 1;
	}
}

void load_sse_finish(load_sse *p, load_sse_fn fn, void *ctx)
{
	if (p->len) {
		sse_line(p, p->buf, p->len, fn, ctx);
		p->len = 0;
	}
	sse_dispatch(p, fn, ctx);
}

/* ----------------------------------------------------------- statistics */

static double pct(const double *x, size_t n, double q)
{
	double h = q * (double)(n - 1);
	size_t i = (size_t)h;
	if (i + 1 >= n)
		return x[n - 1];
	return x[i] + (h - (double)i) * (x[i + 1] - x[i]);
}

load_dist load_dist_of(double *x, size_t n)
{
	load_dist r = {NAN, NAN, NAN, NAN, NAN};
	if (!n)
		return r;
	stats_sort(x, n);
	double sum = 0;
	for (size_t i = 0; i < n; i++)
		sum += x[i];
	r.mean = sum / (double)n;
	r.p50 = pct(x, n, 0.50);
	r.p90 = pct(x, n, 0.90);
	r.p99 = pct(x, n, 0.99);
	r.max = x[n - 1];
	return r;
}

/* A growable array of doubles; oom is sticky. */
typedef struct dvec {
	double *v;
	size_t n, cap;
	int oom;
} dvec;

static void dvec_push(dvec *a, double x)
{
	if (array_grow(&a->v, &a->cap, a->n, sizeof(*a->v), 64)) {
		a->oom = 1;
		return;
	}
	a->v[a->n++] = x;
}

static double now_s(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* ------------------------------------------------------------ requests */

struct run;

/* One slot: an easy handle and the state of the request it carries. */
struct req {
	CURL *h;
	struct run *run;
	int active, measured;
	size_t index; /* request number in its phase */
	char *body;
	double t_send, t_first, t_last;
	long ntok;                       /* token-bearing chunks */
	long long u_prompt, u_completion; /* from usage; -1 when absent */
	int done_seen, finish_seen, http_checked;
	long http;
	char errbody[512]; /* start of a non-2xx body */
	size_t errlen;
	char err[200]; /* what was wrong with the stream */
	dvec gaps;
	load_sse sse;
	char curlerr[CURL_ERROR_SIZE];
};

struct run {
	const load_opts *o;
	load_result *r;
	CURLM *m;
	CURL *tmpl; /* what every request's handle is copied from */
	int ep;     /* epoll set of curl's sockets */
	double timer_due; /* when curl wants CURL_SOCKET_TIMEOUT; -1: never */
	struct curl_slist *hdrs;
	char url[600];
	int chat;
	load_prompts prompts;
	struct req **slots; /* every slot made; idle ones have active 0 */
	size_t nslots, capslots, inflight;
	size_t next_index; /* requests sent so far, warm-up included (prompt choice) */
	double deadline;   /* absolute; 0 = none */
	int stopped;       /* the deadline was reached */
	size_t refused_row; /* connections refused in a row, nothing answered between */
	dvec ttft, tpot, e2e, itl;
	double t_first_send, t_last_send, t_last_end;
	int oom;
	int env_errno; /* EMFILE, ENOMEM, ... met by muh itself opening a connection */
	long long usage_tokens, usage_chunks; /* over measured requests with a usage block */
	size_t usage_requests;
};

/* Reads one SSE event's JSON into q. */
static void on_event(void *ctx, const char *data, size_t len)
{
	struct req *q = ctx;
	if (q->err[0])
		return;
	if (len == 6 && !memcmp(data, "[DONE]", 6)) {
		q->done_seen = 1;
		return;
	}
	cJSON *j = cJSON_ParseWithLength(data, len);
	if (!j || !cJSON_IsObject(j)) {
		snprintf(q->err, sizeof(q->err), "malformed SSE data: '%.60s'", data);
		cJSON_Delete(j);
		return;
	}
	const cJSON *e = cJSON_GetObjectItemCaseSensitive(j, "error");
	if (e) {
		const cJSON *msg = cJSON_GetObjectItemCaseSensitive(e, "message");
		snprintf(q->err, sizeof(q->err), "error in the stream: %.120s",
			 cJSON_IsString(msg) ? msg->valuestring : cJSON_IsString(e) ? e->valuestring : "?");
		cJSON_Delete(j);
		return;
	}
	const cJSON *u = cJSON_GetObjectItemCaseSensitive(j, "usage");
	if (cJSON_IsObject(u)) {
		const cJSON *pt = cJSON_GetObjectItemCaseSensitive(u, "prompt_tokens");
		const cJSON *ct = cJSON_GetObjectItemCaseSensitive(u, "completion_tokens");
		if (cJSON_IsNumber(pt))
			q->u_prompt = (long long)pt->valuedouble;
		if (cJSON_IsNumber(ct))
			q->u_completion = (long long)ct->valuedouble;
	}
	const cJSON *ch = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(j, "choices"), 0);
	if (ch) {
		const cJSON *t = cJSON_GetObjectItemCaseSensitive(ch, "text");
		if (!t) {
			const cJSON *delta = cJSON_GetObjectItemCaseSensitive(ch, "delta");
			t = cJSON_GetObjectItemCaseSensitive(delta, "content");
			if (!cJSON_IsString(t) || !*t->valuestring)
				t = cJSON_GetObjectItemCaseSensitive(delta, "reasoning_content");
		}
		if (cJSON_IsString(t) && *t->valuestring) {
			double now = now_s();
			if (q->ntok == 0)
				q->t_first = now;
			else
				dvec_push(&q->gaps, now - q->t_last);
			q->t_last = now;
			q->ntok++;
		}
		const cJSON *fr = cJSON_GetObjectItemCaseSensitive(ch, "finish_reason");
		if (cJSON_IsString(fr))
			q->finish_seen = 1;
	}
	cJSON_Delete(j);
}

static size_t on_write(char *ptr, size_t size, size_t nmemb, void *ud)
{
	struct req *q = ud;
	size_t n = size * nmemb;
	if (!q->http_checked) {
		curl_dl.easy_getinfo(q->h, CURLINFO_RESPONSE_CODE, &q->http);
		q->http_checked = 1;
	}
	if (q->http < 200 || q->http >= 300) {
		size_t k = n < sizeof(q->errbody) - 1 - q->errlen ? n : sizeof(q->errbody) - 1 - q->errlen;
		memcpy(q->errbody + q->errlen, ptr, k);
		q->errlen += k;
		q->errbody[q->errlen] = '\0';
		return n;
	}
	load_sse_feed(&q->sse, ptr, n, on_event, q);
	return q->sse.oom ? 0 : n;
}

/* The request body of request i, malloc'd; NULL when out of memory. */
static char *make_body(struct run *R, size_t i)
{
	const load_opts *o = R->o;
	const char *prompt = load_prompt_at(&R->prompts, i);
	if (!prompt)
		return NULL;
	cJSON *b = cJSON_CreateObject();
	cJSON_AddStringToObject(b, "model", o->model);
	if (R->chat) {
		cJSON *msgs = cJSON_AddArrayToObject(b, "messages");
		cJSON *m = cJSON_CreateObject();
		cJSON_AddStringToObject(m, "role", "user");
		cJSON_AddStringToObject(m, "content", prompt);
		cJSON_AddItemToArray(msgs, m);
	} else {
		cJSON_AddStringToObject(b, "prompt", prompt);
	}
	cJSON_AddNumberToObject(b, "max_tokens", o->output_tokens);
	cJSON_AddTrueToObject(b, "stream");
	cJSON *so = cJSON_AddObjectToObject(b, "stream_options");
	cJSON_AddTrueToObject(so, "include_usage");
	if (o->ignore_eos) {
		cJSON_AddTrueToObject(b, "ignore_eos");
		cJSON_AddNumberToObject(b, "min_tokens", o->output_tokens);
	}
	char *s = cJSON_PrintUnformatted(b);
	cJSON_Delete(b);
	return s;
}

/* The handle every request is copied from: what all of them share. A fresh
 * copy per request, not one handle reused: libcurl counts the retries of a
 * connection that died on reuse (llama.cpp's server closes after each
 * stream) over a handle's whole life and gives up after five. */
/* curl's socket opener: a socket() that fails for want of descriptors,
 * memory or buffers is recorded (curl says only "Couldn't connect"). */
static curl_socket_t open_socket(void *ud, curlsocktype purpose, struct curl_sockaddr *a)
{
	struct run *R = ud;
	(void)purpose;
	int fd = socket(a->family, a->socktype | SOCK_CLOEXEC, a->protocol);
	if (fd < 0 && !R->env_errno &&
	    (errno == EMFILE || errno == ENFILE || errno == ENOMEM || errno == ENOBUFS))
		R->env_errno = errno;
	return fd < 0 ? CURL_SOCKET_BAD : fd;
}

static CURL *make_template(struct run *R)
{
	CURL *h = curl_dl.easy_init();
	if (!h)
		return NULL;
	curl_dl.easy_setopt(h, CURLOPT_URL, R->url);
	curl_dl.easy_setopt(h, CURLOPT_HTTPHEADER, R->hdrs);
	curl_dl.easy_setopt(h, CURLOPT_POST, 1L);
	curl_dl.easy_setopt(h, CURLOPT_WRITEFUNCTION, on_write);
	curl_dl.easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	curl_dl.easy_setopt(h, CURLOPT_TCP_NODELAY, 1L);
	curl_dl.easy_setopt(h, CURLOPT_OPENSOCKETFUNCTION, open_socket);
	curl_dl.easy_setopt(h, CURLOPT_OPENSOCKETDATA, R);
	long tmo = (long)(R->o->request_timeout_s * 1000 + 0.5);
	if (tmo < 1)
		tmo = 1;
	curl_dl.easy_setopt(h, CURLOPT_TIMEOUT_MS, tmo);
	curl_dl.easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, tmo < 10000 ? tmo : 10000L);
	return h;
}

/* An idle slot (made when none is idle); NULL when out of memory. */
static struct req *slot_get(struct run *R)
{
	for (size_t i = 0; i < R->nslots; i++)
		if (!R->slots[i]->active)
			return R->slots[i];
	if (R->nslots == R->capslots) {
		size_t nc = R->capslots ? R->capslots * 2 : 16;
		struct req **ns = realloc(R->slots, nc * sizeof(*ns));
		if (!ns)
			return NULL;
		R->slots = ns;
		R->capslots = nc;
	}
	struct req *q = calloc(1, sizeof(*q));
	if (!q)
		return NULL;
	q->run = R;
	R->slots[R->nslots++] = q;
	return q;
}

/* Starts the next request; -1 when out of memory or curl refuses it. */
static int req_start(struct run *R, int measured, size_t index)
{
	struct req *q = slot_get(R);
	if (!q)
		return -1;
	char *body = make_body(R, R->next_index);
	if (!body)
		return -1;
	free(q->body);
	q->body = body;
	q->measured = measured;
	q->index = index;
	q->ntok = 0;
	q->u_prompt = q->u_completion = -1;
	q->done_seen = q->finish_seen = q->http_checked = 0;
	q->http = 0;
	q->errlen = 0;
	q->errbody[0] = q->err[0] = q->curlerr[0] = '\0';
	q->gaps.n = 0;
	q->sse.len = q->sse.dlen = 0;
	q->sse.has_data = q->sse.oom = 0;
	if (!(q->h = curl_dl.easy_duphandle(R->tmpl)))
		return -1;
	curl_dl.easy_setopt(q->h, CURLOPT_WRITEDATA, q);
	curl_dl.easy_setopt(q->h, CURLOPT_PRIVATE, q);
	curl_dl.easy_setopt(q->h, CURLOPT_ERRORBUFFER, q->curlerr);
	curl_dl.easy_setopt(q->h, CURLOPT_POSTFIELDS, q->body);
	curl_dl.easy_setopt(q->h, CURLOPT_POSTFIELDSIZE, (long)strlen(q->body));
	q->t_send = now_s();
	if (curl_dl.multi_add_handle(R->m, q->h) != CURLM_OK) {
		curl_dl.easy_cleanup(q->h);
		q->h = NULL;
		return -1;
	}
	q->active = 1;
	R->inflight++;
	R->next_index++;
	if (measured) {
		R->r->sent++;
		if (R->r->sent == 1)
			R->t_first_send = q->t_send;
		R->t_last_send = q->t_send;
	}
	return 0;
}

/* Counts an error of request q; the first one's message is kept. */
static void note_error(struct run *R, const struct req *q, const char *what)
{
	load_result *r = R->r;
	r->errors++;
	if (!r->first_error[0])
		snprintf(r->first_error, sizeof(r->first_error), "request %zu: %.230s", q->index, what);
}

/* Classifies a finished request (cc: curl's result; cc < 0: cut off at the
 * run's deadline) and adds its numbers to the run. */
static void req_finish(struct run *R, struct req *q, int cc)
{
	double t_end = now_s();
	long http = q->http;
	if (!q->http_checked)
		curl_dl.easy_getinfo(q->h, CURLINFO_RESPONSE_CODE, &http);
	/* out of descriptors, memory or disk in muh itself: muh's environment,
	 * not the server's failure (it was blamed: "Couldn't connect") */
	long oe = 0;
	if (cc > 0 && cc != CURLE_OK)
		curl_dl.easy_getinfo(q->h, CURLINFO_OS_ERRNO, &oe);
	if (cc == CURLE_OUT_OF_MEMORY)
		oe = ENOMEM;
	if (!R->env_errno && (oe == EMFILE || oe == ENFILE || oe == ENOMEM || oe == ENOBUFS || oe == ENOSPC))
		R->env_errno = (int)oe;
	curl_dl.multi_remove_handle(R->m, q->h);
	curl_dl.easy_cleanup(q->h);
	q->h = NULL;
	q->active = 0;
	R->inflight--;
	if (cc == CURLE_OK)
		load_sse_finish(&q->sse, on_event, q);
	if (cc == CURLE_COULDNT_CONNECT)
		R->refused_row++;
	else if (cc >= 0)
		R->refused_row = 0;
	if (!q->measured)
		return;
	load_result *r = R->r;
	if (t_end > R->t_last_end)
		R->t_last_end = t_end;
	char msg[700];
	if (cc < 0) {
		note_error(R, q, "cut off at the run's deadline");
		return;
	}
	if (cc != CURLE_OK) {
		const char *what = q->curlerr[0] ? q->curlerr : curl_dl.easy_strerror((CURLcode)cc);
		if (cc == CURLE_OPERATION_TIMEDOUT) {
			snprintf(msg, sizeof(msg), "timed out after %g s (%s)", R->o->request_timeout_s, what);
			what = msg;
			r->timed_out++;
		}
		if (cc == CURLE_COULDNT_CONNECT || cc == CURLE_COULDNT_RESOLVE_HOST ||
		    cc == CURLE_COULDNT_RESOLVE_PROXY)
			r->unreachable++;
		note_error(R, q, what);
		return;
	}
	if (http < 200 || http >= 300) {
		size_t k = q->errlen;
		while (k && isspace((unsigned char)q->errbody[k - 1]))
			k--;
		snprintf(msg, sizeof(msg), "HTTP %ld: %.*s", http, (int)(k < 160 ? k : 160), q->errbody);
		note_error(R, q, msg);
		return;
	}
	if (q->sse.oom) {
		R->oom = 1;
		note_error(R, q, "out of memory reading the stream");
		return;
	}
	if (q->err[0]) {
		note_error(R, q, q->err);
		return;
	}
	if (!q->done_seen && !q->finish_seen) {
		note_error(R, q, "the stream ended before [DONE] or a finish_reason");
		return;
	}
	/* what the server says it sent, checked against what was asked and
	 * what was streamed: a usage block is the server's word, not a count */
	int asked = R->o->output_tokens;
	if (q->ntok > asked || q->u_completion > asked) {
		snprintf(msg, sizeof(msg), "the server claims %lld completion tokens and streamed %ld chunks with text "
					   "for max_tokens %d: more than asked",
			 q->u_completion, q->ntok, asked);
		r->miscounted++;
		note_error(R, q, msg);
		return;
	}
	if (q->u_completion >= 0 && q->ntok > q->u_completion) {
		snprintf(msg, sizeof(msg), "the usage block claims %lld completion tokens where %ld chunks with text "
					   "were streamed: a chunk carries at least one token",
			 q->u_completion, q->ntok);
		r->miscounted++;
		note_error(R, q, msg);
		return;
	}
	/* a chunk may carry several tokens (a detokenizer holds back a byte
	 * token until its character is whole), so usage and chunks are held
	 * against each other over the whole run (load_run's end, and
	 * LOAD_USAGE_MIN_CHUNKS in load.h) */
	if (q->u_completion >= 0) {
		R->usage_tokens += q->u_completion;
		R->usage_chunks += q->ntok;
		R->usage_requests++;
	}
	long long ctok = q->u_completion >= 0 ? q->u_completion : q->ntok;
	r->completion_tokens += ctok;
	if (q->u_prompt > 0)
		r->prompt_tokens += q->u_prompt;
	double e2e = t_end - q->t_send;
	dvec_push(&R->e2e, e2e);
	double ttft = NAN, tpot = NAN;
	if (q->ntok > 0) {
		ttft = q->t_first - q->t_send;
		dvec_push(&R->ttft, ttft);
	}
	if (q->ntok > 0 && ctok > 1) {
		tpot = (e2e - ttft) / (double)(ctok - 1);
		dvec_push(&R->tpot, tpot);
	}
	for (size_t i = 0; i < q->gaps.n; i++)
		dvec_push(&R->itl, q->gaps.v[i]);
	if (q->gaps.oom)
		R->oom = 1;
	if (R->o->ignore_eos && ctok < R->o->output_tokens) {
		r->truncated++;
		return;
	}
	r->ok++;
	const load_opts *o = R->o;
	int good = !(o->slo_ttft_s > 0 && !(ttft <= o->slo_ttft_s)) && !(o->slo_tpot_s > 0 && tpot > o->slo_tpot_s);
	if (good)
		r->good++;
}

/* Finishes every transfer curl reports done; returns how many. */
static int drain(struct run *R)
{
	int left, n = 0;
	CURLMsg *msg;
	while ((msg = curl_dl.multi_info_read(R->m, &left))) {
		if (msg->msg != CURLMSG_DONE)
			continue;
		struct req *q = NULL;
		curl_dl.easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE, (char **)&q);
		int cc = (int)msg->data.result;
		req_finish(R, q, cc);
		n++;
	}
	return n;
}

/* 1 while the phase has requests left to send: count of them (0: until
 * duration seconds from t0), and the server not gone (LOAD_GONE_AFTER in
 * load.h: a duration run would otherwise fire thousands a second at a port
 * nobody listens on). */
static int more_to_send(struct run *R, size_t count, size_t sent, double t0, double duration)
{
	if (R->env_errno)
		return 0; /* muh cannot open more: the run stops, see load_run */
	if (R->refused_row >= LOAD_GONE_AFTER) {
		R->r->server_gone = 1;
		return 0;
	}
	return count ? sent < count : now_s() - t0 < duration;
}

/* One phase: count requests (0: for duration seconds) at the options'
 * concurrency or rate, to completion, or until the server is gone
 * (LOAD_GONE_AFTER). Returns MUH_OK, or MUH_ENOMEM. */
static int phase(struct run *R, size_t count, double duration, int measured)
{
	const load_opts *o = R->o;
	uint64_t rs = o->seed * 0xd1342543de82ef95ull + (measured ? 2 : 1);
	double t0 = now_s(), next = t0;
	size_t sent = 0;
	for (;;) {
		double now = now_s();
		if (R->deadline > 0 && now >= R->deadline) {
			for (size_t i = 0; i < R->nslots; i++)
				if (R->slots[i]->active)
					req_finish(R, R->slots[i], -1);
			R->stopped = 1;
			return MUH_OK;
		}
		int more = more_to_send(R, count, sent, t0, duration);
		if (o->rate > 0) {
			while (more && now >= next) {
				if (req_start(R, measured, sent))
					return MUH_ENOMEM;
				sent++;
				next += rng_gamma(&rs, o->burstiness) / (o->rate * o->burstiness);
				more = more_to_send(R, count, sent, t0, duration);
			}
		} else {
			while (more && R->inflight < (size_t)o->concurrency) {
				if (req_start(R, measured, sent))
					return MUH_ENOMEM;
				sent++;
				more = more_to_send(R, count, sent, t0, duration);
			}
		}
		if (!more && R->inflight == 0)
			return MUH_OK;
		if (drain(R) && o->rate <= 0)
			continue;
		if (R->oom)
			return MUH_ENOMEM;
		now = now_s();
		double wait = 0.25;
		if (more && o->rate > 0 && next - now < wait)
			wait = next - now;
		if (more && !count && t0 + duration - now < wait)
			wait = t0 + duration - now;
		if (R->deadline > 0 && R->deadline - now < wait)
			wait = R->deadline - now;
		if (R->timer_due >= 0 && R->timer_due - now < wait)
			wait = R->timer_due - now;
		int ms = wait > 0 ? (int)ceil(wait * 1000) : 0;
		struct epoll_event ev[64];
		int n = epoll_wait(R->ep, ev, 64, ms), running;
		for (int i = 0; i < n; i++) {
			int mask = (ev[i].events & EPOLLIN ? CURL_CSELECT_IN : 0) |
				   (ev[i].events & EPOLLOUT ? CURL_CSELECT_OUT : 0) |
				   (ev[i].events & (EPOLLERR | EPOLLHUP) ? CURL_CSELECT_ERR : 0);
			curl_dl.multi_socket_action(R->m, ev[i].data.fd, mask, &running);
		}
		if (R->timer_due >= 0 && now_s() >= R->timer_due) {
			R->timer_due = -1;
			curl_dl.multi_socket_action(R->m, CURL_SOCKET_TIMEOUT, 0, &running);
		}
	}
}

/* libcurl's socket callback: keeps the epoll set to what curl waits for. */
static int on_socket(CURL *e, curl_socket_t fd, int what, void *userp, void *sockp)
{
	struct run *R = userp;
	(void)e;
	(void)sockp;
	if (what == CURL_POLL_REMOVE) {
		epoll_ctl(R->ep, EPOLL_CTL_DEL, fd, NULL); /* fails when already closed: fine */
		return 0;
	}
	struct epoll_event ev;
	memset(&ev, 0, sizeof(ev));
	ev.events = (what & CURL_POLL_IN ? EPOLLIN : 0) | (what & CURL_POLL_OUT ? EPOLLOUT : 0);
	ev.data.fd = fd;
	if (epoll_ctl(R->ep, EPOLL_CTL_MOD, fd, &ev) && errno == ENOENT)
		epoll_ctl(R->ep, EPOLL_CTL_ADD, fd, &ev);
	return 0;
}

/* libcurl's timer callback: when it next wants CURL_SOCKET_TIMEOUT. */
static int on_timer(CURLM *m, long timeout_ms, void *userp)
{
	struct run *R = userp;
	(void)m;
	R->timer_due = timeout_ms < 0 ? -1 : now_s() + 1e-3 * (double)timeout_ms;
	return 0;
}

static void run_free(struct run *R)
{
	for (size_t i = 0; i < R->nslots; i++) {
		struct req *q = R->slots[i];
		if (q->h) {
			curl_dl.multi_remove_handle(R->m, q->h);
			curl_dl.easy_cleanup(q->h);
		}
		free(q->body);
		free(q->gaps.v);
		load_sse_free(&q->sse);
		free(q);
	}
	free(R->slots);
	if (R->tmpl)
		curl_dl.easy_cleanup(R->tmpl);
	if (R->m)
		curl_dl.multi_cleanup(R->m);
	if (R->ep >= 0)
		close(R->ep);
	curl_dl.slist_free_all(R->hdrs);
	load_prompts_free(&R->prompts);
	free(R->ttft.v);
	free(R->tpot.v);
	free(R->e2e.v);
	free(R->itl.v);
}

/* ---- probing a server --------------------------------------------------- */

struct get_body {
	char *p;
	size_t n;
};

static size_t on_get_body(char *data, size_t size, size_t nmemb, void *ud)
{
	struct get_body *b = ud;
	size_t k = size * nmemb;
	if (b->n + k > (1u << 20))
		return 0; /* a probe answer over 1 MiB is not one */
	char *np = realloc(b->p, b->n + k + 1);
	if (!np)
		return 0;
	memcpy(np + b->n, data, k);
	b->p = np;
	b->n += k;
	b->p[b->n] = '\0';
	return k;
}

int load_http_open(muh_diag *d)
{
	return curl_dl_open(d) ? MUH_EENV : MUH_OK;
}

long load_http_get(const char *url, double timeout_s, char **body)
{
	if (body)
		*body = NULL;
	if (curl_dl_open(NULL))
		return 0;
	CURL *h = curl_dl.easy_init();
	if (!h)
		return 0;
	struct get_body b = {0};
	curl_dl.easy_setopt(h, CURLOPT_URL, url);
	curl_dl.easy_setopt(h, CURLOPT_TIMEOUT_MS, (long)(timeout_s * 1000));
	curl_dl.easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	curl_dl.easy_setopt(h, CURLOPT_NOPROXY, "*");
	curl_dl.easy_setopt(h, CURLOPT_WRITEFUNCTION, on_get_body);
	curl_dl.easy_setopt(h, CURLOPT_WRITEDATA, &b);
	long code = 0;
	if (curl_dl.easy_perform(h) == CURLE_OK)
		curl_dl.easy_getinfo(h, CURLINFO_RESPONSE_CODE, &code);
	curl_dl.easy_cleanup(h);
	if (body)
		*body = b.p;
	else
		free(b.p);
	return code;
}

int load_wait_ready(const char *url, const char *path, double timeout_s, muh_diag *d)
{
	char probe[1200];
	snprintf(probe, sizeof(probe), "%s%s", url, path && *path ? path : "/health");
	if (curl_dl_open(d))
		return MUH_EENV;
	double t0 = now_s();
	long code = 0;
	for (;;) {
		code = load_http_get(probe, 1.0, NULL);
		if (code == 200)
			return MUH_OK;
		if (now_s() - t0 >= timeout_s)
			break;
		struct timespec ts = {0, 200 * 1000000L};
		nanosleep(&ts, NULL);
	}
	char got[64];
	if (code)
		snprintf(got, sizeof(got), "the last answer was HTTP %ld", code);
	else
		snprintf(got, sizeof(got), "nothing answered");
	diag_errorf(d, "the server at %.800s was not ready after %g s: GET %.200s: %s", url, timeout_s,
		    path && *path ? path : "/health", got);
	return MUH_EENV;
}

int load_run(const load_opts *o, load_result *r, muh_diag *d)
{
	memset(r, 0, sizeof(*r));
	r->ttft = r->itl = r->tpot = r->e2e = load_dist_of(NULL, 0);
	r->max_rate = NAN;
	r->rate_slo_miss = NAN;
	r->sent_per_s = NAN;
	int rc = load_opts_check(o, d);
	if (rc)
		return rc;
	if ((rc = curl_dl_open(d)))
		return rc;
	static int curl_ready;
	if (!curl_ready) {
		if (curl_dl.global_init(CURL_GLOBAL_DEFAULT))
			return diag_errorf(d, "libcurl cannot start"), MUH_EENV;
		curl_ready = 1;
	}
	struct run R;
	memset(&R, 0, sizeof(R));
	R.o = o;
	R.r = r;
	R.timer_due = -1;
	R.ep = epoll_create1(EPOLL_CLOEXEC);
	if (R.ep < 0) {
		diag_errorf(d, "epoll_create1: %s", strerror(errno));
		return MUH_EENV;
	}
	if ((rc = load_prompts_build(o, &R.prompts, d))) {
		close(R.ep);
		return rc;
	}
	size_t ul = strlen(o->url);
	while (ul && o->url[ul - 1] == '/')
		ul--;
	snprintf(R.url, sizeof(R.url), "%.*s%s", (int)ul, o->url, o->endpoint);
	R.chat = strstr(o->endpoint, "chat") != NULL;
	struct curl_slist *h1 = curl_dl.slist_append(NULL, "Content-Type: application/json");
	struct curl_slist *h2 = h1 ? curl_dl.slist_append(h1, "Accept: text/event-stream") : NULL;
	struct curl_slist *h3 = h2 ? curl_dl.slist_append(h2, "Expect:") : NULL; /* no 100-continue */
	R.hdrs = h3 ? h3 : h2 ? h2 : h1;
	if (!h3 || !(R.m = curl_dl.multi_init()) || !(R.tmpl = make_template(&R))) {
		run_free(&R);
		diag_errorf(d, "libcurl cannot start a transfer");
		return MUH_EENV;
	}
	curl_dl.multi_setopt(R.m, CURLMOPT_MAXCONNECTS, 4096L);
	curl_dl.multi_setopt(R.m, CURLMOPT_SOCKETFUNCTION, on_socket);
	curl_dl.multi_setopt(R.m, CURLMOPT_SOCKETDATA, &R);
	curl_dl.multi_setopt(R.m, CURLMOPT_TIMERFUNCTION, on_timer);
	curl_dl.multi_setopt(R.m, CURLMOPT_TIMERDATA, &R);
	double t0 = now_s();
	if (o->deadline_s > 0)
		R.deadline = t0 + o->deadline_s;
	if (o->warmup > 0)
		rc = phase(&R, (size_t)o->warmup, 0, 0);
	/* a server gone in the warm-up is measured gone: the measured phase
	 * meets the same refusals and counts them (unreachable) */
	R.refused_row = 0;
	r->server_gone = 0;
	if (!rc && !R.stopped)
		rc = phase(&R, (size_t)load_requests(o), o->duration_s, 1);
	if (!rc && (R.oom || R.ttft.oom || R.tpot.oom || R.e2e.oom || R.itl.oom))
		rc = MUH_ENOMEM;
	if (rc == MUH_ENOMEM)
		diag_errorf(d, "out of memory during the load run");
	if (!rc && R.env_errno) {
		struct rlimit nf = {0, 0};
		getrlimit(RLIMIT_NOFILE, &nf);
		if (R.env_errno == EMFILE)
			diag_errorf(d, "muh ran out of file descriptors opening a connection (EMFILE: this process "
				       "may open %llu, ulimit -n); muh's environment, not the server's fault: raise the "
				       "limit or lower load.concurrency", (unsigned long long)nf.rlim_cur);
		else
			diag_errorf(d, "muh's environment, not the server's fault: opening a connection failed "
				       "with %s", strerror(R.env_errno));
		rc = MUH_EENV;
	}
	/* load.h says why a short run gets a looser ratio */
	r->usage_requests = R.usage_requests;
	r->usage_checked = R.usage_requests && R.usage_chunks >= LOAD_USAGE_MIN_CHUNKS;
	double ratio = load_usage_ratio(o, r->usage_checked);
	if (!rc && R.usage_requests &&
	    (double)R.usage_tokens > ratio * (double)R.usage_chunks + (double)R.usage_requests) {
		/* the usage blocks claim more than the streams carried: no request's
		 * count is believed, and none is ok */
		snprintf(r->first_error, sizeof(r->first_error),
			 "the usage blocks claim %lld completion tokens where %lld chunks with text were streamed over "
			 "%zu requests (more than %.2fx, %s)",
			 R.usage_tokens, R.usage_chunks, R.usage_requests, ratio,
			 r->usage_checked ? "load.chunk_tolerance; vLLM's --num-scheduler-steps N streams up to N a chunk"
					  : "the most tokens a chunk carries, a run this short");
		r->miscounted += r->ok + r->truncated;
		r->errors += r->ok + r->truncated;
		r->ok = r->truncated = r->good = 0;
		r->completion_tokens = 0;
	}
	if (r->sent && R.t_last_end > R.t_first_send)
		r->wall_s = R.t_last_end - R.t_first_send;
	if (r->sent)
		r->send_span_s = R.t_last_send - R.t_first_send;
	/* an open loop's only: a closed loop sends its first `concurrency` at once */
	r->sent_per_s = o->rate > 0 && r->sent >= 2 && r->send_span_s > 0
	                    ? (double)(r->sent - 1) / r->send_span_s : NAN;
	if (r->wall_s > 0) {
		r->output_tokens_per_s = (double)r->completion_tokens / r->wall_s;
		r->requests_per_s = (double)(r->ok + r->truncated) / r->wall_s;
		r->goodput_rps = (double)r->good / r->wall_s;
	}
	r->ttft = load_dist_of(R.ttft.v, R.ttft.n);
	r->itl = load_dist_of(R.itl.v, R.itl.n);
	r->tpot = load_dist_of(R.tpot.v, R.tpot.n);
	r->e2e = load_dist_of(R.e2e.v, R.e2e.n);
	run_free(&R);
	return rc;
}

/* ---------------------------------------------------------------- output */

size_t load_metrics(const load_result *r, const char **names, double *values, size_t max)
{
	static const char *const dist_names[4][5] = {
		{"ttft_p50", "ttft_p90", "ttft_p99", "ttft_mean", "ttft_max"},
		{"itl_p50", "itl_p90", "itl_p99", "itl_mean", "itl_max"},
		{"tpot_p50", "tpot_p90", "tpot_p99", "tpot_mean", "tpot_max"},
		{"e2e_p50", "e2e_p90", "e2e_p99", "e2e_mean", "e2e_max"},
	};
	const char *nm[10 + 20];
	double v[10 + 20];
	size_t k = 0;
	nm[k] = "output_tokens_per_s", v[k++] = r->output_tokens_per_s;
	nm[k] = "requests_per_s", v[k++] = r->requests_per_s;
	nm[k] = "goodput_rps", v[k++] = r->goodput_rps;
	nm[k] = "errors", v[k++] = (double)r->errors;
	nm[k] = "truncated", v[k++] = (double)r->truncated;
	nm[k] = "ok", v[k++] = (double)r->ok;
	nm[k] = "prompt_tokens", v[k++] = (double)r->prompt_tokens;
	nm[k] = "completion_tokens", v[k++] = (double)r->completion_tokens;
	nm[k] = "max_rate", v[k++] = r->max_rate;
	nm[k] = "rate_slo_miss", v[k++] = r->rate_slo_miss;
	const load_dist *ds[4] = {&r->ttft, &r->itl, &r->tpot, &r->e2e};
	for (int i = 0; i < 4; i++) {
		double s[5] = {ds[i]->p50, ds[i]->p90, ds[i]->p99, ds[i]->mean, ds[i]->max};
		for (int j = 0; j < 5; j++)
			nm[k] = dist_names[i][j], v[k++] = s[j];
	}
	size_t n = k < max ? k : max;
	for (size_t i = 0; i < n; i++) {
		names[i] = nm[i];
		values[i] = v[i];
	}
	return n;
}

static void add_dist(cJSON *o, const char *k, const load_dist *d)
{
	cJSON *x = cJSON_AddObjectToObject(o, k);
	json_add_num(x, "mean", d->mean);
	json_add_num(x, "p50", d->p50);
	json_add_num(x, "p90", d->p90);
	json_add_num(x, "p99", d->p99);
	json_add_num(x, "max", d->max);
}

char *load_result_to_json(const load_result *r)
{
	cJSON *o = cJSON_CreateObject();
	if (!o)
		return NULL;
	json_add_num(o, "sent", (double)r->sent);
	json_add_num(o, "ok", (double)r->ok);
	json_add_num(o, "errors", (double)r->errors);
	json_add_num(o, "truncated", (double)r->truncated);
	json_add_num(o, "unreachable", (double)r->unreachable);
	json_add_num(o, "timed_out", (double)r->timed_out);
	json_add_num(o, "miscounted", (double)r->miscounted);
	json_add_num(o, "max_rate", r->max_rate);
	json_add_num(o, "rate_slo_miss", r->rate_slo_miss);
	cJSON_AddBoolToObject(o, "server_gone", r->server_gone);
	cJSON_AddBoolToObject(o, "usage_checked", r->usage_checked);
	json_add_num(o, "good", (double)r->good);
	json_add_num(o, "wall_s", r->wall_s);
	json_add_num(o, "output_tokens_per_s", r->output_tokens_per_s);
	json_add_num(o, "requests_per_s", r->requests_per_s);
	json_add_num(o, "goodput_rps", r->goodput_rps);
	json_add_num(o, "sent_per_s", r->sent_per_s);
	json_add_num(o, "prompt_tokens", (double)r->prompt_tokens);
	json_add_num(o, "completion_tokens", (double)r->completion_tokens);
	add_dist(o, "ttft", &r->ttft);
	add_dist(o, "itl", &r->itl);
	add_dist(o, "tpot", &r->tpot);
	add_dist(o, "e2e", &r->e2e);
	if (r->first_error[0])
		cJSON_AddStringToObject(o, "first_error", r->first_error);
	else
		cJSON_AddNullToObject(o, "first_error");
	char *s = cJSON_PrintUnformatted(o);
	cJSON_Delete(o);
	return s;
}
