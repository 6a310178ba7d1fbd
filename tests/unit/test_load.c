/*
 * test_load.c — the load generator (src/engine/load.c): option text, percentiles
 * against numpy's definition, the SSE reader fed in every split, synthetic
 * prompts (deterministic, the right length, a shared prefix), dataset
 * errors with file:line, and whole runs against a forked in-process HTTP
 * server that streams canned answers (ok, short, HTTP 500, malformed SSE,
 * a stalled stream) and against a port nobody listens on.
 */
#include <math.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/wait.h>

#include <cmocka.h>
#include <cjson/cJSON.h>

#include "muh/load.h"
#include "muh/muh.h"

/* ------------------------------------------------------------ options */

static void test_opts_set(void **state)
{
	(void)state;
	load_opts o;
	char why[512];
	load_defaults(&o);
	assert_int_equal(o.concurrency, 1);
	assert_int_equal(o.requests, -1); /* not given */
	assert_int_equal(load_requests(&o), 32);
	assert_int_equal(o.prompt_tokens, 64);
	assert_int_equal(o.output_tokens, 32);
	assert_int_equal(o.ignore_eos, 1);
	assert_string_equal(o.endpoint, "/v1/completions");
	assert_string_equal(o.model, "muh");
	assert_true(o.request_timeout_s == 60);

	assert_int_equal(load_opts_set(&o, "concurrency", "8", why, sizeof(why)), 0);
	assert_int_equal(o.concurrency, 8);
	assert_int_equal(load_opts_set(&o, "duration", "2s", why, sizeof(why)), 0);
	assert_true(o.duration_s == 2);
	assert_int_equal(load_opts_set(&o, "duration", "500ms", why, sizeof(why)), 0);
	assert_true(fabs(o.duration_s - 0.5) < 1e-12);
	assert_int_equal(load_requests(&o), 0); /* a duration and no count: send for it */
	assert_int_equal(load_opts_set(&o, "request_timeout", "2", why, sizeof(why)), 0);
	assert_true(o.request_timeout_s == 2);
	assert_int_equal(load_opts_set(&o, "slo_ttft", "1.5m", why, sizeof(why)), 0);
	assert_true(o.slo_ttft_s == 90);
	assert_int_equal(load_opts_set(&o, "rate", "2.5", why, sizeof(why)), 0);
	assert_true(o.rate == 2.5);
	assert_int_equal(load_opts_set(&o, "ignore_eos", "false", why, sizeof(why)), 0);
	assert_int_equal(o.ignore_eos, 0);
	assert_int_equal(load_opts_set(&o, "seed", "18446744073709551615", why, sizeof(why)), 0);
	assert_true(o.seed == UINT64_MAX);
	assert_int_equal(load_opts_set(&o, "endpoint", "/v1/chat/completions", why, sizeof(why)), 0);
	assert_string_equal(o.endpoint, "/v1/chat/completions");

	assert_int_equal(load_opts_set(&o, "concurrency", "-1", why, sizeof(why)), -1);
	assert_non_null(strstr(why, "concurrency: expected a count"));
	assert_int_equal(o.concurrency, 8);
	assert_int_equal(load_opts_set(&o, "concurrency", "4x", why, sizeof(why)), -1);
	assert_int_equal(load_opts_set(&o, "concurrency", "", why, sizeof(why)), -1);
	assert_int_equal(load_opts_set(&o, "duration", "2d", why, sizeof(why)), -1);
	assert_non_null(strstr(why, "expected a duration"));
	assert_int_equal(load_opts_set(&o, "duration", "0x10", why, sizeof(why)), -1); /* decimal only */
	assert_int_equal(load_opts_set(&o, "duration", "1h30m", why, sizeof(why)), 0); /* as muh tune --time */
	assert_true(o.duration_s == 5400);
	assert_int_equal(load_opts_set(&o, "duration", "ms", why, sizeof(why)), -1);
	assert_int_equal(load_opts_set(&o, "rate", "-3", why, sizeof(why)), -1);
	assert_int_equal(load_opts_set(&o, "rate", "inf", why, sizeof(why)), -1);
	assert_int_equal(load_opts_set(&o, "ignore_eos", "maybe", why, sizeof(why)), -1);
	assert_int_equal(load_opts_set(&o, "seed", "-1", why, sizeof(why)), -1);
	char big[300];
	memset(big, 'm', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	assert_int_equal(load_opts_set(&o, "model", big, why, sizeof(why)), -1);
	assert_int_equal(load_opts_set(&o, "concurency", "4", why, sizeof(why)), -2); /* unknown: -2 */
	assert_non_null(strstr(why, "unknown load option 'concurency' (did you mean 'concurrency'?); known: concurrency, rate"));
	/* a short why buffer is still terminated */
	char tiny[8];
	assert_int_equal(load_opts_set(&o, "nosuch", "1", tiny, sizeof(tiny)), -2);
	assert_int_equal(strlen(tiny), 7);
}

static void test_opts_check(void **state)
{
	(void)state;
	load_opts o;
	muh_diag d;
	load_defaults(&o);
	diag_clear(&d);
	assert_int_equal(load_opts_check(&o, &d), MUH_EINPUT);
	assert_non_null(strstr(d.msg, "http://"));
	snprintf(o.url, sizeof(o.url), "http://127.0.0.1:1");
	assert_int_equal(load_opts_check(&o, &d), MUH_OK);
	o.prefix_tokens = 65;
	assert_int_equal(load_opts_check(&o, &d), MUH_EINPUT);
	assert_non_null(strstr(d.msg, "prefix_tokens (65) exceeds prompt_tokens (64)"));
	o.prefix_tokens = 0;
	o.requests = 0;
	assert_int_equal(load_opts_check(&o, &d), MUH_EINPUT);
	o.duration_s = 1;
	assert_int_equal(load_opts_check(&o, &d), MUH_OK);
	o.requests = 8; /* a count and a duration: one or the other */
	assert_int_equal(load_opts_check(&o, &d), MUH_EINPUT);
	assert_non_null(strstr(d.msg, "requests (8) and duration (1 s) are both given"));
	o.requests = -1; /* not given: the duration decides */
	assert_int_equal(load_opts_check(&o, &d), MUH_OK);
	o.concurrency = 0;
	assert_int_equal(load_opts_check(&o, &d), MUH_EINPUT);
}

/* -------------------------------------------------------- percentiles */

static void test_dist(void **state)
{
	(void)state;
	double x[100];
	for (int i = 0; i < 100; i++)
		x[i] = 100 - i; /* unsorted on purpose */
	load_dist r = load_dist_of(x, 100);
	/* numpy.percentile(range(1, 101), [50, 90, 99]) */
	assert_true(fabs(r.p50 - 50.5) < 1e-12);
	assert_true(fabs(r.p90 - 90.1) < 1e-12);
	assert_true(fabs(r.p99 - 99.01) < 1e-12);
	assert_true(fabs(r.mean - 50.5) < 1e-12);
	assert_true(r.max == 100);
	double one = 0.25;
	r = load_dist_of(&one, 1);
	assert_true(r.p50 == 0.25 && r.p99 == 0.25 && r.mean == 0.25 && r.max == 0.25);
	double two[2] = {3, 1};
	r = load_dist_of(two, 2);
	assert_true(fabs(r.p50 - 2) < 1e-12);
	assert_true(fabs(r.p90 - 2.8) < 1e-12);
	r = load_dist_of(NULL, 0);
	assert_true(isnan(r.p50) && isnan(r.mean) && isnan(r.max));
}

/* ---------------------------------------------------------- SSE reader */

struct events {
	char all[4096];
	int n;
};

static void collect(void *ctx, const char *data, size_t len)
{
	struct events *e = ctx;
	assert_int_equal(strlen(data), len);
	size_t k = strlen(e->all);
	snprintf(e->all + k, sizeof(e->all) - k, "[%s]", data);
	e->n++;
}

static const char stream[] = ": a comment\n"
			     "data: {\"a\":1}\n\n"
			     "event: message\r\n"
			     "data:{\"b\":2}\r\n\r\n"
			     "id: 7\n"
			     "data: line one\n"
			     "data: line two\n"
			     "retry: 10\n\n"
			     "\n" /* an empty event: nothing */
			     "data: [DONE]\n\n";
static const char expected[] = "[{\"a\":1}][{\"b\":2}][line one\nline two][[DONE]]";

static void test_sse_splits(void **state)
{
	(void)state;
	size_t n = strlen(stream);
	/* every split into three pieces */
	for (size_t i = 0; i <= n; i++)
		for (size_t j = i; j <= n; j++) {
			struct events e = {"", 0};
			load_sse p;
			load_sse_init(&p);
			load_sse_feed(&p, stream, i, collect, &e);
			load_sse_feed(&p, stream + i, j - i, collect, &e);
			load_sse_feed(&p, stream + j, n - j, collect, &e);
			load_sse_finish(&p, collect, &e);
			assert_false(p.oom);
			if (strcmp(e.all, expected))
				fail_msg("split at %zu,%zu: got %s", i, j, e.all);
			assert_int_equal(e.n, 4);
			load_sse_free(&p);
		}
	/* byte by byte */
	struct events e = {"", 0};
	load_sse p;
	load_sse_init(&p);
	for (size_t i = 0; i < n; i++)
		load_sse_feed(&p, stream + i, 1, collect, &e);
	load_sse_finish(&p, collect, &e);
	assert_string_equal(e.all, expected);
	load_sse_free(&p);
}

static void test_sse_unterminated(void **state)
{
	(void)state;
	/* the stream ends without its last blank line (or newline) */
	struct events e = {"", 0};
	load_sse p;
	load_sse_init(&p);
	load_sse_feed(&p, "data: x\n\ndata: tail", 19, collect, &e);
	assert_int_equal(e.n, 1);
	load_sse_finish(&p, collect, &e);
	assert_string_equal(e.all, "[x][tail]");
	load_sse_free(&p);
	/* a line far longer than the first buffer */
	char *big = malloc(100000);
	memcpy(big, "data: ", 6);
	memset(big + 6, 'z', 100000 - 8);
	big[100000 - 2] = '\n';
	big[100000 - 1] = '\n';
	struct events *e2 = calloc(1, sizeof(*e2));
	load_sse_init(&p);
	int calls = 0;
	for (size_t at = 0; at < 100000; at += 777, calls++)
		load_sse_feed(&p, big + at, at + 777 < 100000 ? 777 : 100000 - at, collect, e2);
	assert_int_equal(e2->n, 1);
	assert_true(calls > 100);
	load_sse_free(&p);
	free(e2);
	free(big);
}

/* ------------------------------------------------------------- prompts */

static int count_words(const char *s)
{
	int n = 0;
	for (const char *p = s; *p; p++)
		if (*p != ' ' && (p == s || p[-1] == ' '))
			n++;
	return n;
}

static void test_prompts_synthetic(void **state)
{
	(void)state;
	load_opts o;
	muh_diag d;
	load_defaults(&o);
	o.prompt_tokens = 40;
	o.prefix_tokens = 10;
	o.seed = 7;
	load_prompts a, b;
	assert_int_equal(load_prompts_build(&o, &a, &d), MUH_OK);
	assert_int_equal(load_prompts_build(&o, &b, &d), MUH_OK);
	char *a0 = strdup(load_prompt_at(&a, 0));
	char *a1 = strdup(load_prompt_at(&a, 1));
	assert_string_equal(a0, load_prompt_at(&b, 0));
	assert_string_equal(a1, load_prompt_at(&b, 1));
	assert_string_not_equal(a0, a1);
	assert_int_equal(count_words(a0), 40);
	assert_int_equal(count_words(a1), 40);
	for (const char *p = a0; *p; p++)
		assert_true((*p >= 'a' && *p <= 'z') || *p == ' ');
	/* the first 10 words are shared, the 11th on is the request's own */
	const char *p0 = a0, *p1 = a1;
	for (int w = 0; w < 10; w++) {
		p0 = strchr(p0, ' ') + 1;
		p1 = strchr(p1, ' ') + 1;
	}
	assert_int_equal(p0 - a0, p1 - a1);
	assert_memory_equal(a0, a1, (size_t)(p0 - a0));
	/* prompts of the two requests differ after the prefix (seeded: fixed) */
	assert_string_not_equal(p0, p1);
	/* another seed, other prompts */
	load_prompts c;
	o.seed = 8;
	assert_int_equal(load_prompts_build(&o, &c, &d), MUH_OK);
	assert_string_not_equal(a0, load_prompt_at(&c, 0));
	/* no prefix, and a prefix that is the whole prompt */
	load_prompts e;
	o.prefix_tokens = 0;
	o.prompt_tokens = 1;
	assert_int_equal(load_prompts_build(&o, &e, &d), MUH_OK);
	assert_int_equal(count_words(load_prompt_at(&e, 3)), 1);
	load_prompts_free(&e);
	o.prefix_tokens = o.prompt_tokens = 5;
	assert_int_equal(load_prompts_build(&o, &e, &d), MUH_OK);
	char *e0 = strdup(load_prompt_at(&e, 0));
	assert_string_equal(e0, load_prompt_at(&e, 9));
	assert_int_equal(count_words(e0), 5);
	free(e0);
	load_prompts_free(&e);
	free(a0);
	free(a1);
	load_prompts_free(&a);
	load_prompts_free(&b);
	load_prompts_free(&c);
}

/* Writes text to a fresh temporary file; returns its path (static). */
static const char *tmpfile_with(const char *text)
{
	static char path[64];
	snprintf(path, sizeof(path), "/tmp/muh_test_load_XXXXXX");
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
	return path;
}

/* Builds the prompts of a dataset with text; returns the status. */
static int dataset(const char *text, load_prompts *p, muh_diag *d)
{
	load_opts o;
	load_defaults(&o);
	const char *path = tmpfile_with(text);
	snprintf(o.dataset, sizeof(o.dataset), "%s", path);
	diag_clear(d);
	int rc = load_prompts_build(&o, p, d);
	unlink(path);
	if (rc)
		assert_string_equal(d->file, path);
	return rc;
}

static void test_dataset(void **state)
{
	(void)state;
	load_prompts p;
	muh_diag d;
	assert_int_equal(dataset("{\"prompt\": \"hello\"}\n\n  {\"prompt\": \"two\", \"x\": 1}\r\n", &p, &d), MUH_OK);
	assert_int_equal(p.n, 2);
	assert_string_equal(load_prompt_at(&p, 0), "hello");
	assert_string_equal(load_prompt_at(&p, 1), "two");
	assert_string_equal(load_prompt_at(&p, 2), "hello");
	load_prompts_free(&p);

	assert_int_equal(dataset("{\"prompt\": \"a\"}\n{\"prompt\": \"b\"}\n{\"prompt\": \"c\"\n", &p, &d), MUH_EINPUT);
	assert_int_equal(d.line, 3);
	assert_non_null(strstr(d.msg, "not valid JSON"));
	assert_string_equal(d.src, "{\"prompt\": \"c\"");

	assert_int_equal(dataset("{\"prompt\": \"a\"}\n{\"text\": \"b\"}\n", &p, &d), MUH_EINPUT);
	assert_int_equal(d.line, 2);
	assert_non_null(strstr(d.msg, "\"prompt\" string"));

	assert_int_equal(dataset("\n\n", &p, &d), MUH_EINPUT);
	assert_non_null(strstr(d.msg, "no prompts"));

	const char *sharegpt = "[\n"
			       " {\"id\": \"a\", \"conversations\": [{\"from\": \"human\", \"value\": \"hi there\"},\n"
			       "                                {\"from\": \"gpt\", \"value\": \"hello\"}]},\n"
			       " {\"id\": \"b\", \"conversations\": [{\"from\": \"gpt\", \"value\": \"only gpt\"}]},\n"
			       " {\"id\": \"c\", \"conversations\": [{\"from\": \"system\", \"value\": \"s\"},\n"
			       "                                {\"from\": \"human\", \"value\": \"second\"}]}\n"
			       "]\n";
	assert_int_equal(dataset(sharegpt, &p, &d), MUH_OK);
	assert_int_equal(p.n, 2);
	assert_string_equal(load_prompt_at(&p, 0), "hi there");
	assert_string_equal(load_prompt_at(&p, 1), "second");
	load_prompts_free(&p);

	assert_int_equal(dataset("[\n {\"conversations\": []},\n {\"conversations\": [}\n]\n", &p, &d), MUH_EINPUT);
	assert_int_equal(d.line, 3);
	assert_non_null(strstr(d.msg, "not valid JSON"));

	assert_int_equal(dataset("[{\"conversations\": [{\"from\": \"gpt\", \"value\": \"x\"}]}]", &p, &d), MUH_EINPUT);
	assert_non_null(strstr(d.msg, "no prompts"));

	load_opts o;
	load_defaults(&o);
	snprintf(o.dataset, sizeof(o.dataset), "/nonexistent/muh.jsonl");
	assert_int_equal(load_prompts_build(&o, &p, &d), MUH_EINPUT);
	assert_string_equal(d.file, "/nonexistent/muh.jsonl");
	assert_non_null(strstr(d.msg, "cannot read the dataset"));
}

/* ------------------------------------------- runs against a fake server */

/* Serves canned SSE answers by path until killed: /ok streams 8 tokens and
 * a usage block; /short 3 tokens (finish_reason stop); /nousage 8 tokens
 * without usage; /e500 an HTTP 500; /bad a data line that is not JSON;
 * /cut closes after 2 tokens with no finish; /slow waits 3 s first. */
static void serve(int ls)
{
	signal(SIGPIPE, SIG_IGN);
	for (;;) {
		int c = accept(ls, NULL, NULL);
		if (c < 0)
			continue;
		char req[8192];
		size_t n = 0;
		for (;;) { /* headers, then Content-Length bytes */
			ssize_t k = read(c, req + n, sizeof(req) - 1 - n);
			if (k <= 0)
				break;
			n += (size_t)k;
			req[n] = '\0';
			char *eoh = strstr(req, "\r\n\r\n");
			char *cl = strcasestr(req, "Content-Length:");
			if (eoh && cl && (size_t)(eoh + 4 - req) + (size_t)atol(cl + 15) <= n)
				break;
		}
		char path[64] = "";
		sscanf(req, "POST %63s", path);
		char out[8192];
		size_t o = 0;
		int tokens = 8, usage = 1, finish = 1;
		if (!strcmp(path, "/e500")) {
			const char *body = "{\"error\": \"boom\"}";
			o = (size_t)snprintf(out, sizeof(out),
					     "HTTP/1.1 500 Internal Server Error\r\nContent-Type: application/json\r\n"
					     "Content-Length: %zu\r\nConnection: close\r\n\r\n%s",
					     strlen(body), body);
			(void)!write(c, out, o);
			close(c);
			continue;
		}
		o = (size_t)snprintf(out, sizeof(out), "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
						       "Connection: close\r\n\r\n");
		(void)!write(c, out, o);
		if (!strcmp(path, "/bad")) {
			(void)!write(c, "data: {not json\n\n", 17);
			close(c);
			continue;
		}
		if (!strcmp(path, "/slow"))
			sleep(3);
		if (!strcmp(path, "/short"))
			tokens = 3;
		if (!strcmp(path, "/nousage"))
			usage = 0;
		if (!strcmp(path, "/cut"))
			tokens = 2, usage = 0, finish = 0;
		for (int t = 0; t < tokens; t++) {
			o = (size_t)snprintf(out, sizeof(out),
					     "data: {\"choices\":[{\"index\":0,\"text\":\" w%d\",\"finish_reason\":%s}]}\n\n", t,
					     finish && t == tokens - 1 ? "\"length\"" : "null");
			/* split each event in two writes to make the reader join */
			(void)!write(c, out, o / 2);
			usleep(1000);
			(void)!write(c, out + o / 2, o - o / 2);
		}
		if (usage) {
			o = (size_t)snprintf(out, sizeof(out),
					     "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":11,\"completion_tokens\":%d}}"
					     "\n\n",
					     tokens);
			(void)!write(c, out, o);
		}
		if (finish)
			(void)!write(c, "data: [DONE]\n\n", 14);
		close(c);
	}
}

static pid_t server_pid;
static int server_port;

static int server_up(void **state)
{
	(void)state;
	int ls = socket(AF_INET, SOCK_STREAM, 0);
	int one = 1;
	setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t al = sizeof(a);
	if (bind(ls, (struct sockaddr *)&a, sizeof(a)) || listen(ls, 64) ||
	    getsockname(ls, (struct sockaddr *)&a, &al))
		return -1;
	server_port = ntohs(a.sin_port);
	fflush(NULL);
	server_pid = fork();
	if (server_pid == 0) {
		serve(ls);
		_exit(0);
	}
	close(ls);
	return server_pid > 0 ? 0 : -1;
}

static int server_down(void **state)
{
	(void)state;
	kill(server_pid, SIGKILL);
	waitpid(server_pid, NULL, 0);
	return 0;
}

static void opts_for(load_opts *o, const char *path)
{
	load_defaults(o);
	snprintf(o->url, sizeof(o->url), "http://127.0.0.1:%d/", server_port);
	snprintf(o->endpoint, sizeof(o->endpoint), "%s", path);
	o->output_tokens = 8;
	o->requests = 6;
	o->concurrency = 3;
	o->request_timeout_s = 10;
}

static void test_run_ok(void **state)
{
	(void)state;
	load_opts o;
	load_result r;
	muh_diag d;
	diag_clear(&d);
	opts_for(&o, "/ok");
	o.warmup = 2;
	assert_int_equal(load_run(&o, &r, &d), MUH_OK);
	assert_int_equal(r.sent, 6);
	assert_int_equal(r.ok, 6);
	assert_int_equal(r.errors, 0);
	assert_int_equal(r.truncated, 0);
	assert_int_equal(r.completion_tokens, 48);
	assert_int_equal(r.prompt_tokens, 66);
	assert_true(r.wall_s > 0.007);
	assert_true(r.ttft.p50 > 0 && r.ttft.p50 <= r.e2e.p50);
	assert_true(r.itl.p50 >= 0.0009); /* each token waits 1 ms mid-event */
	assert_true(r.tpot.p50 > 0 && r.tpot.p50 < r.e2e.p50);
	assert_true(fabs(r.requests_per_s - 6 / r.wall_s) < 1e-9);
	assert_true(fabs(r.output_tokens_per_s - 48 / r.wall_s) < 1e-9);
	assert_true(r.goodput_rps == r.requests_per_s);
	assert_string_equal(r.first_error, "");

	/* an SLO nobody meets: goodput 0, still ok */
	o.slo_ttft_s = 1e-7;
	assert_int_equal(load_run(&o, &r, &d), MUH_OK);
	assert_int_equal(r.ok, 6);
	assert_int_equal(r.good, 0);
	assert_true(r.goodput_rps == 0);

	/* open loop, Poisson, and chat-shaped requests go the same way */
	opts_for(&o, "/ok");
	o.rate = 200;
	assert_int_equal(load_run(&o, &r, &d), MUH_OK);
	assert_int_equal(r.ok, 6);

	/* without usage, completion tokens are the counted chunks */
	opts_for(&o, "/nousage");
	assert_int_equal(load_run(&o, &r, &d), MUH_OK);
	assert_int_equal(r.ok, 6);
	assert_int_equal(r.completion_tokens, 48);
	assert_int_equal(r.prompt_tokens, 0);
}

static void test_run_failures(void **state)
{
	(void)state;
	load_opts o;
	load_result r;
	muh_diag d;
	diag_clear(&d);

	opts_for(&o, "/short");
	assert_int_equal(load_run(&o, &r, &d), MUH_OK);
	assert_int_equal(r.truncated, 6);
	assert_int_equal(r.ok, 0);
	assert_int_equal(r.completion_tokens, 18);
	o.ignore_eos = 0; /* the model may stop early: ok */
	assert_int_equal(load_run(&o, &r, &d), MUH_OK);
	assert_int_equal(r.ok, 6);

	opts_for(&o, "/e500");
	assert_int_equal(load_run(&o, &r, &d), MUH_OK);
	assert_int_equal(r.errors, 6);
	assert_int_equal(r.unreachable, 0);
	assert_non_null(strstr(r.first_error, "HTTP 500: {\"error\": \"boom\"}"));
	assert_true(isnan(r.ttft.p50));

	opts_for(&o, "/bad");
	assert_int_equal(load_run(&o, &r, &d), MUH_OK);
	assert_int_equal(r.errors, 6);
	assert_non_null(strstr(r.first_error, "malformed SSE data: '{not json'"));

	opts_for(&o, "/cut");
	assert_int_equal(load_run(&o, &r, &d), MUH_OK);
	assert_int_equal(r.errors, 6);
	assert_non_null(strstr(r.first_error, "ended before [DONE]"));

	opts_for(&o, "/slow");
	o.requests = 2;
	o.request_timeout_s = 0.3;
	assert_int_equal(load_run(&o, &r, &d), MUH_OK);
	assert_int_equal(r.errors, 2);
	assert_int_equal(r.timed_out, 2);
	assert_non_null(strstr(r.first_error, "timed out after 0.3 s"));

	opts_for(&o, "/slow");
	o.requests = 2;
	o.deadline_s = 0.3;
	assert_int_equal(load_run(&o, &r, &d), MUH_OK);
	assert_int_equal(r.errors, 2);
	assert_int_equal(r.timed_out, 0);
	assert_non_null(strstr(r.first_error, "deadline"));
}

static void test_run_unreachable(void **state)
{
	(void)state;
	/* a port that was just free: nobody listens */
	int s = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t al = sizeof(a);
	assert_int_equal(bind(s, (struct sockaddr *)&a, sizeof(a)), 0);
	getsockname(s, (struct sockaddr *)&a, &al);
	close(s);
	load_opts o;
	load_result r;
	muh_diag d;
	diag_clear(&d);
	load_defaults(&o);
	snprintf(o.url, sizeof(o.url), "http://127.0.0.1:%d", ntohs(a.sin_port));
	o.requests = 4;
	o.concurrency = 2;
	assert_int_equal(load_run(&o, &r, &d), MUH_OK);
	assert_int_equal(r.sent, 4);
	assert_int_equal(r.errors, 4);
	assert_int_equal(r.unreachable, 4);
	assert_non_null(strstr(r.first_error, "request 0: "));
	/* bad options and a bad dataset are input errors */
	o.url[0] = '\0';
	assert_int_equal(load_run(&o, &r, &d), MUH_EINPUT);
	snprintf(o.url, sizeof(o.url), "http://127.0.0.1:1");
	snprintf(o.dataset, sizeof(o.dataset), "/nonexistent");
	assert_int_equal(load_run(&o, &r, &d), MUH_EINPUT);
}

/* ------------------------------------------------------------- output */

static void test_metrics_json(void **state)
{
	(void)state;
	load_result r;
	memset(&r, 0, sizeof(r));
	r.ok = 3;
	r.output_tokens_per_s = 12.5;
	r.ttft = (load_dist){0.1, 0.2, 0.3, 0.4, 0.5};
	r.itl = r.tpot = r.e2e = load_dist_of(NULL, 0);
	const char *names[64];
	double v[64];
	size_t n = load_metrics(&r, names, v, 64);
	assert_int_equal(n, 30); /* max_rate and rate_slo_miss too (NAN unless load_find_rate set them) */
	assert_string_equal(names[0], "output_tokens_per_s");
	assert_true(v[0] == 12.5);
	int seen = 0;
	for (size_t i = 0; i < n; i++) {
		if (!strcmp(names[i], "ttft_p90"))
			seen++, assert_true(v[i] == 0.3);
		if (!strcmp(names[i], "ok"))
			seen++, assert_true(v[i] == 3);
		if (!strcmp(names[i], "e2e_p99"))
			seen++, assert_true(isnan(v[i]));
	}
	assert_int_equal(seen, 3);
	assert_int_equal(load_metrics(&r, names, v, 2), 2);
	char *s = load_result_to_json(&r);
	cJSON *j = cJSON_Parse(s);
	assert_non_null(j);
	assert_true(cJSON_GetObjectItem(j, "ok")->valuedouble == 3);
	assert_true(cJSON_GetObjectItem(cJSON_GetObjectItem(j, "ttft"), "p99")->valuedouble == 0.4);
	assert_true(cJSON_IsNull(cJSON_GetObjectItem(cJSON_GetObjectItem(j, "itl"), "p50")));
	assert_true(cJSON_IsNull(cJSON_GetObjectItem(j, "first_error")));
	cJSON_Delete(j);
	free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_opts_set),
		cmocka_unit_test(test_opts_check),
		cmocka_unit_test(test_dist),
		cmocka_unit_test(test_sse_splits),
		cmocka_unit_test(test_sse_unterminated),
		cmocka_unit_test(test_prompts_synthetic),
		cmocka_unit_test(test_dataset),
		cmocka_unit_test(test_run_ok),
		cmocka_unit_test(test_run_failures),
		cmocka_unit_test(test_run_unreachable),
		cmocka_unit_test(test_metrics_json),
	};
	return cmocka_run_group_tests(tests, server_up, server_down);
}
