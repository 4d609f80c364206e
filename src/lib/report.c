// SPDX-License-Identifier: MIT
#include <errno.h>
#include <string.h>
#include "json.h"
#include "report.h"
#include "figure.h"
#include "units.h"

const char *report_kind_name(enum report_kind k)
{
	static const char *const names[] = {
#define REPORT_KIND_NAME(id, name) [REPORT_##id] = name,
		REPORT_KINDS(REPORT_KIND_NAME)
#undef REPORT_KIND_NAME
	};

	return (size_t)k < sizeof(names) / sizeof(names[0]) ? names[k] : "?";
}

#define SHARED_NOTE "summed RSS: shared and copy-on-write pages count once per address space that maps them"

static const char *exact_path_name(int err)
{
	switch (err) {
	case 0:
		return "per-cpu-sum";
	case -E2BIG:
		return "unavailable: more CPUs than covered";
	case -EOPNOTSUPP:
		return "unavailable: kernel lacks it";
	default:
		return "unavailable: per-CPU offsets not learned";
	}
}

static double since(uint64_t t0_ns, uint64_t t_ns)
{
	return t_ns > t0_ns ? (double)(t_ns - t0_ns) / 1e9 : 0;
}

/* A figure whose scope is not the tree (never the headline), and a run's
 * windows without a figure. */
static void json_honesty(struct json_writer *w, const struct figure *f)
{
	if (f->not_tree) {
		json_kv_bool(w, "comparable", false);
		json_kv_string(w, "not_comparable", f->not_tree);
	}
	if (f->windows_unmeasured)
		json_kv_string(w, "windows_not_measured", f->unmeasured_list);
}

/* The members of one figure, inside an object the caller opened. */
static void json_figure(struct json_writer *w, const struct figure *f, uint64_t t0_ns, unsigned top)
{
	char why[FIGURE_REASON_MAX];

	json_kv_string(w, "source", f->source);
	json_kv_bool(w, "exact", f->exact);
	json_key(w, "error_bound_bytes");
	if (f->exact)
		json_uint(w, 0);
	else if (f->bound_known)
		json_uint(w, f->error_bound_bytes);
	else
		json_null(w);
	json_kv_string(w, "inexact_reason", figure_reason(f, why, sizeof(why)));
	json_kv_string(w, "scope", f->scope);
	json_honesty(w, f);
	if (!f->measured) {
		/* Not measured is null, never a 0 that looks like a figure. */
		json_key(w, "peak_bytes");
		json_null(w);
		json_key(w, "baseline_bytes");
		json_null(w);
		json_key(w, "growth_bytes");
		json_null(w);
		return;
	}
	json_kv_uint(w, "peak_bytes", f->peak_bytes);
	json_key(w, "baseline_bytes");
	if (f->baseline_known)
		json_uint(w, f->baseline_bytes);
	else
		json_null(w);
	json_key(w, "growth_bytes");
	if (f->baseline_known)
		json_int(w, (int64_t)(f->peak_bytes - f->baseline_bytes));
	else
		json_null(w);
	if (f->has_detail) {
		json_kv_double(w, "peak_at_s", since(t0_ns, f->peak_mono_ns), 6);
		json_key(w, "breakdown_at_peak");
		json_begin_object(w);
		json_kv_uint(w, "anon_bytes", f->anon_bytes);
		json_kv_uint(w, "file_bytes", f->file_bytes);
		json_kv_uint(w, "shmem_bytes", f->shmem_bytes);
		json_end_object(w);
		json_kv_int(w, "processes_at_peak", f->procs_at_peak);
		json_kv_int(w, "mms_at_peak", f->mms_at_peak);
	}
	if (f->has_holders) {
		size_t n = f->n_holders < top ? f->n_holders : top;

		json_kv_uint(w, "holders_bytes", f->holders_bytes);
		json_kv_uint(w, "holders_total", f->holders_total);
		json_kv_bool(w, "holders_truncated", f->holders_truncated);
		json_key(w, "processes");
		json_begin_array(w);
		for (size_t i = 0; i < n; i++) {
			json_begin_object(w);
			json_kv_int(w, "pid", f->holders[i].pid);
			json_kv_string(w, "comm", f->holders[i].comm);
			json_kv_uint(w, "bytes", f->holders[i].bytes);
			json_kv_uint(w, "own_peak_bytes", f->holders[i].own_peak_bytes);
			json_end_object(w);
		}
		json_end_array(w);
	}
	if (f->cgroup_path[0]) {
		json_kv_string(w, "cgroup", f->cgroup_path);
		json_kv_bool(w, "exclusive", f->exclusive);
		if (f->cgroup_entry)
			json_kv_string(w, "cgroup_entry", f->cgroup_entry);
	}
	if (f->interval_ns) {
		json_kv_double(w, "interval_s", (double)f->interval_ns / 1e9, 6);
		json_kv_uint(w, "samples", f->samples);
		json_kv_uint(w, "vanished", f->vanished);
	}
}

