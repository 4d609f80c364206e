/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The tracker's state: what userspace sets before load, the trees' state
 * in .bss, and the maps of mms, processes and threads.
 * Included once, by tracker.bpf.c (one compilation unit: one .bss).
 */
#ifndef PEAKBPF_TRACKER_MAPS_BPF_H
#define PEAKBPF_TRACKER_MAPS_BPF_H

#define PEAK_CAS_TRIES 16
#define SUM_SWAP_TRIES 4        /* note_and_add; each try costs verification time */
#define EEXIST 17
/* Counters nobody reads back in BPF: XADD, on every kernel. */
#define COUNT(p, v) __sync_fetch_and_add((p), (v))

char LICENSE[] SEC("license") = "GPL";

/* Set by userspace before load; the verifier sees them as constants. */
const volatile bool has_fetch_atomics = true;   /* BPF_FETCH atomics (5.12+) */
const volatile __u32 nr_cpus = 1;               /* possible CPUs */
const volatile bool record_sums = false;        /* --timeline, --compare-sampler; peakbpf serve */
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
/* Before 6.2: each tree's drops and its threads on CPUs (struct
 * pre62_tree), and each CPU's largest unread growth at a drop this window,
 * by tree (only that CPU writes its row; the cut reads and zeroes it). */
struct pre62_tree pre62_trees[MAX_TREES];
#define PRE62(i) (&pre62_trees[(i) & (MAX_TREES - 1)])
__s64 pre62_excess[MAX_CPUS][MAX_TREES];
/* Before 6.2: each CPU's largest sum + charges at a drop this window, by
 * tree: per CPU, so that no raise is lost where BPF has no compare-and-swap
 * (before 5.12: concurrent drops raised one word with plain stores). */
__s64 pre62_upper[MAX_CPUS][MAX_TREES];
/* Before 5.12: the tree sum each CPU read just before its last add. */
__s64 pre62_sum_seen[MAX_CPUS];
struct departed_mm departed[MAX_DEPARTED];     /* every tree's, tagged with it */
__u64 departed_seq;                             /* departures from every tree */
__u32 percpu_rss_kernel;        /* has_percpu_rss, for userspace */
struct sum_check check;         /* verify_sums' result */
/* Pointers pass through here to become plain numbers (needs CAP_PERFMON). */
volatile __u64 addr_scratch;
/* peakbpf's PID namespace and its level, set by enter_existing. */
__u64 caller_pidns;
__u32 caller_pidns_level;
/* Set by userspace per tree: how many levels below peakbpf's PID namespace
 * the namespace lies whose numbers the tree's PIDs are given in (peakbpf
 * serve: its client's); 0: peakbpf's own. */
__u32 tree_pid_depth[MAX_TREES];
/* Set by userspace per tree, before its roots: with record_sums, whether
 * the tree's changes go into sum_events (each mm copies it at entry, where
 * the event reads it). peakbpf serve loads with record_sums on and turns
 * it on for the trees whose clients asked. */
__u32 tree_record[MAX_TREES];
/* Set by userspace per recording tree whose client is not root (peakbpf
 * serve): who reads its changes, for the verdict each carries. */
struct tree_reader tree_readers[MAX_TREES];
/* Entries each tree tried to add to the maps of processes, threads and mms,
 * counted before each try and never reset: a tree cleared when the count
 * was N, and still at N, has no entry to walk for (tracker_trees.c). Entry
 * paths only. */
__u64 tree_insertions[MAX_TREES];
#define NOTE_INSERT(tree) COUNT(&tree_insertions[(tree) & (MAX_TREES - 1)], 1)
__u64 iter_entered;             /* processes enter_existing entered, for its passes */
__u32 dying_n;                  /* tgids in dying, from enter_existing */

/* Every change of a recording tree's sum (record_sums, tree_record), each
 * tagged with its tree. Sized by userspace. */
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

/* mm_states (by struct mm_struct *) and task_states (by tgid): shared
 * with the object's other units. */
#include "tracker_shared_maps.bpf.h"

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

/* Before 6.2: the tree's threads (struct thread_state), entered at fork,
 * exec and attach, never on the rss_stat path. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, DEFAULT_MAX_TRACKED);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, __u32);             /* PID (global TID) */
	__type(value, struct thread_state);
} thread_states SEC(".maps");

#endif
