/*
 * cmd_load.c — `muh load URL`: drive a running inference server with muh's
 * load generator (src/engine/load.c) and print what it measured: one run, or a
 * sweep from one request at a time to saturation and Poisson rates between.
 *
 * The CLI only parses and prints: every option is handed as text to
 * load_opts_set, the same function that reads a spec's load: block, so the
 * two spell options the same way; the tables and JSON lines are
 * load_text_*'s (load.h).
 */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "muh/load_url.h"
#include "muh/load.h"
#include "muh/strategy.h"
#include "duration.h"

static const char help[] =
	"usage: muh load URL [--concurrency N | --rate R] [--requests N | --duration T]\n"
	"                [--prompt-tokens N] [--output-tokens N] [--prefix-tokens N]\n"
	"                [--dataset FILE] [--sweep] [--json] [options]\n"
	"\n"
	"Sends streamed OpenAI-style requests to a running server (vLLM, llama.cpp's\n"
	"llama-server, SGLang, TGI ...) at URL, e.g. http://127.0.0.1:8000, and\n"
	"measures each one: time to first token (TTFT), the gaps between tokens\n"
	"(ITL), time per output token after the first (TPOT) and end to end (E2E).\n"
	"One thread drives every request (libcurl's multi interface), so the\n"
	"generator stays far below the server's cost; see docs/load.md.\n"
	"\n"
	"how requests arrive:\n"
	"  --concurrency N    closed loop: N requests in flight, a new one sent as\n"
	"                     soon as one finishes (default 1)\n"
	"  --rate R           open loop: R requests per second on average, sent\n"
	"                     whether or not earlier ones finished\n"
	"  --burstiness K     gamma shape of the gaps between arrivals: 1 is Poisson\n"
	"                     (default), below 1 burstier, above 1 more regular\n"
	"  --requests N       measured requests (default 32)\n"
	"  --duration T       send for T instead (2s, 500ms, 1.5m), then wait for\n"
	"                     those in flight; not with --requests N\n"
	"  --warmup N         N requests first, to completion, not measured\n"
	"                     (default 0; 8 before each step of --sweep)\n"
	"\n"
	"what each request asks:\n"
	"  --prompt-tokens N  synthetic prompt of N words from a list of 30 common\n"
	"                     English words, each one token with its space in\n"
	"                     GPT-2/Llama vocabularies (about N tokens; default 64)\n"
	"  --prefix-tokens N  the first N of those words shared by every request\n"
	"                     (prefix caching); default 0\n"
	"  --output-tokens N  max_tokens (default 32)\n"
	"  --dataset FILE     prompts from FILE instead: JSON lines {\"prompt\": ...}\n"
	"                     or a ShareGPT JSON list (the first human turn)\n"
	"  --no-ignore-eos    let the model stop early; by default muh asks for\n"
	"                     exactly --output-tokens (ignore_eos, min_tokens) and\n"
	"                     counts a shorter completion as truncated\n"
	"  --chat             use /v1/chat/completions (messages) instead of\n"
	"                     /v1/completions; --endpoint PATH for any other\n"
	"  --model NAME       the request's \"model\" (default muh; vLLM wants the\n"
	"                     served model name)\n"
	"  --seed N           seed of prompts and arrivals (default 1)\n"
	"\n"
	"limits and goals:\n"
	"  --request-timeout T  a request past T is an error (default 60s)\n"
	"  --chunk-tolerance X  the usage blocks may claim (1 + X) x the chunks\n"
	"                     streamed with text, + 1 a request (default 0.75); more,\n"
	"                     and no request is ok (a model whose tokens decode to no\n"
	"                     text, such as a random one, needs it far higher)\n"
	"  --deadline T         the whole run gives up after T (its warm-up\n"
	"                     counted; with --sweep, each step)\n"
	"  --wait-ready T       first wait up to T for GET /health to answer 200\n"
	"                     (a server just started: vLLM, llama-server, SGLang)\n"
	"  --slo-ttft T, --slo-tpot T\n"
	"                     goodput counts the requests within both (per second)\n"
	"  --find-rate        the highest Poisson arrival rate whose run keeps\n"
	"                     ttft_p99 <= --slo-ttft and tpot_p99 <= --slo-tpot with\n"
	"                     no error (MLPerf LoadGen's server scenario): a closed\n"
	"                     loop at --concurrency first, then the rate doubled,\n"
	"                     halved and bisected (--find-rate-steps N runs at most,\n"
	"                     default 10); exit 1 when no rate met them\n"
	"\n"
	"sweep (--sweep): like GuideLLM's, one row per step:\n"
	"  1. --concurrency 1 (one request at a time: the latency floor)\n"
	"  2. --concurrency MAX (saturation: the throughput ceiling); MAX is\n"
	"     --max-concurrency, default --requests\n"
	"  3. --rates K Poisson rates evenly between the two steps' req/s (default 3)\n"
	"\n"
	"output: a table (times in ms; sent/s, the rate an open loop's requests\n"
	"went out at: its Poisson arrivals hold the rate to about\n"
	"1 / sqrt(requests - 1)), or with --json one JSON object per run or step,\n"
	"one a line (times in seconds).\n"
	"\n"
	"exit: 0 every request ok; 1 some failed or were truncated; 2 usage or a\n"
	"bad dataset; 3 the server could not be reached at all.\n"
	"\n"
	"examples:\n"
	"  muh load http://127.0.0.1:8000 --model Qwen/Qwen2.5-7B --concurrency 16 --requests 200\n"
	"  muh load http://127.0.0.1:8080 --rate 5 --duration 60s --slo-ttft 500ms\n"
	"  muh load http://127.0.0.1:8080 --sweep --requests 64 --json\n";

