// SPDX-License-Identifier: MIT
/* The cgroup source's parsers: see cgroup_parse.h. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cgroup_parse.h"

bool list_has(const char *list, const char *seps, const char *word)
{
	size_t wlen = strlen(word);
	const char *p = list;

	if (!wlen)
		return false;
	while (*p) {
		size_t n;

		p += strspn(p, seps);
		n = strcspn(p, seps);
		if (n == wlen && !strncmp(p, word, n))
			return true;
		p += n;
	}
	return false;
}

int parse_counter(const char *text, uint64_t *value)
{
	unsigned long long v;
	char *end;

	/* strtoull would take a sign and leading blanks: a counter has neither. */
	if (*text < '0' || *text > '9')
		return -EINVAL;
	errno = 0;
	v = strtoull(text, &end, 10);
	if (errno == ERANGE)
		return -ERANGE;
	if (*end == '\n')
		end++;
	if (*end)
		return -EINVAL;
	*value = v;
	return 0;
}

/* Copy the next space-separated field of *p into out, decoding the octal
 * escapes mountinfo uses for blanks and backslashes. */
static int mountinfo_field(const char **p, char *out, size_t len)
{
	const char *s = *p;
	size_t n = 0;

	while (*s == ' ')
		s++;
	if (!*s || *s == '\n')
		return -EINVAL;
	while (*s && *s != ' ' && *s != '\n') {
		char c = *s;

		if (c == '\\' && s[1] >= '0' && s[1] <= '3' && s[2] >= '0' && s[2] <= '7' &&
		    s[3] >= '0' && s[3] <= '7') {
			c = (char)((s[1] - '0') * 64 + (s[2] - '0') * 8 + (s[3] - '0'));
			s += 3;
		}
		if (n + 1 >= len)
			return -ENAMETOOLONG;
		out[n++] = c;
		s++;
	}
	out[n] = '\0';
	*p = s;
	return 0;
}

/*
 * "36 35 98:0 /mnt1 /mnt2 rw,noatime master:1 - ext3 /dev/root rw,errors=continue"
 * id parent dev root mount-point options [optional...] - fstype source super-options
 */
int parse_mountinfo_line(const char *line, struct mountinfo_entry *e)
{
	char skip[PATH_MAX];
	const char *p = line;
	int i, err;

	for (i = 0; i < 3; i++) {               /* id, parent id, major:minor */
		err = mountinfo_field(&p, skip, sizeof(skip));
		if (err)
			return err;
	}
	err = mountinfo_field(&p, e->root, sizeof(e->root));
	if (!err)
		err = mountinfo_field(&p, e->mount_point, sizeof(e->mount_point));
	if (!err)
		err = mountinfo_field(&p, skip, sizeof(skip));  /* mount options */
	if (err)
		return err;
	/* Optional fields up to the lone "-". */
	for (;;) {
		err = mountinfo_field(&p, skip, sizeof(skip));
		if (err)
			return err == -ENAMETOOLONG ? -EINVAL : err;
		if (!strcmp(skip, "-"))
			break;
	}
	err = mountinfo_field(&p, e->fstype, sizeof(e->fstype));
	if (!err)
		err = mountinfo_field(&p, skip, sizeof(skip));  /* source */
	if (!err)
		err = mountinfo_field(&p, e->super_options, sizeof(e->super_options));
	return err;
}

int parse_proc_cgroup_line(const char *line, struct proc_cgroup_line *out)
{
	const char *c1 = strchr(line, ':'), *c2;
	unsigned long long id;
	size_t n;
	char *end;

	if (!c1 || *line < '0' || *line > '9')
		return -EINVAL;
	c2 = strchr(c1 + 1, ':');
	if (!c2)
		return -EINVAL;
	errno = 0;
	id = strtoull(line, &end, 10);
	if (errno == ERANGE || id > ULONG_MAX)
		return -ERANGE;
	if (end != c1)
		return -EINVAL;
	n = (size_t)(c2 - c1 - 1);
	if (n >= sizeof(out->controllers))
		return -ENAMETOOLONG;
	memcpy(out->controllers, c1 + 1, n);
	out->controllers[n] = '\0';
	n = strcspn(c2 + 1, "\n");
	if (n == 0 || c2[1] != '/')
		return -EINVAL;
	if (n >= sizeof(out->path))
		return -ENAMETOOLONG;
	memcpy(out->path, c2 + 1, n);
	out->path[n] = '\0';
	out->hierarchy = (unsigned long)id;
	return 0;
}

