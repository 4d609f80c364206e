// SPDX-License-Identifier: GPL-2.0
/*
 * The OOM flight recorder's kernel part (docs/design.md, "OOM kills"):
 * every victim the OOM killer marks, global or memcg, into a ring
 * (struct oom_event, oom.h), with what the kill was for.
 *
 * Two hooks. fentry/oom_kill_process(oc, message) runs once per kill,
 * under oom_lock, in the task whose allocation failed: it notes the
 * struct oom_control (the OOMing memcg, its limit and charge, the chosen
 * task) under that task's PID. tp_btf/mark_victim then fires for each
 * victim marked (the chosen task, and with memory.oom.group every task of
 * the group), in the same task's context: it takes the note and reads the
 * victim. out_of_memory() may also mark a task that is exiting already,
 * without oom_kill_process: that victim has no context (valid 0).
 *
 * Neither runs per page event: an OOM kill is rare; each run is a few
 * reads and one ring reservation. The ring is the unit's own, so a load
 * that records the sum (--timeline) keeps its ring for that.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "oom.h"
#include "compat.bpf.h"

char LICENSE[] SEC("license") = "GPL";

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, OOM_RING_BYTES);
} oom_events SEC(".maps");

/* The kill in progress, by the PID of the task running it: one at a time
 * under oom_lock, a few in case a kernel ever runs them concurrently. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 64);
	__type(key, __u32);
	__type(value, struct oom_context);
} oom_kills SEC(".maps");

/* The tracker's process map (tracker_shared_maps.bpf.h): the linker
 * merges this weak definition into the tracker's, so a victim is found in
 * its tree with one lookup. */
#define SHARED_MAP __weak
#include "tracker_shared_maps.bpf.h"

__u64 oom_victims;              /* victims marked */
__u64 oom_ring_drops;           /* victims the ring had no room for */

static __always_inline __u64 memcg_id(struct mem_cgroup *memcg)
{
	return memcg ? BPF_CORE_READ(memcg, css.cgroup, kn, id) : 0;
}

SEC("?fentry/oom_kill_process")
int BPF_PROG(oom_kill, struct oom_control *oc, const char *message)
{
	struct task_struct *chosen = BPF_CORE_READ(oc, chosen);
	struct mem_cgroup *memcg = BPF_CORE_READ(oc, memcg);
	__u32 pid = (__u32)bpf_get_current_pid_tgid();
	struct oom_context c = {};

	c.valid = 1;
	c.memcg_id = memcg_id(memcg);
	if (memcg) {
		c.limit_pages = BPF_CORE_READ(memcg, memory.max);
		c.usage_pages = BPF_CORE_READ(memcg, memory.usage.counter);
	}
	c.totalpages = BPF_CORE_READ(oc, totalpages);
	c.constraint = (__u32)BPF_CORE_READ(oc, constraint);
	c.chosen_tgid = chosen ? BPF_CORE_READ(chosen, tgid) : 0;
	c.trigger_tgid = (__u32)(bpf_get_current_pid_tgid() >> 32);
	bpf_get_current_comm(c.trigger_comm, sizeof(c.trigger_comm));
	bpf_map_update_elem(&oom_kills, &pid, &c, BPF_ANY);
	return 0;
}

SEC("?fexit/oom_kill_process")
int BPF_PROG(oom_kill_done, struct oom_control *oc, const char *message)
{
	__u32 pid = (__u32)bpf_get_current_pid_tgid();

	bpf_map_delete_elem(&oom_kills, &pid);
	return 0;
}

/* The victim's own memory cgroup: task->cgroups->subsys[memory_cgrp_id]. */
static __always_inline __u64 task_memcg_id(struct task_struct *task)
{
	int id = bpf_core_enum_value(enum cgroup_subsys_id, memory_cgrp_id);
	struct cgroup_subsys_state *css = NULL;
	struct css_set *cset = BPF_CORE_READ(task, cgroups);

	if (!cset || id < 0 || id >= CGROUP_SUBSYS_COUNT)
		return 0;
	bpf_core_read(&css, sizeof(css), &cset->subsys[id]);
	return css ? BPF_CORE_READ(css, cgroup, kn, id) : 0;
}

static __always_inline void read_victim(struct oom_event *e, struct task_struct *task)
{
	struct mm_struct *mm = BPF_CORE_READ(task, mm);
	__u32 tgid = BPF_CORE_READ(task, tgid);
	struct task_state *ts;

	e->tgid = tgid;
	e->pid = BPF_CORE_READ(task, pid);
	BPF_CORE_READ_STR_INTO(&e->comm, task, comm);
	e->cgroup_id = task_memcg_id(task);
	e->oom_score_adj = BPF_CORE_READ(task, signal, oom_score_adj);
	e->mm = (__u64)mm;
	e->rss_from = mm ? OOM_RSS_COUNTERS : OOM_RSS_NO_MM;
	for (int i = 0; mm && i < RSS_SLOTS; i++) {
		long v = mm_slot_count(mm, i);

		e->pages[i] = v == COUNTER_UNREADABLE || v < 0 ? 0 : v;
	}
	/* The key from the stack: before 6.2 the verifier takes no ring
	 * buffer memory as a map key ("R2 type=alloc_mem expected=fp, ...",
	 * 6.1 refused the whole recorder). */
	ts = bpf_map_lookup_elem(&task_states, &tgid);
	e->tree = ts ? ts->tree & (MAX_TREES - 1) : MAX_TREES;
}

