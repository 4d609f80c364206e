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
# --stacks names frames from ELF files (src/lib/kernel/stacks_sym.c): libelf, from libelf-dev.
LIBBPF_LIBS += -lelf
# peakbpf agent's HTTP side (src/agent/agent_http.c): Debian's libmicrohttpd-dev
# for its header; the library (libmicrohttpd12) is opened when the agent
# starts, not linked: with GnuTLS it cost every command ~2.5 ms of start-up.
WARN := -Wall -Wextra
STACKS_CXX := $(if $(shell command -v $(CXX) 2>/dev/null),$(OUTPUT)/stacks_cxx)
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

# Folders are layers (docs/design.md, "Layers"). The table there is the one
# description of them: tools/layers.py turns it into $(OUTPUT)/layers.mk,
# which gives each layer its sources (every .c of its folder), its include
# path (its folder and what its row may use; so a file that uses a layer it
# may not fails to compile), the layers a program of it links, and each unit
# test's layer (by what the test includes). Each layer is one static archive,
# $(OUTPUT)/layers/libNAME.a. make check-layers checks every include (the
# compiler's dependency lists) and every call between files against the
# table.
$(OUTPUT)/layers.mk: docs/design.md tools/layers.py $(wildcard tests/unit/test_*.c) | $(OUTPUT)
	$(call msg,GEN,$@)
	$(Q)tools/layers.py docs/design.md $(wildcard tests/unit/test_*.c) > $@.tmp && mv $@.tmp $@
-include $(OUTPUT)/layers.mk

obj = $(patsubst %.c,$(OUTPUT)/%.o,$(1))
asan_obj = $(patsubst %.c,$(OUTPUT)/asan/%.o,$(1))
layer_objs = $(call obj,$(LAYER_SRCS_$(1)))
# The archives a program of layer $(1) links, normal or ($(2) = asan/) sanitized.
layer_archives = $(foreach l,$(LAYER_LINK_$(1)),$(OUTPUT)/$(2)layers/lib$(l).a)
# Tests and tools that reach into any layer (fuzz targets, the integration
# tests' helpers) take every layer's include path.
INC_all = $(sort $(foreach l,$(LAYERS),$(LAYER_INC_$(l))))

# libpeakbpf: the library layer and every layer below it (LAYER_LINK_lib).
LIB_OBJS = $(foreach l,$(LAYER_LINK_lib),$(call layer_objs,$(l)))
# The CLI: its objects, built on libpeakbpf's public API only (make
# check-cli-api), with the archives of the layers it uses but the library
# and the helper (today the harness and the rank files) and of the pure
# helpers (timeline, base) of its own; the helper, peakbpf serve, is a
# library of its own that the CLI calls through serve.h alone.
CLI_LAYERS = $(filter-out cli helper agent $(LAYER_LINK_lib),$(LAYER_LINK_cli)) timeline base
CLI_OBJS = $(call layer_objs,cli)
CLI_API_OBJS = $(CLI_OBJS) $(foreach l,$(CLI_LAYERS),$(call layer_objs,$(l)))
CLI_ARCHIVES = $(foreach l,$(CLI_LAYERS) helper agent,$(OUTPUT)/layers/lib$(l).a)
ALL_OBJS = $(sort $(LIB_OBJS) $(CLI_API_OBJS) $(call layer_objs,helper) $(call layer_objs,agent))
# Every tests/unit/test_NAME.c, each linking its layer's archives
# (TEST_LAYER_NAME); test_NAME_EXTRA: a test's own helpers beside it.
UNIT_TESTS := $(patsubst tests/unit/test_%.c,%,$(wildcard tests/unit/test_*.c))
UNIT_BINS := $(addprefix $(OUTPUT)/tests/test_,$(UNIT_TESTS))
UNIT_ASAN_BINS := $(addsuffix -asan,$(UNIT_BINS))
test_sources_EXTRA := tests/unit/cgroup_fixture.c

