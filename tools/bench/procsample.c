/* SPDX-License-Identifier: MIT */
/*
 * procsample: a minimal periodic /proc sampler, the kind peakbpf is compared
 * with. Every INTERVAL it sums the resident pages (/proc/PID/statm, field 2:
 * file + anon + shmem, the kernel's cheap counter reads) of the process tree
 * rooted at PID, found through /proc/PID/task/TID/children, and keeps the
 * largest sum. One thread per interval, all started together; each stops
 * when the root has exited (gone or a zombie).
 *
 *   procsample -p PID -i MS[,MS...]
 *
 * Prints one line per interval on stdout when all have stopped:
 *   "sampler INTERVAL_MS MAX_BYTES SAMPLES"
 * Exit status: 0, or 2 on bad usage.
 */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <dirent.h>

#define MAX_INTERVALS 8
#define MAX_DEPTH 64

struct sampler {
	pthread_t tid;
	double interval_ms;
	uint64_t max_bytes, samples;
};

static int root;
static long page_size;

/* 1 while PID exists and is not a zombie. */
static int alive(int pid)
{
	char path[64], buf[512], *p;
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	f = fopen(path, "re");
	if (!f)
		return 0;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	p = strrchr(buf, ')'); /* comm may hold spaces and parentheses */
	return p && p[1] == ' ' && p[2] != 'Z' && p[2] != 'X';
}

static uint64_t rss_pages(int pid)
{
	char path[64];
	unsigned long size, resident;
	FILE *f;
	int ok;

	snprintf(path, sizeof(path), "/proc/%d/statm", pid);
	f = fopen(path, "re");
	if (!f)
		return 0;
	ok = fscanf(f, "%lu %lu", &size, &resident) == 2;
	fclose(f);
	return ok ? resident : 0;
}

/* The tree's summed resident pages: this process, then each child of each of its threads. */
static uint64_t tree_pages(int pid, int depth)
{
	char path[64];
	struct dirent *d;
	uint64_t sum = rss_pages(pid);
	DIR *tasks;

	if (depth >= MAX_DEPTH)
		return sum;
	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	tasks = opendir(path);
	if (!tasks)
		return sum;
	while ((d = readdir(tasks))) {
		char cpath[384];
		FILE *f;
		int child;

		if (d->d_name[0] == '.')
			continue;
		snprintf(cpath, sizeof(cpath), "/proc/%d/task/%s/children", pid, d->d_name);
		f = fopen(cpath, "re");
		if (!f)
			continue;
		while (fscanf(f, "%d", &child) == 1)
			sum += tree_pages(child, depth + 1);
		fclose(f);
	}
	closedir(tasks);
	return sum;
}

static void add_ns(struct timespec *t, uint64_t ns)
{
	t->tv_sec += ns / 1000000000;
	t->tv_nsec += ns % 1000000000;
	if (t->tv_nsec >= 1000000000) {
		t->tv_sec++;
		t->tv_nsec -= 1000000000;
	}
}

static void *sample_loop(void *arg)
{
	struct sampler *s = arg;
	uint64_t step = (uint64_t)(s->interval_ms * 1e6);
	struct timespec next;

	clock_gettime(CLOCK_MONOTONIC, &next);
	while (alive(root)) {
		uint64_t bytes = tree_pages(root, 0) * (uint64_t)page_size;

		if (bytes > s->max_bytes)
			s->max_bytes = bytes;
		s->samples++;
		add_ns(&next, step);
		while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL) == EINTR)
			;
	}
	return NULL;
}

static void usage(FILE *f)
{
	fprintf(f, "usage: procsample -p PID -i MS[,MS...]\n"
		   "Sample the summed RSS of PID's process tree every MS milliseconds until PID\n"
		   "exits; print \"sampler MS MAX_BYTES SAMPLES\" for each interval.\n");
}

int main(int argc, char **argv)
{
	struct sampler s[MAX_INTERVALS];
	int c, n = 0;
	char *list = NULL;

	page_size = sysconf(_SC_PAGESIZE);
	while ((c = getopt(argc, argv, "p:i:h")) != -1) {
		switch (c) {
		case 'p':
			root = atoi(optarg);
			break;
		case 'i':
			list = optarg;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (root <= 0 || !list || optind != argc) {
		usage(stderr);
		return 2;
	}
	for (char *tok = strtok(list, ","); tok; tok = strtok(NULL, ",")) {
		char *end;
		double ms = strtod(tok, &end);

		if (n == MAX_INTERVALS || *end || !(ms > 0) || ms > 3600e3) {
			fprintf(stderr, "procsample: bad interval '%s' (milliseconds, at most %d)\n",
				tok, MAX_INTERVALS);
			return 2;
		}
		memset(&s[n], 0, sizeof(s[n]));
		s[n++].interval_ms = ms;
	}
	for (int i = 0; i < n; i++)
		if (pthread_create(&s[i].tid, NULL, sample_loop, &s[i])) {
			fprintf(stderr, "procsample: pthread_create failed\n");
			return 1;
		}
	for (int i = 0; i < n; i++)
		pthread_join(s[i].tid, NULL);
	for (int i = 0; i < n; i++)
		printf("sampler %g %llu %llu\n", s[i].interval_ms, (unsigned long long)s[i].max_bytes,
		       (unsigned long long)s[i].samples);
	return 0;
}
