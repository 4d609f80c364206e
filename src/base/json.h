/* SPDX-License-Identifier: MIT */
/*
 * A small streaming JSON writer: it tracks nesting and commas so callers
 * only say what comes next. Output is compact (one line per document).
 */
#ifndef PEAKBPF_JSON_H
#define PEAKBPF_JSON_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#define JSON_MAX_DEPTH 16

struct json_writer {
	FILE *out;
	int depth;
	bool first[JSON_MAX_DEPTH]; /* no member written yet at this depth */
	bool after_key;             /* a key was written, its value comes next */
	bool failed;                /* nesting misuse or depth overflow */
	/* Added for json.c: which closer and whether a key is due, per level;
	 * and whether the one top-level value has been started. */
	bool is_object[JSON_MAX_DEPTH]; /* container at this depth is an object */
	bool started;                   /* the top-level value has been begun */
};

void json_init(struct json_writer *w, FILE *out);
void json_begin_object(struct json_writer *w);
void json_end_object(struct json_writer *w);
void json_begin_array(struct json_writer *w);
void json_end_array(struct json_writer *w);
/* Object member name; the next call writes its value. */
void json_key(struct json_writer *w, const char *key);
/* Members already written as JSON ("\"a\":1,\"b\":2", no braces),
 * put in the open object as they are (a caller's own part of a record). */
void json_raw_members(struct json_writer *w, const char *members);
/* A whole value already written as JSON (another writer's object), put
 * in where a value goes, as it is. */
void json_raw_value(struct json_writer *w, const char *value);
/* Strings are escaped per RFC 8259 ("\"", "\\", control chars as \n, \t or \u00XX);
 * valid UTF-8 is written as it is, and each byte of an invalid sequence
 * (overlong forms and surrogates included) becomes \ufffd; NULL writes null. */
void json_string(struct json_writer *w, const char *s);
void json_int(struct json_writer *w, int64_t v);
void json_uint(struct json_writer *w, uint64_t v);
/* Finite doubles with %.*g precision 'digits'; NaN/Inf are written as null. */
void json_double(struct json_writer *w, double v, int digits);
void json_bool(struct json_writer *w, bool v);
void json_null(struct json_writer *w);
/* Shorthands: key + value. */
void json_kv_string(struct json_writer *w, const char *key, const char *s);
void json_kv_int(struct json_writer *w, const char *key, int64_t v);
void json_kv_uint(struct json_writer *w, const char *key, uint64_t v);
void json_kv_double(struct json_writer *w, const char *key, double v, int digits);
void json_kv_bool(struct json_writer *w, const char *key, bool v);
/* Ends the document with a newline; returns 0, or -EINVAL if nesting was
 * unbalanced or misused, or -EIO if the stream had an error. */
int json_finish(struct json_writer *w);

#endif
