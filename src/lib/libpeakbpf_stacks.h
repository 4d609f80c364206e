/* SPDX-License-Identifier: MIT */
/* --stacks of a session's tree (peakbpf_stacks_*, libpeakbpf.c): the load's
 * reader (src/lib/kernel/stacks.c) and its output (stacks_fold.c). */
#ifndef PEAKBPF_LIBPEAKBPF_STACKS_H
#define PEAKBPF_LIBPEAKBPF_STACKS_H

#include <stddef.h>
#include <stdio.h>
#include <peakbpf/peakbpf.h>
#include <peakbpf/peakbpf_stacks.h>

struct session;

int lib_stacks_poll(struct session *s);
int lib_stacks_why(struct session *s, char *why, size_t len);
int lib_stacks_file_open(FILE *out, enum peakbpf_stacks_format fmt, struct peakbpf_stacks_file **sf);
int lib_stacks_file_window(struct session *s, struct peakbpf_stacks_file *sf, const struct peakbpf_figure *f,
			   const char *window, unsigned top, char *summary, size_t len);
size_t lib_stacks_file_best(const struct peakbpf_stacks_file *sf);
int lib_stacks_file_close(struct peakbpf_stacks_file *sf);
int lib_stacks_write(struct session *s, const struct peakbpf_figure *f, enum peakbpf_stacks_format fmt, FILE *out,
		     unsigned top, char *summary, size_t len);

#endif
