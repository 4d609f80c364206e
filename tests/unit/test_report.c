// SPDX-License-Identifier: MIT
/* Reports: JSON and summary, with a caller's extra part (the CLI's is
 * test_run_report.c's); the kernel side's gate and bound; privileges. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "host.h"
#include "report.h"
#include <linux/types.h>
#include "tracker.h"

#define MiB (1024ULL * 1024)
#define SEC 1000000000ULL

static struct host_facts test_host(void)
{
	struct host_facts h = {
		.cpus = 2, .page_size = 4096, .btf = true, .bpf_loaded = true, .rss_percpu = true,
		.teardown_hook = "tp_btf/exit_mmap", .privileges = "root",
	};

	snprintf(h.kernel, sizeof(h.kernel), "6.18.0");
	return h;
}

static struct figure bpf_figure(void)
{
	struct figure f = {
		.source = "bpf", .measured = true, .scope = "summed RSS of the tree",
		.peak_bytes = 512 * MiB, .baseline_known = true, .baseline_bytes = 0,
		.has_detail = true, .peak_mono_ns = 11 * SEC + SEC / 2,
		.anon_bytes = 500 * MiB, .file_bytes = 12 * MiB,
		.procs_at_peak = 3, .mms_at_peak = 3,
	};

	return f;
}

struct fixture {
	struct host_facts host;
	struct bpf_counters counters;
	struct report rec;
};

static void make_fixture(struct fixture *x)
{
	memset(x, 0, sizeof(*x));
	x->host = test_host();
	x->counters.events = 1000;
	x->counters.mms_entered = 3;
	x->counters.procs_entered = 3;
	x->rec = (struct report){
		.kind = REPORT_RUN, .windows = 1, .start_s = 0, .end_s = 2.0, .t0_ns = 10 * SEC,
		.primary = bpf_figure(),
		.counters = &x->counters, .host = &x->host,
	};
}

/* A caller's part of the report (the CLI's: src/cli/run_report.c, its
 * own test), rendered with the library's. */
#define EXTRA_JSON "\"command\":{\"argv\":[\"sh\"]}"
#define EXTRA_HUMAN "  command exited 3 after 2.000 s\n"

static void rec_json(const struct report *r, FILE *out)
{
	report_json_extra(r, EXTRA_JSON, out);
}

static void rec_human(const struct report *r, FILE *out)
{
	report_human_extra(r, EXTRA_HUMAN, out);
}

static char *render(void (*fn)(const struct report *, FILE *), const struct report *r)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	fn(r, f);
	fclose(f);
	return buf;
}

static void test_json_record(void **state)
{
	struct fixture x;
	char *s;

	(void)state;
	make_fixture(&x);
	figure_judge_bpf(&x.rec.primary, &x.counters, &x.host, 558);
	s = render(rec_json, &x.rec);
	assert_non_null(strstr(s, "{\"record\":\"run\",\"windows\":1,\"start_s\":0,\"end_s\":2,"
				  "\"source\":\"bpf\",\"exact\":false,\"error_bound_bytes\":2285568,"));
	assert_non_null(strstr(s, "\"peak_bytes\":536870912,\"baseline_bytes\":0,\"growth_bytes\":536870912,"
				  "\"peak_at_s\":1.5,"));
	assert_non_null(strstr(s, "\"breakdown_at_peak\":{\"anon_bytes\":524288000,\"file_bytes\":12582912,\"shmem_bytes\":0}"));
	assert_non_null(strstr(s, "\"other_sources\":[],\"not_used\":[]"));
	assert_non_null(strstr(s, EXTRA_JSON));
	assert_non_null(strstr(s, "\"rss_counters\":\"percpu\""));
	assert_ptr_equal(strchr(s, '\n'), s + strlen(s) - 1); /* one line */
	free(s);
}

