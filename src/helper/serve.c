// SPDX-License-Identifier: MIT
/*
 * `peakbpf serve`: a privileged helper that measures trees for local users
 * who cannot load BPF. It listens on a SOCK_SEQPACKET Unix socket (its own,
 * or fd 3 from systemd socket activation), knows each client by
 * SO_PEERCRED, and enters only processes the client could ptrace, each
 * named by a pidfd so that a reused PID cannot redirect it. One BPF load
 * (a tracker) serves every open tree, each client's in a slot of its own
 * (MAX_TREES, tracker.h); closing a tree, or the client's end of the
 * socket, deletes that tree's map entries, and the load goes with the last
 * tree. docs/design.md has the protocol; README.md's Security section what
 * it authorises.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>
#include <bpf/libbpf.h>
#include "clock.h"
#include "helper_proto.h"
#include "host.h"
#include "tracker_api.h"
#include "pidns.h"
#include "serve.h"
#include "sources.h"
#include "status.h"

#define SERVE_MAX_CLIENTS 64
#define SERVE_TREES_PER_UID 4           /* open trees per uid other than root */
#define SERVE_MAX_ROOTS 64              /* roots per tree */
#define SERVE_CLIENTS_PER_UID 16        /* connections per uid other than root */
#define SYSTEMD_LISTEN_FD 3             /* sd_listen_fds(3): the first passed fd */
/* Entries of the shared maps: every tree's --max-tracked within them. */
#define SERVE_MAP_ENTRIES (MAX_TREES * DEFAULT_MAX_TRACKED)

struct client {
	int fd;
	struct ucred cred;
	struct source *src;             /* the open tree, or NULL */
	unsigned slot;                  /* its tree in the shared load */
	/* The source keeps a pointer to these: on the heap, because a
	 * client moves in clients[] when another before it is dropped. */
	struct host_facts *host;
	uint32_t roots;
	bool started;
};

struct server {
	int lfd, sigfd;
	const char *path;               /* unlinked at exit when we bound it */
	bool bound;
	struct client clients[SERVE_MAX_CLIENTS];
	size_t n;
	uint64_t opened, removed, loads;
	struct tracker *shared;         /* the load every tree shares, or NULL */
	bool slot_used[MAX_TREES];
	bool verbose;
	bool unload_idle;               /* --unload-idle: the load goes with the last tree */
};

