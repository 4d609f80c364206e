# SPDX-License-Identifier: MIT
# peakbpf.so, the SPANK plugin (src/slurm, docs/slurm.md): built by `make
# all` and installed by `make install` where Slurm's <slurm/spank.h> is
# present (Debian: libslurm-dev). It links libpeakbpf.a, so that a node
# needs only libbpf to load it, and exports only the SPANK symbols (the
# spank_* and slurm_* it calls are slurmstepd's, srun's or sbatch's own).
SLURM_INCLUDE ?= /usr/include
SLURM_PLUGINDIR ?= $(LIBDIR)/slurm
SLURM_SRCS := \
	src/slurm/spank_peakbpf.c \
	src/slurm/slurm_report.c \
	src/slurm/spank_record.c
# A multi-node step's records and their merge: the CLI's own --record and
# `peakbpf merge` code (src/rank: on the public API, like the plugin).
SLURM_MERGE_SRCS := src/rank/rank_file.c src/rank/merge.c src/rank/merge_load.c
SLURM_PLUGIN_OBJS := $(call obj,$(SLURM_SRCS) $(SLURM_MERGE_SRCS))
# The plugin's layer: the public API, the CLI's merge and the base helpers.
# Its symbols are visible (the version script exports the SPANK ones only).
INC_slurm := -Isrc/slurm -Iinclude $(INC_rank)
$(OUTPUT)/src/slurm/%.o: LAYER_INC = $(INC_slurm) -fvisibility=default
# Tests see every layer. The plugin's unit test (its pure part) joins make
# unit and unit-asan here: their recipes run every prerequisite ($^).
INC_all += -Isrc/slurm
test_slurm_report_SRCS := src/slurm/slurm_report.c src/base/json.c src/base/units.c src/base/fileutil.c
unit: $(OUTPUT)/tests/test_slurm_report
unit-asan: $(OUTPUT)/tests/test_slurm_report-asan
HAVE_SPANK := $(wildcard $(SLURM_INCLUDE)/slurm/spank.h)
# make uninstall removes it (its recipe reads INSTALLED when it runs).
INSTALLED += $(SLURM_PLUGINDIR)/peakbpf.so

ifneq ($(HAVE_SPANK),)
SLURM_PLUGIN := $(OUTPUT)/slurm/peakbpf.so
all: $(SLURM_PLUGIN)
# Its includes held to its row of docs/design.md's layers too.
ALL_OBJS += $(call obj,$(SLURM_SRCS))
check-layers: $(call obj,$(SLURM_SRCS))
$(OUTPUT)/slurm:
	$(Q)mkdir -p $@
$(SLURM_PLUGIN): $(SLURM_PLUGIN_OBJS) $(OUTPUT)/libpeakbpf.a src/slurm/peakbpf_spank.map | $(OUTPUT)/slurm
	$(call msg,PLUGIN,$@)
	$(Q)$(CC) $(CFLAGS) -shared -Wl,--version-script=src/slurm/peakbpf_spank.map \
		$(SLURM_PLUGIN_OBJS) $(OUTPUT)/libpeakbpf.a $(LIBBPF_LIBS) -pthread -o $@
install: install-slurm
install-slurm: $(SLURM_PLUGIN)
	$(Q)$(call inst,$(SLURM_PLUGIN),$(SLURM_PLUGINDIR)/peakbpf.so,0755)
else
install-slurm:
	@echo "  SKIP     peakbpf.so: no $(SLURM_INCLUDE)/slurm/spank.h (Debian: libslurm-dev)"
endif
.PHONY: install-slurm slurm-test slurm-bench

# The real Slurm of tests/slurm (tools/slurm/cluster.sh): prints skip and
# why where it cannot start.
slurm-test: all
	$(Q)OUTPUT=$(abspath $(OUTPUT)) tests/slurm/run.sh
-include $(wildcard $(OUTPUT)/src/slurm/*.d)

# What the plugin costs a step and an idle node: prints a table.
slurm-bench: all
	$(Q)OUTPUT=$(OUTPUT) tools/slurm/bench.sh
