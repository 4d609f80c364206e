// SPDX-License-Identifier: GPL-2.0
/*
 * What each piece of an event program costs on this machine (make
 * bench-pieces, tools/bench/pieces.c): one tp_btf program per piece on
 * rss_stat (and on the memcg statistic tracepoint, 6.13+), each doing that
 * piece alone, timed one at a time by the kernel's BPF statistics against
 * the empty one. The pieces are those the tracker's and the unique
 * program's paths are made of (docs/performance.md, "What an event's
 * pieces cost").
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>

char LICENSE[] SEC("license") = "GPL";

#define READ_ONCE_U32(x) (*(const volatile __u32 *)&(x))

/* Pages of .bss that no kernel path touches (the mm filter's kind). */
__u32 pages[4][1024];

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, __u64);
	__type(value, __u64[8]);
} hash SEC(".maps");            /* mm_states' kind; pieces.c puts key 1 in */

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(max_entries, 16384);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, __u64);
	__type(value, __u32[4]);
} pcpu_hash SEC(".maps");       /* mm_cpu_slots' kind; key 1 in */

SEC("tp_btf/rss_stat")
int rss_empty(__u64 *ctx)
{
	return 0;
}

/* The event's mm: the kernel has just updated its counter. */
SEC("tp_btf/rss_stat")
int rss_mm_field(__u64 *ctx)
{
	struct mm_struct *mm = (void *)ctx[0];

	return mm->rss_stat[1].count != 0;
}

SEC("tp_btf/rss_stat")
int rss_one_page(__u64 *ctx)
{
	return READ_ONCE_U32(pages[0][3]) != 0;
}

SEC("tp_btf/rss_stat")
int rss_two_pages(__u64 *ctx)
{
	return READ_ONCE_U32(pages[1][3]) + READ_ONCE_U32(pages[2][3]) != 0;
}

SEC("tp_btf/rss_stat")
int rss_atomic(__u64 *ctx)
{
	__sync_fetch_and_add(&pages[3][5], 1);
	return 0;
}

SEC("tp_btf/rss_stat")
int rss_hash_hit(__u64 *ctx)
{
	__u64 key = 1, *v = bpf_map_lookup_elem(&hash, &key);

	return v && v[0];
}

SEC("tp_btf/rss_stat")
int rss_pcpu_hash_hit(__u64 *ctx)
{
	__u64 key = 1;
	__u32 *v = bpf_map_lookup_elem(&pcpu_hash, &key);

	return v && v[0];
}

SEC("tp_btf/rss_stat")
int rss_probe_read(__u64 *ctx)
{
	struct mm_struct *mm = (void *)ctx[0];
	long v = 0;

	bpf_probe_read_kernel(&v, sizeof(v), &mm->rss_stat[1].count);
	return v == 0;
}

SEC("tp_btf/rss_stat")
int rss_ktime(__u64 *ctx)
{
	return bpf_ktime_get_ns() == 0;
}

/* A clock of a tick's precision (bpf_ktime_get_coarse_ns is refused to
 * tracing programs). */
SEC("tp_btf/rss_stat")
int rss_jiffies(__u64 *ctx)
{
	return bpf_jiffies64() == 0;
}

/* The memcg statistic tracepoint (6.13+): the unique program's pieces. */
static __always_inline int mapped_item(int item)
{
	if (item == (int)bpf_core_enum_value(enum node_stat_item, NR_ANON_MAPPED))
		return 1;
	if (item == (int)bpf_core_enum_value(enum node_stat_item, NR_FILE_MAPPED))
		return 0;
	return -1;
}

SEC("?tp_btf/mod_memcg_lruvec_state")
int BPF_PROG(memcg_empty, struct mem_cgroup *memcg, int item, int val)
{
	return 0;
}

SEC("?tp_btf/mod_memcg_lruvec_state")
int BPF_PROG(memcg_item, struct mem_cgroup *memcg, int item, int val)
{
	return mapped_item(item) < 0 ? 0 : val;
}

/* The memcg's own struct: the kernel has just updated its statistics. */
SEC("?tp_btf/mod_memcg_lruvec_state")
int BPF_PROG(memcg_css_cgroup, struct mem_cgroup *memcg, int item, int val)
{
	return mapped_item(item) < 0 ? 0 : memcg->css.cgroup != NULL;
}

/* unique_stat's id: two more structs, the cgroup's and its kernfs node's. */
SEC("?tp_btf/mod_memcg_lruvec_state")
int BPF_PROG(memcg_cgroup_id, struct mem_cgroup *memcg, int item, int val)
{
	return mapped_item(item) < 0 ? 0 : memcg->css.cgroup->kn->id == 7;
}

/* ... and its table's line (unique_stat's whole reject). */
SEC("?tp_btf/mod_memcg_lruvec_state")
int BPF_PROG(memcg_id_table, struct mem_cgroup *memcg, int item, int val)
{
	__u64 id;

	if (mapped_item(item) < 0)
		return 0;
	id = memcg->css.cgroup->kn->id;
	return READ_ONCE_U32(pages[0][(id * 16) & 1023]) == 7;
}
