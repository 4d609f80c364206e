// SPDX-License-Identifier: MIT
/* The gated child of command mode: it execs only once the gate opens, and
 * reports a failed exec through its pipe. */
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <errno.h>
#include <string.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>
#include "spawn.h"
#include "status.h"

/* Spawn argv with an empty mask for it; *exec_errno: 0 when exec worked. */
static pid_t spawn(char **argv, bool open_gate, int *exec_errno)
{
	sigset_t none;
	int gate_fd, exec_err_fd;
	pid_t pid;
	ssize_t n;

	sigemptyset(&none);
	pid = spawn_gated(argv, &none, NULL, NULL, NULL, &gate_fd, &exec_err_fd);
	assert_true(pid > 0);
	if (open_gate)
		assert_int_equal(write(gate_fd, "g", 1), 1);
	close(gate_fd);
	*exec_errno = 0;
	n = read(exec_err_fd, exec_errno, sizeof(*exec_errno));
	assert_true(n == 0 || n == sizeof(*exec_errno));
	close(exec_err_fd);
	return pid;
}

static int wait_status(pid_t pid)
{
	int status;

	assert_int_equal(waitpid(pid, &status, 0), pid);
	return status;
}

static void test_gate_open_runs_it(void **state)
{
	char *argv[] = { "sh", "-c", "exit 3", NULL };
	int exec_errno;
	pid_t pid;

	(void)state;
	pid = spawn(argv, true, &exec_errno);
	assert_int_equal(exec_errno, 0);
	assert_int_equal(exit_status_from_wait(wait_status(pid)), 3);
}

static void test_gate_closed_never_execs(void **state)
{
	char *argv[] = { "sh", "-c", "exit 3", NULL };
	int exec_errno;
	pid_t pid;

	(void)state;
	pid = spawn(argv, false, &exec_errno);
	assert_int_equal(exec_errno, 0);
	assert_int_equal(exit_status_from_wait(wait_status(pid)), EXIT_PEAKBPF_FAILED);
}

static void test_exec_failure_reported(void **state)
{
	char *argv[] = { "/nonexistent/peakbpf-test-command", NULL };
	int exec_errno;
	pid_t pid;

	(void)state;
	pid = spawn(argv, true, &exec_errno);
	assert_int_equal(exec_errno, ENOENT);
	assert_int_equal(exit_status_from_wait(wait_status(pid)), EXIT_NOT_FOUND);
}

/* peakbpf blocks the signals it handles and ignores SIGPIPE: the command
 * gets the mask it was given and SIGPIPE's default back. */
static void test_signals_restored(void **state)
{
	char *term[] = { "sh", "-c", "kill -TERM $$; exit 3", NULL };
	char *pipe_[] = { "sh", "-c", "kill -PIPE $$; exit 3", NULL };
	sigset_t set, old;
	void (*old_pipe)(int);
	int exec_errno, status;

	(void)state;
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigprocmask(SIG_BLOCK, &set, &old);
	old_pipe = signal(SIGPIPE, SIG_IGN);
	status = wait_status(spawn(term, true, &exec_errno));
	assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM);
	status = wait_status(spawn(pipe_, true, &exec_errno));
	assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGPIPE);
	signal(SIGPIPE, old_pipe);
	sigprocmask(SIG_SETMASK, &old, NULL);
}

/* The fork function is the caller's (peakbpf_command_fork in the CLI):
 * the child it makes is the one that waits at the gate and execs. */
static pid_t fork_marked(void *ctx)
{
	pid_t pid = fork();

	if (pid == 0 && write(*(int *)ctx, "c", 1) != 1)
		_exit(99);
	return pid;
}

static void test_fork_fn_makes_the_child(void **state)
{
	char *argv[] = { "sh", "-c", "exit 4", NULL };
	int marks[2], gate_fd, exec_err_fd, exec_errno = 0;
	char got = 0;
	sigset_t none;
	pid_t pid;

	(void)state;
	sigemptyset(&none);
	assert_int_equal(pipe(marks), 0);
	pid = spawn_gated(argv, &none, NULL, fork_marked, &marks[1], &gate_fd, &exec_err_fd);
	assert_true(pid > 0);
	close(marks[1]);
	assert_int_equal(read(marks[0], &got, 1), 1);
	assert_int_equal(got, 'c');
	assert_int_equal(write(gate_fd, "g", 1), 1);
	close(gate_fd);
	assert_int_equal(read(exec_err_fd, &exec_errno, sizeof(exec_errno)), 0);
	close(exec_err_fd);
	close(marks[0]);
	assert_int_equal(exit_status_from_wait(wait_status(pid)), 4);
}

/* A fork function that fails: spawn_gated fails with its errno, and
 * leaves no fd open. */
static pid_t fork_fails(void *ctx)
{
	(void)ctx;
	errno = EAGAIN;
	return -1;
}

static void test_failed_fork_fn(void **state)
{
	char *argv[] = { "true", NULL };
	int gate_fd = -1, exec_err_fd = -1, before, after;
	sigset_t none;

	(void)state;
	sigemptyset(&none);
	before = dup(0);
	close(before);
	assert_int_equal(spawn_gated(argv, &none, NULL, fork_fails, NULL, &gate_fd, &exec_err_fd), -1);
	assert_int_equal(errno, EAGAIN);
	after = dup(0);
	close(after);
	assert_int_equal(after, before);        /* the lowest free fd: none leaked */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_gate_open_runs_it),
		cmocka_unit_test(test_gate_closed_never_execs),
		cmocka_unit_test(test_exec_failure_reported),
		cmocka_unit_test(test_signals_restored),
		cmocka_unit_test(test_fork_fn_makes_the_child),
		cmocka_unit_test(test_failed_fork_fn),
	};

	return cmocka_run_group_tests_name("spawn", tests, NULL, NULL);
}
