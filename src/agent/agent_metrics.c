// SPDX-License-Identifier: MIT
/* agent_metrics.h: the scrape's text. */
#include <errno.h>
#include <string.h>
#include "agent_metrics.h"

enum kind { GAUGE, COUNTER };

static const struct family {
	const char *name;
	enum kind kind;
	const char *help;
} FAMILIES[] = {
#define F_PEAK 0
	{ "peakbpf_cgroup_rss_peak_bytes", GAUGE,
	  "Largest summed RSS of the cgroup's processes since this scraper's previous scrape (?scraper=NAME; "
	  "without one, since the previous scrape by any unnamed scraper), every change seen in the kernel." },
#define F_NOW 1
	{ "peakbpf_cgroup_rss_bytes", GAUGE, "Summed RSS of the cgroup's processes at this scrape." },
#define F_MAX 2
	{ "peakbpf_cgroup_rss_max_bytes", GAUGE,
	  "Largest summed RSS of the cgroup's processes since the agent first saw the cgroup." },
#define F_CHARGE 3
	{ "peakbpf_cgroup_memory_charge_bytes", GAUGE,
	  "The cgroup's memory charge at this scrape (memory.current, or v1's memory.usage_in_bytes): page "
	  "cache and kernel memory included; a sample, not a peak." },
#define F_MMS 4
	{ "peakbpf_cgroup_address_spaces", GAUGE, "Address spaces (processes) whose RSS counts in the cgroup." },
#define F_INFO 5
	{ "peakbpf_cgroup_info", GAUGE,
	  "Where the cgroup's figures come from: source of the sum (bpf), whether it is exact, the charge's source." },
#define F_EXPORTED 6
	{ "peakbpf_cgroups_exported", GAUGE, "Cgroups with series in this scrape." },
#define F_LIMIT 7
	{ "peakbpf_cgroup_series_limit", GAUGE, "The most cgroups with series (--max-series)." },
#define F_DROPPED 8
	{ "peakbpf_cgroups_dropped_total", COUNTER,
	  "Cgroups without series: reason=max_series, refused because --max-series cgroups had them; "
	  "reason=no_kernel_slot, made while the kernel's 4096 slots were all taken." },
#define F_REMOVED 9
	{ "peakbpf_cgroup_series_removed_total", COUNTER, "Cgroups whose series were removed when they went away." },
#define F_FREE 10
	{ "peakbpf_cgroup_slots_free", GAUGE, "Kernel slots for new cgroups still free." },
#define F_MISSING 11
	{ "peakbpf_cgroup_chain_missing_total", COUNTER,
	  "Times an address space's cgroup (or an ancestor) had no kernel slot: its RSS counts there in none." },
#define F_MMFULL 12
	{ "peakbpf_address_spaces_dropped_total", COUNTER,
	  "Address spaces the kernel's per-address-space map had no room for: counted in no cgroup." },
#define F_TRUNC 13
	{ "peakbpf_scrape_windows_truncated", GAUGE,
	  "Cgroups whose peak in this scrape covers less than the time since this scraper's previous scrape "
	  "(more scrapes in between than the agent keeps windows for)." },
#define F_OOM 14
	{ "peakbpf_oom_kills_total", COUNTER, "Processes the kernel's OOM killer chose since the agent started." },
#define F_OOMREC 15
	{ "peakbpf_oom_records_total", COUNTER, "OOM records written to the spool directory." },
#define F_OOMDROP 16
	{ "peakbpf_oom_ring_drops_total", COUNTER, "OOM victims the kernel's ring had no room for." },
#define F_AGENT 17
	{ "peakbpf_agent_info", GAUGE, "The agent: its version and the kernel it runs on." },
#define F_CUT 18
	{ "peakbpf_scrape_cut_seconds", GAUGE, "How long this scrape's cut of every cgroup's window took." },
#define F_HOLDER 19
	{ "peakbpf_cgroup_peak_holder_bytes", GAUGE,
	  "The largest holders (--holders of them, rank 1 first) at the peak that peakbpf_cgroup_rss_peak_bytes "
	  "gives: what each process's address space held at that instant, by kind (anon, file, shmem), as the "
	  "kernel noted it before the process's first change after the peak; read at the window's cut (the "
	  "agent's, each second and at each scrape), a process gone before the cut as its teardown kept them." },
#define F_UNLISTED 20
	{ "peakbpf_cgroup_peak_unlisted_bytes", GAUGE,
	  "The part of that peak not in peakbpf_cgroup_peak_holder_bytes: held_by=other_processes, the holders "
	  "past --holders; held_by=unaccounted, read from no mark (more departures in a second than the kernel's "
	  "ring of 512 keeps, or changes racing the peak: peakbpf_cgroup_holders_info's blurred)." },
#define F_HINFO 21
	{ "peakbpf_cgroup_holders_info", GAUGE,
	  "How the holders at that peak were read: at=peak (the kernel's marks of the peak's instant, read at "
	  "the cut), processes (address spaces that held pages then), blurred (a change raced a new peak)." },
#define F_LOST 22
	{ "peakbpf_holder_departures_lost_total", COUNTER,
	  "Address spaces that ended while the kernel's ring of departures was full (more than 512 between two "
	  "cuts): what they held at a peak is in peakbpf_cgroup_peak_unlisted_bytes{held_by=\"unaccounted\"}." },
};
#define N_FAMILIES (sizeof(FAMILIES) / sizeof(FAMILIES[0]))

