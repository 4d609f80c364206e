#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# peakbpf's benchmark (issue 7): prints one table and writes it as
# $OUTPUT/bench/results.{txt,json,md}. Every figure is measured in this run;
# a figure that could not be measured is "n/a" with the reason.
#
#   tools/bench/bench.sh full|short       (make bench / make bench-short)
#
# The targets that need other CPU counts are make bench-cpus's
# (tools/bench/bench-cpus.sh, in the kernel-matrix VM).
#
# Needs root, the built .output/peakbpf and .output/workload, and
# .output/bench/{bpfstat,procsample} (tools/bench/bench.mk builds them).
# Environment: OUTPUT (default .output); BENCH_* below override sizes/counts.
#
# How each figure is measured:
#  [1] per-event cost: bpfstat turns the kernel's BPF run-time statistics on
#      (BPF_ENABLE_STATS) and reads run_time_ns/run_cnt of its own empty
#      tp_btf/rss_stat program (the floor) and of the handle_rss_stat program
#      that the peakbpf process under test holds, before and after a window.
#      Untracked: peakbpf tracks a command that only waits; the workload
#      faults beside it. Tracked: peakbpf runs the workload; the window is
#      its fault loop. Programs on a tracepoint run in attach order and the
#      first one runs colder, so every comparison is made twice, at equal
#      positions: peakbpf first (floor attached after it) vs the floor first
#      (attached before peakbpf started), and both second.
#      Untracked memcg statistic events, in the same untracked windows:
#      peakbpf's unique_stat (bpf/unique.bpf.c, tp_btf/mod_memcg_lruvec_state,
#      6.13+; loaded because the waiting command's tree has a cgroup of its
#      own) runs on every memcg statistic update of the machine. The fault
#      loop beside it makes ~4 updates a 4 KiB page (2 of NR_ANON_MAPPED,
#      which pass unique's item test and pay its cgroup loads, and 2 of the
#      LRU counts, rejected on the item; counted on 6.18), none of them the
#      tree's cgroup's.
#      bpfstat's empty program on that tracepoint (the memcg floor) is
#      attached and detached with the rss_stat floor, so it stands at the
#      same position; its snap-memcg reads both. (Page cache writes, as
#      make bench-unique's dd to /dev/shm, update only items unique rejects
#      first, the cheaper mix; the fault loop's is the dearer one.)
#  [2] wall time: the workload's own fault loop time (it prints it, so
#      peakbpf's start-up is not in it), BPF statistics off, in rounds of
#      three runs: alone, with only the empty program attached (bpfstat -n),
#      under peakbpf. The verdict is on the median of the rounds' pairs
#      (under peakbpf vs alone), beside the empty program's own overhead.
#  [3] start-up: the targets are ratios to GNU time's added time (`time
#      true` − `true`), timed side by side by hyperfine in rounds
#      (tools/bench/ratios.sh): through a helper, standalone, -r N per run
#      after the first (and the same timed by this shell, which must
#      agree); own peak RSS by GNU time's %M. The standalone load is split
#      with the record's host.bpf_startup_ms (probe, load, learn, attach)
#      and the rest (fork, other sources, report), from this shell's clock;
#      VmHWM while it tracks 1000 processes.
#      A build: make -j2 of a fixed subset of this project alone and under
#      peakbpf, hyperfine, rounds of alternating order (ratios.sh).
#  [4] scale: as the tracked cost, with N-1 idle tracked processes alive.
#  [5] accuracy: one run of each shape is measured by peakbpf, three /proc
#      samplers and a cgroup v1 memory cgroup at once; GNU time gets its own
#      run (its process would otherwise be in the others' trees).
#  [6] --stacks (tools/bench/stacks.sh): the BPF time per tracked fault with
#      --stacks against without, from the kernel's BPF statistics around
#      idle-plus-faulter's loop (other processes' runs taken out at their
#      cost in an idle window just before it); end to end, the fault loop
#      of [2] and python3 building a list, under peakbpf with and without
#      --stacks (python3 alone too), in rounds of alternating order.
set -u
export LC_ALL=C

MODE=${1:-full}
OUTPUT=${OUTPUT:-.output}
OUT=$OUTPUT/bench
PEAKBPF=$OUTPUT/peakbpf
WORKLOAD=$OUTPUT/workload
BPFSTAT=$OUT/bpfstat
SAMPLER=$OUT/procsample
TRUE_BIN=$(type -P true)        # the program, not the shell builtin
GNU_TIME=/usr/bin/time

case $MODE in
full)
	: "${BENCH_COST_SIZE:=256MiB}" "${BENCH_COST_REPS:=5}"
	: "${BENCH_WALL_SIZE:=1GiB}" "${BENCH_WALL_RUNS:=7}"
	: "${BENCH_START_RUNS:=11}" "${BENCH_HF_ROUNDS:=5}" "${BENCH_HF_RUNS:=10}"
	: "${BENCH_BUILD_SET:=cli}" "${BENCH_BUILD_ROUNDS:=4}" "${BENCH_BUILD_WARM:=1}"
	: "${BENCH_SCALE_SIZE:=256MiB}" "${BENCH_SCALE_N:=1 100 1000}"
	: "${BENCH_ACC_SPIKE:=256MiB}" "${BENCH_ACC_SIZE:=64MiB}"
	: "${BENCH_STACKS_ROUNDS:=5}" "${BENCH_STACKS_PY_N:=2000000}" ;;
short)
	: "${BENCH_COST_SIZE:=64MiB}" "${BENCH_COST_REPS:=3}"
	: "${BENCH_WALL_SIZE:=256MiB}" "${BENCH_WALL_RUNS:=5}"
	: "${BENCH_START_RUNS:=3}" "${BENCH_HF_ROUNDS:=3}" "${BENCH_HF_RUNS:=3}"
	: "${BENCH_BUILD_SET:=base}" "${BENCH_BUILD_ROUNDS:=2}" "${BENCH_R_N:=11}" "${BENCH_BUILD_WARM:=0}"
	: "${BENCH_SCALE_SIZE:=64MiB}" "${BENCH_SCALE_N:=1 100 1000}"
	: "${BENCH_ACC_SPIKE:=64MiB}" "${BENCH_ACC_SIZE:=16MiB}"
	: "${BENCH_STACKS_ROUNDS:=3}" "${BENCH_STACKS_PY_N:=500000}" ;;
*)
	echo "bench: usage: $0 full|short" >&2
	exit 2 ;;
esac
SAMPLER_MS="10,100,1000"
HF_ROUNDS=$BENCH_HF_ROUNDS HF_RUNS=$BENCH_HF_RUNS BUILD_ROUNDS=$BENCH_BUILD_ROUNDS BUILD_WARM=$BENCH_BUILD_WARM
# Windows disturbed by other processes are repeated only until this many
# seconds into the run, so a busy machine cannot stretch the bench much.
if [ "$MODE" = full ]; then : "${BENCH_RETRY_UNTIL_S:=120}"; else : "${BENCH_RETRY_UNTIL_S:=40}"; fi
RETRY_UNTIL_S=$BENCH_RETRY_UNTIL_S

die() { echo "bench: $*" >&2; exit 1; }
[ "$(id -u)" = 0 ] || die "needs root (BPF programs, cgroups); try: sudo make bench"
for f in "$PEAKBPF" "$WORKLOAD" "$BPFSTAT" "$SAMPLER"; do
	[ -x "$f" ] || die "$f is missing; build it with: make bench (or make all)"
done
mkdir -p "$OUT" || die "cannot create $OUT"
TMP=$(mktemp -d /tmp/peakbpf-bench.XXXXXX) || die "mktemp failed"
# peakbpf uses a running helper (peakbpf serve) by default: every row
# measures peakbpf loaded in its own process but the helper's rows, which
# start a helper of their own (tools/bench/paths.sh).
export PEAKBPF_HELPER="$TMP/no-helper.sock"
PAGE=$(getconf PAGESIZE)
# Every timed fault loop ([1], [2], [4]) runs on one CPU, the last this
# shell may use: on the 2-CPU machine the same loop ran ~30 % slower on
# CPU 0 than on CPU 1, so runs that landed on different CPUs compared the
# CPUs, not peakbpf (pairs of the wall time scattered from -6 % to +32 %).
# peakbpf itself is not pinned, as in use. (taskset execs the workload: the
# pid peakbpf's child has stays the workload's.)
FAULT_CPU=$(taskset -cp $$ 2>/dev/null | grep -o '[0-9]*$')
if [ -n "$FAULT_CPU" ]; then ON_CPU=(taskset -c "$FAULT_CPU"); else ON_CPU=(); fi
T_START=$EPOCHREALTIME
CGROUP=""

cleanup() {
	# Whatever a measurement left running: jobs of this shell only.
	local j
	for j in $(jobs -p); do kill "$j" 2>/dev/null; done
	[ -n "${BS_PID:-}" ] && kill "$BS_PID" 2>/dev/null
	if [ -n "$CGROUP" ] && [ -d "$CGROUP" ]; then rmdir "$CGROUP" 2>/dev/null; fi
	if [ -n "${BENCH_CG:-}" ] && [ -d "$BENCH_CG" ]; then sleep 0.2; rmdir "$BENCH_CG" 2>/dev/null; fi
	rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# Gates: FIFOs held open read-write here, so neither side's open() blocks and
# every read can time out. fd_up: the measured side says "up"; fd_go: we say go.
mkfifo "$TMP/up" "$TMP/go" "$TMP/wl" || die "mkfifo failed"
exec {fd_up}<>"$TMP/up" {fd_go}<>"$TMP/go" {fd_wl}<>"$TMP/wl"

# ---------------------------------------------------------------- helpers

# log, calc, stats, the rows (row, na_row, failed) and bpfstat (bs_start,
# bs, bs_stop): tools/bench/common.sh, shared with stacks-cost.sh.
# shellcheck source=tools/bench/common.sh
. "$(dirname "$0")/common.sh"
# since_start: whole seconds since the bench began (each section's log line
# says when it began, so the cost of each is in the log).
since_start() { calc "$EPOCHREALTIME - $T_START" | cut -d. -f1; }
size_bytes() {  # 256MiB -> bytes (the binary units the workload accepts)
	echo "$1" | awk '{ n = $0 + 0; u = $0; sub(/^[0-9]+/, "", u)
		m = (u ~ /^[Kk]/) ? 1024 : (u ~ /^[Mm]/) ? 1048576 : (u ~ /^[Gg]/) ? 1073741824 : 1
		printf "%d", n * m }'
}
mib() { awk -v b="$1" 'BEGIN { printf "%.2f MiB", b / 1048576 }'; }
# json_num FILE KEY: the first numeric "KEY" of the record (the top-level bpf
# figures come before other_sources, whose keys repeat).
json_num() { grep -o "\"$2\":-\{0,1\}[0-9][0-9.e+-]*" "$1" | head -n 1 | cut -d: -f2; }
json_str() { printf '%s' "$1" | sed -e 's/\\/\\\\/g' -e 's/"/\\"/g' -e 's/\t/ /g'; }

