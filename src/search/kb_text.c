/*
 * kb_text.c — muh kb cccl's output (kb.h's kb_text_*), moved here from the
 * muh program: CUB's policies as a table or JSON, and the seeds a spec
 * takes from them as a `seeds:` block to paste or JSON. Only rendering;
 * reading and mapping are kb_cccl.c's.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "muh/kb.h"
#include "muh/value.h"

static void num(char *b, size_t n, int v)
{
	if (v < 0)
		snprintf(b, n, "-");
	else
		snprintf(b, n, "%d", v);
}

static const char *word(const char *w)
{
	return w[0] ? w : "-";
}

/* Whether p is listed: of algorithm alg (NULL: any), and dispatched on cc
 * (0: any). */
static int listed(const kb_cccl *kb, const kb_policy *p, const char *alg, int cc)
{
	return (!alg || !strcmp(alg, p->algorithm)) && (!cc || kb_cccl_applies(kb, p, cc));
}

/* The block algorithm of p's column: its load's, else its store's. */
static const char *block_of(const kb_policy *p)
{
	return word(p->block_algorithm[0] ? p->block_algorithm : p->store_algorithm);
}

static cJSON *policy_json(const kb_policy *p)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "algorithm", p->algorithm);
	cJSON_AddNumberToObject(o, "cc", p->cc);
	cJSON_AddStringToObject(o, "policy", p->policy);
	cJSON_AddStringToObject(o, "variant", p->variant);
	cJSON_AddStringToObject(o, "agent", p->agent);
#define NUMF(k, v)                                                                                 \
	if ((v) >= 0)                                                                              \
		cJSON_AddNumberToObject(o, k, (v));                                                \
	else                                                                                       \
		cJSON_AddNullToObject(o, k)
	NUMF("threads", p->threads);
	NUMF("items_per_thread", p->items_per_thread);
	NUMF("vector_load_length", p->vector_load_length);
#undef NUMF
	cJSON_AddStringToObject(o, "load_algorithm", p->load_algorithm);
	cJSON_AddStringToObject(o, "load_modifier", p->load_modifier);
	cJSON_AddStringToObject(o, "store_algorithm", p->store_algorithm);
	cJSON_AddStringToObject(o, "block_algorithm", p->block_algorithm);
	cJSON_AddStringToObject(o, "file", p->file);
	cJSON_AddNumberToObject(o, "line", p->line);
	return o;
}

size_t kb_text_list(const textout *out, const kb_cccl *kb, const char *alg, int cc, int json)
{
	cJSON *o = NULL, *arr = NULL;
	if (json) {
		o = cJSON_CreateObject();
		cJSON_AddStringToObject(o, "dir", kb->dir);
		cJSON_AddNumberToObject(o, "files", kb->nfiles);
		if (cc)
			cJSON_AddNumberToObject(o, "cc", cc);
		arr = cJSON_AddArrayToObject(o, "policies");
	}
	/* the text columns as wide as their widest shown entry (the header's
	 * words are the JSON keys) */
	enum { ALG, POLICY, AGENT, LOAD, BLOCK, NW };
	int w[NW] = {9, 6, 5, 14, 15}; /* at least the header's */
	for (size_t i = 0; !json && i < kb->n; i++) {
		const kb_policy *p = &kb->v[i];
		if (!listed(kb, p, alg, cc))
			continue;
		const char *col[NW] = {p->algorithm, p->policy, word(p->agent), word(p->load_algorithm),
		                       block_of(p)};
		for (int k = 0; k < NW; k++)
			if ((int)strlen(col[k]) > w[k])
				w[k] = (int)strlen(col[k]);
	}
	if (!json)
		textout_printf(out, TEXTOUT_RESULT,
		               "%-*s %-6s %-*s %-*s %7s %5s %4s  %-*s %-13s %-*s specialization\n",
		               w[ALG], "algorithm", "arch", w[POLICY], "policy", w[AGENT], "agent",
		               "threads", "items", "vec", w[LOAD], "load_algorithm", "load_modifier",
		               w[BLOCK], "block_algorithm");
	size_t shown = 0;
	for (size_t i = 0; i < kb->n; i++) {
		const kb_policy *p = &kb->v[i];
		if (!listed(kb, p, alg, cc))
			continue;
		shown++;
		if (json) {
			cJSON_AddItemToArray(arr, policy_json(p));
			continue;
		}
		char arch[16], t[16], it[16], v[16];
		if (p->cc)
			snprintf(arch, sizeof(arch), "sm_%d", p->cc);
		else
			snprintf(arch, sizeof(arch), "-");
		num(t, sizeof(t), p->threads);
		num(it, sizeof(it), p->items_per_thread);
		num(v, sizeof(v), p->vector_load_length);
		char line[1024];
		snprintf(line, sizeof(line), "%-*s %-6s %-*s %-*s %7s %5s %4s  %-*s %-13s %-*s %s", w[ALG],
		         p->algorithm, arch, w[POLICY], p->policy, w[AGENT], word(p->agent), t, it, v, w[LOAD],
		         word(p->load_algorithm), word(p->load_modifier), w[BLOCK], block_of(p), p->variant);
		size_t e = strlen(line); /* no trailing blanks where there is no specialization */
		while (e && line[e - 1] == ' ')
			line[--e] = 0;
		textout_printf(out, TEXTOUT_RESULT, "%s\n", line);
	}
	if (json)
		textout_json(out, o, 1);
	else {
		textout_printf(out, TEXTOUT_RESULT, "%zu polic%s from %d header%s in %s\n", shown,
		               shown == 1 ? "y" : "ies", kb->nfiles, kb->nfiles == 1 ? "" : "s",
		               kb->dir[0] ? kb->dir : "(one file)");
		if (cc && shown)
			textout_printf(out, TEXTOUT_RESULT,
			               "(the policies CUB dispatches on sm_%d: a policy of an "
			               "older arch applies where no newer "
			               "one is written, CUB's ChainedPolicy rule)\n",
			               cc);
	}
	return shown;
}

