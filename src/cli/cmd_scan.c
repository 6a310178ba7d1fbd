/*
 * cmd_scan.c — `muh scan TREE`: the surface of an engine tree as an aligned
 * table (people) or JSON (programs), and starter specs for the live knobs.
 * All the work is in libmuh (scan.h); this file parses options and prints.
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "cli.h"
#include "muh/surface_view.h"
#include "muh/scan.h"

static const char help[] =
    "usage: muh scan [options] TREE\n"
    "\n"
    "Maps the tuning surface of an engine tree (vLLM or similar): every knob,\n"
    "where it is, its current value, and a verdict with the evidence behind it.\n"
    "TREE is a directory (or one .py file). Every .py file is parsed with\n"
    "tree-sitter; files with syntax errors are reported on stderr and still\n"
    "scanned.\n"
    "\n"
    "options:\n"
    "  --json            print JSON instead of the table (schema: docs/scan.md)\n"
    "  --specs DIR       write a starter spec (YAML) per group of live knobs\n"
    "  --verdict V       show only knobs with verdict V (repeatable)\n"
    "  --kind K          show only knobs of kind K (repeatable)\n"
    "  --with-tests      also report knobs defined in test files\n"
    "  --evidence        print every evidence step under each table row\n"
    "  --top N           show the N knobs of highest priority (after the filters)\n"
    "  --exclude GLOB    leave out paths matching GLOB (relative to TREE; `*` also\n"
    "                    matches `/`; a matching directory is left out whole)\n"
    "  --include GLOB    scan files matching GLOB even when vendored or excluded\n"
    "  --with-vendored   scan vendored third-party code too (third_party/,\n"
    "                    vendor/, *_vendored/, pynvml, ...: left out by default)\n"
    "  -j, --jobs N      parse with N threads (default: one per CPU)\n"
    "  --cache FILE      the cache of surfaces (SQLite; default:\n"
    "                    $MUH_CACHE_DIR/scan.sqlite, else $XDG_CACHE_HOME/muh/ or\n"
    "                    ~/.cache/muh/scan.sqlite): a tree whose files all hash as\n"
    "                    in a stored scan answers from it\n"
    "  --no-cache        neither read nor write the cache\n"
    "  --library         TREE is a library called from outside: a function nothing\n"
    "                    in it calls is unknown, not dead (\"no call in the tree\")\n"
    "  --entry NAME      a function called from outside (NAME or module.NAME;\n"
    "                    repeatable): it counts as reached\n"
    "  --device NAME     the device the engine runs on (\"NVIDIA H200\"): JSON configs\n"
    "                    named for it are live, for others platform; decides\n"
    "                    device-capability checks\n"
    "  -h, --help        this text\n"
    "\n"
    "knob kinds:\n"
    "  constant     UPPER_CASE (or known, e.g. num_warps) numeric/bool constant at\n"
    "               module or function level; `a if c else b` keeps both alternatives\n"
    "  override     a heuristic overwritten by a literal\n"
    "               (use_v1 = (...); use_v1 = True)\n"
    "  constexpr    a launch binding of a @triton.jit kernel's tl.constexpr param\n"
    "               (BLOCK_M=BLOCK), plus num_warps/num_stages at the launch\n"
    "  autotune     a @triton.autotune configs=[triton.Config(...)] list, or a\n"
    "               function returning one\n"
    "  config_dict  a key of a config dict ({'BLOCK_SIZE_M': 64}) or an in-place\n"
    "               update (config['BLOCK_SIZE_M'] = 32)\n"
    "  capability   a function declaring a device limit (return 32 * 1024)\n"
    "  json_config  a JSON file the code loads by a name pattern\n"
    "               (E=..,N=..,device_name=..)\n"
    "  config_lookup where the code looks a tuned config file up by that pattern\n"
    "               (live or dead), reported even when no file matches\n"
    "  engine_arg   an engine-argument field default, or a flag in a deployment YAML\n"
    "\n"
    "verdicts:\n"
    "  live      reachable code reads it (evidence: the reader)\n"
    "  dead      nothing reachable reads it: never read, overwritten before any read,\n"
    "            read only by dead code, in a function nothing calls (\"no call in\n"
    "            the tree\"), after a return, under a constant-false `if` (constants\n"
    "            followed across modules), only from tests, or a dict key that no\n"
    "            consumer reads (an opaque vendor call reads only the keys it names;\n"
    "            kernel[grid](..., **config) reads them all)\n"
    "  unsafe    some values (unsafe_values) send execution into a function that\n"
    "            raises NotImplementedError unconditionally (calls followed across\n"
    "            modules), into a raise of an if/elif chain on the knob, or fail an\n"
    "            assert (ranges such as \"< 4096\")\n"
    "  platform  reachable only through another platform's backend (e.g. ROCm), under\n"
    "            a platform or device-capability check, or a JSON named for another\n"
    "            device\n"
    "  unknown   the static analysis cannot tell; the `why` column says why\n"
    "  blocker   a deployment file's argument that the tree's own parser does not\n"
    "            define: a launch blocker (the server exits at parse_args); listed\n"
    "            first, and muh tune refuses the file\n"
    "\n"
    "The table is sorted by priority (prio): P0 reaches a kernel launch or the\n"
    "scheduler (or is unsafe), P1 other live knobs, P2 unknown or platform, low\n"
    "dead knobs and sentinels (PAD_SLOT_ID = -1); the id column is what\n"
    "`muh patch --set ID=VALUE` takes.\n"
    "\n"
    "Knob ids are stable: a hash of the file path, enclosing scope, name, kind and\n"
    "occurrence, not of line numbers. Exit status: 0 when the scan ran (whatever\n"
    "the verdicts), 2 when TREE does not exist or is not a tree, 3 on I/O errors.\n"
    "\n"
    "examples:\n"
    "  muh scan third_party/vllm-0.6.3\n"
    "  muh scan --verdict unsafe --verdict dead ~/enginex-vllm\n"
    "  muh scan --json vllm/ | jq '.knobs[] | select(.verdict==\"live\") | .name'\n"
    "  muh scan --specs specs/scan vllm/    # then: muh space specs/scan/<file>.yaml\n";

/* The width of the terminal stdout is, from $COLUMNS or the terminal
 * itself; 0 when stdout is no terminal (a pipe, a file). */
