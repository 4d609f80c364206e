// SPDX-License-Identifier: MIT
/* Command strings: which run through the shell, how they split, and how
 * an argv is shown so that a shell reads it back. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "shell_words.h"

static void assert_argv(char **argv, const char *const *want)
{
	size_t i = 0;

	assert_non_null(argv);
	for (; want[i]; i++) {
		assert_non_null(argv[i]);
		assert_string_equal(argv[i], want[i]);
	}
	assert_null(argv[i]);
	shell_argv_free(argv);
}

static void test_split(void **state)
{
	(void)state;
	assert_argv(shell_split("  sleep   0.1 "), (const char *[]){ "sleep", "0.1", NULL });
	assert_argv(shell_split("echo 'a b' \"c d\" e\\ f ''"),
		    (const char *[]){ "echo", "a b", "c d", "e f", "", NULL });
	assert_argv(shell_split("a'b'\"c\"d"), (const char *[]){ "abcd", NULL });
	assert_argv(shell_split("x 'it\\'"), (const char *[]){ "x", "it\\", NULL });
	errno = 0;
	assert_null(shell_split("echo 'open"));
	assert_int_equal(errno, EINVAL);
	assert_null(shell_split("   "));
	assert_int_equal(errno, EINVAL);
}

static void test_plain(void **state)
{
	(void)state;
	assert_true(shell_is_plain("sleep 0.1"));
	assert_true(shell_is_plain("./job --size=64 -n 3 a,b host:1 x+y@z 50%"));
	assert_false(shell_is_plain("sleep 0.1; true"));
	assert_false(shell_is_plain("a | b"));
	assert_false(shell_is_plain("echo $HOME"));
	assert_false(shell_is_plain("ls *.c"));
	assert_false(shell_is_plain("echo 'x'"));
	assert_false(shell_is_plain("FOO=1 ./job"));   /* an assignment */
	assert_false(shell_is_plain("~/job"));
	assert_false(shell_is_plain(""));
}

static void test_command_argv(void **state)
{
	struct shell_mode none = { .none = true }, bash = { .shell = "/bin/bash" };

	(void)state;
	/* Plain, and a program: exec'd directly, without the shell's memory. */
	assert_argv(shell_command_argv("/bin/sleep 0.1", NULL), (const char *[]){ "/bin/sleep", "0.1", NULL });
	assert_argv(shell_command_argv("sleep 0.1", NULL), (const char *[]){ "sleep", "0.1", NULL });
	/* Shell syntax, or a builtin: through the shell. */
	assert_argv(shell_command_argv("sleep 0.1; true", NULL),
		    (const char *[]){ "/bin/sh", "-c", "sleep 0.1; true", NULL });
	assert_argv(shell_command_argv("exit 3", NULL), (const char *[]){ "/bin/sh", "-c", "exit 3", NULL });
	assert_argv(shell_command_argv("exit 3", &bash), (const char *[]){ "/bin/bash", "-c", "exit 3", NULL });
	/* --shell=none: split, quotes group, nothing else is special. */
	assert_argv(shell_command_argv("echo 'a b' $X;", &none), (const char *[]){ "echo", "a b", "$X;", NULL });
}

static void test_quote(void **state)
{
	char *s;

	(void)state;
	s = shell_quote_argv((char *[]){ "sh", "-c", "exit 3", NULL });
	assert_string_equal(s, "sh -c 'exit 3'");
	free(s);
	s = shell_quote_argv((char *[]){ "echo", "it's", "", "$x", "a=b", NULL });
	assert_string_equal(s, "echo 'it'\\''s' '' '$x' a=b");
	free(s);
	/* What it prints splits back to the same argv. */
	assert_argv(shell_split("echo 'it'\\''s' '' '$x' a=b"),
		    (const char *[]){ "echo", "it's", "", "$x", "a=b", NULL });
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_split),
		cmocka_unit_test(test_plain),
		cmocka_unit_test(test_command_argv),
		cmocka_unit_test(test_quote),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
