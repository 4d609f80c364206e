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

void hp_figure_to(struct hp_figure *w, const struct figure *f)
{
	memset(w, 0, sizeof(*w));
	w->measured = f->measured;
	w->exact = f->exact;
	w->bound_known = f->bound_known;
	w->baseline_known = f->baseline_known;
	w->has_detail = f->has_detail;
	w->has_holders = f->has_holders;
	w->holders_truncated = f->holders_truncated;
	w->error_bound_bytes = f->error_bound_bytes;
	w->peak_bytes = f->peak_bytes;
	w->baseline_bytes = f->baseline_bytes;
	w->peak_mono_ns = f->peak_mono_ns;
	w->anon_bytes = f->anon_bytes;
	w->file_bytes = f->file_bytes;
	w->shmem_bytes = f->shmem_bytes;
	w->procs_at_peak = f->procs_at_peak;
	w->mms_at_peak = f->mms_at_peak;
	w->n_holders = f->n_holders <= FIGURE_MAX_HOLDERS ? f->n_holders : FIGURE_MAX_HOLDERS;
	w->holders_total = f->holders_total;
	w->holders_bytes = f->holders_bytes;
	memcpy(w->holders, f->holders, sizeof(w->holders));
	copy_str(w->inexact_reason, sizeof(w->inexact_reason), f->inexact_reason);
	copy_str(w->scope, sizeof(w->scope), f->scope);
}

void hp_figure_from(struct figure *f, const struct hp_figure *w)
{
	memset(f, 0, sizeof(*f));
	f->source = "bpf";
	f->measured = w->measured;
	f->exact = w->exact;
	f->bound_known = w->bound_known;
	f->baseline_known = w->baseline_known;
	f->has_detail = w->has_detail;
	f->has_holders = w->has_holders;
	f->holders_truncated = w->holders_truncated;
	f->error_bound_bytes = w->error_bound_bytes;
	f->peak_bytes = w->peak_bytes;
	f->baseline_bytes = w->baseline_bytes;
	f->peak_mono_ns = w->peak_mono_ns;
	f->anon_bytes = w->anon_bytes;
	f->file_bytes = w->file_bytes;
	f->shmem_bytes = w->shmem_bytes;
	f->procs_at_peak = w->procs_at_peak;
	f->mms_at_peak = w->mms_at_peak;
	f->n_holders = w->n_holders <= FIGURE_MAX_HOLDERS ? w->n_holders : FIGURE_MAX_HOLDERS;
	f->holders_total = w->holders_total;
	f->holders_bytes = w->holders_bytes;
	memcpy(f->holders, w->holders, sizeof(f->holders));
	for (size_t i = 0; i < FIGURE_MAX_HOLDERS; i++)
		f->holders[i].comm[sizeof(f->holders[i].comm) - 1] = '\0';
	f->inexact_reason = w->inexact_reason[0] ? w->inexact_reason : NULL;
	f->scope = w->scope[0] ? w->scope : NULL;
}