static int terminal_columns(void)
{
	if (!isatty(STDOUT_FILENO))
		return 0;
	const char *c = getenv("COLUMNS");
	if (c && atoi(c) > 0)
		return atoi(c);
	struct winsize ws;
	return ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 ? ws.ws_col : 0;
}

/* The columns s takes on a terminal: its UTF-8 characters (a character
 * is one column here; the wide ones of East Asian scripts take two). */
static int columns_of(const char *s)
{
	int n = 0;
	for (; *s; s++)
		n += ((unsigned char)*s & 0xC0) != 0x80;
	return n;
}

/* The printf field width that pads s to w columns: w and the bytes of its
 * characters beyond their first. */
static int field(const char *s, int w)
{
	return w + (int)strlen(s) - columns_of(s);
}

/* src into dst (cap bytes, cap >= 4), cut when it takes more than cols
 * columns (cols >= 3) or cap bytes: its first characters, then "...", at
 * most cols columns in all. The cut falls between UTF-8 characters, never
 * inside one. */
static void clip(char *dst, size_t cap, const char *src, int cols)
{
	size_t n = strlen(src);
	if (n < cap && columns_of(src) <= cols) {
		memcpy(dst, src, n + 1);
		return;
	}
	size_t at = 0;
	for (int c = 0; src[at] && c < cols - 3; c++) {
		size_t next = at + 1;
		while (((unsigned char)src[next] & 0xC0) == 0x80)
			next++;
		if (next + 4 > cap)
			break;
		at = next;
	}
	memcpy(dst, src, at);
	memcpy(dst + at, "...", 4);
}

/* The last cols columns of src into dst (cap bytes), led by "...": a path
 * keeps its file name and line. At a character boundary, as clip. */
