# SPDX-License-Identifier: MIT
# peakbpf: exact peak memory of a process tree, measured in the kernel.
OUTPUT ?= .output
PREFIX ?= /usr/local
DESTDIR ?=
CLANG ?= clang
BPFTOOL ?= bpftool
CC ?= gcc
ARCH := $(shell uname -m | sed -e 's/x86_64/x86/' -e 's/aarch64/arm64/')
VERSION := 0.4.0

LIBBPF_CFLAGS := $(shell pkg-config --cflags libbpf 2>/dev/null)
LIBBPF_LIBS := $(shell pkg-config --libs libbpf 2>/dev/null || echo -lbpf -lelf -lz)
# peakbpf agent's HTTP side (src/agent/agent_http.c): Debian's libmicrohttpd-dev.
MHD_LIBS := $(shell pkg-config --libs libmicrohttpd 2>/dev/null || echo -lmicrohttpd)
WARN := -Wall -Wextra
CFLAGS ?= -g -O2
ALL_CFLAGS := -std=gnu11 -D_GNU_SOURCE $(CFLAGS) $(WARN) $(LIBBPF_CFLAGS) \
	-DPEAKBPF_VERSION='"$(VERSION)"' -MMD -MP
# libpeakbpf: every library object is PIC (the shared library links the same
# ones); only the public API (PEAKBPF_API) is exported from the .so.
ALL_CFLAGS += -fPIC -fvisibility=hidden
LIB_SOVERSION := $(firstword $(subst ., ,$(VERSION)))
LIB_SONAME := libpeakbpf.so.$(LIB_SOVERSION)
LIBDIR ?= $(PREFIX)/lib
INCLUDEDIR ?= $(PREFIX)/include
MANDIR ?= $(PREFIX)/share/man
SYSTEMDUNITDIR ?= $(PREFIX)/lib/systemd/system
PYTHON ?= /usr/bin/python3
# Where PYTHON imports from (tools/python-dir.py): its venv's site-packages;
# the dist-packages Debian's python3 looks in under PREFIX (/usr/lib/python3/
# dist-packages for PREFIX=/usr); with the default PREFIX, another python's
# own site-packages. make install says where, and whether PYTHON looks there.
PYTHON_WHERE = $(shell $(PYTHON) tools/python-dir.py $(PREFIX) $(if $(filter file,$(origin PREFIX)),default) 2>/dev/null)
PYTHONDIR ?= $(firstword $(PYTHON_WHERE))
BPF_CFLAGS := -g -O2 -target bpf -mcpu=v3 -D__TARGET_ARCH_$(ARCH) $(WARN) -Wno-unused-parameter \
	-Ivmlinux/$(ARCH) -Ibpf

# Quiet kernel-style output; V=1 shows full commands.
ifeq ($(V),1)
Q =
msg =
else
Q = @
msg = @printf '  %-8s %s\n' "$(1)" "$(2)";
endif

# Folders are layers (docs/design.md, "Layers"): each folder's sources are
# compiled with the include path of their layer only, so a file that uses a
# layer it may not fails to compile; make check-layers checks every include
# (the compiler's dependency lists) against the rules table in design.md.
# One source a line: branches that add sources then merge cleanly.
BASE_SRCS := \
	src/base/units.c \
	src/base/json.c \
	src/base/status.c \
	src/base/fileutil.c \
	src/base/stats.c \
	src/base/sampler_model.c \
	src/base/host.c \
	src/base/bpf_refusal.c \
	src/base/hugetlb.c
TIMELINE_SRCS := \
	src/timeline/timeline.c \
	src/timeline/timeline_export.c \
	src/timeline/timeline_plot.c \
	src/timeline/timeline_load.c \
	src/timeline/sum_record.c
CORE_SRCS := \
	src/lib/core/figure.c \
	src/lib/core/gap.c
KERNEL_SRCS := \
	src/lib/kernel/tracker_tree.c \
	src/lib/kernel/tracker_load.c \
	src/lib/kernel/tree_maps.c \
	src/lib/kernel/kfeatures.c \
	src/lib/kernel/holders.c \
	src/lib/kernel/unique.c \
	src/lib/kernel/unique_hook.c \
	src/lib/kernel/oom.c \
	src/lib/kernel/cgsum.c