int cgroup_path_from_proc(const char *text, bool v2, char *path, size_t len)
{
	struct proc_cgroup_line *l = malloc(sizeof(*l));
	const char *p = text;
	char line[PATH_MAX + 300];
	int ret = -ENOENT;

	if (!l)
		return -ENOMEM;
	while (*p) {
		size_t n = strcspn(p, "\n");
		bool match;
		int err;

		if (n >= sizeof(line)) {
			ret = -ENAMETOOLONG;
			goto cleanup;
		}
		memcpy(line, p, n);
		line[n] = '\0';
		p += n + (p[n] == '\n');
		if (!n)
			continue;
		err = parse_proc_cgroup_line(line, l);
		if (err) {
			ret = err;
			goto cleanup;
		}
		match = v2 ? l->hierarchy == 0 && !l->controllers[0] : list_has(l->controllers, ",", "memory");
		if (!match)
			continue;
		if (strlen(l->path) >= len) {
			ret = -ENAMETOOLONG;
			goto cleanup;
		}
		strcpy(path, l->path);
		ret = 0;
		goto cleanup;
	}
cleanup:
	free(l);
	return ret;
}

int cgroup_rel_path(const char *mount_root, const char *path, char *out, size_t len)
{
	size_t rlen = strlen(mount_root);
	const char *rest;

	while (rlen > 1 && mount_root[rlen - 1] == '/')
		rlen--;
	if (rlen == 1 && mount_root[0] == '/')
		rest = path;
	else if (!strncmp(path, mount_root, rlen) && (path[rlen] == '/' || !path[rlen]))
		rest = path + rlen;
	else
		return -ENOENT;
	if (!*rest)
		rest = "/";
	if (*rest != '/')
		return -EINVAL;
	if (strlen(rest) >= len)
		return -ENAMETOOLONG;
	strcpy(out, rest);
	return 0;
}

int cg_marker_format(const struct cg_marker *m, char *name, size_t len)
{
	int n = snprintf(name, len, CG_MARKER_PREFIX "%d-%llu-%llu", m->pid, m->start, m->pidns);

	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

/* A decimal number without sign, blank or leading zero (but "0" itself),
 * ended by stop; *p moves past the stop character. */
static int marker_number(const char **p, char stop, unsigned long long *v)
{
	const char *s = *p;
	char *end;

	if (*s < '0' || *s > '9' || (s[0] == '0' && s[1] >= '0' && s[1] <= '9'))
		return -EINVAL;
	errno = 0;
	*v = strtoull(s, &end, 10);
	if (errno || *end != stop)
		return -EINVAL;
	*p = stop ? end + 1 : end;
	return 0;
}

int cg_marker_parse(const char *name, struct cg_marker *m)
{
	const char *p = name;
	unsigned long long pid;

	if (strncmp(p, CG_MARKER_PREFIX, strlen(CG_MARKER_PREFIX)))
		return -EINVAL;
	p += strlen(CG_MARKER_PREFIX);
	if (marker_number(&p, '-', &pid) || marker_number(&p, '-', &m->start) ||
	    marker_number(&p, '\0', &m->pidns))
		return -EINVAL;
	if (pid == 0 || pid > INT_MAX || m->pidns == 0)
		return -EINVAL;
	m->pid = (int)pid;
	return 0;
}

int parse_stat_start_time(const char *text, unsigned long long *start)
{
	/* The command name ends at the last ')'; field 3 follows it. */
	const char *p = strrchr(text, ')');
	char *end;

	if (!p)
		return -EINVAL;
	p++;
	for (int field = 3; field < 22; field++) {
		if (*p != ' ')
			return -EINVAL;
		p = strchr(p + 1, ' ');
		if (!p)
			return -EINVAL;
	}
	p++;
	if (*p < '0' || *p > '9')
		return -EINVAL;
	errno = 0;
	*start = strtoull(p, &end, 10);
	if (errno == ERANGE)
		return -ERANGE;
	if (*end != ' ' && *end != '\n' && *end)
		return -EINVAL;
	return 0;
}
