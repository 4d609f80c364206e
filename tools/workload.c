/* SPDX-License-Identifier: MIT */
/*
 * workload: make exact, known memory shapes for peakbpf's integration tests.
 *
 * Each shape knows the true peak of the memory it ADDS to its process tree:
 * the summed RSS of all its processes, shared pages counted once per process
 * that maps them, excluding each process's own base RSS (binary, libc,
 * stack), which the tests tolerate separately.
 *
 * Rules that make the expected value exact:
 *  - every block is a private anonymous mmap with MADV_DONTFORK, so a child
 *    forked later never holds a copy-on-write view of it, and every page of
 *    it is written, so all of it is resident (THP does not change the total);
 *  - SIZE is rounded up to whole pages, as mmap does;
 *  - "at once" is a pipe barrier, never a sleep, so the holds really overlap;
 *  - every forked child dies with its parent (PR_SET_PDEATHSIG) and is
 *    waited for, so nothing is left running when the workload exits.
 *
 * Exit status: 0 success, 1 runtime failure, 2 usage error.
 * Build: gcc -std=gnu11 -O2 -Wall -Wextra -static -pthread tools/workload.c
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h> /* isfinite, a macro: no -lm */
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define KIB (UINT64_C(1) << 10)
#define MIB (UINT64_C(1) << 20)
#define GIB (UINT64_C(1) << 30)
#define TIB (UINT64_C(1) << 40)
#define NSEC UINT64_C(1000000000)

#define MAX_SIZE TIB                      /* so COUNT * 4 * SIZE cannot overflow */
#define MAX_COUNT UINT64_C(1000000)
#define MAX_HOLD_NS (86400 * NSEC)        /* one day */
#define STORM_BLOCK (64 * KIB)
#define STORM_ALIVE 8
#define WRITE_BUF (64 * KIB)              /* file: write chunk */
#define SELF_EXE "/proc/self/exe"

struct opts {
	uint64_t size;     /* S, bytes, a whole number of pages */
	uint64_t count;    /* N */
	uint64_t hold_ns;  /* T */
};

static uint64_t page;

/* ---- messages ---- */

static const char *human(uint64_t b, char *buf, size_t len)
{
	if (b && b % GIB == 0)
		snprintf(buf, len, "%" PRIu64 " GiB", b / GIB);
	else if (b && b % MIB == 0)
		snprintf(buf, len, "%" PRIu64 " MiB", b / MIB);
	else if (b && b % KIB == 0)
		snprintf(buf, len, "%" PRIu64 " KiB", b / KIB);
	else
		snprintf(buf, len, "%" PRIu64 " bytes", b);
	return buf;
}

/* "workload: WHAT: strerror(errno)"; returns 1, the runtime-failure status. */
static int fail(const char *what)
{
	fprintf(stderr, "workload: %s: %s\n", what, strerror(errno));
	return 1;
}

/* Same, naming a size: "workload: mmap 64 MiB: Cannot allocate memory". */
static int fail_size(const char *what, uint64_t len)
{
	int e = errno;
	char h[32], msg[64];

	snprintf(msg, sizeof(msg), "%s %s", what, human(len, h, sizeof(h)));
	errno = e;
	return fail(msg);
}

/* ---- memory ---- */

/* Write one byte per page, so every page is resident. volatile: keep the stores. */
static void touch(volatile char *p, uint64_t len)
{
	for (uint64_t off = 0; off < len; off += page)
		p[off] = 1;
}

/* A private anonymous block, MADV_DONTFORK, every page written; NULL on failure. */
static char *alloc_block(uint64_t len)
{
	char *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED) {
		fail_size("mmap", len);
		return NULL;
	}
	/* Without this a child forked while we hold it would count it again (COW). */
	if (madvise(p, len, MADV_DONTFORK)) {
		fail_size("madvise", len);
		munmap(p, len);
		return NULL;
	}
	touch(p, len);
	return p;
}

static void free_block(char *p, uint64_t len)
{
	if (p)
		munmap(p, len);
}

/* Now + ns on the monotonic clock. */
static struct timespec deadline(uint64_t ns)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	t.tv_sec += ns / NSEC;
	t.tv_nsec += ns % NSEC;
	if (t.tv_nsec >= (long)NSEC) {
		t.tv_sec++;
		t.tv_nsec -= NSEC;
	}
	return t;
}

/* Sleep T; to an absolute deadline, so EINTR cannot stretch it. */
static void hold(uint64_t ns)
{
	struct timespec t = deadline(ns);

	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &t, NULL) == EINTR)
		;
}

static int alloc_hold_free(uint64_t len, uint64_t ns)
{
	char *b = alloc_block(len);

	if (!b)
		return 1;
	hold(ns);
	free_block(b, len);
	return 0;
}

/* ---- processes and pipes ---- */

static int put_byte(int fd)
{
	char c = 1;
	ssize_t r;

	do
		r = write(fd, &c, 1);
	while (r < 0 && errno == EINTR);
	return r == 1 ? 0 : -1;
}

/* 1: got a byte, 0: EOF (every writer closed or died), -1: error. */
static int get_byte(int fd)
{
	char c;
	ssize_t r;

	do
		r = read(fd, &c, 1);
	while (r < 0 && errno == EINTR);
	return (int)r;
}

/* fork() whose child is killed if the parent dies, so an interrupted test leaves no orphans. */
static pid_t fork_child(void)
{
	pid_t parent = getpid();
	pid_t pid = fork();

	if (pid < 0)
		fail("fork");
	else if (pid == 0 && (prctl(PR_SET_PDEATHSIG, SIGKILL) || getppid() != parent))
		_exit(1); /* the parent is already gone */
	return pid;
}

/* Wait for a child (pid, or -1 for any); 0 if it exited with status 0, else 1. */
static int reap(pid_t pid)
{
	int st;
	pid_t r;

	do
		r = waitpid(pid, &st, 0);
	while (r < 0 && errno == EINTR);
	if (r < 0)
		return fail("waitpid");
	if (WIFEXITED(st) && WEXITSTATUS(st) == 0)
		return 0;
	if (WIFEXITED(st))
		fprintf(stderr, "workload: child %d exited with status %d\n", (int)r, WEXITSTATUS(st));
	else
		fprintf(stderr, "workload: child %d killed by signal %d\n", (int)r, WTERMSIG(st));
	return 1;
}

/*
 * The path to exec ourselves: the target of /proc/self/exe, so that the new
 * image's comm is still "workload" (exec of /proc/self/exe itself names it
 * "exe", which hides it from pgrep and from peakbpf's process list).
 */
static const char *self_path(void)
{
	static char path[4096];
	ssize_t n = readlink(SELF_EXE, path, sizeof(path) - 1);

	if (n <= 0 || n == sizeof(path) - 1 || access(path, X_OK))
		return SELF_EXE; /* e.g. the binary was replaced or deleted */
	path[n] = '\0';
	return path;
}

/* argv that re-runs this binary as a hidden stage with the same S and T. */
static char *const *stage_argv(const struct opts *o, const char *stage)
{
	static char size[32], hold_arg[32];
	static char *argv[] = { "workload", "-s", size, "-t", hold_arg, NULL, NULL };

	snprintf(size, sizeof(size), "%" PRIu64, o->size);
	snprintf(hold_arg, sizeof(hold_arg), "%" PRIu64 "ns", o->hold_ns);
	argv[5] = (char *)stage;
	return argv;
}

