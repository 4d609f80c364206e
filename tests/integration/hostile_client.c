// SPDX-License-Identifier: MIT
/*
 * Clients of `peakbpf serve` that try to stall, starve or leak it (issue 23),
 * and one well-behaved client that times its sessions meanwhile.
 *
 *   hostile_client attack SOCKET SECONDS   every attack below, at once
 *   hostile_client good SOCKET SECONDS     open-add-start-read-close, timed
 *   hostile_client hold SOCKET SECONDS     16 connections, held open
 *   hostile_client trees SOCKET SECONDS    as many trees as the helper gives
 *                                          (16 tries, each of a sleeping
 *                                          child), held: "trees T refused R
 *                                          why W" (W: the last refusal's)
 *   hostile_client linger SOCKET SECONDS   the lingering sockets alone (every
 *                                          other one inside 8 Unix sockets)
 *   hostile_client soak SOCKET SESSIONS    that many sessions, untimed, no anchor
 *   hostile_client nodrain SOCKET SECONDS  a tree that records (a child that
 *                                          faults all along) and whose changes
 *                                          are never asked for; at the end one
 *                                          HP_DRAIN: "queued N drops D"
 *   hostile_client oldversion SOCKET 1     a request of protocol version 2
 *                                          (its size): the reply's why
 *   hostile_client unique SOCKET KIND:PATH an HP_UNIQUE of PATH's fd, opened
 *                                          here: KIND fd (one, after HP_OPEN),
 *                                          two (two copies), none (no fd),
 *                                          early (before HP_OPEN), late (after
 *                                          a root), fifo (PATH a FIFO), busy
 *                                          (a child moved into PATH after the
 *                                          request). Prints "unique err E why
 *                                          W", and for a request taken, the
 *                                          window's "window measured M why W"
 *
 * The attacks: fd floods (messages of 253 fds, of every request type, and
 * zero-length ones), a TCP socket with SO_LINGER and unsent data passed and
 * closed, clients that send and never read, connection churn, and clients
 * SIGKILLed in the middle of a session (half of them recording the sum). tests/integration/test_serve_hostile.sh
 * runs them as nobody and checks the helper's fds, RSS and BPF objects.
 */
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "helper_proto.h"
#include "../send_fds.h"

static const char *sock_path;
static double until;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int dial(void)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);

	snprintf(a.sun_path, sizeof(a.sun_path), "%s", sock_path);
	if (fd >= 0 && connect(fd, (struct sockaddr *)&a, sizeof(a))) {
		close(fd);
		return -1;
	}
	return fd;
}

/* Messages full of fds: of each request type, and of no length at all. */
static void attack_flood(void)
{
	int junk = open("/dev/null", O_RDONLY | O_CLOEXEC);

	while (now() < until) {
		int s = dial();
		struct hp_msg m;

		if (s < 0) {
			usleep(1000);
			continue;
		}
		for (int t = HP_OPEN; t <= HP_UNIQUE + 1; t++) {
			hp_init(&m, (enum hp_type)t);
			send_fds(s, &m, sizeof(m), junk, HP_MAX_FDS, MSG_DONTWAIT);
			send_fds(s, NULL, 0, junk, HP_MAX_FDS, MSG_DONTWAIT);
		}
		close(s);
	}
	close(junk);
}

/* A TCP socket with unsent data and SO_LINGER, passed, then closed here:
 * the helper's close of it would wait for the linger time. */
static int lingering_socket(int *peer)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	struct linger lg = { .l_onoff = 1, .l_linger = 30 };
	socklen_t len = sizeof(a);
	int l = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), c = -1;
	static char buf[65536];

	*peer = -1;
	if (l < 0 || bind(l, (struct sockaddr *)&a, sizeof(a)) || listen(l, 1) ||
	    getsockname(l, (struct sockaddr *)&a, &len))
		goto cleanup;
	c = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (c < 0 || connect(c, (struct sockaddr *)&a, sizeof(a)))
		goto cleanup;
	*peer = accept4(l, NULL, NULL, SOCK_CLOEXEC);      /* never read */
	while (send(c, buf, sizeof(buf), MSG_DONTWAIT) > 0)
		;
	setsockopt(c, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
cleanup:
	if (l >= 0)
		close(l);
	if (*peer < 0 && c >= 0) {
		close(c);
		c = -1;
	}
	return c;
}

/* fd inside depth Unix sockets, each queued on the next: closing the
 * outermost releases the rest, down to fd. */
