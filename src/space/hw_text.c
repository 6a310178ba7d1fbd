/*
 * hw_text.c — muh hw's output (hw.h's hw_text_*), moved here from the muh
 * program: a profile's fields with where each came from, as a table or
 * JSON, and the list of built-in profiles. Only rendering; measuring and
 * reading profiles are hw.c's.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "muh/hw.h"

static void print_value(char *buf, size_t n, double v)
{
	if (v == (double)(long long)v)
		text_count(buf, n, v);
	else
		snprintf(buf, n, "%.4g", v);
}

void hw_text_profile(const textout *out, const muh_hw *hw, int json)
{
	if (json) {
		cJSON *o = cJSON_CreateObject();
		cJSON_AddStringToObject(o, "name", hw->name);
		cJSON_AddStringToObject(o, "source", hw->source);
		if (hw->device[0])
			cJSON_AddStringToObject(o, "device", hw->device);
		cJSON *arr = cJSON_AddArrayToObject(o, "fields");
		cJSON *unk = cJSON_AddArrayToObject(o, "unknown");
		for (int i = 0; hw_keys[i]; i++) {
			const muh_hw_field *f = hw_field(hw, hw_keys[i]);
			if (!f) {
				const muh_hw_field *u = hw_unknown(hw, hw_keys[i]);
				cJSON *e = cJSON_CreateObject();
				cJSON_AddStringToObject(e, "key", hw_keys[i]);
				if (u && u->note[0])
					cJSON_AddStringToObject(e, "note", u->note);
				cJSON_AddItemToArray(unk, e);
				continue;
			}
			cJSON *e = cJSON_CreateObject();
			cJSON_AddStringToObject(e, "key", f->key);
			cJSON_AddNumberToObject(e, "value", f->value);
			const char *unit = hw_key_unit(f->key); /* the table's: "" a count */
			if (unit && unit[0])
				cJSON_AddStringToObject(e, "unit", unit);
			cJSON_AddStringToObject(e, "origin",
			                        f->origin == HW_MEASURED ? "measured" : "declared");
			if (f->source[0])
				cJSON_AddStringToObject(e, "source", f->source);
			if (f->date[0])
				cJSON_AddStringToObject(e, "date", f->date);
			if (f->note[0])
				cJSON_AddStringToObject(e, "note", f->note);
			cJSON_AddItemToArray(arr, e);
		}
		textout_json(out, o, 1);
		return;
	}
	textout_printf(out, TEXTOUT_RESULT, "profile  %s\nsource   %s\n", hw->name, hw->source);
	if (hw->device[0])
		textout_printf(out, TEXTOUT_RESULT, "device   %s\n", hw->device);
	textout_printf(out, TEXTOUT_RESULT, "\n%-22s %16s  %-9s %s\n", "key", "value", "origin",
	               "meaning");
	for (int i = 0; hw_keys[i]; i++) {
		const muh_hw_field *f = hw_field(hw, hw_keys[i]);
		const muh_hw_field *u = f ? NULL : hw_unknown(hw, hw_keys[i]);
		if (!f && !u)
			continue; /* unknown, and the profile says nothing of it: listed below */
		char v[48];
		if (f)
			print_value(v, sizeof(v), f->value);
		else
			snprintf(v, sizeof(v), "-");
		/* the meaning, then the unit when the key has one: "shared
		 * memory per block with opt-in, bytes" */
		const char *unit = hw_key_unit(hw_keys[i]);
		textout_printf(out, TEXTOUT_RESULT, "%-22s %16s  %-9s %s%s%s\n", hw_keys[i], v,
		               !f                         ? "unknown"
		               : f->origin == HW_MEASURED ? "measured"
		                                          : "declared",
		               hw_key_doc(hw_keys[i]), unit[0] ? ", " : "", unit);
		if (f && f->source[0])
			textout_printf(out, TEXTOUT_RESULT, "%-22s %16s  %-9s source: %s%s%s%s\n",
			               "", "", "", f->source, f->date[0] ? " (" : "", f->date,
			               f->date[0] ? ")" : "");
		const char *note = f ? f->note : u->note;
		if (note[0])
			textout_printf(out, TEXTOUT_RESULT, "%-22s %16s  %-9s note: %s\n", "", "",
			               "", note);
	}
	int first = 1;
	for (int i = 0; hw_keys[i]; i++) {
		if (hw_field(hw, hw_keys[i]) || hw_unknown(hw, hw_keys[i]))
			continue;
		textout_printf(out, TEXTOUT_RESULT, "%s%s", first ? "\nunknown  " : ", ",
		               hw_keys[i]);
		first = 0;
	}
	if (!first)
		textout_printf(out, TEXTOUT_RESULT, "\n");
}

void hw_text_list(const textout *out, int json)
{
	muh_hw hw;
	if (json) {
		cJSON *arr = cJSON_CreateArray();
		for (int i = 0; hw_builtin_names[i]; i++)
			cJSON_AddItemToArray(arr, cJSON_CreateString(hw_builtin_names[i]));
		char *s = cJSON_Print(arr);
		textout_printf(out, TEXTOUT_RESULT, "%s\n", s ? s : "[]");
		free(s);
		cJSON_Delete(arr);
		return;
	}
	textout_printf(out, TEXTOUT_RESULT, "%-10s %s\n", "profile", "description");
	for (int i = 0; hw_builtin_names[i]; i++) {
		hw_builtin(hw_builtin_names[i], &hw, NULL);
		textout_printf(out, TEXTOUT_RESULT, "%-10s %s\n", hw_builtin_names[i],
		               hw.source + strlen("built-in: "));
	}
}
