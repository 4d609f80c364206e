// SPDX-License-Identifier: MIT
/* The BPF tracker: open, load, attach, enter processes, read, close. */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "tracker_internal.h"
#include "kfeatures.h"
#include "host.h"
#include "unique_api.h"
#include "tracker.skel.h"

struct tracker {
	struct tracker_bpf *skel;
	struct tracker *base;   /* tracker_open_tree: the load this tree shares, else NULL */
	unsigned tree;          /* index into hot.trees: 0 for the load's own */
	struct tracker_features features;
	int exact_err;          /* 0: the exact per-CPU path is on */
	int unique_err;         /* tracker_unique_err */
	struct bpf_link *settle_links[2];
	__u64 departed_at_cut;  /* departed_seq when the open window began */
	__u64 mark_races_at_cut; /* the tree's mark_races then */
	struct tracker_startup startup;
	struct ring_buffer *sums;       /* --compare-sampler's record */
	tracker_sum_fn sum_fn;
	void *sum_ctx;
	unsigned drain_tree;            /* the tree whose changes a drain hands on */
};

/* Atomic operations on the tree state the kernel updates concurrently. */
#define LOAD(x) __atomic_load_n(&(x), __ATOMIC_SEQ_CST)
#define STORE(x, v) __atomic_store_n(&(x), (v), __ATOMIC_SEQ_CST)

static struct tree_state *tree_of(struct tracker *t)
{
	return &t->skel->bss->hot.trees[t->tree];
}

/*
 * Before 5.12 the verifier rejects a program that holds an atomic with a
 * result anywhere, reachable or not (compat.bpf.h). With has_fetch_atomics
 * false every one of them is on a branch the verifier prunes, so each is
 * replaced with a call to a helper that does not exist, the way libbpf
 * poisons a failed CO-RE relocation: dropped as dead code where it is dead,
 * a load error ("invalid func") where it is not.
 */
#define FETCH_ATOMIC_POISON 0xbadf37c

static int poison_fetch_atomics(struct bpf_object *obj)
{
	struct bpf_program *prog;

	bpf_object__for_each_program(prog, obj) {
		size_t n = bpf_program__insn_cnt(prog), changed = 0;
		struct bpf_insn *insns;
		int err = 0;

		if (!bpf_program__autoload(prog))
			continue;
		insns = malloc(n * sizeof(*insns));
		if (!insns)
			return -ENOMEM;
		memcpy(insns, bpf_program__insns(prog), n * sizeof(*insns));
		for (size_t i = 0; i < n; i++) {
			/* XADD (BPF_ADD, no result) is all that came before. */
			if (BPF_CLASS(insns[i].code) != BPF_STX || BPF_MODE(insns[i].code) != BPF_ATOMIC ||
			    insns[i].imm == BPF_ADD)
				continue;
			insns[i] = (struct bpf_insn){ .code = BPF_JMP | BPF_CALL, .imm = FETCH_ATOMIC_POISON };
			changed++;
		}
		if (changed)
			err = bpf_program__set_insns(prog, insns, n);
		free(insns);
		if (err)
			return err;
	}
	return 0;
}

/*
 * Choose the programs this kernel loads, by name (kfeatures.h): NAME__F
 * loads only where has_F, and then replaces NAME. Programs with "?" in
 * their section are off by default, so the base programs are the ones
 * that load where no feature says otherwise.
 */
static int load_variants(struct bpf_object *obj, const struct tracker_features *f)
{
	struct bpf_program *prog, *base;
	char name[64];

	bpf_object__for_each_program(prog, obj) {
		const char *sep = strstr(bpf_program__name(prog), "__");
		bool on;

		if (!sep)
			continue;
		if (features_lookup(f, sep + 2, &on))
			return -EINVAL;         /* a program named after no feature */
		bpf_program__set_autoload(prog, on);
		snprintf(name, sizeof(name), "%.*s", (int)(sep - bpf_program__name(prog)),
			 bpf_program__name(prog));
		base = bpf_object__find_program_by_name(obj, name);
		if (base)
			bpf_program__set_autoload(base, !on);
	}
	return 0;
}

