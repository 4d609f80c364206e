// SPDX-License-Identifier: MIT
/* cg_labels.h: labels from a cgroup's path. */
#include <ctype.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include "cg_labels.h"

static bool ends_with(const char *s, size_t n, const char *suffix)
{
	size_t k = strlen(suffix);

	return n >= k && !memcmp(s + n - k, suffix, k);
}

static bool starts_with(const char *s, size_t n, const char *prefix)
{
	size_t k = strlen(prefix);

	return n >= k && !memcmp(s, prefix, k);
}

static void copy(char *dst, size_t cap, const char *src, size_t n)
{
	if (n >= cap)
		n = cap - 1;
	memcpy(dst, src, n);
	dst[n] = '\0';
}

/* A container id: 64 lowercase hex digits at s (n long), exactly. */
static bool is_id(const char *s, size_t n)
{
	if (n != 64)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!isxdigit((unsigned char)s[i]) || isupper((unsigned char)s[i]))
			return false;
	return true;
}

/* "<prefix><id>.scope" (systemd driver) or "<prefix><id>" (cgroupfs). */
static bool runtime_id(struct cg_labels *l, const char *c, size_t n, const char *prefix, const char *rt)
{
	size_t k = strlen(prefix), m = n;

	if (!starts_with(c, n, prefix))
		return false;
	if (ends_with(c, n, ".scope"))
		m -= strlen(".scope");
	if (!is_id(c + k, m - k))
		return false;
	copy(l->container_id, sizeof(l->container_id), c + k, m - k);
	snprintf(l->runtime, sizeof(l->runtime), "%s", rt);
	return true;
}

static const struct {
	const char *prefix, *runtime;
} RUNTIMES[] = {
	{ "docker-", "docker" },
	{ "libpod-", "podman" },
	{ "cri-containerd-", "containerd" },
	{ "crio-", "crio" },
	{ "containerd-", "containerd" },
};

/* A pod's UID in "pod<uid>" or "kubepods-<qos>-pod<uid>.slice", the
 * systemd driver's with underscores for its dashes. */
static bool pod(struct cg_labels *l, const char *c, size_t n)
{
	const char *p = NULL;
	size_t m = n;

	if (starts_with(c, n, "pod"))
		p = c + 3;
	else if (starts_with(c, n, "kubepods-") && (p = strstr(c, "-pod")) && p < c + n)
		p += 4;
	if (!p)
		return false;
	if (ends_with(c, n, ".slice"))
		m -= strlen(".slice");
	if ((size_t)(c + m - p) != 36)
		return false;
	for (size_t i = 0; i < 36; i++) {
		char ch = p[i];
		bool dash = i == 8 || i == 13 || i == 18 || i == 23;

		if (dash ? (ch != '-' && ch != '_') : !isxdigit((unsigned char)ch))
			return false;
	}
	copy(l->pod_uid, sizeof(l->pod_uid), p, 36);
	for (char *q = l->pod_uid; *q; q++)
		if (*q == '_')
			*q = '-';
	return true;
}

static void qos(struct cg_labels *l, const char *c, size_t n)
{
	static const char *const CLASSES[] = { "burstable", "besteffort", "guaranteed" };

	for (size_t i = 0; i < 3; i++) {
		size_t k = strlen(CLASSES[i]);

		/* "burstable" (cgroupfs) or "kubepods-burstable.slice" (systemd) */
		if ((n == k && !memcmp(c, CLASSES[i], k)) ||
		    (starts_with(c, n, "kubepods-") && n == 9 + k + 6 && !memcmp(c + 9, CLASSES[i], k) &&
		     ends_with(c, n, ".slice")))
			snprintf(l->qos, sizeof(l->qos), "%s", CLASSES[i]);
	}
}

/* Slurm's "job_<n>" and "step_<name>" (its cgroup plugin's tree). */
static void slurm(struct cg_labels *l, const char *c, size_t n)
{
	if (starts_with(c, n, "job_") && n > 4 && n - 4 < sizeof(l->slurm_job)) {
		for (size_t i = 4; i < n; i++)
			if (!isdigit((unsigned char)c[i]))
				return;
		copy(l->slurm_job, sizeof(l->slurm_job), c + 4, n - 4);
	} else if (starts_with(c, n, "step_") && n > 5 && l->slurm_job[0]) {
		copy(l->slurm_step, sizeof(l->slurm_step), c + 5, n - 5);
	}
}

static void component(struct cg_labels *l, const char *c, size_t n)
{
	bool id = false;

	for (size_t i = 0; i < sizeof(RUNTIMES) / sizeof(RUNTIMES[0]) && !id; i++)
		id = runtime_id(l, c, n, RUNTIMES[i].prefix, RUNTIMES[i].runtime);
	/* cgroupfs drivers: /docker/<id>, /kubepods/<qos>/pod<uid>/<id> */
	if (!id && is_id(c, n)) {
		copy(l->container_id, sizeof(l->container_id), c, n);
		id = true;
	}
	pod(l, c, n);
	qos(l, c, n);
	slurm(l, c, n);
	if (ends_with(c, n, ".slice"))
		copy(l->slice, sizeof(l->slice), c, n);
	else if (ends_with(c, n, ".service") || ends_with(c, n, ".scope") || ends_with(c, n, ".socket") ||
		 ends_with(c, n, ".mount") || ends_with(c, n, ".swap"))
		copy(l->unit, sizeof(l->unit), c, n);
}

void cg_labels_parse(const char *path, struct cg_labels *out)
{
	const char *p = path;

	memset(out, 0, sizeof(*out));
	while (p && *p) {
		const char *end;

		while (*p == '/')
			p++;
		end = strchr(p, '/');
		if (!end)
			end = p + strlen(p);
		if (end > p)
			component(out, p, (size_t)(end - p));
		p = end;
	}
	/* A runtime seen in a parent's name (/docker/<id>) */
	if (out->container_id[0] && !out->runtime[0]) {
		if (strstr(path, "/docker/"))
			snprintf(out->runtime, sizeof(out->runtime), "docker");
		else if (strstr(path, "libpod"))
			snprintf(out->runtime, sizeof(out->runtime), "podman");
	}
}

static const char *const NAMES[] = {
	"unit", "slice", "runtime", "container_id", "pod_uid", "qos", "slurm_job", "slurm_step",
};

const char *cg_label_name(size_t i)
{
	return i < sizeof(NAMES) / sizeof(NAMES[0]) ? NAMES[i] : NULL;
}

const char *cg_label_value(const struct cg_labels *l, size_t i)
{
	switch (i) {
	case 0: return l->unit;
	case 1: return l->slice;
	case 2: return l->runtime;
	case 3: return l->container_id;
	case 4: return l->pod_uid;
	case 5: return l->qos;
	case 6: return l->slurm_job;
	case 7: return l->slurm_step;
	default: return NULL;
	}
}
