// SPDX-License-Identifier: MIT
/* The ptrace rule (host.c): who may measure which process. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <cmocka.h>
#include "host.h"

static const char *status_of(unsigned uid, unsigned gid, const char *capprm)
{
	static char buf[512];

	snprintf(buf, sizeof(buf), "Name:\tsleep\nPPid:\t42\nUid:\t%u\t%u\t%u\t%u\nGid:\t%u\t%u\t%u\t%u\n"
		 "VmRSS:\t   900 kB\nCapInh:\t0000000000000000\nCapPrm:\t%s\n", uid, uid, uid, uid,
		 gid, gid, gid, gid, capprm);
	return buf;
}

static int decide(const char *status, bool dumpable, const struct tracer *t)
{
	struct proc_creds pc;

	assert_int_equal(host_parse_creds(status, &pc), 0);
	pc.dumpable = dumpable;
	return host_trace_decide(&pc, t);
}

/* Issue 23: uids alone are not enough. gid 0, or a capability the caller
 * lacks, is refused as ptrace would; CAP_SYS_PTRACE passes everything. */
static void test_ptrace_rule(void **state)
{
	struct tracer nobody = { .uid = 65534, .gid = 65534 };
	struct tracer bpf = { .uid = 65534, .gid = 65534, .cap_permitted = 3ULL << 38 };
	struct tracer ptracer = { .uid = 1000, .gid = 1000, .sys_ptrace = true };

	(void)state;
	assert_int_equal(decide(status_of(65534, 65534, "0000000000000000"), true, &nobody), 0);
	assert_int_equal(decide(status_of(65534, 0, "0000000000000000"), true, &nobody), -EPERM);
	assert_int_equal(decide(status_of(65534, 65534, "0000000000200000"), true, &nobody), -EPERM);
	assert_int_equal(decide(status_of(65534, 65534, "0000000000000000"), false, &nobody), -EPERM);
	assert_int_equal(decide(status_of(0, 0, "000001ffffffffff"), true, &nobody), -EPERM);
	/* A target's capabilities within the caller's are fine. */
	assert_int_equal(decide(status_of(65534, 65534, "000000c000000000"), true, &bpf), 0);
	assert_int_equal(decide(status_of(65534, 65534, "000000c000200000"), true, &bpf), -EPERM);
	assert_int_equal(decide(status_of(0, 0, "000001ffffffffff"), false, &ptracer), 0);
}

/* Exiting or a zombie (no VmRSS) is -ESRCH; a status without the lines
 * the rule needs is -EINVAL, never a pass. */
static void test_parse(void **state)
{
	struct tracer nobody = { .uid = 65534, .gid = 65534 };
	struct proc_creds pc;

	(void)state;
	assert_int_equal(host_parse_creds("Name:\tx\nUid:\t1\t1\t1\t1\nGid:\t1\t1\t1\t1\nCapPrm:\t0\n", &pc), 0);
	assert_false(pc.has_mm);
	assert_int_equal(host_trace_decide(&pc, &nobody), -ESRCH);
	assert_int_equal(host_parse_creds("Name:\tx\nUid:\t1\t1\t1\t1\n", &pc), -EINVAL);
	assert_int_equal(host_parse_creds(status_of(7, 8, "00000000000000ff"), &pc), 0);
	assert_int_equal(pc.uid[2], 7);
	assert_int_equal(pc.gid[1], 8);
	assert_int_equal(pc.cap_permitted, 0xff);
	assert_int_equal(pc.ppid, 42);
	assert_true(pc.has_mm);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ptrace_rule),
		cmocka_unit_test(test_parse),
	};

	return cmocka_run_group_tests_name("host", tests, NULL, NULL);
}
