// SPDX-License-Identifier: MIT
/*
 * GET /holders (docs/agent.md, "Who held the peak"): each exported
 * cgroup's holders at the largest peak of the windows kept and at its
 * all-time peak, as JSON. Reads the state as the last cut left it (the
 * tick's, at most a second old): it cuts nothing, so it moves no
 * scraper's window.
 */
#include <stdlib.h>
#include <string.h>
#include "agent_int.h"
#include "clock.h"
#include "json.h"

void agent_holders_obj(struct json_writer *w, const char *key, const struct agent_holders *h, long page,
		       uint64_t now)
{
	json_key(w, key);
	if (!h || !h->read) {
		json_null(w);           /* not read (before the cgroup had series, or the maps failed) */
		return;
	}
	json_begin_object(w);
	json_kv_uint(w, "peak_bytes", (uint64_t)(h->peak_pages > 0 ? h->peak_pages : 0) * (uint64_t)page);
	json_kv_double(w, "cut_s_ago", now > h->end_ns ? (double)(now - h->end_ns) / 1e9 : 0, 3);
	json_kv_uint(w, "processes", h->count);
	json_kv_uint(w, "held_bytes", (uint64_t)(h->held_pages > 0 ? h->held_pages : 0) * (uint64_t)page);
	json_kv_int(w, "unaccounted_bytes", (h->peak_pages - h->held_pages) * page);
	json_kv_bool(w, "blurred", h->blurred);
	json_key(w, "holders");
	json_begin_array(w);
	for (uint32_t i = 0; i < h->n; i++) {
		json_begin_object(w);
		json_kv_int(w, "pid", h->v[i].pid);
		json_kv_string(w, "comm", h->v[i].comm);
		json_kv_uint(w, "anon_bytes", (uint64_t)h->v[i].anon * (uint64_t)page);
		json_kv_uint(w, "file_bytes", (uint64_t)h->v[i].file * (uint64_t)page);
		json_kv_uint(w, "shmem_bytes", (uint64_t)h->v[i].shmem * (uint64_t)page);
		json_end_object(w);
	}
	json_end_array(w);
	json_end_object(w);
}

static void cgroup_obj(struct json_writer *w, const struct agent_cg *cg, long page, uint64_t now)
{
	json_begin_object(w);
	json_kv_string(w, "cgroup", cg->path);
	/* the largest window kept (the last AGENT_HISTORY cuts) */
	agent_holders_obj(w, "recent", agent_cg_holders_since(cg, 0), page, now);
	agent_holders_obj(w, "max", &cg->max_holders, page, now);
	json_end_object(w);
}

char *agent_holders_json(struct agent *a, const char *cgroup, size_t *len)
{
	struct json_writer w;
	char *text = NULL;
	size_t size = 0;
	FILE *out = open_memstream(&text, &size);
	uint64_t now = monotonic_ns();

	if (!out)
		return NULL;
	json_init(&w, out);
	json_begin_object(&w);
	json_kv_string(&w, "at", "peak");
	json_kv_string(&w, "read", "each process's pages at the cgroup's peak, as the kernel noted them before "
		       "its first change after that peak (bpf/cgsum.bpf.c), read at the window's cut (of a "
		       "process gone before it, as its teardown kept them); unaccounted_bytes: read from no "
		       "mark (more departures than the ring keeps, or changes racing the peak)");
	json_kv_bool(&w, "exact", a->facts.exact);
	json_key(&w, "cgroups");
	json_begin_array(&w);
	pthread_mutex_lock(&a->lock);
	for (size_t i = 0; i < a->st.cap; i++) {
		const struct agent_cg *cg = &a->st.cgs[i];

		if (cg->id && cg->exported && (!cgroup || !strcmp(cgroup, cg->path)))
			cgroup_obj(&w, cg, a->page_size, now);
	}
	pthread_mutex_unlock(&a->lock);
	json_end_array(&w);
	json_end_object(&w);
	json_finish(&w);
	if (fclose(out)) {
		free(text);
		return NULL;
	}
	*len = size;
	return text;
}
