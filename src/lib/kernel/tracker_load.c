// SPDX-License-Identifier: MIT
/* The BPF tracker's load: open, configure for this kernel, load, attach,
 * close; and the facts the load found. */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "clock.h"
#include "host.h"
#include "kfeatures.h"
#include "mapped_internal.h"
#include "tracker_load.h"
#include "tree_maps.h"
#include "unique_hook.h"
#include "oom_api.h"
#include "cgsum_api.h"
#include "stacks_api.h"
#include "tracker.skel.h"

struct ring_buffer;

struct tracker_load {
	struct tracker_bpf *skel;
	struct tracker_features features;
	int exact_err;          /* 0: the exact per-CPU path is on */
	int unique_err;         /* tracker_load__unique_err */
	struct bpf_link *settle_links[3];       /* fork, exec, cgroup attach */
	struct tracker_startup startup;
	struct ring_buffer *sums;       /* the ring of the sum's changes */
	source_sum_fn sum_fn;           /* a drain's, while it runs */
	void *sum_ctx;
	unsigned drain_tree;            /* the tree whose changes a drain hands on
					   (TRACKER_EVERY_TREE: all) */
	bool record_per_tree;           /* the ring records only trees that ask */
	/* Each tree's tree_insertions when its last clear began (0 for a new
	 * load, where no tree has an entry). */
	__u64 cleared_at[MAX_TREES];
	/* The OOM recorder (oom_api.h): what the load has of it, why not
	 * more, and its ring's reader (oom.c). */
	int oom_level;
	int oom_err;
	struct oom_reader *oom;
	struct stacks_reader *stacks;   /* --stacks (stacks_api.h), NULL: off */
	int stacks_err;                 /* -ENODATA: not asked; else why off */
	enum stacks_thp stacks_thp;     /* how --stacks places huge pages (stacks_api.h) */
};

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

/*
 * Leave out what no tree of this load will run (issue 37: each program
 * costs its verification at start-up): the cgroup targets' programs, and
 * the per-CPU settle of a move that only a target's move needs; the settle
 * of a walk's mms when the walk enters no mm; unique memory's notes of
 * processes charged elsewhere without unique memory.
 */
static void leave_out_unneeded(struct tracker_load *t, const struct tracker_opts *opts)
{
	struct tracker_bpf *s = t->skel;
	bool cgroup = t->features.has_cgroup_targets && !(opts && opts->without_cgroup_targets);

	if (!cgroup) {
		bpf_program__set_autoload(s->progs.handle_cgroup_attach__cgroup_targets, false);
		bpf_program__set_autoload(s->progs.check_cgroup_members__cgroup_targets, false);
		bpf_program__set_autoload(s->progs.settle_attach__percpu_sum, false);
		bpf_program__set_autoload(s->progs.handle_fork__cgroup_targets, false);
		bpf_program__set_autoload(s->progs.handle_fork, true);
	}
	if (!cgroup && opts && opts->commands_only)
		bpf_program__set_autoload(s->progs.settle_entered__percpu_sum, false);
	if (t->unique_err) {
		bpf_program__set_autoload(s->progs.note_fork_memcg, false);
		bpf_program__set_autoload(s->progs.note_attach_memcg, false);
	}
}

/* Open the object and set everything that must be known before load. */
static int open_configured(struct tracker_load *t, const struct tracker_opts *opts)
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
	/* The features the BPF object reads as rodata (kfeatures.h). */
#define RODATA(name) s->rodata->has_##name = t->features.has_##name;
#define NONE(name)
#define KFEATURE_RODATA(name, probe, bpf) bpf(name)
	KFEATURES(KFEATURE_RODATA)
#undef KFEATURE_RODATA
#undef NONE
#undef RODATA
	s->rodata->nr_cpus = (__u32)t->features.possible_cpus;
	s->rodata->fault_pages = t->features.fault_pages;
	/* Attached by hand after the others: they must run after handle_fork
	 * and handle_exec on the same tracepoints (attach order). */
	bpf_program__set_autoattach(s->progs.settle_fork__percpu_sum, false);
	bpf_program__set_autoattach(s->progs.settle_exec__percpu_sum, false);
	bpf_program__set_autoattach(s->progs.settle_attach__percpu_sum, false);
	oom_prepare(s, (enum oom_level)t->oom_level);
	cgsum_prepare(s, opts ? opts->cgsum : NULL);
	stacks_prepare(s, t->stacks_err == 0, t->stacks_thp);
	err = unique_prepare(s, t->unique_err == 0, &t->features);
	if (err && t->unique_err == 0)
		t->unique_err = err;
	leave_out_unneeded(t, opts);
	err = 0;
	if (!t->features.has_fetch_atomics)
		return poison_fetch_atomics(s->obj);
	return 0;
}

static int reload(struct tracker_load *t, const struct tracker_opts *opts)
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
 * in is retried without it (unique.c chose its hook from the BTF). */
