/*
 * baseline.c — the entry of an engine's shipped config file that the
 * engine picks for a problem (see baseline.h).
 *
 * Owns: finding the file (--baseline, or the spec's target.baseline
 * template), reading vLLM's batch-size-keyed JSON, the engine's rule for
 * the entry (exact batch size, else the nearest by absolute difference,
 * the first on a tie), and turning the entry into a configuration of the
 * space, with file:line:col for whatever in it is not one. cJSON keeps no
 * positions, so a member's place is found by a small scan of the text
 * (member names at depth 1 and 2, outside strings).
 * Must never: guess a value that is not one of the param's, drop a member
 * it does not know, print, or exit.
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cjson/cJSON.h>

#include "json_int.h"
#include "muh/baseline.h"
#include "muh/fileio.h"
#include "muh/muh.h"
#include "muh/transfer_seeds.h"

/* The byte offset in text of member `name` at depth 1 (inner NULL) or of
 * member inner of the depth-1 object `name`; 0 when not found. */
static size_t member_at(const char *text, const char *name, const char *inner)
{
	int depth = 0, in_outer = 0;
	for (size_t i = 0; text[i]; i++) {
		char c = text[i];
		if (c == '{' || c == '[') {
			depth++;
			continue;
		}
		if (c == '}' || c == ']') {
			if (depth == 2)
				in_outer = 0;
			depth--;
			continue;
		}
		if (c != '"')
			continue;
		size_t s = i + 1, e = s;
		while (text[e] && text[e] != '"')
			e += text[e] == '\\' && text[e + 1] ? 2 : 1;
		if (!text[e])
			return 0;
		size_t j = e + 1;
		while (isspace((unsigned char)text[j]))
			j++;
		int is_member = text[j] == ':';
		size_t len = e - s;
		if (is_member && depth == 1 && strlen(name) == len && !strncmp(text + s, name, len)) {
			if (!inner)
				return i;
			in_outer = 1;
		} else if (is_member && depth == 2 && in_outer && inner && strlen(inner) == len &&
			   !strncmp(text + s, inner, len)) {
			return i;
		}
		i = e;
	}
	return 0;
}

/* d at path, at the member's place in text (line 1 col 1 when not found). */
static void at_member(muh_diag *d, const char *path, const char *text, const char *name, const char *inner)
{
	size_t pos = member_at(text, name, inner);
	int line = 1, col = 1;
	if (pos)
		diag_linecol(text, pos, &line, &col);
	diag_at(d, path, line, col, text);
}

int baseline_path(const muh_spec *sp, size_t instance, const muh_hw *hw, const char *explicit_path, char *out,
		  size_t n, int *found, muh_diag *d)
{
	*found = 0;
	struct stat st;
	if (explicit_path) {
		if (stat(explicit_path, &st) || !S_ISREG(st.st_mode)) {
			diag_at(d, explicit_path, 0, 0, NULL);
			return diag_errorf(d, "the baseline file cannot be read: %s",
					   errno ? strerror(errno) : "not a regular file");
		}
		snprintf(out, n, "%s", explicit_path);
		*found = 1;
		return MUH_OK;
	}
	const muh_kv *kv = spec_kv(sp, "target.baseline");
	if (!kv || !kv->value[0])
		return MUH_OK;
	char filled[4096];
	size_t k = 0;
	for (const char *p = kv->value; *p && k + 1 < sizeof(filled);) {
		if (*p != '{') {
			filled[k++] = *p++;
			continue;
		}
		const char *e = strchr(p, '}');
		char name[128], val[512] = "";
		if (!e || (size_t)(e - p - 1) >= sizeof(name)) {
			spec_diag_at(sp, d, kv->line, kv->col);
			return diag_errorf(d, "target.baseline: a '{' without its '}' (expected {device} or {NAME} "
					      "of a problem symbol)");
		}
		memcpy(name, p + 1, (size_t)(e - p - 1));
		name[e - p - 1] = '\0';
		if (!strcmp(name, "device")) {
			if (!hw || !hw->device[0]) {
				spec_diag_at(sp, d, kv->line, kv->col);
				return diag_errorf(d, "target.baseline names {device}, and the hardware profile%s%s "
						      "names no device: give --hw or --baseline FILE",
						   hw ? " " : "", hw ? hw->name : "");
			}
			snprintf(val, sizeof(val), "%s", hw->device);
			for (char *q = val; *q; q++)
				if (*q == ' ')
					*q = '_';
		} else {
			size_t s;
			for (s = 0; s < sp->nproblem && strcmp(sp->problem[s].name, name); s++)
				;
			if (s == sp->nproblem) {
				spec_diag_at(sp, d, kv->line, kv->col);
				return diag_errorf(d, "target.baseline: {%s} is neither {device} nor a problem symbol", name);
			}
			value_fmt(val, sizeof(val), spec_problem_value(sp, s, instance));
		}
		size_t vl = strlen(val);
		if (k + vl + 1 >= sizeof(filled))
			break;
		memcpy(filled + k, val, vl);
		k += vl;
		p = e + 1;
	}
	filled[k] = '\0';
	char dir[4096];
	snprintf(dir, sizeof(dir), "%s", sp->path ? sp->path : ".");
	char *sl = strrchr(dir, '/');
	if (sl)
		*sl = '\0';
	else
		snprintf(dir, sizeof(dir), ".");
	if (filled[0] == '/')
		snprintf(out, n, "%s", filled);
	else
		snprintf(out, n, "%s/%s", dir, filled);
	*found = !stat(out, &st) && S_ISREG(st.st_mode);
	return MUH_OK;
}

