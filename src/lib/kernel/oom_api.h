/* SPDX-License-Identifier: MIT */
/*
 * The OOM flight recorder's kernel part (issue 34; docs/design.md, "OOM
 * kills"): bpf/oom.bpf.c puts every victim the OOM killer marks on the
 * machine into a ring of the tracker's load; this drains it.
 *
 * The programs are part of the tracker's BPF object (one load, one parse
 * of the kernel's BTF) and cost nothing per page event. They load in
 * steps: with the kill's context (fentry/oom_kill_process: the OOMing
 * memcg and its limit), else the victims alone (a kernel where that
 * function is inlined), else none; a failure never costs the tracker its
 * load (tracker_load.c).
 */
#ifndef PEAKBPF_OOM_API_H
#define PEAKBPF_OOM_API_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/types.h>
#include "tracker.h"
#include "oom.h"

struct tracker_bpf;
struct oom_reader;

/* What the load has of the recorder. */
enum oom_level {
	OOM_OFF,                /* not asked for, or the load refused it */
	OOM_VICTIMS,            /* victims, without the kill's context */
	OOM_FULL,               /* victims and the kill's context */
};

/* Whether fentry/oom_kill_process can load here (the kill's context):
 * the kernel's BTF read once (~10 ms), so only the agent asks. */
bool oom_context_probe(void);
/* Before the tracker's load: the programs of level on, the others off. */
void oom_prepare(struct tracker_bpf *skel, enum oom_level level);
/* After the load and attach (tracker_load.c): the ring's reader. 0 or -errno. */
int oom_reader_new(struct tracker_bpf *skel, struct oom_reader **out);
void oom_reader_free(struct oom_reader *r);
/* An fd that polls readable when the ring has a victim. */
int oom_reader_fd(const struct oom_reader *r);
/* Why a load has less than OOM_FULL (tracker_load__oom's level and err);
 * NULL at OOM_FULL. */
const char *oom_why(int level, int err);

/* Each victim recorded since the last drain, oldest first, to fn (every
 * tree's and none's: e->tree says). fn returns non-zero to stop. Returns
 * the number handed on, or -errno. */
typedef int (*oom_fn)(void *ctx, const struct oom_event *e);
int oom_drain(struct oom_reader *r, oom_fn fn, void *ctx);
/* Victims marked since the load, and those the ring had no room for. */
void oom_counts(const struct oom_reader *r, __u64 *victims, __u64 *drops);

#endif
