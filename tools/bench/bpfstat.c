/* SPDX-License-Identifier: MIT */
/*
 * bpfstat: the bench's BPF side. Holds the kernel's BPF run-time statistics
 * on (BPF_ENABLE_STATS: on while this process lives and off again when it
 * exits or is killed; the same switch as kernel.bpf_stats_enabled, but
 * counted, so it never turns off statistics that someone else turned on),
 * loads the empty "floor" program (and a one-lookup reference) on rss_stat
 * and the empty memcg floor on mod_memcg_lruvec_state, and answers
 * commands read from stdin, one per line, each with one line on stdout.
 *
 *   bpfstat [-n]    -n: leave the statistics as they are: the wall-time
 *                   bench times the floor program alone, and statistics
 *                   add two clock reads to every program run; snap then
 *                   reports whatever the kernel counted (0 if nobody
 *                   turned them on)
 *
 *   attach          attach the floor program (it runs after any program
 *                   already on rss_stat, before any attached later)  -> ok
 *   detach          detach it                                         -> ok
 *   attach-ref      attach the reference program (one hash lookup)    -> ok
 *   detach-ref      detach it                                         -> ok
 *   snap PID        run-time statistics of the floor program, of the
 *                   handle_rss_stat program(s) that PID holds open (PID 0:
 *                   none) and of the reference program:
 *                   "snap F_NS F_CNT P_NS P_CNT P_PROGS R_NS R_CNT" (P_* are
 *                   0 when P_PROGS is 0)
 *   attach-memcg    attach the memcg floor (empty, on the memcg statistic
 *                   tracepoint mod_memcg_lruvec_state; in the same order
 *                   as the floor's)                                   -> ok
 *   detach-memcg    detach it                                         -> ok
 *   snap-memcg PID  run-time statistics of the memcg floor and of the
 *                   unique_stat program(s) that PID holds open:
 *                   "snap-memcg M_NS M_CNT U_NS U_CNT U_PROGS"
 *   attach-twin     attach the floor's twin (a second empty tp_btf
 *                   program on rss_stat)                              -> ok
 *   detach-twin     detach it                                         -> ok
 *   attach-raw      attach the empty raw_tp program on rss_stat       -> ok
 *   detach-raw      detach it                                         -> ok
 *   snap-pos        run-time statistics of the floor, its twin and the
 *                   raw_tp program: "snap-pos F_NS F_CNT T_NS T_CNT W_NS W_CNT"
 *   snap-agent PID  the floor and the two rss_stat programs a running
 *                   `peakbpf agent` (PID) holds, the tracker's and the
 *                   per-cgroup sums' (cgsum_rss): "snap-agent F_NS F_CNT
 *                   T_NS T_CNT T_PROGS C_NS C_CNT C_PROGS"
 *   snap-stacks PID the floor, and the handle_rss_stat, stk_fault and
 *                   stk_sys_exit programs PID holds (--stacks,
 *                   tools/bench/stacks-cost.sh): "snap-stacks F_NS F_CNT
 *                   T_NS T_CNT S_NS S_CNT Y_NS Y_CNT"
 *   quit            exit (EOF too)
 *
 * The memcg floor loads only where the kernel has the tracepoint (6.13+);
 * elsewhere its three commands answer an error and the others work.
 * Errors answer "error: ..." so the caller never blocks.
 */
#include <dirent.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "floor.skel.h"

#define PEAKBPF_PROG "handle_rss_stat"
#define UNIQUE_PROG "unique_stat"
#define AGENT_PROG "cgsum_rss"      /* the agent's per-cgroup sums, bpf/cgsum.bpf.c */
#define MEMCG_TP "mod_memcg_lruvec_state"
#define NO_MEMCG "error: this kernel has no tp_btf/" MEMCG_TP " (6.13+)"
#define MAX_PROGS 64
#define MAX_SPARES 4                /* loads kept aside by floor_block_shared */

struct stat_pair {
	long long ns, cnt;
};

static int prog_stats(int fd, struct stat_pair *s, char *name, size_t len)
{
	struct bpf_prog_info info;
	__u32 ilen = sizeof(info);

	memset(&info, 0, sizeof(info));
	if (bpf_obj_get_info_by_fd(fd, &info, &ilen))
		return -1;
	s->ns = (long long)info.run_time_ns;
	s->cnt = (long long)info.run_cnt;
	if (name)
		snprintf(name, len, "%s", info.name);
	return 0;
}

