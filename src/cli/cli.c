// SPDX-License-Identifier: MIT
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"
#include "rank_file.h"
#include "runs.h"
#include "runs_cli.h"
#include "stacks_cli.h"
#include "timeline.h"
#include "units.h"

enum {
	OPT_MAX_TRACKED = 256,
	OPT_COMPARE_SAMPLER,
	OPT_SAMPLE_INTERVAL,
	OPT_CGROUP_ROOT,
	OPT_TIMELINE,
	OPT_HELPER,
	OPT_MEASURE,
	OPT_RECORD,
	OPT_RECORD_INTERVAL,
	OPT_NO_HELPER,
	OPT_CGROUP,
	OPT_CONTAINER,
	OPT_UNIT,
	OPT_STACKS,
};

static const struct option long_options[] = {
	{ "output", required_argument, NULL, 'o' },
	{ "json", no_argument, NULL, 'j' },
	{ "quiet", no_argument, NULL, 'q' },
	{ "verbose", no_argument, NULL, 'v' },
	{ "max-tracked", required_argument, NULL, OPT_MAX_TRACKED },
	{ "pid", required_argument, NULL, 'p' },
	{ "cgroup", required_argument, NULL, OPT_CGROUP },
	{ "container", required_argument, NULL, OPT_CONTAINER },
	{ "unit", required_argument, NULL, OPT_UNIT },
	{ "top", required_argument, NULL, 't' },
	{ "interval", required_argument, NULL, 'i' },
	{ "duration", required_argument, NULL, 'd' },
	{ "source", required_argument, NULL, 's' },
	{ "sample-interval", required_argument, NULL, OPT_SAMPLE_INTERVAL },
	{ "cgroup-root", required_argument, NULL, OPT_CGROUP_ROOT },
	{ "compare-sampler", required_argument, NULL, OPT_COMPARE_SAMPLER },
	{ "user", required_argument, NULL, 'u' },
	{ "timeline", required_argument, NULL, OPT_TIMELINE },
	{ "helper", optional_argument, NULL, OPT_HELPER },
	{ "no-helper", no_argument, NULL, OPT_NO_HELPER },
	{ "measure", required_argument, NULL, OPT_MEASURE },
	{ "record", required_argument, NULL, OPT_RECORD },
	{ "record-interval", required_argument, NULL, OPT_RECORD_INTERVAL },
	{ "stacks", required_argument, NULL, OPT_STACKS },
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, 'V' },
	RUNS_LONG_OPTIONS
	{ NULL, 0, NULL, 0 },
};

static const char usage_head[] =
"Usage: peakbpf [OPTIONS] [--] COMMAND [ARG...]\n"
"       peakbpf [OPTIONS] 'COMMAND STRING'...   (hyperfine's form, see -c)\n"
"       peakbpf [OPTIONS] -p PID[,PID...]\n"
"       peakbpf [OPTIONS] --cgroup PATH | --container NAME | --unit NAME\n"
"       peakbpf plot TIMELINE -o OUT   draw a saved --timeline .json or .csv\n"
"       peakbpf merge DIR|FILE...      a job's peak across ranks and nodes, from\n"
"                        their --record rank files\n"
"       peakbpf serve [--socket PATH]  the helper for users without BPF privileges\n"
"       peakbpf agent [--listen ADDR:PORT]  every cgroup's exact peak for Prometheus,\n"
"                        and a record of every OOM kill (docs/agent.md)\n"
"       peakbpf oom list|show ID    the agent's OOM records\n"
"       peakbpf help [plot|merge|serve|agent|oom]  this help, or a subcommand's\n"
"\n"
"Report the exact peak of a process tree's summed resident memory (file +\n"
"anon + shmem pages of every address space in the tree), measured in the\n"
"kernel on every change, so no short spike is missed. The tree is COMMAND\n"
"(or the PIDs) and every process forked from it, including daemonized ones.\n";

