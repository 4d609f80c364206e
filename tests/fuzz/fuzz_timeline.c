// SPDX-License-Identifier: MIT
/* libFuzzer: a timeline file as peakbpf plot reads it (src/timeline/
 * timeline_load.c), .json when the first byte is even, else .csv, then
 * drawn as the page. Whatever the bytes: no crash, no undefined
 * behaviour, and what loads has its buckets in range and draws. */
#include <stdio.h>
#include "fuzz.h"
#include "timeline_export.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s, title[128] = "";
	struct timeline t;
	FILE *sink;

	if (!size)
		return 0;
	s = fuzz_string(data + 1, size - 1);
	if (!s)
		return 0;
	if (timeline_parse(data[0] & 1 ? TL_FORMAT_CSV : TL_FORMAT_JSON, s, &t, title, sizeof(title)) == 0) {
		if (t.n > t.cap)
			abort();
		sink = fopen("/dev/null", "w");
		if (sink) {
			timeline_write_html(&t, title, sink);
			fclose(sink);
		}
		timeline_free(&t);
	}
	free(s);
	return 0;
}