/* The BPF program ids that PID holds (prog and link fds), from its fdinfo. */
static int prog_ids_of(int pid, __u32 *ids, int max)
{
	char path[64], line[256];
	struct dirent *d;
	DIR *dir;
	int n = 0;

	snprintf(path, sizeof(path), "/proc/%d/fdinfo", pid);
	dir = opendir(path);
	if (!dir)
		return -1;
	while ((d = readdir(dir))) {
		char fpath[384];
		FILE *f;

		if (d->d_name[0] == '.')
			continue;
		snprintf(fpath, sizeof(fpath), "%s/%s", path, d->d_name);
		f = fopen(fpath, "re");
		if (!f)
			continue;
		while (fgets(line, sizeof(line), f)) {
			unsigned id;
			int dup = 0;

			if (sscanf(line, "prog_id: %u", &id) != 1)
				continue;
			for (int i = 0; i < n; i++)
				dup |= ids[i] == id;
			if (!dup && n < max)
				ids[n++] = id;
		}
		fclose(f);
	}
	closedir(dir);
	return n;
}

/* The summed statistics of the programs named NAME that PID holds (PID 0:
 * none) in *s; returns how many there were. */
static int held_stats(int pid, const char *name, struct stat_pair *s)
{
	__u32 ids[MAX_PROGS];
	int n, found = 0;

	s->ns = s->cnt = 0;
	n = pid > 0 ? prog_ids_of(pid, ids, MAX_PROGS) : 0;
	for (int i = 0; i < n; i++) {
		int fd = bpf_prog_get_fd_by_id(ids[i]);
		struct stat_pair p;
		char pname[32];

		if (fd < 0)
			continue;
		if (prog_stats(fd, &p, pname, sizeof(pname)) == 0 && !strcmp(pname, name)) {
			s->ns += p.ns;
			s->cnt += p.cnt;
			found++;
		}
		close(fd);
	}
	return found;
}

static void snap(struct floor *skel, int pid)
{
	struct stat_pair f = { -1, -1 }, p, r = { -1, -1 };
	int found;

	if (prog_stats(bpf_program__fd(skel->progs.bench_floor), &f, NULL, 0) ||
	    prog_stats(bpf_program__fd(skel->progs.bench_lookup), &r, NULL, 0)) {
		printf("error: floor program info: %s\n", strerror(errno));
		return;
	}
	found = held_stats(pid, PEAKBPF_PROG, &p);
	printf("snap %lld %lld %lld %lld %d %lld %lld\n", f.ns, f.cnt, p.ns, p.cnt, found, r.ns, r.cnt);
}

/* The floor and the agent's two rss_stat programs (tools/bench/agent-cost.sh). */
static void snap_agent(struct floor *skel, int pid)
{
	struct stat_pair f, t, c;
	int nt, nc;

	if (prog_stats(bpf_program__fd(skel->progs.bench_floor), &f, NULL, 0)) {
		printf("error: floor program info: %s\n", strerror(errno));
		return;
	}
	nt = held_stats(pid, PEAKBPF_PROG, &t);
	nc = held_stats(pid, AGENT_PROG, &c);
	printf("snap-agent %lld %lld %lld %lld %d %lld %lld %d\n", f.ns, f.cnt, t.ns, t.cnt, nt,
	       c.ns, c.cnt, nc);
}

/* The floor and --stacks' programs beside the tracker's (stacks-cost.sh). */
static void snap_stacks(struct floor *skel, int pid)
{
	struct stat_pair f, t, s, y;

	if (prog_stats(bpf_program__fd(skel->progs.bench_floor), &f, NULL, 0)) {
		printf("error: floor program info: %s\n", strerror(errno));
		return;
	}
	held_stats(pid, PEAKBPF_PROG, &t);
	held_stats(pid, "stk_fault", &s);
	held_stats(pid, "stk_sys_exit", &y);
	printf("snap-stacks %lld %lld %lld %lld %lld %lld %lld %lld\n", f.ns, f.cnt, t.ns, t.cnt, s.ns, s.cnt,
	       y.ns, y.cnt);
}

