// SPDX-License-Identifier: MIT
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "output.h"

FILE *output_open(const char *path)
{
	const char *uid = secure_getenv("SUDO_UID"), *gid = secure_getenv("SUDO_GID");
	int fd = open(path, O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
	FILE *f;

	if (fd < 0)
		return NULL;
	/* Best effort: if it fails, the file stays root's. */
	if (geteuid() == 0 && uid && gid && fchown(fd, (uid_t)strtoul(uid, NULL, 10),
						   (gid_t)strtoul(gid, NULL, 10)))
		errno = 0;
	f = fdopen(fd, "w");
	if (!f)
		close(fd);
	return f;
}

void output_write(FILE *f, const char *record, int *first_errno)
{
	errno = 0;
	if (f != stdout && ftell(f) == 0 && ftruncate(fileno(f), 0) && !*first_errno)
		*first_errno = errno;   /* the first record: what was there goes now */
	fputs(record, f);
	if ((fflush(f) || ferror(f)) && !*first_errno)
		*first_errno = errno ? errno : EIO;
}

int output_check(int write_errno, const char *what, int command_status)
{
	if (!write_errno)
		return 0;
	fprintf(stderr, "peakbpf: cannot write %s: %s (the command's own exit status was %d)\n",
		what, strerror(write_errno), command_status);
	return -write_errno;
}
