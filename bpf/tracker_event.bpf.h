/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The event path: an mm's change applied to its tree's sum (O(1): the
 * record of the sum, the sum word's swap, the per-CPU settles), and an mm
 * entering a tree. Static inline helpers.
 * Included once, by tracker.bpf.c (one compilation unit: one .bss).
 */
#ifndef PEAKBPF_TRACKER_EVENT_BPF_H
#define PEAKBPF_TRACKER_EVENT_BPF_H

/*
 * Whether the tree's reader could ptrace the task making this change, as
 * __ptrace_may_access (kernel/ptrace.c, PTRACE_MODE_READ_REALCREDS) decides
 * for a reader without capabilities: the task's three uids and three gids
 * are the reader's, it holds no permitted capability, its mm is dumpable.
 * task: the one entering (a fork's child, an exec), or NULL: current. Only
 * a task of the mm itself is judged (task->mm is the mm): a change made from
 * elsewhere (the teardown after exit_mm has dropped current->mm, another
 * process's reclaim) is left unjudged, for userspace to judge by /proc
 * (serve_readable.c). Recording trees only.
 */
static __always_inline __u16 reader_verdict(struct task_struct *task, __u64 key, __u32 tree)
{
	const struct tree_reader *r = &tree_readers[tree & (MAX_TREES - 1)];
	const struct cred *cred;
	__u64 caps = 0;

	if (!r->judge)
		return SUM_SEEN_UNJUDGED;
	if (!task)
		task = (struct task_struct *)bpf_get_current_task();
	if ((__u64)BPF_CORE_READ(task, mm) != key)
		return SUM_SEEN_UNJUDGED;
	cred = BPF_CORE_READ(task, real_cred);
	if (BPF_CORE_READ(cred, uid.val) != r->uid || BPF_CORE_READ(cred, euid.val) != r->uid ||
	    BPF_CORE_READ(cred, suid.val) != r->uid || BPF_CORE_READ(cred, gid.val) != r->gid ||
	    BPF_CORE_READ(cred, egid.val) != r->gid || BPF_CORE_READ(cred, sgid.val) != r->gid)
		return SUM_SEEN_WITHHELD;
	if (bpf_core_read(&caps, sizeof(caps), &cred->cap_permitted) || caps)
		return SUM_SEEN_WITHHELD;
	return mm_dumpable_by_owner((struct mm_struct *)key) ? SUM_SEEN_READABLE : SUM_SEEN_WITHHELD;
}

/* Userspace drains the ring on a timer: no wakeup per event. Which mm
 * changed and its new total ride along, for the timeline's per-process
 * lines: values already at hand, and the tgid beside them. */
static __always_inline void record_sum(struct tree_state *t, __s64 sum, __u64 key,
				       const struct mm_state *ms, __s64 mine, struct task_struct *by)
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
	e->seen = reader_verdict(by, key, ms->tree);
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
		pre62_note_sum(t);      /* before 5.12 only: pre62_before */
	}
	return sum_of_word(atomic_add_return(&t->sum_word, sum_word_delta(d)));
}

/* After an mm's change moved the tree sum to sum: the mm's own peak, the
 * record of the sum, the tree's peak. by: the task entering, or NULL. */
static __always_inline void after_change(struct tree_state *t, struct mm_state *ms, __u64 key,
					 __s64 sum, struct task_struct *by)
{
	__s64 mine = mm_total_pages(ms->pages);

	if (mine > READ_ONCE(ms->own_peak))
		WRITE_ONCE(ms->own_peak, mine);
	if (record_sums && ms->record)
		record_sum(t, sum, key, ms, mine, by);
	raise_peak(t, sum);
}

/* A change of d pages in one counter of an mm: into the mm, the tree sum
 * and its peak. */
static __always_inline void apply_delta(struct mm_state *ms, __u64 key, int slot, __s64 d)
{
	struct tree_state *t;
	__s64 sum;

	if (!d || slot < 0 || slot >= RSS_SLOTS)
		return;
	t = TREE(ms->tree);     /* the one load an mm's tree costs an event */
	sum = note_and_add(t, ms, d);
	atomic_add(&ms->pages[slot], d);
	after_change(t, ms, key, sum, NULL);
	if (!has_percpu_rss() && d < 0)
		pre62_drop(ms->tree, pre62_before(sum, d));
}