/*
 * Fork N children that each run fn(), which acquires its memory and then
 * calls ready_and_wait(); all hold at once for T, then are released.
 * ready: each child writes one byte and closes its end, so when a child fails
 * before writing, the parent sees EOF instead of blocking forever.
 * release: the parent closes its write end of go; the children see EOF.
 */
static void ready_and_wait(int ready_fd, int go_fd)
{
	put_byte(ready_fd);
	close(ready_fd);
	get_byte(go_fd);
}

typedef int (*child_fn)(const struct opts *o, void *arg, int ready_fd, int go_fd);

/* Which of fan_out's children this process is (0-based), for shapes whose
 * children differ; set before each fork, so each child keeps its own. */
static uint64_t child_index;

/* Shapes that share pages say what their cgroup holds once all children are
 * ready (print_cgroup_mapped, below). */
static bool report_cgroup;
static void print_cgroup_mapped(void);

/* What the parent does once every child is ready, before releasing them. */
typedef int (*parent_fn)(const struct opts *o, uint64_t children);

/* Fork n children running fn, wait until all are ready, run parent (if
 * any), then release and reap them. */
static int fan_out_n(const struct opts *o, uint64_t n, child_fn fn, void *arg, parent_fn parent)
{
	int ready[2], go[2], rc = 0;
	uint64_t started, got = 0;

	if (pipe(ready))
		return fail("pipe");
	if (pipe(go)) {
		close(ready[0]);
		close(ready[1]);
		return fail("pipe");
	}
	for (started = 0; started < n; started++) {
		pid_t pid;

		child_index = started;
		pid = fork_child();

		if (pid < 0) {
			rc = 1;
			break;
		}
		if (pid == 0) {
			close(ready[0]);
			close(go[1]);
			_exit(fn(o, arg, ready[1], go[0]));
		}
	}
	/* Only now: later children must inherit both ends. */
	close(ready[1]);
	close(go[0]);
	while (got < started && get_byte(ready[0]) == 1)
		got++;
	if (rc == 0 && got < n) {
		fprintf(stderr, "workload: only %" PRIu64 " of %" PRIu64 " children got ready\n", got, n);
		rc = 1;
	}
	if (rc == 0 && parent)
		rc = parent(o, started);
	close(go[1]);
	for (uint64_t i = 0; i < started; i++)
		rc |= reap(-1);
	close(ready[0]);
	return rc;
}

static int hold_children(const struct opts *o, uint64_t children)
{
	(void)children;
	if (report_cgroup)
		print_cgroup_mapped();
	hold(o->hold_ns);
	return 0;
}

/* N children running fn, held together for T once all are ready. */
static int fan_out(const struct opts *o, child_fn fn, void *arg)
{
	return fan_out_n(o, o->count, fn, arg, hold_children);
}

/* ---- shapes ---- */

static int run_spike(const struct opts *o)
{
	if (alloc_hold_free(o->size, o->hold_ns))
		return 1;
	hold(o->hold_ns); /* stay alive after the free, so the drop is seen */
	return 0;
}

static int run_steady(const struct opts *o)
{
	return alloc_hold_free(o->size, o->hold_ns);
}

static int run_sequential(const struct opts *o)
{
	for (uint64_t i = 0; i < o->count; i++) {
		pid_t pid = fork_child();

		if (pid < 0)
			return 1;
		if (pid == 0)
			_exit(alloc_hold_free(o->size, o->hold_ns));
		/* The next child starts only after this one was reaped: never two at once. */
		if (reap(pid))
			return 1;
	}
	return 0;
}

static int concurrent_child(const struct opts *o, void *arg, int ready_fd, int go_fd)
{
	char *b = alloc_block(o->size);

	(void)arg;
	if (!b)
		return 1;
	ready_and_wait(ready_fd, go_fd);
	free_block(b, o->size);
	return 0;
}

static int run_concurrent(const struct opts *o)
{
	return fan_out(o, concurrent_child, NULL);
}

/* As concurrent, but each child first idles T: the children exist before
 * they hold anything (for attaching to a tree whose members allocate later). */
static int late_child(const struct opts *o, void *arg, int ready_fd, int go_fd)
{
	hold(o->hold_ns);
	return concurrent_child(o, arg, ready_fd, go_fd);
}

static int run_late_children(const struct opts *o)
{
	return fan_out(o, late_child, NULL);
}

/*
 * Three children peak at different moments: before the release child 0
 * holds 4*S and child 1 S (5*S); after it child 0 keeps S, child 1 grows to
 * 2*S and child 2 takes S (4*S). The tree's peak is the first phase, and
 * its holders are 4*S, S and nothing, not what they hold later. Children 1
 * and 2 wait T after the release, so that child 0's unmap comes first.
 */
static int staggered_child(const struct opts *o, void *arg, int ready_fd, int go_fd)
{
	uint64_t first = child_index == 0 ? 4 * o->size : child_index == 1 ? o->size : 0;
	char *b = first ? alloc_block(first) : NULL, *more = NULL;

	(void)arg;
	if (first && !b)
		return 1;
	ready_and_wait(ready_fd, go_fd);
	if (child_index == 0) {
		munmap(b + o->size, first - o->size);
	} else {
		hold(o->hold_ns);
		more = alloc_block(o->size);
		if (!more)
			return 1;
	}
	hold(o->hold_ns);
	return 0;
}

static int run_staggered(const struct opts *o)
{
	struct opts three = *o;

	three.count = 3;
	return fan_out(&three, staggered_child, NULL);
}

/* Child i holds S * 2^i, all at once: sizes that tell the children apart. */
static int ladder_child(const struct opts *o, void *arg, int ready_fd, int go_fd)
{
	uint64_t len = o->size << child_index;
	char *b = alloc_block(len);

	(void)arg;
	if (!b)
		return 1;
	ready_and_wait(ready_fd, go_fd);
	free_block(b, len);
	return 0;
}

static int run_ladder(const struct opts *o)
{
	return fan_out(o, ladder_child, NULL);
}

static int shared_child(const struct opts *o, void *arg, int ready_fd, int go_fd)
{
	touch(arg, o->size); /* maps every shmem page into this child's RSS */
	ready_and_wait(ready_fd, go_fd);
	return 0;
}

