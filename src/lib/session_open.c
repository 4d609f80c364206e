// SPDX-License-Identifier: MIT
/* Opening a session: which sources, in which order, bpf here or through the helper (session.h). */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "bpf_refusal.h"
#include "helper_proto.h"
#include "host.h"
#include "session.h"
#include "sources.h"
#include "session_internal.h"

/* Why BPF cannot be used here, checked before trying: the answer names the fix. */
static const char *bpf_unusable(const struct host_facts *h, uint64_t capeff)
{
	if (!h->btf)
		return "kernel has no BTF (/sys/kernel/btf/vmlinux): use a kernel built with CONFIG_DEBUG_INFO_BTF=y";
	if (!bpf_privileges(capeff))
		return "CAP_BPF and CAP_PERFMON missing: run as root, or grant them "
		       "(setcap cap_bpf,cap_perfmon+ep peakbpf, or a container's --cap-add), "
		       "or have root run the helper, peakbpf serve";
	return NULL;
}

/* s->unique_wanted: the tree has a cgroup of its own, whose unique memory
 * the load's unique program will count. */
static int open_bpf(struct session *s, const struct session_opts *o, char *why, size_t len)
{
	struct bpf_source_opts bo = { .max_tracked = o->max_tracked, .command_mode = o->command_mode,
				      .record_ring_bytes = o->record_ring_bytes,
				      .with_unique = s->unique_wanted,
				      .keep_loaded = o->keep_loaded, .stacks = o->stacks,
				      .without_cgroup_targets = o->no_cgroup_targets };
	struct source *src;
	int err = bpf_source_open(&bo, &s->host, &src);

	if (err) {
		if ((err == -EPERM || err == -EACCES) && s->host.privileges &&
		    strcmp(s->host.privileges, "none")) {
			/* Capabilities are there: a seccomp filter, the
			 * locked-memory limit or an LSM (bpf_refusal.h). */
			struct bpf_refusal r;

			bpf_refusal_gather(&r, err, s->host.privileges, s->host.kernel);
			bpf_refusal_why(&r, why, len);
		} else if (err == -EPERM || err == -EACCES)
			snprintf(why, len, "the kernel refused to load the BPF programs (%s): "
				 "run as root, or grant CAP_BPF and CAP_PERFMON", strerror(-err));
		else
			snprintf(why, len, "cannot load the BPF programs: %s (run with -v for the kernel's log)",
				 strerror(-err));
		return err;
	}
	s->kernel = src;
	s->host.bpf_loaded = true;
	session_add_source(s, src);
	return 0;
}

/* The helper's socket: --helper's, $PEAKBPF_HELPER (not for setuid or
 * setcap callers), or the default. */
static const char *helper_path(const struct session_opts *o)
{
	const char *p = o->helper_path;

	if (!p || !*p)
		p = secure_getenv(HELPER_ENV);
	return p && *p ? p : HELPER_SOCKET_DEFAULT;
}

/* The helper stands in for bpf: when asked to; and, unless no_helper,
 * whenever its socket exists (it serves everything a load here would:
 * open_bpf_or_helper falls back to a load here when it does not answer). */
static bool want_helper(const struct session_opts *o)
{
	if (o->use_helper)
		return true;
	return !o->no_helper && helper_socket_exists(helper_path(o));
}

static int open_helper(struct session *s, const struct session_opts *o, char *why, size_t len)
{
	struct source *src;
	int err = helper_source_open(helper_path(o), o->max_tracked, o->command_mode,
				     o->record_ring_bytes != 0, &s->host, &src, why, len);

	if (err)
		return err;
	s->kernel = src;
	s->host.bpf_load = "helper";
	snprintf(s->host.helper_path, sizeof(s->host.helper_path), "%s", helper_path(o));
	session_add_source(s, src);
	return 0;
}

/* The helper refused for its other users' load (its fair limits:
 * docs/helper.md), not for anything of this session's. */
static bool helper_busy(int err)
{
	return err == -EAGAIN || err == -EUSERS;
}

/* The bpf source where bpf can be used here: through the helper when one
 * answers (want_helper), else loaded here, with a note when a helper was
 * there and not used; a helper asked for by name (--helper) and busy
 * with others is passed over too, since a load here measures as well. */
