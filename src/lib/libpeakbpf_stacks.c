// SPDX-License-Identifier: MIT
/* libpeakbpf_stacks.h: --stacks on the session's tree of its own load. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/utsname.h>
#include <linux/types.h>
#include "libpeakbpf_stacks.h"
#include "session_internal.h"
#include "stacks_api.h"
#include "stacks_fold.h"
#include "tracker_load.h"
#include "tracker_tree.h"

static struct stacks_reader *reader_of(struct session *s, unsigned *tree, int *why, struct tracker_load **load)
{
	struct source *k = s->kernel;
	struct tracker_tree *t = k && k->ops->tree ? k->ops->tree(k) : NULL;
	struct tracker_load *l = t ? tracker_tree__load(t) : NULL;

	*why = -ENOTCONN;       /* not the bpf source loaded here */
	*load = l;
	if (!l)
		return NULL;
	*tree = tracker_tree__index(t);
	return tracker_load__stacks(l, why);
}

int lib_stacks_poll(struct session *s)
{
	unsigned tree = 0;
	int why;
	struct tracker_load *l;
	struct stacks_reader *r = reader_of(s, &tree, &why, &l);

	return r ? stacks_drain(r, tree) : -EOPNOTSUPP;
}

static void say_why(const struct tracker_load *l, int why, char *summary, size_t len)
{
	char lacks[256];
	struct utsname u;

	if (why == -EOPNOTSUPP && l && tracker_load__stacks_lacks(l, lacks, sizeof(lacks)))
		snprintf(summary, len, "this kernel (Linux %s) lacks %s: --stacks needs x86-64 and Linux 6.1 or later "
			 "(docs/stacks.md)", uname(&u) ? "?" : u.release, lacks);
	else if (why == -ENOTCONN)
		snprintf(summary, len, "it needs the bpf source loaded by peakbpf itself (root, or CAP_BPF and "
			 "CAP_PERFMON; not through peakbpf serve, not a fallback)");
	else
		snprintf(summary, len, "this kernel refused --stacks' programs (exceptions:page_fault_user, "
			 "raw_syscalls:sys_exit, sched_process_fork/exec, mmap:exit_mmap): %s", strerror(-why));
}

/* The peak f names, for its stacks: 0, or -ENODATA said in summary. */
static int peak_of(const struct peakbpf_figure *f, struct stacks_peak *p, char *summary, size_t len)
{
	uint64_t ns, peak, anon, file, shmem, bound;
	int64_t procs;

	if (peakbpf_figure_peak_time(f, &ns) || peakbpf_figure_peak(f, &peak) ||
	    peakbpf_figure_breakdown(f, &anon, &file, &shmem, &procs)) {
		snprintf(summary, len, "the figure has no peak instant or breakdown: no stacks");
		return -ENODATA;
	}
	*p = (struct stacks_peak){ .peak_ns = ns, .peak_bytes = peak, .anon_bytes = anon, .file_bytes = file,
				   .shmem_bytes = shmem, .not_exact = !peakbpf_figure_exact(f),
				   .bound_bytes = peakbpf_figure_error_bound(f, &bound) ? ~0ULL : bound,
				   .reason = peakbpf_figure_reason(f) };
	return 0;
}

static enum stacks_format format_of(enum peakbpf_stacks_format fmt)
{
	return fmt == PEAKBPF_STACKS_SPEEDSCOPE ? STACKS_FORMAT_SPEEDSCOPE : STACKS_FORMAT_FOLDED;
}

/* The public handle of a stacks_file (stacks_fold.h). */
struct peakbpf_stacks_file {
	struct stacks_file *file;
};

int lib_stacks_file_open(FILE *out, enum peakbpf_stacks_format fmt, struct peakbpf_stacks_file **out_sf)
{
	struct peakbpf_stacks_file *sf;
	int err;

	*out_sf = NULL;
	if (fmt != PEAKBPF_STACKS_FOLDED && fmt != PEAKBPF_STACKS_SPEEDSCOPE)
		return -EINVAL;
	sf = calloc(1, sizeof(*sf));
	if (!sf)
		return -ENOMEM;
	err = stacks_file_open(out, format_of(fmt), &sf->file);
	if (err) {
		free(sf);
		return err;
	}
	*out_sf = sf;
	return 0;
}

int lib_stacks_file_window(struct session *s, struct peakbpf_stacks_file *sf, const struct peakbpf_figure *f,
			   const char *window, unsigned top, char *summary, size_t len)
{
	unsigned tree = 0;
	int why, err;
	struct tracker_load *l;
	struct stacks_reader *r = reader_of(s, &tree, &why, &l);
	struct stacks_peak p = { 0 };
	struct stacks_split split;

	if (!r) {
		say_why(l, why, summary, len);
		return -EOPNOTSUPP;
	}
	err = peak_of(f, &p, summary, len);
	if (err)
		return err;
	return stacks_file_window(sf->file, r, tree, &p, sysconf(_SC_PAGESIZE), window, top,
				  summary, len, &split);
}

size_t lib_stacks_file_best(const struct peakbpf_stacks_file *sf)
{
	return stacks_file_best(sf->file);
}

int lib_stacks_file_close(struct peakbpf_stacks_file *sf)
{
	int err;

	if (!sf)
		return 0;
	err = stacks_file_close(sf->file);
	free(sf);
	return err;
}

int lib_stacks_write(struct session *s, const struct peakbpf_figure *f, enum peakbpf_stacks_format fmt, FILE *out,
		     unsigned top, char *summary, size_t len)
{
	struct peakbpf_stacks_file *sf;
	int err = lib_stacks_file_open(out, fmt, &sf);

	if (err) {
		snprintf(summary, len, "%s", err == -EINVAL ? "no such format of the stacks" : strerror(-err));
		return err;
	}
	err = lib_stacks_file_window(s, sf, f, NULL, top, summary, len);
	if (!err)
		return lib_stacks_file_close(sf);
	lib_stacks_file_close(sf);
	return err;
}

int lib_stacks_why(struct session *s, char *why, size_t len)
{
	unsigned tree = 0;
	int err;
	struct tracker_load *l;

	if (reader_of(s, &tree, &err, &l))
		return 0;
	say_why(l, err, why, len);
	return err ? err : -EOPNOTSUPP;
}
