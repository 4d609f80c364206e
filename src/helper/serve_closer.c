// SPDX-License-Identifier: MIT
/*
 * What a client sends and the helper does not keep, and the client's own
 * connection when it ends, are closed here, off the loop: close() of a TCP
 * socket with SO_LINGER and unsent data waits for the linger time (for
 * ever, if its peer never reads), of a file on a stuck FUSE filesystem for
 * as long as it is stuck, and of a Unix socket for whatever the messages
 * still queued on it carry. The loop only queues. The queue has lanes,
 * each with a thread of its own while it has work, chosen by uid: what one
 * user sends can hold up the closes of its own lane, not every user's.
 * Each uid's fds still to close are counted, and the loop reads no more
 * of a uid's messages while it has too many.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include "clock.h"
#include "serve_int.h"

#define CLOSER_STACK (64 * 1024)   /* close_now's frame: about 3 KiB */
#define CLOSER_DRAIN_MAX 1024      /* messages taken from one socket at most */

bool fd_is_pidfd(int fd)
{
	char path[64], link[64];
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	n = readlink(path, link, sizeof(link) - 1);
	if (n < 0)
		return false;
	link[n] = '\0';
	/* "pidfd:[...]" where pidfds have a filesystem of their own (pidfs). */
	return !strcmp(link, "anon_inode:[pidfd]") || !strncmp(link, "pidfd:", 6);
}

/* One queued message of a shut Unix socket, its fds into fds[]: false
 * when none is left. SO_PASSCRED gives every message a control part (its
 * sender's credentials), so that the end of the queue and a message of
 * no length, which both read as 0 bytes, are told apart. */
static bool take_one(int fd, int *fds, size_t *n)
{
	union {
		char buf[CMSG_SPACE(sizeof(struct ucred)) + CMSG_SPACE(HP_MAX_FDS * sizeof(int))];
		struct cmsghdr align;
	} ctl;
	char data[sizeof(struct hp_msg)];
	struct iovec iov = { .iov_base = data, .iov_len = sizeof(data) };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1,
			     .msg_control = ctl.buf, .msg_controllen = sizeof(ctl.buf) };
	ssize_t got = recvmsg(fd, &mh, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);

	*n = got < 0 ? 0 : hp_take_fds(&mh, fds, HP_MAX_FDS);
	/* ECONNRESET: the peer closed with our replies unread; said once,
	 * and what is queued still comes after it. */
	return got > 0 || (got == 0 && mh.msg_controllen > 0) || (got < 0 && errno == ECONNRESET);
}

/* fds still to close: those taken out of Unix sockets on the way. */
struct pile {
	int *v;
	size_t n, cap;
};

static void pile_add(struct pile *p, int fd)
{
	if (p->n == p->cap) {
		size_t cap = p->cap ? p->cap * 2 : 256;
		int *v = realloc(p->v, cap * sizeof(*v));

		if (!v) {
			close(fd);      /* out of memory: as it comes */
			return;
		}
		p->v = v;
		p->cap = cap;
	}
	p->v[p->n++] = fd;
}

/* Set a socket not to linger: unsent data is dropped (RST) at its close;
 * the sender's socket, its choice to send it. Whether it is a Unix socket
 * (not a socket: ENOTSOCK, nothing changes, false). */
static bool unlinger(int fd)
{
	struct linger now = { .l_onoff = 1, .l_linger = 0 };
	socklen_t len = sizeof(int);
	int domain = 0;

	return !setsockopt(fd, SOL_SOCKET, SO_LINGER, &now, sizeof(now)) &&
	       !getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &domain, &len) && domain == AF_UNIX;
}

/*
 * Close fd, never waiting on what a client made of it. A Unix socket's
 * close releases the fds still queued on it, each of which may be a
 * lingering socket, or a Unix socket with more queued, as deep as its
 * sender nests them: so it is shut (nothing more can be queued) and
 * emptied first. What comes out is closed at once, set not to linger,
 * but for Unix sockets, which go on a pile to be emptied in turn (not
 * recursion): every fd in flight is taken out once, so the pile ends.
 */
static void close_now(int first)
{
	struct pile p = { 0 };
	int fds[HP_MAX_FDS], one = 1;

	if (!unlinger(first)) {
		close(first);
		return;
	}
	pile_add(&p, first);
	while (p.n) {
		int fd = p.v[--p.n];
		bool more = true;
		size_t n;

		setsockopt(fd, SOL_SOCKET, SO_PASSCRED, &one, sizeof(one));
		shutdown(fd, SHUT_RDWR);
		for (int i = 0; i < CLOSER_DRAIN_MAX && more; i++) {
			more = take_one(fd, fds, &n);
			for (size_t k = 0; k < n; k++) {
				if (unlinger(fds[k]))
					pile_add(&p, fds[k]);
				else
					close(fds[k]);
			}
		}
		close(fd);
	}
	free(p.v);
}

