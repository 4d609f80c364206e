# SPDX-License-Identifier: MIT
# The benchmark (issue 7). Included from the top Makefile, after its own rules,
# so it can use $(OUTPUT), $(CLANG), $(BPFTOOL), $(BPF_CFLAGS), $(CC), $(CFLAGS),
# $(WARN), $(LIBBPF_CFLAGS), $(LIBBPF_LIBS), $(Q) and $(call msg,...).
# To try it alone: make -f Makefile -f tools/bench/bench.mk bench
#
#   make bench         the full table (~2 min on 2 CPUs), root, then the
#                      node agent's (make bench-agent)
#   make bench-short   the same rows, smaller and fewer runs, for CI (251 s on
#                      the 2-CPU machine at load 6-9; most of it fault loops
#                      and standalone loads, which the load stretches; 32 s
#                      when quiet, 9 s of it [6], --stacks' cost)
#   make bench-pieces  what each piece of an event program costs (a cold page,
#                      a hash lookup, the clock...), each alone (~1 min, root)
#   make bench-ab      the per-event rows of two peakbpf binaries side by side
#                      (AB_A, AB_B; ~15 s a round, 5 rounds, root)
#   make bench-cpus    per-event cost and load time at -smp 2 vs -smp 64 in
#                      the 6.12 kernel-matrix VM (~2 min, qemu TCG; too slow
#                      for make check); uses $(VMTEST_CACHE) from vm.mk
#
# Tables land in $(OUTPUT)/bench/results.{txt,json,md} and cpus.{txt,json}.
BENCH_OUT := $(OUTPUT)/bench
BENCH_TOOLS := $(BENCH_OUT)/bpfstat $(BENCH_OUT)/procsample

.PHONY: bench bench-short bench-cpus bench-tools

$(BENCH_OUT):
	$(Q)mkdir -p $@

$(BENCH_OUT)/floor.bpf.o: tools/bench/floor.bpf.c | $(BENCH_OUT)
	$(call msg,BPF,$@)
	$(Q)$(CLANG) $(BPF_CFLAGS) -c $< -o $@

$(BENCH_OUT)/floor.skel.h: $(BENCH_OUT)/floor.bpf.o
	$(call msg,GEN-SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< name floor > $@

$(BENCH_OUT)/bpfstat: tools/bench/bpfstat.c $(BENCH_OUT)/floor.skel.h
	$(call msg,BINARY,$@)
	$(Q)$(CC) -std=gnu11 -D_GNU_SOURCE $(CFLAGS) $(WARN) -I$(BENCH_OUT) $(LIBBPF_CFLAGS) \
		$< $(LIBBPF_LIBS) -o $@

$(BENCH_OUT)/pieces.bpf.o: tools/bench/pieces.bpf.c | $(BENCH_OUT)
	$(call msg,BPF,$@)
	$(Q)$(CLANG) $(BPF_CFLAGS) -c $< -o $@

$(BENCH_OUT)/pieces.skel.h: $(BENCH_OUT)/pieces.bpf.o
	$(call msg,GEN-SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< name pieces_bpf > $@

$(BENCH_OUT)/pieces: tools/bench/pieces.c $(BENCH_OUT)/pieces.skel.h
	$(call msg,BINARY,$@)
	$(Q)$(CC) -std=gnu11 -D_GNU_SOURCE $(CFLAGS) $(WARN) -I$(BENCH_OUT) $(LIBBPF_CFLAGS) \
		$< $(LIBBPF_LIBS) -o $@

$(BENCH_OUT)/procsample: tools/bench/procsample.c | $(BENCH_OUT)
	$(call msg,BINARY,$@)
	$(Q)$(CC) -std=gnu11 -D_GNU_SOURCE $(CFLAGS) $(WARN) -pthread $< -o $@

bench-tools: $(BENCH_TOOLS)

bench: $(OUTPUT)/peakbpf $(OUTPUT)/workload $(BENCH_TOOLS)
	$(Q)OUTPUT=$(OUTPUT) tools/bench/bench.sh full
	$(Q)OUTPUT=$(OUTPUT) tools/bench/agent-cost.sh

# The node agent's cost (tools/bench/agent-cost.sh; ~4 min, root): the last
# table of make bench, alone. Not in bench-short: its fault loops and builds
# with and without the agent would add minutes to make check.
.PHONY: bench-agent
bench-agent: $(OUTPUT)/peakbpf $(OUTPUT)/workload $(BENCH_OUT)/bpfstat
	$(Q)OUTPUT=$(OUTPUT) tools/bench/agent-cost.sh

bench-short: $(OUTPUT)/peakbpf $(OUTPUT)/workload $(BENCH_TOOLS)
	$(Q)OUTPUT=$(OUTPUT) tools/bench/bench.sh short

bench-cpus: $(OUTPUT)/peakbpf $(OUTPUT)/workload $(BENCH_OUT)/bpfstat
	$(Q)OUTPUT=$(OUTPUT) VMTEST_CACHE="$(VMTEST_CACHE)" tools/bench/bench-cpus.sh

# What each piece of an event program costs this machine (tools/bench/
# pieces.bpf.c: a page of map memory, a hash lookup, the clock...), each
# alone against the empty program (~1 min, root). Not in make bench: it
# explains the per-event rows, it is not a target.
.PHONY: bench-pieces
bench-pieces: $(OUTPUT)/workload $(BENCH_OUT)/pieces
	$(Q)$(BENCH_OUT)/pieces 7 "taskset -c $$(nproc --ignore=1) $(OUTPUT)/workload -s 32MiB faults >/dev/null 2>&1"

# A/B of the per-event rows (tools/bench/ab-event.sh): two peakbpf binaries
# side by side, AB_A and AB_B (default: the built one against itself), root.
.PHONY: bench-ab
AB_A ?= $(OUTPUT)/peakbpf
AB_B ?= $(OUTPUT)/peakbpf
bench-ab: $(OUTPUT)/workload $(BENCH_OUT)/bpfstat
	$(Q)OUTPUT=$(OUTPUT) tools/bench/ab-event.sh $(AB_A) $(AB_B)

# What the unique-memory program costs the machine (tools/bench/unique-cost.sh;
# ~1 min, root, Linux 6.13+).
.PHONY: bench-unique
bench-unique: $(OUTPUT)/peakbpf $(OUTPUT)/workload
	$(Q)OUTPUT=$(OUTPUT) tools/bench/unique-cost.sh

# The build row of make bench (tools/bench/ratios.sh): a fixed subset of this
# project's own build, compiler runs only (no BPF, no link), timed as
# `make -j2` alone and under peakbpf into a scratch OUTPUT. BENCH_BUILD_SET
# cli: the CLI's objects (make bench); base: src/base (make bench-short).
BENCH_BUILD_SET ?= cli
.PHONY: bench-build-subset
bench-build-subset: $(if $(filter base,$(BENCH_BUILD_SET)),$(call obj,$(BASE_SRCS)),$(CLI_API_OBJS))
