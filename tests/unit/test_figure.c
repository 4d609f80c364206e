// SPDX-License-Identifier: MIT
/* Figures: exactness judgement, error bounds, window merging. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <errno.h>
#include <string.h>
#include <cmocka.h>
#include <linux/types.h>
#include "figure.h"
#include "tracker.h"

#define MiB (1024ULL * 1024)

/* A 6.2+ host whose tracker loaded: only what judging reads. */
static struct host_facts test_host(void)
{
	return (struct host_facts){ .cpus = 2, .page_size = 4096, .bpf_loaded = true, .rss_percpu = true };
}

static struct figure bpf_figure(void)
{
	return (struct figure){ .source = "bpf", .measured = true, .peak_bytes = 512 * MiB,
				.baseline_known = true, .has_detail = true, .anon_bytes = 500 * MiB };
}

/* batch = max(32, 2 * ncpus); 3 counters * ncpus * (batch - 1). */
static void test_percpu_lag(void **state)
{
	(void)state;
	assert_int_equal(percpu_rss_lag_pages(1), 3 * 1 * 31);
	assert_int_equal(percpu_rss_lag_pages(2), 3 * 2 * 31);
	assert_int_equal(percpu_rss_lag_pages(16), 3 * 16 * 31);
	assert_int_equal(percpu_rss_lag_pages(17), 3 * 17 * 33);
	assert_int_equal(percpu_rss_lag_pages(256), 3 * 256 * 511);
	assert_int_equal(percpu_rss_lag_pages(0), 3 * 1 * 31);
}

/* The kernel side's bound, in pages, becomes bytes; 0 means exact. */
static void test_judge_bound(void **state)
{
	struct host_facts h = test_host();
	struct bpf_counters c = {};
	struct figure f = bpf_figure();

	(void)state;
	figure_judge_bpf(&f, &c, &h, 4 * 186);
	assert_false(f.exact);
	assert_true(f.bound_known);
	assert_int_equal(f.error_bound_bytes, 4ULL * 186 * 4096);
	assert_non_null(strstr(f.inexact_reason, "lag"));

	h.exact_path_err = -EOPNOTSUPP;
	figure_judge_bpf(&f, &c, &h, 186);
	assert_true(f.bound_known);
	assert_non_null(strstr(f.inexact_reason, "no per-CPU exact path"));
}

static void test_judge_exact(void **state)
{
	struct host_facts h = test_host();
	struct bpf_counters c = {};
	struct figure f = bpf_figure();

	(void)state;
	figure_judge_bpf(&f, &c, &h, 0);
	assert_true(f.exact);
	assert_true(f.bound_known);
	assert_int_equal(f.error_bound_bytes, 0);
	assert_null(f.inexact_reason);
}

static void test_judge_drops_make_bound_unknown(void **state)
{
	struct host_facts h = test_host();
	struct bpf_counters c = { .drop_mm_full = 1 };
	struct figure f = bpf_figure();

	(void)state;
	figure_judge_bpf(&f, &c, &h, 0);
	assert_false(f.exact);
	assert_false(f.bound_known);
	assert_non_null(strstr(f.inexact_reason, "map full"));

	c = (struct bpf_counters){ .missed_events = 7 };
	figure_judge_bpf(&f, &c, &h, 0);
	assert_false(f.exact);
	assert_false(f.bound_known);

	/* A counter the kernel side could not read: never exact. */
	c = (struct bpf_counters){ .read_errors = 1 };
	figure_judge_bpf(&f, &c, &h, 0);
	assert_false(f.exact);
	assert_false(f.bound_known);
	assert_non_null(strstr(f.inexact_reason, "failed"));
}

/* Before 6.2 the bound is known, one-sided, and says so; -1: unknown. */
static void test_judge_old_kernel(void **state)
{
	struct host_facts h = test_host();
	struct bpf_counters c = {};
	struct figure f = bpf_figure();

	(void)state;
	h.rss_percpu = false;
	h.fault_pages_read = true;
	figure_judge_bpf(&f, &c, &h, 3 * CACHE_FAULTS * 16);
	assert_false(f.exact);
	assert_true(f.bound_known);
	assert_int_equal(f.error_bound_bytes, 3ULL * 66 * 16 * 4096);
	assert_non_null(strstr(f.inexact_reason, "per-thread"));
	assert_non_null(strstr(f.inexact_reason, "between the figure and the figure + the bound"));
	assert_null(strstr(f.inexact_reason, "assumes"));
	h.fault_pages_read = false;
	figure_judge_bpf(&f, &c, &h, 0);
	assert_true(f.bound_known);
	assert_int_equal(f.error_bound_bytes, 0);
	assert_non_null(strstr(f.inexact_reason, "assumes fault_around_bytes is 64 KiB"));
	figure_judge_bpf(&f, &c, &h, -1);
	assert_false(f.bound_known);
	c.drop_task_full = 1;   /* a thread not entered: its cache is not bounded */
	figure_judge_bpf(&f, &c, &h, 100);
	assert_false(f.bound_known);
}

