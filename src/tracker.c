// SPDX-License-Identifier: MIT
/* The BPF tracker: open, load, attach, enter processes, read, close. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include "peakbpf.h"
#include "report.h"
#include "host.h"
#include "tracker.skel.h"

struct tracker {
	struct tracker_bpf *skel;
	const char *teardown_hook;
	bool rss_percpu;
	bool fetch_atomics;
	bool attribution;
	int exact_err;          /* 0: the exact per-CPU path works */
	struct ring_buffer *sums;       /* --compare-sampler's record */
	tracker_sum_fn sum_fn;
	void *sum_ctx;
};

/*
 * Does the kernel take BPF atomics with a result (BPF_FETCH, 5.12)? Load
 * the smallest program that uses one: r1 = 1; r1 = fetch_add(*(u64 *)(r10 - 8), r1).
 */
static bool kernel_has_fetch_atomics(void)
{
	const struct bpf_insn insns[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_1, .imm = 0 },
		{ .code = BPF_STX | BPF_DW | BPF_MEM, .dst_reg = BPF_REG_10, .src_reg = BPF_REG_1, .off = -8 },
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_1, .imm = 1 },
		{ .code = BPF_STX | BPF_DW | BPF_ATOMIC, .dst_reg = BPF_REG_10, .src_reg = BPF_REG_1,
		  .off = -8, .imm = BPF_ADD | BPF_FETCH },
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	int fd = bpf_prog_load(BPF_PROG_TYPE_SOCKET_FILTER, NULL, "GPL", insns,
			       sizeof(insns) / sizeof(insns[0]), NULL);

	if (fd < 0)
		return false;
	close(fd);
	return true;
}

/*
 * Before 5.12 the verifier rejects a program that holds an atomic with a
 * result anywhere, reachable or not (compat.bpf.h). With have_fetch_atomics
 * false every one of them is on a branch the verifier prunes, so each is
 * replaced with a call to a helper that does not exist, the way libbpf
 * poisons a failed CO-RE relocation: dropped as dead code where it is dead,
 * a load error ("invalid func") where it is not.
 */
#define FETCH_ATOMIC_POISON 0xbadf37c

static int poison_fetch_atomics(struct bpf_object *obj)
{
	struct bpf_program *prog;

	bpf_object__for_each_program(prog, obj) {
		size_t n = bpf_program__insn_cnt(prog), changed = 0;
		struct bpf_insn *insns;
		int err = 0;

		if (!bpf_program__autoload(prog))
			continue;
		insns = malloc(n * sizeof(*insns));
		if (!insns)
			return -ENOMEM;
		memcpy(insns, bpf_program__insns(prog), n * sizeof(*insns));
		for (size_t i = 0; i < n; i++) {
			/* XADD (BPF_ADD, no result) is all that came before. */
			if (BPF_CLASS(insns[i].code) != BPF_STX || BPF_MODE(insns[i].code) != BPF_ATOMIC ||
			    insns[i].imm == BPF_ADD)
				continue;
			insns[i] = (struct bpf_insn){ .code = BPF_JMP | BPF_CALL, .imm = FETCH_ATOMIC_POISON };
			changed++;
		}
		if (changed)
			err = bpf_program__set_insns(prog, insns, n);
		free(insns);
		if (err)
			return err;
	}
	return 0;
}

static int online_cpus(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);

	return n > 0 ? (int)n : 1;
}

/* The exact path needs the syscall program type (5.14) and
 * bpf_map_lookup_percpu_elem (5.19), and no more CPUs than it covers; and
 * 6.2+ counters, which learn_cpu_offsets reports once it has run. */
