// SPDX-License-Identifier: MIT
/* stacks_fold.h: the shadow at the peak as folded stacks and a summary. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "stacks_api.h"
#include "stacks_fold.h"
#include "stacks_shadow.h"
#include "stacks_speedscope.h"
#include "stacks_sym.h"
#include "units.h"

#define LINE_MAX_LEN 4096

struct lines {
	struct stacks_line *v;
	size_t n, cap;
	struct stacks_sym *sym;
	struct stack_shadow *sh;
	long page_size;
	int err;
};

/* A line being named: the folded text and the names as they are. */
struct text {
	char buf[LINE_MAX_LEN], raw[LINE_MAX_LEN];
	size_t pos, rpos;
	unsigned n;
};

static const char *const bucket_names[STACKS_BUCKETS] = {
	[STACKS_BUCKET_ANON] = "anon pages no user fault placed (kernel-mode faults such as read() into a "
			       "buffer, swap-ins, huge pages not placed, MADV_FREE'd pages, undecoded calls)",
	[STACKS_BUCKET_FILE] = "file pages (page cache and its fault-around: not placed page by page)",
	[STACKS_BUCKET_SHMEM] = "shmem pages (not placed page by page)",
	[STACKS_BUCKET_LOST] = "anon pages while events were lost (a full ring): not placed by stack, not exact",
};

const char *stacks_bucket_name(enum stacks_bucket b)
{
	return b < STACKS_BUCKETS ? bucket_names[b] : "?";
}

void stacks_split_of(__u64 exact_bytes, const struct stacks_peak *p, __u64 lost_events,
		     struct stacks_split *out)
{
	memset(out, 0, sizeof(*out));
	out->lost_events = lost_events;
	out->bucket[STACKS_BUCKET_FILE] = p->file_bytes;
	out->bucket[STACKS_BUCKET_SHMEM] = p->shmem_bytes;
	if (exact_bytes > p->anon_bytes) {
		out->over_bytes = exact_bytes - p->anon_bytes;
		exact_bytes = p->anon_bytes;
	}
	out->bucket[STACKS_BUCKET_ANON] = p->anon_bytes - exact_bytes;
	if (lost_events) {
		/* A lost fault leaves its page unplaced, a lost removal pages
		 * placed that are gone: no split of the anon pages holds. */
		out->bucket[STACKS_BUCKET_LOST] = p->anon_bytes;
		out->bucket[STACKS_BUCKET_ANON] = 0;
		exact_bytes = 0;
	}
	out->exact_bytes = exact_bytes;
}

/* A name after the others: as it is, and in the folded text with the
 * format's separators (';' between frames, ' ' before the bytes) as '_'. */
static void put_name(struct text *t, const char *name)
{
	size_t len = strlen(name) + 1, at = t->pos;
	char *c;

	if (t->rpos + len > sizeof(t->raw))
		return;         /* deeper than the buffers: the outer names only */
	memcpy(t->raw + t->rpos, name, len);
	t->rpos += len;
	t->pos += (size_t)snprintf(t->buf + at, at < LINE_MAX_LEN ? LINE_MAX_LEN - at : 0, "%s%s",
				   t->n++ ? ";" : "", name);
	if (t->pos >= LINE_MAX_LEN)
		t->pos = LINE_MAX_LEN - 1;
	c = t->buf + at;
	if (t->n > 1 && *c == ';')
		c++;
	for (; *c; c++)
		if (*c == ';' || *c == ' ')
			*c = '_';
}

/* One frame of the line, outer first. */
static void add_frame(struct lines *l, __u64 mm, __u64 addr, bool is_return, struct text *t)
{
	char name[256];

	stacks_sym_name(l->sym, mm, is_return ? addr - 1 : addr, name, sizeof(name));
	put_name(t, name);
}

/* The frames of a stack, outer first: the frame-pointer chain, the word
 * at sp when it is a return address (a frameless leaf's caller), the ip. */
static void stack_text(struct lines *l, __u64 mm, const struct shadow_stack *st, struct text *t)
{
	bool leaf_caller = st->sp_word && (st->nframes < 2 || st->frames[1] != st->sp_word) &&
			   stacks_sym_is_return(l->sym, mm, st->sp_word);

	for (__u32 i = stacks_sym_chain(l->sym, mm, st->frames, st->nframes); i-- > 1;)
		add_frame(l, mm, st->frames[i], true, t);
	if (leaf_caller)
		add_frame(l, mm, st->sp_word, true, t);
	add_frame(l, mm, st->frames[0], false, t);
}

