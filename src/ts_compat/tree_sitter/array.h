/*
 * ts_compat/tree_sitter/array.h — the growable-array macros the Python
 * grammar's external scanner uses (see parser.h here for why these headers
 * exist). Only what scanner.c needs: init, get, back, pop, push, reserve,
 * delete. Written for muh; not a copy of upstream.
 */
#ifndef MUH_TS_COMPAT_ARRAY_H
#define MUH_TS_COMPAT_ARRAY_H

#include <assert.h>
#include <stdint.h>
#include <stdlib.h>

#define Array(T)                   \
	struct {                   \
		T *contents;       \
		uint32_t size;     \
		uint32_t capacity; \
	}

#define array_init(self) ((self)->size = 0, (self)->capacity = 0, (self)->contents = NULL)
#define array_get(self, i) (assert((uint32_t)(i) < (self)->size), &(self)->contents[i])
#define array_back(self) array_get(self, (self)->size - 1)
#define array_pop(self) ((self)->contents[--(self)->size])
#define array_delete(self) (free((self)->contents), array_init(self))
#define array_reserve(self, n) \
	ts_compat_array_reserve((void **)&(self)->contents, &(self)->capacity, sizeof(*(self)->contents), (n))
#define array_push(self, el)                                                                            \
	(ts_compat_array_reserve((void **)&(self)->contents, &(self)->capacity, sizeof(*(self)->contents), \
				 (self)->size + 1 > (self)->capacity * 2 ? (self)->size + 1 : ((self)->size + 1 > (self)->capacity ? (self)->capacity * 2 : 0)), \
	 (self)->contents[(self)->size++] = (el))

/* Grows *contents to hold at least n elements of esize bytes; aborts on
 * allocation failure (as the upstream runtime does). */
static inline void ts_compat_array_reserve(void **contents, uint32_t *capacity, size_t esize, uint32_t n)
{
	if (n <= *capacity)
		return;
	if (n < 8)
		n = 8;
	void *p = realloc(*contents, (size_t)n * esize);
	if (!p)
		abort();
	*contents = p;
	*capacity = n;
}

#endif
