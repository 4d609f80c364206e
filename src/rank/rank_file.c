// SPDX-License-Identifier: MIT
/* --record DIR: one rank's series of fine windows (rank_file.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/timex.h>
#include <time.h>
#include <unistd.h>
#include "fileutil.h"
#include "json.h"
#include "rank_file.h"

#ifndef PEAKBPF_VERSION
#define PEAKBPF_VERSION "unknown"      /* the unit tests are built without it */
#endif

/* The first variable set, in this order, names the job, the rank and the
 * number of ranks: Slurm's own, then the MPI launcher's. */
static const char *const job_vars[] = { "SLURM_JOB_ID", "OMPI_MCA_ess_base_jobid", "PMIX_NAMESPACE", NULL };
static const char *const rank_vars[] = { "SLURM_PROCID", "OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK", NULL };
static const char *const size_vars[] = { "SLURM_NTASKS", "OMPI_COMM_WORLD_SIZE", "PMI_SIZE", NULL };
/* Recorded as they are, for whoever reads the record. */
static const char *const env_vars[] = { "SLURM_JOB_ID", "SLURM_PROCID", "SLURM_NTASKS", "SLURM_NODEID",
					"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "PMI_RANK", "PMI_SIZE", NULL };

static int parse_long(const char *s, long max, long *v)
{
	char *end;
	long n;

	if (!s || !*s || *s == '-' || *s == '+')
		return -EINVAL;
	errno = 0;
	n = strtol(s, &end, 10);
	if (errno || *end || n > max)
		return -ERANGE;
	*v = n;
	return 0;
}

static const char *first_var(const char *const *names, const char *(*get)(const char *), const char **from)
{
	for (size_t i = 0; names[i]; i++) {
		const char *v = get(names[i]);

		if (v && *v) {
			*from = names[i];
			return v;
		}
	}
	*from = NULL;
	return NULL;
}

void record_job_from(struct record_job *j, const char *(*get)(const char *name))
{
	const char *v;

	memset(j, 0, sizeof(*j));
	j->rank = j->size = -1;
	v = first_var(job_vars, get, &j->id_from);
	if (v)
		snprintf(j->id, sizeof(j->id), "%s", v);
	v = first_var(rank_vars, get, &j->rank_from);
	if (v && parse_long(v, 1L << 30, &j->rank))
		j->rank_from = NULL;    /* not a number: unknown */
	v = first_var(size_vars, get, &j->size_from);
	if (v && (parse_long(v, 1L << 30, &j->size) || j->size == 0)) {
		j->size = -1;
		j->size_from = NULL;
	}
}

uint64_t record_interval(uint64_t base_ns, uint64_t lines)
{
	uint64_t level = lines / RECORD_LINES_PER_LEVEL;

	return base_ns << (level > RECORD_MAX_LEVEL ? RECORD_MAX_LEVEL : level);
}

int64_t record_next_boundary(int64_t rt_ns, uint64_t interval_ns)
{
	int64_t i = (int64_t)interval_ns;

	return (rt_ns / i + 1) * i;
}

static int64_t realtime_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void read_clock(struct record_clock *c)
{
	struct timex tx = { .modes = 0 };
	int state = adjtimex(&tx);

	memset(c, 0, sizeof(*c));
	if (state < 0)
		return;
	c->known = true;
	c->synced = !(tx.status & STA_UNSYNC) && state != TIME_ERROR;
	c->maxerror_us = tx.maxerror;
	c->esterror_us = tx.esterror;
	c->status = tx.status;
}

static const char *env_get(const char *name)
{
	return getenv(name);
}

/* One line, in one write(2): a kill leaves it whole or cut, never mixed. */
static void put(struct rank_file *rr, const char *buf, size_t len)
{
	size_t done = 0;

	while (done < len) {
		ssize_t n = write(rr->fd, buf + done, len - done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			if (!rr->write_errno)
				rr->write_errno = n < 0 ? errno : EIO;
			return;
		}
		done += (size_t)n;
	}
}

static void write_clock(struct json_writer *w)
{
	struct record_clock c;

	read_clock(&c);
	json_key(w, "clock");
	json_begin_object(w);
	json_kv_bool(w, "clock_known", c.known);
	json_kv_bool(w, "synced", c.synced);
	json_kv_int(w, "maxerror_us", c.maxerror_us);
	json_kv_int(w, "esterror_us", c.esterror_us);
	json_kv_int(w, "clock_status", c.status);
	json_end_object(w);
}

static void write_header(struct rank_file *rr, const char *host, uint64_t interval_ns,
			 char *const *argv, const pid_t *pids, size_t n_pids)
{
	struct record_job j;
	struct json_writer w;
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (!f) {
		rr->write_errno = errno;
		return;
	}
	record_job_from(&j, env_get);
	json_init(&w, f);
	json_begin_object(&w);
	json_kv_string(&w, "kind", "peakbpf-record");
	json_kv_int(&w, "format", RECORD_FORMAT);
	json_kv_string(&w, "version", PEAKBPF_VERSION);
	json_kv_string(&w, "host", host);
	json_kv_int(&w, "pid", getpid());
	json_kv_int(&w, "start_ns", realtime_ns());
	json_kv_uint(&w, "interval_ns", interval_ns);
	json_kv_uint(&w, "lines_per_level", RECORD_LINES_PER_LEVEL);
	write_clock(&w);
	json_key(&w, "job");
	json_begin_object(&w);
	json_kv_string(&w, "job_id", j.id[0] ? j.id : NULL);
	json_kv_string(&w, "job_id_from", j.id_from);
	json_key(&w, "rank");
	j.rank >= 0 ? json_int(&w, j.rank) : json_null(&w);
	json_kv_string(&w, "rank_from", j.rank_from);
	json_key(&w, "size");
	j.size >= 0 ? json_int(&w, j.size) : json_null(&w);
	json_end_object(&w);
	json_key(&w, "env");
	json_begin_object(&w);
	for (size_t i = 0; env_vars[i]; i++)
		if (getenv(env_vars[i]))
			json_kv_string(&w, env_vars[i], getenv(env_vars[i]));
	json_end_object(&w);
	/* Last, so that no key of the record can appear inside it. */
	json_key(&w, argv ? "command" : "pids");
	json_begin_array(&w);
	for (size_t i = 0; argv && argv[i]; i++)
		json_string(&w, argv[i]);
	for (size_t i = 0; !argv && i < n_pids; i++)
		json_int(&w, pids[i]);
	json_end_array(&w);
	json_end_object(&w);
	if (json_finish(&w) && !rr->write_errno)
		rr->write_errno = EIO;
	fclose(f);
	if (buf)
		put(rr, buf, len);
	free(buf);
}

int rank_file_open(struct rank_file *rr, const char *dir, uint64_t interval_ns,
		     char *const *argv, const pid_t *pids, size_t n_pids)
{
	char host[256] = "", name[300];
	int err, dir_fd;
	bool created;

	memset(rr, 0, sizeof(*rr));
	rr->fd = -1;
	rr->base_ns = interval_ns;
	if (gethostname(host, sizeof(host) - 1) || !host[0])
		snprintf(host, sizeof(host), "unknown");
	if (strchr(host, '/'))
		*strchr(host, '/') = '\0';
	/* Never through a symlink (fileutil.h): -ELOOP names it. */
	dir_fd = safe_open_dir(dir, true);
	if (dir_fd < 0) {
		err = dir_fd;
		fprintf(stderr, "peakbpf: --record: cannot use %s: %s%s\n", dir, strerror(-err),
			err == -ELOOP || err == -ENOTDIR ? " (it must be a directory, not a symlink)" : "");
		return err;
	}
	snprintf(rr->path, sizeof(rr->path), "%s/%s.%d.jsonl", dir, host, (int)getpid());
	snprintf(name, sizeof(name), "%s.%d.jsonl", host, (int)getpid());
	/* 0644: `peakbpf merge` is often run by the job's user, not by the
	 * root that loaded BPF; the figures are not secret. O_EXCL: a PID is
	 * a rank's name on its host. */
	rr->fd = safe_open_at(dir_fd, name, O_EXCL, 0644, &created);
	close(dir_fd);
	if (rr->fd < 0) {
		err = rr->fd;
		fprintf(stderr, "peakbpf: --record: cannot create %s: %s\n", rr->path, strerror(-err));
		return err;
	}
	write_header(rr, host, interval_ns, argv, pids, n_pids);
	if (rr->write_errno) {
		err = -rr->write_errno;
		fprintf(stderr, "peakbpf: --record: cannot write %s: %s\n", rr->path, strerror(-err));
		return err;
	}
	return 0;
}

void rank_file_begin(struct rank_file *rr, bool bpf, int64_t start_pages, long page_size)
{
	rr->bpf = bpf;
	rr->page_size = page_size;
	rr->min_open = rr->min_since_mark = start_pages;
	rr->min_ok = bpf;
	rr->start_rt_ns = realtime_ns();
}

void rank_file_change(struct rank_file *rr, int64_t pages)
{
	if (pages < rr->min_open)
		rr->min_open = pages;
	if (pages < rr->min_since_mark)
		rr->min_since_mark = pages;
}

void rank_file_before_cut(struct rank_file *rr)
{
	rr->cut_before_rt_ns = realtime_ns();
}

void rank_file_mark(struct rank_file *rr)
{
	struct timespec mono;

	rr->cut_after_rt_ns = realtime_ns();
	clock_gettime(CLOCK_MONOTONIC, &mono);
	rr->rt_minus_mono_ns = rr->cut_after_rt_ns - ((int64_t)mono.tv_sec * 1000000000LL + mono.tv_nsec);
	rr->min_since_mark = INT64_MAX;
}

uint64_t rank_file_next_close(const struct rank_file *rr, uint64_t mono_now)
{
	int64_t rt = realtime_ns();
	int64_t next = record_next_boundary(rt, record_interval(rr->base_ns, rr->lines));

	return mono_now + (uint64_t)(next - rt);
}

static uint64_t bytes(const struct rank_file *rr, int64_t pages)
{
	return pages > 0 ? (uint64_t)pages * (uint64_t)rr->page_size : 0;
}

void rank_file_window(struct rank_file *rr, uint64_t peak_bytes, uint64_t peak_mono_ns, bool exact,
			const char *source, int64_t end_pages, uint64_t drops_total)
{
	int64_t end_rt = rr->cut_after_rt_ns;
	bool min_ok = rr->min_ok && drops_total == rr->drops_at_open;
	int64_t min = rr->min_open < end_pages ? rr->min_open : end_pages;
	char buf[320], min_s[24] = "null", end_s[24] = "null", at_s[24] = "null";
	int n;

	if (rr->fd < 0)
		return;
	if (min_ok)
		snprintf(min_s, sizeof(min_s), "%llu", (unsigned long long)bytes(rr, min));
	if (peak_mono_ns)
		snprintf(at_s, sizeof(at_s), "%lld", (long long)((int64_t)peak_mono_ns + rr->rt_minus_mono_ns));
	if (rr->bpf)
		snprintf(end_s, sizeof(end_s), "%llu", (unsigned long long)bytes(rr, end_pages));
	n = snprintf(buf, sizeof(buf),
		     "{\"w\":%llu,\"start_ns\":%lld,\"len_ns\":%lld,\"peak\":%llu,\"peak_ns\":%s,\"min\":%s,"
		     "\"end\":%s,\"exact\":%s,\"source\":\"%s\"}\n",
		     (unsigned long long)rr->lines + 1, (long long)rr->start_rt_ns,
		     (long long)(end_rt - rr->start_rt_ns), (unsigned long long)peak_bytes, at_s, min_s, end_s,
		     exact ? "true" : "false", source);
	if (n > 0 && (size_t)n < sizeof(buf))
		put(rr, buf, (size_t)n);
	rr->lines++;
	/* The next window: the sum at the cut, and whatever was drained after
	 * the mark (it may be from either side of the cut). */
	rr->start_rt_ns = rr->cut_before_rt_ns;
	rr->min_open = rr->min_since_mark < end_pages ? rr->min_since_mark : end_pages;
	rr->min_since_mark = rr->min_open;
	rr->min_ok = rr->bpf;
	rr->drops_at_open = drops_total;
}

int rank_file_finish(struct rank_file *rr, uint64_t peak_bytes, bool exact, const char *source,
		       int exit_status)
{
	struct record_clock c;
	char buf[512];
	int n, err;

	if (rr->fd < 0)
		return 0;
	read_clock(&c);
	n = snprintf(buf, sizeof(buf),
		     "{\"kind\":\"end\",\"end_ns\":%lld,\"windows\":%llu,\"run_peak\":%llu,\"run_exact\":%s,"
		     "\"run_source\":\"%s\",\"exit_status\":%d,\"end_maxerror_us\":%lld,\"end_synced\":%s}\n",
		     (long long)realtime_ns(), (unsigned long long)rr->lines, (unsigned long long)peak_bytes,
		     exact ? "true" : "false", source, exit_status, (long long)c.maxerror_us,
		     c.synced ? "true" : "false");
	if (n > 0 && (size_t)n < sizeof(buf))
		put(rr, buf, (size_t)n);
	err = -rr->write_errno;
	if (err)
		fprintf(stderr, "peakbpf: --record: writing %s failed: %s\n", rr->path, strerror(-err));
	rank_file_close(rr);
	return err;
}

void rank_file_close(struct rank_file *rr)
{
	if (rr->fd >= 0)
		close(rr->fd);
	rr->fd = -1;
}
