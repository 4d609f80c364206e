// SPDX-License-Identifier: MIT
/* `peakbpf -- docker run` / `podman run` (container_run.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "container_run.h"
#include "cgroup_paths.h"
#include "container_argv.h"

bool container_run_possible(char **argv)
{
	const char *runtime = NULL;

	return argv && container_argv_run_index(argv, &runtime) != 0;
}

bool container_run_wanted(char **argv, bool quiet)
{
	const char *runtime = NULL, *mgr = NULL;
	struct stat st;
	int i = container_argv_run_index(argv, &runtime);

	if (!i)
		return false;
	if (container_argv_option(argv, i, "--cgroup-parent", NULL)) {
		if (!quiet)
			fprintf(stderr, "peakbpf: notice: %s run --cgroup-parent: the container is not found by "
				"peakbpf (it puts its own parent in); measuring the command's tree by fork lineage\n",
				runtime);
		return false;
	}
	/* systemd's cgroup driver wants a slice for a parent: not done yet. */
	for (int k = 1; k < i; k++)
		if (!strncmp(argv[k], "--cgroup-manager", 16))
			mgr = argv[k][16] == '=' ? argv[k] + 17 : argv[k + 1];
	if ((mgr && strcmp(mgr, "cgroupfs")) ||
	    (!mgr && lstat("/run/systemd/system", &st) == 0)) {
		if (!quiet)
			fprintf(stderr, "peakbpf: notice: %s's systemd cgroup driver: the container is not found by "
				"peakbpf yet (docs/containers.md); measuring the command's tree by fork lineage\n",
				runtime);
		return false;
	}
	return true;
}

int container_run_prepare(struct container_run *c, char **argv)
{
	char mount[PATH_MAX];
	int v2 = 0, i;

	i = container_argv_run_index(argv, &c->runtime);
	if (target_memory_mount(mount, sizeof(mount), &v2)) {
		fprintf(stderr, "peakbpf: %s run: no memory cgroup hierarchy is mounted: the container cannot be "
			"found\n", c->runtime);
		return -ENOENT;
	}
	snprintf(c->rel, sizeof(c->rel), "/peakbpf-run-%d", (int)getpid());
	snprintf(c->parent, sizeof(c->parent), "%.3900s%.120s", mount, c->rel);
	if (mkdir(c->parent, 0755) && errno != EEXIST) {
		int err = -errno;

		fprintf(stderr, "peakbpf: %s run: cannot make %s: %s\n", c->runtime, c->parent, strerror(-err));
		c->parent[0] = '\0';
		return err;
	}
	if (!strcmp(c->runtime, "podman")) {
		snprintf(c->conmon, sizeof(c->conmon), "%.4000s/conmon", c->parent);
		if (mkdir(c->conmon, 0755) && errno != EEXIST)
			c->conmon[0] = '\0';
	}
	snprintf(c->dir, sizeof(c->dir), "%.3000s/peakbpf-run.XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (!mkdtemp(c->dir)) {
		c->dir[0] = '\0';
		return -errno;
	}
	snprintf(c->cidfile, sizeof(c->cidfile), "--cidfile=%.4000s/cid", c->dir);
	container_argv_option(argv, i, "--name", &c->name);
	snprintf(c->parent_opt, sizeof(c->parent_opt), "--cgroup-parent=%s", c->rel);
	c->argv = container_argv_inject(argv, i, c->parent_opt, c->cidfile);
	return c->argv ? 0 : -ENOMEM;
}

int container_run_open(struct container_run *c, const struct peakbpf_opts *opts,
		       struct peakbpf_session *command)
{
	struct peakbpf_opts o = *opts;
	char why[256] = "";
	const char *except = c->conmon[0] ? c->conmon : NULL;
	int err;

	o.command = false;
	o.measure = PEAKBPF_MEASURE_RSS;
	o.timeline = false;
	o.changes_ring_bytes = 0;
	o.no_helper = true;     /* a cgroup target needs the bpf source here */
	err = peakbpf_open(&o, &c->session, why, sizeof(why));
	if (err) {
		fprintf(stderr, "peakbpf: %s run: cannot measure the container: %s\n", c->runtime, why);
		return err;
	}
	err = peakbpf_add_cgroup_except(c->session, c->parent, except);
	if (!err)
		err = peakbpf_start(c->session);
	if (err == -EOPNOTSUPP) {
		fprintf(stderr, "peakbpf: notice: %s run: this kernel refused the BPF programs that follow a "
			"cgroup (-v shows its verifier's log): the container is measured with its runtime, by fork lineage\n",
			c->runtime);
		return err;
	}
	if (err) {
		fprintf(stderr, "peakbpf: %s run: cannot follow the container's cgroup %s: %s\n", c->runtime,
			c->parent, strerror(-err));
		return err;
	}
	err = peakbpf_exclude_cgroup(command, c->parent, except);
	if (err == -EOPNOTSUPP)
		err = 0;        /* the runtime's figure then has the container's by lineage (podman) */
	if (err)
		fprintf(stderr, "peakbpf: %s run: %s: %s\n", c->runtime, c->parent, strerror(-err));
	snprintf(c->label, sizeof(c->label), "the %s container%s%s", c->runtime, c->name ? " " : "",
		 c->name ? c->name : "");
	return err;
}

void container_run_name(struct container_run *c)
{
	char path[PATH_MAX + 8], id[80] = "";
	FILE *f;

	snprintf(path, sizeof(path), "%s/cid", c->dir);
	f = c->dir[0] ? fopen(path, "re") : NULL;
	if (!f)
		return;
	if (fscanf(f, "%79s", id) == 1 && c->name)
		snprintf(c->label, sizeof(c->label), "container %.64s (%.12s, %s)", c->name, id, c->runtime);
	else if (id[0])
		snprintf(c->label, sizeof(c->label), "container %.12s (%s)", id, c->runtime);
	fclose(f);
}

/* rmdir PARENT/conmon and PARENT in every cgroup hierarchy (the runtime
 * made it in each); only empty ones go. */
static void remove_parents(const struct container_run *c)
{
	FILE *f = fopen("/proc/self/mountinfo", "re");
	char line[4096], mnt[PATH_MAX], path[PATH_MAX + 256];

	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		char *sep = strstr(line, " - ");

		if (!sep || (strncmp(sep + 3, "cgroup ", 7) && strncmp(sep + 3, "cgroup2 ", 8)) ||
		    sscanf(line, "%*s %*s %*s %*s %4095s", mnt) != 1)
			continue;
		snprintf(path, sizeof(path), "%s%s/conmon", mnt, c->rel);
		rmdir(path);
		snprintf(path, sizeof(path), "%s%s", mnt, c->rel);
		rmdir(path);
	}
	fclose(f);
}

void container_run_cleanup(struct container_run *c)
{
	char path[PATH_MAX + 8];

	if (!c->runtime)
		return;
	peakbpf_close(c->session);
	c->session = NULL;
	if (c->parent[0])
		remove_parents(c);
	if (c->dir[0]) {
		snprintf(path, sizeof(path), "%s/cid", c->dir);
		unlink(path);
		rmdir(c->dir);
	}
	free(c->argv);
	c->argv = NULL;
}
