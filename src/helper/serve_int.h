/* SPDX-License-Identifier: MIT */
/*
 * The helper's insides, shared by its parts: serve.c (the command, its
 * socket), serve_client.c (the loop, each connection's messages),
 * serve_tree.c (the requests: a client's tree in the shared load) and
 * serve_closer.c (closing what clients send and the helper does not keep).
 */
#ifndef PEAKBPF_SERVE_INT_H
#define PEAKBPF_SERVE_INT_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>
#include "helper_proto.h"
#include "serve_fair.h"
#include "serve_sums.h"
#include "tracker_tree.h"

/* The connections and trees a user may have: serve_fair.h. */
#define SERVE_MAX_ROOTS 64              /* roots per tree */
/* Descriptors a uid's clients sent that wait to be closed: past it, the
 * helper reads none of that uid's messages until they are. */
#define SERVE_FDS_PER_UID 256
/* A reply the client has not taken in this long ends its connection. */
#define SERVE_SEND_TIMEOUT_MS 1000
/* The kernel memory a connection's unread replies may take. */
#define SERVE_SNDBUF (4 * (int)sizeof(struct hp_msg))
#define SERVE_ACCEPT_BACKOFF_MS 100     /* after EMFILE, ENFILE, ENOBUFS, ENOMEM */
#define SERVE_ACCEPTS_PER_TURN 64
#define STATUS_COUNT_MS 1000            /* a user's --status: map counts this old at most */
/* Entries of the shared maps: every tree's --max-tracked within them. */
#define SERVE_MAP_ENTRIES (MAX_TREES * DEFAULT_MAX_TRACKED)
/* The record of the sum: the kernel's ring every recording tree shares
 * (~43 k changes: 8 M a second at this pace), drained this often while one
 * records, into each client's queue (serve_sums.h). Its pages count in the
 * helper's RSS as it reads them (twice: the ring is mapped twice). */
#define SERVE_RING_BYTES (2U << 20)
#define SERVE_DRAIN_MS 5
/* A recording client's kernel memory for unread replies: a batch (a
 * larger message than the socket's buffer cannot be sent) and 4 replies. */
#define SERVE_RECORD_SNDBUF ((int)(HP_DRAIN_BYTES + 4 * sizeof(struct hp_msg)))
/* The one load: its maps hold every tree's entries, its ring records the
 * trees whose clients ask (hp_open.record), its unique program counts the
 * cgroups of the trees whose clients send one (HP_UNIQUE). */
#define SERVE_TRACKER_OPTS { .max_tracked = SERVE_MAP_ENTRIES, \
			     .record_ring_bytes = SERVE_RING_BYTES, .record_per_tree = true, \
			     .with_unique = true }

struct host_facts;

/* What a client may read of its tree's processes (serve_readable.c): a
 * recording client's verdict per address space, checked at its first
 * change and again every SERVE_READ_RECHECK_MS while it lives. */
#define SERVE_READ_CACHE 1024
#define SERVE_READ_RECHECK_MS 100
struct read_entry {
	uint64_t mm;
	uint64_t checked_ns;            /* 0: empty */
	uint32_t tgid;                  /* the process checked */
	bool shown;
};

struct client {
	int fd;
	struct ucred cred;
	struct source *src;             /* the open tree, or NULL */
	unsigned slot;                  /* its tree in the shared load */
	/* The source keeps a pointer to these: on the heap, because a
	 * client moves in clients[] when another before it is dropped. */
	struct host_facts *host;
	uint32_t roots;
	bool started;
	struct hp_msg *out;             /* a reply the socket had no room for */
	uint64_t out_since_ns;          /* when it was queued */
	uint64_t heard_ns;              /* its last message (or its connect) */
	/* The record of the sum (hp_open.record): the tree's changes until
	 * the client takes them; a kept reply that is a batch carries the
	 * oldest out_events of them, which leave the queue once it is sent. */
	bool recording;
	bool own_pidns;                 /* in the helper's PID namespace: tgids as they are */
	unsigned pid_depth;             /* its PID namespace below the helper's */
	struct sum_queue rec;
	size_t out_events;
	struct read_entry *readable;    /* a recording client's verdicts (not root's) */
	uint64_t rec_withheld;          /* changes of processes it may not read, not sent */
	pid_t root_pid[SERVE_MAX_ROOTS];        /* the roots, in the helper's PID namespace */
	/* Unique memory (HP_UNIQUE, serve_unique.c): the tree's own cgroup,
	 * its directory held from the request to HP_START (the check that
	 * it holds the roots alone), and its figure's state. */
	bool unique_asked;
	int cgroup_fd;                  /* -1 once HP_START has checked it */
	struct unique *unique;          /* NULL: not measured, unique_why says why */
	char unique_why[HP_WHY_LEN];
};

/* Descriptors to close off the loop (serve_closer.c), in lanes by uid. */
#define CLOSER_LANES 16
#define CLOSER_LANE_MAX 4096
/* A lane whose closes have not moved for this long gets another thread
 * (up to CLOSER_LANE_THREADS): a close that waits holds up one only. */
#define CLOSER_STUCK_MS 500
#define CLOSER_LANE_THREADS 4
struct closer_lane {
	pthread_mutex_t *mu;            /* the closer's */
	unsigned threads;               /* at work on it now */
	unsigned closing;               /* closes under way now */
	uint64_t moved_ns;              /* when a close last began or ended */
	struct { int fd; uid_t uid; } q[CLOSER_LANE_MAX];
	size_t head, n;
};

