// SPDX-License-Identifier: MIT
/* Unit tests for src/base/units.c: parse_size, parse_duration, parse_pid_list,
 * format_bytes, format_duration. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "units.h"

#define KiB (UINT64_C(1) << 10)
#define MiB (UINT64_C(1) << 20)
#define GiB (UINT64_C(1) << 30)
#define TiB (UINT64_C(1) << 40)

#define NS_US UINT64_C(1000)
#define NS_MS UINT64_C(1000000)
#define NS_S  UINT64_C(1000000000)

/* The input is printed on failure; cmocka reports the line of the call. */
#define CHECK_PARSE(fn, str, want_rc, want_val)                                  \
	do {                                                                     \
		const uint64_t sentinel_ = UINT64_C(0x5a5a5a5a5a5a5a5a);         \
		uint64_t v_ = sentinel_;                                         \
		int rc_ = fn(str, &v_);                                          \
		if (rc_ != (want_rc) || (rc_ == 0 && v_ != (uint64_t)(want_val))) \
			print_message(#fn "(\"%s\") = %d, %" PRIu64               \
				      "; want %d, %" PRIu64 "\n",                  \
				      (str), rc_, v_, (int)(want_rc),              \
				      (uint64_t)(want_val));                       \
		assert_int_equal(rc_, (want_rc));                                \
		if (rc_ == 0)                                                    \
			assert_int_equal(v_, (uint64_t)(want_val));              \
		else /* the result is only written on success */                 \
			assert_int_equal(v_, sentinel_);                         \
	} while (0)

#define SIZE_OK(str, want)      CHECK_PARSE(parse_size, str, 0, want)
#define SIZE_ERR(str, err)      CHECK_PARSE(parse_size, str, err, 0)
#define DURATION_OK(str, want)  CHECK_PARSE(parse_duration, str, 0, want)
#define DURATION_ERR(str, err)  CHECK_PARSE(parse_duration, str, err, 0)

/* ---- parse_size ---------------------------------------------------------- */

static void test_parse_size_plain_number_is_bytes(void **state)
{
	(void)state;
	SIZE_OK("0", 0);
	SIZE_OK("1", 1);
	SIZE_OK("812", 812);
	SIZE_OK("007", 7);
	SIZE_OK("1048576", MiB);
}

static void test_parse_size_b_suffix_is_bytes(void **state)
{
	(void)state;
	SIZE_OK("512B", 512);
	SIZE_OK("512b", 512);
	SIZE_OK("0B", 0);
}

static void test_parse_size_unit_letter_any_case(void **state)
{
	(void)state;
	SIZE_OK("1K", KiB);
	SIZE_OK("1k", KiB);
	SIZE_OK("2M", 2 * MiB);
	SIZE_OK("2m", 2 * MiB);
	SIZE_OK("3G", 3 * GiB);
	SIZE_OK("3g", 3 * GiB);
	SIZE_OK("4T", 4 * TiB);
	SIZE_OK("4t", 4 * TiB);
}

static void test_parse_size_unit_with_ib(void **state)
{
	(void)state;
	SIZE_OK("1KiB", KiB);
	SIZE_OK("1kiB", KiB);
	SIZE_OK("10MiB", 10 * MiB);
	SIZE_OK("3GiB", 3 * GiB);
	SIZE_OK("4TiB", 4 * TiB);
	SIZE_OK("0GiB", 0);
}

static void test_parse_size_decimal_rounds_to_nearest_byte(void **state)
{
	(void)state;
	SIZE_OK("1.5GiB", 1610612736);
	SIZE_OK("0.5K", 512);
	SIZE_OK("0.1K", 102);      /* 102.4 */
	SIZE_OK("0.6K", 614);      /* 614.4 */
	SIZE_OK("0.7K", 717);      /* 716.8 */
	SIZE_OK("1.4B", 1);
	SIZE_OK("1.6B", 2);
	SIZE_OK("0.49B", 0);
	SIZE_OK("0.0009765625K", 1);
	SIZE_OK("2.000", 2);
	SIZE_OK("0.25T", TiB / 4);
}

