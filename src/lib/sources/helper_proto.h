/* SPDX-License-Identifier: MIT */
/*
 * The protocol between `peakbpf serve` (src/helper/serve.c) and its clients
 * (src/lib/sources/source_helper.c), over a local SOCK_SEQPACKET socket: one message is
 * one request or one reply, each a struct hp_msg. Both ends run on one
 * machine, so fields are in its byte order. docs/design.md describes it.
 */
#ifndef PEAKBPF_HELPER_PROTO_H
#define PEAKBPF_HELPER_PROTO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/uio.h>
#include "figure.h"
#include "source.h"
#include <linux/types.h>
#include "tracker.h"            /* struct sum_event: HP_DRAIN's changes */


#define HELPER_SOCKET_DEFAULT "/run/peakbpf.sock"
#define HELPER_ENV "PEAKBPF_HELPER"     /* another socket path (secure_getenv) */
#define HP_MAGIC 0x31424b50u            /* "PKB1" */
/* 2: trees share one load (status); 3: the record of the sum (HP_DRAIN,
 * HP_MM_IDENTITY, hp_open.record, the window's start sum); 4: unique
 * memory (HP_UNIQUE, hp_figure.unique). The header
 * (magic, version, type, err) and a reply's why stay where they are in
 * every version, so that a peer of another one is told so in words. */
#define HP_VERSION 4

enum hp_type {
	HP_OPEN = 1,            /* open a tree (options); reply: BPF facts */
	HP_ADD_ROOT,            /* a process, by pidfd in SCM_RIGHTS */
	HP_START,               /* everything entered: the first window opens */
	HP_CLOSE_WINDOW,        /* reply: the window's figure; the next opens */
	HP_CLOSE,               /* remove the tree; the connection may open another */
	HP_STATUS,              /* reply: the helper's trees and their map entries */
	HP_DRAIN,               /* reply: a batch of the tree's recorded changes */
	HP_MM_IDENTITY,         /* an mm a change named: who uses it */
	/* The tree's own memory cgroup, its directory fd in SCM_RIGHTS, after
	 * HP_OPEN and before the first HP_ADD_ROOT (it holds nothing yet):
	 * the tree's unique memory, in each window's hp_figure.unique. */
	HP_UNIQUE,
};

#define HP_WHY_LEN 192
#define HP_STATUS_MAX 32

struct hp_open {
	uint32_t max_tracked;   /* 0: the default */
	uint32_t command_mode;  /* roots are commands stopped before exec */
	uint32_t record;        /* record every change of the tree sum (HP_DRAIN) */
	uint32_t pad;
};

/* HP_START's reply: the sum (pages) as the first window opened. */
struct hp_started {
	int64_t window_start_pages;
};

/*
 * HP_DRAIN's reply: this header, then `count` struct sum_event in the same
 * message (at most HP_DRAIN_MAX: a reply is at most HP_DRAIN_BYTES). Each
 * names its mm and tgid by the helper's names for them (opaque: pass them
 * back in HP_MM_IDENTITY), and tree 0. more: the helper holds more now.
 * drops: the tree's changes lost so far, in the kernel's ring or the
 * helper's queue.
 */
#define HP_DRAIN_MAX 1024
/* The changes the helper holds for one tree at most (2.5 MiB): past them,
 * drops. */
#define HP_QUEUE_MAX 65536
struct hp_drained {
	uint32_t count;
	uint32_t more;
	uint64_t drops;
};

/* HP_MM_IDENTITY: mm and tgid as a change named them; the reply: its PID
 * in the client's PID namespace (0: not visible) and comm. */
struct hp_identity {
	uint64_t mm;
	uint32_t tgid;
	uint32_t vpid;
	char comm[16];
};

/* The BPF facts of the helper's tracker (struct host_facts's). */
struct hp_opened {
	uint32_t rss_percpu;
	int32_t exact_path_err;
	double probe_ms, load_ms, learn_ms, attach_ms;
	char teardown_hook[32];
};

/* The window's unique memory (unique_api.h's figure, source "bpf-memcg"):
 * measured 0 without HP_UNIQUE, or when the helper could not (why). */
struct hp_unique {
	uint8_t measured, exact, other_cgroups, pad[5];
	uint64_t peak_bytes, baseline_bytes, anon_bytes, file_bytes;
	char why[HP_WHY_LEN];   /* not measured, or not exact: why; else "" */
};

