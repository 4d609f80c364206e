// SPDX-License-Identifier: MIT
/* A container run's command line (container_argv.h): pure, unit-tested. */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include "container_argv.h"

/* The index of "run" in argv (RUNTIME [GLOBAL OPTIONS] [container] run),
 * 0 if none; *runtime the runtime's name. */
int container_argv_run_index(char **argv, const char **runtime)
{
	const char *base = strrchr(argv[0], '/') ? strrchr(argv[0], '/') + 1 : argv[0];

	if (!strcmp(base, "docker"))
		*runtime = "docker";
	else if (!strcmp(base, "podman"))
		*runtime = "podman";
	else
		return 0;
	for (int i = 1; argv[i]; i++) {
		if (!strcmp(argv[i], "run"))
			return i;
		if (argv[i][0] != '-' && strcmp(argv[i], "container") && argv[i - 1][0] != '-')
			return 0;       /* another subcommand */
	}
	return 0;
}

/* Whether an option of run (after index i) is --NAME or --NAME=...; its
 * value in *value when it has one. Which options take a value is the
 * runtime's to know: every word is looked at, up to a "--" (a container
 * command's own --NAME would be taken for run's). */
bool container_argv_option(char **argv, int i, const char *name, const char **value)
{
	size_t n = strlen(name);

	for (int k = i + 1; argv[k] && strcmp(argv[k], "--"); k++) {
		if (!strncmp(argv[k], name, n) && (argv[k][n] == '\0' || argv[k][n] == '=')) {
			if (value)
				*value = argv[k][n] == '=' ? argv[k] + n + 1 : argv[k + 1];
			return true;
		}
	}
	return false;
}

char **container_argv_inject(char **argv, int run, const char *opt1, const char *opt2)
{
	int n = 0, k = 0;
	char **out;

	while (argv[n])
		n++;
	out = calloc((size_t)n + 3, sizeof(char *));
	if (!out)
		return NULL;
	for (int j = 0; j < n; j++) {
		out[k++] = argv[j];
		if (j == run) {
			out[k++] = (char *)opt1;
			out[k++] = (char *)opt2;
		}
	}
	out[k] = NULL;
	return out;
}
