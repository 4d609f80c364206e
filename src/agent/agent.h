/* SPDX-License-Identifier: MIT */
/* `peakbpf agent` (docs/agent.md): the CLI's one way into it. */
#ifndef PEAKBPF_AGENT_H
#define PEAKBPF_AGENT_H

/* Exit statuses of the agent's bad input, each its own (man page, EXIT STATUS). */
#define EXIT_AGENT_LISTEN 117           /* --listen is not a numeric address:port */
#define EXIT_AGENT_PORT_IN_USE 118      /* --listen's address cannot be bound (in use, not local) */
#define EXIT_AGENT_SPOOL 119            /* the spool directory is a symlink, not a directory, or
					   not writable */
#define EXIT_AGENT_NO_MATCH 120         /* --select names no cgroup */

int agent_main(int argc, char **argv);
/* `peakbpf oom list|show` (agent_oom_cli.c). */
int oom_main(int argc, char **argv);

#endif
