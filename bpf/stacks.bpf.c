// SPDX-License-Identifier: GPL-2.0
/*
 * --stacks' kernel part (docs/stacks.md): for each user page fault of a
 * tracked process, the address, its VMA's kind and the user stack, walked
 * by frame pointers; and the calls that take pages out of an address space
 * (munmap, madvise, brk, mremap, mmap MAP_FIXED: at their return), forks, execs and mm
 * teardowns, and the huge pages user write faults mapped (fexit, where the
 * kernel allows it), all into one ring that userspace replays into a page shadow.
 *
 * Every program is off by default ("?"): stacks.c turns them on, and
 * creates the ring, only when --stacks is asked, so the tracker's load
 * and its per-event cost are unchanged without it.
 *
 * Filter first: one lookup in the tracker's process map (the same weak
 * definition as bpf/oom.bpf.c's, merged by the linker). The walk is
 * bounded (STACK_MAX_FRAMES) and guarded: it stops when the frame pointer
 * leaves [the last frame, sp + 8 MiB) or is not 8-byte aligned, so it
 * never reads past the stack (bpf_get_stackid's callchain read, which
 * does, costs 5-7 us a fault here; this walk 0.3-1 us: issue 35's notes).
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "tracker.h"
#include "stacks.h"

char LICENSE[] SEC("license") = "GPL";

#define VM_WRITE 0x00000002UL           /* include/linux/mm.h */
#define VM_SHARED 0x00000008UL
#define VM_HUGEPAGE 0x20000000UL
#define MAP_FIXED 0x10                  /* include/uapi/asm-generic/mman-common.h */
#define CLONE_VM 0x00000100

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, STACKS_RING_BYTES);
} stack_events SEC(".maps");

/* The mms the ring has named (entered at exec and fork), so that the
 * teardown of only these is sent. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, DEFAULT_MAX_TRACKED);
	__type(key, __u64);
	__type(value, __u32);
} stack_mms SEC(".maps");

/* The tracker's (tracker_maps.bpf.h): its mm filter, as cgsum.bpf.c reads it. */
extern __u32 mm_filter[MM_FILTER_SLOTS];

/* The tracker's process map, merged by the linker (tracker_shared_maps.bpf.h). */
#define SHARED_MAP __weak
#include "tracker_shared_maps.bpf.h"

/*
 * Each mm's last VMA looked up (bpf_find_vma takes the mmap lock and walks
 * the maple tree: about 3 us a fault here): a fault inside it reuses its
 * kind. A call that can change what an address maps (munmap, mremap,
 * mmap MAP_FIXED, mprotect, brk, shmdt) drops the mm's entry at its
 * return; a fault racing with such a call in another thread may see the
 * old kind (docs/stacks.md).
 */
struct vma_seen {
	__u64 start, end;
	__u32 kind;
	__u32 pad;
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, DEFAULT_MAX_TRACKED);
	__type(key, __u64);             /* struct mm_struct * */
	__type(value, struct vma_seen);
} stack_vmas SEC(".maps");

/* Each tracked mm's anon pages as the tracker last applied them
 * (mm_states' pages[RSS_ANON]), so that stk_rss knows one change's size. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, DEFAULT_MAX_TRACKED);
	__type(key, __u64);             /* struct mm_struct * */
	__type(value, __s64);
} stack_anon SEC(".maps");

__u64 stk_drops;                /* events the ring had no room for */
__u64 stk_vma_busy;             /* faults whose VMA could not be looked up */

static __always_inline struct task_state *tracked_current(__u32 *tgid)
{
	*tgid = (__u32)(bpf_get_current_pid_tgid() >> 32);
	return bpf_map_lookup_elem(&task_states, tgid);
}

static __always_inline void fill_head(struct stack_ev *h, __u32 kind, __u32 tgid, __u64 mm, __u32 tree)
{
	h->kind = kind;
	h->tgid = tgid;
	h->ns = bpf_ktime_get_ns();
	h->mm = mm;
	h->tree = tree;
	h->tid = 0;
}

static long vma_kind(struct task_struct *task, struct vm_area_struct *vma, void *ctx)
{
	struct vma_seen *out = ctx;
	unsigned long flags = vma->vm_flags;

	out->kind = STK_VMA_FOUND | (vma->vm_file ? STK_VMA_FILE : 0) | (flags & VM_SHARED ? STK_VMA_SHARED : 0) |
		    (flags & VM_WRITE ? STK_VMA_WRITE : 0) | (flags & VM_HUGEPAGE ? STK_VMA_HUGE : 0);
	out->start = vma->vm_start;
	out->end = vma->vm_end;
	return 0;
}

