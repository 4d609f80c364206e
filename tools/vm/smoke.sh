#!/bin/sh
# Guest-side smoke test of the VM environment peakbpf's tests rely on (busybox sh).
#   tools/vm/vmtest.sh -- tools/vm/smoke.sh
# Fails if BTF, bpffs, cgroup2 with the memory controller or the kmem:rss_stat tracepoint is
# missing; reports the version-dependent facts (mmap:exit_mmap, memory.peak, RLIMIT_MEMLOCK).
fail=0
ok() { echo "ok   $*"; }
bad() { echo "FAIL $*"; fail=1; }
info() { echo "info $*"; }

info "kernel $(uname -r), $(grep -c ^processor /proc/cpuinfo) CPUs, $(awk '/MemTotal/ { print int($2 / 1024) " MiB" }' /proc/meminfo)"
if [ -r /sys/kernel/btf/vmlinux ]; then ok "BTF /sys/kernel/btf/vmlinux"; else bad "no /sys/kernel/btf/vmlinux"; fi
if grep -q ' /sys/fs/bpf bpf ' /proc/mounts; then ok "bpffs at /sys/fs/bpf"; else bad "bpffs not mounted"; fi
if grep -q ' /sys/fs/cgroup cgroup2 ' /proc/mounts; then ok "cgroup2 at /sys/fs/cgroup"; else bad "cgroup2 not mounted"; fi
if grep -qw memory /sys/fs/cgroup/cgroup.subtree_control 2>/dev/null; then
    ok "memory controller enabled in subtree_control"
else
    bad "memory controller not enabled (controllers: $(cat /sys/fs/cgroup/cgroup.controllers 2>/dev/null))"
fi
T=/sys/kernel/tracing
[ -r $T/available_events ] || T=/sys/kernel/debug/tracing
if grep -qx 'kmem:rss_stat' $T/available_events 2>/dev/null; then ok "tracepoint kmem:rss_stat"; else bad "no kmem:rss_stat tracepoint"; fi
if grep -qx 'mmap:exit_mmap' $T/available_events 2>/dev/null; then
    info "tracepoint mmap:exit_mmap present"
else
    info "tracepoint mmap:exit_mmap absent (expected before 6.1)"
fi
if grep -qw exit_mmap $T/available_filter_functions 2>/dev/null; then
    info "exit_mmap is in available_filter_functions (fentry/kprobe attachable)"
else
    info "exit_mmap is NOT in available_filter_functions"
fi
mkdir /sys/fs/cgroup/vmtest-smoke 2>/dev/null
if [ -e /sys/fs/cgroup/vmtest-smoke/memory.peak ]; then
    info "cgroup memory.peak present"
else
    info "cgroup memory.peak absent (expected before 5.19)"
fi
rmdir /sys/fs/cgroup/vmtest-smoke 2>/dev/null
info "RLIMIT_MEMLOCK $(ulimit -l) KiB"
exit $fail
