// SPDX-License-Identifier: MIT
/* Every cgroup's summed RSS (cgsum_api.h): the hierarchy, the slots, the cut. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "cgsum_api.h"
#include "cgsum_holders.h"
#include "task_iter.h"
#include "mapped_internal.h"
#include "tracker.skel.h"

/* kernfs's file handle (fs/kernfs/mount.c, kernfs_encode_fh): its node id. */
#define FILEID_KERNFS 0xfe

/* v1's memory hierarchy number from /proc/self/cgroup ("N:memory:/..."). */
static int v1_memory_id(__u32 *id)
{
	FILE *f = fopen("/proc/self/cgroup", "re");
	char line[512];
	int err = -ENOENT;

	if (!f)
		return -errno;
	while (err && fgets(line, sizeof(line), f)) {
		char *end = NULL, *ctl;
		unsigned long n = strtoul(line, &end, 10);

		if (end == line || *end != ':')
			continue;
		ctl = end + 1;
		if ((!strncmp(ctl, "memory:", 7) || strstr(ctl, ",memory:") || !strncmp(ctl, "memory,", 7)) &&
		    n > 0 && n < 0xffffffffUL) {
			*id = (__u32)n;
			err = 0;
		}
	}
	fclose(f);
	return err;
}

int cgsum_find_hier(const char *root, struct cgsum_hier *out, char *why, size_t len)
{
	const char *base = root && *root ? root : "/sys/fs/cgroup";
	struct stat st;
	char p[160];

	memset(out, 0, sizeof(*out));
	snprintf(p, sizeof(p), "%s/memory/memory.limit_in_bytes", base);
	if (stat(p, &st) == 0) {
		out->v1 = true;
		snprintf(out->mount, sizeof(out->mount), "%s/memory", base);
		if (v1_memory_id(&out->hierarchy_id) == 0)
			return 0;
		snprintf(why, len, "cgroup v1's memory hierarchy is mounted at %s but /proc/self/cgroup "
			 "does not number it", out->mount);
		return -ENOENT;
	}
	snprintf(p, sizeof(p), "%s/cgroup.controllers", base);
	if (stat(p, &st) == 0) {
		snprintf(out->mount, sizeof(out->mount), "%s", base);
		return 0;
	}
	snprintf(why, len, "no memory cgroup hierarchy at %s (neither cgroup v1's memory/ nor cgroup v2)",
		 base);
	return -ENOENT;
}

struct cgsum {
	struct tracker_bpf *skel;       /* the load's */
	char mount[128];
	struct bpf_link *links[5];
	struct cgsum_closed closed[CG_SLOTS];   /* the last cut's windows, by slot */
	__u64 departed_at_cut;                  /* cg_departed_seq at the holders' last read */
	__u64 departed_lost;                    /* departures the ring had lost at a read */
};

static const char *const PROGS[] = {
	"cgsum_rss", "cgsum_mkdir", "cgsum_rmdir", "cgsum_move", "cgsum_enter_existing",
};
#define N_PROGS (sizeof(PROGS) / sizeof(PROGS[0]))

/* The teardown the kernel has: the exit_mmap tracepoint (6.1+), else
 * fentry on exit_mmap; load_variants chose one by has_exit_mmap_tp. */
static struct bpf_program *teardown_prog(struct tracker_bpf *skel)
{
	return bpf_program__autoload(skel->progs.cgsum_teardown__exit_mmap_tp) ? skel->progs.cgsum_teardown__exit_mmap_tp
									       : skel->progs.cgsum_teardown;
}

void cgsum_prepare(struct tracker_bpf *skel, const struct cgsum_hier *h)
{
	for (size_t i = 0; i < N_PROGS; i++) {
		struct bpf_program *p = bpf_object__find_program_by_name(skel->obj, PROGS[i]);

		bpf_program__set_autoload(p, h != NULL);
		bpf_program__set_autoattach(p, false);
	}
	/* of the teardown pair, load_variants' choice, and only for the agent */
	bpf_program__set_autoattach(skel->progs.cgsum_teardown, false);
	bpf_program__set_autoattach(skel->progs.cgsum_teardown__exit_mmap_tp, false);
	if (!h) {
		bpf_program__set_autoload(skel->progs.cgsum_teardown, false);
		bpf_program__set_autoload(skel->progs.cgsum_teardown__exit_mmap_tp, false);
	}
	if (!h)
		return;
	skel->rodata->cg_v1 = h->v1;
	skel->rodata->cg_hier_id = h->hierarchy_id;
	skel->rodata->cg_departed_mask = CG_DEPARTED - 1;
	bpf_map__set_max_entries(skel->maps.cg_departed, CG_DEPARTED);
	bpf_map__set_max_entries(skel->maps.cg_mms, bpf_map__max_entries(skel->maps.mm_states));
}

