// SPDX-License-Identifier: MIT
/*
 * t_stacks_known's workload (tests/integration/test_stacks.sh): functions
 * that map and touch known amounts, built with frame pointers (Makefile),
 * so that --stacks gives each its resident bytes at the peak:
 *   freed_32     32 MiB, unmapped before the peak      -> 0
 *   dontneed_16  16 MiB, madvise(DONTNEED) before it   -> 0
 *   alloc_64     64 MiB, resident at the peak          -> 64 MiB
 *   alloc_128   128 MiB, resident at the peak          -> 128 MiB
 *   untouched_4g  4 GiB mapped, never touched          -> 0
 * Then it holds 200 ms (the peak) and exits. With "fork" it forks after
 * them: the child's copy of every page keeps the parent's stack (summed
 * RSS counts it in both), the child maps and touches 32 MiB more
 * (child_32), both hold, the child exits, then the parent. Every region is
 * MADV_NOHUGEPAGE: one fault, one 4 KiB page. Each page is written, so each is a write
 * fault of its own; touch_pages is the one frame below each function.
 * With "thp" it maps alloc_64's 64 MiB (4 KiB pages) and then alloc_thp_64's:
 * 64 MiB aligned to 2 MiB and MADV_HUGEPAGE, so that where THP is
 * "always" or "madvise" each first write maps a 2 MiB huge page
 * (t_stacks_thp, tests/integration/test_stacks_programs.sh); it prints
 * the AnonHugePages of /proc/self/smaps_rollup on stderr at the peak, so
 * that the test knows whether the kernel gave huge pages.
 * With "unlink" it first deletes its own binary (argv[0]) and execs itself
 * again from /proc/self/exe, so that the image whose pages are counted runs
 * from a deleted file from its first fault on, and its maps are read after
 * the deletion whatever the timing (t_stacks_deleted). With "attach FILE"
 * it maps alloc_64's 64 MiB, says "stacks_known: ready" on stderr, waits
 * (30 s at most) for FILE to exist (peakbpf -p has attached), then maps
 * alloc_128's 128 MiB and holds (t_stacks_attach: 128 MiB placed,
 * alloc_64's pages from before the attach in the anon bucket). With
 * "windows FILE" it maps alloc_128's 128 MiB, unmaps them, maps alloc_64's
 * 64 MiB, says "stacks_known: phase 1" and holds until FILE exists (peakbpf
 * has closed a window): t_stacks_windows, window 1 (the run's peak, gone
 * before its close) alloc_128 128 MiB and alloc_64 0, window 2 alloc_64
 * 64 MiB and alloc_128 0. The same source, built without frame pointers, is
 * t_stacks_nofp's (tests/integration/test_stacks_programs.sh).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MIB (1024UL * 1024)

static char *map(size_t n)
{
	char *p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

	if (p == MAP_FAILED) {
		perror("stacks_known: mmap");
		exit(1);
	}
	madvise(p, n, MADV_NOHUGEPAGE);
	return p;
}

__attribute__((noinline)) static void touch_pages(volatile char *p, size_t n)
{
	for (size_t i = 0; i < n; i += 4096)
		p[i] = 1;
}

__attribute__((noinline)) static void freed_32(void)
{
	char *p = map(32 * MIB);

	touch_pages(p, 32 * MIB);
	munmap(p, 32 * MIB);
}

__attribute__((noinline)) static void dontneed_16(void)
{
	char *p = map(16 * MIB);

	touch_pages(p, 16 * MIB);
	madvise(p, 16 * MIB, MADV_DONTNEED);
}

__attribute__((noinline)) static char *alloc_64(void)
{
	char *p = map(64 * MIB);

	touch_pages(p, 64 * MIB);
	return p;
}

__attribute__((noinline)) static char *alloc_128(void)
{
	char *p = map(128 * MIB);

	touch_pages(p, 128 * MIB);
	return p;
}

/* n bytes at a 2 MiB boundary, asking for huge pages. */
static char *map_huge(size_t n)
{
	char *p = mmap(NULL, n + 2 * MIB, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

	if (p == MAP_FAILED) {
		perror("stacks_known: mmap");
		exit(1);
	}
	p = (char *)(((uintptr_t)p + 2 * MIB - 1) & ~(uintptr_t)(2 * MIB - 1));
	if (madvise(p, n, MADV_HUGEPAGE))
		perror("stacks_known: madvise(MADV_HUGEPAGE)");
	return p;
}

__attribute__((noinline)) static char *alloc_thp_64(void)
{
	char *p = map_huge(64 * MIB);

	touch_pages(p, 64 * MIB);
	return p;
}

/* The AnonHugePages line of smaps_rollup, on stderr. */
static void say_huge_pages(void)
{
	char line[256];
	FILE *f = fopen("/proc/self/smaps_rollup", "r");

	if (!f) {
		perror("stacks_known: /proc/self/smaps_rollup");
		return;
	}
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, "AnonHugePages:", 14))
			fprintf(stderr, "stacks_known: %s", line);
	fclose(f);
}

