// SPDX-License-Identifier: MIT
/* The SPANK plugin's pure part: see slurm_report.h. */
#include "fileutil.h"
#include "slurm_report.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "units.h"

#define MIB (1024ULL * 1024)
#define PB_LINE_FIELDS 11

/* Slurm's step ids for the steps that are not numbered (slurm.h). */
#define PB_STEP_EXTERN 0xfffffffcU
#define PB_STEP_BATCH 0xfffffffbU
#define PB_STEP_INTERACTIVE 0xfffffffaU

void pb_config_default(struct pb_config *c)
{
	memset(c, 0, sizeof(*c));
	c->site_mode = PB_MODE_OFF;
	snprintf(c->dir, sizeof(c->dir), "%s", PB_DEFAULT_DIR);
	c->headroom_pct = PB_DEFAULT_HEADROOM_PCT;
	snprintf(c->scontrol, sizeof(c->scontrol), "%s", "scontrol");
}

static int set_path(char *dst, size_t len, const char *v, const char *key, char *why, size_t why_len)
{
	if (!*v || strlen(v) >= len) {
		set_why(why, why_len, "%s= needs a path of 1 to %zu bytes", key, len - 1);
		return -EINVAL;
	}
	memcpy(dst, v, strlen(v) + 1);
	return 0;
}

int pb_config_arg(struct pb_config *c, const char *arg, char *why, size_t why_len)
{
	const char *v = strchr(arg, '=');
	char *end;
	long pct;

	if (!v) {
		set_why(why, why_len, "argument '%s' is not KEY=VALUE (default=, dir=, headroom=, helper=, scontrol=)", arg);
		return -EINVAL;
	}
	v++;
	if (!strncmp(arg, "default=", 8)) {
		if (!strcmp(v, "on") || !strcmp(v, "quiet"))
			c->site_mode = PB_MODE_QUIET;
		else if (!strcmp(v, "print"))
			c->site_mode = PB_MODE_PRINT;
		else if (!strcmp(v, "off"))
			c->site_mode = PB_MODE_OFF;
		else {
			set_why(why, why_len, "default=%s: use on, print or off", v);
			return -EINVAL;
		}
		return 0;
	}
	if (!strncmp(arg, "headroom=", 9)) {
		errno = 0;
		pct = strtol(v, &end, 10);
		if (errno || end == v || *end || pct < 0 || pct > 1000) {
			set_why(why, why_len, "headroom=%s: use a whole percentage from 0 to 1000", v);
			return -EINVAL;
		}
		c->headroom_pct = (unsigned)pct;
		return 0;
	}
	if (!strncmp(arg, "dir=", 4))
		return set_path(c->dir, sizeof(c->dir), v, "dir", why, why_len);
	if (!strncmp(arg, "helper=", 7))
		return set_path(c->helper, sizeof(c->helper), v, "helper", why, why_len);
	if (!strncmp(arg, "scontrol=", 9))
		return set_path(c->scontrol, sizeof(c->scontrol), v, "scontrol", why, why_len);
	set_why(why, why_len, "unknown argument '%s' (default=, dir=, headroom=, helper=, scontrol=)", arg);
	return -EINVAL;
}

int pb_user_mode(const char *optarg, enum pb_mode *mode, char *why, size_t why_len)
{
	/* srun inside an sbatch --peakbpf job gets the option from the
	 * environment, where Slurm 22.05 wrote a missing argument as "(null)". */
	if (!optarg || !*optarg || !strcmp(optarg, "(null)") || !strcmp(optarg, "print") ||
	    !strcmp(optarg, "on"))
		*mode = PB_MODE_PRINT;
	else if (!strcmp(optarg, "quiet"))
		*mode = PB_MODE_QUIET;
	else if (!strcmp(optarg, "off"))
		*mode = PB_MODE_OFF;
	else {
		set_why(why, why_len, "--peakbpf=%s: use --peakbpf, --peakbpf=quiet or --peakbpf=off", optarg);
		return -EINVAL;
	}
	return 0;
}

enum pb_mode pb_effective_mode(enum pb_mode user, enum pb_mode site)
{
	if (user != PB_MODE_UNSET)
		return user;
	return site == PB_MODE_UNSET ? PB_MODE_OFF : site;
}

void pb_step_name(uint32_t stepid, char *buf, size_t len)
{
	if (stepid == PB_STEP_BATCH)
		snprintf(buf, len, "batch");
	else if (stepid == PB_STEP_EXTERN)
		snprintf(buf, len, "extern");
	else if (stepid == PB_STEP_INTERACTIVE)
		snprintf(buf, len, "interactive");
	else
		snprintf(buf, len, "%" PRIu32, stepid);
}