static void test_json_window_and_others(void **state)
{
	struct fixture x;
	struct figure others[2] = {
		{ .source = "cgroup-v1", .measured = true, .peak_bytes = 600 * MiB,
		  .baseline_known = false, .scope = "cgroup", .inexact_reason = "page cache",
		  .cgroup_path = "/sys/fs/cgroup/memory/peakbpf-1", .exclusive = true },
		{ .source = "rusage", .measured = false, .inexact_reason = "whole run only" },
	};
	const char *skipped[] = { "proc: not needed" };
	char *s;

	(void)state;
	make_fixture(&x);
	x.rec.kind = REPORT_WINDOW;
	x.rec.window = 2;
	x.rec.others = others;
	x.rec.n_others = 2;
	x.rec.skipped = skipped;
	x.rec.n_skipped = 1;
	s = render(rec_json, &x.rec);
	assert_non_null(strstr(s, "{\"record\":\"window\",\"window\":2,"));
	assert_non_null(strstr(s, "\"other_sources\":[{\"source\":\"cgroup-v1\",\"exact\":false,"
				  "\"error_bound_bytes\":null,\"inexact_reason\":\"page cache\",\"scope\":\"cgroup\","
				  "\"peak_bytes\":629145600,\"baseline_bytes\":null,\"growth_bytes\":null,"
				  "\"cgroup\":\"/sys/fs/cgroup/memory/peakbpf-1\",\"exclusive\":true,"
				  /* 600 MiB beside 512 of summed RSS: more than the tolerance */
				  "\"disagrees_with\":\"summed RSS\",\"disagreement_bytes\":92274688},"
				  "{\"source\":\"rusage\",\"exact\":false,\"error_bound_bytes\":null,"
				  "\"inexact_reason\":\"whole run only\",\"scope\":null,"
				  "\"peak_bytes\":null,\"baseline_bytes\":null,\"growth_bytes\":null}]"));
	assert_non_null(strstr(s, "\"not_used\":[\"proc: not needed\"]"));
	free(s);
}

/* Not measured is null in JSON and words in the summary, never 0. */
static void test_not_measured_is_never_zero(void **state)
{
	struct fixture x;
	char *s;

	(void)state;
	make_fixture(&x);
	x.rec.primary = (struct figure){ .source = "unavailable", .inexact_reason = "no source could be used" };
	s = render(rec_json, &x.rec);
	assert_non_null(strstr(s, "\"peak_bytes\":null,\"baseline_bytes\":null,\"growth_bytes\":null"));
	assert_non_null(strstr(s, "\"error_bound_bytes\":null"));
	free(s);
	s = render(rec_human, &x.rec);
	assert_non_null(strstr(s, "peak not measured (no source could be used)"));
	assert_null(strstr(s, "peak 0"));
	free(s);
}

/* issue 26: a shared cgroup's figure is marked not comparable, in JSON
 * and in the summary; a run with lost windows names them. */
static void test_not_comparable_and_lost_windows(void **state)
{
	struct fixture x;
	struct figure others[1] = {
		{ .source = "cgroup-v1", .measured = true, .peak_bytes = 900 * MiB, .scope = "shared cgroup",
		  .inexact_reason = "page cache", .not_tree = "not comparable: the cgroup holds others" },
	};
	char *s;

	(void)state;
	make_fixture(&x);
	x.rec.others = others;
	x.rec.n_others = 1;
	x.rec.primary.exact = true;
	x.rec.primary.windows_folded = 5;
	x.rec.primary.windows_unmeasured = 4;
	x.rec.primary.exact = false;
	x.rec.primary.inexact_reason = NULL;
	snprintf(x.rec.primary.unmeasured_list, sizeof(x.rec.primary.unmeasured_list), "2-5");
	snprintf(x.rec.primary.unmeasured_why, sizeof(x.rec.primary.unmeasured_why), "helper gone");
	s = render(rec_json, &x.rec);
	assert_non_null(strstr(s, "\"comparable\":false,\"not_comparable\":\"not comparable: the cgroup holds others\""));
	assert_non_null(strstr(s, "\"inexact_reason\":\"windows 2-5 of 5 not measured (helper gone): "
				  "the peak is the other windows' only\""));
	assert_non_null(strstr(s, "\"windows_not_measured\":\"2-5\""));
	free(s);
	s = render(rec_human, &x.rec);
	assert_non_null(strstr(s, "  not exact: windows 2-5 of 5 not measured (helper gone)"));
	assert_non_null(strstr(s, "— shared cgroup [not comparable: the cgroup holds others]"));
	free(s);
}

/* issue 26: -p of a kernel thread or a zombie: no address space. */
static void test_stat_no_mm(void **state)
{
	(void)state;
	assert_string_equal(host_stat_no_mm("2 (kthreadd) S 0 0 0 0 -1 2129984 0 0 0 0 0 0"),
			    "a kernel thread");
	assert_non_null(strstr(host_stat_no_mm("77 (a) b) Z 1 77 77 0 -1 4227136 0 0"), "zombie"));
	assert_null(host_stat_no_mm("77 (sleep) S 1 77 77 0 -1 4194304 0 0 0 0"));
	/* A command name holding ") Z " is not a state. */
	assert_null(host_stat_no_mm("77 (x) Z 1 (y) S 1 77 77 0 -1 4194304 0 0"));
	assert_null(host_stat_no_mm("garbage"));
	assert_null(host_stat_no_mm("1 (init) S 0 1 1"));
	assert_null(host_stat_no_mm(NULL));
}