.DELETE_ON_ERROR:
.PHONY: all deps check test unit unit-asan fuzz integration demo bench vmtest clean install uninstall lib lib-test \
	python-test check-cli-api check-layers check-size check-abi check-man check-unit check-deploy soak

all: $(OUTPUT)/peakbpf $(OUTPUT)/workload $(OUTPUT)/hostile_client $(OUTPUT)/unique_trees $(OUTPUT)/stacks_known \
	$(OUTPUT)/stacks_known_nofp $(STACKS_CXX) lib

deps:
	$(Q)tools/install-deps.sh

$(OUTPUT) $(OUTPUT)/tests:
	$(Q)mkdir -p $@

# One BPF object, so that libbpf parses the kernel's BTF once: each BPF unit
# is compiled alone, then statically linked (bpftool gen object); the one
# skeleton is generated from the linked object.
BPF_UNITS := tracker unique oom cgsum stacks

$(OUTPUT)/bpf:
	$(Q)mkdir -p $@

$(OUTPUT)/bpf/tracker.bpf.o: bpf/tracker.bpf.c bpf/tracker.h bpf/compat.bpf.h bpf/percpu_sum.bpf.h bpf/tracker_cgroup.bpf.h bpf/cgroup_move.bpf.h bpf/cgroup_target.h \
	bpf/tracker_maps.bpf.h bpf/tracker_tree.bpf.h bpf/tracker_event.bpf.h bpf/tracker_shared_maps.bpf.h | $(OUTPUT)/bpf
# The tree's unique memory (issue 17): its program loads only in command mode.
$(OUTPUT)/bpf/unique.bpf.o: bpf/unique.bpf.c bpf/unique.h | $(OUTPUT)/bpf
# The OOM flight recorder (issue 34): every OOM victim, into its own ring.
$(OUTPUT)/bpf/oom.bpf.o: bpf/oom.bpf.c bpf/oom.h bpf/tracker.h bpf/compat.bpf.h bpf/tracker_shared_maps.bpf.h | $(OUTPUT)/bpf
# Every cgroup's summed RSS for peakbpf agent (issue 34): off unless it asks.
$(OUTPUT)/bpf/cgsum.bpf.o: bpf/cgsum.bpf.c bpf/cgsum.h bpf/tracker.h bpf/compat.bpf.h bpf/tracker_shared_maps.bpf.h | $(OUTPUT)/bpf
# --stacks (docs/stacks.md): its programs load only when it is asked.
$(OUTPUT)/bpf/stacks.bpf.o: bpf/stacks.bpf.c bpf/stacks.h bpf/tracker.h | $(OUTPUT)/bpf

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
$(call obj,$(LAYER_SRCS_kernel)) $(call asan_obj,$(LAYER_SRCS_kernel)): $(OUTPUT)/tracker.skel.h

# A layer's objects get its include path (the more specific pattern wins):
# the rules are made for every layer at the end of this file (LAYER_RULES).
$(OUTPUT)/src/%.o: src/%.c
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(ALL_CFLAGS) $(LAYER_INC) -c $< -o $@

# The same objects for the sanitized unit tests (make unit-asan).
ASAN_CFLAGS := -std=gnu11 -D_GNU_SOURCE -g -O1 $(WARN) $(LIBBPF_CFLAGS) -DPEAKBPF_VERSION='"$(VERSION)"' \
	-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer -MMD -MP
