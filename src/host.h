/* SPDX-License-Identifier: MIT */
/* Facts about this machine: kernel, CPUs, BTF, privileges. */
#ifndef PEAKBPF_HOST_H
#define PEAKBPF_HOST_H

#include <stdbool.h>
#include <stdint.h>
#include "report.h"

#define CAPBIT_SYS_ADMIN 21
#define CAPBIT_PERFMON   38
#define CAPBIT_BPF       39

/* Effective capabilities (CapEff of /proc/self/status); 0 when unreadable. */
uint64_t host_effective_caps(void);
/* Which privileges let this process load tracing BPF programs: "root" (all
 * capabilities), "CAP_SYS_ADMIN", "CAP_BPF+CAP_PERFMON", or NULL. */
const char *bpf_privileges(uint64_t capeff);
bool host_has_btf(void);
/* uname, CPUs, page size, BTF; privileges from the caps given. */
void host_facts_fill(struct host_facts *h, uint64_t capeff);

#endif