/* s for a terminal: a command name is whatever its binary was called, and
 * a name holding ESC [2J would clear the screen. Control and non-ASCII
 * bytes become \xNN. */
const char *printable(const char *s, char *out, size_t len)
{
	size_t o = 0;

	for (; *s && o + 5 < len; s++) {
		unsigned char c = (unsigned char)*s;

		if (c >= 0x20 && c < 0x7f)
			out[o++] = (char)c;
		else
			o += (size_t)snprintf(out + o, len - o, "\\x%02x", c);
	}
	out[o] = '\0';
	return out;
}

static void json_counters(struct json_writer *w, const struct bpf_counters *c)
{
	json_key(w, "counters");
	json_begin_object(w);
	json_kv_uint(w, "events", c->events);
	json_kv_uint(w, "missed_events", c->missed_events);
	json_kv_uint(w, "drops", c->drop_mm_full + c->drop_task_full);
	json_kv_uint(w, "drop_mm_map_full", c->drop_mm_full);
	json_kv_uint(w, "drop_process_map_full", c->drop_task_full);
	json_kv_uint(w, "peak_races", c->peak_races);
	json_kv_uint(w, "mms_tracked", c->mms_entered);
	json_kv_uint(w, "processes_tracked", c->procs_entered);
	json_kv_uint(w, "mms_left", c->mms_left);
	json_kv_uint(w, "processes_left", c->procs_left);
	json_kv_uint(w, "count_takes", c->count_takes);
	json_kv_uint(w, "settles", c->settles);
	json_kv_uint(w, "read_errors", c->read_errors);
	if (c->sums_checked) {
		json_key(w, "sum_check");
		json_begin_object(w);
		json_kv_uint(w, "mms", c->sums_mms);
		json_kv_uint(w, "counters_off", c->sums_off);
		json_kv_int(w, "max_off_pages", c->sums_max_off_pages);
		json_end_object(w);
	}
	json_end_object(w);
}

static void json_host(struct json_writer *w, const struct host_facts *h)
{
	json_key(w, "host");
	json_begin_object(w);
	json_kv_string(w, "kernel", h->kernel);
	json_kv_int(w, "cpus", h->cpus);
	json_kv_int(w, "page_size", h->page_size);
	json_kv_bool(w, "btf", h->btf);
	/* What the kernel side found, or null when it did not load. */
	json_kv_string(w, "rss_counters", !h->bpf_loaded ? NULL :
			h->rss_percpu ? "percpu" : "atomic+task-cache");
	json_kv_string(w, "teardown_hook", h->bpf_loaded ? h->teardown_hook : NULL);
	json_kv_string(w, "exact_path", h->bpf_loaded ? exact_path_name(h->exact_path_err) : NULL);
	json_kv_string(w, "bpf_load", h->bpf_load);
	if (h->bpf_load && !strcmp(h->bpf_load, "helper"))
		json_kv_string(w, "helper_socket", h->helper_path);
	if (h->bpf_loaded) {
		json_key(w, "bpf_startup_ms");
		json_begin_object(w);
		json_kv_double(w, "probe", (double)(int64_t)(h->probe_ms * 100 + 0.5) / 100, 12);
		json_kv_double(w, "load", (double)(int64_t)(h->load_ms * 100 + 0.5) / 100, 12);
		json_kv_double(w, "learn", (double)(int64_t)(h->learn_ms * 100 + 0.5) / 100, 12);
		json_kv_double(w, "attach", (double)(int64_t)(h->attach_ms * 100 + 0.5) / 100, 12);
		json_end_object(w);
	}
	json_kv_string(w, "privileges", h->privileges);
	json_end_object(w);
}

