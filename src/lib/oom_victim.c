// SPDX-License-Identifier: MIT
/* oom_victim.h: the kernel's record as the public API gives it. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include "json.h"
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

static void json_kill(struct json_writer *w, const struct peakbpf_oom_victim *v)
{
	json_key(w, "kill");
	if (!v->has_context) {
		json_null(w);
		return;
	}
	json_begin_object(w);
	json_kv_string(w, "constraint", v->memcg_oom ? "memcg" : "global");
	json_kv_bool(w, "inferred", v->context_inferred);
	json_kv_uint(w, "oom_cgroup_id", v->oom_cgroup_id);
	json_kv_string(w, "oom_cgroup", v->oom_cgroup);
	json_kv_uint(w, v->memcg_oom ? "limit_bytes" : "total_bytes", v->limit_bytes);
	if (v->memcg_oom)
		json_kv_uint(w, "charge_bytes", v->charge_bytes);
	json_kv_int(w, "trigger_pid", v->trigger_pid);
	json_kv_string(w, "trigger_comm", v->trigger_comm);
	json_end_object(w);
}

PEAKBPF_API int peakbpf_oom_victim_json(const struct peakbpf_oom_victim *v, uint64_t t0_ns, char *buf, size_t len)
{
	struct json_writer w;
	char *text = NULL;
	size_t size = 0;
	FILE *mem;
	int err;

	if (!v || (!buf && len))
		return -EINVAL;
	mem = open_memstream(&text, &size);
	if (!mem)
		return -errno;
	json_init(&w, mem);
	json_begin_object(&w);
	json_kv_int(&w, "pid", v->pid);
	json_kv_string(&w, "comm", v->comm);
	if (t0_ns)
		json_kv_double(&w, "at_s", v->mono_ns > t0_ns ? (double)(v->mono_ns - t0_ns) / 1e9 : 0, 6);
	json_key(&w, "rss");
	if (v->rss_read) {
		json_begin_object(&w);
		json_kv_uint(&w, "anon_bytes", v->anon_bytes);
		json_kv_uint(&w, "file_bytes", v->file_bytes);
		json_kv_uint(&w, "shmem_bytes", v->shmem_bytes);
		json_kv_string(&w, "read", "at the kill, the kernel's counters, as its OOM report reads them");
		json_end_object(&w);
	} else {
		json_null(&w);
	}
	json_kv_uint(&w, "cgroup_id", v->cgroup_id);
	json_kv_string(&w, "cgroup", v->cgroup);
	json_kill(&w, v);
	json_end_object(&w);
	err = json_finish(&w);
	if (fclose(mem) || err) {
		free(text);
		return err ? err : -ENOMEM;
	}
	if (size && text[size - 1] == '\n')
		text[--size] = '\0';
	if (len)
		snprintf(buf, len, "%s", text);
	free(text);
	return size > (size_t)0x7fffffff ? -E2BIG : (int)size;
}