static const char usage_options[] =
"\n"
"Options:\n"
"  -p, --pid PID[,PID]   attach to running processes and their descendants;\n"
"                        ends when all have exited, at -d, or on SIGINT/SIGTERM\n"
"      --cgroup PATH     measure a cgroup (v2, or v1's memory hierarchy): the\n"
"                        summed RSS of every process in it and below, those\n"
"                        inside at the start and those that enter later; one\n"
"                        that leaves takes its pages out at the move; beside\n"
"                        it the cgroup's own peak and the headroom to its\n"
"                        limit; ends at -d or on SIGINT/SIGTERM, or when the\n"
"                        cgroup is removed\n"
"      --container NAME|ID  the same for a podman or docker container's cgroup\n"
"                        (found by the runtime's inspect; podman:NAME or\n"
"                        docker:NAME picks the runtime)\n"
"      --unit NAME       the same for a systemd unit's cgroup (NAME.service\n"
"                        when no suffix is given)\n"
"  -i, --interval DUR    close a window every DUR (10ms to 168h, e.g. 500ms, 2s,\n"
"                        1m, 1h); each window reports its own peak; SIGUSR1\n"
"                        closes one now. -i without a duration after it is\n"
"                        --ignore-failure, as in hyperfine\n"
"  -d, --duration DUR    stop after DUR (1ms to 8760h; attach mode)\n"
"  -u, --user USER[:GROUP]  run COMMAND as USER (a name or uid), in GROUP or\n"
"                        USER's own, with USER's groups; peakbpf stays root\n"
"  -t, --top N           list the N processes holding most at the peak (default\n"
"                        5, at most 32; 0: none)\n"
"  -s, --source SRC      auto (default), bpf, cgroup, proc or rusage\n"
"      --measure WHAT    the headline: rss (default: summed RSS, a page counted\n"
"                        once per process) or unique (the tree's own cgroup's\n"
"                        mapped pages, each once; command mode, Linux 5.12+)\n"
"      --sample-interval DUR  period of the proc sampler (default 100ms; 1ms to 1h)\n"
"      --cgroup-root DIR      where cgroup hierarchies are mounted\n"
"                        (default $PEAKBPF_CGROUP_ROOT or /sys/fs/cgroup)\n"
"      --compare-sampler DUR[,DUR...]  how much a periodic RSS sampler at each\n"
"                        interval would miss: from the exact sum log of the tree\n"
"                        sum, over every phase (worst, median, best, chance of\n"
"                        being within 5 %), checked against a real /proc\n"
"                        sampler at the first interval (each 100us to 10m)\n"
"      --timeline FILE   write the tree sum over time (each bucket's min and\n"
"                        max, so no spike is lost; at most 4 MiB in memory for\n"
"                        any run), the window marks and the peak; the extension\n"
"                        names the format: .json (Chrome/Perfetto trace: open it\n"
"                        in ui.perfetto.dev), .csv, .svg, or .html (one page:\n"
"                        hover, drag to zoom); needs the bpf source\n"
"      --stacks FILE     write the tree's resident memory at the peak by the user\n"
"                        stack whose fault brought each page in, as folded stacks\n"
"                        (flamegraph.pl), or as speedscope JSON when FILE ends in\n"
"                        .json; a command's run or -p's, bpf, x86-64; with -i,\n"
"                        each window's at its own peak\n"
"                        (docs/stacks.md)\n"
"      --record DIR      one rank of a job (mpirun/srun peakbpf --record DIR --\n"
"                        APP): write DIR/HOST.PID.jsonl, a line per window\n"
"                        ending on wall-clock multiples of --record-interval\n"
"                        (default 10ms; 1ms to 1h), for peakbpf merge\n"
"      --helper[=PATH]   measure through peakbpf serve at PATH (default\n"
"                        $PEAKBPF_HELPER or /run/peakbpf.sock); without it,\n"
"                        a helper is used whenever that socket answers (root\n"
"                        too; unique memory and --measure unique too)\n"
"      --no-helper       load the BPF programs in this process even when a\n"
"                        helper runs\n"
"  -j, --json            write the JSON report(s) to stdout\n"
"  -o, --output FILE     write the JSON report(s) to FILE: with windows, one\n"
"                        line per window as it closes, then one for the run\n"
"  -q, --quiet           no human summary on stderr\n"
"  -v, --verbose         show libbpf's debug log (BPF loading) on stderr\n"
"      --max-tracked N   size of the kernel maps: processes and address spaces\n"
"                        tracked at once (default 16384); a full map is reported\n"
"  -h, --help            this help\n"
"  -V, --version         version\n";