/* The summed figure beside the unique one: the primary, or with
 * --measure unique (the unique figure leads) the first of the others. */
static const struct figure *summed_of(const struct report *r)
{
	const struct figure *summed = &r->primary, *u = r->unique;

	if (u && u->measured && summed->source && !strcmp(summed->source, u->source) && r->n_others)
		summed = &r->others[0];
	return summed;
}

/* Inside the unique object: summed RSS's excess over it, and its causes
 * (a cause that cannot be told apart from another is null, and their sum
 * is under its own key). */
static void json_unique_gap(struct json_writer *w, const struct report *r)
{
	static const char *const keys[GAP_CAUSES] = {
		[GAP_SEVERAL] = "mapped_by_several_bytes",
		[GAP_ELSEWHERE] = "charged_elsewhere_bytes",
		[GAP_SEVERAL_OR_ELSEWHERE] = "several_or_elsewhere_bytes",
		[GAP_CACHE] = "page_cache_bytes",
	};
	bool ambiguous;
	struct unique_gap g;

	if (!figure_unique_gap(summed_of(r), r->unique, &g))
		return;
	ambiguous = g.part[GAP_SEVERAL_OR_ELSEWHERE] != 0;
	json_key(w, "summed_excess");
	json_begin_object(w);
	json_kv_uint(w, "bytes", g.bytes);
	for (int c = 0; c < GAP_CAUSES; c++) {
		if (c == GAP_SEVERAL_OR_ELSEWHERE && !ambiguous)
			continue;
		json_key(w, keys[c]);
		if (!g.split_known || (ambiguous && (c == GAP_SEVERAL || c == GAP_ELSEWHERE)))
			json_null(w);
		else
			json_uint(w, g.part[c]);
	}
	json_kv_string(w, "dominant", g.split_known ? gap_cause_name(g.dominant) : NULL);
	json_end_object(w);
}

static const char HUGETLB_SCOPE[] = "hugetlb pages the tree held (HugetlbPages of /proc/PID/status): "
				    "not in RSS";

/* The figure that read hugetlb (the proc sampler's), or NULL. */
static const struct figure *hugetlb_of(const struct report *r)
{
	if (r->primary.hugetlb_measured)
		return &r->primary;
	for (size_t i = 0; i < r->n_others; i++)
		if (r->others[i].hugetlb_measured)
			return &r->others[i];
	return NULL;
}

/* "hugetlb": what the tree held beside RSS; 0 exactly where this machine
 * has no huge pages; not measured (null) where it has and none was read. */
static void json_hugetlb(struct json_writer *w, const struct report *r)
{
	const struct figure *f = hugetlb_of(r);

	json_key(w, "hugetlb");
	if (!r->host) {
		json_null(w);
		return;
	}
	json_begin_object(w);
	if (f) {
		json_kv_string(w, "source", f->source);
		json_kv_bool(w, "exact", false);
		json_kv_string(w, "inexact_reason", f->inexact_reason);
		json_kv_uint(w, "peak_bytes", f->hugetlb_bytes);
		json_kv_uint(w, "member_peak_bytes", f->hugetlb_member_bytes);
		json_kv_int(w, "member_pid", f->hugetlb_member_pid);
		json_kv_string(w, "member_comm", f->hugetlb_member_comm);
		json_kv_string(w, "scope", HUGETLB_SCOPE);
	} else if (!r->host->hugetlb_possible) {
		json_kv_string(w, "source", "sysfs");
		json_kv_bool(w, "exact", true);
		json_kv_uint(w, "peak_bytes", 0);
		json_kv_string(w, "scope", "no huge pages on this machine (nr_hugepages and "
			       "nr_overcommit_hugepages 0 for every size): none can be held");
	} else {
		json_kv_string(w, "source", "unavailable");
		json_kv_bool(w, "exact", false);
		json_kv_string(w, "inexact_reason", "huge pages are configured but no process's "
			       "HugetlbPages was read");
		json_key(w, "peak_bytes");
		json_null(w);
	}
	json_end_object(w);
}

