/* SPDX-License-Identifier: MIT */
/*
 * Who gets the helper's connections and trees when they run short
 * (issue 36): every limit a user meets, and the choices they make, pure
 * (tests/unit/test_serve_fair.c). docs/helper.md names each limit.
 */
#ifndef PEAKBPF_SERVE_FAIR_H
#define PEAKBPF_SERVE_FAIR_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#define SERVE_USER_CLIENTS 64           /* connections of users other than root, in all */
#define SERVE_ROOT_CLIENTS 16           /* and beside them, root's only */
#define SERVE_MAX_CLIENTS (SERVE_USER_CLIENTS + SERVE_ROOT_CLIENTS)
#define SERVE_CLIENTS_PER_UID 16        /* connections per uid other than root */
#define SERVE_TREES_PER_UID 4           /* open trees per uid other than root, at most */
#define SERVE_ROOT_TREES 2              /* tree slots only root may take */
/* A connection with no tree that sends nothing for this long is ended. */
#define SERVE_IDLE_MS 5000

/* One connection, as the choices below see it. */
struct fair_conn {
	uid_t uid;
	bool idle;                      /* no tree open, no reply kept for it */
};

/* Whether a user other than root holding held trees may open one more,
 * with free of the users' tree slots (not root's) free: its first while
 * any is free, so that a user who has none is never kept out by others'
 * second ones; a further one, up to SERVE_TREES_PER_UID, only while more
 * than SERVE_TREES_RESERVE stay free, so that the next users' first trees
 * find room. Nothing is idle while anyone waits: a user alone uses 4. */
#define SERVE_TREES_RESERVE 2
bool fair_tree_allowed(unsigned held, unsigned free);
/* The users' connections being full, the one to end so that uid's new one
 * fits: an idle connection of the user holding the most, when that user
 * holds at least two more than uid (so that two users cannot take turns
 * ending each other's). -1: none (the new one is refused). */
long fair_victim(const struct fair_conn *c, size_t n, uid_t uid);

#endif
