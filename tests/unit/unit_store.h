/*
 * unit_store.h — what the unit tests that write a store share (each test is
 * one executable, so the helpers are static inline here, not a library).
 */
#ifndef MUH_UNIT_STORE_H
#define MUH_UNIT_STORE_H

#include <stdio.h>
#include <unistd.h>

/* Removes the SQLite store at path and its -wal and -shm files, those that
 * exist, so that a test starts from no store. */
static inline void unit_rm_store(const char *path)
{
	char p[4200];
	unlink(path);
	snprintf(p, sizeof(p), "%s-wal", path);
	unlink(p);
	snprintf(p, sizeof(p), "%s-shm", path);
	unlink(p);
}

#endif
