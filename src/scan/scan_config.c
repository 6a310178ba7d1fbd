/*
 * scan_config.c — knobs of the files beside the code: JSON config files
 * (vLLM's E=..,N=..,device_name=...json, matched to the device) and
 * deployment files (YAML that launches an engine, read by deploy_parse with
 * the server's own argument semantics), with their verdicts and launch
 * blockers.
 *
 * Must never: print, exit, or touch the tree.
 */
#include "muh/scan.h"

#include <cjson/cJSON.h>
#include <dirent.h>
#include <errno.h>
#include <fnmatch.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "muh/deploy.h"
#include "muh/fileio.h"
#include "muh/muh.h"
#include "pyfile.h"
#include "scan_args.h"
#include "scan_cache.h"
#include "scan_env.h"
#include "scan_flow.h"
#include "scan_int.h"
#include "scan_launch.h"
#include "scan_vendor.h"
#include "strbuf.h"
#include "textcut.h"

/* The file name of JSON config file jr (tree-relative) when a lookup of
 * glob in folder dir (dl bytes, a prefix of the path) loads it: at or below
 * dir, not a test's, its name matching glob; NULL when the lookup does not. */
static const char *json_glob_match(const char *jr, const char *dir, size_t dl, const char *glob)
{
	if (strncmp(jr, dir, dl) || scan_path_is_test(jr))
		return NULL;
	const char *base = strrchr(jr, '/');
	base = base ? base + 1 : jr;
	return fnmatch(glob, base, 0) ? NULL : base;
}

/* The device a config file's name is for: "device_name=NVIDIA_H200" or a
 * vendor-prefixed tail ("..._NVIDIA_H200.json"); NULL when none. */
static const char *json_device(muh_surface *s, const char *base)
{
	const char *p = strstr(base, "device_name=");
	if (p)
		p += 12;
	else if ((p = strstr(base, "NVIDIA_")) || (p = strstr(base, "AMD_")) ||
	         (p = strstr(base, "Intel_")))
		;
	else
		return NULL;
	size_t n = strcspn(p, ",");
	const char *dot = strstr(p, ".json");
	if (dot && (size_t)(dot - p) < n)
		n = (size_t)(dot - p);
	return n ? scan_host_fmt(s, "%.*s", (int)n, p) : NULL;
}

/* Lower-case, spaces and dashes as '_' (vLLM writes device names so). */
static void norm_device(const char *in, char *out, size_t cap)
{
	size_t o = 0;
	for (; *in && o + 1 < cap; in++)
		out[o++] = (*in == ' ' || *in == '-') ? '_'
		                                      : (char)(*in >= 'A' && *in <= 'Z' ? *in + 32 : *in);
	out[o] = '\0';
}

/* Does the device a file is named for match --device? Equal after
 * normalizing, or the --device tokens appear in order as whole tokens
 * ("H200" matches "NVIDIA_H200", not "NVIDIA_H20"). */
static int device_matches(const char *file_dev, const char *want)
{
	char a[256], b[256];
	norm_device(file_dev, a, sizeof(a));
	norm_device(want, b, sizeof(b));
	if (!strcmp(a, b))
		return 1;
	size_t lb = strlen(b);
	for (const char *p = a; (p = strstr(p, b)); p++)
		if ((p == a || p[-1] == '_') && (p[lb] == '\0' || p[lb] == '_'))
			return 1;
	return 0;
}

/* Does function sc write files and read none: a call of dump/safe_dump (json,
 * yaml) in it and none of load, safe_load, exists, isfile, listdir? */
static int writes_only(const pyfile *pf, int sc)
{
	if (sc < 0)
		return 0;
	int dump = 0;
	for (int i = 0; i < pf->ncalls; i++) {
		const pf_call *c = &pf->calls[i];
		if (c->scope != sc || !c->fname)
			continue;
		if (!strcmp(c->fname, "load") || !strcmp(c->fname, "safe_load") ||
		    !strcmp(c->fname, "exists") || !strcmp(c->fname, "isfile") ||
		    !strcmp(c->fname, "listdir") || !strcmp(c->fname, "loads"))
			return 0;
		dump |= !strcmp(c->fname, "dump") || !strcmp(c->fname, "safe_dump");
	}
	return dump;
}

