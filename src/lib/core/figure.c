// SPDX-License-Identifier: MIT
#include <stdlib.h>
#include <string.h>
#include <linux/types.h>
#include "figure.h"

uint64_t percpu_rss_lag_pages(int ncpus)
{
	uint64_t batch;

	if (ncpus < 1)
		ncpus = 1;
	batch = (uint64_t)ncpus * 2 > 32 ? (uint64_t)ncpus * 2 : 32;
	return 3 * (uint64_t)ncpus * (batch - 1);
}

void figure_judge_bpf(struct figure *f, const struct bpf_counters *c,
		      const struct host_facts *h, int64_t bound_pages)
{
	f->exact = false;
	f->bound_known = false;
	f->error_bound_bytes = 0;
	if (!f->measured) {
		f->inexact_reason = "not measured";
	} else if (c->drop_mm_full || c->drop_task_full) {
		f->inexact_reason = "tracking map full: some memory was not counted (raise --max-tracked)";
	} else if (c->missed_events || c->peak_races) {
		f->inexact_reason = "the kernel skipped some BPF program runs";
	} else if (c->read_errors) {
		f->inexact_reason = "some reads of a counter failed in the kernel";
	} else if (!h->rss_percpu) {
		/* Only below: the caches hold pages the tree has (docs/design.md). */
		f->bound_known = bound_pages >= 0;
		f->error_bound_bytes = bound_pages > 0 ? (uint64_t)bound_pages * (uint64_t)h->page_size : 0;
		f->inexact_reason = h->fault_pages_read ?
			"kernel batches rss updates in per-thread caches (before 6.2): the true "
			"peak lies between the figure and the figure + the bound" :
			"kernel batches rss updates in per-thread caches (before 6.2): the true "
			"peak lies between the figure and the figure + the bound, which assumes "
			"fault_around_bytes is 64 KiB (debugfs not mounted to read it)";
	} else if (bound_pages > 0) {
		f->bound_known = true;
		f->error_bound_bytes = (uint64_t)bound_pages * (uint64_t)h->page_size;
		f->inexact_reason = "no per-CPU exact path here: counters read without their "
				    "per-CPU slots lag by up to the bound";
	} else {
		f->exact = true;
		f->bound_known = true;
		f->inexact_reason = NULL;
	}
}

void figure_merge(struct figure *run, const struct figure *w, bool first)
{
	struct figure prev = *run;

	if (first || (!run->measured && w->measured) ||
	    (w->measured && w->peak_bytes > run->peak_bytes))
		*run = *w;      /* the peak, its time and detail */
	if (first)
		return;
	if (prev.measured) {
		/* The run began with the first window. */
		run->baseline_known = prev.baseline_known;
		run->baseline_bytes = prev.baseline_bytes;
	}
	run->samples = prev.samples + w->samples;
	run->vanished = prev.vanished + w->vanished;
	if (!(prev.measured && w->measured))
		return;         /* only one window has a figure: it stands */
	run->exact = prev.exact && w->exact;
	run->bound_known = prev.bound_known && w->bound_known;
	run->error_bound_bytes = prev.error_bound_bytes > w->error_bound_bytes ?
				 prev.error_bound_bytes : w->error_bound_bytes;
	if (!run->exact && !run->inexact_reason)
		run->inexact_reason = prev.exact ? w->inexact_reason : prev.inexact_reason;
}

static int by_pages_desc(const void *a, const void *b)
{
	const struct holder *x = a, *y = b;

	return x->pages < y->pages ? 1 : x->pages > y->pages ? -1 : (int)x->tgid - (int)y->tgid;
}

void figure_set_holders(struct figure *f, const struct holder *in, size_t n, long page_size)
{
	struct holder *sorted = n ? malloc(n * sizeof(*sorted)) : NULL;
	size_t i;

	f->has_holders = true;
	f->holders_total = n;
	f->n_holders = 0;
	if (!sorted)
		return;
	memcpy(sorted, in, n * sizeof(*sorted));
	qsort(sorted, n, sizeof(*sorted), by_pages_desc);
	for (i = 0; i < n && i < FIGURE_MAX_HOLDERS; i++) {
		struct figure_holder *h = &f->holders[i];

		h->pid = (int32_t)sorted[i].vpid;
		memcpy(h->comm, sorted[i].comm, sizeof(h->comm));
		h->comm[sizeof(h->comm) - 1] = '\0';
		h->bytes = sorted[i].pages > 0 ? (uint64_t)sorted[i].pages * (uint64_t)page_size : 0;
		h->own_peak_bytes = sorted[i].own_peak > 0 ?
				    (uint64_t)sorted[i].own_peak * (uint64_t)page_size : 0;
	}
	f->n_holders = i;
	free(sorted);
}
