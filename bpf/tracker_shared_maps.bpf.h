/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The tracker's maps that other units of its object read (cgsum.bpf.c: an
 * mm's pages; oom.bpf.c: a victim's tree), defined once, here. The
 * tracker (tracker_maps.bpf.h) includes it for their definitions; the
 * others define SHARED_MAP as __weak before including it: the BPF linker
 * merges a weak map into the strong one of the same name when their
 * definitions match, which one text guarantees.
 */
#ifndef PEAKBPF_TRACKER_SHARED_MAPS_BPF_H
#define PEAKBPF_TRACKER_SHARED_MAPS_BPF_H

#ifndef SHARED_MAP
#define SHARED_MAP
#endif

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, DEFAULT_MAX_TRACKED);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, __u64);             /* struct mm_struct * */
	__type(value, struct mm_state);
} mm_states SEC(".maps") SHARED_MAP;

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, DEFAULT_MAX_TRACKED);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, __u32);             /* tgid */
	__type(value, struct task_state);
} task_states SEC(".maps") SHARED_MAP;

#endif