static int open_bpf_or_helper(struct session *s, const struct session_opts *o, char *why,
			      size_t len)
{
	bool by_default = !o->use_helper && !o->no_helper;
	int err;

	if (want_helper(o)) {
		err = open_helper(s, o, why, len);
		if (!err || (!by_default && !helper_busy(err)))
			return err;
		session_note_add(s, "helper: %s; loaded here instead", why);
	}
	return open_bpf(s, o, why, len);
}

/*
 * The sources --source (opts.source) can name, one row each, but bpf,
 * which is here or through the helper (open_named). A new source is its
 * file (sources.h declares its open), a row here, the public enum's value
 * (include/peakbpf/peakbpf.h) and its place in open_auto's order.
 */
static const struct {
	enum peakbpf_source id;
	source_open_fn open;
} named_sources[] = {
	{ PEAKBPF_SOURCE_CGROUP, cgroup_source_open },
	{ PEAKBPF_SOURCE_PROC, proc_source_open },
	{ PEAKBPF_SOURCE_RUSAGE, rusage_source_open },
};

#define N_NAMED (sizeof(named_sources) / sizeof(named_sources[0]))

bool session_source_known(enum peakbpf_source source)
{
	if (source == PEAKBPF_SOURCE_AUTO || source == PEAKBPF_SOURCE_BPF)
		return true;
	for (size_t i = 0; i < N_NAMED; i++)
		if (named_sources[i].id == source)
			return true;
	return false;
}

/* A source named by --source: it, or the reason it cannot be used. */
static int open_named(struct session *s, const struct session_opts *o,
		      const struct source_opts *so, const char *no_bpf, char *why, size_t whylen)
{
	struct source *src;
	char reason[192];
	int err;

	if (o->source == PEAKBPF_SOURCE_BPF) {
		if (no_bpf && want_helper(o))
			err = open_helper(s, o, why, whylen);
		else if (no_bpf) {
			snprintf(why, whylen, "%s", no_bpf);
			return -EPERM;
		}
		else
			err = open_bpf_or_helper(s, o, why, whylen);
		if (!err && (o->with_proc || so->hugetlb) &&
		    proc_source_open(so, &src, reason, sizeof(reason)) == 0)
			session_add_source(s, src);
		return err;
	}
	for (size_t i = 0; i < N_NAMED; i++) {
		if (named_sources[i].id != o->source)
			continue;
		err = named_sources[i].open(so, &src, why, whylen);
		if (!err)
			session_add_source(s, src);
		return err;
	}
	snprintf(why, whylen, "unknown source %d", (int)o->source);
	return -EINVAL;
}

/* The tree's unique memory: its own cgroup (the cgroup source's
 * tree_cgroup_fd) given to the kernel source, here or through the helper
 * (which takes the directory and checks it), which counts it from now on
 * and closes its windows with its own; or why not. */
static void open_unique(struct session *s, const struct source *cg, const char *no_bpf,
			const char *bpf_why)
{
	int fd = cg->ops->tree_cgroup_fd ? cg->ops->tree_cgroup_fd(cg) : -1;
	char why[HP_WHY_LEN + 16];

	if (s->kernel && s->kernel->ops->unique_open) {
		if (s->kernel->ops->unique_open(s->kernel, fd, why, sizeof(why)))
			snprintf(s->unique_why, sizeof(s->unique_why), "%s", why);
		else
			s->unique_taken = true;
	} else if (s->kernel)
		snprintf(s->unique_why, sizeof(s->unique_why), "its kernel source measures none");
	else if (no_bpf)
		snprintf(s->unique_why, sizeof(s->unique_why), "no BPF: %s", no_bpf);
	else
		snprintf(s->unique_why, sizeof(s->unique_why), "no BPF: %s", bpf_why);
}

/*
 * auto: bpf > exclusive cgroup > proc > shared cgroup > rusage. The
 * cgroup and rusage figures cost nothing more, so they are read beside a
 * better source and recorded as other_sources. A cgroup the tree does not
 * own is never the headline (choose_primary): it is shown beside, marked
 * not comparable.
 */
