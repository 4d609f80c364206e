// SPDX-License-Identifier: MIT
/* The run record: exactness judgement, error bounds, JSON and summary. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "host.h"
#include "report.h"

#define MiB (1024ULL * 1024)

static struct run_record measured_record(void)
{
	static char *argv[] = { "sh", "-c", "echo \"hi\"\tthere", NULL };
	struct run_record r = {
		.source = "bpf", .measured = true, .peak_bytes = 512 * MiB,
		.baseline_bytes = 0, .peak_at_s = 1.5,
		.peak_anon_bytes = 500 * MiB, .peak_file_bytes = 12 * MiB,
		.procs_at_peak = 3, .mms_at_peak = 3, .events = 1000,
		.mms_entered = 3, .procs_entered = 3, .argv = argv, .pid = 42,
		.wait_status = 3 << 8, .wall_s = 2.0, .user_s = 0.5, .sys_s = 0.25,
	};

	snprintf(r.host.kernel, sizeof(r.host.kernel), "6.18.0");
	r.host.cpus = 2;
	r.host.page_size = 4096;
	r.host.btf = true;
	r.host.rss_percpu = true;
	r.host.teardown_hook = "tp_btf/exit_mmap";
	r.host.privileges = "root";
	return r;
}

static char *render(void (*fn)(const struct run_record *, FILE *), const struct run_record *r)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	fn(r, f);
	fclose(f);
	return buf;
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
static void test_judge_percpu_bound(void **state)
{
	struct run_record r = measured_record();

	(void)state;
	record_judge_exactness(&r, 4 * 186);
	assert_false(r.exact);
	assert_true(r.bound_known);
	assert_int_equal(r.error_bound_bytes, 4ULL * 3 * 2 * 31 * 4096);
	assert_non_null(strstr(r.inexact_reason, "lag"));

	r.host.exact_path_err = -EOPNOTSUPP;
	record_judge_exactness(&r, 186);
	assert_true(r.bound_known);
	assert_non_null(strstr(r.inexact_reason, "unavailable"));
}

static void test_judge_exact(void **state)
{
	struct run_record r = measured_record();

	(void)state;
	record_judge_exactness(&r, 0);
	assert_true(r.exact);
	assert_true(r.bound_known);
	assert_int_equal(r.error_bound_bytes, 0);
	assert_null(r.inexact_reason);
}

static void test_judge_drops_make_bound_unknown(void **state)
{
	struct run_record r = measured_record();

	(void)state;
	r.drop_mm_full = 1;
	record_judge_exactness(&r, 4);
	assert_false(r.exact);
	assert_false(r.bound_known);
	assert_non_null(strstr(r.inexact_reason, "map full"));

	r = measured_record();
	r.missed_events = 7;
	record_judge_exactness(&r, 4);
	assert_false(r.exact);
	assert_false(r.bound_known);
}

static void test_judge_old_kernel(void **state)
{
	struct run_record r = measured_record();

	(void)state;
	r.host.rss_percpu = false;
	record_judge_exactness(&r, 4);
	assert_false(r.exact);
	assert_false(r.bound_known);
	assert_non_null(strstr(r.inexact_reason, "per-thread"));
}

static void test_json_record(void **state)
{
	struct run_record r = measured_record();
	char *s;

	(void)state;
	record_judge_exactness(&r, 558);
	s = render(report_json, &r);
	assert_non_null(strstr(s, "{\"source\":\"bpf\",\"exact\":false,\"error_bound_bytes\":2285568,"));
	assert_non_null(strstr(s, "\"peak_bytes\":536870912,\"baseline_bytes\":0,\"growth_bytes\":536870912,"));
	assert_non_null(strstr(s, "\"breakdown_at_peak\":{\"anon_bytes\":524288000,\"file_bytes\":12582912,\"shmem_bytes\":0}"));
	assert_non_null(strstr(s, "\"argv\":[\"sh\",\"-c\",\"echo \\\"hi\\\"\\tthere\"]"));
	assert_non_null(strstr(s, "\"exit_code\":3,\"signal\":null"));
	assert_non_null(strstr(s, "\"rss_counters\":\"percpu\""));
	assert_int_equal(s[strlen(s) - 1], '\n');
	assert_ptr_equal(strchr(s, '\n'), s + strlen(s) - 1); /* one line */
	free(s);
}

static void test_json_signal(void **state)
{
	struct run_record r = measured_record();
	char *s;

	(void)state;
	r.wait_status = SIGKILL;        /* as waitpid reports a SIGKILL death */
	record_judge_exactness(&r, 558);
	s = render(report_json, &r);
	assert_non_null(strstr(s, "\"exit_code\":null,\"signal\":9"));
	free(s);
}

/* Not measured is null in JSON and words in the summary, never 0. */
static void test_not_measured_is_never_zero(void **state)
{
	struct run_record r = measured_record();
	char *s;

	(void)state;
	r.measured = false;
	r.source = "unavailable";
	record_judge_exactness(&r, 0);
	s = render(report_json, &r);
	assert_non_null(strstr(s, "\"peak_bytes\":null,\"baseline_bytes\":null,\"growth_bytes\":null"));
	assert_non_null(strstr(s, "\"error_bound_bytes\":null"));
	free(s);
	s = render(report_human, &r);
	assert_non_null(strstr(s, "peak not measured"));
	assert_null(strstr(s, "peak 0"));
	free(s);
}

static void test_human_summary(void **state)
{
	struct run_record r = measured_record();
	char *s;

	(void)state;
	record_judge_exactness(&r, 558);
	s = render(report_human, &r);
	assert_non_null(strstr(s, "peakbpf: peak 512.0 MiB ± 2.2 MiB (bpf, not exact) at 1.500 s; baseline 0 B, growth 512.0 MiB\n"));
	assert_non_null(strstr(s, "anon 500.0 MiB, file 12.0 MiB, shmem 0 B in 3 processes"));
	assert_non_null(strstr(s, "command exited 3 after 2.000 s"));
	assert_non_null(strstr(s, "once per address space"));
	assert_null(strstr(s, "lost:"));
	free(s);

	r.drop_task_full = 2;
	record_judge_exactness(&r, 558);
	s = render(report_human, &r);
	assert_non_null(strstr(s, "error unknown"));
	assert_non_null(strstr(s, "lost: 0 mms and 2 processes"));
	free(s);
}

static void test_human_exact(void **state)
{
	struct run_record r = measured_record();
	char *s;

	(void)state;
	r.exact = true;
	r.bound_known = true;
	s = render(report_human, &r);
	assert_non_null(strstr(s, "peak 512.0 MiB (bpf, exact)"));
	assert_null(strstr(s, "not exact"));
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_percpu_lag),
		cmocka_unit_test(test_judge_percpu_bound),
		cmocka_unit_test(test_judge_exact),
		cmocka_unit_test(test_judge_drops_make_bound_unknown),
		cmocka_unit_test(test_judge_old_kernel),
		cmocka_unit_test(test_json_record),
		cmocka_unit_test(test_json_signal),
		cmocka_unit_test(test_not_measured_is_never_zero),
		cmocka_unit_test(test_human_summary),
		cmocka_unit_test(test_human_exact),
		cmocka_unit_test(test_privileges),
	};

	return cmocka_run_group_tests_name("report", tests, NULL, NULL);
}