/* Tuned config files and where they are looked up. Each f-string naming a
 * .json/.yaml file from device or shape names that a module builds (vLLM's
 * get_config_file_name; not a function that only writes such files) is a lookup site:
 * a config_lookup knob of its own, live when the building function is
 * reached (through the call chain, not from dead stores), dead when nothing
 * calls it or its result is overwritten before use, reported even when no
 * file matches. Each JSON file at or below the module's folder that matches
 * the pattern is a json_config knob with the lookup's verdict; a file named
 * for a device is platform unless it matches --device. */
/* A knob of kind named name in a file that is not Python (a JSON config, a
 * deployment file): no scope. */
static pf_knob file_knob(int kind, const char *name)
{
	pf_knob k = {0};
	k.kind = kind;
	k.name = name;
	k.scope = -1;
	return k;
}

void scan_json_knobs(muh_surface *s, kb *b, smap *occ)
{
	for (int fi = 0; fi < s->nfiles; fi++) {
		sfile *f = &s->files[fi];
		if (f->is_test)
			continue;
		const pyfile *pf = f->pf;
		for (int j = 0; j < pf->njsons; j++) {
			const pf_json *pj = &pf->jsons[j];
			if (writes_only(pf, pj->scope))
				continue; /* a file it writes (a tuning script's save_configs) */
			char dir[4096];
			snprintf(dir, sizeof(dir), "%s", f->rel);
			char *slash = strrchr(dir, '/');
			size_t dl = slash ? (size_t)(slash - dir) + 1 : 0;
			dir[dl] = '\0';
			/* the lookup's own verdict */
			enum scan_verdict lv = SCAN_UNKNOWN;
			const char *lwhy = "loader not found";
			const range *pr = scan_plat_range_at(f, pj->start), *dr = scan_dead_range_at(f, pj->start);
			scan_kb_step(b, fi, pj->line, "%s builds the file name %s", scan_scope_qual(pf, pj->scope),
			             pj->glob);
			size_t first = b->steps.n;
			if (f->platform) {
				lv = SCAN_PLATFORM;
				lwhy = f->plat_why;
			} else if (dr) {
				lv = SCAN_DEAD;
				lwhy = scan_host_fmt(s, "the lookup is on an unreachable path: %s",
				                     dr->note);
				scan_kb_step(b, fi, dr->line, "%s", dr->note);
			} else if (pr) {
				lv = SCAN_PLATFORM;
				lwhy = pr->note;
				scan_kb_step(b, fi, pr->line, "%s", pr->note);
			} else if (pj->scope >= 0) {
				int top = scan_outer_scope(pf, pj->scope), ef, el;
				enum reach r = scan_scope_reach(s, fi, pj->scope, &ef, &el);
				if (r == R_NONE && !scan_maybe_called_from_outside(s, fi, top)) {
					lv = SCAN_DEAD;
					lwhy = scan_host_fmt(
					    s,
					    "no call in the tree: nothing calls %s, so no file "
					    "is looked up",
					    pf->scopes[top].qual);
					scan_kb_step(b, fi, pf->scopes[top].line,
					             "nothing in the tree calls or names %s (no call in the tree)",
					             pf->scopes[top].qual);
				} else if (r == R_LIVE || r == R_BUSY) {
					lv = SCAN_LIVE;
					lwhy = scan_host_fmt(
					    s, "looked up by name pattern built in %s",
					    scan_scope_qual(pf, pj->scope));
					scan_call_chain(b, fi, pj->scope, 6);
				} else {
					lv = scan_verdict_from(b, r, ef, el, scan_scope_qual(pf, top), &lwhy);
					if (r == R_NONE) {
						lv = SCAN_UNKNOWN;
						lwhy = scan_host_fmt(
						    s, "%s is never referenced by name (--library)",
						    pf->scopes[top].qual);
					}
				}
			} else {
				lv = SCAN_LIVE;
				lwhy = "name pattern built at module level";
			}
			/* whether the loaded contents reach a launch (issue 28 items
			 * 1, 2): a loader whose every caller drops or overwrites the
			 * result is dead, one whose result reaches a launch live */
			if ((lv == SCAN_LIVE || lv == SCAN_DEAD || lv == SCAN_UNKNOWN) &&
			    pj->scope >= 0 && !dr && scan_flow_of(s)) {
				scan_flow_res fr;
				reach_scratch keep = scan_scratch_save(s);
				scan_flow_lookup(s->flow, fi, pj->scope, &fr);
				scan_scratch_restore(s, &keep);
				if (fr.fate == SCAN_FLOW_DISCARDED && lv == SCAN_LIVE) {
					scan_flow_steps(b, &fr);
					lv = SCAN_DEAD;
					lwhy = scan_host_fmt(
					    s,
					    "the loaded config never reaches a launch: %s "
					    "(%s:%d)",
					    fr.nsteps ? fr.steps[fr.nsteps - 1].note : "discarded",
					    s->files[fr.kill_file].rel, fr.kill_line);
				} else if (fr.fate == SCAN_FLOW_REACHES) {
					const scan_flow_step *last = &fr.steps[fr.nsteps - 1];
					if (lv != SCAN_LIVE)
						b->steps.n = first; /* the reachability rule's steps */
					scan_flow_steps(b, &fr);
					lwhy = scan_host_fmt(
					    s, "the loaded config reaches a launch: %s (%s:%d)",
					    last->note, s->files[last->file].rel, last->line);
					lv = SCAN_LIVE;
				}
			}
			size_t mark = b->steps.n;
			scan_step *saved = NULL;
			if (mark) {
				saved = scan_sa_alloc(s, sizeof(scan_step) * mark);
				if (saved)
					memcpy(saved, b->steps.p, sizeof(scan_step) * mark);
			}
			int nmatch = 0;
			const char *match_dir = NULL;
			for (int i = 0; i < s->njsons; i++) {
				const char *jr = s->jsons[i];
				const char *base = json_glob_match(jr, dir, dl, pj->glob);
				if (!base)
					continue;
				nmatch++;
				if (!match_dir)
					match_dir = scan_host_fmt(s, "%.*s", (int)(base - jr), jr);
			}
			/* the lookup site */
			pf_knob lk = {0};
			lk.kind = PF_K_JSON_CONFIG;
			lk.name = pj->glob;
			lk.scope = pj->scope;
			lk.line = pj->line;
			lk.col = pj->col;
			lk.end_line = pj->end_line;
			lk.end_col = pj->end_col;
			lk.start = pj->start;
			lk.end = pj->end;
			lk.text = pj->text;
			if (nmatch)
				scan_kb_step(b, fi, pj->line, "%d file(s) match %s in %s", nmatch, pj->glob,
				             match_dir);
			else
				scan_kb_step(b, fi, pj->line, "no file matches %s at or below %s (the folder is "
				                      "empty or missing); a file written there is read "
				                      "only if this lookup is live",
				             pj->glob, dl ? dir : "the root");
			muh_knob *lo = scan_emit(s, b, fi, &lk, f->rel, lv, lwhy);
			if (!lo)
				return;
			lo->kind = "config_lookup";
			lo->lookup_glob = pj->glob;
			lo->lookup_dir = match_dir ? match_dir : (dl ? scan_sa_str(s, dir) : "");
			lo->lookup_files = nmatch;
			{
				char key[1200];
				snprintf(key, sizeof(key), "%s\x01%s\x01%s\x01config_lookup", f->rel,
				         lo->scope, pj->glob);
				scan_knob_id_counted(s, occ, key, f->rel, lo->scope, pj->glob,
				                     "config_lookup", lo->id);
			}
			for (int i = 0; i < s->njsons; i++) {
				const char *jr = s->jsons[i];
				const char *base = json_glob_match(jr, dir, dl, pj->glob);
				if (!base)
					continue;
				pf_knob k = file_knob(PF_K_JSON_CONFIG, base);
				k.line = 1;
				k.col = 1;
				k.end_line = 1;
				k.end_col = 1;
				k.text = scan_host_fmt(s, "file matching %s", pj->glob);
				for (size_t q = 0; saved && q < mark; q++) {
					scan_step *st = scan_vec_push(&b->steps);
					if (st)
						*st = saved[q];
				}
				enum scan_verdict v = lv;
				const char *why =
				    lv == SCAN_LIVE
				        ? scan_host_fmt(s, "loaded by name pattern built in %s",
				                        scan_scope_qual(pf, pj->scope))
				        : lwhy;
				const char *dev = json_device(s, base);
				if (dev && v == SCAN_LIVE) {
					if (!s->opt.device) {
						v = SCAN_PLATFORM;
						why = scan_host_fmt(
						    s,
						    "tuned for device %s (muh scan --device NAME "
						    "decides)",
						    dev);
						scan_step_file(b, jr, 1, why);
					} else if (device_matches(dev, s->opt.device)) {
						why = scan_host_fmt(
						    s,
						    "for device %s, which is --device %s; loaded "
						    "by name pattern built in %s",
						    dev, s->opt.device,
						    scan_scope_qual(pf, pj->scope));
						scan_step_file(
						    b, jr, 1,
						    scan_host_fmt(
						        s,
						        "named for device %s: matches --device %s",
						        dev, s->opt.device));
					} else {
						v = SCAN_PLATFORM;
						why = scan_host_fmt(
						    s, "tuned for device %s, not --device %s", dev,
						    s->opt.device);
						scan_step_file(b, jr, 1, why);
					}
				}
				muh_knob *o = scan_emit(s, b, -1, &k, jr, v, why);
				if (!o)
					return;
				o->scope = scan_scope_qual(pf, pj->scope);
				char key[1200];
				snprintf(key, sizeof(key), "%s\x01%s\x01json_config", jr, base);
				scan_knob_id_counted(s, occ, key, jr, "<file>", base, "json_config",
				                     o->id);
			}
		}
	}
}