/* A command name reaches the terminal with its control bytes escaped. */
static void test_printable(void **state)
{
	char out[64];

	(void)state;
	assert_string_equal(printable("workload", out, sizeof(out)), "workload");
	assert_string_equal(printable("a\x1b[2Jb", out, sizeof(out)), "a\\x1b[2Jb");
	assert_string_equal(printable("t\tab\x7f\xc3\xa9", out, sizeof(out)), "t\\x09ab\\x7f\\xc3\\xa9");
	/* Never past the buffer, and always terminated. */
	assert_string_equal(printable("\x01\x02\x03", out, 9), "\\x01");
}

static void test_human_summary(void **state)
{
	struct fixture x;
	struct figure other = { .source = "cgroup-v1", .measured = true, .peak_bytes = 600 * MiB,
				.scope = "the tree's own cgroup" };
	char *s;

	(void)state;
	make_fixture(&x);
	figure_judge_bpf(&x.rec.primary, &x.counters, &x.host, 558);
	x.rec.others = &other;
	x.rec.n_others = 1;
	s = render(rec_human, &x.rec);
	assert_non_null(strstr(s, "peakbpf: peak 512.0 MiB ± 2.2 MiB (bpf, not exact) at 1.500 s; "
				  "baseline 0 B, growth 512.0 MiB\n"));
	assert_non_null(strstr(s, "anon 500.0 MiB, file 12.0 MiB, shmem 0 B in 3 processes"));
	assert_non_null(strstr(s, "  also: 600.0 MiB (cgroup-v1, not exact, error unknown) — the tree's own cgroup\n"));
	assert_non_null(strstr(s, "command exited 3 after 2.000 s"));
	assert_non_null(strstr(s, "once per address space"));
	assert_null(strstr(s, "lost:"));
	free(s);

	x.counters.drop_task_full = 2;
	figure_judge_bpf(&x.rec.primary, &x.counters, &x.host, 0);
	s = render(rec_human, &x.rec);
	assert_non_null(strstr(s, "error unknown"));
	assert_non_null(strstr(s, "lost: 0 mms and 2 processes"));
	free(s);
}

static void test_human_exact_and_window(void **state)
{
	struct fixture x;
	char *s;

	(void)state;
	make_fixture(&x);
	figure_judge_bpf(&x.rec.primary, &x.counters, &x.host, 0);
	s = render(rec_human, &x.rec);
	assert_non_null(strstr(s, "peak 512.0 MiB (bpf, exact)"));
	assert_null(strstr(s, "not exact"));
	free(s);

	x.rec.kind = REPORT_WINDOW;
	x.rec.window = 3;
	x.rec.start_s = 1.0;
	x.rec.primary.baseline_bytes = 256 * MiB;
	s = render(report_human_window, &x.rec);
	assert_string_equal(s, "peakbpf: window 3 [1.000 s - 2.000 s]: peak 512.0 MiB (bpf, exact), "
			       "baseline 256.0 MiB, growth 256.0 MiB, at 1.500 s\n");
	free(s);
}

/* The unique memory: its own field (null when not asked), and one line
 * when it is more than 10 % below summed RSS. */
