// SPDX-License-Identifier: MIT
/*
 * The record of the sum through the helper: the one load records the
 * trees whose clients asked (tree_record, bpf/tracker_maps.bpf.h) into one
 * ring; the loop drains it every SERVE_DRAIN_MS while any client records,
 * and before every HP_DRAIN, into each client's bounded queue
 * (serve_sums.h), where the client's HP_DRAIN takes them in batches. A
 * client that never asks fills its own queue and loses its own changes
 * (counted, and its figure says so), nobody else's.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include "clock.h"
#include "serve_int.h"

#define MS 1000000ULL

void serve_record_init(struct server *sv)
{
	/* Without a random key the names still work; they are just
	 * guessable. getrandom does not fail for 20 bytes once booted. */
	if (getrandom(&sv->wire, sizeof(sv->wire), 0) != (ssize_t)sizeof(sv->wire))
		memset(&sv->wire, 0, sizeof(sv->wire));
}

int serve_record_load(struct server *sv)
{
	struct tracker_opts opts = SERVE_TRACKER_OPTS;
	int err = tracker_load__open(&opts, &sv->shared);

	if (err) {
		/* A kernel without BPF ring buffers (before 5.8) still gets
		 * every figure; HP_OPEN's record is then refused, saying so. */
		opts.record_ring_bytes = 0;
		err = tracker_load__open(&opts, &sv->shared);
		if (!err && sv->verbose)
			serve_say("loaded without the sum log: clients that ask for it are refused");
	}
	return err;
}

static struct tracker_tree *tree_of(const struct client *c)
{
	return c->src && c->src->ops->tree ? c->src->ops->tree(c->src) : NULL;
}

int serve_record_open(struct server *sv, struct client *c, struct hp_msg *r)
{
	struct tracker_tree *t = tree_of(c);
	int sndbuf = SERVE_RECORD_SNDBUF;
	int err;

	/* The slot's last tree may have left changes in the ring: they go
	 * now, to no one, before this tree's own begin. */
	serve_record_drain(sv);
	err = t ? tracker_tree__set_record(t, true) : -EOPNOTSUPP;
	if (!err)
		err = serve_readable_open(c);
	/* Root reads everything; anyone else's changes are judged as made. */
	if (!err && c->cred.uid != 0)
		tracker_tree__set_reader(t, c->cred.uid, c->cred.gid);
	if (err) {
		snprintf(r->u.why, HP_WHY_LEN, "the helper cannot record the sum: %s", strerror(-err));
		return err;
	}
	sum_queue_init(&c->rec, HP_QUEUE_MAX);
	c->recording = true;
	/* A batch is larger than the buffer of 4 replies other clients get. */
	setsockopt(c->fd, SOL_SOCKET, SO_SNDBUF, &sndbuf, sizeof(sndbuf));
	return 0;
}

void serve_record_close(struct client *c)
{
	if (!c->recording)
		return;
	sum_queue_free(&c->rec);
	serve_readable_close(c);
	c->rec_withheld = 0;
	c->recording = false;
	c->out_events = 0;
}

struct routes {
	struct server *sv;
	uint64_t now;
	struct client *by_tree[MAX_TREES];
};

/* A change's tgid as the client gets it: the helper's PID, as a load of
 * its own would have it, for a client in the helper's PID namespace (a
 * line's label falls back to it), else a name that says nothing of the
 * helper's numbering. Its own inverse. */
static uint32_t wire_tgid(const struct server *sv, const struct client *c, uint32_t tgid)
{
	return c->own_pidns ? tgid : sum_wire_tgid(&sv->wire, tgid);
}

