// SPDX-License-Identifier: MIT
/* libpeakbpf_oom.h: the OOM recorder's victims that were the session's tree's. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/types.h>
#include "libpeakbpf_oom.h"
#include "oom_api.h"
#include "oom_victim.h"
#include "session_internal.h"
#include "tracker_tree.h"

struct lib_oom {
	struct oom_event *v;
	size_t n, cap;
	unsigned tree;
	uint64_t t0_ns;
};

static int keep_if_tree(void *ctx, const struct oom_event *e)
{
	struct lib_oom *o = ctx;
	struct oom_event *grown;

	if (e->tree != o->tree || e->ns < o->t0_ns)
		return 0;
	if (o->n == o->cap) {
		size_t cap = o->cap ? 2 * o->cap : 8;

		grown = realloc(o->v, cap * sizeof(*grown));
		if (!grown)
			return -ENOMEM;
		o->v = grown;
		o->cap = cap;
	}
	o->v[o->n++] = *e;
	return 0;
}

int lib_oom_victims(struct session *s, uint64_t t0_ns, struct lib_oom **store, struct peakbpf_oom_victim *out,
		    size_t max, size_t *n, char *why, size_t why_len)
{
	struct source *k = s->kernel;
	struct tracker_tree *t = k && k->ops->tree ? k->ops->tree(k) : NULL;
	struct tracker_load *l = t ? tracker_tree__load(t) : NULL;
	int level = 0, lerr = 0;
	struct oom_reader *r = l ? tracker_load__oom(l, &level, &lerr) : NULL;
	long page = sysconf(_SC_PAGESIZE);
	int err;

	*n = 0;
	if (!r) {
		if (why)
			snprintf(why, why_len, "%s", !l ? "OOM kills are recorded by the bpf source loaded here "
				 "(not through peakbpf serve, not by the fallbacks)" : oom_why(level, lerr));
		return -EOPNOTSUPP;
	}
	if (!*store && !(*store = calloc(1, sizeof(**store))))
		return -ENOMEM;
	(*store)->tree = tracker_tree__index(t);
	(*store)->t0_ns = t0_ns;
	err = oom_drain(r, keep_if_tree, *store);
	if (err < 0)
		return err;
	*n = (*store)->n;
	for (size_t i = 0; i < (*store)->n && i < max; i++)
		oom_victim_fill(&(*store)->v[i], page, &out[i]);
	return 0;
}

void lib_oom_free(struct lib_oom *store)
{
	if (store)
		free(store->v);
	free(store);
}