static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void say(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fputs("peakbpf serve: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

/* ---- who may measure what ------------------------------------------------ */

/* The PID, in the helper's PID namespace, of the process a pidfd refers
 * to: its fdinfo's Pid line (0: not visible here, -1: it has exited). */
static int pidfd_pid(int pidfd, pid_t *pid)
{
	char path[64], link[64], line[128];
	int err = -EINVAL;
	ssize_t n;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/fd/%d", pidfd);
	n = readlink(path, link, sizeof(link) - 1);
	if (n < 0)
		return -errno;
	link[n] = '\0';
	if (strcmp(link, "anon_inode:[pidfd]"))
		return -EINVAL;         /* not a pidfd */
	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", pidfd);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		char *end;
		long v;

		if (strncmp(line, "Pid:", 4))
			continue;
		errno = 0;
		v = strtol(line + 4, &end, 10);
		if (errno || end == line + 4 || v < -1 || v > INT32_MAX)
			break;
		err = v > 0 ? 0 : v == 0 ? -EXDEV : -ESRCH;
		*pid = (pid_t)v;
		break;
	}
	fclose(f);
	return err;
}

static bool pidfd_alive(int pidfd)
{
	return syscall(SYS_pidfd_send_signal, pidfd, 0, NULL, 0) == 0;
}

/* ---- requests ------------------------------------------------------------- */

static size_t trees_of(const struct server *sv, uid_t uid)
{
	size_t n = 0;

	for (size_t i = 0; i < sv->n; i++)
		n += sv->clients[i].src && sv->clients[i].cred.uid == uid;
	return n;
}

static size_t trees_open(const struct server *sv)
{
	size_t n = 0;

	for (unsigned i = 0; i < MAX_TREES; i++)
		n += sv->slot_used[i];
	return n;
}

static void remove_tree(struct server *sv, struct client *c, const char *why)
{
	__u64 ns;

	if (!c->src)
		return;
	/* Destroying the source deletes its tree's entries from the shared
	 * maps (tracker_clear_tree), so nothing of a vanished client stays
	 * behind; with the last tree the load goes too, and its programs
	 * cost the machine's faults nothing while no one measures. */
	ns = monotonic_ns();
	c->src->ops->destroy(c->src);
	ns = monotonic_ns() - ns;
	c->src = NULL;
	free(c->host);
	c->host = NULL;
	sv->slot_used[c->slot] = false;
	if (!trees_open(sv) && sv->unload_idle) {
		tracker_close(sv->shared);
		sv->shared = NULL;
	}
	c->roots = 0;
	c->started = false;
	sv->removed++;
	if (sv->verbose)
		say("uid %u: tree %u removed (%s), its entries cleared in %.2f ms", (unsigned)c->cred.uid,
		    c->slot, why, ns / 1e6);
}

/* The tree's PIDs as the client numbers them (issue 24): a client in a
 * container sees its holders by its own PIDs, or as not visible (0). */
static void set_pid_depth(struct client *c)
{
	unsigned depth;
	int err = pidns_depth_of(c->cred.pid, &depth);

	tracker_set_pid_depth(c->src->ops->tracker(c->src), err ? TRACKER_PID_HIDDEN : depth);
}

static int do_open(struct server *sv, struct client *c, const struct hp_open *o,
		   struct hp_msg *r)
{
	struct bpf_source_opts bo = { .max_tracked = o->max_tracked ? o->max_tracked : DEFAULT_MAX_TRACKED,
				      .command_mode = o->command_mode != 0 };
	struct tracker_opts topts = { .max_tracked = SERVE_MAP_ENTRIES };
	struct hp_opened *op = &r->u.opened;
	unsigned slot = 0;
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
	if (c->cred.uid != 0 && trees_of(sv, c->cred.uid) >= SERVE_TREES_PER_UID) {
		snprintf(r->u.why, HP_WHY_LEN, "the helper measures at most %d trees at once per user: "
			 "wait for one of yours to end", SERVE_TREES_PER_UID);
		return -EUSERS;
	}
	if (o->max_tracked > SERVE_MAP_ENTRIES) {
		snprintf(r->u.why, HP_WHY_LEN, "--max-tracked: at most %d through the helper "
			 "(its trees share maps of that size)", SERVE_MAP_ENTRIES);
		return -E2BIG;
	}
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
		err = tracker_open(&topts, &sv->shared);
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
	if (err) {
		free(c->host);
		c->host = NULL;
		snprintf(r->u.why, HP_WHY_LEN, "the helper cannot open a tree: %s", strerror(-err));
		if (!trees_open(sv) && sv->unload_idle) {
			tracker_close(sv->shared);
			sv->shared = NULL;
		}
		return err;
	}
	set_pid_depth(c);
	c->slot = slot;
	sv->slot_used[slot] = true;
	sv->opened++;
	memset(op, 0, sizeof(*op));
	op->rss_percpu = c->host->rss_percpu;
	op->exact_path_err = c->host->exact_path_err;
	op->probe_ms = c->host->probe_ms;
	op->load_ms = c->host->load_ms;
	op->learn_ms = c->host->learn_ms;
	op->attach_ms = c->host->attach_ms;
	snprintf(op->teardown_hook, sizeof(op->teardown_hook), "%s",
		 c->host->teardown_hook ? c->host->teardown_hook : "");
	if (sv->verbose)
		say("uid %u: tree %u opened (%zu open)", (unsigned)c->cred.uid, slot, trees_open(sv));
	return 0;
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
	err = pidfd_pid(pidfd, &pid);
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
		err = host_may_trace_as(pid, c->cred.uid);
		if (err == -EPERM) {
			snprintf(r->u.why, HP_WHY_LEN, "process %d is not yours: the helper measures only "
				 "processes you could trace (same uid, dumpable)", (int)pid);
			return err;
		}
		if (err == -ESRCH || err == -ENOENT) {
			snprintf(r->u.why, HP_WHY_LEN, "process %d has exited", (int)pid);
			return -ESRCH;
		}
		if (err) {
			snprintf(r->u.why, HP_WHY_LEN, "process %d: %s", (int)pid, strerror(-err));
			return err;
		}
	}
	err = c->src->ops->add_root(c->src, pid);
	/* The pidfd names the process checked above: if it is still alive
	 * now, the PID named it all along and no other process was entered. */
	if (!pidfd_alive(pidfd)) {
		remove_tree(sv, c, "a root exited while entered");
		snprintf(r->u.why, HP_WHY_LEN, "the process exited while it was entered; the tree "
			 "was removed: open another");
		return -ESRCH;
	}
	if (err) {
		snprintf(r->u.why, HP_WHY_LEN, "cannot enter process %d: %s", (int)pid, strerror(-err));
		return err;
	}
	c->roots++;
	return 0;
}

