/*
 * scan_ts_check.c — proof for muh scan's direct syntax-node reads
 * (src/scan/pyfile_ts.c): parses every file named on stdin with the pinned
 * Python grammar and compares every read of every node (counts, each child
 * and named child, every field, type, end byte) with tree-sitter's own
 * answer (pyts_check_tree). Prints "self-check: on|off", then files, nodes
 * compared and the files that differ; exits 0 only when the self-check
 * passed and no file differs. Run by tests/cli/scan_ts_direct.sh; builds
 * with cc like bench/scan_parse_only.c (see that test for the line).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <tree_sitter/api.h>

#include "pyfile_ts.h"

const TSLanguage *tree_sitter_python(void);

int main(void)
{
	int on = pyts_init();
	printf("self-check: %s\n", on ? "on" : "off");
	TSParser *p = ts_parser_new();
	ts_parser_set_language(p, tree_sitter_python());
	char path[8192];
	size_t files = 0, bad = 0;
	while (fgets(path, sizeof(path), stdin)) {
		path[strcspn(path, "\n")] = '\0';
		FILE *f = fopen(path, "rb");
		if (!f)
			continue;
		fseek(f, 0, SEEK_END);
		long n = ftell(f);
		fseek(f, 0, SEEK_SET);
		char *buf = malloc((size_t)n + 1);
		if (!buf || fread(buf, 1, (size_t)n, f) != (size_t)n) {
			free(buf);
			fclose(f);
			continue;
		}
		fclose(f);
		TSTree *t = ts_parser_parse_string(p, NULL, buf, (uint32_t)n);
		if (t && !pyts_check_tree(ts_tree_root_node(t), 0)) {
			printf("differs: %s\n", path);
			bad++;
		}
		ts_tree_delete(t);
		free(buf);
		files++;
	}
	ts_parser_delete(p);
	printf("files: %zu, differing: %zu\n", files, bad);
	return on && !bad && files ? 0 : 1;
}