/* The memcg floor and the unique_stat program(s) PID holds. */
static void snap_memcg(struct floor *skel, bool memcg, int pid)
{
	struct stat_pair m, u;
	int found;

	if (!memcg) {
		printf("%s\n", NO_MEMCG);
		return;
	}
	if (prog_stats(bpf_program__fd(skel->progs.bench_memcg), &m, NULL, 0)) {
		printf("error: memcg floor program info: %s\n", strerror(errno));
		return;
	}
	found = held_stats(pid, UNIQUE_PROG, &u);
	printf("snap-memcg %lld %lld %lld %lld %d\n", m.ns, m.cnt, u.ns, u.cnt, found);
}

/* The kernel address of prog's JIT image (0 if unknown). */
static unsigned long long jit_addr(const struct bpf_program *prog)
{
	struct bpf_prog_info info;
	__u64 ksym = 0;
	__u32 len = sizeof(info);

	memset(&info, 0, sizeof(info));
	info.nr_jited_ksyms = 1;
	info.jited_ksyms = (__u64)(unsigned long)&ksym;
	if (bpf_obj_get_info_by_fd(bpf_program__fd(prog), &info, &len))
		return 0;
	return ksym;
}

/*
 * Whether another program's JIT image shares a 128-byte block (a cache
 * line pair, which the L2's adjacent-line prefetch fetches together) with
 * the floor's or the memcg floor's: one that runs just before them warms
 * their code, and an empty program then costs ~28 ns instead of ~53 here
 * (the bench's attach-order rows). This object's twin, raw_tp and lookup
 * programs do not count: they run in no window the floors are compared in.
 * 1: shared, 0: not, -1: kallsyms unreadable.
 */
static int floor_block_shared(struct floor *skel, bool memcg)
{
	unsigned long long mine[2] = { jit_addr(skel->progs.bench_floor),
				       memcg ? jit_addr(skel->progs.bench_memcg) : 0 };
	unsigned long long quiet[3] = { jit_addr(skel->progs.bench_twin), jit_addr(skel->progs.bench_raw),
					jit_addr(skel->progs.bench_lookup) };
	char line[512];
	int shared = 0;
	FILE *f = fopen("/proc/kallsyms", "re");

	if (!f || !mine[0])
		return f ? fclose(f), -1 : -1;
	while (!shared && fgets(line, sizeof(line), f)) {
		unsigned long long a;
		char sym[256];

		if (sscanf(line, "%llx %*s %255s", &a, sym) != 2 || strncmp(sym, "bpf_prog_", 9))
			continue;
		for (int i = 0; i < 2; i++) {
			bool own = a == mine[0] || a == mine[1] || a == quiet[0] || a == quiet[1] || a == quiet[2];

			if (mine[i] && !own && a / 128 == mine[i] / 128)
				shared = 1;
		}
	}
	fclose(f);
	return shared;
}

/* The floor, its twin and the raw_tp one (the attach-order windows). */
static void snap_pos(struct floor *skel)
{
	struct stat_pair f, t, w;

	if (prog_stats(bpf_program__fd(skel->progs.bench_floor), &f, NULL, 0) ||
	    prog_stats(bpf_program__fd(skel->progs.bench_twin), &t, NULL, 0) ||
	    prog_stats(bpf_program__fd(skel->progs.bench_raw), &w, NULL, 0)) {
		printf("error: floor program info: %s\n", strerror(errno));
		return;
	}
	printf("snap-pos %lld %lld %lld %lld %lld %lld\n", f.ns, f.cnt, t.ns, t.cnt, w.ns, w.cnt);
}

/* attach/detach-style commands: attach PROG once (*link), or detach it. */
static void do_attach(struct bpf_program *prog, struct bpf_link **link, const char *tp)
{
	if (!*link)
		*link = bpf_program__attach(prog);
	if (*link)
		printf("ok\n");
	else
		printf("error: attaching tp_btf/%s: %s\n", tp, strerror(errno));
}

static void do_detach(struct bpf_link **link)
{
	bpf_link__destroy(*link);
	*link = NULL;
	printf("ok\n");
}

/* Open and load the floor programs (the memcg floor where its tracepoint
 * is); an error line and -1 if not. */
