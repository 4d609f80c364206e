// SPDX-License-Identifier: MIT
/* agent_opts.h: `peakbpf agent`'s options. */
#include <errno.h>
#include <getopt.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include "agent.h"
#include "agent_opts.h"
#include "agent_state.h"
#include "status.h"
#include "units.h"

const char AGENT_USAGE[] =
"Usage: peakbpf agent [--listen ADDR:PORT] [--select PREFIX] [--max-series N]\n"
"                     [--holders N] [--spool DIR] [--spool-bytes SIZE]\n"
"                     [--timeline SECONDS] [-v]\n"
"Track every process of the node in the kernel and serve each cgroup's exact\n"
"peak of summed RSS to Prometheus (docs/agent.md), and record every OOM kill.\n"
"  --listen ADDR:PORT   where to serve /metrics (numeric; default " AGENT_LISTEN_DEFAULT ",\n"
"                       loopback only; [::1]:PORT for IPv6)\n"
"  --select PREFIX      export the cgroups under PREFIX (a path below the memory\n"
"                       hierarchy's root; default /: every cgroup with processes)\n"
"  --max-series N       the most cgroups with series (default and most 4096, the\n"
"                       kernel's slots: every cgroup); more are counted in\n"
"                       peakbpf_cgroups_dropped_total and said once on stderr\n"
"  --holders N          holders at each cgroup's peak in the metric (0-5,\n"
"                       default 3); GET /holders lists 5\n"
"  --spool DIR          where OOM records go (default " AGENT_SPOOL_DEFAULT ")\n"
"  --spool-bytes SIZE   the spool's bound (default 16MiB): the oldest records go\n"
"  --timeline SECONDS   seconds of the cgroup's sum an OOM record keeps (default 10)\n"
"  -v, --verbose        log what it loaded (and libbpf's warnings) and each OOM kill\n"
"  -h, --help           this help\n"
"Scrape GET /metrics[?scraper=NAME]: each NAME sees the peak since its own\n"
"previous scrape. GET /holders[?cgroup=PATH]: who held each peak (JSON).\n"
"GET /oom lists the OOM records (JSON).\n"
"Exit status: 0 after SIGTERM/SIGINT; 117 bad --listen; 118 --listen cannot be\n"
"bound (port in use); 119 bad spool directory; 120 --select matches no cgroup;\n"
"125 other failures (usage, privileges, BPF).\n";

static bool is_loopback(const struct sockaddr_storage *a)
{
	if (a->ss_family == AF_INET)
		return (ntohl(((const struct sockaddr_in *)a)->sin_addr.s_addr) >> 24) == 127;
	return IN6_IS_ADDR_LOOPBACK(&((const struct sockaddr_in6 *)a)->sin6_addr);
}

int agent_parse_listen(const char *s, struct sockaddr_storage *out, socklen_t *len, bool *loopback)
{
	struct addrinfo hints = { .ai_flags = AI_NUMERICHOST | AI_NUMERICSERV, .ai_socktype = SOCK_STREAM };
	struct addrinfo *res = NULL;
	char host[64], *end = NULL;
	const char *colon;
	unsigned long port;
	size_t n;

	if (!s)
		return -EINVAL;
	if (s[0] == '[') {
		const char *close = strchr(s, ']');

		if (!close || close[1] != ':')
			return -EINVAL;
		n = (size_t)(close - s - 1);
		colon = close + 1;
		s++;
	} else {
		colon = strrchr(s, ':');
		if (!colon)
			return -EINVAL;
		n = (size_t)(colon - s);
	}
	if (n == 0 || n >= sizeof(host))
		return -EINVAL;
	memcpy(host, s, n);
	host[n] = '\0';
	errno = 0;
	port = strtoul(colon + 1, &end, 10);
	if (!colon[1] || *end || errno || port < 1 || port > 65535)
		return -EINVAL;
	if (getaddrinfo(host, colon + 1, &hints, &res) || !res)
		return -EINVAL;
	memcpy(out, res->ai_addr, res->ai_addrlen);
	*len = res->ai_addrlen;
	freeaddrinfo(res);
	*loopback = is_loopback(out);
	return 0;
}

