// SPDX-License-Identifier: MIT
/* libFuzzer: JSON string escaping (src/base/json.c). Whatever the bytes, the
 * output is one string with no raw control byte and only valid UTF-8. */
#include <stdio.h>
#include "fuzz.h"
#include "json.h"

/* Is s (n bytes) valid UTF-8 with no byte below 0x20? */
static int clean_utf8(const unsigned char *s, size_t n)
{
	for (size_t i = 0; i < n;) {
		unsigned char c = s[i];
		size_t len = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;

		if (c < 0x20 || !len || i + len > n)
			return 0;
		for (size_t k = 1; k < len; k++)
			if ((s[i + k] & 0xc0) != 0x80)
				return 0;
		i += len;
	}
	return 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = fuzz_string(data, size), *out = NULL;
	size_t out_len = 0;
	struct json_writer w;
	FILE *f;

	if (!s)
		return 0;
	f = open_memstream(&out, &out_len);
	if (f) {
		json_init(&w, f);
		json_string(&w, s);
		fclose(f);
		if (out_len < 2 || out[0] != '"' || out[out_len - 1] != '"' ||
		    !clean_utf8((unsigned char *)out, out_len))
			abort();
	}
	free(out);
	free(s);
	return 0;
}