static const char usage_tail[] =
"\n"
"SIZE: a number and a unit in any case: K, M, G, T or KiB ... TiB are powers\n"
"of 1024; KB, MB, GB, TB powers of 1000 (512M = 512MiB; 500MB = 5e8 bytes).\n"
"The summary goes to stderr, so COMMAND's stdout stays clean.\n"
"Exit status: COMMAND's own; 128+N if it was killed by signal N; 125 if peakbpf\n"
"failed (bad usage too); 123 if the process is not yours to measure; 126 if\n"
"COMMAND could not be executed; 127 if it was not found; 122 if it succeeded\n"
"but exceeded --max; 121 if the cgroup root was refused as unsafe (a symbolic\n"
"link; as root, not root's alone); 120 if the --cgroup, --container or --unit\n"
"does not exist; 119 if the --cgroup path is not a cgroup; 118 if --container\n"
"matches several containers; 117 if its runtime is not installed; 116 if the\n"
"--stacks FILE cannot be written.\n"
"SIGINT, SIGTERM, SIGHUP and any other signal that would end peakbpf are\n"
"passed to COMMAND (attached: they end the run), and the result is still\n"
"reported.\n"
"\n"
"The exact source (bpf) needs root, or CAP_BPF and CAP_PERFMON (kernel 5.8+),\n"
"and a kernel with BTF. Without them peakbpf says why and falls back to a\n"
"cgroup, /proc or rusage figure, labelled as what it is.\n"
"\n"
"Examples:\n"
"  peakbpf -- make -j8                     peak of a whole build\n"
"  peakbpf -p 1234 -i 1s -o w.jsonl        a service's peak, second by second\n"
"  kill -USR1 $(pidof peakbpf)             mark a phase boundary\n"
"  peakbpf --compare-sampler 100ms,1s -- ./bench   is my 100 ms sampler enough?\n"
"  peakbpf --timeline t.html -- ./bench     see the peak: open t.html\n"
"  peakbpf plot t.json -o t.svg            draw a saved timeline\n"
"  peakbpf -o peak.json -- python3 bench.py\n"
"  peakbpf --json -- ./job | jq .peak_bytes\n";

void cli_usage(FILE *out)
{
	fputs(usage_head, out);
	fputs(usage_options, out);
	fputs(runs_cli_usage, out);
	fputs(usage_tail, out);
}

static int parse_source(const char *s, enum peakbpf_source *out)
{
	static const struct {
		const char *name;
		enum peakbpf_source v;
	} names[] = {
		{ "auto", PEAKBPF_SOURCE_AUTO }, { "bpf", PEAKBPF_SOURCE_BPF }, { "cgroup", PEAKBPF_SOURCE_CGROUP },
		{ "proc", PEAKBPF_SOURCE_PROC }, { "rusage", PEAKBPF_SOURCE_RUSAGE },
	};

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if (strcmp(s, names[i].name) == 0) {
			*out = names[i].v;
			return 0;
		}
	}
	return -EINVAL;
}

/* The range each duration option takes: shorter would be work without
 * meaning (a window must outlast its own reading), longer overflows
 * nothing but is a typo. */
