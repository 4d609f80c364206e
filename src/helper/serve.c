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
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>
#include <bpf/libbpf.h>
#include "clock.h"
#include "helper_proto.h"
#include "host.h"
#include "tracker_tree.h"
#include "serve.h"
#include "serve_int.h"
#include "sources.h"
#include "status.h"

#define SYSTEMD_LISTEN_FD 3             /* sd_listen_fds(3): the first passed fd */

/* ---- the socket ------------------------------------------------------------ */

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
	mode_t old;

	err = fill_addr(&a, path);
	if (err) {
		serve_say("%s: socket path too long", path);
		return err;
	}
	if (lstat(path, &st) == 0) {
		int probe = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
		bool live = probe >= 0 && connect(probe, (struct sockaddr *)&a, sizeof(a)) == 0;

		if (probe >= 0)
			close(probe);
		if (!S_ISSOCK(st.st_mode) || live) {
			serve_say("%s: %s: remove it or choose another --socket", path,
			     live ? "another helper is serving there" : "exists and is not a socket");
			return -EEXIST;
		}
		unlink(path);
	}
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	/* The node gets its mode 0666 from bind itself, under a umask that
	 * takes nothing away: a chmod of the path after bind would follow
	 * whatever another process put there meanwhile, and fchmod of the
	 * socket's fd changes the socket, not the node. */
	old = umask(0111);
	err = fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof(a)) ? -errno : 0;
	umask(old);
	if (!err && listen(fd, SOMAXCONN))
		err = -errno;
	if (err) {
		serve_say("%s: %s", path, strerror(-err));
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
"CAP_PERFMON, and enters only processes the client could ptrace: its uid\n"
"and gid, no capabilities, dumpable (root's clients: any). Under systemd it\n"
"takes its socket from peakbpf.socket (socket activation).\n"
"\n"
"  --socket PATH   listen on PATH (default " HELPER_SOCKET_DEFAULT ", mode 0666)\n"
"  --status        ask the helper at PATH for its trees and their map entries\n"
"                  (a user other than root: its own connections and trees)\n"
"  --unload-idle   unload the BPF programs while no tree is open (each\n"
"                  session then loads them again, ~0.1 s); by default they\n"
"                  stay loaded, and the machine's other faults pay the\n"
"                  untracked event's cost (docs/performance.md)\n"
"  -v, --verbose   log each tree opened and removed on stderr\n"
"  -h, --help      this help\n", out);
}

/* Root's view has the helper's history; another user's, its own only. */
static void print_status(const struct hp_status *st)
{
	printf("scope %s\ntrees %u\nmax_trees %u\nclients %u\nloaded %u\n",
	       st->scope == HP_STATUS_OWN ? "own" : "all", st->trees, st->max_trees, st->clients,
	       st->loaded);
	if (st->scope == HP_STATUS_OWN)
		return;
	printf("trees_opened %llu\ntrees_removed %llu\nloads %llu\nstray_entries mm %llu task %llu thread %llu\n",
	       (unsigned long long)st->trees_opened, (unsigned long long)st->trees_removed,
	       (unsigned long long)st->loads, (unsigned long long)st->stray_mm_entries,
	       (unsigned long long)st->stray_task_entries, (unsigned long long)st->stray_thread_entries);
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
	print_status(&m.u.status);
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

/* A helper's own limit on fds at its hard limit: what clients send waits
 * for its close below it, beside the trees' BPF objects. */
static void raise_nofile(void)
{
	struct rlimit r;

	if (!getrlimit(RLIMIT_NOFILE, &r) && r.rlim_cur < r.rlim_max) {
		r.rlim_cur = r.rlim_max;
		setrlimit(RLIMIT_NOFILE, &r);
	}
}

/* Load once before listening, so that a helper that cannot measure says
 * so at its start; by default that load stays for every tree (a session
 * through the helper then costs a round trip, not a load). */
static int load_at_start(struct server *sv)
{
	struct host_facts host = { 0 };
	struct bpf_source_opts bo = { 0 };
	struct source *probe = NULL;
	int err;

	if (!sv->unload_idle) {
		err = serve_record_load(sv);
		if (!err)
			sv->loads++;
		return err;
	}
	host_facts_fill(&host, host_effective_caps());
	err = bpf_source_open(&bo, &host, &probe);
	if (!err)
		probe->ops->destroy(probe);
	return err;
}

/* Load, then take the socket. */
static int serve_setup(struct server *sv, const char *path)
{
	int err;

	if (!sv->verbose)
		libbpf_set_print(NULL);    /* NULL: libbpf prints nothing */
	err = load_at_start(sv);
	if (err) {
		serve_say("cannot load the BPF programs: %s: run it as root, or with CAP_BPF and CAP_PERFMON",
			  strerror(-err));
		return err;
	}
	raise_nofile();
	serve_record_init(sv);
	sv->closer = calloc(1, sizeof(*sv->closer));
	err = sv->closer ? closer_start(sv->closer) : -ENOMEM;
	if (err) {
		serve_say("cannot start the thread that closes what clients send: %s", strerror(-err));
		return err;
	}
	sv->lfd = activated_fd();
	if (sv->lfd == -2) {
		serve_say("the socket systemd passed is not a SOCK_SEQPACKET socket (ListenSequentialPacket=)");
		return -EINVAL;
	}
	if (sv->lfd < 0)
		err = listen_on(sv, path);
	/* The loop accepts until none waits: accept4 must not then wait. */
	if (!err && fcntl(sv->lfd, F_SETFL, fcntl(sv->lfd, F_GETFL) | O_NONBLOCK))
		err = -errno;
	return err;
}

static int serve_run(struct server *sv, const char *path)
{
	sigset_t set;
	int err;

	signal(SIGPIPE, SIG_IGN);
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGHUP);
	sigprocmask(SIG_BLOCK, &set, NULL);
	sv->sigfd = signalfd(-1, &set, SFD_CLOEXEC);
	err = sv->sigfd < 0 ? -errno : serve_setup(sv, path);
	if (!err && sv->verbose)
		serve_say("serving on %s", sv->bound ? path : "the socket systemd passed");
	if (!err)
		err = serve_loop(sv);
	while (sv->n)
		serve_drop_client(sv, sv->n - 1);
	if (sv->lfd >= 0)
		close(sv->lfd);
	if (sv->bound)
		unlink(sv->path);
	if (sv->sigfd >= 0)
		close(sv->sigfd);
	tracker_load__destroy(sv->shared);
	sv->shared = NULL;
	/* The closer's threads may still be closing (they are not waited
	 * for: a close may wait for ever), so it stays until the exit. */
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
	bool status = false;
	int c;

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
	if (status) {
		signal(SIGPIPE, SIG_IGN);
		return serve_status(path);
	}
	return serve_run(&sv, path) ? EXIT_PEAKBPF_FAILED : 0;
}
