/* SPDX-License-Identifier: MIT */
/*
 * pieces: what each piece of an event program costs on this machine
 * (tools/bench/pieces.bpf.c). Each program is attached alone for one
 * window of the command given (a fault loop), with the kernel's BPF
 * statistics on; the order of the programs rotates from round to round.
 * Prints each program's median ns per event over the rounds (min–max) and
 * its difference from the empty program's median on the same tracepoint.
 *
 *   pieces ROUNDS 'COMMAND'        (root; make bench-pieces)
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "pieces.skel.h"

#define MAX_ROUNDS 64
#define MAX_PROGS 32

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static int prog_stats(struct bpf_program *p, long long *ns, long long *cnt)
{
	struct bpf_prog_info info;
	__u32 len = sizeof(info);

	memset(&info, 0, sizeof(info));
	if (bpf_obj_get_info_by_fd(bpf_program__fd(p), &info, &len))
		return -errno;
	*ns = (long long)info.run_time_ns;
	*cnt = (long long)info.run_cnt;
	return 0;
}

/* One window of prog alone: ns per event, or a negative errno. */
static double window(struct bpf_program *p, const char *cmd)
{
	struct bpf_link *link = bpf_program__attach(p);
	long long ns0, c0, ns1, c1;
	double v = -EIO;

	if (!link)
		return -errno;
	if (prog_stats(p, &ns0, &c0) == 0 && system(cmd) == 0 && prog_stats(p, &ns1, &c1) == 0 &&
	    c1 > c0)
		v = (double)(ns1 - ns0) / (double)(c1 - c0);
	bpf_link__destroy(link);
	return v;
}

int main(int argc, char **argv)
{
	static double v[MAX_PROGS][MAX_ROUNDS];
	struct bpf_program *progs[MAX_PROGS], *p;
	struct pieces_bpf *skel = NULL;
	__u64 key = 1, hv[8] = { 1 };
	__u32 *pv = NULL;
	int n = 0, rounds, stats_fd = -1, err = 1, ncpu;
	double rss_floor = 0, memcg_floor = 0;
	char *end;

	rounds = argc == 3 ? (int)strtol(argv[1], &end, 10) : 0;
	if (argc != 3 || *end || rounds < 1 || rounds > MAX_ROUNDS) {
		fprintf(stderr, "usage: %s ROUNDS(1-%d) 'COMMAND'\n", argv[0], MAX_ROUNDS);
		return 2;
	}
	skel = pieces_bpf__open();
	if (!skel) {
		fprintf(stderr, "pieces: open: %s\n", strerror(errno));
		return 1;
	}
	/* The memcg programs only where the tracepoint is (6.13+). */
	if (access("/sys/kernel/tracing/events/memcg/mod_memcg_lruvec_state", F_OK) == 0 ||
	    system("grep -q btf_trace_mod_memcg_lruvec_state /sys/kernel/btf/vmlinux") == 0)
		bpf_object__for_each_program(p, skel->obj)
			if (!strncmp(bpf_program__name(p), "memcg_", 6))
				bpf_program__set_autoload(p, true);
	if (pieces_bpf__load(skel)) {
		fprintf(stderr, "pieces: load: %s\n", strerror(errno));
		goto cleanup;
	}
	ncpu = libbpf_num_possible_cpus();
	pv = calloc((size_t)(ncpu > 0 ? ncpu : 1), 4 * sizeof(*pv));
	if (!pv || ncpu < 1 ||
	    bpf_map__update_elem(skel->maps.hash, &key, sizeof(key), hv, sizeof(hv), 0) ||
	    bpf_map__update_elem(skel->maps.pcpu_hash, &key, sizeof(key), pv,
				 (size_t)ncpu * 4 * sizeof(*pv), 0)) {
		fprintf(stderr, "pieces: filling the maps: %s\n", strerror(errno));
		goto cleanup;
	}
	stats_fd = bpf_enable_stats(BPF_STATS_RUN_TIME);
	if (stats_fd < 0) {
		fprintf(stderr, "pieces: BPF_ENABLE_STATS: %s\n", strerror(errno));
		goto cleanup;
	}
	bpf_object__for_each_program(p, skel->obj)
		if (bpf_program__autoload(p) && n < MAX_PROGS)
			progs[n++] = p;
	for (int r = 0; r < rounds; r++)
		for (int q = 0; q < n; q++) {
			int i = (q + r) % n;

			v[i][r] = window(progs[i], argv[2]);
			if (v[i][r] < 0) {
				fprintf(stderr, "pieces: %s: %s\n", bpf_program__name(progs[i]),
					strerror((int)-v[i][r]));
				goto cleanup;
			}
		}
	printf("%-20s %-28s %s\n", "program", "ns/event: median (min–max)", "minus the empty one");
	for (int i = 0; i < n; i++) {
		const char *name = bpf_program__name(progs[i]);
		double med;

		qsort(v[i], (size_t)rounds, sizeof(double), cmp_double);
		med = v[i][rounds / 2];
		if (!strcmp(name, "rss_empty"))
			rss_floor = med;
		if (!strcmp(name, "memcg_empty"))
			memcg_floor = med;
		printf("%-20s %6.1f (%.1f–%.1f)%*s %+6.1f\n", name, med, v[i][0], v[i][rounds - 1], 10, "",
		       med - (strncmp(name, "memcg_", 6) ? rss_floor : memcg_floor));
	}
	err = 0;
cleanup:
	if (stats_fd >= 0)
		close(stats_fd);
	free(pv);
	pieces_bpf__destroy(skel);
	return err;
}