static int route(void *ctx, const struct sum_event *e)
{
	struct routes *rt = ctx;
	struct client *c = rt->by_tree[e->tree & (MAX_TREES - 1)];
	struct sum_event w = *e;

	if (!c)
		return 0;       /* a tree that no longer records: its client is gone */
	if (!serve_readable_mm(c, e, rt->now)) {
		c->rec_withheld++;      /* a process the client may not read: its sum only */
		return 0;
	}
	w.mm = sum_wire_mm(&rt->sv->wire, e->mm);
	w.tgid = wire_tgid(rt->sv, c, e->tgid);
	w.tree = 0;
	w.seen = SUM_SEEN_UNJUDGED;
	sum_queue_push(&c->rec, &w);
	return 0;
}

void serve_record_drain(struct server *sv)
{
	struct routes rt = { .sv = sv, .now = monotonic_ns() };
	bool any = false;

	for (size_t i = 0; i < sv->n; i++) {
		struct client *c = &sv->clients[i];

		if (c->src && c->recording) {
			rt.by_tree[c->slot & (MAX_TREES - 1)] = c;
			any = true;
		}
	}
	sv->drained_ns = monotonic_ns();
	if (any && sv->shared)
		tracker_load__drain(sv->shared, TRACKER_EVERY_TREE, route, &rt);
}

static bool any_recording(const struct server *sv)
{
	for (size_t i = 0; i < sv->n; i++)
		if (sv->clients[i].recording)
			return true;
	return false;
}

void serve_record_tick(struct server *sv, uint64_t now)
{
	if (now - sv->drained_ns >= SERVE_DRAIN_MS * MS && any_recording(sv))
		serve_record_drain(sv);
}

int serve_record_timeout(const struct server *sv, uint64_t now)
{
	uint64_t since = now - sv->drained_ns;

	if (!any_recording(sv))
		return -1;
	return since >= SERVE_DRAIN_MS * MS ? 0 : (int)((SERVE_DRAIN_MS * MS - since) / MS) + 1;
}

int serve_do_drain(struct server *sv, struct client *c, struct hp_msg *r)
{
	struct tree_state ts = { 0 };
	struct tracker_tree *t = tree_of(c);

	if (!c->recording || !t) {
		snprintf(r->u.why, HP_WHY_LEN, "no tree that records on this connection (HP_OPEN's record)");
		return -EPROTO;
	}
	serve_record_drain(sv);         /* every change made before this request */
	tracker_tree__read_state(t, &ts);
	r->u.drained.count = c->rec.n < HP_DRAIN_MAX ? (uint32_t)c->rec.n : HP_DRAIN_MAX;
	r->u.drained.more = c->rec.n > HP_DRAIN_MAX;
	/* Withheld changes count as not recorded: the record is not whole. */
	r->u.drained.drops = ts.record_drops + c->rec.dropped + c->rec_withheld;
	return 0;
}

int serve_do_identity(struct server *sv, struct client *c, const struct hp_identity *in,
		      struct hp_msg *r)
{
	struct tracker_tree *t = tree_of(c);
	struct hp_identity *out = &r->u.identity;
	uint64_t mm;
	uint32_t tgid;
	int err;

	if (!t) {
		snprintf(r->u.why, HP_WHY_LEN, "no tree on this connection");
		return -EPROTO;
	}
	/* Only the tree's own mms answer (tracker_tree__mm_identity checks it). */
	mm = sum_wire_mm_back(&sv->wire, in->mm);
	tgid = wire_tgid(sv, c, in->tgid);
	err = tracker_tree__mm_identity(t, mm, tgid, &out->vpid, out->comm);
	if (err) {
		snprintf(r->u.why, HP_WHY_LEN, "no such address space in this tree (now)");
		return err;
	}
	err = serve_may_read(c, (pid_t)tgid);
	/* Gone since: as the record last judged it (a short child's line). */
	if (err == -ESRCH && serve_readable_seen(c, mm, tgid))
		err = 0;
	if (err) {
		memset(out, 0, sizeof(*out));
		snprintf(r->u.why, HP_WHY_LEN, "that process is not yours to read (a setuid program, "
			 "or not dumpable): its memory counts in the sum, nothing else of it is given");
		return -EPERM;
	}
	out->mm = in->mm;
	out->tgid = in->tgid;
	return 0;
}