/* Long options handed to load_opts_set as they are (dashes made underscores). */
static const char *const passthrough[] = {
	"concurrency", "rate", "burstiness", "requests", "duration", "warmup", "prompt-tokens",
	"output-tokens", "prefix-tokens", "seed", "dataset", "request-timeout", "slo-ttft", "slo-tpot",
	"deadline", "endpoint", "model", "chunk-tolerance",
};
#define NPASS (sizeof(passthrough) / sizeof(passthrough[0]))

enum { OPT_JSON = 1, OPT_SWEEP, OPT_MAXC, OPT_RATES, OPT_NOEOS, OPT_EOS, OPT_CHAT, OPT_WAIT, OPT_FIND, OPT_FINDN, OPT_PASS = 100 };

/* Runs one step and prints it, the table's header before the first row
 * (*header: shown). A step no request of which reached the server prints
 * no row, only the error: a row of '-' says nothing. Returns the library
 * status; *ex gets worse. */
static int step(const char *label, const load_opts *o, int json, load_result *r, int *ex, int *header)
{
	muh_diag d;
	diag_clear(&d);
	if (isatty(2)) {
		fprintf(stderr, "muh load: %s ...\r", label);
		fflush(stderr); /* stderr is line-buffered and this line has no newline */
	}
	int rc = load_run(o, r, &d);
	if (isatty(2))
		fprintf(stderr, "\033[K");
	if (rc) {
		if (!diag_is_set(&d) && rc != MUH_ENOMEM)
			diag_errorf(&d, "libcurl cannot start");
		*ex = cli_fail("load", rc, &d);
		return rc;
	}
	int unreachable = r->sent && r->unreachable == r->sent;
	if (json) {
		load_text_json(&cli_out, label, o, r);
	} else if (!unreachable) {
		if (!*header)
			load_text_header(&cli_out);
		*header = 1;
		load_text_row(&cli_out, label, r);
	}
	if (r->server_gone && r->unreachable < r->sent)
		fprintf(stderr, "muh load: %s: the server stopped accepting connections (%d refused in a row): "
			"sending stopped after %zu requests\n", label, LOAD_GONE_AFTER, r->sent);
	if (r->usage_requests && !r->usage_checked && r->ok) {
		char held[256];
		fprintf(stderr, "muh load: %s: %s\n", label, load_text_usage_held(held, sizeof(held), o));
	}
	if (unreachable) {
		fprintf(stderr, "muh load: the server at %s cannot be reached: %s\n", o->url, r->first_error);
		*ex = EXIT_ENV;
	} else if (r->errors || r->truncated) {
		if (r->first_error[0])
			fprintf(stderr, "muh load: %s: %zu of %zu requests failed; first: %s\n", label, r->errors, r->sent,
				r->first_error);
		if (r->truncated)
			fprintf(stderr, "muh load: %s: %zu completions shorter than the %d tokens asked (truncated)\n",
				label, r->truncated, o->output_tokens);
		if (*ex == EXIT_OK)
			*ex = EXIT_FINDING;
	}
	return MUH_OK;
}

/* muh load --find-rate: load_find_rate's steps as a table (or one JSON
 * object), then the answer. Exit 0 with a rate, 1 when none met the SLOs. */
