// SPDX-License-Identifier: MIT
/* libFuzzer: a --record file as peakbpf merge reads it (src/rank/merge.c), line
 * by line, then the bounds of that record alone and beside a copy of it on
 * another host. Whatever the bytes: no crash, no undefined behaviour, and
 * the windows kept are in time order. */
#include <stdio.h>
#include "fuzz.h"
#include "merge.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = fuzz_string(data, size), *line, *save = NULL, err[256];
	struct merge_rec r[2];
	struct merge_result m;
	bool first = true;

	if (!s)
		return 0;
	memset(r, 0, sizeof(r));
	for (line = strtok_r(s, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		if (merge_parse_line(&r[0], line, first, err, sizeof(err)))
			break;
		first = false;
	}
	for (size_t k = 1; k < r[0].n; k++)
		if (r[0].w[k].start < r[0].w[k - 1].start)
			abort();
	if (r[0].n && merge_compute(r, 1, &m) == 0 && m.sum_of_peaks != r[0].peak)
		abort();
	r[1] = r[0];
	snprintf(r[1].host, sizeof(r[1].host), "%s", "another");
	if (r[0].n)
		merge_compute(r, 2, &m);
	merge_rec_free(&r[0]);
	free(s);
	return 0;
}
