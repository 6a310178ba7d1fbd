/*
 * u64map.c — see u64map.h. The table doubles when it is half full, so a
 * probe sequence stays short; nothing is ever removed.
 */
#include "u64map.h"

#include <assert.h>
#include <stdlib.h>

#include "muh/muh.h"

static size_t slot(uint64_t key, size_t cap)
{
	key ^= key >> 33;
	key *= 0xff51afd7ed558ccdULL;
	key ^= key >> 33;
	return (size_t)key & (cap - 1);
}

void u64map_free(u64map *m)
{
	free(m->keys);
	free(m->vals);
	m->keys = m->vals = NULL;
	m->cap = m->n = 0;
}

static int grow(u64map *m)
{
	size_t cap = m->cap ? m->cap * 2 : 64;
	uint64_t *k = malloc(cap * sizeof(*k)), *v = malloc(cap * sizeof(*v));
	if (!k || !v) {
		free(k);
		free(v);
		return MUH_ENOMEM;
	}
	for (size_t i = 0; i < cap; i++)
		k[i] = UINT64_MAX;
	for (size_t i = 0; i < m->cap; i++) {
		if (m->keys[i] == UINT64_MAX)
			continue;
		size_t j = slot(m->keys[i], cap);
		while (k[j] != UINT64_MAX)
			j = (j + 1) & (cap - 1);
		k[j] = m->keys[i];
		v[j] = m->vals[i];
	}
	free(m->keys);
	free(m->vals);
	m->keys = k;
	m->vals = v;
	m->cap = cap;
	return MUH_OK;
}

int u64map_put(u64map *m, uint64_t key, uint64_t val)
{
	assert(key != UINT64_MAX);
	if (2 * (m->n + 1) > m->cap && grow(m))
		return MUH_ENOMEM;
	size_t j = slot(key, m->cap);
	while (m->keys[j] != UINT64_MAX && m->keys[j] != key)
		j = (j + 1) & (m->cap - 1);
	if (m->keys[j] == UINT64_MAX)
		m->n++;
	m->keys[j] = key;
	m->vals[j] = val;
	return MUH_OK;
}

int u64map_get(const u64map *m, uint64_t key, uint64_t *val)
{
	if (!m->cap)
		return 0;
	size_t j = slot(key, m->cap);
	while (m->keys[j] != UINT64_MAX) {
		if (m->keys[j] == key) {
			if (val)
				*val = m->vals[j];
			return 1;
		}
		j = (j + 1) & (m->cap - 1);
	}
	return 0;
}
