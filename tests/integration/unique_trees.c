// SPDX-License-Identifier: MIT
/*
 * Two trees of one load measure their unique memory at once (test_unique.sh,
 * t_unique_trees): what peakbpf serve's clients get, which no public path
 * gives one process (sessions at once load apart: source_bpf.c). Linked
 * against libpeakbpf.a for the internals: one tracker load, two of its
 * trees (tracker_tree__add), each with a memory cgroup of its own (made
 * here below this process's: the cgroup source names its cgroup after the
 * process, one at a time) and its unique figure (unique_open); a workload
 * in each, at the same time, each holding its own size S.
 *
 * Then the table's refusals on the same load: the ways of one group filled
 * by made-up cgroup ids, the next id of that group refused with a reason,
 * and a cgroup already measured refused for another tree; and a tree's
 * figure opened over one not destroyed, which the late destroy leaves be.
 *
 * usage: unique_trees WORKLOAD SIZE_A_MIB SIZE_B_MIB HOLD
 * Prints "tree N: unique BYTES exact 0|1 ..." a tree, "refused: REASON" and
 * "ok"; exit 0, 1 on a failure, 77 when unique memory is not measured here
 * (the reason on stdout, "not measured: ...").
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/types.h>
#include "tracker.h"
#include "unique.h"
#include "tracker_tree.h"
#include "unique_api.h"
#include "fileutil.h"
#include "mapped_internal.h"
#include "tracker.skel.h"
#include "figure.h"

#define MIB (1024 * 1024L)
#define NOT_MEASURED 77

/* The two trees: indexes of the load other than 0 (the CLI's), apart. */
static const unsigned TREES[2] = { 3, 9 };

struct tree {
	struct tracker_tree *t;
	char cgroup[4096];      /* its cgroup's directory; "": none made */
	struct unique *u;
	uint64_t cgroup_id;
	pid_t pid;
	long mib;
};

/* This process's memory cgroup: v1's memory hierarchy, else v2's. 0 or -errno. */
static int own_memory_cgroup(char *dir, size_t len)
{
	char *text = NULL, *line, *save = NULL;
	int err = read_text_file("/proc/self/cgroup", &text, NULL);

	if (err)
		return err;
	err = -ENOENT;
	for (line = strtok_r(text, "\n", &save); line && err; line = strtok_r(NULL, "\n", &save)) {
		char *ctrl = strchr(line, ':'), *path = ctrl ? strchr(ctrl + 1, ':') : NULL;

		if (!path)
			continue;
		*path++ = '\0';
		if (strstr(ctrl, ":memory") || strstr(ctrl, ",memory"))
			err = snprintf(dir, len, "/sys/fs/cgroup/memory%s", path) < (int)len ? 0 : -ENAMETOOLONG;
		else if (!strcmp(ctrl, ":") && access("/sys/fs/cgroup/cgroup.controllers", F_OK) == 0)
			snprintf(dir, len, "/sys/fs/cgroup%s", path);    /* v2: unless v1's memory follows */
	}
	free(text);
	return err == -ENOENT && dir[0] ? 0 : err;
}

/* Make tree i's memory cgroup below this process's; its id. 0, NOT_MEASURED
 * (the reason printed) or 1. */
