// SPDX-License-Identifier: MIT
/* libFuzzer: the command line (src/cli/cli.c). The input's NUL bytes split it
 * into arguments after argv[0]. */
#include <stdio.h>
#include "fuzz.h"
#include "cli.h"

#define MAX_ARGS 32

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = fuzz_string(data, size), *argv[MAX_ARGS + 2] = { "peakbpf" }, err[256];
	struct options o;
	int argc = 1;

	if (!s)
		return 0;
	for (char *p = s; argc <= MAX_ARGS && p < s + size; p += strlen(p) + 1)
		argv[argc++] = p;
	argv[argc] = NULL;
	err[0] = '\0';
	if (cli_parse(argc, argv, &o, err, sizeof(err)) == CLI_ERROR && !err[0])
		abort();        /* every error says what is wrong */
	free(s);
	return 0;
}
