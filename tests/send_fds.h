/* SPDX-License-Identifier: MIT */
/* Tests' sender of fds: one message of len bytes (0: none) with n copies
 * of fd (SCM_RIGHTS), as a client of the helper may send it. 0 or -errno. */
#ifndef PEAKBPF_TESTS_SEND_FDS_H
#define PEAKBPF_TESTS_SEND_FDS_H

#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include "helper_proto.h"

static inline int send_fds(int sock, const void *buf, size_t len, int fd, size_t n, int flags)
{
	union {
		char buf[CMSG_SPACE(HP_MAX_FDS * sizeof(int))];
		struct cmsghdr align;
	} ctl;
	char zero = 0;
	struct iovec iov = { .iov_base = len ? (void *)buf : &zero, .iov_len = len };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
	struct cmsghdr *c;

	if (n) {
		memset(&ctl, 0, sizeof(ctl));
		mh.msg_control = ctl.buf;
		mh.msg_controllen = CMSG_SPACE(n * sizeof(int));
		c = CMSG_FIRSTHDR(&mh);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(n * sizeof(int));
		for (size_t i = 0; i < n; i++)
			memcpy(CMSG_DATA(c) + i * sizeof(int), &fd, sizeof(int));
	}
	return sendmsg(sock, &mh, MSG_NOSIGNAL | flags) < 0 ? -errno : 0;
}

#endif
