// SPDX-License-Identifier: MIT
#include <errno.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "task_iter.h"

int task_iter_run(struct bpf_link *link)
{
	char buf[64];   /* the programs write nothing: each read only runs them */
	int fd = bpf_iter_create(bpf_link__fd(link)), err = 0;

	if (fd < 0)
		return -errno;
	for (;;) {
		ssize_t r = read(fd, buf, sizeof(buf));

		if (r == 0)
			break;
		if (r < 0 && errno != EINTR && errno != EAGAIN) {
			err = -errno;
			break;
		}
	}
	close(fd);
	return err;
}
