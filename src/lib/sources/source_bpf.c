// SPDX-License-Identifier: MIT
/* The bpf source: the kernel-side tracker behind the source interface. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "figure.h"
#include "sampler_model.h"
#include "sources.h"
#include "tracker_api.h"

struct bpf_source {
	struct source base;
	struct tracker *tracker;
	bool command_mode;
	const struct host_facts *host;
	__s64 window_start_sum;         /* pages: the baseline of the open window */
	struct tree_reading last;       /* the last reading, for counters */
};

static struct bpf_source *to_bpf(struct source *s)
{
	return (struct bpf_source *)s;
}

static int bpf_add_root(struct source *s, pid_t pid)
{
	struct bpf_source *b = to_bpf(s);
	__u32 tgid = 0;
	int err;

	/* The command waits before exec: its mm is still peakbpf's copy. */
	err = tracker_add_roots(b->tracker, &pid, 1, !b->command_mode, &tgid);
	if (err)
		return err;
	return tgid ? 0 : -ESRCH;
}

static int bpf_start(struct source *s)
{
	struct bpf_source *b = to_bpf(s);
	int err = tracker_close_window(b->tracker, &b->last);

	if (err)
		return err;
	b->window_start_sum = b->last.window_end_sum;
	return 0;
}

static uint64_t pages_to_bytes(__s64 pages, long page_size)
{
	return pages > 0 ? (uint64_t)pages * (uint64_t)page_size : 0;
}

/* How far the peak may be off, in pages: 0 on the exact path; with 6.2+
 * counters read without their per-CPU slots, each mm at the peak may lag
 * by every CPU's slots of its three counters. Before 6.2, the window's
 * largest sum + per-thread cache bounds above its peak (struct tree_state). */
static int64_t peak_bound_pages(const struct bpf_source *b, const struct tree_state *t)
{
	if (b->host->exact_path_err == 0)
		return 0;
	if (!b->host->rss_percpu)
		return t->upper_pages > t->peak_pages ? t->upper_pages - t->peak_pages : 0;
	/* Every possible CPU can hold a slot: online CPUs (hotplug, LXCFS)
	 * could understate the bound. */
	return t->peak_mms * (int64_t)percpu_rss_lag_pages(tracker_possible_cpus(b->tracker));
}

/* When, and what, at the peak: the breakdown is what the holders held. */
static void set_detail(struct figure *f, const struct tree_reading *r, long page)
{
	const __s64 *by_slot = r->holders_info.breakdown_pages;

	f->has_detail = true;
	f->peak_mono_ns = r->tree.peak_ns;
	f->file_bytes = pages_to_bytes(by_slot[RSS_FILE], page);
	f->anon_bytes = pages_to_bytes(by_slot[RSS_ANON], page);
	f->shmem_bytes = pages_to_bytes(by_slot[RSS_SHMEM], page);
	f->procs_at_peak = r->tree.peak_procs;
	f->mms_at_peak = r->tree.peak_mms;
}

static void counters_from(const struct tree_reading *now, struct bpf_counters *c);

static int bpf_close_window(struct source *s, struct figure *f)
{
	struct bpf_source *b = to_bpf(s);
	const struct tree_state *t = &b->last.tree;
	struct bpf_counters c;
	long page = b->host->page_size;
	int err;

	err = tracker_close_window(b->tracker, &b->last);
	if (err)
		return err;
	memset(f, 0, sizeof(*f));
	f->source = "bpf";
	f->scope = "summed RSS of the tree, every change seen in the kernel";
	f->measured = true;
	f->peak_bytes = pages_to_bytes(t->peak_pages, page);
	f->baseline_known = true;
	f->baseline_bytes = pages_to_bytes(b->window_start_sum, page);
	if (b->last.holders_err == 0) {
		set_detail(f, &b->last, page);
		figure_set_holders(f, b->last.holders, b->last.holders_info.count, page);
		f->holders_total = b->last.holders_info.total;
		f->holders_truncated = b->last.holders_info.truncated;
		f->holders_bytes = pages_to_bytes(b->last.holders_info.sum_pages, page);
	}
	b->window_start_sum = b->last.window_end_sum;
	/* The counters of the reading that closed the window: one reading per
	 * window keeps closing one cheap (libpeakbpf closes two per block). */
	counters_from(&b->last, &c);
	figure_judge_bpf(f, &c, b->host, peak_bound_pages(b, t));
	return 0;
}

static void bpf_destroy(struct source *s)
{
	struct bpf_source *b = to_bpf(s);

	if (!b)
		return;
	tracker_close(b->tracker);
	free(b);
}

static const struct source_ops bpf_ops;

/* The source around tracker t (which it owns). */
static int wrap(struct tracker *t, const struct bpf_source_opts *o, struct host_facts *host,
		struct source **out)
{
	struct tracker_startup st;
	struct bpf_source *b;

