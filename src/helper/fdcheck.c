// SPDX-License-Identifier: MIT
/* What a client's fd is, asked of /proc first (fdcheck.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <linux/magic.h>
#include <unistd.h>
#include "fdcheck.h"
#include "fileutil.h"

int fdinfo_mnt_id(const char *text, int *mnt_id)
{
	for (const char *l = text; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
		char *end;
		long v;

		if (strncmp(l, "mnt_id:", 7))
			continue;
		v = strtol(l + 7, &end, 10);
		if (end == l + 7 || v < 0 || v > 0x7fffffff || (*end && *end != '\n'))
			return -ENOENT;
		*mnt_id = (int)v;
		return 0;
	}
	return -ENOENT;
}

/* One mountinfo line (up to its '\n'): its mount id, and its fs type
 * into type[len]. 0 or -ENOENT for a line of another shape. */
static int mount_line(const char *l, const char *eol, int *id, char *type, size_t len)
{
	const char *sep = strstr(l, " - "), *t, *te;
	char *end;
	long v = strtol(l, &end, 10);

	if (end == l || *end != ' ' || v < 0 || !sep || sep > eol)
		return -ENOENT;
	t = sep + 3;
	te = t;
	while (te < eol && *te != ' ')
		te++;
	if (te == t || (size_t)(te - t) >= len)
		return -ENOENT;
	memcpy(type, t, (size_t)(te - t));
	type[te - t] = '\0';
	*id = (int)v;
	return 0;
}

int mountinfo_fs_type(const char *text, int mnt_id, char *type, size_t len)
{
	const char *l = text;

	while (l && *l) {
		const char *eol = strchr(l, '\n');
		int id;

		if (!eol)
			eol = l + strlen(l);
		if (mount_line(l, eol, &id, type, len) == 0 && id == mnt_id)
			return 0;
		l = *eol ? eol + 1 : NULL;
	}
	return -ENOENT;
}

static bool is_root(pid_t pid, const pid_t *roots, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (roots[i] == pid)
			return true;
	return false;
}

int procs_within(const char *text, const pid_t *roots, size_t n, pid_t *other)
{
	const char *l = text;

	while (l && *l) {
		char *end;
		long v = strtol(l, &end, 10);

		if (end == l || v <= 0 || v > 0x7fffffff || (*end && *end != '\n'))
			return -EINVAL;
		if (!is_root((pid_t)v, roots, n)) {
			*other = (pid_t)v;
			return -EBUSY;
		}
		l = *end ? end + 1 : end;
	}
	return 0;
}

/* The type of the mount mnt_id in the mount table of /proc/WHO (every
 * mount id is one of the whole system's while the mount lives, so a table
 * that lists it names that mount): 0 or -ENOENT. */
static int mount_type_in(const char *who, int mnt_id, char *type, size_t len)
{
	char path[64], *mounts = NULL;
	int err;

	snprintf(path, sizeof(path), "/proc/%s/mountinfo", who);
	err = read_text_file(path, &mounts, NULL);
	if (!err)
		err = mountinfo_fs_type(mounts, mnt_id, type, len);
	free(mounts);
	return err;
}

bool cgroup_fs_magic(long f_type)
{
	return f_type == CGROUP_SUPER_MAGIC || f_type == CGROUP2_SUPER_MAGIC;
}

bool fd_on_cgroupfs(int fd, pid_t client)
{
	char path[64], type[32], *info = NULL;
	struct statfs fs;
	int mnt_id = -1;
	bool yes = false;

	/* /proc alone first (the helper's fdinfo; a mountinfo prints each
	 * mount's stored options): nothing is asked of fd's filesystem until
	 * its mount is known to be a cgroup one, whose statfs never waits. */
	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	if (fd < 0 || read_text_file(path, &info, NULL) || fdinfo_mnt_id(info, &mnt_id))
		goto cleanup;
	/* The helper's own mount namespace (systemd's PrivateMounts= gives it
	 * one: every mount there has an id of its own), else the client's,
	 * where it opened the directory. */
	snprintf(path, sizeof(path), "%d", (int)client);
	if (mount_type_in("self", mnt_id, type, sizeof(type)) &&
	    (client <= 0 || mount_type_in(path, mnt_id, type, sizeof(type))))
		goto cleanup;
	if (strcmp(type, "cgroup") && strcmp(type, "cgroup2"))
		goto cleanup;
	/* And the filesystem says so itself. */
	yes = !fstatfs(fd, &fs) && cgroup_fs_magic((long)fs.f_type);
cleanup:
	free(info);
	return yes;
}

int cgroup_dir_check(int fd, uid_t uid, char *why, size_t len)
{
	struct stat st;

	if (fstat(fd, &st)) {
		int err = -errno;

		set_why(why, len, "cannot stat the cgroup directory: %s", strerror(-err));
		return err;
	}
	if (!S_ISDIR(st.st_mode)) {
		set_why(why, len, "not a cgroup directory: a file of a cgroup filesystem");
		return -ENOTDIR;
	}
	if (uid != 0 && st.st_uid != uid) {
		set_why(why, len, "the cgroup is not yours: its directory belongs to uid %u",
			(unsigned)st.st_uid);
		return -EPERM;
	}
	if (faccessat(fd, "memory.current", F_OK, AT_SYMLINK_NOFOLLOW) &&
	    faccessat(fd, "memory.usage_in_bytes", F_OK, AT_SYMLINK_NOFOLLOW)) {
		set_why(why, len, "not a memory cgroup: neither memory.current (v2) nor "
			"memory.usage_in_bytes (v1) is there");
		return -ENOENT;
	}
	return 0;
}

int cgroup_procs_check(int fd, const pid_t *roots, size_t n, char *why, size_t len)
{
	char *text = NULL;
	pid_t other = 0;
	int err = read_text_at(fd, "cgroup.procs", &text, NULL);

	if (err) {
		set_why(why, len, "cannot read the cgroup's cgroup.procs: %s", strerror(-err));
		goto cleanup;
	}
	err = procs_within(text, roots, n, &other);
	if (err == -EBUSY)
		set_why(why, len, "the cgroup holds processes outside the tree (process %d)", (int)other);
	else if (err)
		set_why(why, len, "the cgroup's cgroup.procs is not a list of processes");
cleanup:
	free(text);
	return err;
}