/* One thread's charge from a reading of its cache (mm/memory.c before
 * 6.2: sync_mm_rss adds each counter in index order, the event fires in
 * the add, then it zeroes it; check_sync_rss_stat's sync runs with events
 * 66). count[] by MM_*: file, anon, swapents, shmem. */
static void test_cache_charge(void **state)
{
	int c[4] = { 3, 5, 7, 11 }, wp[4] = { -1, 1, 0, 0 }, neg[4] = { -2, 1, 0, 0 };
	int anon[4] = { 0, 40, 0, 2 }, swap[4] = { 0, 0, 4, 6 }, none[4] = { 0 };

	(void)state;
	/* The resident counters' total; swapents is not resident. */
	assert_int_equal(cache_charge_pages(c, 10, 1), 3 + 5 + 11);
	assert_int_equal(cache_charge_pages(c, 10, 0), 3 + 5 + 11);
	/* In a sync's event: the lowest counter not 0 is in the mm already. */
	assert_int_equal(cache_charge_pages(c, 66, 1), 5 + 11);
	assert_int_equal(cache_charge_pages(anon, 66, 1), 2);
	assert_int_equal(cache_charge_pages(swap, 66, 1), 6);  /* swapents' event: all stays */
	/* Switched out in a sync: which counter is added is not known. */
	assert_int_equal(cache_charge_pages(c, 66, 0), 3 + 5 + 11);
	/* wp_page_copy moves a page file -> anon: total 0; never below 0. */
	assert_int_equal(cache_charge_pages(wp, 5, 1), 0);
	assert_int_equal(cache_charge_pages(neg, 5, 1), 0);
	assert_int_equal(cache_charge_pages(none, 0, 1), 0);
	/* The cap: 66 faults of fault_pages, one page a fault at the least. */
	assert_int_equal(cache_cap_pages(16), 66 * 16);
	assert_int_equal(cache_cap_pages(0), 66);
}

/* A closed window's upper end before 6.2: the larger of the drops' and
 * the cut's sums, each CPU's excess, the worst case of threads on CPUs. */
static void test_pre62_window_upper(void **state)
{
	(void)state;
	assert_int_equal(pre62_window_upper(1000, 900, 0, 0, 1056), 1000);
	assert_int_equal(pre62_window_upper(900, 1000, 0, 0, 1056), 1000);
	assert_int_equal(pre62_window_upper(1000, 900, 70, 0, 1056), 1070);
	assert_int_equal(pre62_window_upper(1000, 900, 70, 2, 1056), 1070 + 2 * 1056);
	assert_int_equal(pre62_window_upper(1000, 900, -5, -1, 1056), 1000);
}

/* Windows fold into the run: the larger peak with its detail, the first
 * baseline, exact only if all were, the largest bound. */
static void test_merge_windows(void **state)
{
	struct figure run = {}, w1 = bpf_figure(), w2 = bpf_figure(), w3 = bpf_figure();

	(void)state;
	w1.peak_bytes = 64 * MiB;
	w1.baseline_bytes = 10 * MiB;
	w1.exact = true;
	w1.bound_known = true;
	w2.peak_bytes = 256 * MiB;
	w2.baseline_bytes = 64 * MiB;
	w2.anon_bytes = 250 * MiB;
	w2.exact = false;
	w2.bound_known = true;
	w2.error_bound_bytes = 8192;
	w2.inexact_reason = "lag";
	w3.peak_bytes = 128 * MiB;
	w3.baseline_bytes = 200 * MiB;
	w3.exact = true;
	w3.bound_known = true;
	figure_merge(&run, &w1, true);
	figure_merge(&run, &w2, false);
	figure_merge(&run, &w3, false);
	assert_int_equal(run.peak_bytes, 256 * MiB);
	assert_int_equal(run.anon_bytes, 250 * MiB);
	assert_int_equal(run.baseline_bytes, 10 * MiB);
	assert_false(run.exact);
	assert_true(run.bound_known);
	assert_int_equal(run.error_bound_bytes, 8192);
	assert_string_equal(run.inexact_reason, "lag");
}

