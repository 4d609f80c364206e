/* SPDX-License-Identifier: MIT */
/*
 * What a cgroup's path says about what runs in it (docs/agent.md,
 * "Labels"): the systemd unit, the container runtime and id, the
 * Kubernetes pod UID and QoS class, the Slurm job and step. Pure: no file
 * is read. Kubernetes' namespace and container name, and a container's
 * name, are not in the path: they are not guessed.
 */
#ifndef PEAKBPF_CG_LABELS_H
#define PEAKBPF_CG_LABELS_H

#include <stddef.h>

#define CG_LABEL_LEN 72

struct cg_labels {
	char unit[CG_LABEL_LEN];        /* the innermost systemd unit: x.service, x.scope, ... */
	char slice[CG_LABEL_LEN];       /* the innermost slice */
	char runtime[16];               /* docker, podman, containerd, crio */
	char container_id[CG_LABEL_LEN];/* 64 hex digits */
	char pod_uid[40];               /* 8-4-4-4-12, dashes (systemd's underscores undone) */
	char qos[16];                   /* guaranteed, burstable, besteffort */
	char slurm_job[24];
	char slurm_step[24];
};

/* The labels of path (relative to the hierarchy's root, "/a/b"); the
 * fields it does not name stay "". */
void cg_labels_parse(const char *path, struct cg_labels *out);

/* The label names and values in a fixed order, for a writer: the value
 * of label i of l, and its name. i past the last: NULL. */
const char *cg_label_name(size_t i);
const char *cg_label_value(const struct cg_labels *l, size_t i);

#endif
