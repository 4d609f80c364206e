/* SPDX-License-Identifier: MIT */
/* What the agent's files share: agent.c starts and runs it, agent_scrape.c
 * cuts and writes a scrape, agent_http.c serves it, agent_oom.c records
 * OOM kills. */
#ifndef PEAKBPF_AGENT_INT_H
#define PEAKBPF_AGENT_INT_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <linux/types.h>
#include "agent_metrics.h"
#include "agent_opts.h"
#include "agent_state.h"
#include "cgsum_api.h"

struct tracker_load;
struct tracker_tree;
struct MHD_Daemon;
struct agent_oom;

struct agent {
	struct agent_opts o;
	struct cgsum_hier hier;
	struct tracker_load *l;
	struct tracker_tree *tree;      /* every process of the node */
	struct cgsum *cs;
	struct agent_state st;
	pthread_mutex_t lock;           /* st and the tracker's slots: the scrape and the tick */
	struct agent_facts facts;       /* the static ones; the counters at each scrape */
	char kernel[65];
	long page_size;
	int lfd;                        /* the listening socket */
	struct MHD_Daemon *httpd;
	struct agent_oom *oom;          /* the OOM records (agent_oom.c) */
	uint64_t scrapes;
	bool said_max_series, said_no_slot;     /* the one-time lines on stderr */
};

/* A scrape's text for scraper name (NULL: default), malloc'd, *len long;
 * NULL and -errno in *err (-EINVAL: a bad name). Takes the lock. */
char *agent_scrape(struct agent *a, const char *scraper, size_t *len, int *err);
/* The cut alone (the tick's, and an OOM record's): every slot's window
 * into the state. Lock held. */
void agent_cut(struct agent *a);
/* Free the slots and series of cgroups that went. Lock held. */
void agent_reclaim(struct agent *a);

/* agent_holders_json.c: GET /holders (cgroup: one path, NULL: every
 * exported one), malloc'd JSON; NULL when out of memory. Takes the lock. */
char *agent_holders_json(struct agent *a, const char *cgroup, size_t *len);
struct json_writer;
/* key: one window's holders (NULL or unread: null), its times against now. */
void agent_holders_obj(struct json_writer *w, const char *key, const struct agent_holders *h, long page,
		       uint64_t now);

/* agent_http.c: open libmicrohttpd (0, or -ENOENT and why), then serve on
 * a->lfd (0 or -errno). */
int agent_http_open(char *why, size_t why_len);
int agent_http_start(struct agent *a);
void agent_http_stop(struct agent *a);

/* agent_oom.c */
int agent_oom_open(struct agent *a, char *why, size_t len);
/* Drain the OOM ring and record each victim (lock held). */
void agent_oom_poll(struct agent *a);
/* The /oom listing (JSON), malloc'd. */
char *agent_oom_list_json(struct agent *a, size_t *len);
void agent_oom_close(struct agent *a);
/* The OOM ring's fd to poll (-1: none). */
int agent_oom_fd(struct agent *a);

#endif
