// SPDX-License-Identifier: MIT
/* A record's cgroup parts (report_cgroup.h): a cgroup figure's cgroup and
 * limit, and a cgroup target's membership counts. */
#include <stdio.h>
#include "json.h"
#include "units.h"
#include "report_cgroup.h"

/* A cgroup figure's cgroup: its path, whether the tree has it alone, how
 * the command came in, and its limit. */
void json_cgroup(struct json_writer *w, const struct figure *f)
{
	json_kv_string(w, "cgroup", f->cgroup_path);
	json_kv_bool(w, "exclusive", f->exclusive);
	if (f->cgroup_entry)
		json_kv_string(w, "cgroup_entry", f->cgroup_entry);
	/* The limit it is charged against, and what was left at its
	 * peak (negative: over it, as a v1 soft limit may be). */
	if (f->limit_known) {
		json_kv_uint(w, "limit_bytes", f->limit_bytes);
		json_kv_int(w, "headroom_bytes", (int64_t)(f->limit_bytes - f->peak_bytes));
	}
}

/* "; limit L, headroom H at its peak" for a cgroup figure with a limit. */
void human_headroom(const struct figure *f, FILE *out)
{
	char lim[32], room[32];

	format_bytes(f->limit_bytes, lim, sizeof(lim));
	if (f->limit_bytes >= f->peak_bytes)
		fprintf(out, "; limit %s, headroom %s at its peak", lim,
			format_bytes(f->limit_bytes - f->peak_bytes, room, sizeof(room)));
	else
		fprintf(out, "; limit %s, %s over it at its peak", lim,
			format_bytes(f->peak_bytes - f->limit_bytes, room, sizeof(room)));
}

void json_cgroup_target(struct json_writer *w, const struct bpf_counters *c)
{
	json_key(w, "cgroup_target");
	json_begin_object(w);
	json_kv_uint(w, "found_inside", c->cg_walk_in);
	json_kv_uint(w, "forked_in", c->cg_forked_in);
	json_kv_uint(w, "moved_in", c->cg_moved_in);
	json_kv_uint(w, "moved_out", c->cg_moved_out);
	json_end_object(w);
}
