/* SPDX-License-Identifier: MIT */
/*
 * The sources that need no BPF (source.h has the interface): a cgroup's own
 * memory peak, a /proc sampler and getrusage. Also the /proc parsers they
 * use, declared here so that the unit tests can reach them (the cgroup
 * source's are in cgroup_parse.h).
 */
#ifndef PEAKBPF_SOURCES_H
#define PEAKBPF_SOURCES_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "source.h"

/* Where the cgroup source looks when neither the option nor the
 * environment names a root. */
#define CGROUP_ROOT_DEFAULT "/sys/fs/cgroup"
#define CGROUP_ROOT_ENV "PEAKBPF_CGROUP_ROOT"
#define PROC_SAMPLE_INTERVAL_DEFAULT_NS UINT64_C(100000000)     /* 100 ms */
#define PROC_SAMPLE_INTERVAL_MIN_NS UINT64_C(1000000)           /* 1 ms */

struct source_opts {
	/* Where cgroup hierarchies are mounted (a cgroup file system, see
	 * cgroup_fs.c); NULL: $PEAKBPF_CGROUP_ROOT, else /sys/fs/cgroup. */
	const char *cgroup_root;
	/* peakbpf's own cgroup, as a path inside the memory hierarchy ("/a/b");
	 * NULL: read from /proc/self/cgroup. Tests use it to place peakbpf
	 * somewhere inside a fixture tree (tests/unit/cgroup_fixture.c). */
	const char *self_cgroup;
	/* true: peakbpf runs the command and can put it in a cgroup of its own */
	bool command_mode;
	/* proc sampler period; 0: 100 ms; at least 1 ms */
	uint64_t sample_interval_ns;
	/* proc sampler: read each process's hugetlb pages too (HugetlbPages
	 * in /proc/PID/status), where this machine can hold any */
	bool hugetlb;
};

/*
 * Each returns 0 and *out, or a negative errno and a one-line reason in why
 * (may be NULL): "no memory controller mounted under /sys/fs/cgroup",
 * "cgroup not writable: Permission denied", ... On failure *out is NULL and
 * nothing is left behind. source.name is "cgroup", "proc" or "rusage";
 * figure.source says "cgroup-v1" or "cgroup-v2" for the cgroup source.
 * Strings a figure points to stay valid until the source is destroyed.
 */
/* ---- every source's open: 0, or a negative errno (and why, where taken) ---- */

struct host_facts;
struct tracker_load;

struct bpf_source_opts {
	uint32_t max_tracked;
	uint32_t record_ring_bytes;
	bool command_mode;      /* roots are commands stopped before exec */
	bool with_unique;       /* tracker_opts: the tree will have a cgroup of its own */
	/* Keep the process's load after this source closes, for the next
	 * (bpf_source_open takes a tree of it while the options fit). */
	bool keep_loaded;
	bool stacks;            /* tracker_opts: with --stacks' programs */
	/* tracker_opts: the tree takes no cgroup target (their programs stay
	 * out of the load; bpf_add_cgroup then fails with -EOPNOTSUPP). */
	bool without_cgroup_targets;
};

/* bpf (source_bpf.c): opens, loads and attaches; fills host's BPF facts.
 * host must outlive it. */
int bpf_source_open(const struct bpf_source_opts *o, struct host_facts *host,
		    struct source **out);
/* The bpf source on tree of shared's load (tracker_tree__add; max_tracked
 * caps the tree's mms and processes); destroying it clears the tree. */
int bpf_source_open_tree(struct tracker_load *shared, unsigned tree, const struct bpf_source_opts *o,
			 struct host_facts *host, struct source **out);
/* Unload the process's load now if no source uses it, else with its last
 * source; and keep it no more. */
void bpf_source_unload(void);
/* bpf through the helper, peakbpf serve (source_helper.c): connect to the
 * helper at path and open a tree (record: with the record of the sum,
 * drain_sums); fills host's BPF facts. The source's figures say "bpf" and
 * their scope names the helper. */
int helper_source_open(const char *path, uint32_t max_tracked, bool command_mode, bool record,
		       struct host_facts *host, struct source **out, char *why, size_t whylen);
bool helper_socket_exists(const char *path);
/* cgroup v2 or v1, /proc, rusage: one signature (source_open_fn). */
typedef int (*source_open_fn)(const struct source_opts *o, struct source **out,
			      char *why, size_t whylen);
int cgroup_source_open(const struct source_opts *o, struct source **out, char *why, size_t whylen);
int proc_source_open(const struct source_opts *o, struct source **out, char *why, size_t whylen);
int rusage_source_open(const struct source_opts *o, struct source **out, char *why, size_t whylen);

/*
 * Command mode: true when the cgroup source made a cgroup of the tree's own
 * (figures are exclusive). When it could not (no-internal-process rule, not
 * writable, ...), cgroup_source_open still succeeds if peakbpf's own cgroup
 * keeps a peak: the command runs there, the figure is exclusive: false, and
 * why holds the reason it could not own one (why is "" otherwise).
 * Attach mode: always false. False for any other source.
 */
bool cgroup_source_is_exclusive(const struct source *s);

/* cgroup_source_open's -CGROUP_ROOT_UNSAFE: the cgroup root was refused as
 * unsafe (a symlink; as root, not root's or writable by others), which
 * session_open passes on and peakbpf exits EXIT_CGROUP_ROOT_UNSAFE for. */
#define CGROUP_ROOT_UNSAFE 4096

/* Command mode, a cgroup of the tree's own: its directory, held open since
 * it was made (fstat it rather than stat its path, which a rename could
 * point elsewhere); -1 otherwise. Stays the source's. */
int cgroup_source_own_dir_fd(const struct source *s);

/* ---- parsers (pure: no I/O) ---------------------------------------------- */

/* /proc/PID/statm: the resident pages (2nd field). 0, -EINVAL or -ERANGE. */
int parse_statm(const char *text, uint64_t *resident_pages);

/*
 * A whitespace-separated list of PIDs, as /proc/PID/task/TID/children and
 * cgroup.procs hold ("12 345 " / "12\n345\n"); each in [1, INT_MAX]. Fills
 * up to max and *count. 0, -EINVAL, -ERANGE, or -E2BIG (more than max).
 */
int parse_pid_words(const char *text, pid_t *pids, size_t max, size_t *count);

#endif
