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
#include "tracker_internal.h"
#include "host.h"
#include "unique_api.h"
#include "oom_api.h"
#include "cgsum_api.h"
#include "tracker.skel.h"

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
	oom_prepare(s, (enum oom_level)t->oom_level);
	cgsum_prepare(s, opts ? opts->cgsum : NULL);
	if (opts && opts->cgsum)
		snprintf(t->cgsum_mount, sizeof(t->cgsum_mount), "%s", opts->cgsum->mount);
	err = unique_prepare(s, t->unique_err == 0, t->features.has_fetch_atomics);
	if (err && t->unique_err == 0)
		t->unique_err = err;
	err = 0;
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
 * in is retried without it (unique.c chose its hook from the BTF). */
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
	/* Nor does the OOM recorder: without the kill's context (its
	 * function may be inlined), then without it at all (oom_api.h). */
	while (err && t->oom_level > OOM_OFF) {
		t->oom_err = err;
		t->oom_level--;
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

/* The load's record ring hands on one tree's changes (tracker_drain_sums). */
static int on_sum_event(void *ctx, void *data, size_t size)
{
	struct tracker *t = ctx;
	const struct sum_event *e = data;

	if (size < sizeof(*e) || !t->sum_fn ||
	    (e->tree != t->drain_tree && t->drain_tree != TRACKER_EVERY_TREE))
		return 0;
	return t->sum_fn(t->sum_ctx, e);
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
	t->unique_err = !opts || !opts->with_unique ? -ENODATA : 0;
	t->oom_level = opts && opts->without_oom ? OOM_OFF : OOM_FULL;
	t->oom_err = opts && opts->without_oom ? -ENODATA : 0;
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
	oom_start(t);           /* a reader that fails leaves the recorder off */
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
	tracker_close(t);
	return err;
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

int tracker_possible_cpus(const struct tracker *t)
{
	return t->features.possible_cpus;
}

void tracker_startup(const struct tracker *t, struct tracker_startup *out)
{
	*out = t->startup;
}

unsigned tracker_tree(const struct tracker *t)
{
	return t->tree;
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
	oom_stop(t);
	cgsum_stop(t);
	tracker_bpf__destroy(t->skel);
	free(t);
}
