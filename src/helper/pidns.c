// SPDX-License-Identifier: MIT
/* A client's PID namespace as peakbpf serve sees it (pidns.h). */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "fileutil.h"
#include "pidns.h"

#define NSPID_MAX 33            /* the kernel nests at most 32 namespaces */

int parse_nspid(const char *status, pid_t *pids, size_t max, size_t *n)
{
	const char *p = status;

	*n = 0;
	while (p && strncmp(p, "NSpid:", 6)) {
		p = strchr(p, '\n');
		if (p)
			p++;
	}
	if (!p)
		return -ENOENT;
	p += 6;
	for (;;) {
		char *end;
		long v;

		while (*p == ' ' || *p == '\t')
			p++;
		if (*p == '\n' || *p == '\0')
			return *n ? 0 : -EINVAL;
		errno = 0;
		v = strtol(p, &end, 10);
		if (end == p || errno || v < 1 || v > INT_MAX || (*end && *end != ' ' && *end != '\t' &&
								  *end != '\n'))
			return -EINVAL;
		if (*n == max)
			return -E2BIG;
		pids[(*n)++] = (pid_t)v;
		p = end;
	}
}

/* The NSpid fields of /proc/WHO/status ("self" or a PID). */
static int nspid_of(const char *who, size_t *n)
{
	pid_t pids[NSPID_MAX];
	char path[64], *text = NULL;
	int err;

	snprintf(path, sizeof(path), "/proc/%s/status", who);
	err = read_text_file(path, &text, NULL);
	if (!err)
		err = parse_nspid(text, pids, NSPID_MAX, n);
	free(text);
	return err;
}

static int ns_link(const char *who, char *buf, size_t len)
{
	char path[64];
	ssize_t r;

	snprintf(path, sizeof(path), "/proc/%s/ns/pid", who);
	r = readlink(path, buf, len - 1);
	if (r < 0)
		return -errno;
	buf[r] = '\0';
	return 0;
}

int pidns_depth_of(pid_t pid, unsigned *depth)
{
	char who[16], mine[64], theirs[64];
	size_t n_self = 0, n_client = 0;
	int err;

	*depth = 0;
	snprintf(who, sizeof(who), "%d", (int)pid);
	/* Both numbered from the /proc mount's namespace. */
	err = nspid_of("self", &n_self);
	if (!err)
		err = nspid_of(who, &n_client);
	if (err)
		return err;
	/* The helper's namespace is the /proc mount's (one field): every
	 * process /proc shows lies below it by its fields past the first.
	 * No ns link is read then: readlink of another user's needs ptrace
	 * access, which the unit's bounding set (no CAP_SYS_PTRACE) lacks. */
	if (n_self == 1) {
		*depth = (unsigned)(n_client - 1);
		return 0;
	}
	err = ns_link("self", mine, sizeof(mine));
	if (!err)
		err = ns_link(who, theirs, sizeof(theirs));
	if (err || !strcmp(mine, theirs))
		return err;
	/* The client's lies as many levels below the helper's as its line
	 * has more fields. */
	if (n_client <= n_self)
		return -EXDEV;
	*depth = (unsigned)(n_client - n_self);
	return 0;
}
