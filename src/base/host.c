// SPDX-License-Identifier: MIT
#include <dirent.h>
#include <errno.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <sys/stat.h>
#include <unistd.h>
#include "fileutil.h"
#include "host.h"
#include "hugetlb.h"

#define CAP(bit) (1ULL << (bit))

uint64_t host_caps(const char *key)
{
	char line[256];
	uint64_t caps = 0;
	FILE *f = fopen("/proc/self/status", "re");

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		char *end;

		if (strncmp(line, key, strlen(key)))
			continue;
		errno = 0;
		caps = strtoull(line + strlen(key), &end, 16);
		if (errno || end == line + strlen(key))
			caps = 0;
		break;
	}
	fclose(f);
	return caps;
}

uint64_t host_effective_caps(void)
{
	return host_caps("CapEff:");
}

const char *bpf_privileges(uint64_t capeff)
{
	uint64_t both = CAP(CAPBIT_BPF) | CAP(CAPBIT_PERFMON);

	if ((capeff & both) == both && (capeff & CAP(CAPBIT_SYS_ADMIN)))
		return "root";
	if ((capeff & both) == both)
		return "CAP_BPF+CAP_PERFMON";
	if (capeff & CAP(CAPBIT_SYS_ADMIN))
		return "CAP_SYS_ADMIN";
	return NULL;
}

bool host_has_btf(void)
{
	return access("/sys/kernel/btf/vmlinux", R_OK) == 0;
}

void host_facts_fill(struct host_facts *h, uint64_t capeff)
{
	struct utsname u;
	long n = sysconf(_SC_NPROCESSORS_ONLN);

	memset(h, 0, sizeof(*h));
	if (uname(&u) == 0)
		snprintf(h->kernel, sizeof(h->kernel), "%s", u.release);
	h->cpus = n > 0 ? (int)n : 1;
	h->page_size = sysconf(_SC_PAGESIZE);
	h->btf = host_has_btf();
	h->hugetlb_possible = hugetlb_possible("/sys/kernel/mm/hugepages");
	h->privileges = bpf_privileges(capeff);
	if (!h->privileges)
		h->privileges = "none";
}

int host_parse_creds(const char *status, struct proc_creds *pc)
{
	bool uid = false, gid = false, cap = false;

	memset(pc, 0, sizeof(*pc));
	for (const char *l = status; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
		char *end;

		if (!strncmp(l, "Uid:", 4))
			uid = sscanf(l + 4, "%u %u %u", &pc->uid[0], &pc->uid[1], &pc->uid[2]) == 3;
		else if (!strncmp(l, "Gid:", 4))
			gid = sscanf(l + 4, "%u %u %u", &pc->gid[0], &pc->gid[1], &pc->gid[2]) == 3;
		else if (!strncmp(l, "CapPrm:", 7)) {
			errno = 0;
			pc->cap_permitted = strtoull(l + 7, &end, 16);
			cap = !errno && end != l + 7;
		} else if (!strncmp(l, "VmRSS:", 6))
			pc->has_mm = true;
		else if (!strncmp(l, "PPid:", 5))
			pc->ppid = (pid_t)strtol(l + 5, NULL, 10);
	}
	return uid && gid && cap ? 0 : -EINVAL;
}

int host_trace_decide(const struct proc_creds *pc, const struct tracer *t)
{
	if (t->sys_ptrace)
		return 0;
	/* Exiting, or a zombie: nothing to measure. */
	if (!pc->has_mm)
		return -ESRCH;
	/* The kernel's __ptrace_may_access with PTRACE_MODE_REALCREDS: the
	 * caller's uid is the target's real, effective and saved uid, its
	 * gid the target's three gids; */
	for (int i = 0; i < 3; i++)
		if (pc->uid[i] != (unsigned)t->uid || pc->gid[i] != (unsigned)t->gid)
			return -EPERM;
	/* the target's permitted capabilities are within the caller's
	 * (cap_ptrace_access_check); and it is dumpable. */
	if (pc->cap_permitted & ~t->cap_permitted)
		return -EPERM;
	return pc->dumpable ? 0 : -EPERM;
}

