/* SPDX-License-Identifier: MIT */
/*
 * A hash map of non-zero 64-bit keys to 32-bit values: open addressing,
 * linear probing, deletion by backward shift (no tombstones), grown at
 * half full. The page shadow's tables (stacks_shadow.c). Pure.
 */
#ifndef PEAKBPF_U64MAP_H
#define PEAKBPF_U64MAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct u64map {
	uint64_t *keys;         /* 0: empty */
	uint32_t *vals;
	size_t cap, n;          /* cap: a power of 2, or 0 */
};

/* The value's slot for key, NULL if absent. */
uint32_t *u64map_get(const struct u64map *m, uint64_t key);
/* Insert key (non-zero) with val, or find it: *slot is its value's slot;
 * true when it was inserted. -ENOMEM as false with *slot NULL. */
bool u64map_put(struct u64map *m, uint64_t key, uint32_t val, uint32_t **slot);
/* Remove key: whether it was there. */
bool u64map_del(struct u64map *m, uint64_t key);
void u64map_free(struct u64map *m);
/* Slot i (0 .. cap - 1): whether it holds a key. */
static inline bool u64map_used(const struct u64map *m, size_t i)
{
	return m->keys[i] != 0;
}

#endif
