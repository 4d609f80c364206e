// SPDX-License-Identifier: MIT
/*
 * A small streaming JSON writer.
 *
 * w->depth is the number of open containers; the innermost one is described
 * by first[depth - 1] and is_object[depth - 1], so up to JSON_MAX_DEPTH
 * containers can be nested. Any misuse (a closer that does not match, a
 * value in an object without a key, a key outside an object, two keys in a
 * row, a second top-level value, nesting too deep) sets w->failed; from then
 * on nothing more is written, and json_finish() returns -EINVAL.
 */
#include "json.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <string.h>

void json_init(struct json_writer *w, FILE *out)
{
	memset(w, 0, sizeof(*w));
	w->out = out;
}

static void fail(struct json_writer *w)
{
	w->failed = true;
}

/*
 * Before any value, including a container: check it may come here and
 * write the comma that separates it from the previous array element.
 */
static bool begin_value(struct json_writer *w)
{
	if (w->failed)
		return false;
	if (w->depth == 0) {
		if (w->started) {
			fail(w);
			return false;
		}
		w->started = true;
		return true;
	}
	if (w->is_object[w->depth - 1]) {
		if (!w->after_key) {
			fail(w);
			return false;
		}
		w->after_key = false;
		return true;
	}
	if (!w->first[w->depth - 1])
		fputc(',', w->out);
	w->first[w->depth - 1] = false;
	return true;
}

/*
 * Length of the well-formed UTF-8 sequence at p (RFC 3629: no overlong
 * forms, no surrogates, nothing above U+10FFFF), or 0 if it is not one.
 */
static size_t utf8_len(const unsigned char *p)
{
	unsigned char lo = 0x80, hi = 0xbf;
	size_t n, i;

	if (*p >= 0xc2 && *p <= 0xdf)
		n = 2;
	else if (*p >= 0xe0 && *p <= 0xef)
		n = 3;
	else if (*p >= 0xf0 && *p <= 0xf4)
		n = 4;
	else
		return 0;
	if (*p == 0xe0)
		lo = 0xa0;      /* overlong */
	else if (*p == 0xed)
		hi = 0x9f;      /* surrogates */
	else if (*p == 0xf0)
		lo = 0x90;      /* overlong */
	else if (*p == 0xf4)
		hi = 0x8f;      /* above U+10FFFF */
	if (p[1] < lo || p[1] > hi)
		return 0;
	for (i = 2; i < n; i++)
		if (p[i] < 0x80 || p[i] > 0xbf)
			return 0;
	return n;
}

static void write_escaped(FILE *out, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;

	fputc('"', out);
	while (*p) {
		size_t n;

		switch (*p) {
		case '"':  fputs("\\\"", out); break;
		case '\\': fputs("\\\\", out); break;
		case '\b': fputs("\\b", out); break;
		case '\f': fputs("\\f", out); break;
		case '\n': fputs("\\n", out); break;
		case '\r': fputs("\\r", out); break;
		case '\t': fputs("\\t", out); break;
		default:
			if (*p < 0x20) {
				fprintf(out, "\\u%04x", *p);
			} else if (*p < 0x80) {
				fputc(*p, out);         /* DEL too: JSON allows it */
			} else if ((n = utf8_len(p)) != 0) {
				fwrite(p, 1, n, out);
				p += n;
				continue;
			} else {
				/* Not UTF-8 (argv can hold any bytes): a JSON
				 * document must be, so each such byte becomes
				 * U+FFFD, the replacement character. */
				fputs("\\ufffd", out);
			}
		}
		p++;
	}
	fputc('"', out);
}

static void begin_container(struct json_writer *w, bool object)
{
	if (w->failed)
		return;
	if (w->depth >= JSON_MAX_DEPTH) {
		fail(w);
		return;
	}
	if (!begin_value(w))
		return;
	fputc(object ? '{' : '[', w->out);
	w->is_object[w->depth] = object;
	w->first[w->depth] = true;
	w->depth++;
}

static void end_container(struct json_writer *w, bool object)
{
	if (w->failed)
		return;
	/* Nothing open, the wrong kind open, or a key still waiting for its value. */
	if (w->depth == 0 || w->is_object[w->depth - 1] != object || w->after_key) {
		fail(w);
		return;
	}
	fputc(object ? '}' : ']', w->out);
	w->depth--;
}

