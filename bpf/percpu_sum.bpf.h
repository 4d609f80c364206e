/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The per-CPU sums: O(ncpu), never on the rss_stat path. Part of
 * tracker.bpf.c, which includes it once at its end, so that these programs
 * share its maps and helpers in one BPF object.
 *
 * Programs named __percpu_sum load only where has_percpu_sum (bpf_loop,
 * 5.17; bpf_map_lookup_percpu_elem, 5.19): their loops over CPUs are
 * bpf_loop calls, verified once, whatever the CPU count.
 */
#ifndef PEAKBPF_PERCPU_SUM_BPF_H
#define PEAKBPF_PERCPU_SUM_BPF_H

struct cpu_loop {
	__u64 key;                      /* the mm */
	__u32 tree;                     /* its tree */
	__u64 counters;                 /* its counter's per-CPU slots */
	int slot;
	__s64 sum;
};

/* Take CPU cpu's slot of one counter (its copy in that CPU's map value). */
static long settle_cpu(__u32 cpu, struct cpu_loop *c)
{
	struct mm_cpu_slots *seen = bpf_map_lookup_percpu_elem(&mm_cpu_slots, &c->key, cpu);
	__s32 v;

	if (seen && c->slot >= 0 && c->slot < RSS_SLOTS)
		c->sum += take_cpu_slot(c->tree, &seen->slot[c->slot], c->counters, cpu, &v);
	return 0;
}

/* Take every CPU's slot and .count of every counter of an entered mm: its
 * exact value, once, at entry. Later events keep it so. by: the task
 * entering (NULL: current, or none judged). */
static __always_inline void settle_mm(struct mm_state *ms, struct mm_struct *mm, __u64 key,
				      struct task_struct *by)
{
	__s64 d[RSS_SLOTS];

	if (!exact_path())
		return;
	CFG_SAFE_LOOP
	for (int slot = 0; slot < RSS_SLOTS; slot++) {
		struct cpu_loop c = { .key = key, .tree = ms->tree,
				      .counters = mm_slot_counters(mm, slot), .slot = slot };

		bpf_loop(nr_cpus, settle_cpu, &c, 0);
		d[slot] = c.sum + take_count(ms, mm, slot);
	}
	apply_deltas(ms, key, d, by);
	COUNT(&TREE(ms->tree)->settles, 1);
}

/* Runs after handle_fork on the same tracepoint (attach order). */
SEC("?tp_btf/sched_process_fork")
int BPF_PROG(settle_fork__percpu_sum, struct task_struct *parent, struct task_struct *child)
{
	struct mm_struct *mm = child->mm;
	__u64 key = (__u64)mm;
	struct mm_state *ms;

	if (parent->tgid == child->tgid || !READ_ONCE(mm_filter[mm_filter_slot(mm)]))
		return 0;
	ms = bpf_map_lookup_elem(&mm_states, &key);
	if (ms)
		settle_mm(ms, mm, key, child);
	return 0;
}

SEC("?tp_btf/sched_process_exec")
int BPF_PROG(settle_exec__percpu_sum, struct task_struct *p, pid_t old_pid, struct linux_binprm *bprm)
{
	struct mm_struct *mm = p->mm;
	__u64 key = (__u64)mm;
	struct mm_state *ms;

	if (!READ_ONCE(mm_filter[mm_filter_slot(mm)]))
		return 0;
	ms = bpf_map_lookup_elem(&mm_states, &key);
	if (ms)
		settle_mm(ms, mm, key, p);
	return 0;
}

/* Runs after handle_cgroup_attach (attach order): an mm that entered by
 * the move takes every CPU's part now (once more for one that was in:
 * nothing moved, nothing taken). */
