#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# A/B of the per-event cost: two peakbpf binaries (say main's and a
# branch's), timed side by side in one run by make bench's own method
# ([1] of bench.sh: the kernel's BPF run-time statistics, bpfstat's empty
# floor programs, windows of the workload's fault loop on one CPU, both
# attach orders), in rounds that alternate which binary goes first.
#
#   tools/bench/ab-event.sh A_PEAKBPF B_PEAKBPF [ROUNDS]     (root)
#
# Each round, for each binary and each order (peakbpf first / second):
# an untracked window (peakbpf tracks a command that waits, the workload
# faults beside it; unique_stat and the memcg floor ride along) and a
# tracked window (peakbpf runs the fault loop). A round's ratio is
# peakbpf's ns/event over the floor's at the other position in the same
# round's windows of the same binary, as make bench's rounds are. Prints
# the median (min–max) over rounds of each ratio for A and for B.
# Environment: OUTPUT (.output), AB_SIZE (64MiB), AB_ROUNDS (5).
set -u
export LC_ALL=C

A=${1:?usage: $0 A_PEAKBPF B_PEAKBPF [ROUNDS]} B=${2:?usage: $0 A_PEAKBPF B_PEAKBPF [ROUNDS]}
ROUNDS=${3:-${AB_ROUNDS:-5}}
OUTPUT=${OUTPUT:-.output}
SIZE=${AB_SIZE:-64MiB}
WORKLOAD=$OUTPUT/workload
BPFSTAT=$OUTPUT/bench/bpfstat
die() { echo "ab-event: $*" >&2; exit 1; }
[ "$(id -u)" = 0 ] || die "needs root"
for f in "$A" "$B" "$WORKLOAD" "$BPFSTAT"; do [ -x "$f" ] || die "$f is missing (make all bench-tools)"; done
TMP=$(mktemp -d /tmp/peakbpf-ab.XXXXXX) || die "mktemp failed"
export PEAKBPF_HELPER="$TMP/no-helper.sock"     # each binary loads its own programs
FAULT_CPU=$(taskset -cp $$ 2>/dev/null | grep -o '[0-9]*$')
ON_CPU=(taskset -c "$FAULT_CPU")
cleanup() {
	local j
	for j in $(jobs -p); do kill "$j" 2>/dev/null; done
	rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
mkfifo "$TMP/up" "$TMP/go" "$TMP/wl" || die "mkfifo failed"
exec {fd_up}<>"$TMP/up" {fd_go}<>"$TMP/go" {fd_wl}<>"$TMP/wl"
calc() { awk "BEGIN { printf \"%.6f\", $* }"; }
stats() { printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END {
	m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2; printf "%.2f × (%.2f–%.2f)", m, v[1], v[NR] }'; }

coproc BS { exec "$BPFSTAT" 2>"$TMP/bpfstat.err"; }
BS_IN=${BS[1]} BS_OUT=${BS[0]}
read -r -t 20 -u "$BS_OUT" R && [ "$R" = ready ] || die "bpfstat: $R $(cat "$TMP/bpfstat.err")"
bs() { echo "$*" >&"$BS_IN"; read -r -t 20 -u "$BS_OUT" R || R="error: no answer"; case $R in error*) return 1 ;; esac; }
MEMCG=0
grep -q btf_trace_mod_memcg_lruvec_state /sys/kernel/btf/vmlinux 2>/dev/null && MEMCG=1
mg() { [ $MEMCG = 1 ] && bs "$@"; }
wait_line() {  # FD WORD PID
	local i l
	for ((i = 0; i < 60; i++)); do
		if read -r -t 1 -u "$1" l; then case $l in *"$2"*) return 0 ;; esac; i=0; continue; fi
		kill -0 "$3" 2>/dev/null || return 1
	done
	return 1
}
OURS=$(awk -v s="$SIZE" 'BEGIN { n = s + 0; if (s ~ /GiB/) n *= 1024; printf "%d", n * 256 * (1 + 1 / 512) }')

