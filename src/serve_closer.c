// SPDX-License-Identifier: MIT
/*
 * What a client sends and the helper does not keep is closed here, on a
 * thread of its own: close() of a TCP socket with SO_LINGER and unsent data
 * waits for the linger time, and of a file on a stuck filesystem for as long
 * as it is stuck. The loop only queues; each uid's queued fds are counted,
 * and the loop reads no more of a uid's messages while it has too many.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include "serve_int.h"

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

static void *closer_main(void *arg)
{
	struct closer *cl = arg;

	pthread_mutex_lock(&cl->mu);
	for (;;) {
		int fd;

		while (!cl->n && !cl->stop)
			pthread_cond_wait(&cl->cv, &cl->mu);
		if (!cl->n)
			break;
		fd = cl->q[cl->head].fd;
		cl->closing_uid = cl->q[cl->head].uid;
		cl->closing = true;
		cl->head = (cl->head + 1) % CLOSER_MAX;
		cl->n--;
		pthread_mutex_unlock(&cl->mu);
		close(fd);
		pthread_mutex_lock(&cl->mu);
		cl->closing = false;
		cl->closed++;
	}
	pthread_mutex_unlock(&cl->mu);
	return NULL;
}

int closer_start(struct closer *cl)
{
	int err;

	pthread_mutex_init(&cl->mu, NULL);
	pthread_cond_init(&cl->cv, NULL);
	err = pthread_create(&cl->thread, NULL, closer_main, cl);
	cl->running = err == 0;
	return -err;
}

void closer_push(struct closer *cl, int fd, uid_t uid)
{
	/* A socket's own close need not wait at all: unsent data is
	 * dropped (RST) instead of lingering. The sender's socket, its
	 * choice to send it. Not a socket: ENOTSOCK, nothing changes. */
	struct linger now = { .l_onoff = 1, .l_linger = 0 };
	bool queued = false;

	setsockopt(fd, SOL_SOCKET, SO_LINGER, &now, sizeof(now));
	if (cl->running) {
		pthread_mutex_lock(&cl->mu);
		if (cl->n < CLOSER_MAX) {
			size_t tail = (cl->head + cl->n) % CLOSER_MAX;

			cl->q[tail].fd = fd;
			cl->q[tail].uid = uid;
			cl->n++;
			queued = true;
			pthread_cond_signal(&cl->cv);
		}
		pthread_mutex_unlock(&cl->mu);
	}
	/* Not reached while every uid keeps within its limit (CLOSER_MAX). */
	if (!queued)
		close(fd);
}

size_t closer_pending(struct closer *cl, uid_t uid)
{
	size_t n = 0;

	if (!cl->running)
		return 0;
	pthread_mutex_lock(&cl->mu);
	for (size_t i = 0; i < cl->n; i++)
		n += cl->q[(cl->head + i) % CLOSER_MAX].uid == uid;
	n += cl->closing && cl->closing_uid == uid;
	pthread_mutex_unlock(&cl->mu);
	return n;
}

void closer_stop(struct closer *cl)
{
	if (!cl->running)
		return;
	pthread_mutex_lock(&cl->mu);
	cl->stop = true;
	pthread_cond_signal(&cl->cv);
	pthread_mutex_unlock(&cl->mu);
	/* Not joined: the helper is exiting, and a close that waits must
	 * not make it wait too; the kernel closes what is left. */
	pthread_detach(cl->thread);
	cl->running = false;
}
