// SPDX-License-Identifier: MIT
/*
 * The helper's loop and its connections. No client can make the loop wait:
 * every socket is non-blocking; a reply the client does not take is kept
 * (one, at most) and the connection ends when it stays untaken; every fd a
 * message carries is counted, kept only when it is the pidfd of an
 * HP_ADD_ROOT or the cgroup directory of an HP_UNIQUE (each recognised by
 * /proc alone), and otherwise closed off the loop (serve_closer.c); a uid
 * whose sent fds wait to be closed is not read until they are; accept
 * failing for want of fds backs off instead of spinning.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "clock.h"
#include "fdcheck.h"
#include "serve_int.h"

#define MS 1000000ULL

/* Fds the helper does not keep: closed off the loop, whatever they are,
 * without a question asked of any (it could wait). */
static void dispose(struct server *sv, const struct client *c, const int *fds, size_t n)
{
	sv->refused_fds += n;
	closer_push(sv->closer, fds, n, c->cred.uid);
}

/* Keep r until the socket has room. false: the connection ends. */
static bool keep(struct client *c, const struct hp_msg *r)
{
	c->out = malloc(sizeof(*r));
	if (!c->out)
		return false;
	memcpy(c->out, r, sizeof(*r));
	c->out_since_ns = monotonic_ns();
	return true;
}

/* Send r, or keep it until the socket has room. false: the connection ends. */
static bool reply(struct client *c, const struct hp_msg *r)
{
	int err = hp_send(c->fd, r, -1);

	if (err != -EAGAIN)
		return err == 0;
	return keep(c, r);
}

/* Send r, an HP_DRAIN reply, with the oldest changes it counts; they
 * leave the queue once sent. */
static int send_batch(struct client *c, const struct hp_msg *r)
{
	struct iovec ev[2];
	size_t n = sum_queue_peek(&c->rec, r->u.drained.count, ev);
	int err = n == r->u.drained.count ? hp_send_batch(c->fd, r, ev) : -EPROTO;

	if (!err)
		sum_queue_pop(&c->rec, n);
	return err;
}

/* An HP_DRAIN reply: as reply(), the kept one remembering its changes. */
static bool reply_batch(struct client *c, const struct hp_msg *r)
{
	int err = send_batch(c, r);

	if (err != -EAGAIN)
		return err == 0;
	if (!keep(c, r))
		return false;
	c->out_events = r->u.drained.count;
	return true;
}

static bool flush_out(struct client *c)
{
	int err = c->out_events ? send_batch(c, c->out) : hp_send(c->fd, c->out, -1);

	if (err == -EAGAIN)
		return true;
	free(c->out);
	c->out = NULL;
	c->out_events = 0;
	return err == 0;
}

/* Whether fd is what a request of type takes: a pidfd (HP_ADD_ROOT), a
 * directory's fd on a cgroup filesystem (HP_UNIQUE). Neither question
 * asks anything of a file whose filesystem could make it wait: /proc's
 * name for it; its mount's type, then a cgroup filesystem's magic. */
static bool fd_fits(const struct client *c, uint16_t type, int fd)
{
	if (type == HP_ADD_ROOT)
		return fd_is_pidfd(fd);
	return type == HP_UNIQUE && fd_on_cgroupfs(fd, c->cred.pid);
}

/* The fds of m: the one fd an HP_ADD_ROOT or HP_UNIQUE may carry comes
 * back in *kept, the rest are disposed of. 0, or the request is refused:
 * -EBADF (not the fd it takes) or -EPROTO (more than one, or a request
 * that takes none). */
static int sort_fds(struct server *sv, const struct client *c, const struct hp_msg *m,
		    const int *fds, size_t n, int *kept)
{
	bool takes_one = m->type == HP_ADD_ROOT || m->type == HP_UNIQUE;
	int err = 0;

	*kept = -1;
	if (n == 1 && takes_one && fd_fits(c, m->type, fds[0]))
		*kept = fds[0];
	else if (n == 1 && takes_one)
		err = -EBADF;
	else if (n)
		err = -EPROTO;
	if (*kept >= 0)
		dispose(sv, c, fds + 1, n - 1);
	else
		dispose(sv, c, fds, n);
	return err;
}

/* Why sort_fds refused m's fds. */
static const char *fds_refused(const struct hp_msg *m, int err)
{
	if (err != -EBADF)
		return "one fd, with an HP_ADD_ROOT (a pidfd) or an HP_UNIQUE (a cgroup directory) "
		       "only: the connection ends";
	return m->type == HP_UNIQUE ? "not a directory of a cgroup filesystem (cgroup, cgroup2)" :
				      "not a process file descriptor (pidfd)";
}

