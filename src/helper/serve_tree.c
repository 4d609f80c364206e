// SPDX-License-Identifier: MIT
/*
 * The helper's requests (helper_proto.h): each client's tree in the one BPF
 * load every tree shares, opened, given its processes, started, read and
 * removed. Who may measure what is host_may_trace's rule (host.h).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "host.h"
#include "clock.h"
#include "pidns.h"
#include "serve_int.h"
#include "sources.h"
#include "status.h"

/* ---- requests ------------------------------------------------------------- */

static size_t trees_of(const struct server *sv, uid_t uid)
{
	size_t n = 0;

	for (size_t i = 0; i < sv->n; i++)
		n += sv->clients[i].src && sv->clients[i].cred.uid == uid;
	return n;
}

/* The tree's PIDs as the client numbers them: a client in a container
 * sees its holders by its own PIDs, or as not visible (0). */
static void set_pid_depth(struct client *c)
{
	unsigned depth;
	int err;

	if (!c->src->ops->tree)
		return;
	err = pidns_depth_of(c->cred.pid, &depth);
	tracker_tree__set_pid_depth(c->src->ops->tree(c->src), err ? TRACKER_PID_HIDDEN : depth);
	c->own_pidns = !err && depth == 0;
	c->pid_depth = err ? 0 : depth;
}

static size_t trees_open(const struct server *sv)
{
	size_t n = 0;

	for (unsigned i = 0; i < MAX_TREES; i++)
		n += sv->slot_used[i];
	return n;
}

/* Without --unload-idle the load stays while no tree is open (a session
 * then costs a round trip, not a load); with it, the last tree takes it. */
static void unload_if_idle(struct server *sv)
{
	if (!trees_open(sv) && sv->unload_idle) {
		tracker_load__destroy(sv->shared);
		sv->shared = NULL;
	}
}

void serve_remove_tree(struct server *sv, struct client *c, const char *why)
{
	__u64 ns;

	if (!c->src)
		return;
	/* Destroying the source deletes its tree's entries from the shared
	 * maps (tracker_tree__clear), so nothing of a vanished client stays
	 * behind; under --unload-idle the last tree takes the load with it
	 * (unload_if_idle), so its programs cost the machine's faults
	 * nothing while no one measures. */
	ns = monotonic_ns();
	serve_record_close(c);
	serve_unique_close(c);          /* before the tree: its state is the tree's */
	c->src->ops->destroy(c->src);
	ns = monotonic_ns() - ns;
	c->src = NULL;
	free(c->host);
	c->host = NULL;
	sv->slot_used[c->slot] = false;
	sv->counted_ns = 0;             /* the next status counts afresh */
	unload_if_idle(sv);
	c->roots = 0;
	c->started = false;
	sv->removed++;
	if (sv->verbose)
		serve_say("uid %u: tree %u removed (%s), its entries cleared in %.2f ms", (unsigned)c->cred.uid,
		    c->slot, why, ns / 1e6);
}

static size_t trees_open(const struct server *sv);

/* A user other than root: its first tree while a users' slot is free,
 * more while others' first trees still find room (fair_tree_allowed);
 * never one of the SERVE_ROOT_TREES slots kept for root. */
static int share_refused(const struct server *sv, const struct client *c, struct hp_msg *r)
{
	size_t open = trees_open(sv), held = trees_of(sv, c->cred.uid);
	unsigned free = open + SERVE_ROOT_TREES < MAX_TREES ? (unsigned)(MAX_TREES - SERVE_ROOT_TREES - open) : 0;

	if (fair_tree_allowed((unsigned)held, free))
		return 0;
	if (held >= SERVE_TREES_PER_UID) {
		snprintf(r->u.why, HP_WHY_LEN, "the helper measures at most %u trees at once per user: "
			 "wait for one of yours to end", SERVE_TREES_PER_UID);
		return -EUSERS;
	}
	if (held && free) {
		snprintf(r->u.why, HP_WHY_LEN, "the helper keeps its last %u free trees for other users' "
			 "first ones, and you have %u open: wait for one of yours to end",
			 SERVE_TREES_RESERVE, (unsigned)held);
		return -EUSERS;
	}
	snprintf(r->u.why, HP_WHY_LEN, "the helper's %d trees for users are in use (%d more are "
		 "root's): try again later", MAX_TREES - SERVE_ROOT_TREES, SERVE_ROOT_TREES);
	return -EAGAIN;
}

