/*
 * scan_arena.c — the out-of-line half of the scan's bump arena
 * (scan_arena.h): a new block when the front one is full, and freeing them
 * all. Must never: move an allocation once made (callers keep pointers
 * into the blocks until the arena is freed).
 */
#include "scan_arena.h"

#include <stdlib.h>

/* (scan_arena.h) */
void *scan_arena_grow(scan_block **head, size_t n, size_t block)
{
	size_t cap = n > block ? n : block;
	scan_block *nb = malloc(sizeof(scan_block) + cap);
	if (!nb)
		return NULL;
	nb->next = *head;
	nb->used = n;
	nb->cap = cap;
	*head = nb;
	return nb->data;
}

/* (scan_arena.h) */
void scan_arena_free(scan_block *head)
{
	while (head) {
		scan_block *nx = head->next;
		free(head);
		head = nx;
	}
}
