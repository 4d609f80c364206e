/* SPDX-License-Identifier: MIT */
/*
 * Types shared by the kernel side (tracker.bpf.c) and userspace (tracker.c).
 * Never include vmlinux.h here: userspace includes this file too.
 * docs/design.md explains the data flow and the invariants.
 */
#ifndef PEAKBPF_TRACKER_H
#define PEAKBPF_TRACKER_H

#define DEFAULT_MAX_TRACKED 16384
#define MAX_CPUS 1024           /* per-CPU offsets learned for this many CPUs */
#define MAX_ROOTS 256
#define MAX_ITER_PASSES 64      /* enter_existing passes over all tasks, at most */
#define MAX_DYING 4096          /* exiting processes one attach walk notes, at most */
#define MAX_DEPARTED 256        /* mms that left, kept for the holders at the peak */
#define COMM_LEN 16
/* Trees one load keeps at once (a power of two: indexes are masked with
 * MAX_TREES - 1 so that the verifier sees them in bounds). The CLI and
 * libpeakbpf use tree 0; `peakbpf serve` gives each client its own. */
#define MAX_TREES 16

/* A tree's cgroup target, by where memory is charged (its own header: the
 * skeleton's .bss holds one per tree). */
#include "cgroup_target.h"

/* mm_filter in tracker.bpf.c: slots, and an mm's slot from the low 32 bits
 * of its address (mm_structs are at least 64-byte aligned: the bits above
 * 6). Shared so that userspace can drop a tree's mms from the filter. */
#define MM_FILTER_SLOTS 4096
static inline __u32 mm_filter_hash(__u32 low)
{
	return (((low >> 6) * 2654435761U) >> 20) & (MM_FILTER_SLOTS - 1);
}

/* The resident counters that make up rss; MM_SWAPENTS is not resident. */
enum rss_slot {
	RSS_FILE,
	RSS_ANON,
	RSS_SHMEM,
	RSS_SLOTS,
};

/*
 * What an mm held at the peak, kept lazily, by counter: on its first change
 * in a window it notes its pages before the change (first_pages: at the
 * window's cut), and on its first change after each new peak its pages
 * before that change (gen_pages: at that peak; gen names the peak by its
 * value, which only grows within a window). Two, by window parity, so that
 * the closed window's mark survives while userspace reads it after the cut.
 * holder_pages_at_peak() reads them; summed over the holders they also give
 * the tree's breakdown at the peak.
 */
struct peak_mark {
	__u64 window;
	__s64 gen;
	__s64 first_pages[RSS_SLOTS];
	__s64 gen_pages[RSS_SLOTS];
};

/* One address space in the tree, keyed by its struct mm_struct pointer.
 * What every event touches comes first, together (64 bytes), then the
 * marks (one per window parity, of which an event touches one), then what
 * only entry, folds and reports read. */
struct mm_state {
	__s64 pages[RSS_SLOTS];     /* counter values applied to the tree sum */
	__u64 counters[RSS_SLOTS];  /* 6.2+: each counter's per-CPU slots (fixed for
				       the mm's life), so that events need not read it */
	__s64 own_peak;             /* this mm's own largest rss, pages */
	__u64 events;               /* rss_stat events applied to it */
	__u32 tree;                 /* its tree (index into hot.trees) */
	/* Its tree records its changes (tree_record, copied at entry): read
	 * beside tree, on the line the event loads anyway, so that a tree of
	 * the helper's load that does not record pays no more per event. */
	__u32 record;
	struct peak_mark mark[2];
	__s64 count_seen[RSS_SLOTS]; /* 6.2+: the shared part (.count) in pages */
	__u32 tgid;                 /* a process using this mm (global PID) */
	__u32 vpid;                 /* ...in peakbpf's PID namespace, 0 if not visible */
	char comm[COMM_LEN];
};

/* 6.2+: each CPU's slot of an mm's counters as last taken into pages
 * (a per-CPU map, one copy per CPU). */
struct mm_cpu_slots {
	__s32 slot[RSS_SLOTS];
	__s32 pad;
};

/* One process (thread group) in the tree, keyed by its tgid. */
struct task_state {
	__u32 tree;                 /* its tree (index into hot.trees) */
};

/*
 * Before 6.2 (docs/design.md, "The bound before 6.2"): each thread keeps
 * its own rss changes in a cache (task_struct.rss_stat) that no event
 * shows; it syncs into the mm's counters at the fault after its events
 * count passed TASK_RSS_EVENTS_THRESH (mm/memory.c, check_sync_rss_stat),
 * so that it caches at most CACHE_FAULTS faults between two syncs.
 */
