// SPDX-License-Identifier: MIT
/* Command strings as argvs, and argvs as shell text (shell_words.h). */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "shell_words.h"

#define DEFAULT_SHELL "/bin/sh"

static bool is_blank(char c)
{
	return c == ' ' || c == '\t' || c == '\n';
}

static bool is_plain_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       (c && strchr("-_./:,+@%^=", c));
}

void shell_argv_free(char **argv)
{
	for (char **a = argv; a && *a; a++)
		free(*a);
	free(argv);
}

/* One word from *sp (past leading blanks), unquoted into out; advances *sp.
 * 1: a word; 0: none left; -EINVAL: an unclosed quote. */
static int next_word(const char **sp, char *out)
{
	const char *s = *sp;
	char quote = 0;
	size_t n = 0;

	while (is_blank(*s))
		s++;
	if (!*s)
		return 0;
	for (; *s && (quote || !is_blank(*s)); s++) {
		if (quote && *s == quote) {
			quote = 0;
		} else if (!quote && (*s == '\'' || *s == '"')) {
			quote = *s;
		} else if (*s == '\\' && quote != '\'' && s[1]) {
			out[n++] = *++s;
		} else {
			out[n++] = *s;
		}
	}
	out[n] = '\0';
	*sp = s;
	return quote ? -EINVAL : 1;
}

char **shell_split(const char *s)
{
	size_t len = strlen(s), n = 0;
	char **argv = calloc(len / 2 + 2, sizeof(char *));   /* words are at most every other byte */
	char *word = malloc(len + 1);
	int err = -ENOMEM, got;

	if (!argv || !word)
		goto cleanup;
	while ((got = next_word(&s, word)) > 0) {
		argv[n] = strdup(word);
		if (!argv[n++])
			goto cleanup;
	}
	err = got < 0 ? got : n ? 0 : -EINVAL;
cleanup:
	free(word);
	if (err) {
		shell_argv_free(argv);
		errno = -err;
		return NULL;
	}
	return argv;
}

bool shell_is_plain(const char *s)
{
	bool first = true, any = false;

	for (; *s; s++) {
		if (is_blank(*s)) {
			first = !any;
			continue;
		}
		if (!is_plain_char(*s) || (first && *s == '='))
			return false;
		any = true;
	}
	return any;
}

/* Whether the shell would find name as a program (not a builtin). */
static bool is_program(const char *name)
{
	const char *path = getenv("PATH");
	char buf[PATH_MAX];

	if (strchr(name, '/'))
		return true;
	if (!path)
		path = "/usr/local/bin:/usr/bin:/bin";
	for (const char *p = path; *p;) {
		size_t n = strcspn(p, ":");

		if (n && snprintf(buf, sizeof(buf), "%.*s/%s", (int)n, p, name) < (int)sizeof(buf) &&
		    access(buf, X_OK) == 0)
			return true;
		p += n + (p[n] == ':');
	}
	return false;
}

char **shell_command_argv(const char *s, const struct shell_mode *mode)
{
	char **argv;

	if (mode && mode->none)
		return shell_split(s);
	if (shell_is_plain(s)) {
		argv = shell_split(s);
		if (!argv || is_program(argv[0]))
			return argv;
		shell_argv_free(argv);
	}
	argv = calloc(4, sizeof(char *));
	if (!argv)
		return NULL;
	argv[0] = strdup(mode && mode->shell ? mode->shell : DEFAULT_SHELL);
	argv[1] = strdup("-c");
	argv[2] = strdup(s);
	if (!argv[0] || !argv[1] || !argv[2]) {
		shell_argv_free(argv);
		errno = ENOMEM;
		return NULL;
	}
	return argv;
}

char *shell_quote_argv(char *const *argv)
{
	char *text = NULL;
	size_t size = 0;
	FILE *out = open_memstream(&text, &size);

	if (!out)
		return NULL;
	for (char *const *a = argv; *a; a++) {
		const char *w = *a;
		bool plain = *w != '\0';

		for (const char *c = w; *c; c++)
			plain = plain && is_plain_char(*c);
		if (a != argv)
			fputc(' ', out);
		if (plain) {
			fputs(w, out);
			continue;
		}
		fputc('\'', out);
		for (; *w; w++) {
			if (*w == '\'')
				fputs("'\\''", out);
			else
				fputc(*w, out);
		}
		fputc('\'', out);
	}
	if (fclose(out)) {
		free(text);
		return NULL;
	}
	return text;
}
