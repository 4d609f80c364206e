// SPDX-License-Identifier: MIT
/*
 * The bpf source through `peakbpf serve` (serve.c): the same interface as
 * source_bpf.c (source.h), each call one request on the helper's socket.
 * Roots go as pidfds, so the helper enters the process this caller named
 * even if its PID is reused in between. The record of the sum comes in
 * batches (HP_DRAIN), its mms named by the helper (HP_MM_IDENTITY).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>
#include "helper_proto.h"
#include "host.h"
#include "sources.h"
#include "figure.h"

#define HELPER_MAX_STRINGS 16
/* Batches one drain takes at most: the helper's whole queue, and room for
 * what comes meanwhile; the next drain takes the rest. */
#define HELPER_DRAIN_ROUNDS (2 * HP_QUEUE_MAX / HP_DRAIN_MAX)

struct helper_source {
	struct source base;
	int fd;
	pid_t owner;                    /* the process that opened it */
	char path[108];
	char scope[192];
	char teardown_hook[32];
	char why[HP_WHY_LEN + 128];     /* the helper's, or ours with the path */
	/* The inexact reasons seen so far, kept for the session's life:
	 * figures point to them after the window that brought them. */
	char reasons[HELPER_MAX_STRINGS][128];
	size_t n_reasons;
	struct bpf_counters counters;
	int64_t window_start_pages;     /* the sum as the open window began */
	bool record;                    /* the tree records its changes */
	/* Unique memory (HP_UNIQUE): the last window's, as the helper sent it
	 * with the summed figure; why: its reason, kept for the session. */
	bool unique_asked;
	struct hp_unique unique;
	struct sum_event *batch;        /* HP_DRAIN_MAX, while recording */
};

static struct helper_source *to_helper(struct source *s)
{
	return (struct helper_source *)s;
}

/* The reply in m to a request of type (sent with send_err, received with
 * recv_err): its error, with the helper's reason in h->why. */
static int answered(struct helper_source *h, struct hp_msg *m, uint16_t type, int send_err,
		    int recv_err)
{
	int err = send_err;

	/* A helper that refused the connection shut it after saying why. */
	if (!err || err == -EPIPE || err == -ECONNRESET) {
		if (!err || !recv_err)
			err = recv_err;
	}
	if (err == -EPROTONOSUPPORT) {
		/* m's header is where every version has it; the path is
		 * said by the open that met it (the first request). */
		snprintf(h->why, sizeof(h->why), "it speaks protocol version %u, this peakbpf %d: "
			 "run the peakbpf serve of this version", (unsigned)m->version, HP_VERSION);
		return err;
	}
	if (err) {
		snprintf(h->why, sizeof(h->why), "the helper at %s %s", h->path,
			 err == -ECONNRESET || err == -EPIPE ? "closed the connection" : strerror(-err));
		return err;
	}
	if (m->type != type && m->err == 0) {
		snprintf(h->why, sizeof(h->why), "the helper at %s answered another request", h->path);
		return -EPROTO;
	}
	if (m->err) {
		m->u.why[HP_WHY_LEN - 1] = '\0';
		snprintf(h->why, sizeof(h->why), "%s", m->u.why);
		return m->err < 0 ? m->err : -EPROTO;
	}
	return 0;
}

/* Send m (with fd, or -1) and take the reply into m; its error, with the
 * helper's reason in h->why. */
static int call(struct helper_source *h, struct hp_msg *m, int fd)
{
	uint16_t type = m->type;
	int err = hp_send(h->fd, m, fd), recv_err = 0;

	if (!err || err == -EPIPE || err == -ECONNRESET)
		recv_err = hp_recv(h->fd, m, NULL);
	return answered(h, m, type, err, recv_err);
}

static int helper_add_root(struct source *s, pid_t pid)
{
	struct helper_source *h = to_helper(s);
	struct hp_msg m;
	int pidfd = (int)syscall(SYS_pidfd_open, pid, 0), err;

	if (pidfd < 0) {
		err = -errno;
		snprintf(h->why, sizeof(h->why), "process %d: %s", (int)pid, strerror(-err));
		return err;
	}
	hp_init(&m, HP_ADD_ROOT);
	err = call(h, &m, pidfd);
	close(pidfd);
	return err;
}

static int helper_start(struct source *s)
{
	struct helper_source *h = to_helper(s);
	struct hp_msg m;
	int err;

	hp_init(&m, HP_START);
	err = call(h, &m, -1);
	if (!err)
		h->window_start_pages = m.u.started.window_start_pages;
	return err;
}

