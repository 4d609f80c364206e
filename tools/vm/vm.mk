# SPDX-License-Identifier: MIT
# Kernel matrix: included by the top Makefile (tools/vm/README.md).
#   make vmtest         build, then run the integration suite (QUICK=1) and
#                       the VM-only tests inside Debian's 5.10, 6.1 and 6.12
#                       kernels under qemu (TCG); fails if any kernel fails
#                       (VMTEST_ONLY="t_a t_b": just these tests)
#   make vmtest-fetch   only download and cache the kernels (CI pre-fetch)
# VMTEST_KERNELS picks kernels, VMTEST_CACHE the cache, VMTEST_TIMEOUT the
# per-kernel limit in seconds (boot included), VMTEST_FLAGS more options of
# tools/vm/vmtest.sh (e.g. --strict: a kernel that cannot be fetched fails).

VMTEST_KERNELS ?= 5.10 6.1 6.12
VMTEST_CACHE ?= $(OUTPUT)/vm
VMTEST_TIMEOUT ?= 900
VMTEST_FLAGS ?=
# VMTEST_ONLY="t_a t_b": run just these tests in each kernel.
VMTEST_ONLY ?=
# Host tools the suite uses, shipped in when the host has them
# (tests/vm/run.sh says which it left out): dash runs the suite, setpriv
# drops capabilities, bpftool lists loaded programs, curl scrapes the agent.
VMTEST_TOOLS = $(foreach t,dash setpriv bpftool curl,$(shell command -v $(t) 2>/dev/null))
# What peakbpf opens with dlopen (the agent's HTTP server), which ldd does
# not list: copied at its own path.
VMTEST_LIBS = $(shell /sbin/ldconfig -p 2>/dev/null | awk '$$1 == "libmicrohttpd.so.12" { print $$NF; exit }')
VMTEST_FILES = $(OUTPUT)/peakbpf $(OUTPUT)/workload $(OUTPUT)/unique_trees $(OUTPUT)/stacks_known \
	$(OUTPUT)/stacks_known_nofp $(STACKS_CXX) tests/integration \
	tests/vm/test_cgroup_v2.sh $(VMTEST_TOOLS) $(OUTPUT)/only

.PHONY: vmtest vmtest-fetch

vmtest: all
	$(call msg,VMTEST,$(VMTEST_KERNELS))
	$(Q)printf '%s' "$(VMTEST_ONLY)" >$(OUTPUT)/only
	$(Q)tools/vm/vmtest.sh --cache "$(VMTEST_CACHE)" --kernels "$(VMTEST_KERNELS)" \
		--timeout $(VMTEST_TIMEOUT) $(VMTEST_FLAGS) --files "$(VMTEST_FILES)" \
		--libs "$(VMTEST_LIBS)" -- tests/vm/run.sh

vmtest-fetch:
	$(call msg,VMFETCH,$(VMTEST_KERNELS))
	$(Q)tools/vm/vmtest.sh --cache "$(VMTEST_CACHE)" --kernels "$(VMTEST_KERNELS)" \
		$(VMTEST_FLAGS) --fetch-only
