// SPDX-License-Identifier: MIT
/*
 * What a kernel lacks of --stacks' needs (src/lib/kernel/kfeatures.h,
 * features_stacks_lacks): the line peakbpf refuses --stacks with before
 * the run (docs/stacks.md, "Kernels"), from the probed flags.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdbool.h>
#include <string.h>
#include <cmocka.h>
#include "kfeatures.h"

static struct tracker_features all_there(void)
{
	struct tracker_features f = { 0 };

	f.has_page_fault_tp = f.has_current_task_btf = f.has_find_vma = f.has_exit_mmap_tp = true;
	return f;
}

static void test_nothing_lacking(void **state)
{
	struct tracker_features f = all_there();
	char buf[256] = "x";

	(void)state;
	assert_int_equal(features_stacks_lacks(&f, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "");
}

/* Debian's 5.10: the tracepoint is there, the rest is not. */
static void test_like_510(void **state)
{
	struct tracker_features f = all_there();
	char buf[256];

	(void)state;
	f.has_current_task_btf = f.has_find_vma = f.has_exit_mmap_tp = false;
	assert_int_equal(features_stacks_lacks(&f, buf, sizeof(buf)), 3);
	assert_string_equal(buf, "bpf_get_current_task_btf (5.11), bpf_find_vma (5.17), the mmap:exit_mmap tracepoint (6.1)");
}

static void test_not_x86(void **state)
{
	struct tracker_features f = all_there();
	char buf[256];

	(void)state;
	f.has_page_fault_tp = false;
	assert_int_equal(features_stacks_lacks(&f, buf, sizeof(buf)), 1);
	assert_string_equal(buf, "the exceptions:page_fault_user tracepoint (x86's)");
}

/* A short buffer is cut, terminated; the count is still all of them; no
 * buffer at all gives the count alone. */
static void test_short_buffer(void **state)
{
	struct tracker_features f = { 0 };
	char buf[12];

	(void)state;
	memset(buf, 'z', sizeof(buf));
	assert_int_equal(features_stacks_lacks(&f, buf, sizeof(buf)), 4);
	assert_int_equal(strlen(buf), sizeof(buf) - 1);
	assert_int_equal(features_stacks_lacks(&f, NULL, 0), 4);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_nothing_lacking),
		cmocka_unit_test(test_like_510),
		cmocka_unit_test(test_not_x86),
		cmocka_unit_test(test_short_buffer),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