static int nest(int fd, int depth)
{
	for (int i = 0; i < depth && fd >= 0; i++) {
		struct hp_msg m;
		int sv[2];

		if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv))
			return fd;
		hp_init(&m, HP_STATUS);
		/* Not sent (ETOOMANYREFS: this user has too many fds in
		 * flight): fd stays as deep as it got. */
		if (send_fds(sv[0], &m, sizeof(m), fd, 1, 0)) {
			close(sv[0]);
			close(sv[1]);
			return fd;
		}
		close(fd);
		close(sv[0]);
		fd = sv[1];
	}
	return fd;
}

static void attack_linger(void)
{
	int peers[16], kept[16], n = 0, k = 0;

	while (now() < until && n < 16) {
		int s = dial(), peer, tcp = lingering_socket(&peer);
		struct hp_msg m;

		/* Every other one inside 8 Unix sockets. */
		if (n % 2 && tcp >= 0)
			tcp = nest(tcp, 8);
		hp_init(&m, HP_STATUS);
		/* A request first, which the helper answers before it reads
		 * the next: this copy is closed by then, and the helper's
		 * close is the last. Not sent (no connection, or the helper
		 * refused it): this close would be the last and linger here,
		 * so it waits for the peers'. */
		if (s >= 0 && tcp >= 0)
			send_fds(s, &m, sizeof(m), -1, 0, 0);
		if (tcp >= 0 && (s < 0 || send_fds(s, &m, sizeof(m), tcp, 1, 0))) {
			kept[k++] = tcp;
			tcp = -1;
		}
		if (peer >= 0)
			peers[n++] = peer;
		if (tcp >= 0)
			close(tcp);
		if (s >= 0)
			close(s);
		usleep(200000);
	}
	while (now() < until)
		usleep(50000);
	/* The peers' close resets the connections: nothing lingers after. */
	while (n)
		close(peers[--n]);
	while (k)
		close(kept[--k]);
}

/* Requests sent and their replies never read; reconnect when dropped. */
static void attack_nonreader(void)
{
	int s[4] = { -1, -1, -1, -1 };

	while (now() < until) {
		for (int i = 0; i < 4; i++) {
			struct pollfd p = { .fd = s[i], .events = POLLOUT };
			struct hp_msg m;

			if (s[i] >= 0 && poll(&p, 1, 0) == 1 && (p.revents & (POLLHUP | POLLERR))) {
				close(s[i]);
				s[i] = -1;
			}
			if (s[i] < 0)
				s[i] = dial();
			hp_init(&m, HP_STATUS);
			if (s[i] >= 0)
				send_fds(s[i], &m, sizeof(m), -1, 0, MSG_DONTWAIT);
		}
		usleep(2000);
	}
	for (int i = 0; i < 4; i++)
		if (s[i] >= 0)
			close(s[i]);
}

static void attack_churn(void)
{
	while (now() < until) {
		int s = dial();

		if (s >= 0)
			close(s);
		usleep(500);
	}
}

/* A request and its reply (the fd, -1: none). 0 or the reply's error. */
static int ask(int s, struct hp_msg *m, int fd)
{
	int err = hp_send(s, m, fd);

	if (!err)
		err = hp_recv(s, m, NULL);
	return err ? err : m->err;
}

/* Open a tree of this process, start it, and be killed somewhere along. */
static void attack_killed(void)
{
	while (now() < until) {
		pid_t child = fork();

		if (child == 0) {
			int s = dial(), me = (int)syscall(SYS_pidfd_open, getpid(), 0);
			struct hp_msg m;

			hp_init(&m, HP_OPEN);
			m.u.open.record = getpid() & 1;         /* half of them record */
			if (s >= 0 && !ask(s, &m, -1)) {
				hp_init(&m, HP_ADD_ROOT);
				ask(s, &m, me);
				hp_init(&m, HP_START);
				ask(s, &m, -1);
			}
			pause();
			_exit(0);
		}
		usleep(1000 + rand() % 20000);
		kill(child, SIGKILL);
		waitpid(child, NULL, 0);
	}
}

static int attack(void)
{
	void (*attacks[])(void) = { attack_flood, attack_flood, attack_linger, attack_nonreader,
				    attack_churn, attack_killed };
	size_t n = sizeof(attacks) / sizeof(attacks[0]);
	pid_t pids[8];

	for (size_t i = 0; i < n; i++) {
		pids[i] = fork();
		if (pids[i] == 0) {
			srand((unsigned)getpid());
			attacks[i]();
			_exit(0);
		}
	}
	for (size_t i = 0; i < n; i++)
		waitpid(pids[i], NULL, 0);
	return 0;
}