/*
 * An mm's counters all move at once (it enters or leaves): one change of
 * the tree sum by their total, so the swap above is inlined once per mm,
 * not once per counter (the verifier's time, at load, grew with each).
 * The sum after it (0 if nothing moved). by: the task entering, or NULL.
 */
static __always_inline __s64 apply_deltas(struct mm_state *ms, __u64 key, const __s64 d[RSS_SLOTS],
					  struct task_struct *by)
{
	struct tree_state *t = TREE(ms->tree);
	__s64 total = 0, sum;
	bool moved = false;

	CFG_SAFE_LOOP
	for (int slot = 0; slot < RSS_SLOTS; slot++) {
		total += d[slot];
		moved |= d[slot] != 0;
	}
	if (!moved)
		return 0;
	sum = note_and_add(t, ms, total);
	CFG_SAFE_LOOP
	for (int slot = 0; slot < RSS_SLOTS; slot++)
		if (d[slot])
			atomic_add(&ms->pages[slot], d[slot]);
	after_change(t, ms, key, sum, by);
	return sum;
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

/*
 * Where a new mm's entry is made before it is inserted: the stack
 * (ENTRY_ON_STACK), or this CPU's slot of entry_scratch for the programs
 * whose stacks cannot hold its 248 bytes: the verifiers of 5.10, 6.1 and
 * 6.12 add a global function's stack (the cgroup targets' decision,
 * tracker_cgroup.bpf.h) to its caller's and refuse more than 512 bytes
 * ("combined stack size"). One slot per program: a tp_btf program runs with
 * preemption off, never from an interrupt and never nested in itself on a
 * CPU, so its slot is its own while it runs. The iterators, which may be
 * preempted, keep the stack.
 */
#define ENTRY_ON_STACK (-1)
#define ENTRY_SCRATCH_FORK 0           /* handle_fork (both variants) */
#define ENTRY_SCRATCH_MOVE 1           /* handle_cgroup_attach__cgroup_targets */
#define ENTRY_SCRATCH_SLOTS 2

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, ENTRY_SCRATCH_SLOTS);
	__type(key, __u32);
	__type(value, struct mm_state);
} entry_scratch SEC(".maps");

/* Enter an mm with its shared counter parts as they are now; on the exact
 * path the per-CPU parts follow (settle_mm, or each CPU's next event).
 * scratch: where the entry is made (a constant, above). */
static __always_inline void enter_mm(struct task_struct *task, struct mm_struct *mm, __u32 tgid,
				     __u32 tree, int scratch)
{
	struct tree_state *t = TREE(tree);
	struct mm_state on_stack, *init = &on_stack;
	struct mm_cpu_slots zero = {};
	struct mm_state *ms;
	__u64 key = (__u64)mm;
	__s64 d[RSS_SLOTS];
	__u32 slot_key = (__u32)scratch;
	int err;

	if (!mm)
		return;
	if (scratch != ENTRY_ON_STACK) {
		init = bpf_map_lookup_elem(&entry_scratch, &slot_key);
		if (!init)
			return;
	}
	if (tree_full(t, &t->mms_live)) {
		COUNT(&t->drop_mm_full, 1);
		return;
	}
	__builtin_memset(init, 0, sizeof(*init));
	init->tgid = tgid;
	init->tree = tree & (MAX_TREES - 1);
	init->vpid = tree_vpid(task, tree);
	init->record = tree_record[tree & (MAX_TREES - 1)];
	BPF_CORE_READ_STR_INTO(&init->comm, task, comm);
	if (exact_path()) {
		init->counters[RSS_FILE] = mm_slot_counters(mm, RSS_FILE);
		init->counters[RSS_ANON] = mm_slot_counters(mm, RSS_ANON);
		init->counters[RSS_SHMEM] = mm_slot_counters(mm, RSS_SHMEM);
		err = MAP_UPDATE_ERR(bpf_map_update_elem(&mm_cpu_slots, &key, &zero, BPF_NOEXIST));
		if (err && err != -EEXIST) {
			COUNT(&t->drop_mm_full, 1);
			return;
		}
	}
	NOTE_INSERT(tree);
	err = MAP_UPDATE_ERR(bpf_map_update_elem(&mm_states, &key, init, BPF_NOEXIST));
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
	apply_deltas(ms, key, d, task);
}

#endif
