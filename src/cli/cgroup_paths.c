// SPDX-License-Identifier: MIT
/* Where cgroups are, as the CLI's targets need to know (cgroup_paths.h). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "cgroup_paths.h"

int target_memory_mount(char *out, size_t len, int *v2)
{
	FILE *f = fopen("/proc/self/mountinfo", "re");
	char line[4096], v1[PATH_MAX] = "", two[PATH_MAX] = "";

	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		char mnt[PATH_MAX], *sep = strstr(line, " - ");
		char fstype[64] = "", opts[1024] = "";

		if (!sep || sscanf(line, "%*s %*s %*s %*s %4095s", mnt) != 1 ||
		    sscanf(sep + 3, "%63s %*s %1023s", fstype, opts) < 1)
			continue;
		if (!strcmp(fstype, "cgroup2") && !two[0])
			snprintf(two, sizeof(two), "%s", mnt);
		else if (!strcmp(fstype, "cgroup") && !v1[0] &&
			 (strstr(opts, ",memory") || !strncmp(opts, "memory", 6)))
			snprintf(v1, sizeof(v1), "%s", mnt);
	}
	fclose(f);
	if (!v1[0] && !two[0])
		return -ENOENT;
	*v2 = !v1[0];
	snprintf(out, len, "%s", v1[0] ? v1 : two);
	return 0;
}

int target_pid_cgroup(pid_t pid, char *out, size_t len)
{
	char path[64], line[PATH_MAX + 64], mount[PATH_MAX], rel[PATH_MAX] = "";
	int v2 = 0, err = target_memory_mount(mount, sizeof(mount), &v2);
	FILE *f;

	if (err)
		return err;
	snprintf(path, sizeof(path), "/proc/%d/cgroup", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		char *c1 = strchr(line, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;

		if (!c2)
			continue;
		*c2 = '\0';
		c2[1 + strcspn(c2 + 1, "\n")] = '\0';
		/* v2: "0::/PATH"; v1: "N:CONTROLLERS:/PATH", memory among them */
		if ((v2 && !strcmp(c1 + 1, "")) ||
		    (!v2 && (strstr(c1 + 1, "memory") != NULL)))
			snprintf(rel, sizeof(rel), "%s", c2 + 1);
	}
	fclose(f);
	if (!rel[0])
		return -ENOENT;
	if ((size_t)snprintf(out, len, "%s%s", mount, strcmp(rel, "/") ? rel : "") >= len)
		return -ENAMETOOLONG;
	return 0;
}

int target_capture(char *const argv[], char *out, size_t len, int *status)
{
	int pipefd[2], ws;
	size_t n = 0;
	pid_t pid;

	if (pipe2(pipefd, O_CLOEXEC))
		return -errno;
	pid = fork();
	if (pid < 0) {
		int err = -errno;

		close(pipefd[0]);
		close(pipefd[1]);
		return err;
	}
	if (pid == 0) {
		int null = open("/dev/null", O_RDONLY);

		if (null < 0 || dup2(null, 0) < 0 || dup2(pipefd[1], 1) < 0 || dup2(pipefd[1], 2) < 0)
			_exit(127);
		execvp(argv[0], argv);
		_exit(127);
	}
	close(pipefd[1]);
	for (;;) {
		char buf[512];
		ssize_t r = read(pipefd[0], buf, sizeof(buf));

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		for (ssize_t i = 0; i < r && n + 1 < len; i++)
			out[n++] = buf[i];
	}
	out[n] = '\0';
	close(pipefd[0]);
	while (waitpid(pid, &ws, 0) < 0 && errno == EINTR)
		;
	*status = WIFEXITED(ws) ? WEXITSTATUS(ws) : -1;
	return 0;
}

