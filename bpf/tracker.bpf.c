// SPDX-License-Identifier: GPL-2.0
/*
 * peakbpf kernel side: keeps each tracked tree's summed rss and its running
 * maximum, updated on every change of an mm's rss counters.
 *
 * Rules (DESIGN.md section 3): per-mm state is keyed by the mm pointer,
 * because rss_stat often fires from another task's context (fork copies,
 * exit zaps, reclaim); an mm leaves its tree at teardown (exit_mmap), not at
 * process exit, because mm addresses are reused; untracked events are
 * rejected with one lookup, because rss_stat fires on every fault.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "tracker.h"
#include "compat.bpf.h"

#define PEAK_CAS_TRIES 16
#define EEXIST 17
/* A plain load the compiler may not tear, cache or move (as the kernel's). */
#define READ_ONCE(x) (*(const volatile typeof(x) *)&(x))

char LICENSE[] SEC("license") = "GPL";

/* Set by userspace before load. */
const volatile __s64 counter_lag_pages = 0;     /* max lag of a cheap read */
const volatile __u32 nr_cpus = 1;               /* possible CPUs */

struct tree_state trees[MAX_TREES];
__u64 cpu_offset[MAX_CPUS];     /* __per_cpu_offset[cpu], from learn_cpu_offsets */
__u32 cpu_offsets_ready;
/* Pointers pass through here to become plain numbers (needs CAP_PERFMON). */
volatile __u64 addr_scratch;

/* A per-CPU array whose element addresses reveal the per-CPU offsets. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} percpu_probe SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, DEFAULT_MAX_TRACKED);
	__type(key, __u64);             /* struct mm_struct * */
	__type(value, struct mm_state);
} mm_states SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, DEFAULT_MAX_TRACKED);
	__type(key, __u32);             /* tgid */
	__type(value, struct task_state);
} task_states SEC(".maps");

static __always_inline struct tree_state *tree_of(__u32 id)
{
	if (id >= MAX_TREES)
		return NULL;
	return &trees[id];
}

/* Running maximum: a CAS loop, so a peak raised concurrently is never lost. */
static __always_inline void raise_peak(struct tree_state *t, __s64 sum)
{
	for (int i = 0; i < PEAK_CAS_TRIES; i++) {
		__s64 seen = READ_ONCE(t->peak_pages);

		if (sum <= seen)
			return;
		if (__sync_val_compare_and_swap(&t->peak_pages, seen, sum) != seen)
			continue;
		/* Context for the report; racing writers may interleave here,
		 * which only blurs the breakdown, never the peak. */
		t->peak_ns = bpf_ktime_get_ns();
		t->peak_breakdown[RSS_FILE] = READ_ONCE(t->pages[RSS_FILE]);
		t->peak_breakdown[RSS_ANON] = READ_ONCE(t->pages[RSS_ANON]);
		t->peak_breakdown[RSS_SHMEM] = READ_ONCE(t->pages[RSS_SHMEM]);
		t->peak_mms = READ_ONCE(t->mms_live);
		t->peak_procs = READ_ONCE(t->procs_live);
		return;
	}
	__sync_fetch_and_add(&t->peak_races, 1);
}

static __always_inline void add_to_tree(struct tree_state *t, int slot, __s64 delta)
{
	if (!delta || slot < 0 || slot >= RSS_SLOTS)
		return;
	__sync_fetch_and_add(&t->pages[slot], delta);
	raise_peak(t, __sync_fetch_and_add(&t->sum_pages, delta) + delta);
}

static __always_inline void max_store(__s64 *dst, __s64 v)
{
	for (int i = 0; i < PEAK_CAS_TRIES; i++) {
		__s64 seen = READ_ONCE(*dst);

		if (v <= seen || __sync_val_compare_and_swap(dst, seen, v) == seen)
			return;
	}
}

/*
 * Bring a counter's current value into the sum; xchg makes the deltas of
 * concurrent updaters telescope to the last value read.
 *
 * The gate: a cheap read may be off by counter_lag_pages. If even the
 * highest value the tree sum could then have stays at or below the peak,
 * the cheap value is stored with that lag; otherwise this counter is summed
 * over every CPU (exact, lag 0). While the gate is open the peak can be off
 * by no more than the lag left in the other counters: bound_pages keeps the
 * largest such lag, and is 0 when every counter near the peak was exact.
 */
