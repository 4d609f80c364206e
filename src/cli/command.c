// SPDX-License-Identifier: MIT
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "command.h"
#include "identity.h"
#include "spawn.h"
#include "status.h"

int command_identity(const char *user, bool quiet, struct identity *id, bool *set)
{
	const char *sudo_user = secure_getenv("SUDO_USER");
	char why[256];
	int err;

	*set = false;
	if (!user) {
		if (sudo_user && geteuid() == 0 && !quiet)
			fprintf(stderr, "peakbpf: notice: the command runs as root; --user %s runs it as "
				"you (peakbpf keeps its privileges)\n", sudo_user);
		return 0;
	}
	if (geteuid() != 0) {
		fprintf(stderr, "peakbpf: --user needs root: only root can run the command as "
			"another user\n");
		return -EPERM;
	}
	err = identity_resolve(user, id, why, sizeof(why));
	if (err)
		fprintf(stderr, "peakbpf: %s\n", why);
	*set = err == 0;
	return err;
}

int command_stop_pending(void)
{
	static const int stops[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT };
	sigset_t pending;

	if (sigpending(&pending))
		return 0;
	for (size_t i = 0; i < sizeof(stops) / sizeof(stops[0]); i++)
		if (sigismember(&pending, stops[i]))
			return stops[i];
	return 0;
}

int command_exec_failed(const char *argv0, const char *user, int code)
{
	int status;

	if (code & SPAWN_IDENTITY_FAILED) {
		fprintf(stderr, "peakbpf: cannot run %s as %s: %s\n", argv0, user,
			strerror(code & ~SPAWN_IDENTITY_FAILED));
		return EXIT_PEAKBPF_FAILED;
	}
	status = exit_status_from_exec_errno(code);
	if (status == EXIT_NOT_FOUND)
		fprintf(stderr, "peakbpf: %s: command not found\n", argv0);
	else
		fprintf(stderr, "peakbpf: %s: cannot execute: %s\n", argv0, strerror(code));
	return status;
}
