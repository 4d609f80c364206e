# shellcheck shell=bash
# SPDX-License-Identifier: MIT
# The attach-order windows of [1] (issue 37), sourced by bench.sh and run
# while bpfstat holds the statistics on.
#
# Every tp_btf and raw_tp program on a tracepoint is a probe of its own,
# called in attach order (docs/performance.md, "Attach order"). Two empty
# programs, the floor and its twin (tools/bench/floor.bpf.c), in both
# orders, tell what a position costs whatever program stands in it: each
# round one window floor-then-twin and one twin-then-floor, and each
# position's cost is pooled over both (so the programs' own differences
# cancel). The empty raw_tp program in the middle of three shows whether a
# later position depends on the program before it.
# From [1]'s untracked windows: what both programs (peakbpf's and the
# floor) cost an event together in each order, the machine's cost, which
# the position's share of it does not change.

# pos_window ORDER...: attach each in ORDER (""/-twin/-raw), one fault
# loop, detach; prints the snap-pos delta "F_NS F_CNT T_NS T_CNT W_NS W_CNT".
pos_window() {
	local a s1 s2 ok=1
	for a in "$@"; do bs "attach$a" || ok=0; done
	bs snap-pos && s1=$BS_REPLY || ok=0
	"${ON_CPU[@]}" "$WORKLOAD" -s "$BENCH_COST_SIZE" faults 2>/dev/null || ok=0
	bs snap-pos && s2=$BS_REPLY || ok=0
	for a in "$@"; do bs "detach$a"; done
	[ $ok = 1 ] || return 1
	awk -v a="$s1" -v b="$s2" 'BEGIN { split(a, x, " "); split(b, y, " ")
		for (i = 2; i <= 7; i++) printf "%d ", y[i] - x[i]; print "" }'
}

# cost_positions: BENCH_COST_REPS rounds of the two windows (and one of
# three with the raw_tp program second) into POS; pos_rows makes the rows.
declare -A POS
POS_WHY="not run" POS3=""
cost_positions() {
	local r d why="" fn fc tn tc
	for ((r = 0; r < BENCH_COST_REPS; r++)); do
		d=$(pos_window "" -twin) || { why="a window failed: $BS_REPLY"; break; }
		read -r fn fc tn tc _ _ <<<"$d"
		POS[1ns]=$((${POS[1ns]:-0} + fn)) POS[1cnt]=$((${POS[1cnt]:-0} + fc))
		POS[2ns]=$((${POS[2ns]:-0} + tn)) POS[2cnt]=$((${POS[2cnt]:-0} + tc))
		[ "$fc" -gt 0 ] && [ "$tc" -gt 0 ] && POS[r1]+="$(calc "($fn / $fc) / ($tn / $tc)") "
		d=$(pos_window -twin "") || { why="a window failed: $BS_REPLY"; break; }
		read -r fn fc tn tc _ _ <<<"$d"
		POS[1ns]=$((POS[1ns] + tn)) POS[1cnt]=$((POS[1cnt] + tc))
		POS[2ns]=$((POS[2ns] + fn)) POS[2cnt]=$((POS[2cnt] + fc))
		[ "$fc" -gt 0 ] && [ "$tc" -gt 0 ] && POS[r1]+="$(calc "($tn / $tc) / ($fn / $fc)") "
	done
	[ -z "$why" ] && { POS3=$(pos_window "" -raw -twin) || why="the three-program window failed: $BS_REPLY"; }
	[ -n "$why" ] || [ "${POS[2cnt]:-0}" -gt 0 ] || why="no events"
	POS_WHY=$why
}
pos_rows() {
	local p1 p2 m lo hi fn fc tn tc wn wc
	if [ -n "$POS_WHY" ]; then
		na_row cost "attach order: two empty programs" "" "$POS_WHY"
		failed "attach-order windows"
		return
	fi
	p1=$(calc "${POS[1ns]} / ${POS[1cnt]}") p2=$(calc "${POS[2ns]} / ${POS[2cnt]}")
	# shellcheck disable=SC2086 # one word a ratio
	read -r m lo hi <<<"$(stats ${POS[r1]})"
	row cost "attach order: an empty program first / second (ns/event)" \
		"$(printf '%.1f ns / %.1f ns; first ÷ second %.2f × (%.2f–%.2f)' "$p1" "$p2" "$m" "$lo" "$hi")" "" "" "$m" x \
		"the floor and its twin, both orders each round, pooled by position; what a position costs whatever program stands in it"
	read -r fn fc tn tc wn wc <<<"$POS3"
	row cost "attach order: floor, raw_tp, twin (ns/event)" \
		"$(printf '%.1f / %.1f / %.1f ns' "$(calc "$fn / $fc")" "$(calc "$wn / $wc")" "$(calc "$tn / $tc")")" "" "" \
		"$(calc "$wn / $wc")" ns "one window: the same empty program as raw_tp in the middle; the twin third, after it"
}

# order_sums: peakbpf's program and the floor together per event, in each
# order, from [1]'s untracked windows (pooled): the machine's cost.
order_sums() {
	local pf fs ps ff s1 s2
	pf=$(per_event u.first p) fs=$(per_event u.first f)
	ps=$(per_event u.second p) ff=$(per_event u.second f)
	[ -n "$pf" ] && [ -n "$fs" ] && [ -n "$ps" ] && [ -n "$ff" ] || return 0
	s1=$(calc "$pf + $fs") s2=$(calc "$ff + $ps")
	row cost "untracked: peakbpf + floor per event, peakbpf first / second (ns)" \
		"$(printf '%.1f ns / %.1f ns (second ÷ first %.2f ×)' "$s1" "$s2" "$(calc "$s2 / $s1")")" "" "" "$(calc "$s2 / $s1")" x \
		"what the two programs cost the machine together in each order; the ratios above split the same sum by position"
}