static int run_shared(const struct opts *o)
{
	/* Not touched here and no MADV_DONTFORK: the children must inherit the mapping. */
	char *region = mmap(NULL, o->size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	int rc;

	if (region == MAP_FAILED)
		return fail_size("mmap shared", o->size);
	report_cgroup = true;
	rc = fan_out(o, shared_child, region);
	munmap(region, o->size);
	return rc;
}

/*
 * Generation g forks g+1 first, then allocates. "ready" flows up: a process
 * passes it on once it holds its block and its child reported ready, so when
 * the top gets it all N hold. "release" flows down as EOF on each go pipe.
 */
static int run_chain(const struct opts *o)
{
	int up = -1, down = -1; /* to/from the parent; -1 in the top process */
	uint64_t gen;

	for (gen = 1;; gen++) {
		int ready[2] = { -1, -1 }, go[2] = { -1, -1 }, rc = 0;
		pid_t child = 0;
		char *b;

		if (gen < o->count) {
			if (pipe(ready) || pipe(go)) {
				rc = fail("pipe");
				goto out;
			}
			child = fork_child();
			if (child < 0) {
				rc = 1;
				goto out;
			}
			if (child == 0) {
				/* Become generation gen + 1; keep only our own pipe ends. */
				if (up >= 0) {
					close(up);
					close(down);
				}
				close(ready[0]);
				close(go[1]);
				up = ready[1];
				down = go[0];
				continue;
			}
			close(ready[1]);
			close(go[0]);
		}
		b = alloc_block(o->size);
		if (b && child && get_byte(ready[0]) != 1) {
			fprintf(stderr, "workload: chain generation %" PRIu64 " not ready\n", gen + 1);
			rc = 1;
		}
		if (!b)
			rc = 1;
		if (up >= 0) {
			if (rc == 0)
				put_byte(up); /* else EOF tells the parent we failed */
			close(up);
			get_byte(down); /* wait for release */
		} else if (rc == 0) {
			hold(o->hold_ns); /* top: all N hold now */
		}
		if (child) {
			close(go[1]); /* release our child, then unwind */
			rc |= reap(child);
			close(ready[0]);
		}
		free_block(b, o->size);
out:
		if (gen > 1)
			_exit(rc);
		return rc;
	}
}

struct thread_state {
	const struct opts *o;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	uint64_t ready;
	int failed, release;
};

static void *thread_main(void *arg)
{
	struct thread_state *s = arg;
	char *b = alloc_block(s->o->size);

	pthread_mutex_lock(&s->mu);
	s->failed |= !b;
	s->ready++;
	pthread_cond_broadcast(&s->cv);
	while (!s->release)
		pthread_cond_wait(&s->cv, &s->mu);
	pthread_mutex_unlock(&s->mu);
	free_block(b, s->o->size);
	return NULL;
}

/*
 * N threads, one mm. The barrier is a mutex + condition variable rather than
 * pthread_barrier_t, so that a failed pthread_create cannot leave the
 * created threads waiting forever for a count that never comes.
 */
static int run_threads(const struct opts *o)
{
	struct thread_state s = { .o = o, .mu = PTHREAD_MUTEX_INITIALIZER,
				  .cv = PTHREAD_COND_INITIALIZER };
	pthread_t *tids = calloc(o->count, sizeof(*tids)); /* bookkeeping, not a block */
	uint64_t created;
	int rc = 0;

	if (!tids)
		return fail("calloc");
	for (created = 0; created < o->count; created++) {
		int e = pthread_create(&tids[created], NULL, thread_main, &s);

		if (e) {
			errno = e;
			rc = fail("pthread_create");
			break;
		}
	}
	pthread_mutex_lock(&s.mu);
	while (s.ready < created)
		pthread_cond_wait(&s.cv, &s.mu);
	rc |= s.failed;
	pthread_mutex_unlock(&s.mu);
	if (rc == 0)
		hold(o->hold_ns);
	pthread_mutex_lock(&s.mu);
	s.release = 1;
	pthread_cond_broadcast(&s.cv);
	pthread_mutex_unlock(&s.mu);
	for (uint64_t i = 0; i < created; i++)
		pthread_join(tids[i], NULL);
	free(tids);
	return rc;
}

/* A thread of thread-spike: it only sleeps until released. */
static void *sleeper_main(void *arg)
{
	struct thread_state *s = arg;

	pthread_mutex_lock(&s->mu);
	s->ready++;
	pthread_cond_broadcast(&s->cv);
	while (!s->release)
		pthread_cond_wait(&s->cv, &s->mu);
	pthread_mutex_unlock(&s->mu);
	return NULL;
}

/*
 * N-1 threads sleep (holding nothing but their stacks) while the main
 * thread of the same process holds S for T, frees it, and holds nothing
 * for T more; then the sleepers are released.
 */
static int run_thread_spike(const struct opts *o)
{
	struct thread_state s = { .o = o, .mu = PTHREAD_MUTEX_INITIALIZER,
				  .cv = PTHREAD_COND_INITIALIZER };
	uint64_t n = o->count ? o->count - 1 : 0, created;
	pthread_t *tids = calloc(n ? n : 1, sizeof(*tids)); /* bookkeeping, not a block */
	int rc = 0;

	if (!tids)
		return fail("calloc");
	for (created = 0; created < n; created++) {
		int e = pthread_create(&tids[created], NULL, sleeper_main, &s);

		if (e) {
			errno = e;
			rc = fail("pthread_create");
			break;
		}
	}
	pthread_mutex_lock(&s.mu);
	while (s.ready < created)
		pthread_cond_wait(&s.cv, &s.mu);
	pthread_mutex_unlock(&s.mu);
	if (rc == 0)
		rc = run_spike(o);
	pthread_mutex_lock(&s.mu);
	s.release = 1;
	pthread_cond_broadcast(&s.cv);
	pthread_mutex_unlock(&s.mu);
	for (uint64_t i = 0; i < created; i++)
		pthread_join(tids[i], NULL);
	free(tids);
	return rc;
}

/* As threads, after idling T: the threads fault while a tracker that
 * attached during the idle watches, on every CPU at once. */
static int run_late_threads(const struct opts *o)
{
	hold(o->hold_ns);
	return run_threads(o);
}

static void *late_worker(void *arg)
{
	const struct opts *o = arg;
	char *b;

	hold(o->hold_ns);
	b = alloc_block(o->size);
	if (b) {
		hold(o->hold_ns);
		free_block(b, o->size);
	}
	return NULL;
}

/* The main thread leaves at once (pthread_exit): the leader has no mm while
 * a worker idles T, then holds S for T (for attaching to such a process). */
static int run_leader_exit(const struct opts *o)
{
	static struct opts copy;
	pthread_t t;
	int e;

	copy = *o;
	e = pthread_create(&t, NULL, late_worker, &copy);
	if (e) {
		errno = e;
		return fail("pthread_create");
	}
	pthread_exit(NULL);
}

static int run_exec(const struct opts *o)
{
	if (!alloc_block(o->size))
		return 1;
	hold(o->hold_ns);
	/* No munmap: the old mm, block included, leaves the tree at exec. */
	if (execv(self_path(), stage_argv(o, "exec-stage2")) && errno == ENOENT)
		execv(SELF_EXE, stage_argv(o, "exec-stage2"));
	return fail("execv " SELF_EXE);
}

static int run_exec_stage2(const struct opts *o)
{
	return alloc_hold_free(2 * o->size, o->hold_ns);
}

static int run_vfork_exec(const struct opts *o)
{
	char *b = alloc_block(o->size);
	char *const *argv = stage_argv(o, "vfork-stage2"); /* built before vfork */
	const char *path = self_path();
	pid_t pid;
	int rc;

	if (!b)
		return 1;
	/* The child borrows our mm until it execs; then it has its own and we resume. */
	pid = vfork();
	if (pid == 0) {
		static const char msg[] = "workload: execv " SELF_EXE " failed\n";

		if (execv(path, argv) && errno == ENOENT)
			execv(SELF_EXE, argv);
		/* Only write and _exit here: we still run on the parent's memory. */
		(void)!write(2, msg, sizeof(msg) - 1);
		_exit(127);
	}
	if (pid < 0)
		rc = fail("vfork");
	else
		rc = reap(pid); /* keep holding S until the child exits */
	free_block(b, o->size);
	return rc;
}

static int run_vfork_stage2(const struct opts *o)
{
	prctl(PR_SET_PDEATHSIG, SIGKILL); /* after exec: do not outlive the vfork parent */
	return alloc_hold_free(o->size, o->hold_ns);
}

/*
 * top -> child -> grandchild; the child exits at once, so the grandchild is
 * reparented; it calls setsid(), holds S, then writes to the pipe. The top
 * process reads that byte, then waits for EOF: the grandchild's write end
 * closes only in exit, after its mm is gone, so the top never exits first.
 */
static int run_daemon(const struct opts *o)
{
	int p[2], rc;
	pid_t pid;

	if (pipe(p))
		return fail("pipe");
	pid = fork_child();
	if (pid < 0) {
		close(p[0]);
		close(p[1]);
		return 1;
	}
	if (pid == 0) {
		pid_t g;

		close(p[0]);
		g = fork(); /* no PDEATHSIG: this one is meant to be orphaned */
		if (g < 0)
			_exit(fail("fork"));
		if (g == 0) {
			if (setsid() < 0)
				_exit(fail("setsid"));
			if (alloc_hold_free(o->size, o->hold_ns))
				_exit(1);
			put_byte(p[1]);
			_exit(0);
		}
		_exit(0);
	}
	close(p[1]);
	rc = reap(pid);
	if (get_byte(p[0]) != 1) {
		fprintf(stderr, "workload: daemon grandchild failed before its hold ended\n");
		rc = 1;
	}
	while (get_byte(p[0]) > 0) /* EOF: the grandchild has exited */
		;
	close(p[0]);
	return rc;
}

/*
 * N short-lived children, at most STORM_ALIVE at once, each with one
 * STORM_BLOCK (-s is ignored). The expected value is an upper bound: it
 * assumes STORM_ALIVE children hold their block at the same moment.
 */
static int run_storm(const struct opts *o)
{
	uint64_t started, alive = 0;
	int rc = 0;

	for (started = 0; started < o->count; started++) {
		pid_t pid;

		if (alive == STORM_ALIVE) {
			rc |= reap(-1);
			alive--;
		}
		pid = fork_child();
		if (pid < 0) {
			rc = 1;
			break;
		}
		if (pid == 0) {
			char *b = alloc_block(STORM_BLOCK);

			free_block(b, STORM_BLOCK);
			_exit(!b);
		}
		alive++;
	}
	while (alive--)
		rc |= reap(-1);
	return rc;
}

/* Shared file pages: written, fsynced, mapped read-only and read one byte per page. */
static int run_file(const struct opts *o)
{
	const char *dir = getenv("TMPDIR");
	char path[4096];
	volatile const char *map;
	char *buf;
	uint64_t left, sum = 0;
	int fd, rc = 1;

	if (!dir || !*dir)
		dir = "/tmp";
	if (snprintf(path, sizeof(path), "%s/workload.XXXXXX", dir) >= (int)sizeof(path)) {
		fprintf(stderr, "workload: TMPDIR too long\n");
		return 1;
	}
	fd = mkstemp(path);
	if (fd < 0) {
		char msg[4200];

		snprintf(msg, sizeof(msg), "mkstemp %s/workload.XXXXXX", dir);
		return fail(msg);
	}
	/* Unlink now: the name is gone on every path, even SIGKILL; the fd keeps the data. */
	if (unlink(path)) {
		fail("unlink");
		close(fd);
		return 1;
	}
	/* The write buffer is a block too, freed before the mapping, so it adds nothing at peak. */
	buf = alloc_block(WRITE_BUF);
	if (!buf)
		goto out;
	memset(buf, 'w', WRITE_BUF);
	for (left = o->size; left > 0;) {
		size_t n = left < WRITE_BUF ? left : WRITE_BUF;
		ssize_t w = write(fd, buf, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			if (w == 0)
				errno = EIO;
			fail_size("write", o->size);
			free_block(buf, WRITE_BUF);
			goto out;
		}
		left -= w;
	}
	free_block(buf, WRITE_BUF);
	if (fsync(fd)) {
		fail("fsync");
		goto out;
	}
	map = mmap(NULL, o->size, PROT_READ, MAP_SHARED, fd, 0);
	if (map == MAP_FAILED) {
		fail_size("mmap file", o->size);
		goto out;
	}
	for (uint64_t off = 0; off < o->size; off += page)
		sum += map[off];
	hold(o->hold_ns);
	munmap((void *)map, o->size);
	rc = sum == o->size / page * 'w' ? 0 : 1;
	if (rc)
		fprintf(stderr, "workload: file contents read back wrong\n");
out:
	close(fd);
	return rc;
}

/* Wait until SIGUSR1 arrives (blocked, so it stays pending) or ns elapse. */
static void wait_usr1(const sigset_t *set, uint64_t ns)
{
	struct timespec now, rem, end = deadline(ns);

	for (;;) {
		clock_gettime(CLOCK_MONOTONIC, &now);
		rem.tv_sec = end.tv_sec - now.tv_sec;
		rem.tv_nsec = end.tv_nsec - now.tv_nsec;
		if (rem.tv_nsec < 0) {
			rem.tv_sec--;
			rem.tv_nsec += NSEC;
		}
		if (rem.tv_sec < 0)
			return;
		if (sigtimedwait(set, NULL, &rem) == SIGUSR1 || errno != EINTR)
			return; /* signal, or EAGAIN: time is up */
	}
}

static int run_phases(const struct opts *o)
{
	static const uint64_t mult[] = { 1, 4, 2 };
	sigset_t set;

	/*
	 * main() blocked SIGUSR1 already, so one sent during a phase's allocation
	 * stays pending and ends that phase. One sent before main() runs kills
	 * us: a test signals only after it read "phase 1".
	 */
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	for (int k = 0; k < 3; k++) {
		uint64_t len = mult[k] * o->size;
		char *b = alloc_block(len);

		if (!b)
			return 1;
		fprintf(stderr, "phase %d\n", k + 1);
		wait_usr1(&set, o->hold_ns);
		free_block(b, len); /* before the next phase: phases never overlap */
		if (k < 2) {
			/* A quiet gap, so a harness can mark the boundary
			 * between phases (peakbpf's SIGUSR1) with neither held. */
			struct timespec gap = { .tv_nsec = 300 * 1000 * 1000 };

			fprintf(stderr, "gap %d\n", k + 1);
			nanosleep(&gap, NULL);
		}
	}
	return 0;
}

/* ---- shapes for tools/bench ---- */

static uint64_t now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * NSEC + (uint64_t)t.tv_nsec;
}

