// SPDX-License-Identifier: MIT
/* libFuzzer: what peakbpf parses from /proc and cgroupfs: statm, PID
 * lists, mountinfo and /proc/PID/cgroup lines, cgroup paths and counters,
 * /proc/PID/stat's start time and peakbpf's cgroup names (src/lib/sources/source_proc.c,
 * src/lib/sources/cgroup_parse.c); /proc/PID/status's HugetlbPages and Seccomp
 * lines, a kernel release (src/base/hugetlb.c, src/base/bpf_refusal.c). */
#include <limits.h>
#include <stdbool.h>
#include <sys/types.h>
#include "fuzz.h"
#include "bpf_refusal.h"
#include "cgroup_parse.h"
#include "hugetlb.h"
#include "sources.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = fuzz_string(data, size), path[PATH_MAX], rel[PATH_MAX];
	struct mountinfo_entry me;
	struct proc_cgroup_line pl;
	struct cg_marker m;
	char name[CG_MARKER_MAX];
	unsigned long long start;
	uint64_t v;
	pid_t pids[16];
	size_t n;

	if (!s)
		return 0;
	parse_statm(s, &v);
	if (parse_pid_words(s, pids, 16, &n) == 0 && n > 16)
		abort();
	parse_mountinfo_line(s, &me);
	parse_proc_cgroup_line(s, &pl);
	if (cgroup_path_from_proc(s, size & 1, path, sizeof(path)) == 0 && !memchr(path, 0, sizeof(path)))
		abort();
	cgroup_rel_path(s, "/sys/fs/cgroup/x", rel, sizeof(rel));
	cgroup_rel_path("/sys/fs/cgroup", s, rel, sizeof(rel));
	list_has(s, " ,", "memory");
	parse_counter(s, &v);
	parse_stat_start_time(s, &start);
	if (hugetlb_parse_status(s, &v) == 0 && v % 1024)
		abort();        /* kB, in bytes */
	if (bpf_refusal_parse_seccomp(s) > 2)
		abort();
	bpf_refusal_kernel_before(s, 5, 11);
	/* A name that parses formats back to itself. */
	if (cg_marker_parse(s, &m) == 0 &&
	    (cg_marker_format(&m, name, sizeof(name)) || strcmp(name, s)))
		abort();
	free(s);
	return 0;
}
