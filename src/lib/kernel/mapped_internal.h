/* SPDX-License-Identifier: MIT */
/*
 * Reading and writing the BPF object's mapped .bss, which the kernel
 * writes at the same time: what every file of src/lib/kernel that touches
 * it needs, inline (no file calls another through this header).
 */
#ifndef PEAKBPF_MAPPED_INTERNAL_H
#define PEAKBPF_MAPPED_INTERNAL_H

#include <stdbool.h>
#include <string.h>
#include <linux/types.h>
#include "tracker.h"            /* bpf/: struct departed_mm */
#include "unique.h"             /* bpf/: the same object's (tracker.skel.h) */
#include "oom.h"                /* ...and these */
#include "cgsum.h"

/* The BPF side's mapped state is shared with it: every access is atomic. */
#define LOAD(x) __atomic_load_n(&(x), __ATOMIC_SEQ_CST)
#define STORE(x, v) __atomic_store_n(&(x), (v), __ATOMIC_SEQ_CST)

/* A slot of the departed ring, read like a seqlock: false while the kernel
 * writes it (seq 0), or when it changed under the copy. */
static inline bool departed_read(const struct departed_mm *slot, struct departed_mm *out)
{
	__u64 seq = __atomic_load_n(&slot->seq, __ATOMIC_ACQUIRE);

	if (!seq)
		return false;
	memcpy(out, slot, sizeof(*out));
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	return __atomic_load_n(&slot->seq, __ATOMIC_ACQUIRE) == seq && out->seq == seq;
}

/* Raise *peak to v unless it is larger already (the BPF side raises it too). */
static inline void raise_to(__s64 *peak, __s64 v)
{
	__s64 seen = LOAD(*peak);

	while (v > seen && !__atomic_compare_exchange_n(peak, &seen, v, false,
							__ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST))
		;
}

#endif