static int do_start(struct client *c, struct hp_msg *r)
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
	return 0;
}

/* Root sees every tree; another user sees the counts and its own trees. */
static void do_status(struct server *sv, const struct client *c, struct hp_msg *r)
{
	struct tree_entries per_tree[MAX_TREES] = { 0 };
	struct hp_status *st = &r->u.status;
	size_t listed = 0;

	memset(st, 0, sizeof(*st));
	st->clients = (uint32_t)sv->n;
	st->trees_opened = sv->opened;
	st->trees_removed = sv->removed;
	st->loads = sv->loads;
	st->loaded = sv->shared != NULL;
	st->max_trees = MAX_TREES;
	/* One walk of the shared maps counts every tree's entries. */
	if (sv->shared)
		tracker_count_trees(sv->shared, per_tree);
	for (unsigned i = 0; i < MAX_TREES; i++) {
		if (sv->slot_used[i])
			continue;
		st->stray_mm_entries += per_tree[i].mms;
		st->stray_task_entries += per_tree[i].tasks;
		st->stray_thread_entries += per_tree[i].threads;
	}
	for (size_t i = 0; i < sv->n; i++) {
		struct client *o = &sv->clients[i];
		struct hp_tree *t;

		if (!o->src)
			continue;
		st->trees++;
		if (listed >= HP_STATUS_MAX || (c->cred.uid != 0 && o->cred.uid != c->cred.uid))
			continue;
		t = &st->tree[listed++];
		st->listed = (uint32_t)listed;
		t->uid = o->cred.uid;
		t->roots = o->roots;
		t->slot = o->slot;
		t->mm_entries = per_tree[o->slot].mms;
		t->task_entries = per_tree[o->slot].tasks;
		t->thread_entries = per_tree[o->slot].threads;
	}
}

/* One request; false when the connection must end. */
static bool serve_request(struct server *sv, struct client *c)
{
	struct hp_msg m, r;
	int fd = -1, err;

	err = hp_recv(c->fd, &m, &fd);
	if (err) {
		if (err == -EPROTO) {
			hp_init(&r, 0);
			r.err = -EPROTO;
			snprintf(r.u.why, HP_WHY_LEN, "protocol version %d expected: use a peakbpf as "
				 "new as the helper", HP_VERSION);
			hp_send(c->fd, &r, -1);
		}
		return false;
	}
	hp_init(&r, (enum hp_type)m.type);
	switch (m.type) {
	case HP_OPEN:
		err = do_open(sv, c, &m.u.open, &r);
		break;
	case HP_ADD_ROOT:
		err = do_add_root(sv, c, fd, &r);
		break;
	case HP_START:
		err = do_start(c, &r);
		break;
	case HP_CLOSE_WINDOW:
		err = do_close_window(c, &r);
		break;
	case HP_CLOSE:
		remove_tree(sv, c, "closed");
		err = 0;
		break;
	case HP_STATUS:
		do_status(sv, c, &r);
		err = 0;
		break;
	default:
		snprintf(r.u.why, HP_WHY_LEN, "unknown request %u", (unsigned)m.type);
		err = -EPROTO;
	}
	if (fd >= 0)
		close(fd);
	r.err = err;
	return hp_send(c->fd, &r, -1) == 0;
}

/* ---- the socket and the loop ---------------------------------------------- */

