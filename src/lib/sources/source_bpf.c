// SPDX-License-Identifier: MIT
/* The bpf source: the kernel-side tracker behind the source interface. */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "figure.h"
#include "sampler_model.h"
#include "sources.h"
#include "stacks_api.h"
#include "tracker_load.h"
#include "tracker_tree.h"
#include "unique_api.h"
#include "cgroup_target_api.h"

struct bpf_source {
	struct source base;
	struct tracker_tree *tree;
	struct tracker_load *own;       /* a load made for this source alone, or NULL */
	bool command_mode;
	const struct host_facts *host;
	__s64 window_start_sum;         /* pages: the baseline of the open window */
	struct tree_reading last;       /* the last reading, for counters */
	bool cached;                    /* a tree of the process's load (below) */
	/* The tree's unique memory (unique_api.h), once unique_open asked */
	struct unique *unique;
	bool unique_asked;
	char unique_why[256];           /* why not measured, when asked */
	struct figure unique_fig;       /* the window close_window closed last */
	bool cgroup_target;             /* the tree is a cgroup's (bpf_add_cgroup) */
	struct tracker_tree *sink;      /* bpf_exclude_cgroup's tree, or NULL */
};

/*
 * One load per process (issue 24): the first bpf source loads the BPF
 * object; later ones, while their options fit it and no other source uses
 * it, take a tree of that load (tracker_tree__add) instead of loading
 * again. Each source is still its own tree; closing it clears the tree. The load goes with its last tree
 * unless a source asked to keep it (keep_loaded: the CLI's runs, one after
 * another), then at bpf_source_unload or the process's exit. A forked
 * child does not use its parent's load (the kernel objects are shared,
 * the tree slots are not): it forgets it and loads its own.
 */
static struct {
	pthread_mutex_t lock;
	struct tracker_load *load;
	struct tracker_opts opts;       /* what it was loaded with */
	pid_t pid;                      /* the process that loaded it */
	bool in_use;                    /* by a source (its tree 0) */
	bool keep;
} cache = { .lock = PTHREAD_MUTEX_INITIALIZER };

static struct bpf_source *to_bpf(struct source *s)
{
	return (struct bpf_source *)s;
}

static int bpf_add_root(struct source *s, pid_t pid)
{
	struct bpf_source *b = to_bpf(s);
	__u32 tgid = 0;
	int err;

	struct stacks_reader *stacks;

	/* The command waits before exec: its mm is still peakbpf's copy. */
	err = tracker_tree__add_roots(b->tree, &pid, 1, !b->command_mode, &tgid);
	if (err)
		return err;
	/* Attached live: --stacks takes up its address spaces at their first
	 * fault; what they held before is in the buckets. */
	stacks = b->command_mode ? NULL : tracker_load__stacks(tracker_tree__load(b->tree), &err);
	if (stacks)
		stacks_reader_adopt_unknown(stacks);
	return tgid ? 0 : -ESRCH;
}

/* The first window opens: a cut alone (no walk of the maps, no holders),
 * which matters through the helper, whose maps hold every tree's. */
