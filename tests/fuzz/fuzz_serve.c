// SPDX-License-Identifier: MIT
/*
 * libFuzzer: the helper's request handler (src/serve_tree.c, serve_handle)
 * fed random request sequences from eight clients of three users (root
 * among them), with connections ending anywhere. The BPF side is stubbed
 * here (a load, trees, processes that enter, exit or are refused at the
 * input's choice): what is fuzzed is the helper's bookkeeping. After every
 * step: each open tree holds the one slot it names, the load is in exactly
 * while a tree is open, no user other than root holds more trees than its
 * limit, every refusal says why, no recording client's queue is past
 * its bound (the stubbed ring hands each drain changes of any tree), and
 * a tree's unique state and cgroup fd are there only while it is (the
 * cgroup's checks stubbed too: an fd of /dev/null stands for it). Leaks,
 * fds included, show at the end (ASan; the count of open fds).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "fuzz.h"
#include "host.h"
#include "serve_int.h"
#include "sources.h"
#include "fdcheck.h"
#include "unique_api.h"
#include <fcntl.h>
#include <unistd.h>

#define CLIENTS 8

struct tracker {
	int unused;
};

static struct { bool load_fails, open_fails, add_fails, exited, not_yours, cgroup_bad, cgroup_busy,
		 unique_fails; int pid_err; } knob;
static uint64_t clock_ns;

/* ---- the stubs: the BPF side and /proc, as the input says ---- */

__u64 monotonic_ns(void) { return clock_ns += 1000; }
void serve_say(const char *fmt, ...) { (void)fmt; }
uint64_t host_effective_caps(void) { return 0; }
void host_facts_fill(struct host_facts *h, uint64_t capeff) { (void)capeff; memset(h, 0, sizeof(*h)); }
bool host_pidfd_exited(int pidfd) { (void)pidfd; return knob.exited; }
int host_may_trace(pid_t pid, const struct tracer *t) { (void)pid; (void)t; return knob.not_yours ? -EPERM : 0; }

int host_pidfd_pid(int pidfd, pid_t *pid)
{
	*pid = pidfd + 100;
	return knob.pid_err;
}

struct tracker_load {
	int unused;
};
struct tracker_tree {
	int unused;
};

int tracker_load__open(const struct tracker_opts *opts, struct tracker_load **out)
{
	(void)opts;
	if (knob.load_fails)
		return -EPERM;
	*out = calloc(1, sizeof(**out));
	return *out ? 0 : -ENOMEM;
}

void tracker_load__destroy(struct tracker_load *t) { free(t); }
void tracker_tree__set_pid_depth(struct tracker_tree *t, unsigned depth) { (void)t; (void)depth; }

static struct tracker_tree tree_stub;
static unsigned ring_seed;

/* The ring: a few changes of trees the input chooses, recording or not. */
int tracker_load__drain(struct tracker_load *load, unsigned tree, source_sum_fn fn, void *ctx)
{
	(void)load; (void)tree;
	for (unsigned i = 0; i < (ring_seed & 7) * 300; i++) {
		struct sum_event e = { .ns = i, .mm = i * 64, .tree = (ring_seed >> 3) + i };

		fn(ctx, &e);
	}
	return 0;
}

int tracker_tree__set_record(struct tracker_tree *t, bool on) { (void)t; (void)on; return 0; }
void tracker_tree__set_reader(struct tracker_tree *t, uid_t uid, gid_t gid) { (void)t; (void)uid; (void)gid; }
void tracker_tree__read_state(const struct tracker_tree *t, struct tree_state *out) { (void)t; memset(out, 0, sizeof(*out)); }

int tracker_tree__mm_identity(struct tracker_tree *t, __u64 key, __u32 tgid, __u32 *vpid,
			      char comm[COMM_LEN])
{
	(void)t; (void)tgid;
	if (key & 1)
		return -ENOENT;
	*vpid = 1;
	memcpy(comm, "stub", 5);
	return 0;
}

int tracker_load__count_trees(struct tracker_load *t, struct tree_entries per_tree[MAX_TREES])
{
	(void)t;
	memset(per_tree, 0, sizeof(struct tree_entries) * MAX_TREES);
	return 0;
}

static int fake_add_root(struct source *s, pid_t pid) { (void)s; (void)pid; return knob.add_fails ? -ESRCH : 0; }
static int fake_start(struct source *s) { (void)s; return 0; }
static void fake_destroy(struct source *s) { free(s); }
static void fake_counters(struct source *s, bool at_cut, struct bpf_counters *c) { (void)s; (void)at_cut; memset(c, 0, sizeof(*c)); }
static struct tracker_tree *fake_tree(struct source *s) { (void)s; return &tree_stub; }

static int fake_close_window(struct source *s, struct figure *out)
{
	(void)s;
	memset(out, 0, sizeof(*out));
	out->measured = out->exact = true;
	out->peak_bytes = 4096;
	return 0;
}

static const struct source_ops fake_ops = { .add_root = fake_add_root, .start = fake_start,
	.close_window = fake_close_window, .destroy = fake_destroy, .counters = fake_counters,
	.tree = fake_tree };

int bpf_source_open_tree(struct tracker_load *shared, unsigned tree, const struct bpf_source_opts *o,
			 struct host_facts *host, struct source **out)
{
	(void)shared; (void)tree; (void)o; (void)host;
	if (knob.open_fails)
		return -ENOMEM;
	*out = calloc(1, sizeof(**out));
	if (!*out)
		return -ENOMEM;
	(*out)->ops = &fake_ops;
	(*out)->name = "bpf";
	return 0;
}

