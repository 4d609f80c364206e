/* SPDX-License-Identifier: MIT */
/*
 * --stacks' second format (docs/stacks.md, "Speedscope JSON"): the lines of
 * a cut (stacks_fold.h) as a speedscope profile, type "sampled", unit
 * "bytes": a sample a line, its frames outer first, its weight the line's
 * resident bytes; the buckets are samples too, so the weights add up to
 * the peak as the folded lines do. One profile a window (-i), written as
 * the window closes; the frames' names, shared by the profiles, and the
 * document's name are written at the end (a JSON object's members have no
 * order). Written
 * with src/base/json.h.
 */
#ifndef PEAKBPF_STACKS_SPEEDSCOPE_H
#define PEAKBPF_STACKS_SPEEDSCOPE_H

#include <stddef.h>
#include <stdio.h>

struct stacks_line;
struct speedscope_file;

/* Begin the document on out. 0 or -ENOMEM. */
int speedscope_open(FILE *out, struct speedscope_file **sf);
/* A profile of lines v[0..n), named title. 0, -ENOMEM, or -EIO if out failed. */
int speedscope_profile(struct speedscope_file *sf, const struct stacks_line *v, size_t n, const char *title);
/* End the document, named title, the profile speedscope opens first being
 * active (an index of the profiles written), and free sf. 0 or -EIO; sf
 * may be NULL. */
int speedscope_close(struct speedscope_file *sf, size_t active, const char *title);

/* A document of one profile: open, profile, close. */
int stacks_speedscope_write(FILE *out, const struct stacks_line *v, size_t n, const char *title);

#endif