verdict() { awk -v v="$1" -v t="$2" 'BEGIN { print (v <= t) ? "met" : "not met" }'; }
FLOOR_NOTE="empty tp_btf program on rss_stat (tools/bench/floor.bpf.c)"
MEMCG_FLOOR_NOTE="empty tp_btf program on mod_memcg_lruvec_state (tools/bench/floor.bpf.c, bench_memcg)"


# wait_up PID: wait for "up" from the gated command while PID lives.
wait_up() {
	local i
	for ((i = 0; i < 60; i++)); do
		read -r -t 1 -u "$fd_up" _ && return 0
		kill -0 "$1" 2>/dev/null || return 1
	done
	return 1
}
# wait_wl WORD PID: read workload lines from the wl FIFO until one has WORD.
WL_LINE=""
wait_wl() {
	local i
	for ((i = 0; i < 120; i++)); do
		if read -r -t 1 -u "$fd_wl" WL_LINE; then
			case $WL_LINE in *"$1"*) return 0 ;; esac
			i=0
			continue
		fi
		kill -0 "$2" 2>/dev/null || return 1
	done
	return 1
}
drain_wl() { while read -r -t 0.05 -u "$fd_wl" _; do :; done; }
child_of() { tr ' ' '\n' <"/proc/$1/task/$1/children" 2>/dev/null | head -n 1; }

# Pooled window sums: W[key.fns|fcnt|pns|pcnt]
declare -A W
add_window() {  # KEY SNAP1 SNAP2: add the deltas of "snap F_NS F_CNT P_NS P_CNT N R_NS R_CNT"
	local k=$1
	# shellcheck disable=SC2086 # split the two snap lines into fields
	set -- $2 $3
	W[$k.fns]=$(( ${W[$k.fns]:-0} + ${10} - $2 ))
	W[$k.fcnt]=$(( ${W[$k.fcnt]:-0} + ${11} - $3 ))
	W[$k.pns]=$(( ${W[$k.pns]:-0} + ${12} - $4 ))
	W[$k.pcnt]=$(( ${W[$k.pcnt]:-0} + ${13} - $5 ))
	W[$k.rns]=$(( ${W[$k.rns]:-0} + ${15} - $7 ))
	W[$k.rcnt]=$(( ${W[$k.rcnt]:-0} + ${16} - $8 ))
	W[$k.n]=$(( ${W[$k.n]:-0} + 1 ))
}
# shellcheck disable=SC2086 # split into fields
snap_progs() { set -- $1; echo "$6"; }  # P_PROGS of a snap line
per_event() {  # KEY f|p|r|m|u: ns per event, or empty
	local ns=${W[$1.${2}ns]:-0} cnt=${W[$1.${2}cnt]:-0}
	[ "$cnt" -gt 0 ] && calc "$ns / $cnt"
}

# The memcg floor and unique_stat in the untracked windows (MEMCG set: the
# kernel has the tracepoint). mg CMD: a bpfstat command for them; a failure
# keeps the first reason in MEMCG_ERR and costs only the memcg rows, never
# the rss_stat window it rides in; after one, only detach-memcg is sent. A
# window whose peakbpf held no unique_stat is left out and the record's
# reason kept in MEMCG_NOUNIQUE.
MEMCG="" MEMCG_NA="" MEMCG_ERR="" MEMCG_NOUNIQUE="" WIN_M1="" WIN_M2=""
mg() {
	[ -n "$MEMCG" ] || return 1
	[ -z "$MEMCG_ERR" ] || [ "$1" = detach-memcg ] || return 1
	bs "$@" && return 0
	MEMCG_ERR=${MEMCG_ERR:-"bpfstat $1: $BS_REPLY"}
	return 1
}
# add_mwindow KEY SNAP1 SNAP2: add the deltas of "snap-memcg M_NS M_CNT U_NS
# U_CNT U_PROGS" when unique_stat was held at both ends; 1 when it was not.
add_mwindow() {
	local k=$1
	# shellcheck disable=SC2086 # split the two snap lines into fields
	set -- $2 $3
	[ "$6" -ge 1 ] && [ "${12}" -ge 1 ] || return 1
	W[$k.mns]=$(( ${W[$k.mns]:-0} + $8 - $2 ))
	W[$k.mcnt]=$(( ${W[$k.mcnt]:-0} + $9 - $3 ))
	W[$k.uns]=$(( ${W[$k.uns]:-0} + ${10} - $4 ))
	W[$k.ucnt]=$(( ${W[$k.ucnt]:-0} + ${11} - $5 ))
	W[$k.mn]=$(( ${W[$k.mn]:-0} + 1 ))
}
# unique_why FILE: the record's reason for its unique figure ("SOURCE: why").
unique_why() {
	sed -n 's/.*"unique":{"source":"\([^"]*\)"[^}]*"inexact_reason":"\([^"]*\)".*/\1: \2/p' "$1" 2>/dev/null | head -n 1
}

# floor_shared KEY: with peakbpf loaded for a window, the programs whose
# JIT images share the floor's 128-byte block (positions.sh, jit_neighbours),
# kept in FLOOR_SHARED when there are any: a program run just before the
# floor in its block leaves the floor's code cached (docs/performance.md,
# "Attach order").
FLOOR_SHARED="" FLOOR_CHECKED=0
floor_shared() {
	local nb
	nb=$(jit_neighbours bench_floor)
	FLOOR_CHECKED=$((FLOOR_CHECKED + 1))
	case $nb in none | "not found") ;; *) FLOOR_SHARED+="$1: $nb; " ;; esac
}

# Each window function below leaves its two snapshots in WIN_S1/WIN_S2 and
# the number of rss_stat events its own workload made in WIN_OURS (S/page
# faults plus one unmap batch per 512 pages). Other users of this machine make
# events too: measure() repeats a window (up to WIN_TRIES times) while more
# than 5 % of its events were theirs, pools the cleanest attempt under KEY
# and counts the foreign events it kept.
WIN_TRIES=3
WIN_S1="" WIN_S2="" WIN_OURS=0
TR_HWM="" TR_TAKES=0 TR_SETTLES=0
ours_events() { calc "$(size_bytes "$1") / $PAGE * (1 + 1 / 512)" | cut -d. -f1; }
measure() {  # KEY FUNCTION ARGS...
	local key=$1 try best=-1 foreign b1 b2 bours btk bst bm1="" bm2=""
	shift
	for ((try = 1; try <= WIN_TRIES; try++)); do
		TR_TAKES=0 TR_SETTLES=0 WIN_M1="" WIN_M2=""
		"$@" || continue
		foreign=$(awk -v a="$WIN_S1" -v b="$WIN_S2" -v o="$WIN_OURS" 'BEGIN {
			split(a, x, " "); split(b, y, " "); f = y[3] - x[3] - o; print (f < 0) ? 0 : f }')
		if [ "$best" -lt 0 ] || [ "$foreign" -lt "$best" ]; then
			best=$foreign b1=$WIN_S1 b2=$WIN_S2 bours=$WIN_OURS btk=$TR_TAKES bst=$TR_SETTLES
			bm1=$WIN_M1 bm2=$WIN_M2
		fi
		[ $((foreign * 20)) -le "$WIN_OURS" ] && break
		# No repeats once the run is past its time budget.
		[ "$(calc "($EPOCHREALTIME - $T_START > $RETRY_UNTIL_S)")" = 1.000000 ] && break
		[ "$try" -lt "$WIN_TRIES" ] && log "window $key: $foreign events of other processes in it, again"
	done
	[ "$best" -ge 0 ] || return 1
	add_window "$key" "$b1" "$b2"
	# The round's own window too (ROUND: [1]'s rounds), for the median of
	# the rounds' ratios and their spread.
	[ -n "${ROUND:-}" ] && add_window "$key@$ROUND" "$b1" "$b2" && W[$key@$ROUND.ours]=$bours
	# The memcg figures of the same attempt (untracked windows only).
	if [ -n "$bm1" ] && [ -n "$bm2" ] && add_mwindow "$key" "$bm1" "$bm2"; then
		[ -n "${ROUND:-}" ] && add_mwindow "$key@$ROUND" "$bm1" "$bm2"
	fi
	W[$key.ours]=$(( ${W[$key.ours]:-0} + bours ))
	W[$key.foreign]=$(( ${W[$key.foreign]:-0} + best ))
	W[$key.takes]=$(( ${W[$key.takes]:-0} + btk ))
	W[$key.settles]=$(( ${W[$key.settles]:-0} + bst ))
}

