// SPDX-License-Identifier: MIT
/*
 * The tree's unique memory through the helper (HP_UNIQUE): the client
 * sends its tree's own memory cgroup as a directory fd, which the helper
 * trusts no further than it checks (serve_client.c: on a cgroup
 * filesystem, by /proc alone; here: a memory cgroup directory, the
 * client's own, empty), then counts it from 0 pages in the client's tree's
 * state of the shared load (unique_open). HP_START checks that the cgroup
 * holds the tree's roots alone: else the figure is not measured, never
 * another's memory counted as the tree's. docs/helper.md.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "fdcheck.h"
#include "serve_int.h"
#include "sources.h"
#include "unique_api.h"

int serve_do_unique(struct client *c, int *fd, struct hp_msg *r)
{
	uint64_t id = 0;
	int err;

	/* Before the first root: the figure starts from the empty cgroup's
	 * 0 pages, as unique_open needs. */
	if (!c->src || c->started || c->roots || c->unique_asked) {
		snprintf(r->u.why, HP_WHY_LEN, "the cgroup comes once, after open and before the first process");
		return -EPROTO;
	}
	if (*fd < 0) {
		snprintf(r->u.why, HP_WHY_LEN, "the cgroup must come as its directory's fd (SCM_RIGHTS)");
		return -EINVAL;
	}
	if (!c->src->ops->tree) {
		snprintf(r->u.why, HP_WHY_LEN, "the helper's tree has no tracker of its own");
		return -EOPNOTSUPP;
	}
	err = cgroup_dir_check(*fd, c->cred.uid, r->u.why, HP_WHY_LEN);
	if (!err)
		err = cgroup_procs_check(*fd, NULL, 0, r->u.why, HP_WHY_LEN);
	if (!err)
		err = unique_cgroup_id(*fd, &id, r->u.why, HP_WHY_LEN);
	if (!err)
		err = unique_open(c->src->ops->tree(c->src), id, sysconf(_SC_PAGESIZE), &c->unique,
				  r->u.why, HP_WHY_LEN);
	if (err)
		return err;
	c->unique_asked = true;
	c->cgroup_fd = *fd;
	*fd = -1;
	return 0;
}

/* The cgroup holds the tree's roots alone (its other processes, if any,
 * would count as the tree's): else no figure. The directory goes then. */
void serve_unique_start(struct server *sv, struct client *c)
{
	char why[HP_WHY_LEN];

	if (!c->unique_asked || c->cgroup_fd < 0)
		return;
	if (c->unique && cgroup_procs_check(c->cgroup_fd, c->root_pid, c->roots, why, sizeof(why))) {
		unique_destroy(c->unique);
		c->unique = NULL;
		snprintf(c->unique_why, sizeof(c->unique_why), "%s", why);
		if (sv->verbose)
			serve_say("uid %u: tree %u: unique memory not measured: %s", (unsigned)c->cred.uid,
				  c->slot, why);
	}
	close(c->cgroup_fd);            /* a cgroup filesystem's: no wait */
	c->cgroup_fd = -1;
}

void serve_unique_window(struct client *c, struct hp_unique *w)
{
	struct figure f;

	memset(w, 0, sizeof(*w));
	if (!c->unique) {
		snprintf(w->why, sizeof(w->why), "%s", c->unique_asked ? c->unique_why :
			 "the client sent no cgroup (HP_UNIQUE)");
		return;
	}
	unique_close_window(c->unique, &f);
	w->measured = f.measured;
	w->exact = f.exact;
	w->peak_bytes = f.peak_bytes;
	w->baseline_bytes = f.baseline_bytes;
	w->anon_bytes = f.anon_bytes;
	w->file_bytes = f.file_bytes;
	if (f.inexact_reason)
		snprintf(w->why, sizeof(w->why), "%s", f.inexact_reason);
}

/* Every way a tree goes comes here (serve_remove_tree). */
void serve_unique_close(struct client *c)
{
	unique_destroy(c->unique);
	c->unique = NULL;
	if (c->unique_asked && c->cgroup_fd >= 0)
		close(c->cgroup_fd);
	c->cgroup_fd = -1;
	c->unique_asked = false;
	c->unique_why[0] = '\0';
}
