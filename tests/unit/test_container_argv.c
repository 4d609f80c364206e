// SPDX-License-Identifier: MIT
/* `peakbpf -- docker run` / `podman run`: where run is, its options, and
 * what peakbpf puts in (src/cli/container_argv.c). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "container_argv.h"

#define ARGV(...) ((char *[]){ __VA_ARGS__, NULL })

static void test_run_index(void **state)
{
	const char *rt = NULL;

	(void)state;
	assert_int_equal(container_argv_run_index(ARGV("docker", "run", "img"), &rt), 1);
	assert_string_equal(rt, "docker");
	assert_int_equal(container_argv_run_index(ARGV("/usr/bin/podman", "--root", "/x", "run", "i"), &rt), 3);
	assert_string_equal(rt, "podman");
	assert_int_equal(container_argv_run_index(ARGV("docker", "-H", "unix:///s", "container", "run", "i"), &rt),
			 4);
	/* another subcommand, another program, no run */
	assert_int_equal(container_argv_run_index(ARGV("docker", "ps", "run"), &rt), 0);
	assert_int_equal(container_argv_run_index(ARGV("dockerd", "run"), &rt), 0);
	assert_int_equal(container_argv_run_index(ARGV("podman", "--version"), &rt), 0);
}

static void test_option(void **state)
{
	char **a = ARGV("docker", "run", "--rm", "--name", "web", "--cgroup-parent=/x", "img", "--", "--name", "y");
	const char *v = NULL;

	(void)state;
	assert_true(container_argv_option(a, 1, "--name", &v));
	assert_string_equal(v, "web");
	assert_true(container_argv_option(a, 1, "--cgroup-parent", &v));
	assert_string_equal(v, "/x");
	assert_false(container_argv_option(a, 1, "--memory", NULL));
	/* --namespace is not --name; after "--" nothing is run's */
	assert_false(container_argv_option(ARGV("podman", "run", "--namespace", "n", "img"), 1, "--name", NULL));
	assert_false(container_argv_option(ARGV("podman", "run", "img", "--", "--name", "z"), 1, "--name", NULL));
}

static void test_inject(void **state)
{
	char **a = ARGV("docker", "-H", "unix:///s", "run", "--rm", "img", "cmd");
	char **out = container_argv_inject(a, 3, "--cgroup-parent=/p", "--cidfile=/d/cid");
	const char *want[] = { "docker", "-H", "unix:///s", "run", "--cgroup-parent=/p", "--cidfile=/d/cid",
			       "--rm", "img", "cmd", NULL };

	(void)state;
	assert_non_null(out);
	for (size_t i = 0; want[i]; i++)
		assert_string_equal(out[i], want[i]);
	assert_null(out[9]);
	free(out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_run_index),
		cmocka_unit_test(test_option),
		cmocka_unit_test(test_inject),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
