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
#include "figure.h"
#include "source.h"

#define HELPER_SOCKET_DEFAULT "/run/peakbpf.sock"
#define HELPER_ENV "PEAKBPF_HELPER"     /* another socket path (secure_getenv) */
#define HP_MAGIC 0x31424b50u            /* "PKB1" */
#define HP_VERSION 2              /* 2: trees share one load (status) */

enum hp_type {
	HP_OPEN = 1,            /* open a tree (options); reply: BPF facts */
	HP_ADD_ROOT,            /* a process, by pidfd in SCM_RIGHTS */
	HP_START,               /* everything entered: the first window opens */
	HP_CLOSE_WINDOW,        /* reply: the window's figure; the next opens */
	HP_CLOSE,               /* remove the tree; the connection may open another */
	HP_STATUS,              /* reply: the helper's trees and their map entries */
};

#define HP_WHY_LEN 192
#define HP_STATUS_MAX 32

struct hp_open {
	uint32_t max_tracked;   /* 0: the default */
	uint32_t command_mode;  /* roots are commands stopped before exec */
};

/* The BPF facts of the helper's tracker (struct host_facts's). */
struct hp_opened {
	uint32_t rss_percpu;
	int32_t exact_path_err;
	double probe_ms, load_ms, learn_ms, attach_ms;
	char teardown_hook[32];
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
};

struct hp_tree {
	uint32_t uid;           /* the client's */
	uint32_t roots;
	uint32_t slot;          /* its index among the load's trees */
	uint32_t pad;
	uint64_t mm_entries, task_entries, thread_entries;      /* in the maps now */
};

struct hp_status {
	uint32_t trees;         /* open now */
	uint32_t clients;       /* connected now */
	uint32_t listed;        /* in tree[]: root sees every tree, a user its own */
	uint32_t loaded;        /* 1: the trees' BPF load is in the kernel now */
	uint32_t max_trees;     /* trees one load serves at once */
	uint32_t pad;
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
		char why[HP_WHY_LEN];
	} u;
};

void hp_init(struct hp_msg *m, enum hp_type type);
/* Send m with fd (-1: none) attached. 0 or -errno. */
int hp_send(int sock, const struct hp_msg *m, int fd);
/*
 * Receive one message into m, and the fd it carries into *fd (-1: none;
 * NULL: close any). 0, -ECONNRESET at the peer's end, -EPROTO for a
 * message of another size, magic or version, or -errno.
 */
int hp_recv(int sock, struct hp_msg *m, int *fd);

/* A figure to and from the wire. from keeps pointers into m. */
void hp_figure_to(struct hp_figure *w, const struct figure *f);
void hp_figure_from(struct figure *f, const struct hp_figure *w);

#endif