/* The tree's cgroup and its unique state, as the input says. */
struct unique {
	int unused;
};
const char UNIQUE_SCOPE[] = "stub";
static int uniques;

int cgroup_dir_check(int fd, uid_t uid, char *why, size_t len)
{
	(void)fd; (void)uid;
	if (knob.cgroup_bad)
		snprintf(why, len, "stub: not yours");
	return knob.cgroup_bad ? -EPERM : 0;
}

int cgroup_procs_check(int fd, const pid_t *roots, size_t n, char *why, size_t len)
{
	(void)fd; (void)roots; (void)n;
	if (knob.cgroup_busy)
		snprintf(why, len, "stub: others");
	return knob.cgroup_busy ? -EBUSY : 0;
}

int unique_cgroup_id(int fd, uint64_t *id, char *why, size_t whylen)
{
	(void)why; (void)whylen;
	*id = (uint64_t)fd + 1;
	return 0;
}

int unique_open(struct tracker_tree *t, uint64_t cgroup_id, long page_size, struct unique **out,
		char *why, size_t whylen)
{
	(void)t; (void)cgroup_id; (void)page_size;
	*out = knob.unique_fails ? NULL : calloc(1, sizeof(**out));
	if (!*out)
		snprintf(why, whylen, "stub: no hook");
	uniques += *out != NULL;
	return *out ? 0 : -EOPNOTSUPP;
}

void unique_close_window(struct unique *u, struct figure *out)
{
	(void)u;
	memset(out, 0, sizeof(*out));
	out->measured = out->exact = true;
}

void unique_destroy(struct unique *u)
{
	uniques -= u != NULL;
	free(u);
}

/* ---- the driver ---- */

static void check(const struct server *sv)
{
	size_t trees = 0, slots = 0, per_uid[3] = { 0 };
	int live = 0;

	for (unsigned i = 0; i < MAX_TREES; i++)
		slots += sv->slot_used[i];
	for (size_t i = 0; i < sv->n; i++) {
		const struct client *c = &sv->clients[i];

		if (!c->src)
			continue;
		trees++;
		per_uid[c->cred.uid % 3]++;
		if (c->slot >= MAX_TREES || !sv->slot_used[c->slot])
			abort();
		if (c->recording && (c->rec.n > c->rec.max || c->rec.max != HP_QUEUE_MAX))
			abort();
		for (size_t j = 0; j < i; j++)
			if (sv->clients[j].src && sv->clients[j].slot == c->slot)
				abort();
		if ((c->unique || c->cgroup_fd >= 0) && !c->unique_asked)
			abort();
		if (c->started && c->cgroup_fd >= 0)
			abort();
		live += c->unique != NULL;
	}
	for (size_t i = 0; i < sv->n; i++)
		if (!sv->clients[i].src && (sv->clients[i].unique || sv->clients[i].cgroup_fd >= 0))
			abort();
	if (live != uniques)
		abort();
	/* A tree needs the load; without one, the load stays unless
	 * --unload-idle. */
	if (trees != slots || (trees > 0 && !sv->shared) || (!trees && sv->shared && sv->unload_idle) ||
	    per_uid[1] > SERVE_TREES_PER_UID || per_uid[2] > SERVE_TREES_PER_UID)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct server sv;
	struct hp_msg m, r;
	int fd;

	memset(&sv, 0, sizeof(sv));
	sv.unload_idle = size & 1;      /* both ways of the load */
	sv.n = CLIENTS;
	for (size_t i = 0; i < CLIENTS; i++) {
		sv.clients[i].fd = -1;
		sv.clients[i].cgroup_fd = -1;
		sv.clients[i].cred.uid = i % 3 == 0 ? 0 : 1000 + i % 3 - 1;   /* uid % 3: 0, 1, 2 */
	}
	for (size_t at = 0; at + 3 <= size; at += 3) {
		struct client *c = &sv.clients[data[at] % CLIENTS];
		uint8_t op = data[at + 1], k = data[at + 2];

		knob.load_fails = k & 1;
		knob.open_fails = (k & 6) == 6;
		knob.add_fails = (k & 24) == 24;
		knob.exited = (k & 96) == 96;
		knob.not_yours = k & 128 && op & 128;
		knob.pid_err = (op & 64) ? -ESRCH : 0;
		knob.cgroup_bad = (k & 3) == 3;
		knob.cgroup_busy = (k & 12) == 12;
		knob.unique_fails = (k & 48) == 48;
		hp_init(&m, (enum hp_type)(op % 11));
		ring_seed = k;
		if (m.type == HP_OPEN) {
			m.u.open.max_tracked = (op & 32) ? 70000u * k : 0;
			m.u.open.record = k & 8;
		} else if (m.type == HP_MM_IDENTITY) {
			m.u.identity.mm = k;
		}
		/* HP_UNIQUE's fd is a real one (the handler may keep it, and
		 * closes it then); another request's, a number. */
		fd = (op & 16) ? -1 : m.type == HP_UNIQUE ? open("/dev/null", O_RDONLY | O_CLOEXEC) : k;
		if (op % 11 == 10)
			serve_remove_tree(&sv, c, "client gone");
		else if (serve_handle(&sv, c, &m, &fd, &r) && !r.u.why[0])
			abort();        /* every refusal says why */
		if (m.type == HP_UNIQUE && fd >= 0)
			close(fd);
		check(&sv);
	}
	for (size_t i = 0; i < CLIENTS; i++)
		serve_remove_tree(&sv, &sv.clients[i], "the end");
	/* The load stays while no tree is open (unless --unload-idle): the
	 * helper closes it at exit. */
	tracker_load__destroy(sv.shared);
	if (uniques)
		abort();
	return 0;
}
