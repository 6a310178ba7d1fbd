/*
 * curl_dl.h — libcurl, opened with dlopen on first use (internal).
 *
 * muh links no libcurl: loading it and the libraries it needs (ssl, krb5,
 * ldap, ...) at start was most of the 8 ms that libcurl and Open MPI cost
 * every muh process (docs/results/space.md), and only `muh load` and the
 * engine backend talk HTTP. They call curl_dl_open first; after it
 * returned MUH_OK, curl_dl holds libcurl's functions. <curl/curl.h> still
 * gives the types and constants at compile time.
 */
#ifndef MUH_CURL_DL_H
#define MUH_CURL_DL_H

#include <curl/curl.h>

#include "muh/diag.h"

/* The part of libcurl's API muh calls, under libcurl's names less "curl_". */
struct curl_dl_table {
	CURLcode (*global_init)(long flags);
	void (*global_cleanup)(void);
	CURL *(*easy_init)(void);
	CURLcode (*easy_setopt)(CURL *h, CURLoption opt, ...);
	CURLcode (*easy_perform)(CURL *h);
	CURLcode (*easy_getinfo)(CURL *h, CURLINFO info, ...);
	CURL *(*easy_duphandle)(CURL *h);
	void (*easy_cleanup)(CURL *h);
	const char *(*easy_strerror)(CURLcode cc);
	CURLM *(*multi_init)(void);
	CURLMcode (*multi_setopt)(CURLM *m, CURLMoption opt, ...);
	CURLMcode (*multi_add_handle)(CURLM *m, CURL *h);
	CURLMcode (*multi_remove_handle)(CURLM *m, CURL *h);
	CURLMsg *(*multi_info_read)(CURLM *m, int *left);
	CURLMcode (*multi_socket_action)(CURLM *m, curl_socket_t fd, int mask, int *running);
	CURLMcode (*multi_cleanup)(CURLM *m);
	struct curl_slist *(*slist_append)(struct curl_slist *l, const char *s);
	void (*slist_free_all)(struct curl_slist *l);
};

/* libcurl's functions; every entry is set once curl_dl_open returned
 * MUH_OK, none before. */
extern struct curl_dl_table curl_dl;

/* Opens libcurl.so.4 (or $MUH_LIBCURL, a test's stand-in) once per process
 * and fills curl_dl. MUH_OK; MUH_EENV with d saying what is missing and how
 * to install it, the same answer on every later call. Thread-safe. */
int curl_dl_open(muh_diag *d);

#endif
