// SPDX-License-Identifier: MIT
/* --user's resolution (src/cli/identity.c), against this system's own
 * database: root and nobody exist on every Debian system. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <errno.h>
#include <string.h>
#include <cmocka.h>
#include "identity.h"

static void test_names_and_numbers(void **state)
{
	struct identity id;
	char err[256];

	(void)state;
	assert_int_equal(identity_resolve("root", &id, err, sizeof(err)), 0);
	assert_int_equal(id.uid, 0);
	assert_int_equal(id.gid, 0);
	assert_string_equal(id.name, "root");
	assert_int_equal(identity_resolve("0", &id, err, sizeof(err)), 0);
	assert_string_equal(id.name, "root");   /* a uid with an entry is named */
	assert_int_equal(identity_resolve("nobody:0", &id, err, sizeof(err)), 0);
	assert_int_equal(id.uid, 65534);
	assert_int_equal(id.gid, 0);
	assert_true(id.n_groups >= 1);
}

/* A uid with no entry runs with its own number as its group, no others. */
static void test_uid_without_entry(void **state)
{
	struct identity id;
	char err[256];

	(void)state;
	assert_int_equal(identity_resolve("123456", &id, err, sizeof(err)), 0);
	assert_int_equal(id.uid, 123456);
	assert_int_equal(id.gid, 123456);
	assert_int_equal(id.n_groups, 0);
	assert_int_equal(identity_resolve("123456:7", &id, err, sizeof(err)), 0);
	assert_int_equal(id.gid, 7);
}

static void test_errors_say_what(void **state)
{
	struct identity id;
	char err[256];

	(void)state;
	assert_int_equal(identity_resolve("no-such-user-here", &id, err, sizeof(err)), -ENOENT);
	assert_non_null(strstr(err, "no such user 'no-such-user-here'"));
	assert_int_equal(identity_resolve("root:no-such-group-here", &id, err, sizeof(err)), -ENOENT);
	assert_non_null(strstr(err, "no such group"));
	assert_int_equal(identity_resolve("", &id, err, sizeof(err)), -EINVAL);
	assert_int_equal(identity_resolve("root:", &id, err, sizeof(err)), -EINVAL);
	assert_int_equal(identity_resolve(":0", &id, err, sizeof(err)), -EINVAL);
	assert_int_equal(identity_resolve("-1", &id, err, sizeof(err)), -ENOENT);
	assert_int_equal(identity_resolve("99999999999", &id, err, sizeof(err)), -ENOENT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_names_and_numbers),
		cmocka_unit_test(test_uid_without_entry),
		cmocka_unit_test(test_errors_say_what),
	};

	return cmocka_run_group_tests_name("identity", tests, NULL, NULL);
}