static int load(struct tracker_load *t, const struct tracker_opts *opts)
{
	int err = open_configured(t, opts);

	if (!err)
		err = tracker_bpf__load(t->skel);
	/* The OOM recorder's fentry first: a kernel without fentry (no
	 * CONFIG_FUNCTION_TRACER) refuses it with EPERM, which would else be
	 * taken for the unique program's failure. Without the kill's context
	 * the victims are still recorded (oom_api.h). */
	if (err && t->oom_level == OOM_FULL) {
		t->oom_err = err;
		t->oom_level = OOM_VICTIMS;
		err = reload(t, opts);
	}
	/* Nor does the OOM recorder's victim program cost the tracker its
	 * load, and it goes before unique memory is blamed: 6.1's verifier
	 * refuses it (EACCES), and unique memory was lost for it. A missing
	 * attach target (ENOENT, ESRCH) is the teardown hook's, below. */
	if (err && err != -ENOENT && err != -ESRCH && t->oom_level > OOM_OFF) {
		t->oom_err = err;
		t->oom_level = OOM_OFF;
		err = reload(t, opts);
	}
	/* Should a verifier still refuse the cgroup targets' programs
	 * (EACCES; 5.10-6.12 did before handle_fork's frame shrank, adding a
	 * global function's stack to their callers'), the tracker loads
	 * without them (docs/design.md, "Cgroup targets"). After the OOM
	 * recorder, which 6.1 refuses with the same EACCES: the cgroup target
	 * was asked for (tracker_opts.without_cgroup_targets), the recorder not. */
	if (err == -EACCES && t->features.has_cgroup_targets && !(opts && opts->without_cgroup_targets)) {
		t->features.has_cgroup_targets = false;
		err = reload(t, opts);
	}
	/* Nor do --stacks' programs cost it its load (a kernel without
	 * page_fault_user or the syscalls' hooks): the run says why. The
	 * huge pages' programs go first (fexit, then rss_stat's): the others
	 * may load without them. */
	while (err && t->stacks_err == 0 && t->stacks_thp != STACKS_THP_NONE) {
		t->stacks_thp = t->stacks_thp == STACKS_THP_FEXIT ? STACKS_THP_RSS : STACKS_THP_NONE;
		err = reload(t, opts);
	}
	if (err && t->stacks_err == 0) {
		t->stacks_err = err;
		err = reload(t, opts);
	}
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
	if (err && t->oom_level > OOM_OFF) {
		t->oom_err = err;
		t->oom_level = OOM_OFF;
		err = reload(t, opts);
	}
	return err;
}

/* The exact path: learn the per-CPU offsets (which also reports whether
 * the counters are percpu at all). 0, or why the path is off. */
static int learn_cpu_offsets(struct tracker_load *t)
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

static int attach(struct tracker_load *t)
{
	struct tracker_bpf *s = t->skel;
	struct bpf_program *later[3] = { s->progs.settle_fork__percpu_sum,
					 s->progs.settle_exec__percpu_sum,
					 s->progs.settle_attach__percpu_sum };
	int err;

	/* Before 6.2 only: on 6.2+ no program runs at a context switch. */
	if (t->features.has_percpu_rss)
		bpf_program__set_autoattach(s->progs.handle_sched_switch, false);
	err = tracker_bpf__attach(s);

	for (int i = 0; i < 3 && !err && t->features.has_percpu_sum; i++) {
		if (!bpf_program__autoload(later[i]))
			continue;       /* left out (leave_out_unneeded) */
		t->settle_links[i] = bpf_program__attach(later[i]);
		if (!t->settle_links[i])
			err = -errno;
	}
	return err;
}

/* The load's ring hands on one tree's changes, or every tree's (tracker_load__drain). */
static int on_sum_event(void *ctx, void *data, size_t size)
{
	struct tracker_load *t = ctx;
	const struct sum_event *e = data;

	if (size < sizeof(*e) || !t->sum_fn ||
	    (e->tree != t->drain_tree && t->drain_tree != TRACKER_EVERY_TREE))
		return 0;
	return t->sum_fn(t->sum_ctx, e);
}

