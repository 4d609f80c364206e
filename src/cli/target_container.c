// SPDX-License-Identifier: MIT
/* --container (target_container.h). */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "status.h"
#include "cgroup_paths.h"
#include "target_container.h"

#define MAX_WORDS 24

size_t container_runtime_argv(const char *runtime, char *buf, size_t len, char **argv, size_t max)
{
	const char *env = getenv(!strcmp(runtime, "podman") ? "PEAKBPF_PODMAN" : "PEAKBPF_DOCKER");
	size_t n = 0;
	char *save = NULL;

	snprintf(buf, len, "%s", env && *env ? env : runtime);
	for (char *w = strtok_r(buf, " \t", &save); w && n + 1 < max; w = strtok_r(NULL, " \t", &save))
		argv[n++] = w;
	argv[n] = NULL;
	return n;
}

/* Whether a program is in PATH (or is a path that can be run). */
static int installed(const char *prog)
{
	const char *path = getenv("PATH");
	char dir[PATH_MAX], file[PATH_MAX + 256];

	if (strchr(prog, '/'))
		return access(prog, X_OK) == 0;
	for (const char *p = path ? path : "/usr/bin:/bin"; *p;) {
		size_t n = strcspn(p, ":");

		snprintf(dir, sizeof(dir), "%.*s", (int)(n < PATH_MAX - 1 ? n : PATH_MAX - 1), p);
		snprintf(file, sizeof(file), "%s/%s", *dir ? dir : ".", prog);
		if (access(file, X_OK) == 0)
			return 1;
		p += n + (p[n] == ':');
	}
	return 0;
}

enum found { FOUND_NONE, FOUND_ONE, FOUND_SEVERAL, FOUND_ERROR };

struct inspected {
	char id[80];
	long pid;
	char cgroup[PATH_MAX];          /* podman's State.CgroupPath; "" for docker */
	char name[256];
	char error[256];
};

/* RUNTIME inspect --type container -f FORMAT NAME. */
static enum found inspect(const char *runtime, const char *name, struct inspected *out)
{
	static const char podman_fmt[] = "{{.Id}} {{.State.Pid}} {{.Name}} {{.State.CgroupPath}}";
	static const char docker_fmt[] = "{{.Id}} {{.State.Pid}} {{.Name}}";
	char buf[PATH_MAX], text[8192], *argv[MAX_WORDS + 8];
	size_t n = container_runtime_argv(runtime, buf, sizeof(buf), argv, MAX_WORDS);
	int status;

	argv[n++] = "inspect";
	argv[n++] = "--type";
	argv[n++] = "container";
	argv[n++] = "-f";
	argv[n++] = (char *)(!strcmp(runtime, "podman") ? podman_fmt : docker_fmt);
	argv[n++] = (char *)name;
	argv[n] = NULL;
	memset(out, 0, sizeof(*out));
	if (target_capture(argv, text, sizeof(text), &status)) {
		snprintf(out->error, sizeof(out->error), "cannot run %s", argv[0]);
		return FOUND_ERROR;
	}
	if (status != 0) {
		text[strcspn(text, "\n")] = '\0';
		snprintf(out->error, sizeof(out->error), "%.255s", text);
		if (strstr(text, "ultiple") || strstr(text, "more than one"))
			return FOUND_SEVERAL;
		if (strstr(text, "o such") || strstr(text, "not found") || strstr(text, "does not exist"))
			return FOUND_NONE;
		return FOUND_ERROR;
	}
	/* One line per match: a name and an ID prefix matching two. */
	if (strchr(text, '\n') && strchr(text, '\n')[1])
		return FOUND_SEVERAL;
	if (sscanf(text, "%79s %ld %255s %4095s", out->id, &out->pid, out->name, out->cgroup) < 3)
		return FOUND_ERROR;
	if (out->cgroup[0] == '<' || out->cgroup[0] == '{')
		out->cgroup[0] = '\0';  /* no such field in this podman */
	return FOUND_ONE;
}

/* The directory of a found container's cgroup. */
static int container_dir(const char *runtime, const struct inspected *c, char *path, size_t len)
{
	char mount[PATH_MAX];
	int v2 = 0, err;

	if (c->pid <= 0)
		return -ESRCH;
	/* podman names it (relative to the hierarchy's root); docker does
	 * not: its main process's cgroup. */
	if (!strcmp(runtime, "podman") && c->cgroup[0] == '/' &&
	    !target_memory_mount(mount, sizeof(mount), &v2)) {
		snprintf(path, len, "%s%s", mount, c->cgroup);
		if (access(path, F_OK) == 0)
			return 0;
	}
	err = target_pid_cgroup((pid_t)c->pid, path, len);
	return err;
}

int container_resolve(const char *spec, char *path, size_t len, char *label, size_t llen)
{
	static const char *const runtimes[] = { "podman", "docker" };
	struct inspected found[2], *hit = NULL;
	const char *name = spec, *only = NULL, *rt = NULL, *why = NULL;
	char buf[PATH_MAX], *argv[MAX_WORDS];
	int tried = 0, err;

	if (!strncmp(spec, "podman:", 7) || !strncmp(spec, "docker:", 7)) {
		only = !strncmp(spec, "podman:", 7) ? "podman" : "docker";
		name = spec + 7;
	}
	for (size_t i = 0; i < 2; i++) {
		if (only && strcmp(only, runtimes[i]))
			continue;
		container_runtime_argv(runtimes[i], buf, sizeof(buf), argv, MAX_WORDS);
		if (!argv[0] || !installed(argv[0]))
			continue;
		tried++;
		switch (inspect(runtimes[i], name, &found[i])) {
		case FOUND_ONE:
			if (hit) {
				fprintf(stderr, "peakbpf: --container %s: matches a podman and a docker container: "
					"say podman:%s or docker:%s\n", spec, name, name);
				return EXIT_TARGET_AMBIGUOUS;
			}
			hit = &found[i];
			rt = runtimes[i];
			break;
		case FOUND_SEVERAL:
			fprintf(stderr, "peakbpf: --container %s: matches several %s containers (%s): give its "
				"full name or ID\n", spec, runtimes[i], found[i].error[0] ? found[i].error : "one a line");
			return EXIT_TARGET_AMBIGUOUS;
		case FOUND_ERROR:
			why = found[i].error;
			break;
		case FOUND_NONE:
			break;
		}
	}
	if (!tried) {
		fprintf(stderr, "peakbpf: --container %s: %s installed (or set $PEAKBPF_%s to its command)\n",
			spec, only ? (!strcmp(only, "podman") ? "podman is not" : "docker is not") :
			"neither podman nor docker is", only && !strcmp(only, "docker") ? "DOCKER" : "PODMAN");
		return EXIT_TARGET_RUNTIME_MISSING;
	}
	if (!hit) {
		fprintf(stderr, "peakbpf: --container %s: no such container%s%s\n", spec,
			why ? " (the runtime said: " : "", why ? why : "");
		if (why)
			fputs(")\n", stderr);
		return EXIT_TARGET_NOT_FOUND;
	}
	err = container_dir(rt, hit, path, len);
	if (err) {
		fprintf(stderr, "peakbpf: --container %s: %s\n", spec,
			err == -ESRCH ? "the container is not running (start it first)" : strerror(-err));
		return EXIT_TARGET_NOT_FOUND;
	}
	snprintf(label, llen, "container %s (%.12s, %s)", hit->name[0] == '/' ? hit->name + 1 : hit->name,
		 hit->id, rt);
	return 0;
}
