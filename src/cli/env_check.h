/* SPDX-License-Identifier: MIT */
/*
 * A helper that was expected and not used, said on stderr (issue 36): a
 * wrongly named PEAKBPF_* variable silently fell back to a labelled but
 * sampled figure, which a CI log does not show.
 */
#ifndef PEAKBPF_ENV_CHECK_H
#define PEAKBPF_ENV_CHECK_H

#include <stdbool.h>
#include <stddef.h>

/* The first PEAKBPF_* name of env (NAME=VALUE strings, NULL-ended) that
 * is none of peakbpf's variables, into name[len]; false: none. */
bool env_unknown_peakbpf(char *const *env, char *name, size_t len);
/* Once a process: when the session (bpf_load: peakbpf_bpf_load's word)
 * did not go through the helper though one was expected (--helper given,
 * or a PEAKBPF_* variable that is not peakbpf's, likely a misspelt
 * PEAKBPF_HELPER), one line on stderr; why: the session's reason, or NULL. */
void env_check_helper(bool helper_given, const char *bpf_load, const char *why);

/* The same for session s: its bpf_load, and the why of its "helper: "
 * note. */
struct peakbpf_session;
void env_check_session(bool helper_given, const struct peakbpf_session *s);

#endif
