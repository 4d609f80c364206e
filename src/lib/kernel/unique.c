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
#include "tracker_internal.h"
#include "fileutil.h"
#include "tracker.skel.h"


const char UNIQUE_SCOPE[] =
	"unique memory: mapped anon + mapped file pages charged to the tree's own cgroup, each page once "
	"(shmem included; not pages first charged elsewhere, such as shared libraries already cached)";

static const char WHY_RACES[] = "a peak update lost its compare-and-swap race";

struct unique {
	struct tracker_bpf *skel;       /* the tracker's: its unique program */
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

int unique_open(struct tracker *t, uint64_t cgroup_id, long page_size, struct unique **out,
		char *why, size_t whylen)
{
	struct unique_state *st;
	int err = t->unique_err;

	*out = NULL;
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
	if (err)
		return err;
	*out = calloc(1, sizeof(**out));
	if (!*out) {
		snprintf(why, whylen, "out of memory");
		return -ENOMEM;
	}
	(*out)->skel = t->skel;
	(*out)->page_size = page_size;
	/* One load serves run after run: this run's cgroup, from 0 pages
	 * (it holds nothing yet); the id last, so no update of the new
	 * cgroup meets the old state. */
	st = &(*out)->skel->bss->ustate;
	__atomic_store_n(&st->cgroup_id, 0, __ATOMIC_SEQ_CST);
	__atomic_store_n(&st->pages, 0, __ATOMIC_SEQ_CST);
	__atomic_store_n(&st->peak, 0, __ATOMIC_SEQ_CST);
	__atomic_store_n(&st->anon, 0, __ATOMIC_SEQ_CST);
	__atomic_store_n(&st->peak_anon, 0, __ATOMIC_SEQ_CST);
	(*out)->races_before = LOAD(st->peak_races);
	__atomic_store_n(&st->cgroup_id, cgroup_id, __ATOMIC_SEQ_CST);
	return 0;
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
	if (!u)
		return;
	/* The load may serve another run: it watches no cgroup meanwhile. */
	__atomic_store_n(&u->skel->bss->ustate.cgroup_id, 0, __ATOMIC_SEQ_CST);
	free(u);
}