static void test_parse_size_decimal_tie_rounds_up(void **state)
{
	(void)state;
	SIZE_OK("0.5B", 1);
	SIZE_OK("2.5", 3);
	SIZE_OK("0.00048828125K", 1);  /* exactly 0.5 byte */
	SIZE_OK("0.000488281249K", 0); /* just below */
}

static void test_parse_size_long_fraction_is_exact(void **state)
{
	(void)state;
	/* More digits than a double holds: still rounded exactly. */
	SIZE_OK("0.49999999999999999999999999999999999999B", 0);
	SIZE_OK("0.50000000000000000000000000000000000001B", 1);
	SIZE_OK("1.99999999999999999999999999999999999999T", 2 * TiB);
	/* 2^53 + 1 is not a double; the integer part is not rounded. */
	SIZE_OK("9007199254740993", UINT64_C(9007199254740993));
	SIZE_OK("9007199254740993.0", UINT64_C(9007199254740993));
}

static void test_parse_size_largest_values(void **state)
{
	(void)state;
	SIZE_OK("18446744073709551615", UINT64_MAX);
	SIZE_OK("18446744073709551615B", UINT64_MAX);
	SIZE_OK("18446744073709551615.4", UINT64_MAX);
	SIZE_OK("17179869183GiB", UINT64_MAX - GiB + 1);
	SIZE_OK("16777215TiB", UINT64_MAX - TiB + 1);
	SIZE_OK("17179869183.5GiB", UINT64_MAX - GiB / 2 + 1);
}

static void test_parse_size_overflow_is_erange(void **state)
{
	(void)state;
	SIZE_ERR("18446744073709551616", -ERANGE);
	SIZE_ERR("99999999999999999999999999", -ERANGE);
	SIZE_ERR("17179869184GiB", -ERANGE);
	SIZE_ERR("16777216TiB", -ERANGE);
	SIZE_ERR("18014398509481984K", -ERANGE);
	/* The rounded fraction carries the sum over. */
	SIZE_ERR("18446744073709551615.5", -ERANGE);
	SIZE_ERR("17179869183.99999999999999GiB", -ERANGE);
}

static void test_parse_size_decimal_si_units(void **state)
{
	(void)state;
	SIZE_OK("1KB", 1000);
	SIZE_OK("1kB", 1000);
	SIZE_OK("1MB", 1000000);
	SIZE_OK("1GB", 1000000000);
	SIZE_OK("1TB", UINT64_C(1000000000000));
	SIZE_OK("1kb", 1000);
	SIZE_OK("18446744073709551KB", UINT64_C(18446744073709551000));
	SIZE_ERR("18446744073709552KB", -ERANGE);
}

static void test_parse_size_any_case_and_blanks(void **state)
{
	(void)state;
	SIZE_OK("1kib", KiB);
	SIZE_OK("1KIB", KiB);
	SIZE_OK("10 MiB", 10 * MiB);
	SIZE_OK("10\tmib", 10 * MiB);
	SIZE_OK("10  MB", 10000000);
	SIZE_ERR("10 ", -EINVAL);
	SIZE_ERR("10 M B", -EINVAL);
}

/* The table the Python package is tested against too. */
static void test_parse_size_shared_table(void **state)
{
	FILE *f = fopen("tests/unit/size_table.txt", "r");
	char line[256];
	size_t n = 0;

	(void)state;
	assert_non_null(f);     /* make unit runs from the top of the tree */
	while (fgets(line, sizeof(line), f)) {
		char *tab = strchr(line, '\t');
		uint64_t got = 0;
		int err;

		if (line[0] == '#' || !tab)
			continue;
		*tab = '\0';
		tab[strcspn(tab + 1, "\n") + 1] = '\0';
		err = parse_size(line, &got);
		if (!strcmp(tab + 1, "error")) {
			if (!err)
				fail_msg("'%s' read as %llu, want an error", line, (unsigned long long)got);
		} else if (err || got != strtoull(tab + 1, NULL, 10)) {
			fail_msg("'%s': err %d, %llu, want %s", line, err, (unsigned long long)got, tab + 1);
		}
		n++;
	}
	fclose(f);
	assert_true(n >= 30);
}

