// SPDX-License-Identifier: MIT
/* The SPANK plugin's writers against planted links (spank_files.h, issue 36). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "spank_files.h"

static char top[64], victim[96];

/* A directory anyone may write (as an admin may make dir=), and a file
 * of ours outside it that a planted link points at. */
static int setup(void **state)
{
	FILE *f;

	(void)state;
	snprintf(top, sizeof(top), "/tmp/pkb-helper2-spank.%d", (int)getpid());
	if (mkdir(top, 0755) || chmod(top, 01777))
		return -1;
	snprintf(victim, sizeof(victim), "%s.victim", top);
	f = fopen(victim, "w");
	if (!f)
		return -1;
	fputs("precious\n", f);
	return fclose(f);
}

static int teardown(void **state)
{
	char cmd[200];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf %s %s", top, victim);
	return system(cmd) == 0 ? 0 : -1;
}

static void assert_victim_intact(void)
{
	char buf[32] = "";
	FILE *f = fopen(victim, "r");

	assert_non_null(f);
	assert_non_null(fgets(buf, sizeof(buf), f));
	fclose(f);
	assert_string_equal(buf, "precious\n");
}

/* JOB planted as a symlink to another directory: refused, nothing made there. */
static void test_job_dir_link(void **state)
{
	char link[128];
	int dir_fd;

	(void)state;
	snprintf(link, sizeof(link), "%s/41", top);
	assert_int_equal(symlink("/tmp", link), 0);
	assert_int_equal(pb_job_dir_open(top, 41, &dir_fd), -ENOTDIR);
	assert_int_equal(dir_fd, -1);
	unlink(link);
}

/* JOB planted as a directory others may write: refused. */
static void test_job_dir_writable(void **state)
{
	char d[128];
	int dir_fd;

	(void)state;
	snprintf(d, sizeof(d), "%s/42", top);
	assert_int_equal(mkdir(d, 0777), 0);
	assert_int_equal(chmod(d, 0777), 0);
	assert_int_equal(pb_job_dir_open(top, 42, &dir_fd), -EPERM);
	rmdir(d);
}

/* DIR itself a symlink: refused. */
static void test_dir_link(void **state)
{
	char link[128];
	int dir_fd, err;

	(void)state;
	snprintf(link, sizeof(link), "%s/sub", top);
	assert_int_equal(symlink("/tmp", link), 0);
	err = pb_job_dir_open(link, 43, &dir_fd);
	assert_true(err == -ELOOP || err == -ENOTDIR);  /* O_DIRECTORY's check may come first */
	unlink(link);
}

/* A node file, steps.tsv and JOB.json planted as links to the victim:
 * each write refuses the link or replaces it, and the victim is intact. */
static void test_planted_files(void **state)
{
	char path[160];
	int dir_fd, fd = pb_job_dir_open(top, 44, &dir_fd);
	FILE *f;

	(void)state;
	assert_true(fd >= 0);
	snprintf(path, sizeof(path), "%s/44/0.node.json", top);
	assert_int_equal(symlink(victim, path), 0);
	assert_int_equal(pb_write_at(fd, "0.node.json", "x", 1), -ELOOP);
	snprintf(path, sizeof(path), "%s/44/steps.tsv", top);
	assert_int_equal(symlink(victim, path), 0);
	assert_int_equal(pb_append_at(fd, "steps.tsv"), -ELOOP);
	assert_null(pb_read_at(fd, "steps.tsv"));
	/* JOB.json.tmp and JOB.json in DIR, both links to the victim */
	snprintf(path, sizeof(path), "%s/44.json.tmp", top);
	assert_int_equal(symlink(victim, path), 0);
	snprintf(path, sizeof(path), "%s/44.json", top);
	assert_int_equal(symlink(victim, path), 0);
	f = pb_replace_begin(dir_fd, "44.json");
	assert_non_null(f);
	fputs("{}\n", f);
	assert_int_equal(pb_replace_end(f, dir_fd, "44.json"), 0);
	assert_victim_intact();
	{
		struct stat st;

		assert_int_equal(lstat(path, &st), 0);
		assert_true(S_ISREG(st.st_mode));       /* the link replaced, not followed */
		assert_int_equal(st.st_mode & 0777, 0644);
	}
	/* and a plain write where nothing was planted */
	assert_int_equal(pb_write_at(fd, "1.node.json", "{}", 2), 0);
	close(fd);
	close(dir_fd);
}

/* Two steps (or two nodes) append their lines to one steps.tsv: each
 * open keeps O_APPEND, so the second line follows the first instead of
 * overwriting it (the checks of a safe open once cleared it). */
static void test_steps_append(void **state)
{
	char buf[32] = "";
	int dir_fd, fd = pb_job_dir_open(top, 45, &dir_fd), a, b;
	FILE *f;

	(void)state;
	assert_true(fd >= 0);
	a = pb_append_at(fd, "steps.tsv");
	assert_true(a >= 0);
	assert_int_equal(write(a, "batch\n", 6), 6);
	b = pb_append_at(fd, "steps.tsv");
	assert_true(b >= 0);
	assert_int_equal(write(b, "0\n", 2), 2);
	close(a);
	close(b);
	f = pb_read_at(fd, "steps.tsv");
	assert_non_null(f);
	assert_int_equal(fread(buf, 1, sizeof(buf) - 1, f), 8);
	assert_string_equal(buf, "batch\n0\n");
	fclose(f);
	close(fd);
	close(dir_fd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_job_dir_link),
		cmocka_unit_test(test_job_dir_writable),
		cmocka_unit_test(test_dir_link),
		cmocka_unit_test(test_planted_files),
		cmocka_unit_test(test_steps_append),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
