// SPDX-License-Identifier: MIT
/* A helper expected and not used, said on stderr (env_check.h). */
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "env_check.h"

/* Every variable peakbpf, libpeakbpf and the Python package read. */
static const char *const known[] = {
	"PEAKBPF_HELPER",       /* the helper's socket */
	"PEAKBPF_CGROUP_ROOT",  /* where command mode makes its cgroup */
	"PEAKBPF_LIBRARY",      /* the Python package's libpeakbpf */
	"PEAKBPF_UNIQUE_HOOK",  /* the unique program's hook, forced (tests) */
	"PEAKBPF_STACKS_RING",  /* --stacks' ring, smaller (tests: src/lib/kernel/stacks.c) */
	"PEAKBPF_DOCKER",       /* the docker binary (src/cli/target_container.c) */
	"PEAKBPF_PODMAN",       /* the podman binary (src/cli/target_container.c) */
};

bool env_unknown_peakbpf(char *const *env, char *name, size_t len)
{
	for (; env && *env; env++) {
		size_t n = strcspn(*env, "=");
		bool ours = false;

		if (strncmp(*env, "PEAKBPF_", 8))
			continue;
		for (size_t i = 0; i < sizeof(known) / sizeof(known[0]) && !ours; i++)
			ours = strlen(known[i]) == n && !strncmp(*env, known[i], n);
		if (ours)
			continue;
		snprintf(name, len, "%.*s", (int)n, *env);
		return true;
	}
	return false;
}

void env_check_helper(bool helper_given, const char *bpf_load, const char *why)
{
	extern char **environ;
	static bool said;
	char name[64];
	bool unknown;

	if (said || (bpf_load && !strcmp(bpf_load, "helper")))
		return;
	unknown = env_unknown_peakbpf(environ, name, sizeof(name));
	if (!unknown && !helper_given)
		return;
	said = true;
	if (unknown)
		fprintf(stderr, "peakbpf: warning: %s is not one of peakbpf's variables (PEAKBPF_HELPER names "
			"the helper's socket); no helper was used: %s\n", name,
			bpf_load ? "BPF loaded here" : "a fallback measured, not exact (see not used:)");
	else
		fprintf(stderr, "peakbpf: warning: --helper was given and the helper was not used%s%s: %s\n",
			why && *why ? ": " : "", why && *why ? why : "",
			bpf_load ? "BPF loaded here" : "a fallback measured");
}
