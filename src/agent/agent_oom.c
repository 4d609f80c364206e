// SPDX-License-Identifier: MIT
/* The agent's OOM kills: each victim the kernel's ring holds, counted and logged. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>
#include <stdlib.h>
#include <string.h>
#include "agent_int.h"
#include "oom_api.h"
#include "tracker_load.h"

struct agent_oom {
	uint64_t kills;
	int dir_fd;             /* the spool directory */
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

static int on_victim(void *ctx, const struct oom_event *e)
{
	struct agent *a = ctx;

	a->oom->kills++;
	fprintf(stderr, "peakbpf agent: OOM kill: %u %.16s (cgroup id %llu)\n", e->tgid, e->comm,
		(unsigned long long)e->cgroup_id);
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
}

char *agent_oom_list_json(struct agent *a, size_t *len)
{
	char *s = strdup("[]\n");

	(void)a;
	*len = s ? strlen(s) : 0;
	return s;
}

void agent_oom_note(struct agent *a, uint64_t id, uint64_t now_ns, int64_t pages, int64_t peak)
{
	(void)a, (void)id, (void)now_ns, (void)pages, (void)peak;
}

void agent_oom_close(struct agent *a)
{
	if (a->oom && a->oom->dir_fd >= 0)
		close(a->oom->dir_fd);
	free(a->oom);
	a->oom = NULL;
}