static int bpf_start(struct source *s)
{
	struct bpf_source *b = to_bpf(s);

	return tracker_tree__open_window(b->tree, &b->window_start_sum);
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
	return t->peak_mms * (int64_t)percpu_rss_lag_pages(tracker_load__possible_cpus(tracker_tree__load(b->tree)));
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

	err = tracker_tree__cut(b->tree, &b->last);
	if (err)
		return err;
	if (b->unique)          /* the same window's unique memory */
		unique_close_window(b->unique, &b->unique_fig);
	memset(f, 0, sizeof(*f));
	f->source = "bpf";
	f->scope = b->cgroup_target ?
		   "summed RSS of the cgroup's processes and its descendants', every change seen in the kernel" :
		   "summed RSS of the tree, every change seen in the kernel";
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

/* Give back a tree of the process's load; the load goes with its last
 * tree unless it is kept. */
static void cache_put(struct tracker_tree *t)
{
	tracker_tree__free(t);
	pthread_mutex_lock(&cache.lock);
	cache.in_use = false;
	if (!cache.keep) {
		tracker_load__destroy(cache.load);
		cache.load = NULL;
	}
	pthread_mutex_unlock(&cache.lock);
}

static void bpf_destroy(struct source *s)
{
	struct bpf_source *b = to_bpf(s);

	if (!b)
		return;
	/* Before the tree: its state is the tree's. */
	unique_destroy(b->unique);
	tracker_tree__free(b->sink);    /* before its load can go */
	if (b->cached) {
		cache_put(b->tree);
	} else {
		tracker_tree__free(b->tree);
		tracker_load__destroy(b->own);
	}
	free(b);
}

static const struct source_ops bpf_ops;

/* The source around tree t (which it owns; cached: a tree of the
 * process's load, which was made for it when loaded; own: a load made
 * for it alone, which it owns too). */
static int wrap(struct tracker_tree *t, bool cached, struct tracker_load *own, bool loaded,
		const struct bpf_source_opts *o, struct host_facts *host, struct source **out)
{
	struct tracker_startup st = { 0 };
	struct tracker_load *l = tracker_tree__load(t);
	struct bpf_source *b;

	*out = NULL;
	b = calloc(1, sizeof(*b));
	if (!b) {
		if (cached) {
			cache_put(t);
		} else {
			tracker_tree__free(t);
			tracker_load__destroy(own);
		}
		return -ENOMEM;
	}
	b->tree = t;
	b->own = own;
	b->cached = cached;
	b->base.ops = &bpf_ops;
	b->base.name = "bpf";
	b->command_mode = o->command_mode;
	b->host = host;
	host->teardown_hook = tracker_load__teardown_hook(l);
	host->rss_percpu = tracker_load__has_percpu_rss(l);
	tracker_load__fault_pages(l, &host->fault_pages_read);
	host->exact_path_err = tracker_load__exact_path(l);
	/* A load an earlier source of this process made took no time now. */
	if (loaded)
		tracker_load__startup(l, &st);
	host->bpf_load = loaded ? "loaded" : "reused";
	host->probe_ms = st.probe_ns / 1e6;
	host->load_ms = st.load_ns / 1e6;
	host->learn_ms = st.learn_ns / 1e6;
	host->attach_ms = st.attach_ns / 1e6;
	*out = &b->base;
	return 0;
}

/* Can the process's load serve these options? Its maps must hold as many
 * entries, its record ring be the one asked (a ring nobody drains would
 * fill), its unique program and every program it may run be there. */
static bool cache_fits(const struct tracker_opts *want)
{
	__u32 have_max = cache.opts.max_tracked ? cache.opts.max_tracked : DEFAULT_MAX_TRACKED;
	__u32 want_max = want->max_tracked ? want->max_tracked : DEFAULT_MAX_TRACKED;

	if (want_max > have_max || want->record_ring_bytes != cache.opts.record_ring_bytes ||
	    want->stacks != cache.opts.stacks)
		return false;
	/* Programs left out of it (tracker_opts) that this source needs. */
	if ((cache.opts.without_cgroup_targets && !want->without_cgroup_targets) ||
	    (cache.opts.commands_only && !want->commands_only))
		return false;
	return !want->with_unique || cache.opts.with_unique;
}

/* A tree of the process's load, loading it first when there is none (or
 * one that does not fit). *loaded: this call loaded it. -EBUSY when the
 * load is in use: load apart. */
static int cache_get(const struct tracker_opts *want, __u32 max_tracked, struct tracker_tree **t,
		     bool *loaded)
{
	int err = 0;

	*loaded = false;
	pthread_mutex_lock(&cache.lock);
	if (cache.load && cache.pid != getpid()) {
		/* A forked child: the parent's load is not this process's.
		 * It is only forgotten, as a session a child inherits is
		 * (peakbpf.h): its objects are the parent's too. */
		cache.load = NULL;
		cache.in_use = false;
	}
	/* Sessions at once load apart: trees of one load share its maps,
	 * where a process belongs to one tree only, and two sessions of one
	 * process may well measure the same processes (the same caller). */
	if (cache.in_use) {
		err = -EBUSY;
		goto cleanup;
	}
	if (cache.load && !cache_fits(want)) {
		tracker_load__destroy(cache.load);
		cache.load = NULL;
	}
	if (!cache.load) {
		err = tracker_load__open(want, &cache.load);
		if (err)
			goto cleanup;
		cache.opts = *want;
		cache.pid = getpid();
		*loaded = true;
	}
	err = tracker_tree__add(cache.load, 0, max_tracked, t);
	cache.in_use = !err;
cleanup:
	pthread_mutex_unlock(&cache.lock);
	return err;
}

int bpf_source_open(const struct bpf_source_opts *o, struct host_facts *host, struct source **out)
{
	struct tracker_opts topts = { .max_tracked = o->max_tracked,
				      .record_ring_bytes = o->record_ring_bytes,
				      .with_unique = o->with_unique, .stacks = o->stacks,
				      .without_cgroup_targets = o->without_cgroup_targets,
				      .commands_only = o->command_mode };
	struct tracker_load *own;
	struct tracker_tree *t;
	bool loaded;
	int err;

	*out = NULL;
	if (o->keep_loaded) {
		pthread_mutex_lock(&cache.lock);
		cache.keep = true;
		pthread_mutex_unlock(&cache.lock);
	}
	err = cache_get(&topts, o->max_tracked, &t, &loaded);
	if (!err)
		return wrap(t, true, NULL, loaded, o, host, out);
	if (err != -EBUSY)
		return err;
	/* A load of its own, measured on its tree 0 with no cap but the
	 * maps' (max_tracked sized them). */
	err = tracker_load__open(&topts, &own);
	if (err)
		return err;
	err = tracker_tree__add(own, 0, 0, &t);
	if (err) {
		tracker_load__destroy(own);
		return err;
	}
	return wrap(t, false, own, true, o, host, out);
}

void bpf_source_unload(void)
{
	pthread_mutex_lock(&cache.lock);
	cache.keep = false;
	if (cache.load && !cache.in_use && cache.pid == getpid()) {
		tracker_load__destroy(cache.load);
		cache.load = NULL;
	}
	pthread_mutex_unlock(&cache.lock);
}

int bpf_source_open_tree(struct tracker_load *shared, unsigned tree, const struct bpf_source_opts *o,
			 struct host_facts *host, struct source **out)
{
	struct tracker_tree *t;
	int err;

	*out = NULL;
	err = tracker_tree__add(shared, tree, o->max_tracked, &t);
	return err ? err : wrap(t, false, NULL, true, o, host, out);
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

/* A cgroup target's membership, as it is now. */
static void cgroup_counters(struct bpf_source *b, struct bpf_counters *c)
{
	struct cg_stats st;

	if (!b->cgroup_target || !tracker_cgroup_stats(b->tree, &st))
		return;
	c->cgroup_target = true;
	c->cg_walk_in = st.walk_in;
	c->cg_forked_in = st.forked_in;
	c->cg_moved_in = st.moved_in;
	c->cg_moved_out = st.moved_out;
}

static void bpf_counters(struct source *s, bool at_cut, struct bpf_counters *c)
{
	struct tree_reading now;

	if (at_cut) {
		counters_from(&to_bpf(s)->last, c);
		cgroup_counters(to_bpf(s), c);
		return;
	}
	memset(c, 0, sizeof(*c));
	if (tracker_tree__read(to_bpf(s)->tree, &now))
		return;
	counters_from(&now, c);
	cgroup_counters(to_bpf(s), c);
}

static int64_t bpf_procs_live(struct source *s)
{
	struct tree_state now;

	tracker_tree__read_state(to_bpf(s)->tree, &now);
	return now.procs_live;
}

static void bpf_check_sums(struct source *s, struct bpf_counters *c)
{
	struct sum_check check;

	c->sums_checked = tracker_tree__verify_sums(to_bpf(s)->tree, &check) == 0;
	c->sums_mms = check.mms;
	c->sums_off = check.counters_off;
	c->sums_max_off_pages = check.max_off_pages;
}

static int bpf_drain_sums(struct source *s, source_sum_fn fn, void *ctx, uint64_t *drops)
{
	struct bpf_source *b = to_bpf(s);
	struct tree_state now;
	int err = tracker_tree__drain_sums(b->tree, fn, ctx);

	tracker_tree__read_state(b->tree, &now);
	*drops = now.record_drops;
	return err;
}

static int bpf_mm_identity(struct source *s, uint64_t key, uint32_t tgid, uint32_t *vpid,
			   char comm[COMM_LEN])
{
	return tracker_tree__mm_identity(to_bpf(s)->tree, key, tgid, vpid, comm);
}

static int64_t bpf_window_start_pages(struct source *s)
{
	return to_bpf(s)->window_start_sum;
}

static struct tracker_tree *bpf_tree(struct source *s)
{
	return to_bpf(s)->tree;
}

/* The tree's own cgroup (empty yet), counted in the tree's unique state of
 * the load, whose program was loaded for it (bpf_source_opts.with_unique). */
static int bpf_unique_open(struct source *s, int cgroup_dir_fd, char *why, size_t len)
{
	struct bpf_source *b = to_bpf(s);
	uint64_t id = 0;
	int err;

	if (b->unique_asked) {
		snprintf(why, len, "the tree's cgroup was given already");
		return -EBUSY;
	}
	b->unique_asked = true;
	err = unique_cgroup_id(cgroup_dir_fd, &id, why, len);
	if (!err)
		err = unique_open(b->tree, id, b->host->page_size, &b->unique, why, len);
	if (err)
		snprintf(b->unique_why, sizeof(b->unique_why), "%s", why);
	return err;
}

static void bpf_unique_window(struct source *s, struct figure *out)
{
	struct bpf_source *b = to_bpf(s);

	if (b->unique) {
		*out = b->unique_fig;
		return;
	}
	memset(out, 0, sizeof(*out));
	out->source = "unavailable";
	out->scope = UNIQUE_SCOPE;
	out->inexact_reason = b->unique_asked ? b->unique_why : NULL;
}

/* The target at dir_fd, without its child at except_fd (-1: none). */
static int resolve_target(int dir_fd, int except_fd, struct cg_target *target)
{
	struct cg_target except;
	int err = cgroup_target_resolve(dir_fd, target);

	if (!err && except_fd >= 0) {
		err = cgroup_target_resolve(except_fd, &except);
		if (!err && (except.hier != target->hier || except.level != target->level + 1))
			err = -EINVAL;  /* not a child of the target */
		target->except_id = except.id;
	}
	return err;
}

/* The tree is a cgroup's: membership by cgroup, in the kernel. */
static int bpf_add_cgroup(struct source *s, int cgroup_dir_fd, int except_dir_fd)
{
	struct bpf_source *b = to_bpf(s);
	struct cg_target target;
	int err = resolve_target(cgroup_dir_fd, except_dir_fd, &target);

	if (!err)
		err = tracker_set_cgroup(b->tree, &target, cgroup_dir_fd);
	if (!err)
		b->cgroup_target = true;
	return err;
}

/* Processes entering the cgroup leave the tree: they go to a tree of the
 * load that nobody reads (tracker_open_sink). */
static int bpf_exclude_cgroup(struct source *s, int cgroup_dir_fd, int except_dir_fd)
{
	struct bpf_source *b = to_bpf(s);
	struct cg_target target;
	int err = resolve_target(cgroup_dir_fd, except_dir_fd, &target);

	if (!err && b->sink)
		err = -EBUSY;
	if (!err)
		err = tracker_open_sink(b->tree, &b->sink);
	if (!err)
		err = tracker_set_cgroup(b->sink, &target, cgroup_dir_fd);
	return err;
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
	.tree = bpf_tree,
	.unique_open = bpf_unique_open,
	.unique_window = bpf_unique_window,
	.add_cgroup = bpf_add_cgroup,
	.exclude_cgroup = bpf_exclude_cgroup,
};