static void test_unique(void **state)
{
	struct fixture x;
	struct figure u = { .source = "bpf-memcg", .measured = true, .exact = true, .scope = "unique",
			    .peak_bytes = 128 * MiB, .baseline_known = true,
			    .anon_bytes = 120 * MiB, .file_bytes = 8 * MiB };
	struct figure none = { .source = "unavailable", .scope = "unique",
			       .inexact_reason = "this kernel has no memcg statistic tracepoints (6.13+)" };
	char *s;

	(void)state;
	make_fixture(&x);
	figure_judge_bpf(&x.rec.primary, &x.counters, &x.host, 0);
	s = render(rec_json, &x.rec);
	assert_non_null(strstr(s, "\"unique\":null,"));
	free(s);

	x.rec.unique = &u;
	s = render(rec_json, &x.rec);
	assert_non_null(strstr(s, "\"unique\":{\"source\":\"bpf-memcg\",\"exact\":true,\"error_bound_bytes\":0,"));
	assert_non_null(strstr(s, "\"peak_bytes\":134217728,\"baseline_bytes\":0,\"growth_bytes\":134217728,\"summed_excess\":"));
	free(s);
	s = render(rec_human, &x.rec);
	/* (512 - 128) MiB of 4 KiB pages: anon 500 summed, 120 unique */
	assert_non_null(strstr(s, "  summed RSS counts 98304 pages more than the tree's unique memory, "
				  "which peaked at 128.0 MiB (bpf-memcg, exact): mostly anon and shmem "
				  "pages mapped by several of the tree's processes (380.0 MiB), the rest "
				  "file pages cached by another cgroup or mapped by several (4.0 MiB)\n"));
	free(s);
	/* One address space at the peak: none is mapped twice (issue 26: the
	 * line said "fork-shared" for one process importing numpy). */
	x.rec.primary.mms_at_peak = 1;
	s = render(rec_human, &x.rec);
	assert_non_null(strstr(s, "mostly anon and shmem pages charged to another cgroup (380.0 MiB), "
				  "the rest file pages cached by another cgroup or mapped by several "
				  "(4.0 MiB)\n"));
	free(s);
	s = render(rec_json, &x.rec);
	assert_non_null(strstr(s, "\"summed_excess\":{\"bytes\":402653184,\"mapped_by_several_bytes\":0,"
				  "\"charged_elsewhere_bytes\":398458880,\"page_cache_bytes\":4194304,"
				  "\"dominant\":\"anon and shmem pages charged to another cgroup\"}"));
	free(s);
	x.rec.primary.mms_at_peak = 3;

	/* Within 10 %: no line. */
	u.peak_bytes = 470 * MiB;
	s = render(rec_human, &x.rec);
	assert_null(strstr(s, "pages more than"));
	free(s);

	/* --measure unique: the unique figure leads, summed RSS is the first other. */
	u.peak_bytes = 128 * MiB;
	x.rec.others = &x.rec.primary;
	x.rec.n_others = 1;
	{
		struct report r = x.rec;

		r.primary = u;
		r.others = &x.rec.primary;
		s = render(rec_human, &r);
		assert_non_null(strstr(s, "peakbpf: peak 128.0 MiB (bpf-memcg, exact)"));
		assert_non_null(strstr(s, "counts 98304 pages more than the tree's unique memory"));
		free(s);
	}

	x.rec.n_others = 0;
	x.rec.unique = &none;
	s = render(rec_json, &x.rec);
	assert_non_null(strstr(s, "\"unique\":{\"source\":\"unavailable\",\"exact\":false,\"error_bound_bytes\":null,"
				  "\"inexact_reason\":\"this kernel has no memcg statistic tracepoints (6.13+)\","));
	assert_non_null(strstr(s, "\"scope\":\"unique\",\"peak_bytes\":null,\"baseline_bytes\":null,\"growth_bytes\":null}"));
	free(s);
	s = render(rec_human, &x.rec);
	assert_null(strstr(s, "pages more than"));
	free(s);
}

static void test_privileges(void **state)
{
	uint64_t bpf = 1ULL << CAPBIT_BPF, perfmon = 1ULL << CAPBIT_PERFMON;
	uint64_t admin = 1ULL << CAPBIT_SYS_ADMIN;

	(void)state;
	assert_string_equal(bpf_privileges(0x1ffffffffffULL), "root");
	assert_string_equal(bpf_privileges(bpf | perfmon), "CAP_BPF+CAP_PERFMON");
	assert_string_equal(bpf_privileges(admin), "CAP_SYS_ADMIN");
	assert_null(bpf_privileges(bpf));
	assert_null(bpf_privileges(perfmon));
	assert_null(bpf_privileges(0));
}

/* issue 33: the tree's own cgroup beside a unique figure far below it is
 * flagged; a child charged to another cgroup makes the anon excess
 * "several or elsewhere", each alone null in the record. */