SEC("?tp_btf/cgroup_attach_task")
int BPF_PROG(settle_attach__percpu_sum, struct cgroup *dst, const char *path, struct task_struct *task,
	     bool threadgroup)
{
	struct mm_struct *mm;
	struct mm_state *ms;
	__u64 key;

	if (!READ_ONCE(cg_targets_n))
		return 0;
	mm = BPF_CORE_READ(task, group_leader, mm);
	key = (__u64)mm;
	if (!mm || !READ_ONCE(mm_filter[mm_filter_slot(mm)]))
		return 0;
	ms = bpf_map_lookup_elem(&mm_states, &key);
	if (ms)
		settle_mm(ms, mm, key, BPF_CORE_READ(task, group_leader));
	return 0;
}

static long settle_one(struct bpf_map *map, __u64 *key, struct mm_state *ms, void *ctx)
{
	settle_mm(ms, (struct mm_struct *)*key, *key, NULL);
	return 0;
}

/* Run by userspace after enter_existing: settle every mm it entered (the
 * others are settled already; taking them again adds nothing). The mms are
 * alive: each leaves the map at its teardown, before it is freed. */
SEC("?syscall")
int settle_entered__percpu_sum(void *ctx)
{
	bpf_for_each_map_elem(&mm_states, settle_one, NULL, 0);
	return 0;
}

static long sum_cpu(__u32 cpu, struct cpu_loop *c)
{
	__s32 v = 0;

	if (cpu >= MAX_CPUS)
		return 1;
	bpf_probe_read_kernel(&v, sizeof(v), (void *)(c->counters + hot.cpu_offset[cpu]));
	c->sum += v;
	return 0;
}

static long verify_one(struct bpf_map *map, __u64 *key, struct mm_state *ms, void *ctx)
{
	struct mm_struct *mm = (struct mm_struct *)*key;

	if (!exact_path())
		return 1;
	CFG_SAFE_LOOP
	for (int slot = 0; slot < RSS_SLOTS; slot++) {
		struct cpu_loop c = { .counters = mm_slot_counters(mm, slot) };
		__s64 off;

		bpf_loop(nr_cpus, sum_cpu, &c, 0);
		off = c.sum + mm_slot_count(mm, slot) - READ_ONCE(ms->pages[slot]);
		if (off) {
			check.counters_off++;
			if (off < 0)
				off = -off;
			if (off > check.max_off_pages)
				check.max_off_pages = off;
		}
	}
	check.mms++;
	return 0;
}

/* Run by userspace (a check, off the event path): every mm's counters
 * summed over every CPU, as percpu_counter_sum() does, against the values
 * the incremental path holds. */
SEC("?syscall")
int verify_sums__percpu_sum(void *ctx)
{
	__builtin_memset(&check, 0, sizeof(check));
	if (exact_path())
		bpf_for_each_map_elem(&mm_states, verify_one, NULL, 0);
	return 0;
}

static long learn_cpu(__u32 cpu, __u64 *base)
{
	__u32 zero = 0;
	void *slot = bpf_map_lookup_percpu_elem(&percpu_probe, &zero, cpu);

	if (!slot || cpu >= MAX_CPUS)
		return 1;
	addr_scratch = (__u64)slot;
	hot.cpu_offset[cpu] = addr_scratch - *base;
	return 0;
}

/*
 * Run once by userspace before attaching: learn each CPU's per-CPU offset.
 * The address of CPU n's copy of percpu_probe's element, minus the map's
 * own __percpu pointer (bpf_array->pptrs[0]), is __per_cpu_offset[n]. The
 * kernel's BTF has no percpu type tags on GCC builds, so bpf_per_cpu_ptr()
 * is refused on a counter's slots; this is the way around it.
 */
SEC("?syscall")
int learn_cpu_offsets__percpu_sum(void *ctx)
{
	__u64 base = 0;

	percpu_rss_kernel = has_percpu_rss();
	addr_scratch = (__u64)&percpu_probe;
	if (bpf_probe_read_kernel(&base, sizeof(base),
				  (void *)(addr_scratch + bpf_core_field_offset(struct bpf_array, pptrs))))
		return 1;
	if (nr_cpus > MAX_CPUS || bpf_loop(nr_cpus, learn_cpu, &base, 0) != nr_cpus)
		return 2;
	hot.cpu_offsets_ready = percpu_rss_kernel;
	return 0;
}

#endif
