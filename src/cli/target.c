// SPDX-License-Identifier: MIT
/* --cgroup, --container, --unit resolved to a cgroup directory (target.h). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <peakbpf/peakbpf.h>
#include "status.h"
#include "target.h"
#include "target_container.h"

static char cgroup_path[PATH_MAX];
static char label[PATH_MAX + 64];

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

/* --cgroup PATH, checked: 0 or the exit status after the error. */
static int check_cgroup(const char *opt, const char *path)
{
	int err = peakbpf_cgroup_check(path);

	switch (err) {
	case 0:
		return 0;
	case -ENOENT:
		fprintf(stderr, "peakbpf: %s %s: no such cgroup (give its directory: /sys/fs/cgroup/NAME on "
			"cgroup v2, /sys/fs/cgroup/memory/NAME on v1)\n", opt, path);
		return EXIT_TARGET_NOT_FOUND;
	case -ENOTDIR:
		fprintf(stderr, "peakbpf: %s %s: not a cgroup: not a directory (give the cgroup's directory)\n",
			opt, path);
		return EXIT_TARGET_NOT_CGROUP;
	case -EMEDIUMTYPE:
		fprintf(stderr, "peakbpf: %s %s: not a cgroup: no cgroup file system there (give a directory "
			"below a cgroup mount, see /proc/self/mountinfo)\n", opt, path);
		return EXIT_TARGET_NOT_CGROUP;
	case -ENOMEDIUM:
		fprintf(stderr, "peakbpf: %s %s: a cgroup v1 hierarchy without the memory controller: give the "
			"same cgroup in the memory hierarchy (/sys/fs/cgroup/memory/...), where v1 charges memory\n",
			opt, path);
		return EXIT_TARGET_NOT_CGROUP;
	case -EPERM:
	case -EACCES:
		fprintf(stderr, "peakbpf: %s %s: not your cgroup: without root (CAP_SYS_ADMIN) peakbpf measures "
			"only a cgroup delegated to you (its directory yours)\n", opt, path);
		return EXIT_NOT_PERMITTED;
	default:
		fprintf(stderr, "peakbpf: %s %s: cannot open it: %s\n", opt, path, strerror(-err));
		return EXIT_PEAKBPF_FAILED;
	}
}

/* Whether systemd manages this machine (sd_booted(3)'s test). */
static int systemd_booted(void)
{
	struct stat st;

	return lstat("/run/systemd/system", &st) == 0 && S_ISDIR(st.st_mode);
}

/* --unit NAME: systemd's ControlGroup, or, without systemd as PID 1, the
 * layout systemd makes (SLICE/NAME below the memory hierarchy's mount). */
static int resolve_unit(const char *name)
{
	static const char *const slices[] = { "system.slice", "user.slice", "machine.slice", "" };
	char unit[256], mount[PATH_MAX], out[PATH_MAX + 512] = "";
	int v2 = 0, status;
	struct stat st;

	snprintf(unit, sizeof(unit), "%s%s", name, strchr(name, '.') ? "" : ".service");
	if (target_memory_mount(mount, sizeof(mount), &v2)) {
		fprintf(stderr, "peakbpf: --unit %s: no memory cgroup hierarchy is mounted\n", name);
		return EXIT_TARGET_NOT_FOUND;
	}
	if (systemd_booted()) {
		char *const argv[] = { "systemctl", "show", "-p", "ControlGroup", "--value", unit, NULL };

		if (!target_capture(argv, out, sizeof(out), &status) && status == 0 && out[0] == '/') {
			out[strcspn(out, "\n")] = '\0';
			snprintf(cgroup_path, sizeof(cgroup_path), "%.2048s%.2000s", mount, out);
		}
	}
	for (size_t i = 0; !cgroup_path[0] && i < sizeof(slices) / sizeof(slices[0]); i++) {
		snprintf(out, sizeof(out), "%s/%s%s%s", mount, slices[i], *slices[i] ? "/" : "", unit);
		if (stat(out, &st) == 0 && S_ISDIR(st.st_mode))
			snprintf(cgroup_path, sizeof(cgroup_path), "%.4000s", out);
	}
	if (!cgroup_path[0]) {
		fprintf(stderr, "peakbpf: --unit %s: no such unit's cgroup (looked for %s in %s/system.slice, "
			"user.slice and machine.slice%s)\n", name, unit, mount,
			systemd_booted() ? " and asked systemctl" : "; systemd is not PID 1 here");
		return EXIT_TARGET_NOT_FOUND;
	}
	snprintf(label, sizeof(label), "unit %s", unit);
	return check_cgroup("--unit", cgroup_path);
}

int target_resolve(struct options *o)
{
	int err;

	cgroup_path[0] = '\0';
	switch (o->target_kind) {
	case TARGET_CGROUP:
		err = check_cgroup("--cgroup", o->target);
		snprintf(cgroup_path, sizeof(cgroup_path), "%s", o->target);
		snprintf(label, sizeof(label), "cgroup %s", o->target);
		break;
	case TARGET_UNIT:
		err = resolve_unit(o->target);
		break;
	case TARGET_CONTAINER:
		err = container_resolve(o->target, cgroup_path, sizeof(cgroup_path), label, sizeof(label));
		if (!err)
			err = check_cgroup("--container", cgroup_path);
		break;
	default:
		return 0;
	}
	o->target_cgroup = cgroup_path;
	o->target_label = label;
	return err;
}
