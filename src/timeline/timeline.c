// SPDX-License-Identifier: MIT
/* The bounded min/max timeline of the tree sum (timeline.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include "timeline.h"

static const struct {
	const char *ext;
	bool loads;
} formats[TL_FORMAT_COUNT] = {
#define TL_FORMAT_ROW(id, e, l) [TL_FORMAT_##id] = { .ext = e, .loads = l },
	TL_FORMATS(TL_FORMAT_ROW)
#undef TL_FORMAT_ROW
};

enum tl_format timeline_format_of(const char *path)
{
	const char *dot = path ? strrchr(path, '.') : NULL;

	for (int i = 0; dot && i < TL_FORMAT_COUNT; i++)
		if (!strcasecmp(dot, formats[i].ext))
			return (enum tl_format)i;
	return TL_FORMAT_NONE;
}

bool timeline_format_loads(enum tl_format f)
{
	return f > TL_FORMAT_NONE && f < TL_FORMAT_COUNT && formats[f].loads;
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
	int err = 0;

	for (size_t i = 0; t->tracks && i < t->tracks->n; i++)
		if (timeline_end(&t->tracks->v[i].line, ns))
			err = -ENOMEM;
	if (t->has_value && timeline_add(t, ns, t->last))
		err = -ENOMEM;
	return err;
}

void timeline_mark(struct timeline *t, uint64_t ns, enum tl_mark_kind kind, int64_t value,
		   const char *label)
{
	struct tl_mark *m;

	if (t->n_marks >= t->cap_marks) {
		size_t cap = t->cap_marks ? 2 * t->cap_marks : 16;

		if (cap > TIMELINE_MAX_MARKS)
			cap = TIMELINE_MAX_MARKS;
		m = cap > t->cap_marks ? realloc(t->marks, cap * sizeof(*m)) : NULL;
		if (!m) {
			t->marks_dropped++;     /* beyond the cap, or no memory */
			return;
		}
		t->marks = m;
		t->cap_marks = cap;
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

int timeline_tracks_init(struct timeline *t, size_t max_tracks, size_t track_buckets)
{
	if (!max_tracks)
		max_tracks = TL_TRACKS_MAX;
	if (!track_buckets)
		track_buckets = TL_TRACK_BUCKETS;
	if (max_tracks > TL_TRACKS_MAX || track_buckets < 2 || (track_buckets & (track_buckets - 1)))
		return -EINVAL;
	if (!t->tracks)
		t->tracks = calloc(1, sizeof(*t->tracks));
	if (!t->tracks)
		return -ENOMEM;
	t->tracks->max = max_tracks;
	t->tracks->max_buckets = track_buckets;
	return 0;
}

/* The line to start for an mm not kept: a free one, else the one with the
 * smallest own peak if pages exceed it (dropped). NULL: not kept. */
static struct tl_track *track_slot(struct tl_tracks *s, int64_t pages)
{
	struct tl_track *low = NULL;

	if (s->n < s->max)
		return &s->v[s->n++];
	for (size_t i = 0; i < s->n; i++)
		if (!low || s->v[i].line.peak < low->line.peak)
			low = &s->v[i];
	if (!low || pages <= low->line.peak)
		return NULL;
	timeline_free(&low->line);
	s->evicted++;
	return low;
}

int timeline_track_add(struct timeline *t, uint64_t ns, uint64_t key, uint32_t tgid,
		       int64_t pages, struct tl_track **admitted)
{
	struct tl_tracks *s = t->tracks;
	struct tl_track *tr;

	if (admitted)
		*admitted = NULL;
	if (!s)
		return 0;
	/* O(max) per change, max <= TL_TRACKS_MAX: userspace, at drain time. */
	for (size_t i = 0; i < s->n; i++)
		if (s->v[i].key == key && s->v[i].tgid == tgid)
			return timeline_add(&s->v[i].line, ns, pages);
	if (pages <= 0)
		return 0;
	tr = track_slot(s, pages);
	if (!tr)
		return 0;
	memset(tr, 0, sizeof(*tr));
	tr->key = key;
	tr->tgid = tgid;
	if (ns < t->start_ns)
		ns = t->start_ns;
	timeline_init(&tr->line, ns, t->unit_bytes, s->max_buckets);
	if (timeline_add(&tr->line, ns, pages)) {
		tr->key = 0;            /* an empty line: shown nowhere */
		return -ENOMEM;
	}
	s->admitted++;
	if (admitted)
		*admitted = tr;
	return 0;
}

size_t timeline_top_tracks(const struct timeline *t, const struct tl_track **out, size_t max)
{
	size_t n = 0;

	/* Insertion by own peak: max and the set are small. */
	for (size_t i = 0; t->tracks && i < t->tracks->n; i++) {
		const struct tl_track *tr = &t->tracks->v[i];
		size_t j;

		if (!tr->line.has_value)
			continue;
		for (j = n; j > 0 && out[j - 1]->line.peak < tr->line.peak; j--)
			if (j < max)
				out[j] = out[j - 1];
		if (j < max) {
			out[j] = tr;
			if (n < max)
				n++;
		}
	}
	return n;
}

void timeline_track_label(const struct tl_track *tr, char *buf, size_t len)
{
	snprintf(buf, len, "%u %s", tr->pid ? tr->pid : tr->tgid, tr->comm[0] ? tr->comm : "?");
}

size_t timeline_memory_bytes(const struct timeline *t)
{
	size_t bytes = sizeof(*t) + t->cap * sizeof(*t->b) + t->cap_marks * sizeof(*t->marks);

	if (t->stacks.path)
		bytes += strlen(t->stacks.path) + strlen(t->stacks.what) + strlen(t->stacks.summary) + 3;

	if (t->tracks) {
		bytes += sizeof(*t->tracks);
		for (size_t i = 0; i < t->tracks->n; i++)
			bytes += timeline_memory_bytes(&t->tracks->v[i].line) - sizeof(struct timeline);
	}
	return bytes;
}

static void stacks_free(struct tl_stacks *s)
{
	free(s->path);
	free(s->what);
	free(s->summary);
	*s = (struct tl_stacks){ NULL, NULL, NULL };
}

int timeline_set_stacks(struct timeline *t, const char *path, const char *what, const char *summary)
{
	stacks_free(&t->stacks);
	t->stacks = (struct tl_stacks){ strndup(path, TL_STACKS_TEXT_MAX), strndup(what, TL_STACKS_TEXT_MAX),
					strndup(summary, TL_STACKS_TEXT_MAX) };
	if (t->stacks.path && t->stacks.what && t->stacks.summary)
		return 0;
	stacks_free(&t->stacks);
	return -ENOMEM;
}

void timeline_free(struct timeline *t)
{
	stacks_free(&t->stacks);
	for (size_t i = 0; t->tracks && i < t->tracks->n; i++)
		timeline_free(&t->tracks->v[i].line);
	free(t->tracks);
	free(t->marks);
	free(t->b);
	t->tracks = NULL;
	t->marks = NULL;
	t->b = NULL;
	t->n = t->cap = t->n_marks = t->cap_marks = 0;
}
