// SPDX-License-Identifier: MIT
/* A recording client's queue in the helper, and the names of mms on the
 * wire (src/helper/serve_sums.c). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <string.h>
#include <cmocka.h>
#include "serve_sums.h"

static struct sum_event ev(uint64_t i)
{
	return (struct sum_event){ .ns = i, .sum_pages = (__s64)i, .mm = i * 64, .tgid = (__u32)i };
}

/* What peek shows, in order, from both runs. */
static uint64_t peek_check(const struct sum_queue *q, size_t max, uint64_t first)
{
	struct iovec iov[2];
	size_t n = sum_queue_peek(q, max, iov), seen = 0;

	for (int r = 0; r < 2; r++)
		for (size_t i = 0; i < iov[r].iov_len / sizeof(struct sum_event); i++, seen++)
			assert_int_equal(((struct sum_event *)iov[r].iov_base)[i].ns, first + seen);
	assert_int_equal(seen, n);
	return n;
}

/* Changes leave in the order they came, across growth and wrapping, and
 * only when popped. */
static void test_order(void **state)
{
	struct sum_queue q;
	uint64_t in = 0, out = 0;

	(void)state;
	sum_queue_init(&q, 5000);
	for (int round = 0; round < 50; round++) {
		for (int k = 0; k < 700; k++) {
			struct sum_event e = ev(in++);

			sum_queue_push(&q, &e);
		}
		assert_int_equal(peek_check(&q, 1024, out), q.n < 1024 ? q.n : 1024);
		assert_int_equal(peek_check(&q, 1024, out), q.n < 1024 ? q.n : 1024);  /* still there */
		for (int k = 0; k < 2 && q.n; k++) {
			size_t n = peek_check(&q, 400, out);

			sum_queue_pop(&q, n);
			out += n;
		}
	}
	assert_int_equal(q.dropped, 0);
	while (q.n) {
		size_t n = peek_check(&q, 1024, out);

		sum_queue_pop(&q, n);
		out += n;
	}
	assert_int_equal(in, out);
	assert_true(q.cap <= 5000);
	sum_queue_free(&q);
}

/* A client that never takes its changes: the queue stops at its bound and
 * counts the rest as drops; what it holds is the oldest. */
static void test_bound(void **state)
{
	struct sum_queue q;

	(void)state;
	sum_queue_init(&q, 3000);
	for (uint64_t i = 0; i < 100000; i++) {
		struct sum_event e = ev(i);

		sum_queue_push(&q, &e);
	}
	assert_int_equal(q.n, 3000);
	assert_int_equal(q.cap, 3000);
	assert_int_equal(q.dropped, 100000 - 3000);
	assert_int_equal(peek_check(&q, 10000, 0), 3000);
	sum_queue_pop(&q, 5000);        /* more than it holds */
	assert_int_equal(q.n, 0);
	sum_queue_free(&q);
	assert_null(q.ev);
	assert_int_equal(q.max, 3000);
}

/* The names are a bijection: each comes back, distinct keys give distinct
 * names, and a name is not the address. */
static void test_wire_names(void **state)
{
	struct sum_wire_key k = { .k = { 0x1234567887654321ULL, 0x0fedcba987654321ULL }, .tgid = 99 };
	uint64_t prev = 0;

	(void)state;
	for (uint64_t a = 0xffff888000000000ULL; a < 0xffff888000000000ULL + 64 * 5000; a += 64) {
		uint64_t w = sum_wire_mm(&k, a);

		assert_int_equal(sum_wire_mm_back(&k, w), a);
		assert_true(w != a && w != prev);
		assert_true((w >> 48) != 0xffff || (w & 63) != 0);  /* not shaped like an mm */
		prev = w;
	}
	assert_int_equal(sum_wire_tgid(&k, sum_wire_tgid(&k, 4242)), 4242);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_order),
		cmocka_unit_test(test_bound),
		cmocka_unit_test(test_wire_names),
	};

	return cmocka_run_group_tests_name("serve_sums", tests, NULL, NULL);
}