const char *agent_metric_name(size_t i)
{
	return i < N_FAMILIES ? FAMILIES[i].name : NULL;
}

void agent_label_escape(FILE *out, const char *v)
{
	for (; *v; v++) {
		if (*v == '\\' || *v == '"')
			fputc('\\', out);
		if (*v == '\n') {
			fputs("\\n", out);
			continue;
		}
		fputc(*v, out);
	}
}

static void head(FILE *out, size_t f)
{
	fprintf(out, "# HELP %s %s\n# TYPE %s %s\n", FAMILIES[f].name, FAMILIES[f].help, FAMILIES[f].name,
		FAMILIES[f].kind == COUNTER ? "counter" : "gauge");
}

/* One sample, written in three steps that every family shares: its name
 * and labels (the cgroup's, when it has one, then any others), its value. */
struct sample {
	FILE *out;
	bool labelled;
};

static void label(struct sample *s, const char *name, const char *v)
{
	fprintf(s->out, "%c%s=\"", s->labelled ? ',' : '{', name);
	agent_label_escape(s->out, v);
	fputc('"', s->out);
	s->labelled = true;
}

static struct sample sample_open(FILE *out, size_t f, const struct agent_cg *cg)
{
	struct sample s = { .out = out };

	fputs(FAMILIES[f].name, out);
	if (!cg)
		return s;
	label(&s, "cgroup", cg->path);
	for (size_t i = 0; cg_label_name(i); i++)
		if (*cg_label_value(&cg->labels, i))
			label(&s, cg_label_name(i), cg_label_value(&cg->labels, i));
	return s;
}

static void sample_value(struct sample *s, int64_t v)
{
	fprintf(s->out, "%s %lld\n", s->labelled ? "}" : "", (long long)(v < 0 ? 0 : v));
}

/* The value of per-cgroup family f for cg; false: no sample (not measured). */
static bool cgroup_value(size_t f, const struct agent_cg *cg, uint64_t since, const struct agent_facts *fa,
			 size_t *truncated, int64_t *v)
{
	bool trunc = false;

	switch (f) {
	case F_PEAK:
		*v = agent_cg_peak_since(cg, since, &trunc) * fa->page_size;
		*truncated += trunc;
		return true;
	case F_NOW:
		*v = cg->pages * fa->page_size;
		return true;
	case F_MAX:
		*v = cg->all_peak_pages * fa->page_size;
		return true;
	case F_CHARGE:
		*v = (int64_t)cg->charge_bytes;
		return cg->charge_read;         /* not measured: no sample, never 0 */
	case F_MMS:
		*v = cg->mms;
		return true;
	default:
		*v = 1;
		return true;
	}
}

/* One family's series, a value per exported cgroup. */
static void per_cgroup(FILE *out, const struct agent_state *st, size_t f, uint64_t since,
		       const struct agent_facts *fa, size_t *truncated)
{
	head(out, f);
	for (size_t i = 0; i < st->cap; i++) {
		const struct agent_cg *cg = &st->cgs[i];
		struct sample s;
		int64_t v = 0;

		if (!cg->id || !cg->exported || !cgroup_value(f, cg, since, fa, truncated, &v))
			continue;
		s = sample_open(out, f, cg);
		if (f == F_INFO) {
			label(&s, "source", "bpf");
			label(&s, "exact", fa->exact ? "true" : "false");
			label(&s, "charge_source", fa->charge_source);
		}
		sample_value(&s, v);
	}
}