static void drop_client(struct server *sv, size_t i)
{
	struct client *c = &sv->clients[i];

	remove_tree(sv, c, "client gone");
	close(c->fd);
	sv->clients[i] = sv->clients[--sv->n];
}

static size_t clients_of(const struct server *sv, uid_t uid)
{
	size_t n = 0;

	for (size_t i = 0; i < sv->n; i++)
		n += sv->clients[i].cred.uid == uid;
	return n;
}

/* A connection not taken: its reason waits for the client's first read
 * (source_helper.c reads it even when its request finds the socket shut). */
static void refuse(int fd, int err, const char *fmt, int limit)
{
	struct hp_msg r;

	hp_init(&r, 0);
	r.err = err;
	snprintf(r.u.why, HP_WHY_LEN, fmt, limit);
	hp_send(fd, &r, -1);
	close(fd);
}

static void accept_client(struct server *sv)
{
	struct timeval tv = { .tv_sec = 2 };
	socklen_t len = sizeof(struct ucred);
	struct client *c;
	int fd = accept4(sv->lfd, NULL, NULL, SOCK_CLOEXEC);

	if (fd < 0)
		return;
	if (sv->n >= SERVE_MAX_CLIENTS) {
		refuse(fd, -EAGAIN, "the helper has %d connections open: try again later",
		       SERVE_MAX_CLIENTS);
		return;
	}
	c = &sv->clients[sv->n];
	memset(c, 0, sizeof(*c));
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &c->cred, &len)) {
		close(fd);
		return;
	}
	if (c->cred.uid != 0 && clients_of(sv, c->cred.uid) >= SERVE_CLIENTS_PER_UID) {
		/* one user cannot take every connection */
		refuse(fd, -EUSERS, "the helper takes at most %d connections at once per user: "
		       "close one of yours", SERVE_CLIENTS_PER_UID);
		return;
	}
	/* A client that stops reading must not stall the others. */
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	c->fd = fd;
	sv->n++;
}

/* systemd socket activation (sd_listen_fds(3)): fd 3, if it is ours. */
static int activated_fd(void)
{
	const char *pid = getenv("LISTEN_PID"), *fds = getenv("LISTEN_FDS");
	int type = 0;
	socklen_t len = sizeof(type);
	char *end;
	long v;

	if (!pid || !fds)
		return -1;
	errno = 0;
	v = strtol(pid, &end, 10);
	if (errno || *end || v != getpid())
		return -1;
	v = strtol(fds, &end, 10);
	if (errno || *end || v < 1)
		return -1;
	unsetenv("LISTEN_PID");
	unsetenv("LISTEN_FDS");
	unsetenv("LISTEN_FDNAMES");
	if (getsockopt(SYSTEMD_LISTEN_FD, SOL_SOCKET, SO_TYPE, &type, &len) || type != SOCK_SEQPACKET)
		return -2;
	fcntl(SYSTEMD_LISTEN_FD, F_SETFD, FD_CLOEXEC);
	return SYSTEMD_LISTEN_FD;
}

static int fill_addr(struct sockaddr_un *a, const char *path)
{
	memset(a, 0, sizeof(*a));
	a->sun_family = AF_UNIX;
	if (strlen(path) >= sizeof(a->sun_path))
		return -ENAMETOOLONG;
	memcpy(a->sun_path, path, strlen(path));
	return 0;
}

/* Bind path, replacing a stale socket (one nobody answers on) but never
 * anything else. */
static int listen_on(struct server *sv, const char *path)
{
	struct sockaddr_un a;
	struct stat st;
	int fd = -1, err;

	err = fill_addr(&a, path);
	if (err) {
		say("%s: socket path too long", path);
		return err;
	}
	if (lstat(path, &st) == 0) {
		int probe = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
		bool live = probe >= 0 && connect(probe, (struct sockaddr *)&a, sizeof(a)) == 0;

		if (probe >= 0)
			close(probe);
		if (!S_ISSOCK(st.st_mode) || live) {
			say("%s: %s: remove it or choose another --socket", path,
			     live ? "another helper is serving there" : "exists and is not a socket");
			return -EEXIST;
		}
		unlink(path);
	}
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof(a)) ||
	    chmod(path, 0666) || listen(fd, 16)) {
		err = -errno;
		say("%s: %s", path, strerror(-err));
		goto cleanup;
	}
	sv->lfd = fd;
	sv->path = path;
	sv->bound = true;
	fd = -1;
	err = 0;
