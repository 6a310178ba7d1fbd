/*
 * test_diag_near.c — did you mean (diag_near.c): the distance against
 * distances worked out by hand (a swap of neighbours is one edit, case does
 * not count, a name past 63 bytes is far), the offer keeps the first of
 * equals and nothing at 3 or more, and the hint's words and its cut.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

#include "muh/diag.h"

static int dist(const char *a, const char *b)
{
	return diag_near_distance(a, strlen(a), b, strlen(b));
}

static void test_distance(void **state)
{
	(void)state;
	assert_int_equal(dist("tune", "tune"), 0);
	assert_int_equal(dist("", "tune"), 4);
	assert_int_equal(dist("tnue", "tune"), 1);   /* one swap */
	assert_int_equal(dist("BLOKC", "BLOCK"), 1); /* one swap */
	assert_int_equal(dist("blokc", "BLOCK"), 1); /* case does not count */
	assert_int_equal(dist("reprot", "report"), 1);
	assert_int_equal(dist("warmupz", "warmups"), 1);
	assert_int_equal(dist("kitten", "sitting"), 3);
	assert_int_equal(dist("ca", "abc"), 3); /* OSA: no edit of a swapped pair */
	assert_int_equal(dist("max_tme", "max_time"), 1);
	char longname[80];
	memset(longname, 'a', sizeof(longname) - 1);
	longname[79] = '\0';
	assert_int_equal(dist(longname, longname), 99);
}

static void test_offer(void **state)
{
	(void)state;
	const char *const names[] = {"tune", "eval", "verify", "space", "report", NULL};
	assert_string_equal(diag_near_among("tnue", 4, names), "tune");
	assert_string_equal(diag_near_among("evla", 4, names), "eval");
	assert_null(diag_near_among("xyzzy", 5, names));  /* nothing near */
	assert_null(diag_near_among("tune", 4, NULL));
	/* the first of equals: "bat" is 1 from both */
	const char *const two[] = {"cat", "bar", NULL};
	assert_string_equal(diag_near_among("bat", 3, two), "cat");
	/* only a prefix of the word counts */
	assert_string_equal(diag_near_among("tune=1", 4, names), "tune");
	diag_near n = DIAG_NEAR_INIT;
	diag_near_offer(&n, "abc", 3, NULL); /* skipped */
	diag_near_offer(&n, "abc", 3, "abd");
	assert_string_equal(n.name, "abd");
	assert_int_equal(n.dist, 1);
}

static void test_hint(void **state)
{
	(void)state;
	char b[64];
	assert_string_equal(diag_near_hint("tune", b, sizeof(b)), " (did you mean 'tune'?)");
	assert_string_equal(diag_near_hint(NULL, b, sizeof(b)), "");
	char small[8];
	assert_string_equal(diag_near_hint("tune", small, sizeof(small)), ""); /* no half a name */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_distance),
		cmocka_unit_test(test_offer),
		cmocka_unit_test(test_hint),
	};
	return cmocka_run_group_tests(tests, 0, 0);
}