/*
 * Where oom_kill_process cannot be attached (no fentry: a kernel without
 * CONFIG_FUNCTION_TRACER, as this project's test machine; or the function
 * inlined), the kill's cgroup is inferred at mark_victim. A memcg OOM's
 * victim is always inside the OOMing cgroup (mem_cgroup_scan_tasks walks
 * its subtree), which failed a charge at its limit: so the OOMing cgroup
 * is on the path from the victim's memory cgroup up, OOM_DEPTH levels at
 * most, and the first one at its limit on it. "At its limit" is read two
 * ways: the charge within OOM_CHARGE_SLACK of the limit now (the first
 * such cgroup wins), else its high watermark there (the first such):
 * the charge alone races with memory freed on another CPU between the
 * failed charge and mark_victim (an earlier victim's exit, its reaping:
 * make check saw a container's 64 MiB cgroup at 47 MiB at the second
 * kill), while the watermark stays where the failed charge left it.
 * Neither on the path: a global OOM. valid 2 says inferred.
 */
#define OOM_DEPTH 8
#define OOM_CHARGE_SLACK 1024        /* pages: a huge page's charge (512) and a batch (64), with room */
#define PAGE_COUNTER_UNLIMITED (0x7fffffffffffffffUL / 4096)

static __always_inline void take_memcg(struct oom_context *c, struct cgroup_subsys_state *css,
				       __u64 max, __u64 usage)
{
	c->memcg_id = BPF_CORE_READ(css, cgroup, kn, id);
	c->limit_pages = max;
	c->usage_pages = usage;
	c->constraint = 3;      /* CONSTRAINT_MEMCG */
}

static __always_inline void infer_context(struct oom_context *c, struct task_struct *task)
{
	int id = bpf_core_enum_value(enum cgroup_subsys_id, memory_cgrp_id);
	struct cgroup_subsys_state *css = NULL, *peaked = NULL;
	struct css_set *cset = BPF_CORE_READ(task, cgroups);
	__u64 peaked_max = 0, peaked_usage = 0;

	c->valid = 2;
	c->trigger_tgid = (__u32)(bpf_get_current_pid_tgid() >> 32);
	bpf_get_current_comm(c->trigger_comm, sizeof(c->trigger_comm));
	if (!cset || id < 0 || id >= CGROUP_SUBSYS_COUNT)
		return;
	bpf_core_read(&css, sizeof(css), &cset->subsys[id]);
	CFG_SAFE_LOOP
	for (int i = 0; i < OOM_DEPTH; i++) {
		struct mem_cgroup *memcg = (struct mem_cgroup *)css;  /* css is its first member */
		__u64 max = css ? BPF_CORE_READ(memcg, memory.max) : 0;
		__u64 usage = css ? BPF_CORE_READ(memcg, memory.usage.counter) : 0;
		__u64 mark = css ? BPF_CORE_READ(memcg, memory.watermark) : 0;

		if (css && max < PAGE_COUNTER_UNLIMITED && usage + OOM_CHARGE_SLACK >= max) {
			take_memcg(c, css, max, usage);
			return;
		}
		if (css && !peaked && max < PAGE_COUNTER_UNLIMITED && mark + OOM_CHARGE_SLACK >= max) {
			peaked = css;
			peaked_max = max;
			peaked_usage = usage;
		}
		css = css ? BPF_CORE_READ(css, parent) : NULL;
	}
	if (peaked)
		take_memcg(c, peaked, peaked_max, peaked_usage);
}

/* The victim's task_struct, on every kernel: 6.9+ passes it (struct
 * trace_event_raw_mark_victim___v69, compat.bpf.h); before, only its PID,
 * which is all the record then has of it (rss_from OOM_RSS_NONE). */
static __always_inline struct task_struct *victim_task(__u64 arg0, __u32 *pid)
{
	if (mark_victim_has_task())
		return (struct task_struct *)arg0;
	*pid = (__u32)arg0;
	return NULL;
}

SEC("?tp_btf/mark_victim")
int BPF_PROG(oom_victim)
{
	__u32 me = (__u32)bpf_get_current_pid_tgid(), pid = 0;
	struct oom_context *c = bpf_map_lookup_elem(&oom_kills, &me);
	struct task_struct *task = victim_task(ctx[0], &pid);
	struct oom_event *e;

	__sync_fetch_and_add(&oom_victims, 1);
	e = bpf_ringbuf_reserve(&oom_events, sizeof(*e), 0);
	if (!e) {
		__sync_fetch_and_add(&oom_ring_drops, 1);
		return 0;
	}
	__builtin_memset(e, 0, sizeof(*e));
	e->ns = bpf_ktime_get_ns();
	e->tree = MAX_TREES;
	if (c)
		e->ctx = *c;
	if (task) {
		read_victim(e, task);
		e->uid = (__u32)ctx[1];
		if (!c)
			infer_context(&e->ctx, task);
	} else {
		e->tgid = e->pid = pid;
		e->rss_from = OOM_RSS_NONE;
	}
	bpf_ringbuf_submit(e, 0);
	return 0;
}