cleanup:
	if (fd >= 0)
		close(fd);
	return err;
}

static int serve_loop(struct server *sv)
{
	struct pollfd pfd[SERVE_MAX_CLIENTS + 2];

	for (;;) {
		size_t n = sv->n;
		int ready;

		pfd[0] = (struct pollfd){ .fd = sv->sigfd, .events = POLLIN };
		pfd[1] = (struct pollfd){ .fd = sv->lfd, .events = POLLIN };
		for (size_t i = 0; i < n; i++)
			pfd[i + 2] = (struct pollfd){ .fd = sv->clients[i].fd, .events = POLLIN };
		ready = poll(pfd, n + 2, -1);
		if (ready < 0 && errno == EINTR)
			continue;
		if (ready < 0)
			return -errno;
		if (pfd[0].revents)
			return 0;       /* SIGTERM, SIGINT, SIGHUP */
		/* Backwards, so that dropping client i moves one already seen. */
		for (size_t i = n; i-- > 0;) {
			if (!pfd[i + 2].revents)
				continue;
			if (!(pfd[i + 2].revents & POLLIN) || !serve_request(sv, &sv->clients[i]))
				drop_client(sv, i);
		}
		if (pfd[1].revents & POLLIN)
			accept_client(sv);
	}
}

/* ---- the commands ----------------------------------------------------------- */

static void serve_usage(FILE *out)
{
	fputs(
"Usage: peakbpf serve [--socket PATH] [--unload-idle] [-v]\n"
"       peakbpf serve --status [--socket PATH]\n"
"\n"
"Run the helper that measures process trees for users who cannot load BPF:\n"
"peakbpf (and libpeakbpf, and the Python package) without privileges use it\n"
"when its socket exists, and with --helper. It needs root, or CAP_BPF and\n"
"CAP_PERFMON, and enters only processes the client could ptrace: its own\n"
"uid's, dumpable (root's clients: any). Under systemd it takes its socket\n"
"from peakbpf.socket (socket activation).\n"
"\n"
"  --socket PATH   listen on PATH (default " HELPER_SOCKET_DEFAULT ", mode 0666)\n"
"  --status        ask the helper at PATH for its trees and their map entries\n"
"  --unload-idle   unload the BPF programs while no tree is open (each\n"
"                  session then loads them again, ~0.1 s); by default they\n"
"                  stay loaded, and the machine's other faults pay the\n"
"                  untracked event's cost (docs/performance.md)\n"
"  -v, --verbose   log each tree opened and removed on stderr\n"
"  -h, --help      this help\n", out);
}

static int serve_status(const char *path)
{
	struct sockaddr_un a;
	struct hp_msg m;
	int fd = -1, err;

	err = fill_addr(&a, path);
	if (err)
		goto cleanup;
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof(a))) {
		err = -errno;
		goto cleanup;
	}
	hp_init(&m, HP_STATUS);
	err = hp_send(fd, &m, -1);
	if (!err)
		err = hp_recv(fd, &m, NULL);
	if (!err && m.type != HP_STATUS)
		err = -EPROTO;
	if (err)
		goto cleanup;
	printf("trees %u\nmax_trees %u\nclients %u\ntrees_opened %llu\ntrees_removed %llu\n"
	       "loaded %u\nloads %llu\nstray_entries mm %llu task %llu thread %llu\n",
	       m.u.status.trees, m.u.status.max_trees, m.u.status.clients,
	       (unsigned long long)m.u.status.trees_opened, (unsigned long long)m.u.status.trees_removed,
	       m.u.status.loaded, (unsigned long long)m.u.status.loads,
	       (unsigned long long)m.u.status.stray_mm_entries,
	       (unsigned long long)m.u.status.stray_task_entries,
	       (unsigned long long)m.u.status.stray_thread_entries);
	for (uint32_t i = 0; i < m.u.status.listed && i < HP_STATUS_MAX; i++) {
		const struct hp_tree *t = &m.u.status.tree[i];

		printf("tree uid %u roots %u mm_entries %llu task_entries %llu thread_entries %llu slot %u\n",
		       t->uid, t->roots, (unsigned long long)t->mm_entries,
		       (unsigned long long)t->task_entries, (unsigned long long)t->thread_entries, t->slot);
	}
