// SPDX-License-Identifier: MIT
/* libFuzzer: the size, duration and PID-list parsers (src/base/units.c). */
#include <sys/types.h>
#include "fuzz.h"
#include "units.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = fuzz_string(data, size);
	uint64_t v;
	pid_t pids[8];
	size_t n;

	if (!s)
		return 0;
	parse_size(s, &v);
	parse_duration(s, &v);
	if (parse_pid_list(s, pids, 8, &n) == 0 && (n == 0 || n > 8))
		abort();
	free(s);
	return 0;
}