static int make_cgroup(struct tree *tr, int i)
{
	char own[3000] = "", why[256];
	int fd, err = own_memory_cgroup(own, sizeof(own));

	if (err) {
		printf("not measured: no memory cgroup of this process found: %s\n", strerror(-err));
		return NOT_MEASURED;
	}
	snprintf(tr->cgroup, sizeof(tr->cgroup), "%s/peakbpf-trees-%d-%d", own, (int)getpid(), i);
	if (mkdir(tr->cgroup, 0755)) {
		printf("not measured: cannot make %s: %s\n", tr->cgroup, strerror(errno));
		tr->cgroup[0] = '\0';
		return NOT_MEASURED;
	}
	fd = open(tr->cgroup, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	err = fd < 0 ? -errno : unique_cgroup_id(fd, &tr->cgroup_id, why, sizeof(why));
	if (fd >= 0)
		close(fd);
	if (err) {
		printf("FAIL: %s: %s\n", tr->cgroup, strerror(-err));
		return 1;
	}
	return 0;
}

/* Open tree index of load: its cgroup, then its unique figure. 0,
 * NOT_MEASURED (the reason printed), or 1. */
static int open_tree(struct tracker_load *load, struct tree *tr, unsigned index, long page_size)
{
	char why[256] = "";
	int err = make_cgroup(tr, (int)index);

	if (err)
		return err;
	err = tracker_tree__add(load, index, DEFAULT_MAX_TRACKED, &tr->t);
	if (err) {
		printf("FAIL: tracker_tree__add %u: %s\n", index, strerror(-err));
		return 1;
	}
	err = unique_open(tr->t, tr->cgroup_id, page_size, &tr->u, why, sizeof(why));
	if (err) {
		printf("not measured: %s\n", why);
		return NOT_MEASURED;
	}
	return 0;
}

/* Run WORKLOAD -s MIB -n 3 -t HOLD fork-share in the tree's cgroup (the
 * child moves itself there first: "0", the writer). */
static int start_workload(struct tree *tr, const char *workload, const char *hold)
{
	char size[32], procs[4200];

	snprintf(size, sizeof(size), "%ldMiB", tr->mib);
	snprintf(procs, sizeof(procs), "%s/cgroup.procs", tr->cgroup);
	tr->pid = fork();
	if (tr->pid < 0)
		return -errno;
	if (tr->pid == 0) {
		int fd = open(procs, O_WRONLY | O_CLOEXEC);

		if (fd < 0 || write(fd, "0\n", 2) != 2)
			_exit(126);
		close(fd);
		execl(workload, workload, "-s", size, "-n", "3", "-t", hold, "fork-share", (char *)NULL);
		_exit(127);
	}
	return 0;
}

/* The figure of one tree: exact, S within 4 MiB + 2 % (the workload's own
 * few pages beside S). */
static int check_tree(struct tree *tr, unsigned index)
{
	struct figure f;
	long want = tr->mib * MIB;
	long got, tol = 4 * MIB + want / 50;

	unique_close_window(tr->u, &f);
	got = (long)f.peak_bytes;
	printf("tree %u: unique %ld exact %d source %s, S %ld MiB\n", index, got, f.exact, f.source, tr->mib);
	if (!f.measured || !f.exact || labs(got - want) > tol) {
		printf("FAIL: tree %u: unique %ld B, want %ld B +- %ld\n", index, got, want, tol);
		return 1;
	}
	return 0;
}

/* A group filled by made-up ids (of no cgroup: far above any kernfs inode
 * number here), the next refused; a measured cgroup refused for another
 * tree. The trees used are given back. */
static int check_refusals(struct tracker_load *load, uint64_t measured_id, long page_size)
{
	struct tracker_tree *t[UNIQUE_WAYS + 2] = { 0 };
	struct unique *u[UNIQUE_WAYS + 2] = { 0 };
	char why[256];
	uint64_t id = 1ULL << 48;
	int n = 0, fail = 0, err = 0;

	for (int i = 0; i < UNIQUE_WAYS + 2 && !fail; i++)
		fail = tracker_tree__add(load, 10 + (unsigned)i, DEFAULT_MAX_TRACKED, &t[i]) != 0;
	for (int i = 0; i <= UNIQUE_WAYS && !fail; i++, id++) {
		while (unique_group_of(id) != unique_group_of(1ULL << 48))
			id++;
		err = unique_open(t[i], id, page_size, &u[i], why, sizeof(why));
		n += !err;
		if (i == UNIQUE_WAYS) {
			fail = err != -ENOSPC;
			printf("refused (group full): %s\n", why);
		} else {
			fail = err != 0;
		}
	}
	if (!fail) {
		err = unique_open(t[UNIQUE_WAYS + 1], measured_id, page_size, &u[UNIQUE_WAYS + 1], why, sizeof(why));
		printf("refused (measured): %s\n", why);
		fail = err != -EEXIST;
	}
	if (fail)
		printf("FAIL: refusals: %d of %d ways filled, last error %d\n", n, UNIQUE_WAYS, err);
	for (int i = 0; i < UNIQUE_WAYS + 2; i++) {
		unique_destroy(u[i]);
		tracker_tree__free(t[i]);
	}
	return fail;
}

/* Whether the event path finds tree for id: its group's way, and the
 * state's own id (bpf/unique.bpf.c, tree_of_cgroup). */
static bool finds(struct tracker_load *load, __u64 id, unsigned tree)
{
	struct tracker_bpf *skel = tracker_load__skel(load);

	return unique_group_tree(&skel->bss->ugroups[unique_group_of(id)], id) == tree &&
	       LOAD(skel->bss->ustates[tree].cgroup_id) == id;
}

/* A figure opened on a tree whose last one was not destroyed takes its
 * state over; the old one's late destroy must not take it back. */
static int check_takeover(struct tracker_load *load, long page_size)
{
	struct tracker_tree *t = NULL;
	struct unique *old = NULL, *new = NULL;
	char why[256];
	int fail = tracker_tree__add(load, 15, DEFAULT_MAX_TRACKED, &t) != 0;

	fail = fail || unique_open(t, 7ULL << 44, page_size, &old, why, sizeof(why)) != 0;
	fail = fail || unique_open(t, 9ULL << 44, page_size, &new, why, sizeof(why)) != 0;
	fail = fail || finds(load, 7ULL << 44, 15) || !finds(load, 9ULL << 44, 15);
	unique_destroy(old);
	fail = fail || !finds(load, 9ULL << 44, 15);
	unique_destroy(new);
	fail = fail || finds(load, 9ULL << 44, 15);
	printf("%s: a figure opened over one not destroyed keeps its state\n", fail ? "FAIL" : "takeover");
	tracker_tree__free(t);
	return fail;
}

int main(int argc, char **argv)
{
	struct tracker_opts opts = { .with_unique = true };
	struct tracker_load *load = NULL;
	struct tree tr[2] = { 0 };
	long page_size = sysconf(_SC_PAGESIZE);
	int ret = 1, err;

	if (argc != 5) {
		fprintf(stderr, "usage: %s WORKLOAD SIZE_A_MIB SIZE_B_MIB HOLD\n", argv[0]);
		return 2;
	}
	err = tracker_load__open(&opts, &load);
	if (err) {
		printf("FAIL: tracker_load__open: %s\n", strerror(-err));
		goto cleanup;
	}
	for (int i = 0; i < 2; i++) {
		tr[i].mib = atol(argv[2 + i]);
		ret = open_tree(load, &tr[i], TREES[i], page_size);
		if (ret)
			goto cleanup;
	}
	ret = 1;
	for (int i = 0; i < 2; i++) {
		if (start_workload(&tr[i], argv[1], argv[4])) {
			printf("FAIL: fork: %s\n", strerror(errno));
			goto cleanup;
		}
	}
	for (int i = 0; i < 2; i++) {
		int status;

		if (waitpid(tr[i].pid, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status)) {
			printf("FAIL: workload %d: status %d\n", i, status);
			goto cleanup;
		}
		tr[i].pid = 0;
	}
	ret = check_tree(&tr[0], TREES[0]) | check_tree(&tr[1], TREES[1]) |
	      check_refusals(load, tr[0].cgroup_id, page_size) | check_takeover(load, page_size);
	if (!ret)
		printf("ok\n");
cleanup:
	for (int i = 0; i < 2; i++) {
		if (tr[i].pid > 0) {
			kill(tr[i].pid, SIGKILL);
			waitpid(tr[i].pid, NULL, 0);
		}
		unique_destroy(tr[i].u);
		tracker_tree__free(tr[i].t);
		if (tr[i].cgroup[0] && rmdir(tr[i].cgroup))
			printf("warning: cannot remove %s: %s\n", tr[i].cgroup, strerror(errno));
	}
	tracker_load__destroy(load);
	return ret;
}
