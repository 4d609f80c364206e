/* SPDX-License-Identifier: MIT */
/*
 * --stacks' kernel part, userspace side (docs/stacks.md): bpf/stacks.bpf.c's
 * programs turned on before the tracker's load only when asked (the
 * default load and its per-event cost are unchanged), and the reader of
 * their ring, which replays it into the page shadow (stacks_shadow.h) cut
 * at the tree's peak instant, and captures each address space's maps for
 * the symbols (stacks_sym.h) while its processes are alive.
 */
#ifndef PEAKBPF_STACKS_API_H
#define PEAKBPF_STACKS_API_H

#include <stdbool.h>
#include <linux/types.h>
#include "tracker.h"
#include "stacks.h"

struct tracker_bpf;
struct stacks_reader;
struct stack_shadow;
struct stacks_sym;

/* How huge pages are placed (docs/stacks.md): by stk_thp's fexit where the
 * kernel allows it (kfeatures.h, thp_fexit); else by stk_rss, from the anon
 * counter's changes, where each is exact (6.2+); else not (one page). */
enum stacks_thp {
	STACKS_THP_NONE,
	STACKS_THP_RSS,
	STACKS_THP_FEXIT,
};

/* Before the tracker's load: the programs and maps of --stacks on or off,
 * and which huge pages' program loads. */
void stacks_prepare(struct tracker_bpf *skel, bool on, enum stacks_thp thp);
/* After the load and attach: the ring's reader, for one tree's processes;
 * exact: the tracker's per-CPU path is on (stk_rss is attached only then). */
int stacks_reader_new(struct tracker_bpf *skel, bool exact, struct stacks_reader **out);
void stacks_reader_free(struct stacks_reader *r);
/* From now on, a fault of the tree in an address space no exec or fork
 * named starts its shadow (shadow_adopt): the tree has processes attached
 * live (-p), which held pages before the stacks began. */
void stacks_reader_adopt_unknown(struct stacks_reader *r);
/* Take the ring's events of tree into the shadow; the cut follows the
 * tree's peak instant as it is now (the peak only moves on). 0 or -errno. */
int stacks_drain(struct stacks_reader *r, unsigned tree);
/* The cut at the closed window's peak instant, then the ring's last events. */
int stacks_cut(struct stacks_reader *r, unsigned tree, __u64 peak_ns);
struct stack_shadow *stacks_shadow(struct stacks_reader *r);
struct stacks_sym *stacks_symbols(struct stacks_reader *r);
/* Events the ring had no room for; faults whose VMA could not be read. */
void stacks_counts(const struct stacks_reader *r, __u64 *drops, __u64 *vma_busy);
/* How huge pages are placed: STACKS_THP_NONE with *err why (-EOPNOTSUPP:
 * neither program could load; else an attach's error or, for stk_rss,
 * -ENODATA: the counters' changes are not exact here, before 6.2). */
enum stacks_thp stacks_thp_how(const struct stacks_reader *r, int *err);

#endif
