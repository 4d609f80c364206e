// SPDX-License-Identifier: MIT
/* stacks_shadow.h: the ring's events replayed into a page shadow per mm. */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include "stacks_shadow.h"
#include "u64map.h"

#define PAGE_OF(a) ((__u64)(a) >> SHADOW_PAGE_SHIFT)
#define MADV_FREE 8             /* include/uapi/asm-generic/mman-common.h */
#define MADV_DONTNEED 4
#define MADV_DONTNEED_LOCKED 24

struct shadow_mm {
	__u64 mm;
	__u32 tgid;
	bool brk_known;
	__u64 brk;
	struct u64map pages;    /* page number -> stack id + 1 */
};

/* A thread's last fault, so that its huge page's event (STK_THP) finds it:
 * kept at the event's receipt (its time) and at its application (its
 * stack), in tables indexed by the thread id; a thread whose slot another
 * took meanwhile has its huge page counted unpaired, not placed. */
#define THREAD_SLOTS 256
struct fault_seen {
	__u64 mm, page, ns, ip;
	__u32 tid, stack;
};

struct stack_shadow {
	struct shadow_mm *mms;
	size_t n_mms, cap_mms;
	struct u64map mm_index;         /* mm -> index + 1 in mms */
	struct shadow_stack *stacks;
	size_t n_stacks, cap_stacks;
	struct u64map stack_index;      /* hash of the frames -> id + 1 */
	__u8 *pending;                  /* events after the cut, each: size_t size, then it */
	size_t pending_len, pending_cap, pending_n;
	__u64 cut_ns;
	struct shadow_counts counts;
	struct fault_seen received[THREAD_SLOTS], applied[THREAD_SLOTS];
};

int shadow_new(struct stack_shadow **out)
{
	*out = calloc(1, sizeof(**out));
	return *out ? 0 : -ENOMEM;
}

static void mm_drop(struct stack_shadow *sh, __u64 mm)
{
	uint32_t *idx = u64map_get(&sh->mm_index, mm);
	size_t i, last;

	if (!idx)
		return;
	i = *idx - 1;
	u64map_free(&sh->mms[i].pages);
	u64map_del(&sh->mm_index, mm);
	last = --sh->n_mms;
	if (i != last) {
		sh->mms[i] = sh->mms[last];
		*u64map_get(&sh->mm_index, sh->mms[i].mm) = (uint32_t)i + 1;
	}
}

void shadow_free(struct stack_shadow *sh)
{
	if (!sh)
		return;
	for (size_t i = 0; i < sh->n_mms; i++)
		u64map_free(&sh->mms[i].pages);
	free(sh->mms);
	u64map_free(&sh->mm_index);
	free(sh->stacks);
	u64map_free(&sh->stack_index);
	free(sh->pending);
	free(sh);
}

static struct shadow_mm *mm_get(const struct stack_shadow *sh, __u64 mm)
{
	uint32_t *idx = u64map_get(&sh->mm_index, mm);

	return idx ? &sh->mms[*idx - 1] : NULL;
}

/* A new, empty shadow for mm (an exec's image, a fork's child). */
static struct shadow_mm *mm_new(struct stack_shadow *sh, __u64 mm, __u32 tgid)
{
	uint32_t *slot;

	mm_drop(sh, mm);        /* a reused address: the old one's teardown was missed */
	if (sh->n_mms == sh->cap_mms) {
		size_t cap = sh->cap_mms ? 2 * sh->cap_mms : 16;
		struct shadow_mm *g = realloc(sh->mms, cap * sizeof(*g));

		if (!g)
			return NULL;
		sh->mms = g;
		sh->cap_mms = cap;
	}
	if (!u64map_put(&sh->mm_index, mm, (uint32_t)sh->n_mms + 1, &slot))
		return NULL;
	sh->mms[sh->n_mms] = (struct shadow_mm){ .mm = mm, .tgid = tgid };
	return &sh->mms[sh->n_mms++];
}

