// SPDX-License-Identifier: MIT
/* The tree's unique memory (unique_api.h): set up in the tracker's object, windows, the figure. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/types.h>
#include "unique.h"              /* bpf/: the shared state */
#include "unique_api.h"
#include "unique_table.h"
#include "mapped_internal.h"
#include "fileutil.h"
#include "tracker.skel.h"


const char UNIQUE_SCOPE[] =
	"unique memory: mapped anon + mapped file pages charged to the tree's own cgroup, each page once "
	"(shmem included; not pages first charged elsewhere, such as shared libraries already cached)";

static const char WHY_RACES[] = "a peak update lost its compare-and-swap race";

struct unique {
	struct tracker_bpf *skel;       /* the tracker's: its unique program */
	unsigned tree;                  /* the tracker's tree: its state, ustates[tree] */
	__u64 cgroup_id;
	long page_size;
	__s64 baseline;         /* pages when the window opened */
	__u64 races_before;
};

int unique_cgroup_id(int cgroup_dir_fd, uint64_t *id, char *why, size_t whylen)
{
	struct stat st;

	/* A cgroup's id (kernfs_node.id) is its directory's inode number, in
	 * the v2 hierarchy and in v1's memory one (both kernfs). */
	if (fstat(cgroup_dir_fd, &st)) {
		int err = -errno;

		snprintf(why, whylen, "cannot stat the tree's cgroup: %s", strerror(-err));
		return err;
	}
	*id = (uint64_t)st.st_ino;
	return 0;
}

/* Whether the kernel's BTF names sym (a function, or a tracepoint's
 * btf_trace_ type): a scan of its string section's bytes for "\0sym\0",
 * no parse. -errno when it cannot be read. */
static int kernel_btf_names(const char *btf, size_t len, const char *sym)
{
	char key[64];
	int n = snprintf(key, sizeof(key), "%c%s%c", '\0', sym, '\0');

	return btf && n > 0 && (size_t)n < sizeof(key) && memmem(btf, len, key, (size_t)n);
}

/* The hooks for the tree cgroup's mapped pages, best first (bpf/unique.bpf.c). */
struct hook {
	const char *btf_name;
	const char *prog;
};

static const struct hook HOOKS[] = {
	{ "btf_trace_mod_memcg_lruvec_state", "unique_stat" },  /* 6.13+ */
	{ "__lruvec_stat_mod_folio", "unique_folio" },          /* 6.12 */
	{ "__mod_lruvec_page_state", "unique_page" },           /* 6.1 */
	{ "__mod_lruvec_state", "unique_lruvec" },              /* 5.10 */
};

int unique_prepare(struct tracker_bpf *skel, bool on, bool fetch_atomics)
{
	const char *force = secure_getenv("PEAKBPF_UNIQUE_HOOK");
	const struct hook *pick = NULL;
	char *btf = NULL;
	size_t len = 0;

	for (size_t i = 0; i < sizeof(HOOKS) / sizeof(HOOKS[0]); i++)
		bpf_program__set_autoload(bpf_object__find_program_by_name(skel->obj, HOOKS[i].prog), false);
	if (!on)
		return 0;
	if (!fetch_atomics)
		return -ENOSYS;         /* the peak's compare-and-swap: 5.12+ */
	/* Where tracefs shows the tracepoint, no scan of the BTF (~9 ms). */
	if (!force && access("/sys/kernel/tracing/events/memcg/mod_memcg_lruvec_state", F_OK) == 0) {
		bpf_program__set_autoload(skel->progs.unique_stat, true);
		return 0;
	}
	if (read_text_file("/sys/kernel/btf/vmlinux", &btf, &len))
		return -EOPNOTSUPP;
	/* $PEAKBPF_UNIQUE_HOOK=unique_folio, ...: the tests' way to check an
	 * older kernel's hook where a better one exists (an unknown or absent
	 * one: none). */
	for (size_t i = 0; i < sizeof(HOOKS) / sizeof(HOOKS[0]) && !pick; i++)
		if (kernel_btf_names(btf, len, HOOKS[i].btf_name) &&
		    (!force || !strcmp(force, HOOKS[i].prog)))
			pick = &HOOKS[i];
	free(btf);
	if (!pick)
		return -EOPNOTSUPP;
	bpf_program__set_autoload(bpf_object__find_program_by_name(skel->obj, pick->prog), true);
	return 0;
}

bool unique_owns_prog(const struct tracker_bpf *skel, const struct bpf_program *prog)
{
	const char *name = bpf_program__name(prog);

	(void)skel;
	for (size_t i = 0; i < sizeof(HOOKS) / sizeof(HOOKS[0]); i++)
		if (!strcmp(name, HOOKS[i].prog))
			return true;
	return false;
}

