/*
 * load_url.h — the check of a server URL before `muh load` (or an engine
 * driving the load generator) sends anything.
 */
#ifndef MUH_LOAD_URL_H
#define MUH_LOAD_URL_H

#include <stddef.h>

#include "muh/api.h"

MUH_BEGIN_DECLS

/* Whether url's authority names a server: a host, and a port of 1 to 65535
 * when one is written (load_opts_check has checked the scheme). 0: it does;
 * else -1 with why not in why (n bytes). libcurl would only fail the first
 * request ("bad/illegal format"), and the load would count that as the
 * server's error. */
int load_url_check(const char *url, char *why, size_t n);

MUH_END_DECLS

#endif
