// SPDX-License-Identifier: MIT
/*
 * agent_state.h's holders: at each cut, every address space that held
 * pages at a cgroup's peak of the window just cut (what the kernel's
 * marks say it held at that instant, bpf/cgsum.h) comes in; the largest
 * AGENT_HOLDERS of each window are kept, with the count and the total of
 * all of them. Pure.
 */
#include <string.h>
#include "agent_state.h"

static unsigned newest(const struct agent_cg *cg)
{
	return (cg->head + AGENT_HISTORY - 1) % AGENT_HISTORY;
}

static uint32_t clamp_pages(int64_t p)
{
	return p <= 0 ? 0 : p > UINT32_MAX ? UINT32_MAX : (uint32_t)p;
}

static uint64_t total(const struct agent_holder *h)
{
	return (uint64_t)h->anon + h->file + h->shmem;
}

/* Into the largest-first list, if it is among the largest. */
static void insert(struct agent_holders *hs, const struct agent_holder *h)
{
	uint32_t at = hs->n;

	while (at > 0 && total(&hs->v[at - 1]) < total(h))
		at--;
	if (at >= AGENT_HOLDERS)
		return;
	if (hs->n < AGENT_HOLDERS)
		hs->n++;
	memmove(&hs->v[at + 1], &hs->v[at], (hs->n - 1 - at) * sizeof(*h));
	hs->v[at] = *h;
}

void agent_state_holder(struct agent_state *st, uint64_t id, uint32_t pid, const char *comm, int64_t anon,
			int64_t file, int64_t shmem)
{
	struct agent_cg *cg = agent_state_find(st, id);
	struct agent_holder h = { .pid = pid, .anon = clamp_pages(anon), .file = clamp_pages(file),
				  .shmem = clamp_pages(shmem) };
	struct agent_holders *hs;

	if (!cg || !cg->wh || !cg->n_hist || cg->seen_seq != st->seq)
		return;
	hs = &cg->wh[newest(cg)];
	strncpy(h.comm, comm, AGENT_COMM - 1);
	hs->count++;
	hs->held_pages += (int64_t)total(&h);
	insert(hs, &h);
}

void agent_state_mark_races(struct agent_cg *cg, uint64_t races)
{
	if (cg->wh && cg->n_hist)
		cg->wh[newest(cg)].blurred = races != cg->mark_races;
	cg->mark_races = races;
}

void agent_state_holders_done(struct agent_state *st, bool read)
{
	for (size_t i = 0; i < st->cap; i++) {
		struct agent_cg *cg = &st->cgs[i];

		if (!cg->id || !cg->wh || cg->seen_seq != st->seq)
			continue;
		cg->wh[newest(cg)].read = read;
		if (cg->max_now)
			cg->max_holders = cg->wh[newest(cg)];
		cg->max_now = false;
	}
}

const struct agent_holders *agent_cg_holders_since(const struct agent_cg *cg, uint64_t since)
{
	const struct agent_window *best = NULL;
	unsigned at = 0;

	if (!cg->wh)
		return NULL;
	for (unsigned k = 0; k < cg->n_hist; k++) {
		const struct agent_window *w = &cg->hist[k];

		if (w->seq <= since)
			continue;
		if (!best || w->peak_pages > best->peak_pages ||
		    (w->peak_pages == best->peak_pages && w->seq > best->seq)) {
			best = w;
			at = k;
		}
	}
	/* A window closed before the cgroup had series has no holders. */
	return best && cg->wh[at].end_ns == best->end_ns && cg->wh[at].peak_pages == best->peak_pages
		       ? &cg->wh[at] : NULL;
}
