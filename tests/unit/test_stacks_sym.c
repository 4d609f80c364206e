// SPDX-License-Identifier: MIT
/*
 * --stacks' symbols (src/lib/kernel/stacks_sym.h) on this test's own
 * process: its maps read from /proc, its functions named from its own ELF
 * file, a return address told from an address that follows no call, and
 * an address outside every mapping given as a number.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include <linux/types.h>
#include "stacks_sym.h"

#define MM 0x1234000ULL

__attribute__((noinline, used)) static __u64 known_frame_function(void)
{
	return (__u64)(uintptr_t)__builtin_return_address(0);
}

static void test_own_process(void **state)
{
	struct stacks_sym *s;
	__u64 fn = (__u64)(uintptr_t)&known_frame_function, ret = known_frame_function();
	__u64 frames[2] = { fn + 1, ret };
	char name[256];

	(void)state;
	assert_int_equal(stacks_sym_new(&s), 0);
	stacks_sym_note(s, MM, (__u32)getpid(), frames, 2);
	assert_string_equal(stacks_sym_comm(s, MM), "test_stacks_sym");
	assert_true(stacks_sym_name(s, MM, fn + 1, name, sizeof(name)));
	assert_string_equal(name, "known_frame_function");
	assert_true(stacks_sym_name(s, MM, ret - 1, name, sizeof(name)));
	assert_string_equal(name, "test_own_process");
	/* A return address follows a call; a function's first byte does not. */
	assert_true(stacks_sym_is_return(s, MM, ret));
	assert_false(stacks_sym_is_return(s, MM, fn));
	/* Outside every mapping: the address itself, and not a return. */
	assert_false(stacks_sym_name(s, MM, 0x10, name, sizeof(name)));
	assert_string_equal(name, "0x10");
	assert_false(stacks_sym_is_return(s, MM, 0x10));
	/* An mm never read: its frames are numbers, its name "?". */
	assert_false(stacks_sym_name(s, MM + 1, fn, name, sizeof(name)));
	assert_string_equal(stacks_sym_comm(s, MM + 1), "?");
	stacks_sym_free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_own_process),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