/* A line of the output from t: 0 or -ENOMEM. */
static int add_line(struct lines *l, const struct text *t, __u32 tgid, __u64 bytes)
{
	struct stacks_line *v;

	if (l->n == l->cap) {
		size_t cap = l->cap ? 2 * l->cap : 64;

		v = realloc(l->v, cap * sizeof(*v));
		if (!v)
			return -ENOMEM;
		l->v = v;
		l->cap = cap;
	}
	v = &l->v[l->n];
	*v = (struct stacks_line){ .text = strdup(t->buf), .names = malloc(t->rpos ? t->rpos : 1),
				   .nnames = t->n, .tgid = tgid, .bytes = bytes };
	if (!v->text || !v->names) {
		free(v->text);
		free(v->names);
		return -ENOMEM;
	}
	memcpy(v->names, t->raw, t->rpos);
	l->n++;
	return 0;
}

static int add_group(void *ctx, __u64 mm, __u32 tgid, __u32 stack, __u64 pages)
{
	struct lines *l = ctx;
	const struct shadow_stack *st = shadow_stack_get(l->sh, stack);
	struct text t = { .pos = 0 };

	if (!st)
		return 0;
	put_name(&t, stacks_sym_comm(l->sym, mm));
	/* The maps of the mm that first had the stack name its frames. */
	stack_text(l, st->mm, st, &t);
	return add_line(l, &t, tgid, pages * (__u64)l->page_size);
}

static int by_text(const void *a, const void *b)
{
	const struct stacks_line *x = a, *y = b;
	int c = strcmp(x->text, y->text);

	return c ? c : (x->tgid > y->tgid) - (x->tgid < y->tgid);
}

static int by_bytes(const void *a, const void *b)
{
	const struct stacks_line *x = a, *y = b;

	return x->bytes < y->bytes ? 1 : x->bytes > y->bytes ? -1 : strcmp(x->text, y->text);
}

/* Lines that name the same process and frames (other ips in the same
 * functions) become one. */
static void merge_lines(struct lines *l)
{
	size_t w = 0;

	qsort(l->v, l->n, sizeof(*l->v), by_text);
	for (size_t i = 0; i < l->n; i++) {
		if (w && l->v[w - 1].tgid == l->v[i].tgid && !strcmp(l->v[w - 1].text, l->v[i].text)) {
			l->v[w - 1].bytes += l->v[i].bytes;
			free(l->v[i].text);
			free(l->v[i].names);
			continue;
		}
		l->v[w++] = l->v[i];
	}
	l->n = w;
	qsort(l->v, l->n, sizeof(*l->v), by_bytes);
}

