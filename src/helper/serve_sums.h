/* SPDX-License-Identifier: MIT */
/*
 * The record of the sum in the helper (serve_record.c): each recording
 * client's changes wait in a bounded queue of its own until it asks for
 * them (HP_DRAIN), and leave it only once a reply carrying them was sent.
 * Past its bound a queue counts drops, for its tree alone. What crosses
 * to a client names an mm by a keyed bijection of its key, not the kernel
 * address the key is. Pure: no BPF, no sockets (tests/unit/test_serve_sums.c).
 */
#ifndef PEAKBPF_SERVE_SUMS_H
#define PEAKBPF_SERVE_SUMS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>
#include <linux/types.h>
#include "tracker.h"

/* A queue's first allocation; it doubles as needed, up to its bound. */
#define SUM_QUEUE_FIRST 1024

struct sum_queue {
	struct sum_event *ev;
	size_t cap;                     /* allocated */
	size_t max;                     /* the bound */
	size_t head, n;                 /* the oldest, and how many */
	uint64_t dropped;               /* changes not kept: the queue was at its bound */
};

/* An empty queue of at most max changes (nothing allocated yet). */
void sum_queue_init(struct sum_queue *q, size_t max);
void sum_queue_free(struct sum_queue *q);
/* Append e; at the bound (or out of memory) it is counted in dropped. */
void sum_queue_push(struct sum_queue *q, const struct sum_event *e);
/* The oldest changes, up to max, in place, as at most two runs (the queue
 * wraps): how many. They stay queued until sum_queue_pop. */
size_t sum_queue_peek(const struct sum_queue *q, size_t max, struct iovec iov[2]);
/* The oldest n go (n at most what is queued). */
void sum_queue_pop(struct sum_queue *q, size_t n);

/* A secret of the helper's: the names its clients get for mms and tgids. */
struct sum_wire_key {
	uint64_t k[2];
	uint32_t tgid;
};

/* An mm's key to the name a client gets, and back (a bijection). */
uint64_t sum_wire_mm(const struct sum_wire_key *k, uint64_t mm);
uint64_t sum_wire_mm_back(const struct sum_wire_key *k, uint64_t wire);
/* The same for a tgid (its own inverse). */
static inline uint32_t sum_wire_tgid(const struct sum_wire_key *k, uint32_t tgid)
{
	return tgid ^ k->tgid;
}

#endif