# (b) one window of untracked events: peakbpf tracks a command that only waits
# on a FIFO, while the fault-bound workload runs beside it, untracked.
# POS first: peakbpf's program runs first on rss_stat (the floor is attached
# after it); second: the floor was attached before peakbpf started.
# The memcg floor rides along (MEMCG): attached with the rss_stat floor, its
# snapshots taken inside the rss_stat ones, in WIN_M1/WIN_M2.
cost_untracked() {
	local pos=$1 pb ok=1 m1="" m2=""
	WIN_S2=""
	[ "$pos" = second ] && { bs attach || return 1; mg attach-memcg; }
	"$PEAKBPF" -q -o "$TMP/u.json" -- sh -c "echo up >$TMP/up; read _ <$TMP/go" 2>"$TMP/u.err" &
	pb=$!
	if wait_up "$pb"; then
		floor_shared "u.$pos"
		[ "$pos" = first ] && { bs attach || ok=0; mg attach-memcg; }
		bs "snap $pb" && WIN_S1=$BS_REPLY || ok=0
		mg "snap-memcg $pb" && m1=$BS_REPLY
		"${ON_CPU[@]}" "$WORKLOAD" -s "$BENCH_COST_SIZE" faults 2>/dev/null || ok=0
		mg "snap-memcg $pb" && m2=$BS_REPLY
		bs "snap $pb" && WIN_S2=$BS_REPLY || ok=0
	else
		ok=0
	fi
	bs detach
	mg detach-memcg
	echo go >&"$fd_go"
	wait "$pb" || ok=0
	WIN_OURS=$(ours_events "$BENCH_COST_SIZE")
	if [ $ok = 1 ] && [ "$(snap_progs "$WIN_S2")" -ge 1 ]; then
		if [ -n "$m1" ] && [ -n "$m2" ]; then
			WIN_M1=$m1 WIN_M2=$m2
			# shellcheck disable=SC2086 # U_PROGS, the last field
			set -- $m2
			[ "$6" -ge 1 ] || MEMCG_NOUNIQUE=$(unique_why "$TMP/u.json")
		fi
		return 0
	fi
	log "untracked window ($pos) failed: $(cat "$TMP/u.err")"
	return 1
}

# A reference window: no peakbpf; the one-lookup program and the floor, in
# the order POS says for the lookup, while the workload faults.
cost_reference() {
	local pos=$1 ok=1
	if [ "$pos" = first ]; then bs attach-ref && bs attach || ok=0
	else bs attach && bs attach-ref || ok=0; fi
	bs "snap 0" && WIN_S1=$BS_REPLY || ok=0
	"${ON_CPU[@]}" "$WORKLOAD" -s "$BENCH_COST_SIZE" faults 2>/dev/null || ok=0
	bs "snap 0" && WIN_S2=$BS_REPLY || ok=0
	bs detach-ref
	bs detach
	WIN_OURS=$(ours_events "$BENCH_COST_SIZE")
	[ $ok = 1 ]
}

# (c)/(4) one window of tracked events: peakbpf runs idle-plus-faulter; the
# window is exactly its fault loop (the workload waits for SIGUSR1 before
# and after it). POS as above; N live processes; S bytes.
cost_tracked() {
	local pos=$1 n=$2 size=$3 pb wpid ok=1
	WIN_S2=""
	drain_wl
	[ "$pos" = second ] && { bs attach || return 1; }
	"$PEAKBPF" -q -o "$TMP/t.json" -- "${ON_CPU[@]}" "$WORKLOAD" -n "$n" -s "$size" -t 60s \
		idle-plus-faulter 2>&"$fd_wl" &
	pb=$!
	if wait_wl ready "$pb" && wpid=$(child_of "$pb") && [ -n "$wpid" ]; then
		floor_shared "t.$pos"
		[ "$pos" = first ] && { bs attach || ok=0; }
		bs "snap $pb" && WIN_S1=$BS_REPLY || ok=0
		kill -USR1 "$wpid"
		wait_wl "done" "$pb" || ok=0
		bs "snap $pb" && WIN_S2=$BS_REPLY || ok=0
		TR_HWM=$(awk '/^VmHWM:/ { print $2 }' "/proc/$pb/status" 2>/dev/null)
		kill -USR1 "$wpid"
	else
		ok=0
		kill "$pb" 2>/dev/null
	fi
	bs detach
	wait "$pb" || ok=0
	WIN_OURS=$(ours_events "$size")
	if [ $ok = 1 ] && [ "$(snap_progs "$WIN_S2")" -ge 1 ]; then
		TR_TAKES=$(json_num "$TMP/t.json" count_takes)
		TR_SETTLES=$(json_num "$TMP/t.json" settles)
		return 0
	fi
	log "tracked window ($pos, $n processes) failed: $WL_LINE"
	return 1
}

# (c') the same window with the workload a cgroup target's member
# (--cgroup): peakbpf follows a cgroup of the bench's own, the workload is
# started inside it and joins by its move. The rss_stat path is the same
# (filter, mm state, tree: membership is decided at fork and move only), so
# the row beside the tracked one shows what a target's event costs.
BENCH_CG=""
bench_cgroup() {
	local m
	m=$(awk '{ for (i = 7; i <= NF; i++) if ($i == "-") break
		if ($(i + 1) == "cgroup" && $(i + 3) ~ /(^|,)memory(,|$)/) { print $5; exit } }' /proc/self/mountinfo)
	[ -n "$m" ] || m=$(awk '{ for (i = 7; i <= NF; i++) if ($i == "-") break
		if ($(i + 1) == "cgroup2") { print $5; exit } }' /proc/self/mountinfo)
	[ -n "$m" ] && mkdir -p "$m/peakbpf-bench-$$" && echo "$m/peakbpf-bench-$$"
}
cost_tracked_cgroup() {
	local pos=$1 size=$2 pb wpid ok=1 i
	WIN_S2=""
	drain_wl
	[ -n "$BENCH_CG" ] || BENCH_CG=$(bench_cgroup) || { log "no cgroup for --cgroup"; return 1; }
	[ "$pos" = second ] && { bs attach || return 1; }
	"$PEAKBPF" -q -o "$TMP/c.json" --cgroup "$BENCH_CG" 2>"$TMP/c.err" &
	pb=$!
	for ((i = 0; i < 300; i++)); do
		ls -l "/proc/$pb/fd" 2>/dev/null | grep -q bpf_link && break
		sleep 0.1
	done
	# shellcheck disable=SC2016 # the inner shell's $$ and $0
	sh -c 'echo $$ >"$0/cgroup.procs" && exec "$@"' "$BENCH_CG" "${ON_CPU[@]}" "$WORKLOAD" -n 1 \
		-s "$size" -t 60s idle-plus-faulter 2>&"$fd_wl" &
	wpid=$!
	if wait_wl ready "$wpid"; then
		[ "$pos" = first ] && { bs attach || ok=0; }
		bs "snap $pb" && WIN_S1=$BS_REPLY || ok=0
		kill -USR1 "$wpid"
		wait_wl "done" "$wpid" || ok=0
		bs "snap $pb" && WIN_S2=$BS_REPLY || ok=0
		kill -USR1 "$wpid"
	else
		ok=0
		kill "$wpid" 2>/dev/null
	fi
	bs detach
	wait "$wpid"
	kill -INT "$pb" 2>/dev/null
	wait "$pb" || ok=0
	WIN_OURS=$(ours_events "$size")
	if [ $ok = 1 ] && [ "$(snap_progs "$WIN_S2")" -ge 1 ]; then
		TR_TAKES=$(json_num "$TMP/c.json" count_takes)
		TR_SETTLES=$(json_num "$TMP/c.json" settles)
		return 0
	fi
	log "cgroup target window ($pos) failed: $WL_LINE $(head -c 200 "$TMP/c.err")"
	return 1
}

# Tracked ns/event of pooled windows KEY: the events that were not the fault
# loop's (other processes' faults: untracked, rejected at the first lookup)
# are taken out at the untracked cost measured at the same position.
# Per round r of [1]: peakbpf's ns/event over the floor's at the other
# position in the same round (u.first against the floor of u.second, where
# the floor ran first, and so on), in RR[KEY] as "ratio ratio ..."; m.first
# and m.second: unique_stat against the memcg floor, from the same windows.
declare -A RR RRM RRS
round_ratios() {
	local r pu1 pu2 pt fu pm fm
	for ((r = 0; r < BENCH_COST_REPS; r++)); do
		[ -n "${W[u.first@$r.pcnt]:-}" ] && [ -n "${W[u.second@$r.pcnt]:-}" ] || continue
		pu1=$(per_event "u.first@$r" p) pu2=$(per_event "u.second@$r" p)
		fu=$(per_event "u.second@$r" f)
		[ -n "$pu1" ] && [ -n "$fu" ] && RR[u.first]+="$(calc "$pu1 / $fu") "
		fu=$(per_event "u.first@$r" f)
		[ -n "$pu2" ] && [ -n "$fu" ] && RR[u.second]+="$(calc "$pu2 / $fu") "
		# unique_stat against the memcg floor, at the other position likewise
		pm=$(per_event "u.first@$r" u) fm=$(per_event "u.second@$r" m)
		[ -n "$pm" ] && [ -n "$fm" ] && RR[m.first]+="$(calc "$pm / $fm") "
		pm=$(per_event "u.second@$r" u) fm=$(per_event "u.first@$r" m)
		[ -n "$pm" ] && [ -n "$fm" ] && RR[m.second]+="$(calc "$pm / $fm") "
		if [ -n "${W[t.first@$r.pcnt]:-}" ] && [ -n "${W[t.second@$r.pcnt]:-}" ]; then
			read -r pt _ <<<"$(tracked_ns "t.first@$r" "$pu1")"
			fu=$(per_event "t.second@$r" f)
			RR[t.first]+="$(calc "$pt / $fu") "
			read -r pt _ <<<"$(tracked_ns "t.second@$r" "$pu2")"
			fu=$(per_event "t.first@$r" f)
			RR[t.second]+="$(calc "$pt / $fu") "
		fi
	done
}

tracked_ns() {  # KEY UNTRACKED_NS -> "NS FOREIGN"
	local key=$1 tu=${2:-0}
	awk -v pns="${W[$key.pns]}" -v pcnt="${W[$key.pcnt]}" -v t="${W[$key.ours]}" -v tu="$tu" 'BEGIN {
		u = pcnt - t; if (u < 0) u = 0
		printf "%.6f %d", (pns - u * tu) / (pcnt - u), u }'
}

# ---------------------------------------------------------------- host

