/*
 * dl_table.c — dlopen and a table of dlsym (dl_table.h).
 *
 * Owns: the names and messages of a library muh loads at run time. Must
 * never: keep state of its own (each caller keeps its handle and table).
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

#include "dl_table.h"

void *dl_open_table(const char *env, const char *dflt, int flags, const dl_sym *syms, size_t nsyms,
		    const char *need, const char *version, char *why, size_t n)
{
	const char *so = getenv(env);
	if (!so || !*so)
		so = dflt;
	void *h = dlopen(so, flags);
	if (!h) {
		snprintf(why, n, "%s not found: %s: %s", so, need, dlerror());
		return NULL;
	}
	for (size_t i = 0; i < nsyms; i++) {
		if (!(*syms[i].slot = dlsym(h, syms[i].sym))) {
			snprintf(why, n, "%s has no %s: %s", so, syms[i].sym, version);
			dlclose(h);
			return NULL;
		}
	}
	return h;
}
