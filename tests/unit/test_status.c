// SPDX-License-Identifier: MIT
/* Unit tests for src/base/status.c. Wait statuses come from real children. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "status.h"

/* The child's body; it must end with _exit() or a signal. */
typedef void (*child_fn)(const void *arg);

static pid_t spawn(child_fn fn, const void *arg)
{
	pid_t pid = fork();

	assert_true(pid >= 0);
	if (pid == 0) {
		sigset_t all;

		/* Default dispositions, nothing blocked, whatever the runner set. */
		signal(SIGTERM, SIG_DFL);
		signal(SIGINT, SIG_DFL); /* ignored in background jobs */
		sigfillset(&all);
		sigprocmask(SIG_UNBLOCK, &all, NULL);
		fn(arg);
		_exit(99); /* fn returned: the test will see 99 and fail */
	}
	return pid;
}

/* Run fn in a child and return its final wait status. */
static int run_child(child_fn fn, const void *arg)
{
	pid_t pid = spawn(fn, arg);
	int wstatus;

	assert_int_equal(waitpid(pid, &wstatus, 0), pid);
	return wstatus;
}

static void child_exit(const void *arg)
{
	_exit(*(const int *)arg);
}

static void child_raise(const void *arg)
{
	raise(*(const int *)arg);
}

static void child_stop_then_wait(const void *arg)
{
	(void)arg;
	raise(SIGSTOP);
	pause(); /* until the parent kills us */
}

/* execv() the path; on failure exit the way peakbpf's child would. */
static void child_exec(const void *arg)
{
	const char *path = arg;
	char *const argv[] = { (char *)path, NULL };

	execv(path, argv);
	_exit(exit_status_from_exec_errno(errno));
}

/* execvp() a command name, searching PATH. */
static void child_execvp(const void *arg)
{
	const char *name = arg;
	char *const argv[] = { (char *)name, NULL };

	/* A PATH whose every folder the test's user may search: execvp
	 * fails with EACCES, not ENOENT, when one of them cannot be (root's
	 * PATH under runuser -u nobody: /root/.cargo/bin). */
	setenv("PATH", "/usr/bin:/bin", 1);
	execvp(name, argv);
	_exit(exit_status_from_exec_errno(errno));
}

static int exit_code_of_child(int code)
{
	int wstatus = run_child(child_exit, &code);

	assert_true(WIFEXITED(wstatus));
	return exit_status_from_wait(wstatus);
}

static int exit_code_of_signal(int sig)
{
	int wstatus = run_child(child_raise, &sig);

	assert_true(WIFSIGNALED(wstatus));
	assert_int_equal(WTERMSIG(wstatus), sig);
	return exit_status_from_wait(wstatus);
}

/* ---- exit_status_from_wait ----------------------------------------------- */

static void test_wait_exit_0_is_0(void **state)
{
	(void)state;
	assert_int_equal(exit_code_of_child(0), 0);
}

static void test_wait_exit_3_is_3(void **state)
{
	(void)state;
	assert_int_equal(exit_code_of_child(3), 3);
}

static void test_wait_exit_codes_125_to_127_are_kept(void **state)
{
	(void)state;
	assert_int_equal(exit_code_of_child(125), 125);
	assert_int_equal(exit_code_of_child(126), 126);
	assert_int_equal(exit_code_of_child(127), 127);
}

static void test_wait_exit_255_is_255(void **state)
{
	(void)state;
	assert_int_equal(exit_code_of_child(255), 255);
}

static void test_wait_exit_code_is_taken_mod_256(void **state)
{
	(void)state;
	/* What the kernel keeps of _exit(256 + 7). */
	assert_int_equal(exit_code_of_child(256 + 7), 7);
}

static void test_wait_sigkill_is_137(void **state)
{
	(void)state;
	assert_int_equal(exit_code_of_signal(SIGKILL), 128 + 9);
}

static void test_wait_sigterm_is_143(void **state)
{
	(void)state;
	assert_int_equal(exit_code_of_signal(SIGTERM), 128 + 15);
}

static void test_wait_sigint_is_130(void **state)
{
	(void)state;
	assert_int_equal(exit_code_of_signal(SIGINT), 128 + 2);
}

static void test_wait_killed_by_parent_is_128_plus_sig(void **state)
{
	pid_t pid;
	int wstatus;

	(void)state;
	pid = spawn(child_stop_then_wait, NULL);
	assert_int_equal(waitpid(pid, &wstatus, WUNTRACED), pid);
	assert_int_equal(kill(pid, SIGKILL), 0);
	assert_int_equal(waitpid(pid, &wstatus, 0), pid);
	assert_int_equal(exit_status_from_wait(wstatus), 128 + SIGKILL);
}

static void test_wait_stopped_child_is_minus_1(void **state)
{
	pid_t pid;
	int wstatus;

	(void)state;
	pid = spawn(child_stop_then_wait, NULL);
	assert_int_equal(waitpid(pid, &wstatus, WUNTRACED), pid);
	assert_true(WIFSTOPPED(wstatus));
	assert_int_equal(exit_status_from_wait(wstatus), -1);
	kill(pid, SIGKILL);
	waitpid(pid, &wstatus, 0);
}

