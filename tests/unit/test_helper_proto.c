// SPDX-License-Identifier: MIT
/* The helper's protocol (helper_proto.c): framing, fds, figures. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <errno.h>
#include <dirent.h>
#include <fcntl.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <cmocka.h>
#include "helper_proto.h"
#include "../send_fds.h"

static void pair(int sv[2])
{
	assert_int_equal(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv), 0);
}

/* Every field of a bpf figure crosses; a NULL reason stays NULL. */
static void test_figure_round_trip(void **state)
{
	struct figure f = { .source = "bpf", .measured = true, .exact = true, .bound_known = true,
			    .scope = "summed RSS of the tree", .peak_bytes = 123456789,
			    .baseline_known = true, .baseline_bytes = 4096, .has_detail = true,
			    .peak_mono_ns = 42, .anon_bytes = 1, .file_bytes = 2, .shmem_bytes = 3,
			    .procs_at_peak = 5, .mms_at_peak = 4, .has_holders = true, .n_holders = 2,
			    .holders_total = 7, .holders_truncated = true, .holders_bytes = 99 };
	struct hp_figure w;
	struct figure g;

	(void)state;
	f.holders[1].pid = 77;
	memcpy(f.holders[1].comm, "worker", 7);
	f.holders[1].bytes = 8192;
	hp_figure_to(&w, &f);
	hp_figure_from(&g, &w);
	assert_string_equal(g.source, "bpf");
	assert_true(g.measured && g.exact && g.bound_known && g.baseline_known && g.has_detail);
	assert_true(g.has_holders && g.holders_truncated);
	assert_null(g.inexact_reason);
	assert_string_equal(g.scope, "summed RSS of the tree");
	assert_int_equal(g.peak_bytes, 123456789);
	assert_int_equal(g.baseline_bytes, 4096);
	assert_int_equal(g.peak_mono_ns, 42);
	assert_int_equal(g.anon_bytes + g.file_bytes + g.shmem_bytes, 6);
	assert_int_equal(g.procs_at_peak, 5);
	assert_int_equal(g.mms_at_peak, 4);
	assert_int_equal(g.n_holders, 2);
	assert_int_equal(g.holders_total, 7);
	assert_int_equal(g.holders_bytes, 99);
	assert_int_equal(g.holders[1].pid, 77);
	assert_string_equal(g.holders[1].comm, "worker");
	assert_int_equal(g.holders[1].bytes, 8192);

	f.exact = false;
	f.inexact_reason = "dropped events";
	hp_figure_to(&w, &f);
	hp_figure_from(&g, &w);
	assert_false(g.exact);
	assert_string_equal(g.inexact_reason, "dropped events");
}

/* A count of holders from the wire never indexes past the array. */
static void test_figure_holders_clamped(void **state)
{
	struct hp_figure w = { .n_holders = 1000 };
	struct figure g;

	(void)state;
	memset(w.holders[0].comm, 'x', sizeof(w.holders[0].comm));
	hp_figure_from(&g, &w);
	assert_int_equal(g.n_holders, FIGURE_MAX_HOLDERS);
	assert_int_equal(strlen(g.holders[0].comm), sizeof(g.holders[0].comm) - 1);
}

/* A message carries one fd, which arrives open and close-on-exec. */
static void test_fd_passing(void **state)
{
	struct hp_msg m, r;
	int sv[2], p[2], fd = -1;
	char c = 0;

	(void)state;
	pair(sv);
	assert_int_equal(pipe(p), 0);
	hp_init(&m, HP_ADD_ROOT);
	assert_int_equal(hp_send(sv[0], &m, p[1]), 0);
	assert_int_equal(hp_recv(sv[1], &r, &fd), 0);
	assert_int_equal(r.type, HP_ADD_ROOT);
	assert_true(fd >= 0 && fd != p[1]);
	assert_true(fcntl(fd, F_GETFD) & FD_CLOEXEC);
	assert_int_equal(write(fd, "g", 1), 1);
	assert_int_equal(read(p[0], &c, 1), 1);
	assert_int_equal(c, 'g');
	/* No fd sent: -1. */
	assert_int_equal(hp_send(sv[0], &m, -1), 0);
	assert_int_equal(hp_recv(sv[1], &r, &fd), 0);
	assert_int_equal(fd, -1);
	close(p[0]);
	close(p[1]);
	close(sv[0]);
	close(sv[1]);
}

