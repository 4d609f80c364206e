/* SPDX-License-Identifier: MIT */
/* OOM kills of a session's tree (peakbpf_oom_victims, libpeakbpf.c): the
 * OOM recorder's victims (src/lib/kernel/oom.c) that were its tree's. */
#ifndef PEAKBPF_LIBPEAKBPF_OOM_H
#define PEAKBPF_LIBPEAKBPF_OOM_H

#include <stddef.h>
#include <stdint.h>
#include <peakbpf/peakbpf.h>

struct session;
/* The victims drained so far, kept for the session's life. */
struct lib_oom;

/* Drain the recorder into *store (made at the first call) keeping the
 * victims of s's tree since t0_ns; give them as peakbpf_oom_victims does. */
int lib_oom_victims(struct session *s, uint64_t t0_ns, struct lib_oom **store, struct peakbpf_oom_victim *out,
		    size_t max, size_t *n, char *why, size_t why_len);
void lib_oom_free(struct lib_oom *store);

#endif