/*
 * Fault-bound: a private anonymous block of S with MADV_NOHUGEPAGE, so each
 * page is its own fault (and its own rss_stat event) even where THP is
 * "always"; written one byte per page, then unmapped. Prints how long the
 * rounds took, measured inside the process, so a tracer's start-up is not in it.
 */
static int touch_4k(uint64_t len)
{
	char *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return fail_size("mmap", len);
	if (madvise(p, len, MADV_NOHUGEPAGE) || madvise(p, len, MADV_DONTFORK)) {
		fail_size("madvise", len);
		munmap(p, len);
		return 1;
	}
	touch(p, len);
	munmap(p, len);
	return 0;
}

static int run_faults(const struct opts *o)
{
	uint64_t t0 = now_ns();

	for (uint64_t i = 0; i < o->count; i++)
		if (touch_4k(o->size))
			return 1;
	fprintf(stderr, "workload: faults elapsed_ns=%" PRIu64 "\n", now_ns() - t0);
	return 0;
}

static int idle_child(const struct opts *o, void *arg, int ready_fd, int go_fd)
{
	(void)o;
	(void)arg;
	ready_and_wait(ready_fd, go_fd); /* holds nothing: it only exists */
	return 0;
}

/*
 * N live processes: N-1 idle children (forked first, so they hold no copy of
 * the block), and this process faulting in S as "faults" does, once. Before
 * and after faulting it says so on stderr and waits for SIGUSR1 (or T), so a
 * benchmark can read its counters around exactly the faults.
 */
