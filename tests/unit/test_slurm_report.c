// SPDX-License-Identifier: MIT
/* Unit tests for src/slurm/slurm_report.c: the SPANK plugin's options, its
 * step lines, the merge across nodes, the suggestion and the texts. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "slurm_report.h"

#define MIB (1024ULL * 1024)

static struct pb_step_line mk(const char *step, const char *node, uint64_t peak, bool exact)
{
	struct pb_step_line l;

	memset(&l, 0, sizeof(l));
	snprintf(l.step, sizeof(l.step), "%s", step);
	snprintf(l.node, sizeof(l.node), "%s", node);
	l.peak_known = true;
	l.peak = peak;
	l.exact = exact;
	snprintf(l.source, sizeof(l.source), "%s", exact ? "bpf" : "proc");
	l.tasks = 1;
	return l;
}

static void test_config(void **state)
{
	struct pb_config c;
	char why[200];

	(void)state;
	pb_config_default(&c);
	assert_int_equal(c.site_mode, PB_MODE_OFF);
	assert_string_equal(c.dir, PB_DEFAULT_DIR);
	assert_int_equal(c.headroom_pct, 10);
	assert_int_equal(pb_config_arg(&c, "default=on", why, sizeof(why)), 0);
	assert_int_equal(c.site_mode, PB_MODE_QUIET);
	assert_int_equal(pb_config_arg(&c, "default=print", why, sizeof(why)), 0);
	assert_int_equal(c.site_mode, PB_MODE_PRINT);
	assert_int_equal(pb_config_arg(&c, "headroom=25", why, sizeof(why)), 0);
	assert_int_equal(c.headroom_pct, 25);
	assert_int_equal(pb_config_arg(&c, "dir=/shared/peakbpf", why, sizeof(why)), 0);
	assert_string_equal(c.dir, "/shared/peakbpf");
	/* Bad values name the fix and change nothing. */
	assert_int_equal(pb_config_arg(&c, "headroom=-1", why, sizeof(why)), -EINVAL);
	assert_non_null(strstr(why, "0 to 1000"));
	assert_int_equal(pb_config_arg(&c, "headroom=12x", why, sizeof(why)), -EINVAL);
	assert_int_equal(pb_config_arg(&c, "headroom=", why, sizeof(why)), -EINVAL);
	assert_int_equal(c.headroom_pct, 25);
	assert_int_equal(pb_config_arg(&c, "default=maybe", why, sizeof(why)), -EINVAL);
	assert_int_equal(pb_config_arg(&c, "dir=", why, sizeof(why)), -EINVAL);
	assert_int_equal(pb_config_arg(&c, "colour=red", why, sizeof(why)), -EINVAL);
	assert_non_null(strstr(why, "unknown argument"));
	assert_int_equal(pb_config_arg(&c, "default", why, sizeof(why)), -EINVAL);
}

static void test_user_mode(void **state)
{
	enum pb_mode m;
	char why[200];

	(void)state;
	assert_int_equal(pb_user_mode(NULL, &m, why, sizeof(why)), 0);
	assert_int_equal(m, PB_MODE_PRINT);
	/* What srun inside an sbatch --peakbpf job reads from the environment. */
	assert_int_equal(pb_user_mode("(null)", &m, why, sizeof(why)), 0);
	assert_int_equal(m, PB_MODE_PRINT);
	assert_int_equal(pb_user_mode("quiet", &m, why, sizeof(why)), 0);
	assert_int_equal(m, PB_MODE_QUIET);
	assert_int_equal(pb_user_mode("off", &m, why, sizeof(why)), 0);
	assert_int_equal(m, PB_MODE_OFF);
	assert_int_equal(pb_user_mode("loud", &m, why, sizeof(why)), -EINVAL);
	assert_non_null(strstr(why, "--peakbpf=quiet"));
	assert_int_equal(pb_effective_mode(PB_MODE_UNSET, PB_MODE_QUIET), PB_MODE_QUIET);
	assert_int_equal(pb_effective_mode(PB_MODE_OFF, PB_MODE_PRINT), PB_MODE_OFF);
	assert_int_equal(pb_effective_mode(PB_MODE_PRINT, PB_MODE_OFF), PB_MODE_PRINT);
	assert_int_equal(pb_effective_mode(PB_MODE_UNSET, PB_MODE_UNSET), PB_MODE_OFF);
}

static void test_step_name(void **state)
{
	char b[24];

	(void)state;
	pb_step_name(0, b, sizeof(b));
	assert_string_equal(b, "0");
	pb_step_name(17, b, sizeof(b));
	assert_string_equal(b, "17");
	pb_step_name(0xfffffffbU, b, sizeof(b));
	assert_string_equal(b, "batch");
	pb_step_name(0xfffffffcU, b, sizeof(b));
	assert_string_equal(b, "extern");
	pb_step_name(0xfffffffaU, b, sizeof(b));
	assert_string_equal(b, "interactive");
}

