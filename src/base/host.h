/* SPDX-License-Identifier: MIT */
/* Facts about this machine: kernel, CPUs, BTF, privileges. */
#ifndef PEAKBPF_HOST_H
#define PEAKBPF_HOST_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

struct host_facts {
	char kernel[65];        /* uname -r */
	int cpus;               /* online CPUs */
	long page_size;
	bool btf;               /* /sys/kernel/btf/vmlinux present */
	bool bpf_loaded;        /* the facts below come from a loaded tracker */
	bool rss_percpu;        /* rss kept in percpu_counters (6.2+) */
	bool fault_pages_read;  /* before 6.2: fault_around_bytes read, not assumed */
	const char *teardown_hook;
	const char *privileges; /* "root", "CAP_BPF+CAP_PERFMON", ... */
	int exact_path_err;     /* 0: per-CPU sums available, else -errno */
	/* What loading the BPF programs took, ms: probing the kernel's
	 * features, open + load (libbpf's parse of the kernel BTF, CO-RE,
	 * map creation, verification; the unique program's too, where it
	 * loads), learning the per-CPU offsets, attach. */
	double probe_ms, load_ms, learn_ms, attach_ms;
	/* How the bpf source came: "loaded" (by this session), "reused" (the
	 * load an earlier session of this process made), "helper" (peakbpf
	 * serve's, at helper_path); NULL: no bpf source. */
	const char *bpf_load;
	char helper_path[108];
};

#define CAPBIT_SYS_PTRACE 19
#define CAPBIT_SYS_ADMIN 21
#define CAPBIT_PERFMON   38
#define CAPBIT_BPF       39

/*
 * May the caller measure process pid? A caller that is not root (a user
 * running a binary given CAP_BPF+CAP_PERFMON) may measure what it could
 * ptrace: processes whose real, effective and saved uids are all its own,
 * and dumpable, unless it also has CAP_SYS_PTRACE. 0, -EPERM, or -errno reading /proc.
 */
int host_may_measure(pid_t pid, uint64_t capeff);
/* Could uid (not root, no CAP_SYS_PTRACE) ptrace pid? Its real, effective
 * and saved uids are uid, and it is dumpable. 0, -EPERM or -errno. The
 * helper (serve.c) asks it for its clients; host_may_measure too. */
int host_may_trace_as(pid_t pid, uid_t uid);
/* Why the process whose /proc/PID/stat is stat has no address space to
 * measure ("a kernel thread", "a zombie: it has exited, its parent has not
 * reaped it"), or NULL when it has one (or stat cannot be parsed). */
const char *host_stat_no_mm(const char *stat);
/* The same for pid, from /proc (a zombie leader whose other threads run
 * on has their mm: NULL); NULL when it cannot be read. */
const char *host_pid_no_mm(pid_t pid);
/* The most processes and address spaces such a caller may track: the
 * kernel memory its maps may take is bounded. */
#define UNPRIVILEGED_MAX_TRACKED 65536

/* Effective capabilities (CapEff of /proc/self/status); 0 when unreadable. */
uint64_t host_effective_caps(void);
/* Which privileges let this process load tracing BPF programs: "root" (all
 * capabilities), "CAP_SYS_ADMIN", "CAP_BPF+CAP_PERFMON", or NULL. */
const char *bpf_privileges(uint64_t capeff);
bool host_has_btf(void);
/* uname, CPUs, page size, BTF; privileges from the caps given. */
void host_facts_fill(struct host_facts *h, uint64_t capeff);

#endif
