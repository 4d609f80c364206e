// SPDX-License-Identifier: MIT
/* The CLI's own part of a report (src/cli/run_report.c): the command it ran
 * or the PIDs it attached to, in JSON and in the summary's words. The
 * library's part, and where the extra goes in it, is test_report.c's. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "run_report.h"

static char *test_argv[] = { "sh", "-c", "echo \"hi\"\tthere", NULL };

static struct command_facts command(void)
{
	return (struct command_facts){
		.argv = test_argv, .pid = 42, .wait_status = 3 << 8,
		.user_s = 0.5, .sys_s = 0.25, .descendants_alive = 0,
	};
}

/* A run's context as the CLI makes it: one window of 2 s. */
static struct run_context run_of(const struct command_facts *c)
{
	return (struct run_context){ .command = c, .start_s = 0, .end_s = 2.0, .windows = 1 };
}

static void test_json_command(void **state)
{
	struct command_facts c = command();
	struct run_context ctx = run_of(&c);
	char *s;

	(void)state;
	s = run_report_json(&ctx);
	assert_non_null(s);
	assert_non_null(strstr(s, "\"argv\":[\"sh\",\"-c\",\"echo \\\"hi\\\"\\tthere\"]"));
	assert_non_null(strstr(s, "\"exit_code\":3,\"signal\":null"));
	free(s);
}

static void test_json_signal_and_attach(void **state)
{
	struct command_facts c = command();
	struct run_context ctx = run_of(&c);
	pid_t pids[] = { 7, 9 };
	char *s;

	(void)state;
	c.wait_status = SIGKILL;        /* as waitpid reports a SIGKILL death */
	s = run_report_json(&ctx);
	assert_non_null(s);
	assert_non_null(strstr(s, "\"exit_code\":null,\"signal\":9"));
	free(s);

	ctx.command = NULL;
	ctx.attached = pids;
	ctx.n_attached = 2;
	s = run_report_json(&ctx);
	assert_non_null(s);
	assert_null(strstr(s, "\"command\""));
	assert_non_null(strstr(s, "\"attached\":[7,9]"));
	free(s);
}

/* Wording: one descendant, with the hint; --wait-descendants times the
 * command's own exit and the tree's last process apart; one window. */
static void test_human_wording(void **state)
{
	struct command_facts c = command();
	struct run_context ctx = run_of(&c);
	pid_t pids[] = { 7 };
	char *s;

	(void)state;
	s = run_report_human(&ctx);
	assert_non_null(s);
	assert_non_null(strstr(s, "command exited 3 after 2.000 s"));
	free(s);
	c.descendants_alive = 1;
	s = run_report_human(&ctx);
	assert_non_null(s);
	assert_non_null(strstr(s, "command exited 3 after 2.000 s (user 0.500 s, sys 0.250 s); "
			       "1 descendant still running, see --wait-descendants\n"));
	free(s);
	c.exited_s = 0.8;       /* --wait-descendants: the tree ended at 2 s */
	s = run_report_human(&ctx);
	assert_non_null(s);
	assert_non_null(strstr(s, "command exited 3 after 800.0 ms (user 0.500 s, sys 0.250 s); its last "
			       "descendant after 2.000 s; 1 descendant still running at its exit\n"));
	free(s);
	ctx = (struct run_context){ .attached = pids, .n_attached = 1, .end_s = 2.0, .windows = 1 };
	s = run_report_human(&ctx);
	assert_non_null(s);
	assert_non_null(strstr(s, "attached to 7 for 2.000 s, 1 window\n"));
	free(s);
}

/* The run record's victims are the library's writer's (the agent's OOM
 * records use the same): at_s from the run's start, rss, the kill. */
static void test_json_oom_victims(void **state)
{
	struct peakbpf_oom_victim v[2] = {
		{ .mono_ns = 3500000000ULL, .pid = 77, .comm = "alloc", .rss_read = true, .anon_bytes = 4096,
		  .file_bytes = 8192, .cgroup_id = 5, .cgroup = "/t", .has_context = true, .memcg_oom = true,
		  .oom_cgroup_id = 5, .oom_cgroup = "/t", .limit_bytes = 1 << 20, .charge_bytes = 1 << 20,
		  .trigger_pid = 77, .trigger_comm = "alloc" },
		{ .pid = 78, .comm = "x" },
	};
	struct run_context ctx = { .run_record = true, .oom = v, .n_oom = 2, .oom_total = 2,
				   .oom_t0_ns = 1000000000ULL };
	char one[1024];
	char *s;
	int n;

	(void)state;
	s = run_report_json(&ctx);
	assert_non_null(s);
	assert_non_null(strstr(s, "\"listed\":[{\"pid\":77,\"comm\":\"alloc\",\"at_s\":2.5,\"rss\":{\"anon_bytes\":4096,"
				  "\"file_bytes\":8192,\"shmem_bytes\":0,"));
	assert_non_null(strstr(s, "\"kill\":{\"constraint\":\"memcg\",\"inferred\":false,\"oom_cgroup_id\":5,"
				  "\"oom_cgroup\":\"/t\",\"limit_bytes\":1048576,\"charge_bytes\":1048576,"));
	assert_non_null(strstr(s, "{\"pid\":78,\"comm\":\"x\",\"at_s\":0,\"rss\":null,\"cgroup_id\":0,"
				  "\"cgroup\":\"\",\"kill\":null}]"));
	free(s);
	/* without t0, no at_s; like snprintf: the length needed, truncated */
	n = peakbpf_oom_victim_json(&v[1], 0, one, sizeof(one));
	assert_string_equal(one, "{\"pid\":78,\"comm\":\"x\",\"rss\":null,\"cgroup_id\":0,\"cgroup\":\"\",\"kill\":null}");
	assert_int_equal(n, (int)strlen(one));
	assert_int_equal(peakbpf_oom_victim_json(&v[1], 0, one, 5), n);
	assert_string_equal(one, "{\"pi");
	assert_int_equal(peakbpf_oom_victim_json(NULL, 0, one, 5), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_json_command),
		cmocka_unit_test(test_json_signal_and_attach),
		cmocka_unit_test(test_human_wording),
		cmocka_unit_test(test_json_oom_victims),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
