// SPDX-License-Identifier: MIT
/* Why bpf() was refused although the capabilities are held (bpf_refusal.c):
 * issue 33's container, where a seccomp profile, not the locked-memory
 * limit, refused it on 6.18. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <errno.h>
#include <stdbool.h>
#include <string.h>
#include <cmocka.h>
#include "bpf_refusal.h"

static void test_parse_seccomp(void **state)
{
	(void)state;
	assert_int_equal(bpf_refusal_parse_seccomp("Name:\tpeakbpf\nNoNewPrivs:\t0\nSeccomp:\t2\n"
						   "Seccomp_filters:\t1\n"), 2);
	assert_int_equal(bpf_refusal_parse_seccomp("Seccomp:\t0\n"), 0);
	assert_int_equal(bpf_refusal_parse_seccomp("Name:\tx\n"), -1);
	assert_int_equal(bpf_refusal_parse_seccomp("Seccomp:\tx\n"), -1);
	assert_int_equal(bpf_refusal_parse_seccomp("Seccomp:\t7\n"), -1);
	assert_int_equal(bpf_refusal_parse_seccomp(""), -1);
}

static void test_kernel_before(void **state)
{
	(void)state;
	assert_true(bpf_refusal_kernel_before("5.10.0-28-amd64", 5, 11));
	assert_true(bpf_refusal_kernel_before("4.19.0", 5, 11));
	assert_false(bpf_refusal_kernel_before("5.11.0", 5, 11));
	assert_false(bpf_refusal_kernel_before("6.18.44-fc-v1045", 5, 11));
	assert_false(bpf_refusal_kernel_before("6.1", 5, 11));
	assert_false(bpf_refusal_kernel_before("garbage", 5, 11));
	assert_false(bpf_refusal_kernel_before("6", 5, 11));
	assert_false(bpf_refusal_kernel_before(NULL, 5, 11));
}

static void why_of(const struct bpf_refusal *r, char *buf, size_t len)
{
	bpf_refusal_why(r, buf, len);
	assert_non_null(strchr(buf, ':'));
	assert_null(strchr(buf, '\n'));
}

/* The container of issue 33: caps held, a filter answers EPERM for bpf().
 * The message names the option, and not the locked-memory limit. */
static void test_why_seccomp(void **state)
{
	struct bpf_refusal r = { .err = -EPERM, .privileges = "CAP_BPF+CAP_PERFMON", .seccomp = 2,
				 .filtered_errno = EPERM, .memlock_limited = true };
	char buf[512];

	(void)state;
	why_of(&r, buf, sizeof(buf));
	assert_non_null(strstr(buf, "seccomp"));
	assert_non_null(strstr(buf, "--security-opt seccomp=FILE"));
	assert_non_null(strstr(buf, "peakbpf-seccomp"));
	assert_non_null(strstr(buf, "CAP_BPF+CAP_PERFMON"));
	assert_null(strstr(buf, "locked-memory"));
	/* Filtered, but no seccomp filter seen: still before the kernel. */
	r.seccomp = -1;
	why_of(&r, buf, sizeof(buf));
	assert_non_null(strstr(buf, "before the kernel sees it"));
	assert_null(strstr(buf, "locked-memory limit:"));
}

/* bpf() reaches the kernel: before 5.11 with a limited RLIMIT_MEMLOCK the
 * limit is named; since 5.11, or unlimited, it is not advice. */
static void test_why_memlock(void **state)
{
	struct bpf_refusal r = { .err = -EPERM, .privileges = "CAP_BPF+CAP_PERFMON", .seccomp = 0,
				 .filtered_errno = 0, .memlock_charged = true, .memlock_limited = true };
	char buf[512];

	(void)state;
	why_of(&r, buf, sizeof(buf));
	assert_non_null(strstr(buf, "before 5.11 BPF maps count against the locked-memory limit"));
	assert_non_null(strstr(buf, "--ulimit memlock=-1"));
	r.memlock_charged = false;
	why_of(&r, buf, sizeof(buf));
	assert_null(strstr(buf, "ulimit"));
	assert_non_null(strstr(buf, "nor the locked-memory limit, since 5.11"));
	assert_non_null(strstr(buf, "security module"));
	r.memlock_charged = true;
	r.memlock_limited = false;
	why_of(&r, buf, sizeof(buf));
	assert_null(strstr(buf, "ulimit"));
	/* A filter that lets bpf() through (seccomp 2, not filtered) is not blamed. */
	r.seccomp = 2;
	why_of(&r, buf, sizeof(buf));
	assert_null(strstr(buf, "--security-opt"));
}

/* This process, unfiltered (the test runs outside any seccomp filter or
 * says nothing): bpf() reaches the kernel, which answers EFAULT. */
static void test_gather_here(void **state)
{
	struct bpf_refusal r;

	(void)state;
	bpf_refusal_gather(&r, -EPERM, "root", "6.18.0");
	assert_int_equal(r.err, -EPERM);
	assert_false(r.memlock_charged);
	if (r.seccomp == 0)
		assert_int_equal(r.filtered_errno, 0);
	else
		assert_true(r.seccomp == 2 || r.seccomp == 1 || r.seccomp == -1);
	bpf_refusal_gather(&r, -EPERM, "root", "5.10.0");
	assert_true(r.memlock_charged);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_seccomp),
		cmocka_unit_test(test_kernel_before),
		cmocka_unit_test(test_why_seccomp),
		cmocka_unit_test(test_why_memlock),
		cmocka_unit_test(test_gather_here),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
