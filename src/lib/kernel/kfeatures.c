// SPDX-License-Identifier: MIT
/* Kernel feature probes (kfeatures.h): one place, one name per feature. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "kfeatures.h"

/* Each probe is told the features probed before it (KFEATURES' order). */
static bool assumed(const struct tracker_features *f)
{
	(void)f;
	return true;
}

/*
 * Cgroup targets before 5.12 (no BPF atomics with a result: plain
 * fallbacks): they load on 5.10, but in the kernel-matrix VM a fork tree's
 * 96 MiB once came out as 0.06 MiB of growth with a 16 MiB bound (1 run of
 * 4, t_cgroup_v2): a wrong figure, so they are left out there and a target
 * is refused with the reason.
 */
static bool probe_cgroup_targets(const struct tracker_features *f)
{
	return f->has_fetch_atomics;
}

static bool after_load(const struct tracker_features *f)
{
	(void)f;
	return false;
}

static bool apart(const struct tracker_features *f)
{
	(void)f;
	return false;
}

/* Load the smallest program with an atomic fetch-add:
 * r1 = 0; *(u64 *)(r10 - 8) = r1; r1 = 1; r1 = fetch_add(*(u64 *)(r10 - 8), r1). */
static bool probe_fetch_atomics(const struct tracker_features *f)
{
	const struct bpf_insn insns[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_1, .imm = 0 },
		{ .code = BPF_STX | BPF_DW | BPF_MEM, .dst_reg = BPF_REG_10, .src_reg = BPF_REG_1, .off = -8 },
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_1, .imm = 1 },
		{ .code = BPF_STX | BPF_DW | BPF_ATOMIC, .dst_reg = BPF_REG_10, .src_reg = BPF_REG_1,
		  .off = -8, .imm = BPF_ADD | BPF_FETCH },
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	int fd = bpf_prog_load(BPF_PROG_TYPE_SOCKET_FILTER, NULL, "GPL", insns,
			       sizeof(insns) / sizeof(insns[0]), NULL);

	(void)f;

	if (fd < 0)
		return false;
	close(fd);
	return true;
}

static bool probe_percpu_sum(const struct tracker_features *f)
{
	return f->has_fetch_atomics &&
	       libbpf_probe_bpf_prog_type(BPF_PROG_TYPE_SYSCALL, NULL) == 1 &&
	       libbpf_probe_bpf_helper(BPF_PROG_TYPE_SYSCALL, BPF_FUNC_loop, NULL) == 1 &&
	       libbpf_probe_bpf_helper(BPF_PROG_TYPE_SYSCALL, BPF_FUNC_map_lookup_percpu_elem, NULL) == 1 &&
	       libbpf_probe_bpf_helper(BPF_PROG_TYPE_SYSCALL, BPF_FUNC_probe_read_kernel, NULL) == 1;
}

/* fault_around_bytes in pages, from debugfs; 0 if it cannot be read. */
static unsigned probe_fault_pages(void)
{
	char buf[32], *end;
	long page = sysconf(_SC_PAGESIZE);
	unsigned long long v;
	ssize_t n;
	int fd = open("/sys/kernel/debug/fault_around_bytes", O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0 || page <= 0)
		return 0;
	buf[n] = '\0';
	errno = 0;
	v = strtoull(buf, &end, 10);
	/* The kernel takes at most a page table's worth (PTRS_PER_PTE). */
	if (errno || end == buf || (*end && *end != '\n') || v > (64ULL << 20))
		return 0;
	return v < (unsigned long long)page ? 1 : (unsigned)(v / (unsigned long long)page);
}

/*
 * Whether the kernel has the raw tracepoint NAME, asked of its table of
 * them without attaching anything: BPF_RAW_TRACEPOINT_OPEN looks NAME up
 * first (-ENOENT when absent), and then, for a writable raw tracepoint
 * program, refuses one that reads more of the tracepoint's buffer than the
 * tracepoint makes writable (-EINVAL: none on a tracepoint not declared
 * writable) before it registers the program ("bpf: add writable context
 * for raw tracepoints", 5.2). The program reads one byte of that buffer:
 * r2 = *(u64 *)(r1 + 0); r0 = *(u8 *)(r2 + 0); r0 = 0; exit.
 * 1: it is there; 0: it is not; -errno: cannot tell (no CAP_BPF, ...).
 */