# Window deltas "F_NS F_CNT P_NS P_CNT [M_NS M_CNT U_NS U_CNT]" into V[key].
declare -A V
delta() {  # S1 S2 [M1 M2]: "fns fcnt pns pcnt mns mcnt uns ucnt"
	# shellcheck disable=SC2086
	set -- $1 $2 ${3:-x 0 0 0 0 0} ${4:-x 0 0 0 0 0}
	echo "$(( ${10} - $2 )) $(( ${11} - $3 )) $(( ${12} - $4 )) $(( ${13} - $5 ))" \
		"$(( ${24} - ${18} )) $(( ${25} - ${19} )) $(( ${26} - ${20} )) $(( ${27} - ${21} ))"
}
untracked() {  # BIN POS -> V[u.POS]
	local bin=$1 pos=$2 pb s1 s2 m1="" m2=""
	[ "$pos" = second ] && { bs attach; mg attach-memcg; }
	"$bin" -q -o "$TMP/u.json" -- sh -c "echo up >$TMP/up; read _ <$TMP/go" 2>"$TMP/u.err" &
	pb=$!
	wait_line "$fd_up" up "$pb" || { echo "untracked window failed: $(cat "$TMP/u.err")" >&2; return 1; }
	[ "$pos" = first ] && { bs attach; mg attach-memcg; }
	bs "snap $pb"; s1=$R
	mg "snap-memcg $pb" && m1=$R
	"${ON_CPU[@]}" "$WORKLOAD" -s "$SIZE" faults 2>/dev/null
	mg "snap-memcg $pb" && m2=$R
	bs "snap $pb"; s2=$R
	bs detach; mg detach-memcg
	echo go >&"$fd_go"
	wait "$pb"
	V[u.$pos]=$(delta "$s1" "$s2" "$m1" "$m2")
}
tracked() {  # BIN POS -> V[t.POS]
	local bin=$1 pos=$2 pb wpid s1 s2
	while read -r -t 0.05 -u "$fd_wl" _; do :; done
	[ "$pos" = second ] && bs attach
	"$bin" -q -o "$TMP/t.json" -- "${ON_CPU[@]}" "$WORKLOAD" -n 1 -s "$SIZE" -t 60s idle-plus-faulter 2>&"$fd_wl" &
	pb=$!
	wait_line "$fd_wl" ready "$pb" || { echo "tracked window failed" >&2; return 1; }
	wpid=$(tr ' ' '\n' <"/proc/$pb/task/$pb/children" | head -n 1)
	[ "$pos" = first ] && bs attach
	bs "snap $pb"; s1=$R
	kill -USR1 "$wpid"
	wait_line "$fd_wl" "done" "$pb"
	bs "snap $pb"; s2=$R
	kill -USR1 "$wpid"
	bs detach
	wait "$pb"
	V[t.$pos]=$(delta "$s1" "$s2")
}
# One binary's round: the four windows, then its ratios appended to RR[X.k].
declare -A RR
round() {  # X BIN
	local x=$1 bin=$2 f1 f2 p1 p2 m1 m2 q1 q2 g1 g2 r1 r2 n1 n2 s1 s2 u1 u2 pns pcnt pos
	untracked "$bin" first && untracked "$bin" second && tracked "$bin" first && tracked "$bin" second || return 1
	ratio() {  # PNS PCNT FNS FCNT
		awk -v a="$1" -v b="$2" -v c="$3" -v d="$4" 'BEGIN { if (b > 0 && d > 0) printf "%.4f", (a / b) / (c / d) }'; }
	read -r f1 f2 p1 p2 m1 m2 q1 q2 <<<"${V[u.first]}"
	read -r g1 g2 r1 r2 n1 n2 s1 s2 <<<"${V[u.second]}"
	u1=$(ratio "$p1" "$p2" "$g1" "$g2")         # peakbpf first vs the floor first
	u2=$(ratio "$r1" "$r2" "$f1" "$f2")
	RR[$x.u.first]+="$u1 " RR[$x.u.second]+="$u2 "
	RR[$x.ns.u.first]+="$(calc "$p1 / $p2") " RR[$x.ns.floor.first]+="$(calc "$g1 / $g2") "
	if [ "$q2" -gt 0 ] && [ "$s2" -gt 0 ]; then
		RR[$x.m.first]+="$(ratio "$q1" "$q2" "$n1" "$n2") " RR[$x.m.second]+="$(ratio "$s1" "$s2" "$m1" "$m2") "
	fi
	# Tracked: the other processes' events, rejected, out at the untracked cost.
	for pos in first second; do
		read -r _ _ pns pcnt _ <<<"${V[t.$pos]}"
		local un tu ffns ffcnt
		if [ $pos = first ]; then tu=$(calc "$p1 / $p2"); read -r ffns ffcnt _ <<<"${V[t.second]}"
		else tu=$(calc "$r1 / $r2"); read -r ffns ffcnt _ <<<"${V[t.first]}"; fi
		un=$((pcnt - OURS)); [ $un -lt 0 ] && un=0
		pns=$(calc "$pns - $un * $tu") pcnt=$((pcnt - un))
		RR[$x.t.$pos]+="$(ratio "$pns" "$pcnt" "$ffns" "$ffcnt") "
		RR[$x.ns.t.$pos]+="$(calc "$pns / $pcnt") "
	done
}
echo "ab-event: A=$A B=$B, $ROUNDS rounds, workload -s $SIZE faults on CPU $FAULT_CPU, $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)" >&2
for ((r = 0; r < ROUNDS; r++)); do
	if ((r % 2)); then order="B A"; else order="A B"; fi
	for x in $order; do
		if [ $x = A ]; then round A "$A" || echo "round $r A failed" >&2
		else round B "$B" || echo "round $r B failed" >&2; fi
	done
	last() { local l; read -r -a l <<<"${RR[$1]:-?}"; echo "${l[-1]}"; }
	echo "  round $((r + 1)) ($order): u.first A $(last A.u.first) B $(last B.u.first), t.first A $(last A.t.first) B $(last B.t.first)" >&2
done
printf '%-34s %-22s %-22s\n' "median of rounds (min–max)" "A: $(basename "$A")" "B: $(basename "$B")"
for k in u.first u.second m.first m.second t.first t.second; do
	ra=${RR[A.$k]:-} rb=${RR[B.$k]:-}
	[ -n "$ra$rb" ] || continue
	# shellcheck disable=SC2086
	printf '%-34s %-22s %-22s\n' "$k (× floor)" "$( [ -n "$ra" ] && stats $ra)" "$( [ -n "$rb" ] && stats $rb)"
done
for k in ns.u.first ns.floor.first ns.t.first ns.t.second; do
	# shellcheck disable=SC2086
	printf '%-34s %-22s %-22s\n' "$k (ns/event)" "$(stats ${RR[A.$k]} | sed 's/ ×//')" "$(stats ${RR[B.$k]} | sed 's/ ×//')"
done
bs quit
