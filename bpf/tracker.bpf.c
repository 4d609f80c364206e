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
/* Counters nobody reads back in BPF: XADD, on every kernel. */
#define COUNT(p, v) __sync_fetch_and_add((p), (v))

char LICENSE[] SEC("license") = "GPL";

/* Set by userspace before load; the verifier sees them as constants. */
const volatile bool have_fetch_atomics = true;  /* BPF_FETCH atomics (5.12+) */
const volatile bool have_for_each = true;       /* bpf_for_each_map_elem (5.13+) */
const volatile __s64 counter_lag_pages = 0;     /* max lag of a cheap read */
const volatile __u32 nr_cpus = 1;               /* possible CPUs */
const volatile __s64 snap_step_min_pages = 256; /* snapshot step floor */
const volatile bool record_sums = false;        /* --compare-sampler */

struct tree_state trees[MAX_TREES];
/*
 * How many tracked mms hash to each slot. rss_stat fires on every fault on
 * the machine; a load from this small array (no helper call) rejects
 * almost every untracked event before the hash map lookup.
 */
#define MM_FILTER_SLOTS 4096
__u32 mm_filter[MM_FILTER_SLOTS];
struct holder holders[MAX_HOLDERS];     /* tree 0's latest peak snapshot */
__u64 cpu_offset[MAX_CPUS];     /* __per_cpu_offset[cpu], from learn_cpu_offsets */
__u32 cpu_offsets_ready;
/* Pointers pass through here to become plain numbers (needs CAP_PERFMON). */
volatile __u64 addr_scratch;
/* peakbpf's PID namespace and its level, set by enter_existing. */
__u64 caller_pidns;
__u32 caller_pidns_level;
__u64 iter_entered;             /* processes enter_existing entered, for its passes */
__u32 rss_percpu_kernel;        /* set by learn_cpu_offsets: counters are percpu (6.2+) */

/* Every change of tree 0's sum, when record_sums is set. Sized by userspace. */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4096);
} sum_events SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, MAX_ROOTS);
	__type(key, __u32);             /* PID in peakbpf's PID namespace */
	__type(value, struct root_req);
} roots SEC(".maps");

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

/*
 * The filter slot of an mm, from the low 32 bits of its address (mm_structs
 * are at least 64-byte aligned: the bits above 6). Taking a 32-bit copy is
 * the one operation the verifier allows on a kernel pointer held in a
 * register (it becomes a plain number, as with CAP_PERFMON it may); shifts
 * and masks of the pointer itself are refused.
 */
static __always_inline __u32 mm_filter_slot(const void *mm)
{
	__u32 low;

	/* w = w: a 32-bit move, which C cannot be made to emit reliably. */
	asm volatile("%0 = %1" : "=w"(low) : "w"((__u32)(__u64)mm));
	return (((low >> 6) * 2654435761U) >> 20) & (MM_FILTER_SLOTS - 1);
}

static __always_inline struct tree_state *tree_of(__u32 id)
{
	if (id >= MAX_TREES)
		return NULL;
	return &trees[id];
}

/* A process's PID as seen in namespace ns at level, or 0 if it is not
 * visible there. struct upid { int nr; struct pid_namespace *ns; } has kept
 * its layout since namespaces began. */
static __always_inline __u32 pid_in_ns(struct task_struct *leader, __u64 ns, unsigned int level)
{
	struct pid *pid = BPF_CORE_READ(leader, thread_pid);
	struct upid up = {};

	if (!pid || BPF_CORE_READ(pid, level) < level)
		return 0;
	if (bpf_probe_read_kernel(&up, sizeof(up),
				  (void *)pid + bpf_core_field_offset(struct pid, numbers) +
				  (__u64)level * sizeof(struct upid)))
		return 0;
	return (__u64)up.ns == ns ? (__u32)up.nr : 0;
}

struct snap_ctx {
	__u32 tree;
	__u32 n;
	__u32 truncated;
};

