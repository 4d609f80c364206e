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
	  "Cgroups refused series because --max-series were in use, or given no kernel slot (all taken)." },
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

static void labels(FILE *out, const char *name, const struct agent_cg *cg)
{
	fprintf(out, "%s{cgroup=\"", name);
	agent_label_escape(out, cg->path);
	fputc('"', out);
	for (size_t i = 0; cg_label_name(i); i++) {
		const char *v = cg_label_value(&cg->labels, i);

		if (!*v)
			continue;
		fprintf(out, ",%s=\"", cg_label_name(i));
		agent_label_escape(out, v);
		fputc('"', out);
	}
}

/* One family's series, a value per exported cgroup. */
static void per_cgroup(FILE *out, const struct agent_state *st, size_t f, uint64_t since,
		       const struct agent_facts *fa, size_t *truncated)
{
	head(out, f);
	for (size_t i = 0; i < st->cap; i++) {
		const struct agent_cg *cg = &st->cgs[i];
		bool trunc = false;
		int64_t v = 0;

		if (!cg->id || !cg->exported)
			continue;
		switch (f) {
		case F_PEAK:
			v = agent_cg_peak_since(cg, since, &trunc) * fa->page_size;
			if (trunc)
				(*truncated)++;
			break;
		case F_NOW:
			v = cg->pages * fa->page_size;
			break;
		case F_MAX:
			v = cg->all_peak_pages * fa->page_size;
			break;
		case F_CHARGE:
			if (!cg->charge_read)
				continue;       /* not measured: no sample, never 0 */
			v = (int64_t)cg->charge_bytes;
			break;
		case F_MMS:
			v = cg->mms;
			break;
		}
		labels(out, FAMILIES[f].name, cg);
		if (f == F_INFO)
			fprintf(out, ",source=\"bpf\",exact=\"%s\",charge_source=\"%s\"} 1\n", fa->exact ? "true" : "false",
				fa->charge_source);
		else
			fprintf(out, "} %lld\n", (long long)(v < 0 ? 0 : v));
	}
}

static void one(FILE *out, size_t f, uint64_t v)
{
	head(out, f);
	fprintf(out, "%s %llu\n", FAMILIES[f].name, (unsigned long long)v);
}

int agent_metrics_write(FILE *out, const struct agent_state *st, uint64_t since, const struct agent_facts *f)
{
	size_t truncated = 0;

	for (size_t k = F_PEAK; k <= F_INFO; k++)
		per_cgroup(out, st, k, since, f, &truncated);
	one(out, F_EXPORTED, st->exported);
	one(out, F_LIMIT, st->max_series);
	one(out, F_DROPPED, st->dropped_total + f->no_slot);
	one(out, F_REMOVED, st->removed_total);
	one(out, F_FREE, f->slots_free);
	one(out, F_MISSING, f->chain_missing);
	one(out, F_MMFULL, f->mm_full);
	one(out, F_TRUNC, truncated);
	one(out, F_OOM, f->oom_kills);
	one(out, F_OOMREC, f->oom_records);
	one(out, F_OOMDROP, f->oom_ring_drops);
	head(out, F_AGENT);
	fputs("peakbpf_agent_info{version=\"", out);
	agent_label_escape(out, f->version ? f->version : "");
	fputs("\",kernel=\"", out);
	agent_label_escape(out, f->kernel ? f->kernel : "");
	fprintf(out, "\",exact=\"%s\"} 1\n", f->exact ? "true" : "false");
	head(out, F_CUT);
	fprintf(out, "peakbpf_scrape_cut_seconds %.6f\n", (double)f->scrape_cut_ns / 1e9);
	return ferror(out) ? -EIO : 0;
}