/* rusage has a figure only in the last window, and it covers the run: the
 * windows before it are not lost. */
static void test_merge_covers_run(void **state)
{
	struct figure run = {}, w1 = { .source = "rusage" }, w2 = { .source = "rusage" };
	char why[FIGURE_REASON_MAX];

	(void)state;
	w2.measured = true;
	w2.covers_run = true;
	w2.peak_bytes = 5 * MiB;
	w2.inexact_reason = "largest single process";
	figure_merge(&run, &w1, true);
	assert_false(run.measured);
	figure_merge(&run, &w2, false);
	assert_true(run.measured);
	assert_int_equal(run.peak_bytes, 5 * MiB);
	assert_int_equal(run.windows_unmeasured, 0);
	assert_string_equal(figure_reason(&run, why, sizeof(why)), "largest single process");
}

/* The issue 26 case: window 1 exact, windows 2 to 5 lost (the helper was
 * killed). The run is not exact, names the windows, and has no bound. */
static void test_merge_lost_windows_named(void **state)
{
	struct figure run = {}, w = bpf_figure(), lost = { .source = "bpf" };
	char why[FIGURE_REASON_MAX];

	(void)state;
	w.exact = true;
	w.bound_known = true;
	w.peak_bytes = 3 * MiB;
	lost.inexact_reason = "the helper stopped answering";
	figure_merge(&run, &w, true);
	for (int i = 0; i < 4; i++)
		figure_merge(&run, &lost, false);
	assert_true(run.measured);
	assert_false(run.exact);
	assert_false(run.bound_known);
	assert_int_equal(run.windows_unmeasured, 4);
	assert_string_equal(run.unmeasured_list, "2-5");
	assert_string_equal(figure_reason(&run, why, sizeof(why)),
			    "windows 2-5 of 5 not measured (the helper stopped answering): "
			    "the peak is the other windows' only");
	figure_merge(&run, &w, false);
	figure_merge(&run, &lost, false);
	assert_string_equal(run.unmeasured_list, "2-5, 7");
}

/* A list that outgrows its room ends with "...", and stays so. */
static void test_merge_lost_list_overflow(void **state)
{
	struct figure run = {}, w = bpf_figure(), lost = { .source = "proc" };

	(void)state;
	figure_merge(&run, &w, true);
	for (int i = 0; i < 60; i++) {
		figure_merge(&run, &lost, false);
		figure_merge(&run, &w, false);
	}
	assert_int_equal(run.windows_unmeasured, 60);
	assert_true(strlen(run.unmeasured_list) < sizeof(run.unmeasured_list));
	assert_non_null(strstr(run.unmeasured_list, ", ..."));
	assert_int_equal(strncmp(run.unmeasured_list, "2, 4, 6", 7), 0);
}

/* Every sequence of one to four windows, each exact, bounded, of unknown
 * error, or not measured: the run is measured if any window was, exact
 * only if every window was exact, its bound known only if every window's
 * was, its peak the largest measured, its lost windows counted. */
enum wstate { W_EXACT, W_BOUND, W_UNKNOWN, W_LOST, W_STATES };

static struct figure window_in(enum wstate st, unsigned i)
{
	struct figure f = { .source = "bpf" };

	if (st == W_LOST) {
		f.inexact_reason = "lost";
		return f;
	}
	f.measured = true;
	f.peak_bytes = (uint64_t)(i * 7 % 5 + 1) * MiB;
	f.baseline_known = true;
	f.exact = st == W_EXACT;
	f.bound_known = st != W_UNKNOWN;
	f.error_bound_bytes = st == W_BOUND ? 4096 * (i + 1) : 0;
	f.inexact_reason = st == W_EXACT ? NULL : st == W_BOUND ? "bounded" : "unknown";
	return f;
}