KERNEL=$(uname -r)
NCPU=$(nproc)
OTHER_PROGS=$( (bpftool prog show 2>/dev/null || true) | grep -c 'name handle_rss_stat')
STATS_SYSCTL=$(sysctl -n kernel.bpf_stats_enabled 2>/dev/null || echo "?")
THP=$(sed -n 's/.*\[\(.*\)\].*/\1/p' /sys/kernel/mm/transparent_hugepage/enabled 2>/dev/null)
# [1]'s memcg rows need the memcg statistic tracepoint (6.13+): peakbpf's
# unique_stat is on it, and bpfstat's memcg floor loads only where it is.
if grep -q btf_trace_mod_memcg_lruvec_state /sys/kernel/btf/vmlinux 2>/dev/null; then
	MEMCG=1
else
	MEMCG_NA="this kernel has no memcg statistic tracepoint (btf_trace_mod_memcg_lruvec_state is not in /sys/kernel/btf/vmlinux; 6.13+), so peakbpf loads no unique_stat"
fi
OTHER_UNIQUE=$( (bpftool prog show 2>/dev/null || true) | grep -c 'name unique_stat')
echo "peakbpf bench ($MODE): Linux $KERNEL, $NCPU CPUs, page $PAGE B, THP ${THP:-?}, fault loops on CPU ${FAULT_CPU:-any (no taskset)};" \
	"$OTHER_PROGS other peakbpf program(s) on rss_stat and $OTHER_UNIQUE unique_stat at start; kernel.bpf_stats_enabled=$STATS_SYSCTL" >&2

# ---------------------------------------------------------------- 3. start-up

if [ ! -x "$GNU_TIME" ] && command -v apt-get >/dev/null; then
	log "GNU time is missing: apt-get install -y time"
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq time >/dev/null 2>&1 || log "could not install GNU time"
fi

echo "bench: +$(since_start) s [3] start-up: $TRUE_BIN alone vs peakbpf -q --json -- $TRUE_BIN, $BENCH_START_RUNS runs each, interleaved" >&2
# The record's host.bpf_startup_ms says what each BPF step took; the rest
# of a run (fork and exec of the command, the other sources, the report) is
# the run's time less its steps and less the command alone.
STEPS=(probe load learn attach)
declare -A STEP_NOTE=(
	[probe]="probing the kernel's features"
	[load]="libbpf open + load: kernel BTF, CO-RE relocation, maps, verification"
	[learn]="learning the per-CPU offsets"
	[attach]="attaching the programs"
)
A=() B=() REST=() start_err=""
declare -A ST=()
for ((i = 0; i < BENCH_START_RUNS; i++)); do
	for which in $( ((i % 2)) && echo "b a" || echo "a b"); do
		t0=$EPOCHREALTIME
		if [ "$which" = a ]; then
			"$TRUE_BIN"
		else
			"$PEAKBPF" -q --json -- "$TRUE_BIN" >"$TMP/st.json" 2>"$TMP/st.err" ||
				{ start_err="peakbpf -q --json -- true failed: $(head -n 1 "$TMP/st.err")"; break 2; }
		fi
		t1=$EPOCHREALTIME
		d=$(calc "($t1 - $t0) * 1000")
		[ "$which" = a ] && { A+=("$d"); continue; }
		B+=("$d")
		steps=$(sed -n 's/.*"bpf_startup_ms":{\([^}]*\)}.*/\1/p' "$TMP/st.json")
		sum=0
		for s in "${STEPS[@]}"; do
			v=$(printf '%s\n' "$steps" | tr ',' '\n' | sed -n "s/^\"$s\":\([0-9.e+-]*\)$/\1/p")
			[ -n "$v" ] || { start_err="no host.bpf_startup_ms.$s in the record"; break 3; }
			ST[$s]="${ST[$s]:+${ST[$s]},}$v"   # comma-separated, as the JSON wants
			sum=$(calc "$sum + $v")
		done
		REST+=("$(calc "$d - $sum")")
	done
done
if [ -z "$start_err" ]; then
	read -r am amin amax <<<"$(stats "${A[@]}")"
	read -r bm bmin bmax <<<"$(stats "${B[@]}")"
	added=$(calc "$bm - $am")
	row startup "true alone (ms, median of ${#A[@]})" "$(printf '%.2f ms (%.2f–%.2f)' "$am" "$amin" "$amax")" "" "" "$am" ms "fork+exec+wait from bash"
	row startup "peakbpf -q --json -- true (ms, median of ${#B[@]})" "$(printf '%.2f ms (%.2f–%.2f)' "$bm" "$bmin" "$bmax")" "" "" "$bm" ms "BPF load, attach, run, report"
	row startup "added by peakbpf (difference of medians)" "$(printf '%.2f ms' "$added")" "" "" "$added" ms "split below into the four BPF steps and the rest, each a median of the same runs; the target is the ratio below"
	for s in "${STEPS[@]}"; do
		IFS=, read -r -a vals <<<"${ST[$s]}"
		read -r sm smin smax <<<"$(stats "${vals[@]}")"
		row startup "  step: $s (ms, median)" "$(printf '%g ms (%g–%g)' "$sm" "$smin" "$smax")" "" "" "$sm" ms "${STEP_NOTE[$s]} (host.bpf_startup_ms.$s)"
	done
	read -r rm _ <<<"$(stats "${REST[@]}")"
	rest=$(calc "$rm - $am")
	row startup "  the rest: fork, other sources, report (ms)" "$(printf '%.2f ms' "$rest")" "" "" "$rest" ms "median over runs of (run − its four steps), less true alone"
else
	na_row startup "peakbpf -q --json -- true" "" "$start_err"
	failed "start-up"
fi
# The targets of issue 37 as ratios to GNU time's added time, by hyperfine
# (tools/bench/ratios.sh); the helper of its own from paths.sh; Python.
. "$(dirname "$0")/paths.sh"
. "$(dirname "$0")/ratios.sh"
. "$(dirname "$0")/positions.sh"
. "$(dirname "$0")/stacks.sh"
echo "bench: +$(since_start) s [3] start-up as ratios: hyperfine, $HF_ROUNDS rounds of true, GNU time, peakbpf through a helper and standalone, -r $RT_N; a Python block" >&2
ratios_startup
paths_python

# ---------------------------------------------------------------- 2. wall time

WALL_BYTES=$(size_bytes "$BENCH_WALL_SIZE")
echo "bench: +$(since_start) s [2] wall time: workload -s $BENCH_WALL_SIZE faults ($((WALL_BYTES / PAGE)) faults of 4 KiB) alone, with only the empty program attached, and under peakbpf; $BENCH_WALL_RUNS rounds, interleaved" >&2
# Other load during a run, in CPUs: busy_ticks, times_file and child_cpu
# (tools/bench/common.sh).
# Three arms: the workload alone; with only the empty program on rss_stat
# (bpfstat -n: attached, statistics left off, as in the other arms); under
# peakbpf -q --. Each round runs each arm once, in the next of these
# orders: over six rounds every arm runs in every place twice, so no arm is
# always the one after peakbpf's exit.
WALL_ORDERS=("alone empty peakbpf" "peakbpf empty alone" "empty alone peakbpf"
	"peakbpf alone empty" "alone peakbpf empty" "empty peakbpf alone")
LA=() LF=() LB=() EA=() EB=() DA=() DF=() DB=()
wall_ok=1 floor_err="" said=""
bs_start -n || floor_err="bpfstat -n did not start: $BS_REPLY"
for ((i = 0; i < BENCH_WALL_RUNS; i++)); do
	for which in ${WALL_ORDERS[i % 6]}; do
		if [ "$which" = empty ]; then
			[ -z "$floor_err" ] || continue
			bs attach || { floor_err="bpfstat attach: $BS_REPLY"; continue; }
		fi
		times_file 0
		b0=$(busy_ticks)
		t0=$EPOCHREALTIME
		if [ "$which" = peakbpf ]; then
			"$PEAKBPF" -q -o "$TMP/wall.json" -- "${ON_CPU[@]}" "$WORKLOAD" -s "$BENCH_WALL_SIZE" faults 2>"$TMP/wall.err" || wall_ok=0
		else
			"${ON_CPU[@]}" "$WORKLOAD" -s "$BENCH_WALL_SIZE" faults 2>"$TMP/wall.err" || wall_ok=0
		fi
		t1=$EPOCHREALTIME
		b1=$(busy_ticks)
		times_file 1
		[ "$which" = empty ] && { bs detach || floor_err="bpfstat detach: $BS_REPLY"; }
		c0=$(child_cpu 0) c1=$(child_cpu 1)
		[ $wall_ok = 1 ] || break 2
		e=$(sed -n 's/.*elapsed_ns=\([0-9]*\).*/\1/p' "$TMP/wall.err")
		l=$(calc "$e / 1e9")
		w=$(calc "$t1 - $t0")
		d=$(calc "(($b1 - $b0) / $HZ - ($c1 - $c0)) / $w")
		case $which in
		alone) LA+=("$l") EA+=("$w") DA+=("$d") ;;
		empty) LF+=("$l") DF+=("$d") ;;
		peakbpf) LB+=("$l") EB+=("$w") DB+=("$d") ;;
		esac
		said="${said:+$said, }$which $(printf '%.3f s (other load %.2f CPU)' "$l" "$d")"
	done
	log "round $((i + 1)): fault loop $said"
	said=""
