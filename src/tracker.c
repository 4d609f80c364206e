// SPDX-License-Identifier: MIT
/* The BPF tracker: open, load, attach, enter processes, read, close. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include "peakbpf.h"
#include "tracker.skel.h"

struct tracker {
	struct tracker_bpf *skel;
	const char *teardown_hook;
	bool rss_percpu;
};

/* Does the running kernel's BTF know this type? */
static bool kernel_has_type(struct btf *vmlinux, const char *name, __u32 kind)
{
	return vmlinux && btf__find_by_name_kind(vmlinux, name, kind) >= 0;
}

int tracker_open(const struct tracker_opts *opts, struct tracker **out)
{
	struct tracker *t = NULL;
	struct btf *vmlinux = NULL;
	__u32 max = opts && opts->max_tracked ? opts->max_tracked : DEFAULT_MAX_TRACKED;
	bool has_exit_mmap_tp;
	int err;

	*out = NULL;
	t = calloc(1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	vmlinux = btf__load_vmlinux_btf();
	if (!vmlinux) {
		err = -errno;
		goto cleanup;
	}
	t->skel = tracker_bpf__open();
	if (!t->skel) {
		err = -errno;
		goto cleanup;
	}
	err = bpf_map__set_max_entries(t->skel->maps.mm_states, max);
	if (!err)
		err = bpf_map__set_max_entries(t->skel->maps.task_states, max);
	if (err)
		goto cleanup;

	/* mmap:exit_mmap exists since 6.1; before, fentry on exit_mmap(). */
	has_exit_mmap_tp = kernel_has_type(vmlinux, "btf_trace_exit_mmap", BTF_KIND_TYPEDEF);
	bpf_program__set_autoload(t->skel->progs.handle_exit_mmap_tp, has_exit_mmap_tp);
	bpf_program__set_autoload(t->skel->progs.handle_exit_mmap_fentry, !has_exit_mmap_tp);
	t->teardown_hook = has_exit_mmap_tp ? "tp_btf/exit_mmap" : "fentry/exit_mmap";
	t->rss_percpu = !kernel_has_type(vmlinux, "mm_rss_stat", BTF_KIND_STRUCT);

	err = tracker_bpf__load(t->skel);
	if (err)
		goto cleanup;
	err = tracker_bpf__attach(t->skel);
	if (err)
		goto cleanup;
	if (!t->skel->bss) {    /* kernel without mmapable global data */
		err = -EOPNOTSUPP;
		goto cleanup;
	}
	*out = t;
	t = NULL;
cleanup:
	btf__free(vmlinux);
	tracker_close(t);
	return err;
}

int tracker_add_process(struct tracker *t, pid_t tgid)
{
	struct task_state ts = { .tree = 0 };
	__u32 key = (__u32)tgid;
	struct tree_state *tree = &t->skel->bss->trees[0];
	int err;

	err = bpf_map__update_elem(t->skel->maps.task_states, &key, sizeof(key),
				   &ts, sizeof(ts), BPF_NOEXIST);
	if (err)
		return err;
	__atomic_fetch_add(&tree->procs_entered, 1, __ATOMIC_SEQ_CST);
	__atomic_fetch_add(&tree->procs_live, 1, __ATOMIC_SEQ_CST);
	return 0;
}

static __u64 count_entries(struct bpf_map *map, size_t key_size)
{
	__u64 key = 0, next = 0, n = 0;
	void *prev = NULL;

	while (bpf_map__get_next_key(map, prev, &next, key_size) == 0) {
		n++;
		key = next;
		prev = &key;
	}
	return n;
}

static __u64 missed_runs(struct bpf_program *prog)
{
	struct bpf_prog_info info = {};
	__u32 len = sizeof(info);
	int fd = bpf_program__fd(prog);

	if (fd < 0 || bpf_obj_get_info_by_fd(fd, &info, &len))
		return 0;
	return info.recursion_misses;
}

int tracker_read(struct tracker *t, struct tree_reading *out)
{
	struct tracker_bpf *s = t->skel;

	memset(out, 0, sizeof(*out));
	/* Field by field; the kernel updates them concurrently. */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	out->tree = s->bss->trees[0];
	out->missed_events = missed_runs(s->progs.handle_rss_stat) +
			     missed_runs(s->progs.handle_fork) +
			     missed_runs(s->progs.handle_exec) +
			     missed_runs(s->progs.handle_exit) +
			     missed_runs(s->progs.handle_exit_mmap_tp) +
			     missed_runs(s->progs.handle_exit_mmap_fentry);
	out->mm_entries = count_entries(s->maps.mm_states, sizeof(__u64));
	out->task_entries = count_entries(s->maps.task_states, sizeof(__u32));
	return 0;
}

const char *tracker_teardown_hook(const struct tracker *t)
{
	return t->teardown_hook;
}

bool tracker_rss_is_percpu(const struct tracker *t)
{
	return t->rss_percpu;
}

void tracker_close(struct tracker *t)
{
	if (!t)
		return;
	tracker_bpf__destroy(t->skel);
	free(t);
}
