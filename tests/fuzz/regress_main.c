/*
 * regress_main.c — runs a fuzz harness on files, without libFuzzer.
 *
 * Linked with one harness (fuzz_*.c) in the normal build, so that every input
 * under tests/fuzz/regress/ (crashes found by fuzzing, kept after the fix)
 * is replayed by ctest with any compiler. Usage: fuzz_X_regress FILE...
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv) __attribute__((weak));

int main(int argc, char **argv)
{
	if (LLVMFuzzerInitialize)
		LLVMFuzzerInitialize(&argc, &argv);
	for (int i = 1; i < argc; i++) {
		FILE *f = fopen(argv[i], "rb");
		if (!f) {
			perror(argv[i]);
			return 1;
		}
		size_t cap = 4096, n = 0, got;
		uint8_t *b = malloc(cap);
		while (b && (got = fread(b + n, 1, cap - n, f)) > 0) {
			n += got;
			if (n == cap) {
				uint8_t *nb = realloc(b, cap *= 2);
				if (!nb)
					free(b);
				b = nb;
			}
		}
		fclose(f);
		if (!b) {
			fprintf(stderr, "%s: out of memory\n", argv[i]);
			return 1;
		}
		LLVMFuzzerTestOneInput(b, n);
		free(b);
	}
	printf("%d inputs, no crash\n", argc - 1);
	return 0;
}
