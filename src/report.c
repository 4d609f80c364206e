// SPDX-License-Identifier: MIT
#include <errno.h>
#include <string.h>
#include <sys/wait.h>
#include "json.h"
#include "report.h"
#include "units.h"

#define SHARED_NOTE "summed RSS: shared and copy-on-write pages count once per address space that maps them"

uint64_t percpu_rss_lag_pages(int ncpus)
{
	uint64_t batch;

	if (ncpus < 1)
		ncpus = 1;
	batch = (uint64_t)ncpus * 2 > 32 ? (uint64_t)ncpus * 2 : 32;
	return 3 * (uint64_t)ncpus * (batch - 1);
}

void record_judge_exactness(struct run_record *r, int64_t bound_pages)
{
	r->exact = false;
	r->bound_known = false;
	r->error_bound_bytes = 0;
	if (!r->measured) {
		r->inexact_reason = "not measured";
	} else if (r->drop_mm_full || r->drop_task_full) {
		r->inexact_reason = "tracking map full: some memory was not counted (raise --max-tracked)";
	} else if (r->missed_events || r->peak_races) {
		r->inexact_reason = "the kernel skipped some BPF program runs";
	} else if (!r->host.rss_percpu) {
		r->inexact_reason = "kernel batches rss updates in per-thread caches (before 6.2): "
				    "up to 64 faults per thread lag";
	} else if (bound_pages > 0) {
		r->bound_known = true;
		r->error_bound_bytes = (uint64_t)bound_pages * (uint64_t)r->host.page_size;
		r->inexact_reason = r->host.exact_path_err ?
			"per-CPU counter sums unavailable here: cheap reads lag by up to the bound" :
			"some counters read cheaply near the peak lag by up to the bound";
	} else {
		r->exact = true;
		r->bound_known = true;
		r->inexact_reason = NULL;
	}
}

static const char *exact_path_name(int err)
{
	switch (err) {
	case 0:
		return "per-cpu-sum";
	case -E2BIG:
		return "unavailable: more CPUs than covered";
	case -EOPNOTSUPP:
		return "unavailable: kernel lacks it";
	default:
		return "unavailable: per-CPU offsets not learned";
	}
}

static void json_command(struct json_writer *w, const struct run_record *r)
{
	int st = r->wait_status;

	json_key(w, "command");
	json_begin_object(w);
	json_key(w, "argv");
	json_begin_array(w);
	for (char *const *a = r->argv; a && *a; a++)
		json_string(w, *a);
	json_end_array(w);
	json_kv_int(w, "pid", r->pid);
	json_key(w, "exit_code");
	if (WIFEXITED(st))
		json_int(w, WEXITSTATUS(st));
	else
		json_null(w);
	json_key(w, "signal");
	if (WIFSIGNALED(st))
		json_int(w, WTERMSIG(st));
	else
		json_null(w);
	json_kv_double(w, "wall_s", r->wall_s, 6);
	json_kv_double(w, "user_s", r->user_s, 6);
	json_kv_double(w, "sys_s", r->sys_s, 6);
	json_kv_int(w, "descendants_alive_at_exit", r->descendants_alive);
	json_end_object(w);
}