/* Open the object and set everything that must be known before load. */
static int open_configured(struct tracker *t, const struct tracker_opts *opts)
{
	/* Without CAP_SYS_ADMIN, libbpf 1.1 fails listing kernel modules' BTF
	 * (BPF_BTF_GET_NEXT_ID) when a CO-RE type is missing from vmlinux (as
	 * the pre-6.2 flavours are on new kernels): then point CO-RE at
	 * vmlinux's BTF alone; nothing peakbpf reads lives in a module. With
	 * CAP_SYS_ADMIN leave it, so libbpf parses the 5 MiB BTF once, not twice. */
	LIBBPF_OPTS(bpf_object_open_opts, open_opts);
	__u32 max = opts && opts->max_tracked ? opts->max_tracked : DEFAULT_MAX_TRACKED;
	struct tracker_bpf *s;
	int err;

	if (!(host_effective_caps() & (1ULL << CAPBIT_SYS_ADMIN)))
		open_opts.btf_custom_path = "/sys/kernel/btf/vmlinux";
	s = t->skel = tracker_bpf__open_opts(&open_opts);
	if (!s)
		return -errno;
	if (opts && opts->record_ring_bytes) {
		s->rodata->record_sums = true;
		err = bpf_map__set_max_entries(s->maps.sum_events, opts->record_ring_bytes);
		if (err)
			return err;
	}
	err = bpf_map__set_max_entries(s->maps.mm_states, max);
	if (!err)
		err = bpf_map__set_max_entries(s->maps.mm_cpu_slots, max);
	if (!err)
		err = bpf_map__set_max_entries(s->maps.task_states, max);
	if (!err)
		err = bpf_map__set_max_entries(s->maps.thread_states, max);
	if (!err)
		err = load_variants(s->obj, &t->features);
	if (err)
		return err;
	s->rodata->has_fetch_atomics = t->features.has_fetch_atomics;
	s->rodata->nr_cpus = (__u32)t->features.possible_cpus;
	s->rodata->fault_pages = t->features.fault_pages;
	/* Attached by hand after the others: they must run after handle_fork
	 * and handle_exec on the same tracepoints (attach order). */
	bpf_program__set_autoattach(s->progs.settle_fork__percpu_sum, false);
	bpf_program__set_autoattach(s->progs.settle_exec__percpu_sum, false);
	unique_prepare(s, t->unique_err == 0);
	if (!t->features.has_fetch_atomics)
		return poison_fetch_atomics(s->obj);
	return 0;
}

static int reload(struct tracker *t, const struct tracker_opts *opts)
{
	int err;

	tracker_bpf__destroy(t->skel);
	t->skel = NULL;
	err = open_configured(t, opts);
	return err ? err : tracker_bpf__load(t->skel);
}

/* Load, trying the 6.1 teardown tracepoint first: a kernel without it
 * fails the load on the attach target, and is given fentry instead. The
 * unique program never costs the tracker its load: any failure with it
 * in is retried without it (a missing attach target: no memcg tracepoint). */
static int load(struct tracker *t, const struct tracker_opts *opts)
{
	int err = open_configured(t, opts);

	if (!err)
		err = tracker_bpf__load(t->skel);
	if (err && t->unique_err == 0) {
		t->unique_err = err == -ESRCH || err == -ENOENT ? -EOPNOTSUPP : err;
		if (t->unique_err == -EOPNOTSUPP)
			t->features.has_memcg_stat_tp = false;
		err = reload(t, opts);
	}
	if ((err == -ESRCH || err == -ENOENT) && t->features.has_exit_mmap_tp) {
		t->features.has_exit_mmap_tp = false;
		err = reload(t, opts);
	}
	return err;
}

/* The exact path: learn the per-CPU offsets (which also reports whether
 * the counters are percpu at all). 0, or why the path is off. */