static void test_parse_size_rejects_unknown_units(void **state)
{
	(void)state;
	SIZE_ERR("1P", -EINVAL);
	SIZE_ERR("1PiB", -EINVAL);
	SIZE_ERR("1E", -EINVAL);
	SIZE_ERR("1x", -EINVAL);
	SIZE_ERR("1Ki", -EINVAL);
	SIZE_ERR("1KiBs", -EINVAL);
	SIZE_ERR("1BB", -EINVAL);
	SIZE_ERR("1iB", -EINVAL);
	SIZE_ERR("1BiB", -EINVAL);
	SIZE_ERR("1KK", -EINVAL);
}

static void test_parse_size_rejects_signs_and_spaces(void **state)
{
	(void)state;
	SIZE_ERR("-1", -EINVAL);
	SIZE_ERR("-0", -EINVAL);
	SIZE_ERR("+1", -EINVAL);
	SIZE_ERR(" 1", -EINVAL);
	SIZE_ERR("\t1", -EINVAL);
	SIZE_ERR("1 ", -EINVAL);
	SIZE_ERR("1\n", -EINVAL);
	SIZE_ERR("10M ", -EINVAL);
	SIZE_ERR("1 0", -EINVAL);
}

static void test_parse_size_rejects_malformed_numbers(void **state)
{
	(void)state;
	SIZE_ERR("", -EINVAL);
	SIZE_ERR("K", -EINVAL);
	SIZE_ERR(".5K", -EINVAL);
	SIZE_ERR("1.", -EINVAL);
	SIZE_ERR("1.K", -EINVAL);
	SIZE_ERR("1.5.2", -EINVAL);
	SIZE_ERR("1..5", -EINVAL);
	SIZE_ERR("1,5K", -EINVAL);
	SIZE_ERR("0x10", -EINVAL);
	SIZE_ERR("1e3", -EINVAL);
	SIZE_ERR("inf", -EINVAL);
	SIZE_ERR("nan", -EINVAL);
}

static void test_parse_size_null_is_einval(void **state)
{
	uint64_t v = 0;

	(void)state;
	assert_int_equal(parse_size(NULL, &v), -EINVAL);
}

/* ---- parse_duration ------------------------------------------------------ */

static void test_parse_duration_units(void **state)
{
	(void)state;
	DURATION_OK("1us", NS_US);
	DURATION_OK("250ms", 250 * NS_MS);
	DURATION_OK("1s", NS_S);
	DURATION_OK("2m", 120 * NS_S);
	DURATION_OK("850us", 850 * NS_US);
	DURATION_OK("2h", 7200 * NS_S);
}

static void test_parse_duration_bare_number_is_seconds(void **state)
{
	(void)state;
	DURATION_OK("3", 3 * NS_S);
	DURATION_OK("1.5", 1500 * NS_MS);
	DURATION_OK("0.000000001", 1);
}

static void test_parse_duration_decimal(void **state)
{
	(void)state;
	DURATION_OK("1.5s", 1500 * NS_MS);
	DURATION_OK("0.5ms", 500 * NS_US);
	DURATION_OK("1.5us", 1500);
	DURATION_OK("0.25m", 15 * NS_S);
	DURATION_OK("0.001us", 1);
	DURATION_OK("1.234567891s", UINT64_C(1234567891));
}

static void test_parse_duration_rounds_to_nearest_ns(void **state)
{
	(void)state;
	DURATION_OK("0.0015us", 2);            /* 1.5 ns, tie up */
	DURATION_OK("0.0014us", 1);
	DURATION_OK("1.0000000005s", NS_S + 1); /* tie up */
	DURATION_OK("1.0000000004999s", NS_S);
	DURATION_OK("0.0005us", 1);            /* 0.5 ns rounds to 1 */
}