static long snap_one(struct bpf_map *map, __u64 *key, struct mm_state *ms, struct snap_ctx *c)
{
	struct holder *h;
	__u32 i = c->n;

	if (ms->tree != c->tree)
		return 0;
	if (i >= MAX_HOLDERS) {
		c->truncated = 1;
		return 1;       /* stop */
	}
	h = &holders[i];
	h->tgid = ms->tgid;
	h->vpid = ms->vpid;
	h->pages = READ_ONCE(ms->pages[RSS_FILE]) + READ_ONCE(ms->pages[RSS_ANON]) +
		   READ_ONCE(ms->pages[RSS_SHMEM]);
	h->own_peak = READ_ONCE(ms->own_peak);
	__builtin_memcpy(h->comm, ms->comm, COMM_LEN);
	c->n = i + 1;
	return 0;
}

/*
 * Record who holds the memory, each time the peak has grown by a step. A
 * walk of the tree on every new peak would turn a growing tree's every
 * fault into O(mms); by steps it is O(log(peak) * mms) over a whole run.
 * Userspace reads it under snap_seq like a seqlock.
 */
static __always_inline void snapshot_holders(struct tree_state *t, __u32 tree, __s64 sum)
{
	struct snap_ctx c = { .tree = tree };
	__s64 last = READ_ONCE(t->snap_sum_pages), step;

	if (!have_for_each || tree != 0)
		return;
	step = last > 0 ? (__s64)((__u64)last / SNAP_STEP_DIVISOR) : 0;
	if (step < snap_step_min_pages)
		step = snap_step_min_pages;
	if (last && sum < last + step)
		return;
	if (__sync_fetch_and_add(&t->snap_lock, 1) != 0)
		goto unlock;    /* another CPU is taking one */
	COUNT(&t->snap_seq, 1);
	bpf_for_each_map_elem(&mm_states, snap_one, &c, 0);
	t->snap_count = c.n;
	t->snap_truncated = c.truncated;
	t->snap_sum_pages = sum;
	t->snap_ns = bpf_ktime_get_ns();
	COUNT(&t->snapshots, 1);
	COUNT(&t->snap_seq, 1);
unlock:
	COUNT(&t->snap_lock, -1);
}

/*
 * Programs that can raise the peak come in twins (compat.bpf.h, NOSNAP_SEC):
 * one with the callbacks of bpf_for_each_map_elem (this snapshot, and
 * refresh_tree), and one without any, for kernels before 5.13. The
 * functions between them take cb, a constant: false in the twin.
 */
static __always_inline void snapshot_if_raised(__s64 before)
{
	__s64 peak = READ_ONCE(trees[0].peak_pages);

	if (peak > before)
		snapshot_holders(&trees[0], 0, peak);
}

/* Running maximum: a CAS loop, so a peak raised concurrently is never lost. */
static __always_inline void raise_peak(struct tree_state *t, __u32 tree, __s64 sum)
{
	for (int i = 0; i < PEAK_CAS_TRIES; i++) {
		__s64 seen = READ_ONCE(t->peak_pages);

		if (sum <= seen)
			return;
		if (!atomic_cas(&t->peak_pages, seen, sum))
			continue;
		/* Context for the report; racing writers may interleave here,
		 * which only blurs the breakdown, never the peak. */
		t->peak_ns = bpf_ktime_get_ns();
		t->peak_breakdown[RSS_FILE] = READ_ONCE(t->pages[RSS_FILE]);
		t->peak_breakdown[RSS_ANON] = READ_ONCE(t->pages[RSS_ANON]);
		t->peak_breakdown[RSS_SHMEM] = READ_ONCE(t->pages[RSS_SHMEM]);
		t->peak_mms = READ_ONCE(t->mms_live);
		t->peak_procs = READ_ONCE(t->procs_live);
		t->peak_lag_pages = READ_ONCE(t->lag_pages);
		/* Who holds it: the program snapshots when the event is done
		 * (snapshot_if_raised), so that its twin can go without. */
		return;
	}
	COUNT(&t->peak_races, 1);
}