/* The engine-argument field (a class default, not a deployment flag) named
 * name, or NULL. */
/* s without one pair of surrounding quotes, into buf. */
static const char *unquote(const char *s, char *buf, size_t cap)
{
	while (*s == ' ')
		s++;
	size_t n = strlen(s);
	while (n && s[n - 1] == ' ')
		n--;
	if (n >= 2 && (s[0] == '\'' || s[0] == '"') && s[n - 1] == s[0]) {
		s++;
		n -= 2;
	}
	snprintf(buf, cap, "%.*s", (int)n, s);
	return buf;
}

/* Is value (a deployment file's text) one of the unsafe values u (a scan
 * unsafe value: "not in ('a', 8)", "< 4096", ">= N", "!= N", "== N", or a
 * plain value)? 1 / 0, or -1 when u does not decide (a relation with
 * another argument, "< max_loras_per_batch"). */
static int value_unsafe(const char *value, const char *u)
{
	char vb[512], eb[512];
	unquote(value, vb, sizeof(vb));
	if (!strncmp(u, "not in (", 8)) {
		size_t n = strlen(u);
		if (n < 9 || u[n - 1] != ')')
			return -1;
		char list[1024];
		snprintf(list, sizeof(list), "%.*s", (int)(n - 9), u + 8);
		char *p = list, *start = list, q = 0;
		for (;; p++) {
			if (q) {
				if (*p == q)
					q = 0;
				if (*p)
					continue;
			}
			if (*p == '\'' || *p == '"') {
				q = *p;
				continue;
			}
			if (*p == ',' || !*p) {
				char end = *p;
				*p = '\0';
				if (!strcmp(unquote(start, eb, sizeof(eb)), vb))
					return 0;
				if (!end)
					break;
				start = p + 1;
			}
		}
		return 1;
	}
	static const char *const ops[] = {"<=", ">=", "!=", "==", "<", ">"};
	for (int i = 0; i < 6; i++) {
		size_t l = strlen(ops[i]);
		if (strncmp(u, ops[i], l) || u[l] != ' ')
			continue;
		char *e1, *e2;
		double x = strtod(vb, &e1), y = strtod(u + l + 1, &e2);
		if (e1 == vb || *e1 || e2 == u + l + 1 || *e2)
			return -1;
		switch (i) {
		case 0: return x <= y;
		case 1: return x >= y;
		case 2: return x != y;
		case 3: return x == y;
		case 4: return x < y;
		default: return x > y;
		}
	}
	return !strcmp(unquote(u, eb, sizeof(eb)), vb);
}

