/* SPDX-License-Identifier: MIT */
/*
 * The agent's scrape in the Prometheus text format, version 0.0.4
 * (docs/agent.md, "Metrics"): HELP and TYPE for each family, _bytes
 * units, counters as _total, no timestamps. Pure: a state and facts in,
 * text out.
 */
#ifndef PEAKBPF_AGENT_METRICS_H
#define PEAKBPF_AGENT_METRICS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include "agent_state.h"

/* What the scrape says beside the cgroups. */
struct agent_facts {
	long page_size;
	bool exact;                     /* the sums are exact (6.2+'s per-CPU path) */
	const char *inexact_reason;     /* when not */
	const char *charge_source;      /* "cgroup-v1" or "cgroup-v2" */
	const char *version, *kernel;
	uint64_t slots_free, no_slot, chain_missing, mm_full, moves;
	uint64_t oom_kills, oom_records, oom_ring_drops;
	uint64_t departed_lost;         /* departures whose marks the kernel's ring lost */
	uint64_t scrape_cut_ns;         /* how long this scrape's cut took */
	unsigned holders;               /* holders a cgroup's peak lists (--holders) */
};

/* The metric families' names, for the tests that cross-check the
 * dashboard and the docs: NULL past the last. */
const char *agent_metric_name(size_t i);

/* Write the scrape of the scraper whose previous scrape was cut since.
 * Returns 0 or -errno of the stream. */
int agent_metrics_write(FILE *out, const struct agent_state *st, uint64_t since, const struct agent_facts *f);

/* A label value escaped for the text format (\\, \" and \n). */
void agent_label_escape(FILE *out, const char *v);

#endif