static int learn_cpu_offsets(struct tracker *t)
{
	LIBBPF_OPTS(bpf_test_run_opts, run);
	struct tracker_bpf *s = t->skel;
	int err;

	if (!t->features.has_percpu_sum)
		return -EOPNOTSUPP;
	err = bpf_prog_test_run_opts(bpf_program__fd(s->progs.learn_cpu_offsets__percpu_sum), &run);
	if (err)
		return err;
	t->features.has_percpu_rss = s->bss->percpu_rss_kernel;
	if (run.retval == 2)
		return -E2BIG;          /* more CPUs than MAX_CPUS */
	if (run.retval)
		return -EFAULT;
	return s->bss->hot.cpu_offsets_ready ? 0 : -EOPNOTSUPP;
}

static int attach(struct tracker *t)
{
	struct tracker_bpf *s = t->skel;
	struct bpf_program *later[2] = { s->progs.settle_fork__percpu_sum,
					 s->progs.settle_exec__percpu_sum };
	int err = tracker_bpf__attach(s);

	for (int i = 0; i < 2 && !err && t->features.has_percpu_sum; i++) {
		t->settle_links[i] = bpf_program__attach(later[i]);
		if (!t->settle_links[i])
			err = -errno;
	}
	return err;
}

static int on_sum_event(void *ctx, void *data, size_t size)
{
	struct tracker *t = ctx;
	const struct sum_event *e = data;

	if (size < sizeof(*e) || !t->sum_fn || e->tree != t->drain_tree)
		return 0;
	return t->sum_fn(t->sum_ctx, e);
}

/* A tree of a shared load drains the load's ring: one tree at a time (the
 * process's load serves one run after another; peakbpf serve has none). */
int tracker_drain_sums(struct tracker *t, tracker_sum_fn fn, void *ctx)
{
	struct tracker *owner = t->base ? t->base : t;
	int n;

	if (!owner->sums)
		return -EOPNOTSUPP;
	owner->sum_fn = fn;
	owner->sum_ctx = ctx;
	owner->drain_tree = t->tree;
	n = ring_buffer__consume(owner->sums);
	owner->sum_fn = NULL;
	return n < 0 ? n : 0;
}

int tracker_mm_identity(struct tracker *t, __u64 key, __u32 tgid, __u32 *vpid, char comm[COMM_LEN])
{
	const struct departed_mm *ring = t->skel->bss->departed;
	__u64 best = 0;
	struct mm_state ms;

	if (!bpf_map__lookup_elem(t->skel->maps.mm_states, &key, sizeof(key), &ms, sizeof(ms), 0) &&
	    ms.tgid == tgid && ms.tree == t->tree) {
		*vpid = ms.vpid;
		memcpy(comm, ms.comm, COMM_LEN);
		return 0;
	}
	/* It left: the latest departure of that tgid, read like holders.c
	 * reads the ring (skipped while written or when it changed). */
	for (size_t i = 0; i < MAX_DEPARTED; i++) {
		__u64 seq = __atomic_load_n(&ring[i].seq, __ATOMIC_ACQUIRE);
		struct departed_mm e;

		if (!seq || seq <= best || ring[i].tgid != tgid || ring[i].tree != t->tree)
			continue;
		memcpy(&e, &ring[i], sizeof(e));
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		if (__atomic_load_n(&ring[i].seq, __ATOMIC_ACQUIRE) != seq || e.tgid != tgid)
			continue;
		best = seq;
		*vpid = e.vpid;
		memcpy(comm, e.comm, COMM_LEN);
	}
	return best ? 0 : -ENOENT;
}

