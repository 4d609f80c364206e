/* SPDX-License-Identifier: MIT */
/*
 * A tree whose members are the processes of a cgroup and its descendants
 * (--cgroup, --container, --unit; docs/design.md, "Cgroup targets"),
 * shared by the kernel side (tracker_cgroup.bpf.h) and userspace
 * (src/lib/kernel/cgroup_target.c). Never include vmlinux.h here.
 */
#ifndef PEAKBPF_CGROUP_TARGET_H
#define PEAKBPF_CGROUP_TARGET_H

/* Which cgroup of a process is compared: where its memory is charged. */
enum cg_hier {
	CG_HIER_V2 = 0,         /* the unified hierarchy (css_set.dfl_cgrp) */
	CG_HIER_V1_MEMORY = 1,  /* v1: the memory controller's hierarchy */
};

/* The deepest target level accepted (the kernel allows any; a limit keeps
 * the ancestor read a plain bounded index). */
#define CG_MAX_LEVEL 255

/*
 * One per tree, in .bss (cg_targets[tree]): a process is the tree's when
 * its thread group leader's cgroup in hier has, at level, the ancestor
 * (itself included) whose kernfs id is id, and not except_id at level + 1.
 * Userspace writes the rest first and id last; id 0: no target.
 */
struct cg_target {
	__u64 id;               /* kernfs node id: the directory's inode number */
	__u32 level;            /* 0: the hierarchy's root */
	__u32 hier;             /* enum cg_hier */
	/* A child of the target whose processes are not the target's (podman's
	 * conmon, in PARENT/conmon beside the container's PARENT/libpod-ID);
	 * 0: none. Written before id. */
	__u64 except_id;
};

/* What membership did, per tree (never reset while the tree lives). */
struct cg_stats {
	__u64 forked_in;        /* processes entered at their fork (born in the target, or
				   clone3 into it; counted for every tree) */
	__u64 moved_in;         /* processes that entered it by a move */
	__u64 moved_out;        /* processes that left it (their mm left the sum) */
	__u64 walk_in;          /* processes the start-up walk found inside */
};

#endif