/* A struct figure of the bpf source, with its strings inside. */
struct hp_figure {
	uint8_t measured, exact, bound_known, baseline_known, has_detail, has_holders,
		holders_truncated, pad;
	uint64_t error_bound_bytes, peak_bytes, baseline_bytes;
	uint64_t peak_mono_ns, anon_bytes, file_bytes, shmem_bytes;
	int64_t procs_at_peak, mms_at_peak;
	uint64_t n_holders, holders_total, holders_bytes;
	struct figure_holder holders[FIGURE_MAX_HOLDERS];
	char inexact_reason[128];       /* "": NULL */
	char scope[64];
	struct bpf_counters counters;   /* as when the window closed */
	int64_t next_start_pages;       /* the sum as the next window opened */
	struct hp_unique unique;        /* the same window's unique memory */
};

struct hp_tree {
	uint32_t uid;           /* the client's */
	uint32_t roots;
	uint32_t slot;          /* its index among the load's trees */
	uint32_t pad;
	uint64_t mm_entries, task_entries, thread_entries;      /* in the maps now */
};

enum { HP_STATUS_ALL = 0, HP_STATUS_OWN = 1 };

struct hp_status {
	uint32_t trees;         /* open now (HP_STATUS_OWN: the asker's) */
	uint32_t clients;       /* connected now (HP_STATUS_OWN: the asker's) */
	uint32_t listed;        /* in tree[]: root sees every tree, a user its own */
	uint32_t loaded;        /* 1: the trees' BPF load is in the kernel now */
	uint32_t max_trees;     /* trees one load serves at once */
	/* Was pad (0): HP_STATUS_ALL, every client's trees and the helper's
	 * history (root asked); HP_STATUS_OWN, the asker's only, and the
	 * history and stray entries are not told (0 here means not told). */
	uint32_t scope;
	uint64_t trees_opened, trees_removed;   /* since the helper started */
	uint64_t loads;         /* BPF loads since the helper started */
	/* Map entries of no open tree: 0 unless a removed tree left some. */
	uint64_t stray_mm_entries, stray_task_entries, stray_thread_entries;
	struct hp_tree tree[HP_STATUS_MAX];     /* the first trees of `trees` */
};

struct hp_msg {
	uint32_t magic;
	uint16_t version;
	uint16_t type;          /* enum hp_type; a reply repeats the request's */
	int32_t err;            /* reply: 0 or -errno, with why */
	uint32_t pad;
	union {
		struct hp_open open;
		struct hp_opened opened;
		struct hp_figure figure;
		struct hp_status status;
		struct hp_started started;
		struct hp_drained drained;
		struct hp_identity identity;
		char why[HP_WHY_LEN];
	} u;
};

#define HP_DRAIN_BYTES (sizeof(struct hp_msg) + HP_DRAIN_MAX * sizeof(struct sum_event))

void hp_init(struct hp_msg *m, enum hp_type type);
/* Send m with fd (-1: none) attached. 0 or -errno. */
int hp_send(int sock, const struct hp_msg *m, int fd);
/* m, then the changes of ev's runs (an HP_DRAIN reply: m's count of
 * them), in one message. 0 or -errno (-EAGAIN: no room now). */
int hp_send_batch(int sock, const struct hp_msg *m, const struct iovec ev[2]);
/*
 * Receive one message into m, and the fd it carries into *fd (-1: none;
 * NULL: close any). 0, -ECONNRESET at the peer's end, -EPROTONOSUPPORT
 * for a message of ours in another version (m->version says which),
 * -EPROTO for one of another size or magic, or -errno.
 */
int hp_recv(int sock, struct hp_msg *m, int *fd);
/* An HP_DRAIN reply into m and its changes into ev[HP_DRAIN_MAX] (*n of
 * them); hp_recv's results, and -EPROTO for a count that is not the size. */
int hp_recv_batch(int sock, struct hp_msg *m, struct sum_event *ev, size_t *n);
/* Tell a peer of another version (its message got, len bytes) so, in a
 * reply of its own size and version: its why is where every version has it. */
void hp_refuse_version(int sock, const struct hp_msg *got, size_t len);
/* The kernel's most fds in one message (SCM_MAX_FD). */
#define HP_MAX_FDS 253
/*
 * Receive one message into m, and every fd it carries into fds[HP_MAX_FDS]
 * (*nfds of them), which the caller owns whatever the result: the same
 * results as hp_recv, and -EAGAIN with flags MSG_DONTWAIT when nothing
 * waits. A zero-length message that carries fds is -EPROTO. *len (NULL:
 * not wanted): the bytes received.
 */
int hp_recv_fds(int sock, struct hp_msg *m, int *fds, size_t *nfds, size_t *len, int flags);
struct msghdr;
/* The fds of every SCM_RIGHTS message in a received mh, in order, into
 * fds[max]: the caller owns them. */
size_t hp_take_fds(struct msghdr *mh, int *fds, size_t max);

/* A figure to and from the wire. from keeps pointers into m. */
void hp_figure_to(struct hp_figure *w, const struct figure *f);
void hp_figure_from(struct figure *f, const struct hp_figure *w);

#endif