static const char *keep_reason(struct helper_source *h, const char *r)
{
	if (!r)
		return NULL;
	for (size_t i = 0; i < h->n_reasons; i++)
		if (!strcmp(h->reasons[i], r))
			return h->reasons[i];
	if (h->n_reasons == HELPER_MAX_STRINGS)
		return "not exact (reason lost: too many distinct reasons)";
	snprintf(h->reasons[h->n_reasons], sizeof(h->reasons[0]), "%s", r);
	return h->reasons[h->n_reasons++];
}

static int helper_close_window(struct source *s, struct figure *out)
{
	struct helper_source *h = to_helper(s);
	struct hp_msg *m = malloc(sizeof(*m));  /* large: not on the stack */
	int err;

	if (!m)
		return -ENOMEM;
	hp_init(m, HP_CLOSE_WINDOW);
	err = call(h, m, -1);
	if (err)
		goto cleanup;
	m->u.figure.inexact_reason[sizeof(m->u.figure.inexact_reason) - 1] = '\0';
	m->u.figure.scope[sizeof(m->u.figure.scope) - 1] = '\0';
	hp_figure_from(out, &m->u.figure);
	snprintf(h->scope, sizeof(h->scope), "%s, via helper %s", m->u.figure.scope, h->path);
	out->scope = h->scope;
	out->inexact_reason = keep_reason(h, out->inexact_reason);
	h->counters = m->u.figure.counters;
	h->window_start_pages = m->u.figure.next_start_pages;
	h->unique = m->u.figure.unique;
	h->unique.why[sizeof(h->unique.why) - 1] = '\0';
cleanup:
	if (err) {
		/* No figure this window: the reason is the helper's. */
		memset(&h->unique, 0, sizeof(h->unique));
		snprintf(h->unique.why, sizeof(h->unique.why), "%.*s", (int)sizeof(h->unique.why) - 1, h->why);
	}
	free(m);
	return err;
}

/* The tree's own cgroup to the helper, which counts it from now (empty:
 * before the first root). */
static int helper_unique_open(struct source *s, int cgroup_dir_fd, char *why, size_t len)
{
	struct helper_source *h = to_helper(s);
	struct hp_msg m;
	int err;

	hp_init(&m, HP_UNIQUE);
	err = call(h, &m, cgroup_dir_fd);
	if (err) {
		snprintf(why, len, "the helper: %s", h->why);
		return err;
	}
	h->unique_asked = true;
	return 0;
}

static void helper_unique_window(struct source *s, struct figure *out)
{
	struct helper_source *h = to_helper(s);
	const struct hp_unique *u = &h->unique;

	memset(out, 0, sizeof(*out));
	out->scope = UNIQUE_SCOPE;
	if (!h->unique_asked) {         /* never asked: the session says why */
		out->source = "unavailable";
		return;
	}
	if (!u->measured) {
		out->source = "unavailable";
		out->inexact_reason = keep_reason(h, u->why[0] ? u->why : "not measured by the helper");
		return;
	}
	out->source = "bpf-memcg";
	out->measured = true;
	out->exact = u->exact;
	out->other_cgroups = u->other_cgroups;
	out->peak_bytes = u->peak_bytes;
	out->baseline_known = true;
	out->baseline_bytes = u->baseline_bytes;
	out->anon_bytes = u->anon_bytes;
	out->file_bytes = u->file_bytes;
	out->inexact_reason = u->exact ? NULL : keep_reason(h, u->why);
}

static void helper_destroy(struct source *s)
{
	struct helper_source *h = to_helper(s);
	struct hp_msg m;

	/* A forked child closing what it inherited must not remove its
	 * parent's tree: it only drops its copy of the socket. */
	if (h->fd >= 0 && h->owner == getpid()) {
		/* Closing the socket alone removes the tree too; asking
		 * first makes it gone when this returns. */
		hp_init(&m, HP_CLOSE);
		if (hp_send(h->fd, &m, -1) == 0)
			hp_recv(h->fd, &m, NULL);
	}
	if (h->fd >= 0)
		close(h->fd);
	free(h->batch);
	free(h);
}

bool helper_socket_exists(const char *path)
{
	return access(path, F_OK) == 0;
}

static const char *helper_refusal(const struct source *s)
{
	return ((const struct helper_source *)s)->why;
}

/* What the helper sent as the last window closed, whenever asked. */
static void helper_counters(struct source *s, bool at_cut, struct bpf_counters *c)
{
	(void)at_cut;
	*c = to_helper(s)->counters;
}

/* One batch of the tree's changes handed to fn; *more: the helper holds
 * more now. The first error of fn is kept in *fn_err, and the rest handed
 * on all the same: they have left the helper. */
