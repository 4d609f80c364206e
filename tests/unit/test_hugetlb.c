// SPDX-License-Identifier: MIT
/* hugetlb pages beside RSS (src/base/hugetlb.c): the status line, and
 * whether a machine can hold any (issue 33). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>
#include "hugetlb.h"

static void test_parse(void **state)
{
	uint64_t b = 1;

	(void)state;
	assert_int_equal(hugetlb_parse_status("Name:\tdpdk\nVmRSS:\t    1300 kB\nHugetlbPages:\t  262144 kB\n"
					      "Threads:\t1\n", &b), 0);
	assert_int_equal(b, 256ULL << 20);
	assert_int_equal(hugetlb_parse_status("HugetlbPages:\t       0 kB\n", &b), 0);
	assert_int_equal(b, 0);
	assert_int_equal(hugetlb_parse_status("Name:\tx\nVmRSS:\t1 kB\n", &b), -ENOENT);
	assert_int_equal(hugetlb_parse_status("HugetlbPages:\t  12 MB\n", &b), -EINVAL);
	assert_int_equal(hugetlb_parse_status("HugetlbPages:\t\n", &b), -EINVAL);
	assert_int_equal(hugetlb_parse_status("HugetlbPages:\t99999999999999999999999 kB\n", &b), -EINVAL);
	assert_int_equal(hugetlb_parse_status("", &b), -ENOENT);
}

static void put(const char *dir, const char *size, const char *name, const char *v)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, size);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/%s/%s", dir, size, name);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(v, f);
	fclose(f);
}

/* A fixture of /sys/kernel/mm/hugepages: possible when any size has
 * pages or may overcommit them. */
static void test_possible(void **state)
{
	char dir[] = "/tmp/peakbpf-hugetlb-XXXXXX", cmd[600];

	(void)state;
	assert_non_null(mkdtemp(dir));
	assert_false(hugetlb_possible(dir));
	put(dir, "hugepages-2048kB", "nr_hugepages", "0\n");
	put(dir, "hugepages-2048kB", "nr_overcommit_hugepages", "0\n");
	put(dir, "hugepages-1048576kB", "nr_hugepages", "0\n");
	assert_false(hugetlb_possible(dir));
	put(dir, "hugepages-1048576kB", "nr_hugepages", "2\n");
	assert_true(hugetlb_possible(dir));
	put(dir, "hugepages-1048576kB", "nr_hugepages", "0\n");
	put(dir, "hugepages-2048kB", "nr_overcommit_hugepages", "64\n");
	assert_true(hugetlb_possible(dir));
	put(dir, "hugepages-2048kB", "nr_overcommit_hugepages", "garbage\n");
	assert_false(hugetlb_possible(dir));
	assert_false(hugetlb_possible("/nonexistent/hugepages"));
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse),
		cmocka_unit_test(test_possible),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
