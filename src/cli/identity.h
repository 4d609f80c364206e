/* SPDX-License-Identifier: MIT */
/* --user: the identity the command runs as, resolved before the fork (the
 * user and group databases are not safe to read in a forked child). */
#ifndef PEAKBPF_IDENTITY_H
#define PEAKBPF_IDENTITY_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#define IDENTITY_MAX_GROUPS 64

struct identity {
	uid_t uid;
	gid_t gid;
	gid_t groups[IDENTITY_MAX_GROUPS];      /* supplementary groups */
	int n_groups;
	char name[64];          /* the user, as given or found */
};

/*
 * Resolve "USER[:GROUP]": USER a name or a numeric uid, GROUP a name or a
 * numeric gid (default: the user's primary group, or the uid's number when
 * it has no entry). Supplementary groups are the user's (none for a uid
 * without an entry). 0, or -errno with a one-line reason in err.
 */
int identity_resolve(const char *spec, struct identity *id, char *err, size_t errlen);
/* In the forked child, before exec: groups, gid, then uid. 0 or -errno.
 * Only system calls: safe after fork in a threaded program. */
int identity_apply(const struct identity *id);

#endif