__attribute__((noinline)) static char *untouched_4g(void)
{
	return map(4096 * MIB);
}

__attribute__((noinline)) static char *child_32(void)
{
	char *p = map(32 * MIB);

	touch_pages(p, 32 * MIB);
	return p;
}

int main(int argc, char **argv)
{
	struct timespec hold = { 0, 200 * 1000 * 1000 };
	volatile char *keep[4];
	int status = 0;
	pid_t child;

	if (argc > 1 && !strcmp(argv[1], "unlink")) {
		if (unlink(argv[0]))
			perror("stacks_known: unlink");
		else
			execl("/proc/self/exe", argv[0], "deleted", (char *)NULL);
		perror("stacks_known: exec /proc/self/exe");
		return 1;
	}
	if (argc > 2 && !strcmp(argv[1], "attach")) {
		struct timespec tick = { 0, 10 * 1000 * 1000 };

		keep[0] = alloc_64();
		fprintf(stderr, "stacks_known: ready\n");
		for (int i = 0; i < 3000 && access(argv[2], F_OK); i++)
			nanosleep(&tick, NULL);
		keep[1] = alloc_128();
		nanosleep(&hold, NULL);
		return keep[0][0] + keep[1][0] == 2 ? 0 : 1;
	}
	if (argc > 2 && !strcmp(argv[1], "windows")) {
		struct timespec tick = { 0, 10 * 1000 * 1000 };

		keep[0] = alloc_128();
		munmap((void *)keep[0], 128 * MIB);
		keep[1] = alloc_64();
		fprintf(stderr, "stacks_known: phase 1\n");
		for (int i = 0; i < 3000 && access(argv[2], F_OK); i++)
			nanosleep(&tick, NULL);
		nanosleep(&hold, NULL);
		return keep[1][0] == 1 ? 0 : 1;
	}
	if (argc > 1 && !strcmp(argv[1], "thp")) {
		keep[0] = alloc_64();
		keep[1] = alloc_thp_64();
		say_huge_pages();
		nanosleep(&hold, NULL);
		return keep[0][0] + keep[1][0] == 2 ? 0 : 1;
	}
	freed_32();
	dontneed_16();
	keep[0] = alloc_64();
	keep[1] = alloc_128();
	keep[2] = untouched_4g();
	if (argc > 1 && !strcmp(argv[1], "fork")) {
		child = fork();
		if (child < 0)
			return 1;
		if (child == 0) {
			keep[3] = child_32();
			nanosleep(&hold, NULL);
			_exit(keep[3][0] == 1 ? 0 : 1);
		}
		if (waitpid(child, &status, 0) != child || status)
			return 1;
	}
	nanosleep(&hold, NULL);
	return keep[0][0] + keep[1][0] + keep[2][0] == 2 ? 0 : 1;
}