static int positive(const char *arg, const char *name, double max, double *v, char *why, size_t len)
{
	char *end = NULL;

	errno = 0;
	*v = strtod(arg, &end);
	if (end == arg || *end || errno || !(*v > 0) || *v > max) {
		snprintf(why, len, "%s: '%s' is not a number in (0, %g]", name, arg, max);
		return EXIT_PEAKBPF_FAILED;
	}
	return 0;
}

/* A whole number in [0, max]: strtol, its end and its range. */
static int count(const char *arg, const char *name, long max, unsigned *v, char *why, size_t len)
{
	char *end = NULL;
	long n;

	errno = 0;
	n = strtol(arg, &end, 10);
	if (end == arg || *end || errno || n < 0 || n > max) {
		snprintf(why, len, "%s: '%s' is not a whole number from 0 to %ld", name, arg, max);
		return EXIT_PEAKBPF_FAILED;
	}
	*v = (unsigned)n;
	return 0;
}

static int option(int c, const char *arg, struct agent_opts *o, char *why, size_t len)
{
	unsigned n = 0;
	int err = 0;

	switch (c) {
	case 'l':
		o->listen = arg;
		break;
	case 's':
		if (arg[0] != '/' || strstr(arg, "/..") || strlen(arg) > 200) {
			snprintf(why, len, "--select: '%s' is not an absolute cgroup path (e.g. /system.slice)", arg);
			return EXIT_PEAKBPF_FAILED;
		}
		o->select = arg;
		break;
	case 'm':
		err = count(arg, "--max-series", AGENT_MAX_SERIES_DEFAULT, &n, why, len);
		if (!err && !n) {
			snprintf(why, len, "--max-series: 0 would export no cgroup (give 1 to 4096; narrow with --select)");
			err = EXIT_PEAKBPF_FAILED;
		}
		o->max_series = n;
		break;
	case 'H':
		err = count(arg, "--holders", AGENT_HOLDERS, &o->holders, why, len);
		break;
	case 'd':
		o->spool = arg;
		break;
	case 'b':
		if (parse_size(arg, &o->spool_bytes) || o->spool_bytes < 65536) {
			snprintf(why, len, "--spool-bytes: '%s' is not a size of at least 64KiB", arg);
			return EXIT_PEAKBPF_FAILED;
		}
		break;
	case 't':
		err = positive(arg, "--timeline", 600, &o->timeline_s, why, len);
		break;
	case 'v':
		o->verbose = true;
		break;
	case 'h':
		o->help = true;
		break;
	default:
		snprintf(why, len, "unknown option (try peakbpf agent --help)");
		return EXIT_PEAKBPF_FAILED;
	}
	return err;
}

int agent_opts_parse(int argc, char **argv, struct agent_opts *o, char *why, size_t len)
{
	static const struct option opts[] = {
		{ "listen", required_argument, NULL, 'l' },
		{ "select", required_argument, NULL, 's' },
		{ "max-series", required_argument, NULL, 'm' },
		{ "holders", required_argument, NULL, 'H' },
		{ "spool", required_argument, NULL, 'd' },
		{ "spool-bytes", required_argument, NULL, 'b' },
		{ "timeline", required_argument, NULL, 't' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c, err;

	memset(o, 0, sizeof(*o));
	o->listen = AGENT_LISTEN_DEFAULT;
	o->spool = AGENT_SPOOL_DEFAULT;
	o->spool_bytes = 16ULL << 20;
	o->select = "/";
	o->max_series = AGENT_MAX_SERIES_DEFAULT;
	o->holders = AGENT_HOLDERS_DEFAULT;
	o->timeline_s = 10;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+vh", opts, NULL)) != -1)
		if ((err = option(c, optarg, o, why, len)))
			return err;
	if (optind < argc) {
		snprintf(why, len, "unexpected argument '%s' (try peakbpf agent --help)", argv[optind]);
		return EXIT_PEAKBPF_FAILED;
	}
	if (agent_parse_listen(o->listen, &o->addr, &o->addr_len, &o->loopback)) {
		snprintf(why, len, "--listen: '%s' is not a numeric ADDR:PORT (e.g. 127.0.0.1:9736 or [::1]:9736)",
			 o->listen);
		return EXIT_AGENT_LISTEN;
	}
	return 0;
}
