/*
 * test_textcut.c — the one rule for text that does not fit (textcut.h):
 * text that fits is copied whole; text that does not is cut before a blank
 * (never inside a word when one ends in the second half of the room), its
 * trailing blanks and commas dropped, and "... (N more characters)"
 * appended with N the UTF-8 characters left out, counted against the
 * original; one long word is cut at a character boundary, never inside a
 * UTF-8 sequence; a buffer too small for the suffix gets a plain prefix;
 * text_fmt formats the whole text first (measurement_fail's and
 * diag_errorf's path), and measurement_fail and diag_errorf cut so.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "muh/diag.h"
#include "muh/eval.h"
#include "textcut.h"

/* n copies of the word w (each followed by a blank but the last) */
static char *words(const char *w, int n)
{
	size_t l = strlen(w);
	char *s = malloc((l + 1) * (size_t)n + 1);
	size_t o = 0;
	for (int i = 0; i < n; i++) {
		memcpy(s + o, w, l);
		o += l;
		if (i + 1 < n)
			s[o++] = ' ';
	}
	s[o] = '\0';
	return s;
}

/* The N of a cut text's "... (N more characters)", or -1 when it has none. */
static long more_of(const char *s)
{
	const char *p = strstr(s, "... (");
	long n;
	if (!p || sscanf(p, "... (%ld more character", &n) != 1)
		return -1;
	return n;
}

static void test_fits(void **st)
{
	(void)st;
	char buf[16];
	assert_int_equal(text_cut(buf, sizeof(buf), "fifteen chars.."), 0);
	assert_string_equal(buf, "fifteen chars..");
	assert_int_equal(text_cut(buf, sizeof(buf), ""), 0);
	assert_string_equal(buf, "");
	assert_int_equal(text_cut(buf, sizeof(buf), NULL), 0);
	assert_string_equal(buf, "");
}

static void test_word_boundary(void **st)
{
	(void)st;
	char *t = words("alpha", 400); /* 2,399 characters */
	char buf[1024];
	size_t more = text_cut(buf, sizeof(buf), t);
	assert_true(strlen(buf) < sizeof(buf));
	const char *dots = strstr(buf, "... (");
	assert_non_null(dots);
	/* the kept text is whole words: it ends with "alpha" right before the dots */
	assert_true(dots - buf >= 5);
	assert_memory_equal(dots - 5, "alpha", 5);
	assert_int_equal((dots - buf + 1) % 6, 0);
	/* N is what was left out, counted against the original */
	assert_int_equal(more, strlen(t) - (size_t)(dots - buf));
	assert_int_equal(more_of(buf), (long)more);
	assert_string_equal(dots + 5 + snprintf(NULL, 0, "%zu", more), " more characters)");
	/* a kept prefix of the original */
	assert_memory_equal(buf, t, (size_t)(dots - buf));
	free(t);
}

static void test_commas_dropped(void **st)
{
	(void)st;
	char list[4096] = "";
	for (int i = 0; i < 200; i++)
		snprintf(list + strlen(list), sizeof(list) - strlen(list), "%s'v%03d'", i ? ", " : "", i);
	char buf[100];
	text_cut(buf, sizeof(buf), list);
	const char *dots = strstr(buf, "... (");
	assert_non_null(dots);
	assert_int_equal(dots[-1], '\''); /* "'v007'... (N more characters)", no comma before the dots */
}

static void test_one_long_word(void **st)
{
	(void)st;
	char t[3000];
	memset(t, 'x', sizeof(t) - 1);
	t[sizeof(t) - 1] = '\0';
	char buf[200];
	size_t more = text_cut(buf, sizeof(buf), t);
	const char *dots = strstr(buf, "... (");
	assert_non_null(dots);
	assert_true(dots - buf > 100); /* no boundary: cut at a character, not emptied */
	assert_int_equal(more, strlen(t) - (size_t)(dots - buf));
}

static void test_utf8(void **st)
{
	(void)st;
	/* "é" is 2 bytes, 1 character: a cut never splits it, N counts characters */
	char t[2001] = "";
	for (int i = 0; i < 1000; i++)
		strcat(t, "\xc3\xa9");
	char buf[101];
	size_t more = text_cut(buf, sizeof(buf), t);
	const char *dots = strstr(buf, "... (");
	assert_non_null(dots);
	assert_int_equal((dots - buf) % 2, 0);
	assert_int_equal(more, 1000 - (size_t)(dots - buf) / 2);
	/* a buffer too small for the suffix: a plain prefix, whole characters */
	char tiny[8];
	text_cut(tiny, sizeof(tiny), t);
	assert_int_equal(strlen(tiny), 6);
	assert_null(strstr(tiny, "..."));
}

static void test_fmt_and_users(void **st)
{
	(void)st;
	char *t = words("beta", 600);
	char buf[64];
	size_t more = text_fmt(buf, sizeof(buf), "why: %s", t);
	assert_true(more > 2900);
	assert_int_equal(more_of(buf), (long)more);
	assert_memory_equal(buf, "why: beta beta", 14);
	/* a variant's error and a diagnostic are cut the same way */
	muh_measurement m;
	measurement_init(&m);
	measurement_fail(&m, EVAL_LAUNCH_ERROR, "load: %s", t);
	assert_true(strlen(m.error) < sizeof(m.error));
	assert_non_null(strstr(m.error, "beta... ("));
	assert_int_equal(more_of(m.error), (long)(strlen(t) + 6 - (size_t)(strstr(m.error, "... (") - m.error)));
	muh_diag d;
	diag_clear(&d);
	diag_errorf(&d, "%s", t);
	assert_non_null(strstr(d.msg, "beta... ("));
	assert_true(more_of(d.msg) > 0);
	free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fits),
		cmocka_unit_test(test_word_boundary),
		cmocka_unit_test(test_commas_dropped),
		cmocka_unit_test(test_one_long_word),
		cmocka_unit_test(test_utf8),
		cmocka_unit_test(test_fmt_and_users),
	};
	return cmocka_run_group_tests(tests, 0, 0);
}
