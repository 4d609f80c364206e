// SPDX-License-Identifier: MIT
/* stacks_speedscope.h: the lines as speedscope's file format (its schema is
 * speedscope's dist/release/file-format-schema.json, which
 * tests/integration/test_stacks_formats.sh validates the output against). */
#include <errno.h>
#include <search.h>
#include <stdlib.h>
#include <string.h>
#include <linux/types.h>
#include "json.h"
#include "stacks_fold.h"
#include "stacks_speedscope.h"

#define SPEEDSCOPE_SCHEMA "https://www.speedscope.app/file-format-schema.json"

struct speedscope_file {
	FILE *out;
	struct json_writer w;
	void *by_name;          /* tsearch tree of names[]' entries, by strcmp */
	char **names;           /* the frames, in the order first seen */
	size_t n, cap;
	size_t profiles;
};

static int by_name(const void *a, const void *b)
{
	return strcmp(a, b);
}

/* The frame of name, made if new: its index, or -ENOMEM. */
static long frame_of(struct speedscope_file *sf, const char *name)
{
	char **found, *copy, **names;
	size_t at;

	found = tfind(name, &sf->by_name, by_name);
	if (found) {
		memcpy(&at, *found + strlen(*found) + 1, sizeof(at));
		return (long)at;
	}
	if (sf->n == sf->cap) {
		size_t cap = sf->cap ? 2 * sf->cap : 256;

		names = realloc(sf->names, cap * sizeof(*names));
		if (!names)
			return -ENOMEM;
		sf->names = names;
		sf->cap = cap;
	}
	/* The name, then its index after the terminator. */
	copy = malloc(strlen(name) + 1 + sizeof(size_t));
	if (!copy)
		return -ENOMEM;
	strcpy(copy, name);
	memcpy(copy + strlen(name) + 1, &sf->n, sizeof(size_t));
	if (!tsearch(copy, &sf->by_name, by_name)) {
		free(copy);
		return -ENOMEM;
	}
	sf->names[sf->n] = copy;
	return (long)sf->n++;
}

int speedscope_open(FILE *out, struct speedscope_file **out_sf)
{
	struct speedscope_file *sf = calloc(1, sizeof(*sf));

	*out_sf = NULL;
	if (!sf)
		return -ENOMEM;
	sf->out = out;
	json_init(&sf->w, out);
	json_begin_object(&sf->w);
	json_kv_string(&sf->w, "$schema", SPEEDSCOPE_SCHEMA);
	json_kv_string(&sf->w, "exporter", "peakbpf " PEAKBPF_VERSION);
	json_key(&sf->w, "profiles");
	json_begin_array(&sf->w);
	*out_sf = sf;
	return 0;
}

int speedscope_profile(struct speedscope_file *sf, const struct stacks_line *v, size_t n, const char *title)
{
	struct json_writer *w = &sf->w;
	__u64 total = 0;
	long idx;

	/* Every name has its frame before the profile is begun, so that a
	 * failure leaves no half profile. */
	for (size_t i = 0; i < n; i++) {
		const char *s = v[i].names;

		total += v[i].bytes;
		for (unsigned j = 0; j < v[i].nnames; j++, s += strlen(s) + 1)
			if (frame_of(sf, s) < 0)
				return -ENOMEM;
	}
	json_begin_object(w);
	json_kv_string(w, "type", "sampled");
	json_kv_string(w, "name", title);
	json_kv_string(w, "unit", "bytes");
	json_kv_uint(w, "startValue", 0);
	json_kv_uint(w, "endValue", total);
	json_key(w, "samples");
	json_begin_array(w);
	for (size_t i = 0; i < n; i++) {
		const char *s = v[i].names;

		json_begin_array(w);    /* outer first, as the folded line */
		for (unsigned j = 0; j < v[i].nnames; j++, s += strlen(s) + 1) {
			idx = frame_of(sf, s);
			json_uint(w, (__u64)idx);
		}
		json_end_array(w);
	}
	json_end_array(w);
	json_key(w, "weights");
	json_begin_array(w);
	for (size_t i = 0; i < n; i++)
		json_uint(w, v[i].bytes);
	json_end_array(w);
	json_end_object(w);
	sf->profiles++;
	return ferror(sf->out) ? -EIO : 0;
}

int speedscope_close(struct speedscope_file *sf, size_t active, const char *title)
{
	int err;

	if (!sf)
		return 0;
	json_end_array(&sf->w);
	json_kv_string(&sf->w, "name", title);
	json_kv_uint(&sf->w, "activeProfileIndex", active < sf->profiles ? active : 0);
	json_key(&sf->w, "shared");
	json_begin_object(&sf->w);
	json_key(&sf->w, "frames");
	json_begin_array(&sf->w);
	for (size_t f = 0; f < sf->n; f++) {
		json_begin_object(&sf->w);
		json_kv_string(&sf->w, "name", sf->names[f]);
		json_end_object(&sf->w);
	}
	json_end_array(&sf->w);
	json_end_object(&sf->w);
	json_end_object(&sf->w);
	err = json_finish(&sf->w);
	if (!err && (fflush(sf->out) || ferror(sf->out)))
		err = -EIO;
	tdestroy(sf->by_name, free);
	free(sf->names);
	free(sf);
	return err;
}

int stacks_speedscope_write(FILE *out, const struct stacks_line *v, size_t n, const char *title)
{
	struct speedscope_file *sf;
	int err = speedscope_open(out, &sf);

	if (err)
		return err;
	err = speedscope_profile(sf, v, n, title);
	if (err) {
		speedscope_close(sf, 0, title);
		return err;
	}
	return speedscope_close(sf, 0, title);
}