#define TASK_RSS_EVENTS_THRESH 64
#define CACHE_FAULTS (TASK_RSS_EVENTS_THRESH + 2)
#define DEFAULT_FAULT_PAGES 16  /* fault_around_bytes' default, 64 KiB, in 4 KiB pages */

/* One thread of the tree, keyed by its PID (global TID), before 6.2
 * (docs/design.md, "The bound before 6.2"). */
struct thread_state {
	__s32 bound_pages;          /* its charge: its cache's total as last read (exact
				       while it is off CPU), or CACHE_FAULTS x fault_pages
				       until first read (found running at attach) */
	__u32 running;              /* on a CPU since it was switched in */
	__u32 drops_seen;           /* its tree's drops (struct pre62_tree, low 32
				       bits) when its cache was last read or it
				       came on a CPU */
	__u32 tree;                 /* its tree (index into hot.trees) */
};

/*
 * Before 6.2, per tree, beside struct tree_state (which keeps its size: the
 * trees and the per-CPU offsets share the first page of .bss). A drop is a
 * change that lowers the tree sum: between two drops the true sum (the
 * counters + every thread's cache) only grows, so its largest value lies
 * just before a drop or at the cut. At a drop, a thread on a CPU may hold
 * more than its charge (it may have faulted since its last read); that
 * growth is known at its next read, on the same CPU, and each CPU keeps
 * the largest such growth of the window (pre62_excess), which the cut adds
 * up (pre62_window_upper): one thread a CPU at a time.
 */
struct pre62_tree {
	__u64 drops;
	__s64 running;              /* the tree's threads on a CPU now */
	__u64 pad[6];
};

/* An mm that left the tree, with what it held (see struct peak_mark). */
struct departed_mm {
	__u64 seq;                  /* departure number + 1; 0: empty */
	__u32 tgid, vpid;
	__u32 tree, pad;            /* the tree it left */
	__s64 own_peak;
	struct peak_mark mark[2];
	char comm[COMM_LEN];
};

/* A process to enter, by its PID in peakbpf's own PID namespace; the task
 * iterator fills in what it found. */
struct root_req {
	__u32 enter_mm;             /* 0: the command before exec (its mm is a copy of peakbpf's) */
	__u32 found;
	__u32 tgid;                 /* its global tgid, when found */
	__u32 tree;                 /* the tree to enter it into */
};

/*
 * One tree. MAX_TREES of them live in .bss (struct hot_state), which
 * userspace maps: it reads a tree directly and closes its window with
 * atomic operations on the same memory. Every entry in the maps names its
 * tree; docs/design.md ("Trees share one load") says how trees are cleared.
 */
struct tree_state {
	__s64 sum_word;                     /* tree sum now, with its count (sum_of_word) */
	__s64 peak_pages;                   /* running maximum of sum this window */
	__u64 window;                       /* window number, advanced at each cut */
	__u64 peak_ns;                      /* CLOCK_MONOTONIC when peak was set */
	__s64 peak_mms;                     /* mms in the tree at the peak */
	__s64 peak_procs;                   /* processes in the tree at the peak */
	__s64 mms_live;
	__s64 procs_live;
	__u64 mms_entered;
	__u64 procs_entered;
	__u64 drop_mm_full;                 /* an mm could not be entered: map full */
	__u64 drop_task_full;               /* a process could not be entered */
	__u64 peak_races;                   /* peak CAS retries exhausted */
	__u64 mark_races;                   /* sum swaps exhausted: a mark may be off */
	__u64 record_drops;                 /* sum changes the ring buffer had no room for */
	__u64 count_takes;                  /* 6.2+: flushes of a CPU's slot into .count taken */
	__u64 read_errors;                  /* counter reads that failed: the sum is not exact */
	__u64 settles;                      /* 6.2+: mms whose every CPU slot was taken at entry */
	__u64 departed_seq;                 /* mms that left this tree */
	__u64 departed_events;              /* events applied to mms that left */
	/* Before 6.2: the per-thread caches' bounds summed (struct
	 * thread_state), and this window's largest sum + that bound: the
	 * true peak lies in [peak_pages, upper_pages]. */
	__s64 bound_sum_pages;
	__s64 upper_pages;
	__u64 threads_live;
	/* Set by userspace: the most mms, and processes, this tree may hold
	 * at once in the load's shared maps (0: as many as they hold). */
	__u64 max_entries;
};

/*
 * What every tracked event touches, in one place: in this VM each distinct
 * page of map memory an event touches costs tens of ns (the first touch
 * after the fault that raised the event), so the tree and the per-CPU
 * offsets share the first page (tree 0, the CLI's, with the offsets of
 * up to ~125 CPUs).
 */
