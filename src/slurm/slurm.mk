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
	src/slurm/spank_record.c \
	src/slurm/spank_files.c
# Its layer's archive holds the part that needs no <slurm/spank.h> (the
# pure report and the root writers, which their unit tests link); the
# plugin links every object of SLURM_SRCS, then the rank files' layer
# (src/rank: a multi-node step's records and their merge, the CLI's own)
# and libpeakbpf.a.
LAYER_SRCS_slurm := src/slurm/slurm_report.c src/slurm/spank_files.c
SLURM_PLUGIN_OBJS := $(call obj,$(SLURM_SRCS))
SLURM_ARCHIVES := $(OUTPUT)/layers/librank.a $(OUTPUT)/layers/libtimeline.a $(OUTPUT)/layers/libbase.a
# Its symbols are visible (the version script exports the SPANK ones only).
LAYER_CFLAGS_slurm := -fvisibility=default
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
$(SLURM_PLUGIN): $(SLURM_PLUGIN_OBJS) $(SLURM_ARCHIVES) $(OUTPUT)/libpeakbpf.a src/slurm/peakbpf_spank.map \
		| $(OUTPUT)/slurm
	$(call msg,PLUGIN,$@)
	$(Q)$(CC) $(CFLAGS) -shared -Wl,--version-script=src/slurm/peakbpf_spank.map \
		$(SLURM_PLUGIN_OBJS) -Wl,--start-group $(SLURM_ARCHIVES) $(OUTPUT)/libpeakbpf.a -Wl,--end-group \
		$(LIBBPF_LIBS) -pthread -o $@
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
