// SPDX-License-Identifier: MIT
/* The CLI's own part of a record (run_report.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include "json.h"
#include "run_report.h"
#include "units.h"

static void json_command(struct json_writer *w, const struct command_facts *c)
{
	int st = c->wait_status;

	json_key(w, "command");
	json_begin_object(w);
	json_key(w, "argv");
	json_begin_array(w);
	for (char *const *a = c->argv; a && *a; a++)
		json_string(w, *a);
	json_end_array(w);
	json_kv_int(w, "pid", c->pid);
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
	json_kv_double(w, "user_s", c->user_s, 6);
	json_kv_double(w, "sys_s", c->sys_s, 6);
	json_key(w, "descendants_alive_at_exit");
	if (c->descendants_alive >= 0)
		json_int(w, c->descendants_alive);
	else
		json_null(w);
	json_end_object(w);
}

static void json_sampler(struct json_writer *w, const struct sampler_report *s)
{
	json_key(w, "sampler_check");
	json_begin_object(w);
	json_kv_uint(w, "true_peak_bytes", s->true_peak_bytes);
	json_kv_double(w, "resolution_s", (double)s->resolution_ns / 1e9, 6);
	json_kv_uint(w, "record_drops", s->record_drops);
	json_key(w, "intervals");
	json_begin_array(w);
	for (size_t i = 0; i < s->n; i++) {
		json_begin_object(w);
		json_kv_double(w, "interval_s", (double)s->at[i].interval_ns / 1e9, 6);
		json_kv_uint(w, "phases", s->at[i].phases);
		json_kv_uint(w, "worst_bytes", s->at[i].worst_bytes);
		json_kv_uint(w, "median_bytes", s->at[i].median_bytes);
		json_kv_uint(w, "best_bytes", s->at[i].best_bytes);
		json_kv_uint(w, "worst_miss_bytes", s->true_peak_bytes - s->at[i].worst_bytes);
		json_kv_double(w, "p_within_5pct", s->at[i].p_within_5pct, 4);
		json_end_object(w);
	}
	json_end_array(w);
	json_key(w, "real_sampler");
	if (s->real_measured) {
		json_begin_object(w);
		json_kv_double(w, "interval_s", (double)s->real_interval_ns / 1e9, 6);
		json_kv_uint(w, "peak_bytes", s->real_peak_bytes);
		json_kv_uint(w, "samples", s->real_samples);
		json_kv_bool(w, "within_computed_range", s->real_within);
		json_end_object(w);
	} else {
		json_null(w);
	}
	json_end_object(w);
}

static void json_oom(struct json_writer *w, const struct run_context *c)
{
	json_key(w, "oom_kills");
	json_begin_object(w);
	json_kv_bool(w, "recorded", !c->oom_why);
	if (c->oom_why)
		json_kv_string(w, "why_not", c->oom_why);
	json_kv_uint(w, "victims", c->oom_total);
	json_key(w, "listed");
	json_begin_array(w);
	for (size_t i = 0; i < c->n_oom; i++) {
		/* the library's writer: the agent's OOM records write the same */
		int n = peakbpf_oom_victim_json(&c->oom[i], c->oom_t0_ns, NULL, 0);
		char *one = n > 0 ? malloc((size_t)n + 1) : NULL;

		if (one && peakbpf_oom_victim_json(&c->oom[i], c->oom_t0_ns, one, (size_t)n + 1) == n)
			json_raw_value(w, one);
		else
			json_null(w);   /* out of memory: this victim unwritten, said as null */
		free(one);
	}
	json_end_array(w);
	json_end_object(w);
}