/* Why unique_open cannot measure: unique_err of the load (unique_prepare). */
static int load_refusal(int err, char *why, size_t whylen)
{
	if (err == -EOPNOTSUPP)
		snprintf(why, whylen, "this kernel has neither the memcg statistic tracepoint (6.13+) "
			 "nor a memcg statistic function to attach to (5.10 to 6.12)");
	else if (err == -ENOSYS)
		snprintf(why, whylen, "this kernel's BPF has no atomics with a result (5.12+): "
			 "the peak cannot be kept exactly");
	else if (err == -ENODATA)
		snprintf(why, whylen, "the BPF programs were loaded without it");
	else if (err)
		snprintf(why, whylen, "cannot load its BPF program: %s", strerror(-err));
	return err;
}

/* Point tree's state at cgroup_id, from 0 pages (the cgroup holds nothing
 * yet). The order keeps each event's count right while the load's other
 * trees go on: the state's id to 0 and its way freed first (so no update
 * of the old cgroup meets the new state), the counters zeroed, the new
 * way entered, the state's id last (the event path checks it). */
static int point_state(struct tracker_bpf *skel, unsigned tree, __u64 cgroup_id, __u64 *races)
{
	struct unique_state *st = &skel->bss->ustates[tree];
	__u64 old = __atomic_exchange_n(&st->cgroup_id, 0, __ATOMIC_SEQ_CST);
	int err;

	/* A state left pointed by a tree not destroyed: its way is this tree's. */
	if (old)
		unique_table_remove(skel->bss->ugroups, old, tree);
	STORE(st->pages, 0);
	STORE(st->peak, 0);
	STORE(st->anon, 0);
	STORE(st->peak_anon, 0);
	*races = LOAD(st->peak_races);
	err = unique_table_insert(skel->bss->ugroups, cgroup_id, tree);
	if (!err)
		STORE(st->cgroup_id, cgroup_id);
	return err;
}

int unique_open(struct tracker *t, uint64_t cgroup_id, long page_size, struct unique **out,
		char *why, size_t whylen)
{
	struct unique *u = NULL;
	int err = load_refusal(t->unique_err, why, whylen);

	*out = NULL;
	if (err)
		goto cleanup;
	u = calloc(1, sizeof(*u));
	if (!u) {
		snprintf(why, whylen, "out of memory");
		err = -ENOMEM;
		goto cleanup;
	}
	u->skel = t->skel;
	u->tree = t->tree & (MAX_TREES - 1);
	u->cgroup_id = cgroup_id;
	u->page_size = page_size;
	/* One load serves run after run, and tree after tree at once. */
	err = point_state(u->skel, u->tree, cgroup_id, &u->races_before);
	if (err == -ENOSPC)
		snprintf(why, whylen, "the load's table has no free way for this cgroup: %d other trees' "
			 "cgroups share its group (bpf/unique.h); try again later", UNIQUE_WAYS);
	else if (err == -EEXIST)
		snprintf(why, whylen, "another tree of this load measures this cgroup");
	else if (err)
		snprintf(why, whylen, "cannot enter the cgroup: %s", strerror(-err));
	if (err)
		goto cleanup;
	*out = u;
	u = NULL;
cleanup:
	free(u);
	return err;
}

static uint64_t bytes(const struct unique *u, __s64 pages)
{
	return pages > 0 ? (uint64_t)pages * (uint64_t)u->page_size : 0;
}

/* The cut, as the tracker makes it: the peak exchanged with the sum. */
void unique_close_window(struct unique *u, struct figure *out)
{
	struct unique_state *st = &u->skel->bss->ustates[u->tree];
	__u64 races = LOAD(st->peak_races);
	__s64 now = LOAD(st->pages), peak, peak_anon;

	peak = __atomic_exchange_n(&st->peak, now, __ATOMIC_SEQ_CST);
	peak_anon = __atomic_exchange_n(&st->peak_anon, LOAD(st->anon), __ATOMIC_SEQ_CST);
	raise_to(&st->peak, LOAD(st->pages));
	memset(out, 0, sizeof(*out));
	out->source = "bpf-memcg";
	out->scope = UNIQUE_SCOPE;
	out->measured = true;
	out->peak_bytes = bytes(u, peak);
	out->baseline_known = true;
	out->baseline_bytes = bytes(u, u->baseline);
	/* What the peak held, anon and file (a snapshot beside the peak): the
	 * report splits summed RSS's excess by it. */
	out->anon_bytes = bytes(u, peak_anon < peak ? peak_anon : peak);
	out->file_bytes = out->peak_bytes - out->anon_bytes;
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
	__u64 mine;

	if (!u)
		return;
	/* The load may serve another run, and serves other trees: this tree's
	 * state watches no cgroup meanwhile (its id first, then its way).
	 * Unless a later unique_open took the state over: it freed this
	 * way, and the state and its way are the new figure's. */
	mine = u->cgroup_id;
	if (__atomic_compare_exchange_n(&u->skel->bss->ustates[u->tree].cgroup_id, &mine, 0, false,
					__ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST))
		unique_table_remove(u->skel->bss->ugroups, u->cgroup_id, u->tree);
	free(u);
}