static __always_inline void apply_slot(struct tree_state *t, struct mm_state *ms,
				       struct mm_struct *mm, int slot)
{
	__s64 now, old, lag, old_lag;
	bool gate_open;

	if (slot < 0 || slot >= RSS_SLOTS)
		return;
	now = mm_slot_pages(mm, slot);
	lag = counter_lag_pages;
	gate_open = READ_ONCE(t->sum_pages) - READ_ONCE(ms->pages[slot]) + now +
		    READ_ONCE(t->lag_pages) - READ_ONCE(ms->lag[slot]) + lag >
		    READ_ONCE(t->peak_pages);
	if (gate_open && lag && rss_counters_are_percpu() && READ_ONCE(cpu_offsets_ready)) {
		now = mm_slot_pages_exact(mm, slot, cpu_offset, nr_cpus);
		lag = 0;
		__sync_fetch_and_add(&t->exact_reads, 1);
	} else {
		__sync_fetch_and_add(&t->cheap_reads, 1);
	}
	old_lag = __sync_lock_test_and_set(&ms->lag[slot], lag);
	if (lag != old_lag)
		__sync_fetch_and_add(&t->lag_pages, lag - old_lag);
	old = __sync_lock_test_and_set(&ms->pages[slot], now);
	add_to_tree(t, slot, now - old);
	if (gate_open)
		max_store(&t->bound_pages, READ_ONCE(t->lag_pages));
}

/* Enter an mm into a tree with all its counters as they are now. */
static __always_inline void enter_mm(struct mm_struct *mm, __u32 tree, __u32 tgid)
{
	struct tree_state *t = tree_of(tree);
	struct mm_state init = { .tree = tree, .tgid = tgid };
	struct mm_state *ms;
	__u64 key = (__u64)mm;
	long err;

	if (!t || !mm)
		return;
	err = bpf_map_update_elem(&mm_states, &key, &init, BPF_NOEXIST);
	if (err == -EEXIST)
		return;
	if (err) {
		__sync_fetch_and_add(&t->drop_mm_full, 1);
		return;
	}
	ms = bpf_map_lookup_elem(&mm_states, &key);
	if (!ms)
		return;
	__sync_fetch_and_add(&t->mms_entered, 1);
	max_store(&t->mms_max, __sync_fetch_and_add(&t->mms_live, 1) + 1);
	apply_slot(t, ms, mm, RSS_FILE);
	apply_slot(t, ms, mm, RSS_ANON);
	apply_slot(t, ms, mm, RSS_SHMEM);
}

SEC("tp_btf/rss_stat")
int BPF_PROG(handle_rss_stat, struct mm_struct *mm, int member)
{
	__u64 key = (__u64)mm;
	struct mm_state *ms = bpf_map_lookup_elem(&mm_states, &key);
	struct tree_state *t;

	if (!ms)
		return 0;       /* not ours: the common case, keep it first */
	t = tree_of(ms->tree);
	if (!t)
		return 0;
	__sync_fetch_and_add(&t->events, 1);
	apply_slot(t, ms, mm, rss_slot_of_member(member));
	return 0;
}

SEC("tp_btf/sched_process_fork")
int BPF_PROG(handle_fork, struct task_struct *parent, struct task_struct *child)
{
	__u32 ptgid = parent->tgid, ctgid = child->tgid;
	struct task_state *ps, cs = {};
	struct tree_state *t;

	if (ptgid == ctgid)
		return 0;       /* a thread: same process, same mm */
	ps = bpf_map_lookup_elem(&task_states, &ptgid);
	if (!ps)
		return 0;
	t = tree_of(ps->tree);
	if (!t)
		return 0;
	cs.tree = ps->tree;
	if (bpf_map_update_elem(&task_states, &ctgid, &cs, BPF_NOEXIST)) {
		__sync_fetch_and_add(&t->drop_task_full, 1);
		return 0;
	}
	__sync_fetch_and_add(&t->procs_entered, 1);
	__sync_fetch_and_add(&t->procs_live, 1);
	/* The child's copied pages were counted (from the parent's context)
	 * before this event: enter_mm reads them all now. A vfork or CLONE_VM
	 * child shares an mm that is already in: enter_mm sees EEXIST. */
	enter_mm(child->mm, cs.tree, ctgid);
	return 0;
}