static void test_cgroup_disagrees_line(void **state)
{
	struct fixture x;
	struct figure cg[1] = { { .source = "cgroup-v1", .measured = true, .peak_bytes = 321 * MiB,
				  .scope = "cgroup", .cgroup_path = "/sys/fs/cgroup/memory/peakbpf-1",
				  .exclusive = true } };
	struct figure u = { .source = "bpf-memcg", .measured = true, .exact = true, .scope = "unique",
			    .peak_bytes = 64 * MiB, .baseline_known = true,
			    .anon_bytes = 63 * MiB, .file_bytes = 1 * MiB, .other_cgroups = true };
	char *s;

	(void)state;
	make_fixture(&x);
	x.rec.others = cg;
	x.rec.n_others = 1;
	x.rec.unique = &u;
	s = render(rec_human, &x.rec);
	assert_non_null(strstr(s, "  also: 321.0 MiB (cgroup-v1, not exact, error unknown) — cgroup "
				  "[disagrees: 257.0 MiB more than the tree's unique memory: page cache, "
				  "kernel memory, or memory of cgroups below it, which the tree's figures "
				  "do not count]\n"));
	assert_non_null(strstr(s, "mostly anon and shmem pages mapped by several of the tree's processes "
				  "or charged to another cgroup (437.0 MiB), the rest file pages"));
	free(s);
	s = render(rec_json, &x.rec);
	assert_non_null(strstr(s, "\"disagrees_with\":\"unique memory\",\"disagreement_bytes\":269484032}"));
	assert_non_null(strstr(s, "\"mapped_by_several_bytes\":null,\"charged_elsewhere_bytes\":null,"
				  "\"several_or_elsewhere_bytes\":458227712,\"page_cache_bytes\":11534336,"));
	free(s);
	/* Close to it: no flag. */
	cg[0].peak_bytes = 66 * MiB;
	s = render(rec_human, &x.rec);
	assert_null(strstr(s, "disagrees"));
	free(s);
}

/* issue 33: hugetlb beside RSS. 0 exactly where no huge pages exist; the
 * sampler's figure where they do, said in the summary to be outside RSS;
 * never 0 for not measured. */
static void test_hugetlb(void **state)
{
	struct fixture x;
	struct figure proc[1] = { { .source = "proc", .measured = true, .peak_bytes = 1 * MiB,
				    .inexact_reason = "sampled every 100 ms: misses spikes between samples",
				    .hugetlb_measured = true, .hugetlb_bytes = 512 * MiB,
				    .hugetlb_member_bytes = 256 * MiB, .hugetlb_member_pid = 77,
				    .hugetlb_member_comm = "dpdk" } };
	char *s;

	(void)state;
	make_fixture(&x);
	s = render(rec_json, &x.rec);
	assert_non_null(strstr(s, "\"hugetlb\":{\"source\":\"sysfs\",\"exact\":true,\"peak_bytes\":0,"));
	free(s);
	s = render(rec_human, &x.rec);
	assert_null(strstr(s, "hugetlb"));
	free(s);
	/* Huge pages configured, none read: not measured, not 0. */
	x.host.hugetlb_possible = true;
	s = render(rec_json, &x.rec);
	assert_non_null(strstr(s, "\"hugetlb\":{\"source\":\"unavailable\",\"exact\":false,"));
	assert_non_null(strstr(s, "\"peak_bytes\":null}"));
	free(s);
	s = render(rec_human, &x.rec);
	assert_non_null(strstr(s, "  hugetlb: not measured (no process's HugetlbPages was read); RSS does "
				  "not include hugetlb pages\n"));
	free(s);
	x.rec.others = proc;
	x.rec.n_others = 1;
	s = render(rec_json, &x.rec);
	assert_non_null(strstr(s, "\"hugetlb\":{\"source\":\"proc\",\"exact\":false,\"inexact_reason\":"
				  "\"sampled every 100 ms: misses spikes between samples\",\"peak_bytes\":536870912,"
				  "\"member_peak_bytes\":268435456,\"member_pid\":77,\"member_comm\":\"dpdk\","));
	free(s);
	s = render(rec_human, &x.rec);
	assert_non_null(strstr(s, "  hugetlb: 512.0 MiB at most in the tree (proc, not exact: sampled every "
				  "100 ms: misses spikes between samples), the most one process held "
				  "256.0 MiB (77 dpdk) — not in RSS\n"));
	free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_json_record),
		cmocka_unit_test(test_json_window_and_others),
		cmocka_unit_test(test_not_measured_is_never_zero),
		cmocka_unit_test(test_printable),
		cmocka_unit_test(test_human_summary),
		cmocka_unit_test(test_human_exact_and_window),
		cmocka_unit_test(test_unique),
		cmocka_unit_test(test_cgroup_disagrees_line),
		cmocka_unit_test(test_hugetlb),
		cmocka_unit_test(test_privileges),
		cmocka_unit_test(test_not_comparable_and_lost_windows),
		cmocka_unit_test(test_stat_no_mm),
	};

	return cmocka_run_group_tests_name("report", tests, NULL, NULL);
}