/* The faulter's part, once the idle children are ready. */
static int fault_between_signals(const struct opts *o, uint64_t children)
{
	sigset_t set;
	uint64_t t0;
	int rc;

	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	fprintf(stderr, "workload: idle-plus-faulter live=%" PRIu64 " ready\n", children + 1);
	wait_usr1(&set, o->hold_ns);
	t0 = now_ns();
	rc = touch_4k(o->size);
	fprintf(stderr, "workload: faults elapsed_ns=%" PRIu64 " done\n", now_ns() - t0);
	wait_usr1(&set, o->hold_ns);
	return rc;
}

static int run_idle_plus_faulter(const struct opts *o)
{
	return fan_out_n(o, o->count ? o->count - 1 : 0, idle_child, NULL, fault_between_signals);
}

#define BLIP_LIFE_NS NSEC

/*
 * A short spike in a longer life. First S is written to a memfd: page cache,
 * not yet anyone's RSS. Then the process lives about 1 s; at a moment drawn
 * uniformly from [0.1 s, 0.9 s - T] it maps all of S with MAP_POPULATE, so
 * its RSS rises by S at once (page table entries only: no page is allocated
 * or zeroed then), holds it for T and unmaps it. What a periodic sampler sees
 * depends on that moment. Prints when the spike started, how long the rise
 * and the hold (with the unmap) took.
 */
static int run_blip(const struct opts *o)
{
	uint64_t lo = BLIP_LIFE_NS / 10, hi = BLIP_LIFE_NS * 9 / 10, start, at, end, left;
	uint64_t seed, t0, t1, t2;
	int fd = memfd_create("workload-blip", MFD_CLOEXEC);
	char *buf, *b;

	if (fd < 0)
		return fail("memfd_create");
	buf = alloc_block(WRITE_BUF); /* freed before the spike: adds nothing to it */
	if (!buf) {
		close(fd);
		return 1;
	}
	memset(buf, 'b', WRITE_BUF);
	for (left = o->size; left > 0;) {
		ssize_t w = write(fd, buf, left < WRITE_BUF ? left : WRITE_BUF);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			fail_size("write memfd", o->size);
			free_block(buf, WRITE_BUF);
			close(fd);
			return 1;
		}
		left -= (uint64_t)w;
	}
	free_block(buf, WRITE_BUF);
	start = now_ns();
	seed = start ^ ((uint64_t)getpid() << 32);
	seed ^= seed >> 33;
	seed *= UINT64_C(0xff51afd7ed558ccd);
	seed ^= seed >> 33;
	at = hi > lo + o->hold_ns ? lo + seed % (hi - lo - o->hold_ns) : lo;
	hold(at);
	t0 = now_ns();
	b = mmap(NULL, o->size, PROT_READ, MAP_SHARED | MAP_POPULATE, fd, 0);
	if (b == MAP_FAILED) {
		close(fd);
		return fail_size("mmap memfd", o->size);
	}
	t1 = now_ns();
	hold(o->hold_ns);
	munmap(b, o->size);
	t2 = now_ns();
	close(fd);
	fprintf(stderr, "workload: blip at_ns=%" PRIu64 " fill_ns=%" PRIu64 " held_ns=%" PRIu64 "\n",
		t0 - start, t1 - t0, t2 - t1);
	end = start + (at + o->hold_ns + lo > BLIP_LIFE_NS ? at + o->hold_ns + lo : BLIP_LIFE_NS);
	if (now_ns() < end)
		hold(end - now_ns());
	return 0;
}

/*
 * A spike with a near-instant rise: S of shared memory is put in the page
 * cache first with write() (not mapped, so not RSS), then, half-way through
 * a ~1 s life, mapped with MAP_POPULATE (only page table entries to fill),
 * held T and unmapped. Samplers can be judged against a spike this short.
 */
static int run_flash(const struct opts *o)
{
	static char chunk[1 << 16];
	uint64_t start = now_ns(), done = 0, t0, t1, t2;
	int fd = memfd_create("workload-flash", MFD_CLOEXEC);
	char *b;

	if (fd < 0)
		return fail("memfd_create");
	memset(chunk, 1, sizeof(chunk));
	while (done < o->size) {
		size_t n = o->size - done < sizeof(chunk) ? (size_t)(o->size - done) : sizeof(chunk);
		ssize_t w = write(fd, chunk, n);

		if (w <= 0) {
			close(fd);
			return fail_size("write memfd", o->size);
		}
		done += (uint64_t)w;
	}
	if (now_ns() < start + BLIP_LIFE_NS / 2)
		hold(start + BLIP_LIFE_NS / 2 - now_ns());
	t0 = now_ns();
	b = mmap(NULL, o->size, PROT_READ, MAP_SHARED | MAP_POPULATE, fd, 0);
	if (b == MAP_FAILED) {
		close(fd);
		return fail_size("mmap memfd", o->size);
	}
	t1 = now_ns();
	hold(o->hold_ns);
	munmap(b, o->size);
	t2 = now_ns();
	close(fd);
	fprintf(stderr, "workload: flash at_ns=%" PRIu64 " fill_ns=%" PRIu64 " held_ns=%" PRIu64 "\n",
		t0 - start, t1 - t0, t2 - t1);
	if (now_ns() < start + BLIP_LIFE_NS)
		hold(start + BLIP_LIFE_NS - now_ns());
	return 0;
}

/* ---- fork-shared pages: summed RSS counts them once per process ---- */

/*
 * Our memory cgroup's mapped anon and mapped file pages (memory.stat: v2
 * "anon" and "file_mapped", v1 "rss" and "mapped_file"), on stderr, for the
 * tests to compare with peakbpf's unique memory. Silent where there is no
 * memory cgroup to read. The kernel may fold per-CPU updates into
 * memory.stat late by up to 64 pages per CPU.
 */
