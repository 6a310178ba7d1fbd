/*
 * space_text.c — muh space's output (space.h's space_text*), moved here
 * from the muh program: a space's sizes and what each constraint rejected,
 * the pruning in check order, every valid key, or one JSON object. Only
 * rendering; the counting is space.c's.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "muh/muh.h"
#include "muh/space.h"
#include "muh/value.h"

void space_text_json(const textout *out, const muh_spec *s, const muh_hw *hw, const muh_space *sp,
                     size_t inst)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "spec", s->path);
	cJSON_AddStringToObject(o, "format", spec_format_name(s->format));
	if (hw) /* null: the spec names no hardware profile */
		cJSON_AddStringToObject(o, "profile", hw->name);
	else
		cJSON_AddNullToObject(o, "profile");
	cJSON_AddNumberToObject(o, "problem_instance", (double)inst);
	cJSON_AddNumberToObject(o, "params", (double)space_nparams(sp));
	cJSON_AddNumberToObject(o, "groups", (double)space_ngroups(sp));
	cJSON_AddNumberToObject(o, "cartesian", space_cartesian(sp));
	cJSON_AddNumberToObject(o, "valid", (double)space_valid(sp));
	cJSON_AddNumberToObject(o, "seconds", space_seconds(sp));
	cJSON *arr = cJSON_AddArrayToObject(o, "constraints");
	for (size_t c = 0; c < space_nconstraints(sp); c++) {
		cJSON *e = cJSON_CreateObject();
		cJSON_AddStringToObject(e, "expr", s->constraints[c].src);
		cJSON_AddNumberToObject(e, "rejected", space_rejected(sp, c));
		cJSON_AddItemToArray(arr, e);
	}
	cJSON *ord = cJSON_AddArrayToObject(o, "check_order");
	for (size_t k = 0; k < space_nconstraints(sp); k++)
		cJSON_AddItemToArray(ord, cJSON_CreateNumber((double)space_check_order(sp, k)));
	textout_json(out, o, 1);
}

/* Shortens an expression for a table cell. */
static const char *cell(char *buf, size_t n, const char *src, size_t width)
{
	size_t len = strlen(src);
	if (len <= width)
		snprintf(buf, n, "%s", src);
	else
		snprintf(buf, n, "%.*s...", (int)(width - 3), src);
	return buf;
}

void space_text(const textout *o, const muh_spec *s, const muh_hw *hw, const muh_space *sp,
                size_t inst, int prune_only)
{
	char a[64], b[64], t[64], e[128];
	double cart = space_cartesian(sp);
	double valid = (double)space_valid(sp);
	text_time(t, sizeof(t), space_seconds(sp));
	size_t w = 16;
	for (size_t c = 0; c < space_nconstraints(sp); c++)
		if (strlen(s->constraints[c].src) > w)
			w = strlen(s->constraints[c].src);
	if (w > 56)
		w = 56;
	if (w < strlen("constraint (check order)")) /* the header is the widest cell */
		w = strlen("constraint (check order)");
	if (!prune_only) {
		textout_printf(o, TEXTOUT_RESULT, "spec        %s (%s)\n", s->path,
		               spec_format_name(s->format));
		if (hw)
			textout_printf(o, TEXTOUT_RESULT, "profile     %s (%s)\n", hw->name,
			               hw->source);
		if (spec_ninstances(s) > 1) {
			char words[64];
			textout_printf(o, TEXTOUT_RESULT, "problem     %s:",
			               spec_instance_words(s, inst, words, sizeof(words)));
			for (size_t k = 0; k < s->nproblem; k++) {
				char v[64];
				value_fmt(v, sizeof(v), spec_problem_value(s, k, inst));
				textout_printf(o, TEXTOUT_RESULT, " %s=%s", s->problem[k].name, v);
			}
			textout_printf(o, TEXTOUT_RESULT, "\n");
		}
		textout_printf(o, TEXTOUT_RESULT, "params      %zu in %zu independent group(s)\n",
		               space_nparams(sp), space_ngroups(sp));
		textout_printf(o, TEXTOUT_RESULT, "cartesian   %s\n",
		               text_count(a, sizeof(a), cart));
		textout_printf(o, TEXTOUT_RESULT, "valid       %s (%.4g%%)\n",
		               text_count(b, sizeof(b), valid),
		               cart > 0 ? 100.0 * valid / cart : 0.0);
		textout_printf(o, TEXTOUT_RESULT, "time        %s\n", t);
		if (space_nconstraints(sp) == 0) {
			textout_printf(o, TEXTOUT_RESULT,
			               "\nno constraints: every combination is valid\n");
			return;
		}
		textout_printf(o, TEXTOUT_RESULT, "\n%-*s  %20s  %7s\n", (int)w,
		               "constraint (spec order)", "rejected", "share");
		for (size_t c = 0; c < space_nconstraints(sp); c++) {
			double r = space_rejected(sp, c);
			textout_printf(o, TEXTOUT_RESULT, "%-*s  %20s  %6.2f%%\n", (int)w,
			               cell(e, sizeof(e), s->constraints[c].src, w),
			               text_count(a, sizeof(a), r),
			               cart > 0 ? 100.0 * r / cart : 0.0);
		}
		textout_printf(
		    o, TEXTOUT_RESULT,
		    "\n(each rejected configuration is charged to the first constraint that "
		    "fails in check order, the order --prune-only lists; see `muh help space`)\n");
		return;
	}
	textout_printf(o, TEXTOUT_RESULT, "%-*s  %20s  %20s\n", (int)w, "constraint (check order)",
	               "before", "after");
	double left = cart;
	for (size_t k = 0; k < space_nconstraints(sp); k++) {
		size_t c = space_check_order(sp, k);
		double after = left - space_rejected(sp, c);
		textout_printf(o, TEXTOUT_RESULT, "%-*s  %20s  %20s\n", (int)w,
		               cell(e, sizeof(e), s->constraints[c].src, w),
		               text_count(a, sizeof(a), left), text_count(b, sizeof(b), after));
		left = after;
	}
	textout_printf(o, TEXTOUT_RESULT, "%-*s  %20s  %20s   (%s)\n", (int)w, "valid", "",
	               text_count(a, sizeof(a), valid), t);
}

int space_text_list(const textout *o, const muh_space *sp)
{
	uint32_t *cfg = malloc((space_nparams(sp) + 1) * sizeof(uint32_t));
	char key[4096];
	if (!cfg)
		return MUH_ENOMEM;
	for (uint64_t i = 0; i < space_valid(sp); i++) {
		if (space_config_at(sp, i, cfg)) {
			free(cfg);
			return MUH_EENV;
		}
		space_key(sp, cfg, key, sizeof(key));
		textout_printf(o, TEXTOUT_RESULT, "%s\n", key);
	}
	free(cfg);
	return MUH_OK;
}
