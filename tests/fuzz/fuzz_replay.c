/*
 * fuzz_replay.c — libFuzzer harness for the CSV replay reader.
 *
 * replay_load_csv reads a path, so each input is written to a memfd and read
 * back through /proc/self/fd/N (no disk). The space is built once from a
 * fixed small spec shaped like the fused-MoE sweep (ints, a float, a string
 * param, one constraint, two problem symbols: a number and a string), at its
 * instance M=1, dtype fp8. Each input is loaded with no column map and with
 * one that renames a param, the time column and the problem column M; what
 * loaded is looked up for every configuration and its stats checked for
 * consistency (every row counted exactly once). Built only with
 * clang (-DMUH_FUZZ=ON, see cmake/fuzz.cmake).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "muh/replay.h"
#include "muh/space.h"
#include "muh/spec.h"
#include "muh/strategy.h"

static const char spec_text[] =
	"name: fuzz_replay\n"
	"target: {backend: cpu}\n"
	"params:\n"
	"  BLOCK_SIZE_M: [16, 32, 64]\n"
	"  BLOCK_SIZE_N: [32, 64]\n"
	"  num_stages: {from: 2, to: 4}\n"
	"  scale: [0.5, 1.0]\n"
	"  layout: [row, col]\n"
	"constraints:\n"
	"  - BLOCK_SIZE_M * num_stages <= 192\n"
	"problem:\n"
	"  M: [1, 256]\n"
	"  dtype: [bf16, fp8]\n";

static muh_spec *spec;
static muh_space *space;
static int fd = -1;
static char path[64];

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	muh_diag d;
	memset(&d, 0, sizeof d);
	if (spec_parse("fuzz_replay.yaml", spec_text, sizeof spec_text - 1, &spec, &d) ||
	    space_build(spec, NULL, 1, &space, &d)) { /* instance 1: M=1, dtype fp8 */
		fprintf(stderr, "fuzz_replay: fixed spec: %s\n", d.msg);
		abort();
	}
	fd = memfd_create("fuzz_replay.csv", 0);
	if (fd < 0) {
		perror("memfd_create");
		abort();
	}
	snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
	return 0;
}

static void check(const muh_replay *rp)
{
	replay_stats st;
	replay_get_stats(rp, &st);
	if (st.used > st.rows || st.failed > st.used || st.covered > st.used ||
	    st.used + st.invalid + st.outside + st.duplicate + st.other_problem != st.rows)
		__builtin_trap();
	uint32_t cfg[8];
	uint64_t nvalid = space_valid(space);
	for (uint64_t i = 0; i < nvalid; i++) {
		if (space_config_at(space, i, cfg))
			continue;
		strategy_measurement m;
		memset(&m, 0, sizeof m);
		if (replay_lookup(rp, cfg, &m) == 1 && m.status_text)
			(void)strlen(m.status_text);
		memset(&m, 0, sizeof m);
		(void)replay_objective((void *)rp, cfg, &m);
		if (m.status_text)
			(void)strlen(m.status_text);
	}
	uint64_t best;
	double t;
	(void)replay_best(rp, &best, &t);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > 65536 || ftruncate(fd, 0) || pwrite(fd, data, size, 0) != (ssize_t)size)
		return 0;
	static const char *const colmap[] = {"BLOCK_SIZE_M=bm", "time=t_ms", "M=batch", NULL};
	for (int k = 0; k < 2; k++) {
		muh_replay *rp = NULL;
		muh_diag d;
		memset(&d, 0, sizeof d);
		if (replay_load_csv(space, path, k ? colmap : NULL, &rp, &d) == 0 && rp)
			check(rp);
		replay_free(rp);
	}
	return 0;
}