static void check_sequence(const enum wstate *seq, unsigned n)
{
	struct figure run = {};
	bool any = false, all_exact = true, all_bound = true;
	unsigned lost = 0;
	uint64_t peak = 0, bound = 0;
	char why[FIGURE_REASON_MAX];

	for (unsigned i = 0; i < n; i++) {
		struct figure w = window_in(seq[i], i);

		figure_merge(&run, &w, i == 0);
		if (seq[i] == W_LOST) {
			lost++;
			all_exact = all_bound = false;
			continue;
		}
		any = true;
		all_exact = all_exact && w.exact;
		all_bound = all_bound && w.bound_known;
		peak = w.peak_bytes > peak ? w.peak_bytes : peak;
		bound = w.bound_known && w.error_bound_bytes > bound ? w.error_bound_bytes : bound;
	}
	assert_int_equal(run.measured, any);
	assert_int_equal(run.windows_folded, n);
	if (!any) {
		assert_false(run.exact);
		assert_string_equal(figure_reason(&run, why, sizeof(why)), "lost");
		return;
	}
	assert_int_equal(run.exact, all_exact);
	assert_int_equal(run.bound_known, all_bound);
	if (all_bound)
		assert_int_equal(run.error_bound_bytes, bound);
	assert_int_equal(run.peak_bytes, peak);
	assert_int_equal(run.windows_unmeasured, lost);
	assert_int_equal(run.baseline_known, seq[0] != W_LOST);
	if (all_exact)
		assert_null(figure_reason(&run, why, sizeof(why)));
	else
		assert_non_null(figure_reason(&run, why, sizeof(why)));
	if (lost)
		assert_non_null(strstr(figure_reason(&run, why, sizeof(why)), "not measured (lost)"));
}

static void test_merge_every_combination(void **state)
{
	enum wstate seq[4];
	unsigned checked = 0;

	(void)state;
	for (unsigned n = 1; n <= 4; n++) {
		unsigned total = 1;

		for (unsigned i = 0; i < n; i++)
			total *= W_STATES;
		for (unsigned code = 0; code < total; code++) {
			unsigned c = code;

			for (unsigned i = 0; i < n; i++, c /= W_STATES)
				seq[i] = (enum wstate)(c % W_STATES);
			check_sequence(seq, n);
			checked++;
		}
	}
	assert_int_equal(checked, 4 + 16 + 64 + 256);
}

