/*
 * scan_vendor.c — which paths of an engine tree muh scan leaves out, and why.
 *
 * Vendored third-party code is noise on an engine's surface: vLLM 0.8.5
 * vendors pynvml, whose ~800 NVML constants would be dead knobs. A path is
 * vendored when one of its components (a directory, or a file without .py)
 * is a vendoring directory (third_party, thirdparty, third-party, 3rdparty,
 * vendor, vendors, vendored, _vendor, _vendored, *_vendored, externals,
 * site-packages, dist-packages) or a package engines are known to vendor
 * (pynvml). On top of that, the user's --exclude globs leave paths out and
 * --include globs bring back what either rule left out. Globs are fnmatch(3)
 * patterns on the path relative to the root, without FNM_PATHNAME (`*`
 * crosses `/`); a directory matching an --exclude glob is left out whole.
 *
 * Must never: touch the file system (this file only looks at names).
 */
#include "scan_vendor.h"

#include <fnmatch.h>
#include <stdio.h>
#include <string.h>

static int vendoring_name(const char *c, size_t n)
{
	static const char *const names[] = {
	    "third_party", "thirdparty", "third-party", "3rdparty",      "vendor",
	    "vendors",     "vendored",   "_vendor",     "_vendored",     "externals",
	    "site-packages", "dist-packages", "pynvml"};
	if (n > 3 && !memcmp(c + n - 3, ".py", 3))
		n -= 3;
	for (size_t i = 0; i < sizeof(names) / sizeof(*names); i++)
		if (strlen(names[i]) == n && !memcmp(c, names[i], n))
			return 1;
	return n > 9 && !memcmp(c + n - 9, "_vendored", 9);
}

int scan_vendored(const char *rel, int is_dir, char *dir, size_t cap)
{
	const char *c = rel;
	while (*c) {
		const char *e = strchr(c, '/');
		size_t n = e ? (size_t)(e - c) : strlen(c);
		if (vendoring_name(c, n)) {
			snprintf(dir, cap, "%.*s%s", (int)(c - rel + n), rel, e || is_dir ? "/" : "");
			return 1;
		}
		if (!e)
			break;
		c = e + 1;
	}
	return 0;
}

int scan_glob_match(const char *const *globs, int n, const char *rel)
{
	for (int i = 0; i < n; i++)
		if (!fnmatch(globs[i], rel, 0))
			return i;
	return -1;
}
