// SPDX-License-Identifier: MIT
/*
 * peakbpf.so, a SPANK plugin: the exact peak of the summed RSS of every
 * step of a job, on every node, measured from slurmstepd (root) through
 * libpeakbpf's public API (include/peakbpf/peakbpf.h) only.
 *
 * plugstack.conf:  optional /usr/local/lib/slurm/peakbpf.so default=on
 * a job:           srun --peakbpf[=quiet|off] ...   (sbatch, salloc too)
 *
 * In slurmstepd, each task is added to one session as it is forked (tasks
 * do not exec before every task_post_fork has run), the window opens with
 * the last, and closes when the last task has exited: the step's tree is
 * its tasks and every descendant. Then the step's figures go to the job's
 * directory (slurm_report.h), its AdminComment (scontrol), and, when
 * asked, one line in the step's stderr. Nothing here fails a job: every
 * error is logged and the step runs unmeasured.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <peakbpf/peakbpf.h>
#include <slurm/spank.h>

#include "slurm_report.h"
#include "spank_files.h"
#include "spank_record.h"

SPANK_PLUGIN(peakbpf, 1);

#define SCONTROL_WAIT_MS 10000
#define HOLDERS_LISTED 8

static struct pb_config cfg;
static enum pb_mode user_mode = PB_MODE_UNSET;

/* The step on this node, in slurmstepd. */
static struct {
	struct peakbpf_session *s;
	bool failed;                    /* given up: the step runs unmeasured */
	unsigned forked, exited, tasks;
	int killed_signal;
	uint64_t start_cost_ns;
	uint32_t nnodes;                /* > 1: a record per node, merged (spank_record.h) */
	pid_t *pids;
	struct pb_record rec;
} st;

static int opt_peakbpf(int val, const char *optarg, int remote)
{
	char why[200];

	(void)val;
	if (pb_user_mode(optarg, &user_mode, why, sizeof(why)) == 0)
		return 0;
	slurm_error("peakbpf: %s", why);
	user_mode = PB_MODE_OFF;
	return remote ? 0 : -1;         /* refused at submission, never on the node */
}

static struct spank_option peakbpf_option = {
	"peakbpf", "[quiet|off]",
	"Measure each step's exact peak memory (peakbpf) and print it in the step's stderr; "
	"quiet: only in the job's record and AdminComment; off: not at all",
	2, 0, opt_peakbpf,
};

int slurm_spank_init(spank_t sp, int ac, char **av)
{
	char why[256];

	pb_config_default(&cfg);
	for (int i = 0; i < ac; i++)
		if (pb_config_arg(&cfg, av[i], why, sizeof(why)))
			slurm_error("peakbpf: plugstack.conf: %s; ignored", why);
	if (spank_option_register(sp, &peakbpf_option) != ESPANK_SUCCESS)
		slurm_verbose("peakbpf: --peakbpf not registered in this context");
	return 0;
}

static uint64_t mono_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000ULL + (uint64_t)t.tv_nsec;
}

static void give_up(const char *what, int err)
{
	slurm_error("peakbpf: %s: %s; this step runs unmeasured", what, strerror(-err));
	st.failed = true;
	peakbpf_close(st.s);
	st.s = NULL;
}

static int open_session(spank_t sp)
{
	PEAKBPF_OPTS(o, .source = PEAKBPF_SOURCE_AUTO, .measure = PEAKBPF_MEASURE_UNIQUE,
		     .measure_fallback = true, .helper_path = cfg.helper[0] ? cfg.helper : NULL);
	char why[256] = "";
	const char *note;
	int err;

	if (spank_get_item(sp, S_JOB_LOCAL_TASK_COUNT, &st.tasks) != ESPANK_SUCCESS || !st.tasks ||
	    !(st.pids = calloc(st.tasks, sizeof(*st.pids)))) {
		st.failed = true;
		slurm_error("peakbpf: the step's task count is unknown; this step runs unmeasured");
		return -EINVAL;
	}
	if (spank_get_item(sp, S_JOB_NNODES, &st.nnodes) == ESPANK_SUCCESS && st.nnodes > 1)
		o.changes_ring_bytes = RANK_FILE_RING_BYTES;
	/* A record closes 100 windows a second: the bpf source alone where it
	 * can be used, as the CLI's --record does (a cgroup read beside it
	 * doubles each close's cost and delays the cuts). */
	if (o.changes_ring_bytes) {
		o.source = PEAKBPF_SOURCE_BPF;
		if (peakbpf_open(&o, &st.s, why, sizeof(why)))
			o.source = PEAKBPF_SOURCE_AUTO;
	} else if (cfg.helper[0] && access(cfg.helper, F_OK) == 0) {
		/* A step on one node through the node's peakbpf serve: its one
		 * load serves every step (no load, no maps in slurmstepd). */
		o.use_helper = true;
		if (peakbpf_open(&o, &st.s, why, sizeof(why))) {
			slurm_info("peakbpf: %s: %s; loading BPF here", cfg.helper, why);
			o.use_helper = false;
		}
	}
	err = st.s ? 0 : peakbpf_open(&o, &st.s, why, sizeof(why));
	if (err) {
		slurm_error("peakbpf: %s", why);
		give_up("no source could be opened", err);
		return err;
	}
	for (size_t i = 0; (note = peakbpf_note(st.s, i)); i++)
		slurm_info("peakbpf: %s", note);
	return 0;
}

