// SPDX-License-Identifier: MIT
/* The harness's progress on stderr (runs_progress.h). */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include "clock.h"
#include "cli.h"
#include "runs_progress.h"
#include "units.h"

#define BAR_WIDTH 24

#define TICK_S 1
#define RUN_SHOWN_FROM_S 2.0    /* a run's own time shows once it is this long */

void runs_progress_init(struct runs_progress *p, const struct options *o, size_t n_benches, bool tty)
{
	memset(p, 0, sizeof(*p));
	p->quiet = o->quiet;
	p->bar = tty && !o->quiet && !o->runs.show_output;
	p->n_benches = n_benches;
	p->runs = o->runs.runs ? o->runs.runs : 1;
	p->warmup = o->runs.warmup;
	p->total = n_benches * (p->runs + p->warmup);
	p->t0_ns = monotonic_ns();
	pthread_mutex_init(&p->lock, NULL);
	pthread_cond_init(&p->wake, NULL);
}

void runs_progress_format(const struct runs_progress *p, double elapsed_s, double run_s, char *buf,
			  size_t len)
{
	char bar[BAR_WIDTH + 1], left[32] = "", run[32] = "";
	size_t filled = p->total ? p->done * BAR_WIDTH / p->total : 0;

	memset(bar, '#', filled);
	memset(bar + filled, '.', BAR_WIDTH - filled);
	bar[BAR_WIDTH] = '\0';
	if (p->done && p->done < p->total)
		snprintf(left, sizeof(left), ", %.0f s left",
			 elapsed_s / (double)p->done * (double)(p->total - p->done));
	if (run_s >= RUN_SHOWN_FROM_S)
		snprintf(run, sizeof(run), "; this %s %.0f s", p->in_warmup ? "warm-up" : "run", run_s);
	snprintf(buf, len, "peakbpf: [%zu/%zu] %s %u/%u [%s] %zu %%%s%s", p->bench + 1, p->n_benches,
		 p->in_warmup ? "warm-up" : "run", p->index + 1, p->in_warmup ? p->warmup : p->runs, bar,
		 p->total ? p->done * 100 / p->total : 0, left, run);
}

/* Called with p->lock held. */
static void draw(struct runs_progress *p)
{
	uint64_t now = monotonic_ns();
	char line[192];

	runs_progress_format(p, (double)(now - p->t0_ns) / 1e9,
			     p->run_t0_ns ? (double)(now - p->run_t0_ns) / 1e9 : 0, line, sizeof(line));
	fprintf(stderr, "\r\033[K%s", line);
	fflush(stderr);
	p->drawn = true;
}

/* The ticker: while a run is under way, the bar again every TICK_S. */
static void *tick(void *arg)
{
	struct runs_progress *p = arg;
	struct timespec at;

	pthread_mutex_lock(&p->lock);
	while (!p->stop) {
		clock_gettime(CLOCK_REALTIME, &at);
		at.tv_sec += TICK_S;
		pthread_cond_timedwait(&p->wake, &p->lock, &at);
		if (!p->stop && p->run_t0_ns)
			draw(p);
	}
	pthread_mutex_unlock(&p->lock);
	return NULL;
}

/* Started at the first run, with every signal blocked: they stay the
 * run's (its signalfd) and the main thread's. */
static void start_ticker(struct runs_progress *p)
{
	sigset_t all, old;

	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	p->ticking = pthread_create(&p->ticker, NULL, tick, p) == 0;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
}

void runs_progress_end(struct runs_progress *p)
{
	if (p->ticking) {
		pthread_mutex_lock(&p->lock);
		p->stop = true;
		pthread_cond_signal(&p->wake);
		pthread_mutex_unlock(&p->lock);
		pthread_join(p->ticker, NULL);
		p->ticking = false;
	}
	runs_progress_clear(p);
	pthread_cond_destroy(&p->wake);
	pthread_mutex_destroy(&p->lock);
}

void runs_progress_start(struct runs_progress *p, size_t bench, unsigned index, bool warmup)
{
	if (p->bar && !p->ticking)
		start_ticker(p);
	pthread_mutex_lock(&p->lock);
	p->bench = bench;
	p->index = index;
	p->in_warmup = warmup;
	p->run_t0_ns = monotonic_ns();
	if (p->bar)
		draw(p);
	pthread_mutex_unlock(&p->lock);
}

void runs_progress_done(struct runs_progress *p, const struct run_result *x)
{
	char buf[32];

	pthread_mutex_lock(&p->lock);
	p->done++;
	p->run_t0_ns = 0;
	if (p->bar)
		draw(p);
	pthread_mutex_unlock(&p->lock);
	if (p->bar)
		return;
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
	pthread_mutex_lock(&p->lock);
	p->run_t0_ns = 0;               /* the ticker draws nothing more over what follows */
	if (p->drawn) {
		fputs("\r\033[K", stderr);
		fflush(stderr);
		p->drawn = false;
	}
	pthread_mutex_unlock(&p->lock);
}
