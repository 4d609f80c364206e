// SPDX-License-Identifier: MIT
#include <stdio.h>
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

/* Add window n to a list of window numbers, "2-5, 7": extend the last
 * range when n follows it. A list that would leave no room for ", ..."
 * ends with it instead. */
static void list_add(char *list, size_t len, unsigned n)
{
	static const char more[] = ", ...";
	size_t used = strlen(list), keep = used;
	const char *tail = strrchr(list, ' ');
	const char *last = tail ? tail + 1 : list;
	const char *dash = strchr(last, '-');
	char item[24];
	unsigned long hi;

	if (used >= sizeof(more) - 1 && !strcmp(list + used - (sizeof(more) - 1), more))
		return;
	hi = used ? strtoul(dash ? dash + 1 : last, NULL, 10) : 0;
	if (used && hi + 1 == n) {
		/* "2" becomes "2-3"; "2-3" becomes "2-4". */
		keep = dash ? (size_t)(dash - list) : used;
		snprintf(item, sizeof(item), "-%u", n);
	} else {
		snprintf(item, sizeof(item), "%s%u", used ? ", " : "", n);
	}
	if (keep + strlen(item) + sizeof(more) <= len)
		snprintf(list + keep, len - keep, "%s", item);
	else if (used + sizeof(more) <= len)
		snprintf(list + used, len - used, "%s", more);
}

/* The bookkeeping of the windows without a figure, kept across *run = *w. */
struct window_book {
	unsigned folded, unmeasured;
	char list[sizeof(((struct figure *)0)->unmeasured_list)];
	char why[sizeof(((struct figure *)0)->unmeasured_why)];
};

static void book_add(struct window_book *b, const struct figure *w)
{
	b->folded++;
	if (w->measured && w->covers_run) {
		/* Its figure covers the windows before it too. */
		b->unmeasured = 0;
		b->list[0] = b->why[0] = '\0';
	} else if (!w->measured) {
		if (!b->unmeasured++)
			snprintf(b->why, sizeof(b->why), "%s", w->inexact_reason ? w->inexact_reason : "no figure");
		list_add(b->list, sizeof(b->list), b->folded);
	}
}

/* hugetlb, beside the peak: the most any window saw, and its holder. */
static void merge_hugetlb(struct figure *run, const struct figure *prev, const struct figure *w)
{
	run->hugetlb_measured = prev->hugetlb_measured || w->hugetlb_measured;
	run->hugetlb_bytes = prev->hugetlb_bytes > w->hugetlb_bytes ? prev->hugetlb_bytes : w->hugetlb_bytes;
	if (prev->hugetlb_member_bytes >= w->hugetlb_member_bytes) {
		run->hugetlb_member_bytes = prev->hugetlb_member_bytes;
		run->hugetlb_member_pid = prev->hugetlb_member_pid;
		memcpy(run->hugetlb_member_comm, prev->hugetlb_member_comm, sizeof(run->hugetlb_member_comm));
	} else {
		run->hugetlb_member_bytes = w->hugetlb_member_bytes;
		run->hugetlb_member_pid = w->hugetlb_member_pid;
		memcpy(run->hugetlb_member_comm, w->hugetlb_member_comm, sizeof(run->hugetlb_member_comm));
	}
}

void figure_merge(struct figure *run, const struct figure *w, bool first)
{
	struct figure prev;
	struct window_book b = { 0 };

	if (first)
		memset(run, 0, sizeof(*run));
	prev = *run;
	b.folded = prev.windows_folded;
	b.unmeasured = prev.windows_unmeasured;
	memcpy(b.list, prev.unmeasured_list, sizeof(b.list));
	memcpy(b.why, prev.unmeasured_why, sizeof(b.why));
	book_add(&b, w);
	if (first || (!prev.measured && w->measured) ||
	    (w->measured && w->peak_bytes > prev.peak_bytes))
		*run = *w;      /* the peak, its time and detail */
	run->windows_folded = b.folded;
	run->windows_unmeasured = b.unmeasured;
	memcpy(run->unmeasured_list, b.list, sizeof(b.list));
	memcpy(run->unmeasured_why, b.why, sizeof(b.why));
	if (first) {
		/* The run's baseline is its first window's, if it has one. */
		run->baseline_known = w->measured && w->baseline_known;
		return;
	}
	run->baseline_known = prev.baseline_known;
	run->baseline_bytes = prev.baseline_bytes;
	run->other_cgroups = prev.other_cgroups || w->other_cgroups;
	merge_hugetlb(run, &prev, w);
	run->samples = prev.samples + w->samples;
	run->vanished = prev.vanished + w->vanished;
	if (prev.measured && w->measured) {
		run->exact = prev.exact && w->exact;
		run->bound_known = prev.bound_known && w->bound_known;
		run->error_bound_bytes = prev.error_bound_bytes > w->error_bound_bytes ?
					 prev.error_bound_bytes : w->error_bound_bytes;
		if (!run->exact)
			run->inexact_reason = !prev.exact ? prev.inexact_reason : w->inexact_reason;
	}
	/* A run is exact only if every window was measured exactly. */
	if (run->measured && run->windows_unmeasured) {
		run->exact = false;
		run->bound_known = false;
	}
}

const char *figure_reason(const struct figure *f, char *buf, size_t len)
{
	if (f->measured && f->exact)
		return NULL;
	if (!f->measured || !f->windows_unmeasured)
		return f->inexact_reason;
	snprintf(buf, len, "window%s %s of %u not measured (%s): the peak is the other windows' only%s%s",
		 f->windows_unmeasured == 1 ? "" : "s", f->unmeasured_list, f->windows_folded,
		 f->unmeasured_why, f->inexact_reason ? "; also " : "",
		 f->inexact_reason ? f->inexact_reason : "");
	return buf;
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

const char UNIQUE_SCOPE[] =
	"unique memory: mapped anon + mapped file pages charged to the tree's own cgroup, each page once "
	"(shmem included; not pages first charged elsewhere, such as shared libraries already cached)";
