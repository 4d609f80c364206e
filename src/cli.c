// SPDX-License-Identifier: MIT
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"

enum { OPT_MAX_TRACKED = 256 };

static const struct option long_options[] = {
	{ "output", required_argument, NULL, 'o' },
	{ "json", no_argument, NULL, 'j' },
	{ "quiet", no_argument, NULL, 'q' },
	{ "verbose", no_argument, NULL, 'v' },
	{ "max-tracked", required_argument, NULL, OPT_MAX_TRACKED },
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, 'V' },
	{ NULL, 0, NULL, 0 },
};

void cli_usage(FILE *out)
{
	fputs(
"Usage: peakbpf [OPTIONS] [--] COMMAND [ARG...]\n"
"\n"
"Run COMMAND and report the exact peak of its process tree's summed resident\n"
"memory (file + anon + shmem pages of every address space in the tree),\n"
"measured in the kernel on every change, so no short spike is missed.\n"
"The tree is COMMAND and every process it forks, including daemonized ones.\n"
"\n"
"Options:\n"
"  -j, --json            write the JSON record to stdout\n"
"  -o, --output FILE     write the JSON record to FILE\n"
"  -q, --quiet           no human summary on stderr\n"
"  -v, --verbose         show libbpf's debug log (BPF loading) on stderr\n"
"      --max-tracked N   size of the kernel maps: processes and address spaces\n"
"                        tracked at once (default 16384); a full map is reported\n"
"  -h, --help            this help\n"
"  -V, --version         version\n"
"\n"
"The summary goes to stderr, so COMMAND's stdout stays clean.\n"
"Exit status: COMMAND's own; 128+N if it was killed by signal N; 125 if peakbpf\n"
"failed; 126 if COMMAND could not be executed; 127 if it was not found.\n"
"SIGINT, SIGTERM and SIGHUP sent to peakbpf are passed to COMMAND, and the\n"
"result is still reported.\n"
"\n"
"Needs root, or CAP_BPF and CAP_PERFMON (kernel 5.8+), and a kernel with BTF.\n"
"\n"
"Examples:\n"
"  peakbpf -- make -j8                     peak of a whole build\n"
"  peakbpf -o peak.json -- python3 bench.py\n"
"  peakbpf --json -- ./job | jq .peak_bytes\n",
		out);
}

static int parse_u32(const char *s, uint32_t min, uint32_t max, uint32_t *v)
{
	char *end;
	unsigned long long n;

	if (!s || !*s || *s == '-' || *s == '+')
		return -EINVAL;
	errno = 0;
	n = strtoull(s, &end, 10);
	if (errno || *end)
		return errno == ERANGE ? -ERANGE : -EINVAL;
	if (n < min || n > max)
		return -ERANGE;
	*v = (uint32_t)n;
	return 0;
}

enum cli_action cli_parse(int argc, char **argv, struct options *o,
			  char *err, size_t errlen)
{
	int c;

	memset(o, 0, sizeof(*o));
	optind = 0;             /* full re-initialisation (glibc) */
	opterr = 0;
	/* '+': options stop at the command, so "peakbpf ls -l" works. */
	while ((c = getopt_long(argc, argv, "+:o:jqvhV", long_options, NULL)) != -1) {
		switch (c) {
		case 'o':
			o->output = optarg;
			break;
		case 'j':
			o->json = true;
			break;
		case 'q':
			o->quiet = true;
			break;
		case 'v':
			o->verbose = true;
			break;
		case OPT_MAX_TRACKED:
			if (parse_u32(optarg, 16, 1U << 22, &o->max_tracked)) {
				snprintf(err, errlen, "--max-tracked: '%s' is not a number from 16 to 4194304", optarg);
				return CLI_ERROR;
			}
			break;
		case 'h':
			return CLI_HELP;
		case 'V':
			return CLI_VERSION;
		case ':':
			snprintf(err, errlen, "option '%s' needs a value", argv[optind - 1]);
			return CLI_ERROR;
		default:
			if (optopt && optopt != '?')
				snprintf(err, errlen, "unknown option '-%c' (see peakbpf --help)", optopt);
			else
				snprintf(err, errlen, "unknown option '%s' (see peakbpf --help)", argv[optind - 1]);
			return CLI_ERROR;
		}
	}
	if (optind >= argc) {
		snprintf(err, errlen, "no command given: peakbpf [OPTIONS] -- COMMAND [ARG...]");
		return CLI_ERROR;
	}
	if (o->output && !*o->output) {
		snprintf(err, errlen, "--output: empty file name");
		return CLI_ERROR;
	}
	o->command = &argv[optind];
	return CLI_RUN;
}
