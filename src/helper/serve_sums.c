// SPDX-License-Identifier: MIT
/* A recording client's queue of changes, and the names of mms on the
 * wire (serve_sums.h). */
#include <string.h>
#include <sys/mman.h>
#include "serve_sums.h"

void sum_queue_init(struct sum_queue *q, size_t max)
{
	memset(q, 0, sizeof(*q));
	q->max = max;
}

/* Mapped, not malloc'd: a queue's megabytes go back to the system when it
 * does, where malloc would keep them in the helper's heap. */
static void unmap(struct sum_event *ev, size_t cap)
{
	if (ev)
		munmap(ev, cap * sizeof(*ev));
}

void sum_queue_free(struct sum_queue *q)
{
	unmap(q->ev, q->cap);
	sum_queue_init(q, q->max);
}

/* Room for one more: double (up to the bound), oldest first at 0. */
static int grow(struct sum_queue *q)
{
	size_t cap = q->cap ? q->cap * 2 : SUM_QUEUE_FIRST;
	struct sum_event *ev;

	if (cap > q->max)
		cap = q->max;
	ev = mmap(NULL, cap * sizeof(*ev), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (ev == MAP_FAILED)
		return -1;
	for (size_t i = 0; i < q->n; i++)
		ev[i] = q->ev[(q->head + i) % q->cap];
	unmap(q->ev, q->cap);
	q->ev = ev;
	q->cap = cap;
	q->head = 0;
	return 0;
}

void sum_queue_push(struct sum_queue *q, const struct sum_event *e)
{
	if (q->n >= q->max || (q->n == q->cap && grow(q))) {
		q->dropped++;
		return;
	}
	q->ev[(q->head + q->n) % q->cap] = *e;
	q->n++;
}

size_t sum_queue_peek(const struct sum_queue *q, size_t max, struct iovec iov[2])
{
	size_t n = q->n < max ? q->n : max, first;

	memset(iov, 0, 2 * sizeof(*iov));
	if (!n)
		return 0;
	first = q->cap - q->head < n ? q->cap - q->head : n;
	iov[0] = (struct iovec){ .iov_base = &q->ev[q->head], .iov_len = first * sizeof(*q->ev) };
	if (first < n)
		iov[1] = (struct iovec){ .iov_base = q->ev, .iov_len = (n - first) * sizeof(*q->ev) };
	return n;
}

void sum_queue_pop(struct sum_queue *q, size_t n)
{
	if (n > q->n)
		n = q->n;
	q->n -= n;
	q->head = q->n ? (q->head + n) % q->cap : 0;
}

/* Odd multipliers (splitmix64's) and their inverses mod 2^64. */
#define MUL1 0xbf58476d1ce4e5b9ULL
#define MUL2 0x94d049bb133111ebULL

static uint64_t inverse(uint64_t a)
{
	uint64_t x = a;         /* right to 3 bits for odd a; each step doubles them */

	for (int i = 0; i < 5; i++)
		x *= 2 - a * x;
	return x;
}

/* Each step is a bijection (a key's xor, an odd product, the top half
 * folded into the bottom), so the whole is one: a client cannot read a
 * kernel address back from the names without the key. */
uint64_t sum_wire_mm(const struct sum_wire_key *k, uint64_t mm)
{
	uint64_t x = mm ^ k->k[0];

	x *= MUL1;
	x ^= x >> 32;
	x *= MUL2;
	x ^= x >> 32;
	return x ^ k->k[1];
}

uint64_t sum_wire_mm_back(const struct sum_wire_key *k, uint64_t wire)
{
	uint64_t x = wire ^ k->k[1];

	x ^= x >> 32;
	x *= inverse(MUL2);
	x ^= x >> 32;
	x *= inverse(MUL1);
	return x ^ k->k[0];
}