	*out = NULL;
	b = calloc(1, sizeof(*b));
	if (!b) {
		tracker_close(t);
		return -ENOMEM;
	}
	b->tracker = t;
	b->base.ops = &bpf_ops;
	b->base.name = "bpf";
	b->command_mode = o->command_mode;
	b->host = host;
	host->teardown_hook = tracker_teardown_hook(b->tracker);
	host->rss_percpu = tracker_has_percpu_rss(b->tracker);
	tracker_fault_pages(b->tracker, &host->fault_pages_read);
	host->exact_path_err = tracker_exact_path(b->tracker);
	tracker_startup(b->tracker, &st);
	host->probe_ms = st.probe_ns / 1e6;
	host->load_ms = st.load_ns / 1e6;
	host->learn_ms = st.learn_ns / 1e6;
	host->attach_ms = st.attach_ns / 1e6;
	*out = &b->base;
	return 0;
}

int bpf_source_open(const struct bpf_source_opts *o, struct host_facts *host, struct source **out)
{
	struct tracker_opts topts = { .max_tracked = o->max_tracked,
				      .record_ring_bytes = o->record_ring_bytes,
				      .unique_cgroup_id = o->unique_cgroup_id };
	struct tracker *t;
	int err;

	*out = NULL;
	err = tracker_open(&topts, &t);
	return err ? err : wrap(t, o, host, out);
}

int bpf_source_open_tree(struct tracker *shared, unsigned tree, const struct bpf_source_opts *o,
			 struct host_facts *host, struct source **out)
{
	struct tracker *t;
	int err;

	*out = NULL;
	err = tracker_open_tree(shared, tree, o->max_tracked, &t);
	return err ? err : wrap(t, o, host, out);
}

/* The counters from one reading of the tracker. */
static void counters_from(const struct tree_reading *now, struct bpf_counters *c)
{
	const struct tree_state *t = &now->tree;

	memset(c, 0, sizeof(*c));
	c->events = now->events;
	c->missed_events = now->missed_events;
	c->drop_mm_full = t->drop_mm_full;
	c->drop_task_full = t->drop_task_full;
	c->peak_races = t->peak_races;
	c->mms_entered = t->mms_entered;
	c->procs_entered = t->procs_entered;
	c->mms_left = now->mm_entries;
	c->procs_left = now->task_entries;
	c->count_takes = t->count_takes;
	c->settles = t->settles;
	c->read_errors = t->read_errors;
}

static void bpf_counters(struct source *s, bool at_cut, struct bpf_counters *c)
{
	struct tree_reading now;

	if (at_cut) {
		counters_from(&to_bpf(s)->last, c);
		return;
	}
	memset(c, 0, sizeof(*c));
	if (tracker_read(to_bpf(s)->tracker, &now))
		return;
	counters_from(&now, c);
}

static int64_t bpf_procs_live(struct source *s)
{
	struct tree_state now;

	tracker_read_tree(to_bpf(s)->tracker, &now);
	return now.procs_live;
}

static void bpf_check_sums(struct source *s, struct bpf_counters *c)
{
	struct sum_check check;

	c->sums_checked = tracker_verify_sums(to_bpf(s)->tracker, &check) == 0;
	c->sums_mms = check.mms;
	c->sums_off = check.counters_off;
	c->sums_max_off_pages = check.max_off_pages;
}

static int bpf_drain_sums(struct source *s, source_sum_fn fn, void *ctx, uint64_t *drops)
{
	struct bpf_source *b = to_bpf(s);
	struct tree_state now;
	int err = tracker_drain_sums(b->tracker, fn, ctx);

	tracker_read_tree(b->tracker, &now);
	*drops = now.record_drops;
	return err;
}

static int bpf_mm_identity(struct source *s, uint64_t key, uint32_t tgid, uint32_t *vpid,
			   char comm[COMM_LEN])
{
	return tracker_mm_identity(to_bpf(s)->tracker, key, tgid, vpid, comm);
}

static int64_t bpf_window_start_pages(struct source *s)
{
	return to_bpf(s)->window_start_sum;
}

static struct tracker *bpf_tracker(struct source *s)
{
	return to_bpf(s)->tracker;
}

static const struct source_ops bpf_ops = {
	.add_root = bpf_add_root,
	.start = bpf_start,
	.close_window = bpf_close_window,
	.destroy = bpf_destroy,
	.counters = bpf_counters,
	.check_sums = bpf_check_sums,
	.procs_live = bpf_procs_live,
	.drain_sums = bpf_drain_sums,
	.mm_identity = bpf_mm_identity,
	.window_start_pages = bpf_window_start_pages,
	.tracker = bpf_tracker,
};
