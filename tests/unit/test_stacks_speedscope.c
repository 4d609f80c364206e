// SPDX-License-Identifier: MIT
/*
 * --stacks' speedscope JSON (src/lib/kernel/stacks_speedscope.h): made-up
 * lines, names that need escaping among them, written and compared with
 * the document speedscope's file format wants: each name once in
 * shared.frames (in the order first seen), a sample a line outer first,
 * weights in bytes; windows as profiles that share the frames.
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <linux/types.h>
#include "stacks_fold.h"
#include "stacks_speedscope.h"

/* Write v and return the document without its "exporter" member (the
 * version). The caller frees it. */
static char *written(const struct stacks_line *v, size_t n)
{
	char *buf = NULL, *ex, *end;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	assert_int_equal(stacks_speedscope_write(f, v, n, "T"), 0);
	fclose(f);
	ex = strstr(buf, "\"exporter\":\"peakbpf ");
	assert_non_null(ex);
	end = strstr(ex, "\",");
	assert_non_null(end);
	memmove(ex, end + 2, strlen(end + 2) + 1);
	return buf;
}

static void test_lines(void **state)
{
	/* Names as they are: a quote, a newline, a backslash, a byte that is
	 * not UTF-8, a separator of the folded format. */
	static char n0[] = "prog\0main\0say \"hi\"\n";
	static char n1[] = "prog\0main\0back\\slash\xff";
	static char n2[] = "[not attributed]\0[file; pages]";
	const struct stacks_line v[] = {
		{ .names = n0, .nnames = 3, .tgid = 7, .bytes = 128 },
		{ .names = n1, .nnames = 3, .tgid = 7, .bytes = 64 },
		{ .names = n2, .nnames = 2, .bytes = 8 },
	};
	char *out;

	(void)state;
	out = written(v, 3);
	assert_string_equal(out,
		"{\"$schema\":\"https://www.speedscope.app/file-format-schema.json\","
		"\"profiles\":[{\"type\":\"sampled\","
		"\"name\":\"T\",\"unit\":\"bytes\",\"startValue\":0,\"endValue\":200,"
		"\"samples\":[[0,1,2],[0,1,3],[4,5]],\"weights\":[128,64,8]}],\"name\":\"T\",\"activeProfileIndex\":0,"
		"\"shared\":{\"frames\":[{\"name\":\"prog\"},{\"name\":\"main\"},{\"name\":\"say \\\"hi\\\"\\n\"},"
		"{\"name\":\"back\\\\slash\\ufffd\"},{\"name\":\"[not attributed]\"},{\"name\":\"[file; pages]\"}]}}\n");
	free(out);
}

/* No lines (nothing resident): a valid document with an empty profile. */
static void test_empty(void **state)
{
	char *out;

	(void)state;
	out = written(NULL, 0);
	assert_non_null(strstr(out, "\"frames\":[]"));
	assert_non_null(strstr(out, "\"endValue\":0,\"samples\":[],\"weights\":[]}],"));
	assert_non_null(strstr(out, "\"frames\":[]}}\n"));
	free(out);
}

/* Two windows: a profile each, their names' frames shared (main once),
 * the second window's (the higher peak) the one shown first. */
static void test_windows(void **state)
{
	static char a[] = "prog\0main\0alloc_64";
	static char b[] = "prog\0main\0alloc_128";
	const struct stacks_line w1[] = { { .names = a, .nnames = 3, .tgid = 7, .bytes = 64 } };
	const struct stacks_line w2[] = { { .names = b, .nnames = 3, .tgid = 7, .bytes = 128 },
					  { .names = a, .nnames = 3, .tgid = 7, .bytes = 0 } };
	struct speedscope_file *sf;
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	(void)state;
	assert_non_null(f);
	assert_int_equal(speedscope_open(f, &sf), 0);
	assert_int_equal(speedscope_profile(sf, w1, 1, "[window 1]"), 0);
	assert_int_equal(speedscope_profile(sf, w2, 2, "[window 2]"), 0);
	assert_int_equal(speedscope_close(sf, 1, "T"), 0);
	fclose(f);
	assert_non_null(strstr(buf, "\"name\":\"[window 1]\",\"unit\":\"bytes\",\"startValue\":0,\"endValue\":64,"
				    "\"samples\":[[0,1,2]],\"weights\":[64]}"));
	assert_non_null(strstr(buf, "\"name\":\"[window 2]\",\"unit\":\"bytes\",\"startValue\":0,\"endValue\":128,"
				    "\"samples\":[[0,1,3],[0,1,2]],\"weights\":[128,0]}],\"name\":\"T\",\"activeProfileIndex\":1,"));
	assert_non_null(strstr(buf, "\"frames\":[{\"name\":\"prog\"},{\"name\":\"main\"},{\"name\":\"alloc_64\"},"
				    "{\"name\":\"alloc_128\"}]}}\n"));
	free(buf);
}

/* A stream that fails is -EIO, not a silent short file. */
static void test_full_disk(void **state)
{
	static char n0[] = "prog";
	const struct stacks_line v[] = { { .names = n0, .nnames = 1, .bytes = 4096 } };
	FILE *f = fopen("/dev/full", "w");

	(void)state;
	if (!f)
		skip();
	assert_int_equal(stacks_speedscope_write(f, v, 1, "T"), -EIO);
	fclose(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lines),
		cmocka_unit_test(test_empty),
		cmocka_unit_test(test_windows),
		cmocka_unit_test(test_full_disk),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