static void opt_u64(char *buf, size_t len, bool known, uint64_t v)
{
	if (known)
		snprintf(buf, len, "%" PRIu64, v);
	else
		snprintf(buf, len, "-");
}

static bool field_ok(const char *s)
{
	return *s && !strpbrk(s, "\t\n");
}

int pb_line_format(const struct pb_step_line *l, char *buf, size_t len)
{
	char peak[24], largest[24], ml[24], mu[24];
	int n;

	if (!field_ok(l->step) || !field_ok(l->node) || !field_ok(l->source))
		return -EINVAL;
	opt_u64(peak, sizeof(peak), l->peak_known, l->peak);
	opt_u64(largest, sizeof(largest), l->largest_known, l->largest);
	opt_u64(ml, sizeof(ml), l->mlower_known, l->mlower);
	opt_u64(mu, sizeof(mu), l->mupper_known, l->mupper);
	n = snprintf(buf, len, "%s\t%s\t%s\t%d\t%s\t%s\t%u\t%d\t%" PRIu64 "\t%s\t%s\n", l->step, l->node,
		     peak, l->exact ? 1 : 0, l->source, largest, l->tasks, l->killed_signal, l->limit, ml, mu);
	if (n < 0 || (size_t)n >= len)
		return -ENOSPC;
	return n;
}