void report_json(const struct run_record *r, FILE *out)
{
	struct json_writer w;

	json_init(&w, out);
	json_begin_object(&w);
	json_kv_string(&w, "source", r->source);
	json_kv_bool(&w, "exact", r->exact);
	json_key(&w, "error_bound_bytes");
	if (r->exact)
		json_uint(&w, 0);
	else if (r->bound_known)
		json_uint(&w, r->error_bound_bytes);
	else
		json_null(&w);
	json_kv_string(&w, "inexact_reason", r->exact ? NULL : r->inexact_reason);
	if (r->measured) {
		json_kv_uint(&w, "peak_bytes", r->peak_bytes);
		json_kv_uint(&w, "baseline_bytes", r->baseline_bytes);
		json_kv_uint(&w, "growth_bytes", r->peak_bytes - r->baseline_bytes);
		json_kv_double(&w, "peak_at_s", r->peak_at_s, 6);
		json_key(&w, "breakdown_at_peak");
		json_begin_object(&w);
		json_kv_uint(&w, "anon_bytes", r->peak_anon_bytes);
		json_kv_uint(&w, "file_bytes", r->peak_file_bytes);
		json_kv_uint(&w, "shmem_bytes", r->peak_shmem_bytes);
		json_end_object(&w);
		json_kv_int(&w, "processes_at_peak", r->procs_at_peak);
		json_kv_int(&w, "mms_at_peak", r->mms_at_peak);
	} else {
		/* Not measured is null, never a 0 that looks like a figure. */
		json_key(&w, "peak_bytes");
		json_null(&w);
		json_key(&w, "baseline_bytes");
		json_null(&w);
		json_key(&w, "growth_bytes");
		json_null(&w);
	}
	json_kv_string(&w, "measure", SHARED_NOTE);
	json_command(&w, r);

	json_key(&w, "counters");
	json_begin_object(&w);
	json_kv_uint(&w, "events", r->events);
	json_kv_uint(&w, "missed_events", r->missed_events);
	json_kv_uint(&w, "drops", r->drop_mm_full + r->drop_task_full);
	json_kv_uint(&w, "drop_mm_map_full", r->drop_mm_full);
	json_kv_uint(&w, "drop_process_map_full", r->drop_task_full);
	json_kv_uint(&w, "peak_races", r->peak_races);
	json_kv_uint(&w, "mms_tracked", r->mms_entered);
	json_kv_uint(&w, "processes_tracked", r->procs_entered);
	json_kv_uint(&w, "mms_left", r->mms_left);
	json_kv_uint(&w, "processes_left", r->procs_left);
	json_kv_uint(&w, "exact_reads", r->exact_reads);
	json_kv_uint(&w, "cheap_reads", r->cheap_reads);
	json_end_object(&w);

	json_key(&w, "host");
	json_begin_object(&w);
	json_kv_string(&w, "kernel", r->host.kernel);
	json_kv_int(&w, "cpus", r->host.cpus);
	json_kv_int(&w, "page_size", r->host.page_size);
	json_kv_bool(&w, "btf", r->host.btf);
	json_kv_string(&w, "rss_counters", r->host.rss_percpu ? "percpu" : "atomic+task-cache");
	json_kv_string(&w, "teardown_hook", r->host.teardown_hook);
	json_kv_string(&w, "exact_path", exact_path_name(r->host.exact_path_err));
	json_kv_string(&w, "privileges", r->host.privileges);
	json_end_object(&w);
	json_end_object(&w);
	json_finish(&w);
	fflush(out);
}

static void human_exit(const struct run_record *r, char *buf, size_t len)
{
	int st = r->wait_status;

	if (WIFSIGNALED(st))
		snprintf(buf, len, "killed by signal %d (%s)", WTERMSIG(st), strsignal(WTERMSIG(st)));
	else
		snprintf(buf, len, "exited %d", WEXITSTATUS(st));
}

void report_human(const struct run_record *r, FILE *out)
{
	char peak[32], base[32], growth[32], bound[32], a[32], f[32], s[32];
	char wall[32], ex[96];

	human_exit(r, ex, sizeof(ex));
	format_duration((uint64_t)(r->wall_s * 1e9), wall, sizeof(wall));
	if (!r->measured) {
		fprintf(out, "peakbpf: peak not measured (%s)\n", r->inexact_reason);
	} else {
		format_bytes(r->peak_bytes, peak, sizeof(peak));
		format_bytes(r->baseline_bytes, base, sizeof(base));
		format_bytes(r->peak_bytes - r->baseline_bytes, growth, sizeof(growth));
		if (r->exact)
			fprintf(out, "peakbpf: peak %s (%s, exact)", peak, r->source);
		else if (r->bound_known)
			fprintf(out, "peakbpf: peak %s ± %s (%s, not exact)", peak,
				format_bytes(r->error_bound_bytes, bound, sizeof(bound)), r->source);
		else
			fprintf(out, "peakbpf: peak %s (%s, not exact, error unknown)", peak, r->source);
		fprintf(out, " at %.3f s; baseline %s, growth %s\n", r->peak_at_s, base, growth);
		fprintf(out, "  at the peak: anon %s, file %s, shmem %s in %lld processes (%lld address spaces)\n",
			format_bytes(r->peak_anon_bytes, a, sizeof(a)),
			format_bytes(r->peak_file_bytes, f, sizeof(f)),
			format_bytes(r->peak_shmem_bytes, s, sizeof(s)),
			(long long)r->procs_at_peak, (long long)r->mms_at_peak);
		if (!r->exact)
			fprintf(out, "  not exact: %s\n", r->inexact_reason);
	}
	fprintf(out, "  command %s after %s (user %.3f s, sys %.3f s); %lld descendants still running\n",
		ex, wall, r->user_s, r->sys_s, (long long)r->descendants_alive);
	if (r->drop_mm_full + r->drop_task_full + r->missed_events)
		fprintf(out, "  lost: %llu mms and %llu processes not tracked (map full), %llu events missed\n",
			(unsigned long long)r->drop_mm_full, (unsigned long long)r->drop_task_full,
			(unsigned long long)r->missed_events);
	fprintf(out, "  %s\n", SHARED_NOTE);
}
