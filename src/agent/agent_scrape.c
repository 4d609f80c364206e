// SPDX-License-Identifier: MIT
/* A scrape: every slot's window cut into the state, the text written. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "agent_int.h"
#include "clock.h"
#include "oom_victim.h"

/* Whether path lies under prefix, component by component. */
static bool selected(const char *path, const char *prefix)
{
	size_t n = strlen(prefix);

	while (n > 1 && prefix[n - 1] == '/')
		n--;
	if (n <= 1)
		return true;
	return !strncmp(path, prefix, n) && (path[n] == '\0' || path[n] == '/');
}

/* A new cgroup's path (relative to the hierarchy's mount) and labels. */
static void resolve(struct agent *a, struct agent_cg *cg)
{
	char abs[AGENT_PATH_MAX + 128];
	size_t m = strlen(a->hier.mount);

	if (oom_cgroup_path(cg->id, abs, sizeof(abs)) || strncmp(abs, a->hier.mount, m))
		return;
	snprintf(cg->path, sizeof(cg->path), "%s", abs[m] ? abs + m : "/");
	cg_labels_parse(cg->path, &cg->labels);
}

static void read_charge(struct agent *a, struct agent_cg *cg)
{
	char p[AGENT_PATH_MAX + 192], buf[32];
	int fd;
	ssize_t n;

	snprintf(p, sizeof(p), "%s%s/%s", a->hier.mount, cg->path,
		 a->hier.v1 ? "memory.usage_in_bytes" : "memory.current");
	cg->charge_read = false;
	fd = open(p, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return;
	buf[n] = '\0';
	cg->charge_bytes = strtoull(buf, NULL, 10);
	cg->charge_read = true;
}

static void on_row(void *ctx, const struct cgsum_row *r)
{
	struct agent *a = ctx;
	bool fresh;
	struct agent_cg *cg = agent_state_row(&a->st, r->id, r->level, r->pages, r->window_peak, r->mms,
					      r->peak_ns, &fresh);

	if (!cg)
		return;
	if (fresh || !cg->path[0])
		resolve(a, cg);
	if (cg->path[0] && selected(cg->path, a->o.select))
		agent_state_admit(&a->st, cg);
	agent_state_mark_races(cg, r->mark_races);
}

static void on_holder(void *ctx, const struct cgsum_holder *h)
{
	struct agent *a = ctx;

	agent_state_holder(&a->st, h->id, h->tgid, h->comm, h->pages[RSS_ANON], h->pages[RSS_FILE],
			   h->pages[RSS_SHMEM]);
}

/* The first cgroup refused a series, for each reason: one line each on
 * stderr (the counter says how many since). */
static void say_drops(struct agent *a)
{
	struct cg_counters c;
	__u64 free_slots = 0;

	if (a->st.dropped_total && !a->said_max_series) {
		fprintf(stderr, "peakbpf agent: --max-series %zu reached: more cgroups get no series (counted in "
			"peakbpf_cgroups_dropped_total{reason=\"max_series\"}); raise --max-series (at most 4096) "
			"or narrow --select\n", a->st.max_series);
		a->said_max_series = true;
	}
	cgsum_counters(a->cs, &c, &free_slots);
	if (c.no_slot && !a->said_no_slot) {
		fprintf(stderr, "peakbpf agent: the kernel's 4096 cgroup slots are all taken: a cgroup made now "
			"has no sum (counted in peakbpf_cgroups_dropped_total{reason=\"no_kernel_slot\"}); its "
			"processes count in its ancestors\n");
		a->said_no_slot = true;
	}
}

void agent_cut(struct agent *a)
{
	agent_state_cut(&a->st);
	agent_state_cut_time(&a->st, monotonic_ns());
	cgsum_cut(a->cs, on_row, a);
	/* who held each window's peak, from the kernel's marks (when the
	 * maps cannot be read, this cut's windows say their holders unread) */
	agent_state_holders_done(&a->st, cgsum_holders(a->cs, on_holder, a) == 0);
	say_drops(a);
}

static void on_removed(void *ctx, __u64 id)
{
	agent_state_remove(&((struct agent *)ctx)->st, id);
}

void agent_reclaim(struct agent *a)
{
	cgsum_reclaim(a->cs, on_removed, a);
}

static void counters(struct agent *a)
{
	struct cg_counters c;
	__u64 free_slots = 0;

	cgsum_counters(a->cs, &c, &free_slots);
	a->facts.slots_free = free_slots;
	a->facts.no_slot = c.no_slot;
	a->facts.chain_missing = c.chain_missing;
	a->facts.mm_full = c.mm_full;
	a->facts.moves = c.moves;
	a->facts.departed_lost = cgsum_departed_lost(a->cs);
}

char *agent_scrape(struct agent *a, const char *scraper, size_t *len, int *err)
{
	char *text = NULL;
	size_t size = 0;
	uint64_t since = 0, t0;
	FILE *out;

	*err = 0;
	pthread_mutex_lock(&a->lock);
	t0 = monotonic_ns();
	agent_cut(a);
	for (size_t i = 0; i < a->st.cap; i++)
		if (a->st.cgs[i].id && a->st.cgs[i].exported)
			read_charge(a, &a->st.cgs[i]);
	a->facts.scrape_cut_ns = monotonic_ns() - t0;
	counters(a);
	*err = agent_state_scraper(&a->st, scraper, t0, &since);
	out = *err ? NULL : open_memstream(&text, &size);
	if (out) {
		*err = agent_metrics_write(out, &a->st, since, &a->facts);
		if (fclose(out) && !*err)
			*err = -ENOMEM;
	} else if (!*err) {
		*err = -ENOMEM;
	}
	a->scrapes++;
	pthread_mutex_unlock(&a->lock);
	if (*err) {
		free(text);
		return NULL;
	}
	*len = size;
	return text;
}
