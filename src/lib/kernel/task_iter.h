/* SPDX-License-Identifier: MIT */
/*
 * Run a BPF task iterator (task_iter.c): the attach walk, the cgroup
 * targets' membership check and the agent's first walk each read one to
 * its end, which is what makes its program run over every task. Knows
 * neither of the tracker's types.
 */
#ifndef PEAKBPF_TASK_ITER_H
#define PEAKBPF_TASK_ITER_H

struct bpf_link;

/* Create an iterator from link and read it to its end: 0, or -errno. */
int task_iter_run(struct bpf_link *link);

#endif