#define MSEC 1000000ULL
#define HOUR (3600ULL * 1000 * MSEC)
struct duration_range {
	uint64_t min, max;
	const char *text;
};
static const struct duration_range interval_range = { 10 * MSEC, 168 * HOUR, "from 10ms to 168h" };
static const struct duration_range duration_range = { MSEC, 8760 * HOUR, "from 1ms to 8760h" };
static const struct duration_range record_range = { MSEC, HOUR, "from 1ms to 1h" };
static const struct duration_range sample_range = { MSEC, HOUR, "from 1ms to 1h" };
static const struct duration_range sampler_range = { 100000ULL, 10 * 60 * 1000 * MSEC,
						     "from 100us to 10m" };

static bool bad_duration(const char *opt, const char *arg, const struct duration_range *range,
			 uint64_t *ns, char *err, size_t errlen)
{
	if (parse_duration(arg, ns)) {
		snprintf(err, errlen, "%s: '%s' is not a duration (e.g. 250ms, 2s, 1m, 1h)", opt, arg);
		return true;
	}
	if (*ns < range->min || *ns > range->max) {
		snprintf(err, errlen, "%s: '%s' is out of range: %s", opt, arg, range->text);
		return true;
	}
	return false;
}

/* "100ms,1s": up to CLI_MAX_SAMPLERS positive durations. */
static int parse_duration_list(const char *s, uint64_t *out, size_t max, size_t *n)
{
	char buf[256], *save = NULL, *item;

	*n = 0;
	if (!*s || strlen(s) >= sizeof(buf) || s[0] == ',' || strstr(s, ",,") ||
	    s[strlen(s) - 1] == ',')
		return -EINVAL;
	strcpy(buf, s);
	for (item = strtok_r(buf, ",", &save); item; item = strtok_r(NULL, ",", &save)) {
		if (*n >= max)
			return -E2BIG;
		if (parse_duration(item, &out[*n]) || out[*n] < sampler_range.min ||
		    out[*n] > sampler_range.max)
			return -EINVAL;
		(*n)++;
	}
	return *n ? 0 : -EINVAL;
}

static int parse_u32(const char *s, uint32_t min, uint32_t max, uint32_t *v)
{
	char *end;
	unsigned long long n;

	if (!s || !*s || *s == '-' || *s == '+')
		return -EINVAL;
	errno = 0;
	n = strtoull(s, &end, 10);
	if (errno || *end)
		return errno == ERANGE ? -ERANGE : -EINVAL;
	if (n < min || n > max)
		return -ERANGE;
	*v = (uint32_t)n;
	return 0;
}

/* Where a letter means something else in hyperfine: what peakbpf's flag
 * for hyperfine's meaning is, for the error about arg ("" when arg does
 * not look like hyperfine's). */
static const char *hyperfine_hint(int c, const char *arg)
{
	static const char *const styles[] = { "auto", "basic", "full", "nocolor", "color", "none" };
	static const char *const units[] = { "microsecond", "millisecond", "second" };

	switch (c) {
	case 'p':
		return *arg >= '0' && *arg <= '9' ? "" :
		       " (-p is --pid here: for hyperfine's -p, a command before each run, write "
		       "--prepare CMD)";
	case 's':
		for (size_t i = 0; i < sizeof(styles) / sizeof(styles[0]); i++)
			if (!strcmp(arg, styles[i]))
				return " (-s is --source here; hyperfine's --style has no equivalent: the "
				       "progress bar shows on a terminal, -q silences the summary)";
		return "";
	case 'u':
		for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++)
			if (!strcmp(arg, units[i]))
				return " (-u is --user here; hyperfine's --time-unit has no equivalent: "
				       "times are in seconds)";
		return "";
	default:
		return "";
	}
}