$(OUTPUT)/asan/src/%.o: src/%.c
	$(call msg,ASAN-CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(ASAN_CFLAGS) $(LAYER_INC) -c $< -o $@

# Every include of every object against the layer rules of docs/design.md.
check-layers: $(ALL_OBJS)
	$(call msg,CHECK,layers: every include against docs/design.md)
	$(Q)tools/check-layers.py docs/design.md $(ALL_OBJS:.o=.d)

# The CLI's objects, its layers' archives and the helper's, then the
# static library: what the CLI takes from it is its public API (make
# check-cli-api); the helper's archive takes the internals.
$(OUTPUT)/peakbpf: $(CLI_OBJS) $(CLI_ARCHIVES) $(OUTPUT)/libpeakbpf.a
	$(call msg,BINARY,$@)
	$(Q)$(CC) $(CFLAGS) $(CLI_OBJS) -Wl,--start-group $(CLI_ARCHIVES) $(OUTPUT)/libpeakbpf.a \
		-Wl,--end-group $(LIBBPF_LIBS) -pthread -o $@

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
# library's headers, every symbol the CLI's objects take from libpeakbpf.a
# must be a peakbpf_* one, and from the helper's archive serve.h's alone.
check-cli-api: $(CLI_API_OBJS) $(OUTPUT)/libpeakbpf.a $(OUTPUT)/layers/libhelper.a $(OUTPUT)/layers/libagent.a
	$(call msg,CHECK,CLI uses only include/peakbpf/peakbpf.h, src/helper/serve.h and src/agent/agent.h)
	$(Q)tools/check-cli-api.sh "$(OUTPUT)/libpeakbpf.a" "$(OUTPUT)/layers/libhelper.a" src/helper/serve.h \
		$(CLI_API_OBJS)
	$(Q)tools/check-cli-api.sh "$(OUTPUT)/libpeakbpf.a" "$(OUTPUT)/layers/libagent.a" src/agent/agent.h \
		$(CLI_API_OBJS)

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
$(OUTPUT)/hostile_client: tests/integration/hostile_client.c tests/send_fds.h $(call layer_archives,sources) | $(OUTPUT)
	$(call msg,BINARY,$@)
	$(Q)$(CC) -std=gnu11 -D_GNU_SOURCE $(CFLAGS) $(WARN) $(LAYER_INC_sources) $< \
		-Wl,--start-group $(call layer_archives,sources) -Wl,--end-group $(LIBBPF_LIBS) -o $@

# Two trees of one load, each with its unique memory (test_unique.sh): the
# library's internals, from the static library.
# t_stacks_known's workload: frame pointers, no inlining, so that each
# function is a frame of its own (tests/integration/stacks_known.c).
$(OUTPUT)/stacks_known: tests/integration/stacks_known.c | $(OUTPUT)
	$(call msg,CC,$@)
	$(Q)$(CC) -std=gnu11 -O1 -g -fno-omit-frame-pointer -fno-optimize-sibling-calls $(WARN) $< -o $@

# t_stacks_nofp's: the same program without frame pointers (what most of
# Debian's libraries are: tests/integration/test_stacks_programs.sh).
$(OUTPUT)/stacks_known_nofp: tests/integration/stacks_known.c | $(OUTPUT)
	$(call msg,CC,$@)
	$(Q)$(CC) -std=gnu11 -O1 -g -fomit-frame-pointer -fno-optimize-sibling-calls $(WARN) $< -o $@

# t_stacks_cxx's: C++ from Debian's g++, with frame pointers in its own
# code; libstdc++ and glibc are Debian's, without them. Built when $(CXX) is
# there (make deps installs g++); the test says skip when it is not.
$(OUTPUT)/stacks_cxx: tests/integration/stacks_cxx.cc | $(OUTPUT)
	$(call msg,CXX,$@)
	$(Q)$(CXX) -std=gnu++17 -O1 -g -fno-omit-frame-pointer -fno-optimize-sibling-calls $(WARN) $< -o $@

$(OUTPUT)/unique_trees: tests/integration/unique_trees.c $(OUTPUT)/libpeakbpf.a | $(OUTPUT)
	$(call msg,BINARY,$@)
	$(Q)$(CC) -std=gnu11 -D_GNU_SOURCE $(CFLAGS) $(WARN) $(LAYER_INC_lib) $< $(OUTPUT)/libpeakbpf.a \
		$(LIBBPF_LIBS) -pthread -o $@

# Static, so it also runs inside the kernel-matrix VMs' initramfs.
$(OUTPUT)/workload: tools/workload.c | $(OUTPUT)
	$(call msg,BINARY,$@)
	$(Q)$(CC) -std=gnu11 $(CFLAGS) $(WARN) -static -pthread $< -o $@

# Each test compiles with its layer's include path and links its layer's
# archives and those below it (layers.mk: TEST_LAYER_NAME, LAYER_LINK_*),
# in one group, so that their order does not matter; the archives are
# prerequisites too (second expansion), so editing a source rebuilds it.
test_layer = $(TEST_LAYER_$(1))
.SECONDEXPANSION:
$(OUTPUT)/tests/test_%: tests/unit/test_%.c $$(test_$$*_EXTRA) $$(call layer_archives,$$(call test_layer,$$*)) \
		| $(OUTPUT)/tests
	$(call msg,TEST-CC,$@)
	$(Q)$(CC) -std=gnu11 -D_GNU_SOURCE $(CFLAGS) $(WARN) $(LIBBPF_CFLAGS) $(LAYER_INC_$(call test_layer,$*)) \
		-MMD -MP $< $(test_$*_EXTRA) -Wl,--start-group $(call layer_archives,$(call test_layer,$*)) \
		-Wl,--end-group $(LIBBPF_LIBS) -lcmocka -pthread -o $@

$(OUTPUT)/tests/test_%-asan: tests/unit/test_%.c $$(test_$$*_EXTRA) \
		$$(call layer_archives,$$(call test_layer,$$*),asan/) | $(OUTPUT)/tests
	$(call msg,ASAN-CC,$@)
	$(Q)$(CC) $(ASAN_CFLAGS) $(LAYER_INC_$(call test_layer,$*)) $< $(test_$*_EXTRA) \
		-Wl,--start-group $(call layer_archives,$(call test_layer,$*),asan/) -Wl,--end-group \
		$(LIBBPF_LIBS) -lcmocka -pthread -o $@

# libFuzzer targets (tests/fuzz): the parsers of sizes, durations, PIDs,
# the command line, JSON escaping, /proc and cgroupfs text, --record files, the timelines
# peakbpf plot reads, the helper's request handler. make fuzz runs
# each for FUZZ_SECONDS from the committed seeds (tests/fuzz/corpus/NAME);
# what it finds new stays in $(OUTPUT)/fuzz/corpus-NAME.
FUZZ_TARGETS := units cli json procfs record timeline serve
FUZZ_BINS := $(addprefix $(OUTPUT)/fuzz/fuzz_,$(FUZZ_TARGETS))
FUZZ_SECONDS ?= 6
fuzz_units_SRCS := src/base/units.c
fuzz_cli_SRCS := src/cli/cli.c src/cli/stacks_opts.c src/cli/harness/runs_cli.c src/cli/harness/sweep.c src/cli/harness/fit.c \
	src/base/stats.c src/base/units.c src/timeline/timeline.c
fuzz_json_SRCS := src/base/json.c
fuzz_record_SRCS := src/rank/merge.c src/rank/merge_load.c
fuzz_procfs_SRCS := src/lib/sources/source_proc.c src/lib/sources/cgroup_parse.c src/base/fileutil.c src/base/hugetlb.c \
	src/base/bpf_refusal.c
fuzz_timeline_SRCS := src/timeline/timeline.c src/timeline/timeline_export.c src/timeline/timeline_plot.c \
	src/timeline/timeline_load.c src/base/json.c src/base/units.c src/base/fileutil.c
# The helper's request handler, its BPF side stubbed in the target.
fuzz_serve_SRCS := src/helper/serve_tree.c src/helper/serve_record.c src/helper/serve_sums.c src/helper/pidns.c \
	src/helper/serve_unique.c src/helper/serve_fair.c src/helper/serve_readable.c \
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

# Each test binary runs as a target of its own (run/test_NAME), so that
# make -j runs them side by side; its output is shown when it fails, else
# its last line. Nothing is written into the tree: any user may run them.
UNIT_RUNS := $(addprefix run/,$(notdir $(UNIT_BINS)))
UNIT_ASAN_RUNS := $(addprefix run/,$(notdir $(UNIT_ASAN_BINS)))
.PHONY: $(UNIT_RUNS) $(UNIT_ASAN_RUNS)
unit: $(UNIT_RUNS)
unit-asan: $(UNIT_ASAN_RUNS)
$(UNIT_RUNS) $(UNIT_ASAN_RUNS): run/%: $(OUTPUT)/tests/%
	$(Q)log=$$(mktemp) && if ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 $< >$$log 2>&1; \
		then printf '  %-8s %-28s %s\n' UNIT "$*" "$$(grep -a 'PASSED\|SKIPPED' $$log | tr -s ' ' | tr '\n' ' ')"; \
		rm -f $$log; else cat $$log; rm -f $$log; echo "unit: $* failed" >&2; exit 1; fi

integration: $(OUTPUT)/peakbpf $(OUTPUT)/workload $(OUTPUT)/hostile_client $(OUTPUT)/unique_trees $(OUTPUT)/stacks_known \
	$(OUTPUT)/stacks_known_nofp $(STACKS_CXX)
	$(Q)OUTPUT=$(OUTPUT) tests/integration/run.sh

# The edit-compile-test loop: the unit tests, the sanitizers and the
# layer, size, ABI, API and documentation checks. No root, no BPF, no
# package installed: any user on a built tree (make all; then make test
# once, which builds the tests), under a minute here. make check is the
# whole suite.
TESTS_FAST := \
	unit \
	unit-asan \
	check-layers \
	check-size \
	check-abi \
	check-cli-api \
	check-docs \
	check-man
# As many jobs as CPUs unless make was given -j.
TEST_JOBS ?= $(shell nproc 2>/dev/null || echo 2)
test:
	$(Q)$(MAKE) --no-print-directory $(if $(filter -j%,$(MAKEFLAGS)),,-j$(TEST_JOBS)) $(TESTS_FAST)

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

# 10,000 helper sessions by 12 clients of 4 users (tools/soak.sh); not in check.
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
include python/python.mk

# Every layer's archive (normal and sanitized) and its objects' include
# path; after the includes above, so that a layer's own list (src/slurm's,
# in slurm.mk) counts.
define LAYER_RULES
$(OUTPUT)/$(LAYER_DIR_$(1))/%.o: LAYER_INC = $(LAYER_INC_$(1)) $(LAYER_CFLAGS_$(1))
$(OUTPUT)/asan/$(LAYER_DIR_$(1))/%.o: LAYER_INC = $(LAYER_INC_$(1))
$(OUTPUT)/layers/lib$(1).a: $(call obj,$(LAYER_SRCS_$(1)))
	$$(call msg,AR,$$@)
	$$(Q)mkdir -p $$(@D) && rm -f $$@ && $$(AR) rcs $$@ $$^
$(OUTPUT)/asan/layers/lib$(1).a: $(call asan_obj,$(LAYER_SRCS_$(1)))
	$$(call msg,AR,$$@)
	$$(Q)mkdir -p $$(@D) && rm -f $$@ && $$(AR) rcs $$@ $$^
endef
$(foreach l,$(LAYERS),$(eval $(call LAYER_RULES,$(l))))

-include $(ALL_OBJS:.o=.d) $(wildcard $(OUTPUT)/tests/*.d) \
	$(wildcard $(patsubst $(OUTPUT)/%,$(OUTPUT)/asan/%,$(ALL_OBJS:.o=.d)))
