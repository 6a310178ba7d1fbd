/*
 * scan_rank.c — the priority of each knob of a surface, for the person
 * reading the table: which knob to tune first.
 *
 *   P0   reaches a kernel launch or the scheduler: a live launch binding
 *        (constexpr) with a constant value, autotune list, config-dict key, JSON config file or
 *        capability declaration; a live constant/override that feeds a
 *        launch binding; a live engine argument or environment variable
 *        about batching, memory, caching, parallelism or scheduling (by the
 *        words of its name, or a reader in a scheduler module); and every
 *        unsafe knob (a value that crashes the engine is the first thing to
 *        know);
 *   P1   other live knobs;
 *   P2   unknown or platform (another platform's knobs matter there only);
 *   low  dead knobs, and sentinels: a constant or override named like an id,
 *        index, pad, slot, epsilon or version (PAD_SLOT_ID = -1), or whose
 *        value is -1 or None.
 * The words are heuristics; docs/scan.md lists them. Must never: change the
 * surface.
 */
#include <stdlib.h>
#include <string.h>

#include "muh/scan.h"

static int has_word(const char *name, const char *const *words, size_t n)
{
	char tok[128];
	const char *p = name;
	while (*p) {
		size_t l = 0;
		while (*p == '_' || *p == '-' || *p == '.')
			p++;
		while (*p && *p != '_' && *p != '-' && *p != '.' && l + 1 < sizeof(tok)) {
			char c = *p++;
			tok[l++] = (char)(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
		}
		tok[l] = '\0';
		for (size_t i = 0; l && i < n; i++)
			if (!strcmp(tok, words[i]))
				return 1;
	}
	return 0;
}

static int is_sentinel(const muh_knob *k)
{
	static const char *const words[] = {"id",  "ids", "idx",     "index", "pad",     "slot",
	                                    "eps", "epsilon", "version", "sentinel", "magic"};
	if (strcmp(k->kind, "constant") && strcmp(k->kind, "override"))
		return 0;
	if (k->eval && (!strcmp(k->eval, "-1") || !strcmp(k->eval, "None")))
		return 1;
	return has_word(k->name, words, sizeof(words) / sizeof(*words));
}

static int reaches_scheduler(const muh_knob *k)
{
	static const char *const words[] = {
	    "seqs",     "seq",     "batch",       "batched",  "tokens",     "block",     "blocks",
	    "memory",   "prefill", "chunked",     "scheduler", "scheduling", "parallel", "graph",
	    "graphs",   "eager",   "cache",       "caching",  "swap",       "preemption", "speculative",
	    "capture",  "session", "utilization", "len",      "tp",         "pp",        "dp",
	    "ep",       "kv"};
	if (has_word(k->name, words, sizeof(words) / sizeof(*words)))
		return 1;
	for (int i = 0; i < k->nevidence; i++)
		if (strstr(k->evidence[i].file, "schedul"))
			return 1;
	return 0;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

int *scan_rank(const muh_surface *s)
{
	size_t n = scan_nknobs(s);
	int *pr = malloc(sizeof(int) * (n ? n : 1));
	const char **fed = malloc(sizeof(char *) * (n ? n : 1));
	if (!pr || !fed) {
		free(pr);
		free(fed);
		return NULL;
	}
	size_t nf = 0;
	for (size_t i = 0; i < n; i++) {
		const muh_knob *k = scan_knob(s, i);
		if (k->feeds && k->verdict == SCAN_LIVE)
			fed[nf++] = k->feeds;
	}
	qsort(fed, nf, sizeof(char *), cmp_str);
	for (size_t i = 0; i < n; i++) {
		const muh_knob *k = scan_knob(s, i);
		const char *id = k->id;
		int p;
		if (k->verdict == SCAN_BLOCKER) /* the server would not start */
			p = SCAN_P0;
		else if (k->verdict == SCAN_DEAD || (k->verdict != SCAN_UNSAFE && is_sentinel(k)))
			p = SCAN_PLOW;
		else if (k->verdict == SCAN_UNSAFE)
			p = SCAN_P0;
		else if (k->verdict != SCAN_LIVE)
			p = SCAN_P2;
		else if ((!strcmp(k->kind, "constexpr") && (k->eval || k->nalts)) ||
		         !strcmp(k->kind, "autotune") ||
		         !strcmp(k->kind, "config_dict") || !strcmp(k->kind, "json_config") ||
		         !strcmp(k->kind, "capability"))
			p = SCAN_P0;
		else if ((!strcmp(k->kind, "constant") || !strcmp(k->kind, "override")) && nf &&
		         bsearch(&id, fed, nf, sizeof(char *), cmp_str))
			p = SCAN_P0;
		else if ((!strcmp(k->kind, "engine_arg") || !strcmp(k->kind, "env")) &&
		         reaches_scheduler(k))
			p = SCAN_P0;
		else
			p = SCAN_P1;
		pr[i] = p;
	}
	free(fed);
	return pr;
}

const char *scan_priority_name(int p)
{
	static const char *const names[] = {"P0", "P1", "P2", "low"};
	return p >= 0 && p <= SCAN_PLOW ? names[p] : "?";
}