/* The kind of the VMA at address: the mm's last one if it holds it, else
 * looked up (and kept); 0 when it cannot be (the mmap lock is taken). */
static __always_inline __u32 vma_at(struct task_struct *task, __u64 mm, unsigned long address)
{
	struct vma_seen *seen = bpf_map_lookup_elem(&stack_vmas, &mm), now = {};

	if (seen && address >= seen->start && address < seen->end)
		return seen->kind;
	if (bpf_find_vma(task, address, vma_kind, &now, 0)) {
		__sync_fetch_and_add(&stk_vma_busy, 1);
		return 0;
	}
	bpf_map_update_elem(&stack_vmas, &mm, &now, BPF_ANY);
	return now.kind;
}

/* The user stack by frame pointers, into e->frames; the fault's ip first. */
static __always_inline void walk_user_stack(struct stack_fault *e, struct pt_regs *regs)
{
	__u64 sp = regs->sp, fp = regs->bp, lo = sp, hi = sp + STACK_SPAN_BYTES;
	__u64 pair[2];
	__u32 n = 1;

	e->frames[0] = regs->ip;
	if (bpf_probe_read_user(&e->sp_word, sizeof(e->sp_word), (void *)sp))
		e->sp_word = 0;
	for (int i = 1; i < STACK_MAX_FRAMES; i++) {
		if (fp < lo || fp >= hi || (fp & 7))
			break;
		if (bpf_probe_read_user(pair, sizeof(pair), (void *)fp))
			break;
		if (!pair[1])
			break;
		e->frames[i] = pair[1];        /* the return address above the saved fp */
		n = i + 1;
		lo = fp + 16;
		fp = pair[0];
	}
	e->nframes = n;
}

SEC("?tp_btf/page_fault_user")
int BPF_PROG(stk_fault, unsigned long address, struct pt_regs *regs, unsigned long error_code)
{
	struct task_struct *task;
	struct stack_fault *e;
	struct task_state *ts;
	__u32 tgid;

	ts = tracked_current(&tgid);
	if (!ts)
		return 0;       /* not ours: the common case, first */
	e = bpf_ringbuf_reserve(&stack_events, sizeof(*e), 0);
	if (!e) {
		__sync_fetch_and_add(&stk_drops, 1);
		return 0;
	}
	task = bpf_get_current_task_btf();
	fill_head(&e->h, STK_FAULT, tgid, (__u64)task->mm, ts->tree);
	e->h.tid = (__u32)bpf_get_current_pid_tgid();
	e->h.a = e->h.b = e->h.c = 0;
	e->h.ret = 0;
	e->addr = address;
	e->error_code = (__u32)error_code;
	e->vma = vma_at(task, (__u64)task->mm, address);
	e->pad = 0;
	walk_user_stack(e, regs);
	bpf_ringbuf_submit(e, 0);
	return 0;
}

static __always_inline void send_tid(__u32 kind, __u32 tgid, __u64 mm, __u32 tree, __u64 a, __u64 b, __u64 c,
				     __s64 ret, __u32 tid)
{
	struct stack_ev *e = bpf_ringbuf_reserve(&stack_events, sizeof(*e), 0);

	if (!e) {
		__sync_fetch_and_add(&stk_drops, 1);
		return;
	}
	fill_head(e, kind, tgid, mm, tree);
	e->tid = tid;
	e->a = a;
	e->b = b;
	e->c = c;
	e->ret = ret;
	bpf_ringbuf_submit(e, 0);
}

static __always_inline void send(__u32 kind, __u32 tgid, __u64 mm, __u32 tree, __u64 a, __u64 b, __u64 c,
				 __s64 ret)
{
	send_tid(kind, tgid, mm, tree, a, b, c, ret, 0);
}

#define PMD_PSE 0x80ULL                 /* _PAGE_PSE: the PMD maps a huge page (x86) */