done
bs_stop
# The empty program's arm counts only when it ran in every round.
[ -n "$floor_err" ] || [ ${#LF[@]} = ${#LA[@]} ] || floor_err="it ran in ${#LF[@]} of ${#LA[@]} rounds"
if [ $wall_ok = 1 ]; then
	wn=${#LA[@]}
	read -r lam lamin lamax <<<"$(stats "${LA[@]}")"
	read -r lbm lbmin lbmax <<<"$(stats "${LB[@]}")"
	read -r eam _ <<<"$(stats "${EA[@]}")"
	read -r ebm _ <<<"$(stats "${EB[@]}")"
	ove=$(calc "($ebm - $eam) / $eam * 100")
	spread=$(calc "($lamax - $lamin) / $lam * 100")
	row wall "fault loop alone (s, median of $wn)" "$(printf '%.3f s (%.3f–%.3f)' "$lam" "$lamin" "$lamax")" "" "" "$lam" s "time inside the workload: mmap, touch every 4 KiB page, munmap; spread $(printf '%.1f' "$spread") % (min–max) of the median"
	if [ -z "$floor_err" ]; then
		read -r lfm lfmin lfmax <<<"$(stats "${LF[@]}")"
		row wall "fault loop, empty program only (s, median of $wn)" "$(printf '%.3f s (%.3f–%.3f)' "$lfm" "$lfmin" "$lfmax")" "" "" "$lfm" s "$FLOOR_NOTE, attached by bpfstat -n; no peakbpf"
	fi
	row wall "fault loop under peakbpf (s, median of $wn)" "$(printf '%.3f s (%.3f–%.3f)' "$lbm" "$lbmin" "$lbmax")" "" "" "$lbm" s "same, tracked by peakbpf -q --; its start-up is outside the loop"
	# Each round's pair: the arm against the run alone in the same round.
	PR=() PF=()
	for ((i = 0; i < wn; i++)); do
		PR+=("$(calc "(${LB[$i]} - ${LA[$i]}) / ${LA[$i]} * 100")")
		[ -z "$floor_err" ] && PF+=("$(calc "(${LF[$i]} - ${LA[$i]}) / ${LA[$i]} * 100")")
	done
	read -r prm prmin prmax <<<"$(stats "${PR[@]}")"
	if [ -z "$floor_err" ]; then
		read -r pfm pfmin pfmax <<<"$(stats "${PF[@]}")"
		beside=$(printf 'the empty program alone: %+.2f %% in the same rounds' "$pfm")
	else
		beside="the empty program's arm failed: $floor_err"
	fi
	row wall "overhead under peakbpf, median of $wn pairs (%)" "$(printf '%+.2f %% (%+.1f … %+.1f)' "$prm" "$prmin" "$prmax")" "≤ 10 %" "$(verdict "$prm" 10)" "$prm" "%" "each round's run under peakbpf vs its run alone; $beside"
	if [ -z "$floor_err" ]; then
		row wall "overhead, empty program only, median of $wn pairs (%)" "$(printf '%+.2f %% (%+.1f … %+.1f)' "$pfm" "$pfmin" "$pfmax")" "" "" "$pfm" "%" "what any program on rss_stat costs this loop: the floor of the row above"
	else
		na_row wall "overhead, empty program only" "" "$floor_err"
		failed "wall time, empty program's arm"
	fi
	# Rounds during which other processes kept more than 0.1 CPU busy.
	PC=() nd=0 dmax=0
	for ((i = 0; i < wn; i++)); do
		dd=$(printf '%s\n' "${DA[$i]}" "${DB[$i]}" "${DF[$i]:-0}" | sort -g | tail -n 1)
		dmax=$(calc "($dd > $dmax) ? $dd : $dmax")
		if [ "$(verdict "$dd" 0.1)" = met ]; then PC+=("${PR[$i]}"); else nd=$((nd + 1)); fi
	done
	dnote="$nd of $wn rounds ran while other processes kept > 0.1 CPU busy (most: $(printf '%.2f' "$dmax") CPU)"
	if [ "$nd" -gt 0 ] && [ ${#PC[@]} -ge 3 ]; then
		read -r pcm pcmin pcmax <<<"$(stats "${PC[@]}")"
		row wall "overhead under peakbpf, ${#PC[@]} undisturbed pairs (%)" "$(printf '%+.2f %% (%+.1f … %+.1f)' "$pcm" "$pcmin" "$pcmax")" "" "" "$pcm" "%" "$dnote"
	else
		row wall "other load during the runs (CPUs, most)" "$(printf '%.2f' "$dmax")" "" "" "$dmax" CPU "$dnote"
	fi
	row wall "overhead, whole command incl. start-up (% of medians)" "$(printf '%+.2f %% (%.3f s vs %.3f s)' "$ove" "$ebm" "$eam")" "" "" "$ove" "%" "informative: includes peakbpf's start-up (row 3)"
else
	na_row wall "overhead under peakbpf" "≤ 10 %" "a run failed: $(head -n 2 "$TMP/wall.err")"
	failed "wall time"
fi
echo "bench: +$(since_start) s [2] a build: make -j2 of bench-build-subset ($BENCH_BUILD_SET) alone and under peakbpf, $BUILD_ROUNDS rounds (hyperfine)" >&2
ratios_build "$BENCH_BUILD_SET"

# [1]'s memcg rows, from the untracked windows' memcg figures: pooled ns per
# event at each position, then each round's ratio against the memcg floor at
# the other position (RR[m.*]), as the rss_stat rows. "n/a" with the reason
# when the kernel has no tracepoint, peakbpf held no unique_stat, or bpfstat's
# memcg floor failed (that one also fails the bench).
memcg_rows() {
	local fm1 fm2 pm1 pm2 r1 r2 k rm rmin rmax why="" per
	fm1=$(per_event u.second m) fm2=$(per_event u.first m)   # memcg floor first / second
	pm1=$(per_event u.first u) pm2=$(per_event u.second u)
	if [ -z "$MEMCG" ]; then
		why=$MEMCG_NA
	elif [ -n "$MEMCG_ERR" ]; then
		why="the memcg floor failed: $MEMCG_ERR"
		failed "memcg per-event cost"
	elif [ -z "$fm1" ] || [ -z "$fm2" ] || [ -z "$pm1" ] || [ -z "$pm2" ]; then
		why="peakbpf held no unique_stat program in the untracked windows${MEMCG_NOUNIQUE:+ (its record: $MEMCG_NOUNIQUE)}"
	fi
	if [ -n "$why" ]; then
		na_row cost "peakbpf unique_stat, untracked memcg event" "≤ 1.2 × memcg floor" "$why"
		return
	fi
	per=$(calc "${W[u.first.mcnt]} / (${W[u.first.mn]} * $(size_bytes "$BENCH_COST_SIZE") / $PAGE)")
	row cost "memcg floor, untracked windows: first / second (ns/event)" "$(printf '%.1f ns / %.1f ns' "$fm1" "$fm2")" "" "" "$fm1" ns \
		"$MEMCG_FLOOR_NOTE; ${W[u.second.mcnt]} / ${W[u.first.mcnt]} memcg statistic updates, $(printf '%.1f' "$per") per 4 KiB page the workload faulted (other processes' updates are untracked ones too)"
	r1=$(calc "$pm1 / $fm1") r2=$(calc "$pm2 / $fm2")
	row cost "peakbpf unique_stat, untracked memcg event, first (ns/event)" "$(printf '%.1f ns = %.2f × memcg floor' "$pm1" "$r1")" "≤ 1.2 × memcg floor" "$(verdict "$r1" 1.2)" "$pm1" ns \
		"bpf/unique.bpf.c on mod_memcg_lruvec_state, vs the memcg floor first in its own windows; ${W[u.first.ucnt]} events in ${W[u.first.mn]} windows"
	row cost "peakbpf unique_stat, untracked memcg event, second (ns/event)" "$(printf '%.1f ns = %.2f × memcg floor' "$pm2" "$r2")" "≤ 1.2 × memcg floor" "$(verdict "$r2" 1.2)" "$pm2" ns \
		"memcg floor attached first, unique_stat second, same windows"
	for k in m.first m.second; do
		[ -n "${RR[$k]:-}" ] || continue
		# shellcheck disable=SC2086 # the ratios, one word each
		read -r rm rmin rmax <<<"$(stats ${RR[$k]})"
		row cost "peakbpf unique_stat, untracked memcg event, ${k#*.}: median of $BENCH_COST_REPS rounds (× memcg floor)" \
			"$(printf '%.2f × (%.2f–%.2f)' "$rm" "$rmin" "$rmax")" "≤ 1.2 × memcg floor" "$(verdict "$rm" 1.2)" "$rm" "x" \
			"each round's untracked windows, the memcg floor at the other position in the same round; min–max over rounds"
		RRM[$k]=$rm RRS[$k]=$(printf '%.2f–%.2f' "$rmin" "$rmax")
	done
}

# ---------------------------------------------------------------- 1. and 4. per-event cost

echo "bench: +$(since_start) s [1] per-event cost from BPF run-time statistics, $BENCH_COST_REPS round(s) of 6 windows (workload faults -s $BENCH_COST_SIZE)" >&2
COST_OK=0 CG_COST_FAILED=0
if bs_start; then
	COST_OK=1
	for ((r = 0; r < BENCH_COST_REPS; r++)); do
		ROUND=$r
		if ((r % 2)); then order="c.first t.second t.first r.second r.first u.second u.first"
		else order="u.first u.second r.first r.second t.first t.second c.first"; fi
		for w in $order; do
			case $w in
			r.*) measure "$w" cost_reference "${w#r.}" || COST_OK=0 ;;
			u.*) measure "$w" cost_untracked "${w#u.}" || COST_OK=0 ;;
			t.*) measure "$w" cost_tracked "${w#t.}" 1 "$BENCH_COST_SIZE" || COST_OK=0 ;;
			c.*) measure "$w" cost_tracked_cgroup "${w#c.}" "$BENCH_COST_SIZE" || CG_COST_FAILED=1 ;;
			esac
		done
	done
	ROUND=""
	echo "bench: +$(since_start) s [1] attach order: two empty programs in both orders, $BENCH_COST_REPS round(s) (tools/bench/positions.sh)" >&2
	cost_positions
	echo "bench: +$(since_start) s [4] scale: tracked per-event cost with N live tracked processes (N-1 idle), N = $BENCH_SCALE_N" >&2
	SCALE_HWM=""
	for n in $BENCH_SCALE_N; do
		if measure "s.$n" cost_tracked first "$n" "$BENCH_SCALE_SIZE"; then
			SCALE_HWM=$TR_HWM SCALE_HWM_N=$n
		fi
	done
	bs_stop
fi

# ---------------------------------------------------------------- 6. --stacks

echo "bench: +$(since_start) s [6] --stacks: per tracked fault, the fault loop and python3, with and without (tools/bench/stacks.sh)" >&2
stacks_bench
STATS_SYSCTL_AFTER=$(sysctl -n kernel.bpf_stats_enabled 2>/dev/null || echo "?")

if [ $COST_OK = 1 ]; then
	fu1=$(per_event u.second f) fu2=$(per_event u.first f)   # floor first / second
	pu1=$(per_event u.first p) pu2=$(per_event u.second p)
	ft1=$(per_event t.second f) ft2=$(per_event t.first f)
	read -r pt1 ut1 <<<"$(tracked_ns t.first "$pu1")"
	read -r pt2 ut2 <<<"$(tracked_ns t.second "$pu2")"
	nu=${W[u.first.pcnt]} nt=${W[t.first.pcnt]}
	row cost "floor, untracked windows: first / second (ns/event)" "$(printf '%.1f ns / %.1f ns' "$fu1" "$fu2")" "" "" "$fu1" ns "$FLOOR_NOTE; ${W[u.second.fcnt]} / ${W[u.first.fcnt]} events; programs in its JIT image's 128-byte block: ${POS_FLOOR_NB:-not read}, in the memcg floor's: ${POS_MEMCG_NB:-not read}; while peakbpf was loaded: ${FLOOR_SHARED:-none in $FLOOR_CHECKED windows}"
	r1=$(calc "$pu1 / $fu1") r2=$(calc "$pu2 / $fu2")
	row cost "peakbpf, untracked event, first (ns/event)" "$(printf '%.1f ns = %.2f × floor' "$pu1" "$r1")" "≤ 1.2 × floor" "$(verdict "$r1" 1.2)" "$pu1" ns "vs the floor first in its own windows; $nu events, ${W[u.first.foreign]} of them other processes'"
	row cost "peakbpf, untracked event, second (ns/event)" "$(printf '%.1f ns = %.2f × floor' "$pu2" "$r2")" "≤ 1.2 × floor" "$(verdict "$r2" 1.2)" "$pu2" ns "floor attached first, peakbpf second, same windows"
	rl1=$(per_event r.first r) rl2=$(per_event r.second r)
	rf1=$(per_event r.second f) rf2=$(per_event r.first f)
	q1=$(calc "$rl1 / $rf1") q2=$(calc "$rl2 / $rf2")
	row cost "reference: one hash-map lookup, first / second (ns/event)" "$(printf '%.1f / %.1f ns = %.2f / %.2f × floor' "$rl1" "$rl2" "$q1" "$q2")" "" "" "$rl1" ns "not peakbpf: the least a one-lookup reject costs (16384-entry hash, 8-byte key, miss); floor in the same windows $(printf '%.1f / %.1f' "$rf1" "$rf2") ns"
	round_ratios
	r3=$(calc "$pt1 / $ft1") r4=$(calc "$pt2 / $ft2")
	row cost "floor, tracked windows: first / second (ns/event)" "$(printf '%.1f ns / %.1f ns' "$ft1" "$ft2")" "" "" "$ft1" ns "the same program while peakbpf tracks the workload"
	row cost "peakbpf, tracked event, first (ns/event)" "$(printf '%.1f ns = %.2f × floor' "$pt1" "$r3")" "≤ 3 × floor" "$(verdict "$r3" 3)" "$pt1" ns "count_takes ${W[t.first.takes]}, settles ${W[t.first.settles]} (whole runs); $nt events in windows, $ut1 untracked taken out"
	row cost "peakbpf, tracked event, second (ns/event)" "$(printf '%.1f ns = %.2f × floor' "$pt2" "$r4")" "≤ 3 × floor" "$(verdict "$r4" 3)" "$pt2" ns "floor attached first; count_takes ${W[t.second.takes]}, settles ${W[t.second.settles]}; $ut2 untracked taken out"
	if [ -n "${W[c.first.pcnt]:-}" ]; then
		read -r pc1 uc1 <<<"$(tracked_ns c.first "$pu1")"
		fc1=$(per_event c.first f)
		r5=$(calc "$pc1 / $fc1") r6=$(calc "$pc1 / $pt1")
		row cost "peakbpf, cgroup target's tracked event, first (ns/event)" "$(printf '%.1f ns = %.2f × floor = %.2f × a command'"'"'s' "$pc1" "$r5" "$r6")" "≤ 3 × floor" "$(verdict "$r5" 3)" "$pc1" ns "--cgroup: the workload joined by a move; floor in the same windows $(printf '%.1f' "$fc1") ns; $uc1 untracked taken out"
	else
		na_row cost "peakbpf, cgroup target's tracked event" "≤ 3 × floor" "its window failed: $(head -c 200 "$TMP/c.err" 2>/dev/null)"
	fi
	for k in u.first u.second t.first t.second; do
		[ -n "${RR[$k]:-}" ] || continue
		read -r rm rmin rmax <<<"$(stats ${RR[$k]})"
		case $k in u.*) tgt=1.2 what="untracked" ;; *) tgt=3 what="tracked" ;; esac
		row cost "peakbpf, $what event, ${k#*.}: median of $BENCH_COST_REPS rounds (× floor)" \
			"$(printf '%.2f × (%.2f–%.2f)' "$rm" "$rmin" "$rmax")" "≤ $tgt × floor" "$(verdict "$rm" "$tgt")" "$rm" "x" \
			"each round's own windows, the floor at the other position in the same round; min–max over rounds"
		RRM[$k]=$rm RRS[$k]=$(printf '%.2f–%.2f' "$rmin" "$rmax")
	done
	memcg_rows
	order_sums
	pos_rows
	if [ -n "${lam:-}" ]; then
		est=$(calc "$pt1 * $WALL_BYTES / $PAGE / ($lam * 1e9) * 100")
		row wall "overhead estimated from [1] (%)" "$(printf '%+.2f %%' "$est")" "" "" "$est" "%" "derived, not timed, a cross-check of the timed row: tracked ns/event (first) × $((WALL_BYTES / PAGE)) faults ÷ the fault loop's median alone"
	fi
	# 4. scale
	SC=()
	for n in $BENCH_SCALE_N; do
		if [ -n "${W[s.$n.pcnt]:-}" ]; then
			read -r ps us <<<"$(tracked_ns "s.$n" "$pu1")"
			SC+=("$ps")
			row scale "tracked event, $n live tracked process(es) (ns/event)" "$(printf '%.1f ns' "$ps")" "" "" "$ps" ns "count_takes ${W[s.$n.takes]}, settles ${W[s.$n.settles]}; $us untracked taken out"
		else
			na_row scale "tracked event, $n live tracked process(es)" "" "the window failed"
			failed "scale, N=$n"
		fi
	done
	if [ ${#SC[@]} -ge 2 ]; then
		read -r _ smin smax <<<"$(stats "${SC[@]}")"
		spread=$(calc "($smax - $smin) / $smin * 100")
		grow=$(calc "(${SC[-1]} - ${SC[0]}) / ${SC[0]} * 100")
		nfirst=${BENCH_SCALE_N%% *} nlast=${BENCH_SCALE_N##* }
		row scale "change from $nfirst to $nlast live processes (%)" "$(printf '%+.1f %%' "$grow")" "flat (≤ +15 %)" "$(verdict "$grow" 15)" "$grow" "%" "max/min − 1 over all N: $(printf '%.1f' "$spread") %; peakbpf's program first on the tracepoint, one window per N"
	fi
else
	na_row cost "per-event cost" "≤ 1.2 / ≤ 3 × floor" "bpfstat or a measuring window failed: $(head -n 2 "$TMP/bpfstat.err" 2>/dev/null)"
	na_row cost "peakbpf unique_stat, untracked memcg event" "≤ 1.2 × memcg floor" "its windows are [1]'s untracked ones, which failed"
	na_row scale "per-event cost at scale" "flat" "bpfstat or a measuring window failed"
	failed "per-event cost"
fi

# 3b. peakbpf's own peak memory while it tracks many processes (the -- true one is ratios.sh's)
if [ -n "${SCALE_HWM:-}" ]; then
	hm=$(calc "$SCALE_HWM / 1024")
	row startup "peakbpf's VmHWM, tracking $SCALE_HWM_N processes (MiB)" "$(printf '%.2f MiB' "$hm")" "≤ 10 MiB" "$(verdict "$hm" 10)" "$hm" MiB "/proc/PID/status VmHWM read as the fault loop ended, before the report"
else
	na_row startup "peakbpf's VmHWM while tracking" "≤ 10 MiB" "the scale run did not complete"
fi

# ---------------------------------------------------------------- 5. accuracy

echo "bench: +$(since_start) s [5] accuracy: true peak vs peakbpf, /proc samplers ($SAMPLER_MS ms) and cgroup v1 (one run), GNU time (its own run)" >&2
CG_ROOT=/sys/fs/cgroup/memory
ACC_SHAPES=(
	"spike held 5 ms in a 1 s life|-s $BENCH_ACC_SPIKE -t 5ms blip"
	"4 children at once, 200 ms|-s $BENCH_ACC_SIZE -n 4 -t 200ms concurrent"
	"4 children one after another, 200 ms|-s $BENCH_ACC_SIZE -n 4 -t 200ms sequential"
)
A_NAME=() A_TRUE=() A_PB=() A_TIME=() A_S1=() A_S2=() A_S3=() A_CG=() A_NOTE=()
for spec in "${ACC_SHAPES[@]}"; do
	name=${spec%%|*}
	read -r -a args <<<"${spec#*|}"
	truth=$("$WORKLOAD" -x "${args[@]}") || truth=""
	pbv="" s1="" s2="" s3="" cgv="" tv="" note=""
	# One run seen by peakbpf, the samplers and the cgroup at once.
	CGROUP=""
	if [ -d "$CG_ROOT" ] && mkdir "$CG_ROOT/peakbpf-bench-$$" 2>/dev/null; then
		CGROUP=$CG_ROOT/peakbpf-bench-$$
		join="echo \$\$ >$CGROUP/cgroup.procs || exit 125;"
	else
		join=""
		note="cgroup v1 memory controller not available at $CG_ROOT"
	fi
	"$PEAKBPF" -q -o "$TMP/a.json" -- sh -c "$join echo up >$TMP/up; read _ <$TMP/go; exec \"\$0\" \"\$@\"" \
		"$WORKLOAD" "${args[@]}" 2>"$TMP/a.err" &
	pb=$!
	if wait_up "$pb" && root=$(child_of "$pb") && [ -n "$root" ]; then
		"$SAMPLER" -p "$root" -i "$SAMPLER_MS" >"$TMP/s.out" &
		sp=$!
		echo go >&"$fd_go"
		if wait "$pb"; then
			pbv=$(json_num "$TMP/a.json" growth_bytes)
			[ "$(grep -o '"exact":[a-z]*' "$TMP/a.json" | head -n 1)" = '"exact":false' ] &&
				note="peakbpf said not exact, error bound $(json_num "$TMP/a.json" error_bound_bytes) bytes"
			fill=$(sed -n 's/.*blip at_ns=\([0-9]*\) fill_ns=\([0-9]*\) held_ns=\([0-9]*\).*/\1 \2 \3/p' "$TMP/a.err")
			if [ -n "$fill" ]; then
				read -r f_at f_fill f_held <<<"$fill"
				note="${note:+$note; }the block filled in $(calc "$f_fill / 1e6" | xargs printf '%.1f') ms at $(calc "$f_at / 1e6" | xargs printf '%.0f') ms, then held $(calc "$f_held / 1e6" | xargs printf '%.1f') ms (with the unmap)"
			fi
		fi
		wait "$sp"
		s1=$(awk '$2 == 10 { print $3 }' "$TMP/s.out")
		s2=$(awk '$2 == 100 { print $3 }' "$TMP/s.out")
		s3=$(awk '$2 == 1000 { print $3 }' "$TMP/s.out")
		[ -n "$CGROUP" ] && cgv=$(cat "$CGROUP/memory.max_usage_in_bytes" 2>/dev/null)
	else
		kill "$pb" 2>/dev/null
		wait "$pb"
		note="the run failed: $(head -n 1 "$TMP/a.err")"
		failed "accuracy: $name"
	fi
	if [ -n "$CGROUP" ]; then rmdir "$CGROUP" 2>/dev/null; CGROUP=""; fi
	# GNU time: its own run, so its process is in no other figure's tree.
	if [ -x "$GNU_TIME" ]; then
		kib=$("$GNU_TIME" -f %M "$WORKLOAD" "${args[@]}" 2>&1 >/dev/null | tail -n 1)
		[ "$kib" -gt 0 ] 2>/dev/null && tv=$((kib * 1024))
	fi
	A_NAME+=("$name") A_TRUE+=("$truth") A_PB+=("$pbv") A_TIME+=("$tv")
	A_S1+=("$s1") A_S2+=("$s2") A_S3+=("$s3") A_CG+=("$cgv") A_NOTE+=("$note")
	log "$name: true $truth, peakbpf $pbv, time $tv, samplers $s1 $s2 $s3, cgroup $cgv"
done

# ---------------------------------------------------------------- output

T_TOTAL=$(calc "$EPOCHREALTIME - $T_START")
OTHER_PROGS_END=$( (bpftool prog show 2>/dev/null || true) | grep -c 'name handle_rss_stat')
OTHER_UNIQUE_END=$( (bpftool prog show 2>/dev/null || true) | grep -c 'name unique_stat')
# The helper row of make bench-cpus's last run ($OUT/cpus.json), which
# boots VMs of 2 and 64 vCPUs (too slow for this bench): CPUS_FIG, CPUS_RES.
cpus_scaling() {
	CPUS_FIG="" CPUS_RES=""
	[ -r "$OUT/cpus.json" ] && command -v python3 >/dev/null || return 0
	read -r CPUS_RES CPUS_FIG < <(python3 - "$OUT/cpus.json" <<'PY' 2>/dev/null
import json, os, sys, time
d = json.load(open(sys.argv[1]))
for r in d.get("rows", []):
    if r.get("measurement", "").startswith("peakbpf -q -- true with a helper running") and r.get("ratio"):
        m = r["medians"]
        when = time.strftime("%Y-%m-%d", time.gmtime(os.path.getmtime(sys.argv[1])))
        print(r.get("result", "n/a").replace(" ", "_"),
              "x%.2f (%.1f → %.1f ms added; make bench-cpus, %s)" % (r["ratio"], m[0], m[-1], when))
PY
)
	CPUS_RES=${CPUS_RES//_/ }
}
# One line per target of issue 37, from the rows below it ("n/a": not
# measured in this run, and why). Each figure is a ratio to what it is
# compared with in the same run, the median of the rounds and their min–max;
# the per-event ones in the worse of the two attach orders.
worse_order() {  # KIND (u|m|t): "FIGURE|VERDICT-VALUE" of the worse order
	local a=${RRM[$1.first]:-} b=${RRM[$1.second]:-} w o
	[ -n "$a" ] && [ -n "$b" ] || return 0
	if [ "$(calc "($b > $a)")" = 1.000000 ]; then w=second o=first; else w=first o=second; fi
	printf '%.2f × (%s) peakbpf %s; %s %.2f ×|%s' "${RRM[$1.$w]}" "${RRS[$1.$w]}" "$w" "$o" "${RRM[$1.$o]}" "${RRM[$1.$w]}"
}
targets_table() {  # [md]
	local f v fmt=${1:-text} k
	if [ "$fmt" = md ]; then
		echo "| target (issue 37) | figure: median of rounds (min–max) | target | result |"
		echo "|---|---|---|---|"
		tline() { echo "| $1 | ${2:-n/a} | $3 | ${4:-n/a} |"; }
	else
		echo "Targets (issue 37): ratios to what each is compared with in this run; median of rounds (min–max)"
		tline() { printf '  %-50s %-52s %-16s %s\n' "$1" "$2" "$3" "$4"; }
	fi
	tline "peakbpf -q -- true through a running helper" "${RT_HELPER:+$(printf '%.2f × (%s) GNU time'"'"'s added time' "$RT_HELPER" "$RT_HELPER_SPREAD")}" \
		"≤ 1.5 ×" "${RT_HELPER:+$(verdict "$RT_HELPER" 1.5)}"
	cpus_scaling
	tline "  the same, CPU scaling 2 → 64 vCPUs" "${CPUS_FIG:-make bench-cpus (6.12 VM)}" "≤ x1.15" "${CPUS_RES:-not run here}"
	tline "-r $RT_N -- true, per run after the first, standalone" "${RT_RUNS_ALONE:+$(printf '%.2f × (%s)' "$RT_RUNS_ALONE" "$RT_RUNS_ALONE_SPREAD")}" \
		"≤ 1 ×" "${RT_RUNS_ALONE:+$(verdict "$RT_RUNS_ALONE" 1)}"
	tline "  the same through the helper" "${RT_RUNS_HELPER:+$(printf '%.2f × (%s)' "$RT_RUNS_HELPER" "$RT_RUNS_HELPER_SPREAD")}" \
		"≤ 1 ×" "${RT_RUNS_HELPER:+$(verdict "$RT_RUNS_HELPER" 1)}"
	tline "standalone start-up (--no-helper)" "${RT_STANDALONE:+$(printf '%.2f × (%s)' "$RT_STANDALONE" "$RT_STANDALONE_SPREAD")}" \
		"≤ 5 ×" "${RT_STANDALONE:+$(verdict "$RT_STANDALONE" 5)}"
	tline "standalone own peak RSS" "${RT_RSS:+$(printf '%.2f MiB (%s)' "$RT_RSS" "$RT_RSS_SPREAD")}" "≤ 10 MiB" "${RT_RSS:+$(verdict "$RT_RSS" 10)}"
	tline "Python measure() block (issue 24)" "${PATHS_PY_BLOCK:+$(printf '%.3f ms' "$PATHS_PY_BLOCK")}" "≤ 1 ms" \
		"${PATHS_PY_BLOCK:+$(verdict "$PATHS_PY_BLOCK" 1)}"
	for k in "u|untracked rss_stat event, worse order|1.2" "m|untracked memcg statistic event, worse order|1.2" "t|tracked event, worse order|3"; do
		IFS='|' read -r kind name tgt <<<"$k"
		f=$(worse_order "$kind")
		v=${f##*|}
		tline "$name" "${f:+${f%|*}}" "≤ $tgt × empty" "${f:+$(verdict "$v" "$tgt")}"
	done
	tline "$BENCH_WALL_SIZE in 4 KiB pages, wall" "${prm:+$(printf '%+.2f %% (%+.1f … %+.1f; empty program alone %+.2f %%)' "$prm" "$prmin" "$prmax" "${pfm:-0}")}" "≤ 10 %" \
		"${prm:+$(verdict "$prm" 10)}"
	tline "make -j2 (bench-build-subset $BENCH_BUILD_SET), wall" "${RT_BUILD:+$(printf '%+.2f %% (%s %%)' "$RT_BUILD" "$RT_BUILD_SPREAD")}" "≤ 2 %" \
		"${RT_BUILD:+$(verdict "$RT_BUILD" 2)}"
	[ "$fmt" = md ] || echo "  (an empty figure: not measured in this run; the rows below say why)"
	echo
}
acc_cell() {  # BYTES TRUE: "256.82 MiB (+0.3 %)" or n/a
	[ -n "$1" ] || { echo "n/a"; return; }
	awk -v b="$1" -v t="$2" 'BEGIN { printf "%.2f MiB (%+.1f %%)", b / 1048576, (b - t) / t * 100 }'
}

{
	echo "peakbpf benchmark, $MODE mode: Linux $KERNEL, $NCPU CPUs (fault loops on CPU ${FAULT_CPU:-any}), $(date -u '+%Y-%m-%d %H:%M UTC'), ${T_TOTAL%.*} s"
	echo "Every figure below was measured in this run."
	echo
	targets_table
	for sec in cost wall startup scale stacks; do
		case $sec in
		cost) echo "[1] per-event cost of the rss_stat program and of the unique program on memcg statistic updates (kernel BPF run-time statistics, ns = run_time_ns / run_cnt)" ;;
		wall) echo "[2] wall time, fault-bound workload ($BENCH_WALL_SIZE in 4 KiB pages), median (min–max) of interleaved runs" ;;
		startup) echo "[3] start-up and peakbpf's own memory" ;;
		scale) echo "[4] scale: tracked per-event cost vs live tracked processes ($BENCH_SCALE_SIZE faulted, the others idle)" ;;
		stacks) echo "[6] --stacks FILE (docs/stacks.md): ratios with against without, median (min–max) of the rounds" ;;
		esac
		for i in "${!R_SEC[@]}"; do
			[ "${R_SEC[$i]}" = "$sec" ] || continue
			printf '  %-56s %-30s %-24s %s\n' "${R_NAME[$i]}" "${R_FIG[$i]}" "${R_TGT[$i]:+target ${R_TGT[$i]}}" "${R_RES[$i]}"
			[ -n "${R_NOTE[$i]}" ] && printf '      %s\n' "${R_NOTE[$i]}"
		done
	done
	echo "[5] accuracy: added peak in MiB (error vs true); peakbpf, samplers and cgroup saw one run, GNU time another"
	printf '  %-38s %-10s %-22s %-22s %-22s %-22s %-22s %s\n' shape true peakbpf "GNU time (max 1 proc)" "sampler 10 ms" "sampler 100 ms" "sampler 1000 ms" "cgroup v1 max_usage"
	for i in "${!A_NAME[@]}"; do
		t=${A_TRUE[$i]}
		printf '  %-38s %-10s %-22s %-22s %-22s %-22s %-22s %s\n' "${A_NAME[$i]}" "$(mib "$t")" \
			"$(acc_cell "${A_PB[$i]}" "$t")" "$(acc_cell "${A_TIME[$i]}" "$t")" \
			"$(acc_cell "${A_S1[$i]}" "$t")" "$(acc_cell "${A_S2[$i]}" "$t")" \
			"$(acc_cell "${A_S3[$i]}" "$t")" "$(acc_cell "${A_CG[$i]}" "$t")"
		[ -n "${A_NOTE[$i]}" ] && printf '      %s\n' "${A_NOTE[$i]}"
	done
	echo "  true: workload -x (excludes each process's own binary and stack, which every other column includes)."
	echo "  sampler: tools/bench/procsample.c sums /proc/PID/statm resident over the tree; three samplers watched the very run peakbpf measured"
	echo "           (not peakbpf --source proc, which would be a run of its own)."
	echo "  peakbpf: growth_bytes. GNU time: %M, the largest single process. cgroup: memory.max_usage_in_bytes, includes page cache and kernel memory."
	echo "Notes: BPF statistics were on (BPF_ENABLE_STATS, held by bpfstat) only during [1], [4] and [6]'s per-fault windows;"
	echo "  kernel.bpf_stats_enabled read $STATS_SYSCTL before and $STATS_SYSCTL_AFTER after. Other peakbpf programs loaded (other users): $OTHER_PROGS at start, $OTHER_PROGS_END at the end"
	echo "  (unique_stat on the memcg tracepoint: $OTHER_UNIQUE at start, $OTHER_UNIQUE_END at the end)."
	echo "  first/second: programs on a tracepoint run in attach order; alone, peakbpf's program is first, so 'first' is the production case."
	echo "  Per-event cost and load time against the CPU count (flat from 2 to 64 CPUs): make bench-cpus (6.12 VM, not run here)."
} | tee "$OUT/results.txt"

