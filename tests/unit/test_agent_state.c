// SPDX-License-Identifier: MIT
/* The agent's cgroups, windows and scrapers (src/agent/agent_state.c) and
 * the text of a scrape (src/agent/agent_metrics.c). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <errno.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "agent_metrics.h"
#include "agent_state.h"

static struct agent_cg *row(struct agent_state *st, uint64_t id, int64_t pages, int64_t peak)
{
	bool fresh;
	struct agent_cg *cg = agent_state_row(st, id, 1, pages, peak, 1, 0, &fresh);

	assert_non_null(cg);
	if (fresh) {
		snprintf(cg->path, sizeof(cg->path), "/cg%llu", (unsigned long long)id);
		agent_state_admit(st, cg);
	}
	return cg;
}

/* Two named scrapers each see the peak since their own previous scrape;
 * unnamed ones share "default". A spike between two scrapes of A is seen
 * by A once, and by B at its next scrape too. */
static void test_scrapers_own_windows(void **state)
{
	struct agent_state st;
	uint64_t sa, sb;
	bool trunc;
	struct agent_cg *cg;

	(void)state;
	assert_int_equal(agent_state_init(&st, 10), 0);
	agent_state_cut(&st);
	row(&st, 7, 10, 10);
	assert_int_equal(agent_state_scraper(&st, "a", 1, &sa), 0);
	assert_int_equal(agent_state_scraper(&st, "b", 1, &sb), 0);
	assert_int_equal(sa, 0);
	agent_state_cut(&st);                   /* a spike to 500 in this window */
	cg = row(&st, 7, 10, 500);
	assert_int_equal(agent_state_scraper(&st, "a", 2, &sa), 0);
	assert_int_equal(agent_cg_peak_since(cg, sa, &trunc), 500);
	assert_false(trunc);
	agent_state_cut(&st);
	cg = row(&st, 7, 10, 12);
	assert_int_equal(agent_state_scraper(&st, "a", 3, &sa), 0);
	assert_int_equal(agent_cg_peak_since(cg, sa, &trunc), 12);     /* a saw the spike already */
	assert_int_equal(agent_state_scraper(&st, "b", 3, &sb), 0);
	assert_int_equal(agent_cg_peak_since(cg, sb, &trunc), 500);    /* b had not */
	assert_int_equal(cg->all_peak_pages, 500);
	assert_int_equal(agent_state_scraper(&st, "bad name!", 3, &sb), -EINVAL);
	assert_int_equal(agent_state_scraper(&st, NULL, 3, &sb), 0);   /* "default" */
	agent_state_free(&st);
}

/* More cuts than kept: the scraper that missed them is told. */
static void test_truncated(void **state)
{
	struct agent_state st;
	struct agent_cg *cg = NULL;
	uint64_t s;
	bool trunc;

	(void)state;
	assert_int_equal(agent_state_init(&st, 10), 0);
	agent_state_cut(&st);
	row(&st, 3, 1, 1);
	agent_state_scraper(&st, "slow", 0, &s);
	for (int i = 0; i < AGENT_HISTORY + 5; i++) {
		agent_state_cut(&st);
		cg = row(&st, 3, 1, i == 2 ? 99 : 1);   /* the spike falls out of the ring */
	}
	agent_state_scraper(&st, "slow", 1, &s);
	assert_int_equal(agent_cg_peak_since(cg, s, &trunc), 1);
	assert_true(trunc);
	assert_int_equal(cg->all_peak_pages, 99);       /* the all-time one keeps it */
	agent_state_free(&st);
}

/* The bound: a cgroup past --max-series is dropped once, counted; one
 * removed frees its series and counts; probing survives removals. */
static void test_bound_and_removal(void **state)
{
	struct agent_state st;

	(void)state;
	assert_int_equal(agent_state_init(&st, 2), 0);
	agent_state_cut(&st);
	for (uint64_t id = 1; id <= 3; id++)
		row(&st, id, 5, 5);
	assert_int_equal(st.exported, 2);
	assert_int_equal(st.dropped_total, 1);
	agent_state_cut(&st);
	row(&st, 3, 5, 5);                              /* still no room: not counted again */
	assert_int_equal(st.dropped_total, 1);
	agent_state_remove(&st, 1);
	assert_int_equal(st.removed_total, 1);
	assert_null(agent_state_find(&st, 1));
	/* 1000 created and removed leave nothing behind */
	for (uint64_t id = 100; id < 1100; id++)
		row(&st, id, 1, 1);
	for (uint64_t id = 100; id < 1100; id++)
		agent_state_remove(&st, id);
	assert_int_equal(st.used, 2);
	assert_non_null(agent_state_find(&st, 2));
	assert_non_null(agent_state_find(&st, 3));
	agent_state_free(&st);
}

static char *scrape(const struct agent_state *st, uint64_t since, const struct agent_facts *f)
{
	char *text = NULL;
	size_t size = 0;
	FILE *out = open_memstream(&text, &size);

	assert_non_null(out);
	assert_int_equal(agent_metrics_write(out, st, since, f), 0);
	fclose(out);
	return text;
}

/* Every family has HELP and TYPE; values in bytes; a charge not read is
 * no sample (never 0); labels escaped; no timestamps. */