/*
 * A transparent huge page's fault (docs/stacks.md): at the return of
 * do_huge_pmd_anonymous_page (mm/huge_memory.c), which the fault above
 * entered in the same thread. It adds HPAGE_PMD_NR pages to MM_ANONPAGES
 * only on its path that allocates a huge page and maps it into an empty
 * PMD, and then returns 0. A write fault always takes that path; a read
 * fault maps the huge zero page (not in RSS: never sent) unless
 * use_zero_page is off (then its pages stay in the anon bucket). Also 0,
 * without mapping: the PMD was filled meanwhile (by another thread's huge
 * page, whose own event places it; or by a page table: not PSE, not
 * sent), or userfaultfd handled the fault. So: a user write fault that
 * returned 0 and left a PSE PMD. Faults from the kernel (copy_to_user,
 * GUP) have no FAULT_FLAG_USER and no page_fault_user event: not sent.
 * O(1): the process map, two fields, one read of the PMD. Userspace
 * places the range's pages not yet placed with the stack of this
 * thread's fault (stacks_shadow.c).
 */
SEC("?fexit/do_huge_pmd_anonymous_page")
int BPF_PROG(stk_thp, struct vm_fault *vmf, vm_fault_t ret)
{
	__u64 want = bpf_core_enum_value(enum fault_flag, FAULT_FLAG_WRITE) |
		     bpf_core_enum_value(enum fault_flag, FAULT_FLAG_USER);
	struct task_struct *task;
	struct task_state *ts;
	unsigned long address;
	__u64 pmd = 0;
	__u32 tgid;

	ts = tracked_current(&tgid);
	if (!ts)
		return 0;
	if (ret || (vmf->flags & want) != want)
		return 0;
	if (bpf_probe_read_kernel(&pmd, sizeof(pmd), vmf->pmd) || !(pmd & PMD_PSE))
		return 0;
	address = vmf->address;
	task = bpf_get_current_task_btf();
	send_tid(STK_THP, tgid, (__u64)task->mm, ts->tree, address & ~(STK_THP_BYTES - 1), STK_THP_BYTES,
		 address, 0, (__u32)bpf_get_current_pid_tgid());
	return 0;
}

/* x86-64's syscall numbers (arch/x86/entry/syscalls/syscall_64.tbl). */
#define NR_mmap 9
#define NR_mprotect 10
#define NR_munmap 11
#define NR_brk 12
#define NR_mremap 25
#define NR_madvise 28
#define NR_shmdt 67

/*
 * A syscall's return, on every syscall of the machine (raw_syscalls: no
 * tracefs, no fentry, which some kernels lack): the number first, a
 * register compare, then the process. At the return, the user's argument
 * registers in pt_regs are still the arguments (di, si, dx, r10, r8), ax
 * the result.
 */
SEC("?tp_btf/sys_exit")
int BPF_PROG(stk_sys_exit, struct pt_regs *regs, long ret)
{
	long nr = regs->orig_ax;
	struct task_struct *task;
	struct task_state *ts;
	__u32 kind, tgid;
	__u64 mm;

	switch (nr) {
	case NR_mprotect:
	case NR_shmdt:
		kind = 0;       /* no event: the VMA seen goes (below) */
		break;
	case NR_munmap:
		kind = STK_MUNMAP;
		break;
	case NR_madvise:
		kind = STK_MADVISE;
		break;
	case NR_brk:
		kind = STK_BRK;
		break;
	case NR_mremap:
		kind = STK_MREMAP;
		break;
	case NR_mmap:
		if (!(regs->r10 & MAP_FIXED))
			return 0;
		kind = STK_MMAP_FIXED;
		break;
	default:
		return 0;
	}
	ts = tracked_current(&tgid);
	if (!ts)
		return 0;
	task = bpf_get_current_task_btf();
	mm = (__u64)task->mm;
	if (kind != STK_MADVISE)
		bpf_map_delete_elem(&stack_vmas, &mm);  /* what an address maps may have changed */
	if (kind)
		send(kind, tgid, mm, ts->tree, regs->di, regs->si, regs->dx, ret);
	return 0;
}

static __always_inline void name_mm(__u64 mm)
{
	__u32 one = 1;

	bpf_map_update_elem(&stack_mms, &mm, &one, BPF_ANY);
}