static void clip_head(char *dst, size_t cap, const char *src, int cols)
{
	size_t n = strlen(src), at = n;
	if (columns_of(src) <= cols && n < cap) {
		memcpy(dst, src, n + 1);
		return;
	}
	for (int c = 0; at > 0 && c < cols - 3; c++) {
		size_t prev = at - 1;
		while (prev > 0 && ((unsigned char)src[prev] & 0xC0) == 0x80)
			prev--;
		if (n - prev + 4 > cap)
			break;
		at = prev;
	}
	memcpy(dst, "...", 3);
	memcpy(dst + 3, src + at, n - at + 1);
}

/* Narrows a column of width *w by what *over asks, down to min at most,
 * and takes what it gave from *over. */
static void give_up(int *w, int min, int *over)
{
	int take = *w - min < *over ? *w - min : *over;
	if (take > 0) {
		*w -= take;
		*over -= take;
	}
}

/* src as a person reads it, into dst (cap bytes, cut as clip cuts when
 * longer): bytes that are not UTF-8 (a Latin-1 file name) as \\xNN
 * (scan_escape_bytes). */
static const char *shown(char *dst, size_t cap, const char *src)
{
	char *e = scan_escape_bytes(src ? src : "", 0);
	clip(dst, cap, e ? e : "?", INT_MAX); /* whole, unless over cap bytes */
	free(e);
	return dst;
}

/* k's why cell as shown, whole (cap bytes at most): its reason, and its
 * first unsafe value when it has one. */
static const char *why_of(char *dst, size_t cap, const muh_knob *k)
{
	char raw[4096];
	if (k->nunsafe)
		snprintf(raw, sizeof(raw), "%s (unsafe: %s)", k->why, k->unsafe_values[0]);
	else
		snprintf(raw, sizeof(raw), "%s", k->why ? k->why : "");
	return shown(dst, cap, raw);
}

/* The table: the knobs that pass the filters, by priority (then in scan
 * order), at most top of them (0 = all); the summary; what was excluded.
 * Returns -1 when out of memory. */