static void test_parse_duration_zero_is_einval(void **state)
{
	(void)state;
	DURATION_ERR("0", -EINVAL);
	DURATION_ERR("0s", -EINVAL);
	DURATION_ERR("0ms", -EINVAL);
	DURATION_ERR("0us", -EINVAL);
	DURATION_ERR("0m", -EINVAL);
	DURATION_ERR("0.0", -EINVAL);
	DURATION_ERR("000", -EINVAL);
	/* Positive, but rounds to zero nanoseconds. */
	DURATION_ERR("0.0004us", -EINVAL);
	DURATION_ERR("0.0000000004", -EINVAL);
}

static void test_parse_duration_largest_value(void **state)
{
	(void)state;
	DURATION_OK("18446744073.709551615s", UINT64_MAX);
	DURATION_OK("18446744073.7095516154", UINT64_MAX);
	DURATION_OK("307445734m", UINT64_C(307445734) * 60 * NS_S);
	DURATION_OK("18446744073709551us", UINT64_C(18446744073709551) * NS_US);
}

static void test_parse_duration_overflow_is_erange(void **state)
{
	(void)state;
	DURATION_ERR("18446744073.709551616s", -ERANGE);
	DURATION_ERR("18446744073.7095516155", -ERANGE); /* rounds up past max */
	DURATION_ERR("18446744074", -ERANGE);
	DURATION_ERR("307445735m", -ERANGE);
	DURATION_ERR("18446744073709552us", -ERANGE);
	DURATION_ERR("18446744073709551616ms", -ERANGE);
	DURATION_ERR("99999999999999999999999999s", -ERANGE);
}

static void test_parse_duration_rejects_unknown_units(void **state)
{
	(void)state;
	DURATION_ERR("1ns", -EINVAL);
	DURATION_ERR("1d", -EINVAL);
	DURATION_ERR("1H", -EINVAL);
	DURATION_ERR("1S", -EINVAL);
	DURATION_ERR("1MS", -EINVAL);
	DURATION_ERR("1Ms", -EINVAL);
	DURATION_ERR("1M", -EINVAL);
	DURATION_ERR("1US", -EINVAL);
	DURATION_ERR("1sec", -EINVAL);
	DURATION_ERR("1min", -EINVAL);
	DURATION_ERR("1mss", -EINVAL);
	DURATION_ERR("1µs", -EINVAL);
}

static void test_parse_duration_rejects_signs_and_spaces(void **state)
{
	(void)state;
	DURATION_ERR("-1s", -EINVAL);
	DURATION_ERR("-1", -EINVAL);
	DURATION_ERR("+1s", -EINVAL);
	DURATION_ERR(" 1s", -EINVAL);
	DURATION_ERR("1s ", -EINVAL);
	DURATION_ERR("1 s", -EINVAL);
	DURATION_ERR("250 ms", -EINVAL);
}

static void test_parse_duration_rejects_malformed_numbers(void **state)
{
	(void)state;
	DURATION_ERR("", -EINVAL);
	DURATION_ERR("s", -EINVAL);
	DURATION_ERR("ms", -EINVAL);
	DURATION_ERR(".5s", -EINVAL);
	DURATION_ERR("1.", -EINVAL);
	DURATION_ERR("1.s", -EINVAL);
	DURATION_ERR("1.5.2", -EINVAL);
	DURATION_ERR("1.5.2s", -EINVAL);
	DURATION_ERR("1e3", -EINVAL);
	DURATION_ERR("0x10", -EINVAL);
	DURATION_ERR("inf", -EINVAL);
	DURATION_ERR("nan", -EINVAL);
}

static void test_parse_duration_null_is_einval(void **state)
{
	uint64_t v = 0;

	(void)state;
	assert_int_equal(parse_duration(NULL, &v), -EINVAL);
}

/* ---- parse_pid_list ------------------------------------------------------ */

#define PIDS_MAX 8

#define PIDS_ERR(str, max, err)                                                  \
	do {                                                                     \
		pid_t pids_[PIDS_MAX];                                           \
		size_t count_ = 99;                                              \
		int rc_ = parse_pid_list(str, pids_, max, &count_);              \
		if (rc_ != (err))                                                \
			print_message("parse_pid_list(\"%s\", %zu) = %d; want %d\n", \
				      (str), (size_t)(max), rc_, (err));           \
		assert_int_equal(rc_, (err));                                    \
		assert_int_equal(count_, 0);                                     \
	} while (0)