/* Is value one of knob k's unsafe values (value_unsafe says so for one)? */
int scan_value_unsafe_any(const muh_knob *k, const char *value)
{
	for (int q = 0; q < k->nunsafe; q++)
		if (value_unsafe(value, k->unsafe_values[q]) == 1)
			return 1;
	return 0;
}

const muh_knob *scan_engine_field(const muh_surface *s, const char *name)
{
	for (size_t q = 0; q < s->knobs.n; q++) {
		const muh_knob *o = (const muh_knob *)s->knobs.p + q;
		if (!strcmp(o->kind, "engine_arg") && strcmp(o->scope, "<deployment>") &&
		    o->line != 0 && !strcmp(o->name, name))
			return o;
	}
	return NULL;
}

/* The why of a deployment env entry until scan_env_resolve() decides it
 * (scan_host_is_deploy_env recognizes the entries by this pointer). */
static const char deploy_env_why[] = "environment variable of the engine's process";

/* Deployment files: YAML that launches an engine, read by deploy_parse with
 * the server's own argument semantics (src/engine/deploy.c). Each server argument
 * and each env entry is an engine_arg knob in scope <deployment>: its value
 * span is the value's text (a flag's: the flag); a --no-X negation is the
 * knob no_X. Files that are not launch files are skipped. */