size_t kb_text_seeds(const textout *out, const kb_cccl *kb, const muh_spec *s,
                     const char *spec_path, int cc, const kb_seed *v, size_t n, int json)
{
	size_t good = 0;
	cJSON *o = NULL, *arr = NULL;
	if (json) {
		o = cJSON_CreateObject();
		cJSON_AddStringToObject(o, "spec", s->path ? s->path : spec_path);
		cJSON_AddStringToObject(o, "algorithm", spec_kv(s, "kb.cccl")->value);
		cJSON_AddNumberToObject(o, "cc", cc);
		arr = cJSON_AddArrayToObject(o, "seeds");
	} else {
		textout_printf(out, TEXTOUT_RESULT,
		               "# seeds from CUB's %s policies (%s), target sm_%d first\nseeds:\n",
		               spec_kv(s, "kb.cccl")->value, kb->dir[0] ? kb->dir : "one header",
		               cc);
	}
	for (size_t i = 0; i < n; i++) {
		const kb_seed *sd = &v[i];
		const kb_policy *p = sd->from;
		char from[800];
		snprintf(from, sizeof(from), "%s sm_%d %s%s%s%s%s", p->file, p->cc, p->policy,
		         p->agent[0] ? "::" : "", p->agent, p->variant[0] ? " <" : "",
		         p->variant[0] ? p->variant : "");
		if (p->variant[0])
			snprintf(from + strlen(from), sizeof(from) - strlen(from), ">");
		good += sd->ok;
		if (json) {
			cJSON *e = cJSON_CreateObject();
			cJSON_AddStringToObject(e, "from", from);
			cJSON_AddBoolToObject(e, "applies", sd->applies);
			cJSON_AddBoolToObject(e, "ok", sd->ok);
			if (sd->why[0])
				cJSON_AddStringToObject(e, sd->ok ? "note" : "why", sd->why);
			cJSON *cfg = cJSON_AddObjectToObject(e, "config");
			for (size_t k = 0; sd->ok && k < s->nparams; k++) {
				if (sd->idx[k] == SIZE_MAX)
					continue;
				muh_value x = s->params[k].values[sd->idx[k]];
				if (x.t == MUH_STR)
					cJSON_AddStringToObject(cfg, s->params[k].name, x.u.s);
				else
					cJSON_AddNumberToObject(cfg, s->params[k].name, value_num(x));
			}
			cJSON_AddItemToArray(arr, e);
			continue;
		}
		if (!sd->ok) {
			textout_printf(out, TEXTOUT_RESULT, "  # not a seed: %s (%s)\n", sd->why,
			               from);
			continue;
		}
		textout_printf(out, TEXTOUT_RESULT, "  - {");
		int first = 1;
		for (size_t k = 0; k < s->nparams; k++) {
			if (sd->idx[k] == SIZE_MAX)
				continue;
			char b[128];
			value_fmt(b, sizeof(b), s->params[k].values[sd->idx[k]]);
			textout_printf(out, TEXTOUT_RESULT, "%s%s: %s", first ? "" : ", ",
			               s->params[k].name, b);
			first = 0;
		}
		textout_printf(out, TEXTOUT_RESULT, "}   # %s%s%s%s\n", from,
		               sd->applies ? " (applies)" : "", sd->why[0] ? "; " : "", sd->why);
	}
	if (json)
		textout_json(out, o, 1);
	return good;
}