static int by_value(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

#define STEPS 6         /* connect, open, add, start, read, close */
static const char *const step_name[STEPS] = { "connect", "open", "add", "start", "read", "close" };

/* One session: open, add the child, start, read a window, close; each
 * step's ms into steps[STEPS]. */
static int session(pid_t child, struct hp_figure *fig, double *steps)
{
	static const enum hp_type asks[] = { HP_OPEN, HP_ADD_ROOT, HP_START, HP_CLOSE_WINDOW, HP_CLOSE };
	double t = now();
	int s = dial(), pidfd = (int)syscall(SYS_pidfd_open, child, 0), err = -ECONNREFUSED;
	struct hp_msg m;

	memset(steps, 0, STEPS * sizeof(*steps));
	steps[0] = (now() - t) * 1e3;
	if (s < 0 || pidfd < 0)
		goto cleanup;
	err = 0;
	for (size_t i = 0; i < sizeof(asks) / sizeof(asks[0]) && !err; i++) {
		t = now();
		hp_init(&m, asks[i]);
		err = ask(s, &m, asks[i] == HP_ADD_ROOT ? pidfd : -1);
		if (asks[i] == HP_CLOSE_WINDOW)
			*fig = m.u.figure;
		steps[i + 1] = (now() - t) * 1e3;
	}
cleanup:
	if (s >= 0)
		close(s);
	if (pidfd >= 0)
		close(pidfd);
	return err;
}

/* Sessions of a child that sleeps, timed, while a tree of this process
 * stays open on another connection (so the BPF load stays in). */
static int good(void)
{
	static double ms[100000];
	double steps[STEPS], worst[STEPS] = { 0 }, slowest = -1;
	size_t n = 0, failed = 0, exact = 0;
	pid_t child = fork();
	int anchor = dial(), me = (int)syscall(SYS_pidfd_open, getpid(), 0);
	struct hp_figure fig;
	struct hp_msg m;

	if (child == 0) {
		pause();
		_exit(0);
	}
	hp_init(&m, HP_OPEN);
	if (anchor < 0 || ask(anchor, &m, -1) || (hp_init(&m, HP_ADD_ROOT), ask(anchor, &m, me))) {
		fprintf(stderr, "hostile_client good: cannot open the anchor tree: %s\n", m.u.why);
		kill(child, SIGKILL);
		return 1;
	}
	while (now() < until && n < sizeof(ms) / sizeof(ms[0])) {
		double t0 = now();
		int err = session(child, &fig, steps);

		ms[n++] = (now() - t0) * 1e3;
		if (ms[n - 1] > slowest) {
			slowest = ms[n - 1];
			memcpy(worst, steps, sizeof(worst));
		}
		failed += err != 0;
		exact += !err && fig.measured && fig.exact;
		usleep(10000);
	}
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	close(anchor);
	qsort(ms, n, sizeof(ms[0]), by_value);
	printf("sessions %zu failed %zu exact %zu median_ms %.2f p99_ms %.2f max_ms %.2f\n", n, failed, exact,
	       n ? ms[n / 2] : 0, n ? ms[n * 99 / 100] : 0, n ? ms[n - 1] : 0);
	printf("slowest:");
	for (int i = 0; i < STEPS; i++)
		printf(" %s %.2f", step_name[i], worst[i]);
	printf("\n");
	return failed ? 1 : 0;
}

/* Sessions one after another, each its own load if no other tree is open. */
static int soak(long sessions)
{
	size_t failed = 0, exact = 0;
	double steps[STEPS];
	struct hp_figure fig;
	pid_t child = fork();

	if (child == 0) {
		pause();
		_exit(0);
	}
	for (long i = 0; i < sessions; i++) {
		int err = session(child, &fig, steps);

		failed += err != 0;
		exact += !err && fig.measured && fig.exact;
	}
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	printf("sessions %ld failed %zu exact %zu\n", sessions, failed, exact);
	return failed ? 1 : 0;
}

/* Connections held open and idle, as many as a user may have. */
/* Fault and free 32 MiB over and over until the end: changes of the sum. */
static void churn_memory(int go)
{
	char c;

	if (read(go, &c, 1) != 1)
		_exit(1);
	while (now() < until) {
		size_t len = 32u << 20;
		char *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (p == MAP_FAILED)
			_exit(1);
		for (size_t i = 0; i < len; i += 4096)
			p[i] = 1;
		munmap(p, len);
	}
	_exit(0);
}

/* A recording tree whose changes it never asks for, until the end. */
static int nodrain(void)
{
	static struct sum_event ev[HP_DRAIN_MAX];
	int s = dial(), go[2], pidfd, err;
	struct hp_msg m;
	size_t n = 0;
	pid_t child;

	if (s < 0 || pipe(go))
		return 1;
	child = fork();
	if (child == 0)
		churn_memory(go[0]);
	pidfd = (int)syscall(SYS_pidfd_open, child, 0);
	hp_init(&m, HP_OPEN);
	m.u.open.record = 1;
	err = ask(s, &m, -1);
	hp_init(&m, HP_ADD_ROOT);
	err = err ? err : ask(s, &m, pidfd);
	hp_init(&m, HP_START);
	err = err ? err : ask(s, &m, -1);
	if (write(go[1], "g", 1) != 1 || err) {
		fprintf(stderr, "hostile_client: nodrain: %s (%s)\n", strerror(-err), m.u.why);
		kill(child, SIGKILL);
		return 1;
	}
	waitpid(child, NULL, 0);
	hp_init(&m, HP_DRAIN);
	err = hp_send(s, &m, -1);
	err = err ? err : hp_recv_batch(s, &m, ev, &n);
	if (err || m.err)
		return 1;
	printf("queued %zu more %u drops %llu\n", n, m.u.drained.more, (unsigned long long)m.u.drained.drops);
	close(s);
	return 0;
}

/* What a peakbpf of protocol version 2 is told: a message of its size. */
static int oldversion(void)
{
	size_t old = offsetof(struct hp_msg, u) + 1704;  /* version 2's struct hp_msg */
	char buf[sizeof(struct hp_msg)] = { 0 };
	struct hp_msg m;
	int s = dial();
	ssize_t n;

	hp_init(&m, HP_OPEN);
	m.version = 2;
	memcpy(buf, &m, offsetof(struct hp_msg, u));
	if (s < 0 || send(s, buf, old, 0) != (ssize_t)old)
		return 1;
	n = recv(s, buf, sizeof(buf), 0);
	memcpy(&m, buf, sizeof(m));
	m.u.why[HP_WHY_LEN - 1] = '\0';
	printf("size %zd version %u err %d why %s\n", n, m.version, m.err, m.u.why);
	return n == (ssize_t)old ? 0 : 1;
}

/* HP_UNIQUE as KIND says (main's usage), the fd's file PATH's. */
static int unique_send(int s, const char *kind, int fd, struct hp_msg *m)
{
	int err;

	hp_init(m, HP_UNIQUE);
	if (strcmp(kind, "two"))
		return ask(s, m, strcmp(kind, "none") ? fd : -1);
	err = send_fds(s, m, sizeof(*m), fd, 2, 0);
	if (!err)
		err = hp_recv(s, m, NULL);
	return err ? err : m->err;
}

/* A child in the cgroup of directory path, which the tree does not hold. */
static pid_t stranger_into(const char *path)
{
	char procs[4096], pid[16];
	pid_t child = fork();
	int fd;

	if (child == 0) {
		pause();
		_exit(0);
	}
	snprintf(procs, sizeof(procs), "%s/cgroup.procs", path);
	snprintf(pid, sizeof(pid), "%d", (int)child);
	fd = open(procs, O_WRONLY | O_CLOEXEC);
	if (fd < 0 || write(fd, pid, strlen(pid)) < 0)
		perror("hostile_client: cgroup.procs");
	if (fd >= 0)
		close(fd);
	return child;
}

static int unique_case(const char *spec)
{
	const char *path = strchr(spec, ':');
	char kind[16];
	int s = dial(), me = (int)syscall(SYS_pidfd_open, getpid(), 0), fd, err = 0;
	pid_t stranger = 0;
	struct hp_msg m;

	if (!path || path - spec >= (long)sizeof(kind) || s < 0 || me < 0)
		return 2;
	snprintf(kind, sizeof(kind), "%.*s", (int)(path - spec), spec);
	path++;
	fd = !strcmp(kind, "fifo") ? open(path, O_RDWR | O_NONBLOCK | O_CLOEXEC) : open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 2;
	hp_init(&m, HP_OPEN);
	m.u.open.command_mode = 1;
	if (strcmp(kind, "early"))
		err = ask(s, &m, -1);
	hp_init(&m, HP_ADD_ROOT);
	if (!err && !strcmp(kind, "late"))
		err = ask(s, &m, me);
	err = err ? err : unique_send(s, kind, fd, &m);
	m.u.why[HP_WHY_LEN - 1] = '\0';
	printf("unique err %d why %s\n", err, err ? m.u.why : "");
	if (err)
		return 0;
	if (!strcmp(kind, "busy"))
		stranger = stranger_into(path);
	hp_init(&m, HP_ADD_ROOT);
	err = ask(s, &m, me);
	hp_init(&m, HP_START);
	err = err ? err : ask(s, &m, -1);
	hp_init(&m, HP_CLOSE_WINDOW);
	err = err ? err : ask(s, &m, -1);
	if (stranger > 0) {
		kill(stranger, SIGKILL);
		waitpid(stranger, NULL, 0);
	}
	m.u.figure.unique.why[sizeof(m.u.figure.unique.why) - 1] = '\0';
	printf("window err %d measured %u why %s\n", err, (unsigned)m.u.figure.unique.measured,
	       m.u.figure.unique.why);
	close(s);
	return err ? 1 : 0;
}

/* One tree of a child that sleeps, started, on connection *s: 0 or the error. */
static int tree_of_sleeper(int *s, pid_t *child, struct hp_msg *m)
{
	int pidfd, err;

	*s = dial();
	*child = fork();
	if (*child == 0) {
		pause();
		_exit(0);
	}
	pidfd = (int)syscall(SYS_pidfd_open, *child, 0);
	if (*s < 0 || pidfd < 0)
		return -ECONNREFUSED;
	hp_init(m, HP_OPEN);
	m->u.open.command_mode = 1;
	err = ask(*s, m, -1);
	if (err == -EPIPE || err == -ECONNRESET)
		err = hp_recv(*s, m, NULL) ? err : m->err;      /* refused at connect: its why */
	if (!err) {
		hp_init(m, HP_ADD_ROOT);
		err = ask(*s, m, pidfd);
	}
	if (!err) {
		hp_init(m, HP_START);
		err = ask(*s, m, -1);
	}
	close(pidfd);
	return err;
}

static int trees(void)
{
	int s[16], got = 0, refused = 0;
	pid_t child[16];
	char why[HP_WHY_LEN] = "";
	struct hp_msg m;

	for (int i = 0; i < 16; i++) {
		if (tree_of_sleeper(&s[i], &child[i], &m)) {
			m.u.why[HP_WHY_LEN - 1] = '\0';
			snprintf(why, sizeof(why), "%s", m.u.why);
			refused++;
		} else {
			got++;
		}
	}
	printf("trees %d refused %d why %s\n", got, refused, why);
	fflush(stdout);
	while (now() < until)
		usleep(50000);
	for (int i = 0; i < 16; i++) {
		if (s[i] >= 0)
			close(s[i]);
		kill(child[i], SIGKILL);
		waitpid(child[i], NULL, 0);
	}
	return 0;
}

static int hold(void)
{
	int s[16];

	for (int i = 0; i < 16; i++)
		s[i] = dial();
	while (now() < until)
		usleep(50000);
	for (int i = 0; i < 16; i++)
		if (s[i] >= 0)
			close(s[i]);
	return 0;
}

int main(int argc, char **argv)
{
	char *end;
	long secs;

	if (argc == 4 && !strcmp(argv[1], "unique")) {
		sock_path = argv[2];
		return unique_case(argv[3]);
	}
	if (argc != 4 || (strcmp(argv[1], "attack") && strcmp(argv[1], "good") && strcmp(argv[1], "hold") &&
			  strcmp(argv[1], "soak") && strcmp(argv[1], "linger") &&
			  strcmp(argv[1], "nodrain") && strcmp(argv[1], "oldversion") &&
			  strcmp(argv[1], "trees"))) {
		fprintf(stderr, "usage: hostile_client attack|good|hold|linger|nodrain|oldversion|trees SOCKET "
			"SECONDS, soak SOCKET SESSIONS, or unique SOCKET KIND:PATH\n");
		return 2;
	}
	errno = 0;
	secs = strtol(argv[3], &end, 10);
	if (errno || *end || secs < 1 || secs > 1000000) {
		fprintf(stderr, "hostile_client: SECONDS or SESSIONS: 1 to 1000000\n");
		return 2;
	}
	sock_path = argv[2];
	until = now() + (double)secs;
	signal(SIGPIPE, SIG_IGN);
	if (!strcmp(argv[1], "soak"))
		return soak(secs);
	if (!strcmp(argv[1], "nodrain"))
		return nodrain();
	if (!strcmp(argv[1], "oldversion"))
		return oldversion();
	if (!strcmp(argv[1], "trees"))
		return trees();
	if (!strcmp(argv[1], "linger")) {
		attack_linger();
		return 0;
	}
	return !strcmp(argv[1], "attack") ? attack() : !strcmp(argv[1], "good") ? good() : hold();
}