static void print_cgroup_mapped(void)
{
	char line[4096], path[4200], key[64];
	const char *dir = NULL, *anon_key = "anon", *file_key = "file_mapped";
	unsigned long long v, anon = 0, file = 0;
	int found = 0;
	FILE *f = fopen("/proc/self/cgroup", "r");

	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		char *rel = strrchr(line, ':'), *ctl = strchr(line, ':');

		if (!rel || !ctl)
			continue;
		rel[strcspn(rel, "\n")] = '\0';
		if (!strncmp(ctl, "::", 2)) {
			snprintf(path, sizeof(path), "/sys/fs/cgroup%s/memory.stat", rel + 1);
			if (!access(path, R_OK)) {
				dir = path;
				break;
			}
		} else if (strstr(ctl, "memory")) {
			snprintf(path, sizeof(path), "/sys/fs/cgroup/memory%s/memory.stat", rel + 1);
			if (!access(path, R_OK)) {
				dir = path;
				anon_key = "rss";
				file_key = "mapped_file";
				break;
			}
		}
	}
	fclose(f);
	if (!dir || !(f = fopen(dir, "r")))
		return;
	while (fscanf(f, "%63s %llu", key, &v) == 2) {
		if (!strcmp(key, anon_key)) {
			anon = v;
			found |= 1;
		} else if (!strcmp(key, file_key)) {
			file = v;
			found |= 2;
		}
	}
	fclose(f);
	if (found == 3)
		fprintf(stderr, "workload: cgroup anon_bytes=%llu file_mapped_bytes=%llu\n", anon, file);
}

/* A private block forked children inherit (no MADV_DONTFORK), every page written. */
static char *alloc_inherited(uint64_t len)
{
	char *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED) {
		fail_size("mmap", len);
		return NULL;
	}
	touch(p, len);
	return p;
}

/* Writes every inherited page: each becomes the child's own copy. */
static int writer_child(const struct opts *o, void *arg, int ready_fd, int go_fd)
{
	touch(arg, o->size);
	ready_and_wait(ready_fd, go_fd);
	return 0;
}

/* Execs at once: the inherited pages leave with the old mm. Ready first
 * (the exec'd image knows no pipe); a failed exec fails at the reap. */
static int exec_child(const struct opts *o, void *arg, int ready_fd, int go_fd)
{
	(void)arg;
	close(go_fd);
	put_byte(ready_fd);
	close(ready_fd);
	if (execv(self_path(), stage_argv(o, "fork-exec-stage2")) && errno == ENOENT)
		execv(SELF_EXE, stage_argv(o, "fork-exec-stage2"));
	return fail("execv " SELF_EXE);
}

static int fork_shape(const struct opts *o, child_fn fn)
{
	char *block = alloc_inherited(o->size);
	int rc;

	if (!block)
		return 1;
	report_cgroup = true;
	rc = fan_out(o, fn, block);
	munmap(block, o->size);
	return rc;
}

/* Reads every page of the inherited mapping: its page table maps them all. */
static int reader_child(const struct opts *o, void *arg, int ready_fd, int go_fd)
{
	volatile char *p = arg;
	char sum = 0;

	for (uint64_t off = 0; off < o->size; off += page)
		sum += p[off];
	(void)sum;
	ready_and_wait(ready_fd, go_fd);
	return 0;
}

/*
 * Shared memory the tree makes and maps in several processes (issue 33):
 * a memfd of S, written and mapped here, read by N children through the
 * mapping they inherit. Its pages are shmem, charged to our cgroup once,
 * and counted by summed RSS once per process.
 */
