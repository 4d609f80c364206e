// SPDX-License-Identifier: MIT
/* The tree's unique memory (unique_api.h): load, windows, the figure. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/types.h>
#include "unique.h"              /* bpf/: the shared state */
#include "unique_api.h"
#include "unique.skel.h"

#define LOAD(x) __atomic_load_n(&(x), __ATOMIC_SEQ_CST)

const char UNIQUE_SCOPE[] =
	"unique memory: mapped anon + mapped file pages charged to the tree's own cgroup, each page once "
	"(shmem included; not pages first charged elsewhere, such as shared libraries already cached)";

static const char WHY_RACES[] = "a peak update lost its compare-and-swap race";

struct unique {
	struct unique_bpf *skel;
	long page_size;
	__s64 baseline;         /* pages when the window opened */
	__u64 races_before;
};

int unique_open(int cgroup_dir_fd, long page_size, struct unique **out, char *why, size_t whylen)
{
	struct unique *u = calloc(1, sizeof(*u));
	struct stat st;
	int err;

	*out = NULL;
	if (!u) {
		snprintf(why, whylen, "out of memory");
		return -ENOMEM;
	}
	u->page_size = page_size;
	/* A cgroup's id (kernfs_node.id) is its directory's inode number, in
	 * the v2 hierarchy and in v1's memory one (both kernfs). */
	if (fstat(cgroup_dir_fd, &st)) {
		err = -errno;
		snprintf(why, whylen, "cannot stat the tree's cgroup: %s", strerror(errno));
		goto cleanup;
	}
	u->skel = unique_bpf__open();
	if (!u->skel) {
		err = -errno;
		snprintf(why, whylen, "cannot open its BPF program: %s", strerror(errno));
		goto cleanup;
	}
	u->skel->rodata->tree_cgroup_id = (__u64)st.st_ino;
	err = unique_bpf__load(u->skel);
	if (err == -ESRCH || err == -ENOENT) {
		/* has_memcg_stat_tp: known by trying, as has_exit_mmap_tp */
		err = -EOPNOTSUPP;
		snprintf(why, whylen, "this kernel has no memcg statistic tracepoints (6.13+)");
		goto cleanup;
	}
	if (err) {
		snprintf(why, whylen, "cannot load its BPF program: %s", strerror(-err));
		goto cleanup;
	}
	err = unique_bpf__attach(u->skel);
	if (err) {
		snprintf(why, whylen, "cannot attach its BPF program: %s", strerror(-err));
		goto cleanup;
	}
cleanup:
	if (err) {
		unique_destroy(u);
		return err;
	}
	*out = u;
	return 0;
}

static void raise_to(__s64 *peak, __s64 v)
{
	__s64 seen = LOAD(*peak);

	while (v > seen && !__atomic_compare_exchange_n(peak, &seen, v, false,
							__ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST))
		;
}

static uint64_t bytes(const struct unique *u, __s64 pages)
{
	return pages > 0 ? (uint64_t)pages * (uint64_t)u->page_size : 0;
}

/* The cut, as the tracker makes it: the peak exchanged with the sum. */
void unique_close_window(struct unique *u, struct figure *out)
{
	struct unique_state *st = &u->skel->bss->ustate;
	__u64 races = LOAD(st->peak_races);
	__s64 now = LOAD(st->pages), peak;

	peak = __atomic_exchange_n(&st->peak, now, __ATOMIC_SEQ_CST);
	raise_to(&st->peak, LOAD(st->pages));
	memset(out, 0, sizeof(*out));
	out->source = "bpf-memcg";
	out->scope = UNIQUE_SCOPE;
	out->measured = true;
	out->peak_bytes = bytes(u, peak);
	out->baseline_known = true;
	out->baseline_bytes = bytes(u, u->baseline);
	/* Runs the kernel skipped (recursion) are never of the two items:
	 * bpf/unique.bpf.c says why. */
	out->exact = races == u->races_before;
	if (!out->exact)
		out->inexact_reason = WHY_RACES;
	u->baseline = now;
	u->races_before = races;
}

void unique_destroy(struct unique *u)
{
	if (!u)
		return;
	unique_bpf__destroy(u->skel);
	free(u);
}
