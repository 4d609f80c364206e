#!/bin/sh
# Regenerate vmlinux/<arch>/vmlinux.h from a kernel's BTF.
# Usage: tools/gen-vmlinux.sh [BTF_FILE] (default /sys/kernel/btf/vmlinux)
# The committed header only supplies type definitions: CO-RE relocates every
# field access against the running kernel's BTF at load time, so one header
# serves all kernels.
set -eu
btf=${1:-/sys/kernel/btf/vmlinux}
arch=$(uname -m)
case "$arch" in
x86_64) arch=x86 ;;
aarch64) arch=arm64 ;;
esac
top=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$top/vmlinux/$arch"
bpftool btf dump file "$btf" format c >"$top/vmlinux/$arch/vmlinux.h.tmp"
mv "$top/vmlinux/$arch/vmlinux.h.tmp" "$top/vmlinux/$arch/vmlinux.h"
ln -sf "$arch/vmlinux.h" "$top/vmlinux/vmlinux.h"
echo "vmlinux/$arch/vmlinux.h from $btf ($(uname -r))"
