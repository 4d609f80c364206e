# SPDX-License-Identifier: MIT
# peakbpf.so, the SPANK plugin (src/slurm, docs/slurm.md): built by `make
# all` and installed by `make install` where Slurm's <slurm/spank.h> is
# present (Debian: libslurm-dev). It links libpeakbpf.a, so that a node
# needs only libbpf to load it, and exports only the SPANK symbols (the
# spank_* and slurm_* it calls are slurmstepd's, srun's or sbatch's own).
SLURM_INCLUDE ?= /usr/include
SLURM_PLUGINDIR ?= $(LIBDIR)/slurm
SLURM_PLUGIN_SRCS := src/slurm/spank_peakbpf.c src/slurm/slurm_report.c src/slurm/spank_record.c
# A multi-node step's records and their merge: the CLI's own --record and
# `peakbpf merge` code (public API users, like the plugin).
SLURM_PLUGIN_CLI_SRCS := src/record.c src/merge.c src/merge_load.c
SLURM_PLUGIN_OBJS := $(patsubst src/%.c,$(OUTPUT)/%.o,$(SLURM_PLUGIN_SRCS) $(SLURM_PLUGIN_CLI_SRCS))
HAVE_SPANK := $(wildcard $(SLURM_INCLUDE)/slurm/spank.h)

ifneq ($(HAVE_SPANK),)
SLURM_PLUGIN := $(OUTPUT)/slurm/peakbpf.so
all: $(SLURM_PLUGIN)
$(OUTPUT)/slurm:
	$(Q)mkdir -p $@
$(SLURM_PLUGIN_OBJS): | $(OUTPUT)/slurm
$(OUTPUT)/slurm/%.o: src/slurm/%.c | $(OUTPUT)/slurm
	$(call msg,CC,$@)
	$(Q)$(CC) $(ALL_CFLAGS) -Isrc/slurm -fvisibility=default -c $< -o $@
$(SLURM_PLUGIN): $(SLURM_PLUGIN_OBJS) $(OUTPUT)/libpeakbpf.a src/slurm/peakbpf_spank.map
	$(call msg,PLUGIN,$@)
	$(Q)$(CC) $(CFLAGS) -shared -Wl,--version-script=src/slurm/peakbpf_spank.map \
		$(SLURM_PLUGIN_OBJS) $(OUTPUT)/libpeakbpf.a $(LIBBPF_LIBS) -pthread -o $@
install: install-slurm
install-slurm: $(SLURM_PLUGIN)
	$(Q)install -D -m 0755 $(SLURM_PLUGIN) $(DESTDIR)$(SLURM_PLUGINDIR)/peakbpf.so
else
install-slurm:
	@echo "  SKIP     peakbpf.so: no $(SLURM_INCLUDE)/slurm/spank.h (Debian: libslurm-dev)"
endif
.PHONY: install-slurm slurm-test slurm-bench

# The real Slurm of tests/slurm (tools/slurm/cluster.sh): prints skip and
# why where it cannot start.
slurm-test: all
	$(Q)OUTPUT=$(abspath $(OUTPUT)) tests/slurm/run.sh
-include $(wildcard $(OUTPUT)/slurm/*.d)

# What the plugin costs a step and an idle node: prints a table.
slurm-bench: all
	$(Q)OUTPUT=$(OUTPUT) tools/slurm/bench.sh
