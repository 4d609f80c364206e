/* SPDX-License-Identifier: MIT */
/*
 * What this kernel can do, probed in one place. Each feature has one name,
 * the same here, in the BPF code (bpf/compat.bpf.h) and in program names:
 * a program named NAME__FEATURE loads only where has_FEATURE is true, and
 * replaces the program NAME, if there is one (tracker.c, load_variants).
 * docs/design.md lists the kernels each one came with.
 */
#ifndef PEAKBPF_KFEATURES_H
#define PEAKBPF_KFEATURES_H

#include <stdbool.h>

struct tracker_features {
	/* BPF atomics with a result: fetch-add, xchg, cmpxchg (5.12). */
	bool has_fetch_atomics;
	/* Summing a counter over every CPU in BPF: syscall programs (5.14),
	 * bpf_loop (5.17), bpf_map_lookup_percpu_elem (5.19). */
	bool has_percpu_sum;
	/* The mmap:exit_mmap tracepoint (6.1). Not probed before load (that
	 * would parse the kernel's BTF once more): assumed, and cleared when
	 * the load cannot find its attach target. */
	bool has_exit_mmap_tp;
	/* rss counters are percpu_counters (6.2): decided by CO-RE inside
	 * the BPF object, reported by learn_cpu_offsets after load. */
	bool has_percpu_rss;
	/* The memcg statistic tracepoints (6.13): where tracefs is mounted,
	 * its events directory tells (a stat, no BTF parse); elsewhere
	 * assumed, and cleared when the load cannot find the attach target. */
	bool has_memcg_stat_tp;
	int possible_cpus;
	/* Before 6.2: the most pages one fault maps without an rss_stat
	 * event, fault_around_bytes in pages (mm/memory.c, do_fault_around),
	 * read from debugfs; fault_pages_read false: not readable there, the
	 * kernel's default (64 KiB) assumed. */
	unsigned fault_pages;
	bool fault_pages_read;
};

/* Probe what can be probed before load (each probe loads a tiny program). */
void features_probe(struct tracker_features *f);
/* The value of feature NAME ("fetch_atomics", ...); -ENOENT if unknown. */
int features_lookup(const struct tracker_features *f, const char *name, bool *on);

#endif
