/*
 * ts_compat/tree_sitter/array.h — the growable-array macros the Python
 * grammar's external scanner uses (see parser.h here for why these headers
 * exist). Only what scanner.c needs: init, get, back, pop, push, reserve,
 * delete. Written for muh; not a copy of upstream.
 *
 * Each array holds its first ARRAY_SMALL elements inside itself: the
 * scanner's deserialize, run at nearly every token, deletes both of its
 * arrays and pushes one element again, which with heap storage was a free,
 * a free and a malloc each time (0.5 G instructions of a cold scan of
 * SGLang 0.5.10). contents points at the inline elements until an array
 * outgrows them; delete frees only heap storage. An array must not be
 * copied or moved while it points at its own elements (the scanner's live
 * in one calloc'd Scanner).
 */
#ifndef MUH_TS_COMPAT_ARRAY_H
#define MUH_TS_COMPAT_ARRAY_H

#include <assert.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define ARRAY_SMALL 16

#define Array(T)                        \
	struct {                        \
		T *contents;            \
		uint32_t size;          \
		uint32_t capacity;      \
		T small[ARRAY_SMALL];   \
	}

#define array_init(self) \
	((self)->size = 0, (self)->capacity = ARRAY_SMALL, (self)->contents = (self)->small)
#define array_get(self, i) (assert((uint32_t)(i) < (self)->size), &(self)->contents[i])
#define array_back(self) array_get(self, (self)->size - 1)
#define array_pop(self) ((self)->contents[--(self)->size])
#define array_delete(self) \
	((self)->contents != (self)->small ? free((self)->contents) : (void)0, array_init(self))
#define array_reserve(self, n)                                                                     \
	ts_compat_array_reserve((void **)&(self)->contents, &(self)->capacity, sizeof(*(self)->contents), \
				(n), (self)->small)
#define array_push(self, el)                                                                            \
	(ts_compat_array_reserve((void **)&(self)->contents, &(self)->capacity, sizeof(*(self)->contents), \
				 (self)->size + 1 > (self)->capacity * 2 ? (self)->size + 1 : ((self)->size + 1 > (self)->capacity ? (self)->capacity * 2 : 0), \
				 (self)->small), \
	 (self)->contents[(self)->size++] = (el))

/* Grows *contents to hold at least n elements of esize bytes, moving them
 * off the inline elements small (capacity ARRAY_SMALL) when it still
 * points there; aborts on allocation failure (as the upstream runtime
 * does). */
static inline void ts_compat_array_reserve(void **contents, uint32_t *capacity, size_t esize, uint32_t n,
                                           void *small)
{
	if (n <= *capacity)
		return;
	if (n < 8)
		n = 8;
	void *p;
	if (*contents == small) {
		p = malloc((size_t)n * esize);
		if (p)
			memcpy(p, small, (size_t)*capacity * esize);
	} else {
		p = realloc(*contents, (size_t)n * esize);
	}
	if (!p)
		abort();
	*contents = p;
	*capacity = n;
}

#endif
