/* SPDX-License-Identifier: MIT */
/*
 * The unique program's part in the tracker's load (unique_hook.c): which
 * hook it attaches to on this kernel, chosen before the load
 * (tracker_load.c), and which of the object's programs are its. The
 * figure it keeps per tree is unique_api.h's.
 */
#ifndef PEAKBPF_UNIQUE_HOOK_H
#define PEAKBPF_UNIQUE_HOOK_H

#include <stdbool.h>

struct tracker_bpf;
struct bpf_program;
struct tracker_features;

/*
 * Before the tracker's load: load the program, or, with on false, leave
 * the programs out. The hook is the memcg statistic tracepoint (6.13+),
 * else the memcg statistic function rmap calls, as this kernel has it out
 * of line (5.10 to 6.12: bpf/unique.bpf.c), found in the kernel's BTF
 * only where the probes did not see the tracepoint (f->memcg_stat_tp_seen,
 * kfeatures.h). 0; -EOPNOTSUPP: no hook here; -ENOSYS: no BPF atomics with
 * a result (before 5.12). Then the programs stay out.
 */
int unique_prepare(struct tracker_bpf *skel, bool on, const struct tracker_features *f);
/* Whether prog is one of the unique programs (their skipped runs lose
 * nothing: bpf/unique.bpf.c). */
bool unique_owns_prog(const struct tracker_bpf *skel, const struct bpf_program *prog);

#endif