int tracker_load__open(const struct tracker_opts *opts, struct tracker_load **out)
{
	struct tracker_load *t;
	__u64 ns;
	int err;

	*out = NULL;
	t = calloc(1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	ns = monotonic_ns();
	features_probe(&t->features);
	t->unique_err = !opts || !opts->with_unique ? -ENODATA : 0;
	t->oom_level = opts && opts->without_oom ? OOM_OFF :
		       opts && opts->oom_context && oom_context_probe() ? OOM_FULL : OOM_VICTIMS;
	t->oom_err = opts && opts->without_oom ? -ENODATA : t->oom_level == OOM_VICTIMS ? -ENOTSUP : 0;
	if (opts && opts->stacks)
		features_probe_stacks(&t->features);
	t->stacks_err = !opts || !opts->stacks ? -ENODATA :
			features_stacks_lacks(&t->features, NULL, 0) ? -EOPNOTSUPP : 0;
	t->stacks_thp = t->features.has_thp_fexit ? STACKS_THP_FEXIT : STACKS_THP_RSS;
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
	/* A reader that cannot be made leaves the recorder off. */
	if (t->oom_level != OOM_OFF && oom_reader_new(t->skel, &t->oom))
		t->oom_level = OOM_OFF;
	if (t->stacks_err == 0)
		t->stacks_err = stacks_reader_new(t->skel, t->exact_err == 0, &t->stacks);
	if (opts && opts->record_ring_bytes) {
		t->sums = ring_buffer__new(bpf_map__fd(t->skel->maps.sum_events), on_sum_event, t, NULL);
		if (!t->sums) {
			err = -errno;
			goto cleanup;
		}
		/* The load's own tree records unless each tree asks. */
		t->record_per_tree = opts->record_per_tree;
		STORE(t->skel->bss->tree_record[0], !t->record_per_tree);
	}
	*out = t;
	t = NULL;
cleanup:
	tracker_load__destroy(t);
	return err;
}

int tracker_load__drain(struct tracker_load *t, unsigned tree, source_sum_fn fn, void *ctx)
{
	int n;

	if (!t->sums)
		return -EOPNOTSUPP;
	t->sum_fn = fn;
	t->sum_ctx = ctx;
	t->drain_tree = tree;
	n = ring_buffer__consume(t->sums);
	t->sum_fn = NULL;
	return n < 0 ? n : 0;
}

int tracker_load__count_trees(struct tracker_load *t, struct tree_entries per_tree[MAX_TREES])
{
	tree_maps_count(t->skel, !t->features.has_percpu_rss, per_tree);
	return 0;
}

__u64 tracker_load__missed_runs(const struct tracker_load *t)
{
	struct bpf_program *prog;
	__u64 n = 0;

	bpf_object__for_each_program(prog, t->skel->obj) {
		struct bpf_prog_info info = {};
		__u32 len = sizeof(info);
		int fd = bpf_program__fd(prog);

		if (unique_owns_prog(t->skel, prog))
			continue;
		if (fd >= 0 && bpf_obj_get_info_by_fd(fd, &info, &len) == 0)
			n += info.recursion_misses;
	}
	return n;
}

unsigned tracker_load__fault_pages(const struct tracker_load *t, bool *read)
{
	*read = t->features.fault_pages_read;
	return t->features.fault_pages;
}

bool tracker_load__has_percpu_rss(const struct tracker_load *t)
{
	return t->features.has_percpu_rss;
}

const char *tracker_load__teardown_hook(const struct tracker_load *t)
{
	return t->features.has_exit_mmap_tp ? "tp_btf/exit_mmap" : "fentry/exit_mmap";
}

int tracker_load__exact_path(const struct tracker_load *t)
{
	return t->exact_err;
}

int tracker_load__possible_cpus(const struct tracker_load *t)
{
	return t->features.possible_cpus;
}

void tracker_load__startup(const struct tracker_load *t, struct tracker_startup *out)
{
	*out = t->startup;
}

int tracker_load__unique_err(const struct tracker_load *t)
{
	return t->unique_err;
}

bool tracker_load__has_ring(const struct tracker_load *t)
{
	return t->sums != NULL;
}

bool tracker_load__record_per_tree(const struct tracker_load *t)
{
	return t->record_per_tree;
}

struct tracker_bpf *tracker_load__skel(const struct tracker_load *t)
{
	return t->skel;
}

__u64 tracker_load__cleared_at(const struct tracker_load *t, unsigned tree)
{
	return t->cleared_at[tree & (MAX_TREES - 1)];
}

void tracker_load__set_cleared_at(struct tracker_load *t, unsigned tree, __u64 tried)
{
	t->cleared_at[tree & (MAX_TREES - 1)] = tried;
}

void tracker_load__destroy(struct tracker_load *t)
{
	if (!t)
		return;
	for (int i = 0; i < 3; i++)
		bpf_link__destroy(t->settle_links[i]);
	ring_buffer__free(t->sums);
	oom_reader_free(t->oom);
	stacks_reader_free(t->stacks);
	tracker_bpf__destroy(t->skel);
	free(t);
}

struct oom_reader *tracker_load__oom(const struct tracker_load *l, int *level, int *err)
{
	*level = l->oom_level;
	*err = l->oom_err;
	return l->oom;
}

struct stacks_reader *tracker_load__stacks(const struct tracker_load *l, int *err)
{
	*err = l->stacks_err;
	return l->stacks;
}

int tracker_load__stacks_lacks(const struct tracker_load *l, char *buf, size_t len)
{
	return features_stacks_lacks(&l->features, buf, len);
}
