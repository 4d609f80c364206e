// SPDX-License-Identifier: MIT
/* Unit tests for src/base/json.c: output is captured with open_memstream() and
 * compared byte for byte. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <locale.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"

struct fixture {
	FILE *f;
	char *buf;
	size_t len;
	struct json_writer w;
};

static int setup(void **state)
{
	struct fixture *fx = calloc(1, sizeof(*fx));

	if (!fx)
		return -1;
	fx->f = open_memstream(&fx->buf, &fx->len);
	if (!fx->f) {
		free(fx);
		return -1;
	}
	json_init(&fx->w, fx->f);
	*state = fx;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *fx = *state;

	fclose(fx->f);
	free(fx->buf);
	free(fx);
	return 0;
}

/* Finish the document, check json_finish's result, return what was written. */
static const char *finish(struct fixture *fx, int want_rc)
{
	assert_int_equal(json_finish(&fx->w), want_rc);
	fflush(fx->f);
	return fx->buf;
}

#define W (&((struct fixture *)*state)->w)
#define FX ((struct fixture *)*state)
#define EXPECT(want) assert_string_equal(finish(FX, 0), want)
#define EXPECT_MISUSE(want) assert_string_equal(finish(FX, -EINVAL), want)

/* ---- structure and commas ------------------------------------------------ */

static void test_json_empty_object(void **state)
{
	json_begin_object(W);
	json_end_object(W);
	EXPECT("{}\n");
}

static void test_json_empty_array(void **state)
{
	json_begin_array(W);
	json_end_array(W);
	EXPECT("[]\n");
}

static void test_json_object_members_separated_by_commas(void **state)
{
	json_begin_object(W);
	json_kv_int(W, "a", 1);
	json_key(W, "b");
	json_begin_array(W);
	json_int(W, 1);
	json_int(W, 2);
	json_end_array(W);
	json_key(W, "c");
	json_begin_object(W);
	json_kv_string(W, "d", "x");
	json_end_object(W);
	json_end_object(W);
	EXPECT("{\"a\":1,\"b\":[1,2],\"c\":{\"d\":\"x\"}}\n");
}

/* A caller's own members, already written, go in with the commas right;
 * NULL or "" add nothing; outside an object they are misuse. */
static void test_json_raw_members(void **state)
{
	json_begin_object(W);
	json_raw_members(W, "\"first\":1");
	json_kv_int(W, "a", 2);
	json_raw_members(W, NULL);
	json_raw_members(W, "");
	json_raw_members(W, "\"b\":[3],\"c\":{}");
	json_end_object(W);
	EXPECT("{\"first\":1,\"a\":2,\"b\":[3],\"c\":{}}\n");
}

static void test_json_raw_members_outside_object(void **state)
{
	json_begin_array(W);
	json_raw_members(W, "\"a\":1");
	json_end_array(W);
	assert_int_equal(json_finish(W), -EINVAL);
}

/* Another writer's whole value, where a value goes: after a key, as an
 * array element; an empty one is misuse. */
static void test_json_raw_value(void **state)
{
	json_begin_object(W);
	json_key(W, "v");
	json_raw_value(W, "{\"pid\":1}");
	json_key(W, "l");
	json_begin_array(W);
	json_raw_value(W, "{}");
	json_raw_value(W, "2");
	json_end_array(W);
	json_end_object(W);
	EXPECT("{\"v\":{\"pid\":1},\"l\":[{},2]}\n");
}

static void test_json_raw_value_empty(void **state)
{
	json_begin_array(W);
	json_raw_value(W, "");
	json_end_array(W);
	assert_int_equal(json_finish(W), -EINVAL);
}

static void test_json_array_elements_of_every_kind(void **state)
{
	json_begin_array(W);
	json_int(W, 1);
	json_string(W, "two");
	json_bool(W, true);
	json_bool(W, false);
	json_null(W);
	json_uint(W, 7);
	json_double(W, 0.5, 6);
	json_begin_array(W);
	json_end_array(W);
	json_begin_object(W);
	json_end_object(W);
	json_end_array(W);
	EXPECT("[1,\"two\",true,false,null,7,0.5,[],{}]\n");
}

static void test_json_nested_containers_commas(void **state)
{
	json_begin_array(W);
	json_begin_array(W);
	json_int(W, 1);
	json_int(W, 2);
	json_end_array(W);
	json_begin_array(W);
	json_int(W, 3);
	json_end_array(W);
	json_begin_object(W);
	json_key(W, "a");
	json_begin_array(W);
	json_begin_object(W);
	json_end_object(W);
	json_begin_object(W);
	json_kv_bool(W, "b", false);
	json_end_object(W);
	json_end_array(W);
	json_key(W, "c");
	json_begin_object(W);
	json_end_object(W);
	json_end_object(W);
	json_begin_array(W);
	json_begin_array(W);
	json_end_array(W);
	json_end_array(W);
	json_end_array(W);
	EXPECT("[[1,2],[3],{\"a\":[{},{\"b\":false}],\"c\":{}},[[]]]\n");
}