/* Userspace drains the ring on a timer: no wakeup per event. */
static __always_inline void record_sum(struct tree_state *t, __s64 sum)
{
	struct sum_event *e = bpf_ringbuf_reserve(&sum_events, sizeof(*e), 0);

	if (!e) {
		COUNT(&t->record_drops, 1);
		return;
	}
	e->ns = bpf_ktime_get_ns();
	e->sum_pages = sum;
	bpf_ringbuf_submit(e, BPF_RB_NO_WAKEUP);
}

static __always_inline void add_to_tree(struct tree_state *t, __u32 tree, int slot, __s64 delta)
{
	__s64 sum;

	if (!delta || slot < 0 || slot >= RSS_SLOTS)
		return;
	atomic_add(&t->pages[slot], delta);
	sum = atomic_add_return(&t->sum_pages, delta);
	if (record_sums && tree == 0)
		record_sum(t, sum);
	raise_peak(t, tree, sum);
}

static __always_inline void max_store(__s64 *dst, __s64 v)
{
	for (int i = 0; i < PEAK_CAS_TRIES; i++) {
		__s64 seen = READ_ONCE(*dst);

		if (v <= seen || atomic_cas(dst, seen, v))
			return;
	}
}

/* Store a counter's new value and lag; xchg makes the deltas of concurrent
 * updaters telescope to the last value read. */
static __always_inline void store_slot(struct tree_state *t, struct mm_state *ms, int slot,
				       __s64 now, __s64 lag)
{
	__s64 old, old_lag, mine;

	if (slot < 0 || slot >= RSS_SLOTS)
		return;
	/* Most events leave the lag as it was: no locked exchange for them. */
	if (READ_ONCE(ms->lag[slot]) != lag) {
		old_lag = atomic_xchg(&ms->lag[slot], lag);
		if (lag != old_lag)
			atomic_add(&t->lag_pages, lag - old_lag);
	}
	old = atomic_xchg(&ms->pages[slot], now);
	mine = READ_ONCE(ms->pages[RSS_FILE]) + READ_ONCE(ms->pages[RSS_ANON]) +
	       READ_ONCE(ms->pages[RSS_SHMEM]);
	if (mine > READ_ONCE(ms->own_peak))
		WRITE_ONCE(ms->own_peak, mine);
	add_to_tree(t, ms->tree, slot, now - old);
}

/* A counter of this mm last read cheaply: read it exactly now. */
static __always_inline void refresh_exact(struct tree_state *t, struct mm_state *ms,
					  struct mm_struct *mm, int slot)
{
	if (!READ_ONCE(ms->lag[slot]))
		return;
	store_slot(t, ms, slot, mm_slot_pages_exact(mm, slot, cpu_offset, nr_cpus), 0);
	COUNT(&t->exact_reads, 1);
}

struct refresh_ctx {
	__u32 tree;
	__u32 refreshed;
};

/* Read exactly every counter of one mm still stored cheaply. The mm is
 * alive: it leaves the map at its teardown, before it is freed. */
static long refresh_one(struct bpf_map *map, __u64 *key, struct mm_state *ms, struct refresh_ctx *c)
{
	struct tree_state *t = tree_of(c->tree);
	struct mm_struct *mm = (struct mm_struct *)*key;

	if (!t || ms->tree != c->tree)
		return 0;
	for (int slot = 0; slot < RSS_SLOTS; slot++) {
		__s64 now, old;

		if (!READ_ONCE(ms->lag[slot]))
			continue;
		now = mm_slot_pages_exact(mm, slot, cpu_offset, nr_cpus);
		atomic_add(&t->lag_pages, -atomic_xchg(&ms->lag[slot], 0));
		old = atomic_xchg(&ms->pages[slot], now);
		atomic_add(&t->pages[slot], now - old);
		atomic_add(&t->sum_pages, now - old);
		c->refreshed++;
	}
	return 0;
}

