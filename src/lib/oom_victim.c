// SPDX-License-Identifier: MIT
/* oom_victim.h: the kernel's record as the public API gives it. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include "oom_victim.h"

/* kernfs's file handle (fs/kernfs/mount.c, kernfs_encode_fh): its node id. */
#define FILEID_KERNFS 0xfe

static const char *memory_mount(void)
{
	struct stat st;

	if (stat("/sys/fs/cgroup/memory/memory.limit_in_bytes", &st) == 0)
		return "/sys/fs/cgroup/memory";
	return "/sys/fs/cgroup";
}

int oom_cgroup_path(uint64_t id, char *buf, size_t len)
{
	struct {
		struct file_handle fh;
		uint64_t id;
	} h = { .fh = { .handle_bytes = sizeof(uint64_t), .handle_type = FILEID_KERNFS }, .id = id };
	int mount_fd = -1, fd = -1, err = 0;
	char link[64];
	ssize_t n;

	if (len)
		buf[0] = '\0';
	if (!id || len < 2)
		return -EINVAL;
	mount_fd = open(memory_mount(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (mount_fd < 0) {
		err = -errno;
		goto cleanup;
	}
	/* h.id is f_handle: the flexible array begins where it lies. */
	fd = open_by_handle_at(mount_fd, &h.fh, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0) {
		err = -errno;
		goto cleanup;
	}
	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	n = readlink(link, buf, len - 1);
	if (n < 0) {
		err = -errno;
		buf[0] = '\0';
		goto cleanup;
	}
	buf[n] = '\0';
cleanup:
	if (fd >= 0)
		close(fd);
	if (mount_fd >= 0)
		close(mount_fd);
	return err;
}

void oom_victim_fill(const struct oom_event *e, long page, struct peakbpf_oom_victim *out)
{
	memset(out, 0, sizeof(*out));
	out->mono_ns = e->ns;
	out->pid = (int32_t)e->tgid;
	memcpy(out->comm, e->comm, sizeof(out->comm));
	out->comm[sizeof(out->comm) - 1] = '\0';
	out->rss_read = e->rss_from == OOM_RSS_COUNTERS;
	out->anon_bytes = (uint64_t)e->pages[RSS_ANON] * (uint64_t)page;
	out->file_bytes = (uint64_t)e->pages[RSS_FILE] * (uint64_t)page;
	out->shmem_bytes = (uint64_t)e->pages[RSS_SHMEM] * (uint64_t)page;
	out->cgroup_id = e->cgroup_id;
	oom_cgroup_path(e->cgroup_id, out->cgroup, sizeof(out->cgroup));
	out->has_context = e->ctx.valid != 0;
	out->context_inferred = e->ctx.valid == 2;
	if (!out->has_context)
		return;
	out->memcg_oom = e->ctx.memcg_id != 0;
	out->oom_cgroup_id = e->ctx.memcg_id;
	oom_cgroup_path(e->ctx.memcg_id, out->oom_cgroup, sizeof(out->oom_cgroup));
	out->limit_bytes = out->memcg_oom ? e->ctx.limit_pages * (uint64_t)page : e->ctx.totalpages * (uint64_t)page;
	out->charge_bytes = out->memcg_oom ? e->ctx.usage_pages * (uint64_t)page : 0;
	out->trigger_pid = (int32_t)e->ctx.trigger_tgid;
	memcpy(out->trigger_comm, e->ctx.trigger_comm, sizeof(out->trigger_comm));
	out->trigger_comm[sizeof(out->trigger_comm) - 1] = '\0';
}
