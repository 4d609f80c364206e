// SPDX-License-Identifier: MIT
/* stacks_speedscope.h: the lines as speedscope's file format (its schema is
 * speedscope's dist/release/file-format-schema.json, which
 * tests/integration/test_stacks_formats.sh validates the output against). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <linux/types.h>
#include "json.h"
#include "stacks_fold.h"
#include "stacks_speedscope.h"

#define SPEEDSCOPE_SCHEMA "https://www.speedscope.app/file-format-schema.json"

/* A name of a line, and which of the lines' names it is. */
struct ref {
	const char *name;
	size_t at;
};

static int by_name(const void *a, const void *b)
{
	const struct ref *x = a, *y = b;
	int c = strcmp(x->name, y->name);

	return c ? c : (x->at > y->at) - (x->at < y->at);
}

/* Each distinct name once, sorted: refs[0..frames) then name the frames
 * in order, and idx[k] is the frame of the lines' k-th name (each write
 * into refs[] is at or below the entry being read). The number of frames. */
static size_t intern(const struct stacks_line *v, size_t n, struct ref *refs, size_t nrefs, size_t *idx)
{
	size_t k = 0, frames = 0;

	for (size_t i = 0; i < n; i++) {
		const char *s = v[i].names;

		for (unsigned j = 0; j < v[i].nnames; j++, k++, s += strlen(s) + 1)
			refs[k] = (struct ref){ s, k };
	}
	qsort(refs, nrefs, sizeof(*refs), by_name);
	for (k = 0; k < nrefs; k++) {
		if (k && strcmp(refs[k - 1].name, refs[k].name))
			refs[++frames].name = refs[k].name;
		idx[refs[k].at] = frames;
	}
	return nrefs ? frames + 1 : 0;
}

static void write_profile(struct json_writer *w, const struct stacks_line *v, size_t n, const size_t *idx,
			  const char *title)
{
	__u64 total = 0;
	size_t k = 0;

	for (size_t i = 0; i < n; i++)
		total += v[i].bytes;
	json_begin_object(w);
	json_kv_string(w, "type", "sampled");
	json_kv_string(w, "name", title);
	json_kv_string(w, "unit", "bytes");
	json_kv_uint(w, "startValue", 0);
	json_kv_uint(w, "endValue", total);
	json_key(w, "samples");
	json_begin_array(w);
	for (size_t i = 0; i < n; i++) {
		json_begin_array(w);    /* outer first, as the folded line */
		for (unsigned j = 0; j < v[i].nnames; j++)
			json_uint(w, idx[k++]);
		json_end_array(w);
	}
	json_end_array(w);
	json_key(w, "weights");
	json_begin_array(w);
	for (size_t i = 0; i < n; i++)
		json_uint(w, v[i].bytes);
	json_end_array(w);
	json_end_object(w);
}

int stacks_speedscope_write(FILE *out, const struct stacks_line *v, size_t n, const char *title)
{
	struct json_writer w;
	struct ref *refs = NULL;
	size_t *idx = NULL, nrefs = 0, frames;
	int err = 0;

	for (size_t i = 0; i < n; i++)
		nrefs += v[i].nnames;
	refs = calloc(nrefs ? nrefs : 1, sizeof(*refs));
	idx = calloc(nrefs ? nrefs : 1, sizeof(*idx));
	if (!refs || !idx) {
		err = -ENOMEM;
		goto cleanup;
	}
	frames = intern(v, n, refs, nrefs, idx);
	json_init(&w, out);
	json_begin_object(&w);
	json_kv_string(&w, "$schema", SPEEDSCOPE_SCHEMA);
	json_kv_string(&w, "exporter", "peakbpf " PEAKBPF_VERSION);
	json_kv_string(&w, "name", title);
	json_kv_uint(&w, "activeProfileIndex", 0);
	json_key(&w, "shared");
	json_begin_object(&w);
	json_key(&w, "frames");
	json_begin_array(&w);
	for (size_t f = 0; f < frames; f++) {
		json_begin_object(&w);
		json_kv_string(&w, "name", refs[f].name);
		json_end_object(&w);
	}
	json_end_array(&w);
	json_end_object(&w);
	json_key(&w, "profiles");
	json_begin_array(&w);
	write_profile(&w, v, n, idx, title);
	json_end_array(&w);
	json_end_object(&w);
	err = json_finish(&w);
	if (!err && fflush(out))
		err = -EIO;
cleanup:
	free(refs);
	free(idx);
	return err;
}
