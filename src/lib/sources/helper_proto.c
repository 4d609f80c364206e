// SPDX-License-Identifier: MIT
/* The helper's messages (helper_proto.h): framing, fds, figures. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>
#include "helper_proto.h"

void hp_init(struct hp_msg *m, enum hp_type type)
{
	memset(m, 0, sizeof(*m));
	m->magic = HP_MAGIC;
	m->version = HP_VERSION;
	m->type = (uint16_t)type;
}

int hp_send(int sock, const struct hp_msg *m, int fd)
{
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} ctl;
	struct iovec iov = { .iov_base = (void *)m, .iov_len = sizeof(*m) };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
	ssize_t n;

	if (fd >= 0) {
		struct cmsghdr *c;

		memset(&ctl, 0, sizeof(ctl));
		mh.msg_control = ctl.buf;
		mh.msg_controllen = sizeof(ctl.buf);
		c = CMSG_FIRSTHDR(&mh);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(c), &fd, sizeof(int));
	}
	do
		n = sendmsg(sock, &mh, MSG_NOSIGNAL);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	return n == (ssize_t)sizeof(*m) ? 0 : -EPROTO;
}

int hp_send_batch(int sock, const struct hp_msg *m, const struct iovec ev[2])
{
	struct iovec iov[3] = { { .iov_base = (void *)m, .iov_len = sizeof(*m) }, ev[0], ev[1] };
	struct msghdr mh = { .msg_iov = iov, .msg_iovlen = 3 };
	size_t want = sizeof(*m) + ev[0].iov_len + ev[1].iov_len;
	ssize_t n;

	do
		n = sendmsg(sock, &mh, MSG_NOSIGNAL);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	return n == (ssize_t)want ? 0 : -EPROTO;
}

size_t hp_take_fds(struct msghdr *mh, int *fds, size_t max)
{
	size_t n = 0;

	for (struct cmsghdr *c = CMSG_FIRSTHDR(mh); c; c = CMSG_NXTHDR(mh, c)) {
		size_t k;

		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS ||
		    c->cmsg_len < CMSG_LEN(0))
			continue;
		k = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (size_t i = 0; i < k && n < max; i++)
			memcpy(&fds[n++], CMSG_DATA(c) + i * sizeof(int), sizeof(int));
	}
	return n;
}

/* A message of ours (its magic) in another version: at least the header. */
static bool other_version(const struct hp_msg *m, ssize_t n)
{
	return n >= (ssize_t)offsetof(struct hp_msg, err) && m->magic == HP_MAGIC &&
	       m->version != HP_VERSION;
}

int hp_recv_fds(int sock, struct hp_msg *m, int *fds, size_t *nfds, size_t *len, int flags)
{
	/* Room for as many fds as the kernel passes in one message: none
	 * can be installed in this process and then lost to the count. */
	union {
		char buf[CMSG_SPACE(HP_MAX_FDS * sizeof(int))];
		struct cmsghdr align;
	} ctl;
	struct iovec iov = { .iov_base = m, .iov_len = sizeof(*m) };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1,
			     .msg_control = ctl.buf, .msg_controllen = sizeof(ctl.buf) };
	ssize_t n;

	*nfds = 0;
	do
		n = recvmsg(sock, &mh, MSG_CMSG_CLOEXEC | flags);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	if (len)
		*len = (size_t)n;
	*nfds = hp_take_fds(&mh, fds, HP_MAX_FDS);
	/* A zero-length message that carries fds is not the peer's end. */
	if (n == 0 && !*nfds)
		return -ECONNRESET;
	if (other_version(m, n))
		return -EPROTONOSUPPORT;
	/* A truncated message or control part is not ours to guess at. */
	if (n != (ssize_t)sizeof(*m) || (mh.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) ||
	    m->magic != HP_MAGIC)
		return -EPROTO;
	return 0;
}

