/* SPDX-License-Identifier: MIT */
/*
 * The agent's view of every cgroup it exports (docs/agent.md): each
 * cgroup's windows (one per cut: a scrape cuts every slot), its all-time
 * peak, labels; and the scrapers, each with the cut it saw last. Pure: the
 * kernel's rows come in through agent_state_row.
 *
 * What a scraper sees: the largest sum since ITS previous scrape, when it
 * names itself (?scraper=NAME); scrapers that do not share the name
 * "default" and see the peak since the previous scrape by any of them. The
 * windows kept are the last AGENT_HISTORY cuts: a scraper whose previous
 * scrape is older sees those (truncated, said by a metric).
 */
#ifndef PEAKBPF_AGENT_STATE_H
#define PEAKBPF_AGENT_STATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "cg_labels.h"

#define AGENT_HISTORY 32
#define AGENT_SCRAPERS 8
#define AGENT_SCRAPER_NAME 32
#define AGENT_PATH_MAX 256

struct agent_window {
	uint64_t seq;           /* the cut that closed it */
	int64_t peak_pages;
	uint64_t end_ns;        /* when (CLOCK_MONOTONIC): the cgroup's timeline */
	int64_t end_pages;      /* its sum at the cut */
};

/*
 * Who held a cgroup's memory at a window's peak (agent_holders.c): the
 * largest AGENT_HOLDERS address spaces, each with what it held at that
 * instant (the kernel's marks, bpf/cgsum.h), read at the window's cut.
 */
#define AGENT_HOLDERS 5
#define AGENT_COMM 16

struct agent_holder {
	uint32_t pid;
	char comm[AGENT_COMM];
	uint32_t anon, file, shmem;     /* pages */
};

struct agent_holders {
	struct agent_holder v[AGENT_HOLDERS];   /* largest first */
	uint32_t n;             /* listed */
	uint32_t count;         /* address spaces that held pages at the peak */
	int64_t peak_pages;     /* the window's peak */
	int64_t held_pages;     /* what all of them held then (listed or not) */
	uint64_t end_ns;        /* the window's cut (CLOCK_MONOTONIC) */
	bool blurred;           /* a change raced a new peak in the window */
	bool read;              /* the kernel's marks were read at the cut */
};

struct agent_cg {
	uint64_t id;            /* 0: free entry */
	bool exported;          /* has a series (else dropped, or no process yet) */
	bool dropped;           /* refused a series by the bound (counted once) */
	uint64_t seen_seq;      /* the last cut that had its slot */
	char path[AGENT_PATH_MAX];      /* relative to the hierarchy's root; "" unresolved */
	struct cg_labels labels;
	unsigned level;
	int64_t pages, all_peak_pages, mms;
	uint64_t peak_ns;
	uint64_t charge_bytes;
	bool charge_read;
	struct agent_window hist[AGENT_HISTORY];
	unsigned n_hist, head;  /* head: where the next window goes */
	/* By window, as hist (malloc'd when the cgroup is given series; NULL
	 * before, or when that failed); and at the all-time peak. */
	struct agent_holders *wh;
	struct agent_holders max_holders;
	bool max_now;           /* this cut's window raised the all-time peak */
	uint64_t mark_races;    /* the kernel's count at the previous cut */
};

struct agent_scraper {
	char name[AGENT_SCRAPER_NAME + 1];
	uint64_t last_seq;      /* the cut of its previous scrape; 0: none */
	uint64_t last_use;
};

struct agent_state {
	struct agent_cg *cgs;   /* open addressing by id, cap a power of two */
	size_t cap, used;
	size_t max_series, exported;
	uint64_t seq;           /* cuts so far */
	uint64_t cut_ns;        /* when the current cut was made */
	uint64_t dropped_total; /* cgroups refused a series by the bound */
	uint64_t removed_total; /* series removed with their cgroup */
	struct agent_scraper scrapers[AGENT_SCRAPERS];
};

/* 0 or -ENOMEM; max_series: the cardinality bound (cgroups with series). */
int agent_state_init(struct agent_state *st, size_t max_series);
void agent_state_free(struct agent_state *st);
/* A cut begins: its rows follow. Returns its number. */
uint64_t agent_state_cut(struct agent_state *st);
/* One slot's row at the current cut; *fresh: first seen (resolve its
 * path, then agent_state_admit). NULL when the table is full. */
struct agent_cg *agent_state_row(struct agent_state *st, uint64_t id, unsigned level, int64_t pages,
				 int64_t window_peak, int64_t mms, uint64_t peak_ns, bool *fresh);
/* The cut time of the current cut's rows (agent_state_row stamps them). */
void agent_state_cut_time(struct agent_state *st, uint64_t ns);
/* Give cg a series if the bound allows (and it has processes); counts a
 * refusal once. */
void agent_state_admit(struct agent_state *st, struct agent_cg *cg);
/* The cgroup went: its series with it. */
void agent_state_remove(struct agent_state *st, uint64_t id);
struct agent_cg *agent_state_find(struct agent_state *st, uint64_t id);
/*
 * The scraper named name ("" or NULL: "default"; a name not of
 * [A-Za-z0-9_.-]{1,32} is -EINVAL): *since gets the cut of its previous
 * scrape (0: none) and the scrape is recorded as at the current cut. The
 * least recently used of AGENT_SCRAPERS gives way to a new name.
 */
int agent_state_scraper(struct agent_state *st, const char *name, uint64_t now_ns, uint64_t *since);
/* agent_holders.c. A holder of cgroup id at the current cut's window's
 * peak (pages by kind); the cgroup's other holders follow. */
void agent_state_holder(struct agent_state *st, uint64_t id, uint32_t pid, const char *comm, int64_t anon,
			int64_t file, int64_t shmem);
/* The kernel's count of marks raced for cg at this cut (blurs the
 * window's holders when it moved). */
void agent_state_mark_races(struct agent_cg *cg, uint64_t races);
/* The cut's holders are all in (read: the kernel's maps were read): the
 * all-time peak's follow. */
void agent_state_holders_done(struct agent_state *st, bool read);
/* The holders of the window whose peak agent_cg_peak_since gives for
 * since (the latest of equal peaks); NULL when none are kept. */
const struct agent_holders *agent_cg_holders_since(const struct agent_cg *cg, uint64_t since);

/* cg's largest sum in the windows closed after cut since; *truncated when
 * some of those are no longer kept. */
int64_t agent_cg_peak_since(const struct agent_cg *cg, uint64_t since, bool *truncated);

#endif
