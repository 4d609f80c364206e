// SPDX-License-Identifier: MIT
/* The helper's messages (helper_proto.h): framing, fds, figures. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
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

int hp_recv(int sock, struct hp_msg *m, int *fd)
{
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} ctl;
	struct iovec iov = { .iov_base = m, .iov_len = sizeof(*m) };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1,
			     .msg_control = ctl.buf, .msg_controllen = sizeof(ctl.buf) };
	int got = -1, err;
	ssize_t n;

	if (fd)
		*fd = -1;
	do
		n = recvmsg(sock, &mh, MSG_CMSG_CLOEXEC);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	if (n == 0)
		return -ECONNRESET;
	for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c))
		if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS &&
		    c->cmsg_len == CMSG_LEN(sizeof(int)) && got < 0)
			memcpy(&got, CMSG_DATA(c), sizeof(int));
	/* One fd at most is expected; a truncated message or control part,
	 * or another version, is not ours to guess at. */
	if (n != (ssize_t)sizeof(*m) || (mh.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) ||
	    m->magic != HP_MAGIC || m->version != HP_VERSION)
		err = -EPROTO;
	else
		err = 0;
	if (got >= 0 && (err || !fd))
		close(got);
	else if (got >= 0)
		*fd = got;
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
