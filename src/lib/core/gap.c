// SPDX-License-Identifier: MIT
/* Summed RSS against the tree's unique memory and its cgroup: why they
 * differ (figure.h, figure_unique_gap and figure_cgroup_disagrees). */
#include <string.h>
#include "figure.h"

#define MiB (1024ULL * 1024ULL)

static const char *const CAUSE_NAMES[GAP_CAUSES] = {
	[GAP_SEVERAL] = "anon and shmem pages mapped by several of the tree's processes",
	[GAP_ELSEWHERE] = "anon and shmem pages charged to another cgroup",
	[GAP_SEVERAL_OR_ELSEWHERE] = "anon and shmem pages mapped by several of the tree's processes "
				     "or charged to another cgroup",
	[GAP_CACHE] = "file pages cached by another cgroup or mapped by several",
};

const char *gap_cause_name(enum gap_cause c)
{
	return c < GAP_CAUSES ? CAUSE_NAMES[c] : NULL;
}

static uint64_t sat_sub(uint64_t a, uint64_t b)
{
	return a > b ? a - b : 0;
}

static uint64_t min_u64(uint64_t a, uint64_t b)
{
	return a < b ? a : b;
}

/* The anon and shmem summed RSS counts beyond the unique memory's: its
 * file part (shmem with the page cache) goes to summed RSS's shmem first. */
static uint64_t own_excess(const struct figure *summed, const struct figure *u)
{
	uint64_t shmem_once = min_u64(summed->shmem_bytes, u->file_bytes);

	return sat_sub(summed->anon_bytes, u->anon_bytes) + (summed->shmem_bytes - shmem_once);
}

bool figure_unique_gap(const struct figure *summed, const struct figure *u, struct unique_gap *g)
{
	uint64_t own;
	enum gap_cause cause;

	memset(g, 0, sizeof(*g));
	if (!summed->measured || !u->measured || summed->peak_bytes <= u->peak_bytes)
		return false;
	g->bytes = summed->peak_bytes - u->peak_bytes;
	g->dominant = GAP_CACHE;
	/* A unique peak without its split (anon, file) cannot be split by. */
	if (!summed->has_detail || (u->peak_bytes && !u->anon_bytes && !u->file_bytes))
		return true;
	g->split_known = true;
	own = min_u64(own_excess(summed, u), g->bytes);
	if (summed->mms_at_peak <= 1)
		cause = GAP_ELSEWHERE;  /* one address space maps each page once */
	else if (u->other_cgroups)
		cause = GAP_SEVERAL_OR_ELSEWHERE;
	else
		cause = GAP_SEVERAL;
	g->part[cause] = own;
	g->part[GAP_CACHE] = g->bytes - own;
	for (int c = 0; c < GAP_CAUSES; c++)
		if (g->part[c] > g->part[g->dominant])
			g->dominant = (enum gap_cause)c;
	return true;
}

bool figure_cgroup_disagrees(const struct figure *cg, const struct figure *summed,
			     const struct figure *unique, int64_t *diff, const char **against)
{
	const struct figure *ref = unique && unique->measured ? unique : summed;
	uint64_t procs, tol, hi, lo;

	*diff = 0;
	*against = NULL;
	if (!cg->measured || !cg->exclusive || cg->not_tree || !ref || !ref->measured)
		return false;
	procs = summed && summed->has_detail && summed->procs_at_peak > 0 ?
		(uint64_t)summed->procs_at_peak : 1;
	hi = cg->peak_bytes > ref->peak_bytes ? cg->peak_bytes : ref->peak_bytes;
	lo = cg->peak_bytes > ref->peak_bytes ? ref->peak_bytes : cg->peak_bytes;
	tol = 2 * MiB + procs * MiB;
	if (hi - lo <= tol || (double)(hi - lo) <= 0.1 * (double)hi)
		return false;
	*diff = cg->peak_bytes >= ref->peak_bytes ? (int64_t)(hi - lo) : -(int64_t)(hi - lo);
	*against = ref == unique ? "unique memory" : "summed RSS";
	return true;
}