static __u64 frames_hash(const struct stack_fault *f, __u32 n)
{
	__u64 h = 1469598103934665603ULL ^ n;

	for (__u32 i = 0; i < n; i++)
		h = (h ^ f->frames[i]) * 1099511628211ULL;
	return (h ^ f->sp_word) | 1;    /* never 0: u64map's empty key */
}

/* The stack's id, interned; ~0u on ENOMEM. */
static __u32 stack_intern(struct stack_shadow *sh, const struct stack_fault *f)
{
	__u32 n = f->nframes > STACK_MAX_FRAMES ? STACK_MAX_FRAMES : f->nframes;
	__u64 h = frames_hash(f, n);
	struct shadow_stack *s;
	uint32_t *slot;

	/* A different stack with the same hash probes on to the next key. */
	for (;; h = (h + 2) | 1) {
		slot = u64map_get(&sh->stack_index, h);
		if (!slot)
			break;
		s = &sh->stacks[*slot - 1];
		if (s->nframes == n && s->sp_word == f->sp_word &&
		    !memcmp(s->frames, f->frames, n * sizeof(__u64)))
			return *slot - 1;
	}
	if (sh->n_stacks == sh->cap_stacks) {
		size_t cap = sh->cap_stacks ? 2 * sh->cap_stacks : 64;
		struct shadow_stack *g = realloc(sh->stacks, cap * sizeof(*g));

		if (!g)
			return ~0u;
		sh->stacks = g;
		sh->cap_stacks = cap;
	}
	if (!u64map_put(&sh->stack_index, h, (uint32_t)sh->n_stacks + 1, &slot))
		return ~0u;
	s = &sh->stacks[sh->n_stacks];
	memset(s, 0, sizeof(*s));
	memcpy(s->frames, f->frames, n * sizeof(__u64));
	s->nframes = n;
	s->sp_word = f->sp_word;
	s->mm = f->h.mm;
	return (__u32)sh->n_stacks++;
}

static int apply_fault(struct stack_shadow *sh, const struct stack_fault *f)
{
	struct shadow_mm *m = mm_get(sh, f->h.mm);
	struct shadow_counts *c = &sh->counts;
	uint32_t *slot;
	__u32 id;

	if (!m) {
		c->untracked_mm++;
		return 0;
	}
	c->faults++;
	if (!(f->vma & STK_VMA_FOUND)) {
		c->vma_unknown++;
		return 0;
	}
	if (f->vma & STK_VMA_SHARED) {
		c->shared_faults++;
		return 0;
	}
	if (!(f->error_code & 2) || !(f->vma & STK_VMA_WRITE)) {
		/* A read: the zero page (not resident), a file's pages with
		 * their fault-around, or a swap-in; a write to a read-only
		 * VMA is a SIGSEGV. */
		if (f->vma & STK_VMA_FILE)
			c->file_faults++;
		else
			c->read_faults++;
		return 0;
	}
	if (f->vma & STK_VMA_HUGE)
		c->huge_faults++;
	slot = u64map_get(&m->pages, PAGE_OF(f->addr));
	if (slot) {
		id = *slot - 1; /* resident already: the first fault brought it in */
	} else {
		id = stack_intern(sh, f);
		if (id == ~0u || (!u64map_put(&m->pages, PAGE_OF(f->addr), id + 1, &slot) && !slot))
			return -ENOMEM;
		c->exact_faults++;
	}
	sh->applied[f->h.tid % THREAD_SLOTS] = (struct fault_seen){ .mm = f->h.mm, .page = PAGE_OF(f->addr),
								    .tid = f->h.tid, .stack = id };
	return 0;
}

/* Whether seen is thread tid's fault in mm at the huge page's address. */
static bool is_fault_of(const struct fault_seen *seen, const struct stack_ev *e)
{
	return seen->tid == e->tid && seen->mm == e->mm && seen->page == PAGE_OF(e->c) && e->c >= e->a &&
	       e->c - e->a < e->b;
}

/* A huge page mapped by its thread's fault just applied: the pages of
 * [a, a + b) not yet placed get that fault's stack. */