# JSON
{
	printf '{"mode":"%s","kernel":"%s","cpus":%s,"fault_cpu":%s,"page_size":%s,"thp":"%s","seconds":%s,' \
		"$MODE" "$(json_str "$KERNEL")" "$NCPU" "${FAULT_CPU:-null}" "$PAGE" "$(json_str "$THP")" "$T_TOTAL"
	printf '"other_peakbpf_programs_at_start":%s,"other_peakbpf_programs_at_end":%s,"bpf_stats_sysctl_before":"%s","bpf_stats_sysctl_after":"%s",' \
		"$OTHER_PROGS" "$OTHER_PROGS_END" "$STATS_SYSCTL" "$STATS_SYSCTL_AFTER"
	printf '"memcg_tracepoint":%s,"other_unique_programs_at_start":%s,"other_unique_programs_at_end":%s,' \
		"$([ -n "$MEMCG" ] && echo true || echo false)" "$OTHER_UNIQUE" "$OTHER_UNIQUE_END"
	printf '"params":{"cost_size":"%s","cost_reps":%s,"wall_size":"%s","wall_runs":%s,"start_runs":%s,"scale_size":"%s","scale_n":"%s"},' \
		"$BENCH_COST_SIZE" "$BENCH_COST_REPS" "$BENCH_WALL_SIZE" "$BENCH_WALL_RUNS" "$BENCH_START_RUNS" "$BENCH_SCALE_SIZE" "$BENCH_SCALE_N"
	printf '"rows":['
	for i in "${!R_SEC[@]}"; do
		[ "$i" -gt 0 ] && printf ','
		res=${R_RES[$i]}
		printf '{"section":"%s","measurement":"%s","figure":"%s","value":%s,"unit":"%s","target":%s,"result":%s,"note":"%s"}' \
			"${R_SEC[$i]}" "$(json_str "${R_NAME[$i]}")" "$(json_str "${R_FIG[$i]}")" "${R_VAL[$i]}" "${R_UNIT[$i]}" \
			"$([ -n "${R_TGT[$i]}" ] && printf '"%s"' "$(json_str "${R_TGT[$i]}")" || echo null)" \
			"$([ -n "$res" ] && printf '"%s"' "$res" || echo null)" "$(json_str "${R_NOTE[$i]}")"
	done
	printf '],"accuracy":['
	for i in "${!A_NAME[@]}"; do
		[ "$i" -gt 0 ] && printf ','
		printf '{"shape":"%s","true_bytes":%s,"peakbpf_growth_bytes":%s,"gnu_time_maxrss_bytes":%s,"sampler_10ms_bytes":%s,"sampler_100ms_bytes":%s,"sampler_1000ms_bytes":%s,"cgroup_v1_max_usage_bytes":%s,"note":"%s"}' \
			"$(json_str "${A_NAME[$i]}")" "${A_TRUE[$i]:-null}" "${A_PB[$i]:-null}" "${A_TIME[$i]:-null}" \
			"${A_S1[$i]:-null}" "${A_S2[$i]:-null}" "${A_S3[$i]:-null}" "${A_CG[$i]:-null}" "$(json_str "${A_NOTE[$i]}")"
	done
	printf '],"raw":{"startup_true_ms":[%s],"startup_peakbpf_ms":[%s],' "$(IFS=,; echo "${A[*]}")" "$(IFS=,; echo "${B[*]}")"
	for s in "${STEPS[@]}"; do printf '"startup_%s_ms":[%s],' "$s" "${ST[$s]:-}"; done
	printf '"fault_loop_alone_s":[%s],"fault_loop_floor_s":[%s],"fault_loop_peakbpf_s":[%s],' \
		"$(IFS=,; echo "${LA[*]}")" "$(IFS=,; echo "${LF[*]}")" "$(IFS=,; echo "${LB[*]}")"
	printf '"command_alone_s":[%s],"command_peakbpf_s":[%s],"windows":{' "$(IFS=,; echo "${EA[*]}")" "$(IFS=,; echo "${EB[*]}")"
	first=1
	for k in $(printf '%s\n' "${!W[@]}" | sed 's/\.[a-z]*$//' | sort -u); do
		[ $first = 1 ] || printf ','
		first=0
		printf '"%s":{"floor_ns":%s,"floor_runs":%s,"peakbpf_ns":%s,"peakbpf_runs":%s,"lookup_ns":%s,"lookup_runs":%s,"windows":%s' \
			"$k" "${W[$k.fns]:-0}" "${W[$k.fcnt]:-0}" "${W[$k.pns]:-0}" "${W[$k.pcnt]:-0}" "${W[$k.rns]:-0}" "${W[$k.rcnt]:-0}" "${W[$k.n]:-0}"
		# the memcg floor and unique_stat, in the untracked windows that had them
		[ -n "${W[$k.mn]:-}" ] && printf ',"memcg_floor_ns":%s,"memcg_floor_runs":%s,"unique_ns":%s,"unique_runs":%s,"memcg_windows":%s' \
			"${W[$k.mns]}" "${W[$k.mcnt]}" "${W[$k.uns]}" "${W[$k.ucnt]}" "${W[$k.mn]}"
		printf '}'
	done
	printf '}}}\n'
} >"$OUT/results.json"