static int print_table(const muh_surface *s, const char *const *verdicts, int nv,
                       const char *const *kinds, int nk, size_t top, int evidence)
{
	size_t n = scan_nknobs(s), nshow = 0, *order;
	int *prio;
	if (surface_view_order(s, verdicts, nv, kinds, nk, top, &order, &nshow, &prio))
		return -1;
	int wn = 4, wl = 9, wv = 5, wk = 4, wd = 7, wy = 3; /* wy: the widest why */
	char buf[4200], sf[4096], sv[4096], sn[4096];
	for (size_t r = 0; r < nshow; r++) {
		const muh_knob *k = scan_knob(s, order[r]);
		int l = columns_of(shown(sn, sizeof(sn), k->name));
		wn = l > wn ? (l > 40 ? 40 : l) : wn;
		snprintf(buf, sizeof(buf), "%s:%d", shown(sf, sizeof(sf), k->file), k->line);
		l = columns_of(buf);
		wl = l > wl ? (l > 60 ? 60 : l) : wl;
		l = columns_of(shown(sv, sizeof(sv), k->value));
		wv = l > wv ? (l > 24 ? 24 : l) : wv;
		l = (int)strlen(k->kind);
		wk = l > wk ? l : wk;
		l = (int)strlen(scan_verdict_name(k->verdict)); /* platform: 8 */
		wd = l > wd ? l : wd;
		l = columns_of(why_of(sv, sizeof(sv), k));
		wy = l > wy ? l : wy;
	}
	/* on a terminal, why is cut to what its width leaves; where that is
	 * under 30 columns, value, file:line and knob give up columns first
	 * (down to 12, 24 and 16, then value to 8 and file:line to 20), then
	 * why is cut to 30, and a terminal narrower than that wraps each row
	 * once. A pipe and --json get every cell whole. */
	int wwhy = 0, cut = 0, narrowed = 0, cols = terminal_columns();
	int fixed = wk + wd + 4 + 17 + 7 * 2; /* kind, verdict, prio, id, the gaps */
	int before = wn + wl + wv + fixed, why30 = wy < 30 ? wy : 30;
	if (cols > 0) {
		int over = before + why30 - cols;
		narrowed = over > 0;
		give_up(&wv, 12, &over);
		give_up(&wl, 24, &over);
		give_up(&wn, 16, &over);
		give_up(&wv, 8, &over);
		give_up(&wl, 20, &over);
		before = wn + wl + wv + fixed;
		wwhy = cols - before > 30 ? cols - before : 30;
	}
	printf("%-*s  %-*s  %-*s  %-*s  %-*s  %-4s  %-17s  %s\n", wn, "knob", wl, "file:line", wv,
	       "value", wk, "kind", wd, "verdict", "prio", "id", "why");
	for (size_t r = 0; r < nshow; r++) {
		const muh_knob *k = scan_knob(s, order[r]);
		char name[176], loc[4200], loc2[256], val[112];
		clip(name, sizeof(name), shown(sn, sizeof(sn), k->name), wn);
		snprintf(loc, sizeof(loc), "%s:%d", shown(sf, sizeof(sf), k->file), k->line);
		clip_head(loc2, sizeof(loc2), loc, wl); /* keep the tail: file name and line */
		clip(val, sizeof(val), shown(sv, sizeof(sv), k->value), wv);
		char why[4096], why2[4096]; /* whole: only a terminal's width cuts it */
		const char *cell = why_of(why, sizeof(why), k);
		if (wwhy && columns_of(why) > wwhy) {
			clip(why2, sizeof(why2), why, wwhy);
			cell = why2;
			cut = 1;
		}
		printf("%-*s  %-*s  %-*s  %-*s  %-*s  %-4s  %-17s  %s\n", field(name, wn), name,
		       field(loc2, wl), loc2, field(val, wv), val, wk,
		       k->kind, wd, scan_verdict_name(k->verdict), scan_priority_name(prio[order[r]]),
		       k->id, cell);
		if (evidence)
			for (int j = 0; j < k->nevidence; j++)
				printf("    %s:%d: %s\n", shown(sf, sizeof(sf), k->evidence[j].file),
				       k->evidence[j].line, shown(sv, sizeof(sv), k->evidence[j].note));
	}
	if (narrowed && before + why30 <= cols)
		printf("(cells are cut to the terminal's %d columns; a pipe or --json has them whole)\n",
		       cols);
	else if (narrowed) /* even the narrowed columns nearly fill it: rows wrap once */
		printf("(cells are cut to fit; rows still wrap on this %d-column terminal, %d columns are "
		       "needed; a pipe or --json has them whole)\n",
		       cols, before + why30);
	else if (cut)
		printf("(why is cut to the terminal's %d columns; a pipe or --json has it whole)\n", cols);
	int counts[SCAN_BLOCKER + 1];
	surface_view_counts(s, counts);
	char cb[32];
	if (counts[SCAN_BLOCKER])
		printf("\n%d launch blocker%s: the server would not start from %s deployment "
		       "file as written", counts[SCAN_BLOCKER], counts[SCAN_BLOCKER] == 1 ? "" : "s",
		       counts[SCAN_BLOCKER] == 1 ? "its" : "their");
	printf("\n%zu of %zu knobs shown; %d live, %d dead, %d unsafe, %d platform, %d unknown; "
	       "%zu files (%s bytes) in %.3f s%s%s%s\n",
	       nshow, n, counts[SCAN_LIVE], counts[SCAN_DEAD], counts[SCAN_UNSAFE],
	       counts[SCAN_PLATFORM], counts[SCAN_UNKNOWN], scan_nfiles(s),
	       text_count(cb, sizeof(cb), (double)scan_nbytes(s)), scan_seconds(s),
	       scan_cache_status(s) ? " (cache: " : "",
	       scan_cache_status(s) ? scan_cache_status(s) : "", scan_cache_status(s) ? ")" : "");
	/* what the walk left out, one line per reason */
	size_t nx = scan_nexcluded(s);
	if (nx) {
		printf("%zu .py file%s not scanned:", nx, nx == 1 ? "" : "s");
		int groups = 0;
		for (size_t i = 0; i < nx; i++) {
			const scan_excluded_path *x = scan_excluded(s, i);
			int seen = 0;
			for (size_t j = 0; j < i && !seen; j++)
				seen = !strcmp(scan_excluded(s, j)->why, x->why);
			if (seen)
				continue;
			size_t c = 0;
			for (size_t j = i; j < nx; j++)
				c += !strcmp(scan_excluded(s, j)->why, x->why);
			if (groups++ < 8)
				printf("%s %zu %s", groups > 1 ? ";" : "", c, shown(sf, sizeof(sf), x->why));
		}
		if (groups > 8)
			printf("; %d more reasons (see --json excluded)", groups - 8);
		printf(" (--include GLOB or --with-vendored scans them)\n");
	}
	free(order);
	free(prio);
	return 0;
}

