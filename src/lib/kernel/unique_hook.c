// SPDX-License-Identifier: MIT
/* The unique program's hook, chosen before the tracker's load (unique_hook.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/libbpf.h>
#include "fileutil.h"
#include "tracker.h"             /* bpf/: the skeleton's types */
#include "unique.h"
#include "oom.h"
#include "cgsum.h"
#include "kfeatures.h"
#include "unique_hook.h"
#include "tracker.skel.h"

/* Whether the kernel's BTF names sym (a function, or a tracepoint's
 * btf_trace_ type): a scan of its string section's bytes for "\0sym\0",
 * no parse. -errno when it cannot be read. */
static int kernel_btf_names(const char *btf, size_t len, const char *sym)
{
	char key[64];
	int n = snprintf(key, sizeof(key), "%c%s%c", '\0', sym, '\0');

	return btf && n > 0 && (size_t)n < sizeof(key) && memmem(btf, len, key, (size_t)n);
}

/* The hooks for the tree cgroup's mapped pages, best first (bpf/unique.bpf.c). */
struct hook {
	const char *btf_name;
	const char *prog;
};

static const struct hook HOOKS[] = {
	{ "btf_trace_mod_memcg_lruvec_state", "unique_stat" },  /* 6.13+ */
	{ "__lruvec_stat_mod_folio", "unique_folio" },          /* 6.12 */
	{ "__mod_lruvec_page_state", "unique_page" },           /* 6.1 */
	{ "__mod_lruvec_state", "unique_lruvec" },              /* 5.10 */
};

int unique_prepare(struct tracker_bpf *skel, bool on, const struct tracker_features *f)
{
	const char *force = secure_getenv("PEAKBPF_UNIQUE_HOOK");
	const struct hook *pick = NULL;
	char *btf = NULL;
	size_t len = 0;

	for (size_t i = 0; i < sizeof(HOOKS) / sizeof(HOOKS[0]); i++)
		bpf_program__set_autoload(bpf_object__find_program_by_name(skel->obj, HOOKS[i].prog), false);
	if (!on)
		return 0;
	if (!f->has_fetch_atomics)
		return -ENOSYS;         /* the peak's compare-and-swap: 5.12+ */
	/* Where tracefs or the raw tracepoint table shows the tracepoint, no
	 * scan of the BTF (a 5.5 MB read: 9 ms on a quiet machine). */
	if (!force && f->memcg_stat_tp_seen) {
		bpf_program__set_autoload(skel->progs.unique_stat, true);
		return 0;
	}
	if (read_text_file("/sys/kernel/btf/vmlinux", &btf, &len))
		return -EOPNOTSUPP;
	/* $PEAKBPF_UNIQUE_HOOK=unique_folio, ...: the tests' way to check an
	 * older kernel's hook where a better one exists (an unknown or absent
	 * one: none). */
	for (size_t i = 0; i < sizeof(HOOKS) / sizeof(HOOKS[0]) && !pick; i++)
		if (kernel_btf_names(btf, len, HOOKS[i].btf_name) &&
		    (!force || !strcmp(force, HOOKS[i].prog)))
			pick = &HOOKS[i];
	free(btf);
	if (!pick)
		return -EOPNOTSUPP;
	bpf_program__set_autoload(bpf_object__find_program_by_name(skel->obj, pick->prog), true);
	return 0;
}

bool unique_owns_prog(const struct tracker_bpf *skel, const struct bpf_program *prog)
{
	const char *name = bpf_program__name(prog);

	(void)skel;
	for (size_t i = 0; i < sizeof(HOOKS) / sizeof(HOOKS[0]); i++)
		if (!strcmp(name, HOOKS[i].prog))
			return true;
	return false;
}
