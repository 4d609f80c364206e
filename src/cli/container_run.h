/* SPDX-License-Identifier: MIT */
/*
 * `peakbpf -- docker run ...` and `peakbpf -- podman run ...`: the
 * container measured apart from its runtime (docs/containers.md, "A run of
 * a container"). peakbpf makes a cgroup of the run's own, PARENT, and puts
 * --cgroup-parent PARENT (and --cidfile) into the command, so that the
 * runtime makes the container's cgroup below PARENT; a second session
 * follows PARENT as a cgroup target from before the command starts, and
 * the command's session lets go of every process that enters it.
 */
#ifndef PEAKBPF_CONTAINER_RUN_H
#define PEAKBPF_CONTAINER_RUN_H

#include <limits.h>
#include <stdbool.h>
#include <peakbpf/peakbpf.h>

struct container_run {
	const char *runtime;            /* "docker", "podman"; NULL: not a container run */
	char rel[128];                  /* PARENT below each hierarchy's root: "/peakbpf-run-PID" */
	char parent[PATH_MAX];          /* PARENT in the memory hierarchy */
	char conmon[PATH_MAX];          /* podman: PARENT/conmon, where conmon goes; "" */
	char dir[PATH_MAX];             /* a private directory for the cid file */
	char cidfile[PATH_MAX + 16];
	char parent_opt[160];           /* --cgroup-parent=REL */
	const char *name;               /* --name NAME, if given */
	char **argv;                    /* the command with the options put in */
	struct peakbpf_session *session;        /* the container's */
	char label[256];                /* "container NAME (ID, RUNTIME)" */
};

/* Whether argv runs a container (RUNTIME run, RUNTIME container run) that
 * peakbpf can find: RUNTIME docker or podman, without a --cgroup-parent of
 * its own and on a host without systemd's cgroup driver. Prints why not
 * (a notice, unless quiet) when it runs one it cannot. */
bool container_run_wanted(char **argv, bool quiet);
/* Whether argv (NULL: no command) runs a container at all, found or not:
 * then its sessions may take cgroup targets (peakbpf_opts.no_cgroup_targets). */
bool container_run_possible(char **argv);
/* Make PARENT and the command (c->argv); 0 or -errno (said on stderr). */
int container_run_prepare(struct container_run *c, char **argv);
/* The container's session (opts as the command's, no command) on PARENT,
 * started; and the command's session told to let go of PARENT's
 * processes. Before the command's peakbpf_start. 0 or -errno (said). */
int container_run_open(struct container_run *c, const struct peakbpf_opts *opts,
		       struct peakbpf_session *command);
/* The container's ID, once the runtime wrote it, into the label. */
void container_run_name(struct container_run *c);
/* The session, PARENT (in every hierarchy, if empty), the cid file. */
void container_run_cleanup(struct container_run *c);

#endif