static int apply_thp(struct stack_shadow *sh, const struct stack_ev *e)
{
	const struct fault_seen *seen = &sh->applied[e->tid % THREAD_SLOTS];
	struct shadow_mm *m = mm_get(sh, e->mm);
	__u64 first = PAGE_OF(e->a), end = PAGE_OF(e->a + e->b);
	uint32_t *slot;

	if (!m) {
		sh->counts.untracked_mm++;
		return 0;
	}
	sh->counts.thp_events++;
	if (!is_fault_of(seen, e)) {
		sh->counts.thp_unpaired++;
		return 0;
	}
	for (__u64 p = first; p < end; p++) {
		if (u64map_put(&m->pages, p, seen->stack + 1, &slot))
			sh->counts.thp_pages++;
		else if (!slot)
			return -ENOMEM;
	}
	return 0;
}

/* Pages [start, start + len) leave mm's shadow: by the range or by the
 * table, whichever is shorter. */
static void remove_range(struct shadow_mm *m, __u64 start, __u64 len)
{
	__u64 first = PAGE_OF(start), end = PAGE_OF(start + len + (1ULL << SHADOW_PAGE_SHIFT) - 1);

	if (end <= first)
		return;
	if (end - first <= m->pages.cap) {
		for (__u64 p = first; p < end; p++)
			u64map_del(&m->pages, p);
		return;
	}
	for (size_t i = 0; i < m->pages.cap;) {
		__u64 k = m->pages.keys[i];

		if (k && k >= first && k < end)
			u64map_del(&m->pages, k);       /* a key shifted into i is looked at next */
		else
			i++;
	}
}

/* mremap: the pages of [old, old + keep) move to new; those past keep go. */
static int move_range(struct shadow_mm *m, __u64 old, __u64 old_len, __u64 new_len, __u64 to)
{
	__u64 keep = old_len < new_len ? old_len : new_len, first = PAGE_OF(old);
	__u64 n = PAGE_OF(keep + (1ULL << SHADOW_PAGE_SHIFT) - 1);
	__u64 *moved = NULL;
	__u32 *ids = NULL;
	size_t k = 0;
	uint32_t *slot;
	int err = 0;

	if (to != old && n) {
		moved = malloc(m->pages.n * sizeof(*moved) + 1);
		ids = malloc(m->pages.n * sizeof(*ids) + 1);
		if (!moved || !ids) {
			err = -ENOMEM;
			goto cleanup;
		}
		for (size_t i = 0; i < m->pages.cap; i++) {
			if (u64map_used(&m->pages, i) && m->pages.keys[i] >= first && m->pages.keys[i] < first + n) {
				moved[k] = m->pages.keys[i] - first;
				ids[k++] = m->pages.vals[i];
			}
		}
		remove_range(m, old, keep);
		for (size_t i = 0; i < k; i++)
			if (!u64map_put(&m->pages, PAGE_OF(to) + moved[i], ids[i], &slot) && !slot)
				err = -ENOMEM;
	}
	if (old_len > new_len)
		remove_range(m, old + new_len, old_len - new_len);
cleanup:
	free(moved);
	free(ids);
	return err;
}

static int fork_copy(struct stack_shadow *sh, const struct stack_ev *e)
{
	struct shadow_mm *child = mm_new(sh, e->mm, e->tgid), *parent;
	uint32_t *slot;

	if (!child)
		return -ENOMEM;
	parent = mm_get(sh, e->a);      /* after mm_new: the array may have moved */
	if (!parent)
		return 0;
	child = mm_get(sh, e->mm);
	child->brk = parent->brk;
	child->brk_known = parent->brk_known;
	/* Anon pages copied at fork keep the parent's stack. */
	for (size_t i = 0; i < parent->pages.cap; i++)
		if (u64map_used(&parent->pages, i) &&
		    !u64map_put(&child->pages, parent->pages.keys[i], parent->pages.vals[i], &slot) && !slot)
			return -ENOMEM;
	return 0;
}

static bool syscall_failed(__s64 ret)
{
	return ret < 0 && ret >= -4095;
}