static void test_parse_pid_list_single(void **state)
{
	pid_t pids[PIDS_MAX];
	size_t n = 99;

	(void)state;
	assert_int_equal(parse_pid_list("1", pids, PIDS_MAX, &n), 0);
	assert_int_equal(n, 1);
	assert_int_equal(pids[0], 1);
}

static void test_parse_pid_list_several_in_order(void **state)
{
	pid_t pids[PIDS_MAX];
	size_t n = 99;

	(void)state;
	assert_int_equal(parse_pid_list("12,345,6789,3", pids, PIDS_MAX, &n), 0);
	assert_int_equal(n, 4);
	assert_int_equal(pids[0], 12);
	assert_int_equal(pids[1], 345);
	assert_int_equal(pids[2], 6789);
	assert_int_equal(pids[3], 3);
}

static void test_parse_pid_list_int32_max(void **state)
{
	pid_t pids[PIDS_MAX];
	size_t n = 99;

	(void)state;
	assert_int_equal(parse_pid_list("2147483647", pids, PIDS_MAX, &n), 0);
	assert_int_equal(n, 1);
	assert_int_equal(pids[0], INT32_MAX);
}

static void test_parse_pid_list_leading_zeros_are_decimal(void **state)
{
	pid_t pids[PIDS_MAX];
	size_t n = 99;

	(void)state;
	assert_int_equal(parse_pid_list("007,010", pids, PIDS_MAX, &n), 0);
	assert_int_equal(n, 2);
	assert_int_equal(pids[0], 7);
	assert_int_equal(pids[1], 10);
}

static void test_parse_pid_list_exactly_max(void **state)
{
	pid_t pids[2];
	size_t n = 99;

	(void)state;
	assert_int_equal(parse_pid_list("1,2", pids, 2, &n), 0);
	assert_int_equal(n, 2);
	assert_int_equal(pids[0], 1);
	assert_int_equal(pids[1], 2);
}

static void test_parse_pid_list_too_big_is_erange(void **state)
{
	(void)state;
	PIDS_ERR("2147483648", PIDS_MAX, -ERANGE);
	PIDS_ERR("4294967297", PIDS_MAX, -ERANGE); /* would wrap to 1 */
	PIDS_ERR("18446744073709551617", PIDS_MAX, -ERANGE);
	PIDS_ERR("99999999999999999999999", PIDS_MAX, -ERANGE);
	PIDS_ERR("1,2147483648", PIDS_MAX, -ERANGE);
}

static void test_parse_pid_list_zero_is_einval(void **state)
{
	(void)state;
	PIDS_ERR("0", PIDS_MAX, -EINVAL);
	PIDS_ERR("00", PIDS_MAX, -EINVAL);
	PIDS_ERR("1,0", PIDS_MAX, -EINVAL);
}

static void test_parse_pid_list_negative_is_einval(void **state)
{
	(void)state;
	PIDS_ERR("-3", PIDS_MAX, -EINVAL);
	PIDS_ERR("1,-3", PIDS_MAX, -EINVAL);
	PIDS_ERR("-2147483649", PIDS_MAX, -EINVAL);
}

static void test_parse_pid_list_empty_items_are_einval(void **state)
{
	(void)state;
	PIDS_ERR("", PIDS_MAX, -EINVAL);
	PIDS_ERR(",", PIDS_MAX, -EINVAL);
	PIDS_ERR("1,,2", PIDS_MAX, -EINVAL);
	PIDS_ERR(",1", PIDS_MAX, -EINVAL);
	PIDS_ERR("1,", PIDS_MAX, -EINVAL);
}

static void test_parse_pid_list_rejects_spaces_and_junk(void **state)
{
	(void)state;
	PIDS_ERR(" 1", PIDS_MAX, -EINVAL);
	PIDS_ERR("1 ", PIDS_MAX, -EINVAL);
	PIDS_ERR("1, 2", PIDS_MAX, -EINVAL);
	PIDS_ERR("1 ,2", PIDS_MAX, -EINVAL);
	PIDS_ERR("+1", PIDS_MAX, -EINVAL);
	PIDS_ERR("1;2", PIDS_MAX, -EINVAL);
	PIDS_ERR("1a", PIDS_MAX, -EINVAL);
	PIDS_ERR("1.0", PIDS_MAX, -EINVAL);
	PIDS_ERR("0x10", PIDS_MAX, -EINVAL);
	PIDS_ERR("2147483648x", PIDS_MAX, -EINVAL); /* malformed before range */
}