SOURCES_SRCS := \
	src/lib/sources/helper_proto.c \
	src/lib/sources/source_helper.c \
	src/lib/sources/source_bpf.c \
	src/lib/sources/cgroup_parse.c \
	src/lib/sources/cgroup_fs.c \
	src/lib/sources/cgroup_own.c \
	src/lib/sources/source_cgroup.c \
	src/lib/sources/source_proc.c \
	src/lib/sources/source_rusage.c
LIBTOP_SRCS := \
	src/lib/report.c \
	src/lib/session.c \
	src/lib/session_open.c \
	src/lib/libpeakbpf.c \
	src/lib/libpeakbpf_figure.c \
	src/lib/libpeakbpf_oom.c \
	src/lib/oom_victim.c
HELPER_SRCS := \
	src/helper/serve.c \
	src/helper/serve_client.c \
	src/helper/serve_tree.c \
	src/helper/serve_closer.c \
	src/helper/serve_record.c \
	src/helper/serve_sums.c \
	src/helper/serve_log.c \
	src/helper/serve_unique.c \
	src/helper/fdcheck.c \
	src/helper/pidns.c
AGENT_SRCS := \
	src/agent/agent.c \
	src/agent/agent_opts.c \
	src/agent/agent_state.c \
	src/agent/agent_metrics.c \
	src/agent/agent_scrape.c \
	src/agent/agent_http.c \
	src/agent/agent_oom.c \
	src/agent/agent_oom_record.c \
	src/agent/agent_oom_cli.c \
	src/agent/cg_labels.c
CLITOP_SRCS := \
	src/cli/main.c \
	src/cli/cli.c \
	src/cli/spawn.c \
	src/cli/identity.c \
	src/cli/command.c \
	src/cli/output.c \
	src/cli/attach.c \
	src/cli/run_report.c \
	src/cli/run.c \
	src/cli/run_emit.c \
	src/cli/plot.c
HARNESS_SRCS := \
	src/cli/harness/runs_cli.c \
	src/cli/harness/bench.c \
	src/cli/harness/runs.c \
	src/cli/harness/runs_progress.c \
	src/cli/harness/shell_words.c \
	src/cli/harness/export_ci.c \
	src/cli/harness/budget.c \
	src/cli/harness/sweep.c \
	src/cli/harness/fit.c \
	src/cli/harness/export.c \
	src/cli/harness/export_text.c \
	src/cli/harness/fit_report.c
MERGE_SRCS := \
	src/cli/merge/rank_file.c \
	src/cli/merge/merge.c \
	src/cli/merge/merge_load.c \
	src/cli/merge/merge_cli.c

# Each layer's include path: its own folder and the folders it may use.
INC_base := -Isrc/base
INC_timeline := -Isrc/timeline $(INC_base)
INC_core := -Isrc/lib/core $(INC_base)
INC_kernel := -Isrc/lib/kernel $(INC_core) -Ibpf -I$(OUTPUT)
INC_sources := -Isrc/lib/sources $(INC_kernel)
INC_lib := -Isrc/lib -Iinclude $(INC_sources) $(INC_timeline)
INC_helper := -Isrc/helper $(INC_lib)
INC_agent := -Isrc/agent $(INC_lib)
INC_merge := -Isrc/cli/merge $(INC_timeline)
# The harness reads the parsed options (src/cli/cli.h, checked by check-layers).
INC_harness := -Isrc/cli/harness -Isrc/cli -Iinclude $(INC_timeline)
# The CLI: the public API, the harness, merge; of the helper, serve.h alone.
INC_cli := -Isrc/cli -Iinclude -Isrc/cli/harness -Isrc/cli/merge -Isrc/helper -Isrc/agent $(INC_timeline)
# Tests see every layer.
INC_all := $(sort $(INC_lib) $(INC_helper) $(INC_agent) $(INC_cli))

