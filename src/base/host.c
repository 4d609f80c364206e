// SPDX-License-Identifier: MIT
#include <dirent.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <sys/stat.h>
#include <unistd.h>
#include "host.h"

#define CAP(bit) (1ULL << (bit))

uint64_t host_effective_caps(void)
{
	char line[256];
	uint64_t caps = 0;
	FILE *f = fopen("/proc/self/status", "re");

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		char *end;

		if (strncmp(line, "CapEff:", 7))
			continue;
		errno = 0;
		caps = strtoull(line + 7, &end, 16);
		if (errno || end == line + 7)
			caps = 0;
		break;
	}
	fclose(f);
	return caps;
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
	h->privileges = bpf_privileges(capeff);
	if (!h->privileges)
		h->privileges = "none";
}

/* The real, effective and saved uids of pid (the Uid: line of its status),
 * and whether it still has an address space (a VmRSS: line: a process
 * that is exiting, or a zombie, has none). */
static int process_uids(pid_t pid, unsigned long uids[3], bool *has_mm)
{
	char path[64], line[256];
	int err = -ESRCH;
	FILE *f;

	*has_mm = false;
	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		if (!strncmp(line, "Uid:", 4))
			err = sscanf(line + 4, "%lu %lu %lu", &uids[0], &uids[1], &uids[2]) == 3 ? 0 : -EINVAL;
		else if (!strncmp(line, "VmRSS:", 6))
			*has_mm = true;
	}
	fclose(f);
	return err;
}

int host_may_trace_as(pid_t pid, uid_t uid)
{
	unsigned long uids[3];
	char path[64];
	struct stat st;
	bool has_mm;
	int err;

	err = process_uids(pid, uids, &has_mm);
	if (err)
		return err;
	for (int i = 0; i < 3; i++)
		if (uids[i] != (unsigned long)uid)
			return -EPERM;
	/* Exiting, or a zombie: nothing to measure, and its /proc files are
	 * root's (below) whoever it was. */
	if (!has_mm)
		return -ESRCH;
	/* A process that is not dumpable (it changed identity, or asked to
	 * be) has the files of its /proc directory owned by root, not by its
	 * uid (the directory itself keeps its euid): ptrace would refuse it
	 * too. */
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if (stat(path, &st))
		return -errno;
	return st.st_uid == uid ? 0 : -EPERM;
}

int host_may_measure(pid_t pid, uint64_t capeff)
{
	uid_t me = getuid();

	if (me == 0 || (capeff & CAP(CAPBIT_SYS_PTRACE)))
		return 0;
	return host_may_trace_as(pid, me);
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