static void test_json_comma_state_restored_after_inner_container(void **state)
{
	/* The inner object's "first" must not leak into the outer one. */
	json_begin_object(W);
	json_key(W, "o");
	json_begin_object(W);
	json_end_object(W);
	json_kv_int(W, "n", 1);
	json_key(W, "a");
	json_begin_array(W);
	json_end_array(W);
	json_kv_int(W, "m", 2);
	json_end_object(W);
	EXPECT("{\"o\":{},\"n\":1,\"a\":[],\"m\":2}\n");
}

static void test_json_kv_shorthands(void **state)
{
	json_begin_object(W);
	json_kv_string(W, "s", "x");
	json_kv_string(W, "z", NULL);
	json_kv_int(W, "i", -1);
	json_kv_uint(W, "u", 42);
	json_kv_double(W, "d", 2.5, 6);
	json_kv_bool(W, "t", true);
	json_kv_bool(W, "f", false);
	json_end_object(W);
	EXPECT("{\"s\":\"x\",\"z\":null,\"i\":-1,\"u\":42,\"d\":2.5,\"t\":true,\"f\":false}\n");
}

static void test_json_key_then_null_value(void **state)
{
	json_begin_object(W);
	json_key(W, "n");
	json_null(W);
	json_end_object(W);
	EXPECT("{\"n\":null}\n");
}

static void test_json_empty_key_and_string(void **state)
{
	json_begin_object(W);
	json_kv_string(W, "", "");
	json_end_object(W);
	EXPECT("{\"\":\"\"}\n");
}

static void test_json_top_level_string(void **state)
{
	json_string(W, "x");
	EXPECT("\"x\"\n");
}

static void test_json_top_level_number(void **state)
{
	json_int(W, 42);
	EXPECT("42\n");
}

static void test_json_top_level_null(void **state)
{
	json_null(W);
	EXPECT("null\n");
}

static void test_json_max_depth_is_allowed(void **state)
{
	int i;

	for (i = 0; i < JSON_MAX_DEPTH; i++)
		json_begin_array(W);
	json_int(W, 1);
	for (i = 0; i < JSON_MAX_DEPTH; i++)
		json_end_array(W);
	EXPECT("[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]\n");
}

/* ---- numbers ------------------------------------------------------------- */

static void test_json_int_limits(void **state)
{
	json_begin_array(W);
	json_int(W, INT64_MIN);
	json_int(W, -1);
	json_int(W, 0);
	json_int(W, INT64_MAX);
	json_end_array(W);
	EXPECT("[-9223372036854775808,-1,0,9223372036854775807]\n");
}

static void test_json_uint_limits(void **state)
{
	json_begin_array(W);
	json_uint(W, 0);
	json_uint(W, (uint64_t)INT64_MAX + 1);
	json_uint(W, UINT64_MAX);
	json_end_array(W);
	EXPECT("[0,9223372036854775808,18446744073709551615]\n");
}

static void test_json_double_precision(void **state)
{
	json_begin_array(W);
	json_double(W, 1.5, 6);
	json_double(W, 1.0 / 3.0, 3);
	json_double(W, 0.1, 17);
	json_double(W, 2.0, 6);
	json_double(W, -12.25, 6);
	json_double(W, 123456789.0, 3);
	json_end_array(W);
	EXPECT("[1.5,0.333,0.10000000000000001,2,-12.25,1.23e+08]\n");
}

static void test_json_double_exponents_and_extremes(void **state)
{
	json_begin_array(W);
	json_double(W, 1e20, 6);
	json_double(W, 1e-7, 6);
	json_double(W, -0.0, 6);
	json_double(W, 1.7976931348623157e308, 17);
	json_double(W, 4.9406564584124654e-324, 17);
	json_end_array(W);
	EXPECT("[1e+20,1e-07,-0,1.7976931348623157e+308,4.9406564584124654e-324]\n");
}

static void test_json_double_nonfinite_is_null(void **state)
{
	json_begin_object(W);
	json_kv_double(W, "nan", NAN, 6);
	json_kv_double(W, "-nan", -NAN, 6);
	json_kv_double(W, "inf", INFINITY, 6);
	json_kv_double(W, "-inf", -INFINITY, 6);
	json_end_object(W);
	EXPECT("{\"nan\":null,\"-nan\":null,\"inf\":null,\"-inf\":null}\n");
}

