// SPDX-License-Identifier: MIT
/* env_check_helper for a session (env_check.h): apart, so that the unit
 * test of env_check.c links no libpeakbpf. */
#include <string.h>
#include <peakbpf/peakbpf.h>
#include "env_check.h"

void env_check_session(bool helper_given, const struct peakbpf_session *s)
{
	const char *why = NULL, *n;

	for (size_t i = 0; (n = peakbpf_note(s, i)); i++)
		if (!strncmp(n, "helper: ", 8) && !why)
			why = n + 8;
	env_check_helper(helper_given, peakbpf_bpf_load(s), why);
}