/* --cgroup, --container, --unit: one of them, once (target.c resolves it). */
static enum cli_action parse_target(int c, struct options *o, char *err, size_t errlen)
{
	if (!*optarg || o->target) {
		snprintf(err, errlen, "%s: give one cgroup, container or unit to measure",
			 c == OPT_CGROUP ? "--cgroup" : c == OPT_CONTAINER ? "--container" : "--unit");
		return CLI_ERROR;
	}
	o->target = optarg;
	o->target_kind = c == OPT_CGROUP ? TARGET_CGROUP : c == OPT_CONTAINER ? TARGET_CONTAINER : TARGET_UNIT;
	return CLI_RUN;
}

/* An option with nothing to check, or getopt's complaint. */
static enum cli_action parse_flag(int c, char **argv, struct options *o, char *err, size_t errlen)
{
	switch (c) {
	case 'o':
		o->output = optarg;
		return CLI_RUN;
	case 'u':
		o->user = optarg;
		if (!*hyperfine_hint('u', optarg))
			return CLI_RUN;
		snprintf(err, errlen, "--user: '%s' is a time unit, not a user%s", optarg,
			 hyperfine_hint('u', optarg));
		return CLI_ERROR;
	case OPT_CGROUP_ROOT:
		if (!*optarg) {
			snprintf(err, errlen, "--cgroup-root '': give the directory where cgroup "
				 "hierarchies are mounted (e.g. /sys/fs/cgroup), or leave the option out");
			return CLI_ERROR;
		}
		o->cgroup_root = optarg;
		return CLI_RUN;
	case OPT_CGROUP:
	case OPT_CONTAINER:
	case OPT_UNIT:
		return parse_target(c, o, err, errlen);
	case OPT_HELPER:
		o->use_helper = true;
		o->helper_path = optarg;
		return CLI_RUN;
	case OPT_NO_HELPER:
		o->no_helper = true;
		return CLI_RUN;
	case OPT_MEASURE:
		if (!strcmp(optarg, "rss") || !strcmp(optarg, "unique")) {
			o->runs.measure_unique = o->measure_unique = optarg[0] == 'u';
			return CLI_RUN;
		}
		snprintf(err, errlen, "--measure: '%s' is not one of rss, unique", optarg);
		return CLI_ERROR;
	case OPT_TIMELINE:
		if (o->timeline) {
			snprintf(err, errlen, "--timeline: given twice ('%s', '%s'): write the .json or .csv, "
				 "then draw the other with peakbpf plot FILE -o OUT", o->timeline, optarg);
			return CLI_ERROR;
		}
		o->timeline = optarg;
		if (timeline_format_of(optarg) != TL_FORMAT_NONE)
			return CLI_RUN;
		snprintf(err, errlen, "--timeline: '%s': the extension names the format: .json, .csv, .svg or .html", optarg);
		return CLI_ERROR;
	case OPT_RECORD:
		o->record_dir = optarg;
		if (*optarg)
			return CLI_RUN;
		snprintf(err, errlen, "--record: empty directory name");
		return CLI_ERROR;
	case 'j':
		o->json = true;
		return CLI_RUN;
	case 'q':
		o->quiet = true;
		return CLI_RUN;
	case 'v':
		o->verbose = true;
		return CLI_RUN;
	case 'h':
		return CLI_HELP;
	case 'V':
		return CLI_VERSION;
	case ':':
		snprintf(err, errlen, "option '%s' needs a value", argv[optind - 1]);
		return CLI_ERROR;
	default:
		if (optopt && optopt != '?')
			snprintf(err, errlen, "unknown option '-%c' (see peakbpf --help)", optopt);
		else
			snprintf(err, errlen, "unknown option '%s' (see peakbpf --help)", argv[optind - 1]);
		return CLI_ERROR;
	}
}

/* -i DURATION, or, as in hyperfine, -i (--ignore-failure) when what
 * follows is an option, "--" or a word that is no number: then that word
 * is read again. */