static void test_parse_pid_list_duplicate_is_eexist(void **state)
{
	(void)state;
	PIDS_ERR("5,5", PIDS_MAX, -EEXIST);
	PIDS_ERR("1,2,3,2", PIDS_MAX, -EEXIST);
	PIDS_ERR("7,007", PIDS_MAX, -EEXIST);
}

static void test_parse_pid_list_more_than_max_is_e2big(void **state)
{
	(void)state;
	PIDS_ERR("1,2,3", 2, -E2BIG);
	PIDS_ERR("1", 0, -E2BIG);
}

static void test_parse_pid_list_writes_no_more_than_max(void **state)
{
	/* Guard slots after max must stay untouched. */
	pid_t pids[4] = { -1, -1, -1, -1 };
	size_t n = 99;

	(void)state;
	assert_int_equal(parse_pid_list("10,20,30,40", pids, 2, &n), -E2BIG);
	assert_int_equal(n, 0);
	assert_int_equal(pids[2], -1);
	assert_int_equal(pids[3], -1);
	/* max 0 never touches the array: NULL is fine. */
	assert_int_equal(parse_pid_list("1", NULL, 0, &n), -E2BIG);
}

static void test_parse_pid_list_first_error_wins(void **state)
{
	(void)state;
	/* Items are checked left to right. */
	PIDS_ERR("1,1,x", PIDS_MAX, -EEXIST);
	PIDS_ERR("1,x,1", PIDS_MAX, -EINVAL);
	PIDS_ERR("1,2,2", 2, -EEXIST);
	PIDS_ERR("1,2,3,x", 2, -E2BIG);
}

static void test_parse_pid_list_null_is_einval(void **state)
{
	pid_t pids[PIDS_MAX];
	size_t n = 99;

	(void)state;
	assert_int_equal(parse_pid_list(NULL, pids, PIDS_MAX, &n), -EINVAL);
	assert_int_equal(n, 0);
}

/* ---- format_bytes -------------------------------------------------------- */

static const char *fmt_bytes(uint64_t v)
{
	static char buf[64];

	return format_bytes(v, buf, sizeof(buf));
}

static void test_format_bytes_below_1kib_in_bytes(void **state)
{
	(void)state;
	assert_string_equal(fmt_bytes(0), "0 B");
	assert_string_equal(fmt_bytes(1), "1 B");
	assert_string_equal(fmt_bytes(812), "812 B");
	assert_string_equal(fmt_bytes(1023), "1023 B");
}

static void test_format_bytes_each_unit(void **state)
{
	(void)state;
	assert_string_equal(fmt_bytes(KiB), "1.0 KiB");
	assert_string_equal(fmt_bytes(4 * KiB), "4.0 KiB");
	assert_string_equal(fmt_bytes(MiB), "1.0 MiB");
	assert_string_equal(fmt_bytes(GiB), "1.0 GiB");
	assert_string_equal(fmt_bytes(TiB), "1.0 TiB");
	assert_string_equal(fmt_bytes(1024 * TiB), "1.0 PiB");
	assert_string_equal(fmt_bytes(1024 * 1024 * TiB), "1.0 EiB");
}

static void test_format_bytes_one_decimal_rounded(void **state)
{
	(void)state;
	assert_string_equal(fmt_bytes(1536), "1.5 KiB");
	assert_string_equal(fmt_bytes(537185485), "512.3 MiB"); /* 512.30000 */
	assert_string_equal(fmt_bytes(KiB + 51), "1.0 KiB");    /* 1.0498 */
	assert_string_equal(fmt_bytes(KiB + 52), "1.1 KiB");    /* 1.0508 */
	assert_string_equal(fmt_bytes(KiB + 256), "1.3 KiB");   /* 1.25, tie up */
	assert_string_equal(fmt_bytes(MiB - 52 * KiB), "972.0 KiB");
}

