// SPDX-License-Identifier: MIT
/*
 * The agent's OOM records (docs/agent.md, "OOM records"): for each victim
 * the kernel's ring holds (drained as soon as its fd polls readable), a
 * JSON file in the spool directory: the victim as the kernel recorded it
 * at the kill, the kill's cgroup with its limit and charge, that cgroup's
 * summed RSS now, its peak since the last cut and since the agent saw it,
 * the processes that hold its memory now (their rss split), and its
 * timeline: the windows the agent cut (one a second), each with its exact
 * peak. The spool's size is bounded: the oldest records go first.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/stat.h>
#include <unistd.h>
#include "agent_int.h"
#include "agent_oom_record.h"
#include "oom_api.h"
#include "oom_victim.h"
#include "tracker_load.h"

struct agent_oom {
	int dir_fd;             /* the spool directory */
	uint64_t records;
};

/* The spool directory: made (0700) if missing; refused when it is a
 * symbolic link, not a directory, or not writable (a probe file made and
 * removed). Kept open: records are written relative to it. */
static int open_spool(const char *dir, char *why, size_t len)
{
	struct stat st;
	int fd, probe;

	if (lstat(dir, &st) && errno == ENOENT && mkdir(dir, 0700) == 0)
		lstat(dir, &st);
	if (lstat(dir, &st)) {
		snprintf(why, len, "spool directory %s: %s (make it, or choose one with --spool)", dir, strerror(errno));
		return -1;
	}
	if (S_ISLNK(st.st_mode)) {
		snprintf(why, len, "spool directory %s is a symbolic link: give the real directory with --spool", dir);
		return -1;
	}
	if (!S_ISDIR(st.st_mode)) {
		snprintf(why, len, "spool directory %s is not a directory (choose one with --spool)", dir);
		return -1;
	}
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	probe = fd < 0 ? -1 : openat(fd, ".peakbpf-probe", O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (probe < 0) {
		snprintf(why, len, "spool directory %s is not writable: %s (fix its mode, or choose one with --spool)",
			 dir, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	close(probe);
	unlinkat(fd, ".peakbpf-probe", 0);
	return fd;
}

int agent_oom_open(struct agent *a, char *why, size_t len)
{
	a->oom = calloc(1, sizeof(*a->oom));
	if (!a->oom) {
		snprintf(why, len, "out of memory");
		return -1;
	}
	a->oom->dir_fd = open_spool(a->o.spool, why, len);
	return a->oom->dir_fd < 0 ? -1 : 0;
}

int agent_oom_fd(struct agent *a)
{
	int level, err;
	struct oom_reader *r = a->l ? tracker_load__oom(a->l, &level, &err) : NULL;

	return r ? oom_reader_fd(r) : -1;
}

/* Oldest first (names begin with the kill's time) until the spool fits. */
static void bound_spool(struct agent *a)
{
	int fd = dup(a->oom->dir_fd);
	DIR *d = fd < 0 ? NULL : fdopendir(fd);
	char oldest[256];
	uint64_t total;
	struct dirent *e;

	for (int round = 0; d && round < 1000; round++) {
		struct stat st;

		total = 0;
		oldest[0] = '\0';
		rewinddir(d);
		while ((e = readdir(d))) {
			if (!oom_record_name_ok(e->d_name) ||
			    fstatat(a->oom->dir_fd, e->d_name, &st, AT_SYMLINK_NOFOLLOW))
				continue;
			total += (uint64_t)st.st_size;
			if (!oldest[0] || strcmp(e->d_name, oldest) < 0)
				snprintf(oldest, sizeof(oldest), "%s", e->d_name);
		}
		if (total <= a->o.spool_bytes || !oldest[0])
			break;
		unlinkat(a->oom->dir_fd, oldest, 0);
	}
	if (d)
		closedir(d);
	else if (fd >= 0)
		close(fd);
}

static int on_victim(void *ctx, const struct oom_event *e)
{
	struct agent *a = ctx;
	struct peakbpf_oom_victim v;
	char id[64];
	int err;

	oom_victim_fill(e, a->page_size, &v);
	agent_cut(a);           /* the cgroup's sum and its window's peak, now */
	err = oom_record_write(a, e, &v, a->oom->dir_fd, id, sizeof(id));
	if (!err) {
		a->oom->records++;
		bound_spool(a);
	}
	fprintf(stderr, "peakbpf agent: OOM kill: %d %s in %s (%s): %s%s\n", v.pid, v.comm,
		*v.cgroup ? v.cgroup : "?", v.memcg_oom ? "its cgroup's limit" : "the machine out of memory",
		err ? "no record: " : "record ", err ? strerror(-err) : id);
	return 0;
}

void agent_oom_poll(struct agent *a)
{
	__u64 victims = 0, drops = 0;
	int level, err;
	struct oom_reader *r = tracker_load__oom(a->l, &level, &err);

	if (!r)
		return;
	oom_drain(r, on_victim, a);
	oom_counts(r, &victims, &drops);
	a->facts.oom_kills = victims;
	a->facts.oom_ring_drops = drops;
	a->facts.oom_records = a->oom->records;
}

char *agent_oom_list_json(struct agent *a, size_t *len)
{
	return oom_records_list_json(a->oom->dir_fd, len);
}

void agent_oom_close(struct agent *a)
{
	if (a->oom && a->oom->dir_fd >= 0)
		close(a->oom->dir_fd);
	free(a->oom);
	a->oom = NULL;
}