char *run_report_json(const struct run_context *c)
{
	struct json_writer w;
	char *text = NULL;
	size_t size = 0, n;
	FILE *mem = open_memstream(&text, &size);

	if (!mem)
		return NULL;
	/* An object of these members; its braces and newline come off. */
	json_init(&w, mem);
	json_begin_object(&w);
	if (c->command)
		json_command(&w, c->command);
	if (c->container_label) {
		json_key(&w, "container");
		json_begin_object(&w);
		json_kv_string(&w, "name", c->container_label);
		json_kv_string(&w, "cgroup_parent", c->container_cgroup);
		json_end_object(&w);
		json_key(&w, "runtime_processes");
		json_begin_object(&w);
		json_kv_string(&w, "source", c->runtime_source);
		json_kv_bool(&w, "exact", c->runtime_exact);
		json_key(&w, "peak_bytes");
		if (c->runtime_measured)
			json_uint(&w, c->runtime_peak_bytes);
		else
			json_null(&w);
		json_end_object(&w);
	}
	if (c->target_label) {
		json_key(&w, "target");
		json_begin_object(&w);
		json_kv_string(&w, "name", c->target_label);
		json_kv_string(&w, "cgroup", c->target_cgroup);
		json_end_object(&w);
	} else if (c->attached) {
		json_key(&w, "attached");
		json_begin_array(&w);
		for (size_t i = 0; i < c->n_attached; i++)
			json_int(&w, c->attached[i]);
		json_end_array(&w);
	}
	if (c->sampler)
		json_sampler(&w, c->sampler);
	if (c->run_record)
		json_oom(&w, c);
	json_end_object(&w);
	json_finish(&w);
	if (fclose(mem)) {
		free(text);
		return NULL;
	}
	n = strlen(text);
	if (n && text[n - 1] == '\n')
		n--;
	if (n && text[n - 1] == '}')
		n--;
	text[n] = '\0';
	memmove(text, text + 1, n);     /* the '{' goes; the NUL moves too */
	return text;
}

static void human_sampler(const struct sampler_report *s, FILE *out)
{
	char iv[32], w[32], m[32], b[32], miss[32];

	fprintf(out, "  a periodic sampler would have reported (every phase, from the exact sum log):\n");
	for (size_t i = 0; i < s->n; i++) {
		uint64_t missed = s->true_peak_bytes - s->at[i].worst_bytes;

		fprintf(out, "    every %-8s worst %s (misses %s, %.1f %%), median %s, best %s; within 5 %% in %.1f %% of phases\n",
			format_duration(s->at[i].interval_ns, iv, sizeof(iv)),
			format_bytes(s->at[i].worst_bytes, w, sizeof(w)),
			format_bytes(missed, miss, sizeof(miss)),
			s->true_peak_bytes ? 100.0 * (double)missed / (double)s->true_peak_bytes : 0.0,
			format_bytes(s->at[i].median_bytes, m, sizeof(m)),
			format_bytes(s->at[i].best_bytes, b, sizeof(b)),
			100.0 * s->at[i].p_within_5pct);
	}
	if (s->real_measured)
		fprintf(out, "    a real /proc sampler every %s read %s in %llu samples (%s the computed range)\n",
			format_duration(s->real_interval_ns, iv, sizeof(iv)),
			format_bytes(s->real_peak_bytes, w, sizeof(w)),
			(unsigned long long)s->real_samples, s->real_within ? "inside" : "OUTSIDE");
	if (s->record_drops)
		fprintf(out, "    %llu changes were not recorded (ring full): the model is approximate\n",
			(unsigned long long)s->record_drops);
}

/* -- docker|podman run: whose the headline is, and the runtime's apart. */
static void human_container(const struct run_context *r, FILE *out)
{
	char peak[32];

	fprintf(out, "  the figure is %s's: its processes, in its cgroup below %s\n", r->container_label,
		r->container_cgroup);
	if (r->runtime_measured)
		fprintf(out, "  the runtime's processes apart (the command's tree without the container's): "
			"peak %s (%s, %s)\n", format_bytes(r->runtime_peak_bytes, peak, sizeof(peak)),
			r->runtime_source, r->runtime_exact ? "exact" : "not exact");
}

/* Whether the root command itself was an OOM victim. */
static bool root_oom_killed(const struct run_context *r)
{
	for (size_t i = 0; r->command && i < r->n_oom; i++)
		if (r->oom[i].pid == r->command->pid)
			return true;
	return false;
}