int tracker_open(const struct tracker_opts *opts, struct tracker **out)
{
	struct tracker *t;
	__u64 ns;
	int err;

	*out = NULL;
	t = calloc(1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	ns = monotonic_ns();
	features_probe(&t->features);
	t->unique_err = !opts || !opts->with_unique ? -ENODATA :
			!t->features.has_memcg_stat_tp ? -EOPNOTSUPP : 0;
	t->startup.probe_ns = monotonic_ns() - ns;
	ns += t->startup.probe_ns;
	err = load(t, opts);
	t->startup.load_ns = monotonic_ns() - ns;
	if (err)
		goto cleanup;
	if (!t->skel->bss) {    /* kernel without mmapable global data */
		err = -EOPNOTSUPP;
		goto cleanup;
	}
	/* Before attaching, so that no event runs without the offsets. */
	ns += t->startup.load_ns;
	t->exact_err = learn_cpu_offsets(t);
	t->startup.learn_ns = monotonic_ns() - ns;
	ns += t->startup.learn_ns;
	err = attach(t);
	t->startup.attach_ns = monotonic_ns() - ns;
	if (err)
		goto cleanup;
	if (opts && opts->record_ring_bytes) {
		t->sums = ring_buffer__new(bpf_map__fd(t->skel->maps.sum_events), on_sum_event, t, NULL);
		if (!t->sums) {
			err = -errno;
			goto cleanup;
		}
	}
	*out = t;
	t = NULL;
cleanup:
	tracker_close(t);
	return err;
}

static int run_syscall_prog(struct bpf_program *prog)
{
	LIBBPF_OPTS(bpf_test_run_opts, run);
	int err = bpf_prog_test_run_opts(bpf_program__fd(prog), &run);

	return err ? err : (int)run.retval;
}

/* Reading the iterator runs enter_existing over every task; a pass enters
 * roots and children of processes already in. Repeat while a pass still
 * finds some: a child with a smaller PID than its parent (PIDs wrap) is
 * found one pass later. */
static int enter_existing_passes(struct tracker *t)
{
	char buf[64];
	int err = 0;

	for (int pass = 0; pass < MAX_ITER_PASSES && !err; pass++) {
		__u64 before = LOAD(t->skel->bss->iter_entered);
		int fd = bpf_iter_create(bpf_link__fd(t->skel->links.enter_existing));

		if (fd < 0)
			return -errno;
		for (;;) {
			ssize_t r = read(fd, buf, sizeof(buf));

			if (r == 0)
				break;
			if (r < 0 && errno != EINTR && errno != EAGAIN) {
				err = -errno;
				break;
			}
		}
		close(fd);
		if (LOAD(t->skel->bss->iter_entered) == before)
			break;
	}
	return err;
}

/* The walk met these processes exiting: their exit event may have fired
 * before their entry was made, which would then stay for good (and a
 * reused PID's forks would join the tree). Each is dead or dying: remove
 * it; if its exit event removed it first, the delete fails and nothing
 * is counted twice. */
static void remove_dying(struct tracker *t)
{
	struct bpf_map *dying = t->skel->maps.dying, *tasks = t->skel->maps.task_states;
	__u32 n = LOAD(t->skel->bss->dying_n);

	for (__u32 i = 0; i < n && i < MAX_DYING; i++) {
		struct task_state ts;
		__u32 tgid;

		if (bpf_map__lookup_elem(dying, &i, sizeof(i), &tgid, sizeof(tgid), 0) ||
		    bpf_map__lookup_elem(tasks, &tgid, sizeof(tgid), &ts, sizeof(ts), 0))
			continue;
		if (bpf_map__delete_elem(tasks, &tgid, sizeof(tgid), 0) == 0)
			__atomic_fetch_sub(&t->skel->bss->hot.trees[ts.tree & (MAX_TREES - 1)].procs_live, 1,
					   __ATOMIC_SEQ_CST);
	}
	__atomic_store_n(&t->skel->bss->dying_n, 0, __ATOMIC_SEQ_CST);
}

int tracker_add_roots(struct tracker *t, const pid_t *vpids, size_t n,
		      bool enter_mm, __u32 *tgids)
{
	struct bpf_map *roots = t->skel->maps.roots;
	int err = 0;
	size_t i;

	if (n > MAX_ROOTS)
		return -E2BIG;
	for (i = 0; i < n && !err; i++) {
		struct root_req req = { .enter_mm = enter_mm, .tree = t->tree };
		__u32 key = (__u32)vpids[i];

		err = bpf_map__update_elem(roots, &key, sizeof(key), &req, sizeof(req), BPF_ANY);
	}
	if (!err)
		err = enter_existing_passes(t);
	remove_dying(t);
	/* The mms entered by the walk: take every CPU's part now. */
	if (!err && t->exact_err == 0)
		err = run_syscall_prog(t->skel->progs.settle_entered__percpu_sum);
	for (i = 0; i < n && !err; i++) {
		struct root_req req = {};
		__u32 key = (__u32)vpids[i];

		err = bpf_map__lookup_elem(roots, &key, sizeof(key), &req, sizeof(req), 0);
		tgids[i] = req.found ? req.tgid : 0;
	}
	/* Roots are only for this walk: later forks follow task_states. */
	for (i = 0; i < n; i++) {
		__u32 key = (__u32)vpids[i];

		bpf_map__delete_elem(roots, &key, sizeof(key), 0);
	}
	return err;
}

/* The processes of t's tree in the map now. */
static __u64 live_tasks(struct tracker *t)
{
	struct bpf_map *map = t->skel->maps.task_states;
	__u32 key = 0, next = 0;
	struct task_state ts;
	void *prev = NULL;
	__u64 n = 0;

	while (bpf_map__get_next_key(map, prev, &next, sizeof(next)) == 0) {
		key = next;
		prev = &key;
		if (bpf_map__lookup_elem(map, &key, sizeof(key), &ts, sizeof(ts), 0) == 0)
			n += ts.tree == t->tree;
	}
	return n;
}

/* The mms in the map now, and the events they have applied. */
static __u64 live_mms(struct tracker *t, __u64 *events)
{
	struct bpf_map *map = t->skel->maps.mm_states;
	__u64 key = 0, next = 0, n = 0;
	void *prev = NULL;

	*events = 0;
	while (bpf_map__get_next_key(map, prev, &next, sizeof(next)) == 0) {
		struct mm_state ms;

		key = next;
		prev = &key;
		if (bpf_map__lookup_elem(map, &key, sizeof(key), &ms, sizeof(ms), 0) ||
		    ms.tree != t->tree)
			continue;
		n++;
		*events += ms.events;
	}
	return n;
}

/* The tracker's programs' skipped runs; the unique program's lose nothing
 * (bpf/unique.bpf.c says why). */
static __u64 missed_runs(struct tracker_bpf *s)
{
	struct bpf_program *prog;
	__u64 n = 0;

	bpf_object__for_each_program(prog, s->obj) {
		struct bpf_prog_info info = {};
		__u32 len = sizeof(info);
		int fd = bpf_program__fd(prog);

		if (prog == s->progs.unique_stat)
			continue;
		if (fd >= 0 && bpf_obj_get_info_by_fd(fd, &info, &len) == 0)
			n += info.recursion_misses;
	}
	return n;
}

__u64 monotonic_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * 1000000000ULL + (__u64)ts.tv_nsec;
}