/* The tree's own cgroup against the tree's figures (figure_cgroup_disagrees). */
static void json_cgroup_disagrees(struct json_writer *w, const struct report *r, const struct figure *f)
{
	int64_t diff;
	const char *against;

	if (!figure_cgroup_disagrees(f, summed_of(r), r->unique, &diff, &against))
		return;
	json_kv_string(w, "disagrees_with", against);
	json_kv_int(w, "disagreement_bytes", diff);
}

void report_json_extra(const struct report *r, const char *extra, FILE *out)
{
	struct json_writer w;
	size_t i;

	json_init(&w, out);
	json_begin_object(&w);
	json_kv_string(&w, "record", report_kind_name(r->kind));
	if (r->window)
		json_kv_uint(&w, "window", r->window);
	else
		json_kv_uint(&w, "windows", r->windows);
	json_kv_double(&w, "start_s", r->start_s, 6);
	json_kv_double(&w, "end_s", r->end_s, 6);
	json_figure(&w, &r->primary, r->t0_ns, r->top);
	json_key(&w, "other_sources");
	json_begin_array(&w);
	for (i = 0; i < r->n_others; i++) {
		json_begin_object(&w);
		json_figure(&w, &r->others[i], r->t0_ns, r->top);
		json_cgroup_disagrees(&w, r, &r->others[i]);
		json_end_object(&w);
	}
	json_end_array(&w);
	json_key(&w, "not_used");
	json_begin_array(&w);
	for (i = 0; i < r->n_skipped; i++)
		json_string(&w, r->skipped[i]);
	json_end_array(&w);
	json_key(&w, "unique");
	if (r->unique) {
		json_begin_object(&w);
		json_figure(&w, r->unique, r->t0_ns, r->top);
		json_unique_gap(&w, r);
		json_end_object(&w);
	} else {
		json_null(&w);
	}
	json_hugetlb(&w, r);
	json_kv_string(&w, "measure", SHARED_NOTE);
	json_raw_members(&w, extra);
	if (r->counters)
		json_counters(&w, r->counters);
	if (r->host)
		json_host(&w, r->host);
	json_end_object(&w);
	json_finish(&w);
	fflush(out);
}

/* "512.3 MiB (bpf, exact)", "... ± 2.2 MiB (bpf, not exact)", "... (proc, not exact, error unknown)" */
static void human_peak(const struct figure *f, char *buf, size_t len)
{
	char peak[32], bound[32];

	if (!f->measured) {
		snprintf(buf, len, "not measured (%s)", f->inexact_reason ? f->inexact_reason : f->source);
		return;
	}
	format_bytes(f->peak_bytes, peak, sizeof(peak));
	if (f->exact)
		snprintf(buf, len, "%s (%s, exact)", peak, f->source);
	else if (f->bound_known)
		snprintf(buf, len, "%s ± %s (%s, not exact)", peak,
			 format_bytes(f->error_bound_bytes, bound, sizeof(bound)), f->source);
	else
		snprintf(buf, len, "%s (%s, not exact, error unknown)", peak, f->source);
}

void report_human_window(const struct report *r, FILE *out)
{
	const struct figure *f = &r->primary;
	char peak[128], base[32], growth[32];

	human_peak(f, peak, sizeof(peak));
	fprintf(out, "peakbpf: window %u [%.3f s - %.3f s]: peak %s", r->window, r->start_s, r->end_s, peak);
	if (f->measured && f->baseline_known)
		fprintf(out, ", baseline %s, growth %s",
			format_bytes(f->baseline_bytes, base, sizeof(base)),
			format_bytes(f->peak_bytes - f->baseline_bytes, growth, sizeof(growth)));
	if (f->measured && f->has_detail)
		fprintf(out, ", at %.3f s", since(r->t0_ns, f->peak_mono_ns));
	fputc('\n', out);
}