void scan_yaml_knobs(muh_surface *s, kb *b, smap *occ)
{
	scan_launch *L = NULL; /* the tree's own parser, read at the first launch file */
	int Lread = 0;
	for (int yi = 0; yi < s->nyamls + s->njsons; yi++) {
		int json = yi >= s->nyamls;
		const char *rel = json ? s->jsons[yi - s->nyamls] : s->yamls[yi];
		if (scan_path_is_test(rel))
			continue;
		char path[8192];
		snprintf(path, sizeof(path), "%s/%s", s->root, rel);
		size_t n;
		char *text = file_read(path, &n);
		if (!text)
			continue;
		size_t lead = strspn(text, " \t\r\n");
		if (n > (1u << 24) || !memmem(text, n, "-", 1) || (json && text[lead] != '[') ||
		    !(memmem(text, n, "vllm", 4) || memmem(text, n, "serve", 5) ||
		      memmem(text, n, "api_server", 10) || memmem(text, n, "llama", 5))) {
			free(text);
			continue;
		}
		deploy_file *df = NULL;
		muh_diag dd;
		if (deploy_parse(rel, text, n, NULL, &df, &dd)) {
			free(text);
			continue;
		}
		uint64_t hash = pyfile_hash(text, n); /* what patch checks for drift */
		if (!Lread) { /* read ahead by scan.c, or now */
			L = s->launch_ahead ? s->launch : scan_launch_new(s);
			s->launch = NULL;
			s->launch_ahead = 0;
			Lread = 1;
		}
		for (size_t ai = 0; ai < df->nargs; ai++) {
			const deploy_arg *a = &df->args[ai];
			int env = a->kind == DEPLOY_ENV, neg = a->kind == DEPLOY_NEG;
			const char *name =
			    neg ? scan_host_fmt(s, "no_%s", a->name) : scan_sa_str(s, a->name);
			if (!name)
				break;
			pf_knob k = file_knob(PF_K_ENGINE_ARG, name);
			size_t vs = a->val_start, ve = a->val_end;
			if (vs == (size_t)-1 || ve < vs || ve > n)
				vs = ve = a->tok_start; /* no plain span: deploy_set still edits it */
			k.start = (uint32_t)vs;
			k.end = (uint32_t)ve;
			int l0, c0, l1, c1;
			diag_linecol(text, vs, &l0, &c0);
			diag_linecol(text, ve, &l1, &c1);
			k.line = l0;
			k.col = c0;
			k.end_line = l1;
			k.end_col = c1;
			k.text = a->kind == DEPLOY_OPT || env ? scan_sa_str(s, a->value) : "True";
			k.eval = k.text;
			enum scan_verdict v = SCAN_UNKNOWN;
			const char *why;
			if (env) {
				scan_step_file(
				    b, rel, a->line,
				    scan_host_fmt(
				        s, "deployment file sets the environment variable %s",
				        a->name));
				why = deploy_env_why;
			} else {
				scan_step_file(b, rel, a->line,
				               scan_host_fmt(s,
				                             "deployment command line sets %s (%s)",
				                             a->flag, a->name));
				why = scan_host_fmt(
				    s, "no engine-argument field named %s in this tree", a->name);
				const muh_knob *o = scan_engine_field(s, a->name);
				if (o) {
					scan_step_file(
					    b, o->file, o->line,
					    scan_host_fmt(s, "engine argument %s.%s%s (verdict %s)",
					                  o->scope, o->name,
					                  neg ? ", negated by --no-" : "",
					                  scan_verdict_name(o->verdict)));
					v = o->verdict;
					why = scan_host_fmt(s, "%s %s.%s", neg ? "negates" : "sets",
					                    o->scope, o->name);
					/* a field with unsafe values: this file's value decides */
					int un = 0, known = 1;
					for (int q = 0; v == SCAN_UNSAFE && q < o->nunsafe && !un; q++) {
						int r = value_unsafe(a->value ? a->value : "", o->unsafe_values[q]);
						un = r == 1;
						known &= r >= 0;
					}
					if (v == SCAN_UNSAFE && !un && known && !neg && a->value) {
						v = SCAN_LIVE;
						scan_step_file(
						    b, rel, a->line,
						    scan_host_fmt(
						        s, "%s is outside the unsafe values (%s)",
						        a->value, o->unsafe_values[0]));
					} else if (v == SCAN_UNSAFE && un)
						why = scan_host_fmt(
						    s, "sets %s.%s to %s, an unsafe value (%s)",
						    o->scope, o->name, a->value, o->why);
				}
				/* the tree's own parser: a launch blocker, a value no
				 * registry accepts (src/scan/scan_launch.c) */
				enum scan_verdict lv;
				const char *lwhy, *lunsafe;
				scan_step lst[SCAN_LAUNCH_STEPS];
				int nl = 0;
				if (scan_launch_judge(L, df, a, &lv, &lwhy, &lunsafe, lst, &nl)) {
					v = lv;
					why = lwhy;
					for (int q = 0; q < nl; q++)
						scan_step_file(b, lst[q].file, lst[q].line, lst[q].note);
					if (lunsafe)
						scan_add_unsafe(b, lunsafe);
				}
			}
			muh_knob *o = scan_emit(s, b, -1, &k, rel, v, why);
			if (!o)
				break;
			o->scope = "<deployment>";
			o->file_hash = hash;
			char key[1200];
			snprintf(key, sizeof(key), "%s\x01%s\x01engine_arg", rel, name);
			scan_knob_id_counted(s, occ, key, rel, "<deployment>", name, "engine_arg",
			                     o->id);
		}
		deploy_free(df);
		free(text);
	}
	scan_launch_free(L);
}

