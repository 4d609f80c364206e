// SPDX-License-Identifier: MIT
/* The bounded min/max timeline of the tree sum (timeline.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include "timeline.h"

enum tl_format timeline_format_of(const char *path)
{
	static const char *const ext[] = { ".json", ".csv", ".svg", ".html" };
	const char *dot = path ? strrchr(path, '.') : NULL;

	for (size_t i = 0; dot && i < sizeof(ext) / sizeof(ext[0]); i++)
		if (!strcasecmp(dot, ext[i]))
			return (enum tl_format)i;
	return TL_FORMAT_NONE;
}

int timeline_init(struct timeline *t, uint64_t start_ns, uint64_t unit_bytes, size_t max_buckets)
{
	memset(t, 0, sizeof(*t));
	if (!max_buckets)
		max_buckets = TIMELINE_MAX_BUCKETS;
	if (max_buckets < 2 || (max_buckets & (max_buckets - 1)) || !unit_bytes)
		return -EINVAL;
	t->start_ns = t->end_ns = start_ns;
	t->width_ns = TIMELINE_FIRST_WIDTH_NS;
	t->unit_bytes = unit_bytes;
	t->max_buckets = max_buckets;
	return 0;
}

static void merge_into(struct tl_bucket *to, const struct tl_bucket *from)
{
	if (from->min < to->min)
		to->min = from->min;
	if (from->max > to->max)
		to->max = from->max;
}

/* Merge adjacent pairs: half the buckets, each twice as wide. */
static void halve(struct timeline *t)
{
	size_t i;

	for (i = 0; 2 * i < t->n; i++) {
		struct tl_bucket b = t->b[2 * i];

		if (2 * i + 1 < t->n)
			merge_into(&b, &t->b[2 * i + 1]);
		t->b[i] = b;
	}
	t->n = i;
	t->width_ns *= 2;
}

/* Make room for bucket idx (< max_buckets): grow the allocation by
 * doubling, never beyond the cap. */
static int reserve(struct timeline *t, size_t idx)
{
	size_t cap = t->cap ? t->cap : 64;
	struct tl_bucket *b;

	if (idx < t->cap)
		return 0;
	while (cap <= idx)
		cap *= 2;
	if (cap > t->max_buckets)
		cap = t->max_buckets;
	b = realloc(t->b, cap * sizeof(*b));
	if (!b)
		return -ENOMEM;
	t->b = b;
	t->cap = cap;
	return 0;
}

/* The bucket of instant ns (>= start), merging pairs until it fits. */
static size_t bucket_of(struct timeline *t, uint64_t ns)
{
	while ((ns - t->start_ns) / t->width_ns >= t->max_buckets)
		halve(t);
	return (size_t)((ns - t->start_ns) / t->width_ns);
}

int timeline_add(struct timeline *t, uint64_t ns, int64_t value)
{
	int64_t carried = t->has_value ? t->last : value;
	size_t idx;

	if (ns < t->end_ns)
		ns = t->end_ns;
	idx = bucket_of(t, ns);
	if (reserve(t, idx))
		return -ENOMEM;
	/* Buckets reached now hold the value carried into them. */
	for (; t->n <= idx; t->n++)
		t->b[t->n] = (struct tl_bucket){ carried, carried };
	merge_into(&t->b[idx], &(struct tl_bucket){ value, value });
	if (!t->has_value || value > t->peak) {
		t->peak = value;
		t->peak_ns = ns;
	}
	t->has_value = true;
	t->last = value;
	t->end_ns = ns;
	return 0;
}

int timeline_end(struct timeline *t, uint64_t ns)
{
	return t->has_value ? timeline_add(t, ns, t->last) : 0;
}

void timeline_mark(struct timeline *t, uint64_t ns, enum tl_mark_kind kind, int64_t value,
		   const char *label)
{
	struct tl_mark *m;

	if (t->n_marks >= TIMELINE_MAX_MARKS) {
		t->marks_dropped++;
		return;
	}
	m = &t->marks[t->n_marks++];
	m->ns = ns;
	m->kind = kind;
	m->value = value;
	snprintf(m->label, sizeof(m->label), "%s", label ? label : "");
}

bool timeline_range(const struct timeline *t, uint64_t from, uint64_t to,
		    int64_t *min, int64_t *max)
{
	size_t i, last;

	if (!t->n)
		return false;
	i = from <= t->start_ns ? 0 : (size_t)((from - t->start_ns) / t->width_ns);
	last = to <= t->start_ns ? 0 : (size_t)((to - 1 - t->start_ns) / t->width_ns);
	if (i >= t->n)
		i = t->n - 1;
	if (last >= t->n)
		last = t->n - 1;
	if (last < i)
		last = i;
	struct tl_bucket all = t->b[i];

	for (i++; i <= last; i++)
		merge_into(&all, &t->b[i]);
	*min = all.min;
	*max = all.max;
	return true;
}

bool timeline_max(const struct timeline *t, int64_t *max, uint64_t *at_ns)
{
	size_t best = 0;

	if (!t->n)
		return false;
	for (size_t i = 1; i < t->n; i++)
		if (t->b[i].max > t->b[best].max)
			best = i;
	*max = t->b[best].max;
	*at_ns = t->start_ns + best * t->width_ns;
	return true;
}

bool timeline_peak(const struct timeline *t, uint64_t *ns, int64_t *value)
{
	for (size_t i = t->n_marks; i-- > 0;) {
		if (t->marks[i].kind == TL_MARK_PEAK) {
			*ns = t->marks[i].ns;
			*value = t->marks[i].value;
			return true;
		}
	}
	*ns = t->peak_ns;
	*value = t->peak;
	return t->has_value;
}

uint64_t timeline_since(const struct timeline *t, uint64_t ns)
{
	return ns > t->start_ns ? ns - t->start_ns : 0;
}

uint64_t timeline_bytes(const struct timeline *t, int64_t value)
{
	return value > 0 ? (uint64_t)value * t->unit_bytes : 0;
}

size_t timeline_memory_bytes(const struct timeline *t)
{
	return sizeof(*t) + t->cap * sizeof(*t->b);
}

void timeline_free(struct timeline *t)
{
	free(t->b);
	t->b = NULL;
	t->n = t->cap = 0;
}
