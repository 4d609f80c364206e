/* SPDX-License-Identifier: MIT */
/*
 * --stacks (docs/stacks.md): at the peak instant, the tree's resident
 * pages by the user stack of the fault that brought each in, as folded
 * stacks or speedscope JSON. Not (yet) part of libpeakbpf.so's ABI: these calls are hidden,
 * taken from libpeakbpf.a by peakbpf(1) alone, until the library and the
 * Python package get --stacks (issue 35).
 */
#ifndef PEAKBPF_PEAKBPF_STACKS_H
#define PEAKBPF_PEAKBPF_STACKS_H

#include <stdio.h>
#include <peakbpf/peakbpf.h>

/* peakbpf_open with --stacks' programs loaded here (never through
 * peakbpf serve). A session that cannot have them (a kernel that lacks
 * what they need or refuses them, no bpf source here) is not opened:
 * -errno, and why says why in one line, so that nothing runs without. */
int peakbpf_open_stacks(const struct peakbpf_opts *opts, struct peakbpf_session **out, char *why,
			size_t why_len);
/* Take the kernel's ring of faults and unmaps (call it every few tens of
 * ms while the tree runs, as peakbpf_timeline_poll). -EOPNOTSUPP: no stacks. */
int peakbpf_stacks_poll(struct peakbpf_session *s);
/* The file's format (docs/stacks.md): folded stacks, or speedscope's
 * JSON file format (one "sampled" profile in bytes). */
enum peakbpf_stacks_format {
	PEAKBPF_STACKS_FOLDED,
	PEAKBPF_STACKS_SPEEDSCOPE,
};

/* At f's peak instant: write the stacks to out in format fmt, and a
 * summary of the top stacks and the buckets into summary (why, on
 * -EOPNOTSUPP). */
int peakbpf_stacks_write(struct peakbpf_session *s, const struct peakbpf_figure *f, enum peakbpf_stacks_format fmt,
			 FILE *out, unsigned top, char *summary, size_t len);

/* A file of several windows' stacks (-i, or a window closed on demand),
 * each written as its window closes, at its own peak instant (the cut
 * only moves on: a window's stacks are written before the next is read).
 * open, then a window at each close (window: its name, a frame above its
 * folded lines or its speedscope profile's name; NULL for the one window
 * of a run), then close (speedscope: the frames, and the window of the
 * highest peak shown first). */
struct peakbpf_stacks_file;

int peakbpf_stacks_file_open(FILE *out, enum peakbpf_stacks_format fmt, struct peakbpf_stacks_file **sf);
int peakbpf_stacks_file_window(struct peakbpf_session *s, struct peakbpf_stacks_file *sf,
			       const struct peakbpf_figure *f, const char *window, unsigned top, char *summary,
			       size_t len);
/* Which window, from 0, had the highest peak (the first of equals). */
size_t peakbpf_stacks_file_best(const struct peakbpf_stacks_file *sf);
/* 0, or -EIO if the file failed; sf may be NULL. */
int peakbpf_stacks_file_close(struct peakbpf_stacks_file *sf);

#endif