void tracker_read_tree(struct tracker *t, struct tree_state *out)
{
	/* A copy of memory the kernel updates concurrently: each field is
	 * current, the fields together only nearly consistent. */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	*out = *tree_of(t);
}

int tracker_read(struct tracker *t, struct tree_reading *out)
{
	memset(out, 0, sizeof(*out));
	tracker_read_tree(t, &out->tree);
	out->missed_events = missed_runs(t->skel);
	out->mm_entries = live_mms(t, &out->events);
	out->events += out->tree.departed_events;
	out->task_entries = live_tasks(t);
	return 0;
}

static void raise_to(__s64 *peak, __s64 v)
{
	__s64 seen = LOAD(*peak);

	while (v > seen && !__atomic_compare_exchange_n(peak, &seen, v, false,
							__ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST))
		;
}

/*
 * Close the window that ends now and open the next. The exchange of the
 * peak with the current sum makes the cut: a peak raised before it belongs
 * to the closing window, one raised after it to the next. The window
 * number advances first, so that every mm's mark of the closing window
 * stays as it was at the cut while the holders are read from them.
 */
int tracker_close_window(struct tracker *t, struct tree_reading *closed)
{
	struct tree_state *tree = tree_of(t);
	__u64 w = LOAD(tree->window), departed_before = t->departed_at_cut;
	__u64 races;
	__s64 sum, word;
	int err;

	err = tracker_read(t, closed);
	if (err)
		return err;
	__atomic_fetch_add(&tree->window, 1, __ATOMIC_SEQ_CST);
	/* The sum word's count moves on (tracker.h): a change that read the
	 * word before this noted its mark in the closing window, and now
	 * swaps no more, so it notes again in the new one. The sum at the
	 * cut is the closing window's: raised into its peak before the
	 * exchange, as a change moving the sum away from it would. */
	word = LOAD(tree->sum_word);
	while (!__atomic_compare_exchange_n(&tree->sum_word, &word,
					    (word & ~(__s64)SUM_COUNT_MASK) | ((word + 1) & SUM_COUNT_MASK),
					    false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST))
		;
	sum = sum_of_word(word);
	raise_to(&tree->peak_pages, sum);
	closed->tree.peak_pages = __atomic_exchange_n(&tree->peak_pages, sum, __ATOMIC_SEQ_CST);
	closed->tree.peak_ns = LOAD(tree->peak_ns);
	closed->tree.peak_mms = LOAD(tree->peak_mms);
	closed->tree.peak_procs = LOAD(tree->peak_procs);
	closed->window_end_sum = sum;
	/* Before 6.2: the window's upper end, cut the same way. */
	closed->tree.upper_pages = __atomic_exchange_n(&tree->upper_pages,
						       sum + LOAD(tree->bound_sum_pages), __ATOMIC_SEQ_CST);
	raise_to(&tree->upper_pages, sum_of_word(LOAD(tree->sum_word)) + LOAD(tree->bound_sum_pages));
	/* A sum reached between the load and the exchange is raised into the
	 * new window, so that it never starts below the current sum. */
	raise_to(&tree->peak_pages, sum_of_word(LOAD(tree->sum_word)));
	t->departed_at_cut = LOAD(t->skel->bss->departed_seq);
	STORE(tree->peak_ns, monotonic_ns());
	STORE(tree->peak_mms, LOAD(tree->mms_live));
	STORE(tree->peak_procs, LOAD(tree->procs_live));
	closed->holders_err = tracker_holders_at_peak(t, w, closed->tree.peak_pages, departed_before,
						      closed->holders, MAX_HOLDERS, &closed->holders_info);
	/* A change that lost every swap of the sum (tracker.bpf.c,
	 * note_and_add) may have noted its mark against an older peak. */
	races = LOAD(tree->mark_races);
	if (races != t->mark_races_at_cut)
		closed->holders_info.truncated = true;
	t->mark_races_at_cut = races;
	return 0;
}