static void write_summary(const struct lines *l, const struct stacks_split *s, const struct stacks_peak *p,
			  const struct stacks_reader *r, const struct shadow_counts *counts, unsigned top, char *out,
			  size_t len)
{
	char a[32], b[32], c[32];
	size_t pos = 0;
	int thp_err;
	enum stacks_thp thp = stacks_thp_how(r, &thp_err);

#define PUT(...) pos += (size_t)snprintf(out + pos, pos < len ? len - pos : 0, __VA_ARGS__)
	PUT("stacks at the peak: %s of %s placed exactly by the fault that brought each page in "
	    "(%.1f %%), in %zu stacks\n", format_bytes(s->exact_bytes, a, sizeof(a)),
	    format_bytes(p->peak_bytes, b, sizeof(b)),
	    p->peak_bytes ? 100.0 * (double)s->exact_bytes / (double)p->peak_bytes : 0.0, l->n);
	for (size_t i = 0; i < l->n && i < top && !s->lost_events; i++) {
		const char *t = l->v[i].text, *end = t + strlen(t), *semi;

		PUT("  %10s  %.*s[%u]", format_bytes(l->v[i].bytes, a, sizeof(a)), (int)strcspn(t, ";"), t,
		    l->v[i].tgid);
		/* The three innermost frames, innermost first. */
		for (int k = 0; k < 3 && (semi = memrchr(t, ';', (size_t)(end - t))); k++) {
			PUT("%s%.*s", k ? " < " : " ", (int)(end - semi - 1), semi + 1);
			end = semi;
		}
		PUT("%s\n", memrchr(t, ';', (size_t)(end - t)) ? " < ..." : "");
	}
	for (int i = 0; i < STACKS_BUCKETS; i++)
		if (s->bucket[i])
			PUT("  %10s  not attributed: %s\n", format_bytes(s->bucket[i], a, sizeof(a)), bucket_names[i]);
	/* Where neither huge pages' program runs, a huge page's fault places 1 page of its 512. */
	if (thp == STACKS_THP_NONE && s->bucket[STACKS_BUCKET_ANON])
		PUT("  THP tails not placed: %s; a transparent huge page's fault placed 1 page of its 512, the "
		    "rest is in the anon bucket\n", thp_err == -EOPNOTSUPP ?
		    "this kernel lacks or refuses fexit on do_huge_pmd_anonymous_page" :
		    thp_err == -ENODATA ? "no fexit on do_huge_pmd_anonymous_page, and the anon counter's "
		    "changes are not exact here (before 6.2)" : "its program could not be attached");
	if (thp == STACKS_THP_RSS)
		PUT("  huge pages placed from the anon counter's changes (no fexit here): a change of 2 to 512 "
		    "pages in a fault, the range of that thread's fault at that instruction\n");
	if (counts->adopted_mms)
		PUT("  attached to running processes: the pages their %llu address space%s held before peakbpf "
		    "attached are in the buckets (no fault of theirs was seen); pages faulted in since are placed\n",
		    (unsigned long long)counts->adopted_mms, counts->adopted_mms == 1 ? "" : "s");
	if (p->not_exact)
		PUT("  not exact: %s (bound %s); the buckets, the breakdown at the peak less the placed pages, may "
		    "lack as much\n", p->reason ? p->reason : "the figure is not exact",
		    ~p->bound_bytes ? format_bytes(p->bound_bytes, c, sizeof(c)) : "unknown");
	if (s->over_bytes && p->not_exact && s->over_bytes <= p->bound_bytes)
		PUT("  the placed pages exceed the anon pages counted at the peak by %s, within the bound: the lines "
		    "add up to the peak + %s\n", format_bytes(s->over_bytes, a, sizeof(a)),
		    format_bytes(s->over_bytes, c, sizeof(c)));
	else if (s->over_bytes)
		PUT("  not exact: the placed pages exceed the anon pages at the peak by %s (removals not seen: "
		    "reclaim, swap-out, an undecoded call)\n", format_bytes(s->over_bytes, c, sizeof(c)));
	if (s->lost_events)
		PUT("  not exact: %llu events lost (the ring was full, or the events after the peak "
		    "overflowed their log)\n", (unsigned long long)s->lost_events);
#undef PUT
}

/* The buckets with bytes, as lines after the stacks: "[not attributed];[why]". */
static int add_buckets(struct lines *l, const struct stacks_split *s)
{
	static const char head[] = "[not attributed]";
	struct text t;
	int err = 0;

	for (int i = 0; i < STACKS_BUCKETS && !err; i++) {
		if (!s->bucket[i])
			continue;
		t.n = 2;
		t.pos = (size_t)snprintf(t.buf, sizeof(t.buf), "%s;[%s]", head, bucket_names[i]);
		t.rpos = sizeof(head) + (size_t)snprintf(t.raw + sizeof(head), sizeof(t.raw) - sizeof(head), "[%s]",
							 bucket_names[i]) + 1;
		memcpy(t.raw, head, sizeof(head));
		err = add_line(l, &t, 0, s->bucket[i]);
	}
	return err;
}

struct stacks_file {
	FILE *out;
	enum stacks_format format;
	struct speedscope_file *speedscope;
	size_t windows;
	size_t best;            /* the window of the highest peak */
	__u64 best_bytes;
	char title[192];        /* the first profile's: the document's, if it is the one */
};

int stacks_file_open(FILE *out, enum stacks_format f, struct stacks_file **out_sf)
{
	struct stacks_file *sf = calloc(1, sizeof(*sf));
	int err;

	*out_sf = NULL;
	if (!sf)
		return -ENOMEM;
	*sf = (struct stacks_file){ .out = out, .format = f };
	if (f == STACKS_FORMAT_SPEEDSCOPE) {
		err = speedscope_open(out, &sf->speedscope);
		if (err) {
			free(sf);
			return err;
		}
	}
	*out_sf = sf;
	return 0;
}

