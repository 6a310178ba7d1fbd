/*
 * scan_parse_only.c — the floor under muh scan's time: tree-sitter parsing
 * alone (no fact extraction, no linking) of every file named on stdin, one
 * thread. bench/scan_bench.sh builds and runs it to show how much of a scan
 * is the parser. Prints files, bytes and CPU seconds.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <tree_sitter/api.h>

const TSLanguage *tree_sitter_python(void);

int main(void)
{
	TSParser *p = ts_parser_new();
	ts_parser_set_language(p, tree_sitter_python());
	char path[8192];
	size_t files = 0, bytes = 0;
	double cpu = 0;
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
		clock_t t0 = clock();
		TSTree *t = ts_parser_parse_string(p, NULL, buf, (uint32_t)n);
		ts_tree_delete(t);
		cpu += (double)(clock() - t0) / CLOCKS_PER_SEC;
		files++;
		bytes += (size_t)n;
		free(buf);
	}
	ts_parser_delete(p);
	printf("parse-only: %zu files, %zu bytes, %.3f s CPU, %.1f MB/s\n", files, bytes, cpu,
	       bytes / 1e6 / cpu);
	return 0;
}
