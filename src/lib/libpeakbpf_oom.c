// SPDX-License-Identifier: MIT
/* OOM kills of the tree (peakbpf_oom_victims): the OOM recorder's victims
 * (src/lib/kernel/oom.c) that were the session's tree's. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "libpeakbpf_internal.h"
#include "session_internal.h"
#include "oom_api.h"
#include "oom_victim.h"
#include "tracker_api.h"

struct drain_ctx {
	struct peakbpf_session *p;
	unsigned tree;
};

static int keep_if_tree(void *vctx, const struct oom_event *e)
{
	struct drain_ctx *c = vctx;
	struct peakbpf_session *p = c->p;
	struct oom_event *grown;

	if (e->tree != c->tree || e->ns < p->t0_ns)
		return 0;
	if (p->n_oom == p->cap_oom) {
		size_t cap = p->cap_oom ? 2 * p->cap_oom : 8;

		grown = realloc(p->oom, cap * sizeof(*grown));
		if (!grown)
			return -ENOMEM;
		p->oom = grown;
		p->cap_oom = cap;
	}
	p->oom[p->n_oom++] = *e;
	return 0;
}

PEAKBPF_API int peakbpf_oom_victims(struct peakbpf_session *p, struct peakbpf_oom_victim *out, size_t max,
				    size_t *n, char *why, size_t why_len)
{
	struct source *k = p ? p->s->kernel : NULL;
	struct tracker *t = k && k->ops->tracker ? k->ops->tracker(k) : NULL;
	struct drain_ctx ctx = { .p = p };
	long page = sysconf(_SC_PAGESIZE);
	int err = 0;

	if (!p || !n || (max && !out))
		return -EINVAL;
	*n = 0;
	if (!t || oom_loaded(t) == OOM_OFF) {
		err = -EOPNOTSUPP;
		if (why)
			snprintf(why, why_len, "%s", !t ? "OOM kills are recorded by the bpf source loaded here "
					 "(not through peakbpf serve, not by the fallbacks)" : oom_why(t));
		goto cleanup;
	}
	ctx.tree = tracker_tree(t);
	err = oom_drain(t, keep_if_tree, &ctx);
	if (err < 0)
		goto cleanup;
	err = 0;
	*n = p->n_oom;
	for (size_t i = 0; i < p->n_oom && i < max; i++)
		oom_victim_fill(&p->oom[i], page, &out[i]);
cleanup:
	return err;
}
