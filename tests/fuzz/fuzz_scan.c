/*
 * fuzz_scan.c — libFuzzer harness for muh scan's cross-module analysis.
 *
 * The input is split at lines "#--" into up to four Python modules of one
 * package (pkg/__init__.py, pkg/a.py, pkg/b.py, pkg/kernels.py), written to
 * a private temporary tree next to a device-named JSON config and a
 * deployment file; scan_tree() then links them (imports, constants across
 * modules, the call graph, dict flows into launches, platform ranges, dead
 * stores) and gives every knob a verdict. Byte 0 picks the options
 * (--library, --device, an --entry). Every string of the surface is touched
 * and every span checked against the file it points into, and the JSON is
 * built, so ASan/UBSan see any bad pointer. Built with clang and
 * -DMUH_FUZZ=ON (cmake/fuzz.cmake); without libFuzzer, regress_main.c
 * replays tests/fuzz/regress/scan/.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "muh/scan.h"

static char root[256];

static size_t touch(const char *s)
{
	return s ? strlen(s) : 0;
}

static void put(const char *rel, const uint8_t *p, size_t n)
{
	char path[512];
	snprintf(path, sizeof(path), "%s/%s", root, rel);
	FILE *f = fopen(path, "wb");
	if (!f)
		abort();
	if (n && fwrite(p, 1, n, f) != n)
		abort();
	fclose(f);
}

static void setup(void)
{
	const char *tmp = getenv("TMPDIR");
	snprintf(root, sizeof(root), "%s/muh_fuzz_scan_XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(root))
		abort();
	char d[512];
	snprintf(d, sizeof(d), "%s/pkg", root);
	mkdir(d, 0700);
	snprintf(d, sizeof(d), "%s/pkg/configs", root);
	mkdir(d, 0700);
	static const char json[] = "{\"1\": {\"BLOCK_SIZE_M\": 16}}\n";
	put("pkg/configs/E=8,N=64,device_name=NVIDIA_H200.json", (const uint8_t *)json,
	    sizeof(json) - 1);
	static const char dep[] = "command:\n  - vllm\n  - serve\n  - --max-num-seqs\n  - \"4\"\n";
	put("deploy.yaml", (const uint8_t *)dep, sizeof(dep) - 1);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!root[0])
		setup();
	static const char *const names[4] = {"pkg/__init__.py", "pkg/a.py", "pkg/b.py",
	                                     "pkg/kernels.py"};
	unsigned mode = size ? data[0] : 0;
	const uint8_t *p = size ? data + 1 : data, *end = data + size;
	for (int i = 0; i < 4; i++) {
		const uint8_t *q = p;
		const uint8_t *cut = NULL;
		while (q + 4 <= end) {
			if ((q == p || q[-1] == '\n') && !memcmp(q, "#--", 3) && q[3] == '\n') {
				cut = q;
				break;
			}
			q++;
		}
		size_t n = i == 3 || !cut ? (size_t)(end - p) : (size_t)(cut - p);
		put(names[i], p, n);
		p = cut && i < 3 ? cut + 4 : end;
	}
	static const char *const entries[] = {"pkg.a.main", "run"};
	scan_options opt = {0};
	opt.jobs = 1;
	opt.library = mode & 1;
	opt.device = (mode & 2) ? ((mode & 4) ? "NVIDIA H200" : "A100") : NULL;
	if (mode & 8) {
		opt.entries = entries;
		opt.nentries = 2;
	}
	opt.with_tests = (mode >> 4) & 1;
	muh_surface *s = NULL;
	muh_diag d;
	if (scan_tree(root, &opt, &s, &d) == 0 && s) {
		size_t sum = 0;
		for (size_t i = 0; i < scan_nknobs(s); i++) {
			const muh_knob *k = scan_knob(s, i);
			sum += touch(k->file) + touch(k->name) + touch(k->kind) + touch(k->scope) +
			       touch(k->value) + touch(k->eval) + touch(k->why) + touch(k->feeds) +
			       touch(k->overwritten_file) + touch(k->lookup_glob) +
			       touch(k->lookup_dir);
			if (k->start > k->end || !k->why)
				__builtin_trap();
			for (int j = 0; j < k->nevidence; j++)
				sum += touch(k->evidence[j].file) + touch(k->evidence[j].note);
			for (int j = 0; j < k->nunsafe; j++)
				sum += touch(k->unsafe_values[j]);
			for (int j = 0; j < k->nalts; j++)
				if (k->alts[j].start > k->alts[j].end)
					__builtin_trap();
			/* spans of Python knobs lie inside their file */
			for (int f = 0; f < 4; f++)
				if (!strcmp(k->file, names[f])) {
					char path[512];
					snprintf(path, sizeof(path), "%s/%s", root, names[f]);
					struct stat st;
					if (!stat(path, &st) && k->end > (uint64_t)st.st_size)
						__builtin_trap();
				}
		}
		char *json = scan_to_json(s);
		sum += touch(json);
		free(json);
		(void)sum;
		scan_free(s);
	}
	return 0;
}