/* One message, if one waits; false when the connection must end. */
static bool serve_message(struct server *sv, struct client *c)
{
	int fds[HP_MAX_FDS], fd, err;
	struct hp_msg m, r;
	size_t n = 0, len = 0;

	err = hp_recv_fds(c->fd, &m, fds, &n, &len, MSG_DONTWAIT);
	if (err == -EAGAIN)
		return true;
	if (err) {
		dispose(sv, c, fds, n);
		if (err == -EPROTONOSUPPORT)
			hp_refuse_version(c->fd, &m, len);      /* in words its version reads */
		if (err == -EPROTO && n == 0) {
			hp_init(&r, 0);
			r.err = -EPROTO;
			snprintf(r.u.why, HP_WHY_LEN, "not a message of protocol version %d: use a peakbpf "
				 "of the helper's version", HP_VERSION);
			hp_send(c->fd, &r, -1);
		}
		return false;
	}
	c->heard_ns = monotonic_ns();
	err = sort_fds(sv, c, &m, fds, n, &fd);
	if (err) {
		hp_init(&r, (enum hp_type)m.type);
		r.err = err;
		snprintf(r.u.why, HP_WHY_LEN, "%s", fds_refused(&m, err));
		return reply(c, &r) && err == -EBADF;
	}
	if (m.type == HP_CLOSE) {
		/* The reply first: the client need not wait for the walks of
		 * the shared maps that remove its tree (~2 ms). The loop reads
		 * no other request until they are done, so to every client
		 * the tree is gone once the reply is sent. */
		bool ok;

		hp_init(&r, HP_CLOSE);
		ok = reply(c, &r);
		serve_handle(sv, c, &m, &fd, &r);
		return ok;
	}
	/* A kept fd is a pidfd or a cgroup filesystem's: its close is quick. */
	r.err = serve_handle(sv, c, &m, &fd, &r);
	if (fd >= 0)
		close(fd);
	return m.type == HP_DRAIN && !r.err ? reply_batch(c, &r) : reply(c, &r);
}

void serve_drop_client(struct server *sv, size_t i)
{
	struct client *c = &sv->clients[i];

	serve_remove_tree(sv, c, "client gone");
	closer_close_socket(sv->closer, c->fd, c->cred.uid);
	free(c->out);
	sv->clients[i] = sv->clients[--sv->n];
}

static size_t clients_of(const struct server *sv, uid_t uid)
{
	size_t n = 0;

	for (size_t i = 0; i < sv->n; i++)
		n += sv->clients[i].cred.uid == uid;
	return n;
}

/* Idle: no tree, no reply kept (what an idle timeout or a newcomer may end). */
static bool client_idle(const struct client *c)
{
	return !c->src && !c->out;
}

/* The users' connections (not root's), as serve_fair.h sees them. */
static size_t user_conns(const struct server *sv, struct fair_conn *fc, size_t *at)
{
	size_t n = 0;

	for (size_t i = 0; i < sv->n; i++) {
		if (!sv->clients[i].cred.uid)
			continue;
		at[n] = i;
		fc[n++] = (struct fair_conn){ .uid = sv->clients[i].cred.uid,
					      .idle = client_idle(&sv->clients[i]) };
	}
	return n;
}

/* A connection not taken: its reason waits for the client's first read
 * (source_helper.c reads it even when its request finds the socket shut). */
static void refuse(struct server *sv, int fd, uid_t uid, int err, const char *fmt, int limit)
{
	struct hp_msg r;

	hp_init(&r, 0);
	r.err = err;
	snprintf(r.u.why, HP_WHY_LEN, fmt, limit);
	hp_send(fd, &r, -1);
	closer_close_socket(sv->closer, fd, uid);
}

/* Out of fds or memory: accept nothing for a while, and say why (once a
 * second at most), rather than wake for the same connection at once. */
static void accept_failed(struct server *sv, int err)
{
	uint64_t now = monotonic_ns();

	if (err != EMFILE && err != ENFILE && err != ENOBUFS && err != ENOMEM)
		return;
	sv->accept_after_ns = now + SERVE_ACCEPT_BACKOFF_MS * MS;
	if (!sv->accept_said_ns || now - sv->accept_said_ns >= 1000 * MS) {
		serve_say("cannot accept a connection: %s: waiting %d ms (%zu clients, %llu fds "
			  "received and not kept so far)", strerror(err), SERVE_ACCEPT_BACKOFF_MS, sv->n,
			  (unsigned long long)sv->refused_fds);
		sv->accept_said_ns = now;
	}
}

