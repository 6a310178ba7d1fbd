/*
 * test_hw.c — the hw key table (hw.h): every key has a meaning and a unit,
 * given explicitly, the unit muh prints its values in (muh transfer's
 * reasons, muh hw's meaning column): bytes for shared memory, none for a
 * count or a code; and a name that is no key has neither.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "muh/hw.h"

static void test_key_unit(void **state)
{
	(void)state;
	assert_string_equal(hw_key_unit("smem_per_block"), "bytes");
	assert_string_equal(hw_key_unit("smem_per_block_optin"), "bytes");
	assert_string_equal(hw_key_unit("smem_per_sm"), "bytes");
	assert_string_equal(hw_key_unit("l2_bytes"), "bytes");
	assert_string_equal(hw_key_unit("mem_clock_khz"), "kHz");
	assert_string_equal(hw_key_unit("bandwidth_gbs"), "GB/s");
	assert_string_equal(hw_key_unit("peak_bf16_tflops"), "TFLOP/s");
	/* counts and codes: the meaning says what is counted */
	assert_string_equal(hw_key_unit("max_threads_per_block"), "");
	assert_string_equal(hw_key_unit("warp_size"), "");
	assert_string_equal(hw_key_unit("sm_count"), "");
	assert_string_equal(hw_key_unit("cc"), "");
	assert_null(hw_key_unit("smem"));
	assert_null(hw_key_unit(""));
}

/* The meaning goes without the unit (muh hw writes "MEANING, UNIT"), and
 * every key of hw_keys has both. */
static void test_key_doc(void **state)
{
	(void)state;
	assert_string_equal(hw_key_doc("smem_per_block_optin"), "shared memory per block with opt-in");
	assert_string_equal(hw_key_doc("max_threads_per_block"), "threads per block");
	assert_null(hw_key_doc("smem"));
	for (int i = 0; hw_keys[i]; i++) {
		const char *doc = hw_key_doc(hw_keys[i]), *unit = hw_key_unit(hw_keys[i]);
		assert_non_null(doc);
		assert_non_null(unit);
		assert_true(doc[0] != '\0');
		/* no unit left at the meaning's end: ", bytes" would print twice */
		size_t dl = strlen(doc), ul = strlen(unit);
		assert_false(ul && dl >= ul && !strcmp(doc + dl - ul, unit));
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_key_unit),
		cmocka_unit_test(test_key_doc),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