static void test_metrics_text(void **state)
{
	struct agent_facts f = { .page_size = 4096, .exact = true, .charge_source = "cgroup-v1",
				 .version = "0.4.0", .kernel = "6.18" };
	struct agent_state st;
	struct agent_cg *cg;
	char *t;

	(void)state;
	assert_int_equal(agent_state_init(&st, 10), 0);
	agent_state_cut(&st);
	cg = row(&st, 9, 2, 3);
	snprintf(cg->path, sizeof(cg->path), "/a\"b\\c");
	snprintf(cg->labels.unit, sizeof(cg->labels.unit), "x.service");
	t = scrape(&st, 0, &f);
	for (size_t i = 0; agent_metric_name(i); i++) {
		char h[160];

		snprintf(h, sizeof(h), "# TYPE %s ", agent_metric_name(i));
		assert_non_null(strstr(t, h));
	}
	assert_non_null(strstr(t, "peakbpf_cgroup_rss_peak_bytes{cgroup=\"/a\\\"b\\\\c\",unit=\"x.service\"} 12288\n"));
	assert_non_null(strstr(t, "peakbpf_cgroup_rss_bytes{cgroup=\"/a\\\"b\\\\c\",unit=\"x.service\"} 8192\n"));
	assert_null(strstr(t, "peakbpf_cgroup_memory_charge_bytes{"));
	assert_non_null(strstr(t, "# TYPE peakbpf_cgroups_dropped_total counter\n"));
	free(t);
	cg->charge_read = true;
	cg->charge_bytes = 777;
	t = scrape(&st, 0, &f);
	assert_non_null(strstr(t, "peakbpf_cgroup_memory_charge_bytes{cgroup=\"/a\\\"b\\\\c\",unit=\"x.service\"} 777\n"));
	free(t);
	agent_state_free(&st);
}

/* Holders at a window's peak: the largest AGENT_HOLDERS kept, largest
 * first, with the count and total of all; a scraper gets the holders of
 * the window whose peak it is given; the all-time peak keeps its own;
 * the metric lists --holders of them by kind, and what they leave. */
static void test_holders(void **state)
{
	struct agent_facts f = { .page_size = 4096, .exact = true, .charge_source = "cgroup-v2", .holders = 2 };
	const struct agent_holders *h;
	struct agent_state st;
	struct agent_cg *cg;
	char *t;

	(void)state;
	assert_int_equal(agent_state_init(&st, 10), 0);
	agent_state_cut(&st);
	cg = row(&st, 7, 0, 0);                 /* admitted: holders from now on */
	agent_state_holders_done(&st, true);
	agent_state_cut(&st);                   /* cut 2: peak 100 pages */
	cg = row(&st, 7, 10, 100);
	for (uint32_t pid = 1; pid <= 7; pid++)
		agent_state_holder(&st, 7, pid, "w", pid * 2, pid, 0);  /* 3, 6, ... 21 pages */
	agent_state_holders_done(&st, true);
	agent_state_cut(&st);                   /* cut 3: peak 40, one holder */
	cg = row(&st, 7, 10, 40);
	agent_state_holder(&st, 7, 99, "late", 40, 0, 0);
	agent_state_holders_done(&st, true);
	h = agent_cg_holders_since(cg, 0);      /* the largest window: cut 2's */
	assert_non_null(h);
	assert_int_equal(h->peak_pages, 100);
	assert_int_equal(h->count, 7);
	assert_int_equal(h->n, AGENT_HOLDERS);
	assert_int_equal(h->held_pages, 84);    /* 3 * (1 + ... + 7) */
	assert_int_equal(h->v[0].pid, 7);
	assert_int_equal(h->v[0].anon, 14);
	assert_int_equal(h->v[4].pid, 3);
	assert_true(h->read);
	h = agent_cg_holders_since(cg, 2);      /* since cut 2: cut 3's */
	assert_non_null(h);
	assert_int_equal(h->v[0].pid, 99);
	assert_int_equal(cg->max_holders.peak_pages, 100);
	assert_int_equal(cg->max_holders.v[0].pid, 7);
	t = scrape(&st, 0, &f);
	assert_non_null(strstr(t, "peakbpf_cgroup_peak_holder_bytes{cgroup=\"/cg7\",rank=\"1\",pid=\"7\","
				  "comm=\"w\",kind=\"anon\"} 57344\n"));
	assert_non_null(strstr(t, "rank=\"2\",pid=\"6\",comm=\"w\",kind=\"file\"} 24576\n"));
	assert_null(strstr(t, "rank=\"3\""));            /* --holders 2 */
	/* the other 5 held 84 - 39 pages; 100 - 84 held by none read */
	assert_non_null(strstr(t, "held_by=\"other_processes\"} 184320\n"));
	assert_non_null(strstr(t, "held_by=\"unaccounted\"} 65536\n"));
	assert_non_null(strstr(t, "peakbpf_cgroups_dropped_total{reason=\"max_series\"} 0\n"));
	assert_non_null(strstr(t, "\npeakbpf_holder_departures_lost_total 0\n"));
	free(t);
	agent_state_cut(&st);                   /* cut 4: the maps not read */
	cg = row(&st, 7, 10, 500);
	agent_state_holders_done(&st, false);
	t = scrape(&st, 3, &f);
	assert_null(strstr(t, "peakbpf_cgroup_peak_holder_bytes{"));    /* not read: no sample */
	free(t);
	agent_state_free(&st);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_scrapers_own_windows),
		cmocka_unit_test(test_truncated),
		cmocka_unit_test(test_bound_and_removal),
		cmocka_unit_test(test_metrics_text),
		cmocka_unit_test(test_holders),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
