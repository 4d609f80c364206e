/* SPDX-License-Identifier: MIT */
/*
 * Why the kernel refused bpf() to a process that holds the capabilities
 * (docs/containers.md, "peakbpf inside a container"): a seccomp filter (a
 * container runtime's default profile lets bpf() through only with
 * CAP_SYS_ADMIN), the locked-memory limit (kernels before 5.11), or
 * something else (an LSM). The facts are gathered once, after the refusal;
 * the message is a pure function of them.
 */
#ifndef PEAKBPF_BPF_REFUSAL_H
#define PEAKBPF_BPF_REFUSAL_H

#include <stdbool.h>
#include <stddef.h>

struct bpf_refusal {
	int err;                /* the load's error, negative (-EPERM, -EACCES) */
	const char *privileges; /* host_facts.privileges: "CAP_BPF+CAP_PERFMON", ... */
	int seccomp;            /* Seccomp: of /proc/self/status: 0, 1, 2; -1 unknown */
	/* bpf() stopped before the kernel saw it (bpf_refusal_probe): the
	 * errno a filter returned instead of the kernel's EFAULT; 0: it reached
	 * the kernel; -1: not probed. */
	int filtered_errno;
	bool memlock_charged;   /* BPF memory counted against RLIMIT_MEMLOCK (before 5.11) */
	bool memlock_limited;   /* RLIMIT_MEMLOCK is not unlimited */
};

/* The Seccomp: field of a /proc/PID/status text: 0, 1, 2, or -1. */
int bpf_refusal_parse_seccomp(const char *status);
/* Is the kernel release ("6.18.44-...") older than major.minor? False
 * when it cannot be parsed (then nothing is said about it). */
bool bpf_refusal_kernel_before(const char *release, int major, int minor);
/* The facts of this process: its seccomp mode, a probe of bpf() (see
 * filtered_errno), the kernel release's memlock charging, RLIMIT_MEMLOCK. */
void bpf_refusal_gather(struct bpf_refusal *r, int err, const char *privileges,
			const char *kernel_release);
/* One line: the cause and the option that fixes it. */
void bpf_refusal_why(const struct bpf_refusal *r, char *why, size_t len);

#endif