/*
 * The gate is open and other mms of the tree still hold cheap values (an
 * idle parent, say): read those exactly too, so the peak being set is
 * exact. Each mm is read again only after it was stored cheaply again.
 */
static __always_inline void refresh_tree(struct tree_state *t, __u32 tree)
{
	struct refresh_ctx c = { .tree = tree };

	bpf_for_each_map_elem(&mm_states, refresh_one, &c, 0);
	COUNT(&t->exact_reads, c.refreshed);
	COUNT(&t->tree_refreshes, 1);
	raise_peak(t, tree, READ_ONCE(t->sum_pages));
}

/*
 * Bring a counter's current value into the sum.
 *
 * The gate: a cheap read may be off by counter_lag_pages. If even the
 * highest value the tree sum could then have stays at or below the peak,
 * the cheap value is stored with that lag; otherwise this counter, and any
 * other counter of the same mm still stored cheaply, is summed over every
 * CPU (exact, lag 0). The peak can then be off by the lag left in other
 * counters: when it was set (peak_lag_pages) or, while the gate was open,
 * by how far the sum could have passed it (upper_pages); both are 0 when
 * every counter near the peak was exact (peak_bound_pages()).
 */
static __always_inline void apply_slot(struct tree_state *t, struct mm_state *ms,
				       struct mm_struct *mm, int slot, bool cb)
{
	__s64 now, lag;
	bool gate_open, exact;

	if (slot < 0 || slot >= RSS_SLOTS)
		return;
	now = mm_slot_pages(mm, slot);
	lag = rss_counters_are_percpu() ? counter_lag_pages : 0;
	gate_open = cheap_read_could_raise_peak(READ_ONCE(t->sum_pages), READ_ONCE(t->lag_pages),
						READ_ONCE(t->peak_pages), READ_ONCE(ms->pages[slot]),
						READ_ONCE(ms->lag[slot]), now, lag);
	exact = gate_open && lag && rss_counters_are_percpu() && READ_ONCE(cpu_offsets_ready);
	if (exact) {
		now = mm_slot_pages_exact(mm, slot, cpu_offset, nr_cpus);
		lag = 0;
		COUNT(&t->exact_reads, 1);
	} else {
		COUNT(&t->cheap_reads, 1);
	}
	store_slot(t, ms, slot, now, lag);
	if (exact) {
		if (slot != RSS_FILE)
			refresh_exact(t, ms, mm, RSS_FILE);
		if (slot != RSS_ANON)
			refresh_exact(t, ms, mm, RSS_ANON);
		if (slot != RSS_SHMEM)
			refresh_exact(t, ms, mm, RSS_SHMEM);
		if (cb && have_for_each && READ_ONCE(t->lag_pages) > 0)
			refresh_tree(t, ms->tree);
	}
	if (gate_open)
		max_store(&t->upper_pages, READ_ONCE(t->sum_pages) + READ_ONCE(t->lag_pages));
}

/* Enter an mm into a tree with all its counters as they are now. */
static __always_inline void enter_mm(struct task_struct *task, struct mm_struct *mm,
				     __u32 tree, __u32 tgid, bool cb)
{
	struct tree_state *t = tree_of(tree);
	struct mm_state init = { .tree = tree, .tgid = tgid };
	struct mm_state *ms;
	__u64 key = (__u64)mm;
	long err;

	if (!t || !mm)
		return;
	init.vpid = pid_in_ns(task, caller_pidns, caller_pidns_level);
	BPF_CORE_READ_STR_INTO(&init.comm, task, comm);
	err = bpf_map_update_elem(&mm_states, &key, &init, BPF_NOEXIST);
	if (err == -EEXIST)
		return;
	if (err) {
		COUNT(&t->drop_mm_full, 1);
		return;
	}
	COUNT(&mm_filter[mm_filter_slot(mm)], 1);
	ms = bpf_map_lookup_elem(&mm_states, &key);
	if (!ms)
		return;
	COUNT(&t->mms_entered, 1);
	max_store(&t->mms_max, atomic_add_return(&t->mms_live, 1));
	apply_slot(t, ms, mm, RSS_FILE, cb);
	apply_slot(t, ms, mm, RSS_ANON, cb);
	apply_slot(t, ms, mm, RSS_SHMEM, cb);
}

