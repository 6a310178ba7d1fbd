/*
 * curl_dl.c — libcurl opened at run time: dlopen("libcurl.so.4") on the
 * first curl_dl_open, its functions resolved into curl_dl (curl_dl.h says
 * why muh does not link it).
 *
 * Owns: the one dlopen of libcurl (never closed: libcurl keeps global state
 * and its callers' handles outlive any one call) and the error that says it
 * is missing. Must never: be called for by anything that does not talk
 * HTTP (every muh process would pay the load again), print, or exit.
 */
#include "curl_dl.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "dl_table.h"
#include "muh/muh.h"

struct curl_dl_table curl_dl;

static pthread_once_t once = PTHREAD_ONCE_INIT;
static char why[512]; /* empty: open */

/* One entry of the table: its symbol and where it goes. */
#define ENTRY(name) {"curl_" #name, (void **)&curl_dl.name}

static void open_once(void)
{
	const dl_sym e[] = {
		ENTRY(global_init), ENTRY(global_cleanup), ENTRY(easy_init),
		ENTRY(easy_setopt), ENTRY(easy_perform), ENTRY(easy_getinfo),
		ENTRY(easy_duphandle), ENTRY(easy_cleanup), ENTRY(easy_strerror),
		ENTRY(multi_init), ENTRY(multi_setopt), ENTRY(multi_add_handle),
		ENTRY(multi_remove_handle), ENTRY(multi_info_read), ENTRY(multi_socket_action),
		ENTRY(multi_cleanup), ENTRY(slist_append), ENTRY(slist_free_all),
	};
	if (!dl_open_table("MUH_LIBCURL", "libcurl.so.4", RTLD_NOW | RTLD_LOCAL, e, sizeof(e) / sizeof(e[0]),
			   "muh load and the engine backend need it (apt-get install libcurl4)",
			   "muh load and the engine backend need libcurl 7.16 or later (apt-get install libcurl4)",
			   why, sizeof(why))) {
		struct curl_dl_table none = {0};
		curl_dl = none;
	}
}

int curl_dl_open(muh_diag *d)
{
	pthread_once(&once, open_once);
	if (why[0])
		return diag_errorf(d, "%s", why), MUH_EENV;
	return MUH_OK;
}