static int run_memfd_share(const struct opts *o)
{
	int fd = memfd_create("workload-memfd-share", MFD_CLOEXEC), rc;
	char *region;

	if (fd < 0)
		return fail("memfd_create");
	if (ftruncate(fd, (off_t)o->size)) {
		close(fd);
		return fail_size("ftruncate memfd", o->size);
	}
	region = mmap(NULL, o->size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (region == MAP_FAILED)
		return fail_size("mmap memfd", o->size);
	touch(region, o->size);
	report_cgroup = true;
	rc = fan_out(o, reader_child, region);
	munmap(region, o->size);
	return rc;
}

/*
 * hugetlb pages (issue 33): S of MAP_HUGETLB memory, every huge page
 * written, held for T. They are not in RSS (HugetlbPages in
 * /proc/PID/status has them): the summed RSS it adds is 0. Needs huge
 * pages configured (vm.nr_hugepages); S is rounded up to whole huge pages
 * by the kernel. Prints hugetlb_bytes, the size asked.
 */
static int run_hugetlb(const struct opts *o)
{
	char *p = mmap(NULL, o->size, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_HUGETLB, -1, 0);

	if (p == MAP_FAILED)
		return fail_size("mmap MAP_HUGETLB (are huge pages configured? vm.nr_hugepages)", o->size);
	touch(p, o->size);
	fprintf(stderr, "workload: hugetlb hugetlb_bytes=%" PRIu64 "\n", o->size);
	hold(o->hold_ns);
	munmap(p, o->size);
	return 0;
}

static uint64_t exp_zero(const struct opts *o) { (void)o; return 0; }

static int run_fork_share(const struct opts *o) { return fork_shape(o, idle_child); }
static int run_fork_write(const struct opts *o) { return fork_shape(o, writer_child); }
static int run_fork_exec(const struct opts *o) { return fork_shape(o, exec_child); }

/* The exec'd child of fork-exec: idles T, holding only its own image. */
static int run_fork_exec_stage2(const struct opts *o)
{
	hold(o->hold_ns);
	return 0;
}

/* ---- ranks of an MPI job (peakbpf --record, peakbpf merge) ---- */

/* The first of these that is a number, else dflt. */
static long env_number(const char *const *names, long dflt)
{
	for (size_t i = 0; names[i]; i++) {
		const char *v = getenv(names[i]);
		char *end;
		long n;

		if (!v || !*v)
			continue;
		errno = 0;
		n = strtol(v, &end, 10);
		if (!errno && !*end && n >= 0 && n < 1000000)
			return n;
	}
	return dflt;
}

static const char *const rank_env[] = { "OMPI_COMM_WORLD_RANK", "SLURM_PROCID", "PMI_RANK", NULL };
static const char *const size_env[] = { "OMPI_COMM_WORLD_SIZE", "SLURM_NTASKS", "PMI_SIZE", NULL };

/*
 * Ranks meet through files in $WORKLOAD_SYNC_DIR (a directory every rank
 * sees): NAME.R says rank R got there. Barriers, never sleeps, order the
 * ranks, so that "apart" and "together" hold however far apart their
 * start-ups (each behind its own peakbpf) or page faults are on a loaded
 * machine. Without the variable a rank waits for nobody.
 */
static int sync_mark(const char *name, uint64_t rank)
{
	const char *dir = getenv("WORKLOAD_SYNC_DIR");
	char path[4096];
	FILE *f;

	if (!dir || !*dir)
		return 0;
	snprintf(path, sizeof(path), "%s/%s.%" PRIu64, dir, name, rank);
	f = fopen(path, "we");
	if (!f)
		return fail(path);
	fclose(f);
	return 0;
}

/* Wait (10 ms polls, at most 10 min) until NAME.R exists for every R in
 * [from, to). */
static int sync_wait(const char *name, uint64_t from, uint64_t to)
{
	const char *dir = getenv("WORKLOAD_SYNC_DIR");
	char path[4096];

	if (!dir || !*dir)
		return 0;
	for (uint64_t r = from; r < to; r++) {
		int tries = 0;

		snprintf(path, sizeof(path), "%s/%s.%" PRIu64, dir, name, r);
		while (access(path, F_OK)) {
			if (++tries > 60000) {
				fprintf(stderr, "workload: rank %" PRIu64 " never wrote %s\n", r, path);
				return 1;
			}
			hold(10 * NSEC / 1000);
		}
	}
	return 0;
}

/* Apart at --record's resolution: a rank's growth starts more than two
 * of its 10 ms windows after the previous rank's free, so no window of
 * the one that held the peak overlaps a window of the next that grows
 * (within one window, peakbpf merge must assume both at once). */
#define RANK_APART_GAP_NS (25 * NSEC / 1000)

/* Rank R of SIZE: every rank up, then R holds S for T only once R - 1
 * has freed its block (and RANK_APART_GAP_NS more); all stay alive until
 * the last has freed. */
static int run_rank_apart(const struct opts *o)
{
	uint64_t r = (uint64_t)env_number(rank_env, 0), n = (uint64_t)env_number(size_env, 1);

	if (sync_mark("up", r) || sync_wait("up", 0, n) || (r > 0 && sync_wait("freed", r - 1, r)))
		return 1;
	if (r > 0)
		hold(RANK_APART_GAP_NS);
	if (alloc_hold_free(o->size, o->hold_ns) || sync_mark("freed", r))
		return 1;
	return sync_wait("freed", 0, n);
}

/* Every rank up, every block touched, then all hold S for T at once. */
static int run_rank_together(const struct opts *o)
{
	uint64_t r = (uint64_t)env_number(rank_env, 0), n = (uint64_t)env_number(size_env, 1);
	char *b;

	if (sync_mark("up", r) || sync_wait("up", 0, n))
		return 1;
	b = alloc_block(o->size);
	if (!b || sync_mark("held", r) || sync_wait("held", 0, n))
		return 1;
	hold(o->hold_ns);
	free_block(b, o->size);
	return 0;
}

/* ---- expected growth ---- */

static uint64_t exp_s(const struct opts *o) { return o->size; }
static uint64_t exp_2s(const struct opts *o) { return 2 * o->size; }
static uint64_t exp_4s(const struct opts *o) { return 4 * o->size; }
static uint64_t exp_ns(const struct opts *o) { return o->count * o->size; }
static uint64_t exp_5s(const struct opts *o) { return 5 * o->size; }
static uint64_t exp_n1s(const struct opts *o) { return (o->count + 1) * o->size; }
static uint64_t exp_ladder(const struct opts *o) { return ((1ULL << o->count) - 1) * o->size; }

static uint64_t exp_storm(const struct opts *o)
{
	return (o->count < STORM_ALIVE ? o->count : STORM_ALIVE) * STORM_BLOCK;
}

struct shape {
	const char *name;
	int (*run)(const struct opts *o);
	uint64_t (*expected)(const struct opts *o);
	uint64_t default_count;
	const char *help; /* NULL: a hidden stage, run only by exec of ourselves */
};

static const struct shape shapes[] = {
	{ "spike", run_spike, exp_s, 4,
	  "hold one block of S for T, free it, idle T more; expect S" },
	{ "sequential", run_sequential, exp_s, 4,
	  "N children one after another, each holds S for T; expect S" },
	{ "concurrent", run_concurrent, exp_ns, 4,
	  "N children hold S at the same time for T; expect N*S" },
	{ "late-children", run_late_children, exp_ns, 4,
	  "N children idle T, then hold S at the same time for T; expect N*S" },
	{ "flash", run_flash, exp_s, 1,
	  "live ~1 s; half-way, map S of already-resident shared memory at once, hold T; expect S" },
	{ "ladder", run_ladder, exp_ladder, 3,
	  "N children hold S, 2*S, 4*S, ... at the same time for T; expect (2^N - 1)*S" },
	{ "chain", run_chain, exp_ns, 4,
	  "N generations (each forks the next, then allocates) hold S at once; expect N*S" },
	{ "threads", run_threads, exp_ns, 4,
	  "N threads of one process hold S at once for T; expect N*S" },
	{ "thread-spike", run_thread_spike, exp_s, 4,
	  "N-1 threads sleep while the main thread holds S for T, frees it, idles T; expect S" },
	{ "late-threads", run_late_threads, exp_ns, 4,
	  "idle T, then N threads of one process hold S at once for T; expect N*S" },
	{ "leader-exit", run_leader_exit, exp_s, 1,
	  "the main thread exits at once (pthread_exit); a thread idles T, then holds S for T; expect S" },
	{ "staggered", run_staggered, exp_5s, 3,
	  "3 children: 4*S, S and 0, then (after T) S, 2*S and S; expect 5*S (N ignored)" },
	{ "exec", run_exec, exp_2s, 4,
	  "hold S for T, exec itself, hold 2*S for T; expect 2*S" },
	{ "vfork-exec", run_vfork_exec, exp_2s, 4,
	  "hold S, vfork+exec a child holding S for T, wait for it; expect 2*S" },
	{ "daemon", run_daemon, exp_s, 4,
	  "reparented setsid() grandchild holds S for T, top waits for it; expect S" },
	{ "storm", run_storm, exp_storm, 2000,
	  "N children, at most 8 alive, each 64 KiB (-s ignored); expect 8*64 KiB (bound)" },
	{ "shared", run_shared, exp_ns, 4,
	  "N children touch one MAP_SHARED region of S, hold at once; expect N*S" },
	{ "file", run_file, exp_s, 4,
	  "map a temp file of S ($TMPDIR or /tmp) read-only, read it, hold T; expect S" },
	{ "steady", run_steady, exp_s, 4,
	  "hold S for T (use a long T); expect S" },
	{ "phases", run_phases, exp_4s, 4,
	  "hold S, then 4*S, then 2*S; each until SIGUSR1 or T, 300 ms gaps; expect 4*S" },
	{ "faults", run_faults, exp_s, 1,
	  "touch S in base pages (MADV_NOHUGEPAGE), unmap; N rounds; prints elapsed_ns; expect S" },
	{ "idle-plus-faulter", run_idle_plus_faulter, exp_s, 1,
	  "N-1 idle children live while this process faults in S as faults does, between\n"
	  "                    two waits for SIGUSR1 (or T); expect S" },
	{ "blip", run_blip, exp_s, 1,
	  "write S to a memfd, then live ~1 s; at a random moment map it all at once,\n"
	  "                    hold T (N ignored); expect S" },
	{ "fork-share", run_fork_share, exp_n1s, 3,
	  "touch S, fork N idle children, hold T; expect (N+1)*S summed RSS, S unique" },
	{ "memfd-share", run_memfd_share, exp_n1s, 1,
	  "write a memfd of S, map it, fork N children that read it all, hold T;\n"
	  "                    expect (N+1)*S summed RSS (shmem), S unique" },
	{ "hugetlb", run_hugetlb, exp_zero, 1,
	  "hold S of MAP_HUGETLB pages for T (needs vm.nr_hugepages); expect 0 summed RSS,\n"
	  "                    S hugetlb" },
	{ "fork-write", run_fork_write, exp_n1s, 3,
	  "touch S, fork N children that write every inherited page, hold T;\n"
	  "                    expect (N+1)*S summed RSS and unique" },
	{ "fork-exec", run_fork_exec, exp_n1s, 3,
	  "touch S, fork N children that exec at once and idle T; expect at most\n"
	  "                    (N+1)*S summed RSS (before the execs), S unique" },
	{ "rank-apart", run_rank_apart, exp_s, 1,
	  "an MPI rank (OMPI_COMM_WORLD_RANK, SLURM_PROCID or PMI_RANK = R of SIZE):\n"
	  "                    hold S for T 25 ms after rank R-1 freed its block, live until all\n"
	  "                    have (ranks meet by files in $WORKLOAD_SYNC_DIR); expect S" },
	{ "rank-together", run_rank_together, exp_s, 1,
	  "an MPI rank: touch S; once every rank has, hold it for T; expect S" },
	{ "exec-stage2", run_exec_stage2, exp_2s, 4, NULL },
	{ "fork-exec-stage2", run_fork_exec_stage2, exp_s, 3, NULL },
	{ "vfork-stage2", run_vfork_stage2, exp_s, 4, NULL },
};

/* ---- command line ---- */

static void usage(FILE *f)
{
	fprintf(f,
		"usage: workload [-s SIZE] [-n COUNT] [-t HOLD] [-U] [-x] [-h] SHAPE\n"
		"Make a known memory shape; its expected growth is the peak of the summed RSS\n"
		"it adds to its process tree, excluding each process's own base RSS.\n"
		"  -s SIZE   block size S: bytes, or K/M/G/T with optional iB (binary units);\n"
		"            rounded up to whole pages; default 64MiB\n"
		"  -n COUNT  N, processes/threads; default 4 (storm: 2000)\n"
		"  -t HOLD   hold time T: NUMBER[ns|us|ms|s|m], a bare number is ms; default 100ms\n"
		"  -U        not dumpable (prctl PR_SET_DUMPABLE 0): others may not ptrace it\n"
		"  -x        print the expected growth in bytes on stdout and exit; run nothing\n"
		"  -h        show this help\n"
		"shapes:\n");
	for (size_t i = 0; i < sizeof(shapes) / sizeof(shapes[0]); i++)
		if (shapes[i].help)
			fprintf(f, "  %-17s %s\n", shapes[i].name, shapes[i].help);
	fprintf(f, "exit status: 0 success, 1 runtime failure, 2 usage error\n");
}

/* Plain unsigned decimal: strtoull would accept "-1", " 1" and "0x1". */
static int parse_u64(const char *s, uint64_t *v, char **end)
{
	if (*s < '0' || *s > '9')
		return -1;
	errno = 0;
	*v = strtoull(s, end, 10);
	return errno ? -1 : 0;
}

static int parse_size(const char *s, uint64_t *out)
{
	static const struct { const char *suffix; uint64_t mult; } units[] = {
		{ "", 1 }, { "B", 1 }, { "K", KIB }, { "KiB", KIB }, { "M", MIB }, { "MiB", MIB },
		{ "G", GIB }, { "GiB", GIB }, { "T", TIB }, { "TiB", TIB },
	};
	uint64_t v;
	char *end;

	if (parse_u64(s, &v, &end))
		return -1;
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		if (strcasecmp(end, units[i].suffix))
			continue;
		if (v == 0 || v > MAX_SIZE / units[i].mult)
			return -1;
		*out = v * units[i].mult;
		return 0;
	}
	return -1;
}