# LIB_COMMON_SRCS: the pure helpers (base, timeline) that the library and
# the CLI each link; LIB_SRCS: the library itself, whose internals only it
# (and serve.c, the helper behind it) uses.
LIB_COMMON_SRCS := $(BASE_SRCS) $(TIMELINE_SRCS)
LIB_SRCS := $(LIB_COMMON_SRCS) $(CORE_SRCS) $(KERNEL_SRCS) $(SOURCES_SRCS) $(LIBTOP_SRCS)
# The CLI: built on libpeakbpf's public API only (make check-cli-api), but
# for serve.c, the helper daemon, which is the bpf source's other side.
CLI_API_SRCS := $(CLITOP_SRCS) $(HARNESS_SRCS) $(MERGE_SRCS)
CLI_SRCS := $(CLI_API_SRCS) $(LIB_COMMON_SRCS) $(HELPER_SRCS) $(AGENT_SRCS)
obj = $(patsubst %.c,$(OUTPUT)/%.o,$(1))
LIB_OBJS := $(call obj,$(LIB_SRCS))
CLI_OBJS := $(call obj,$(CLI_SRCS))
CLI_API_OBJS := $(call obj,$(CLI_API_SRCS) $(LIB_COMMON_SRCS))
ALL_OBJS := $(sort $(LIB_OBJS) $(CLI_OBJS))
UNIT_TESTS := units json status cli report figure sources sampler_model spawn holders identity \
	fit stats sweep budget export runs_cli timeline timeline_export \
	merge helper_proto shell_words host pidns serve_sums unique_table fdcheck \
	bpf_refusal hugetlb cg_labels agent_state agent_opts
UNIT_BINS := $(addprefix $(OUTPUT)/tests/test_,$(UNIT_TESTS))
UNIT_ASAN_BINS := $(addsuffix -asan,$(UNIT_BINS))
# Pure-logic sources each unit test links (no BPF, no root).
test_units_SRCS := src/base/units.c
test_json_SRCS := src/base/json.c
test_status_SRCS := src/base/status.c
test_cli_SRCS := src/cli/cli.c src/cli/harness/runs_cli.c src/cli/harness/sweep.c src/cli/harness/fit.c \
	src/base/stats.c src/base/units.c src/timeline/timeline.c
test_sampler_model_SRCS := src/base/sampler_model.c
test_timeline_SRCS := src/timeline/timeline.c
test_timeline_export_SRCS := src/timeline/timeline.c src/timeline/timeline_export.c src/timeline/timeline_plot.c src/timeline/timeline_load.c \
	src/base/json.c src/base/units.c src/base/fileutil.c
test_holders_SRCS :=
test_sources_SRCS := src/lib/sources/cgroup_parse.c src/lib/sources/cgroup_fs.c src/lib/sources/cgroup_own.c src/lib/sources/source_cgroup.c src/lib/sources/source_proc.c src/lib/sources/source_rusage.c src/base/fileutil.c src/base/hugetlb.c \
	tests/unit/cgroup_fixture.c
test_report_SRCS := src/lib/report.c src/cli/run_report.c src/lib/core/figure.c src/lib/core/gap.c src/base/json.c src/base/units.c src/base/host.c src/base/hugetlb.c \
	src/base/fileutil.c
test_figure_SRCS := src/lib/core/figure.c src/lib/core/gap.c
test_spawn_SRCS := src/cli/spawn.c src/base/status.c src/cli/identity.c
test_identity_SRCS := src/cli/identity.c
test_fit_SRCS := src/cli/harness/fit.c src/base/stats.c
test_stats_SRCS := src/base/stats.c
test_sweep_SRCS := src/cli/harness/sweep.c src/cli/harness/fit.c src/base/stats.c
test_budget_SRCS := src/cli/harness/budget.c src/cli/harness/bench.c src/base/stats.c src/base/units.c src/base/status.c
test_export_SRCS := src/cli/harness/export.c src/cli/harness/export_text.c src/cli/harness/fit_report.c \
	src/cli/harness/export_ci.c $(test_budget_SRCS) src/cli/harness/sweep.c src/cli/harness/fit.c \
	src/base/json.c src/base/fileutil.c
test_runs_cli_SRCS := $(test_cli_SRCS)
test_merge_SRCS := src/cli/merge/merge.c src/cli/merge/merge_load.c src/cli/merge/rank_file.c src/base/json.c \
	src/base/fileutil.c
test_helper_proto_SRCS := src/lib/sources/helper_proto.c
test_shell_words_SRCS := src/cli/harness/shell_words.c
test_host_SRCS := src/base/host.c src/base/hugetlb.c src/base/fileutil.c
test_pidns_SRCS := src/helper/pidns.c src/base/fileutil.c
test_serve_sums_SRCS := src/helper/serve_sums.c
test_unique_table_SRCS :=
test_fdcheck_SRCS := src/helper/fdcheck.c src/base/fileutil.c
test_bpf_refusal_SRCS := src/base/bpf_refusal.c src/base/fileutil.c
test_hugetlb_SRCS := src/base/hugetlb.c src/base/fileutil.c
test_cg_labels_SRCS := src/agent/cg_labels.c
test_agent_state_SRCS := src/agent/agent_state.c src/agent/agent_metrics.c src/agent/cg_labels.c
test_agent_opts_SRCS := src/agent/agent_opts.c src/base/units.c

