/* SPDX-License-Identifier: MIT */
/*
 * What this kernel can do, probed in one place. Each feature has one name,
 * the same here, in the BPF code (bpf/compat.bpf.h) and in program names:
 * a program named NAME__FEATURE loads only where has_FEATURE is true, and
 * replaces the program NAME, if there is one (tracker_load.c, load_variants).
 * docs/design.md lists the kernels each one came with.
 */
#ifndef PEAKBPF_KFEATURES_H
#define PEAKBPF_KFEATURES_H

#include <stdbool.h>
#include <stddef.h>

/*
 * Every feature is one row: X(NAME, PROBE, BPF), giving the flag has_NAME
 * below, the name programs are suffixed with (NAME__F), and
 *  - PROBE: what features_probe sets it to before load, a probe of
 *    kfeatures.c, or assumed (true until the load says otherwise) or
 *    after_load (false until the loaded object tells), or apart (probed by
 *    features_probe after the table, which also keeps what it saw);
 *  - BPF: RODATA when the BPF object reads it too, as the const volatile
 *    has_NAME (bpf/compat.bpf.h) that tracker_load.c sets before load; else NONE.
 *
 * fetch_atomics: BPF atomics with a result: fetch-add, xchg, cmpxchg (5.12).
 * percpu_sum: summing a counter over every CPU in BPF: syscall programs
 *   (5.14), bpf_loop (5.17), bpf_map_lookup_percpu_elem (5.19); with
 *   fetch_atomics, as the sums also exchange values.
 * exit_mmap_tp: the mmap:exit_mmap tracepoint (6.1). Not probed before
 *   load (that would parse the kernel's BTF once more): assumed, and
 *   cleared when the load cannot find its attach target.
 * cgroup_targets: the programs that follow a cgroup (--cgroup, --unit,
 *   --container): from fetch_atomics (5.12; 5.10's plain fallbacks gave a
 *   wrong figure once, kfeatures.c), and cleared when the load refuses them.
 * percpu_rss: rss counters are percpu_counters (6.2): decided by CO-RE
 *   inside the BPF object, reported by learn_cpu_offsets after load.
 * memcg_stat_tp: the memcg statistic tracepoints (6.13): where tracefs is
 *   mounted, its events directory tells (a stat, no BTF parse); elsewhere
 *   the kernel's raw tracepoint table, asked without attaching (kfeatures.c,
 *   raw_tp_exists); where neither can tell, assumed, and cleared when the
 *   load cannot find the attach target. memcg_stat_tp_seen: one of them
 *   saw it (not assumed), so the unique program's hook needs no scan of
 *   the kernel's BTF.
 * page_fault_tp: the x86 exceptions:page_fault_user tracepoint, --stacks'
 *   hook (bpf/stacks.bpf.c): probed only for a load that asks for --stacks
 *   (features_probe_stacks: the kernel's raw tracepoint table, no BTF
 *   parse), so the default start-up pays nothing; false until then.
 * find_vma, current_task_btf: the helpers bpf_find_vma (5.17, 7c7e3d31e785
 *   "bpf: Introduce helper bpf_find_vma") and bpf_get_current_task_btf
 *   (5.11, 3ca1032ab7ab "bpf: Implement get_current_task_btf and
 *   RET_PTR_TO_BTF_ID") that --stacks' programs call:
 *   helper probes, only for a load that asks for --stacks (which also
 *   probes exit_mmap_tp then, its teardown hook having no fentry
 *   variant); false until then.
 * thp_fexit: fexit on do_huge_pmd_anonymous_page, where --stacks places a
 *   transparent huge page's 512 pages (bpf/stacks.bpf.c, stk_thp): probed
 *   with page_fault_tp, only for --stacks, by loading a two-instruction
 *   fexit program on it (the function's BTF id: one parse of the kernel's
 *   BTF); cleared when the load refuses stk_thp itself.
 */
#define KFEATURES(X) \
	X(fetch_atomics, probe_fetch_atomics, RODATA) \
	X(percpu_sum, probe_percpu_sum, NONE) \
	X(exit_mmap_tp, assumed, NONE) \
	X(percpu_rss, after_load, NONE) \
	X(memcg_stat_tp, apart, NONE) \
	X(cgroup_targets, probe_cgroup_targets, NONE) \
	X(page_fault_tp, apart, NONE) \
	X(find_vma, apart, NONE) \
	X(current_task_btf, apart, NONE) \
	X(thp_fexit, apart, NONE)

struct tracker_features {
#define KFEATURE_FLAG(name, probe, bpf) bool has_##name;
	KFEATURES(KFEATURE_FLAG)
#undef KFEATURE_FLAG
	int possible_cpus;
	/* Before 6.2: the most pages one fault maps without an rss_stat
	 * event, fault_around_bytes in pages (mm/memory.c, do_fault_around),
	 * read from debugfs; fault_pages_read false: not readable there, the
	 * kernel's default (64 KiB) assumed. */
	unsigned fault_pages;
	bool fault_pages_read;
	bool memcg_stat_tp_seen;
};

/* Probe what can be probed before load (each probe loads a tiny program). */
void features_probe(struct tracker_features *f);
/* --stacks asked: probe page_fault_tp, find_vma, current_task_btf,
 * exit_mmap_tp (each true where its probe cannot tell: the load then
 * decides) and thp_fexit. */
void features_probe_stacks(struct tracker_features *f);
/* What this kernel lacks of --stacks' needs, as "X (5.17), Y (6.1)" into
 * buf; the number of them (0: nothing known to be missing). */
int features_stacks_lacks(const struct tracker_features *f, char *buf, size_t len);
/* The value of feature NAME ("fetch_atomics", ...); -ENOENT if unknown. */
int features_lookup(const struct tracker_features *f, const char *name, bool *on);

#endif
