// SPDX-License-Identifier: MIT
/* u64map.h: open addressing with backward-shift deletion. */
#include <stdlib.h>
#include "u64map.h"

static size_t home(uint64_t key, size_t cap)
{
	key ^= key >> 33;
	key *= 0xff51afd7ed558ccdULL;
	key ^= key >> 33;
	return (size_t)key & (cap - 1);
}

static size_t find(const struct u64map *m, uint64_t key)
{
	size_t i = home(key, m->cap);

	while (m->keys[i] && m->keys[i] != key)
		i = (i + 1) & (m->cap - 1);
	return i;
}

uint32_t *u64map_get(const struct u64map *m, uint64_t key)
{
	size_t i;

	if (!m->cap || !key)
		return NULL;
	i = find(m, key);
	return m->keys[i] ? &m->vals[i] : NULL;
}

static int grow(struct u64map *m)
{
	size_t cap = m->cap ? 2 * m->cap : 64;
	struct u64map g = { .keys = calloc(cap, sizeof(uint64_t)), .vals = calloc(cap, sizeof(uint32_t)),
			    .cap = cap };

	if (!g.keys || !g.vals) {
		free(g.keys);
		free(g.vals);
		return -1;
	}
	for (size_t i = 0; i < m->cap; i++) {
		if (!m->keys[i])
			continue;
		size_t j = find(&g, m->keys[i]);

		g.keys[j] = m->keys[i];
		g.vals[j] = m->vals[i];
	}
	g.n = m->n;
	u64map_free(m);
	*m = g;
	return 0;
}

bool u64map_put(struct u64map *m, uint64_t key, uint32_t val, uint32_t **slot)
{
	size_t i;

	*slot = NULL;
	if (!key)
		return false;
	if (2 * (m->n + 1) > m->cap && grow(m))
		return false;
	i = find(m, key);
	*slot = &m->vals[i];
	if (m->keys[i])
		return false;
	m->keys[i] = key;
	m->vals[i] = val;
	m->n++;
	return true;
}

bool u64map_del(struct u64map *m, uint64_t key)
{
	size_t i, j, k, mask = m->cap - 1;

	if (!m->cap || !key)
		return false;
	i = find(m, key);
	if (!m->keys[i])
		return false;
	/* Shift back every key after the hole whose home is not between the
	 * hole and it (cyclically), so that no probe sequence breaks. */
	for (j = (i + 1) & mask; m->keys[j]; j = (j + 1) & mask) {
		k = home(m->keys[j], m->cap);
		if (i <= j ? (i < k && k <= j) : (i < k || k <= j))
			continue;
		m->keys[i] = m->keys[j];
		m->vals[i] = m->vals[j];
		i = j;
	}
	m->keys[i] = 0;
	m->vals[i] = 0;
	m->n--;
	return true;
}

void u64map_free(struct u64map *m)
{
	free(m->keys);
	free(m->vals);
	m->keys = NULL;
	m->vals = NULL;
	m->cap = m->n = 0;
}
