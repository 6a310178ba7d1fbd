/*
 * test_textout.c — where libmuh's text goes (textout.h): printf-style
 * pieces reach the stream they were written to, in order, whole however
 * long (past the 1024-byte stack buffer too); a flush arrives as NULL; a
 * NULL textout or write drops everything; and the shared number formats:
 * times in ns, us, ms and s, counts with thousands separators.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "muh/textout.h"

/* What a textout received: each stream's text, and its flushes. */
struct seen {
	char text[3][4096];
	int flushes[3];
};

static void seen_write(void *ctx, int stream, const char *text)
{
	struct seen *s = ctx;
	if (!text)
		s->flushes[stream]++;
	else
		strncat(s->text[stream], text, sizeof(s->text[stream]) - strlen(s->text[stream]) - 1);
}

static void test_streams(void **state)
{
	(void)state;
	struct seen s;
	memset(&s, 0, sizeof(s));
	textout o = {.write = seen_write, .ctx = &s};
	textout_printf(&o, TEXTOUT_RESULT, "best %d", 42);
	textout_printf(&o, TEXTOUT_NOTE, "muh tune: %s\n", "note");
	textout_str(&o, TEXTOUT_RESULT, "\n");
	textout_flush(&o, TEXTOUT_RESULT);
	assert_string_equal(s.text[TEXTOUT_RESULT], "best 42\n");
	assert_string_equal(s.text[TEXTOUT_NOTE], "muh tune: note\n");
	assert_int_equal(s.flushes[TEXTOUT_RESULT], 1);
	assert_int_equal(s.flushes[TEXTOUT_NOTE], 0);
}

static void test_long_text(void **state)
{
	(void)state;
	struct seen s;
	memset(&s, 0, sizeof(s));
	textout o = {.write = seen_write, .ctx = &s};
	char big[3000];
	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	textout_printf(&o, TEXTOUT_RESULT, "<%s>", big);
	assert_int_equal(strlen(s.text[TEXTOUT_RESULT]), sizeof(big) + 1);
	assert_int_equal(s.text[TEXTOUT_RESULT][0], '<');
	assert_int_equal(s.text[TEXTOUT_RESULT][sizeof(big)], '>');
}

static void test_dropped(void **state)
{
	(void)state;
	textout none = {0};
	textout_printf(NULL, TEXTOUT_RESULT, "%s", "nowhere");
	textout_printf(&none, TEXTOUT_NOTE, "%s", "nowhere");
	textout_str(&none, TEXTOUT_RESULT, "nowhere");
	textout_flush(NULL, TEXTOUT_RESULT);
}

static void test_formats(void **state)
{
	(void)state;
	char b[64];
	text_time(b, sizeof(b), NAN);
	assert_string_equal(b, "-");
	/* every time to 4 significant digits, whatever its unit, so that the
	 * times of one table read alike (a table once showed 1.2 ms beside
	 * 1.170 ms and 574.1 us) */
	text_time(b, sizeof(b), 12.5e-9);
	assert_string_equal(b, "12.50 ns");
	text_time(b, sizeof(b), 36.7e-6);
	assert_string_equal(b, "36.70 us");
	text_time(b, sizeof(b), 574.1e-6);
	assert_string_equal(b, "574.1 us");
	text_time(b, sizeof(b), 1.17e-3);
	assert_string_equal(b, "1.170 ms");
	text_time(b, sizeof(b), 0.0123456);
	assert_string_equal(b, "12.35 ms");
	text_time(b, sizeof(b), 0.1176);
	assert_string_equal(b, "117.6 ms");
	text_time(b, sizeof(b), 2.5);
	assert_string_equal(b, "2.500 s");
	text_time(b, sizeof(b), 4321.2);
	assert_string_equal(b, "4321 s");
	/* rounded before the unit is chosen: never "1000.0 us" */
	text_time(b, sizeof(b), 999.96e-6);
	assert_string_equal(b, "1.000 ms");
	text_time(b, sizeof(b), 9.9996e-3);
	assert_string_equal(b, "10.00 ms");
	assert_string_equal(text_count(b, sizeof(b), 0), "0");
	assert_string_equal(text_count(b, sizeof(b), 999), "999");
	assert_string_equal(text_count(b, sizeof(b), 1920), "1,920");
	assert_string_equal(text_count(b, sizeof(b), 1234567), "1,234,567");
	assert_string_equal(text_count(b, sizeof(b), -1234), "-1,234");
	assert_string_equal(text_count(b, sizeof(b), 2e18), "2e+18");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_streams),
		cmocka_unit_test(test_long_text),
		cmocka_unit_test(test_dropped),
		cmocka_unit_test(test_formats),
	};
	return cmocka_run_group_tests(tests, 0, 0);
}
