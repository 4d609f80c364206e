// SPDX-License-Identifier: GPL-2.0
/*
 * peakbpf kernel side: keeps each tree's summed rss and its running maximum,
 * updated on every change of a tracked mm's rss counters. One load keeps
 * MAX_TREES trees; each entry names its own, so an event costs one more
 * load to find it.
 *
 * Rules (docs/design.md): per-mm state is keyed by the mm pointer, because
 * rss_stat often fires from another task's context (fork copies, exit
 * zaps, reclaim); an mm leaves the tree at teardown (exit_mmap), not at
 * process exit, because mm addresses are reused; untracked events are
 * rejected before any map lookup, because rss_stat fires on every fault.
 * Everything on the rss_stat path is O(1): no map walk, no loop over CPUs.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "tracker.h"
#include "compat.bpf.h"

#define PEAK_CAS_TRIES 16
#define SUM_SWAP_TRIES 4        /* note_and_add; each try costs verification time */
#define EEXIST 17
/* Counters nobody reads back in BPF: XADD, on every kernel. */
#define COUNT(p, v) __sync_fetch_and_add((p), (v))

char LICENSE[] SEC("license") = "GPL";

/* Set by userspace before load; the verifier sees them as constants. */
const volatile bool has_fetch_atomics = true;   /* BPF_FETCH atomics (5.12+) */
const volatile __u32 nr_cpus = 1;               /* possible CPUs */
const volatile bool record_sums = false;        /* --timeline, --compare-sampler */
/* Before 6.2: the most pages one fault maps without an event (fault-around,
 * fault_around_bytes; kfeatures.c reads it). */
const volatile __u32 fault_pages = DEFAULT_FAULT_PAGES;

struct hot_state hot;
/* A tree by index, masked so that the verifier sees it in bounds. */
#define TREE(i) (&hot.trees[(i) & (MAX_TREES - 1)])
/*
 * How many tracked mms hash to each slot. rss_stat fires on every fault on
 * the machine; a load from this small array (no helper call) rejects
 * almost every untracked event before the hash map lookup.
 */
__u32 mm_filter[MM_FILTER_SLOTS];
struct departed_mm departed[MAX_DEPARTED];     /* every tree's, tagged with it */
__u64 departed_seq;                             /* departures from every tree */
__u32 percpu_rss_kernel;        /* has_percpu_rss, for userspace */
struct sum_check check;         /* verify_sums' result */
/* Pointers pass through here to become plain numbers (needs CAP_PERFMON). */
volatile __u64 addr_scratch;
/* peakbpf's PID namespace and its level, set by enter_existing. */
__u64 caller_pidns;
__u32 caller_pidns_level;
__u64 iter_entered;             /* processes enter_existing entered, for its passes */
__u32 dying_n;                  /* tgids in dying, from enter_existing */

/* Every change of the tree sum, when record_sums is set. Sized by userspace. */
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

/* Processes the attach walk met while their last thread was exiting: their
 * exit event may have fired already, so userspace removes their entries
 * after the walk (tracker.c, remove_dying). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, MAX_DYING);
	__type(key, __u32);
	__type(value, __u32);           /* tgid */
} dying SEC(".maps");

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
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, __u64);             /* struct mm_struct * */
	__type(value, struct mm_state);
} mm_states SEC(".maps");

/*
 * The maps of mms and processes are allocated per entry (BPF_F_NO_PREALLOC),
 * so that loading costs the same whatever --max-tracked says (preallocated,
 * 262144 entries took 400 ms to load) and only what is tracked is pinned.
 * Entries are added at fork, exec and attach, never on the rss_stat path.
 * 6.2+: each CPU's slots as last taken, also per tracked mm: preallocated,
 * it would pin max_tracked x 16 B on every CPU.
 */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(max_entries, DEFAULT_MAX_TRACKED);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, __u64);             /* struct mm_struct * */
	__type(value, struct mm_cpu_slots);
} mm_cpu_slots SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, DEFAULT_MAX_TRACKED);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, __u32);             /* tgid */
	__type(value, struct task_state);
} task_states SEC(".maps");