/* Why a client may not open a tree now (its reason in r), or 0. */
static int open_refused(const struct server *sv, const struct client *c, const struct hp_open *o,
			struct hp_msg *r)
{
	int err;

	if (c->src) {
		snprintf(r->u.why, HP_WHY_LEN, "a tree is already open on this connection: close it first");
		return -EBUSY;
	}
	if (c->cred.uid != 0 && o->max_tracked > UNPRIVILEGED_MAX_TRACKED) {
		snprintf(r->u.why, HP_WHY_LEN, "--max-tracked: at most %d through the helper "
			 "(the kernel memory of its maps is bounded for other users)", UNPRIVILEGED_MAX_TRACKED);
		return -EPERM;
	}
	err = c->cred.uid != 0 ? share_refused(sv, c, r) : 0;
	if (err)
		return err;
	if (o->max_tracked > SERVE_MAP_ENTRIES) {
		snprintf(r->u.why, HP_WHY_LEN, "--max-tracked: at most %d through the helper "
			 "(its trees share maps of that size)", SERVE_MAP_ENTRIES);
		return -E2BIG;
	}
	return 0;
}

/* What the client is told of the load its tree is on. */
static void opened_facts(struct hp_opened *op, const struct host_facts *host)
{
	memset(op, 0, sizeof(*op));
	op->rss_percpu = host->rss_percpu;
	op->exact_path_err = host->exact_path_err;
	op->probe_ms = host->probe_ms;
	op->load_ms = host->load_ms;
	op->learn_ms = host->learn_ms;
	op->attach_ms = host->attach_ms;
	snprintf(op->teardown_hook, sizeof(op->teardown_hook), "%s",
		 host->teardown_hook ? host->teardown_hook : "");
}

static int do_open(struct server *sv, struct client *c, const struct hp_open *o,
		   struct hp_msg *r)
{
	struct bpf_source_opts bo = { .max_tracked = o->max_tracked ? o->max_tracked : DEFAULT_MAX_TRACKED,
				      .command_mode = o->command_mode != 0 };
	unsigned slot = 0;
	int err = open_refused(sv, c, o, r);

	if (err)
		return err;
	while (slot < MAX_TREES && sv->slot_used[slot])
		slot++;
	if (slot == MAX_TREES) {
		snprintf(r->u.why, HP_WHY_LEN, "the helper serves %d trees at once: try again later",
			 MAX_TREES);
		return -EAGAIN;
	}
	c->host = calloc(1, sizeof(*c->host));
	if (!c->host) {
		snprintf(r->u.why, HP_WHY_LEN, "the helper is out of memory");
		return -ENOMEM;
	}
	host_facts_fill(c->host, host_effective_caps());
	if (!sv->shared) {
		err = serve_record_load(sv);
		if (err) {
			snprintf(r->u.why, HP_WHY_LEN, "the helper cannot load the BPF programs: %s",
				 strerror(-err));
			free(c->host);
			c->host = NULL;
			return err;
		}
		sv->loads++;
	}
	err = bpf_source_open_tree(sv->shared, slot, &bo, c->host, &c->src);
	if (err)
		snprintf(r->u.why, HP_WHY_LEN, "the helper cannot open a tree: %s", strerror(-err));
	else if (o->record)
		err = serve_record_open(sv, c, r);
	if (err) {
		if (c->src)
			c->src->ops->destroy(c->src);
		c->src = NULL;
		free(c->host);
		c->host = NULL;
		unload_if_idle(sv);
		return err;
	}
	set_pid_depth(c);
	c->slot = slot;
	sv->slot_used[slot] = true;
	sv->counted_ns = 0;
	sv->opened++;
	opened_facts(&r->u.opened, c->host);
	if (sv->verbose)
		serve_say("uid %u: tree %u opened (%zu open)", (unsigned)c->cred.uid, slot, trees_open(sv));
	return 0;
}

