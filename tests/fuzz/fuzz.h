/* SPDX-License-Identifier: MIT */
/* Shared by the libFuzzer targets: the input as a NUL-terminated string. */
#ifndef PEAKBPF_FUZZ_H
#define PEAKBPF_FUZZ_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* A copy of the input with a NUL at its end (the parsers take C strings;
 * an embedded NUL just ends the string early). NULL when out of memory. */
static inline char *fuzz_string(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1);

	if (s) {
		memcpy(s, data, size);
		s[size] = '\0';
	}
	return s;
}

#endif