static int exact_path_supported(bool fetch_atomics, int ncpus)
{
	if (!fetch_atomics || ncpus <= 0)
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

static int on_sum_event(void *ctx, void *data, size_t size)
{
	struct tracker *t = ctx;
	const struct sum_event *e = data;

	if (size < sizeof(*e) || !t->sum_fn)
		return 0;
	return t->sum_fn(t->sum_ctx, e->ns, e->sum_pages);
}

int tracker_drain_sums(struct tracker *t, tracker_sum_fn fn, void *ctx)
{
	int n;

	if (!t->sums)
		return -EOPNOTSUPP;
	t->sum_fn = fn;
	t->sum_ctx = ctx;
	n = ring_buffer__consume(t->sums);
	t->sum_fn = NULL;
	return n < 0 ? n : 0;
}

/*
 * Open the object and set everything that must be known before load.
 * exit_mmap_tp picks the teardown hook: mmap:exit_mmap exists since 6.1;
 * before, fentry on exit_mmap().
 */
static int open_configured(struct tracker *t, const struct tracker_opts *opts, bool exit_mmap_tp)
{
	/* Without CAP_SYS_ADMIN, libbpf 1.1 fails listing kernel modules' BTF
	 * (BPF_BTF_GET_NEXT_ID) when a CO-RE type is missing from vmlinux (as
	 * the pre-6.2 flavours are on new kernels): then point CO-RE at
	 * vmlinux's BTF alone; nothing peakbpf reads lives in a module. With
	 * CAP_SYS_ADMIN leave it, so libbpf parses the 5 MiB BTF once, not twice. */
	LIBBPF_OPTS(bpf_object_open_opts, open_opts);
	__u32 max = opts && opts->max_tracked ? opts->max_tracked : DEFAULT_MAX_TRACKED;
	int err, ncpus;

	if (!(host_effective_caps() & (1ULL << CAPBIT_SYS_ADMIN)))
		open_opts.btf_custom_path = "/sys/kernel/btf/vmlinux";
	t->skel = tracker_bpf__open_opts(&open_opts);
	if (!t->skel)
		return -errno;
	if (opts && opts->record_ring_bytes) {
		t->skel->rodata->record_sums = true;
		err = bpf_map__set_max_entries(t->skel->maps.sum_events, opts->record_ring_bytes);
		if (err)
			return err;
	}
	err = bpf_map__set_max_entries(t->skel->maps.mm_states, max);
	if (!err)
		err = bpf_map__set_max_entries(t->skel->maps.task_states, max);
	if (err)
		return err;
	bpf_program__set_autoload(t->skel->progs.handle_exit_mmap_tp, exit_mmap_tp);
	bpf_program__set_autoload(t->skel->progs.handle_exit_mmap_fentry, !exit_mmap_tp);
	t->teardown_hook = exit_mmap_tp ? "tp_btf/exit_mmap" : "fentry/exit_mmap";
	/* How far a cheap read of a 6.2+ counter may lag (the kernel side
	 * applies it only to percpu counters; before 6.2 the lag lives in
	 * per-thread caches BPF cannot see, so it is not modelled). */
	t->skel->rodata->counter_lag_pages = (__s64)(percpu_rss_lag_pages(online_cpus()) / 3);
	t->skel->rodata->have_fetch_atomics = t->fetch_atomics;
	t->skel->rodata->have_for_each = t->attribution;
	/* Before 5.13 the verifier rejects any program holding a callback
	 * (compat.bpf.h, NOSNAP_SEC): load the twins without callbacks. */
	bpf_program__set_autoload(t->skel->progs.handle_rss_stat, t->attribution);
	bpf_program__set_autoload(t->skel->progs.handle_rss_stat_nosnap, !t->attribution);
	bpf_program__set_autoload(t->skel->progs.handle_fork, t->attribution);
	bpf_program__set_autoload(t->skel->progs.handle_fork_nosnap, !t->attribution);
	bpf_program__set_autoload(t->skel->progs.handle_exec, t->attribution);
	bpf_program__set_autoload(t->skel->progs.handle_exec_nosnap, !t->attribution);
	bpf_program__set_autoload(t->skel->progs.enter_existing, t->attribution);
	bpf_program__set_autoload(t->skel->progs.enter_existing_nosnap, !t->attribution);
	t->skel->rodata->snap_step_min_pages = (1 << 20) / sysconf(_SC_PAGESIZE);
	ncpus = libbpf_num_possible_cpus();
	t->skel->rodata->nr_cpus = ncpus > 0 ? (__u32)ncpus : 1;
	t->exact_err = exact_path_supported(t->fetch_atomics, ncpus);
	bpf_program__set_autoload(t->skel->progs.learn_cpu_offsets, t->exact_err == 0);
	if (!t->fetch_atomics)
		return poison_fetch_atomics(t->skel->obj);
	return 0;
}

int tracker_open(const struct tracker_opts *opts, struct tracker **out)
{
	struct tracker *t = NULL;
	int err;

	*out = NULL;
	t = calloc(1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	t->fetch_atomics = kernel_has_fetch_atomics();
	t->attribution = libbpf_probe_bpf_helper(BPF_PROG_TYPE_KPROBE,
						 BPF_FUNC_for_each_map_elem, NULL) == 1;
	/* Optimistically the 6.1+ tracepoint; a kernel without it fails the
	 * load on the attach target (ESRCH), and is given fentry instead. */
	err = open_configured(t, opts, true);
	if (!err)
		err = tracker_bpf__load(t->skel);
	if (err == -ESRCH || err == -ENOENT) {
		tracker_bpf__destroy(t->skel);
		t->skel = NULL;
		err = open_configured(t, opts, false);
		if (!err)
			err = tracker_bpf__load(t->skel);
	}
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
	/* Only learn_cpu_offsets (5.19+) can tell; older kernels are all
	 * before 6.2, whose counters are not percpu. */
	t->rss_percpu = t->exact_err == 0 && t->skel->bss->rss_percpu_kernel;
	if (t->exact_err == 0 && !t->rss_percpu)
		t->exact_err = -EOPNOTSUPP;
	if (opts && opts->record_ring_bytes) {
		t->sums = ring_buffer__new(bpf_map__fd(t->skel->maps.sum_events), on_sum_event, t, NULL);
		if (!t->sums) {
			err = -errno;
			goto cleanup;
		}
	}
	*out = t;
	t = NULL;
cleanup:
	tracker_close(t);
	return err;
}

int tracker_add_roots(struct tracker *t, const pid_t *vpids, size_t n,
		      bool enter_mm, __u32 *tgids)
{
	struct bpf_map *roots = t->skel->maps.roots;
	char buf[64];
	int iter_fd = -1, err = 0;
	size_t i;

	if (n > MAX_ROOTS)
		return -E2BIG;
	for (i = 0; i < n; i++) {
		struct root_req req = { .tree = 0, .enter_mm = enter_mm };
		__u32 key = (__u32)vpids[i];

		err = bpf_map__update_elem(roots, &key, sizeof(key), &req, sizeof(req), BPF_ANY);
		if (err)
			goto cleanup;
	}
	/* Reading the iterator runs enter_existing over every task; a pass
	 * enters roots and children of processes already in. Repeat while a
	 * pass still finds some: a child with a smaller PID than its parent
	 * (PIDs wrap) is found one pass later. */
	for (int pass = 0; pass < MAX_ITER_PASSES; pass++) {
		__u64 before = __atomic_load_n(&t->skel->bss->iter_entered, __ATOMIC_SEQ_CST);

		iter_fd = bpf_iter_create(bpf_link__fd(t->attribution ? t->skel->links.enter_existing :
							  t->skel->links.enter_existing_nosnap));
		if (iter_fd < 0) {
			err = -errno;
			goto cleanup;
		}
		for (;;) {
			ssize_t r = read(iter_fd, buf, sizeof(buf));

			if (r == 0)
				break;
			if (r < 0 && errno != EINTR && errno != EAGAIN) {
				err = -errno;
				goto cleanup;
			}
		}
		close(iter_fd);
		iter_fd = -1;
		if (__atomic_load_n(&t->skel->bss->iter_entered, __ATOMIC_SEQ_CST) == before)
			break;
	}
	for (i = 0; i < n; i++) {
		struct root_req req = {};
		__u32 key = (__u32)vpids[i];

		err = bpf_map__lookup_elem(roots, &key, sizeof(key), &req, sizeof(req), 0);
		if (err)
			goto cleanup;
		tgids[i] = req.found ? req.tgid : 0;
	}
cleanup:
	/* Roots are only for this walk: later forks follow task_states. */
	for (i = 0; i < n; i++) {
		__u32 key = (__u32)vpids[i];

		bpf_map__delete_elem(roots, &key, sizeof(key), 0);
	}
	if (iter_fd >= 0)
		close(iter_fd);
	return err;
}

/* Atomic operations on the tree state the kernel updates concurrently. */
#define LOAD(x) __atomic_load_n(&(x), __ATOMIC_SEQ_CST)
#define STORE(x, v) __atomic_store_n(&(x), (v), __ATOMIC_SEQ_CST)

static void raise_to(__s64 *peak, __s64 v)
{
	__s64 seen = LOAD(*peak);

	while (v > seen && !__atomic_compare_exchange_n(peak, &seen, v, false,
							__ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST))
		;
}

/*
 * At a window's cut, record who holds the memory now: a window whose peak
 * never rises above the cut still names its holders. Written under the
 * kernel side's snapshot lock and sequence, from the mm map.
 */
static void snapshot_at_cut(struct tracker *t, __s64 sum)
{
	struct tree_state *tree = &t->skel->bss->trees[0];
	struct bpf_map *map = t->skel->maps.mm_states;
	__u64 key, next, zero = 0, one = 1;
	__u32 n = 0, truncated = 0;
	void *prev = NULL;

	if (!t->attribution)
		return;
	if (!__atomic_compare_exchange_n(&tree->snap_lock, &zero, one, false,
					 __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST))
		return;
	__atomic_fetch_add(&tree->snap_seq, 1, __ATOMIC_SEQ_CST);
	while (bpf_map__get_next_key(map, prev, &next, sizeof(next)) == 0) {
		struct mm_state ms;
		struct holder *h;

		key = next;
		prev = &key;
		if (bpf_map__lookup_elem(map, &key, sizeof(key), &ms, sizeof(ms), 0) || ms.tree != 0)
			continue;
		if (n >= MAX_HOLDERS) {
			truncated = 1;
			break;
		}
		h = &t->skel->bss->holders[n++];
		h->tgid = ms.tgid;
		h->vpid = ms.vpid;
		h->pages = ms.pages[RSS_FILE] + ms.pages[RSS_ANON] + ms.pages[RSS_SHMEM];
		h->own_peak = ms.own_peak;
		memcpy(h->comm, ms.comm, sizeof(h->comm));
	}
	STORE(tree->snap_count, n);
	STORE(tree->snap_truncated, truncated);
	STORE(tree->snap_sum_pages, sum);
	STORE(tree->snap_ns, monotonic_ns());
	__atomic_fetch_add(&tree->snap_seq, 1, __ATOMIC_SEQ_CST);
	__atomic_fetch_sub(&tree->snap_lock, 1, __ATOMIC_SEQ_CST);
}

int tracker_close_window(struct tracker *t, struct tree_reading *closed)
{
	struct tree_state *tree = &t->skel->bss->trees[0];
	__s64 sum;
	int err;

	err = tracker_read(t, closed);
	if (err)
		return err;
	closed->holders_err = tracker_read_holders(t, closed->holders, MAX_HOLDERS, &closed->holders_info);
	/*
	 * The peak restarts from the sum at this instant. The exchange makes
	 * the cut: a peak raised before it belongs to the closing window, one
	 * raised after it to the next. A sum reached just before the
	 * exchange but after the read is then raised into the new window, so
	 * the new window never starts below the current sum.
	 */
	sum = LOAD(tree->sum_pages);
	closed->tree.peak_pages = __atomic_exchange_n(&tree->peak_pages, sum, __ATOMIC_SEQ_CST);
	/* The new window's peak is the sum now, off by at most the lag now. */
	closed->tree.peak_lag_pages = __atomic_exchange_n(&tree->peak_lag_pages, LOAD(tree->lag_pages),
							  __ATOMIC_SEQ_CST);
	closed->tree.upper_pages = __atomic_exchange_n(&tree->upper_pages,
						       sum + LOAD(tree->lag_pages), __ATOMIC_SEQ_CST);
	closed->window_end_sum = sum;
	STORE(tree->peak_ns, monotonic_ns());
	STORE(tree->peak_breakdown[RSS_FILE], LOAD(tree->pages[RSS_FILE]));
	STORE(tree->peak_breakdown[RSS_ANON], LOAD(tree->pages[RSS_ANON]));
	STORE(tree->peak_breakdown[RSS_SHMEM], LOAD(tree->pages[RSS_SHMEM]));
	STORE(tree->peak_mms, LOAD(tree->mms_live));
	STORE(tree->peak_procs, LOAD(tree->procs_live));
	STORE(tree->mms_max, LOAD(tree->mms_live));
	raise_to(&tree->peak_pages, LOAD(tree->sum_pages));
	snapshot_at_cut(t, sum);
	return 0;
}

int tracker_read_holders(struct tracker *t, struct holder *out, size_t max, struct holders_info *info)
{
	struct tree_state *tree = &t->skel->bss->trees[0];

	memset(info, 0, sizeof(*info));
	if (!t->attribution)
		return -EOPNOTSUPP;
	/* A seqlock read: retry while the kernel side is writing. */
	for (int tries = 0; tries < 1000; tries++) {
		__u64 seq = LOAD(tree->snap_seq);
		__u32 n;

		if (seq & 1)
			continue;
		n = LOAD(tree->snap_count);
		if (n > MAX_HOLDERS)
			n = MAX_HOLDERS;
		if (n > max)
			n = (__u32)max;
		memcpy(out, t->skel->bss->holders, n * sizeof(*out));
		info->count = n;
		info->truncated = LOAD(tree->snap_truncated) || n < LOAD(tree->snap_count);
		info->sum_pages = LOAD(tree->snap_sum_pages);
		info->taken_ns = LOAD(tree->snap_ns);
		info->snapshots = LOAD(tree->snapshots);
		__atomic_thread_fence(__ATOMIC_SEQ_CST);
		if (LOAD(tree->snap_seq) == seq)
			return 0;
	}
	return -EAGAIN;
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

__u64 monotonic_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * 1000000000ULL + (__u64)ts.tv_nsec;
}

int tracker_read(struct tracker *t, struct tree_reading *out)
{
	struct tracker_bpf *s = t->skel;

	memset(out, 0, sizeof(*out));
	/* Field by field; the kernel updates them concurrently. */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	out->tree = s->bss->trees[0];
	out->missed_events = missed_runs(s->progs.handle_rss_stat) +
			     missed_runs(s->progs.handle_rss_stat_nosnap) +
			     missed_runs(s->progs.handle_fork) +
			     missed_runs(s->progs.handle_fork_nosnap) +
			     missed_runs(s->progs.handle_exec) +
			     missed_runs(s->progs.handle_exec_nosnap) +
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

bool tracker_has_attribution(const struct tracker *t)
{
	return t->attribution;
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
	ring_buffer__free(t->sums);
	tracker_bpf__destroy(t->skel);
	free(t);
}