/* DIR/JOB/STEP.records: this step's records, one a node. */
static void records_dir(spank_t sp, char *buf, size_t len)
{
	uint32_t job = 0, stepid = 0;
	char step[24];

	spank_get_item(sp, S_JOB_ID, &job);
	spank_get_item(sp, S_JOB_STEPID, &stepid);
	pb_step_name(stepid, step, sizeof(step));
	snprintf(buf, len, "%s/%" PRIu32 "/%s.records", cfg.dir, job, step);
}

/* DIR/JOB, checked (spank_files.h): 0 or -errno. */
static int make_job_dir(uint32_t job)
{
	int dir_fd, fd = pb_job_dir_open(cfg.dir, job, &dir_fd);

	if (fd < 0)
		return fd;
	close(fd);
	close(dir_fd);
	return 0;
}

/* A step on several nodes: its record here, for the merge across them. */
static void start_record(spank_t sp)
{
	char dir[700];
	uint32_t job = 0;
	int err;

	spank_get_item(sp, S_JOB_ID, &job);
	records_dir(sp, dir, sizeof(dir));
	err = make_job_dir(job);
	if (!err)
		err = pb_record_start(&st.rec, st.s, dir, st.pids, st.tasks);
	if (err)
		slurm_error("peakbpf: no record in %s (%s): this node's figures only", dir, strerror(-err));
}

/* Open at the first task, add each, start at the last. */
static void add_task(spank_t sp)
{
	pid_t pid;
	int err;

	if (!st.s && !st.forked && open_session(sp))
		return;
	if (spank_get_item(sp, S_TASK_PID, &pid) != ESPANK_SUCCESS) {
		give_up("a task's PID is unknown", -EINVAL);
		return;
	}
	err = st.forked < st.tasks ? peakbpf_add_pid(st.s, pid) : -E2BIG;
	if (err) {
		give_up("adding a task", err);
		return;
	}
	st.pids[st.forked] = pid;
	if (++st.forked == st.tasks) {
		err = peakbpf_start(st.s);
		if (err)
			give_up("starting the measurement", err);
		else if (st.nnodes > 1)
			start_record(sp);
	}
}

int slurm_spank_task_post_fork(spank_t sp, int ac, char **av)
{
	uint64_t t0;

	(void)ac;
	(void)av;
	if (!spank_remote(sp) || st.failed || pb_effective_mode(user_mode, cfg.site_mode) == PB_MODE_OFF)
		return 0;
	t0 = mono_ns();
	add_task(sp);
	st.start_cost_ns += mono_ns() - t0;     /* the time the tasks wait for the plugin */
	return 0;
}

/* The figures of the closed step on this node. */
static void fill_line(spank_t sp, const struct peakbpf_figure *f, struct pb_step_line *l)
{
	uint32_t stepid = 0;
	uint64_t mem_mb = 0;
	struct peakbpf_holder h;

	memset(l, 0, sizeof(*l));
	spank_get_item(sp, S_JOB_STEPID, &stepid);
	pb_step_name(stepid, l->step, sizeof(l->step));
	if (spank_getenv(sp, "SLURMD_NODENAME", l->node, sizeof(l->node)) != ESPANK_SUCCESS || !l->node[0])
		gethostname(l->node, sizeof(l->node) - 1);
	l->node[strcspn(l->node, "\t\n")] = '\0';
	l->peak_known = peakbpf_figure_peak(f, &l->peak) == 0;
	l->exact = peakbpf_figure_exact(f);
	snprintf(l->source, sizeof(l->source), "%s", peakbpf_figure_source(f));
	for (size_t i = 0; i < peakbpf_figure_holder_count(f); i++)
		if (peakbpf_figure_holder(f, i, &h) == 0 && (!l->largest_known || h.own_peak_bytes > l->largest)) {
			l->largest = h.own_peak_bytes;
			l->largest_known = true;
		}
	l->tasks = st.tasks;
	l->killed_signal = st.killed_signal;
	if (spank_get_item(sp, S_STEP_ALLOC_MEM, &mem_mb) == ESPANK_SUCCESS && mem_mb &&
	    mem_mb < UINT64_MAX / (1024 * 1024))
		l->limit = mem_mb * 1024 * 1024;
}

