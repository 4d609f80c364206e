// SPDX-License-Identifier: MIT
/* peakbpf's own PEAKBPF_* variables, and a misspelt one (env_check.h). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include "env_check.h"

static void test_unknown(void **state)
{
	char *ours[] = { "PATH=/bin", "PEAKBPF_HELPER=/run/peakbpf.sock", "PEAKBPF_CGROUP_ROOT=/x",
			 "PEAKBPF_LIBRARY=/l.so", "PEAKBPF_DOCKER=/usr/bin/docker", "PEAKBPF_HELPER_X", NULL };
	char *misspelt[] = { "HOME=/root", "PEAKBPF_HELPR=/run/peakbpf.sock", NULL };
	char *prefix[] = { "PEAKBPF_HELPERS=/s", NULL };
	char name[64] = "";

	(void)state;
	assert_true(env_unknown_peakbpf(ours, name, sizeof(name)));     /* no '=': its name whole */
	assert_string_equal(name, "PEAKBPF_HELPER_X");
	ours[5] = NULL;
	assert_false(env_unknown_peakbpf(ours, name, sizeof(name)));
	assert_true(env_unknown_peakbpf(misspelt, name, sizeof(name)));
	assert_string_equal(name, "PEAKBPF_HELPR");
	assert_true(env_unknown_peakbpf(prefix, name, sizeof(name)));  /* not a prefix match */
	assert_string_equal(name, "PEAKBPF_HELPERS");
	assert_false(env_unknown_peakbpf(NULL, name, sizeof(name)));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_unknown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