/* The holders at the peak this scraper's figure names, each cgroup's
 * largest fa->holders of them, by kind; what they leave of the peak. */
static void holder_families(FILE *out, const struct agent_state *st, uint64_t since, const struct agent_facts *fa)
{
	static const char *const KIND[] = { "anon", "file", "shmem" };

	for (size_t f = F_HOLDER; f <= F_HINFO; f++) {
		head(out, f);
		for (size_t i = 0; i < st->cap; i++) {
			const struct agent_cg *cg = &st->cgs[i];
			const struct agent_holders *h = cg->id && cg->exported ? agent_cg_holders_since(cg, since) : NULL;
			int64_t listed = 0, pg = fa->page_size;
			struct sample s;
			char n[24];

			if (!h || !h->read)
				continue;       /* not read: no sample */
			for (uint32_t k = 0; k < h->n && k < fa->holders; k++) {
				const struct agent_holder *x = &h->v[k];
				const uint32_t by_kind[] = { x->anon, x->file, x->shmem };

				listed += (int64_t)x->anon + x->file + x->shmem;
				for (size_t j = 0; f == F_HOLDER && j < 3; j++) {
					s = sample_open(out, f, cg);
					snprintf(n, sizeof(n), "%u", k + 1);
					label(&s, "rank", n);
					snprintf(n, sizeof(n), "%u", x->pid);
					label(&s, "pid", n);
					label(&s, "comm", x->comm);
					label(&s, "kind", KIND[j]);
					sample_value(&s, (int64_t)by_kind[j] * pg);
				}
			}
			if (f == F_UNLISTED) {
				s = sample_open(out, f, cg);
				label(&s, "held_by", "other_processes");
				sample_value(&s, (h->held_pages - listed) * pg);
				s = sample_open(out, f, cg);
				label(&s, "held_by", "unaccounted");
				sample_value(&s, (h->peak_pages - h->held_pages) * pg);
			} else if (f == F_HINFO) {
				s = sample_open(out, f, cg);
				label(&s, "at", "peak");
				snprintf(n, sizeof(n), "%u", h->count);
				label(&s, "processes", n);
				label(&s, "blurred", h->blurred ? "true" : "false");
				sample_value(&s, 1);
			}
		}
	}
}

static void one(FILE *out, size_t f, uint64_t v)
{
	struct sample s;

	head(out, f);
	s = sample_open(out, f, NULL);
	sample_value(&s, (int64_t)v);
}

int agent_metrics_write(FILE *out, const struct agent_state *st, uint64_t since, const struct agent_facts *f)
{
	size_t truncated = 0;
	struct sample s;

	for (size_t k = F_PEAK; k <= F_INFO; k++)
		per_cgroup(out, st, k, since, f, &truncated);
	holder_families(out, st, since, f);
	one(out, F_EXPORTED, st->exported);
	one(out, F_LIMIT, st->max_series);
	head(out, F_DROPPED);
	s = sample_open(out, F_DROPPED, NULL);
	label(&s, "reason", "max_series");
	sample_value(&s, (int64_t)st->dropped_total);
	s = sample_open(out, F_DROPPED, NULL);
	label(&s, "reason", "no_kernel_slot");
	sample_value(&s, (int64_t)f->no_slot);
	one(out, F_REMOVED, st->removed_total);
	one(out, F_FREE, f->slots_free);
	one(out, F_MISSING, f->chain_missing);
	one(out, F_MMFULL, f->mm_full);
	one(out, F_TRUNC, truncated);
	one(out, F_OOM, f->oom_kills);
	one(out, F_OOMREC, f->oom_records);
	one(out, F_OOMDROP, f->oom_ring_drops);
	one(out, F_LOST, f->departed_lost);
	head(out, F_AGENT);
	s = sample_open(out, F_AGENT, NULL);
	label(&s, "version", f->version ? f->version : "");
	label(&s, "kernel", f->kernel ? f->kernel : "");
	label(&s, "exact", f->exact ? "true" : "false");
	sample_value(&s, 1);
	head(out, F_CUT);
	fprintf(out, "peakbpf_scrape_cut_seconds %.6f\n", (double)f->scrape_cut_ns / 1e9);
	return ferror(out) ? -EIO : 0;
}