# Markdown
{
	echo "peakbpf benchmark ($MODE mode, \`make bench$([ "$MODE" = short ] && echo -short)\`): Linux $KERNEL, $NCPU CPUs."
	echo
	targets_table md
	echo "| # | measurement | figure | target | result |"
	echo "|---|---|---|---|---|"
	for sn in cost:1 wall:2 startup:3 scale:4 stacks:6; do
		sec=${sn%:*} n=${sn#*:}
		for i in "${!R_SEC[@]}"; do
			[ "${R_SEC[$i]}" = "$sec" ] || continue
			echo "| $n | ${R_NAME[$i]} | ${R_FIG[$i]} | ${R_TGT[$i]} | ${R_RES[$i]} |"
		done
	done
	echo
	echo "| shape | true | peakbpf | GNU time | sampler 10 ms | sampler 100 ms | sampler 1 s | cgroup v1 |"
	echo "|---|---|---|---|---|---|---|---|"
	for i in "${!A_NAME[@]}"; do
		t=${A_TRUE[$i]}
		echo "| ${A_NAME[$i]} | $(mib "$t") | $(acc_cell "${A_PB[$i]}" "$t") | $(acc_cell "${A_TIME[$i]}" "$t") | $(acc_cell "${A_S1[$i]}" "$t") | $(acc_cell "${A_S2[$i]}" "$t") | $(acc_cell "${A_S3[$i]}" "$t") | $(acc_cell "${A_CG[$i]}" "$t") |"
	done
} >"$OUT/results.md"
echo "bench: wrote $OUT/results.txt, results.json, results.md" >&2
if [ ${#FAILURES[@]} -gt 0 ]; then
	echo "bench: FAILED to measure: ${FAILURES[*]}" >&2
	exit 1
fi