unsigned tracker_fault_pages(const struct tracker *t, bool *read)
{
	*read = t->features.fault_pages_read;
	return t->features.fault_pages;
}

bool tracker_has_percpu_rss(const struct tracker *t)
{
	return t->features.has_percpu_rss;
}

const char *tracker_teardown_hook(const struct tracker *t)
{
	return t->features.has_exit_mmap_tp ? "tp_btf/exit_mmap" : "fentry/exit_mmap";
}

int tracker_exact_path(const struct tracker *t)
{
	return t->exact_err;
}

int tracker_verify_sums(struct tracker *t, struct sum_check *out)
{
	int err;

	memset(out, 0, sizeof(*out));
	if (t->exact_err)
		return -EOPNOTSUPP;
	err = run_syscall_prog(t->skel->progs.verify_sums__percpu_sum);
	if (err)
		return err < 0 ? err : -EFAULT;
	*out = t->skel->bss->check;
	return 0;
}

int tracker_possible_cpus(const struct tracker *t)
{
	return t->features.possible_cpus;
}

struct bpf_object *tracker_object(struct tracker *t)
{
	return t->skel->obj;
}

const struct departed_mm *tracker_departed(struct tracker *t)
{
	return t->skel->bss->departed;
}

__u64 tracker_departed_seq(struct tracker *t)
{
	return LOAD(t->skel->bss->departed_seq);
}

