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
#include "cgroup_paths.h"

static char cgroup_path[PATH_MAX];
static char label[PATH_MAX + 64];

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