int stacks_file_close(struct stacks_file *sf)
{
	int err;

	if (!sf)
		return 0;
	if (sf->windows > 1 || !*sf->title)
		snprintf(sf->title, sizeof(sf->title), "peakbpf --stacks: %zu windows, each at its own peak", sf->windows);
	err = speedscope_close(sf->speedscope, sf->best, sf->title);
	if (!err && (fflush(sf->out) || ferror(sf->out)))
		err = -EIO;
	free(sf);
	return err;
}

/* The lines of one window: folded lines under the window's frame (none for
 * a run of one window), or a speedscope profile named after it. */
static int write_lines(struct stacks_file *sf, const struct stacks_line *v, size_t n, const struct stacks_peak *p,
		       const struct stacks_split *s, const char *window)
{
	char title[sizeof(sf->title)], a[32], b[32];

	if (sf->format == STACKS_FORMAT_SPEEDSCOPE) {
		format_bytes(s->exact_bytes, b, sizeof(b));
		if (window)
			snprintf(title, sizeof(title), "%s: %s placed exactly", window, b);
		else
			snprintf(title, sizeof(title), "peakbpf --stacks: %s resident at the peak, %s placed exactly",
				 format_bytes(p->peak_bytes, a, sizeof(a)), b);
		if (!sf->windows)
			snprintf(sf->title, sizeof(sf->title), "%s", title);
		return speedscope_profile(sf->speedscope, v, n, title);
	}
	for (size_t i = 0; i < n; i++)
		fprintf(sf->out, "%s%s%s %llu\n", window ? window : "", window ? ";" : "", v[i].text,
			(unsigned long long)v[i].bytes);
	return fflush(sf->out) || ferror(sf->out) ? -EIO : 0;
}

int stacks_file_window(struct stacks_file *sf, struct stacks_reader *r, unsigned tree, const struct stacks_peak *p,
		       long page_size, const char *window, unsigned top, char *summary, size_t len,
		       struct stacks_split *split)
{
	struct lines l = { .sym = stacks_symbols(r), .sh = stacks_shadow(r), .page_size = page_size };
	struct shadow_counts c;
	__u64 drops, busy;
	size_t first;
	__s64 pages;
	int err;

	err = stacks_cut(r, tree, p->peak_ns);
	if (err)
		goto cleanup;
	pages = shadow_groups(l.sh, add_group, &l);
	if (pages < 0) {
		err = (int)pages;
		goto cleanup;
	}
	merge_lines(&l);
	shadow_counts_get(l.sh, &c);
	stacks_counts(r, &drops, &busy);
	stacks_split_of((__u64)pages * (__u64)page_size, p, drops + c.lost, split);
	split->groups = l.n;
	write_summary(&l, split, p, r, &c, top, summary, len);
	/* Events lost: the stacks' bytes are in the lost bucket, not placed. */
	first = split->lost_events ? l.n : 0;
	err = add_buckets(&l, split);
	if (!err)
		err = write_lines(sf, l.v + first, l.n - first, p, split, window);
	if (!err && (!sf->windows || p->peak_bytes > sf->best_bytes)) {
		sf->best = sf->windows;
		sf->best_bytes = p->peak_bytes;
	}
	if (!err)
		sf->windows++;
cleanup:
	for (size_t i = 0; i < l.n; i++) {
		free(l.v[i].text);
		free(l.v[i].names);
	}
	free(l.v);
	return err;
}

size_t stacks_file_best(const struct stacks_file *sf)
{
	return sf->best;
}

int stacks_fold_write(struct stacks_reader *r, unsigned tree, const struct stacks_peak *p, long page_size,
		      enum stacks_format f, FILE *out, unsigned top, char *summary, size_t len,
		      struct stacks_split *split)
{
	struct stacks_file *sf;
	int err = stacks_file_open(out, f, &sf);

	if (!err)
		err = stacks_file_window(sf, r, tree, p, page_size, NULL, top, summary, len, split);
	if (!err)
		return stacks_file_close(sf);
	stacks_file_close(sf);
	return err;
}