/* Another version: -EPROTONOSUPPORT, a short message or another magic:
 * -EPROTO, and an fd that came with them is closed, not handed over. The
 * peer's end: -ECONNRESET. */
static void test_bad_messages(void **state)
{
	struct hp_msg m, r;
	int sv[2], p[2], fd = 5;
	char buf[8] = { 0 };

	(void)state;
	pair(sv);
	assert_int_equal(pipe(p), 0);
	hp_init(&m, HP_OPEN);
	m.version = HP_VERSION + 1;
	assert_int_equal(hp_send(sv[0], &m, p[0]), 0);
	assert_int_equal(hp_recv(sv[1], &r, &fd), -EPROTONOSUPPORT);
	assert_int_equal(r.version, HP_VERSION + 1);
	assert_int_equal(fd, -1);
	hp_init(&m, HP_OPEN);
	m.magic = 0;
	assert_int_equal(hp_send(sv[0], &m, -1), 0);
	assert_int_equal(hp_recv(sv[1], &r, NULL), -EPROTO);
	assert_int_equal(send(sv[0], buf, sizeof(buf), 0), (ssize_t)sizeof(buf));
	assert_int_equal(hp_recv(sv[1], &r, NULL), -EPROTO);
	close(sv[0]);
	assert_int_equal(hp_recv(sv[1], &r, NULL), -ECONNRESET);
	close(sv[1]);
	close(p[0]);
	close(p[1]);
}

static int open_fds(void)
{
	int n = 0;
	DIR *d = opendir("/proc/self/fd");

	assert_non_null(d);
	while (readdir(d))
		n++;
	closedir(d);
	return n;
}

/* Issue 23: every fd of a message is accounted for. A message with the
 * kernel's most fds arrives whole (none lost to a short control buffer);
 * hp_recv keeps none of a message with several and none of a zero-length
 * one, which is not the peer's end; nothing stays open behind them. */
static void test_every_fd_accounted(void **state)
{
	int fds[HP_MAX_FDS], sv[2], p[2], fd = 7, before;
	struct hp_msg m, r;
	size_t n = 0;

	(void)state;
	pair(sv);
	assert_int_equal(pipe(p), 0);
	before = open_fds();
	hp_init(&m, HP_ADD_ROOT);
	assert_int_equal(send_fds(sv[0], &m, sizeof(m), p[0], HP_MAX_FDS, 0), 0);
	assert_int_equal(hp_recv_fds(sv[1], &r, fds, &n, NULL, 0), 0);
	assert_int_equal(n, HP_MAX_FDS);
	for (size_t i = 0; i < n; i++)
		close(fds[i]);
	assert_int_equal(send_fds(sv[0], &m, sizeof(m), p[0], 3, 0), 0);
	assert_int_equal(hp_recv(sv[1], &r, &fd), -EPROTO);
	assert_int_equal(fd, -1);
	assert_int_equal(send_fds(sv[0], NULL, 0, p[0], 2, 0), 0);
	assert_int_equal(hp_recv(sv[1], &r, &fd), -EPROTO);
	assert_int_equal(fd, -1);
	assert_int_equal(send_fds(sv[0], NULL, 0, p[0], 1, 0), 0);
	assert_int_equal(hp_recv_fds(sv[1], &r, fds, &n, NULL, 0), -EPROTO);
	assert_int_equal(n, 1);
	close(fds[0]);
	assert_int_equal(hp_recv_fds(sv[1], &r, fds, &n, NULL, MSG_DONTWAIT), -EAGAIN);
	assert_int_equal(open_fds(), before);
	close(p[0]);
	close(p[1]);
	close(sv[0]);
	close(sv[1]);
}