static enum cli_action parse_interval(char **argv, struct options *o, char *err, size_t errlen)
{
	if (optarg == argv[optind - 1] && (*optarg == '-' || !(*optarg >= '0' && *optarg <= '9'))) {
		o->runs.ignore_failure = true;
		optind--;
		return CLI_RUN;
	}
	return bad_duration("--interval", optarg, &interval_range, &o->interval_ns, err, errlen) ?
	       CLI_ERROR : CLI_RUN;
}

/* One option from getopt_long: CLI_RUN lets parsing go on. */
static enum cli_action parse_option(int c, char **argv, struct options *o, char *err, size_t errlen)
{
	enum cli_action action;
	uint32_t top;
	int err_code;

	switch (c) {
	case 'p':
		err_code = parse_pid_list(optarg, o->pids, CLI_MAX_PIDS, &o->n_pids);
		if (!err_code)
			return CLI_RUN;
		snprintf(err, errlen, "-p: '%s': %s%s", optarg,
			 err_code == -EEXIST ? "a PID is given twice" :
			 err_code == -E2BIG ? "too many PIDs (at most 64)" :
			 "PIDs are positive numbers, separated by commas", hyperfine_hint('p', optarg));
		return CLI_ERROR;
	case 'i':
		return parse_interval(argv, o, err, errlen);
	case OPT_STACKS:
		return stacks_cli_parse(o->stacks = optarg, err, errlen);
	case 'd':
		return bad_duration("--duration", optarg, &duration_range, &o->duration_ns, err, errlen) ?
		       CLI_ERROR : CLI_RUN;
	case OPT_RECORD_INTERVAL:
		return bad_duration("--record-interval", optarg, &record_range, &o->record_interval_ns,
				    err, errlen) ?
		       CLI_ERROR : CLI_RUN;
	case OPT_SAMPLE_INTERVAL:
		return bad_duration("--sample-interval", optarg, &sample_range, &o->sample_interval_ns,
				    err, errlen) ?
		       CLI_ERROR : CLI_RUN;
	case 's':
		if (!parse_source(optarg, &o->source))
			return CLI_RUN;
		snprintf(err, errlen, "--source: '%s' is not one of auto, bpf, cgroup, proc, rusage%s", optarg,
			 hyperfine_hint('s', optarg));
		return CLI_ERROR;
	case 't':
		if (parse_u32(optarg, 0, 32, &top)) {
			snprintf(err, errlen, "--top: '%s' is not a number from 0 to 32", optarg);
			return CLI_ERROR;
		}
		o->top = top;
		return CLI_RUN;
	case OPT_COMPARE_SAMPLER:
		if (!parse_duration_list(optarg, o->samplers_ns, CLI_MAX_SAMPLERS, &o->n_samplers))
			return CLI_RUN;
		snprintf(err, errlen, "--compare-sampler: '%s' is not a list of up to 8 "
			 "durations, each %s (e.g. 100ms,1s)", optarg, sampler_range.text);
		return CLI_ERROR;
	case OPT_MAX_TRACKED:
		if (!parse_u32(optarg, 16, 1U << 22, &o->max_tracked))
			return CLI_RUN;
		snprintf(err, errlen, "--max-tracked: '%s' is not a number from 16 to 4194304", optarg);
		return CLI_ERROR;
	default:
		if (runs_cli_option(c, argv, o, err, errlen, &action))
			return action;
		return parse_flag(c, argv, o, err, errlen);
	}
}

/* Options that do not go together, and the command after them. */
static enum cli_action check_options(int argc, char **argv, struct options *o, char *err, size_t errlen)
{
	bool done;