static int attach(struct cgsum *t, struct bpf_program *p, size_t i)
{
	t->links[i] = bpf_program__attach(p);
	return t->links[i] ? 0 : -errno;
}

/* A slot for cgroup id at level (the start's walk); -EEXIST: it has one. */
static int give_slot(struct cgsum *t, __u64 id, __u32 level, __u32 *next)
{
	struct cg_slot *s;
	__u32 i = *next;
	int err;

	if (i >= CG_SLOTS)
		return -ENOSPC;
	s = &t->skel->bss->cg_slots[i];
	s->level = level;
	STORE(s->id, id);
	err = bpf_map__update_elem(t->skel->maps.cg_index, &id, sizeof(id), &i, sizeof(i), BPF_NOEXIST);
	if (err) {
		STORE(s->id, 0);
		return err;
	}
	(*next)++;
	return 0;
}

/* Every directory below dir (level: dir's depth), depth-first; bounded by
 * the hierarchy's own depth limit (the kernel's, CG_MAX of a few hundred). */
static void walk(struct cgsum *t, int dir_fd, __u32 level, __u32 *next, size_t *walked)
{
	DIR *d = fdopendir(dir_fd);
	struct dirent *e;

	if (!d) {
		close(dir_fd);
		return;
	}
	while ((e = readdir(d))) {
		struct stat st;
		int fd;

		if (e->d_type != DT_DIR || !strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		fd = openat(dirfd(d), e->d_name, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
		if (fd < 0)
			continue;
		if (fstat(fd, &st) == 0 && give_slot(t, (__u64)st.st_ino, level + 1, next) == 0)
			(*walked)++;
		if (level + 1 < 64)
			walk(t, fd, level + 1, next, walked);
		else
			close(fd);
	}
	closedir(d);
}

int cgsum_start(struct tracker_bpf *s, const struct cgsum_hier *h, struct cgsum **out, size_t *walked,
		char *why, size_t len)
{
	struct cgsum *t = calloc(1, sizeof(*t));
	struct bpf_program *order[] = { s->progs.cgsum_mkdir, s->progs.cgsum_rmdir, s->progs.cgsum_rss,
					teardown_prog(s), s->progs.cgsum_move };
	__u32 next = 0;
	int fd, err = 0;

	*walked = 0;
	*out = NULL;
	if (!t) {
		snprintf(why, len, "out of memory");
		return -ENOMEM;
	}
	t->skel = s;
	snprintf(t->mount, sizeof(t->mount), "%s", h->mount);
	*out = t;               /* cgsum_stop frees it, on every path */
	/* The free ring starts full: every slot the walk leaves. */
	err = attach(t, order[0], 0);
	if (!err)
		err = attach(t, order[1], 1);
	if (err) {
		snprintf(why, len, "cannot attach to the cgroup_mkdir/rmdir tracepoints: %s", strerror(-err));
		return err;
	}
	STORE(s->bss->cg_free.head, 0);
	STORE(s->bss->cg_free.tail, 0);
	fd = open(t->mount, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0) {
		err = -errno;
		snprintf(why, len, "cannot open %s: %s", t->mount, strerror(errno));
		return err;
	}
	/* Slots 0..next-1 go to the walk; a mkdir racing with it takes one
	 * only once the ring has some, after the walk. */
	walk(t, fd, 0, &next, walked);
	for (__u32 i = next; i < CG_SLOTS; i++)
		s->bss->cg_free.ring[i - next] = i;
	STORE(s->bss->cg_free.tail, (__u64)(CG_SLOTS - next));
	for (size_t i = 2; i < 5 && !err; i++)
		err = attach(t, order[i], i);
	if (err)
		snprintf(why, len, "cannot attach the per-cgroup sums: %s", strerror(-err));
	return err;
}

int cgsum_enter_existing(struct cgsum *t)
{
	struct bpf_link *l = bpf_program__attach_iter(t->skel->progs.cgsum_enter_existing, NULL);
	int err;

	if (!l)
		return -errno;
	err = task_iter_run(l);
	bpf_link__destroy(l);
	return err;
}

int cgsum_cut(struct cgsum *t, void (*fn)(void *ctx, const struct cgsum_row *r), void *ctx)
{
	int n = 0;

	for (__u32 i = 0; i < CG_SLOTS; i++) {
		struct cg_slot *s = &t->skel->bss->cg_slots[i];
		struct cgsum_row r = { .slot = i };

		r.id = LOAD(s->id);
		t->closed[i].id = 0;
		if (!r.id)
			continue;
		r.level = s->level;
		/* The window advances first: every mm's mark of the closing
		 * window stays as it was while the holders are read. */
		r.window = __atomic_fetch_add(&s->window, 1, __ATOMIC_SEQ_CST);
		r.pages = LOAD(s->pages);
		/* The window's peak, and the next one's start: the sum now. */
		r.window_peak = __atomic_exchange_n(&s->peak, r.pages, __ATOMIC_SEQ_CST);
		if (r.window_peak < r.pages)
			r.window_peak = r.pages;
		r.peak_ns = LOAD(s->peak_ns);
		r.mms = LOAD(s->mms);
		r.peak_races = LOAD(s->peak_races);
		r.mark_races = LOAD(s->mark_races);
		t->closed[i].window = r.window;
		t->closed[i].peak = r.window_peak;
		t->closed[i].id = r.id;
		r.gone = LOAD(s->gone) != 0;
		fn(ctx, &r);
		n++;
	}
	return n;
}

int cgsum_holders(struct cgsum *t, void (*fn)(void *ctx, const struct cgsum_holder *h), void *ctx)
{
	__u64 now = LOAD(t->skel->bss->cg_departed_seq);
	int err = cgsum_holders_read(t->skel, t->closed, t->departed_at_cut, fn, ctx);

	/* more since the previous read than the ring holds: the oldest lost */
	if (now - t->departed_at_cut > CG_DEPARTED)
		t->departed_lost += now - t->departed_at_cut - CG_DEPARTED;
	t->departed_at_cut = now;
	return err;
}

/* Whether the cgroup id still opens in the hierarchy (no walk: by handle). */
static bool cgroup_exists(int mount_fd, __u64 id)
{
	struct {
		struct file_handle fh;
		__u64 id;
	} h = { .fh = { .handle_bytes = sizeof(__u64), .handle_type = FILEID_KERNFS }, .id = id };
	int fd = open_by_handle_at(mount_fd, &h.fh, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (fd < 0)
		return errno != ESTALE && errno != ENOENT;
	close(fd);
	return true;
}

int cgsum_reclaim(struct cgsum *t, void (*fn)(void *ctx, __u64 id), void *ctx)
{
	struct tracker_bpf *s = t->skel;
	int mount_fd = open(t->mount, O_RDONLY | O_DIRECTORY | O_CLOEXEC), n = 0;

	for (__u32 i = 0; i < CG_SLOTS; i++) {
		struct cg_slot *sl = &s->bss->cg_slots[i];
		__u64 id = LOAD(sl->id), tail;

		if (!id || LOAD(sl->mms) != 0)
			continue;
		if (!LOAD(sl->gone) && (mount_fd < 0 || cgroup_exists(mount_fd, id)))
			continue;
		bpf_map__delete_elem(s->maps.cg_index, &id, sizeof(id), 0);
		STORE(sl->id, 0);
		STORE(sl->pages, 0);
		STORE(sl->peak, 0);
		STORE(sl->gone, 0);
		tail = LOAD(s->bss->cg_free.tail);
		s->bss->cg_free.ring[tail & (CG_SLOTS - 1)] = i;
		STORE(s->bss->cg_free.tail, tail + 1);
		if (fn)
			fn(ctx, id);
		n++;
	}
	if (mount_fd >= 0)
		close(mount_fd);
	return n;
}

void cgsum_counters(const struct cgsum *t, struct cg_counters *out, __u64 *free_slots)
{
	const struct tracker_bpf *s = t->skel;

	out->no_slot = LOAD(s->bss->cg_counters.no_slot);
	out->chain_missing = LOAD(s->bss->cg_counters.chain_missing);
	out->mm_full = LOAD(s->bss->cg_counters.mm_full);
	out->moves = LOAD(s->bss->cg_counters.moves);
	*free_slots = LOAD(s->bss->cg_free.tail) - LOAD(s->bss->cg_free.head);
}

__u64 cgsum_departed_lost(const struct cgsum *t)
{
	return t->departed_lost;
}

void cgsum_stop(struct cgsum *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < 5; i++)
		bpf_link__destroy(t->links[i]);
	free(t);
}