static void test_json_double_digits_clamped(void **state)
{
	json_begin_array(W);
	json_double(W, 0.25, 0);   /* at least 1 digit, not %g's default of 6 */
	json_double(W, 0.25, -3);
	json_double(W, 0.1, 100);  /* at most 17: enough to round-trip */
	json_end_array(W);
	EXPECT("[0.2,0.2,0.10000000000000001]\n");
}

static void test_json_double_ignores_locale_decimal_comma(void **state)
{
	static const char *const locales[] = {
		"de_DE.UTF-8", "de_DE.utf8", "fr_FR.UTF-8", "fr_FR.utf8",
		"ru_RU.UTF-8", "ru_RU.utf8", "nl_NL.UTF-8", "de_DE",
	};
	const char *old = setlocale(LC_NUMERIC, NULL);
	char *saved = strdup(old ? old : "C");
	size_t i;
	bool found = false;

	assert_non_null(saved);
	for (i = 0; i < sizeof(locales) / sizeof(locales[0]) && !found; i++)
		found = setlocale(LC_NUMERIC, locales[i]) != NULL;
	if (!found || localeconv()->decimal_point[0] == '.') {
		setlocale(LC_NUMERIC, saved);
		free(saved);
		skip(); /* no locale with a decimal comma installed */
	}
	json_begin_array(W);
	json_double(W, 1.5, 6);
	json_double(W, -2.5e-7, 6);
	json_end_array(W);
	setlocale(LC_NUMERIC, saved);
	free(saved);
	EXPECT("[1.5,-2.5e-07]\n");
}

/* ---- strings ------------------------------------------------------------- */

static void test_json_string_escapes_quote_and_backslash(void **state)
{
	json_string(W, "a\"b\\c");
	EXPECT("\"a\\\"b\\\\c\"\n");
}

static void test_json_string_short_escapes(void **state)
{
	json_string(W, "\b\f\n\r\t");
	EXPECT("\"\\b\\f\\n\\r\\t\"\n");
}

static void test_json_string_every_control_char(void **state)
{
	/* expected[c] is how byte c (1..0x1f) must be written. */
	static const char *const expected[0x20] = {
		[0x01] = "\\u0001", [0x02] = "\\u0002", [0x03] = "\\u0003",
		[0x04] = "\\u0004", [0x05] = "\\u0005", [0x06] = "\\u0006",
		[0x07] = "\\u0007", [0x08] = "\\b",     [0x09] = "\\t",
		[0x0a] = "\\n",     [0x0b] = "\\u000b", [0x0c] = "\\f",
		[0x0d] = "\\r",     [0x0e] = "\\u000e", [0x0f] = "\\u000f",
		[0x10] = "\\u0010", [0x11] = "\\u0011", [0x12] = "\\u0012",
		[0x13] = "\\u0013", [0x14] = "\\u0014", [0x15] = "\\u0015",
		[0x16] = "\\u0016", [0x17] = "\\u0017", [0x18] = "\\u0018",
		[0x19] = "\\u0019", [0x1a] = "\\u001a", [0x1b] = "\\u001b",
		[0x1c] = "\\u001c", [0x1d] = "\\u001d", [0x1e] = "\\u001e",
		[0x1f] = "\\u001f",
	};
	char in[2] = { 0, 0 };
	char want[4096] = "[";
	int c;

	json_begin_array(W);
	for (c = 1; c < 0x20; c++) {
		in[0] = (char)c;
		json_string(W, in);
		if (c > 1)
			strcat(want, ",");
		strcat(want, "\"");
		strcat(want, expected[c]);
		strcat(want, "\"");
	}
	json_end_array(W);
	strcat(want, "]\n");
	EXPECT(want);
}

static void test_json_string_control_chars_inside_text(void **state)
{
	json_string(W, "a\x01" "b\x1f" "c\x1b[0m\td");
	EXPECT("\"a\\u0001b\\u001fc\\u001b[0m\\td\"\n");
}

static void test_json_string_passes_del_slash_and_utf8(void **state)
{
	json_string(W, "\x7f/\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80 ~");
	EXPECT("\"\x7f/\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80 ~\"\n");
}

/* Bytes that are not UTF-8 would make the document invalid JSON: each
 * becomes \ufffd; well-formed sequences around them pass through. */
static void test_json_string_invalid_utf8_bytes_replaced(void **state)
{
	json_string(W, "\xff\x80\xfe");
	EXPECT("\"\\ufffd\\ufffd\\ufffd\"\n");
}