/* After the tracker's handle_fork (attached first), which entered the child. */
SEC("?tp_btf/sched_process_fork")
int BPF_PROG(stk_fork, struct task_struct *parent, struct task_struct *child)
{
	__u32 ctgid = child->tgid;
	struct task_state *ts;
	__u64 pmm, cmm;

	if ((__u32)parent->tgid == ctgid)
		return 0;       /* a thread */
	ts = bpf_map_lookup_elem(&task_states, &ctgid);
	if (!ts)
		return 0;
	pmm = (__u64)parent->mm;
	cmm = (__u64)child->mm;
	if (!cmm || cmm == pmm)
		return 0;       /* vfork, CLONE_VM: the parent's mm */
	name_mm(cmm);
	send(STK_FORK, ctgid, cmm, ts->tree, pmm, 0, 0, 0);
	return 0;
}

SEC("?tp_btf/sched_process_exec")
int BPF_PROG(stk_exec, struct task_struct *p, pid_t old_pid, struct linux_binprm *bprm)
{
	__u32 tgid = p->tgid;
	struct task_state *ts = bpf_map_lookup_elem(&task_states, &tgid);
	__u64 mm = (__u64)p->mm;

	if (!ts || !mm)
		return 0;
	name_mm(mm);
	send(STK_EXEC, tgid, mm, ts->tree, 0, 0, 0, 0);
	return 0;
}

/* Every mm's teardown on the machine: one hash lookup; only those named. */
SEC("?tp_btf/exit_mmap")
int BPF_PROG(stk_mm_gone, struct mm_struct *mm)
{
	__u64 key = (__u64)mm;

	if (bpf_map_delete_elem(&stack_mms, &key))
		return 0;
	bpf_map_delete_elem(&stack_vmas, &key);
	bpf_map_delete_elem(&stack_anon, &key);
	send(STK_MM_GONE, 0, key, 0, 0, 0, 0, 0);
	return 0;
}

/*
 * Where stk_thp cannot run (a kernel that refuses fexit) and each change of
 * a counter is exact (6.2+, the tracker's per-CPU path): an anon change of
 * 2 to 512 pages at once in a tracked thread that is in an exception (its
 * user registers' orig_ax is -1 in an exception's handler, the number in a
 * syscall's: so not read() into a buffer) is a fault that mapped a large
 * folio (a huge page, 512; a smaller THP size, a power of two). Runs
 * after the tracker's handle_rss_stat (attached later, by the reader),
 * which has applied the change to mm_states. Sent with the user ip: the
 * shadow pairs it with that thread's fault at that ip, whose address
 * gives the range. O(1): the tracker's filter first, then two hash
 * lookups for a tracked mm (three and the event for a bulk change).
 */
SEC("?tp_btf/rss_stat")
int BPF_PROG(stk_rss, struct mm_struct *mm, int member)
{
	__u64 key = (__u64)mm;
	struct task_struct *task;
	struct task_state *ts;
	struct mm_state *ms;
	struct pt_regs *regs;
	__s64 *seen, now, d;
	__u32 tgid, low;

	if (member != MM_ANONPAGES)
		return 0;
	/* The tracker's filter slot (tracker_tree.bpf.h, mm_filter_slot: a
	 * 32-bit copy is the one operation the verifier allows on the pointer). */
	asm volatile("%0 = %1" : "=w"(low) : "w"((__u32)(__u64)mm));
	if (!*(volatile __u32 *)&mm_filter[mm_filter_hash(low)])
		return 0;       /* not ours: the common case, first */
	ms = bpf_map_lookup_elem(&mm_states, &key);
	if (!ms)
		return 0;
	/* Every change of the mm moves what was seen, whoever made it (a
	 * fork's copy, reclaim, khugepaged), so that d is this change's. */
	now = ms->pages[RSS_ANON];
	seen = bpf_map_lookup_elem(&stack_anon, &key);
	if (!seen) {
		bpf_map_update_elem(&stack_anon, &key, &now, BPF_ANY);
		return 0;
	}
	d = now - *seen;
	*seen = now;
	if (d < 2 || d > (__s64)(STK_THP_BYTES >> 12))
		return 0;
	task = bpf_get_current_task_btf();
	if ((__u64)task->mm != key)
		return 0;
	ts = tracked_current(&tgid);
	if (!ts)
		return 0;
	regs = (struct pt_regs *)bpf_task_pt_regs(task);
	if ((long)BPF_CORE_READ(regs, orig_ax) != -1)
		return 0;       /* in a syscall: a kernel-mode fault, GUP, MADV_COLLAPSE */
	send_tid(STK_ANON_BULK, tgid, key, ts->tree, 0, (__u64)d << 12, BPF_CORE_READ(regs, ip), 0,
		 (__u32)bpf_get_current_pid_tgid());
	return 0;
}
