// SPDX-License-Identifier: MIT
/* The harness's progress on stderr (runs_progress.h). */
#include <stdio.h>
#include <string.h>
#include <time.h>
#include "cli.h"
#include "runs_progress.h"
#include "units.h"

#define BAR_WIDTH 24

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

void runs_progress_init(struct runs_progress *p, const struct options *o, size_t n_benches, bool tty)
{
	memset(p, 0, sizeof(*p));
	p->quiet = o->quiet;
	p->bar = tty && !o->quiet && !o->runs.show_output;
	p->n_benches = n_benches;
	p->runs = o->runs.runs ? o->runs.runs : 1;
	p->warmup = o->runs.warmup;
	p->total = n_benches * (p->runs + p->warmup);
	p->t0_ns = now_ns();
}

void runs_progress_format(const struct runs_progress *p, double elapsed_s, char *buf, size_t len)
{
	char bar[BAR_WIDTH + 1], left[32] = "";
	size_t filled = p->total ? p->done * BAR_WIDTH / p->total : 0;

	memset(bar, '#', filled);
	memset(bar + filled, '.', BAR_WIDTH - filled);
	bar[BAR_WIDTH] = '\0';
	if (p->done && p->done < p->total)
		snprintf(left, sizeof(left), ", %.0f s left",
			 elapsed_s / (double)p->done * (double)(p->total - p->done));
	snprintf(buf, len, "peakbpf: [%zu/%zu] %s %u/%u [%s] %zu %%%s", p->bench + 1, p->n_benches,
		 p->in_warmup ? "warm-up" : "run", p->index + 1, p->in_warmup ? p->warmup : p->runs, bar,
		 p->total ? p->done * 100 / p->total : 0, left);
}

static void draw(struct runs_progress *p)
{
	char line[160];

	runs_progress_format(p, (double)(now_ns() - p->t0_ns) / 1e9, line, sizeof(line));
	fprintf(stderr, "\r\033[K%s", line);
	fflush(stderr);
	p->drawn = true;
}

void runs_progress_start(struct runs_progress *p, size_t bench, unsigned index, bool warmup)
{
	p->bench = bench;
	p->index = index;
	p->in_warmup = warmup;
	if (p->bar)
		draw(p);
}

void runs_progress_done(struct runs_progress *p, const struct run_result *x)
{
	char buf[32];

	p->done++;
	if (p->bar) {
		draw(p);
		return;
	}
	if (p->quiet)
		return;
	fprintf(stderr, "peakbpf: [%zu/%zu] %s %u/%u: peak %s, %.3f s, exit %d\n", p->bench + 1,
		p->n_benches, p->in_warmup ? "warm-up" : "run", p->index + 1,
		p->in_warmup ? p->warmup : p->runs,
		x->measured ? format_bytes(x->peak_bytes, buf, sizeof(buf)) : "not measured", x->wall_s,
		x->exit_status);
}

void runs_progress_clear(struct runs_progress *p)
{
	if (!p->drawn)
		return;
	fputs("\r\033[K", stderr);
	fflush(stderr);
	p->drawn = false;
}
