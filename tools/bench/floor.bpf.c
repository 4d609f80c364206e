// SPDX-License-Identifier: GPL-2.0
/*
 * The floor for peakbpf's per-event cost: tp_btf programs on kmem:rss_stat
 * that do nothing. Whatever the kernel spends to run one of these (the
 * tracepoint's BPF trampoline, bpf_prog_run's accounting) is the least any
 * rss_stat program can cost. The bench attaches it before or after
 * peakbpf's program: programs on a tracepoint run in the order they were
 * attached, and the first one after a fault runs colder than the next.
 * bench_memcg is the same floor for the unique-memory program, on the memcg
 * statistic tracepoint.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

char LICENSE[] SEC("license") = "GPL";

SEC("tp_btf/rss_stat")
int BPF_PROG(bench_floor, struct mm_struct *mm, int member)
{
	return 0;
}

/*
 * The position bench ([1], attach order): a second empty program, the
 * floor's twin, and the same empty program as a raw_tp (no BTF at the
 * attach, probe-read arguments). The kernel runs every tp_btf and raw_tp
 * program on a tracepoint the same way (each its own probe of the
 * tracepoint, called in attach order; no trampoline, which is fentry's):
 * two empty programs tell what a position costs, whichever program is in it.
 */
SEC("tp_btf/rss_stat")
int BPF_PROG(bench_twin, struct mm_struct *mm, int member)
{
	return 0;
}

SEC("raw_tp/rss_stat")
int bench_raw(void *ctx)
{
	return 0;
}

/*
 * The floor of peakbpf's unique_stat (bpf/unique.bpf.c): an empty program
 * on memcg:mod_memcg_lruvec_state, which fires on every memcg statistic
 * update of the machine. The tracepoint is 6.13+, so the program loads
 * only where bpfstat finds it in the kernel's BTF ("?": off by default);
 * without it the rss_stat programs load as before.
 */
SEC("?tp_btf/mod_memcg_lruvec_state")
int BPF_PROG(bench_memcg, struct mem_cgroup *memcg, int item, int val)
{
	return 0;
}

/*
 * A reference, not a floor: the least an untracked event can cost in a
 * design that rejects it with one hash-map lookup keyed by the mm pointer
 * (peakbpf's mm_states: BPF_MAP_TYPE_HASH, 8-byte key, 16384 entries by
 * default). The map stays empty, so every lookup misses, as an untracked
 * event's does.
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, __u64);
	__type(value, __u64);
} bench_mms SEC(".maps");

SEC("tp_btf/rss_stat")
int BPF_PROG(bench_lookup, struct mm_struct *mm, int member)
{
	__u64 key = (__u64)mm;

	return bpf_map_lookup_elem(&bench_mms, &key) != NULL;
}