static void test_json_string_utf8_checked_strictly(void **state)
{
	json_begin_array(W);
	json_string(W, "a\xc3\xa9" "b");            /* U+00E9: kept */
	json_string(W, "\xf0\x9f\x98\x80");           /* U+1F600: kept */
	json_string(W, "\xc0\xaf");                   /* overlong '/' */
	json_string(W, "\xed\xa0\x80");               /* a surrogate */
	json_string(W, "\xf4\x90\x80\x80");           /* above U+10FFFF */
	json_string(W, "\xe2\x82");                   /* cut short at the end */
	json_string(W, "\xe2\x82x");                  /* cut short inside */
	json_end_array(W);
	EXPECT("[\"a\xc3\xa9" "b\",\"\xf0\x9f\x98\x80\",\"\\ufffd\\ufffd\","
	       "\"\\ufffd\\ufffd\\ufffd\",\"\\ufffd\\ufffd\\ufffd\\ufffd\","
	       "\"\\ufffd\\ufffd\",\"\\ufffd\\ufffdx\"]\n");
}

static void test_json_string_null_writes_null(void **state)
{
	json_begin_array(W);
	json_string(W, NULL);
	json_string(W, "");
	json_end_array(W);
	EXPECT("[null,\"\"]\n");
}

static void test_json_keys_are_escaped(void **state)
{
	json_begin_object(W);
	json_kv_int(W, "a\"b\\c\n\x01", 1);
	json_end_object(W);
	EXPECT("{\"a\\\"b\\\\c\\n\\u0001\":1}\n");
}

/* ---- misuse -------------------------------------------------------------- */

static void test_json_end_object_with_array_open_fails(void **state)
{
	json_begin_array(W);
	json_end_object(W);
	EXPECT_MISUSE("[\n");
}

static void test_json_end_array_with_object_open_fails(void **state)
{
	json_begin_object(W);
	json_end_array(W);
	EXPECT_MISUSE("{\n");
}

static void test_json_end_object_without_begin_fails(void **state)
{
	json_end_object(W);
	EXPECT_MISUSE("\n");
}

static void test_json_end_array_without_begin_fails(void **state)
{
	json_end_array(W);
	EXPECT_MISUSE("\n");
}

static void test_json_extra_close_after_document_fails(void **state)
{
	json_begin_object(W);
	json_end_object(W);
	json_end_object(W);
	EXPECT_MISUSE("{}\n");
}

static void test_json_value_in_object_without_key_fails(void **state)
{
	json_begin_object(W);
	json_int(W, 1);
	EXPECT_MISUSE("{\n");
}

static void test_json_string_in_object_without_key_fails(void **state)
{
	json_begin_object(W);
	json_kv_int(W, "a", 1);
	json_string(W, "b"); /* the previous key was used up by 1 */
	EXPECT_MISUSE("{\"a\":1\n");
}

static void test_json_container_in_object_without_key_fails(void **state)
{
	json_begin_object(W);
	json_begin_array(W);
	EXPECT_MISUSE("{\n");
}

static void test_json_key_at_top_level_fails(void **state)
{
	json_key(W, "a");
	EXPECT_MISUSE("\n");
}

static void test_json_key_in_array_fails(void **state)
{
	json_begin_array(W);
	json_key(W, "a");
	EXPECT_MISUSE("[\n");
}

static void test_json_two_keys_in_a_row_fails(void **state)
{
	json_begin_object(W);
	json_key(W, "a");
	json_key(W, "b");
	EXPECT_MISUSE("{\"a\":\n");
}

static void test_json_close_after_dangling_key_fails(void **state)
{
	json_begin_object(W);
	json_key(W, "a");
	json_end_object(W);
	EXPECT_MISUSE("{\"a\":\n");
}

static void test_json_null_key_fails(void **state)
{
	json_begin_object(W);
	json_key(W, NULL);
	EXPECT_MISUSE("{\n");
}

static void test_json_depth_overflow_fails(void **state)
{
	int i;

	for (i = 0; i < JSON_MAX_DEPTH + 1; i++)
		json_begin_array(W);
	for (i = 0; i < JSON_MAX_DEPTH + 1; i++)
		json_end_array(W);
	EXPECT_MISUSE("[[[[[[[[[[[[[[[[\n");
}

static void test_json_second_top_level_value_fails(void **state)
{
	json_int(W, 1);
	json_int(W, 2);
	EXPECT_MISUSE("1\n");
}

static void test_json_second_top_level_container_fails(void **state)
{
	json_begin_object(W);
	json_end_object(W);
	json_begin_array(W);
	json_end_array(W);
	EXPECT_MISUSE("{}\n");
}