cleanup:
	if (fd >= 0)
		close(fd);
	if (err)
		fprintf(stderr, "peakbpf serve: --status: %s: %s (is the helper running there?)\n",
			path, strerror(-err));
	return err ? EXIT_PEAKBPF_FAILED : 0;
}

/* Load once before listening, so that a helper that cannot measure says
 * so at its start; by default that load stays for every tree (issue 24:
 * a session through the helper then costs a round trip, not a load). */
static int load_at_start(struct server *sv, struct bpf_source_opts *bo, struct host_facts *host,
			 struct source **probe)
{
	struct tracker_opts topts = { .max_tracked = SERVE_MAP_ENTRIES };
	int err;

	if (!sv->unload_idle) {
		err = tracker_open(&topts, &sv->shared);
		if (!err)
			sv->loads++;
		return err;
	}
	err = bpf_source_open(bo, host, probe);
	if (!err)
		(*probe)->ops->destroy(*probe);
	return err;
}

int serve_main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "socket", required_argument, NULL, 'S' },
		{ "status", no_argument, NULL, 's' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "unload-idle", no_argument, NULL, 'U' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct server sv = { .lfd = -1, .sigfd = -1 };
	const char *path = HELPER_SOCKET_DEFAULT;
	struct host_facts host = { 0 };
	struct bpf_source_opts bo = { 0 };
	struct source *probe = NULL;
	bool status = false;
	sigset_t set;
	int c, err;

	optind = 1;
	while ((c = getopt_long(argc, argv, "+vh", opts, NULL)) != -1) {
		switch (c) {
		case 'S':
			path = optarg;
			break;
		case 's':
			status = true;
			break;
		case 'v':
			sv.verbose = true;
			break;
		case 'U':
			sv.unload_idle = true;
			break;
		case 'h':
			serve_usage(stdout);
			return 0;
		default:
			fprintf(stderr, "peakbpf serve: see peakbpf serve --help\n");
			return EXIT_PEAKBPF_FAILED;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "peakbpf serve: unexpected argument '%s': see peakbpf serve --help\n", argv[optind]);
		return EXIT_PEAKBPF_FAILED;
	}
	signal(SIGPIPE, SIG_IGN);
	if (status)
		return serve_status(path);
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGHUP);
	sigprocmask(SIG_BLOCK, &set, NULL);
	sv.sigfd = signalfd(-1, &set, SFD_CLOEXEC);
	if (sv.sigfd < 0) {
		err = -errno;
		goto cleanup;
	}
	if (!sv.verbose)
		libbpf_set_print(NULL);    /* NULL: libbpf prints nothing */
	host_facts_fill(&host, host_effective_caps());
	err = load_at_start(&sv, &bo, &host, &probe);
	if (err) {
		say("cannot load the BPF programs: %s: run it as root, or with CAP_BPF and CAP_PERFMON",
		     strerror(-err));
		goto cleanup;
	}
	sv.lfd = activated_fd();
	if (sv.lfd == -2) {
		say("the socket systemd passed is not a SOCK_SEQPACKET socket (ListenSequentialPacket=)");
		err = -EINVAL;
		goto cleanup;
	}
	if (sv.lfd < 0) {
		err = listen_on(&sv, path);
		if (err)
			goto cleanup;
	}
	if (sv.verbose)
		say("serving on %s", sv.bound ? path : "the socket systemd passed");
	err = serve_loop(&sv);
cleanup:
	while (sv.n)
		drop_client(&sv, sv.n - 1);
	if (sv.lfd >= 0)
		close(sv.lfd);
	if (sv.bound)
		unlink(sv.path);
	if (sv.sigfd >= 0)
		close(sv.sigfd);
	tracker_close(sv.shared);
	return err ? EXIT_PEAKBPF_FAILED : 0;
}
