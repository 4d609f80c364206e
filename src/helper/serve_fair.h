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

/* Users other than root with a connection (uid among them or not). */
unsigned fair_users(const struct fair_conn *c, size_t n);
/* The trees a user other than root may have open while users (other than
 * root, the asker among them) are connected: the slots not kept for root
 * shared among one more user than there are (room for the next one), 1 at
 * least, SERVE_TREES_PER_UID at most. */
unsigned fair_tree_share(unsigned slots, unsigned users);
/* The users' connections being full, the one to end so that uid's new one
 * fits: an idle connection of the user holding the most, when that user
 * holds at least two more than uid (so that two users cannot take turns
 * ending each other's). -1: none (the new one is refused). */
long fair_victim(const struct fair_conn *c, size_t n, uid_t uid);

#endif