.DELETE_ON_ERROR:
.PHONY: all deps check unit unit-asan fuzz integration demo bench vmtest clean install uninstall lib lib-test \
	python-test check-cli-api check-layers check-size check-abi check-man check-unit check-deploy soak

all: $(OUTPUT)/peakbpf $(OUTPUT)/workload $(OUTPUT)/hostile_client $(OUTPUT)/unique_trees lib

deps:
	$(Q)tools/install-deps.sh

$(OUTPUT) $(OUTPUT)/tests:
	$(Q)mkdir -p $@

# One BPF object, so that libbpf parses the kernel's BTF once: each BPF unit
# is compiled alone, then statically linked (bpftool gen object); the one
# skeleton is generated from the linked object.
BPF_UNITS := tracker unique oom cgsum

$(OUTPUT)/bpf:
	$(Q)mkdir -p $@

$(OUTPUT)/bpf/tracker.bpf.o: bpf/tracker.bpf.c bpf/tracker.h bpf/compat.bpf.h bpf/percpu_sum.bpf.h \
	bpf/tracker_maps.bpf.h bpf/tracker_tree.bpf.h bpf/tracker_event.bpf.h | $(OUTPUT)/bpf
# The tree's unique memory (issue 17): its program loads only in command mode.
$(OUTPUT)/bpf/unique.bpf.o: bpf/unique.bpf.c bpf/unique.h | $(OUTPUT)/bpf
# The OOM flight recorder (issue 34): every OOM victim, into its own ring.
$(OUTPUT)/bpf/oom.bpf.o: bpf/oom.bpf.c bpf/oom.h bpf/tracker.h bpf/compat.bpf.h | $(OUTPUT)/bpf
# Every cgroup's summed RSS for peakbpf agent (issue 34): off unless it asks.
$(OUTPUT)/bpf/cgsum.bpf.o: bpf/cgsum.bpf.c bpf/cgsum.h bpf/tracker.h bpf/compat.bpf.h | $(OUTPUT)/bpf

$(OUTPUT)/bpf/%.bpf.o: bpf/%.bpf.c | $(OUTPUT)/bpf
	$(call msg,BPF,$@)
	$(Q)$(CLANG) $(BPF_CFLAGS) -c $< -o $@

$(OUTPUT)/tracker.bpf.o: $(patsubst %,$(OUTPUT)/bpf/%.bpf.o,$(BPF_UNITS))
	$(call msg,BPF-LINK,$@)
	$(Q)$(BPFTOOL) gen object $@ $^

