// SPDX-License-Identifier: MIT
/* `peakbpf oom list|show` (docs/agent.md, "OOM records"): the agent's
 * spool read back: one line a record, a record in full (human, --json),
 * its cgroup's timeline drawn by the timeline writers (--html FILE). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "agent.h"
#include "agent_oom_record.h"
#include "agent_opts.h"
#include "status.h"
#include "timeline.h"
#include "timeline_export.h"
#include "units.h"

static const char OOM_USAGE[] =
"Usage: peakbpf oom list [--spool DIR] [--json]\n"
"       peakbpf oom show ID [--spool DIR] [--json] [--html FILE]\n"
"The agent's OOM records (peakbpf agent; docs/agent.md): list them, oldest\n"
"first, or show one: its victim, the kill's cgroup and limit, the cgroup's\n"
"peak, who held its memory; --html FILE draws the cgroup's timeline.\n"
"  --spool DIR   the agent's spool (default " AGENT_SPOOL_DEFAULT ")\n"
"  --json        the record(s) as JSON\n"
"  --html FILE   (show) the cgroup's timeline as HTML (or .svg, .csv, .json)\n"
"  -h, --help    this help\n"
"Exit status: 0; 1 no such record; 125 bad usage or an unreadable spool.\n";

struct oom_cli {
	const char *spool, *html, *id;
	bool json, list;
};

static int parse(int argc, char **argv, struct oom_cli *o)
{
	static const struct option opts[] = {
		{ "spool", required_argument, NULL, 'd' },
		{ "json", no_argument, NULL, 'j' },
		{ "html", required_argument, NULL, 'H' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	o->spool = AGENT_SPOOL_DEFAULT;
	optind = 1;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		if (c == 'd')
			o->spool = optarg;
		else if (c == 'j')
			o->json = true;
		else if (c == 'H')
			o->html = optarg;
		else if (c == 'h')
			return fputs(OOM_USAGE, stdout), -1;
		else
			return EXIT_PEAKBPF_FAILED;
	}
	if (optind < argc && !strcmp(argv[optind], "list") && optind + 1 == argc) {
		o->list = true;
		return 0;
	}
	if (optind + 2 == argc && !strcmp(argv[optind], "show")) {
		o->id = argv[optind + 1];
		return 0;
	}
	return EXIT_PEAKBPF_FAILED;
}

/* Each "{"pid":N,"comm":"C","anon_bytes":A,"file_bytes":F,"shmem_bytes":S}" of
 * the holders' list, one line each. */
static void print_holders(const char *text)
{
	const char *p = strstr(text, "\"holders\":");
	char a[32], f[32], s[32];

	if (!p)
		return;
	printf("  held the cgroup's memory just after the kill:\n");
	while ((p = strstr(p, "{\"pid\":"))) {
		unsigned long long an, fi, sh;
		char comm[17];
		int pid;

		if (sscanf(p, "{\"pid\":%d,\"comm\":\"%16[^\"]\",\"anon_bytes\":%llu,\"file_bytes\":%llu,"
			   "\"shmem_bytes\":%llu", &pid, comm, &an, &fi, &sh) == 5)
			printf("    %7d %-16s anon %s, file %s, shmem %s\n", pid, comm, format_bytes(an, a, sizeof(a)),
			       format_bytes(fi, f, sizeof(f)), format_bytes(sh, s, sizeof(s)));
		p++;
	}
}

static int show(const struct oom_cli *o, int dir_fd)
{
	char name[160], sum[512], path[400], err[256], title[256];
	char *text = NULL;
	struct timeline tl;
	int st = 0;

	snprintf(name, sizeof(name), "%s.json", o->id);
	if (!oom_record_name_ok(name) || !(text = oom_record_read(dir_fd, name))) {
		fprintf(stderr, "peakbpf oom: no record %s in %s (peakbpf oom list shows them)\n", o->id, o->spool);
		return 1;
	}
	if (o->json)
		fputs(text, stdout);
	else if (oom_record_summary(text, sum, sizeof(sum)))
		printf("%s: %s\n", o->id, sum);
	if (!o->json)
		print_holders(text);
	free(text);
	if (!o->html)
		return 0;
	snprintf(path, sizeof(path), "%s/%s.timeline.json", o->spool, o->id);
	if (timeline_load(path, &tl, title, sizeof(title), err, sizeof(err)) ||
	    timeline_write(&tl, title, o->html, err, sizeof(err))) {
		fprintf(stderr, "peakbpf oom: %s\n", err);
		st = EXIT_PEAKBPF_FAILED;
	}
	timeline_free(&tl);
	return st;
}

int oom_main(int argc, char **argv)
{
	struct oom_cli o = { 0 };
	int st = parse(argc, argv, &o), dir_fd;
	size_t len = 0;
	char *list;

	if (st < 0)
		return 0;
	if (st) {
		fprintf(stderr, "peakbpf oom: bad usage: peakbpf oom list|show ID [--spool DIR] [--json] (see --help)\n");
		return st;
	}
	dir_fd = open(o.spool, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dir_fd < 0) {
		fprintf(stderr, "peakbpf oom: cannot open the spool %s: %s (give the agent's with --spool)\n", o.spool,
			strerror(errno));
		return EXIT_PEAKBPF_FAILED;
	}
	if (!o.list) {
		st = show(&o, dir_fd);
	} else if ((list = oom_records_list_json(dir_fd, &len))) {
		if (o.json)
			fputs(list, stdout);
		else
			oom_records_print(dir_fd);
		free(list);
	}
	close(dir_fd);
	return st;
}
