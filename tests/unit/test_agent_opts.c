// SPDX-License-Identifier: MIT
/* `peakbpf agent`'s options (src/agent/agent_opts.c): the listen address,
 * the bounds, the exit status of each bad one. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <errno.h>
#include <setjmp.h>
#include <string.h>
#include <cmocka.h>
#include <netinet/in.h>
#include "agent.h"
#include "agent_opts.h"
#include "status.h"

static int parse(struct agent_opts *o, const char *a1, const char *a2)
{
	char *argv[] = { "agent", (char *)a1, (char *)a2, NULL };
	char why[256];
	int argc = a2 ? 3 : a1 ? 2 : 1;

	return agent_opts_parse(argc, argv, o, why, sizeof(why));
}

static void test_listen(void **state)
{
	struct sockaddr_storage a;
	socklen_t len;
	bool lo;

	(void)state;
	assert_int_equal(agent_parse_listen("127.0.0.1:9736", &a, &len, &lo), 0);
	assert_true(lo);
	assert_int_equal(a.ss_family, AF_INET);
	assert_int_equal(agent_parse_listen("[::1]:80", &a, &len, &lo), 0);
	assert_true(lo);
	assert_int_equal(a.ss_family, AF_INET6);
	assert_int_equal(agent_parse_listen("0.0.0.0:9736", &a, &len, &lo), 0);
	assert_false(lo);
	assert_int_equal(agent_parse_listen("localhost:9736", &a, &len, &lo), -EINVAL);  /* numeric only */
	assert_int_equal(agent_parse_listen("127.0.0.1", &a, &len, &lo), -EINVAL);
	assert_int_equal(agent_parse_listen("127.0.0.1:0", &a, &len, &lo), -EINVAL);
	assert_int_equal(agent_parse_listen("127.0.0.1:65536", &a, &len, &lo), -EINVAL);
	assert_int_equal(agent_parse_listen("127.0.0.1:12x", &a, &len, &lo), -EINVAL);
	assert_int_equal(agent_parse_listen("[::1:80", &a, &len, &lo), -EINVAL);
	assert_int_equal(agent_parse_listen("999.1.1.1:80", &a, &len, &lo), -EINVAL);
	assert_int_equal(agent_parse_listen(":80", &a, &len, &lo), -EINVAL);
}

static void test_statuses(void **state)
{
	struct agent_opts o;

	(void)state;
	assert_int_equal(parse(&o, NULL, NULL), 0);
	assert_string_equal(o.listen, AGENT_LISTEN_DEFAULT);
	assert_true(o.loopback);
	assert_int_equal(o.max_series, AGENT_MAX_SERIES_DEFAULT);
	assert_int_equal(parse(&o, "--listen", "nope"), EXIT_AGENT_LISTEN);
	assert_int_equal(parse(&o, "--max-series", "0"), EXIT_PEAKBPF_FAILED);
	assert_int_equal(parse(&o, "--max-series", "5000"), EXIT_PEAKBPF_FAILED);
	assert_int_equal(parse(&o, "--max-series", "12"), 0);
	assert_int_equal(o.max_series, 12);
	assert_int_equal(parse(&o, "--max-series", "1.5"), EXIT_PEAKBPF_FAILED);
	assert_int_equal(parse(&o, "--max-series", "4096"), 0);
	assert_int_equal(o.holders, AGENT_HOLDERS_DEFAULT);
	assert_int_equal(parse(&o, "--holders", "0"), 0);
	assert_int_equal(o.holders, 0);
	assert_int_equal(parse(&o, "--holders", "5"), 0);
	assert_int_equal(parse(&o, "--holders", "6"), EXIT_PEAKBPF_FAILED);
	assert_int_equal(parse(&o, "--holders", "-1"), EXIT_PEAKBPF_FAILED);
	assert_int_equal(parse(&o, "--select", "relative"), EXIT_PEAKBPF_FAILED);
	assert_int_equal(parse(&o, "--select", "/a/../b"), EXIT_PEAKBPF_FAILED);
	assert_int_equal(parse(&o, "--spool-bytes", "1KiB"), EXIT_PEAKBPF_FAILED);
	assert_int_equal(parse(&o, "--bogus", NULL), EXIT_PEAKBPF_FAILED);
	assert_int_equal(parse(&o, "extra", NULL), EXIT_PEAKBPF_FAILED);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_listen),
		cmocka_unit_test(test_statuses),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