/* Who held the memory at the peak: the top holders, largest first. */
static void human_holders(const struct figure *f, unsigned top, FILE *out)
{
	size_t n = f->n_holders < top ? f->n_holders : top;
	char all[32], bytes[32], own[32];

	fprintf(out, "  held at the peak (%s in all):\n", format_bytes(f->holders_bytes, all, sizeof(all)));
	for (size_t i = 0; i < n; i++) {
		char comm[4 * sizeof(f->holders[i].comm)];

		fprintf(out, "    %8d %-16s %10s  (own peak %s)\n", f->holders[i].pid,
			printable(f->holders[i].comm, comm, sizeof(comm)),
			format_bytes(f->holders[i].bytes, bytes, sizeof(bytes)),
			format_bytes(f->holders[i].own_peak_bytes, own, sizeof(own)));
	}
	if (f->holders_total > n)
		fprintf(out, "    ... %zu more (-t N lists more)\n", f->holders_total - n);
}

/*
 * One line when summed RSS and the unique memory differ by more than
 * 10 %: how many pages summed RSS counts beyond it, and why (issue 26:
 * one process importing numpy has no fork-shared page; its excess is file
 * pages another cgroup had cached).
 */
static void human_unique(const struct report *r, FILE *out)
{
	const struct figure *summed = summed_of(r), *u = r->unique;
	char peak[128], b[32];
	long page = r->host && r->host->page_size > 0 ? r->host->page_size : 4096;
	struct unique_gap g;
	const char *sep = "mostly";
	bool done[GAP_CAUSES] = { false };

	if (!u || !unique_differs(summed, u) || !figure_unique_gap(summed, u, &g))
		return;
	human_peak(u, peak, sizeof(peak));
	fprintf(out, "  summed RSS counts %llu pages more than the tree's unique memory, which peaked at %s: ",
		(unsigned long long)(g.bytes / (uint64_t)page), peak);
	if (!g.split_known) {
		fprintf(out, "%s, or %s\n", gap_cause_name(GAP_SEVERAL_OR_ELSEWHERE), gap_cause_name(GAP_CACHE));
		return;
	}
	/* The causes largest first; those of 0 B left out, but the first. */
	for (int n = 0; n < GAP_CAUSES; n++) {
		int best = -1;

		for (int c = 0; c < GAP_CAUSES; c++)
			if (!done[c] && (best < 0 || g.part[c] > g.part[best]))
				best = c;
		done[best] = true;
		if (n && !g.part[best])
			break;
		fprintf(out, "%s %s (%s)", sep, gap_cause_name((enum gap_cause)best),
			format_bytes(g.part[best], b, sizeof(b)));
		sep = n ? "," : ", the rest";
	}
	fputc('\n', out);
}

/* After an also: line of the tree's own cgroup, when it disagrees with
 * the tree's figures: by how much, and what it counts that they do not. */
static void human_cgroup_disagrees(const struct report *r, const struct figure *f, FILE *out)
{
	int64_t diff;
	const char *against;
	char b[32];

	if (!figure_cgroup_disagrees(f, summed_of(r), r->unique, &diff, &against))
		return;
	format_bytes((uint64_t)(diff < 0 ? -diff : diff), b, sizeof(b));
	if (diff > 0)
		fprintf(out, " [disagrees: %s more than the tree's %s: page cache, kernel memory, or "
			"memory of cgroups below it, which the tree's figures do not count]", b, against);
	else if (!strcmp(against, "summed RSS"))
		fprintf(out, " [disagrees: %s less than summed RSS: pages mapped by several processes "
			"count once here]", b);
	else
		fprintf(out, " [disagrees: %s less than the tree's %s]", b, against);
}

/* Where this machine has huge pages: what the tree held of them, which RSS
 * leaves out. */