static void test_format_bytes_rounding_moves_to_next_unit(void **state)
{
	(void)state;
	assert_string_equal(fmt_bytes(1048524), "1023.9 KiB"); /* 1023.949 */
	assert_string_equal(fmt_bytes(1048525), "1.0 MiB");    /* 1023.950 */
	assert_string_equal(fmt_bytes(MiB - 1), "1.0 MiB");
	assert_string_equal(fmt_bytes(GiB - 1), "1.0 GiB");
	assert_string_equal(fmt_bytes(UINT64_MAX), "16.0 EiB");
}

static void test_format_bytes_truncates_to_buffer(void **state)
{
	char buf[8];

	(void)state;
	memset(buf, 'x', sizeof(buf));
	assert_ptr_equal(format_bytes(537185485, buf, 4), buf);
	assert_string_equal(buf, "512");
	assert_int_equal(buf[4], 'x');
	memset(buf, 'x', sizeof(buf));
	assert_ptr_equal(format_bytes(537185485, buf, 0), buf);
	assert_int_equal(buf[0], 'x');
}

/* ---- format_duration ----------------------------------------------------- */

static const char *fmt_duration(uint64_t v)
{
	static char buf[64];

	return format_duration(v, buf, sizeof(buf));
}

static void test_format_duration_below_1us_in_ns(void **state)
{
	(void)state;
	assert_string_equal(fmt_duration(0), "0 ns");
	assert_string_equal(fmt_duration(1), "1 ns");
	assert_string_equal(fmt_duration(999), "999 ns");
}

static void test_format_duration_microseconds_whole(void **state)
{
	(void)state;
	assert_string_equal(fmt_duration(1000), "1 us");
	assert_string_equal(fmt_duration(1499), "1 us");
	assert_string_equal(fmt_duration(1500), "2 us");
	assert_string_equal(fmt_duration(850 * NS_US), "850 us");
	assert_string_equal(fmt_duration(999499), "999 us");
}

static void test_format_duration_milliseconds_one_decimal(void **state)
{
	(void)state;
	assert_string_equal(fmt_duration(999500), "1.0 ms"); /* not "1000 us" */
	assert_string_equal(fmt_duration(NS_MS), "1.0 ms");
	assert_string_equal(fmt_duration(12300000), "12.3 ms");
	assert_string_equal(fmt_duration(12345678), "12.3 ms");
	assert_string_equal(fmt_duration(12350000), "12.4 ms"); /* tie up */
	assert_string_equal(fmt_duration(999949999), "999.9 ms");
}

static void test_format_duration_seconds_three_decimals(void **state)
{
	(void)state;
	assert_string_equal(fmt_duration(999950000), "1.000 s"); /* not "1000.0 ms" */
	assert_string_equal(fmt_duration(NS_S), "1.000 s");
	assert_string_equal(fmt_duration(1234000000), "1.234 s");
	assert_string_equal(fmt_duration(1234499999), "1.234 s");
	assert_string_equal(fmt_duration(1234500000), "1.235 s");
	assert_string_equal(fmt_duration(3600 * NS_S), "3600.000 s");
	assert_string_equal(fmt_duration(UINT64_MAX), "18446744073.710 s");
}

static void test_format_duration_truncates_to_buffer(void **state)
{
	char buf[8];

	(void)state;
	memset(buf, 'x', sizeof(buf));
	assert_ptr_equal(format_duration(1234000000, buf, 4), buf);
	assert_string_equal(buf, "1.2");
	assert_int_equal(buf[4], 'x');
	memset(buf, 'x', sizeof(buf));
	assert_ptr_equal(format_duration(1234000000, buf, 0), buf);
	assert_int_equal(buf[0], 'x');
}

/* ---- round trips --------------------------------------------------------- */

