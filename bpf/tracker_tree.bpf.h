/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A tree's running figures: the mm filter, the peak and its context, the
 * pre-6.2 bounds and their per-thread caches. Static inline helpers.
 * Included once, by tracker.bpf.c (one compilation unit: one .bss).
 */
#ifndef PEAKBPF_TRACKER_TREE_BPF_H
#define PEAKBPF_TRACKER_TREE_BPF_H

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
 * visible there; ns 0: in whichever namespace is at that level of its own
 * (tree_vpid). struct upid { int nr; struct pid_namespace *ns; } has kept
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
	return !ns || (__u64)up.ns == ns ? (__u32)up.nr : 0;
}

/* A tree process's PID as the tree's namespace numbers it: peakbpf's, or
 * depth levels below (tree_pid_depth). A process of the tree lives in that
 * namespace or one nested in it (its roots were visible there, and children
 * stay at or below their parent's), so the number at that level is its
 * number there. 0: not visible there. Entry path only: no event runs it.
 * One pid_in_ns, not two: the iterator's stack has no 16 bytes to spare
 * (6.1: "combined stack size of 2 calls is 544"). */
static __always_inline __u32 tree_vpid(struct task_struct *leader, __u32 tree)
{
	__u32 depth = tree_pid_depth[tree & (MAX_TREES - 1)];

	return pid_in_ns(leader, depth ? 0 : caller_pidns, caller_pidns_level + depth);
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

/* Before 6.2: this window's upper end rises to v (struct tree_state). */
static __always_inline void raise_upper(struct tree_state *t, __s64 v)
{
	for (int i = 0; i < PEAK_CAS_TRIES; i++) {
		__s64 seen = READ_ONCE(t->upper_pages);

		if (v <= seen || atomic_cas(&t->upper_pages, seen, v))
			return;
	}
	COUNT(&t->peak_races, 1);
}

/*
 * Before 6.2: a change lowered the tree sum from before (struct
 * pre62_tree). The true sum since the last drop was largest just before
 * this one: at most before + every thread's charge, plus what a thread on
 * a CPU faulted unread, which its next read adds (pre62_read). The drop
 * is counted before the charges are read: a thread whose new charge came
 * too late for this sum reads the count after it stored that charge, and
 * so sees the drop. Inlined: a call would not fit the attach walk's
 * stack (enter_existing, "combined stack size of 2 calls is 544" on 6.1).
 */
static __always_inline void pre62_drop(__u32 tree, __s64 before)
{
	struct tree_state *t = TREE(tree);
	__u32 cpu = bpf_get_smp_processor_id();
	__s64 v, *u;

	COUNT(&PRE62(tree)->drops, 1);
	v = before + READ_ONCE(t->bound_sum_pages);
	if (cpu >= MAX_CPUS) {
		raise_upper(t, v);
		return;
	}
	u = &pre62_upper[cpu & (MAX_CPUS - 1)][tree & (MAX_TREES - 1)];
	if (v > READ_ONCE(*u))
		WRITE_ONCE(*u, v);
}

/*
 * Before 6.2: the sum before a drop of d that left the sum at after. With
 * BPF_FETCH atomics after is this change's own result, so after - d is
 * exact. Before 5.12 the sum is added to and then read again (XADD has no
 * result), so another CPU's drop in between would hide in after - d: the
 * sum as this CPU read it just before its add (pre62_note_sum, in
 * note_and_add's branch for those kernels, dead code elsewhere) is taken
 * as well, and the larger kept (only a change of another CPU before this
 * one's add and a drop after it, both, would still escape).
 */
static __always_inline void pre62_note_sum(struct tree_state *t)
{
	__u32 cpu = bpf_get_smp_processor_id();

	if (cpu < MAX_CPUS)
		pre62_sum_seen[cpu & (MAX_CPUS - 1)] = sum_of_word(READ_ONCE(t->sum_word));
}

static __always_inline __s64 pre62_before(__s64 after, __s64 d)
{
	__u32 cpu;
	__s64 pre;

	if (has_fetch_atomics)
		return after - d;
	cpu = bpf_get_smp_processor_id();
	pre = cpu < MAX_CPUS ? pre62_sum_seen[cpu & (MAX_CPUS - 1)] : 0;
	return pre > after - d ? pre : after - d;
}

/* Before 6.2: a thread's charge becomes b; the tree's sum of them follows.
 * Only the thread itself moves its entry (its events, its switches, its
 * exec and exit; fork makes it before it runs): plain loads and stores,
 * and an XADD, so that this may run in a subprogram, where
 * poison_fetch_atomics (tracker.c) cannot reach before 5.12. */
static __always_inline void set_thread_bound(struct tree_state *t, struct thread_state *ts, __s64 b)
{
	__s64 d = b - READ_ONCE(ts->bound_pages);

	if (!d)
		return;
	WRITE_ONCE(ts->bound_pages, (__s32)b);
	atomic_add(&t->bound_sum_pages, d);
}

/* Before 6.2: the thread is on a CPU (switched in, or seen in an event). */
static __always_inline void thread_on_cpu(struct pre62_tree *p, struct thread_state *ts)
{
	if (ts->running)
		return;
	ts->running = 1;
	COUNT(&p->running, 1);
}

static __always_inline void thread_off_cpu(struct pre62_tree *p, struct thread_state *ts)
{
	if (!ts->running)
		return;
	ts->running = 0;
	COUNT(&p->running, -1);
}

/* Before 6.2: this CPU's largest unread growth of tree's threads at a
 * drop, this window, rises to x (only this CPU writes its row). */
static __always_inline void raise_excess(__u32 tree, __s64 x)
{
	__u32 cpu = bpf_get_smp_processor_id();
	__s64 *e;

	if (cpu >= MAX_CPUS)
		return;
	e = &pre62_excess[cpu & (MAX_CPUS - 1)][tree & (MAX_TREES - 1)];
	if (x > READ_ONCE(*e))
		WRITE_ONCE(*e, x);
}

/*
 * Before 6.2: a thread of the tree begins (fork, exec, attach), with its
 * cache empty (fork: copy_process() clears it; exec: exec_mmap() synced
 * it) or unknown (attach: the thread may be running: the cap until its
 * first read). on_cpu: it runs now (exec).
 */
static __always_inline void enter_thread(struct tree_state *t, __u32 tree, __u32 pid, bool known,
					 bool on_cpu)
{
	struct thread_state ts = { .bound_pages = known ? 0 : cache_cap_pages(fault_pages),
				   .drops_seen = (__u32)READ_ONCE(PRE62(tree)->drops),
				   .tree = tree & (MAX_TREES - 1) };
	struct thread_state *e;
	int err;

	NOTE_INSERT(tree);
	err = MAP_UPDATE_ERR(bpf_map_update_elem(&thread_states, &pid, &ts, BPF_NOEXIST));

	if (err == -EEXIST)
		return;
	if (err) {
		COUNT(&t->drop_task_full, 1);
		return;
	}
	/* Made whole by the insert: the thread may run already (attach). */
	COUNT(&t->threads_live, 1);
	if (ts.bound_pages)
		atomic_add(&t->bound_sum_pages, ts.bound_pages);
	if (on_cpu && (e = bpf_map_lookup_elem(&thread_states, &pid)))
		thread_on_cpu(PRE62(tree), e);
}

/* Before 6.2: a thread leaves (its exit synced its cache): its charge goes. */
static __always_inline void leave_thread(__u32 pid)
{
	struct thread_state *e = bpf_map_lookup_elem(&thread_states, &pid);
	struct tree_state *t;

	if (!e)
		return;
	t = TREE(e->tree);
	set_thread_bound(t, e, 0);
	thread_off_cpu(PRE62(e->tree), e);
	if (bpf_map_delete_elem(&thread_states, &pid) == 0)
		COUNT(&t->threads_live, -1);
}

/*
 * Before 6.2: the current thread's cache is read (at_event: in one of its
 * rss_stat events; else as it is switched out) and becomes its charge. If
 * a drop came since its last read while it was on a CPU, the drop's sum
 * had its old charge: what the cache grew by since then (it only grows
 * between two reads: a sync is an event, so a read) is this window's
 * excess, if the largest. The count of drops is read after the new charge
 * is stored (pre62_drop). -1: the read failed (the charge stands).
 */
static __always_inline int pre62_read(struct task_struct *task, struct thread_state *ts, int at_event)
{
	struct tree_state *t = TREE(ts->tree);
	struct pre62_tree *p = PRE62(ts->tree);
	long c = pre62_cache_charge(task, at_event);
	__s64 old = READ_ONCE(ts->bound_pages);
	__u32 drops;

	if (c < 0) {
		COUNT(&t->read_errors, 1);
		return -1;
	}
	set_thread_bound(t, ts, c);
	drops = READ_ONCE(p->drops);
	if (drops != ts->drops_seen && ts->running && c > old)
		raise_excess(ts->tree, c - old);
	ts->drops_seen = drops;
	return 0;
}

/*
 * Before 6.2, after an event was applied: if the current thread is one of
 * the tree's, its cache is read as it is now and becomes its charge,
 * whichever mm the event was about: its cache is its own mm's. One lookup
 * and one probe read; the other threads' charges stand until their own
 * reads. Not inlined and without arguments: the 6.2+ program, where the
 * call is dead, keeps the registers it had without it.
 */
static __noinline int pre62_after_event(void)
{
	struct task_struct *task = (struct task_struct *)bpf_get_current_task();
	__u32 pid = (__u32)bpf_get_current_pid_tgid();
	struct thread_state *ts = bpf_map_lookup_elem(&thread_states, &pid);

	if (ts && pre62_read(task, ts, 1) == 0)
		thread_on_cpu(PRE62(ts->tree), ts);
	return 0;
}

/* Before 6.2: is this task's mm one of the tracked (the filter alone:
 * a hit is confirmed by the thread map)? */
static __always_inline bool pre62_maybe_tracked(struct task_struct *p)
{
	struct mm_struct *mm = p->mm;

	return mm && READ_ONCE(mm_filter[mm_filter_slot(mm)]);
}

/* Before 6.2: a tracked thread leaves its CPU: its cache, read now, holds
 * until it runs again. prev is the current task in sched_switch. */
static __noinline int pre62_switch_out(struct task_struct *prev)
{
	__u32 pid = prev->pid;
	struct thread_state *ts = bpf_map_lookup_elem(&thread_states, &pid);

	if (!ts)
		return 0;
	pre62_read(prev, ts, 0);
	thread_off_cpu(PRE62(ts->tree), ts);
	return 0;
}

/* Before 6.2: a tracked thread comes on a CPU: drops from now on may see
 * its charge below its cache. */
static __noinline int pre62_switch_in(struct task_struct *next)
{
	__u32 pid = next->pid;
	struct thread_state *ts = bpf_map_lookup_elem(&thread_states, &pid);

	if (!ts)
		return 0;
	ts->drops_seen = (__u32)READ_ONCE(PRE62(ts->tree)->drops);
	thread_on_cpu(PRE62(ts->tree), ts);
	return 0;
}

#endif