static int read_creds(pid_t pid, struct proc_creds *pc)
{
	char path[64], *text = NULL;
	int err;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	err = read_text_file(path, &text, NULL);
	if (!err)
		err = host_parse_creds(text, pc);
	free(text);
	return err == -ENOENT ? -ESRCH : err;
}

pid_t host_parent(pid_t pid)
{
	struct proc_creds pc;

	return read_creds(pid, &pc) ? -1 : pc.ppid;
}

int host_may_trace(pid_t pid, const struct tracer *t)
{
	struct proc_creds pc;
	char path[64];
	struct stat st;
	int err;

	if (t->sys_ptrace)
		return 0;
	err = read_creds(pid, &pc);
	if (err)
		return err;
	/* A process that is not dumpable (it changed identity, or asked to
	 * be) has the files of its /proc directory owned by root, not by its
	 * uid (the directory itself keeps its euid). */
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if (stat(path, &st))
		return errno == ENOENT ? -ESRCH : -errno;
	pc.dumpable = st.st_uid == pc.uid[1];
	return host_trace_decide(&pc, t);
}

void host_tracer_self(struct tracer *t, uint64_t capeff)
{
	t->uid = getuid();
	t->gid = getgid();
	t->cap_permitted = host_caps("CapPrm:");
	t->sys_ptrace = capeff & CAP(CAPBIT_SYS_PTRACE);
}

int host_may_measure(pid_t pid, uint64_t capeff)
{
	struct tracer t;

	host_tracer_self(&t, capeff);
	return host_may_trace(pid, &t);
}

int host_pidfd_pid(int pidfd, pid_t *pid)
{
	char path[64], line[128];
	int err = -EINVAL;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", pidfd);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		char *end;
		long v;

		if (strncmp(line, "Pid:", 4))
			continue;
		errno = 0;
		v = strtol(line + 4, &end, 10);
		if (errno || end == line + 4 || v < -1 || v > INT32_MAX)
			break;
		err = v > 0 ? 0 : v == 0 ? -EXDEV : -ESRCH;
		*pid = (pid_t)v;
		break;
	}
	fclose(f);
	return err;
}

bool host_pidfd_exited(int pidfd)
{
	/* Readable once the process has exited (pidfd_open(2)); asks for
	 * no permission over it, unlike sending it signal 0 (CAP_KILL). */
	struct pollfd p = { .fd = pidfd, .events = POLLIN };

	return poll(&p, 1, 0) != 0;
}

#define PF_KTHREAD_FLAG 0x00200000UL    /* include/linux/sched.h PF_KTHREAD */

const char *host_stat_no_mm(const char *stat)
{
	const char *p = stat ? strrchr(stat, ')') : NULL;
	unsigned long long flags;
	char state, *end;

	/* "PID (COMM) S PPID PGRP SESSION TTY TPGID FLAGS ...": COMM may
	 * hold ") ", so from the last one. */
	if (!p || p[1] != ' ' || !p[2])
		return NULL;
	state = p[2];
	if (state == 'Z' || state == 'X')
		return "a zombie: it has exited and its parent has not reaped it";
	p += 2;         /* at the state, field 3; on to field 9 */
	for (int field = 3; field < 9; field++) {
		p = strchr(p, ' ');
		if (!p)
			return NULL;
		p++;
	}
	errno = 0;
	flags = strtoull(p, &end, 10);
	if (errno || end == p || (*end != ' ' && *end != '\n' && *end))
		return NULL;
	return flags & PF_KTHREAD_FLAG ? "a kernel thread" : NULL;
}

/* The entries of /proc/PID/task (threads, the zombie leader included). */
static int live_threads(pid_t pid)
{
	char path[48];
	struct dirent *de;
	int n = 0;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	d = opendir(path);
	if (!d)
		return 0;
	while ((de = readdir(d)))
		if (de->d_name[0] != '.')
			n++;
	closedir(d);
	return n;
}

const char *host_pid_no_mm(pid_t pid)
{
	char path[48], buf[1024];
	const char *why = NULL;
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return NULL;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = '\0';
	if (n)
		why = host_stat_no_mm(buf);
	fclose(f);
	/* A leader that called pthread_exit is a zombie while its other
	 * threads run on, with the process's mm. */
	if (why && strstr(why, "zombie") && live_threads(pid) > 1)
		why = NULL;
	return why;
}