/* A client is known by SO_PEERCRED: its uid and gid as it connected. Its
 * capabilities cannot be known from a socket: the rule takes none. */
static int may_trace(const struct client *c, pid_t pid, struct hp_msg *r)
{
	struct tracer t = { .uid = c->cred.uid, .gid = c->cred.gid };
	int err = host_may_trace(pid, &t);

	if (err == -EPERM)
		snprintf(r->u.why, HP_WHY_LEN, "process %d is not yours: the helper measures only "
			 "processes you could trace (your uid and gid, no capabilities, dumpable)", (int)pid);
	else if (err == -ESRCH)
		snprintf(r->u.why, HP_WHY_LEN, "process %d has exited", (int)pid);
	else if (err)
		snprintf(r->u.why, HP_WHY_LEN, "process %d: %s", (int)pid, strerror(-err));
	return err;
}

static int do_add_root(struct server *sv, struct client *c, int pidfd, struct hp_msg *r)
{
	pid_t pid = 0;
	int err;

	if (!c->src || c->started) {
		snprintf(r->u.why, HP_WHY_LEN, "add roots after open and before start");
		return -EPROTO;
	}
	if (c->roots >= SERVE_MAX_ROOTS) {
		snprintf(r->u.why, HP_WHY_LEN, "at most %d processes per tree", SERVE_MAX_ROOTS);
		return -E2BIG;
	}
	if (pidfd < 0) {
		snprintf(r->u.why, HP_WHY_LEN, "the process must come as a pidfd (SCM_RIGHTS)");
		return -EINVAL;
	}
	err = host_pidfd_pid(pidfd, &pid);
	if (err == -EXDEV) {
		snprintf(r->u.why, HP_WHY_LEN, "the process is not in the helper's PID namespace: "
			 "run the helper in the same or an ancestor PID namespace");
		return err;
	}
	if (err == -ESRCH) {
		snprintf(r->u.why, HP_WHY_LEN, "the process has exited");
		return err;
	}
	if (err) {
		snprintf(r->u.why, HP_WHY_LEN, "not a process file descriptor (pidfd)");
		return err;
	}
	if (c->cred.uid != 0) {
		err = may_trace(c, pid, r);
		if (err)
			return err;
	}
	err = c->src->ops->add_root(c->src, pid);
	/* The pidfd names the process checked above: if it is still alive
	 * now, the PID named it all along and no other process was entered. */
	if (host_pidfd_exited(pidfd)) {
		serve_remove_tree(sv, c, "a root exited while entered");
		snprintf(r->u.why, HP_WHY_LEN, "the process exited while it was entered; the tree "
			 "was removed: open another");
		return -ESRCH;
	}
	if (err) {
		snprintf(r->u.why, HP_WHY_LEN, "cannot enter process %d: %s", (int)pid, strerror(-err));
		return err;
	}
	c->root_pid[c->roots++] = pid;
	return 0;
}

static int do_start(struct server *sv, struct client *c, struct hp_msg *r)
{
	int err;

	if (!c->src || c->started || !c->roots) {
		snprintf(r->u.why, HP_WHY_LEN, "start an open tree once, after adding a process");
		return -EPROTO;
	}
	err = c->src->ops->start(c->src);
	if (err) {
		snprintf(r->u.why, HP_WHY_LEN, "cannot start: %s", strerror(-err));
		return err;
	}
	c->started = true;
	serve_unique_start(sv, c);
	if (c->src->ops->window_start_pages)
		r->u.started.window_start_pages = c->src->ops->window_start_pages(c->src);
	return 0;
}

static int do_close_window(struct client *c, struct hp_msg *r)
{
	struct figure f = { 0 };
	int err;

	if (!c->src || !c->started) {
		snprintf(r->u.why, HP_WHY_LEN, "no started tree on this connection");
		return -EPROTO;
	}
	err = c->src->ops->close_window(c->src, &f);
	if (err) {
		snprintf(r->u.why, HP_WHY_LEN, "reading the window failed: %s", strerror(-err));
		return err;
	}
	hp_figure_to(&r->u.figure, &f);
	c->src->ops->counters(c->src, true, &r->u.figure.counters);
	if (c->src->ops->window_start_pages)
		r->u.figure.next_start_pages = c->src->ops->window_start_pages(c->src);
	serve_unique_window(c, &r->u.figure.unique);
	serve_readable_holders(c, &r->u.figure, c->pid_depth);
	return 0;
}

