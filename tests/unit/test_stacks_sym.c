// SPDX-License-Identifier: MIT
/*
 * --stacks' symbols (src/lib/kernel/stacks_sym.h) on this test's own
 * process: its maps read from /proc, its functions named from its own ELF
 * file, a return address told from an address that follows no call, and
 * an address outside every mapping given as a number; a frame-pointer
 * chain cut at its first word outside code; a deleted file's mapping kept.
 */
#include <fcntl.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
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

/* A chain is named up to its first word outside an executable mapping
 * (code without frame pointers leaves rbp holding anything). */
static void test_chain_cut(void **state)
{
	static __u64 data_word = 1;
	struct stacks_sym *s;
	__u64 fn = (__u64)(uintptr_t)&known_frame_function, ret = known_frame_function();
	__u64 good[3] = { fn + 1, ret, ret }, bad[4] = { fn + 1, ret, 0x10, ret };
	__u64 data[3] = { fn + 1, (__u64)(uintptr_t)&data_word, ret };

	(void)state;
	assert_int_equal(stacks_sym_new(&s), 0);
	stacks_sym_note(s, MM, (__u32)getpid(), good, 3);
	assert_int_equal(stacks_sym_chain(s, MM, good, 3), 3);
	assert_int_equal(stacks_sym_chain(s, MM, bad, 4), 2);
	assert_int_equal(stacks_sym_chain(s, MM, data, 3), 1);
	assert_int_equal(stacks_sym_chain(s, MM + 1, bad, 4), 4);     /* maps never read: all */
	stacks_sym_free(s);
}

/* A mapping of a file deleted since is kept, named in its module, not
 * dropped to a bare address (offset 0x40 is the ELF header's: no symbol). */
static void test_deleted_file(void **state)
{
	char path[] = "/tmp/test_stacks_sym_del_XXXXXX", want[64];
	int in = open("/proc/self/exe", O_RDONLY), fd = mkstemp(path);
	struct stacks_sym *s;
	struct stat st;
	char name[256];
	void *p;
	__u64 frame;

	(void)state;
	assert_true(in >= 0 && fd >= 0 && !fstat(in, &st));
	assert_int_equal(sendfile(fd, in, NULL, (size_t)st.st_size), st.st_size);
	p = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);
	assert_true(p != MAP_FAILED);
	assert_int_equal(unlink(path), 0);
	frame = (__u64)(uintptr_t)p + 0x40;
	assert_int_equal(stacks_sym_new(&s), 0);
	stacks_sym_note(s, MM, (__u32)getpid(), &frame, 1);
	assert_false(stacks_sym_name(s, MM, frame, name, sizeof(name)));
	snprintf(want, sizeof(want), "%s (deleted)+0x40", strrchr(path, '/') + 1);
	assert_string_equal(name, want);
	assert_int_equal(stacks_sym_chain(s, MM, &frame, 1), 1);
	stacks_sym_free(s);
	munmap(p, (size_t)st.st_size);
	close(fd);
	close(in);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_own_process),
		cmocka_unit_test(test_chain_cut),
		cmocka_unit_test(test_deleted_file),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