static void test_line_round_trip(void **state)
{
	struct pb_step_line a = mk("batch", "node-7", 123456789, true), b;
	char buf[512];
	int n;

	(void)state;
	a.largest_known = true;
	a.largest = 4096;
	a.tasks = 3;
	a.killed_signal = 9;
	a.limit = 100 * MIB;
	a.mlower_known = true;
	a.mlower = 5;
	a.mupper_known = true;
	a.mupper = 7;
	n = pb_line_format(&a, buf, sizeof(buf));
	assert_true(n > 0);
	assert_int_equal(buf[n - 1], '\n');
	assert_int_equal(pb_line_parse(buf, &b), 0);
	assert_memory_equal(&a, &b, sizeof(a));
	/* Not measured stays not measured, never 0. */
	a.peak_known = false;
	a.largest_known = false;
	pb_line_format(&a, buf, sizeof(buf));
	assert_non_null(strstr(buf, "\t-\t"));
	assert_int_equal(pb_line_parse(buf, &b), 0);
	assert_false(b.peak_known);
	assert_false(b.largest_known);
	/* A tab in a name would break the line: refused. */
	snprintf(a.node, sizeof(a.node), "a\tb");
	assert_int_equal(pb_line_format(&a, buf, sizeof(buf)), -EINVAL);
	assert_int_equal(pb_line_format(&b, buf, 10), -ENOSPC);
}

static void test_line_parse_bad(void **state)
{
	struct pb_step_line l;
	static const char *const bad[] = {
		"",
		"0\tvm\t100\t1\tbpf\t-\t1\t0\t0\n",                 /* 9 fields: before records */
		"0\tvm\t100\t1\tbpf\t-\t1\t0\t0\t-\t-\t9\n",       /* 12 */
		"0\tvm\t1x0\t1\tbpf\t-\t1\t0\t0\t-\t-\n",           /* a bad number */
		"0\tvm\t-100\t1\tbpf\t-\t1\t0\t0\t-\t-\n",          /* negative */
		"0\tvm\t100\t2\tbpf\t-\t1\t0\t0\t-\t-\n",           /* exact 2 */
		"0\tvm\t100\t1\tbpf\t-\t1\t65\t0\t-\t-\n",          /* no signal 65 */
		"0\tvm\t100\t1\tbpf\t-\t99999999999\t0\t0\t-\t-\n", /* tasks overflow */
		"0\tvm\t100\t1\tbpf\t-\t1\t0\t99999999999999999999999\t-\t-\n",
		"0\tvm\t100\t1\tsource-name-too-long\t-\t1\t0\t0\t-\t-\n",
		"0\tvm\t100\t1\tbpf\t-\t1\t0\t0\tx\t-\n",           /* a bad record bound */
	};

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(pb_line_parse(bad[i], &l), -EINVAL);
	assert_int_equal(pb_line_parse("0\tvm\t100\t1\tbpf\t-\t1\t0\t0\t50\t-", &l), 0);
	assert_true(l.mlower_known);
	assert_int_equal(l.mlower, 50);
	assert_false(l.mupper_known);
}

/* Across nodes: [largest node peak, sum of peaks]; one node: that peak. */
static void test_merge(void **state)
{
	struct pb_step_line l[5] = {
		mk("0", "a", 100 * MIB, true), mk("1", "a", 10 * MIB, true),
		mk("0", "b", 60 * MIB, true), mk("0", "c", 40 * MIB, false),
		mk("batch", "a", 5 * MIB, true),
	};
	struct pb_step_merge m[4];
	size_t k;

	(void)state;
	l[2].killed_signal = 9;
	l[0].largest_known = true;
	l[0].largest = 30 * MIB;
	k = pb_merge_steps(l, 5, m, 4);
	assert_int_equal(k, 3);
	assert_string_equal(m[0].step, "0");
	assert_int_equal(m[0].nodes, 3);
	assert_true(m[0].complete);
	assert_int_equal(m[0].lower, 100 * MIB);
	assert_int_equal(m[0].upper, 200 * MIB);
	assert_int_equal(m[0].sum_of_peaks, 200 * MIB);
	assert_false(m[0].exact);
	assert_int_equal(m[0].killed_signal, 9);
	assert_int_equal(m[0].largest, 30 * MIB);
	assert_string_equal(m[1].step, "1");
	assert_int_equal(m[1].lower, 10 * MIB);
	assert_int_equal(m[1].upper, 10 * MIB);
	assert_true(m[1].exact);
	/* A node not measured: the interval is unknown, not low. */
	l[3].peak_known = false;
	k = pb_merge_steps(l, 5, m, 1);
	assert_int_equal(k, 1);
	assert_false(m[0].complete);
	/* --mem: the largest one node held, + 10 %, up to a MiB. */
	k = pb_merge_steps(l, 5, m, 4);
	assert_int_equal(pb_suggest_mem_mib(m, k, 10), 110);
	assert_int_equal(pb_suggest_mem_mib(m, k, 0), 100);
	l[0].peak = 100 * MIB + 1;
	k = pb_merge_steps(l, 5, m, 4);
	assert_int_equal(pb_suggest_mem_mib(m, k, 0), 101);
	assert_int_equal(pb_suggest_mem_mib(m, 0, 10), 0);
}

