// SPDX-License-Identifier: MIT
/*
 * Unit tests for the sources without BPF (src/lib/sources/source_cgroup.c and its
 * cgroup_*.c, src/lib/sources/source_proc.c, src/lib/sources/source_rusage.c): their parsers; the
 * cgroup source against fixture trees made in a temporary directory, with
 * the fixture "kernel" of cgroup_fixture.c installed through the test-only
 * seam of cgroup_fs_ops.h (no kernel cgroup is touched; one test reads,
 * and only reads, this machine's real hierarchy; others check that
 * without the fixture a plain directory is refused);
 * the proc sampler and rusage against real processes that touch known
 * amounts of memory. No root needed; all pass as root too.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <grp.h>
#include <inttypes.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cgroup_fixture.h"
#include "cgroup_fs.h"
#include "cgroup_parse.h"
#include "sources.h"

#define KiB (UINT64_C(1) << 10)
#define MiB (UINT64_C(1) << 20)
#define MS UINT64_C(1000000)

/* ---- helpers ------------------------------------------------------------- */

/* snprintf that says whether it all fitted. */
static bool join(char *out, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static bool join(char *out, size_t len, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(out, len, fmt, ap);
	va_end(ap);
	return n >= 0 && (size_t)n < len;
}

#define JOIN(buf, ...) assert_true(join(buf, sizeof(buf), __VA_ARGS__))

/* Without cmocka's asserts: also for forked children, where a failed
 * assert would go on running the rest of the suite. */
static bool write_file(const char *dir, const char *name, const char *text)
{
	char path[PATH_MAX];
	FILE *f;
	bool ok;

	if (!join(path, sizeof(path), "%s/%s", dir, name))
		return false;
	f = fopen(path, "w");
	if (!f)
		return false;
	ok = fputs(text, f) >= 0;
	return fclose(f) == 0 && ok;
}

static const char *read_file(const char *dir, const char *name, char *buf, size_t len)
{
	char path[PATH_MAX];
	ssize_t n;
	int fd;

	if (!join(path, sizeof(path), "%s/%s", dir, name))
		return NULL;
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return NULL;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n < 0)
		return NULL;
	buf[n] = '\0';
	return buf;
}

static void put(const char *dir, const char *name, const char *text)
{
	if (!write_file(dir, name, text))
		print_message("cannot write %s/%s: %s\n", dir, name, strerror(errno));
	assert_true(write_file(dir, name, text));
}

/* The file's text (it must exist). */
static const char *get(const char *dir, const char *name, char *buf, size_t len)
{
	const char *text = read_file(dir, name, buf, len);

	if (!text)
		print_message("cannot read %s/%s: %s\n", dir, name, strerror(errno));
	assert_non_null(text);
	return text;
}

static bool exists(const char *dir, const char *name)
{
	char path[PATH_MAX];

	return join(path, sizeof(path), "%s/%s", dir, name) && access(path, F_OK) == 0;
}

static void make_dir(const char *dir, const char *name)
{
	char path[PATH_MAX];

	JOIN(path, "%s/%s", dir, name);
	assert_int_equal(mkdir(path, 0755), 0);
}