struct hot_state {
	struct tree_state trees[MAX_TREES];
	__u32 cpu_offsets_ready;            /* the exact per-CPU path is on */
	__u32 pad;
	__u64 cpu_offset[MAX_CPUS];         /* __per_cpu_offset[cpu], from learn_cpu_offsets */
};

/* One change of the tree sum, recorded for --timeline and
 * --compare-sampler: the sum after it, and the mm whose change it was
 * (its key in mm_states and its own total after it) for the per-process
 * lines. */
struct sum_event {
	__u64 ns;
	__s64 sum_pages;
	__u64 mm;                   /* the mm's key (its address) */
	__s64 mm_pages;             /* the mm's rss after the change */
	__u32 tgid;                 /* a process using it (global PID) */
	__u16 tree;                 /* the mm's tree */
	__u16 seen;                 /* enum sum_seen: its tree's reader's verdict */
};

/*
 * Whether a recording tree's reader (peakbpf serve's client, struct
 * tree_reader) could ptrace the process that made a change, judged in the
 * kernel at the change (bpf/tracker_event.bpf.h, reader_verdict): a
 * process gone before the helper drains the ring (every few ms) is judged
 * as it was, not withheld as unknown (src/helper/serve_readable.c).
 */
enum sum_seen {
	SUM_SEEN_UNJUDGED = 0,      /* no reader set, or made from another context */
	SUM_SEEN_READABLE = 1,
	SUM_SEEN_WITHHELD = 2,
};

/* A recording tree's reader, set by userspace before its roots: a user
 * with no capabilities (the helper's rule for its clients, host.h). */
struct tree_reader {
	__u32 uid;
	__u32 gid;
	__u32 judge;                /* 0: changes go unjudged */
	__u32 pad;
};

/* What verify_sums found: every mm's counters summed over every CPU,
 * against the value the incremental path holds. */
struct sum_check {
	__u64 mms;
	__u64 counters_off;
	__s64 max_off_pages;
};

/*
 * The tree sum shares one word with a 16-bit count of the changes that
 * made a new largest sum (and of window cuts): sum_word = sum_pages <<
 * SUM_SHIFT | count (sums up to 2^47 pages). On kernels with BPF_FETCH
 * atomics a change moves the word with a compare-and-swap from the value it
 * read, after it noted its mark against the peak it read with it: a change
 * that made a new largest sum in between changes the count, so the swap
 * fails and the change notes again (docs/design.md, "Holders at the peak
 * instant"). Pure, so userspace and the unit tests share them.
 */
#define SUM_SHIFT 16
#define SUM_COUNT_MASK 0xffff
static inline __s64 sum_of_word(__s64 word)
{
	return word >> SUM_SHIFT;       /* arithmetic: a sum may dip below 0 for an instant */
}

static inline __s64 sum_word_delta(__s64 d)
{
	return (__s64)((__u64)d << SUM_SHIFT);
}

/* The word after a change of d from word, when the largest sum before it
 * was peak: the count moves on when the change makes a new largest sum. */
static inline __s64 sum_word_next(__s64 word, __s64 d, __s64 peak)
{
	__s64 s = sum_of_word(word) + d;

	return sum_word_delta(s) | ((word + (s > peak)) & SUM_COUNT_MASK);
}

static inline __s64 mm_total_pages(const __s64 pages[RSS_SLOTS])
{
	return pages[RSS_FILE] + pages[RSS_ANON] + pages[RSS_SHMEM];
}

/* Before an mm's pages change in window w, whose peak is now gen: note
 * them (struct peak_mark). Pure: the BPF side and the unit tests share it. */
static inline void peak_mark_note(struct peak_mark mark[2], __u64 w, __s64 gen,
				  const __s64 pages[RSS_SLOTS])
{
	struct peak_mark *m = &mark[w & 1];

	if (m->window == w && m->gen == gen)
		return;
	if (m->window != w) {
		m->first_pages[RSS_FILE] = pages[RSS_FILE];
		m->first_pages[RSS_ANON] = pages[RSS_ANON];
		m->first_pages[RSS_SHMEM] = pages[RSS_SHMEM];
	}
	m->gen_pages[RSS_FILE] = pages[RSS_FILE];
	m->gen_pages[RSS_ANON] = pages[RSS_ANON];
	m->gen_pages[RSS_SHMEM] = pages[RSS_SHMEM];
	m->gen = gen;
	m->window = w;
}

