// SPDX-License-Identifier: MIT
/* A bench's runs summarised (bench.h). */
#include <stdlib.h>
#include <string.h>
#include "bench.h"

static void fold_exactness(struct bench_summary *s, const struct run_result *x, bool first)
{
	if (first) {
		s->source = x->source;
		s->exact = true;
		s->bound_known = true;
	} else if (s->source && x->source && strcmp(s->source, x->source)) {
		s->source = "mixed";
	}
	if (!x->exact) {
		s->exact = false;
		if (!s->inexact_reason)
			s->inexact_reason = x->inexact_reason;
	}
	if (!x->bound_known)
		s->bound_known = false;
	else if (x->error_bound_bytes > s->error_bound_bytes)
		s->error_bound_bytes = x->error_bound_bytes;
}

void bench_summarize(const struct bench *b, struct bench_summary *s)
{
	double *peak = calloc(b->n_runs + 1, sizeof(double));
	double *growth = calloc(b->n_runs + 1, sizeof(double));
	double *wall = calloc(b->n_runs + 1, sizeof(double));
	size_t np = 0, ng = 0, nw = 0;

	memset(s, 0, sizeof(*s));
	for (size_t i = 0; peak && growth && wall && i < b->n_runs; i++) {
		const struct run_result *x = &b->runs[i];

		if (!x->done)
			continue;
		wall[nw++] = x->wall_s;
		if (x->exit_status && !s->status)
			s->status = x->exit_status;
		if ((!x->measured || x->windows_unmeasured) && !s->lost_runs++)
			s->lost_why = x->windows_unmeasured ? x->lost_why :
				      x->inexact_reason ? x->inexact_reason : "not measured";
		if (!x->measured)
			continue;
		fold_exactness(s, x, np == 0);
		peak[np++] = (double)x->peak_bytes;
		if (x->growth_known)
			growth[ng++] = (double)x->growth_bytes;
	}
	stats_compute(peak, np, &s->peak);
	stats_compute(growth, ng, &s->growth);
	stats_compute(wall, nw, &s->wall);
	if (!np)
		s->source = "unavailable";
	free(peak);
	free(growth);
	free(wall);
}