static void human_oom(const struct run_context *r, FILE *out)
{
	char a[32], f[32], sh[32], lim[32], ch[32];

	if (!r->oom_total)
		return;
	fprintf(out, "  OOM killer: %zu process%s of the tree killed\n", r->oom_total,
		r->oom_total == 1 ? "" : "es");
	for (size_t i = 0; i < r->n_oom; i++) {
		const struct peakbpf_oom_victim *v = &r->oom[i];

		fprintf(out, "    %7d %-15s at %.3f s", (int)v->pid, v->comm,
			v->mono_ns > r->oom_t0_ns ? (double)(v->mono_ns - r->oom_t0_ns) / 1e9 : 0);
		if (v->rss_read)
			fprintf(out, ": anon %s, file %s, shmem %s", format_bytes(v->anon_bytes, a, sizeof(a)),
				format_bytes(v->file_bytes, f, sizeof(f)), format_bytes(v->shmem_bytes, sh, sizeof(sh)));
		if (v->has_context && v->memcg_oom)
			fprintf(out, "; cgroup %s at its limit %s (charge %s)%s",
				*v->oom_cgroup ? v->oom_cgroup : "?", format_bytes(v->limit_bytes, lim, sizeof(lim)),
				format_bytes(v->charge_bytes, ch, sizeof(ch)),
				v->context_inferred ? ", inferred" : "");
		else if (v->has_context)
			fprintf(out, "; the machine out of memory%s", v->context_inferred ? " (inferred)" : "");
		fputc('\n', out);
	}
	if (r->n_oom < r->oom_total)
		fprintf(out, "    (%zu more not listed)\n", r->oom_total - r->n_oom);
}

char *run_report_human(const struct run_context *r)
{
	char *text = NULL;
	size_t size = 0;
	FILE *out = open_memstream(&text, &size);

	if (!out)
		return NULL;
	if (r->sampler)
		human_sampler(r->sampler, out);
	if (r->container_label)
		human_container(r, out);
	human_oom(r, out);
	if (r->command) {
		const struct command_facts *c = r->command;
		char wall[32], ex[96];

		if (WIFSIGNALED(c->wait_status) && root_oom_killed(r))
			snprintf(ex, sizeof(ex), "killed by the OOM killer (signal %d)", WTERMSIG(c->wait_status));
		else if (WIFSIGNALED(c->wait_status))
			snprintf(ex, sizeof(ex), "killed by signal %d (%s)", WTERMSIG(c->wait_status),
				 strsignal(WTERMSIG(c->wait_status)));
		else
			snprintf(ex, sizeof(ex), "exited %d", WEXITSTATUS(c->wait_status));
		format_duration((uint64_t)(((c->exited_s > 0 ? c->exited_s : r->end_s) - r->start_s) * 1e9),
				wall, sizeof(wall));
		fprintf(out, "  command %s after %s (user %.3f s, sys %.3f s)", ex, wall, c->user_s, c->sys_s);
		if (c->exited_s > 0 && r->end_s > c->exited_s + 0.0005) {
			format_duration((uint64_t)((r->end_s - r->start_s) * 1e9), wall, sizeof(wall));
			fprintf(out, "; its last descendant after %s", wall);
		}
		if (c->descendants_alive > 0)
			fprintf(out, "; %lld descendant%s still running%s", (long long)c->descendants_alive,
				c->descendants_alive == 1 ? "" : "s",
				c->exited_s > 0 && r->end_s > c->exited_s + 0.0005 ? " at its exit" :
				", see --wait-descendants");
		fputc('\n', out);
	}
	if (r->target_label) {
		fprintf(out, "  measured %s for %.3f s, %u window%s\n", r->target_label, r->end_s - r->start_s,
			r->windows, r->windows == 1 ? "" : "s");
	} else if (r->attached) {
		fprintf(out, "  attached to");
		for (size_t i = 0; i < r->n_attached; i++)
			fprintf(out, "%s%d", i ? "," : " ", (int)r->attached[i]);
		fprintf(out, " for %.3f s, %u window%s\n", r->end_s - r->start_s, r->windows,
			r->windows == 1 ? "" : "s");
	}
	if (fclose(out)) {
		free(text);
		return NULL;
	}
	return text;
}
