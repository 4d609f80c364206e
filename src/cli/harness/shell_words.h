/* SPDX-License-Identifier: MIT */
/*
 * Command strings (-c, a positional "cmd args", --prepare, --setup, ...):
 * how one becomes an argv, and how an argv is shown so that it can be
 * pasted back into a shell.
 *
 * A string runs through the shell (SHELL -c STRING) unless it has no shell
 * syntax: plain words of letters, digits and -_./:,+@%^= (no '=' in the
 * first word: that is an assignment) whose first word names a program (with
 * a '/', or found in PATH: a builtin such as "exit 3" needs the shell).
 * Such a string is split on blanks and exec'd directly, so that the shell's
 * own memory (~1.7 MiB) is not in the figure. --shell=none (-N) splits
 * every string and execs it: quotes ('..', "..") and backslashes group and
 * escape as in sh, and nothing else is special.
 */
#ifndef PEAKBPF_SHELL_WORDS_H
#define PEAKBPF_SHELL_WORDS_H

#include <stdbool.h>

/* How command strings run: through SHELL, or never through a shell. */
struct shell_mode {
	bool none;              /* -N, --shell=none */
	const char *shell;      /* --shell=PATH; NULL: /bin/sh */
};

/* Split s into words (quotes and backslashes as in sh). A NULL-terminated,
 * malloc'd argv of malloc'd words (free with shell_argv_free), or NULL with
 * errno EINVAL (an unclosed quote, no word at all) or ENOMEM. */
char **shell_split(const char *s);
/* Whether s has no shell syntax (see above): only plain words. */
bool shell_is_plain(const char *s);
/* The argv that runs s: split (plain and a program, or mode->none), or
 * SHELL -c s. NULL with errno as shell_split. */
char **shell_command_argv(const char *s, const struct shell_mode *mode);
void shell_argv_free(char **argv);
/* argv as one line a shell reads back: words with nothing special as they
 * are, others in single quotes ('it'\''s'). malloc'd; NULL on ENOMEM. */
char *shell_quote_argv(char *const *argv);

#endif