static void test_wait_continued_child_is_minus_1(void **state)
{
	pid_t pid;
	int wstatus;

	(void)state;
	pid = spawn(child_stop_then_wait, NULL);
	assert_int_equal(waitpid(pid, &wstatus, WUNTRACED), pid);
	assert_int_equal(kill(pid, SIGCONT), 0);
	assert_int_equal(waitpid(pid, &wstatus, WCONTINUED), pid);
	assert_true(WIFCONTINUED(wstatus));
	assert_int_equal(exit_status_from_wait(wstatus), -1);
	kill(pid, SIGKILL);
	waitpid(pid, &wstatus, 0);
}

static void test_wait_core_dump_flag_is_ignored(void **state)
{
	/* A real core dump would leave files behind; build the status the
	 * kernel reports for "SIGSEGV, core dumped" instead. */
	int wstatus = SIGSEGV | 0x80;

	(void)state;
	assert_true(WIFSIGNALED(wstatus));
	assert_true(WCOREDUMP(wstatus));
	assert_int_equal(exit_status_from_wait(wstatus), 128 + SIGSEGV);
}

/* ---- exit_status_from_exec_errno ----------------------------------------- */

static void test_exec_errno_not_found_is_127(void **state)
{
	(void)state;
	assert_int_equal(exit_status_from_exec_errno(ENOENT), EXIT_NOT_FOUND);
	assert_int_equal(exit_status_from_exec_errno(ENOTDIR), EXIT_NOT_FOUND);
	assert_int_equal(EXIT_NOT_FOUND, 127);
}

static void test_exec_errno_others_are_126(void **state)
{
	static const int errs[] = {
		EACCES, EPERM, ENOEXEC, E2BIG, ELOOP, ENAMETOOLONG, ETXTBSY,
		ENOMEM, EISDIR, EIO, ELIBBAD, EMFILE, EINVAL, 0,
	};
	size_t i;

	(void)state;
	assert_int_equal(EXIT_CANNOT_EXECUTE, 126);
	for (i = 0; i < sizeof(errs) / sizeof(errs[0]); i++) {
		if (exit_status_from_exec_errno(errs[i]) != EXIT_CANNOT_EXECUTE)
			print_message("errno %d (%s)\n", errs[i], strerror(errs[i]));
		assert_int_equal(exit_status_from_exec_errno(errs[i]), EXIT_CANNOT_EXECUTE);
	}
}

/* ---- both together, with real exec failures ------------------------------ */

static void test_exec_missing_command_in_path_is_127(void **state)
{
	(void)state;
	assert_int_equal(exit_status_from_wait(
				 run_child(child_execvp, "peakbpf-test-no-such-command")),
			 127);
}

static void test_exec_missing_path_is_127(void **state)
{
	(void)state;
	assert_int_equal(exit_status_from_wait(
				 run_child(child_exec, "/nonexistent-peakbpf-test/cmd")),
			 127);
}

/* A private temporary file, mode 0600: not executable, even by root. */
static char *make_temp_file(void)
{
	const char *dir = getenv("TMPDIR");
	char *path = malloc(PATH_MAX);
	int fd;

	assert_non_null(path);
	snprintf(path, PATH_MAX, "%s/peakbpf-test-XXXXXX", dir && *dir ? dir : "/tmp");
	fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "#!/bin/sh\nexit 0\n", 17), 17);
	close(fd);
	return path;
}

static void test_exec_through_a_file_is_127(void **state)
{
	char *file = make_temp_file();
	char sub[PATH_MAX + 8];

	(void)state;
	snprintf(sub, sizeof(sub), "%s/cmd", file); /* ENOTDIR */
	assert_int_equal(exit_status_from_wait(run_child(child_exec, sub)), 127);
	unlink(file);
	free(file);
}

static void test_exec_non_executable_file_is_126(void **state)
{
	char *file = make_temp_file();

	(void)state;
	assert_int_equal(chmod(file, 0600), 0); /* EACCES */
	assert_int_equal(exit_status_from_wait(run_child(child_exec, file)), 126);
	unlink(file);
	free(file);
}

static void test_exec_directory_is_126(void **state)
{
	char dir[] = "/tmp/peakbpf-test-dir-XXXXXX";

	(void)state;
	assert_non_null(mkdtemp(dir));
	assert_int_equal(exit_status_from_wait(run_child(child_exec, dir)), 126);
	rmdir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_wait_exit_0_is_0),
		cmocka_unit_test(test_wait_exit_3_is_3),
		cmocka_unit_test(test_wait_exit_codes_125_to_127_are_kept),
		cmocka_unit_test(test_wait_exit_255_is_255),
		cmocka_unit_test(test_wait_exit_code_is_taken_mod_256),
		cmocka_unit_test(test_wait_sigkill_is_137),
		cmocka_unit_test(test_wait_sigterm_is_143),
		cmocka_unit_test(test_wait_sigint_is_130),
		cmocka_unit_test(test_wait_killed_by_parent_is_128_plus_sig),
		cmocka_unit_test(test_wait_stopped_child_is_minus_1),
		cmocka_unit_test(test_wait_continued_child_is_minus_1),
		cmocka_unit_test(test_wait_core_dump_flag_is_ignored),
		cmocka_unit_test(test_exec_errno_not_found_is_127),
		cmocka_unit_test(test_exec_errno_others_are_126),
		cmocka_unit_test(test_exec_missing_command_in_path_is_127),
		cmocka_unit_test(test_exec_missing_path_is_127),
		cmocka_unit_test(test_exec_through_a_file_is_127),
		cmocka_unit_test(test_exec_non_executable_file_is_126),
		cmocka_unit_test(test_exec_directory_is_126),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
