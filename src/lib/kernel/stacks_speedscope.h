/* SPDX-License-Identifier: MIT */
/*
 * --stacks' second format (docs/stacks.md, "Speedscope JSON"): the lines of
 * the cut (stacks_fold.h) as one speedscope profile, type "sampled", unit
 * "bytes": a sample a line, its frames outer first, its weight the line's
 * resident bytes; the buckets are samples too, so the weights add up to
 * the peak as the folded lines do. Written with src/base/json.h.
 */
#ifndef PEAKBPF_STACKS_SPEEDSCOPE_H
#define PEAKBPF_STACKS_SPEEDSCOPE_H

#include <stddef.h>
#include <stdio.h>

struct stacks_line;

/* Write lines v[0..n) to out as speedscope's file format, the profile
 * named title. 0, -ENOMEM, or -EIO if out failed. */
int stacks_speedscope_write(FILE *out, const struct stacks_line *v, size_t n, const char *title);

#endif
