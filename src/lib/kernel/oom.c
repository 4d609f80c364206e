// SPDX-License-Identifier: MIT
/* The OOM flight recorder's kernel part (oom_api.h): which programs load,
 * the ring's reader. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "oom_api.h"
#include "tracker_internal.h"
#include "tracker.skel.h"

void oom_prepare(struct tracker_bpf *skel, enum oom_level level)
{
	bpf_program__set_autoload(skel->progs.oom_victim, level >= OOM_VICTIMS);
	bpf_program__set_autoload(skel->progs.oom_kill, level >= OOM_FULL);
	bpf_program__set_autoload(skel->progs.oom_kill_done, level >= OOM_FULL);
}

static struct tracker *load_of(struct tracker *t)
{
	return t->base ? t->base : t;
}

static int on_oom_event(void *ctx, void *data, size_t size)
{
	struct tracker *t = ctx;

	if (size < sizeof(struct oom_event) || !t->oom_fn)
		return 0;
	t->oom_handed++;
	return t->oom_fn(t->oom_ctx, data);
}

int oom_start(struct tracker *t)
{
	if (t->oom_level == OOM_OFF)
		return 0;
	t->oom_ring = ring_buffer__new(bpf_map__fd(t->skel->maps.oom_events), on_oom_event, t, NULL);
	if (!t->oom_ring) {
		t->oom_err = -errno;
		t->oom_level = OOM_OFF;
		return t->oom_err;
	}
	return 0;
}

void oom_stop(struct tracker *t)
{
	ring_buffer__free(t->oom_ring);
	t->oom_ring = NULL;
}

enum oom_level oom_loaded(const struct tracker *t)
{
	return (enum oom_level)(t->base ? t->base : t)->oom_level;
}

const char *oom_why(const struct tracker *t)
{
	const struct tracker *l = t->base ? t->base : t;

	if (l->oom_level == OOM_FULL)
		return NULL;
	if (l->oom_err == -ENODATA)
		return "the BPF programs were loaded without the OOM recorder";
	if (l->oom_level == OOM_VICTIMS)
		return "oom_kill_process cannot be attached here: victims are recorded without the "
		       "OOMing cgroup and its limit";
	return "the kernel refused the OOM recorder's programs (oom:mark_victim)";
}

int oom_drain(struct tracker *t, oom_fn fn, void *ctx)
{
	struct tracker *l = load_of(t);
	int err;

	if (!l->oom_ring)
		return -EOPNOTSUPP;
	l->oom_fn = fn;
	l->oom_ctx = ctx;
	l->oom_handed = 0;
	err = ring_buffer__consume(l->oom_ring);
	l->oom_fn = NULL;
	if (err < 0)
		return err;
	return (int)l->oom_handed;
}

void oom_counts(const struct tracker *t, __u64 *victims, __u64 *drops)
{
	const struct tracker *l = t->base ? t->base : t;

	*victims = LOAD(l->skel->bss->oom_victims);
	*drops = LOAD(l->skel->bss->oom_ring_drops);
}