	if (o->output && !*o->output) {
		snprintf(err, errlen, "--output: empty file name");
		return CLI_ERROR;
	}
	if (o->n_samplers && o->source != PEAKBPF_SOURCE_AUTO && o->source != PEAKBPF_SOURCE_BPF) {
		snprintf(err, errlen, "--compare-sampler needs the bpf source (the exact sum log)");
		return CLI_ERROR;
	}
	if (o->timeline && o->source != PEAKBPF_SOURCE_AUTO && o->source != PEAKBPF_SOURCE_BPF) {
		snprintf(err, errlen, "--timeline needs the bpf source (the exact sum log)");
		return CLI_ERROR;
	}
	if (o->record_interval_ns && !o->record_dir) {
		snprintf(err, errlen, "--record-interval needs --record DIR");
		return CLI_ERROR;
	}
	if (o->record_dir && o->interval_ns) {
		snprintf(err, errlen, "--record closes a window every --record-interval: -i does not go with it");
		return CLI_ERROR;
	}
	if (o->record_dir && !o->record_interval_ns)
		o->record_interval_ns = RECORD_INTERVAL_DEFAULT_NS;
	if (o->use_helper && o->no_helper) {
		snprintf(err, errlen, "--helper and --no-helper: choose one");
		return CLI_ERROR;
	}
	if (o->use_helper && o->source != PEAKBPF_SOURCE_AUTO && o->source != PEAKBPF_SOURCE_BPF) {
		snprintf(err, errlen, "--helper gives the bpf source: use it with --source auto or bpf");
		return CLI_ERROR;
	}
	if (runs_cli_check(argc, argv, o, err, errlen, &done) != CLI_RUN || stacks_cli_check(o, argc - optind, err, errlen))
		return CLI_ERROR;
	if (o->record_dir && runs_wanted(&o->runs)) {
		snprintf(err, errlen, "--record is one rank's run: it does not go with -r, -c or a sweep");
		return CLI_ERROR;
	}
	if (done)
		return CLI_RUN;         /* the commands came with -c */
	if (o->target) {
		if (o->n_pids || optind < argc) {
			snprintf(err, errlen, "a cgroup, container or unit target goes alone: not with -p or a command");
			return CLI_ERROR;
		}
		if (o->user || o->measure_unique) {
			snprintf(err, errlen, "%s is for a command peakbpf runs, not for a cgroup target",
				 o->user ? "--user" : "--measure unique");
			return CLI_ERROR;
		}
		return CLI_RUN;
	}
	if (o->n_pids) {
		if (o->user) {
			snprintf(err, errlen, "--user is for a command peakbpf runs, not for -p");
			return CLI_ERROR;
		}
		if (optind < argc) {
			snprintf(err, errlen, "-p and a command do not go together: attach (-p) or run a command");
			return CLI_ERROR;
		}
		return CLI_RUN;
	}
	if (optind >= argc) {
		snprintf(err, errlen, "no command given: peakbpf [OPTIONS] -- COMMAND [ARG...], or -p PID");
		return CLI_ERROR;
	}
	if (o->duration_ns) {
		snprintf(err, errlen, "--duration is for attach mode (-p); a command's run ends when it exits");
		return CLI_ERROR;
	}
	o->command = &argv[optind];
	return CLI_RUN;
}


static enum cli_action parse_options(int argc, char **argv, struct options *o, char *err, size_t errlen)
{
	enum cli_action action;
	int c;

	/* '+': options stop at the command, so "peakbpf ls -l" works. */
	while ((c = getopt_long(argc, argv, "+:o:jqvhVp:i:d:s:t:u:" RUNS_SHORT_OPTIONS, long_options, NULL)) != -1) {
		action = parse_option(c, argv, o, err, errlen);
		if (action != CLI_RUN)
			return action;
	}
	return CLI_RUN;
}

enum cli_action cli_parse(int argc, char **argv, struct options *o,
			  char *err, size_t errlen)
{
	enum cli_action action;

	memset(o, 0, sizeof(*o));
	o->top = 5;
	optind = 0;             /* full re-initialisation (glibc) */
	opterr = 0;
	action = parse_options(argc, argv, o, err, errlen);
	if (action == CLI_RUN)
		action = runs_cli_options_among_strings(argc, argv, o, err, errlen, parse_options);
	if (action != CLI_RUN)
		return action;
	return check_options(argc, argv, o, err, errlen);
}
