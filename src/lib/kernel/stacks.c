// SPDX-License-Identifier: MIT
/* stacks_api.h: --stacks' programs turned on, and their ring's reader. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/libbpf.h>
#include "mapped_internal.h"
#include "stacks_api.h"
#include "stacks_shadow.h"
#include "stacks_sym.h"
#include "u64map.h"
#include "tracker.skel.h"

struct stacks_reader {
	struct tracker_bpf *skel;       /* the load's */
	struct ring_buffer *ring;
	struct stack_shadow *shadow;
	struct stacks_sym *sym;
	struct bpf_link *thp;           /* stk_thp's or stk_rss's, attached by hand */
	enum stacks_thp thp_how;        /* how huge pages are placed */
	int thp_err;                    /* STACKS_THP_NONE: why */
	unsigned tree;                  /* a drain's, while it runs */
	int err;                        /* the drain's first failure */
	/* Each mm address's generation: an exec or fork that names an address
	 * again (a freed mm_struct reused) starts a new one, so that the shadow
	 * and the maps of the old address space are never the new one's. */
	struct u64map gen;
	uint32_t next_gen;
	bool adopt;                     /* stacks_reader_adopt_unknown */
};

/* An mm as the shadow and the symbols key it: its address with the top 16
 * bits (all ones in a kernel address) replaced by its generation. */
#define MM_ADDR_BITS 48
static __u64 mm_key(struct stacks_reader *r, __u64 mm, bool fresh)
{
	uint32_t *slot = u64map_get(&r->gen, mm);

	if (fresh || !slot) {
		if (!slot && !u64map_put(&r->gen, mm, 0, &slot) && !slot)
			return mm;      /* ENOMEM: the address alone */
		*slot = ++r->next_gen & 0xffff;
	}
	return (mm & ((1ULL << MM_ADDR_BITS) - 1)) | ((__u64)*slot << MM_ADDR_BITS);
}

/*
 * The ring's size: STACKS_RING_BYTES, or for the tests (a ring that
 * overflows: tests/integration/test_stacks_programs.sh) $PEAKBPF_STACKS_RING
 * bytes, rounded down to a power of two between the page size and that
 * default (a ring's size must be a power-of-two number of pages); a value
 * that is not a number leaves the default (docs/stacks.md).
 */
static __u32 ring_bytes(void)
{
	const char *env = secure_getenv("PEAKBPF_STACKS_RING");
	unsigned long long want, page = (unsigned long long)sysconf(_SC_PAGESIZE), size = page;
	char *end;

	if (!env || !*env)
		return STACKS_RING_BYTES;
	errno = 0;
	want = strtoull(env, &end, 10);
	if (errno || *end || want >= STACKS_RING_BYTES)
		return STACKS_RING_BYTES;
	while (size * 2 <= want)
		size *= 2;
	return (__u32)size;
}

void stacks_prepare(struct tracker_bpf *skel, bool on, enum stacks_thp thp)
{
	struct bpf_program *progs[] = { skel->progs.stk_fault, skel->progs.stk_sys_exit, skel->progs.stk_fork,
					skel->progs.stk_exec, skel->progs.stk_mm_gone };

	for (size_t i = 0; i < sizeof(progs) / sizeof(progs[0]); i++)
		bpf_program__set_autoload(progs[i], on);
	/* Attached by the reader, which keeps its load if the attach fails;
	 * stk_rss after the tracker's handle_rss_stat, whose change it reads. */
	bpf_program__set_autoload(skel->progs.stk_thp, on && thp == STACKS_THP_FEXIT);
	bpf_program__set_autoattach(skel->progs.stk_thp, false);
	bpf_program__set_autoload(skel->progs.stk_rss, on && thp == STACKS_THP_RSS);
	bpf_program__set_autoattach(skel->progs.stk_rss, false);
	/* stk_mm_gone deletes from it: made with --stacks, one entry unless stk_rss fills it. */
	bpf_map__set_autocreate(skel->maps.stack_anon, on);
	if (thp != STACKS_THP_RSS)
		bpf_map__set_max_entries(skel->maps.stack_anon, 1);
	/* Off: not even the ring's 32 MiB are made. */
	bpf_map__set_autocreate(skel->maps.stack_events, on);
	if (on)
		bpf_map__set_max_entries(skel->maps.stack_events, ring_bytes());
	bpf_map__set_autocreate(skel->maps.stack_mms, on);
	bpf_map__set_autocreate(skel->maps.stack_vmas, on);
}

