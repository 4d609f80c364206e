// SPDX-License-Identifier: MIT
/* hugetlb pages beside RSS (hugetlb.h). */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "fileutil.h"
#include "hugetlb.h"

int hugetlb_parse_status(const char *status, uint64_t *bytes)
{
	for (const char *l = status; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
		unsigned long long kb;
		char *end;

		if (strncmp(l, "HugetlbPages:", 13))
			continue;
		errno = 0;
		kb = strtoull(l + 13, &end, 10);
		if (errno || end == l + 13 || strncmp(end, " kB", 3) || kb > UINT64_MAX / 1024)
			return -EINVAL;
		*bytes = (uint64_t)kb * 1024;
		return 0;
	}
	return -ENOENT;
}

/* A number file of a hugepages-SIZE directory; 0 when unreadable. */
static unsigned long long read_count(const char *dir, const char *size, const char *name)
{
	char path[512], *text = NULL, *end;
	unsigned long long v = 0;

	snprintf(path, sizeof(path), "%s/%s/%s", dir, size, name);
	if (read_text_file(path, &text, NULL) == 0) {
		errno = 0;
		v = strtoull(text, &end, 10);
		if (errno || end == text)
			v = 0;
	}
	free(text);
	return v;
}

bool hugetlb_possible(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	bool any = false;

	if (!d)
		return false;
	while (!any && (de = readdir(d)))
		if (!strncmp(de->d_name, "hugepages-", 10))
			any = read_count(dir, de->d_name, "nr_hugepages") ||
			      read_count(dir, de->d_name, "nr_overcommit_hugepages");
	closedir(d);
	return any;
}