struct closer {
	pthread_mutex_t mu;
	struct closer_lane lane[CLOSER_LANES];
};

struct server {
	int lfd, sigfd;
	const char *path;               /* unlinked at exit when we bound it */
	bool bound;
	struct client clients[SERVE_MAX_CLIENTS];
	size_t n;
	uint64_t opened, removed, loads;
	struct tracker_load *shared;    /* the load every tree shares, or NULL */
	bool slot_used[MAX_TREES];
	bool verbose;
	bool unload_idle;               /* --unload-idle: the load goes with the last tree */
	uint64_t accept_after_ns;       /* accept nothing before (backing off) */
	uint64_t accept_said_ns;        /* when the last back-off was logged */
	uint64_t refused_fds;           /* fds received and not kept */
	size_t turn;                    /* where the loop's turn over clients starts */
	struct tree_entries counted[MAX_TREES]; /* the last walk of the maps (status) */
	struct sum_wire_key wire;       /* the names clients get for mms and tgids */
	uint64_t drained_ns;            /* the ring's last drain */
	uint64_t counted_ns;            /* when; 0: none yet */
	struct closer *closer;
};

void serve_say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* serve_tree.c: one request m (with the fd it carried in *fd, or -1,
 * which stays the caller's unless the request keeps it: then *fd is -1)
 * into the reply r; 0 or -errno with r's why. */
int serve_handle(struct server *sv, struct client *c, const struct hp_msg *m, int *fd,
		 struct hp_msg *r);
void serve_remove_tree(struct server *sv, struct client *c, const char *why);

/* serve_record.c: the record of the sum. A random key for the names
 * clients get. */
void serve_record_init(struct server *sv);
/* The one load, into sv->shared: with the record's ring, or without it
 * where the kernel has none (its trees cannot record then). */
int serve_record_load(struct server *sv);
/* HP_OPEN asked to record: the tree's flag on, its queue empty. */
int serve_record_open(struct server *sv, struct client *c, struct hp_msg *r);
/* The tree goes: its queue too. */
void serve_record_close(struct client *c);
/* Every recorded change in the kernel's ring into its client's queue:
 * when asked (a drain request), or every SERVE_DRAIN_MS (due). */
void serve_record_drain(struct server *sv);
void serve_record_tick(struct server *sv, uint64_t now);
/* The poll timeout the record needs, ms, or -1 when no client records. */
int serve_record_timeout(const struct server *sv, uint64_t now);
/* HP_DRAIN's reply header (its count of the queue's oldest changes, sent
 * with it by serve_client.c) and HP_MM_IDENTITY's reply. */
int serve_do_drain(struct server *sv, struct client *c, struct hp_msg *r);
int serve_do_identity(struct server *sv, struct client *c, const struct hp_identity *in,
		      struct hp_msg *r);

/* serve_unique.c: the tree's unique memory. HP_UNIQUE (the cgroup's
 * directory in *fd, kept when the request is taken); at HP_START, the
 * check that the cgroup holds the tree alone; each window's figure; the
 * tree goes. */
struct unique;
int serve_do_unique(struct client *c, int *fd, struct hp_msg *r);
void serve_unique_start(struct server *sv, struct client *c);
void serve_unique_window(struct client *c, struct hp_unique *w);
void serve_unique_close(struct client *c);

/* serve_readable.c: whether client c may read process pid (the ptrace
 * rule, host_may_trace; root reads all): 0, -EPERM, -ESRCH (gone). */
int serve_may_read(const struct client *c, pid_t pid);
/* A recording client's verdicts: made at HP_OPEN, gone with the tree. */
int serve_readable_open(struct client *c);
void serve_readable_close(struct client *c);
/* Whether change e (of mm e->mm by process e->tgid, in the helper's
 * numbering) may go to c: the kernel's verdict where it judged the change
 * (e->seen), else cached; a process gone before a first verdict is
 * withheld. */
bool serve_readable_mm(struct client *c, const struct sum_event *e, uint64_t now);
/* Whether the last verdict on mm's process tgid (in the helper's numbering)
 * showed it to c: a process gone since keeps it. */
bool serve_readable_seen(const struct client *c, uint64_t mm, uint32_t tgid);
/* The holders at the peak that c may not read leave f's list (the list is
 * then marked truncated); depth: c's PID namespace below the helper's. */
void serve_readable_holders(const struct client *c, struct hp_figure *f, unsigned depth);

/* serve_client.c */
int serve_loop(struct server *sv);
void serve_drop_client(struct server *sv, size_t i);

/* serve_closer.c: 0 or -errno. */
int closer_start(struct closer *cl);
/* Close n fds off the loop, counted against uid until they are. */
void closer_push(struct closer *cl, const int *fds, size_t n, uid_t uid);
/* A client's connection, shut now and closed off the loop. */
void closer_close_socket(struct closer *cl, int fd, uid_t uid);
/* Descriptors of uid not yet closed. */
size_t closer_pending(struct closer *cl, uid_t uid);
/* A lane whose every thread has been in one close for CLOSER_STUCK_MS
 * gets another thread. Whether any close waits in a queue. */
bool closer_tend(struct closer *cl);
/* Some lane has little room left: accept nothing for now. */
bool closer_nearly_full(struct closer *cl);

/* Is fd a pidfd? Only by its name: nothing else about it is asked, so
 * that nothing a client sends can make the question wait. */
bool fd_is_pidfd(int fd);

#endif
