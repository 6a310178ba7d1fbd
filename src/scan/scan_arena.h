/*
 * scan_arena.h — the bump arena of the scan: a list of large blocks that
 * small allocations (strings, arrays) are cut from, 16-byte aligned, all
 * freed at once. A pyfile keeps one (pyfile_node.c), the surface another
 * (scan_surface.c). Internal to libmuh; not installed.
 */
#ifndef MUH_SCAN_ARENA_H
#define MUH_SCAN_ARENA_H

#include <stddef.h>

typedef struct scan_block {
	struct scan_block *next;
	size_t used, cap;
	char data[];
} scan_block;

/* n bytes cut from a new block put in front of *head (block bytes, or n when
 * larger); NULL, the arena unchanged, when memory ran out. n is a multiple
 * of 16. Called by scan_arena_alloc when the front block is full. */
void *scan_arena_grow(scan_block **head, size_t n, size_t block);

/* n bytes (rounded up to 16, not zeroed) in the arena *head (NULL: empty),
 * valid until scan_arena_free; new blocks hold block bytes (or n when
 * larger). NULL when memory ran out. */
static inline void *scan_arena_alloc(scan_block **head, size_t n, size_t block)
{
	n = (n + 15) & ~(size_t)15;
	scan_block *b = *head;
	if (!b || b->used + n > b->cap)
		return scan_arena_grow(head, n, block);
	void *p = b->data + b->used;
	b->used += n;
	return p;
}

/* Frees every block of the arena (NULL is fine). */
void scan_arena_free(scan_block *head);

#endif
