/*
 * u64map.h — a hash map from uint64_t keys to uint64_t values (internal).
 *
 * Open addressing with linear probing; keys are space indices, so the map is
 * how the search knows what it has evaluated and how a replay table finds a
 * measurement. UINT64_MAX is reserved as the empty marker and cannot be a key.
 */
#ifndef MUH_U64MAP_H
#define MUH_U64MAP_H

#include <stddef.h>
#include <stdint.h>

typedef struct u64map {
	uint64_t *keys;
	uint64_t *vals;
	size_t cap; /* a power of two, or 0 before the first insert */
	size_t n;
} u64map;

/* An empty map needs no allocation: u64map m = {0}. */
void u64map_free(u64map *m);
/* Sets key -> val (replacing). Returns 0, or MUH_ENOMEM. key != UINT64_MAX. */
int u64map_put(u64map *m, uint64_t key, uint64_t val);
/* 1 and *val set when key is present, else 0 (val may be NULL). */
int u64map_get(const u64map *m, uint64_t key, uint64_t *val);

#endif
