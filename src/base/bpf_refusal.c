// SPDX-License-Identifier: MIT
/* Why bpf() was refused although the capabilities are held (bpf_refusal.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "bpf_refusal.h"
#include "fileutil.h"

int bpf_refusal_parse_seccomp(const char *status)
{
	for (const char *l = status; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
		char *end;
		long v;

		if (strncmp(l, "Seccomp:", 8))
			continue;
		errno = 0;
		v = strtol(l + 8, &end, 10);
		if (errno || end == l + 8 || v < 0 || v > 2)
			return -1;
		return (int)v;
	}
	return -1;
}

bool bpf_refusal_kernel_before(const char *release, int major, int minor)
{
	long maj, min;
	char *end;

	if (!release)
		return false;
	errno = 0;
	maj = strtol(release, &end, 10);
	if (errno || end == release || *end != '.')
		return false;
	release = end + 1;
	min = strtol(release, &end, 10);
	if (errno || end == release)
		return false;
	return maj < major || (maj == major && min < minor);
}

/* bpf(BPF_MAP_CREATE, NULL, 1): the kernel copies one byte from NULL and
 * returns EFAULT before any permission check (kernel/bpf/syscall.c,
 * __sys_bpf: copy_from_bpfptr before security_bpf); any other answer came
 * from a seccomp filter, which sees the call first. Safe to ask only once
 * bpf() has returned an errno here already (a filter that kills does not). */
static int probe_filtered(void)
{
	long rc = syscall(SYS_bpf, 0, NULL, 1);

	if (rc >= 0)
		return 0; /* cannot happen with a NULL attr; the kernel saw it */
	return errno == EFAULT ? 0 : errno;
}

void bpf_refusal_gather(struct bpf_refusal *r, int err, const char *privileges,
			const char *kernel_release)
{
	struct rlimit rl;
	char *status = NULL;

	memset(r, 0, sizeof(*r));
	r->err = err;
	r->privileges = privileges;
	r->seccomp = -1;
	if (read_text_file("/proc/self/status", &status, NULL) == 0)
		r->seccomp = bpf_refusal_parse_seccomp(status);
	free(status);
	r->filtered_errno = probe_filtered();
	/* Since 5.11 BPF memory is charged to the memory cgroup, not to
	 * RLIMIT_MEMLOCK (commit "bpf: eliminate rlimit-based memory
	 * accounting infra for bpf maps", the 5.11 series). */
	r->memlock_charged = bpf_refusal_kernel_before(kernel_release, 5, 11);
	r->memlock_limited = getrlimit(RLIMIT_MEMLOCK, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY;
}

void bpf_refusal_why(const struct bpf_refusal *r, char *why, size_t len)
{
	const char *priv = r->privileges ? r->privileges : "its capabilities";

	if (r->filtered_errno > 0 && r->seccomp == 2)
		snprintf(why, len, "a seccomp filter refuses bpf() (%s; Seccomp: 2 in /proc/self/status) "
			 "though peakbpf has %s: run the container with --security-opt seccomp=FILE, "
			 "FILE from peakbpf-seccomp (docs/containers.md)",
			 strerror(r->filtered_errno), priv);
	else if (r->filtered_errno > 0)
		snprintf(why, len, "bpf() is refused (%s) before the kernel sees it though peakbpf has %s: "
			 "a sandbox filters it; allow bpf() there (a container: --security-opt "
			 "seccomp=FILE, FILE from peakbpf-seccomp)", strerror(r->filtered_errno), priv);
	else if (r->memlock_charged && r->memlock_limited)
		snprintf(why, len, "the kernel refused the BPF programs (%s) though peakbpf has %s: before "
			 "5.11 BPF maps count against the locked-memory limit: raise it (ulimit -l "
			 "unlimited; a container's --ulimit memlock=-1)", strerror(-r->err), priv);
	else
		snprintf(why, len, "the kernel refused the BPF programs (%s) though peakbpf has %s and no "
			 "seccomp filter stops bpf()%s: a security module (SELinux, AppArmor, BPF LSM) "
			 "may refuse it; run with -v for the kernel's log", strerror(-r->err), priv,
			 r->memlock_charged ? "" : " (nor the locked-memory limit, since 5.11)");
}