/* One walk of the shared maps counts every tree's entries; it costs in
 * proportion to the entries of every tree, so another user than root
 * gets counts at most STATUS_COUNT_MS old instead of a walk of its own. */
static void count_entries(struct server *sv, bool fresh, struct tree_entries per_tree[MAX_TREES])
{
	uint64_t now = monotonic_ns();

	if (!sv->shared) {
		memset(per_tree, 0, sizeof(struct tree_entries) * MAX_TREES);
		return;
	}
	if (fresh || !sv->counted_ns || now - sv->counted_ns > STATUS_COUNT_MS * 1000000ULL) {
		memset(sv->counted, 0, sizeof(sv->counted));
		tracker_load__count_trees(sv->shared, sv->counted);
		sv->counted_ns = now;
	}
	memcpy(per_tree, sv->counted, sizeof(sv->counted));
}

/* Root sees every tree and the helper's history; another user only its
 * own connections and trees, and whether the load is in the kernel. */
static void do_status(struct server *sv, const struct client *c, struct hp_msg *r)
{
	struct tree_entries per_tree[MAX_TREES] = { 0 };
	struct hp_status *st = &r->u.status;
	bool all = c->cred.uid == 0;

	memset(st, 0, sizeof(*st));
	st->scope = all ? HP_STATUS_ALL : HP_STATUS_OWN;
	st->loaded = sv->shared != NULL;
	st->max_trees = MAX_TREES;
	if (all) {
		st->trees_opened = sv->opened;
		st->trees_removed = sv->removed;
		st->loads = sv->loads;
	}
	count_entries(sv, all, per_tree);
	for (unsigned i = 0; i < MAX_TREES && all; i++) {
		if (sv->slot_used[i])
			continue;
		st->stray_mm_entries += per_tree[i].mms;
		st->stray_task_entries += per_tree[i].tasks;
		st->stray_thread_entries += per_tree[i].threads;
	}
	for (size_t i = 0; i < sv->n; i++) {
		struct client *o = &sv->clients[i];
		struct hp_tree *t;

		if (!all && o->cred.uid != c->cred.uid)
			continue;
		st->clients++;
		if (!o->src)
			continue;
		st->trees++;
		if (st->listed >= HP_STATUS_MAX)
			continue;
		t = &st->tree[st->listed++];
		t->uid = o->cred.uid;
		t->roots = o->roots;
		t->slot = o->slot;
		t->mm_entries = per_tree[o->slot].mms;
		t->task_entries = per_tree[o->slot].tasks;
		t->thread_entries = per_tree[o->slot].threads;
	}
}

int serve_handle(struct server *sv, struct client *c, const struct hp_msg *m, int *fd,
		 struct hp_msg *r)
{
	hp_init(r, (enum hp_type)m->type);
	switch (m->type) {
	case HP_OPEN:
		return do_open(sv, c, &m->u.open, r);
	case HP_ADD_ROOT:
		return do_add_root(sv, c, *fd, r);
	case HP_START:
		return do_start(sv, c, r);
	case HP_CLOSE_WINDOW:
		return do_close_window(c, r);
	case HP_CLOSE:
		serve_remove_tree(sv, c, "closed");
		return 0;
	case HP_STATUS:
		do_status(sv, c, r);
		return 0;
	case HP_DRAIN:
		return serve_do_drain(sv, c, r);
	case HP_MM_IDENTITY:
		return serve_do_identity(sv, c, &m->u.identity, r);
	case HP_UNIQUE:
		return serve_do_unique(c, fd, r);
	default:
		snprintf(r->u.why, HP_WHY_LEN, "unknown request %u", (unsigned)m->type);
		return -EPROTO;
	}
}