static int drain_batch(struct helper_source *h, source_sum_fn fn, void *ctx, uint64_t *drops,
		       bool *more, int *fn_err)
{
	struct hp_msg m;
	size_t n = 0;
	int err, recv_err = 0;

	hp_init(&m, HP_DRAIN);
	err = hp_send(h->fd, &m, -1);
	if (!err || err == -EPIPE || err == -ECONNRESET)
		recv_err = hp_recv_batch(h->fd, &m, h->batch, &n);
	err = answered(h, &m, HP_DRAIN, err, recv_err);
	if (err)
		return err;
	for (size_t i = 0; i < n; i++) {
		int e = fn(ctx, &h->batch[i]);

		if (e < 0 && !*fn_err)
			*fn_err = e;
	}
	*drops = m.u.drained.drops;
	*more = m.u.drained.more != 0;
	return 0;
}

/* Every change the helper holds for the tree now (a bounded number of
 * batches: what comes meanwhile waits for the next call). */
static int helper_drain_sums(struct source *s, source_sum_fn fn, void *ctx, uint64_t *drops)
{
	struct helper_source *h = to_helper(s);
	bool more = true;
	int err = 0, fn_err = 0;

	if (!h->record)
		return -EOPNOTSUPP;
	for (int round = 0; more && !err && round < HELPER_DRAIN_ROUNDS; round++)
		err = drain_batch(h, fn, ctx, drops, &more, &fn_err);
	return err ? err : fn_err;
}

static int helper_mm_identity(struct source *s, uint64_t key, uint32_t tgid, uint32_t *vpid,
			      char comm[16])
{
	struct hp_msg m;
	int err;

	hp_init(&m, HP_MM_IDENTITY);
	m.u.identity.mm = key;
	m.u.identity.tgid = tgid;
	err = call(to_helper(s), &m, -1);
	if (err)
		return -ENOENT;         /* unknown, whatever the reason: no label */
	*vpid = m.u.identity.vpid;
	memcpy(comm, m.u.identity.comm, 16);
	comm[15] = '\0';
	return 0;
}

static int64_t helper_window_start_pages(struct source *s)
{
	return to_helper(s)->window_start_pages;
}

static const struct source_ops helper_ops = {
	.add_root = helper_add_root,
	.start = helper_start,
	.close_window = helper_close_window,
	.destroy = helper_destroy,
	.counters = helper_counters,
	.drain_sums = helper_drain_sums,
	.mm_identity = helper_mm_identity,
	.window_start_pages = helper_window_start_pages,
	.unique_open = helper_unique_open,
	.unique_window = helper_unique_window,
	.refusal = helper_refusal,
};

int helper_source_open(const char *path, uint32_t max_tracked, bool command_mode, bool record,
		       struct host_facts *host, struct source **out, char *why, size_t whylen)
{
	struct helper_source *h;
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	struct hp_msg m;
	int err;

	*out = NULL;
	if (strlen(path) >= sizeof(a.sun_path) || strlen(path) >= sizeof(h->path)) {
		snprintf(why, whylen, "helper socket path too long: %s", path);
		return -ENAMETOOLONG;
	}
	h = calloc(1, sizeof(*h));
	if (!h)
		return -ENOMEM;
	h->base.ops = &helper_ops;
	h->base.name = "bpf";
	h->owner = getpid();
	h->fd = -1;
	h->record = record;
	h->batch = record ? malloc(HP_DRAIN_MAX * sizeof(*h->batch)) : NULL;
	if (record && !h->batch) {
		err = -ENOMEM;
		snprintf(why, whylen, "out of memory for the sum log");
		goto cleanup;
	}
	memcpy(h->path, path, strlen(path));
	memcpy(a.sun_path, path, strlen(path));
	h->fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (h->fd < 0 || connect(h->fd, (struct sockaddr *)&a, sizeof(a))) {
		err = -errno;
		snprintf(why, whylen, "cannot reach the helper at %s: %s (is peakbpf serve running?)",
			 path, strerror(-err));
		goto cleanup;
	}
	hp_init(&m, HP_OPEN);
	m.u.open.max_tracked = max_tracked;
	m.u.open.command_mode = command_mode;
	m.u.open.record = record;
	err = call(h, &m, -1);
	if (err) {
		snprintf(why, whylen, "helper %s: %s", path, h->why);
		goto cleanup;
	}
	m.u.opened.teardown_hook[sizeof(m.u.opened.teardown_hook) - 1] = '\0';
	snprintf(h->teardown_hook, sizeof(h->teardown_hook), "%s", m.u.opened.teardown_hook);
	host->bpf_loaded = true;
	host->rss_percpu = m.u.opened.rss_percpu;
	host->exact_path_err = m.u.opened.exact_path_err;
	host->teardown_hook = h->teardown_hook;
	host->probe_ms = m.u.opened.probe_ms;
	host->load_ms = m.u.opened.load_ms;
	host->learn_ms = m.u.opened.learn_ms;
	host->attach_ms = m.u.opened.attach_ms;
	*out = &h->base;
	return 0;
cleanup:
	helper_destroy(&h->base);
	return err;
}
