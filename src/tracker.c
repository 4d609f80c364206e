// SPDX-License-Identifier: MIT
/* The BPF tracker: open, load, attach, enter processes, read, close. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include "peakbpf.h"
#include "report.h"
#include "tracker.skel.h"

struct tracker {
	struct tracker_bpf *skel;
	const char *teardown_hook;
	bool rss_percpu;
	int exact_err;          /* 0: the exact per-CPU path works */
};

/* Does the running kernel's BTF know this type? */
static bool kernel_has_type(struct btf *vmlinux, const char *name, __u32 kind)
{
	return vmlinux && btf__find_by_name_kind(vmlinux, name, kind) >= 0;
}

static int online_cpus(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);

	return n > 0 ? (int)n : 1;
}

/* The exact path needs 6.2+ counters, the syscall program type (5.14) and
 * bpf_map_lookup_percpu_elem (5.19), and no more CPUs than it covers. */
static int exact_path_supported(bool rss_percpu, int ncpus)
{
	if (!rss_percpu || ncpus <= 0)
		return -EOPNOTSUPP;
	if (ncpus > MAX_CPUS)
		return -E2BIG;
	if (libbpf_probe_bpf_prog_type(BPF_PROG_TYPE_SYSCALL, NULL) != 1 ||
	    libbpf_probe_bpf_helper(BPF_PROG_TYPE_SYSCALL, BPF_FUNC_map_lookup_percpu_elem, NULL) != 1 ||
	    libbpf_probe_bpf_helper(BPF_PROG_TYPE_SYSCALL, BPF_FUNC_probe_read_kernel, NULL) != 1)
		return -EOPNOTSUPP;
	return 0;
}

static int learn_cpu_offsets(struct tracker *t)
{
	LIBBPF_OPTS(bpf_test_run_opts, run);
	int err;

	err = bpf_prog_test_run_opts(bpf_program__fd(t->skel->progs.learn_cpu_offsets), &run);
	if (err)
		return err;
	if (run.retval || !t->skel->bss->cpu_offsets_ready)
		return -EFAULT;
	return 0;
}

int tracker_open(const struct tracker_opts *opts, struct tracker **out)
{
	struct tracker *t = NULL;
	struct btf *vmlinux = NULL;
	__u32 max = opts && opts->max_tracked ? opts->max_tracked : DEFAULT_MAX_TRACKED;
	bool has_exit_mmap_tp;
	int err, ncpus;

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
	/* How far a cheap read of a 6.2+ counter may lag; before 6.2 the lag
	 * lives in per-thread caches BPF cannot see, so it is not modelled. */
	t->skel->rodata->counter_lag_pages =
		t->rss_percpu ? (__s64)(percpu_rss_lag_pages(online_cpus()) / 3) : 0;
	ncpus = libbpf_num_possible_cpus();
	t->skel->rodata->nr_cpus = ncpus > 0 ? (__u32)ncpus : 1;
	t->exact_err = exact_path_supported(t->rss_percpu, ncpus);
	bpf_program__set_autoload(t->skel->progs.learn_cpu_offsets, t->exact_err == 0);

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
	if (t->exact_err == 0)
		t->exact_err = learn_cpu_offsets(t);
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

int tracker_exact_path(const struct tracker *t)
{
	return t->exact_err;
}

void tracker_close(struct tracker *t)
{
	if (!t)
		return;
	tracker_bpf__destroy(t->skel);
	free(t);
}