/*
 * The pages an mm held, by counter, at the latest peak of window w (peak
 * peak_pages), from its marks and its pages now (NULL for an mm that has
 * left: none). Returns their total. Pure, so userspace and the unit tests
 * share it.
 */
static inline __s64 holder_pages_at_peak(const struct peak_mark mark[2], const __s64 *now,
					 __u64 w, __s64 peak_pages, __s64 out[RSS_SLOTS])
{
	const struct peak_mark *m = &mark[w & 1], *next = &mark[(w + 1) & 1];
	const __s64 *src = now;

	if (m->window == w && m->gen == peak_pages)
		src = m->gen_pages;             /* it changed after the peak */
	else if (next->window == w + 1)
		/* No change after the peak in w: it held at the peak what it
		 * held at the cut, which its first change in w + 1 noted. */
		src = next->first_pages;
	for (int i = 0; i < RSS_SLOTS; i++)
		out[i] = src ? src[i] : 0;
	return out[RSS_FILE] + out[RSS_ANON] + out[RSS_SHMEM];
}

/*
 * Before 6.2: what a thread's rss cache holds, from one reading of its
 * task_struct.rss_stat (count[] by the kernel's MM_* index, and events),
 * as a total of the resident counters (never below 0: a total below 0,
 * file -1 / anon +1 from wp_page_copy, is charged 0, above the truth).
 * at_event: read in an rss_stat event of the thread itself. An event seen
 * with events = THRESH + 2 is one of check_sync_rss_stat's sync (nothing
 * else runs between its events++ and sync_mm_rss's reset): sync_mm_rss
 * adds the counters in index order, each before it zeroes it, and fires
 * the event in the add, so the counter being synced is the lowest one not
 * 0, already in the mm's counters and still in the cache; what stays in
 * the cache is the rest. Anywhere else (switched out in the middle of a
 * sync) the counter being synced is not known: the whole total, above the
 * truth by at most that counter. Pure, shared with the unit tests.
 */
static inline __s64 cache_charge_pages(const int count[4], __s64 events, int at_event)
{
	__s64 total = (__s64)count[0] + count[1] + count[3];   /* MM_FILE, ANON, SHMEM */

	if (at_event && events == TASK_RSS_EVENTS_THRESH + 2) {
		for (int i = 0; i < 4; i++) {
			if (!count[i])
				continue;
			if (i != 2)     /* MM_SWAPENTS is not resident */
				total -= count[i];
			break;
		}
	}
	return total > 0 ? total : 0;
}

/* Before 6.2: what a thread's cache can hold at any time, from nothing
 * known: CACHE_FAULTS faults of fault_pages (fault_pages below 1: one page
 * a fault at the least). */
static inline __s64 cache_cap_pages(__s64 fault_pages)
{
	return CACHE_FAULTS * (fault_pages < 1 ? 1 : fault_pages);
}

/*
 * Before 6.2: a closed window's upper end (struct pre62_tree): the largest
 * of the sums + charges seen at its drops (upper) and at its cut (at_cut),
 * plus the growth threads on CPUs at a drop may have had unread (excess:
 * each CPU's largest, added up), plus the worst case of each thread still
 * on a CPU at the cut (its growth is read only after the window is
 * reported). Pure, shared with the unit tests.
 */
static inline __s64 pre62_window_upper(__s64 upper, __s64 at_cut, __s64 excess,
				       __s64 running_at_cut, __s64 cap)
{
	__s64 top = upper > at_cut ? upper : at_cut;

	if (excess > 0)
		top += excess;
	if (running_at_cut > 0)
		top += running_at_cut * cap;
	return top;
}

/*
 * The sizes the per-event cost rests on (docs/design.md, "The filter" and
 * what follows): checked where both the BPF side and userspace compile.
 */
_Static_assert(__builtin_offsetof(struct mm_state, tree) == 64,
	       "what every event touches of an mm is its first 64 bytes, one cache line");
_Static_assert(__builtin_offsetof(struct mm_state, record) / 8 ==
	       __builtin_offsetof(struct mm_state, tree) / 8,
	       "the record flag shares the word the event loads its tree index from");
_Static_assert(sizeof(struct pre62_tree) == 64, "one cache line a tree");
_Static_assert(sizeof(struct thread_state) == 16,
	       "the attach walk's stack has no room for a larger thread entry (6.1: 512 bytes)");
_Static_assert(sizeof(struct tree_state) % 64 == 0,
	       "trees start on cache lines of their own: no false sharing between trees");
_Static_assert(__builtin_offsetof(struct hot_state, cpu_offset) + 120 * sizeof(__u64) <= 4096,
	       "the trees and the per-CPU offsets of 120 CPUs share the first page of .bss");

#endif
