// SPDX-License-Identifier: MIT
/* `peakbpf plot RECORD -o OUT`: draw a timeline that --timeline saved. */
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include "status.h"
#include "timeline_export.h"

static const struct option plot_options[] = {
	{ "output", required_argument, NULL, 'o' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

static void plot_usage(FILE *out)
{
	fputs("Usage: peakbpf plot TIMELINE -o OUT\n"
	      "\n"
	      "Draw a timeline that peakbpf --timeline wrote (.json or .csv) as OUT, in the\n"
	      "format its extension names: .html (one self-contained page: hover values,\n"
	      "drag to zoom), .svg (static), or .json / .csv (a conversion).\n"
	      "\n"
	      "  -o, --output OUT   the file to write\n"
	      "  -h, --help         this help\n", out);
}

/* Options, then exactly one TIMELINE. 0: go on; else the exit status. */
static int plot_args(int argc, char **argv, const char **in, const char **out)
{
	int c;

	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":o:h", plot_options, NULL)) != -1) {
		if (c == 'o') {
			*out = optarg;
		} else if (c == 'h') {
			plot_usage(stdout);
			return -1;
		} else {
			fprintf(stderr, "peakbpf plot: %s '%s' (see peakbpf plot --help)\n",
				c == ':' ? "option needs a value:" : "unknown option", argv[optind - 1]);
			return EXIT_PEAKBPF_FAILED;
		}
	}
	if (optind + 1 != argc) {
		fprintf(stderr, "peakbpf plot: give one timeline file: peakbpf plot TIMELINE -o OUT\n");
		return EXIT_PEAKBPF_FAILED;
	}
	if (!*out || !**out) {
		fprintf(stderr, "peakbpf plot: no output: -o OUT (.html or .svg)\n");
		return EXIT_PEAKBPF_FAILED;
	}
	*in = argv[optind];
	return 0;
}

int plot_main(int argc, char **argv)
{
	const char *in = NULL, *out = NULL;
	static struct timeline t;       /* its marks make it large: not on the stack */
	char title[256], err[512];
	int rc = plot_args(argc, argv, &in, &out);

	if (rc)
		return rc < 0 ? 0 : rc;
	if (timeline_format_of(out) == TL_FORMAT_NONE) {
		fprintf(stderr, "peakbpf plot: %s: the extension names the format: .html, .svg, .json or .csv\n", out);
		return EXIT_PEAKBPF_FAILED;
	}
	if (timeline_load(in, &t, title, sizeof(title), err, sizeof(err))) {
		fprintf(stderr, "peakbpf plot: %s\n", err);
		return EXIT_PEAKBPF_FAILED;
	}
	rc = timeline_write(&t, title, out, err, sizeof(err));
	timeline_free(&t);
	if (rc) {
		fprintf(stderr, "peakbpf plot: %s\n", err);
		return EXIT_PEAKBPF_FAILED;
	}
	return 0;
}
