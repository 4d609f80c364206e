# SPDX-License-Identifier: MIT
# peakbpf: exact peak memory of a process tree, measured in the kernel.
OUTPUT ?= .output
PREFIX ?= /usr/local
DESTDIR ?=
CLANG ?= clang
BPFTOOL ?= bpftool
CC ?= gcc
ARCH := $(shell uname -m | sed -e 's/x86_64/x86/' -e 's/aarch64/arm64/')
VERSION := 0.1.0

LIBBPF_CFLAGS := $(shell pkg-config --cflags libbpf 2>/dev/null)
LIBBPF_LIBS := $(shell pkg-config --libs libbpf 2>/dev/null || echo -lbpf -lelf -lz)
WARN := -Wall -Wextra
CFLAGS ?= -g -O2
ALL_CFLAGS := -std=gnu11 -D_GNU_SOURCE $(CFLAGS) $(WARN) -I$(OUTPUT) -Isrc -Ibpf $(LIBBPF_CFLAGS) \
	-DPEAKBPF_VERSION='"$(VERSION)"' -MMD -MP
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

# One source a line: branches that add sources then merge cleanly.
LIB_SRCS := \
	src/units.c \
	src/json.c \
	src/status.c \
	src/report.c \
	src/figure.c \
	src/tracker.c \
	src/kfeatures.c \
	src/holders.c \
	src/host.c \
	src/session.c \
	src/source_bpf.c \
	src/sampler_model.c \
	src/fileutil.c \
	src/cgroup_parse.c \
	src/cgroup_fs.c \
	src/source_cgroup.c \
	src/source_proc.c \
	src/source_rusage.c
CLI_SRCS := src/main.c src/cli.c src/spawn.c
LIB_OBJS := $(patsubst src/%.c,$(OUTPUT)/%.o,$(LIB_SRCS))
CLI_OBJS := $(patsubst src/%.c,$(OUTPUT)/%.o,$(CLI_SRCS))
UNIT_TESTS := units json status cli report figure sources sampler_model spawn holders
UNIT_BINS := $(addprefix $(OUTPUT)/tests/test_,$(UNIT_TESTS))
UNIT_ASAN_BINS := $(addsuffix -asan,$(UNIT_BINS))
# Pure-logic sources each unit test links (no BPF, no root).
test_units_SRCS := src/units.c
test_json_SRCS := src/json.c
test_status_SRCS := src/status.c
test_cli_SRCS := src/cli.c src/units.c
test_sampler_model_SRCS := src/sampler_model.c
test_holders_SRCS :=
test_sources_SRCS := src/cgroup_parse.c src/cgroup_fs.c src/source_cgroup.c src/source_proc.c src/source_rusage.c src/fileutil.c \
	tests/unit/cgroup_fixture.c
test_report_SRCS := src/report.c src/figure.c src/json.c src/units.c src/host.c
test_figure_SRCS := src/figure.c
test_spawn_SRCS := src/spawn.c src/status.c

.DELETE_ON_ERROR:
.PHONY: all deps check unit unit-asan integration demo bench vmtest clean install

all: $(OUTPUT)/peakbpf $(OUTPUT)/workload

deps:
	$(Q)tools/install-deps.sh

$(OUTPUT) $(OUTPUT)/tests:
	$(Q)mkdir -p $@

$(OUTPUT)/tracker.bpf.o: bpf/tracker.bpf.c bpf/tracker.h bpf/compat.bpf.h | $(OUTPUT)
	$(call msg,BPF,$@)
	$(Q)$(CLANG) $(BPF_CFLAGS) -c $< -o $@

$(OUTPUT)/tracker.skel.h: $(OUTPUT)/tracker.bpf.o
	$(call msg,GEN-SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< > $@

# Userspace objects that include the skeleton must wait for it.
$(OUTPUT)/tracker.o: $(OUTPUT)/tracker.skel.h

$(OUTPUT)/%.o: src/%.c | $(OUTPUT)
	$(call msg,CC,$@)
	$(Q)$(CC) $(ALL_CFLAGS) -c $< -o $@

$(OUTPUT)/peakbpf: $(CLI_OBJS) $(LIB_OBJS)
	$(call msg,BINARY,$@)
	$(Q)$(CC) $(CFLAGS) $^ $(LIBBPF_LIBS) -pthread -o $@

# Static, so it also runs inside the kernel-matrix VMs' initramfs.
$(OUTPUT)/workload: tools/workload.c | $(OUTPUT)
	$(call msg,BINARY,$@)
	$(Q)$(CC) -std=gnu11 $(CFLAGS) $(WARN) -static -pthread $< -o $@

# Each test links the sources it names in test_<name>_SRCS: they are
# prerequisites too (second expansion), so editing one rebuilds the test.
.SECONDEXPANSION:
$(OUTPUT)/tests/test_%: tests/unit/test_%.c $$(test_$$*_SRCS) | $(OUTPUT)/tests
	$(call msg,TEST-CC,$@)
	$(Q)$(CC) -std=gnu11 -D_GNU_SOURCE $(CFLAGS) $(WARN) -Isrc -Ibpf -MMD -MP $< $(test_$*_SRCS) -lcmocka -pthread -o $@

$(OUTPUT)/tests/test_%-asan: tests/unit/test_%.c $$(test_$$*_SRCS) | $(OUTPUT)/tests
	$(call msg,ASAN-CC,$@)
	$(Q)$(CC) -std=gnu11 -D_GNU_SOURCE -g -O1 $(WARN) -fsanitize=address,undefined -fno-sanitize-recover=all \
		-fno-omit-frame-pointer -Isrc -Ibpf -MMD -MP $< $(test_$*_SRCS) -lcmocka -pthread -o $@

unit: $(UNIT_BINS)
	$(Q)for t in $^; do $$t || exit 1; done

unit-asan: $(UNIT_ASAN_BINS)
	$(Q)for t in $^; do ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 $$t || exit 1; done

integration: $(OUTPUT)/peakbpf $(OUTPUT)/workload
	$(Q)OUTPUT=$(OUTPUT) tests/integration/run.sh

# check and demo install what is missing first, so each is one command on a
# fresh Debian machine; the recursive make re-reads pkg-config afterwards.
# check ends with the benchmark in its short mode (so it cannot rot) and the
# integration suite inside Debian's 5.10, 6.1 and 6.12 kernels (vmtest).
check: deps
	$(Q)$(MAKE) --no-print-directory unit unit-asan integration bench-short vmtest

demo: deps
	$(Q)$(MAKE) --no-print-directory all
	$(Q)$(OUTPUT)/peakbpf -- $(OUTPUT)/workload -s 128MiB -n 3 concurrent

clean:
	$(call msg,CLEAN,$(OUTPUT))
	$(Q)rm -rf $(OUTPUT)

install: $(OUTPUT)/peakbpf
	$(Q)install -D -m 0755 $(OUTPUT)/peakbpf $(DESTDIR)$(PREFIX)/bin/peakbpf

# make bench / bench-short / bench-cpus (tools/bench) and make vmtest (tools/vm).
include tools/bench/bench.mk
include tools/vm/vm.mk

-include $(wildcard $(OUTPUT)/*.d $(OUTPUT)/tests/*.d)