/* The nodes' records narrow [largest peak, sum of peaks]; the upper bound
 * only once every node's peak is known (a record still growing is not one). */
static void test_merge_records(void **state)
{
	struct pb_step_line l[2] = { mk("0", "a", 100 * MIB, true), mk("0", "b", 90 * MIB, true) };
	struct pb_step_merge m[1];

	(void)state;
	l[0].mlower_known = true;
	l[0].mlower = 101 * MIB;
	pb_merge_steps(l, 2, m, 1);
	assert_int_equal(m[0].lower, 101 * MIB);
	assert_int_equal(m[0].upper, 190 * MIB);
	l[1].mlower_known = l[1].mupper_known = true;
	l[1].mlower = 102 * MIB;
	l[1].mupper = 103 * MIB;
	pb_merge_steps(l, 2, m, 1);
	assert_int_equal(m[0].lower, 102 * MIB);
	assert_int_equal(m[0].upper, 103 * MIB);
	/* --mem is per node: from the largest node's peak, not the sum's. */
	assert_int_equal(pb_suggest_mem_mib(m, 1, 0), 100);
	/* A record's upper bound below the lower one is not believed. */
	l[1].mupper = 99 * MIB;
	pb_merge_steps(l, 2, m, 1);
	assert_int_equal(m[0].upper, 190 * MIB);
	/* Node b not measured: no upper bound at all. */
	l[1].mupper = 103 * MIB;
	l[1].peak_known = false;
	pb_merge_steps(l, 2, m, 1);
	assert_false(m[0].complete);
	assert_int_equal(m[0].lower, 102 * MIB);
}

static void test_texts(void **state)
{
	struct pb_step_line l[2] = { mk("0", "vm", 3 * 1024 * MIB, true), mk("batch", "vm", 8 * MIB, true) };
	struct pb_step_merge m[2];
	char buf[512];
	size_t k;

	(void)state;
	l[0].largest_known = true;
	l[0].largest = 1024 * MIB;
	pb_stderr_line(buf, sizeof(buf), &l[0], 10);
	assert_string_equal(buf, "peakbpf: step 0 on vm: peak 3.0 GiB (exact, bpf), 2.0 GiB above its largest "
				 "process's own peak 1.0 GiB (sacct's MaxRSS: one task, sampled); next time "
				 "--mem=3380M (+10%)\n");
	l[0].killed_signal = 9;
	l[0].limit = 2048 * MIB;
	pb_stderr_line(buf, sizeof(buf), &l[0], 10);
	assert_non_null(strstr(buf, "; killed by signal 9 at 150% of its 2.0 GiB memory limit;"));
	l[1].peak_known = false;
	pb_stderr_line(buf, sizeof(buf), &l[1], 10);
	assert_string_equal(buf, "peakbpf: step batch on vm: not measured (bpf)\n");
	l[1].peak_known = true;
	k = pb_merge_steps(l, 2, m, 2);
	pb_admin_comment(buf, sizeof(buf), m, k, 10);
	assert_string_equal(buf, "peakbpf: step 0 3.0 GiB exact killed (signal 9); step batch 8.0 MiB exact; "
				 "next --mem=3380M (+10%)");
	/* Cut, never overrun. */
	pb_admin_comment(buf, 12, m, k, 10);
	assert_string_equal(buf, "peakbpf: st");
}

static void test_job_json(void **state)
{
	struct pb_step_line l[3] = { mk("0", "a", 100 * MIB, true), mk("0", "b", 50 * MIB, true),
				     mk("batch", "a", 4 * MIB, true) };
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	(void)state;
	assert_non_null(f);
	l[1].peak_known = false;
	assert_int_equal(pb_job_json(f, 42, l, 3, 10), 0);
	fclose(f);
	assert_non_null(strstr(text, "{\"job_id\":42,"));
	/* Node b not measured: at least node a's peak, the upper bound unknown. */
	assert_non_null(strstr(text, "\"step\":\"0\",\"peak_of_sum\":{\"lower_bytes\":104857600,"
				     "\"upper_bytes\":null,\"exact\":false,\"from\":\"the nodes' peaks: [largest, sum]\"}"));
	assert_non_null(strstr(text, "\"node\":\"b\",\"peak_bytes\":null"));
	assert_non_null(strstr(text, "\"file\":\"42/batch.a.json\""));
	assert_non_null(strstr(text, "\"option\":\"--mem=110M\""));
	free(text);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_config),
		cmocka_unit_test(test_user_mode),
		cmocka_unit_test(test_step_name),
		cmocka_unit_test(test_line_round_trip),
		cmocka_unit_test(test_line_parse_bad),
		cmocka_unit_test(test_merge),
		cmocka_unit_test(test_merge_records),
		cmocka_unit_test(test_texts),
		cmocka_unit_test(test_job_json),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