static int parse_hold(const char *s, uint64_t *out)
{
	static const struct { const char *suffix; double mult; } units[] = {
		{ "", 1e6 }, { "ns", 1 }, { "us", 1e3 }, { "ms", 1e6 }, { "s", 1e9 }, { "m", 60e9 },
	};
	char *end;
	double v;

	if (*s < '0' || *s > '9')
		return -1;
	errno = 0;
	v = strtod(s, &end);
	if (errno || !isfinite(v) || v < 0)
		return -1;
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		if (strcmp(end, units[i].suffix))
			continue;
		v *= units[i].mult;
		if (v > (double)MAX_HOLD_NS)
			return -1;
		*out = (uint64_t)(v + 0.5); /* no llround: the Makefile links no -lm */
		return 0;
	}
	return -1;
}

int main(int argc, char **argv)
{
	struct opts o = { .size = 64 * MIB, .hold_ns = 100 * UINT64_C(1000000) };
	const struct shape *shape = NULL;
	int c, print_expected = 0, have_count = 0, undumpable = 0;
	uint64_t expected;
	sigset_t usr1;

	page = (uint64_t)sysconf(_SC_PAGESIZE);
	opterr = 0; /* our own one-line messages */
	while ((c = getopt(argc, argv, "s:n:t:Uxh")) != -1) {
		char *end;

		switch (c) {
		case 's':
			if (parse_size(optarg, &o.size)) {
				fprintf(stderr, "workload: bad size '%s' (1 byte to 1 TiB, e.g. 64MiB)\n",
					optarg);
				return 2;
			}
			break;
		case 'n':
			if (parse_u64(optarg, &o.count, &end) || *end || o.count < 1 ||
			    o.count > MAX_COUNT) {
				fprintf(stderr, "workload: bad count '%s' (1 to %" PRIu64 ")\n",
					optarg, MAX_COUNT);
				return 2;
			}
			have_count = 1;
			break;
		case 't':
			if (parse_hold(optarg, &o.hold_ns)) {
				fprintf(stderr, "workload: bad hold time '%s' (e.g. 5ms, 1s; at most 1 day)\n",
					optarg);
				return 2;
			}
			break;
		case 'x':
			print_expected = 1;
			break;
		case 'U':
			undumpable = 1;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			if (optopt == 's' || optopt == 'n' || optopt == 't')
				fprintf(stderr, "workload: -%c needs a value (try -h)\n", optopt);
			else
				fprintf(stderr, "workload: unknown option '-%c' (try -h)\n", optopt);
			return 2;
		}
	}
	if (optind != argc - 1) {
		fprintf(stderr, "workload: expected exactly one SHAPE (try -h)\n");
		return 2;
	}
	for (size_t i = 0; i < sizeof(shapes) / sizeof(shapes[0]); i++)
		if (!strcmp(argv[optind], shapes[i].name))
			shape = &shapes[i];
	if (!shape) {
		fprintf(stderr, "workload: unknown shape '%s' (try -h)\n", argv[optind]);
		return 2;
	}
	if (!have_count)
		o.count = shape->default_count;
	if (shape->run == run_ladder && o.count > 16) {
		fprintf(stderr, "workload: ladder takes at most 16 children (-n)\n");
		return 2;
	}
	o.size = (o.size + page - 1) / page * page; /* what mmap really maps */
	expected = shape->expected(&o);

	if (print_expected) {
		printf("%" PRIu64 "\n", expected);
		return fflush(stdout) ? 1 : 0;
	}
	if (shape->help)
		fprintf(stderr, "workload: %s expected_growth=%" PRIu64 " (%.1f MiB)\n", shape->name, expected,
			(double)expected / 1048576);
	/* phases, idle-plus-faulter: block SIGUSR1 at once, so one sent early is pending rather than fatal. */
	if (shape->run == run_phases || shape->run == run_idle_plus_faulter) {
		sigemptyset(&usr1);
		sigaddset(&usr1, SIGUSR1);
		sigprocmask(SIG_BLOCK, &usr1, NULL);
	}
	if (undumpable && prctl(PR_SET_DUMPABLE, 0)) {
		perror("workload: prctl(PR_SET_DUMPABLE)");
		return 1;
	}
	/* A peer that died must show as EPIPE, not kill the writer. */
	signal(SIGPIPE, SIG_IGN);
	return shape->run(&o);
}
