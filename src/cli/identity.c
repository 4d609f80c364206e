// SPDX-License-Identifier: MIT
#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "identity.h"

/* A whole decimal number that fits an id; -1 when s is not one. */
static long long numeric_id(const char *s)
{
	char *end;
	long long v;

	if (!*s || *s < '0' || *s > '9')
		return -1;
	errno = 0;
	v = strtoll(s, &end, 10);
	if (errno || *end || v < 0 || v > 0x7fffffffLL)
		return -1;
	return v;
}

static int resolve_group(const char *name, gid_t *gid, char *err, size_t errlen)
{
	long long n = numeric_id(name);
	struct group *gr;

	if (n >= 0) {
		*gid = (gid_t)n;
		return 0;
	}
	errno = 0;
	gr = getgrnam(name);
	if (!gr) {
		snprintf(err, errlen, "--user: no such group '%s' (a name, or a numeric gid)", name);
		return -ENOENT;
	}
	*gid = gr->gr_gid;
	return 0;
}

int identity_resolve(const char *spec, struct identity *id, char *err, size_t errlen)
{
	char user[sizeof(id->name)];
	const char *colon = strchr(spec, ':');
	size_t len = colon ? (size_t)(colon - spec) : strlen(spec);
	struct passwd *pw;
	long long n;

	memset(id, 0, sizeof(*id));
	if (!len || len >= sizeof(user) || (colon && !colon[1])) {
		snprintf(err, errlen, "--user: '%s' is not USER or USER:GROUP", spec);
		return -EINVAL;
	}
	memcpy(user, spec, len);
	user[len] = '\0';
	n = numeric_id(user);
	errno = 0;
	pw = n >= 0 ? getpwuid((uid_t)n) : getpwnam(user);
	if (!pw && n < 0) {
		snprintf(err, errlen, "--user: no such user '%s' (a name, or a numeric uid)", user);
		return -ENOENT;
	}
	id->uid = pw ? pw->pw_uid : (uid_t)n;
	id->gid = pw ? pw->pw_gid : (gid_t)n;
	snprintf(id->name, sizeof(id->name), "%s", pw ? pw->pw_name : user);
	if (colon && resolve_group(colon + 1, &id->gid, err, errlen))
		return -ENOENT;
	id->n_groups = IDENTITY_MAX_GROUPS;
	if (!pw)
		id->n_groups = 0;
	else if (getgrouplist(pw->pw_name, id->gid, id->groups, &id->n_groups) < 0) {
		snprintf(err, errlen, "--user: '%s' is in more than %d groups", user, IDENTITY_MAX_GROUPS);
		return -E2BIG;
	}
	return 0;
}

int identity_apply(const struct identity *id)
{
	if (setgroups((size_t)id->n_groups, id->groups) || setgid(id->gid) || setuid(id->uid))
		return -errno;
	return 0;
}
