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
	POS_JIT=$(pos_jit)
	POS_FLOOR_NB=$(jit_neighbours bench_floor) POS_MEMCG_NB=$(jit_neighbours bench_memcg)
}

# pos_jit: where the kernel put the floor's, its twin's and the raw_tp
# program's JIT images (/proc/kallsyms, root), and whether the floor and
# its twin share one 128-byte block, a cache-line pair that the L2's
# adjacent-line prefetch fills together.
pos_jit() {
	jit_blocks bench_floor bench_twin bench_raw | awk '{ a[$1] = $2; b[$1] = $3 }
	END {
		if (!("bench_floor" in a) || !("bench_twin" in a)) { print "JIT addresses not readable"; exit }
		printf "JIT images: floor …%s, twin …%s, raw_tp …%s: floor and twin %s one 128-byte block",
			substr(a["bench_floor"], 11), substr(a["bench_twin"], 11), substr(a["bench_raw"], 11),
			(b["bench_floor"] == b["bench_twin"]) ? "in" : "not in" }'
}
# jit_blocks NAME...: "NAME ADDRESS BLOCK" of each BPF program NAME in
# /proc/kallsyms (BLOCK: the address's 128-byte block).
jit_blocks() {
	awk -v names=" $* " '$3 ~ /^bpf_prog_[0-9a-f]+_/ {
		n = $3; sub(/^bpf_prog_[0-9a-f]+_/, "", n)
		if (index(names, " " n " ")) printf "%s %s %d\n", n, $1, int(strtonum("0x" $1) / 128) }' /proc/kallsyms 2>/dev/null
}
# jit_neighbours NAME: the other BPF programs whose JIT images share NAME's
# 128-byte block ("none"): one that runs shortly before NAME (on another
# tracepoint of the same fault) leaves NAME's code in the cache.
jit_neighbours() {
	awk -v me="$1" '$3 ~ /^bpf_prog_[0-9a-f]+_/ {
		n = $3; sub(/^bpf_prog_[0-9a-f]+_/, "", n); blk[n] = int(strtonum("0x" $1) / 128); all[NR] = n }
	END { if (!(me in blk)) { print "not found"; exit }
		for (i in all) if (all[i] != me && blk[all[i]] == blk[me]) o = o (o ? ", " : "") all[i]
		print o ? o : "none" }' /proc/kallsyms 2>/dev/null
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
		"the floor and its twin, both orders each round, pooled by position; what a position costs whatever program stands in it; ${POS_JIT:-JIT addresses not read}"
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