static void test_json_unclosed_container_at_finish_fails(void **state)
{
	json_begin_object(W);
	json_kv_int(W, "a", 1);
	EXPECT_MISUSE("{\"a\":1\n");
}

static void test_json_dangling_key_at_finish_fails(void **state)
{
	json_begin_object(W);
	json_key(W, "a");
	EXPECT_MISUSE("{\"a\":\n");
}

static void test_json_empty_document_fails(void **state)
{
	EXPECT_MISUSE("\n");
}

static void test_json_failed_flag_is_set_at_misuse(void **state)
{
	json_begin_array(W);
	assert_false(W->failed);
	json_end_object(W);
	assert_true(W->failed);
	EXPECT_MISUSE("[\n");
}

static void test_json_nothing_written_after_misuse(void **state)
{
	/* Once failed, even well-formed calls write nothing more. */
	json_begin_array(W);
	json_int(W, 1);
	json_key(W, "bad");
	json_int(W, 2);
	json_string(W, "x");
	json_end_array(W);
	EXPECT_MISUSE("[1\n");
}

/* ---- stream errors ------------------------------------------------------- */

static void test_json_write_error_is_eio(void **state)
{
	struct json_writer w;
	FILE *f = fopen("/dev/full", "w");

	(void)state;
	if (!f)
		skip();
	json_init(&w, f);
	json_begin_object(&w);
	json_kv_string(&w, "a", "b");
	json_end_object(&w);
	assert_int_equal(json_finish(&w), -EIO);
	fclose(f);
}

static void test_json_misuse_reported_before_write_error(void **state)
{
	struct json_writer w;
	FILE *f = fopen("/dev/full", "w");

	(void)state;
	if (!f)
		skip();
	json_init(&w, f);
	json_begin_object(&w);
	assert_int_equal(json_finish(&w), -EINVAL);
	fclose(f);
}

#define T(name) cmocka_unit_test_setup_teardown(name, setup, teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_json_empty_object),
		T(test_json_empty_array),
		T(test_json_object_members_separated_by_commas),
		T(test_json_array_elements_of_every_kind),
		T(test_json_nested_containers_commas),
		T(test_json_comma_state_restored_after_inner_container),
		T(test_json_kv_shorthands),
		T(test_json_raw_members),
		T(test_json_raw_members_outside_object),
		T(test_json_raw_value),
		T(test_json_raw_value_empty),
		T(test_json_key_then_null_value),
		T(test_json_empty_key_and_string),
		T(test_json_top_level_string),
		T(test_json_top_level_number),
		T(test_json_top_level_null),
		T(test_json_max_depth_is_allowed),
		T(test_json_int_limits),
		T(test_json_uint_limits),
		T(test_json_double_precision),
		T(test_json_double_exponents_and_extremes),
		T(test_json_double_nonfinite_is_null),
		T(test_json_double_digits_clamped),
		T(test_json_double_ignores_locale_decimal_comma),
		T(test_json_string_escapes_quote_and_backslash),
		T(test_json_string_short_escapes),
		T(test_json_string_every_control_char),
		T(test_json_string_control_chars_inside_text),
		T(test_json_string_passes_del_slash_and_utf8),
		T(test_json_string_invalid_utf8_bytes_replaced),
		T(test_json_string_utf8_checked_strictly),
		T(test_json_string_null_writes_null),
		T(test_json_keys_are_escaped),
		T(test_json_end_object_with_array_open_fails),
		T(test_json_end_array_with_object_open_fails),
		T(test_json_end_object_without_begin_fails),
		T(test_json_end_array_without_begin_fails),
		T(test_json_extra_close_after_document_fails),
		T(test_json_value_in_object_without_key_fails),
		T(test_json_string_in_object_without_key_fails),
		T(test_json_container_in_object_without_key_fails),
		T(test_json_key_at_top_level_fails),
		T(test_json_key_in_array_fails),
		T(test_json_two_keys_in_a_row_fails),
		T(test_json_close_after_dangling_key_fails),
		T(test_json_null_key_fails),
		T(test_json_depth_overflow_fails),
		T(test_json_second_top_level_value_fails),
		T(test_json_second_top_level_container_fails),
		T(test_json_unclosed_container_at_finish_fails),
		T(test_json_dangling_key_at_finish_fails),
		T(test_json_empty_document_fails),
		T(test_json_failed_flag_is_set_at_misuse),
		T(test_json_nothing_written_after_misuse),
		cmocka_unit_test(test_json_write_error_is_eio),
		cmocka_unit_test(test_json_misuse_reported_before_write_error),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
