/* SPDX-License-Identifier: MIT */
/* --stacks FILE (docs/stacks.md): its option and format, its file (opened before the
 * run: 116 when it cannot be written), the ring polled with the sum log's,
 * and the folded stacks and their summary at the end. */
#ifndef PEAKBPF_STACKS_CLI_H
#define PEAKBPF_STACKS_CLI_H

#include <stdbool.h>
#include <stddef.h>
#include "cli.h"

struct run;
struct peakbpf_figure;

enum cli_action stacks_cli_parse(const char *arg, char *err, size_t errlen);
/* The format FILE's name says (docs/stacks.md, "Speedscope JSON"): a name
 * ending in .json is speedscope JSON, one of a format not written (.svg,
 * .html, .pb, .pprof) -1, any other folded stacks. */
int stacks_cli_format(const char *path);
/* What --stacks does not go with (this version: a command's or attached
 * processes' windows, the bpf source here): true, with err, when o asks it. */
bool stacks_cli_check(const struct options *o, int args_left, char *err, size_t errlen);
/* Open the file before the run; on failure a one-line error and the
 * run's status EXIT_STACKS_UNWRITABLE. 0 or -errno. */
int stacks_cli_open(struct run *r);
void stacks_cli_poll(struct run *r);
/* At each window's close, before anything else reads the kernel's ring
 * (the cut only moves on): its stacks at f's peak, under the window's
 * name when the run has several (-i, SIGUSR1). */
void stacks_cli_window(struct run *r, const struct peakbpf_figure *f);
/* At the end, before the timeline is written (its page names them): the
 * file's end; once. */
void stacks_cli_finish(struct run *r);
/* Then, after the report: finish it if not yet, and print the summary. */
void stacks_cli_report(struct run *r);
void stacks_cli_close(struct run *r);

#endif