/* --help / -h: the help text, and the scan is done (cli_parse_opts' -1). */
static int print_help(void *ctx, int i, const char *value)
{
	(void)ctx;
	(void)i;
	(void)value;
	fputs(help, stdout);
	return -1;
}

/* Whether name is one of list (NULL-terminated), exactly. */
static int listed(const char *const *list, const char *name)
{
	for (; *list; list++)
		if (!strcmp(*list, name))
			return 1;
	return 0;
}

static int run(int argc, char **argv)
{
	cli_ctrl_c_ends("scan", "the scan is dropped; nothing of it is cached");
	int json = 0, with_tests = 0, evidence = 0, with_vendored = 0, no_cache = 0, library = 0, first;
	uint64_t jobs = 0, top = 0;
	const char *cache = NULL, *device = NULL, *specs = NULL;
	const char *excl[32], *incl[32], *entries[32], *verdicts[8], *kinds[8];
	struct cli_list lx = {excl, 0, 32}, li = {incl, 0, 32}, le = {entries, 0, 32};
	struct cli_list lv = {verdicts, 0, 8}, lk = {kinds, 0, 8};
	const struct cli_opt opts[] = {
		CLI_OPT("json", CLI_FLAG, &json),
		CLI_OPT("specs", CLI_STR, &specs),
		CLI_OPT("verdict", CLI_LIST, &lv),
		CLI_OPT("kind", CLI_LIST, &lk),
		CLI_OPT("with-tests", CLI_FLAG, &with_tests),
		CLI_OPT("evidence", CLI_FLAG, &evidence),
		CLI_OPT("help", CLI_ACTION, NULL, .short_name = 'h'),
		CLI_OPT("jobs", CLI_UINT, &jobs, .short_name = 'j', .lo = 1, .hi = 16, .expected = "1 to 16"),
		CLI_OPT("top", CLI_UINT, &top, .lo = 1, .hi = UINT64_MAX, .expected = "a count of 1 or more"),
		CLI_OPT("exclude", CLI_LIST, &lx, .expected = "a glob"),
		CLI_OPT("include", CLI_LIST, &li, .expected = "a glob"),
		CLI_OPT("with-vendored", CLI_FLAG, &with_vendored),
		CLI_OPT("cache", CLI_STR, &cache, .expected = "a file"),
		CLI_OPT("no-cache", CLI_FLAG, &no_cache),
		CLI_OPT("library", CLI_FLAG, &library),
		CLI_OPT("entry", CLI_LIST, &le, .expected = "a function name"),
		CLI_OPT("device", CLI_STR, &device, .expected = "a device name"),
		CLI_END,
	};
	int prc = cli_parse_opts("scan", argc, argv, opts, print_help, NULL, &first);
	if (prc || first < 0)
		return prc;
	static const char *const vnames[] = {"live", "dead", "unsafe", "platform", "unknown",
					     "blocker", NULL};
	static const char *const knames[] = {"constant",    "override",   "constexpr", "autotune",
					     "config_dict", "capability", "json_config", "engine_arg",
					     "env",         "config_lookup", NULL};
	char hint[96];
	for (int i = 0; i < lv.n; i++) {
		const char *v = verdicts[i], *nv = diag_near_among(v, strlen(v), vnames);
		if (!listed(vnames, v))
			return cli_usage_error("scan", "--verdict %s%s: expected live, dead, unsafe, "
						       "platform, unknown or blocker",
					       v, diag_near_hint(nv, hint, sizeof(hint)));
	}
	for (int i = 0; i < lk.n; i++) {
		const char *k = kinds[i], *nk = diag_near_among(k, strlen(k), knames);
		if (!surface_view_known_kind(k))
			return cli_usage_error("scan",
					       "--kind %s%s: expected constant, override, constexpr, autotune, "
					       "config_dict, capability, json_config, engine_arg, env or "
					       "config_lookup",
					       k, diag_near_hint(nk, hint, sizeof(hint)));
	}
	int nx = lx.n, ni = li.n, nentries = le.n, nv = lv.n, nk = lk.n;
	if (first != argc - 1)
		return cli_usage_error("scan", first >= argc ? "which tree? (muh scan TREE)"
		                                              : "one TREE only");
	const char *tree = argv[first];
	scan_options opt = {0};
	opt.with_tests = with_tests;
	opt.jobs = (int)jobs;
	opt.exclude = excl;
	opt.nexclude = nx;
	opt.include = incl;
	opt.ninclude = ni;
	opt.with_vendored = with_vendored;
	char cache_path[4096];
	if (!no_cache && !cache) {
		const char *e = getenv("MUH_CACHE_DIR"), *x = getenv("XDG_CACHE_HOME"),
		           *h = getenv("HOME");
		if (e && *e)
			snprintf(cache_path, sizeof(cache_path), "%s/scan.sqlite", e);
		else if (x && *x)
			snprintf(cache_path, sizeof(cache_path), "%s/muh/scan.sqlite", x);
		else if (h && *h)
			snprintf(cache_path, sizeof(cache_path), "%s/.cache/muh/scan.sqlite", h);
		else
			cache_path[0] = '\0';
		if (cache_path[0])
			cache = cache_path;
	}
	opt.cache = no_cache ? NULL : cache;
	opt.library = library;
	opt.entries = entries;
	opt.nentries = nentries;
	opt.device = device;
	muh_surface *s;
	muh_diag d;
	diag_clear(&d);
	int rc = scan_tree(tree, &opt, &s, &d);
	if (rc)
		return cli_fail("scan", rc, &d);
	size_t nd = scan_ndiags(s);
	for (size_t i = 0; i < nd && i < 10; i++) {
		const muh_diag *e = scan_diag(s, i);
		fprintf(stderr, "%s:%d:%d: warning: %s\n  %s\n", e->file, e->line, e->col, e->msg,
		        e->src);
	}
	if (nd > 10)
		fprintf(stderr,
		        "muh scan: %zu more files with syntax errors (see --json syntax_errors)\n",
		        nd - 10);
	for (size_t i = 0; i < scan_nwarnings(s); i++) { /* the walk's: never silent */
		char *w = scan_escape_bytes(scan_warning(s, i), 0);
		fprintf(stderr, "muh scan: warning: %s\n", w ? w : scan_warning(s, i));
		free(w);
	}
	if (json) {
		char *txt = scan_to_json(s);
		if (!txt) {
			scan_free(s);
			fprintf(stderr, "muh scan: out of memory\n");
			return EXIT_ENV;
		}
		puts(txt);
		free(txt);
	} else if (print_table(s, verdicts, nv, kinds, nk, (size_t)top, evidence)) {
		scan_free(s);
		fprintf(stderr, "muh scan: out of memory\n");
		return EXIT_ENV;
	}
	if (specs) {
		int nw = 0;
		rc = scan_write_specs(s, specs, &nw, &d);
		if (rc) {
			scan_free(s);
			return cli_fail("scan", rc, &d);
		}
		if (diag_is_set(&d))
			fprintf(stderr, "muh scan: note: %s\n", d.msg);
		fprintf(stderr, "muh scan: wrote %d starter spec%s to %s\n", nw, nw == 1 ? "" : "s",
		        specs);
	}
	scan_free(s);
	return EXIT_OK;
}

MUH_COMMAND(scan, 25, "map an engine tree's knobs: live/dead/unsafe verdicts, evidence");
