/* SPDX-License-Identifier: MIT */
/*
 * A multi-node step's record on this node, and the merge of its nodes'
 * records (spank_record.c). The session must have been opened with
 * changes_ring_bytes = RANK_FILE_RING_BYTES; while the record runs, its
 * thread alone uses the session.
 */
#ifndef PEAKBPF_SPANK_RECORD_H
#define PEAKBPF_SPANK_RECORD_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include <peakbpf/peakbpf.h>

#include "rank_file.h"

struct pb_record {
	struct rank_file rr;
	struct peakbpf_session *s;
	pthread_t thread;
	bool opened, running, stop, cut_failed, drain_failed;
	uint64_t next_ns, drops;
};

/* The step's merge across the records in a directory. */
struct pb_merged {
	size_t records, complete;       /* complete: with their end line */
	uint64_t lower, upper;
	bool exact;
};

/* DIR/HOST.PID.jsonl, and the thread that cuts its windows. 0 or -errno. */
int pb_record_start(struct pb_record *r, struct peakbpf_session *s, const char *dir, const pid_t *pids,
		    size_t n);
/* Stop the thread and cut the last window: the session is the caller's again. */
int pb_record_stop(struct pb_record *r);
/* The end line; closes the file. */
int pb_record_finish(struct pb_record *r, uint64_t peak, bool exact, const char *source, int status);
/* On an error path: the thread stopped, the file closed, nothing more written. */
void pb_record_abort(struct pb_record *r);
/* What `peakbpf merge DIR` computes. 0, or -errno with why. */
int pb_record_merge(const char *dir, struct pb_merged *out, char *why, size_t why_len);

#endif