/* issues 26 and 33: summed RSS's excess over unique memory, split by cause. */
static void test_unique_gap(void **state)
{
	struct figure summed = bpf_figure(), u = { .source = "bpf-memcg", .measured = true };
	struct unique_gap g;

	(void)state;
	/* One process importing a library: nothing mapped twice; the excess
	 * is file pages another cgroup had cached. */
	summed.peak_bytes = 60 * MiB;
	summed.anon_bytes = 10 * MiB;
	summed.file_bytes = 50 * MiB;
	summed.shmem_bytes = 0;
	summed.mms_at_peak = 1;
	u.peak_bytes = 12 * MiB;
	u.anon_bytes = 10 * MiB;
	u.file_bytes = 2 * MiB;
	assert_true(figure_unique_gap(&summed, &u, &g));
	assert_true(g.split_known);
	assert_int_equal(g.bytes, 48 * MiB);
	assert_int_equal(g.part[GAP_SEVERAL], 0);
	assert_int_equal(g.part[GAP_ELSEWHERE], 0);
	assert_int_equal(g.part[GAP_CACHE], 48 * MiB);
	assert_int_equal(g.dominant, GAP_CACHE);
	/* fork-share: 200 MiB parent, 3 idle forks: the anon excess is shared. */
	summed.peak_bytes = 806 * MiB;
	summed.anon_bytes = 800 * MiB;
	summed.file_bytes = 6 * MiB;
	summed.mms_at_peak = 4;
	u.peak_bytes = 202 * MiB;
	u.anon_bytes = 200 * MiB;
	u.file_bytes = 2 * MiB;
	assert_true(figure_unique_gap(&summed, &u, &g));
	assert_int_equal(g.part[GAP_SEVERAL], 600 * MiB);
	assert_int_equal(g.part[GAP_CACHE], 4 * MiB);
	assert_int_equal(g.part[GAP_ELSEWHERE], 0);
	assert_int_equal(g.dominant, GAP_SEVERAL);
	/* issue 33: a 256 MiB memfd mapped by parent and child is the tree's
	 * own shmem, charged to its cgroup, mapped twice: not "charged
	 * elsewhere" (the split used anon pages only). */
	summed.peak_bytes = 515 * MiB;
	summed.anon_bytes = 1 * MiB;
	summed.file_bytes = 2 * MiB;
	summed.shmem_bytes = 512 * MiB;
	summed.mms_at_peak = 2;
	u.peak_bytes = 258 * MiB;
	u.anon_bytes = 1 * MiB;
	u.file_bytes = 257 * MiB;       /* shmem with the page cache */
	assert_true(figure_unique_gap(&summed, &u, &g));
	assert_int_equal(g.bytes, 257 * MiB);
	/* 256 MiB mapped twice and 1 MiB of binary the child maps too: the
	 * unique file part goes to shmem first, so the binary's MiB the tree's
	 * cgroup holds is taken for shmem (about, by the tree's own file pages). */
	assert_int_equal(g.part[GAP_SEVERAL], 255 * MiB);
	assert_int_equal(g.part[GAP_CACHE], 2 * MiB);
	assert_int_equal(g.part[GAP_ELSEWHERE], 0);
	assert_int_equal(g.dominant, GAP_SEVERAL);
	/* One process mapping it (no one else): each page once, no excess from it. */
	summed.peak_bytes = 259 * MiB;
	summed.shmem_bytes = 256 * MiB;
	summed.mms_at_peak = 1;
	assert_true(figure_unique_gap(&summed, &u, &g));
	assert_int_equal(g.part[GAP_ELSEWHERE], 0);
	assert_int_equal(g.part[GAP_CACHE], 1 * MiB);
	/* issue 33: a child charged to another cgroup allocates 256 MiB: the
	 * anon excess is not all "mapped by several", and not told apart. */
	summed.peak_bytes = 386 * MiB;
	summed.anon_bytes = 384 * MiB;
	summed.file_bytes = 2 * MiB;
	summed.shmem_bytes = 0;
	summed.mms_at_peak = 3;
	u.peak_bytes = 65 * MiB;
	u.anon_bytes = 64 * MiB;
	u.file_bytes = 1 * MiB;
	u.other_cgroups = true;
	assert_true(figure_unique_gap(&summed, &u, &g));
	assert_int_equal(g.part[GAP_SEVERAL], 0);
	assert_int_equal(g.part[GAP_SEVERAL_OR_ELSEWHERE], 320 * MiB);
	assert_int_equal(g.part[GAP_CACHE], 1 * MiB);
	assert_int_equal(g.dominant, GAP_SEVERAL_OR_ELSEWHERE);
	/* The same with one address space: charged elsewhere, nothing twice. */
	summed.mms_at_peak = 1;
	assert_true(figure_unique_gap(&summed, &u, &g));
	assert_int_equal(g.part[GAP_ELSEWHERE], 320 * MiB);
	assert_int_equal(g.dominant, GAP_ELSEWHERE);
	/* The peaks at different moments: the parts never exceed the gap. */
	u.other_cgroups = false;
	summed.mms_at_peak = 2;
	u.peak_bytes = 380 * MiB;
	u.anon_bytes = 10 * MiB;
	u.file_bytes = 370 * MiB;
	assert_true(figure_unique_gap(&summed, &u, &g));
	assert_int_equal(g.bytes, 6 * MiB);
	assert_int_equal(g.part[GAP_SEVERAL] + g.part[GAP_CACHE], 6 * MiB);
	assert_int_equal(g.part[GAP_CACHE], 0);
	/* No split of the unique figure: the cause is not told apart. */
	u.peak_bytes = 202 * MiB;
	u.anon_bytes = u.file_bytes = 0;
	assert_true(figure_unique_gap(&summed, &u, &g));
	assert_false(g.split_known);
	/* No excess, or a figure not measured: no gap. */
	u.peak_bytes = 900 * MiB;
	assert_false(figure_unique_gap(&summed, &u, &g));
	u.peak_bytes = 1;
	u.measured = false;
	assert_false(figure_unique_gap(&summed, &u, &g));
	for (int c = 0; c < GAP_CAUSES; c++)
		assert_non_null(gap_cause_name((enum gap_cause)c));
	assert_null(gap_cause_name(GAP_CAUSES));
}

/* issue 33: the tree's own cgroup showed 321.8 MiB beside a unique
 * figure of 64.15 MiB and nothing flagged it. */