static __always_inline int on_rss_stat(struct mm_struct *mm, int member, bool cb)
{
	__u64 key = (__u64)mm;
	struct mm_state *ms;
	struct tree_state *t;
	__s64 before;

	if (!READ_ONCE(mm_filter[mm_filter_slot(mm)]))
		return 0;       /* not ours: the common case, keep it first */
	ms = bpf_map_lookup_elem(&mm_states, &key);
	if (!ms)
		return 0;
	t = tree_of(ms->tree);
	if (!t)
		return 0;
	COUNT(&t->events, 1);
	before = READ_ONCE(trees[0].peak_pages);
	apply_slot(t, ms, mm, rss_slot_of_member(member), cb);
	if (cb)
		snapshot_if_raised(before);
	return 0;
}

SEC("tp_btf/rss_stat")
int BPF_PROG(handle_rss_stat, struct mm_struct *mm, int member)
{
	return on_rss_stat(mm, member, true);
}

NOSNAP_SEC("tp_btf/rss_stat")
int BPF_PROG(handle_rss_stat_nosnap, struct mm_struct *mm, int member)
{
	return on_rss_stat(mm, member, false);
}

static __always_inline int on_fork(struct task_struct *parent, struct task_struct *child, bool cb)
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
		COUNT(&t->drop_task_full, 1);
		return 0;
	}
	COUNT(&t->procs_entered, 1);
	COUNT(&t->procs_live, 1);
	/* The child's copied pages were counted (from the parent's context)
	 * before this event: enter_mm reads them all now. A vfork or CLONE_VM
	 * child shares an mm that is already in: enter_mm sees EEXIST. */
	enter_mm(child, child->mm, cs.tree, ctgid, cb);
	return 0;
}

SEC("tp_btf/sched_process_fork")
int BPF_PROG(handle_fork, struct task_struct *parent, struct task_struct *child)
{
	__s64 before = READ_ONCE(trees[0].peak_pages);

	on_fork(parent, child, true);
	snapshot_if_raised(before);
	return 0;
}

NOSNAP_SEC("tp_btf/sched_process_fork")
int BPF_PROG(handle_fork_nosnap, struct task_struct *parent, struct task_struct *child)
{
	return on_fork(parent, child, false);
}

static __always_inline int on_exec(struct task_struct *p, pid_t old_pid, struct linux_binprm *bprm,
				   bool cb)
{
	__u32 tgid = p->tgid;
	struct task_state *ts = bpf_map_lookup_elem(&task_states, &tgid);

	if (!ts)
		return 0;
	/* The new image enters; the old mm leaves at its own teardown. */
	enter_mm(p, p->mm, ts->tree, tgid, cb);
	return 0;
}

SEC("tp_btf/sched_process_exec")
int BPF_PROG(handle_exec, struct task_struct *p, pid_t old_pid, struct linux_binprm *bprm)
{
	__s64 before = READ_ONCE(trees[0].peak_pages);

	on_exec(p, old_pid, bprm, true);
	snapshot_if_raised(before);
	return 0;
}

