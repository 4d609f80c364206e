#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# What the unique-memory program (bpf/unique.bpf.c) costs the whole machine:
# it runs on every memcg statistic update of every cgroup, so the workloads
# here run OUTSIDE the measured tree, beside a peakbpf that measures a
# command which only sleeps. Prints one table (make bench-unique).
#
#   columns: alone; peakbpf --source bpf (the tracker only: no cgroup, so no
#   unique program); peakbpf (auto: the tracker, the cgroup and the unique
#   program). The unique program's cost is the last minus the middle.
#   Wall times are medians of BENCH_UNIQUE_ROUNDS rounds, each round running
#   the three in turn, BPF statistics off. Then one more run with the
#   kernel's BPF statistics on gives the program's runs and ns per run.
#
# Workloads: page cache: dd writes BENCH_UNIQUE_MIB MiB to a tmpfs file
# (/dev/shm) and removes it (every page: page cache, LRU and shmem
# statistic updates, none of them the two items unique keeps); faults: the
# workload's fault loop over the same size in 4 KiB pages (anon statistic
# updates: the item matches, the cgroup does not).
#
# Needs root and the built peakbpf and workload (OUTPUT, default .output).
set -u
export LC_ALL=C
OUTPUT=${OUTPUT:-.output}
PEAKBPF=$OUTPUT/peakbpf
WORKLOAD=$OUTPUT/workload
ROUNDS=${BENCH_UNIQUE_ROUNDS:-7}
MIB=${BENCH_UNIQUE_MIB:-512}
SHM=${BENCH_UNIQUE_DIR:-/dev/shm}

die() { echo "bench-unique: $*" >&2; exit 1; }
[ "$(id -u)" = 0 ] || die "needs root"
[ -x "$PEAKBPF" ] && [ -x "$WORKLOAD" ] || die "build first: make OUTPUT=$OUTPUT all"
grep -q btf_trace_mod_memcg_lruvec_state /sys/kernel/btf/vmlinux ||
	die "this kernel has no memcg statistic tracepoints (6.13+): nothing to measure"

now_ns() { date +%s%N; }
w_pagecache() {
	local t0 t1
	t0=$(now_ns)
	dd if=/dev/zero of="$SHM/peakbpf-bench-unique" bs=1M count="$MIB" status=none
	rm -f "$SHM/peakbpf-bench-unique"
	t1=$(now_ns)
	echo $((t1 - t0))
}
w_faults() {
	taskset -c 0 "$WORKLOAD" -s "${MIB}MiB" -n 1 faults 2>&1 | sed -n 's/.*elapsed_ns=\([0-9]*\).*/\1/p'
}

# with MODE CMD: run CMD beside a peakbpf in MODE (none, tracker, unique).
PB_PID=
start_pb() {
	case $1 in
	none) PB_PID= ; return ;;
	tracker) "$PEAKBPF" -q --source bpf -- sleep 600 & ;;
	unique) "$PEAKBPF" -q -- sleep 600 & ;;
	esac
	PB_PID=$!
	# Loaded once its tree has a process: wait for the programs to appear.
	for _ in $(seq 50); do
		bpftool prog show 2>/dev/null | grep -q handle_rss_stat && break
		sleep 0.1
	done
	sleep 0.3
}
stop_pb() {
	[ -n "$PB_PID" ] || return 0
	kill "$PB_PID" 2>/dev/null
	wait "$PB_PID" 2>/dev/null
	PB_PID=
}
trap stop_pb EXIT

median() { sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }

declare -A T
for r in $(seq "$ROUNDS"); do
	for mode in none tracker unique; do
		start_pb "$mode"
		T[pagecache.$mode]+="$(w_pagecache) "
		T[faults.$mode]+="$(w_faults) "
		stop_pb
	done
done

# Runs and ns per run of the unique program, with BPF statistics on.
stats() {
	local out
	start_pb unique
	sysctl -q -w kernel.bpf_stats_enabled=1
	"$1" >/dev/null
	out=$(bpftool prog show name unique_stat 2>/dev/null | grep -o 'run_time_ns [0-9]* run_cnt [0-9]*' | head -n 1)
	sysctl -q -w kernel.bpf_stats_enabled=0
	stop_pb
	echo "$out" | awk '{ if ($4 > 0) printf "%d %.1f", $4, $2 / $4; else print "n/a n/a" }'
}

printf 'unique-memory program cost, %s, %s CPUs, %d MiB, median of %d rounds (ms)\n' \
	"$(uname -r)" "$(nproc)" "$MIB" "$ROUNDS"
printf '%-10s %10s %14s %16s %12s %12s %10s\n' workload alone "tracker only" "tracker+unique" \
	"unique cost" "unique runs" "ns/run"
for w in pagecache faults; do
	a=$(echo "${T[$w.none]}" | tr ' ' '\n' | grep . | median)
	b=$(echo "${T[$w.tracker]}" | tr ' ' '\n' | grep . | median)
	c=$(echo "${T[$w.unique]}" | tr ' ' '\n' | grep . | median)
	read -r runs nsrun <<<"$(stats "w_$w")"
	awk -v w="$w" -v a="$a" -v b="$b" -v c="$c" -v r="$runs" -v n="$nsrun" 'BEGIN {
		printf "%-10s %10.1f %14.1f %16.1f %+11.1f%% %12s %10s\n", w, a / 1e6, b / 1e6, c / 1e6,
			100 * (c - b) / b, r, n }'
done