static void test_cgroup_disagrees(void **state)
{
	struct figure summed = bpf_figure(), u = { .source = "bpf-memcg", .measured = true },
		      cg = { .source = "cgroup-v1", .measured = true, .exclusive = true };
	int64_t diff;
	const char *against;

	(void)state;
	summed.peak_bytes = 386 * MiB;
	summed.procs_at_peak = 3;
	u.peak_bytes = 64 * MiB;
	cg.peak_bytes = 321 * MiB;
	assert_true(figure_cgroup_disagrees(&cg, &summed, &u, &diff, &against));
	assert_int_equal(diff, 257 * (int64_t)MiB);
	assert_string_equal(against, "unique memory");
	/* A spike of 64 MiB: the cgroup's page cache and kernel memory
	 * (3 MiB) are within the tolerance. */
	summed.peak_bytes = 65 * MiB;
	summed.procs_at_peak = 1;
	u.peak_bytes = 64 * MiB;
	cg.peak_bytes = 67 * MiB;
	assert_false(figure_cgroup_disagrees(&cg, &summed, &u, &diff, &against));
	assert_null(against);
	/* Within 10 % of a large figure: agrees. */
	u.peak_bytes = 1000 * MiB;
	cg.peak_bytes = 1080 * MiB;
	assert_false(figure_cgroup_disagrees(&cg, &summed, &u, &diff, &against));
	/* Without unique memory, against summed RSS, either way. */
	u.measured = false;
	summed.peak_bytes = 400 * MiB;
	summed.procs_at_peak = 4;
	cg.peak_bytes = 100 * MiB;
	assert_true(figure_cgroup_disagrees(&cg, &summed, &u, &diff, &against));
	assert_int_equal(diff, -300 * (int64_t)MiB);
	assert_string_equal(against, "summed RSS");
	assert_true(figure_cgroup_disagrees(&cg, &summed, NULL, &diff, &against));
	/* A cgroup that is not the tree's own is never compared. */
	cg.exclusive = false;
	assert_false(figure_cgroup_disagrees(&cg, &summed, &u, &diff, &against));
	cg.exclusive = true;
	cg.not_tree = "the cgroup holds other processes too";
	assert_false(figure_cgroup_disagrees(&cg, &summed, &u, &diff, &against));
	cg.not_tree = NULL;
	cg.measured = false;
	assert_false(figure_cgroup_disagrees(&cg, &summed, &u, &diff, &against));
}

/* A run's unique figure: other_cgroups once is other_cgroups for the run. */
static void test_merge_other_cgroups(void **state)
{
	struct figure run, w1 = { .source = "bpf-memcg", .measured = true, .exact = true,
				  .peak_bytes = 10 * MiB, .other_cgroups = true },
		      w2 = { .source = "bpf-memcg", .measured = true, .exact = true,
			     .peak_bytes = 20 * MiB };

	(void)state;
	figure_merge(&run, &w1, true);
	figure_merge(&run, &w2, false);
	assert_int_equal(run.peak_bytes, 20 * MiB);
	assert_true(run.other_cgroups);
}

/* hugetlb beside a run's peak: the most a window saw, with its holder,
 * whichever window had the larger RSS peak. */
static void test_merge_hugetlb(void **state)
{
	struct figure run, w1 = { .source = "proc", .measured = true, .peak_bytes = 10 * MiB,
				  .hugetlb_measured = true, .hugetlb_bytes = 512 * MiB,
				  .hugetlb_member_bytes = 256 * MiB, .hugetlb_member_pid = 7,
				  .hugetlb_member_comm = "db" },
		      w2 = { .source = "proc", .measured = true, .peak_bytes = 20 * MiB };

	(void)state;
	figure_merge(&run, &w1, true);
	figure_merge(&run, &w2, false);
	assert_int_equal(run.peak_bytes, 20 * MiB);
	assert_true(run.hugetlb_measured);
	assert_int_equal(run.hugetlb_bytes, 512 * MiB);
	assert_int_equal(run.hugetlb_member_bytes, 256 * MiB);
	assert_int_equal(run.hugetlb_member_pid, 7);
	assert_string_equal(run.hugetlb_member_comm, "db");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_percpu_lag),
		cmocka_unit_test(test_judge_bound),
		cmocka_unit_test(test_judge_exact),
		cmocka_unit_test(test_judge_drops_make_bound_unknown),
		cmocka_unit_test(test_judge_old_kernel),
		cmocka_unit_test(test_cache_charge),
		cmocka_unit_test(test_pre62_window_upper),
		cmocka_unit_test(test_merge_windows),
		cmocka_unit_test(test_merge_covers_run),
		cmocka_unit_test(test_merge_lost_windows_named),
		cmocka_unit_test(test_merge_lost_list_overflow),
		cmocka_unit_test(test_merge_every_combination),
		cmocka_unit_test(test_unique_gap),
		cmocka_unit_test(test_cgroup_disagrees),
		cmocka_unit_test(test_merge_other_cgroups),
		cmocka_unit_test(test_merge_hugetlb),
	};

	return cmocka_run_group_tests_name("figure", tests, NULL, NULL);
}