/* Before 6.2: the tree's threads (struct thread_state), entered at fork,
 * exec and attach, never on the rss_stat path. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, DEFAULT_MAX_TRACKED);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, __u32);             /* PID (global TID) */
	__type(value, struct thread_state);
} thread_states SEC(".maps");

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
	return mm_filter_hash(low);
}

/* The exact per-CPU path: 6.2+ counters, offsets learned. */
static __always_inline bool exact_path(void)
{
	return has_percpu_rss() && READ_ONCE(hot.cpu_offsets_ready);
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

/*
 * Before an mm's rss changes, note what it held (struct peak_mark): on its
 * first change in this window, and on its first change after each new
 * peak. O(1): the holders at the peak are read from these by userspace,
 * never by walking the tree here.
 */
static __always_inline void note_change(struct tree_state *t, struct mm_state *ms)
{
	peak_mark_note(ms->mark, READ_ONCE(t->window), READ_ONCE(t->peak_pages), ms->pages);
}

/* Context for the report, by whoever raised the peak (the breakdown comes
 * from the marks); racing writers may blur it, never the peak. */
static __always_inline void peak_context(struct tree_state *t)
{
	t->peak_ns = bpf_ktime_get_ns();
	t->peak_mms = READ_ONCE(t->mms_live);
	t->peak_procs = READ_ONCE(t->procs_live);
}

/* Running maximum: a CAS loop, so a peak raised concurrently is never lost. */
static __always_inline void raise_peak(struct tree_state *t, __s64 sum)
{
	for (int i = 0; i < PEAK_CAS_TRIES; i++) {
		__s64 seen = READ_ONCE(t->peak_pages);

		if (sum <= seen)
			return;
		if (!atomic_cas(&t->peak_pages, seen, sum))
			continue;
		peak_context(t);
		return;
	}
	COUNT(&t->peak_races, 1);
}

/* Before 6.2: this window's largest sum + cache bound (struct tree_state). */
static __always_inline void raise_upper(struct tree_state *t)
{
	__s64 v = sum_of_word(READ_ONCE(t->sum_word)) + READ_ONCE(t->bound_sum_pages);

	for (int i = 0; i < PEAK_CAS_TRIES; i++) {
		__s64 seen = READ_ONCE(t->upper_pages);

		if (v <= seen || atomic_cas(&t->upper_pages, seen, v))
			return;
	}
	COUNT(&t->peak_races, 1);
}

/* Before 6.2: a thread's bound becomes b; the tree's sum of them follows.
 * Only the thread itself moves its entry (its events, its exec and exit;
 * fork makes it before it runs): plain loads and stores, and an XADD, so
 * that this may run in a subprogram, where poison_fetch_atomics (tracker.c)
 * cannot reach before 5.12. The caller raises the upper end. */
static __always_inline void set_thread_bound(struct tree_state *t, struct thread_state *ts, __s64 b)
{
	__s64 d = b - READ_ONCE(ts->bound_pages);

	if (!d)
		return;
	WRITE_ONCE(ts->bound_pages, b);
	atomic_add(&t->bound_sum_pages, d);
}

/* Before 6.2: a thread of the tree begins (fork, exec, attach), with its
 * cache empty or unknown: it may cache CACHE_FAULTS faults unseen. */
static __always_inline void enter_thread(struct tree_state *t, __u32 tree, __u32 pid)
{
	struct thread_state ts = { .bound_pages = cache_bound_pages(0, 0, 1, fault_pages),
				   .tree = tree };
	int err = MAP_UPDATE_ERR(bpf_map_update_elem(&thread_states, &pid, &ts, BPF_NOEXIST));

	if (err == -EEXIST)
		return;
	if (err) {
		COUNT(&t->drop_task_full, 1);
		return;
	}
	/* Made whole by the insert: the thread may run already (attach). */
	COUNT(&t->threads_live, 1);
	atomic_add(&t->bound_sum_pages, ts.bound_pages);
	raise_upper(t);
}

/* Before 6.2: a thread leaves (its exit synced its cache): its bound goes. */
static __always_inline void leave_thread(__u32 pid)
{
	struct thread_state *e = bpf_map_lookup_elem(&thread_states, &pid);
	struct tree_state *t;

	if (!e)
		return;
	t = TREE(e->tree);
	set_thread_bound(t, e, 0);
	if (bpf_map_delete_elem(&thread_states, &pid) == 0)
		COUNT(&t->threads_live, -1);
}

/*
 * Before 6.2, after an event was applied: if the current thread is one of
 * the tree's, its cache is read as it is now and its bound follows
 * (cache_bound_pages), whichever mm the event was about: its cache is its
 * own mm's. One lookup and one probe read; the other threads' bounds stand
 * until their own events. Not inlined and without arguments: the 6.2+
 * program, where the call is dead, keeps the registers it had without it.
 */
static __noinline int pre62_after_event(void)
{
	struct task_struct *task = (struct task_struct *)bpf_get_current_task();
	__u32 pid = (__u32)bpf_get_current_pid_tgid();
	struct thread_state *ts = bpf_map_lookup_elem(&thread_states, &pid);
	long b;

	if (ts) {
		b = pre62_cache_bound(task, fault_pages);
		if (b >= 0)
			set_thread_bound(TREE(ts->tree), ts, b);
		else
			COUNT(&TREE(ts->tree)->read_errors, 1);
	}
	return 0;
}

/* Userspace drains the ring on a timer: no wakeup per event. Which mm
 * changed and its new total ride along, for the timeline's per-process
 * lines: values already at hand, and the tgid beside them. */
static __always_inline void record_sum(struct tree_state *t, __s64 sum, __u64 key,
				       const struct mm_state *ms, __s64 mine)
{
	struct sum_event *e = bpf_ringbuf_reserve(&sum_events, sizeof(*e), 0);

	if (!e) {
		COUNT(&t->record_drops, 1);
		return;
	}
	e->ns = bpf_ktime_get_ns();
	e->sum_pages = sum;
	e->mm = key;
	e->mm_pages = mine;
	e->tgid = ms->tgid;
	e->tree = ms->tree;
	bpf_ringbuf_submit(e, BPF_RB_NO_WAKEUP);
}

/*
 * Note the mm's mark, then move the tree sum by d; the sum after. The mark
 * must be noted against the largest sum before this change in the sum's
 * order, and an add cannot tell which that is: a change elsewhere may have
 * made a new largest sum and not yet raised the peak (raise_peak comes after
 * its add). So, with BPF_FETCH atomics, the sum moves by a compare-and-swap
 * of its word (tracker.h, sum_word_next) from the value read with the
 * peak: a sum above the peak read is a new largest one not raised yet, and
 * is raised here first (whoever moves the sum away from a value has made
 * sure the peak holds it), so the peak read is the largest sum before the
 * change; a new largest sum made meanwhile changes the word's count, the
 * swap fails, and the change notes again. Bounded: a change that loses
 * SUM_SWAP_TRIES swaps adds as before 5.12 and counts a mark race (the
 * peak stays exact; the holders are marked truncated). Before 5.12 (no
 * compare-and-swap) the mark is noted and then the sum added to: a mark
 * may then miss a change racing with a new peak (kernels that never claim
 * exactness).
 */
static __always_inline __s64 note_and_add(struct tree_state *t, struct mm_state *ms, __s64 d)
{
	if (has_fetch_atomics) {
		for (int i = 0; i < SUM_SWAP_TRIES; i++) {
			__s64 word = READ_ONCE(t->sum_word), sum = sum_of_word(word);
			__s64 peak = READ_ONCE(t->peak_pages);

			/* One try at the raise: if it fails, the peak moved,
			 * and the next round reads both again. */
			if (sum > peak) {
				if (atomic_cas(&t->peak_pages, peak, sum))
					peak_context(t);
				continue;
			}
			peak_mark_note(ms->mark, READ_ONCE(t->window), peak, ms->pages);
			if (atomic_cas(&t->sum_word, word, sum_word_next(word, d, peak)))
				return sum + d;
		}
		COUNT(&t->mark_races, 1);
	} else {
		note_change(t, ms);
	}
	return sum_of_word(atomic_add_return(&t->sum_word, sum_word_delta(d)));
}

/* A change of d pages in one counter of an mm: into the mm, the tree sum
 * and its peak. */
static __always_inline void apply_delta(struct mm_state *ms, __u64 key, int slot, __s64 d)
{
	struct tree_state *t;
	__s64 mine, sum;

	if (!d || slot < 0 || slot >= RSS_SLOTS)
		return;
	t = TREE(ms->tree);     /* the one load an mm's tree costs an event */
	sum = note_and_add(t, ms, d);
	atomic_add(&ms->pages[slot], d);
	mine = mm_total_pages(ms->pages);
	if (mine > READ_ONCE(ms->own_peak))
		WRITE_ONCE(ms->own_peak, mine);
	if (record_sums)
		record_sum(t, sum, key, ms, mine);
	raise_peak(t, sum);
}

/*
 * An mm's counters all move at once (it enters or leaves): one change of
 * the tree sum by their total, so the swap above is inlined once per mm,
 * not once per counter (the verifier's time, at load, grew with each).
 */
static __always_inline void apply_deltas(struct mm_state *ms, __u64 key, const __s64 d[RSS_SLOTS])
{
	struct tree_state *t = TREE(ms->tree);
	__s64 total = 0, mine, sum;
	bool moved = false;

	CFG_SAFE_LOOP
	for (int slot = 0; slot < RSS_SLOTS; slot++) {
		total += d[slot];
		moved |= d[slot] != 0;
	}
	if (!moved)
		return;
	sum = note_and_add(t, ms, total);
	CFG_SAFE_LOOP
	for (int slot = 0; slot < RSS_SLOTS; slot++)
		if (d[slot])
			atomic_add(&ms->pages[slot], d[slot]);
	mine = mm_total_pages(ms->pages);
	if (mine > READ_ONCE(ms->own_peak))
		WRITE_ONCE(ms->own_peak, mine);
	if (record_sums)
		record_sum(t, sum, key, ms, mine);
	raise_peak(t, sum);
}

/*
 * The shared part of a counter, taken: how far it moved since last taken.
 * Before 6.2 that is the whole counter; from 6.2, .count, which moves only
 * when a CPU folds its slot in. The exchange makes concurrent takers'
 * deltas add up to the last value read.
 */
static __always_inline __s64 take_count(struct mm_state *ms, struct mm_struct *mm, int slot)
{
	__s64 now;

	if (slot < 0 || slot >= RSS_SLOTS)
		return 0;
	now = mm_slot_count(mm, slot);
	if (now == COUNTER_UNREADABLE) {
		COUNT(&TREE(ms->tree)->read_errors, 1);
		return 0;
	}
	if (now == READ_ONCE(ms->count_seen[slot]))
		return 0;
	return now - atomic_xchg(&ms->count_seen[slot], now);
}

/* 6.2+: one CPU's slot of a counter, taken against the copy last seen. */
static __always_inline __s64 take_cpu_slot(__u32 tree, __s32 *seen, __u64 counters, __u32 cpu,
					   __s32 *value)
{
	__s32 v = 0;

	if (cpu >= MAX_CPUS)
		return 0;
	if (bpf_probe_read_kernel(&v, sizeof(v), (void *)(counters + hot.cpu_offset[cpu]))) {
		COUNT(&TREE(tree)->read_errors, 1);
		return 0;
	}
	*value = v;
	if (v == READ_ONCE(*seen))
		return 0;
	return (__s64)v - __sync_lock_test_and_set(seen, v);
}

/*
 * One rss_stat event: the counter's new value, as a delta. On the exact
 * path the event runs on the CPU whose slot changed (the counter is
 * updated under a page-table lock, so the task cannot migrate before the
 * tracepoint): the delta is that slot against its copy, plus .count when
 * this CPU just folded its slot in (the slot reads 0). One probe read and
 * a per-CPU map lookup, whatever the CPU count; docs/design.md bounds what
 * a fold in flight on another CPU can do for an instant.
 */
static __always_inline void apply_event(struct mm_state *ms, struct mm_struct *mm, __u64 key, int slot)
{
	struct mm_cpu_slots *seen;
	bool exact = exact_path();
	__s32 v = 1;
	__s64 d = 0;

	if (slot < 0 || slot >= RSS_SLOTS)
		return;
	/* One call of apply_delta below: each is a copy of the swap. */
	if (!exact) {
		v = 0;  /* the whole counter is taken */
	} else {
		seen = bpf_map_lookup_elem(&mm_cpu_slots, &key);
		if (seen)
			d = take_cpu_slot(ms->tree, &seen->slot[slot], ms->counters[slot],
					  bpf_get_smp_processor_id(), &v);
	}
	if (v == 0) {
		__s64 c = take_count(ms, mm, slot);

		if (c && exact)
			COUNT(&TREE(ms->tree)->count_takes, 1);
		d += c;
	}
	apply_delta(ms, key, slot, d);
}

/* A tree at its cap (max_entries) of mms or processes: the shared maps
 * stay open to the other trees. */
static __always_inline bool tree_full(struct tree_state *t, __s64 *live)
{
	__u64 max = READ_ONCE(t->max_entries);

	return max && READ_ONCE(*live) >= (__s64)max;
}

/* Enter an mm with its shared counter parts as they are now; on the exact
 * path the per-CPU parts follow (settle_mm, or each CPU's next event). */
static __always_inline void enter_mm(struct task_struct *task, struct mm_struct *mm, __u32 tgid,
				     __u32 tree)
{
	struct tree_state *t = TREE(tree);
	struct mm_state init = { .tgid = tgid, .tree = tree & (MAX_TREES - 1) };
	struct mm_cpu_slots zero = {};
	struct mm_state *ms;
	__u64 key = (__u64)mm;
	__s64 d[RSS_SLOTS];
	int err;

	if (!mm)
		return;
	if (tree_full(t, &t->mms_live)) {
		COUNT(&t->drop_mm_full, 1);
		return;
	}
	init.vpid = pid_in_ns(task, caller_pidns, caller_pidns_level);
	BPF_CORE_READ_STR_INTO(&init.comm, task, comm);
	if (exact_path()) {
		init.counters[RSS_FILE] = mm_slot_counters(mm, RSS_FILE);
		init.counters[RSS_ANON] = mm_slot_counters(mm, RSS_ANON);
		init.counters[RSS_SHMEM] = mm_slot_counters(mm, RSS_SHMEM);
		err = MAP_UPDATE_ERR(bpf_map_update_elem(&mm_cpu_slots, &key, &zero, BPF_NOEXIST));
		if (err && err != -EEXIST) {
			COUNT(&t->drop_mm_full, 1);
			return;
		}
	}
	err = MAP_UPDATE_ERR(bpf_map_update_elem(&mm_states, &key, &init, BPF_NOEXIST));
	if (err == -EEXIST)
		return;
	if (err) {
		bpf_map_delete_elem(&mm_cpu_slots, &key);
		COUNT(&t->drop_mm_full, 1);
		return;
	}
	COUNT(&mm_filter[mm_filter_slot(mm)], 1);
	ms = bpf_map_lookup_elem(&mm_states, &key);
	if (!ms)
		return;
	COUNT(&t->mms_entered, 1);
	COUNT(&t->mms_live, 1);
	CFG_SAFE_LOOP
	for (int slot = 0; slot < RSS_SLOTS; slot++)
		d[slot] = take_count(ms, mm, slot);
	apply_deltas(ms, key, d);
	if (!has_percpu_rss())
		raise_upper(t);
}

SEC("tp_btf/rss_stat")
int BPF_PROG(handle_rss_stat, struct mm_struct *mm, int member)
{
	__u64 key = (__u64)mm;
	struct mm_state *ms;

	if (!READ_ONCE(mm_filter[mm_filter_slot(mm)]))
		return 0;       /* not ours: the common case, keep it first */
	ms = bpf_map_lookup_elem(&mm_states, &key);
	if (!ms)
		return 0;
	/* On the mm's own cache line, which the event writes anyway: a tree
	 * counter would be one more line shared by every faulting CPU. */
	COUNT(&ms->events, 1);
	apply_event(ms, mm, key, rss_slot_of_member(member));
	if (!has_percpu_rss()) {
		pre62_after_event();
		raise_upper(TREE(ms->tree));    /* the sum or the bound moved */
	}
	return 0;
}

SEC("tp_btf/sched_process_fork")
int BPF_PROG(handle_fork, struct task_struct *parent, struct task_struct *child)
{
	__u32 ptgid = parent->tgid, ctgid = child->tgid;
	struct task_state cs = {}, *ps;
	struct tree_state *t;
	int err;

	if (ptgid == ctgid && has_percpu_rss())
		return 0;
	ps = bpf_map_lookup_elem(&task_states, &ptgid);
	if (!ps)
		return 0;
	/* The child joins its parent's tree. */
	cs.tree = ps->tree & (MAX_TREES - 1);
	t = TREE(cs.tree);
	if (ptgid == ctgid) {
		/* A thread: same process, same mm; before 6.2 its own cache
		 * (empty: copy_process() clears it). */
		enter_thread(t, cs.tree, child->pid);
		return 0;
	}
	if (tree_full(t, &t->procs_live)) {
		/* Not a drop if the attach walk entered it (below). */
		if (!bpf_map_lookup_elem(&task_states, &ctgid))
			COUNT(&t->drop_task_full, 1);
		return 0;
	}
	err = MAP_UPDATE_ERR(bpf_map_update_elem(&task_states, &ctgid, &cs, BPF_NOEXIST));
	if (err && err != -EEXIST) {
		COUNT(&t->drop_task_full, 1);
		return 0;
	}
	/* EEXIST: the attach walk met the child (in the task list since
	 * copy_process) before this event, and entered and counted it; its
	 * threads and mm below are then already in too. */
	if (!err) {
		COUNT(&t->procs_entered, 1);
		COUNT(&t->procs_live, 1);
	}
	if (!has_percpu_rss())
		enter_thread(t, cs.tree, child->pid);
	/* The child's copied pages were counted (from the parent's context)
	 * before this event: enter_mm takes them now. A vfork or CLONE_VM
	 * child shares an mm that is already in: enter_mm sees EEXIST. */
	enter_mm(child, child->mm, ctgid, cs.tree);
	return 0;
}

SEC("tp_btf/sched_process_exec")
int BPF_PROG(handle_exec, struct task_struct *p, pid_t old_pid, struct linux_binprm *bprm)
{
	__u32 tgid = p->tgid, tree;
	struct task_state *ts = bpf_map_lookup_elem(&task_states, &tgid);

	/* The new image enters; the old mm leaves at its own teardown. */
	if (!ts)
		return 0;
	tree = ts->tree & (MAX_TREES - 1);
	if (!has_percpu_rss()) {
		/* exec_mmap() synced the cache into the old mm. A thread
		 * other than the leader that execs takes the leader's PID. */
		leave_thread(old_pid);
		enter_thread(TREE(tree), tree, p->pid);
	}
	enter_mm(p, p->mm, tgid, tree);
	return 0;
}

SEC("tp_btf/sched_process_exit")
int BPF_PROG(handle_exit, struct task_struct *p)
{
	__u32 tgid = p->tgid;
	struct task_state *ts;
	__u32 tree;

	/* Before 6.2: exit_mm() synced this thread's cache (before this
	 * tracepoint, do_exit()). */
	if (!has_percpu_rss())
		leave_thread(p->pid);
	/* Only the last thread's exit ends the process. signal->live is
	 * decremented before this tracepoint on every kernel; the group_dead
	 * argument exists only on newer ones. The task's mm may already be
	 * gone here (before 6.16): nothing below needs it. */
	if (BPF_CORE_READ(p, signal, live.counter) != 0)
		return 0;
	ts = bpf_map_lookup_elem(&task_states, &tgid);
	if (!ts)
		return 0;
	tree = ts->tree;
	if (bpf_map_delete_elem(&task_states, &tgid) == 0)
		COUNT(&TREE(tree)->procs_live, -1);
	return 0;
}

/* Keep what a leaving mm held, for the holders of this window's peak. */
static __always_inline void note_departure(struct tree_state *t, struct mm_state *ms)
{
	__u64 seq = (__u64)atomic_add_return((__s64 *)&departed_seq, 1);
	struct departed_mm *e = &departed[(seq - 1) & (MAX_DEPARTED - 1)];

	COUNT(&t->departed_seq, 1);
	WRITE_ONCE(e->seq, 0);          /* userspace skips it while written */
	e->tgid = ms->tgid;
	e->tree = ms->tree;
	e->vpid = ms->vpid;
	e->own_peak = ms->own_peak;
	__builtin_memcpy(e->mark, ms->mark, sizeof(e->mark));
	__builtin_memcpy(e->comm, ms->comm, COMM_LEN);
	WRITE_ONCE(e->seq, seq);
}

static __always_inline void leave_mm(struct mm_struct *mm)
{
	__u64 key = (__u64)mm;
	struct mm_state *ms = bpf_map_lookup_elem(&mm_states, &key);
	struct tree_state *t;
	__s64 d[RSS_SLOTS];

	if (!ms)
		return;
	t = TREE(ms->tree);
	CFG_SAFE_LOOP
	for (int slot = 0; slot < RSS_SLOTS; slot++)
		d[slot] = -READ_ONCE(ms->pages[slot]);
	apply_deltas(ms, key, d);
	COUNT(&t->departed_events, READ_ONCE(ms->events));
	note_departure(t, ms);
	bpf_map_delete_elem(&mm_cpu_slots, &key);
	if (bpf_map_delete_elem(&mm_states, &key) == 0) {
		COUNT(&mm_filter[mm_filter_slot(mm)], -1);
		COUNT(&t->mms_live, -1);
	}
}

/*
 * mm teardown. The mmap:exit_mmap tracepoint came with the maple tree (6.1,
 * commit d4af56c5c7c6, "mm: start tracking VMAs with maple tree"), fired
 * after the pages are unmapped; older kernels get fentry on exit_mmap()
 * instead. has_exit_mmap_tp picks one (tracker.c, load_variants).
 */
SEC("fentry/exit_mmap")
int BPF_PROG(handle_exit_mmap, struct mm_struct *mm)
{
	leave_mm(mm);
	return 0;
}

SEC("?tp_btf/exit_mmap")
int BPF_PROG(handle_exit_mmap__exit_mmap_tp, struct mm_struct *mm)
{
	leave_mm(mm);
	return 0;
}

#define PF_EXITING 0x00000004       /* include/linux/sched.h, since 2.6 */

/*
 * Enter a live task's mm, named after its process (leader). An exiting
 * task is skipped: its mm may be torn down already, and an entry made after
 * the teardown would stay, pointing at freed memory. exit_mm() clears
 * task->mm before the mm's teardown, so if task->mm is still this mm after
 * the entry, the teardown comes later and removes it; if not, it may have
 * run already, and the entry goes now.
 */
static __always_inline void enter_live_mm(struct task_struct *task, struct task_struct *leader,
					  __u32 tgid, __u32 tree)
{
	struct mm_struct *mm = task->mm;

	if (!mm || (task->flags & PF_EXITING))
		return;
	enter_mm(leader, mm, tgid, tree);
	if (task->mm != mm)
		leave_mm(mm);
}

/* A thread of a tracked process: its mm is the process's, entered already
 * through the leader, unless the leader has exited (pthread_exit), which
 * leaves the leader without an mm while the threads run on. */
static __always_inline int enter_thread_mm(struct task_struct *task)
{
	__u32 tgid = task->tgid, tree;
	struct task_state *ts = bpf_map_lookup_elem(&task_states, &tgid);

	if (!ts)
		return 0;
	tree = ts->tree & (MAX_TREES - 1);
	if (!has_percpu_rss())
		enter_thread(TREE(tree), tree, task->pid);
	enter_live_mm(task, BPF_CORE_READ(task, group_leader), tgid, tree);
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
SEC("iter/task")
int enter_existing(struct bpf_iter__task *ctx)
{
	struct task_struct *task = ctx->task;
	struct task_struct *me = (struct task_struct *)bpf_get_current_task();
	struct pid *mypid = BPF_CORE_READ(me, thread_pid);
	unsigned int level = BPF_CORE_READ(mypid, level);
	struct task_state ts = {}, *ps, *cur;
	struct tree_state *t;
	struct root_req *req;
	__u32 tgid, vpid, ptgid;
	__u64 ns = 0;
	int err;

	if (!task)
		return 0;
	if (task->pid != task->tgid)
		return enter_thread_mm(task);
	bpf_probe_read_kernel(&ns, sizeof(ns),
			      (void *)mypid + bpf_core_field_offset(struct pid, numbers) +
			      (__u64)level * sizeof(struct upid) + offsetof(struct upid, ns));
	caller_pidns = ns;
	caller_pidns_level = level;
	tgid = task->tgid;
	vpid = pid_in_ns(task, ns, level);
	req = vpid ? bpf_map_lookup_elem(&roots, &vpid) : NULL;
	if (req) {
		req->found = 1;
		req->tgid = tgid;
		ts.tree = req->tree & (MAX_TREES - 1);
	} else {
		/* A child of a process already in the tree. The walk goes by
		 * PID, and a child usually has a larger PID than its parent,
		 * so one pass takes most trees whole; userspace repeats the
		 * pass while it still finds processes (PIDs wrap). */
		ptgid = BPF_CORE_READ(task, real_parent, tgid);
		ps = bpf_map_lookup_elem(&task_states, &ptgid);
		if (!ps)
			return 0;
		ts.tree = ps->tree & (MAX_TREES - 1);
	}
	t = TREE(ts.tree);
	err = tree_full(t, &t->procs_live) ? -1 :
	      MAP_UPDATE_ERR(bpf_map_update_elem(&task_states, &tgid, &ts, BPF_NOEXIST));
	if (!err) {
		COUNT(&t->procs_entered, 1);
		COUNT(&t->procs_live, 1);
		COUNT(&iter_entered, 1);
	} else {
		/* In already (a tree keeps what it entered first). */
		cur = bpf_map_lookup_elem(&task_states, &tgid);
		if (!cur) {
			/* In when we tried, gone now: it exited meanwhile,
			 * nothing lost. Otherwise the tree or map is full. */
			if (err != -EEXIST)
				COUNT(&t->drop_task_full, 1);
			return 0;
		}
		ts.tree = cur->tree & (MAX_TREES - 1);
		t = TREE(ts.tree);
	}
	/* Its last thread is exiting (signal->live drops to 0 before
	 * sched_process_exit): the entry stays for this walk, so that its
	 * children are found, and goes after it. One reader runs the walk: a
	 * plain increment. */
	if (BPF_CORE_READ(task, signal, live.counter) == 0) {
		__u32 i = dying_n;

		if (i < MAX_DYING && bpf_map_update_elem(&dying, &i, &tgid, BPF_ANY) == 0)
			dying_n = i + 1;
	}
	if (!has_percpu_rss())
		enter_thread(t, ts.tree, task->pid);
	if (!req || req->enter_mm)
		enter_live_mm(task, task, tgid, ts.tree);
	return 0;
}

/* The programs that loop over CPUs, off the rss_stat path. */
#include "percpu_sum.bpf.h"