int hp_recv_batch(int sock, struct hp_msg *m, struct sum_event *ev, size_t *n)
{
	struct iovec iov[2] = { { .iov_base = m, .iov_len = sizeof(*m) },
				{ .iov_base = ev, .iov_len = HP_DRAIN_MAX * sizeof(*ev) } };
	struct msghdr mh = { .msg_iov = iov, .msg_iovlen = 2 };
	ssize_t got;

	*n = 0;
	do
		got = recvmsg(sock, &mh, MSG_CMSG_CLOEXEC);
	while (got < 0 && errno == EINTR);
	if (got < 0)
		return -errno;
	if (got == 0)
		return -ECONNRESET;
	if (other_version(m, got))
		return -EPROTONOSUPPORT;
	/* No fd comes with a reply: a control part is a peer not ours. */
	if (got < (ssize_t)sizeof(*m) || (mh.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) ||
	    m->magic != HP_MAGIC)
		return -EPROTO;
	/* A refusal has no changes; a batch is exactly its count of them. */
	if (m->err == 0 && m->type == HP_DRAIN &&
	    (m->u.drained.count > HP_DRAIN_MAX ||
	     (size_t)got != sizeof(*m) + m->u.drained.count * sizeof(*ev)))
		return -EPROTO;
	if ((m->err || m->type != HP_DRAIN) && got != (ssize_t)sizeof(*m))
		return -EPROTO;
	*n = m->err == 0 && m->type == HP_DRAIN ? m->u.drained.count : 0;
	return 0;
}

void hp_refuse_version(int sock, const struct hp_msg *got, size_t len)
{
	struct hp_msg r;

	if (len < offsetof(struct hp_msg, u) + HP_WHY_LEN || len > sizeof(r))
		return;         /* too short for a why, or longer than ours: nothing fits */
	hp_init(&r, (enum hp_type)got->type);
	r.version = got->version;
	r.err = -EPROTONOSUPPORT;
	snprintf(r.u.why, HP_WHY_LEN, "the helper speaks protocol version %d, this peakbpf version %d: "
		 "use a peakbpf and a peakbpf serve of the same version", HP_VERSION, got->version);
	send(sock, &r, len, MSG_NOSIGNAL | MSG_DONTWAIT);
}

int hp_recv(int sock, struct hp_msg *m, int *fd)
{
	int fds[HP_MAX_FDS];
	size_t n;
	int err;

	if (fd)
		*fd = -1;
	err = hp_recv_fds(sock, m, fds, &n, NULL, 0);
	/* One fd at most is expected: the first is kept, the rest closed. */
	for (size_t i = 0; i < n; i++) {
		if (i == 0 && !err && fd)
			*fd = fds[0];
		else
			close(fds[i]);
	}
	if (!err && n > 1)
		err = -EPROTO;
	if (err && fd && *fd >= 0) {
		close(*fd);
		*fd = -1;
	}
	return err;
}

static void copy_str(char *dst, size_t len, const char *src)
{
	snprintf(dst, len, "%s", src ? src : "");
}

/* The fields a figure and its wire form share by name, copied both ways. */
#define HP_FIGURE_FIELDS(X) \
	X(measured) X(exact) X(bound_known) X(baseline_known) X(has_detail) \
	X(has_holders) X(holders_truncated) X(error_bound_bytes) X(peak_bytes) \
	X(baseline_bytes) X(peak_mono_ns) X(anon_bytes) X(file_bytes) X(shmem_bytes) \
	X(procs_at_peak) X(mms_at_peak) X(holders_total) X(holders_bytes)

void hp_figure_to(struct hp_figure *w, const struct figure *f)
{
	memset(w, 0, sizeof(*w));
#define TO_WIRE(name) w->name = f->name;
	HP_FIGURE_FIELDS(TO_WIRE)
#undef TO_WIRE
	w->n_holders = f->n_holders <= FIGURE_MAX_HOLDERS ? f->n_holders : FIGURE_MAX_HOLDERS;
	memcpy(w->holders, f->holders, sizeof(w->holders));
	copy_str(w->inexact_reason, sizeof(w->inexact_reason), f->inexact_reason);
	copy_str(w->scope, sizeof(w->scope), f->scope);
}

void hp_figure_from(struct figure *f, const struct hp_figure *w)
{
	memset(f, 0, sizeof(*f));
	f->source = "bpf";
#define FROM_WIRE(name) f->name = w->name;
	HP_FIGURE_FIELDS(FROM_WIRE)
#undef FROM_WIRE
	f->n_holders = w->n_holders <= FIGURE_MAX_HOLDERS ? w->n_holders : FIGURE_MAX_HOLDERS;
	memcpy(f->holders, w->holders, sizeof(f->holders));
	for (size_t i = 0; i < FIGURE_MAX_HOLDERS; i++)
		f->holders[i].comm[sizeof(f->holders[i].comm) - 1] = '\0';
	f->inexact_reason = w->inexact_reason[0] ? w->inexact_reason : NULL;
	f->scope = w->scope[0] ? w->scope : NULL;
}