static int apply_range_event(struct stack_shadow *sh, const struct stack_ev *e)
{
	struct shadow_mm *m = mm_get(sh, e->mm);

	if (!m)
		return 0;
	sh->counts.removals++;
	switch (e->kind) {
	case STK_MUNMAP:
		if (!e->ret)
			remove_range(m, e->a, e->b);
		return 0;
	case STK_MADVISE:
		/* ENOMEM: a hole in the range; the mapped parts were done. */
		if ((e->c == MADV_DONTNEED || e->c == MADV_FREE || e->c == MADV_DONTNEED_LOCKED) &&
		    (!e->ret || e->ret == -ENOMEM))
			remove_range(m, e->a, e->b);
		return 0;
	case STK_BRK:
		if (m->brk_known && (__u64)e->ret < m->brk)
			remove_range(m, (__u64)e->ret, m->brk - (__u64)e->ret);
		m->brk = (__u64)e->ret;
		m->brk_known = true;
		return 0;
	case STK_MREMAP:
		return syscall_failed(e->ret) ? 0 : move_range(m, e->a, e->b, e->c, (__u64)e->ret);
	case STK_MMAP_FIXED:
		if ((__u64)e->ret == e->a)
			remove_range(m, e->a, e->b);
		return 0;
	default:
		return 0;
	}
}

static int apply(struct stack_shadow *sh, const struct stack_ev *e)
{
	switch (e->kind) {
	case STK_FAULT:
		return apply_fault(sh, (const struct stack_fault *)e);
	case STK_FORK:
		return fork_copy(sh, e);
	case STK_EXEC:
		return mm_new(sh, e->mm, e->tgid) ? 0 : -ENOMEM;
	case STK_MM_GONE:
		mm_drop(sh, e->mm);
		return 0;
	case STK_THP:
		return apply_thp(sh, e);
	default:
		return apply_range_event(sh, e);
	}
}

static bool valid(const void *ev, size_t size)
{
	const struct stack_ev *e = ev;

	if (size < sizeof(*e) || e->kind < STK_FAULT || e->kind > STK_ANON_BULK)
		return false;
	return e->kind != STK_FAULT || size >= sizeof(struct stack_fault);
}

static int keep(struct stack_shadow *sh, const void *ev, size_t size)
{
	const struct stack_fault *f = ev;
	size_t need;

	/* A fault's unused frames are not kept (apply reads nframes of them). */
	if (f->h.kind == STK_FAULT)
		size = offsetof(struct stack_fault, frames) +
		       (f->nframes < STACK_MAX_FRAMES ? f->nframes : STACK_MAX_FRAMES) * sizeof(__u64);
	need = sizeof(size_t) + size;
	if (sh->pending_len + need > SHADOW_PENDING_MAX) {
		sh->counts.lost++;
		return 0;
	}
	if (sh->pending_len + need > sh->pending_cap) {
		size_t cap = sh->pending_cap ? 2 * sh->pending_cap : 1 << 16;
		__u8 *g;

		while (cap < sh->pending_len + need)
			cap *= 2;
		g = realloc(sh->pending, cap);
		if (!g)
			return -ENOMEM;
		sh->pending = g;
		sh->pending_cap = cap;
	}
	memcpy(sh->pending + sh->pending_len, &size, sizeof(size));
	memcpy(sh->pending + sh->pending_len + sizeof(size), ev, size);
	sh->pending_len += need;
	sh->pending_n++;
	return 0;
}

int shadow_event(struct stack_shadow *sh, const void *ev, size_t size)
{
	const struct stack_ev *e = ev;
	struct fault_seen *seen;
	struct stack_ev thp;

	if (!valid(ev, size))
		return -EINVAL;
	seen = &sh->received[e->tid % THREAD_SLOTS];
	if (e->kind == STK_FAULT) {
		const struct stack_fault *f = ev;

		*seen = (struct fault_seen){ .mm = e->mm, .page = PAGE_OF(f->addr), .ns = e->ns,
					     .ip = f->nframes ? f->frames[0] : 0, .tid = e->tid };
	} else if (e->kind == STK_ANON_BULK) {
		/* A fault's change of b bytes, sent with its user ip: the
		 * thread's fault at that ip mapped the b-aligned range around
		 * its address (a large folio is aligned so). */
		thp = *e;
		if (seen->tid != e->tid || seen->mm != e->mm || !seen->ip || seen->ip != e->c ||
		    e->b < (2u << SHADOW_PAGE_SHIFT) || (e->b & (e->b - 1)) || e->b > STK_THP_BYTES) {
			sh->counts.thp_events++;
			sh->counts.thp_unpaired++;
			return 0;
		}
		thp.kind = STK_THP;
		thp.c = seen->page << SHADOW_PAGE_SHIFT;
		thp.a = thp.c & ~(e->b - 1);
		e = ev = &thp;
		size = sizeof(thp);
	}
	if (e->kind == STK_THP && is_fault_of(seen, e)) {
		if (e != &thp)
			thp = *e;
		thp.ns = seen->ns;      /* at its fault's time: applied with it, on the same side of the cut */
		e = ev = &thp;
		size = sizeof(thp);
	}
	return e->ns <= sh->cut_ns ? apply(sh, e) : keep(sh, ev, size);
}

