// SPDX-License-Identifier: MIT
/* agent_oom_record.h: an OOM record's files, and the spool read back. */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "agent_int.h"
#include "agent_oom_record.h"
#include "fileutil.h"
#include "json.h"
#include "timeline.h"
#include "timeline_export.h"
#include "units.h"

#define MAX_HOLDERS_KEPT 32

struct proc_rss {
	int pid;
	char comm[17];
	uint64_t anon, file, shmem;     /* bytes, /proc/PID/status */
};

/* A process's rss split from /proc/PID/status (RssAnon, RssFile, RssShmem). */
static bool read_status(int pid, struct proc_rss *p)
{
	char path[64], line[128];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	f = fopen(path, "re");
	if (!f)
		return false;
	memset(p, 0, sizeof(*p));
	p->pid = pid;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long kb;

		if (sscanf(line, "Name:\t%16s", p->comm) == 1)
			continue;
		if (sscanf(line, "RssAnon: %llu kB", &kb) == 1)
			p->anon = kb * 1024;
		else if (sscanf(line, "RssFile: %llu kB", &kb) == 1)
			p->file = kb * 1024;
		else if (sscanf(line, "RssShmem: %llu kB", &kb) == 1)
			p->shmem = kb * 1024;
	}
	fclose(f);
	return true;
}

