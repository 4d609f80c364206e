/* SPDX-License-Identifier: MIT */
/* One OOM record's files in the spool (agent_oom_record.c): ID.json and
 * its cgroup's timeline, ID.timeline.json; and reading the spool back. */
#ifndef PEAKBPF_AGENT_OOM_RECORD_H
#define PEAKBPF_AGENT_OOM_RECORD_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>
#include <peakbpf/peakbpf.h>
#include "oom.h"

struct agent;

/* Write the record of victim e (v: as the public API gives it); id gets
 * its ID ("oom-<unix ns>-<pid>"). 0 or -errno. Lock held. */
int oom_record_write(struct agent *a, const struct oom_event *e, const struct peakbpf_oom_victim *v,
		     int dir_fd, char *id, size_t len);
/* Whether a spool entry is one of ours (a record or its timeline). */
bool oom_record_name_ok(const char *name);
/* The records' IDs and summaries as a JSON array, oldest first, malloc'd. */
char *oom_records_list_json(int dir_fd, size_t *len);
/* The records as lines "ID  summary", oldest first, on stdout. */
void oom_records_print(int dir_fd);
/* A record's text (at most 1 MiB), malloc'd; NULL when unreadable. */
char *oom_record_read(int dir_fd, const char *name);
/* The "summary" member of a record's text (the first one), unescaped,
 * into out. false when it has none. */
bool oom_record_summary(const char *text, char *out, size_t len);

#endif
