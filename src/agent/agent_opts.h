/* SPDX-License-Identifier: MIT */
/* `peakbpf agent`'s options (pure: parsed, checked, nothing opened). */
#ifndef PEAKBPF_AGENT_OPTS_H
#define PEAKBPF_AGENT_OPTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#define AGENT_LISTEN_DEFAULT "127.0.0.1:9736"
#define AGENT_SPOOL_DEFAULT "/var/lib/peakbpf/oom"
/* Every cgroup the kernel has a slot for (bpf/cgsum.h, CG_SLOTS): as
 * cAdvisor and node_exporter, the agent exports every cgroup its
 * selection names; --max-series is the user's bound, not a default one. */
#define AGENT_MAX_SERIES_DEFAULT 4096
#define AGENT_HOLDERS_DEFAULT 3

struct agent_opts {
	const char *listen;             /* as given */
	struct sockaddr_storage addr;   /* parsed */
	socklen_t addr_len;
	bool loopback;                  /* the address is a loopback one */
	const char *spool;
	uint64_t spool_bytes;           /* the spool's bound: oldest records go first */
	const char *select;             /* cgroup path prefix, "/": every cgroup */
	size_t max_series;
	unsigned holders;               /* holders listed per cgroup in the metric */
	double timeline_s;              /* seconds of each cgroup's sum an OOM record keeps */
	bool verbose;
	bool help;
};

/* Exit status of a parse failure (why says it in one line): 0 ok, else
 * EXIT_PEAKBPF_FAILED (usage) or EXIT_AGENT_LISTEN. */
int agent_opts_parse(int argc, char **argv, struct agent_opts *o, char *why, size_t len);
/* Parse "ADDR:PORT" / "[ADDR6]:PORT" (numeric only): 0 or -EINVAL. */
int agent_parse_listen(const char *s, struct sockaddr_storage *out, socklen_t *len, bool *loopback);
extern const char AGENT_USAGE[];

#endif