static int on_event(void *ctx, void *data, size_t size)
{
	struct stacks_reader *r = ctx;
	union { struct stack_fault f; struct stack_ev e; } buf;
	const struct stack_fault *f = &buf.f;
	int err;

	if (size < sizeof(struct stack_ev))
		return 0;
	memcpy(&buf, data, size < sizeof(buf) ? size : sizeof(buf));
	size = size < sizeof(buf) ? size : sizeof(buf);
	/* A teardown names no tree: the shadow knows its mms. */
	if (buf.e.kind != STK_MM_GONE && buf.e.tree != r->tree)
		return 0;
	if (buf.e.kind == STK_FORK)
		buf.e.a = mm_key(r, buf.e.a, false);
	buf.e.mm = mm_key(r, buf.e.mm, buf.e.kind == STK_FORK || buf.e.kind == STK_EXEC);
	err = r->adopt && buf.e.kind == STK_FAULT ? shadow_adopt(r->shadow, buf.e.mm, buf.e.tgid) : 0;
	if (!err)
		err = shadow_event(r->shadow, &buf, size);
	if (err && !r->err)
		r->err = err;
	if (f->h.kind == STK_FAULT && size >= sizeof(*f) && shadow_mm_known(r->shadow, f->h.mm, NULL))
		stacks_sym_note(r->sym, f->h.mm, f->h.tgid, f->frames,
				f->nframes < STACK_MAX_FRAMES ? f->nframes : STACK_MAX_FRAMES);
	return 0;
}

/* The huge pages' program the load has, attached: fexit's, or rss_stat's
 * where the tracker's changes are exact. */
static void attach_thp(struct stacks_reader *r, bool exact)
{
	struct bpf_program *p = bpf_program__autoload(r->skel->progs.stk_thp) ? r->skel->progs.stk_thp :
				bpf_program__autoload(r->skel->progs.stk_rss) ? r->skel->progs.stk_rss : NULL;

	r->thp_how = STACKS_THP_NONE;
	r->thp_err = !p ? -EOPNOTSUPP : p == r->skel->progs.stk_rss && !exact ? -ENODATA : 0;
	if (r->thp_err)
		return;
	r->thp = bpf_program__attach(p);
	if (!r->thp) {
		r->thp_err = -errno;
		return;
	}
	r->thp_how = p == r->skel->progs.stk_thp ? STACKS_THP_FEXIT : STACKS_THP_RSS;
}

int stacks_reader_new(struct tracker_bpf *skel, bool exact, struct stacks_reader **out)
{
	struct stacks_reader *r = calloc(1, sizeof(*r));
	int err;

	*out = NULL;
	if (!r)
		return -ENOMEM;
	r->skel = skel;
	err = shadow_new(&r->shadow);
	if (!err)
		err = stacks_sym_new(&r->sym);
	if (!err) {
		r->ring = ring_buffer__new(bpf_map__fd(skel->maps.stack_events), on_event, r, NULL);
		if (!r->ring)
			err = -errno;
	}
	/* Without it a huge page's fault places one page: the output says so. */
	if (!err)
		attach_thp(r, exact);
	if (err) {
		stacks_reader_free(r);
		return err;
	}
	*out = r;
	return 0;
}

void stacks_reader_adopt_unknown(struct stacks_reader *r)
{
	r->adopt = true;
}

void stacks_reader_free(struct stacks_reader *r)
{
	if (!r)
		return;
	bpf_link__destroy(r->thp);
	ring_buffer__free(r->ring);
	shadow_free(r->shadow);
	stacks_sym_free(r->sym);
	u64map_free(&r->gen);
	free(r);
}

static int consume(struct stacks_reader *r, unsigned tree)
{
	int n;

	r->tree = tree & (MAX_TREES - 1);
	r->err = 0;
	stacks_sym_tick(r->sym);
	n = ring_buffer__consume(r->ring);
	return n < 0 ? n : r->err;
}

int stacks_drain(struct stacks_reader *r, unsigned tree)
{
	__u64 peak_ns = LOAD(r->skel->bss->hot.trees[tree & (MAX_TREES - 1)].peak_ns);
	int err = shadow_set_cut(r->shadow, peak_ns);

	return err ? err : consume(r, tree);
}

int stacks_cut(struct stacks_reader *r, unsigned tree, __u64 peak_ns)
{
	int err = consume(r, tree);

	if (!err)
		err = shadow_set_cut(r->shadow, peak_ns);
	return err;
}

struct stack_shadow *stacks_shadow(struct stacks_reader *r)
{
	return r->shadow;
}

struct stacks_sym *stacks_symbols(struct stacks_reader *r)
{
	return r->sym;
}

void stacks_counts(const struct stacks_reader *r, __u64 *drops, __u64 *vma_busy)
{
	*drops = LOAD(r->skel->bss->stk_drops);
	*vma_busy = LOAD(r->skel->bss->stk_vma_busy);
}

enum stacks_thp stacks_thp_how(const struct stacks_reader *r, int *err)
{
	*err = r->thp_err;
	return r->thp_how;
}