size_t scan_launch_blockers(const muh_surface *s, const char *rel, const muh_knob **out,
                            size_t cap)
{
	size_t n = 0;
	for (size_t i = 0; s && i < s->knobs.n; i++) {
		const muh_knob *k = (const muh_knob *)s->knobs.p + i;
		if (k->verdict != SCAN_BLOCKER || strcmp(k->scope, "<deployment>") ||
		    (rel && strcmp(k->file, rel)))
			continue;
		if (n < cap)
			out[n] = k;
		n++;
	}
	return n;
}

/* Launch bindings name the knob that feeds them (BLOCK_M=BLOCK -> BLOCK). */
void scan_link_feeds(muh_surface *s)
{
	muh_knob *ks = s->knobs.p;
	for (size_t i = 0; i < s->knobs.n; i++) {
		if (strcmp(ks[i].kind, "constexpr"))
			continue;
		for (size_t j = 0; j < s->knobs.n; j++) {
			if (i == j || ks[j].file != ks[i].file || strcmp(ks[j].name, ks[i].value) ||
			    (strcmp(ks[j].kind, "constant") && strcmp(ks[j].kind, "override")))
				continue;
			if (strcmp(ks[j].scope, ks[i].scope) && strcmp(ks[j].scope, "<module>"))
				continue;
			ks[i].feeds = scan_sa_str(s, ks[j].id);
			if (!strcmp(ks[j].scope, ks[i].scope))
				break;
		}
	}
}

int scan_host_is_deploy_env(const muh_knob *k)
{
	return k->why == deploy_env_why && !strcmp(k->scope, "<deployment>");
}