static int parse_u64(const char *s, bool dash_ok, bool *known, uint64_t *v)
{
	char *end;
	unsigned long long x;

	if (dash_ok && !strcmp(s, "-")) {
		*known = false;
		*v = 0;
		return 0;
	}
	if (*s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	x = strtoull(s, &end, 10);
	if (errno || *end)
		return -EINVAL;
	*v = x;
	if (known)
		*known = true;
	return 0;
}

static int copy_field(char *dst, size_t len, const char *s)
{
	if (!*s || strlen(s) >= len)
		return -EINVAL;
	memcpy(dst, s, strlen(s) + 1);
	return 0;
}

int pb_line_parse(const char *line, struct pb_step_line *l)
{
	char tmp[512], *f[PB_LINE_FIELDS], *save = NULL, *p;
	uint64_t v;
	size_t n = 0;
	bool dummy;

	if (strlen(line) >= sizeof(tmp))
		return -EINVAL;
	memcpy(tmp, line, strlen(line) + 1);
	tmp[strcspn(tmp, "\n")] = '\0';
	for (p = strtok_r(tmp, "\t", &save); p; p = strtok_r(NULL, "\t", &save)) {
		if (n == PB_LINE_FIELDS)
			return -EINVAL;
		f[n++] = p;
	}
	if (n != PB_LINE_FIELDS)
		return -EINVAL;
	memset(l, 0, sizeof(*l));
	if (copy_field(l->step, sizeof(l->step), f[0]) || copy_field(l->node, sizeof(l->node), f[1]) ||
	    parse_u64(f[2], true, &l->peak_known, &l->peak) || copy_field(l->source, sizeof(l->source), f[4]) ||
	    parse_u64(f[5], true, &l->largest_known, &l->largest))
		return -EINVAL;
	if (strcmp(f[3], "0") && strcmp(f[3], "1"))
		return -EINVAL;
	l->exact = f[3][0] == '1';
	if (parse_u64(f[6], false, &dummy, &v) || v > UINT_MAX)
		return -EINVAL;
	l->tasks = (unsigned)v;
	if (parse_u64(f[7], false, &dummy, &v) || v > 64)
		return -EINVAL;
	l->killed_signal = (int)v;
	if (parse_u64(f[9], true, &l->mlower_known, &l->mlower) ||
	    parse_u64(f[10], true, &l->mupper_known, &l->mupper))
		return -EINVAL;
	return parse_u64(f[8], false, &dummy, &l->limit);
}

static void merge_add(struct pb_step_merge *m, const struct pb_step_line *l)
{
	m->nodes++;
	if (!l->peak_known)
		m->complete = false;
	else {
		m->any_known = true;
		m->upper += l->peak;
		m->sum_of_peaks += l->peak;
		if (l->peak > m->lower)
			m->lower = l->peak;
		if (l->peak > m->node_max)
			m->node_max = l->peak;
	}
	if (!l->exact)
		m->exact = false;
	if (l->largest_known && (!m->largest_known || l->largest > m->largest)) {
		m->largest = l->largest;
		m->largest_known = true;
	}
	if (l->killed_signal && !m->killed_signal)
		m->killed_signal = l->killed_signal;
	if (l->limit > m->limit)
		m->limit = l->limit;
	if (l->mlower_known && l->mlower > m->rec_lower)
		m->rec_lower = l->mlower;
	if (l->mupper_known && (!m->rec_upper_known || l->mupper < m->rec_upper)) {
		m->rec_upper = l->mupper;
		m->rec_upper_known = true;
	}
}

/* The records' bounds, where they are tighter. */
static void merge_narrow(struct pb_step_merge *m)
{
	if (m->any_known && m->rec_lower > m->lower)
		m->lower = m->rec_lower;
	if (m->complete && m->rec_upper_known && m->rec_upper < m->upper && m->rec_upper >= m->lower)
		m->upper = m->rec_upper;
}

size_t pb_merge_steps(const struct pb_step_line *lines, size_t n, struct pb_step_merge *out, size_t max)
{
	size_t k = 0;

	for (size_t i = 0; i < n; i++) {
		size_t j;

		for (j = 0; j < k && strcmp(out[j].step, lines[i].step); j++)
			;
		if (j == k) {
			if (k == max)
				continue;
			memset(&out[k], 0, sizeof(out[k]));
			memcpy(out[k].step, lines[i].step, sizeof(out[k].step));
			out[k].complete = true;
			out[k].exact = true;
			k++;
		}
		merge_add(&out[j], &lines[i]);
	}
	for (size_t j = 0; j < k; j++)
		merge_narrow(&out[j]);
	return k;
}

uint64_t pb_suggest_mem_mib(const struct pb_step_merge *m, size_t n, unsigned headroom_pct)
{
	uint64_t top = 0;

	/* Slurm's --mem is per node: the largest one node held in any step. */
	for (size_t i = 0; i < n; i++)
		if (m[i].node_max > top)
			top = m[i].node_max;
	if (!top)
		return 0;
	top += top / 100 * headroom_pct + (top % 100) * headroom_pct / 100;
	return (top + MIB - 1) / MIB;
}

static void json_opt_uint(struct json_writer *w, const char *key, bool known, uint64_t v)
{
	json_key(w, key);
	if (known)
		json_uint(w, v);
	else
		json_null(w);
}

static void json_node(struct json_writer *w, uint32_t job, const struct pb_step_line *l)
{
	char file[160];

	json_begin_object(w);
	json_kv_string(w, "node", l->node);
	json_opt_uint(w, "peak_bytes", l->peak_known, l->peak);
	json_kv_bool(w, "exact", l->exact);
	json_kv_string(w, "source", l->source);
	json_opt_uint(w, "largest_process_bytes", l->largest_known, l->largest);
	json_kv_uint(w, "tasks", l->tasks);
	json_opt_uint(w, "killed_by_signal", l->killed_signal != 0, (uint64_t)l->killed_signal);
	json_opt_uint(w, "memory_limit_bytes", l->limit != 0, l->limit);
	snprintf(file, sizeof(file), "%" PRIu32 "/%s.%s.json", job, l->step, l->node);
	json_kv_string(w, "file", file);
	json_end_object(w);
}

static void json_step(struct json_writer *w, uint32_t job, const struct pb_step_merge *m,
		      const struct pb_step_line *lines, size_t n)
{
	json_begin_object(w);
	json_kv_string(w, "step", m->step);
	json_key(w, "peak_of_sum");
	json_begin_object(w);
	json_opt_uint(w, "lower_bytes", m->any_known, m->lower);
	json_opt_uint(w, "upper_bytes", m->complete, m->upper);
	json_kv_bool(w, "exact", m->complete && m->exact && m->lower == m->upper);
	json_kv_string(w, "from", m->rec_upper_known || m->rec_lower ? "the nodes' records, merged as peakbpf merge does"
					: "the nodes' peaks: [largest, sum]");
	json_end_object(w);
	json_opt_uint(w, "sum_of_peaks_bytes", m->complete, m->sum_of_peaks);
	json_opt_uint(w, "largest_process_bytes", m->largest_known, m->largest);
	json_opt_uint(w, "killed_by_signal", m->killed_signal != 0, (uint64_t)m->killed_signal);
	json_key(w, "nodes");
	json_begin_array(w);
	for (size_t i = 0; i < n; i++)
		if (!strcmp(lines[i].step, m->step))
			json_node(w, job, &lines[i]);
	json_end_array(w);
	json_end_object(w);
}

int pb_job_json(FILE *out, uint32_t job, const struct pb_step_line *lines, size_t n, unsigned headroom_pct)
{
	struct pb_step_merge *m = calloc(n ? n : 1, sizeof(*m));
	struct json_writer w;
	uint64_t mib;
	size_t k;
	int err;

	if (!m)
		return -ENOMEM;
	k = pb_merge_steps(lines, n, m, n);
	mib = pb_suggest_mem_mib(m, k, headroom_pct);
	json_init(&w, out);
	json_begin_object(&w);
	json_kv_uint(&w, "job_id", job);
	json_kv_string(&w, "measure", "summed RSS of each step's tasks and their descendants, per node");
	json_key(&w, "steps");
	json_begin_array(&w);
	for (size_t i = 0; i < k; i++)
		json_step(&w, job, &m[i], lines, n);
	json_end_array(&w);
	json_key(&w, "suggestion");
	if (mib) {
		char opt[40];

		snprintf(opt, sizeof(opt), "--mem=%" PRIu64 "M", mib);
		json_begin_object(&w);
		json_kv_string(&w, "option", opt);
		json_kv_uint(&w, "mem_bytes", mib * MIB);
		json_kv_uint(&w, "headroom_pct", headroom_pct);
		json_kv_string(&w, "from", "the largest peak one node held in one step, plus the headroom");
		json_end_object(&w);
	} else {
		json_null(&w);
	}
	json_end_object(&w);
	err = json_finish(&w);
	free(m);
	return err;
}

static void append(char *buf, size_t len, size_t *at, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (*at >= len)
		return;
	va_start(ap, fmt);
	n = vsnprintf(buf + *at, len - *at, fmt, ap);
	va_end(ap);
	if (n > 0)
		*at = *at + (size_t)n < len ? *at + (size_t)n : len;
}

void pb_admin_comment(char *buf, size_t len, const struct pb_step_merge *m, size_t n, unsigned headroom_pct)
{
	size_t at = 0;
	uint64_t mib = pb_suggest_mem_mib(m, n, headroom_pct);
	char a[32], b[32];

	if (len)
		buf[0] = '\0';
	append(buf, len, &at, "peakbpf:");
	for (size_t i = 0; i < n; i++) {
		append(buf, len, &at, "%s step %s ", i ? ";" : "", m[i].step);
		if (!m[i].any_known)
			append(buf, len, &at, "not measured");
		else if (!m[i].complete)
			append(buf, len, &at, "at least %s", format_bytes(m[i].lower, a, sizeof(a)));
		else if (m[i].nodes == 1 || m[i].lower == m[i].upper)
			append(buf, len, &at, "%s", format_bytes(m[i].upper, a, sizeof(a)));
		else
			append(buf, len, &at, "[%s, %s]", format_bytes(m[i].lower, a, sizeof(a)),
			       format_bytes(m[i].upper, b, sizeof(b)));
		if (m[i].complete)
			append(buf, len, &at, " %s", m[i].exact ? "exact" : "not exact");
		if (m[i].killed_signal)
			append(buf, len, &at, " killed (signal %d)", m[i].killed_signal);
	}
	if (mib)
		append(buf, len, &at, "; next --mem=%" PRIu64 "M (+%u%%)", mib, headroom_pct);
}

void pb_stderr_line(char *buf, size_t len, const struct pb_step_line *l, unsigned headroom_pct)
{
	struct pb_step_merge m;
	size_t at = 0;
	char a[32], b[32];
	uint64_t mib;

	if (len)
		buf[0] = '\0';
	append(buf, len, &at, "peakbpf: step %s on %s: ", l->step, l->node);
	if (!l->peak_known) {
		append(buf, len, &at, "not measured (%s)\n", l->source);
		return;
	}
	append(buf, len, &at, "peak %s (%s, %s)", format_bytes(l->peak, a, sizeof(a)),
	       l->exact ? "exact" : "not exact", l->source);
	if (l->largest_known && l->peak >= l->largest)
		append(buf, len, &at, ", %s above its largest process's own peak %s (sacct's MaxRSS: one task, sampled)",
		       format_bytes(l->peak - l->largest, a, sizeof(a)), format_bytes(l->largest, b, sizeof(b)));
	if (l->killed_signal) {
		append(buf, len, &at, "; killed by signal %d", l->killed_signal);
		if (l->limit)
			append(buf, len, &at, " at %" PRIu64 "%% of its %s memory limit",
			       l->peak * 100 / l->limit, format_bytes(l->limit, a, sizeof(a)));
	}
	pb_merge_steps(l, 1, &m, 1);
	mib = pb_suggest_mem_mib(&m, 1, headroom_pct);
	append(buf, len, &at, "; next time --mem=%" PRIu64 "M (+%u%%)\n", mib, headroom_pct);
}