/* Room for a connection of uid: 0, or the reason it is refused. Root
 * has SERVE_ROOT_CLIENTS of its own beside the users'; a user SERVE_CLIENTS_PER_UID,
 * and when the users' SERVE_USER_CLIENTS are taken, an idle one of the
 * user holding the most ends for it (fair_victim). */
static int make_room(struct server *sv, uid_t uid, const char **fmt, int *limit)
{
	struct fair_conn fc[SERVE_MAX_CLIENTS];
	size_t at[SERVE_MAX_CLIENTS], n;
	long v;

	if (uid == 0) {
		*fmt = "the helper has %d connections open, root's too: try again later";
		*limit = SERVE_MAX_CLIENTS;
		return sv->n >= SERVE_MAX_CLIENTS ? -EAGAIN : 0;
	}
	if (clients_of(sv, uid) >= SERVE_CLIENTS_PER_UID) {
		/* one user cannot take every connection */
		*fmt = "the helper takes at most %d connections at once per user: close one of yours";
		*limit = SERVE_CLIENTS_PER_UID;
		return -EUSERS;
	}
	n = user_conns(sv, fc, at);
	if (n < SERVE_USER_CLIENTS)
		return 0;
	v = fair_victim(fc, n, uid);
	if (v < 0) {
		*fmt = "the helper has %d connections of users open, each measuring: try again later";
		*limit = SERVE_USER_CLIENTS;
		return -EAGAIN;
	}
	if (sv->verbose)
		serve_say("uid %u: an idle connection ended for uid %u's (the users' %d are taken)",
			  (unsigned)fc[v].uid, (unsigned)uid, SERVE_USER_CLIENTS);
	serve_drop_client(sv, at[v]);
	return 0;
}

/* One connection; false when none waits (or accept failed). */
static bool accept_client(struct server *sv)
{
	socklen_t len = sizeof(struct ucred);
	int sndbuf = SERVE_SNDBUF, limit = 0, err;
	struct ucred cred;
	const char *fmt = "";
	struct client *c;
	int fd = accept4(sv->lfd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);

	if (fd < 0) {
		accept_failed(sv, errno);
		return false;
	}
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len)) {
		closer_close_socket(sv->closer, fd, (uid_t)-1);
		return true;
	}
	err = make_room(sv, cred.uid, &fmt, &limit);
	if (err) {
		refuse(sv, fd, cred.uid, err, fmt, limit);
		return true;
	}
	c = &sv->clients[sv->n];
	memset(c, 0, sizeof(*c));
	c->cgroup_fd = -1;
	c->cred = cred;
	c->heard_ns = monotonic_ns();
	/* Replies a client leaves unread take this much kernel memory at most. */
	setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &sndbuf, sizeof(sndbuf));
	c->fd = fd;
	sv->n++;
	return true;
}

/* Connections with no tree that said nothing for SERVE_IDLE_MS end: one
 * that holds a place and measures nothing takes it from another. */
static void end_idle(struct server *sv, uint64_t now)
{
	for (size_t i = sv->n; i-- > 0;) {
		struct client *c = &sv->clients[i];

		if (!client_idle(c) || now - c->heard_ns <= SERVE_IDLE_MS * MS)
			continue;
		if (sv->verbose)
			serve_say("uid %u: a connection idle for %d ms with no tree: ended", (unsigned)c->cred.uid,
				  SERVE_IDLE_MS);
		serve_drop_client(sv, i);
	}
}

/* What the loop waits for on client c, and whether it holds back. */
static short client_events(struct server *sv, const struct client *c, bool *held)
{
	if (c->out)
		return POLLOUT;
	if (c->cred.uid != 0 && closer_pending(sv->closer, c->cred.uid) >= SERVE_FDS_PER_UID) {
		*held = true;
		return 0;
	}
	return POLLIN;
}

/* One ready (or overdue) client; false when its connection must end. */
static bool serve_client(struct server *sv, struct client *c, short revents, uint64_t now)
{
	if (c->out && now - c->out_since_ns > SERVE_SEND_TIMEOUT_MS * MS) {
		if (sv->verbose)
			serve_say("uid %u: a reply untaken for %d ms: connection ended",
				  (unsigned)c->cred.uid, SERVE_SEND_TIMEOUT_MS);
		return false;
	}
	if (revents & (POLLERR | POLLNVAL))
		return false;
	if (revents & POLLOUT)
		return flush_out(c);
	if (revents & POLLIN)
		return serve_message(sv, c);
	return !(revents & POLLHUP);
}