static int load_floor(struct floor **out, bool *memcg)
{
	libbpf_print_fn_t print;
	struct floor *skel = floor__open();
	int err;

	*out = NULL;
	if (!skel) {
		printf("error: opening the floor programs: %s\n", strerror(errno));
		return -1;
	}
	/* libbpf looks it up as btf_trace_mod_memcg_lruvec_state in the
	 * kernel's BTF; its absence is no warning. */
	print = libbpf_set_print(NULL);
	*memcg = libbpf_find_vmlinux_btf_id(MEMCG_TP, BPF_TRACE_RAW_TP) > 0;
	libbpf_set_print(print);
	if (*memcg && bpf_program__set_autoload(skel->progs.bench_memcg, true)) {
		printf("error: autoload of the memcg floor: %s\n", strerror(errno));
		floor__destroy(skel);
		return -1;
	}
	err = floor__load(skel);
	if (err) {
		printf("error: loading the floor programs: %s\n", strerror(-err));
		floor__destroy(skel);
		return -1;
	}
	*out = skel;
	return 0;
}

int main(int argc, char **argv)
{
	struct bpf_link *link = NULL, *ref = NULL, *mlink = NULL, *twin = NULL, *raw = NULL;
	struct floor *skel = NULL, *spare[MAX_SPARES];
	int n_spare = 0;
	char line[256];
	int stats_fd = -1, err;
	bool memcg;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc > 2 || (argc == 2 && strcmp(argv[1], "-n"))) {
		printf("error: usage: bpfstat [-n]\n");
		return 2;
	}
	if (argc == 1) {
		stats_fd = bpf_enable_stats(BPF_STATS_RUN_TIME);
		if (stats_fd < 0) {
			printf("error: BPF_ENABLE_STATS: %s\n", strerror(errno));
			return 1;
		}
	}
	/* Loaded again, the earlier copies kept (so the kernel places the
	 * next elsewhere), while the floors' code shares a block with
	 * another program's (floor_block_shared). */
	for (int i = 0; i < MAX_SPARES; i++) {
		err = load_floor(&skel, &memcg);
		if (err)
			break;
		if (floor_block_shared(skel, memcg) != 1)
			break;
		spare[n_spare++] = skel;
		skel = NULL;
	}
	if (!err && !skel)
		err = load_floor(&skel, &memcg);   /* the last try, as it lands */
	if (err) {
		for (int i = 0; i < n_spare; i++)
			floor__destroy(spare[i]);
		return 1;
	}
	printf("ready\n");
	while (fgets(line, sizeof(line), stdin)) {
		char cmd[32];
		int pid = 0;

		if (sscanf(line, "%31s %d", cmd, &pid) < 1)
			cmd[0] = '\0';
		if (!strcmp(cmd, "quit"))
			break;
		else if (!strcmp(cmd, "attach"))
			do_attach(skel->progs.bench_floor, &link, "rss_stat");
		else if (!strcmp(cmd, "detach"))
			do_detach(&link);
		else if (!strcmp(cmd, "attach-ref"))
			do_attach(skel->progs.bench_lookup, &ref, "rss_stat");
		else if (!strcmp(cmd, "detach-ref"))
			do_detach(&ref);
		else if (!strcmp(cmd, "attach-memcg") && !memcg)
			printf("%s\n", NO_MEMCG);
		else if (!strcmp(cmd, "attach-memcg"))
			do_attach(skel->progs.bench_memcg, &mlink, MEMCG_TP);
		else if (!strcmp(cmd, "detach-memcg"))
			do_detach(&mlink);
		else if (!strcmp(cmd, "snap"))
			snap(skel, pid);
		else if (!strcmp(cmd, "snap-agent"))
			snap_agent(skel, pid);
		else if (!strcmp(cmd, "snap-stacks"))
			snap_stacks(skel, pid);
		else if (!strcmp(cmd, "snap-memcg"))
			snap_memcg(skel, memcg, pid);
		else if (!strcmp(cmd, "attach-twin"))
			do_attach(skel->progs.bench_twin, &twin, "rss_stat");
		else if (!strcmp(cmd, "detach-twin"))
			do_detach(&twin);
		else if (!strcmp(cmd, "attach-raw"))
			do_attach(skel->progs.bench_raw, &raw, "rss_stat");
		else if (!strcmp(cmd, "detach-raw"))
			do_detach(&raw);
		else if (!strcmp(cmd, "snap-pos"))
			snap_pos(skel);
		else
			printf("error: unknown command\n");
	}
	bpf_link__destroy(raw);
	bpf_link__destroy(twin);
	bpf_link__destroy(mlink);
	bpf_link__destroy(ref);
	bpf_link__destroy(link);
	floor__destroy(skel);
	for (int i = 0; i < n_spare; i++)
		floor__destroy(spare[i]);
	if (stats_fd >= 0)
		close(stats_fd);
	return 0;
}