struct tracker_bpf *tracker_skeleton(struct tracker *t)
{
	return t->skel;
}

int tracker_unique_err(const struct tracker *t)
{
	return t->unique_err;
}

void tracker_startup(const struct tracker *t, struct tracker_startup *out)
{
	*out = t->startup;
}

unsigned tracker_tree(const struct tracker *t)
{
	return t->tree;
}

int tracker_open_tree(struct tracker *base, unsigned tree, __u64 max_entries, struct tracker **out)
{
	struct tracker *t;
	int err;

	*out = NULL;
	if (base->base || tree >= MAX_TREES)
		return -EINVAL;
	t = calloc(1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	*t = *base;
	t->base = base;
	t->tree = tree;
	t->sums = NULL;         /* the load's ring stays its own */
	t->sum_fn = NULL;
	memset(t->settle_links, 0, sizeof(t->settle_links));
	/* The slot's last tree was cleared at its close, but a fork whose
	 * handler found the parent before that walk deleted it can have
	 * entered the child behind the walk: such entries go now, when
	 * hardly any can be made (a new one needs a process of the tree:
	 * all went at the close but such a child, which this walk takes
	 * first). The walk zeroes the
	 * state, so whatever a late event left goes too; departures before
	 * now are not this tree's. */
	err = tracker_clear_tree(t, NULL);
	if (err) {
		free(t);
		return err;
	}
	STORE(tree_of(t)->max_entries, max_entries);
	t->departed_at_cut = LOAD(t->skel->bss->departed_seq);
	t->mark_races_at_cut = 0;
	*out = t;
	return 0;
}

/* The keys of a map whose value's tree (a __u32 at tree_off) is tree. */
static int tree_keys(struct bpf_map *map, size_t key_size, size_t value_size, size_t tree_off,
		     unsigned tree, void **keys, size_t *n)
{
	__u64 key = 0, next = 0, value[32];
	size_t cap = 0;
	void *prev = NULL;
	int err = 0;

	*keys = NULL;
	*n = 0;
	if (value_size > sizeof(value))
		return -E2BIG;
	while (!err && bpf_map__get_next_key(map, prev, &next, key_size) == 0) {
		__u32 owner;

		key = next;
		prev = &key;
		if (bpf_map__lookup_elem(map, &key, key_size, value, value_size, 0))
			continue;
		memcpy(&owner, (char *)value + tree_off, sizeof(owner));
		if (owner != tree)
			continue;
		if (*n == cap) {
			void *v = realloc(*keys, (cap ? cap * 2 : 64) * key_size);

			if (!v) {
				err = -ENOMEM;
				break;
			}
			*keys = v;
			cap = cap ? cap * 2 : 64;
		}
		memcpy((char *)*keys + *n * key_size, &key, key_size);
		(*n)++;
	}
	return err;
}

/* Delete the entries of t's tree from a map keyed by key_size bytes;
 * mms also leave mm_cpu_slots and the filter. The count deleted, or -errno. */
static long clear_map(struct tracker *t, struct bpf_map *map, size_t key_size, size_t value_size,
		      size_t tree_off, bool mms)
{
	void *keys = NULL;
	size_t n = 0;
	long done = 0;
	int err = tree_keys(map, key_size, value_size, tree_off, t->tree, &keys, &n);

	for (size_t i = 0; i < n; i++) {
		void *k = (char *)keys + i * key_size;
		__u64 mm;

		if (mms)
			bpf_map__delete_elem(t->skel->maps.mm_cpu_slots, k, key_size, 0);
		/* An mm torn down meanwhile was deleted by the kernel, which
		 * then dropped it from the filter itself: only one of us does. */
		if (bpf_map__delete_elem(map, k, key_size, 0))
			continue;
		done++;
		if (mms) {
			memcpy(&mm, k, sizeof(mm));
			__atomic_fetch_sub(&t->skel->bss->mm_filter[mm_filter_hash((__u32)mm)], 1,
					   __ATOMIC_SEQ_CST);
		}
	}
	free(keys);
	return err ? err : done;
}

/*
 * Remove t's tree from the load's maps: one walk of each map, processes
 * first (so that no fork adds to the tree behind the walk), then threads
 * and mms, then processes again for a fork that raced the first walk.
 * Then the tree's state starts over. O(entries of every tree).
 */
int tracker_clear_tree(struct tracker *t, struct tree_entries *removed)
{
	struct tracker_bpf *s = t->skel;
	struct tree_entries r = { 0 };
	long n;
	int err = 0;

	for (int pass = 0; pass < 2 && !err; pass++) {
		n = clear_map(t, s->maps.task_states, sizeof(__u32), sizeof(struct task_state),
			      offsetof(struct task_state, tree), false);
		if (n < 0) {
			err = (int)n;
			break;
		}
		r.tasks += (__u64)n;
		if (pass)
			break;
		n = clear_map(t, s->maps.thread_states, sizeof(__u32), sizeof(struct thread_state),
			      offsetof(struct thread_state, tree), false);
		if (n >= 0) {
			r.threads += (__u64)n;
			n = clear_map(t, s->maps.mm_states, sizeof(__u64), sizeof(struct mm_state),
				      offsetof(struct mm_state, tree), true);
		}
		if (n < 0)
			err = (int)n;
		else
			r.mms += (__u64)n;
	}
	memset(tree_of(t), 0, sizeof(struct tree_state));
	if (removed)
		*removed = r;
	return err;
}

int tracker_count_trees(struct tracker *t, struct tree_entries per_tree[MAX_TREES])
{
	struct tracker_bpf *s = t->skel;
	__u64 key = 0, next = 0;
	void *prev = NULL;

	memset(per_tree, 0, MAX_TREES * sizeof(*per_tree));
	while (bpf_map__get_next_key(s->maps.mm_states, prev, &next, sizeof(next)) == 0) {
		struct mm_state ms;

		key = next;
		prev = &key;
		if (!bpf_map__lookup_elem(s->maps.mm_states, &key, sizeof(key), &ms, sizeof(ms), 0))
			per_tree[ms.tree & (MAX_TREES - 1)].mms++;
	}
	for (int m = 0; m < 2; m++) {
		struct bpf_map *map = m ? s->maps.thread_states : s->maps.task_states;
		__u32 k = 0, nk = 0;

		prev = NULL;
		while (bpf_map__get_next_key(map, prev, &nk, sizeof(nk)) == 0) {
			struct thread_state th;
			struct task_state ts;

			k = nk;
			prev = &k;
			if (m && !bpf_map__lookup_elem(map, &k, sizeof(k), &th, sizeof(th), 0))
				per_tree[th.tree & (MAX_TREES - 1)].threads++;
			else if (!m && !bpf_map__lookup_elem(map, &k, sizeof(k), &ts, sizeof(ts), 0))
				per_tree[ts.tree & (MAX_TREES - 1)].tasks++;
		}
	}
	return 0;
}

void tracker_close(struct tracker *t)
{
	if (!t)
		return;
	if (t->base) {          /* a tree of a shared load: only its entries go */
		tracker_clear_tree(t, NULL);
		free(t);
		return;
	}
	for (int i = 0; i < 2; i++)
		bpf_link__destroy(t->settle_links[i]);
	ring_buffer__free(t->sums);
	tracker_bpf__destroy(t->skel);
	free(t);
}
