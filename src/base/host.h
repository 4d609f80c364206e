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
	bool hugetlb_possible;  /* huge pages configured: a process can hold hugetlb (hugetlb.h) */
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

/* Who asks to trace a process: its real uid and gid, permitted
 * capabilities, and whether it holds CAP_SYS_PTRACE. */
struct tracer {
	uid_t uid;
	gid_t gid;
	uint64_t cap_permitted;
	bool sys_ptrace;
};

/* What the ptrace rule asks of a process (its /proc/PID/status). */
struct proc_creds {
	unsigned uid[3], gid[3];        /* real, effective, saved */
	uint64_t cap_permitted;
	pid_t ppid;
	bool has_mm;                    /* not exiting, not a zombie */
	bool dumpable;
};

/*
 * The one rule for which processes a caller may measure, the kernel's
 * ptrace_may_access(PTRACE_MODE_READ_REALCREDS): the caller holds
 * CAP_SYS_PTRACE; or the target's real, effective and saved uids are the
 * caller's uid and its gids the caller's gid, its permitted capabilities
 * are within the caller's, and it is dumpable. The helper (serve_tree.c),
 * the CLI with capabilities and peakbpf_add_pid all ask it. 0, -EPERM,
 * -ESRCH (exited, exiting), or -errno reading /proc.
 */
int host_may_trace(pid_t pid, const struct tracer *t);
/* The decision alone, on creds already read. */
int host_trace_decide(const struct proc_creds *pc, const struct tracer *t);
/* Parse the Uid, Gid, CapPrm, PPid and VmRSS lines of a status file (not
 * dumpable: the caller fills it). 0 or -EINVAL. */
int host_parse_creds(const char *status, struct proc_creds *pc);
/* The parent of pid, or -1 when it cannot be read. */
pid_t host_parent(pid_t pid);
/* This process as a tracer (CAP_SYS_PTRACE from capeff). */
void host_tracer_self(struct tracer *t, uint64_t capeff);
/* host_may_trace with this process as the tracer. */
int host_may_measure(pid_t pid, uint64_t capeff);
/* The PID, in this PID namespace, of the process a pidfd refers to: 0,
 * -EXDEV (not visible here), -ESRCH (exited), -EINVAL (not a pidfd). */
int host_pidfd_pid(int pidfd, pid_t *pid);
/* Has the pidfd's process exited? Needs no permission over it. */
bool host_pidfd_exited(int pidfd);
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
/* The capability set of /proc/self/status's line key ("CapPrm:"). */
uint64_t host_caps(const char *key);
/* Which privileges let this process load tracing BPF programs: "root" (all
 * capabilities), "CAP_SYS_ADMIN", "CAP_BPF+CAP_PERFMON", or NULL. */
const char *bpf_privileges(uint64_t capeff);
bool host_has_btf(void);
/* uname, CPUs, page size, BTF; privileges from the caps given. */
void host_facts_fill(struct host_facts *h, uint64_t capeff);

#endif
