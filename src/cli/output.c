// SPDX-License-Identifier: MIT
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "fileutil.h"
#include "output.h"

FILE *output_open(const char *path, bool *created)
{
	/* Emptied by the first record (output_write), not before. */
	return safe_fopen(path, created);
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