static void test_parse_size_reads_format_bytes_output_units(void **state)
{
	/* format_bytes prints "1.5 KiB"; without the space parse_size takes it. */
	uint64_t v = 0;

	(void)state;
	assert_string_equal(fmt_bytes(1536), "1.5 KiB");
	assert_int_equal(parse_size("1.5KiB", &v), 0);
	assert_int_equal(v, 1536);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_size_plain_number_is_bytes),
		cmocka_unit_test(test_parse_size_b_suffix_is_bytes),
		cmocka_unit_test(test_parse_size_unit_letter_any_case),
		cmocka_unit_test(test_parse_size_unit_with_ib),
		cmocka_unit_test(test_parse_size_decimal_rounds_to_nearest_byte),
		cmocka_unit_test(test_parse_size_decimal_tie_rounds_up),
		cmocka_unit_test(test_parse_size_long_fraction_is_exact),
		cmocka_unit_test(test_parse_size_largest_values),
		cmocka_unit_test(test_parse_size_overflow_is_erange),
		cmocka_unit_test(test_parse_size_decimal_si_units),
		cmocka_unit_test(test_parse_size_any_case_and_blanks),
		cmocka_unit_test(test_parse_size_shared_table),
		cmocka_unit_test(test_parse_size_rejects_unknown_units),
		cmocka_unit_test(test_parse_size_rejects_signs_and_spaces),
		cmocka_unit_test(test_parse_size_rejects_malformed_numbers),
		cmocka_unit_test(test_parse_size_null_is_einval),
		cmocka_unit_test(test_parse_duration_units),
		cmocka_unit_test(test_parse_duration_bare_number_is_seconds),
		cmocka_unit_test(test_parse_duration_decimal),
		cmocka_unit_test(test_parse_duration_rounds_to_nearest_ns),
		cmocka_unit_test(test_parse_duration_zero_is_einval),
		cmocka_unit_test(test_parse_duration_largest_value),
		cmocka_unit_test(test_parse_duration_overflow_is_erange),
		cmocka_unit_test(test_parse_duration_rejects_unknown_units),
		cmocka_unit_test(test_parse_duration_rejects_signs_and_spaces),
		cmocka_unit_test(test_parse_duration_rejects_malformed_numbers),
		cmocka_unit_test(test_parse_duration_null_is_einval),
		cmocka_unit_test(test_parse_pid_list_single),
		cmocka_unit_test(test_parse_pid_list_several_in_order),
		cmocka_unit_test(test_parse_pid_list_int32_max),
		cmocka_unit_test(test_parse_pid_list_leading_zeros_are_decimal),
		cmocka_unit_test(test_parse_pid_list_exactly_max),
		cmocka_unit_test(test_parse_pid_list_too_big_is_erange),
		cmocka_unit_test(test_parse_pid_list_zero_is_einval),
		cmocka_unit_test(test_parse_pid_list_negative_is_einval),
		cmocka_unit_test(test_parse_pid_list_empty_items_are_einval),
		cmocka_unit_test(test_parse_pid_list_rejects_spaces_and_junk),
		cmocka_unit_test(test_parse_pid_list_duplicate_is_eexist),
		cmocka_unit_test(test_parse_pid_list_more_than_max_is_e2big),
		cmocka_unit_test(test_parse_pid_list_writes_no_more_than_max),
		cmocka_unit_test(test_parse_pid_list_first_error_wins),
		cmocka_unit_test(test_parse_pid_list_null_is_einval),
		cmocka_unit_test(test_format_bytes_below_1kib_in_bytes),
		cmocka_unit_test(test_format_bytes_each_unit),
		cmocka_unit_test(test_format_bytes_one_decimal_rounded),
		cmocka_unit_test(test_format_bytes_rounding_moves_to_next_unit),
		cmocka_unit_test(test_format_bytes_truncates_to_buffer),
		cmocka_unit_test(test_format_duration_below_1us_in_ns),
		cmocka_unit_test(test_format_duration_microseconds_whole),
		cmocka_unit_test(test_format_duration_milliseconds_one_decimal),
		cmocka_unit_test(test_format_duration_seconds_three_decimals),
		cmocka_unit_test(test_format_duration_truncates_to_buffer),
		cmocka_unit_test(test_parse_size_reads_format_bytes_output_units),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