int shadow_set_cut(struct stack_shadow *sh, __u64 cut_ns)
{
	size_t rd = 0, wr = 0, size;
	int err = 0;

	if (cut_ns <= sh->cut_ns)
		return 0;
	sh->cut_ns = cut_ns;
	/* Apply those now at or before the cut, in order; compact the rest.
	 * Each is copied out first: pending is 8-byte aligned only by luck. */
	while (rd < sh->pending_len) {
		union { struct stack_fault f; struct stack_ev e; } buf;

		memcpy(&size, sh->pending + rd, sizeof(size));
		memcpy(&buf, sh->pending + rd + sizeof(size), size < sizeof(buf) ? size : sizeof(buf));
		if (buf.e.ns <= cut_ns) {
			if (!err)
				err = apply(sh, &buf.e);
			sh->pending_n--;
		} else {
			memmove(sh->pending + wr, sh->pending + rd, sizeof(size) + size);
			wr += sizeof(size) + size;
		}
		rd += sizeof(size) + size;
	}
	sh->pending_len = wr;
	return err;
}

__u64 shadow_cut(const struct stack_shadow *sh)
{
	return sh->cut_ns;
}

__s64 shadow_groups(struct stack_shadow *sh, shadow_group_fn fn, void *ctx)
{
	__s64 total = 0;

	for (size_t i = 0; i < sh->n_mms; i++) {
		struct shadow_mm *m = &sh->mms[i];
		struct u64map by_stack = { 0 };
		uint32_t *slot;
		int err = 0;

		for (size_t j = 0; j < m->pages.cap && !err; j++) {
			if (!u64map_used(&m->pages, j))
				continue;
			/* Keys are stack id + 1; the value counts pages. */
			if (!u64map_put(&by_stack, m->pages.vals[j], 0, &slot) && !slot)
				err = -ENOMEM;
			else
				(*slot)++;
		}
		for (size_t j = 0; j < by_stack.cap && !err; j++)
			if (u64map_used(&by_stack, j)) {
				err = fn(ctx, m->mm, m->tgid, (__u32)by_stack.keys[j] - 1, by_stack.vals[j]);
				total += by_stack.vals[j];
			}
		u64map_free(&by_stack);
		if (err)
			return err;
	}
	return total;
}

const struct shadow_stack *shadow_stack_get(const struct stack_shadow *sh, __u32 id)
{
	return id < sh->n_stacks ? &sh->stacks[id] : NULL;
}

size_t shadow_stack_count(const struct stack_shadow *sh)
{
	return sh->n_stacks;
}

void shadow_counts_get(const struct stack_shadow *sh, struct shadow_counts *out)
{
	*out = sh->counts;
}

int shadow_adopt(struct stack_shadow *sh, __u64 mm, __u32 tgid)
{
	if (mm_get(sh, mm))
		return 0;
	if (!mm_new(sh, mm, tgid))
		return -ENOMEM;
	sh->counts.adopted_mms++;
	return 0;
}

bool shadow_mm_known(const struct stack_shadow *sh, __u64 mm, __u32 *tgid)
{
	const struct shadow_mm *m = mm_get(sh, mm);

	if (m && tgid)
		*tgid = m->tgid;
	return m != NULL;
}
