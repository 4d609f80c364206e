// SPDX-License-Identifier: MIT
/*
 * What a client may read of its tree's processes (issue 36). A tree
 * follows every descendant, a setuid program's too; the kernel shows
 * anyone a process's VmRSS and VmHWM (/proc/PID/status), but what it does
 * over time (/proc/PID/io, smaps, pagemap) only to who could ptrace it
 * (PTRACE_MODE_READ). So a process the client could not trace (host.h's
 * rule: its uid and gid, no capabilities, dumpable; a setuid exec makes a
 * process non-dumpable) counts in the tree's sum and peak, and nothing
 * else of it reaches the client: no change in the record, no identity, no
 * line among the holders. docs/helper.md's threat model.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "fileutil.h"
#include "host.h"
#include "pidns.h"
#include "serve_int.h"

#define MS 1000000ULL

int serve_may_read(const struct client *c, pid_t pid)
{
	struct tracer t = { .uid = c->cred.uid, .gid = c->cred.gid };

	if (c->cred.uid == 0)
		return 0;
	return pid > 0 ? host_may_trace(pid, &t) : -ESRCH;
}

int serve_readable_open(struct client *c)
{
	if (c->cred.uid == 0)
		return 0;
	c->readable = calloc(SERVE_READ_CACHE, sizeof(*c->readable));
	return c->readable ? 0 : -ENOMEM;
}

void serve_readable_close(struct client *c)
{
	free(c->readable);
	c->readable = NULL;
}

/* The slot of mm's process tgid: an mm's address comes back for the next
 * process soon (the slab reuses it), so both name the entry. The key is a
 * kernel address, its low bits alike. */
static size_t slot_of(uint64_t mm, uint32_t tgid)
{
	mm ^= (uint64_t)tgid << 32 | tgid;
	mm ^= mm >> 29;
	mm *= 0xbf58476d1ce4e5b9ULL;
	return (size_t)((mm ^ (mm >> 32)) % SERVE_READ_CACHE);
}

static bool same_entry(const struct read_entry *e, uint64_t mm, uint32_t tgid)
{
	return e->checked_ns && e->mm == mm && e->tgid == tgid;
}

/* Note a verdict on mm's process tgid: the last one stands for it. */
static bool note_verdict(struct read_entry *e, uint64_t mm, uint32_t tgid, uint64_t now, bool shown)
{
	e->mm = mm;
	e->tgid = tgid;
	e->checked_ns = now ? now : 1;
	e->shown = shown;
	return shown;
}

bool serve_readable_mm(struct client *c, const struct sum_event *ev, uint64_t now)
{
	struct read_entry *e;
	int err;

	if (c->cred.uid == 0)
		return true;
	if (!c->readable)
		return false;
	e = &c->readable[slot_of(ev->mm, ev->tgid)];
	/* Judged in the kernel as it was made (struct tree_reader, set for
	 * this client at HP_OPEN): true even of a process gone by now. */
	if (ev->seen != SUM_SEEN_UNJUDGED)
		return note_verdict(e, ev->mm, ev->tgid, now, ev->seen == SUM_SEEN_READABLE);
	if (same_entry(e, ev->mm, ev->tgid) && now - e->checked_ns < SERVE_READ_RECHECK_MS * MS)
		return e->shown;
	err = serve_may_read(c, (pid_t)ev->tgid);
	/* Gone: as it was last seen; never seen alive, withheld. */
	if (err == -ESRCH && same_entry(e, ev->mm, ev->tgid))
		return e->shown;
	return note_verdict(e, ev->mm, ev->tgid, now, err == 0);
}

bool serve_readable_seen(const struct client *c, uint64_t mm, uint32_t tgid)
{
	const struct read_entry *e;

	if (c->cred.uid == 0)
		return true;
	if (!c->readable)
		return false;
	e = &c->readable[slot_of(mm, tgid)];
	return same_entry(e, mm, tgid) && e->shown;
}

/* The helper's PID of the process that is vpid depth namespaces below
 * it (the /proc mount's): the one process whose NSpid has depth + 1
 * fields, the last vpid. 0: none, or more than one (namespaces side by
 * side at that depth). */
static pid_t pid_below(unsigned depth, pid_t vpid)
{
	DIR *d = opendir("/proc");
	struct dirent *de;
	pid_t found = 0;
	int seen = 0;

	while (d && (de = readdir(d)) && seen < 2) {
		pid_t ns[40];
		size_t n = 0;
		char path[300], *text = NULL;
		char *end;
		long pid = strtol(de->d_name, &end, 10);

		if (*end || pid <= 0)
			continue;
		snprintf(path, sizeof(path), "/proc/%ld/status", pid);
		if (!read_text_file(path, &text, NULL) && !parse_nspid(text, ns, 40, &n) &&
		    n == depth + 1 && ns[depth] == vpid) {
			found = (pid_t)pid;
			seen++;
		}
		free(text);
	}
	if (d)
		closedir(d);
	return seen == 1 ? found : 0;
}

/* A holder gone before the window closed: withheld if the record saw it
 * withheld (a recording client's verdicts); else, without a record,
 * listed (its comm and own peak were in its /proc/PID/status, which the
 * kernel shows anyone, while it ran). */
static bool gone_withheld(const struct client *c, pid_t pid)
{
	for (size_t i = 0; c->readable && pid > 0 && i < SERVE_READ_CACHE; i++)
		if (c->readable[i].checked_ns && c->readable[i].tgid == (uint32_t)pid && !c->readable[i].shown)
			return true;
	return false;
}

void serve_readable_holders(const struct client *c, struct hp_figure *f, unsigned depth)
{
	size_t kept = 0;

	if (c->cred.uid == 0)
		return;
	for (size_t i = 0; i < f->n_holders && i < FIGURE_MAX_HOLDERS; i++) {
		const struct figure_holder *h = &f->holders[i];
		pid_t pid = c->own_pidns ? h->pid : h->pid > 0 ? pid_below(depth, h->pid) : 0;

		int err = serve_may_read(c, pid);

		if (err == -ESRCH && h->pid > 0 ? gone_withheld(c, pid ? pid : h->pid) : err != 0)
			continue;       /* withheld: counted in the sum, listed nowhere */
		f->holders[kept++] = *h;
	}
	if (kept < f->n_holders) {
		memset(&f->holders[kept], 0, (f->n_holders - kept) * sizeof(f->holders[0]));
		f->n_holders = kept;
		f->holders_truncated = 1;
	}
}