void json_begin_object(struct json_writer *w)
{
	begin_container(w, true);
}

void json_end_object(struct json_writer *w)
{
	end_container(w, true);
}

void json_begin_array(struct json_writer *w)
{
	begin_container(w, false);
}

void json_end_array(struct json_writer *w)
{
	end_container(w, false);
}

void json_raw_members(struct json_writer *w, const char *members)
{
	if (w->failed || !members || !*members)
		return;
	if (w->depth == 0 || !w->is_object[w->depth - 1] || w->after_key) {
		fail(w);
		return;
	}
	if (!w->first[w->depth - 1])
		fputc(',', w->out);
	w->first[w->depth - 1] = false;
	fputs(members, w->out);
}

void json_raw_value(struct json_writer *w, const char *value)
{
	if (!value || !*value) {
		fail(w);
		return;
	}
	if (begin_value(w))
		fputs(value, w->out);
}

void json_key(struct json_writer *w, const char *key)
{
	if (w->failed)
		return;
	if (!key || w->depth == 0 || !w->is_object[w->depth - 1] || w->after_key) {
		fail(w);
		return;
	}
	if (!w->first[w->depth - 1])
		fputc(',', w->out);
	w->first[w->depth - 1] = false;
	write_escaped(w->out, key);
	fputc(':', w->out);
	w->after_key = true;
}

void json_string(struct json_writer *w, const char *s)
{
	if (!begin_value(w))
		return;
	if (s)
		write_escaped(w->out, s);
	else
		fputs("null", w->out);
}

void json_int(struct json_writer *w, int64_t v)
{
	if (begin_value(w))
		fprintf(w->out, "%" PRId64, v);
}

void json_uint(struct json_writer *w, uint64_t v)
{
	if (begin_value(w))
		fprintf(w->out, "%" PRIu64, v);
}

/*
 * %g gives "-0", "1e+20", "1.5e-07", all valid JSON numbers, for finite
 * values; but it writes the locale's decimal point, which is ',' in many
 * locales (and could be more than one byte). Anything in its output that is
 * not a digit, sign or exponent letter is that decimal point: write '.'.
 */
void json_double(struct json_writer *w, double v, int digits)
{
	char buf[64];
	const char *p;
	bool point = false;

	if (!begin_value(w))
		return;
	if (!isfinite(v)) {
		fputs("null", w->out);
		return;
	}
	if (digits < 1)
		digits = 1;
	if (digits > 17) /* enough to round-trip any double */
		digits = 17;
	snprintf(buf, sizeof(buf), "%.*g", digits, v);
	for (p = buf; *p; p++) {
		char c = *p;

		if ((c >= '0' && c <= '9') || c == '-' || c == '+' || c == 'e' || c == 'E') {
			fputc(c, w->out);
			point = false;
		} else if (!point) {
			fputc('.', w->out);
			point = true;
		}
	}
}

void json_bool(struct json_writer *w, bool v)
{
	if (begin_value(w))
		fputs(v ? "true" : "false", w->out);
}

void json_null(struct json_writer *w)
{
	if (begin_value(w))
		fputs("null", w->out);
}

void json_kv_string(struct json_writer *w, const char *key, const char *s)
{
	json_key(w, key);
	json_string(w, s);
}

void json_kv_int(struct json_writer *w, const char *key, int64_t v)
{
	json_key(w, key);
	json_int(w, v);
}

void json_kv_uint(struct json_writer *w, const char *key, uint64_t v)
{
	json_key(w, key);
	json_uint(w, v);
}

void json_kv_double(struct json_writer *w, const char *key, double v, int digits)
{
	json_key(w, key);
	json_double(w, v, digits);
}

void json_kv_bool(struct json_writer *w, const char *key, bool v)
{
	json_key(w, key);
	json_bool(w, v);
}

/*
 * An empty document (no value at all) is misuse too. The newline is written
 * and the stream flushed either way, so that write errors show up here.
 */
int json_finish(struct json_writer *w)
{
	if (w->depth != 0 || w->after_key || !w->started)
		fail(w);
	fputc('\n', w->out);
	if (fflush(w->out) != 0 || ferror(w->out)) {
		if (!w->failed)
			return -EIO;
	}
	return w->failed ? -EINVAL : 0;
}