NOSNAP_SEC("tp_btf/sched_process_exec")
int BPF_PROG(handle_exec_nosnap, struct task_struct *p, pid_t old_pid, struct linux_binprm *bprm)
{
	return on_exec(p, old_pid, bprm, false);
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
		COUNT(&t->procs_live, -1);
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
		atomic_add(&t->lag_pages, -atomic_xchg(&ms->lag[RSS_FILE], 0));
		atomic_add(&t->lag_pages, -atomic_xchg(&ms->lag[RSS_ANON], 0));
		atomic_add(&t->lag_pages, -atomic_xchg(&ms->lag[RSS_SHMEM], 0));
		add_to_tree(t, ms->tree, RSS_FILE, -atomic_xchg(&ms->pages[RSS_FILE], 0));
		add_to_tree(t, ms->tree, RSS_ANON, -atomic_xchg(&ms->pages[RSS_ANON], 0));
		add_to_tree(t, ms->tree, RSS_SHMEM, -atomic_xchg(&ms->pages[RSS_SHMEM], 0));
	}
	if (bpf_map_delete_elem(&mm_states, &key) == 0) {
		COUNT(&mm_filter[mm_filter_slot(mm)], -1);
		if (t)
			COUNT(&t->mms_live, -1);
	}
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
 * Run by userspace (read through an iterator fd) after it filled roots:
 * enter every process that is a root, or descends from one by fork
 * lineage, with its mm as it is now. The programs are attached before this
 * runs, so a fork racing with the walk is caught by handle_fork instead;
 * entries are NOEXIST, so meeting a process twice is harmless. PIDs are
 * matched in the namespace of the process reading the iterator: peakbpf.
 */
static __always_inline int on_task(struct bpf_iter__task *ctx, bool cb)
{
	struct task_struct *task = ctx->task;
	struct task_struct *me = (struct task_struct *)bpf_get_current_task();
	struct pid *mypid = BPF_CORE_READ(me, thread_pid);
	unsigned int level = BPF_CORE_READ(mypid, level);
	struct task_state ts = {}, *ps;
	struct root_req *req;
	struct tree_state *t;
	bool root = false;
	__u32 tgid, vpid, ptgid;
	__u64 ns = 0;

	if (!task || task->pid != task->tgid)
		return 0;       /* one visit per process: its leader */
	bpf_probe_read_kernel(&ns, sizeof(ns),
			      (void *)mypid + bpf_core_field_offset(struct pid, numbers) +
			      (__u64)level * sizeof(struct upid) + offsetof(struct upid, ns));
	caller_pidns = ns;
	caller_pidns_level = level;
	tgid = task->tgid;
	vpid = pid_in_ns(task, ns, level);
	req = vpid ? bpf_map_lookup_elem(&roots, &vpid) : NULL;
	if (req) {
		root = true;
		req->found = 1;
		req->tgid = tgid;
		ts.tree = req->tree;
	} else {
		/* A child of a process already in the tree. The walk goes by
		 * PID, and a child usually has a larger PID than its parent,
		 * so one pass takes most trees whole; userspace repeats the
		 * pass while it still finds processes (PIDs wrap). */
		ptgid = BPF_CORE_READ(task, real_parent, tgid);
		ps = bpf_map_lookup_elem(&task_states, &ptgid);
		if (!ps)
			return 0;
		ts.tree = ps->tree;
	}
	t = tree_of(ts.tree);
	if (!t)
		return 0;
	if (bpf_map_update_elem(&task_states, &tgid, &ts, BPF_NOEXIST) == 0) {
		COUNT(&t->procs_entered, 1);
		COUNT(&t->procs_live, 1);
		COUNT(&iter_entered, 1);
	} else if (!bpf_map_lookup_elem(&task_states, &tgid)) {
		COUNT(&t->drop_task_full, 1);
		return 0;
	}
	if (!root || req->enter_mm)
		enter_mm(task, task->mm, ts.tree, tgid, cb);
	return 0;
}

SEC("iter/task")
int enter_existing(struct bpf_iter__task *ctx)
{
	__s64 before = READ_ONCE(trees[0].peak_pages);

	on_task(ctx, true);
	snapshot_if_raised(before);
	return 0;
}

NOSNAP_SEC("iter/task")
int enter_existing_nosnap(struct bpf_iter__task *ctx)
{
	return on_task(ctx, false);
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

	rss_percpu_kernel = rss_counters_are_percpu();
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