$(OUTPUT)/tracker.skel.h: $(OUTPUT)/tracker.bpf.o
	$(call msg,GEN-SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< > $@

# Userspace objects that include the skeleton must wait for it.
$(call obj,$(KERNEL_SRCS)): $(OUTPUT)/tracker.skel.h

# A layer's objects get its include path (the more specific pattern wins).
$(OUTPUT)/src/base/%.o: LAYER_INC = $(INC_base)
$(OUTPUT)/src/timeline/%.o: LAYER_INC = $(INC_timeline)
$(OUTPUT)/src/lib/%.o: LAYER_INC = $(INC_lib)
$(OUTPUT)/src/lib/core/%.o: LAYER_INC = $(INC_core)
$(OUTPUT)/src/lib/kernel/%.o: LAYER_INC = $(INC_kernel)
$(OUTPUT)/src/lib/sources/%.o: LAYER_INC = $(INC_sources)
$(OUTPUT)/src/helper/%.o: LAYER_INC = $(INC_helper)
$(OUTPUT)/src/agent/%.o: LAYER_INC = $(INC_agent)
$(OUTPUT)/src/cli/%.o: LAYER_INC = $(INC_cli)
$(OUTPUT)/src/cli/harness/%.o: LAYER_INC = $(INC_harness)
$(OUTPUT)/src/cli/merge/%.o: LAYER_INC = $(INC_merge)

$(OUTPUT)/src/%.o: src/%.c
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(ALL_CFLAGS) $(LAYER_INC) -c $< -o $@

# Every include of every object against the layer rules of docs/design.md.
check-layers: $(ALL_OBJS)
	$(call msg,CHECK,layers: every include against docs/design.md)
	$(Q)tools/check-layers.py docs/design.md $(ALL_OBJS:.o=.d)

# Linked against the static library: what the CLI objects do not define
# comes from libpeakbpf.a (its public API; serve.c's, the internals).
$(OUTPUT)/peakbpf: $(CLI_OBJS) $(OUTPUT)/libpeakbpf.a
	$(call msg,BINARY,$@)
	$(Q)$(CC) $(CFLAGS) $(CLI_OBJS) $(OUTPUT)/libpeakbpf.a $(LIBBPF_LIBS) $(MHD_LIBS) -pthread -o $@

# libpeakbpf.so exports the header's calls, each named in the map, whose
# newest node is VERSION's major.minor.
check-abi: $(OUTPUT)/libpeakbpf.so
	$(call msg,CHECK,libpeakbpf's ABI against the header and VERSION)
	$(Q)tools/check-abi.sh include/peakbpf/peakbpf.h src/lib/libpeakbpf.map $(OUTPUT)/libpeakbpf.so $(VERSION)

# No file over 600 lines and no function over 80 in src/ and bpf/.
check-size:
	$(call msg,CHECK,sizes of src/ and bpf/)
	$(Q)tools/check-size.py --exceptions docs/design.md $(wildcard src/*/*.[ch] src/*/*/*.[ch] bpf/*.[ch])

# The CLI stays on the public API: check-layers keeps its sources off the
# library's headers, and every symbol the CLI's objects take from
# libpeakbpf.a must be a peakbpf_* one.
check-cli-api: $(CLI_API_OBJS) $(OUTPUT)/libpeakbpf.a
	$(call msg,CHECK,CLI uses only include/peakbpf/peakbpf.h)
	$(Q)tools/check-cli-api.sh "$(OUTPUT)/libpeakbpf.a" $(CLI_API_OBJS)

lib: $(OUTPUT)/libpeakbpf.a $(OUTPUT)/libpeakbpf.so $(OUTPUT)/libpeakbpf.pc

$(OUTPUT)/libpeakbpf.a: $(LIB_OBJS)
	$(call msg,AR,$@)
	$(Q)rm -f $@ && $(AR) rcs $@ $^

$(OUTPUT)/libpeakbpf.so.$(VERSION): $(LIB_OBJS) src/lib/libpeakbpf.map
	$(call msg,LIB,$@)
	$(Q)$(CC) $(CFLAGS) -shared -Wl,-soname,$(LIB_SONAME) -Wl,--version-script=src/lib/libpeakbpf.map \
		-Wl,--no-undefined $(LIB_OBJS) $(LIBBPF_LIBS) -pthread -o $@

$(OUTPUT)/libpeakbpf.so: $(OUTPUT)/libpeakbpf.so.$(VERSION)
	$(Q)ln -sf libpeakbpf.so.$(VERSION) $(OUTPUT)/$(LIB_SONAME)
	$(Q)ln -sf $(LIB_SONAME) $@

# The build tree's (make install writes the installed one, for its PREFIX).
$(OUTPUT)/libpeakbpf.pc: libpeakbpf.pc.in Makefile | $(OUTPUT)
	$(call msg,GEN,$@)
	$(Q)sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@LIBDIR@|$(LIBDIR)|' -e 's|@INCLUDEDIR@|$(INCLUDEDIR)|' \
		-e 's|@VERSION@|$(VERSION)|' $< > $@

# Clients that try to stall or leak `peakbpf serve` (test_serve_hostile.sh).
$(OUTPUT)/hostile_client: tests/integration/hostile_client.c tests/send_fds.h src/lib/sources/helper_proto.c \
		src/lib/sources/helper_proto.h | $(OUTPUT)
	$(call msg,BINARY,$@)
	$(Q)$(CC) -std=gnu11 -D_GNU_SOURCE $(CFLAGS) $(WARN) $(INC_all) $< src/lib/sources/helper_proto.c -o $@

# Two trees of one load, each with its unique memory (test_unique.sh): the
# library's internals, from the static library.
$(OUTPUT)/unique_trees: tests/integration/unique_trees.c $(OUTPUT)/libpeakbpf.a | $(OUTPUT)
	$(call msg,BINARY,$@)
	$(Q)$(CC) -std=gnu11 -D_GNU_SOURCE $(CFLAGS) $(WARN) $(INC_all) $< $(OUTPUT)/libpeakbpf.a \
		$(LIBBPF_LIBS) -pthread -o $@

# Static, so it also runs inside the kernel-matrix VMs' initramfs.
$(OUTPUT)/workload: tools/workload.c | $(OUTPUT)
	$(call msg,BINARY,$@)
	$(Q)$(CC) -std=gnu11 $(CFLAGS) $(WARN) -static -pthread $< -o $@

# Each test links the sources it names in test_<name>_SRCS: they are
# prerequisites too (second expansion), so editing one rebuilds the test.
.SECONDEXPANSION:
$(OUTPUT)/tests/test_%: tests/unit/test_%.c $$(test_$$*_SRCS) | $(OUTPUT)/tests
	$(call msg,TEST-CC,$@)
	$(Q)$(CC) -std=gnu11 -D_GNU_SOURCE $(CFLAGS) $(WARN) $(INC_all) -MMD -MP $< $(test_$*_SRCS) -lcmocka -pthread -o $@

$(OUTPUT)/tests/test_%-asan: tests/unit/test_%.c $$(test_$$*_SRCS) | $(OUTPUT)/tests
	$(call msg,ASAN-CC,$@)
	$(Q)$(CC) -std=gnu11 -D_GNU_SOURCE -g -O1 $(WARN) -fsanitize=address,undefined -fno-sanitize-recover=all \
		-fno-omit-frame-pointer $(INC_all) -MMD -MP $< $(test_$*_SRCS) -lcmocka -pthread -o $@

# libFuzzer targets (tests/fuzz): the parsers of sizes, durations, PIDs,
# the command line, JSON escaping, /proc and cgroupfs text, --record files, the timelines
# peakbpf plot reads, the helper's request handler. make fuzz runs
# each for FUZZ_SECONDS from the committed seeds (tests/fuzz/corpus/NAME);
# what it finds new stays in $(OUTPUT)/fuzz/corpus-NAME.
FUZZ_TARGETS := units cli json procfs record timeline serve
FUZZ_BINS := $(addprefix $(OUTPUT)/fuzz/fuzz_,$(FUZZ_TARGETS))
FUZZ_SECONDS ?= 6
fuzz_units_SRCS := src/base/units.c
fuzz_cli_SRCS = $(test_cli_SRCS)
fuzz_json_SRCS := src/base/json.c
fuzz_record_SRCS := src/cli/merge/merge.c src/cli/merge/merge_load.c
fuzz_procfs_SRCS := src/lib/sources/source_proc.c src/lib/sources/cgroup_parse.c src/base/fileutil.c src/base/hugetlb.c \
	src/base/bpf_refusal.c
fuzz_timeline_SRCS = $(test_timeline_export_SRCS)
# The helper's request handler, its BPF side stubbed in the target.
fuzz_serve_SRCS := src/helper/serve_tree.c src/helper/serve_record.c src/helper/serve_sums.c src/helper/pidns.c \
	src/helper/serve_unique.c \
	src/lib/sources/helper_proto.c src/base/fileutil.c

$(OUTPUT)/fuzz:
	$(Q)mkdir -p $@

$(OUTPUT)/fuzz/fuzz_%: tests/fuzz/fuzz_%.c tests/fuzz/fuzz.h $$(fuzz_$$*_SRCS) | $(OUTPUT)/fuzz
	$(call msg,FUZZ-CC,$@)
	$(Q)$(CLANG) -std=gnu11 -D_GNU_SOURCE -g -O1 $(WARN) -fsanitize=fuzzer,address,undefined \
		-fno-sanitize-recover=all $(INC_all) $< $(fuzz_$*_SRCS) -o $@

fuzz: $(FUZZ_BINS)
	$(Q)for t in $(FUZZ_TARGETS); do \
		mkdir -p $(OUTPUT)/fuzz/corpus-$$t; \
		printf '  %-8s %s\n' FUZZ "$$t ($(FUZZ_SECONDS) s)"; \
		$(OUTPUT)/fuzz/fuzz_$$t -max_total_time=$(FUZZ_SECONDS) -close_fd_mask=3 -print_final_stats=0 \
			$(OUTPUT)/fuzz/corpus-$$t tests/fuzz/corpus/$$t >$(OUTPUT)/fuzz/$$t.log 2>&1 || \
			{ tail -n 40 $(OUTPUT)/fuzz/$$t.log; exit 1; }; \
		grep -h '^Done' $(OUTPUT)/fuzz/$$t.log | sed 's/^/           /'; \
	done

unit: $(UNIT_BINS)
	$(Q)for t in $^; do $$t || exit 1; done

unit-asan: $(UNIT_ASAN_BINS)
	$(Q)for t in $^; do ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 $$t || exit 1; done

integration: $(OUTPUT)/peakbpf $(OUTPUT)/workload $(OUTPUT)/hostile_client $(OUTPUT)/unique_trees
	$(Q)OUTPUT=$(OUTPUT) tests/integration/run.sh

# check and demo install what is missing first, so each is one command on a
# fresh Debian machine; the recursive make re-reads pkg-config afterwards.
# check ends with the benchmark in its short mode (so it cannot rot) and the
# integration suite inside Debian's 5.10, 6.1 and 6.12 kernels (vmtest).
# One target a line: branches that add a check then merge cleanly.
CHECKS := \
	unit \
	unit-asan \
	check-layers \
	check-size \
	check-abi \
	check-cli-api \
	check-docs \
	check-man \
	check-unit \
	check-deploy \
	fuzz \
	integration \
	lib-test \
	python-test \
	slurm-test \
	bench-short \
	vmtest
check: deps
	$(Q)$(MAKE) --no-print-directory $(CHECKS)

# peakbpf(1) and every --help name every option the CLI parses, every
# subcommand and every exit status (tools/check-man.py).
check-man: $(OUTPUT)/peakbpf
	$(call msg,CHECK,man/peakbpf.1 and --help against the option tables)
	$(Q)python3 tools/check-man.py $(OUTPUT)/peakbpf man/peakbpf.1

# The public API on workload shapes, built with pkg-config against a DESTDIR
# install (tests/lib); then the Python package and its pytest plugin.
lib-test: all
	$(Q)OUTPUT=$(OUTPUT) tests/lib/run.sh

python-test: all
	$(Q)OUTPUT=$(abspath $(OUTPUT)) PYTHON=$(PYTHON) tests/python/run.sh

# The units: systemd-analyze verify clean, security rated OK or better.
# The agent's deployment (deploy/): the DaemonSet, the scrape config
# (promtool check config) and the dashboard parsed, and every metric they
# name served by the agent (src/agent/agent_metrics.c).
check-deploy:
	$(call msg,CHECK,deploy/ against the agent's metrics)
	$(Q)tools/check-deploy.py src/agent/agent_metrics.c deploy

check-unit: $(OUTPUT)/peakbpf
	$(call msg,CHECK,systemd units)
	$(Q)tools/check-unit.sh "$(abspath $(OUTPUT))"

# 10,000 helper sessions by 16 clients of 4 users (tools/soak.sh); not in check.
soak: $(OUTPUT)/peakbpf $(OUTPUT)/hostile_client
	$(Q)OUTPUT=$(OUTPUT) tools/soak.sh

demo: deps
	$(Q)$(MAKE) --no-print-directory all
	$(Q)$(OUTPUT)/peakbpf -- $(OUTPUT)/workload -s 128MiB -n 3 concurrent

clean:
	$(call msg,CLEAN,$(OUTPUT))
	$(Q)rm -rf $(OUTPUT)

# make install names each file it writes; make uninstall removes exactly
# those (for the same PREFIX, DESTDIR and PYTHON).
INSTALLED := $(PREFIX)/bin/peakbpf $(LIBDIR)/libpeakbpf.a $(LIBDIR)/libpeakbpf.so.$(VERSION) \
	$(LIBDIR)/$(LIB_SONAME) $(LIBDIR)/libpeakbpf.so $(INCLUDEDIR)/peakbpf/peakbpf.h \
	$(LIBDIR)/pkgconfig/libpeakbpf.pc $(MANDIR)/man1/peakbpf.1 $(MANDIR)/man3/libpeakbpf.3 \
	$(SYSTEMDUNITDIR)/peakbpf.socket $(SYSTEMDUNITDIR)/peakbpf.service \
	$(SYSTEMDUNITDIR)/peakbpf-agent.service \
	$(PREFIX)/bin/peakbpf-seccomp
PYTHON_INSTALLED = $(PYTHONDIR)/peakbpf $(PYTHONDIR)/peakbpf-$(VERSION).dist-info
inst = printf '  INSTALL  %s\n' "$(DESTDIR)$(2)" && install -D -m $(3) $(1) "$(DESTDIR)$(2)"
gen = printf '  INSTALL  %s\n' "$(DESTDIR)$(1)" && mkdir -p "$$(dirname "$(DESTDIR)$(1)")" && sed $(2) > "$(DESTDIR)$(1)"
link = printf '  INSTALL  %s -> %s\n' "$(DESTDIR)$(2)" "$(1)" && ln -sf $(1) "$(DESTDIR)$(2)"
PC_SED := -e 's|@PREFIX@|$(PREFIX)|' -e 's|@LIBDIR@|$(LIBDIR)|' -e 's|@INCLUDEDIR@|$(INCLUDEDIR)|' \
	-e 's|@VERSION@|$(VERSION)|' libpeakbpf.pc.in

install: $(OUTPUT)/peakbpf lib
	$(Q)test -n "$(PYTHONDIR)" || { echo "make install: $(PYTHON) did not say where it imports from" >&2; exit 1; }
	$(Q)$(call inst,$(OUTPUT)/peakbpf,$(PREFIX)/bin/peakbpf,0755)
	$(Q)$(call inst,contrib/seccomp/peakbpf-seccomp,$(PREFIX)/bin/peakbpf-seccomp,0755)
	$(Q)$(call inst,$(OUTPUT)/libpeakbpf.a,$(LIBDIR)/libpeakbpf.a,0644)
	$(Q)$(call inst,$(OUTPUT)/libpeakbpf.so.$(VERSION),$(LIBDIR)/libpeakbpf.so.$(VERSION),0755)
	$(Q)$(call link,libpeakbpf.so.$(VERSION),$(LIBDIR)/$(LIB_SONAME))
	$(Q)$(call link,$(LIB_SONAME),$(LIBDIR)/libpeakbpf.so)
	$(Q)$(call inst,include/peakbpf/peakbpf.h,$(INCLUDEDIR)/peakbpf/peakbpf.h,0644)
	$(Q)$(call gen,$(LIBDIR)/pkgconfig/libpeakbpf.pc,$(PC_SED))
	$(Q)$(call inst,man/peakbpf.1,$(MANDIR)/man1/peakbpf.1,0644)
	$(Q)$(call inst,man/libpeakbpf.3,$(MANDIR)/man3/libpeakbpf.3,0644)
	$(Q)$(call inst,systemd/peakbpf.socket,$(SYSTEMDUNITDIR)/peakbpf.socket,0644)
	$(Q)$(call gen,$(SYSTEMDUNITDIR)/peakbpf.service,-e 's|@BINDIR@|$(PREFIX)/bin|' systemd/peakbpf.service.in)
	$(Q)$(call gen,$(SYSTEMDUNITDIR)/peakbpf-agent.service,-e 's|@BINDIR@|$(PREFIX)/bin|' systemd/peakbpf-agent.service.in)
	$(Q)printf '  INSTALL  %s (the Python package, for %s)\n' "$(DESTDIR)$(PYTHONDIR)/peakbpf" "$(PYTHON)"
	$(Q)PYTHON=$(PYTHON) python/install.sh "$(DESTDIR)$(PYTHONDIR)" "$(LIBDIR)/$(LIB_SONAME)" $(VERSION)
	$(Q)if [ "$(lastword $(PYTHON_WHERE))" != looks ]; then \
		printf '  NOTE     %s does not import from %s: set PYTHONPATH=%s\n' "$(PYTHON)" \
			"$(PYTHONDIR)" "$(PYTHONDIR)"; fi
	$(Q)if [ -z "$(DESTDIR)" ] && command -v ldconfig >/dev/null; then ldconfig; fi

uninstall:
	$(Q)for f in $(addprefix $(DESTDIR),$(INSTALLED)); do \
		if [ -e "$$f" ] || [ -L "$$f" ]; then printf '  REMOVE   %s\n' "$$f"; rm -f "$$f"; fi; done
	$(Q)for d in $(addprefix $(DESTDIR),$(PYTHON_INSTALLED)); do \
		if [ -d "$$d" ]; then printf '  REMOVE   %s\n' "$$d"; rm -rf "$$d"; fi; done
	$(Q)rmdir "$(DESTDIR)$(INCLUDEDIR)/peakbpf" 2>/dev/null || true
	$(Q)if [ -z "$(DESTDIR)" ] && command -v ldconfig >/dev/null; then ldconfig; fi

# make bench / bench-short / bench-cpus (tools/bench) and make vmtest (tools/vm).
include tools/bench/bench.mk
include tools/vm/vm.mk
include tools/docs.mk
include src/slurm/slurm.mk

-include $(ALL_OBJS:.o=.d) $(wildcard $(OUTPUT)/tests/*.d)