/* DIR/JOB/STEP.NODE.json: the figure as libpeakbpf renders it, with ours. */
static int write_node_file(int dir_fd, const struct pb_step_line *l, const struct peakbpf_figure *f,
			   uint32_t job)
{
	char extra[512], name[128], *buf = NULL;
	struct peakbpf_format_opts fo = { .sz = sizeof(fo), .format = PEAKBPF_FORMAT_JSON,
					  .holders = HOLDERS_LISTED, .extra = extra };
	int n, err;

	snprintf(extra, sizeof(extra),
		 "\"slurm\":{\"job_id\":%" PRIu32 ",\"step\":\"%s\",\"node\":\"%s\",\"tasks\":%u,"
		 "\"killed_by_signal\":%d,\"memory_limit_bytes\":%" PRIu64 ",\"start_cost_ns\":%" PRIu64 "}",
		 job, l->step, l->node, l->tasks, l->killed_signal, l->limit, st.start_cost_ns);
	n = peakbpf_figure_format(f, &fo, NULL, 0);
	if (n < 0)
		return n;
	buf = malloc((size_t)n + 1);
	if (!buf)
		return -ENOMEM;
	peakbpf_figure_format(f, &fo, buf, (size_t)n + 1);
	snprintf(name, sizeof(name), "%s.%s.json", l->step, l->node);
	err = pb_write_at(dir_fd, name, buf, (size_t)n);
	free(buf);
	return err;
}

static int read_lines(FILE *in, struct pb_step_line *lines, size_t max, size_t *n)
{
	char text[512];

	*n = 0;
	while (*n < max && fgets(text, sizeof(text), in))
		if (pb_line_parse(text, &lines[*n]) == 0)
			(*n)++;
	return 0;
}

/* Write DIR/JOB.json (DIR's fd dir_fd) from every step line so far; the
 * AdminComment text. */
static int write_job_file(int dir_fd, uint32_t job, FILE *tsv, char *comment, size_t comment_len)
{
	struct pb_step_line *lines = calloc(PB_MAX_LINES, sizeof(*lines));
	struct pb_step_merge *m = calloc(PB_MAX_LINES, sizeof(*m));
	char name[32];
	FILE *out = NULL;
	size_t n, k;
	int err = -ENOMEM;

	if (!lines || !m)
		goto cleanup;
	rewind(tsv);
	read_lines(tsv, lines, PB_MAX_LINES, &n);
	k = pb_merge_steps(lines, n, m, PB_MAX_LINES);
	pb_admin_comment(comment, comment_len, m, k, cfg.headroom_pct);
	snprintf(name, sizeof(name), "%" PRIu32 ".json", job);
	out = pb_replace_begin(dir_fd, name);
	if (!out) {
		err = -errno;
		goto cleanup;
	}
	err = pb_job_json(out, job, lines, n, cfg.headroom_pct);
	if (err) {
		fclose(out);
		pb_replace_end(NULL, dir_fd, name);
		goto cleanup;
	}
	err = pb_replace_end(out, dir_fd, name);
cleanup:
	free(lines);
	free(m);
	return err;
}

/* The step's files, under the job directory's lock (steps end at once). */
/* The nodes' records as they are now (under the job's lock). */
static void merge_records(spank_t sp, struct pb_step_line *l)
{
	struct pb_merged m;
	char dir[700], why[256] = "";
	int err;

	records_dir(sp, dir, sizeof(dir));
	err = pb_record_merge(dir, &m, why, sizeof(why));
	if (err) {
		slurm_error("peakbpf: merging %s: %s", dir, why[0] ? why : strerror(-err));
		return;
	}
	l->mlower_known = m.records > 0;
	l->mlower = m.lower;
	l->mupper_known = m.complete == st.nnodes;      /* every node's whole record */
	l->mupper = m.upper;
}

static int record_step(spank_t sp, const struct peakbpf_figure *f, struct pb_step_line *l,
		       char *comment, size_t comment_len)
{
	char line[512];
	uint32_t job = 0;
	int top_fd = -1, dir_fd, lock = -1, err;
	FILE *tsv = NULL;

	spank_get_item(sp, S_JOB_ID, &job);
	dir_fd = pb_job_dir_open(cfg.dir, job, &top_fd);
	if (dir_fd < 0)
		return dir_fd;
	err = write_node_file(dir_fd, l, f, job);
	if (err)
		goto cleanup;
	lock = pb_append_at(dir_fd, "steps.tsv");
	if (lock < 0 || flock(lock, LOCK_EX)) {
		err = lock < 0 ? lock : -errno;
		goto cleanup;
	}
	if (st.nnodes > 1)
		merge_records(sp, l);
	err = pb_line_format(l, line, sizeof(line));
	if (err < 0 || write(lock, line, (size_t)err) != err) {
		err = err < 0 ? err : -EIO;
		goto cleanup;
	}
	tsv = pb_read_at(dir_fd, "steps.tsv");
	err = tsv ? write_job_file(top_fd, job, tsv, comment, comment_len) : -errno;
cleanup:
	if (tsv)
		fclose(tsv);
	if (lock >= 0)
		close(lock);            /* and its lock */
	close(dir_fd);
	close(top_fd);
	return err;
}