static int raw_tp_exists(const char *name)
{
	const struct bpf_insn insns[] = {
		{ .code = BPF_LDX | BPF_DW | BPF_MEM, .dst_reg = BPF_REG_2, .src_reg = BPF_REG_1 },
		{ .code = BPF_LDX | BPF_B | BPF_MEM, .dst_reg = BPF_REG_0, .src_reg = BPF_REG_2 },
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	int prog = bpf_prog_load(BPF_PROG_TYPE_RAW_TRACEPOINT_WRITABLE, NULL, "GPL", insns,
				 sizeof(insns) / sizeof(insns[0]), NULL);
	int fd, err;

	if (prog < 0)
		return -errno;
	fd = bpf_raw_tracepoint_open(name, prog);
	err = fd < 0 ? -errno : 0;
	if (fd >= 0)
		close(fd);      /* a kernel that attached it after all: it is there */
	close(prog);
	if (fd >= 0 || err == -EINVAL)
		return 1;
	return err == -ENOENT ? 0 : err;
}

/* Tracefs, where it is mounted and ours to read; else the kernel's raw
 * tracepoint table; true (assumed) when neither can tell. */
static bool probe_memcg_stat_tp(struct tracker_features *f)
{
	struct stat st;
	int seen;

	if (stat("/sys/kernel/tracing/events", &st) == 0) {
		seen = access("/sys/kernel/tracing/events/memcg/mod_memcg_lruvec_state", F_OK) == 0;
		if (seen || errno == ENOENT) {
			f->memcg_stat_tp_seen = seen;
			return seen;
		}
	}
	seen = raw_tp_exists("mod_memcg_lruvec_state");
	f->memcg_stat_tp_seen = seen == 1;
	return seen != 0;
}

void features_probe(struct tracker_features *f)
{
	memset(f, 0, sizeof(*f));
#define KFEATURE_PROBE(name, probe, bpf) f->has_##name = probe(f);
	KFEATURES(KFEATURE_PROBE)
#undef KFEATURE_PROBE
	f->has_memcg_stat_tp = probe_memcg_stat_tp(f);
	f->fault_pages = probe_fault_pages();
	f->fault_pages_read = f->fault_pages > 0;
	if (!f->fault_pages)
		f->fault_pages = (unsigned)(65536 / sysconf(_SC_PAGESIZE));
	f->possible_cpus = libbpf_num_possible_cpus();
	if (f->possible_cpus < 1)
		f->possible_cpus = 1;
}

/* A helper of raw tracepoint programs, where bpf_find_vma and
 * bpf_get_current_task_btf are given as in tp_btf ones (both in the
 * kernel's bpf_tracing_func_proto): true unless the verifier names it
 * unknown (libbpf_probe_bpf_helper), so true where it cannot tell. */
static bool helper_exists(enum bpf_func_id id)
{
	return libbpf_probe_bpf_helper(BPF_PROG_TYPE_RAW_TRACEPOINT, id, NULL) != 0;
}

/*
 * Whether an fexit program on the kernel function NAME loads: the
 * function's BTF id (libbpf parses the kernel's BTF for it) and a program
 * of two instructions, r0 = 0; exit. A kernel without ftrace's direct
 * calls, or one whose policy refuses fexit (EPERM, as this machine's),
 * refuses it; the function inlined has no id. Loaded, not attached: an
 * attach that fails after all is stacks.c's to report.
 */
static bool fexit_loads(const char *name)
{
	const struct bpf_insn insns[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	LIBBPF_OPTS(bpf_prog_load_opts, opts, .expected_attach_type = BPF_TRACE_FEXIT);
	int id = libbpf_find_vmlinux_btf_id(name, BPF_TRACE_FEXIT), fd;

	if (id <= 0)
		return false;
	opts.attach_btf_id = (__u32)id;
	fd = bpf_prog_load(BPF_PROG_TYPE_TRACING, NULL, "GPL", insns, sizeof(insns) / sizeof(insns[0]), &opts);
	if (fd < 0)
		return false;
	close(fd);
	return true;
}

void features_probe_stacks(struct tracker_features *f)
{
	int seen = raw_tp_exists("exit_mmap");

	f->has_page_fault_tp = raw_tp_exists("page_fault_user") != 0;
	f->has_thp_fexit = f->has_page_fault_tp && fexit_loads("do_huge_pmd_anonymous_page");
	f->has_find_vma = helper_exists(BPF_FUNC_find_vma);
	f->has_current_task_btf = helper_exists(BPF_FUNC_get_current_task_btf);
	if (seen >= 0)
		f->has_exit_mmap_tp = seen;     /* else still assumed: the load decides */
}

int features_stacks_lacks(const struct tracker_features *f, char *buf, size_t len)
{
	const struct {
		bool has;
		const char *what;
	} needs[] = {
		{ f->has_page_fault_tp, "the exceptions:page_fault_user tracepoint (x86's)" },
		{ f->has_current_task_btf, "bpf_get_current_task_btf (5.11)" },
		{ f->has_find_vma, "bpf_find_vma (5.17)" },
		{ f->has_exit_mmap_tp, "the mmap:exit_mmap tracepoint (6.1)" },
	};
	size_t pos = 0;
	int n = 0;

	if (len)
		buf[0] = '\0';
	for (size_t i = 0; i < sizeof(needs) / sizeof(needs[0]); i++) {
		if (needs[i].has)
			continue;
		/* Past the end of buf: only counted (snprintf of NULL, 0). */
		pos += (size_t)snprintf(pos < len ? buf + pos : NULL, pos < len ? len - pos : 0, "%s%s",
					n ? ", " : "", needs[i].what);
		n++;
	}
	return n;
}

int features_lookup(const struct tracker_features *f, const char *name, bool *on)
{
	static const struct {
		const char *name;
		size_t offset;
	} table[] = {
#define KFEATURE_NAME(name, probe, bpf) { #name, offsetof(struct tracker_features, has_##name) },
		KFEATURES(KFEATURE_NAME)
#undef KFEATURE_NAME
	};

	for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++) {
		if (strcmp(table[i].name, name) == 0) {
			*on = *(const bool *)((const char *)f + table[i].offset);
			return 0;
		}
	}
	return -ENOENT;
}
