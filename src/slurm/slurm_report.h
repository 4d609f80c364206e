/* SPDX-License-Identifier: MIT */
/*
 * The SPANK plugin's pure part (no Slurm, no BPF): its options, a step's
 * figures on one node as one summary line, the merge of a step across
 * nodes, the job's JSON, the AdminComment and the line in the step's
 * stderr, and the --mem suggestion. Unit-tested (tests/unit/test_slurm_report.c).
 *
 * A job's directory DIR/JOBID holds, per step and node, STEP.NODE.json (the
 * figure as libpeakbpf renders it, with the step's tasks and how they
 * ended) and one line of steps.tsv (pb_line_format); DIR/JOBID.json is the
 * job's document, rewritten from steps.tsv as each step ends on a node.
 */
#ifndef PEAKBPF_SLURM_REPORT_H
#define PEAKBPF_SLURM_REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define PB_DEFAULT_DIR "/var/lib/peakbpf/slurm"
#define PB_DEFAULT_HEADROOM_PCT 10
#define PB_MAX_LINES 4096               /* steps x nodes a job's document lists */

enum pb_mode {
	PB_MODE_UNSET = 0,              /* the site's default */
	PB_MODE_OFF,
	PB_MODE_QUIET,                  /* measure, write the files, no line in stderr */
	PB_MODE_PRINT,                  /* also the line in the step's stderr */
};

/* plugstack.conf arguments: default=on|off|print, dir=PATH, headroom=PCT,
 * helper=SOCKET, scontrol=PATH. */
struct pb_config {
	enum pb_mode site_mode;         /* default=: PB_MODE_OFF unless set */
	char dir[512];
	unsigned headroom_pct;
	char helper[256];               /* "" : libpeakbpf's default */
	char scontrol[256];
};

/* One step on one node, as measured. */
struct pb_step_line {
	char step[24];                  /* "0", "batch", ... */
	char node[64];
	bool peak_known;
	uint64_t peak;                  /* summed RSS of the step's tasks and descendants */
	bool exact;
	char source[16];
	bool largest_known;
	uint64_t largest;               /* the largest process's own peak */
	unsigned tasks;
	int killed_signal;              /* a task killed by this signal, 0: none */
	uint64_t limit;                 /* the step's memory limit on the node, 0: none */
	/* A multi-node step: `peakbpf merge` of the nodes' records as this
	 * node ended. Lower holds at any time; upper once every node's
	 * record was complete. */
	bool mlower_known, mupper_known;
	uint64_t mlower, mupper;
};

/* A step across its nodes: [largest node peak, sum of node peaks] (what
 * `peakbpf merge` gives for one window per node), narrowed to the merge
 * of the nodes' records where the lines carry it (each bound is one the
 * truth cannot cross, so the tighter of each pair is kept). */
struct pb_step_merge {
	char step[24];
	unsigned nodes;
	bool complete;                  /* every node's peak known: upper known */
	bool any_known;                 /* some node's peak known: lower known */
	uint64_t lower, upper;
	bool exact;                     /* every node exact */
	uint64_t sum_of_peaks, largest;
	uint64_t node_max;              /* the largest one node held: --mem is per node */
	bool largest_known;
	int killed_signal;
	uint64_t limit;
	uint64_t rec_lower, rec_upper;  /* from the records (merge_narrow) */
	bool rec_upper_known;
};

void pb_config_default(struct pb_config *c);
/* One plugstack.conf argument. 0, or -EINVAL and why. */
int pb_config_arg(struct pb_config *c, const char *arg, char *why, size_t why_len);
/* --peakbpf[=off|quiet|print]: NULL or "" is print. 0, or -EINVAL and why. */
int pb_user_mode(const char *optarg, enum pb_mode *mode, char *why, size_t why_len);
/* What runs: the user's choice, else the site's. */
enum pb_mode pb_effective_mode(enum pb_mode user, enum pb_mode site);

/* The step's name: its number, or batch, extern, interactive. */
void pb_step_name(uint32_t stepid, char *buf, size_t len);

/* One tab-separated line, ending in '\n', or a negative errno. */
int pb_line_format(const struct pb_step_line *l, char *buf, size_t len);
/* 0, or -EINVAL for a line that is not one of pb_line_format's. */
int pb_line_parse(const char *line, struct pb_step_line *l);

/* Fold the lines of the steps into one merge per step, in order of first
 * appearance; returns how many (at most max). */
size_t pb_merge_steps(const struct pb_step_line *lines, size_t n, struct pb_step_merge *out, size_t max);

/* --mem for the next submission: the largest node peak plus headroom,
 * rounded up to a MiB. 0 when no peak is known. */
uint64_t pb_suggest_mem_mib(const struct pb_step_merge *m, size_t n, unsigned headroom_pct);

/* The job's document. 0 or a negative errno. */
int pb_job_json(FILE *out, uint32_t job, const struct pb_step_line *lines, size_t n,
		unsigned headroom_pct);
/* The AdminComment: every step's peak, and the suggestion (<= len). */
void pb_admin_comment(char *buf, size_t len, const struct pb_step_merge *m, size_t n,
		      unsigned headroom_pct);
/* The line in the step's stderr, with '\n'. */
void pb_stderr_line(char *buf, size_t len, const struct pb_step_line *l, unsigned headroom_pct);

#endif
