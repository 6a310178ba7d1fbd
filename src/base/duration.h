/*
 * duration.h — reading a duration ("90", "90s", "15m", "1h30m", "2.5h",
 * "500ms") in seconds. Internal to libmuh.
 */
#ifndef MUH_DURATION_H
#define MUH_DURATION_H

/* A duration such as "90", "90s", "15m", "1h30m", "2.5h" or "500ms" in
 * seconds: decimal numbers, each with an optional unit (h, m, s, ms), no
 * spaces. Returns 0 with *seconds set, or -1 when malformed or not
 * positive (*seconds untouched). */
int duration_parse(const char *s, double *seconds);

#endif