static int open_auto(struct session *s, const struct session_opts *o,
		     const struct source_opts *so, const char *no_bpf, char *why, size_t whylen)
{
	struct source *src = NULL, *shared_cgroup = NULL;
	char reason[192], bpf_why[SESSION_NOTE_LEN] = "", no_own_cgroup[192] = "its cgroup is shared";
	int err;

	/* The cgroup before the tracker: the unique program in its object
	 * needs the cgroup's id before load. */
	err = cgroup_source_open(so, &src, reason, sizeof(reason));
	if (err == -CGROUP_ROOT_UNSAFE) {
		/* An unsafe root is refused, not fallen back from. */
		snprintf(why, whylen, "%s", reason);
		return err;
	}
	s->unique_wanted = !err && cgroup_source_is_exclusive(src) && !no_bpf;
	if (no_bpf && !want_helper(o)) {
		session_note_add(s, "bpf: %s", no_bpf);
	} else {
		/* Without bpf here, the helper alone; else the helper by
		 * default, or a load here (open_bpf_or_helper). */
		int herr = no_bpf ? open_helper(s, o, bpf_why, sizeof(bpf_why)) :
			   open_bpf_or_helper(s, o, bpf_why, sizeof(bpf_why));

		if (herr && o->use_helper) {
			/* Asked for by name: no silent fallback. */
			snprintf(why, whylen, "%s", bpf_why);
			if (!err)
				src->ops->destroy(src);
			return herr;
		}
		if (herr) {
			if (no_bpf)
				session_note_add(s, "bpf: %s", no_bpf);
			session_note_add(s, "bpf: %s", bpf_why);
		}
	}
	if (!err) {
		if (cgroup_source_is_exclusive(src)) {
			open_unique(s, src, no_bpf, bpf_why);
			session_add_source(s, src);
		} else {
			shared_cgroup = src;
		}
	} else {
		session_note_add(s, "cgroup: %s", reason);
		snprintf(no_own_cgroup, sizeof(no_own_cgroup), "%s", reason);
	}
	if (o->command_mode && !s->unique_taken && !cgroup_source_is_exclusive(src))
		snprintf(s->unique_why, sizeof(s->unique_why), "the tree has no cgroup of its own: %s",
			 no_own_cgroup);
	/* Where huge pages are configured, the sampler reads hugetlb, which
	 * no RSS counter has (src/base/hugetlb.h), beside bpf too. */
	if (!s->kernel || o->with_proc || so->hugetlb) {
		if (proc_source_open(so, &src, reason, sizeof(reason)) == 0)
			session_add_source(s, src);
		else
			session_note_add(s, "proc: %s", reason);
	}
	if (shared_cgroup) {
		if (o->command_mode)
			session_note_add(s, "cgroup: could not make a cgroup of its own; the shared one's figure is "
				"shown beside, not comparable");
		session_add_source(s, shared_cgroup);
	}
	if (o->command_mode) {
		if (rusage_source_open(so, &src, reason, sizeof(reason)) == 0)
			session_add_source(s, src);
		else
			session_note_add(s, "rusage: %s", reason);
	}
	return 0;
}

int session_open(const struct session_opts *o, struct session **out, char *why, size_t whylen)
{
	struct source_opts so = {
		.cgroup_root = o->cgroup_root,
		.command_mode = o->command_mode,
		.sample_interval_ns = o->sample_interval_ns,
	};
	uint64_t capeff = host_effective_caps();
	struct session *s;
	const char *no_bpf;
	int err = 0;

	*out = NULL;
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	host_facts_fill(&s->host, capeff);
	so.hugetlb = s->host.hugetlb_possible;
	no_bpf = bpf_unusable(&s->host, capeff);
	s->measure_unique = o->measure_unique;
	snprintf(s->unique_why, sizeof(s->unique_why), "%s",
		 o->command_mode ? "the tree has no cgroup of its own: only --source auto makes one"
				 : "attach mode: the tree has no cgroup of its own");
	if (o->source == PEAKBPF_SOURCE_AUTO)
		err = open_auto(s, o, &so, no_bpf, why, whylen);
	else
		err = open_named(s, o, &so, no_bpf, why, whylen);
	if (err) {
		session_close(s);
		return err;
	}
	if (o->measure_unique && !s->unique_taken)
		session_note_add(s, "--measure unique: not measured (%s); the headline is summed RSS", s->unique_why);
	*out = s;
	return 0;
}