/* An HP_DRAIN reply carries its count of changes in one message, from
 * two runs (a queue that wraps); a count that is not the size is -EPROTO. */
static void test_batch(void **state)
{
	static struct sum_event ev[HP_DRAIN_MAX], got[HP_DRAIN_MAX];
	struct iovec iov[2];
	struct hp_msg m, r;
	size_t n = 0;
	int sv[2];

	(void)state;
	pair(sv);
	for (size_t i = 0; i < HP_DRAIN_MAX; i++)
		ev[i] = (struct sum_event){ .ns = i, .sum_pages = (__s64)i * 2, .mm = i + 7, .tgid = 3 };
	hp_init(&m, HP_DRAIN);
	m.u.drained.count = HP_DRAIN_MAX;
	m.u.drained.drops = 5;
	iov[0] = (struct iovec){ .iov_base = &ev[1000], .iov_len = 24 * sizeof(ev[0]) };
	iov[1] = (struct iovec){ .iov_base = ev, .iov_len = 1000 * sizeof(ev[0]) };
	assert_int_equal(hp_send_batch(sv[0], &m, iov), 0);
	assert_int_equal(hp_recv_batch(sv[1], &r, got, &n), 0);
	assert_int_equal(n, HP_DRAIN_MAX);
	assert_int_equal(r.u.drained.drops, 5);
	assert_int_equal(got[0].ns, 1000);
	assert_int_equal(got[24].ns, 0);
	assert_int_equal(got[1023].sum_pages, 999 * 2);
	/* A count above what came. */
	m.u.drained.count = 3;
	iov[0].iov_len = 2 * sizeof(ev[0]);
	iov[1].iov_len = 0;
	assert_int_equal(hp_send_batch(sv[0], &m, iov), 0);
	assert_int_equal(hp_recv_batch(sv[1], &r, got, &n), -EPROTO);
	/* A refusal is a plain message. */
	hp_init(&m, HP_DRAIN);
	m.err = -EPROTO;
	assert_int_equal(hp_send(sv[0], &m, -1), 0);
	assert_int_equal(hp_recv_batch(sv[1], &r, got, &n), 0);
	assert_int_equal(n, 0);
	assert_int_equal(r.err, -EPROTO);
	close(sv[0]);
	close(sv[1]);
}

/* A peer of another version, whose message is shorter than ours, gets a
 * reply of its own size and version, with the reason where its why is. */
static void test_refuse_version(void **state)
{
	struct hp_msg m, r;
	size_t len = 0, nfds = 0, old = offsetof(struct hp_msg, u) + 1700;
	char buf[sizeof(struct hp_msg)];
	int sv[2], fds[HP_MAX_FDS];

	(void)state;
	pair(sv);
	hp_init(&m, HP_OPEN);
	m.version = HP_VERSION - 1;
	assert_int_equal(send(sv[0], &m, old, 0), (ssize_t)old);
	assert_int_equal(hp_recv_fds(sv[1], &r, fds, &nfds, &len, 0), -EPROTONOSUPPORT);
	assert_int_equal(len, old);
	hp_refuse_version(sv[1], &r, len);
	assert_int_equal(recv(sv[0], buf, sizeof(buf), 0), (ssize_t)old);
	memcpy(&r, buf, old);
	assert_int_equal(r.version, HP_VERSION - 1);
	assert_int_equal(r.err, -EPROTONOSUPPORT);
	assert_non_null(strstr(r.u.why, "protocol version"));
	close(sv[0]);
	close(sv[1]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_figure_round_trip),
		cmocka_unit_test(test_figure_holders_clamped),
		cmocka_unit_test(test_fd_passing),
		cmocka_unit_test(test_bad_messages),
		cmocka_unit_test(test_every_fd_accounted),
		cmocka_unit_test(test_batch),
		cmocka_unit_test(test_refuse_version),
	};

	return cmocka_run_group_tests_name("helper_proto", tests, NULL, NULL);
}
