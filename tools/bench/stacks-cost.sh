#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# What --stacks costs (docs/stacks.md), alone: make bench's [6] rows
# (tools/bench/stacks.sh, stacks_bench: the same code), at make bench's
# sizes unless told: ROUNDS (5) rounds of the per-fault windows over
# COST_SIZE (256MiB), of the fault loop over WALL_SIZE (1GiB) and of
# python3 building a list of PY_N (2000000) strings; each window's
# per-fault figures too. A measurement for docs/performance.md, not a
# test. Root.
#
#   make all bench-tools && tools/bench/stacks-cost.sh
set -u
export LC_ALL=C
OUT=${OUTPUT:-.output}
# shellcheck disable=SC2034 # the names stacks.sh reads
{
	PEAKBPF=$OUT/peakbpf WORKLOAD=$OUT/workload PAGE=$(getconf PAGESIZE)
	BENCH_STACKS_ROUNDS=${ROUNDS:-5} BENCH_COST_SIZE=${COST_SIZE:-256MiB} BENCH_WALL_SIZE=${WALL_SIZE:-1GiB}
	BENCH_STACKS_PY_N=${PY_N:-2000000}
}
FAULT_CPU=$(taskset -cp $$ 2>/dev/null | grep -o '[0-9]*$')
# shellcheck disable=SC2034
if [ -n "$FAULT_CPU" ]; then ON_CPU=(taskset -c "$FAULT_CPU"); else ON_CPU=(); fi
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
# shellcheck source=tools/bench/stacks.sh
. "$(dirname "$0")/stacks.sh"

BPFSTAT=$OUT/bench/bpfstat
# shellcheck source=tools/bench/common.sh
. "$(dirname "$0")/common.sh"

echo "--stacks cost: Linux $(uname -r), $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg) at start"
stacks_bench
for i in "${!R_NAME[@]}"; do printf '  %-66s %s\n      %s\n' "${R_NAME[$i]}" "${R_FIG[$i]}" "${R_NOTE[$i]}"; done
echo "per-fault windows (tools/bench/stacks.sh, stk_costs):"
echo "  label loop_s rss_ns/tracked_event stk_fault_ns/tracked_fault bpf_ns/tracked_fault floor_ns stk_fault_ns/untracked_run stk_sys_exit_ns/run sys_exit_runs stk_fault_foreign_runs"
sed 's/^/  /' "$TMP/stk.costs" 2>/dev/null
echo "load $(cut -d' ' -f1-3 /proc/loadavg) at the end"
[ ${#FAILURES[@]} = 0 ] || { echo "stacks-cost: FAILED to measure: ${FAILURES[*]}" >&2; exit 1; }