/* The poll timeout, ms: until the accept back-off ends, or a kept reply
 * is overdue, or (some uid held back) soon, or the record's ring is due
 * (it wakes no one); -1 for none. */
static int loop_timeout(const struct server *sv, bool held, uint64_t now)
{
	int ms = held ? 20 : -1, rec = serve_record_timeout(sv, now);

	if (rec >= 0)
		ms = ms < 0 || rec < ms ? rec : ms;

	if (sv->accept_after_ns > now) {
		int t = (int)((sv->accept_after_ns - now) / MS) + 1;

		ms = ms < 0 || t < ms ? t : ms;
	}
	for (size_t i = 0; i < sv->n; i++) {
		const struct client *c = &sv->clients[i];
		int t = c->out ? SERVE_SEND_TIMEOUT_MS + 1 : -1;

		if (client_idle(c))
			t = now - c->heard_ns >= SERVE_IDLE_MS * MS ? 1 :
			    (int)((SERVE_IDLE_MS * MS - (now - c->heard_ns)) / MS) + 1;
		if (t >= 0)
			ms = ms < 0 || t < ms ? t : ms;
	}
	return ms;
}

static bool served_uid(const uid_t *uids, size_t n, uid_t uid)
{
	for (size_t i = 0; i < n; i++)
		if (uids[i] == uid)
			return true;
	return false;
}

/* One turn over the ready clients, from a place that moves each turn: a
 * uid's messages are read one per turn, so a user's many connections get
 * no more of the loop than another user's one. Drops come after. */
static void serve_turn(struct server *sv, const struct pollfd *pfd, size_t n)
{
	uid_t uids[SERVE_MAX_CLIENTS];
	bool gone[SERVE_MAX_CLIENTS] = { false };
	size_t start = n ? sv->turn++ % n : 0, n_uids = 0;
	uint64_t now = monotonic_ns();

	for (size_t k = 0; k < n; k++) {
		size_t i = (start + k) % n;
		struct client *c = &sv->clients[i];
		short rev = pfd[i].revents;

		if ((rev & POLLIN) && !c->out) {
			if (served_uid(uids, n_uids, c->cred.uid))
				continue;       /* next turn: poll says so again */
			uids[n_uids++] = c->cred.uid;
		}
		gone[i] = !serve_client(sv, c, rev, now);
	}
	/* Backwards, so that dropping client i moves one already seen. */
	for (size_t i = n; i-- > 0;)
		if (gone[i])
			serve_drop_client(sv, i);
}

int serve_loop(struct server *sv)
{
	struct pollfd pfd[SERVE_MAX_CLIENTS + 2];

	for (;;) {
		uint64_t now = monotonic_ns();
		size_t n = sv->n;
		bool held = false;
		int ready;

		pfd[0] = (struct pollfd){ .fd = sv->sigfd, .events = POLLIN };
		/* Accept nothing while backing off, or while the closes wait. */
		if (closer_tend(sv->closer))
			held = true;    /* look again soon: a lane may need a thread */
		if (closer_nearly_full(sv->closer))
			sv->accept_after_ns = now + SERVE_ACCEPT_BACKOFF_MS * MS;
		pfd[1] = (struct pollfd){ .fd = sv->accept_after_ns > now ? -1 : sv->lfd, .events = POLLIN };
		for (size_t i = 0; i < n; i++)
			pfd[i + 2] = (struct pollfd){ .fd = sv->clients[i].fd,
						      .events = client_events(sv, &sv->clients[i], &held) };
		ready = poll(pfd, n + 2, loop_timeout(sv, held, now));
		if (ready < 0 && errno == EINTR)
			continue;
		if (ready < 0)
			return -errno;
		if (pfd[0].revents)
			return 0;       /* SIGTERM, SIGINT, SIGHUP */
		serve_record_tick(sv, monotonic_ns());
		serve_turn(sv, pfd + 2, n);
		end_idle(sv, monotonic_ns());
		/* Every connection waiting, up to a bound: one a turn would let
		 * a user who connects in a loop keep the backlog full. */
		for (int k = 0; (pfd[1].revents & POLLIN) && k < SERVE_ACCEPTS_PER_TURN; k++)
			if (!accept_client(sv))
				break;
	}
}