SEC("tp_btf/sched_process_exec")
int BPF_PROG(handle_exec, struct task_struct *p, pid_t old_pid, struct linux_binprm *bprm)
{
	__u32 tgid = p->tgid;
	struct task_state *ts = bpf_map_lookup_elem(&task_states, &tgid);

	if (!ts)
		return 0;
	/* The new image enters; the old mm leaves at its own teardown. */
	enter_mm(p->mm, ts->tree, tgid);
	return 0;
}

SEC("tp_btf/sched_process_exit")
int BPF_PROG(handle_exit, struct task_struct *p)
{
	__u32 tgid = p->tgid;
	struct task_state *ts;
	struct tree_state *t;

	/* Only the last thread's exit ends the process. signal->live is
	 * decremented before this tracepoint on every kernel; the group_dead
	 * argument exists only on newer ones. The task's mm may already be
	 * gone here (before 6.16): nothing below needs it. */
	if (BPF_CORE_READ(p, signal, live.counter) != 0)
		return 0;
	ts = bpf_map_lookup_elem(&task_states, &tgid);
	if (!ts)
		return 0;
	t = tree_of(ts->tree);
	if (bpf_map_delete_elem(&task_states, &tgid) == 0 && t)
		__sync_fetch_and_add(&t->procs_live, -1);
	return 0;
}

static __always_inline void leave_mm(struct mm_struct *mm)
{
	__u64 key = (__u64)mm;
	struct mm_state *ms = bpf_map_lookup_elem(&mm_states, &key);
	struct tree_state *t;

	if (!ms)
		return;
	t = tree_of(ms->tree);
	if (t) {
		__sync_fetch_and_add(&t->lag_pages, -__sync_lock_test_and_set(&ms->lag[RSS_FILE], 0));
		__sync_fetch_and_add(&t->lag_pages, -__sync_lock_test_and_set(&ms->lag[RSS_ANON], 0));
		__sync_fetch_and_add(&t->lag_pages, -__sync_lock_test_and_set(&ms->lag[RSS_SHMEM], 0));
		add_to_tree(t, RSS_FILE, -__sync_lock_test_and_set(&ms->pages[RSS_FILE], 0));
		add_to_tree(t, RSS_ANON, -__sync_lock_test_and_set(&ms->pages[RSS_ANON], 0));
		add_to_tree(t, RSS_SHMEM, -__sync_lock_test_and_set(&ms->pages[RSS_SHMEM], 0));
	}
	if (bpf_map_delete_elem(&mm_states, &key) == 0 && t)
		__sync_fetch_and_add(&t->mms_live, -1);
}

/*
 * mm teardown. The mmap:exit_mmap tracepoint came with the maple tree (6.1,
 * "mm: start tracking VMAs with maple tree"), fired after the pages are
 * unmapped; older kernels get fentry on exit_mmap() instead. Userspace
 * probes the kernel's BTF and autoloads exactly one of the two.
 */
SEC("tp_btf/exit_mmap")
int BPF_PROG(handle_exit_mmap_tp, struct mm_struct *mm)
{
	leave_mm(mm);
	return 0;
}

SEC("fentry/exit_mmap")
int BPF_PROG(handle_exit_mmap_fentry, struct mm_struct *mm)
{
	leave_mm(mm);
	return 0;
}

/*
 * Run once by userspace (BPF_PROG_TEST_RUN) on 6.2+ kernels: learn each
 * CPU's per-CPU offset. The address of CPU n's copy of percpu_probe's
 * element, minus the map's own __percpu pointer (bpf_array->pptrs[0]),
 * is __per_cpu_offset[n].
 */
SEC("syscall")
int learn_cpu_offsets(void *ctx)
{
	__u32 zero = 0;
	__u64 base = 0;

	addr_scratch = (__u64)&percpu_probe;
	if (bpf_probe_read_kernel(&base, sizeof(base),
				  (void *)(addr_scratch + bpf_core_field_offset(struct bpf_array, pptrs))))
		return 1;
	for (__u32 cpu = 0; cpu < MAX_CPUS && cpu < nr_cpus; cpu++) {
		void *slot = bpf_map_lookup_percpu_elem(&percpu_probe, &zero, cpu);

		if (!slot)
			return 2;
		addr_scratch = (__u64)slot;
		cpu_offset[cpu] = addr_scratch - base;
	}
	cpu_offsets_ready = 1;
	return 0;
}
