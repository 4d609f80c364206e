/* SPDX-License-Identifier: MIT */
/*
 * hugetlb pages (MAP_HUGETLB, SHM_HUGETLB, hugetlbfs): not in RSS, which
 * counts only the mm's anon, file and shmem counters; the kernel keeps them
 * per address space apart (HugetlbPages in /proc/PID/status). docs/sources.md,
 * "hugetlb".
 */
#ifndef PEAKBPF_HUGETLB_H
#define PEAKBPF_HUGETLB_H

#include <stdbool.h>
#include <stdint.h>

/* The HugetlbPages: line of a /proc/PID/status text, in bytes: 0, or
 * -EINVAL (malformed), -ENOENT (no such line: a kernel without
 * CONFIG_HUGETLB_PAGE). */
int hugetlb_parse_status(const char *status, uint64_t *bytes);
/* Can any process here hold hugetlb pages: some size in DIR (normally
 * /sys/kernel/mm/hugepages) has nr_hugepages or nr_overcommit_hugepages
 * above 0? False where DIR is missing (no hugetlb in the kernel). */
bool hugetlb_possible(const char *dir);

#endif