int baseline_entry(const muh_space *sp, const char *path, uint32_t *cfg, baseline_pick *out, muh_diag *d)
{
	memset(out, 0, sizeof(*out));
	snprintf(out->path, sizeof(out->path), "%s", path);
	const muh_spec *s = space_spec(sp);
	size_t instance = space_instance(sp);
	size_t len;
	char *text = diag_file_read(path, &len, "baseline file", d);
	if (!text)
		return MUH_EENV;
	int rc = MUH_OK;
	cJSON *root = json_parse_at(text, len, path, d);
	if (!root) {
		rc = diag_errorf(d, "not JSON; expected an engine config file keyed by batch size");
		goto out;
	}
	double want = 0;
	if (!transfer_seeds_batch_size(s, instance, &want)) {
		diag_at(d, path, 0, 0, NULL);
		rc = diag_errorf(d, "the spec %s has no batch size to pick an entry by (a problem symbol M, or one "
				    "symbol with several values)",
				 s->name);
		goto out;
	}
	const cJSON *e, *pick = NULL;
	double best = INFINITY;
	if (!cJSON_IsObject(root) || !root->child) {
		diag_at(d, path, 1, 1, text);
		rc = diag_errorf(d, "expected an object keyed by batch size (\"1\": {...}, \"16\": {...}, ...)");
		goto out;
	}
	cJSON_ArrayForEach(e, root)
	{
		char *end;
		double key = strtod(e->string, &end);
		if (!e->string[0] || *end || key != floor(key) || !cJSON_IsObject(e)) {
			at_member(d, path, text, e->string, NULL);
			rc = diag_errorf(d, "\"%s\": expected an integer batch size naming an object of param values",
					 e->string);
			goto out;
		}
		double dist = fabs(key - want);
		if (dist < best) { /* the first nearest, as Python's min() keeps it */
			best = dist;
			pick = e;
			out->file_key = key;
		}
	}
	out->exact = best == 0;
	space_default(sp, cfg);
	cJSON_ArrayForEach(e, pick)
	{
		size_t p;
		for (p = 0; p < s->nparams && strcmp(s->params[p].name, e->string); p++)
			;
		if (p == s->nparams) {
			char names[512] = "";
			for (size_t q = 0; q < s->nparams; q++)
				snprintf(names + strlen(names), sizeof(names) - strlen(names), "%s%s", q ? ", " : "",
					 s->params[q].name);
			at_member(d, path, text, pick->string, e->string);
			rc = diag_errorf(d, "%s is not a param of the spec %s (its params: %s): the baseline's entry "
					    "must be a variant of the space",
					 e->string, s->name, names);
			goto out;
		}
		long i = transfer_seeds_match_value(&s->params[p], e);
		if (i < 0) {
			char vals[512] = "", v[64];
			for (size_t q = 0; q < s->params[p].nvalues && strlen(vals) < 400; q++) {
				value_fmt(v, sizeof(v), s->params[p].values[q]);
				snprintf(vals + strlen(vals), sizeof(vals) - strlen(vals), "%s%s", q ? ", " : "", v);
			}
			char *got = cJSON_PrintUnformatted(e);
			at_member(d, path, text, pick->string, e->string);
			rc = diag_errorf(d, "%s: %s is not one of the param's values (%s): add it to the spec's params "
					    "to measure what ships",
					 e->string, got ? got : "?", vals);
			free(got);
			goto out;
		}
		cfg[p] = (uint32_t)i;
	}
	space_key(sp, cfg, out->key, sizeof(out->key));
	out->valid = space_is_valid(sp, cfg);
	if (!out->valid)
		snprintf(out->why, sizeof(out->why), "the entry breaks a constraint of the space on this profile");
	snprintf(out->from, sizeof(out->from), "%s: batch size %.0f%s", path, out->file_key,
		 out->exact ? ", this instance's own entry" : ", the nearest the engine picks");
out:
	cJSON_Delete(root);
	free(text);
	return rc;
}