/* The processes of cgroup dir (and its children, 3 levels), at most max. */
static size_t holders(const char *dir, int depth, struct proc_rss *out, size_t n, size_t max)
{
	char path[600];
	FILE *f;
	int pid;
	DIR *d;
	struct dirent *e;

	snprintf(path, sizeof(path), "%s/cgroup.procs", dir);
	f = fopen(path, "re");
	while (f && n < max && fscanf(f, "%d", &pid) == 1)
		if (read_status(pid, &out[n]))
			n++;
	if (f)
		fclose(f);
	d = depth < 3 ? opendir(dir) : NULL;
	while (d && n < max && (e = readdir(d))) {
		if (e->d_type != DT_DIR || e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		n = holders(path, depth + 1, out, n, max);
	}
	if (d)
		closedir(d);
	return n;
}

static int by_rss(const void *a, const void *b)
{
	const struct proc_rss *x = a, *y = b;
	uint64_t sx = x->anon + x->file + x->shmem, sy = y->anon + y->file + y->shmem;

	return sx < sy ? 1 : sx > sy ? -1 : 0;
}

/* The victim as the library writes it (the CLI's run record too). */
static void json_victim(struct json_writer *w, const struct peakbpf_oom_victim *v)
{
	int n = peakbpf_oom_victim_json(v, 0, NULL, 0);
	char *one = n > 0 ? malloc((size_t)n + 1) : NULL;

	json_key(w, "victim");
	if (one && peakbpf_oom_victim_json(v, 0, one, (size_t)n + 1) == n)
		json_raw_value(w, one);
	else
		json_null(w);
	free(one);
}

/* The cgroup's figures from the agent's state (just cut), and its windows. */
static void json_cgroup(struct json_writer *w, struct agent *a, const struct agent_cg *cg)
{
	json_key(w, "cgroup");
	if (!cg) {
		json_null(w);
		return;
	}
	json_begin_object(w);
	json_kv_string(w, "path", cg->path);
	json_kv_uint(w, "rss_bytes", (uint64_t)(cg->pages > 0 ? cg->pages : 0) * (uint64_t)a->page_size);
	json_kv_uint(w, "rss_max_bytes", (uint64_t)cg->all_peak_pages * (uint64_t)a->page_size);
	json_kv_bool(w, "exact", a->facts.exact);
	json_key(w, "windows");
	json_begin_array(w);
	for (unsigned k = 0; k < cg->n_hist; k++) {
		const struct agent_window *win = &cg->hist[(cg->head + AGENT_HISTORY - cg->n_hist + k) % AGENT_HISTORY];

		json_begin_object(w);
		json_kv_double(w, "end_s_before_record",
			       (double)(a->st.cut_ns - win->end_ns) / 1e9, 3);
		json_kv_uint(w, "peak_bytes", (uint64_t)win->peak_pages * (uint64_t)a->page_size);
		json_kv_uint(w, "end_bytes", (uint64_t)(win->end_pages > 0 ? win->end_pages : 0) *
						 (uint64_t)a->page_size);
		json_end_object(w);
	}
	json_end_array(w);
	json_end_object(w);
}

static void json_holders(struct json_writer *w, struct agent *a, const struct agent_cg *cg)
{
	static struct proc_rss procs[MAX_HOLDERS_KEPT * 4];
	char dir[AGENT_PATH_MAX + 128];
	size_t n = 0;

	if (cg) {
		snprintf(dir, sizeof(dir), "%s%s", a->hier.mount, cg->path);
		n = holders(dir, 0, procs, 0, sizeof(procs) / sizeof(procs[0]));
		qsort(procs, n, sizeof(procs[0]), by_rss);
	}
	json_key(w, "holders");
	json_begin_object(w);
	json_kv_string(w, "read", "the cgroup's processes just after the kill, /proc/PID/status");
	json_kv_uint(w, "processes", n);
	json_key(w, "listed");
	json_begin_array(w);
	for (size_t i = 0; i < n && i < MAX_HOLDERS_KEPT; i++) {
		json_begin_object(w);
		json_kv_int(w, "pid", procs[i].pid);
		json_kv_string(w, "comm", procs[i].comm);
		json_kv_uint(w, "anon_bytes", procs[i].anon);
		json_kv_uint(w, "file_bytes", procs[i].file);
		json_kv_uint(w, "shmem_bytes", procs[i].shmem);
		json_end_object(w);
	}
	json_end_array(w);
	json_end_object(w);
}

static void summary(const struct peakbpf_oom_victim *v, const struct agent_cg *cg, long page, char *out,
		    size_t len)
{
	char a[32], lim[32], peak[32];

	format_bytes(v->anon_bytes, a, sizeof(a));
	format_bytes(v->limit_bytes, lim, sizeof(lim));
	format_bytes(cg ? (uint64_t)cg->all_peak_pages * (uint64_t)page : 0, peak, sizeof(peak));
	snprintf(out, len, "%d %s (anon %s) killed: %s %s%s; cgroup peak %s", v->pid, v->comm, v->rss_read ? a : "?",
		 v->memcg_oom ? "cgroup at its limit" : "machine out of memory",
		 v->memcg_oom ? (*v->oom_cgroup ? v->oom_cgroup : "?") : "", v->memcg_oom ? "" : "", cg ? peak : "?");
	if (v->memcg_oom) {
		size_t n = strlen(out);

		snprintf(out + n, len - n, "; limit %s", lim);
	}
}

/* The cgroup's windows as a timeline file (the existing writers'), each
 * window's exact peak drawn at its end (its time known to the cut). */
static int write_timeline(struct agent *a, const struct agent_cg *cg, int dir_fd, const char *id)
{
	struct timeline tl;
	char name[96];
	FILE *out;
	int fd, err;

	if (!cg || !cg->n_hist)
		return 0;
	const struct agent_window *first = &cg->hist[(cg->head + AGENT_HISTORY - cg->n_hist) % AGENT_HISTORY];

	if (timeline_init(&tl, first->end_ns, (uint64_t)a->page_size, 0))
		return -EINVAL;
	for (unsigned k = 0; k < cg->n_hist; k++) {
		const struct agent_window *w = &cg->hist[(cg->head + AGENT_HISTORY - cg->n_hist + k) % AGENT_HISTORY];

		timeline_add(&tl, w->end_ns ? w->end_ns - 1 : 0, w->peak_pages);
		timeline_add(&tl, w->end_ns, w->end_pages);
	}
	timeline_end(&tl, a->st.cut_ns);
	snprintf(name, sizeof(name), "%s.timeline.json", id);
	fd = openat(dir_fd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	out = fd < 0 ? NULL : fdopen(fd, "w");
	err = out ? timeline_write_json(&tl, cg->path, out) : -errno;
	if (out && fclose(out) && !err)
		err = -EIO;
	timeline_free(&tl);
	return err;
}

int oom_record_write(struct agent *a, const struct oom_event *e, const struct peakbpf_oom_victim *v,
		     int dir_fd, char *id, size_t len)
{
	const struct agent_cg *cg = agent_state_find(&a->st, v->memcg_oom ? v->oom_cgroup_id : v->cgroup_id);
	struct json_writer w;
	struct timespec now;
	char line[512], tmp[96], name[96];
	int fd, err;
	FILE *out;

	clock_gettime(CLOCK_REALTIME, &now);
	snprintf(id, len, "oom-%lld%09ld-%u", (long long)now.tv_sec, now.tv_nsec, e->tgid);
	snprintf(tmp, sizeof(tmp), ".%s.tmp", id);
	snprintf(name, sizeof(name), "%s.json", id);
	fd = openat(dir_fd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	out = fd < 0 ? NULL : fdopen(fd, "w");
	if (!out)
		return -errno;
	summary(v, cg, a->page_size, line, sizeof(line));
	json_init(&w, out);
	json_begin_object(&w);
	json_kv_string(&w, "summary", line);
	json_kv_string(&w, "id", id);
	json_kv_int(&w, "unix_s", (int64_t)now.tv_sec);
	json_victim(&w, v);
	json_cgroup(&w, a, cg);
	json_holders(&w, a, cg);
	/* the kernel's marks: who held the largest peak of the windows kept
	 * (the last cut is the record's own), at that instant */
	agent_holders_obj(&w, "holders_at_peak", cg ? agent_cg_holders_since(cg, 0) : NULL, a->page_size,
			  a->st.cut_ns);
	json_kv_string(&w, "timeline", cg && cg->n_hist ? "ID.timeline.json: the cgroup's windows" : "none");
	json_end_object(&w);
	err = json_finish(&w);
	if (fclose(out) && !err)
		err = -EIO;
	if (!err)
		err = write_timeline(a, cg, dir_fd, id);
	if (!err && renameat(dir_fd, tmp, dir_fd, name))
		err = -errno;
	if (err)
		unlinkat(dir_fd, tmp, 0);
	return err;
}

bool oom_record_name_ok(const char *name)
{
	const char *p = name;

	if (strncmp(p, "oom-", 4))
		return false;
	for (p += 4; isdigit((unsigned char)*p) || *p == '-'; p++)
		;
	return p > name + 4 && (!strcmp(p, ".json") || !strcmp(p, ".timeline.json"));
}

bool oom_record_summary(const char *text, char *out, size_t len)
{
	const char *p = strstr(text, "\"summary\":\"");
	size_t n = 0;

	if (!p || !len)
		return false;
	for (p += 11; *p && *p != '"' && n + 1 < len; p++) {
		if (*p == '\\' && p[1])
			p++;
		out[n++] = *p;
	}
	out[n] = '\0';
	return true;
}

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

char *oom_record_read(int dir_fd, const char *name)
{
	int fd = openat(dir_fd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	char *buf = fd < 0 ? NULL : malloc(1 << 20);
	ssize_t n = buf ? read(fd, buf, (1 << 20) - 1) : -1;

	if (fd >= 0)
		close(fd);
	if (n < 0) {
		free(buf);
		return NULL;
	}
	buf[n] = '\0';
	return buf;
}

/* The spool's record names (not the timelines), sorted: oldest first. */
static char **record_names(int dir_fd, size_t *count)
{
	int fd = dup(dir_fd);
	DIR *d = fd < 0 ? NULL : fdopendir(fd);
	char **names = NULL;
	size_t n = 0, cap = 0;
	struct dirent *e;

	if (d)
		rewinddir(d);   /* a dup shares the offset: another walk may have left it at the end */
	while (d && (e = readdir(d))) {
		if (!oom_record_name_ok(e->d_name) || strstr(e->d_name, ".timeline."))
			continue;
		if (n == cap) {
			char **g = realloc(names, (cap = cap ? 2 * cap : 16) * sizeof(*g));

			if (!g)
				break;
			names = g;
		}
		if ((names[n] = strdup(e->d_name)))
			n++;
	}
	if (d)
		closedir(d);
	else if (fd >= 0)
		close(fd);
	if (n)
		qsort(names, n, sizeof(*names), by_name);
	*count = n;
	return names;
}

static void free_names(char **names, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
}

char *oom_records_list_json(int dir_fd, size_t *len)
{
	size_t n = 0, size = 0;
	char **names = record_names(dir_fd, &n), *text = NULL, sum[512];
	struct json_writer w;
	FILE *out = open_memstream(&text, &size);

	if (out) {
		json_init(&w, out);
		json_begin_array(&w);
		for (size_t i = 0; i < n; i++) {
			char *body = oom_record_read(dir_fd, names[i]);

			names[i][strlen(names[i]) - 5] = '\0';    /* the ID: its name without .json */
			json_begin_object(&w);
			json_kv_string(&w, "id", names[i]);
			json_kv_string(&w, "summary", body && oom_record_summary(body, sum, sizeof(sum)) ? sum : "?");
			json_end_object(&w);
			free(body);
		}
		json_end_array(&w);
		json_finish(&w);
		fclose(out);
	}
	free_names(names, n);
	*len = text ? strlen(text) : 0;
	return text;
}

void oom_records_print(int dir_fd)
{
	size_t n = 0;
	char **names = record_names(dir_fd, &n), sum[512];

	for (size_t i = 0; i < n; i++) {
		char *body = oom_record_read(dir_fd, names[i]);

		names[i][strlen(names[i]) - 5] = '\0';
		printf("%s  %s\n", names[i], body && oom_record_summary(body, sum, sizeof(sum)) ? sum : "?");
		free(body);
	}
	if (!n)
		printf("no OOM record\n");
	free_names(names, n);
}
