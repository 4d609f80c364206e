/* SPDX-License-Identifier: MIT */
/* Command-line options. */
#ifndef PEAKBPF_CLI_H
#define PEAKBPF_CLI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct options {
	bool json;              /* JSON record on stdout */
	const char *output;     /* JSON record to this file */
	bool quiet;             /* no human summary */
	bool verbose;           /* libbpf's debug log on stderr */
	uint32_t max_tracked;   /* map entries; 0: default */
	char **command;         /* NULL-terminated, points into argv */
};

enum cli_action {
	CLI_RUN,
	CLI_HELP,
	CLI_VERSION,
	CLI_ERROR,              /* err holds a one-line message */
};

enum cli_action cli_parse(int argc, char **argv, struct options *o,
			  char *err, size_t errlen);
void cli_usage(FILE *out);

#endif
