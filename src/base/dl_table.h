/*
 * dl_table.h — a library opened at run time and its functions resolved into
 * a table (internal to libmuh): libcurl for HTTP (curl_dl.c), libmpi for
 * --mpi (pool_mpi.c). muh links neither, so that a process that needs
 * neither does not pay for them or fail without them.
 */
#ifndef MUH_DL_TABLE_H
#define MUH_DL_TABLE_H

#include <stddef.h>

/* One function or object of the library, and where its address goes. */
typedef struct dl_sym {
	const char *sym;
	void **slot;
} dl_sym;

/* Opens the library the environment variable env names (a test's
 * stand-in), or dflt when env is unset or empty, with dlopen's flags, and
 * resolves every symbol of syms[0..nsyms) into its slot. Returns the
 * handle; or NULL with why (n bytes) saying "<library> not found: <need>:
 * <dlerror>" or "<library> has no <symbol>: <version>", the library closed
 * again and the slots resolved so far left as they are. */
void *dl_open_table(const char *env, const char *dflt, int flags, const dl_sym *syms, size_t nsyms,
		    const char *need, const char *version, char *why, size_t n);

#endif
