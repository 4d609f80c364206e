// SPDX-License-Identifier: MIT
/* agent_state.h: the cgroups the agent exports, their windows, the scrapers. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "agent_state.h"

int agent_state_init(struct agent_state *st, size_t max_series)
{
	memset(st, 0, sizeof(*st));
	/* Twice the kernel's slots (cgsum.h, CG_SLOTS 4096): never over half full. */
	st->cap = 8192;
	st->cgs = calloc(st->cap, sizeof(*st->cgs));
	st->max_series = max_series;
	return st->cgs ? 0 : -ENOMEM;
}

void agent_state_free(struct agent_state *st)
{
	for (size_t i = 0; st->cgs && i < st->cap; i++)
		free(st->cgs[i].wh);
	free(st->cgs);
	st->cgs = NULL;
}

uint64_t agent_state_cut(struct agent_state *st)
{
	return ++st->seq;
}

static size_t home(const struct agent_state *st, uint64_t id)
{
	return (size_t)((id * 0x9E3779B97F4A7C15ULL) >> 32) & (st->cap - 1);
}

struct agent_cg *agent_state_find(struct agent_state *st, uint64_t id)
{
	for (size_t i = home(st, id), n = 0; n < st->cap; i = (i + 1) & (st->cap - 1), n++) {
		if (st->cgs[i].id == id)
			return &st->cgs[i];
		if (!st->cgs[i].id)
			return NULL;
	}
	return NULL;
}

void agent_state_cut_time(struct agent_state *st, uint64_t ns)
{
	st->cut_ns = ns;
}

static void push_window(struct agent_cg *cg, uint64_t seq, int64_t peak, uint64_t ns, int64_t pages)
{
	cg->hist[cg->head] = (struct agent_window){ .seq = seq, .peak_pages = peak, .end_ns = ns,
						    .end_pages = pages };
	if (cg->wh)
		cg->wh[cg->head] = (struct agent_holders){ .peak_pages = peak, .end_ns = ns };
	cg->head = (cg->head + 1) % AGENT_HISTORY;
	if (cg->n_hist < AGENT_HISTORY)
		cg->n_hist++;
}

struct agent_cg *agent_state_row(struct agent_state *st, uint64_t id, unsigned level, int64_t pages,
				 int64_t window_peak, int64_t mms, uint64_t peak_ns, bool *fresh)
{
	struct agent_cg *cg = agent_state_find(st, id);

	*fresh = false;
	if (!cg) {
		if (!id || st->used * 2 >= st->cap)
			return NULL;
		for (size_t i = home(st, id);; i = (i + 1) & (st->cap - 1))
			if (!st->cgs[i].id) {
				cg = &st->cgs[i];
				break;
			}
		memset(cg, 0, sizeof(*cg));
		cg->id = id;
		st->used++;
		*fresh = true;
	}
	cg->level = level;
	cg->pages = pages;
	cg->mms = mms;
	cg->max_now = window_peak > cg->all_peak_pages;
	if (cg->max_now) {
		cg->all_peak_pages = window_peak;
		cg->peak_ns = peak_ns;
	}
	cg->seen_seq = st->seq;
	push_window(cg, st->seq, window_peak, st->cut_ns, pages);
	return cg;
}

void agent_state_admit(struct agent_state *st, struct agent_cg *cg)
{
	if (cg->exported || (cg->mms <= 0 && cg->all_peak_pages <= 0))
		return;
	if (st->exported < st->max_series) {
		cg->exported = true;
		st->exported++;
		/* holders from the next window on (none on failure: said as none) */
		cg->wh = calloc(AGENT_HISTORY, sizeof(*cg->wh));
		if (cg->wh && cg->n_hist) {
			const struct agent_window *w = &cg->hist[(cg->head + AGENT_HISTORY - 1) % AGENT_HISTORY];

			cg->wh[(cg->head + AGENT_HISTORY - 1) % AGENT_HISTORY] =
				(struct agent_holders){ .peak_pages = w->peak_pages, .end_ns = w->end_ns };
		}
	} else if (!cg->dropped) {
		cg->dropped = true;
		st->dropped_total++;
	}
}

/* Linear probing's delete: the entries after i that would no longer be
 * found move back. */
void agent_state_remove(struct agent_state *st, uint64_t id)
{
	struct agent_cg *cg = agent_state_find(st, id);
	size_t i, j;

	if (!cg)
		return;
	if (cg->exported) {
		st->exported--;
		st->removed_total++;
	}
	i = (size_t)(cg - st->cgs);
	free(cg->wh);
	memset(cg, 0, sizeof(*cg));
	st->used--;
	for (j = (i + 1) & (st->cap - 1); st->cgs[j].id; j = (j + 1) & (st->cap - 1)) {
		size_t h = home(st, st->cgs[j].id);

		/* j stays if its home lies cyclically in (i, j]. */
		if (i <= j ? (h > i && h <= j) : (h > i || h <= j))
			continue;
		st->cgs[i] = st->cgs[j];
		memset(&st->cgs[j], 0, sizeof(st->cgs[j]));
		i = j;
	}
}

static bool name_ok(const char *s)
{
	size_t n = strlen(s);

	if (n < 1 || n > AGENT_SCRAPER_NAME)
		return false;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
		      c == '.' || c == '-'))
			return false;
	}
	return true;
}

int agent_state_scraper(struct agent_state *st, const char *name, uint64_t now_ns, uint64_t *since)
{
	struct agent_scraper *s = NULL, *lru = &st->scrapers[0];

	if (!name || !*name)
		name = "default";
	if (!name_ok(name))
		return -EINVAL;
	for (size_t i = 0; i < AGENT_SCRAPERS && !s; i++) {
		if (!strcmp(st->scrapers[i].name, name))
			s = &st->scrapers[i];
		else if (st->scrapers[i].last_use < lru->last_use)
			lru = &st->scrapers[i];
	}
	if (!s) {
		s = lru;
		memset(s, 0, sizeof(*s));
		strcpy(s->name, name);
	}
	*since = s->last_seq;
	s->last_seq = st->seq;
	s->last_use = now_ns;
	return 0;
}

int64_t agent_cg_peak_since(const struct agent_cg *cg, uint64_t since, bool *truncated)
{
	int64_t peak = 0;
	uint64_t oldest = UINT64_MAX;

	for (unsigned k = 0; k < cg->n_hist; k++) {
		const struct agent_window *w = &cg->hist[k];

		if (w->seq < oldest)
			oldest = w->seq;
		if (w->seq > since && w->peak_pages > peak)
			peak = w->peak_pages;
	}
	/* Windows since+1 .. oldest-1 were closed and dropped (full ring). */
	*truncated = cg->n_hist == AGENT_HISTORY && oldest > since + 1;
	return peak;
}