/* scontrol update JobId=N AdminComment=...: bounded, never fatal. */
static void set_admin_comment(spank_t sp, const char *comment)
{
	char jobarg[40], *arg = NULL;
	char *argv[5];
	uint32_t job = 0;
	pid_t pid;
	int status = 0, fd;

	spank_get_item(sp, S_JOB_ID, &job);
	snprintf(jobarg, sizeof(jobarg), "JobId=%" PRIu32, job);
	if (asprintf(&arg, "AdminComment=%s", comment) < 0)
		return;
	argv[0] = cfg.scontrol, argv[1] = "update", argv[2] = jobarg, argv[3] = arg, argv[4] = NULL;
	pid = fork();
	if (pid == 0) {         /* only async-signal-safe calls until exec */
		fd = open("/dev/null", O_RDWR);
		if (fd >= 0) {
			dup2(fd, 0);
			dup2(fd, 1);
			dup2(fd, 2);
		}
		execvp(argv[0], argv);
		_exit(127);
	}
	free(arg);
	if (pid < 0) {
		slurm_error("peakbpf: fork for scontrol: %s; no AdminComment", strerror(errno));
		return;
	}
	for (int ms = 0; waitpid(pid, &status, WNOHANG) == 0; ms += 20) {
		if (ms >= SCONTROL_WAIT_MS) {
			kill(pid, SIGKILL);
			waitpid(pid, &status, 0);
			slurm_error("peakbpf: scontrol update took over %d s; killed", SCONTROL_WAIT_MS / 1000);
			return;
		}
		nanosleep(&(struct timespec){ .tv_nsec = 20000000 }, NULL);
	}
	if (!WIFEXITED(status) || WEXITSTATUS(status))
		slurm_error("peakbpf: scontrol update JobId=%" PRIu32 " AdminComment failed", job);
}

static void finish_step(spank_t sp)
{
	struct peakbpf_figure *w = NULL, *f = NULL;
	struct pb_step_line l;
	char comment[1024] = "", line[512];
	int err;

	bool recorded = pb_record_stop(&st.rec) == 0;

	err = peakbpf_close_window(st.s, &w);
	peakbpf_figure_free(w);
	if (!err)
		err = peakbpf_run_figure(st.s, &f);
	if (err) {
		pb_record_abort(&st.rec);
		give_up("closing the window", err);
		return;
	}
	fill_line(sp, f, &l);
	if (recorded && pb_record_finish(&st.rec, l.peak, l.exact, l.source,
					 st.killed_signal ? 128 + st.killed_signal : 0))
		slurm_error("peakbpf: writing this node's record failed");
	err = record_step(sp, f, &l, comment, sizeof(comment));
	if (err)
		slurm_error("peakbpf: writing the job's record under %s: %s", cfg.dir, strerror(-err));
	if (comment[0])
		set_admin_comment(sp, comment);
	pb_stderr_line(line, sizeof(line), &l, cfg.headroom_pct);
	if (pb_effective_mode(user_mode, cfg.site_mode) == PB_MODE_PRINT)
		dprintf(STDERR_FILENO, "%s", line);     /* slurmstepd's stderr is the step's */
	slurm_info("%.*s", (int)strcspn(line, "\n"), line);
	peakbpf_figure_free(f);
	peakbpf_close(st.s);
	st.s = NULL;
}

int slurm_spank_task_exit(spank_t sp, int ac, char **av)
{
	int status = 0;

	(void)ac;
	(void)av;
	if (!spank_remote(sp) || !st.s || st.forked < st.tasks)
		return 0;
	if (spank_get_item(sp, S_TASK_EXIT_STATUS, &status) == ESPANK_SUCCESS && WIFSIGNALED(status) &&
	    !st.killed_signal)
		st.killed_signal = WTERMSIG(status);
	if (++st.exited == st.tasks)
		finish_step(sp);
	return 0;
}

int slurm_spank_exit(spank_t sp, int ac, char **av)
{
	(void)sp;
	(void)ac;
	(void)av;
	pb_record_abort(&st.rec);       /* a step whose tasks did not all start */
	peakbpf_close(st.s);
	st.s = NULL;
	free(st.pids);
	st.pids = NULL;
	return 0;
}
