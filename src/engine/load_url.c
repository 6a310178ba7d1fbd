/*
 * load_url.c — whether a server URL `muh load` is given names a server
 * (see load_url.h).
 *
 * Owns: the authority of a URL (user:password@, host or [IPv6], :PORT)
 * checked before any request, so that a bad URL is a usage error, not
 * the server's. Must never: print, or reach the network.
 */
#include <stdio.h>
#include <string.h>

#include "muh/load_url.h"

/* See load_url.h: 0, or -1 with why. */
int load_url_check(const char *url, char *why, size_t n)
{
	const char *p = strstr(url, "://");
	if (!p)
		return 0;
	const char *host = p + 3, *end = host + strcspn(host, "/?#");
	for (const char *at = host; at < end; at++) /* user:password@ */
		if (*at == '@')
			host = at + 1;
	const char *colon = NULL;
	if (*host == '[') { /* [IPv6]:port */
		const char *close = memchr(host, ']', (size_t)(end - host));
		if (!close) {
			snprintf(why, n, "'%s': an IPv6 address needs its closing ']'", url);
			return -1;
		}
		if (close + 1 < end && close[1] != ':') {
			snprintf(why, n, "'%s': expected ':PORT' after the IPv6 address", url);
			return -1;
		}
		colon = close + 1 < end ? close + 1 : NULL;
	} else {
		colon = memchr(host, ':', (size_t)(end - host));
	}
	if ((colon ? colon : end) == host) {
		snprintf(why, n, "'%s' names no host", url);
		return -1;
	}
	if (!colon)
		return 0;
	const char *port = colon + 1;
	size_t len = (size_t)(end - port);
	long v = 0;
	int digits = len && strspn(port, "0123456789") >= len;
	for (size_t i = 0; digits && i < len && v <= 65535; i++)
		v = v * 10 + (port[i] - '0');
	if (!digits || v < 1 || v > 65535) {
		snprintf(why, n, "bad port '%.*s' in %s: a port is a number from 1 to 65535", (int)len, port, url);
		return -1;
	}
	return 0;
}

