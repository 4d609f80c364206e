// SPDX-License-Identifier: MIT
/* The OOM flight recorder's kernel part (oom_api.h): which programs load,
 * the ring's reader. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "fileutil.h"
#include "mapped_internal.h"
#include "oom_api.h"
#include "tracker.skel.h"

struct oom_reader {
	struct tracker_bpf *skel;       /* the load's */
	struct ring_buffer *ring;
	oom_fn fn;              /* a drain's, while it runs */
	void *ctx;
	__u64 handed;
};

void oom_prepare(struct tracker_bpf *skel, enum oom_level level)
{
	bpf_program__set_autoload(skel->progs.oom_victim, level >= OOM_VICTIMS);
	bpf_program__set_autoload(skel->progs.oom_kill, level >= OOM_FULL);
	bpf_program__set_autoload(skel->progs.oom_kill_done, level >= OOM_FULL);
}

/* Whether the kernel's BTF names sym: a scan of its bytes, no parse. */
static bool btf_names(const char *btf, size_t len, const char *sym)
{
	char key[64];
	int n = snprintf(key, sizeof(key), "%c%s%c", '\0', sym, '\0');

	return n > 0 && (size_t)n < sizeof(key) && memmem(btf, len, key, (size_t)n);
}

bool oom_context_probe(void)
{
	char *btf = NULL;
	size_t len = 0;
	bool on;

	if (read_text_file("/sys/kernel/btf/vmlinux", &btf, &len))
		return false;
	/* fentry needs ftrace's direct calls (a kernel without
	 * CONFIG_FUNCTION_TRACER has none: the load would be refused, EPERM),
	 * and the function out of line. */
	on = btf_names(btf, len, "register_ftrace_direct") && btf_names(btf, len, "oom_kill_process");
	free(btf);
	return on;
}

static int on_oom_event(void *ctx, void *data, size_t size)
{
	struct oom_reader *r = ctx;

	if (size < sizeof(struct oom_event) || !r->fn)
		return 0;
	r->handed++;
	return r->fn(r->ctx, data);
}

int oom_reader_new(struct tracker_bpf *skel, struct oom_reader **out)
{
	struct oom_reader *r = calloc(1, sizeof(*r));
	int err = 0;

	*out = NULL;
	if (!r)
		return -ENOMEM;
	r->skel = skel;
	r->ring = ring_buffer__new(bpf_map__fd(skel->maps.oom_events), on_oom_event, r, NULL);
	if (!r->ring) {
		err = -errno;
		free(r);
		return err;
	}
	*out = r;
	return 0;
}

int oom_reader_fd(const struct oom_reader *r)
{
	return ring_buffer__epoll_fd(r->ring);
}

void oom_reader_free(struct oom_reader *r)
{
	if (!r)
		return;
	ring_buffer__free(r->ring);
	free(r);
}

const char *oom_why(int level, int err)
{
	if (level == OOM_FULL)
		return NULL;
	if (err == -ENODATA)
		return "the BPF programs were loaded without the OOM recorder";
	if (level == OOM_VICTIMS)
		return "oom_kill_process cannot be attached here: the OOMing cgroup and its limit are inferred";
	return "the kernel refused the OOM recorder's programs (oom:mark_victim)";
}

int oom_drain(struct oom_reader *r, oom_fn fn, void *ctx)
{
	int err;

	r->fn = fn;
	r->ctx = ctx;
	r->handed = 0;
	err = ring_buffer__consume(r->ring);
	r->fn = NULL;
	return err < 0 ? err : (int)r->handed;
}

void oom_counts(const struct oom_reader *r, __u64 *victims, __u64 *drops)
{
	*victims = LOAD(r->skel->bss->oom_victims);
	*drops = LOAD(r->skel->bss->oom_ring_drops);
}