static int find_rate(const load_opts *o, int steps, int json)
{
	load_rate_opts ro;
	load_rate_defaults(&ro);
	ro.slo_ttft_p99_s = o->slo_ttft_s;
	ro.slo_tpot_p99_s = o->slo_tpot_s;
	ro.steps = steps;
	load_rate_result *fr = malloc(sizeof(*fr));
	muh_diag d;
	diag_clear(&d);
	if (!fr)
		return cli_fail("load", MUH_ENOMEM, NULL);
	int rc = load_find_rate(o, &ro, fr, &d);
	if (rc) {
		free(fr);
		return cli_fail("load", rc, &d);
	}
	load_text_rate(&cli_out, o, fr, json);
	int ex = fr->rate > 0 ? EXIT_OK : EXIT_FINDING;
	free(fr);
	return ex;
}

static int run(int argc, char **argv)
{
	cli_ctrl_c_ends("load", "the requests in flight are dropped; what was printed above is what was measured");
	struct option opts[NPASS + 11];
	size_t k = 0;
	for (size_t i = 0; i < NPASS; i++)
		opts[k++] = (struct option){passthrough[i], required_argument, NULL, OPT_PASS + (int)i};
	opts[k++] = (struct option){"json", no_argument, NULL, OPT_JSON};
	opts[k++] = (struct option){"sweep", no_argument, NULL, OPT_SWEEP};
	opts[k++] = (struct option){"max-concurrency", required_argument, NULL, OPT_MAXC};
	opts[k++] = (struct option){"rates", required_argument, NULL, OPT_RATES};
	opts[k++] = (struct option){"no-ignore-eos", no_argument, NULL, OPT_NOEOS};
	opts[k++] = (struct option){"ignore-eos", no_argument, NULL, OPT_EOS};
	opts[k++] = (struct option){"chat", no_argument, NULL, OPT_CHAT};
	opts[k++] = (struct option){"wait-ready", required_argument, NULL, OPT_WAIT};
	opts[k++] = (struct option){"find-rate", no_argument, NULL, OPT_FIND};
	opts[k++] = (struct option){"find-rate-steps", required_argument, NULL, OPT_FINDN};
	opts[k] = (struct option){NULL, 0, NULL, 0};
	load_opts o;
	load_defaults(&o);
	int json = 0, sweep = 0, c, conc_given = 0, rate_given = 0, burst_given = 0, rates_given = 0, find = 0;
	int warm_given = 0;
	uint64_t find_steps = 10;
	uint64_t maxc = 0, nrates = 3;
	double wait_s = 0;
	char why[512];
	optind = 1;
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		if (c >= OPT_PASS && c < OPT_PASS + (int)NPASS) {
			char key[64];
			snprintf(key, sizeof(key), "%s", passthrough[c - OPT_PASS]);
			for (char *p = key; *p; p++)
				if (*p == '-')
					*p = '_';
			if (load_opts_set(&o, key, optarg, why, sizeof(why)))
				return cli_usage_error("load", "--%s: %s", passthrough[c - OPT_PASS], why);
			conc_given |= !strcmp(key, "concurrency");
			warm_given |= !strcmp(key, "warmup");
			rate_given |= !strcmp(key, "rate");
			burst_given |= !strcmp(key, "burstiness");
			continue;
		}
		switch (c) {
		case OPT_JSON:
			json = 1;
			break;
		case OPT_SWEEP:
			sweep = 1;
			break;
		case OPT_MAXC:
			if (cli_parse_u64(optarg, &maxc) || maxc < 1 || maxc > 100000)
				return cli_usage_error("load", "--max-concurrency needs a count from 1 to 100000");
			break;
		case OPT_RATES:
			if (cli_parse_u64(optarg, &nrates) || nrates > 100)
				return cli_usage_error("load", "--rates needs a count from 0 to 100");
			rates_given = 1;
			break;
		case OPT_NOEOS:
			o.ignore_eos = 0;
			break;
		case OPT_EOS:
			o.ignore_eos = 1;
			break;
		case OPT_CHAT:
			snprintf(o.endpoint, sizeof(o.endpoint), "/v1/chat/completions");
			break;
		case OPT_FIND:
			find = 1;
			break;
		case OPT_FINDN:
			if (cli_parse_u64(optarg, &find_steps) || find_steps < 2 || find_steps > LOAD_RATE_MAX_STEPS)
				return cli_usage_error("load", "--find-rate-steps needs 2 to %d", LOAD_RATE_MAX_STEPS);
			break;
		case OPT_WAIT:
			if (duration_parse(optarg, &wait_s) || !(wait_s > 0 && wait_s <= 86400))
				return cli_usage_error("load", "--wait-ready needs a duration (such as 30s, 2m) up to 24h");
			break;
		default:
			return cli_bad_option("load", argv, opts);
		}
	}
	if (optind != argc - 1)
		return cli_usage_error("load", "expected one server URL (e.g. http://127.0.0.1:8000)");
	const char *url = argv[optind];
	int n = snprintf(o.url, sizeof(o.url), "%s%s", strstr(url, "://") ? "" : "http://", url);
	if (n < 0 || (size_t)n >= sizeof(o.url))
		return cli_usage_error("load", "the URL is too long");
	if (o.rate > 0 && conc_given)
		return cli_usage_error("load", "--rate (open loop) and --concurrency (closed loop) exclude each other");
	if (sweep && (conc_given || rate_given))
		return cli_usage_error("load", "--sweep chooses the concurrency and rates itself");
	/* an option that would change nothing is an error, never ignored */
	if (rate_given && !(o.rate > 0))
		return cli_usage_error("load", "--rate needs a rate above 0 (requests per second); the closed loop "
					       "is --concurrency");
	if (burst_given && !(o.rate > 0) && !sweep)
		return cli_usage_error("load", "--burstiness shapes an open loop's arrivals: it needs --rate (or --sweep)");
	if (find && (sweep || rate_given))
		return cli_usage_error("load", "--find-rate chooses the rates itself: no --sweep or --rate with it");
	if ((maxc || rates_given) && !sweep)
		return cli_usage_error("load", "--%s belongs to --sweep", maxc ? "max-concurrency" : "rates");
	muh_diag d;
	diag_clear(&d);
	if (load_opts_check(&o, &d))
		return cli_usage_error("load", "%s", d.msg);
	char bad_url[sizeof(o.url) + 128];
	if (load_url_check(o.url, bad_url, sizeof(bad_url)))
		return cli_usage_error("load", "%s", bad_url);
	/* libcurl missing: the error alone, before any header of the load */
	int rc = load_http_open(&d);
	if (rc)
		return cli_fail("load", rc, &d);
	if (sweep && !warm_given) /* a cold server's first step would set the rates */
		o.warmup = LOAD_SWEEP_WARMUP;
	if (wait_s > 0 && load_wait_ready(o.url, "/health", wait_s, &d))
		return cli_fail("load", MUH_EENV, &d);
	if (!json)
		load_text_opening(&cli_out, &o, sweep); /* the header comes with the first row */
	int ex = EXIT_OK, header = 0;
	load_result r;
	char label[64];
	if (find)
		return find_rate(&o, (int)find_steps, json);
	if (!sweep) {
		if (o.rate > 0)
			snprintf(label, sizeof(label), "rate %g/s", o.rate);
		else
			snprintf(label, sizeof(label), "conc %d", o.concurrency);
		if (step(label, &o, json, &r, &ex, &header) == MUH_OK && !json && ex != EXIT_ENV) {
			load_text_wall(&cli_out, &r);
			if (o.rate > 0)
				load_text_rate_note(&cli_out, &o, r.sent);
		}
		return ex;
	}
	load_opts s = o;
	s.rate = 0;
	s.concurrency = 1;
	load_result lo, hi;
	if (step("conc 1", &s, json, &lo, &ex, &header) || ex == EXIT_ENV)
		return ex;
	s.concurrency = maxc ? (int)maxc : load_requests(&o) > 0 ? load_requests(&o) : 64;
	snprintf(label, sizeof(label), "conc %d", s.concurrency);
	if (step(label, &s, json, &hi, &ex, &header) || ex == EXIT_ENV)
		return ex;
	double r0 = lo.requests_per_s, r1 = hi.requests_per_s;
	if (!(r1 > r0)) {
		fprintf(stderr, "muh load: saturation gave no more req/s than one at a time (%.3g vs %.3g): no rates "
				"between to sweep\n",
			r1, r0);
		return ex;
	}
	for (uint64_t i = 1; i <= nrates; i++) {
		s.concurrency = 1;
		s.rate = r0 + (r1 - r0) * (double)i / (double)(nrates + 1);
		snprintf(label, sizeof(label), "rate %.3g/s", s.rate);
		if (step(label, &s, json, &r, &ex, &header) || ex == EXIT_ENV)
			return ex;
	}
	if (!json && nrates)
		load_text_rate_note(&cli_out, &s, r.sent);
	return ex;
}

MUH_COMMAND(load, 80, "drive a running inference server: TTFT, ITL, TPOT, tokens/s, sweeps");