static char *make_tmpdir(void)
{
	char *dir = strdup("/tmp/peakbpf-test-XXXXXX");

	assert_non_null(dir);
	assert_non_null(mkdtemp(dir));
	return dir;
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

static void rm_tree(char *dir)
{
	chmod(dir, 0700);
	nftw(dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
	free(dir);
}

/* The name peakbpf gives its command's cgroup: this process's marker. */
static char *child_name(char *buf, size_t len)
{
	struct cg_marker m;

	assert_int_equal(cg_marker_self(&m), 0);
	assert_int_equal(cg_marker_format(&m, buf, len), 0);
	return buf;
}

/* A v2 hierarchy root as the brief describes one. */
static void fixture_v2(const char *dir, const char *controllers, bool with_peak)
{
	put(dir, "cgroup.controllers", controllers);
	put(dir, "cgroup.subtree_control", "");
	put(dir, "cgroup.procs", "1\n");
	put(dir, "memory.current", "0\n");
	if (with_peak)
		put(dir, "memory.peak", "0\n");
}

/* A v1 memory cgroup's files. */
static void fixture_v1(const char *dir, const char *max_usage, const char *usage)
{
	put(dir, "cgroup.procs", "");
	put(dir, "tasks", "");
	put(dir, "memory.max_usage_in_bytes", max_usage);
	put(dir, "memory.usage_in_bytes", usage);
	put(dir, "memory.limit_in_bytes", "9223372036854771712\n");
}

/* A pid that existed and no longer does: a reaped child's. */
static pid_t dead_pid(void)
{
	pid_t pid = fork();

	assert_true(pid >= 0);
	if (pid == 0)
		_exit(0);
	assert_int_equal(waitpid(pid, NULL, 0), pid);
	return pid;
}

/* Resident bytes of pid from statm; 0 when unreadable. */
static uint64_t rss_raw(pid_t pid)
{
	char path[64], buf[256];
	uint64_t pages = 0;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/statm", (int)pid);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	if (parse_statm(buf, &pages))
		return 0;
	return pages * (uint64_t)sysconf(_SC_PAGESIZE);
}

static uint64_t rss_of(pid_t pid)
{
	uint64_t rss = rss_raw(pid);

	assert_true(rss > 0);
	return rss;
}

/* Map and touch bytes: each page written, so each is resident. */
static void *touch(uint64_t bytes)
{
	long page = sysconf(_SC_PAGESIZE);
	char *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return NULL;
	for (uint64_t i = 0; i < bytes; i += (uint64_t)page)
		((volatile char *)p)[i] = 1;
	return p;
}

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

#define ASSERT_NEAR(got, want, slack)                                                  \
	do {                                                                           \
		uint64_t g_ = (got), w_ = (want), s_ = (slack);                        \
		if (g_ + s_ < w_ || g_ > w_ + s_)                                      \
			print_message("%s = %" PRIu64 ", want %" PRIu64 " +- %" PRIu64 "\n", \
				      #got, g_, w_, s_);                               \
		assert_true(g_ + s_ >= w_ && g_ <= w_ + s_);                           \
	} while (0)

/* ---- parsers: mountinfo -------------------------------------------------- */

static void test_mountinfo_v1_memory_line(void **state)
{
	struct mountinfo_entry e;

	(void)state;
	assert_int_equal(parse_mountinfo_line("34 30 0:31 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory",
					      &e), 0);
	assert_string_equal(e.root, "/");
	assert_string_equal(e.mount_point, "/sys/fs/cgroup/memory");
	assert_string_equal(e.fstype, "cgroup");
	assert_string_equal(e.super_options, "rw,memory");
	assert_true(list_has(e.super_options, ",", "memory"));
}

static void test_mountinfo_cgroup2_line_with_optional_fields(void **state)
{
	struct mountinfo_entry e;

	(void)state;
	assert_int_equal(parse_mountinfo_line("29 23 0:26 / /sys/fs/cgroup rw,nosuid,nodev,noexec,relatime "
					      "shared:4 master:1 - cgroup2 cgroup2 rw,nsdelegate,memory_recursiveprot\n",
					      &e), 0);
	assert_string_equal(e.mount_point, "/sys/fs/cgroup");
	assert_string_equal(e.fstype, "cgroup2");
	assert_string_equal(e.super_options, "rw,nsdelegate,memory_recursiveprot");
	/* memory_recursiveprot is not memory */
	assert_false(list_has(e.super_options, ",", "memory"));
}

static void test_mountinfo_escapes_and_nonroot_root(void **state)
{
	struct mountinfo_entry e;

	(void)state;
	assert_int_equal(parse_mountinfo_line("40 30 0:37 /docker/ab\\040c /my\\040cg\\134x rw - cgroup2 none rw", &e), 0);
	assert_string_equal(e.root, "/docker/ab c");
	assert_string_equal(e.mount_point, "/my cg\\x");
}

static void test_mountinfo_malformed(void **state)
{
	struct mountinfo_entry e;
	char *huge = malloc(PATH_MAX + 100);

	(void)state;
	assert_int_equal(parse_mountinfo_line("", &e), -EINVAL);
	assert_int_equal(parse_mountinfo_line("\n", &e), -EINVAL);
	assert_int_equal(parse_mountinfo_line("34 30 0:31 / /sys/fs/cgroup/memory", &e), -EINVAL);
	/* no " - " separator */
	assert_int_equal(parse_mountinfo_line("34 30 0:31 / /mnt rw cgroup cgroup rw,memory", &e), -EINVAL);
	/* nothing after the separator */
	assert_int_equal(parse_mountinfo_line("34 30 0:31 / /mnt rw -", &e), -EINVAL);
	assert_int_equal(parse_mountinfo_line("34 30 0:31 / /mnt rw - cgroup cgroup", &e), -EINVAL);
	/* a mount point longer than PATH_MAX */
	assert_non_null(huge);
	strcpy(huge, "1 2 0:3 / /");
	memset(huge + strlen(huge), 'a', PATH_MAX);
	strcpy(huge + strlen("1 2 0:3 / /") + PATH_MAX, " rw - cgroup2 x rw");
	assert_int_equal(parse_mountinfo_line(huge, &e), -ENAMETOOLONG);
	free(huge);
}

static void test_list_has(void **state)
{
	(void)state;
	assert_true(list_has("cpu io memory pids\n", " \n", "memory"));
	assert_true(list_has("memory", " \n", "memory"));
	assert_false(list_has("cpu io\n", " \n", "memory"));
	assert_false(list_has("memoryx mem", " \n", "memory"));
	assert_false(list_has("", " \n", "memory"));
	assert_false(list_has("memory", " \n", ""));
	assert_true(list_has("rw,nosuid,memory", ",", "memory"));
	assert_true(list_has(",,memory,,", ",", "memory"));
}

/* ---- parsers: /proc/PID/cgroup ------------------------------------------- */

static void test_proc_cgroup_lines(void **state)
{
	struct proc_cgroup_line l;

	(void)state;
	assert_int_equal(parse_proc_cgroup_line("4:memory:/process_api/a18e\n", &l), 0);
	assert_int_equal(l.hierarchy, 4);
	assert_string_equal(l.controllers, "memory");
	assert_string_equal(l.path, "/process_api/a18e");
	assert_int_equal(parse_proc_cgroup_line("0::/user.slice/user-1000.slice/session-2.scope", &l), 0);
	assert_int_equal(l.hierarchy, 0);
	assert_string_equal(l.controllers, "");
	assert_string_equal(l.path, "/user.slice/user-1000.slice/session-2.scope");
	assert_int_equal(parse_proc_cgroup_line("2:cpu,cpuacct:/", &l), 0);
	assert_string_equal(l.controllers, "cpu,cpuacct");
	assert_string_equal(l.path, "/");
	assert_int_equal(parse_proc_cgroup_line("1:name=systemd:/a:b", &l), 0);
	assert_string_equal(l.controllers, "name=systemd");
	assert_string_equal(l.path, "/a:b");     /* a colon inside a cgroup name */
}

static void test_proc_cgroup_lines_malformed(void **state)
{
	struct proc_cgroup_line l;

	(void)state;
	assert_int_equal(parse_proc_cgroup_line("", &l), -EINVAL);
	assert_int_equal(parse_proc_cgroup_line("memory:/a", &l), -EINVAL);
	assert_int_equal(parse_proc_cgroup_line("4:memory", &l), -EINVAL);
	assert_int_equal(parse_proc_cgroup_line("4:memory:", &l), -EINVAL);
	assert_int_equal(parse_proc_cgroup_line("4:memory:relative", &l), -EINVAL);
	assert_int_equal(parse_proc_cgroup_line("-4:memory:/", &l), -EINVAL);
	assert_int_equal(parse_proc_cgroup_line("4x:memory:/", &l), -EINVAL);
	assert_int_equal(parse_proc_cgroup_line(":memory:/", &l), -EINVAL);
	assert_int_equal(parse_proc_cgroup_line("99999999999999999999999:memory:/", &l), -ERANGE);
}

static void test_cgroup_path_from_proc_text(void **state)
{
	static const char v1[] = "9:name=systemd:/\n8:pids:/\n4:memory:/process_api/a18e\n3:cpuset:/\n0::/\n";
	static const char v2[] = "0::/user.slice/x.scope\n";
	char path[PATH_MAX];

	(void)state;
	assert_int_equal(cgroup_path_from_proc(v1, false, path, sizeof(path)), 0);
	assert_string_equal(path, "/process_api/a18e");
	assert_int_equal(cgroup_path_from_proc(v1, true, path, sizeof(path)), 0);
	assert_string_equal(path, "/");
	assert_int_equal(cgroup_path_from_proc(v2, true, path, sizeof(path)), 0);
	assert_string_equal(path, "/user.slice/x.scope");
	assert_int_equal(cgroup_path_from_proc(v2, false, path, sizeof(path)), -ENOENT);
	assert_int_equal(cgroup_path_from_proc("", true, path, sizeof(path)), -ENOENT);
	assert_int_equal(cgroup_path_from_proc("2:cpu,memory,pids:/job\n", false, path, sizeof(path)), 0);
	assert_string_equal(path, "/job");
	assert_int_equal(cgroup_path_from_proc("garbage\n0::/\n", true, path, sizeof(path)), -EINVAL);
	assert_int_equal(cgroup_path_from_proc(v2, true, path, 5), -ENAMETOOLONG);
}

static void test_cgroup_rel_path(void **state)
{
	char out[PATH_MAX];

	(void)state;
	assert_int_equal(cgroup_rel_path("/", "/a/b", out, sizeof(out)), 0);
	assert_string_equal(out, "/a/b");
	assert_int_equal(cgroup_rel_path("/docker/1", "/docker/1/x", out, sizeof(out)), 0);
	assert_string_equal(out, "/x");
	assert_int_equal(cgroup_rel_path("/docker/1/", "/docker/1", out, sizeof(out)), 0);
	assert_string_equal(out, "/");
	/* a prefix that is not a whole component */
	assert_int_equal(cgroup_rel_path("/docker/1", "/docker/12", out, sizeof(out)), -ENOENT);
	assert_int_equal(cgroup_rel_path("/docker/1", "/other", out, sizeof(out)), -ENOENT);
	assert_int_equal(cgroup_rel_path("/", "/a/b", out, 3), -ENAMETOOLONG);
}

/* ---- parsers: numbers ---------------------------------------------------- */

static void test_parse_counter(void **state)
{
	uint64_t v = 7;

	(void)state;
	assert_int_equal(parse_counter("0\n", &v), 0);
	assert_int_equal(v, 0);
	assert_int_equal(parse_counter("67108864\n", &v), 0);
	assert_int_equal(v, 64 * MiB);
	assert_int_equal(parse_counter("18446744073709551615", &v), 0);
	assert_true(v == UINT64_MAX);
	assert_int_equal(parse_counter("18446744073709551616\n", &v), -ERANGE);
	assert_int_equal(parse_counter("", &v), -EINVAL);
	assert_int_equal(parse_counter("\n", &v), -EINVAL);
	assert_int_equal(parse_counter("max\n", &v), -EINVAL);
	assert_int_equal(parse_counter("-1\n", &v), -EINVAL);
	assert_int_equal(parse_counter(" 5\n", &v), -EINVAL);
	assert_int_equal(parse_counter("5 6\n", &v), -EINVAL);
	assert_int_equal(parse_counter("5\n\n", &v), -EINVAL);
	assert_int_equal(parse_counter("reset\n", &v), -EINVAL);
}

static void test_parse_statm(void **state)
{
	uint64_t pages = 7;

	(void)state;
	assert_int_equal(parse_statm("2468 1234 800 10 0 600 0\n", &pages), 0);
	assert_int_equal(pages, 1234);
	assert_int_equal(parse_statm("0 0 0 0 0 0 0\n", &pages), 0);     /* a zombie */
	assert_int_equal(pages, 0);
	assert_int_equal(parse_statm("1 2", &pages), 0);
	assert_int_equal(pages, 2);
	assert_int_equal(parse_statm("", &pages), -EINVAL);
	assert_int_equal(parse_statm("2468\n", &pages), -EINVAL);
	assert_int_equal(parse_statm("2468 x 1\n", &pages), -EINVAL);
	assert_int_equal(parse_statm("2468 12x 1\n", &pages), -EINVAL);
	assert_int_equal(parse_statm("2468 -1 1\n", &pages), -EINVAL);
	assert_int_equal(parse_statm("1 99999999999999999999999 1\n", &pages), -ERANGE);
}

static void test_parse_pid_words(void **state)
{
	pid_t pids[4];
	size_t n = 99;

	(void)state;
	assert_int_equal(parse_pid_words("12 345 ", pids, 4, &n), 0);  /* children */
	assert_int_equal(n, 2);
	assert_int_equal(pids[0], 12);
	assert_int_equal(pids[1], 345);
	assert_int_equal(parse_pid_words("7\n8\n9\n", pids, 4, &n), 0); /* cgroup.procs */
	assert_int_equal(n, 3);
	assert_int_equal(pids[2], 9);
	assert_int_equal(parse_pid_words("", pids, 4, &n), 0);
	assert_int_equal(n, 0);
	assert_int_equal(parse_pid_words(" \n", pids, 4, &n), 0);
	assert_int_equal(n, 0);
	assert_int_equal(parse_pid_words("1 2 3 4 5", pids, 4, &n), -E2BIG);
	assert_int_equal(parse_pid_words("12x", pids, 4, &n), -EINVAL);
	assert_int_equal(parse_pid_words("0", pids, 4, &n), -EINVAL);
	assert_int_equal(parse_pid_words("-3", pids, 4, &n), -EINVAL);
	assert_int_equal(parse_pid_words("2147483648", pids, 4, &n), -ERANGE);
	assert_int_equal(parse_pid_words("2147483647", pids, 4, &n), 0);
	assert_int_equal(pids[0], 2147483647);
}

/* ---- cgroup source: fixtures --------------------------------------------- */

/* Setup and teardown of the tests that run against a fixture tree. */
static int use_fixture(void **state)
{
	(void)state;
	cgroup_fs_set_ops_for_tests(&cgroup_fixture_ops);
	return 0;
}

static int use_cgroupfs(void **state)
{
	(void)state;
	cgroup_fs_set_ops_for_tests(NULL);
	return 0;
}

static void test_cgroup_v2_fixture_command_mode(void **state)
{
	struct source_opts o = { .command_mode = true };
	char *root = make_tmpdir(), buf[256], name[CG_MARKER_MAX], child[PATH_MAX], why[256] = "x";
	struct source *s = NULL;
	struct figure f;

	(void)state;
	fixture_v2(root, "cpu io memory pids\n", true);
	o.cgroup_root = root;
	assert_int_equal(cgroup_source_open(&o, &s, why, sizeof(why)), 0);
	assert_string_equal(why, "");
	assert_true(cgroup_source_is_exclusive(s));
	assert_string_equal(s->name, "cgroup");
	/* memory enabled for the children, the child made and filled */
	assert_string_equal(get(root, "cgroup.subtree_control", buf, sizeof(buf)), "+memory\n");
	JOIN(child, "%s/%s", root, child_name(name, sizeof(name)));
	assert_true(exists(child, "memory.peak"));
	assert_string_equal(get(child, "cgroup.controllers", buf, sizeof(buf)), "memory\n");
	assert_string_equal(get(child, "cgroup.procs", buf, sizeof(buf)), "");

	assert_int_equal(s->ops->add_root(s, 4242), 0);
	assert_string_equal(get(child, "cgroup.procs", buf, sizeof(buf)), "4242\n");
	put(child, "memory.current", "1000\n");
	assert_int_equal(s->ops->start(s), 0);
	/* reset through the fd (6.12+ semantics) */
	assert_string_equal(get(child, "memory.peak", buf, sizeof(buf)), "reset\n");

	put(child, "memory.peak", "5000\n");        /* what the kernel would say */
	put(child, "memory.current", "3000\n");
	assert_int_equal(s->ops->close_window(s, &f), 0);
	assert_string_equal(f.source, "cgroup-v2");
	assert_true(f.measured);
	assert_false(f.exact);
	assert_false(f.bound_known);
	assert_true(f.exclusive);
	assert_int_equal(f.peak_bytes, 5000);
	assert_true(f.baseline_known);
	assert_int_equal(f.baseline_bytes, 1000);
	assert_string_equal(f.cgroup_path, child);
	assert_string_equal(f.scope, "cgroup: the tree's own cgroup, including page cache and kernel memory");
	assert_non_null(strstr(f.inexact_reason, "page cache"));
	assert_null(strstr(f.inexact_reason, "since the cgroup was created"));
	/* the next window was reset and starts at memory.current */
	assert_string_equal(get(child, "memory.peak", buf, sizeof(buf)), "reset\n");

	put(child, "memory.peak", "7000\n");
	assert_int_equal(s->ops->close_window(s, &f), 0);
	assert_int_equal(f.peak_bytes, 7000);
	assert_int_equal(f.baseline_bytes, 3000);
	assert_null(strstr(f.inexact_reason, "since the cgroup was created"));

	/* a leftover process goes back to peakbpf's cgroup, the child goes */
	s->ops->destroy(s);
	assert_false(exists(root, name));
	assert_string_equal(get(root, "cgroup.procs", buf, sizeof(buf)), "1\n4242\n");
	rm_tree(root);
}

static void test_cgroup_v2_fixture_memory_already_enabled(void **state)
{
	struct source_opts o = { .command_mode = true, .self_cgroup = "/job" };
	char *root = make_tmpdir(), buf[256], name[CG_MARKER_MAX], job[PATH_MAX], why[256];
	struct source *s = NULL;

	(void)state;
	fixture_v2(root, "memory\n", true);
	put(root, "cgroup.subtree_control", "memory\n");
	make_dir(root, "job");
	JOIN(job, "%s/job", root);
	fixture_v2(job, "memory\n", true);
	put(job, "cgroup.subtree_control", "memory\n");
	o.cgroup_root = root;
	assert_int_equal(cgroup_source_open(&o, &s, why, sizeof(why)), 0);
	assert_true(cgroup_source_is_exclusive(s));
	/* nothing written where memory was enabled already */
	assert_string_equal(get(job, "cgroup.subtree_control", buf, sizeof(buf)), "memory\n");
	assert_true(exists(job, child_name(name, sizeof(name))));
	s->ops->destroy(s);
	assert_false(exists(job, name));
	rm_tree(root);
}

/* Without the per-fd reset (kernels before 6.12 refuse to open memory.peak
 * for writing, even to root), later windows report the peak since the
 * cgroup was created. Root ignores file modes, so the check runs in a
 * child that drops to nobody when the test runs as root. */
static int v2_without_reset(void)
{
	struct source_opts o = { .command_mode = true };
	char *root = strdup("/tmp/peakbpf-test-XXXXXX"), name[CG_MARKER_MAX], child[PATH_MAX], path[PATH_MAX];
	char buf[256], why[256];
	struct source *s = NULL;
	struct figure f;
	int line = 0;

#define CHECK(cond)                                                               \
	do {                                                                      \
		if (!(cond)) {                                                    \
			line = __LINE__;                                          \
			goto out;                                                 \
		}                                                                 \
	} while (0)
	CHECK(root && mkdtemp(root));
	o.cgroup_root = root;
	CHECK(write_file(root, "cgroup.controllers", "memory\n"));
	CHECK(write_file(root, "cgroup.subtree_control", ""));
	CHECK(write_file(root, "cgroup.procs", ""));
	CHECK(write_file(root, "memory.current", "0\n"));
	CHECK(write_file(root, "memory.peak", "0\n"));
	CHECK(join(path, sizeof(path), "%s/memory.peak", root));
	CHECK(chmod(path, 0444) == 0);
	CHECK(cgroup_source_open(&o, &s, why, sizeof(why)) == 0);
	CHECK(join(child, sizeof(child), "%s/%s", root, child_name(name, sizeof(name))));
	CHECK(join(path, sizeof(path), "%s/memory.peak", child));
	CHECK(s->ops->add_root(s, getpid()) == 0);
	CHECK(s->ops->start(s) == 0);
	CHECK(read_file(child, "memory.peak", buf, sizeof(buf)) && !strcmp(buf, "0\n"));   /* not written */
	CHECK(chmod(path, 0644) == 0);
	CHECK(write_file(child, "memory.peak", "500\n"));
	CHECK(s->ops->close_window(s, &f) == 0);
	CHECK(f.measured && f.peak_bytes == 500);
	/* the first window began when the cgroup was made: no caveat */
	CHECK(!strstr(f.inexact_reason, "since the cgroup was created"));
	CHECK(write_file(child, "memory.peak", "900\n"));
	CHECK(s->ops->close_window(s, &f) == 0);
	CHECK(f.measured && f.peak_bytes == 900);
	CHECK(strstr(f.inexact_reason, "since the cgroup was created"));
	s->ops->destroy(s);
	s = NULL;
	CHECK(!exists(root, name));
out:
	if (s)
		s->ops->destroy(s);
	if (root)
		rm_tree(root);
	return line;
#undef CHECK
}

static void test_cgroup_v2_fixture_without_reset(void **state)
{
	pid_t pid;
	int status;

	(void)state;
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		if (geteuid() == 0 &&
		    (setgroups(0, NULL) || setresgid(65534, 65534, 65534) || setresuid(65534, 65534, 65534)))
			_exit(255);
		_exit(v2_without_reset() & 0xff);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	if (WEXITSTATUS(status))
		print_message("v2_without_reset failed near line %d (mod 256; 255: cannot drop root)\n",
			      WEXITSTATUS(status));
	assert_int_equal(WEXITSTATUS(status), 0);
}

static void test_cgroup_v2_fixture_no_internal_process_rule(void **state)
{
	struct source_opts o = { .command_mode = true, .self_cgroup = "/job" };
	char *root = make_tmpdir(), buf[256], job[PATH_MAX], why[256] = "";
	struct source *s = NULL;

	(void)state;
	fixture_v2(root, "memory\n", false);        /* the root keeps no peak */
	put(root, "cgroup.subtree_control", "memory\n");
	make_dir(root, "job");
	JOIN(job, "%s/job", root);
	fixture_v2(job, "memory\n", false);
	put(job, "cgroup.procs", "42\n");           /* peakbpf itself, say */
	o.cgroup_root = root;
	/* no cgroup of its own, and its own one keeps no memory.peak */
	assert_int_equal(cgroup_source_open(&o, &s, why, sizeof(why)), -EBUSY);
	assert_null(s);
	assert_non_null(strstr(why, "no-internal-process"));
	assert_non_null(strstr(why, job));
	assert_string_equal(get(job, "cgroup.subtree_control", buf, sizeof(buf)), "");
	assert_false(exists(job, child_name(buf, sizeof(buf))));

	/* With a memory.peak in its own cgroup: the shared figure. */
	put(job, "memory.peak", "777\n");
	why[0] = '\0';
	assert_int_equal(cgroup_source_open(&o, &s, why, sizeof(why)), 0);
	assert_non_null(strstr(why, "no-internal-process"));
	assert_false(cgroup_source_is_exclusive(s));
	assert_int_equal(s->ops->add_root(s, 4242), 0);
	assert_string_equal(get(job, "cgroup.procs", buf, sizeof(buf)), "42\n");  /* not moved */
	assert_int_equal(s->ops->start(s), 0);
	put(job, "memory.peak", "888\n");
	{
		struct figure f;

		assert_int_equal(s->ops->close_window(s, &f), 0);
		assert_true(f.measured);
		assert_false(f.exclusive);
		assert_int_equal(f.peak_bytes, 888);
		assert_string_equal(f.scope,
				    "cgroup shared with other processes, including page cache and kernel memory");
		assert_non_null(strstr(f.inexact_reason, "other processes"));
	}
	s->ops->destroy(s);
	assert_true(exists(job, "memory.peak"));    /* a shared cgroup stays */
	rm_tree(root);
}

static void test_cgroup_v2_fixture_without_memory_peak(void **state)
{
	struct source_opts o = { .command_mode = true };
	char *root = make_tmpdir(), name[CG_MARKER_MAX], why[256] = "";
	struct source *s = NULL;

	(void)state;
	fixture_v2(root, "memory\n", false);        /* as before 5.19 */
	o.cgroup_root = root;
	assert_int_equal(cgroup_source_open(&o, &s, why, sizeof(why)), -EOPNOTSUPP);
	assert_null(s);
	assert_non_null(strstr(why, "5.19"));
	assert_false(exists(root, child_name(name, sizeof(name))));  /* removed again */
	rm_tree(root);
}

static void test_cgroup_v2_fixture_without_memory_controller(void **state)
{
	struct source_opts o = { .command_mode = true };
	char *root = make_tmpdir(), why[256] = "";
	struct source *s = NULL;

	(void)state;
	fixture_v2(root, "cpu io pids\n", true);
	o.cgroup_root = root;
	assert_int_equal(cgroup_source_open(&o, &s, why, sizeof(why)), -EOPNOTSUPP);
	assert_null(s);
	assert_non_null(strstr(why, "no memory controller"));
	rm_tree(root);
}

static void test_cgroup_v2_fixture_attach_mode(void **state)
{
	struct source_opts o = { .command_mode = false };
	char *root = make_tmpdir(), buf[256], job[PATH_MAX], why[256];
	struct source *s = NULL;
	struct figure f;

	(void)state;
	make_dir(root, "job");
	JOIN(job, "%s/job", root);
	fixture_v2(root, "memory\n", false);
	fixture_v2(job, "memory\n", true);
	put(job, "memory.current", "100\n");
	o.cgroup_root = root;
	o.self_cgroup = "/job";     /* in a fixture: every process's cgroup */
	assert_int_equal(cgroup_source_open(&o, &s, why, sizeof(why)), 0);
	assert_false(cgroup_source_is_exclusive(s));
	assert_int_equal(s->ops->add_root(s, getpid()), 0);
	assert_int_equal(s->ops->add_root(s, 1), 0);       /* later roots: same figure */
	assert_int_equal(s->ops->start(s), 0);
	/* 6.12+: the reset is private to our fd, so a shared cgroup is reset too */
	assert_string_equal(get(job, "memory.peak", buf, sizeof(buf)), "reset\n");
	put(job, "memory.peak", "4096\n");
	assert_int_equal(s->ops->close_window(s, &f), 0);
	assert_true(f.measured);
	assert_false(f.exclusive);
	assert_int_equal(f.peak_bytes, 4096);
	assert_int_equal(f.baseline_bytes, 100);
	assert_string_equal(f.cgroup_path, job);
	assert_null(strstr(f.inexact_reason, "since the cgroup was created"));
	s->ops->destroy(s);
	assert_true(exists(job, "memory.peak"));
	rm_tree(root);
}

static void test_cgroup_v2_fixture_attach_root_cgroup(void **state)
{
	struct source_opts o = { .command_mode = false };
	char *root = make_tmpdir(), why[256];
	struct source *s = NULL;
	struct figure f;

	(void)state;
	fixture_v2(root, "memory\n", false);        /* the root cgroup: no memory.peak */
	o.cgroup_root = root;
	assert_int_equal(cgroup_source_open(&o, &s, why, sizeof(why)), 0);
	assert_int_equal(s->ops->add_root(s, getpid()), -EOPNOTSUPP);
	assert_int_equal(s->ops->start(s), -ENOENT);
	assert_int_equal(s->ops->close_window(s, &f), 0);
	assert_false(f.measured);     /* never a 0 that looks measured */
	assert_non_null(strstr(f.inexact_reason, "root cgroup"));
	s->ops->destroy(s);
	rm_tree(root);
}

static void test_cgroup_v1_fixture_command_mode(void **state)
{
	struct source_opts o = { .command_mode = true, .self_cgroup = "/job" };
	char *root = make_tmpdir(), buf[256], mem[PATH_MAX], job[PATH_MAX], child[PATH_MAX], name[CG_MARKER_MAX], why[256];
	struct source *s = NULL;
	struct figure f;

	(void)state;
	/* as mounted: <root>/memory is the v1 memory hierarchy */
	make_dir(root, "memory");
	JOIN(mem, "%s/memory", root);
	fixture_v1(mem, "123\n", "100\n");
	make_dir(mem, "job");
	JOIN(job, "%s/job", mem);
	fixture_v1(job, "123\n", "100\n");
	put(job, "cgroup.procs", "77\n");   /* v1 has no no-internal-process rule */
	o.cgroup_root = root;
	assert_int_equal(cgroup_source_open(&o, &s, why, sizeof(why)), 0);
	assert_true(cgroup_source_is_exclusive(s));
	JOIN(child, "%s/%s", job, child_name(name, sizeof(name)));
	assert_true(exists(child, "memory.max_usage_in_bytes"));
	assert_int_equal(s->ops->add_root(s, 4242), 0);
	assert_string_equal(get(child, "cgroup.procs", buf, sizeof(buf)), "4242\n");
	put(child, "memory.usage_in_bytes", "2000\n");
	assert_int_equal(s->ops->start(s), 0);
	/* the peak reset by writing 0 */
	assert_string_equal(get(child, "memory.max_usage_in_bytes", buf, sizeof(buf)), "0\n");

	put(child, "memory.max_usage_in_bytes", "9000\n");
	put(child, "memory.usage_in_bytes", "2500\n");
	assert_int_equal(s->ops->close_window(s, &f), 0);
	assert_string_equal(f.source, "cgroup-v1");
	assert_true(f.measured);
	assert_true(f.exclusive);
	assert_false(f.exact);
	assert_int_equal(f.peak_bytes, 9000);
	assert_int_equal(f.baseline_bytes, 2000);
	assert_string_equal(f.cgroup_path, child);
	assert_string_equal(get(child, "memory.max_usage_in_bytes", buf, sizeof(buf)), "0\n");
	put(child, "memory.max_usage_in_bytes", "3000\n");
	assert_int_equal(s->ops->close_window(s, &f), 0);
	assert_int_equal(f.peak_bytes, 3000);
	assert_int_equal(f.baseline_bytes, 2500);

	s->ops->destroy(s);
	assert_false(exists(job, name));
	assert_string_equal(get(job, "cgroup.procs", buf, sizeof(buf)), "77\n4242\n");
	rm_tree(root);
}

static void test_cgroup_v1_fixture_attach_mode_does_not_reset(void **state)
{
	struct source_opts o = { .command_mode = false };
	char *root = make_tmpdir(), buf[256], why[256];
	struct source *s = NULL;
	struct figure f;

	(void)state;
	fixture_v1(root, "123456\n", "100000\n");   /* root itself is the hierarchy */
	o.cgroup_root = root;
	assert_int_equal(cgroup_source_open(&o, &s, why, sizeof(why)), 0);
	assert_int_equal(s->ops->add_root(s, getpid()), 0);
	assert_int_equal(s->ops->start(s), 0);
	assert_int_equal(s->ops->close_window(s, &f), 0);
	assert_string_equal(f.source, "cgroup-v1");
	assert_true(f.measured);
	assert_false(f.exclusive);
	assert_int_equal(f.peak_bytes, 123456);
	assert_int_equal(f.baseline_bytes, 100000);
	assert_non_null(strstr(f.inexact_reason, "all-time"));
	assert_string_equal(get(root, "memory.max_usage_in_bytes", buf, sizeof(buf)), "123456\n");
	s->ops->destroy(s);
	assert_true(exists(root, "memory.max_usage_in_bytes"));
	rm_tree(root);
}

/* A marker-named directory in root with an empty (or given) cgroup.procs. */
static void make_marked(const char *root, const struct cg_marker *m, const char *procs, char *name, size_t len)
{
	char sub[PATH_MAX];

	assert_int_equal(cg_marker_format(m, name, len), 0);
	make_dir(root, name);
	JOIN(sub, "%s/%s", root, name);
	put(sub, "cgroup.procs", procs);
	put(sub, "memory.peak", "0\n");
}

/* The stale-cgroup scan goes by the marker, never by the name's pid alone:
 * a dead creator's empty cgroup goes; a live creator's stays though empty;
 * a reused pid (same pid, another start time) counts as gone; a creator in
 * another PID namespace is only judged from the initial one; a name
 * without a full marker (peakbpf-<pid> of older versions) stays. */
static void test_cgroup_removes_stale_children(void **state)
{
	struct source_opts o = { .command_mode = true };
	char *root = make_tmpdir(), stale[CG_MARKER_MAX], busy[CG_MARKER_MAX], live[CG_MARKER_MAX];
	char reused[CG_MARKER_MAX], foreign[CG_MARKER_MAX], old[64], name[CG_MARKER_MAX], why[256];
	char victim[PATH_MAX], link[CG_MARKER_MAX], path[PATH_MAX];
	struct cg_marker self, m;
	struct source *s = NULL;
	pid_t dead = dead_pid(), peer;
	int gate[2];

	(void)state;
	assert_int_equal(cg_marker_self(&self), 0);
	/* A live peer: a child that waits, its marker read like peakbpf's. */
	assert_int_equal(pipe(gate), 0);
	peer = fork();
	assert_true(peer >= 0);
	if (peer == 0) {
		char c;

		close(gate[1]);
		_exit(read(gate[0], &c, 1) < 0);
	}
	close(gate[0]);
	fixture_v2(root, "memory\n", true);
	put(root, "cgroup.subtree_control", "memory\n");
	m = self;
	m.pid = (int)dead;
	make_marked(root, &m, "", stale, sizeof(stale));        /* dead, empty: goes */
	m.pid = (int)dead_pid();
	make_marked(root, &m, "5\n", busy, sizeof(busy));       /* dead, processes in it: stays */
	m.pid = (int)peer;
	{                                                       /* the child's own start time */
		char stat_path[64], text[1024];

		snprintf(stat_path, sizeof(stat_path), "%d/stat", (int)peer);
		assert_int_equal(parse_stat_start_time(get("/proc", stat_path, text, sizeof(text)), &m.start), 0);
	}
	make_marked(root, &m, "", live, sizeof(live));          /* alive, empty: stays */
	m.start += 1000;
	make_marked(root, &m, "", reused, sizeof(reused));      /* pid reused since: goes */
	m = self;
	m.pid = (int)dead;
	m.pidns = 1;                                            /* no namespace has inode 1 */
	make_marked(root, &m, "", foreign, sizeof(foreign));
	snprintf(old, sizeof(old), "peakbpf-%d", (int)dead);
	make_dir(root, old);                                    /* no marker: stays */
	make_dir(root, "peakbpf-x");
	/* A symlink with a dead creator's marker is not followed to its target. */
	JOIN(victim, "%s.victim", root);
	assert_int_equal(mkdir(victim, 0755), 0);
	put(victim, "cgroup.procs", "");
	m = self;
	m.pid = (int)dead;
	m.start += 1;
	assert_int_equal(cg_marker_format(&m, link, sizeof(link)), 0);
	JOIN(path, "%s/%s", root, link);
	assert_int_equal(symlink(victim, path), 0);

	o.cgroup_root = root;
	assert_int_equal(cgroup_source_open(&o, &s, why, sizeof(why)), 0);
	assert_false(exists(root, stale));
	assert_true(exists(root, busy));
	assert_true(exists(root, live));
	assert_false(exists(root, reused));
	/* From a non-initial namespace another namespace's cgroup is left
	 * alone. From the initial one it goes when no process is in that
	 * namespace, if every process's namespace could be read (not so where
	 * even root may not read pid 1's, as in some sandboxes). */
	if (self.pidns != 0xEFFFFFFCULL)
		assert_true(exists(root, foreign));
	else
		print_message("another namespace's leftover, seen from the initial one: %s\n",
			      exists(root, foreign) ? "kept (a process's namespace unreadable)" : "removed");
	assert_true(exists(root, old));
	assert_true(exists(root, "peakbpf-x"));
	assert_true(exists(victim, "cgroup.procs"));
	assert_true(exists(root, child_name(name, sizeof(name))));
	s->ops->destroy(s);
	assert_false(exists(root, name));
	assert_int_equal(write(gate[1], "x", 1), 1);
	close(gate[1]);
	waitpid(peer, NULL, 0);
	rm_tree(strdup(victim));
	rm_tree(root);
}

/* A live creator in a PID namespace of its own (a child made with
 * CLONE_NEWPID, pid 1 there): its empty cgroup is kept, though pid 1 here
 * is another process. Needs root for unshare. */
static void test_cgroup_keeps_live_peer_in_other_pidns(void **state)
{
	struct source_opts o = { .command_mode = true };
	char *root, peer_name[CG_MARKER_MAX], name[CG_MARKER_MAX], why[256], path[64], text[1024];
	struct source *sp = NULL;
	struct cg_marker m;
	struct stat st;
	int gate[2], ready[2];
	pid_t child;
	char c;

	(void)state;
	if (geteuid() != 0) {
		print_message("skip - a PID namespace of its own needs root\n");
		skip();
	}
	assert_int_equal(pipe(gate), 0);
	assert_int_equal(pipe(ready), 0);
	child = fork();
	assert_true(child >= 0);
	if (child == 0) {
		pid_t inner;

		close(gate[1]);
		close(ready[0]);
		if (unshare(CLONE_NEWPID))
			_exit(1);
		inner = fork();         /* pid 1 of the new namespace */
		if (inner == 0) {
			close(ready[1]);
			_exit(read(gate[0], &c, 1) < 0);
		}
		/* Its pid as seen from here, for the test to find it. */
		_exit(write(ready[1], &inner, sizeof(inner)) == sizeof(inner) &&
		      waitpid(inner, NULL, 0) == inner ? 0 : 1);
	}
	close(gate[0]);
	close(ready[1]);
	{
		pid_t inner;

		assert_int_equal(read(ready[0], &inner, sizeof(inner)), sizeof(inner));
		close(ready[0]);
		snprintf(path, sizeof(path), "/proc/%d/ns/pid", (int)inner);
		assert_int_equal(stat(path, &st), 0);
		snprintf(path, sizeof(path), "%d/stat", (int)inner);
		assert_int_equal(parse_stat_start_time(get("/proc", path, text, sizeof(text)), &m.start), 0);
	}
	m.pid = 1;
	m.pidns = (unsigned long long)st.st_ino;
	root = make_tmpdir();
	fixture_v2(root, "memory\n", true);
	make_marked(root, &m, "", peer_name, sizeof(peer_name));
	o.cgroup_root = root;
	assert_int_equal(cgroup_source_open(&o, &sp, why, sizeof(why)), 0);
	assert_true(exists(root, peer_name));
	assert_true(exists(root, child_name(name, sizeof(name))));
	sp->ops->destroy(sp);
	assert_int_equal(write(gate[1], "x", 1), 1);
	close(gate[1]);
	assert_int_equal(waitpid(child, NULL, 0), child);
	rm_tree(root);
}

/* Marker names and the start time from /proc/PID/stat. */
static void test_cgroup_marker_names(void **state)
{
	struct cg_marker m = { .pid = 4242, .start = 123456, .pidns = 4026531836ULL }, back;
	char name[CG_MARKER_MAX];
	unsigned long long start;

	(void)state;
	assert_int_equal(cg_marker_format(&m, name, sizeof(name)), 0);
	assert_string_equal(name, "peakbpf-4242-123456-4026531836");
	assert_int_equal(cg_marker_parse(name, &back), 0);
	assert_int_equal(back.pid, 4242);
	assert_int_equal(back.start, 123456);
	assert_int_equal(back.pidns, 4026531836ULL);
	assert_int_equal(cg_marker_format(&m, name, 10), -ENAMETOOLONG);
	assert_int_equal(cg_marker_parse("peakbpf-1-0-5", &back), 0);
	assert_int_equal(cg_marker_parse("peakbpf-4242", &back), -EINVAL);     /* name alone */
	assert_int_equal(cg_marker_parse("peakbpf-4242-1", &back), -EINVAL);
	assert_int_equal(cg_marker_parse("peakbpf-0-1-5", &back), -EINVAL);
	assert_int_equal(cg_marker_parse("peakbpf-01-1-5", &back), -EINVAL);
	assert_int_equal(cg_marker_parse("peakbpf-+1-1-5", &back), -EINVAL);
	assert_int_equal(cg_marker_parse("peakbpf-1-1-0", &back), -EINVAL);
	assert_int_equal(cg_marker_parse("peakbpf-1-1-5x", &back), -EINVAL);
	assert_int_equal(cg_marker_parse("peakbpf-1-1-5-", &back), -EINVAL);
	assert_int_equal(cg_marker_parse("peakbpf-2147483648-1-5", &back), -EINVAL);
	assert_int_equal(cg_marker_parse("peakbpf-1-99999999999999999999999-5", &back), -EINVAL);
	assert_int_equal(cg_marker_parse("other-1-1-5", &back), -EINVAL);
	assert_int_equal(parse_stat_start_time("42 (a) b) S 1 42 42 0 -1 4194560 95 0 0 0 0 0 0 0 20 0 1 0 "
					       "777 2768896 166 18446744073709551615\n", &start), 0);
	assert_int_equal(start, 777);
	assert_int_equal(parse_stat_start_time("42 (a) S 1 42 42 0 -1 4194560 95 0 0 0 0 0 0 0 20 0 1 0 9", &start), 0);
	assert_int_equal(start, 9);
	assert_int_equal(parse_stat_start_time("42 (a) S 1 42", &start), -EINVAL);
	assert_int_equal(parse_stat_start_time("42 a S", &start), -EINVAL);
	assert_int_equal(parse_stat_start_time("42 (a) S 1 42 42 0 -1 4194560 95 0 0 0 0 0 0 0 20 0 1 0 x", &start),
			 -EINVAL);
}

/* A creator is gone only when that can be shown: ourselves and our parent
 * are alive; a reaped child is gone; a pid with another start time is. */
static void test_cgroup_marker_creator_gone(void **state)
{
	struct cg_marker self, m;

	(void)state;
	assert_int_equal(cg_marker_self(&self), 0);
	assert_int_equal(self.pid, (int)getpid());
	assert_false(cg_marker_creator_gone(&self));
	m = self;
	m.pid = (int)dead_pid();
	assert_true(cg_marker_creator_gone(&m));
	m = self;
	m.start++;
	assert_true(cg_marker_creator_gone(&m));
}

/* As root, a cgroup root another user owns or can write is refused; any
 * other caller is left to the kernel's permissions. */
static void test_cgroup_root_check_rules(void **state)
{
	struct stat st = { .st_mode = S_IFDIR | 0755, .st_uid = 0 };
	char why[256] = "";

	(void)state;
	assert_int_equal(cg_root_check(&st, false, 0, "/r", why, sizeof(why)), 0);
	st.st_uid = 1000;
	assert_int_equal(cg_root_check(&st, false, 1000, "/r", why, sizeof(why)), 0);
	assert_int_equal(cg_root_check(&st, true, 0, "/r", why, sizeof(why)), -CG_ROOT_UNSAFE);
	assert_non_null(strstr(why, "/r is owned by uid 1000, not root"));
	st.st_uid = 0;
	st.st_mode = S_IFDIR | 0777;
	assert_int_equal(cg_root_check(&st, false, 0, "/r", why, sizeof(why)), -CG_ROOT_UNSAFE);
	assert_non_null(strstr(why, "writable by others"));
	st.st_mode = S_IFDIR | 0775;
	assert_int_equal(cg_root_check(&st, false, 0, "/r", why, sizeof(why)), -CG_ROOT_UNSAFE);
	assert_non_null(strstr(why, "writable by its group"));
	/* The real cgroupfs, root's, delegated to a group: kept. */
	assert_int_equal(cg_root_check(&st, true, 0, "/r", why, sizeof(why)), 0);
	assert_int_equal(cg_root_check(&st, false, 1000, "/r", why, sizeof(why)), 0);
}

/* The same rules through cgroup_source_open, on fixture roots (as root). */
static void test_cgroup_root_not_roots_refused(void **state)
{
	struct source_opts o = { .command_mode = true };
	char *root, why[256] = "";
	struct source *s = NULL;

	(void)state;
	if (geteuid() != 0) {
		print_message("skip - the ownership rule applies to euid 0 only\n");
		skip();
	}
	root = make_tmpdir();
	fixture_v2(root, "memory\n", true);
	assert_int_equal(chown(root, 65534, 65534), 0);
	o.cgroup_root = root;
	assert_int_equal(cgroup_source_open(&o, &s, why, sizeof(why)), -CG_ROOT_UNSAFE);
	assert_null(s);
	assert_non_null(strstr(why, "owned by uid 65534, not root"));
	assert_int_equal(chown(root, 0, 0), 0);
	assert_int_equal(chmod(root, 0777), 0);
	assert_int_equal(cgroup_source_open(&o, &s, why, sizeof(why)), -CG_ROOT_UNSAFE);
	assert_non_null(strstr(why, "writable by others"));
	assert_int_equal(chmod(root, 0700), 0);
	assert_int_equal(cgroup_source_open(&o, &s, why, sizeof(why)), 0);
	s->ops->destroy(s);
	rm_tree(root);
}

/*
 * A rename and a symlink swapped in after the root was validated, staged by
 * a fixture whose proc_cgroup (called between validation and use) moves the
 * root away and leaves a symlink to a victim tree in its place: peakbpf's
 * cgroup is made, written and removed in the directory it validated, and
 * the victim is untouched. The same once more between open and destroy.
 */
static char swap_root[PATH_MAX], swap_moved[PATH_MAX], swap_victim[PATH_MAX];

static int swapping_proc_cgroup(const struct cg_hierarchy *h, pid_t pid, char *rel, size_t len)
{
	if (swap_root[0]) {
		assert_int_equal(rename(swap_root, swap_moved), 0);
		assert_int_equal(symlink(swap_victim, swap_root), 0);
		swap_root[0] = '\0';
	}
	return cgroup_fixture_ops.proc_cgroup(h, pid, rel, len);
}

static void test_cgroup_swap_after_validation(void **state)
{
	struct cgroup_fs_ops ops = cgroup_fixture_ops;
	struct source_opts o = { .command_mode = true };
	char *root = make_tmpdir(), *victim = make_tmpdir(), name[CG_MARKER_MAX], why[256], buf[64];
	char path[PATH_MAX], again[PATH_MAX];
	struct source *s = NULL;

	(void)state;
	fixture_v2(root, "memory\n", true);
	fixture_v2(victim, "memory\n", true);
	snprintf(swap_root, sizeof(swap_root), "%s", root);
	JOIN(swap_moved, "%s.moved", root);
	snprintf(swap_victim, sizeof(swap_victim), "%s", victim);
	ops.proc_cgroup = swapping_proc_cgroup;
	cgroup_fs_set_ops_for_tests(&ops);
	o.cgroup_root = root;
	assert_int_equal(cgroup_source_open(&o, &s, why, sizeof(why)), 0);
	child_name(name, sizeof(name));
	assert_true(exists(swap_moved, name));                  /* made where validated */
	{
		struct stat held, made;

		JOIN(path, "%s/%s", swap_moved, name);
		assert_int_equal(fstat(cgroup_source_own_dir_fd(s), &held), 0);
		assert_int_equal(stat(path, &made), 0);
		assert_true(held.st_ino == made.st_ino && held.st_dev == made.st_dev);
	}
	assert_false(exists(victim, name));
	assert_string_equal(get(victim, "cgroup.subtree_control", buf, sizeof(buf)), "");
	/* Again between open and use: the moved root moves on, a symlink to
	 * the victim (holding a cgroup of the same name) takes its place. */
	JOIN(again, "%s.again", root);
	assert_int_equal(rename(swap_moved, again), 0);
	assert_int_equal(symlink(victim, swap_moved), 0);
	make_dir(victim, name);
	JOIN(path, "%s/%s", victim, name);
	put(path, "cgroup.procs", "");
	assert_int_equal(s->ops->add_root(s, 4242), 0);
	JOIN(path, "%s/%s", again, name);
	assert_string_equal(get(path, "cgroup.procs", buf, sizeof(buf)), "4242\n");
	JOIN(path, "%s/%s", victim, name);
	assert_string_equal(get(path, "cgroup.procs", buf, sizeof(buf)), "");
	s->ops->destroy(s);
	assert_false(exists(again, name));                      /* removed where made */
	assert_true(exists(victim, name));                      /* the victim's stays */
	assert_int_equal(unlink(swap_moved), 0);
	assert_int_equal(unlink(root), 0);
	cgroup_fs_set_ops_for_tests(&cgroup_fixture_ops);
	rm_tree(strdup(again));
	rm_tree(victim);
	free(root);
}

/* A leftover with our own pid (an earlier process had it) is reused. */
static void test_cgroup_reuses_leftover_with_own_pid(void **state)
{
	struct source_opts o = { .command_mode = true };
	char *root = make_tmpdir(), name[CG_MARKER_MAX], sub[PATH_MAX], why[256];
	struct source *s = NULL;

	(void)state;
	fixture_v2(root, "memory\n", true);
	make_dir(root, child_name(name, sizeof(name)));
	JOIN(sub, "%s/%s", root, name);
	put(sub, "cgroup.procs", "");
	o.cgroup_root = root;
	assert_int_equal(cgroup_source_open(&o, &s, why, sizeof(why)), 0);
	assert_true(exists(sub, "memory.peak"));   /* made anew */
	s->ops->destroy(s);
	assert_false(exists(root, name));
	rm_tree(root);
}

static void test_cgroup_root_errors(void **state)
{
	struct source_opts o = { .command_mode = true };
	char *root = make_tmpdir(), why[256] = "";
	struct source *s = (struct source *)&o;

	(void)state;
	o.cgroup_root = root;                       /* empty: nothing mounted */
	assert_int_equal(cgroup_source_open(&o, &s, why, sizeof(why)), -EOPNOTSUPP);
	assert_null(s);
	assert_non_null(strstr(why, "no memory controller mounted under"));
	o.cgroup_root = "/nonexistent/peakbpf";
	assert_true(cgroup_source_open(&o, &s, why, sizeof(why)) == -ENOENT);
	assert_non_null(strstr(why, "/nonexistent/peakbpf"));
	o.cgroup_root = root;
	o.self_cgroup = "relative";
	assert_int_equal(cgroup_source_open(&o, &s, why, sizeof(why)), -EINVAL);
	fixture_v2(root, "memory\n", true);
	o.self_cgroup = "/missing";
	assert_int_equal(cgroup_source_open(&o, &s, why, sizeof(why)), -ENOENT);
	assert_non_null(strstr(why, "does not exist"));
	assert_int_equal(cgroup_source_open(&o, &s, NULL, 0), -ENOENT);  /* why is optional */
	rm_tree(root);
}

static void test_cgroup_root_from_environment(void **state)
{
	struct source_opts o = { .command_mode = false };
	char *root = make_tmpdir(), why[256];
	struct source *s = NULL;
	struct figure f;

	(void)state;
	fixture_v1(root, "5\n", "4\n");
	assert_int_equal(setenv(CGROUP_ROOT_ENV, root, 1), 0);
	assert_int_equal(cgroup_source_open(&o, &s, why, sizeof(why)), 0);
	unsetenv(CGROUP_ROOT_ENV);
	assert_int_equal(s->ops->add_root(s, getpid()), 0);
	assert_int_equal(s->ops->start(s), 0);
	assert_int_equal(s->ops->close_window(s, &f), 0);
	assert_int_equal(f.peak_bytes, 5);
	assert_string_equal(f.cgroup_path, root);
	s->ops->destroy(s);
	rm_tree(root);
}

/* No symlink is followed: not as the root, and not to a file peakbpf
 * writes in a cgroup (here one planted as the new cgroup's cgroup.procs). */
static void test_cgroup_symlinks_not_followed(void **state)
{
	struct source_opts o = { .command_mode = true };
	char *root = make_tmpdir(), link[PATH_MAX], path[PATH_MAX], victim[PATH_MAX];
	char child[PATH_MAX], name[CG_MARKER_MAX], why[256] = "", buf[64];
	struct source *s = (struct source *)&o;

	(void)state;
	fixture_v2(root, "memory\n", true);
	JOIN(link, "%s.link", root);
	assert_int_equal(symlink(root, link), 0);
	o.cgroup_root = link;
	assert_int_equal(cgroup_source_open(&o, &s, why, sizeof(why)), -CG_ROOT_UNSAFE);
	assert_null(s);
	assert_non_null(strstr(why, "is a symbolic link"));
	JOIN(path, "%s/", link);                    /* lstat would follow "link/" */
	o.cgroup_root = path;
	assert_int_equal(cgroup_source_open(&o, &s, why, sizeof(why)), -CG_ROOT_UNSAFE);
	assert_int_equal(unlink(link), 0);

	o.cgroup_root = root;
	assert_int_equal(cgroup_source_open(&o, &s, why, sizeof(why)), 0);
	put(root, "victim", "untouched\n");
	JOIN(victim, "%s/victim", root);
	JOIN(child, "%s/%s", root, child_name(name, sizeof(name)));
	JOIN(path, "%s/cgroup.procs", child);
	assert_int_equal(unlink(path), 0);
	assert_int_equal(symlink(victim, path), 0);
	assert_int_equal(s->ops->add_root(s, 4242), -ELOOP);
	assert_string_equal(get(root, "victim", buf, sizeof(buf)), "untouched\n");
	assert_int_equal(unlink(path), 0);
	s->ops->destroy(s);
	assert_false(exists(root, name));
	assert_string_equal(get(root, "victim", buf, sizeof(buf)), "untouched\n");
	rm_tree(root);
}

/* Without the fixture, a plain directory laid out like a hierarchy is no
 * cgroup file system: refused, by option or environment, and nothing is
 * made in it. */
static void test_cgroup_root_not_cgroupfs(void **state)
{
	struct source_opts o = { .command_mode = true };
	char *root = make_tmpdir(), why[256] = "", name[CG_MARKER_MAX];
	struct source *s = (struct source *)&o;

	(void)state;
	fixture_v2(root, "memory\n", true);
	o.cgroup_root = root;
	assert_int_equal(cgroup_source_open(&o, &s, why, sizeof(why)), -EOPNOTSUPP);
	assert_null(s);
	assert_non_null(strstr(why, "is not a cgroup filesystem (cgroup2 or cgroup v1 memory): "));
	assert_non_null(strstr(why, root));
	assert_null(strchr(why, '\n'));
	assert_false(exists(root, child_name(name, sizeof(name))));
	assert_string_equal(get(root, "cgroup.subtree_control", why, sizeof(why)), "");

	o.cgroup_root = NULL;
	o.command_mode = false;
	why[0] = '\0';
	assert_int_equal(setenv(CGROUP_ROOT_ENV, root, 1), 0);
	assert_int_equal(cgroup_source_open(&o, &s, why, sizeof(why)), -EOPNOTSUPP);
	unsetenv(CGROUP_ROOT_ENV);
	assert_null(s);
	assert_non_null(strstr(why, "is not a cgroup filesystem"));
	rm_tree(root);
}

/* The real hierarchy, read only (attach mode creates nothing). */
static void test_cgroup_real_hierarchy_attach_reads(void **state)
{
	struct source_opts o = { .cgroup_root = CGROUP_ROOT_DEFAULT };
	struct source *s = NULL;
	struct figure f;
	char why[256];
	int err;

	(void)state;
	err = cgroup_source_open(&o, &s, why, sizeof(why));
	if (err) {
		print_message("skipped: no memory cgroup on this machine: %s\n", why);
		skip();
	}
	err = s->ops->add_root(s, getpid());
	if (err) {
		print_message("skipped: this process's cgroup keeps no peak: %s\n", strerror(-err));
		s->ops->destroy(s);
		skip();
	}
	assert_int_equal(s->ops->start(s), 0);
	assert_int_equal(s->ops->close_window(s, &f), 0);
	assert_true(f.measured);
	assert_false(f.exclusive);
	assert_true(f.peak_bytes > 0);
	assert_true(!strncmp(f.cgroup_path, CGROUP_ROOT_DEFAULT "/", strlen(CGROUP_ROOT_DEFAULT) + 1) ||
		    !strncmp(f.cgroup_path, "...", 3));
	print_message("real %s figure of %s: peak %" PRIu64 " bytes\n", f.source, f.cgroup_path, f.peak_bytes);
	s->ops->destroy(s);
}

/* ---- proc source --------------------------------------------------------- */

static void test_proc_samples_self(void **state)
{
	struct source_opts o = { .sample_interval_ns = 10 * MS };
	struct source *s = NULL;
	struct figure f;
	char why[256];

	(void)state;
	assert_int_equal(proc_source_open(&o, &s, why, sizeof(why)), 0);
	assert_string_equal(s->name, "proc");
	assert_int_equal(s->ops->add_root(s, getpid()), 0);
	assert_int_equal(s->ops->add_root(s, getpid()), 0);        /* once only */
	assert_int_equal(s->ops->start(s), 0);
	sleep_ms(60);
	assert_int_equal(s->ops->close_window(s, &f), 0);
	assert_string_equal(f.source, "proc");
	assert_true(f.measured);
	assert_false(f.exact);
	assert_false(f.bound_known);
	assert_string_equal(f.inexact_reason, "sampled every 10 ms: misses spikes between samples");
	assert_string_equal(f.scope, "summed RSS of the tree, sampled");
	assert_int_equal(f.interval_ns, 10 * MS);
	assert_true(f.samples >= 2);         /* at start and at close, at least */
	assert_int_equal(f.vanished, 0);
	assert_true(f.baseline_known);
	ASSERT_NEAR(f.peak_bytes, rss_of(getpid()), 4 * MiB);
	s->ops->destroy(s);
}

/* Windows: the next one opens on the closing sample; memory touched in it
 * shows as growth. */
static void test_proc_windows(void **state)
{
	struct source_opts o = { .sample_interval_ns = 5 * MS };
	struct source *s = NULL;
	struct figure f1, f2;
	char why[256];
	void *mem;

	(void)state;
	assert_int_equal(proc_source_open(&o, &s, why, sizeof(why)), 0);
	assert_int_equal(s->ops->add_root(s, getpid()), 0);
	assert_int_equal(s->ops->start(s), 0);
	/* a run shorter than the interval still has two samples */
	assert_int_equal(s->ops->close_window(s, &f1), 0);
	assert_true(f1.samples >= 2);
	mem = touch(16 * MiB);
	assert_non_null(mem);
	sleep_ms(30);
	assert_int_equal(s->ops->close_window(s, &f2), 0);
	assert_true(f2.samples >= 2);
	assert_true(f2.baseline_known);
	ASSERT_NEAR(f2.baseline_bytes, f1.peak_bytes, 2 * MiB);
	assert_true(f2.peak_bytes >= f2.baseline_bytes + 16 * MiB - 1 * MiB);
	munmap(mem, 16 * MiB);
	s->ops->destroy(s);
}

struct report {
	int who;                /* 1: child, 2: grandchild */
	uint64_t rss;
};

/*
 * A child that forks a grandchild which touches 32 MiB; both report their
 * RSS, then wait for the hold pipe to close. The sampler must find the
 * grandchild through /proc/PID/task/TID/children and sum both.
 */
static void test_proc_tree_32mib(void **state)
{
	struct source_opts o = { .sample_interval_ns = 5 * MS };
	struct source *s = NULL;
	struct report r, got[2] = { { 0, 0 }, { 0, 0 } };
	int gate[2], ready[2], hold[2], status;
	char why[256], c;
	struct figure f;
	pid_t pid;

	(void)state;
	assert_int_equal(pipe(gate), 0);
	assert_int_equal(pipe(ready), 0);
	assert_int_equal(pipe(hold), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		pid_t g;

		close(gate[1]);
		close(ready[0]);
		close(hold[1]);
		if (read(gate[0], &c, 1) != 1)
			_exit(1);
		g = fork();
		if (g == 0) {
			r.who = 2;
			if (!touch(32 * MiB))
				_exit(1);
			r.rss = rss_raw(getpid());
			if (write(ready[1], &r, sizeof(r)) != sizeof(r))
				_exit(1);
			if (read(hold[0], &c, 1) < 0)
				_exit(1);
			_exit(0);
		}
		r.who = 1;
		r.rss = rss_raw(getpid());
		if (g < 0 || write(ready[1], &r, sizeof(r)) != sizeof(r))
			_exit(1);
		if (read(hold[0], &c, 1) < 0)
			_exit(1);
		waitpid(g, NULL, 0);
		_exit(0);
	}
	close(gate[0]);
	close(ready[1]);
	close(hold[0]);
	assert_int_equal(proc_source_open(&o, &s, why, sizeof(why)), 0);
	assert_int_equal(s->ops->add_root(s, pid), 0);
	assert_int_equal(s->ops->start(s), 0);
	assert_int_equal(write(gate[1], "g", 1), 1);
	for (int i = 0; i < 2; i++) {
		assert_int_equal(read(ready[0], &r, sizeof(r)), sizeof(r));
		assert_true(r.who == 1 || r.who == 2);
		got[r.who - 1] = r;
	}
	sleep_ms(30);           /* a few samples by the thread */
	/* closed while the tree is whole: the closing sample sees it all */
	assert_int_equal(s->ops->close_window(s, &f), 0);
	close(hold[1]);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	assert_true(f.measured);
	assert_true(f.samples >= 2);
	assert_true(got[1].rss >= 32 * MiB);
	ASSERT_NEAR(f.peak_bytes, got[0].rss + got[1].rss, 2 * MiB);
	assert_true(f.peak_bytes >= f.baseline_bytes + 32 * MiB);
	print_message("proc: child %" PRIu64 " + grandchild %" PRIu64 " = peak %" PRIu64
		      " bytes, baseline %" PRIu64 ", %" PRIu64 " samples, %" PRIu64 " vanished\n",
		      got[0].rss, got[1].rss, f.peak_bytes, f.baseline_bytes, f.samples, f.vanished);
	/* the next window opened on that sample; the one after has no tree
	 * left: no figure, not a 0 */
	assert_int_equal(s->ops->close_window(s, &f), 0);
	assert_true(f.measured);
	ASSERT_NEAR(f.baseline_bytes, got[0].rss + got[1].rss, 2 * MiB);
	assert_int_equal(s->ops->close_window(s, &f), 0);
	assert_false(f.measured);
	s->ops->destroy(s);
	close(gate[1]);
	close(ready[0]);
}

static void test_proc_options_and_unstarted(void **state)
{
	struct source_opts o = { .sample_interval_ns = 1000 };
	struct source *s = NULL;
	struct figure f;
	char why[256];

	(void)state;
	assert_int_equal(proc_source_open(&o, &s, why, sizeof(why)), -EINVAL);
	assert_null(s);
	assert_non_null(strstr(why, "1 ms"));
	o.sample_interval_ns = 0;
	assert_int_equal(proc_source_open(&o, &s, why, sizeof(why)), 0);
	assert_int_equal(s->ops->close_window(s, &f), 0);  /* not started */
	assert_false(f.measured);
	assert_int_equal(f.interval_ns, 100 * MS);
	assert_int_equal(s->ops->add_root(s, 0), -EINVAL);
	s->ops->destroy(s);                                /* no thread to join */
	o.sample_interval_ns = 1500 * MS;
	assert_int_equal(proc_source_open(&o, &s, why, sizeof(why)), 0);
	assert_int_equal(s->ops->add_root(s, dead_pid()), 0);
	assert_int_equal(s->ops->start(s), 0);
	assert_int_equal(s->ops->close_window(s, &f), 0);
	assert_false(f.measured);                          /* a dead root: no figure */
	assert_int_equal(f.samples, 2);
	assert_non_null(strstr(f.inexact_reason, "no process"));
	s->ops->destroy(s);                                /* stops a sleeping sampler at once */
}

/* ---- rusage source ------------------------------------------------------- */

static void test_rusage_needs_command_mode(void **state)
{
	struct source_opts o = { .command_mode = false };
	struct source *s = (struct source *)&o;
	char why[256];

	(void)state;
	assert_int_equal(rusage_source_open(&o, &s, why, sizeof(why)), -EOPNOTSUPP);
	assert_null(s);
	assert_string_equal(why, "rusage needs peakbpf to run the command (peakbpf -- COMMAND): choose another source");
}

static void test_rusage_child_32mib(void **state)
{
	struct source_opts o = { .command_mode = true };
	struct source *s = NULL;
	struct rusage ru;
	struct figure f;
	uint64_t parent_rss;
	int gate[2], status;
	char why[256], c;
	pid_t pid;

	(void)state;
	assert_int_equal(rusage_source_open(&o, &s, why, sizeof(why)), 0);
	assert_string_equal(s->name, "rusage");
	assert_int_equal(pipe(gate), 0);
	parent_rss = rss_of(getpid());
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		close(gate[1]);
		if (read(gate[0], &c, 1) != 1 || !touch(32 * MiB))
			_exit(1);
		_exit(0);
	}
	close(gate[0]);
	assert_int_equal(s->ops->add_root(s, pid), 0);
	assert_int_equal(s->ops->start(s), 0);
	/* before the command is reaped: no figure */
	assert_int_equal(s->ops->close_window(s, &f), 0);
	assert_string_equal(f.source, "rusage");
	assert_false(f.measured);
	assert_string_equal(f.inexact_reason, "rusage covers the whole run only");
	assert_int_equal(write(gate[1], "g", 1), 1);
	close(gate[1]);
	assert_int_equal(wait4(pid, &status, 0, &ru), pid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	s->ops->command_exited(s, pid + 1, &ru);            /* not the command */
	assert_int_equal(s->ops->close_window(s, &f), 0);
	assert_false(f.measured);
	s->ops->command_exited(s, pid, &ru);
	assert_int_equal(s->ops->close_window(s, &f), 0);
	assert_true(f.measured);
	assert_false(f.exact);
	assert_false(f.bound_known);
	assert_false(f.baseline_known);
	assert_string_equal(f.scope, "largest single process (not a sum)");
	assert_non_null(strstr(f.inexact_reason, "not the tree's sum"));
	assert_int_equal(f.peak_bytes, (uint64_t)ru.ru_maxrss * KiB);
	/* 32 MiB plus what the child had as a copy of this process */
	assert_true(f.peak_bytes >= 32 * MiB);
	assert_true(f.peak_bytes <= 32 * MiB + parent_rss + 4 * MiB);
	print_message("rusage: ru_maxrss %" PRIu64 " bytes for 32 MiB touched (parent rss %" PRIu64 ")\n",
		      f.peak_bytes, parent_rss);
	s->ops->destroy(s);
}

static void test_rusage_without_usage(void **state)
{
	struct source_opts o = { .command_mode = true };
	struct source *s = NULL;
	struct figure f;
	char why[256];

	(void)state;
	assert_int_equal(rusage_source_open(&o, &s, why, sizeof(why)), 0);
	assert_int_equal(s->ops->add_root(s, 123), 0);
	s->ops->command_exited(s, 123, NULL);
	assert_int_equal(s->ops->close_window(s, &f), 0);
	assert_false(f.measured);
	assert_non_null(f.inexact_reason);
	s->ops->destroy(s);
}

/* A cgroup test against a fixture tree. */
#define FIXTURE_TEST(t) cmocka_unit_test_setup_teardown(t, use_fixture, use_cgroupfs)

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_mountinfo_v1_memory_line),
		cmocka_unit_test(test_mountinfo_cgroup2_line_with_optional_fields),
		cmocka_unit_test(test_mountinfo_escapes_and_nonroot_root),
		cmocka_unit_test(test_mountinfo_malformed),
		cmocka_unit_test(test_list_has),
		cmocka_unit_test(test_proc_cgroup_lines),
		cmocka_unit_test(test_proc_cgroup_lines_malformed),
		cmocka_unit_test(test_cgroup_path_from_proc_text),
		cmocka_unit_test(test_cgroup_rel_path),
		cmocka_unit_test(test_parse_counter),
		cmocka_unit_test(test_parse_statm),
		cmocka_unit_test(test_parse_pid_words),
		FIXTURE_TEST(test_cgroup_v2_fixture_command_mode),
		FIXTURE_TEST(test_cgroup_v2_fixture_memory_already_enabled),
		FIXTURE_TEST(test_cgroup_v2_fixture_without_reset),
		FIXTURE_TEST(test_cgroup_v2_fixture_no_internal_process_rule),
		FIXTURE_TEST(test_cgroup_v2_fixture_without_memory_peak),
		FIXTURE_TEST(test_cgroup_v2_fixture_without_memory_controller),
		FIXTURE_TEST(test_cgroup_v2_fixture_attach_mode),
		FIXTURE_TEST(test_cgroup_v2_fixture_attach_root_cgroup),
		FIXTURE_TEST(test_cgroup_v1_fixture_command_mode),
		FIXTURE_TEST(test_cgroup_v1_fixture_attach_mode_does_not_reset),
		FIXTURE_TEST(test_cgroup_removes_stale_children),
		FIXTURE_TEST(test_cgroup_keeps_live_peer_in_other_pidns),
		cmocka_unit_test(test_cgroup_marker_names),
		cmocka_unit_test(test_cgroup_marker_creator_gone),
		cmocka_unit_test(test_cgroup_root_check_rules),
		FIXTURE_TEST(test_cgroup_root_not_roots_refused),
		FIXTURE_TEST(test_cgroup_swap_after_validation),
		FIXTURE_TEST(test_cgroup_reuses_leftover_with_own_pid),
		FIXTURE_TEST(test_cgroup_root_errors),
		FIXTURE_TEST(test_cgroup_root_from_environment),
		FIXTURE_TEST(test_cgroup_symlinks_not_followed),
		cmocka_unit_test(test_cgroup_root_not_cgroupfs),
		cmocka_unit_test(test_cgroup_real_hierarchy_attach_reads),
		cmocka_unit_test(test_proc_samples_self),
		cmocka_unit_test(test_proc_windows),
		cmocka_unit_test(test_proc_tree_32mib),
		cmocka_unit_test(test_proc_options_and_unstarted),
		cmocka_unit_test(test_rusage_needs_command_mode),
		cmocka_unit_test(test_rusage_child_32mib),
		cmocka_unit_test(test_rusage_without_usage),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