static void *lane_main(void *arg)
{
	struct closer_lane *l = arg;

	pthread_mutex_lock(l->mu);
	while (l->n) {
		int fd = l->q[l->head].fd;

		l->head = (l->head + 1) % CLOSER_LANE_MAX;
		l->n--;
		l->closing++;
		l->moved_ns = monotonic_ns();
		pthread_mutex_unlock(l->mu);
		close_now(fd);
		pthread_mutex_lock(l->mu);
		l->closing--;
		l->moved_ns = monotonic_ns();
	}
	l->threads--;           /* the next push starts another */
	pthread_mutex_unlock(l->mu);
	return NULL;
}

static void spawn(void *(*fn)(void *), void *arg, bool *ok)
{
	pthread_attr_t a;
	pthread_t t;

	pthread_attr_init(&a);
	pthread_attr_setstacksize(&a, CLOSER_STACK);
	pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
	*ok = pthread_create(&t, &a, fn, arg) == 0;
	pthread_attr_destroy(&a);
}

int closer_start(struct closer *cl)
{
	pthread_mutex_init(&cl->mu, NULL);
	for (size_t i = 0; i < CLOSER_LANES; i++)
		cl->lane[i].mu = &cl->mu;
	return 0;
}

void closer_push(struct closer *cl, const int *fds, size_t n, uid_t uid)
{
	struct closer_lane *l = &cl->lane[uid % CLOSER_LANES];
	size_t queued = 0;
	bool ok = true;

	if (!n)
		return;
	pthread_mutex_lock(&cl->mu);
	for (; queued < n && l->n < CLOSER_LANE_MAX; queued++) {
		size_t tail = (l->head + l->n) % CLOSER_LANE_MAX;

		l->q[tail].fd = fds[queued];
		l->q[tail].uid = uid;
		l->n++;
	}
	if (queued && !l->threads) {
		spawn(lane_main, l, &ok);
		l->threads += ok;
	}
	pthread_mutex_unlock(&cl->mu);
	/* Not reached: the loop accepts nothing while a lane is nearly full
	 * (closer_nearly_full) and reads no uid over its limit. */
	for (; queued < n; queued++)
		close_now(fds[queued]);
	/* No thread for the lane: its queue closes here, as a last resort. */
	if (!ok) {
		pthread_mutex_lock(&cl->mu);
		l->threads++;
		pthread_mutex_unlock(&cl->mu);
		lane_main(l);
	}
}

bool closer_tend(struct closer *cl)
{
	uint64_t now = monotonic_ns();
	bool waiting = false;

	pthread_mutex_lock(&cl->mu);
	for (size_t i = 0; i < CLOSER_LANES; i++) {
		struct closer_lane *l = &cl->lane[i];
		bool ok;

		waiting |= l->n > 0;
		if (!l->n || l->threads >= CLOSER_LANE_THREADS || l->closing < l->threads ||
		    now - l->moved_ns < CLOSER_STUCK_MS * 1000000ULL)
			continue;
		spawn(lane_main, l, &ok);
		l->threads += ok;
		l->moved_ns = now;
	}
	pthread_mutex_unlock(&cl->mu);
	return waiting;
}

bool closer_nearly_full(struct closer *cl)
{
	bool full = false;

	pthread_mutex_lock(&cl->mu);
	for (size_t i = 0; i < CLOSER_LANES && !full; i++)
		full = cl->lane[i].n > CLOSER_LANE_MAX - HP_MAX_FDS - SERVE_MAX_CLIENTS;
	pthread_mutex_unlock(&cl->mu);
	return full;
}

size_t closer_pending(struct closer *cl, uid_t uid)
{
	struct closer_lane *l = &cl->lane[uid % CLOSER_LANES];
	size_t n = 0;

	pthread_mutex_lock(&cl->mu);
	for (size_t i = 0; i < l->n; i++)
		n += l->q[(l->head + i) % CLOSER_LANE_MAX].uid == uid;
	pthread_mutex_unlock(&cl->mu);
	return n;
}

void closer_close_socket(struct closer *cl, int fd, uid_t uid)
{
	/* Shut first: the client can queue nothing more on it. What it
	 * queued is taken out and closed in the lane's thread. */
	shutdown(fd, SHUT_RDWR);
	closer_push(cl, &fd, 1, uid);
}