static void human_hugetlb(const struct report *r, FILE *out)
{
	const struct figure *f = hugetlb_of(r);
	char a[32], b[32], comm[64];

	if (!r->host || !r->host->hugetlb_possible)
		return;
	if (!f) {
		fputs("  hugetlb: not measured (no process's HugetlbPages was read); RSS does not "
		      "include hugetlb pages\n", out);
		return;
	}
	fprintf(out, "  hugetlb: %s at most in the tree (proc, not exact: %s), the most one process "
		"held %s", format_bytes(f->hugetlb_bytes, a, sizeof(a)), f->inexact_reason,
		format_bytes(f->hugetlb_member_bytes, b, sizeof(b)));
	if (f->hugetlb_member_bytes && f->hugetlb_member_pid)
		fprintf(out, " (%d %s)", (int)f->hugetlb_member_pid,
			printable(f->hugetlb_member_comm, comm, sizeof(comm)));
	fputs(" — not in RSS\n", out);
}

/* Which way the bpf source came (host_facts.bpf_load). */
static void human_load(const struct host_facts *h, FILE *out)
{
	if (!h || !h->bpf_load)
		return;
	if (!strcmp(h->bpf_load, "helper"))
		fprintf(out, "  bpf: through the helper, peakbpf serve at %s (--no-helper loads it here)\n",
			h->helper_path);
	else if (!strcmp(h->bpf_load, "reused"))
		fprintf(out, "  bpf: the BPF load of an earlier run of this process, reused\n");
	else
		fprintf(out, "  bpf: loaded in this process in %.1f ms\n",
			h->probe_ms + h->load_ms + h->learn_ms + h->attach_ms);
}

void report_human_extra(const struct report *r, const char *extra, FILE *out)
{
	const struct figure *f = &r->primary;
	char peak[128], base[32], growth[32], a[32], fl[32], s[32], why[FIGURE_REASON_MAX];
	size_t i;

	human_peak(f, peak, sizeof(peak));
	fprintf(out, "peakbpf: peak %s", peak);
	if (f->measured && f->has_detail)
		fprintf(out, " at %.3f s", since(r->t0_ns, f->peak_mono_ns));
	if (f->measured && f->baseline_known)
		fprintf(out, "; baseline %s, growth %s",
			format_bytes(f->baseline_bytes, base, sizeof(base)),
			format_bytes(f->peak_bytes - f->baseline_bytes, growth, sizeof(growth)));
	fputc('\n', out);
	if (f->measured && f->has_detail)
		fprintf(out, "  at the peak: anon %s, file %s, shmem %s in %lld process%s (%lld address space%s)\n",
			format_bytes(f->anon_bytes, a, sizeof(a)),
			format_bytes(f->file_bytes, fl, sizeof(fl)),
			format_bytes(f->shmem_bytes, s, sizeof(s)),
			(long long)f->procs_at_peak, f->procs_at_peak == 1 ? "" : "es",
			(long long)f->mms_at_peak, f->mms_at_peak == 1 ? "" : "s");
	if (f->measured && !f->exact && figure_reason(f, why, sizeof(why)))
		fprintf(out, "  not exact: %s\n", figure_reason(f, why, sizeof(why)));
	if (f->measured && f->has_holders && r->top && f->n_holders)
		human_holders(f, r->top, out);
	if (f->scope)
		fprintf(out, "  measures: %s\n", f->scope);
	human_load(r->host, out);
	for (i = 0; i < r->n_others; i++) {
		human_peak(&r->others[i], peak, sizeof(peak));
		fprintf(out, "  also: %s", peak);
		if (r->others[i].scope)
			fprintf(out, " — %s", r->others[i].scope);
		if (r->others[i].not_tree)
			fprintf(out, " [%s]", r->others[i].not_tree);
		human_cgroup_disagrees(r, &r->others[i], out);
		fputc('\n', out);
	}
	for (i = 0; i < r->n_skipped; i++)
		fprintf(out, "  not used: %s\n", r->skipped[i]);
	human_unique(r, out);
	human_hugetlb(r, out);
	if (extra)
		fputs(extra, out);
	if (r->counters && r->counters->drop_mm_full + r->counters->drop_task_full + r->counters->missed_events)
		fprintf(out, "  lost: %llu mms and %llu processes not tracked (map full), %llu events missed\n",
			(unsigned long long)r->counters->drop_mm_full,
			(unsigned long long)r->counters->drop_task_full,
			(unsigned long long)r->counters->missed_events);
	if (r->counters)
		fprintf(out, "  %s\n", SHARED_NOTE);
}
