// SPDX-License-Identifier: MIT
/* Exit statuses, as env(1) and timeout(1) use them. */
#include "status.h"

#include <errno.h>
#include <sys/wait.h>

int exit_status_from_wait(int wstatus)
{
	if (WIFEXITED(wstatus))
		return WEXITSTATUS(wstatus);
	if (WIFSIGNALED(wstatus))
		return 128 + WTERMSIG(wstatus);
	return -1; /* stopped or continued: not a final status */
}

int exit_status_from_exec_errno(int err)
{
	return err == ENOENT || err == ENOTDIR ? EXIT_NOT_FOUND : EXIT_CANNOT_EXECUTE;
}
