# shellcheck shell=bash
# SPDX-License-Identifier: MIT
# What --stacks costs (docs/performance.md, "--stacks"; docs/stacks.md):
# sourced by bench.sh (its [6] rows, stacks_bench) and by
# tools/bench/stacks-cost.sh (the per-fault windows alone). The caller
# gives: PEAKBPF, WORKLOAD, TMP, PAGE, ON_CPU (the fault CPU's taskset or
# empty), bs CMD (a bpfstat command, its answer in BS_REPLY), and for
# the rows tools/bench/common.sh's (row, na_row, failed, stats, calc, log,
# bs_start, bs_stop, busy_ticks, times_file, child_cpu).
#
# Per tracked fault (stk_window, stk_costs): peakbpf runs idle-plus-faulter
# with and without --stacks; bpfstat's snap-stacks reads the floor,
# handle_rss_stat, stk_fault and stk_sys_exit at the workload's "ready"
# (a), after STK_IDLE_S more seconds of its idling (b) and after its fault
# loop (c). Between a and b no tracked process faults: every run there is
# another process's, so a program's untracked cost per run comes from that
# window, and in the loop's window (b to c) the runs beyond the loop's own
# are taken out at that cost (as bench.sh's tracked_ns does with [1]'s
# untracked windows). The BPF time per tracked fault is then
# handle_rss_stat's per tracked event × the loop's events per fault, plus,
# with --stacks, stk_fault's per tracked fault: with ÷ without is the row.
# stk_sys_exit runs on every syscall of the machine; it is given per run.

STK_IDLE_S=${STK_IDLE_S:-0.3}

# stk_child PID: the first child of PID (the workload: taskset execs it).
stk_child() { tr ' ' '\n' <"/proc/$1/task/$1/children" 2>/dev/null | head -n 1; }
# stk_wait WORD PID: until FILE $TMP/stk.err has WORD, while PID lives (60 s).
stk_wait() {
	local i
	for ((i = 0; i < 1200; i++)); do
		grep -q "$1" "$TMP/stk.err" 2>/dev/null && return 0
		kill -0 "$2" 2>/dev/null || return 1
		sleep 0.05
	done
	return 1
}

# stk_window LABEL SIZE [PEAKBPF ARGS]: one window; prints
# "LABEL LOOP_NS SIZE_BYTES a1..a8 b1..b8 c1..c8" (snap-stacks' eight
# numbers at a, b, c), or returns 1.
stk_window() {
	local label=$1 size=$2 pb wpid a b c loop bytes
	shift 2
	: >"$TMP/stk.err"
	"$PEAKBPF" -q --no-helper -o "$TMP/stk.json" "$@" -- "${ON_CPU[@]}" "$WORKLOAD" -s "$size" -n 1 -t 60s \
		idle-plus-faulter 2>"$TMP/stk.err" &
	pb=$!
	if ! stk_wait ready "$pb" || ! wpid=$(stk_child "$pb") || [ -z "$wpid" ]; then
		kill "$pb" 2>/dev/null
		wait "$pb"
		return 1
	fi
	sleep 0.2               # the start-up's own work done
	bs "snap-stacks $pb" && a=${BS_REPLY#snap-stacks } &&
		sleep "$STK_IDLE_S" && bs "snap-stacks $pb" && b=${BS_REPLY#snap-stacks } &&
		kill -USR1 "$wpid" && stk_wait "done" "$pb" && bs "snap-stacks $pb" && c=${BS_REPLY#snap-stacks }
	kill -USR1 "$wpid" 2>/dev/null
	wait "$pb" || return 1
	[ -n "${c:-}" ] || return 1
	loop=$(sed -n 's/.*elapsed_ns=\([0-9]*\).*/\1/p' "$TMP/stk.err")
	bytes=$(sed -n 's/.*expected_growth=\([0-9]*\).*/\1/p' "$TMP/stk.err")
	echo "$label ${loop:-0} ${bytes:-0} $a $b $c"
}

# stk_costs < windows: per window "LABEL LOOP_S RSS_NS STK_NS BPF_NS FLOOR_NS
# STK_IDLE_NS SYS_NS SYS_RUNS STK_FOREIGN": handle_rss_stat's ns per tracked
# event, stk_fault's per tracked fault, the BPF time per tracked fault (the
# two together), the floor's ns per event in the loop's window, stk_fault's
# untracked ns per run (from a to b; -1: no run there, none taken out),
# stk_sys_exit's ns per run and its runs in the loop's window, and
# stk_fault's runs in it beyond the loop's own faults.
stk_costs() {
	awk -v page="$PAGE" '{
		faults = $3 / page; ours = faults * (1 + 1 / 512)     # one unmap batch per 512 pages
		# snap-stacks: F_NS F_CNT T_NS T_CNT S_NS S_CNT Y_NS Y_CNT at a ($4..), b ($12..), c ($20..)
		for (i = 0; i < 8; i++) { a[i] = $(4 + i); b[i] = $(12 + i); c[i] = $(20 + i) }
		tu = (b[3] > a[3]) ? (b[2] - a[2]) / (b[3] - a[3]) : 0
		su = (b[5] > a[5]) ? (b[4] - a[4]) / (b[5] - a[5]) : -1
		tn = c[2] - b[2]; tc = c[3] - b[3]; sn = c[4] - b[4]; sc = c[5] - b[5]
		tf = tc - ours; if (tf < 0) tf = 0
		sf = sc - faults; if (sf < 0) sf = 0
		rss = (tn - tf * tu) / ours
		stk = sc ? (sn - sf * (su > 0 ? su : 0)) / faults : 0
		floor = (c[1] > b[1]) ? (c[0] - b[0]) / (c[1] - b[1]) : 0
		sys = (c[7] > b[7]) ? (c[6] - b[6]) / (c[7] - b[7]) : 0
		printf "%s %.6f %.1f %.1f %.1f %.1f %.1f %.1f %d %d\n", $1, $2 / 1e9, rss, stk,
			rss * ours / faults + stk, floor, su, sys, c[7] - b[7], sf }'
}

# stk_col FILE LABEL COLUMN: that column of the label's lines, one word each.
stk_col() { awk -v l="$2" -v k="$3" '$1 == l { printf "%s ", $k }' "$1"; }
# stk_spread "v v v" FMT UNIT: "median UNIT (min–max)", each in FMT.
stk_spread() {
	local m lo hi
	# shellcheck disable=SC2086 # one word a value
	read -r m lo hi <<<"$(stats $1)"
	# shellcheck disable=SC2059 # the format is the caller's
	printf "$2 %s ($2–$2)" "$m" "$3" "$lo" "$hi"
}
# shellcheck disable=SC2086 # one word a value
stk_median() { local m; read -r m _ <<<"$(stats $1)"; echo "$m"; }

# The per-fault rows: ROUNDS rounds of the two windows, the order
# alternating, the floor attached before peakbpf (peakbpf's programs run
# second on rss_stat, as in production, alone, they run first: both arms
# alike).
stk_fault_rows() {
	local rounds=$1 size=$2 r w ratios="" rr q why=""
	: >"$TMP/stk.windows"
	bs_start || { why="bpfstat did not start: $BS_REPLY"; }
	[ -n "$why" ] || bs attach || why="bpfstat attach: $BS_REPLY"
	for ((r = 0; r < rounds; r++)); do
		[ -z "$why" ] || break
		for w in $( ((r % 2)) && echo "stacks off" || echo "off stacks"); do
			if [ "$w" = off ]; then stk_window off "$size" >>"$TMP/stk.windows"
			else stk_window stacks "$size" --stacks "$TMP/stk.folded" >>"$TMP/stk.windows"; fi ||
				{ why="a window ($w) failed: $(head -c 200 "$TMP/stk.err")"; break; }
		done
	done
	bs detach
	bs_stop
	if [ -n "$why" ]; then
		na_row stacks "BPF time per tracked fault, --stacks ÷ without" "" "$why"
		failed "--stacks per-fault cost"
		return
	fi
	stk_costs <"$TMP/stk.windows" >"$TMP/stk.costs"
	# each round's ratio: the round's two windows
	ratios=$(awk '$1 == "off" { off[++n] = $5 } $1 == "stacks" { st[++m] = $5 }
		END { for (i = 1; i <= n && i <= m; i++) printf "%.4f ", st[i] / off[i] }' "$TMP/stk.costs")
	rr=$(stk_median "$ratios")
	q=$(awk '$1 == "stacks" && $7 < 0 { n++ } END { print n + 0 }' "$TMP/stk.costs")
	row stacks "BPF time per tracked fault, --stacks ÷ without: median of $rounds rounds" "$(stk_spread "$ratios" '%.2f' ×)" "" "" "$rr" "x" \
		"handle_rss_stat per tracked event × the loop's events per fault, + stk_fault per tracked fault with --stacks: $(printf '%.0f' "$(stk_median "$(stk_col "$TMP/stk.costs" stacks 5)")") ns against $(printf '%.0f' "$(stk_median "$(stk_col "$TMP/stk.costs" off 5)")") ns (medians); $size of 4 KiB faults by idle-plus-faulter, bpfstat's snap-stacks around the loop"
	row stacks "  stk_fault per tracked fault (ns): median" "$(stk_spread "$(stk_col "$TMP/stk.costs" stacks 4)" '%.0f' ns)" "" "" \
		"$(stk_median "$(stk_col "$TMP/stk.costs" stacks 4)")" ns \
		"the floor (empty tp_btf on rss_stat) $(printf '%.0f' "$(stk_median "$(stk_col "$TMP/stk.costs" stacks 6)")") ns per event in the same windows; other processes' $(printf '%.0f' "$(stk_median "$(stk_col "$TMP/stk.costs" stacks 10)")") runs per window taken out at the cost below$([ "$q" = 0 ] || echo ", except in $q windows with no such run before the loop (there: all on the loop, an upper bound)")"
	row stacks "  stk_fault per untracked run, the filter (ns): median" "$(stk_spread "$(stk_col "$TMP/stk.costs" stacks 7)" '%.0f' ns)" "" "" \
		"$(stk_median "$(stk_col "$TMP/stk.costs" stacks 7)")" ns "every user fault of the machine runs it; other processes' faults in $STK_IDLE_S s before the loop (-1: none)"
	row stacks "  stk_sys_exit per run (ns): median" "$(stk_spread "$(stk_col "$TMP/stk.costs" stacks 8)" '%.0f' ns)" "" "" \
		"$(stk_median "$(stk_col "$TMP/stk.costs" stacks 8)")" ns "every syscall of the machine runs its number compare while --stacks runs; $(printf '%.0f' "$(stk_median "$(stk_col "$TMP/stk.costs" stacks 9)")") runs in the loop's window"
	ratios=$(awk '$1 == "off" { off[++n] = $3 } $1 == "stacks" { st[++m] = $3 }
		END { for (i = 1; i <= n && i <= m; i++) printf "%.4f ", st[i] / off[i] }' "$TMP/stk.costs")
	row stacks "  handle_rss_stat per tracked event, with ÷ without: median" "$(stk_spread "$ratios" '%.2f' ×)" "" "" "$(stk_median "$ratios")" x \
		"its path is the same with --stacks (0 stk_ programs load without it): about 1 ×, the rest is noise"
}

# The end-to-end rows: ROUNDS rounds of COMMAND under peakbpf -q, with and
# without --stacks (and alone, ALONE=1), the order alternating; the time
# inside the fault loop (LOOP=1: the workload prints it) and the whole
# command's. NAME names the rows.
stk_e2e_rows() {
	local name=$1 rounds=$2 loop=$3 alone=$4 r w t0 t1 l why="" placed=""
	shift 4
	local -a order
	: >"$TMP/stk.e2e"
	for ((r = 0; r < rounds; r++)); do
		[ -z "$why" ] || break
		if ((r % 2)); then order=(stacks off); else order=(off stacks); fi
		[ "$alone" = 1 ] && order+=(alone)
		for w in "${order[@]}"; do
			: >"$TMP/stk.err"
			t0=$EPOCHREALTIME
			case $w in
			alone) "$@" 2>"$TMP/stk.err" >/dev/null ;;
			off) "$PEAKBPF" -q --no-helper -o "$TMP/stk.json" -- "$@" 2>"$TMP/stk.err" >/dev/null ;;
			stacks) "$PEAKBPF" --no-helper --stacks "$TMP/stk.folded" -o "$TMP/stk.json" -- "$@" 2>"$TMP/stk.err" >/dev/null ;;
			esac || { why="$w: $(grep -v '^  ' "$TMP/stk.err" | head -c 200)"; break; }
			t1=$EPOCHREALTIME
			l=0
			[ "$loop" = 1 ] && l=$(sed -n 's/.*elapsed_ns=\([0-9]*\).*/\1/p' "$TMP/stk.err")
			[ "$w" = stacks ] && placed=$(sed -n 's/.*stacks at the peak: \(.*\) placed exactly .*(\([0-9.]* %\)).*/\1 (\2)/p' "$TMP/stk.err")
			echo "$w $(calc "$t1 - $t0") $(calc "${l:-0} / 1e9")" >>"$TMP/stk.e2e"
		done
	done
	if [ -n "$why" ]; then
		na_row stacks "$name, --stacks ÷ without" "" "a run failed: $why"
		failed "--stacks end to end: $name"
		return
	fi
	local col k ratios lbl
	for col in $([ "$loop" = 1 ] && echo 3) 2; do
		ratios=$(awk -v k="$col" '$1 == "off" { off[++n] = $k } $1 == "stacks" { st[++m] = $k }
			END { for (i = 1; i <= n && i <= m; i++) printf "%.4f ", st[i] / off[i] }' "$TMP/stk.e2e")
		if [ "$col" = 3 ]; then lbl="$name, the loop's time, --stacks ÷ without"
		else lbl="$name, the whole command, --stacks ÷ without"; [ "$loop" = 1 ] && lbl="  the whole command (start-up, drain, report)"; fi
		k=$(stk_median "$(stk_col "$TMP/stk.e2e" stacks "$col")")
		row stacks "$lbl: median of $rounds rounds" "$(stk_spread "$ratios" '%.2f' ×)" "" "" "$(stk_median "$ratios")" x \
			"$(printf '%.3f s with, %.3f s without' "$k" "$(stk_median "$(stk_col "$TMP/stk.e2e" off "$col")")")$([ "$alone" = 1 ] && printf ', %.3f s alone' "$(stk_median "$(stk_col "$TMP/stk.e2e" alone "$col")")"); each round both, the order alternating$([ "$col" = 2 ] && [ -n "$placed" ] && echo "; placed exactly at the peak (last run): $placed")"
	done
}

# bench.sh's [6].
stacks_bench() {
	local py=/usr/bin/python3 b0 t0 other
	times_file stk0
	b0=$(busy_ticks) t0=$EPOCHREALTIME
	log "per tracked fault: $BENCH_STACKS_ROUNDS rounds of two windows (workload -s $BENCH_COST_SIZE idle-plus-faulter), with and without --stacks"
	stk_fault_rows "$BENCH_STACKS_ROUNDS" "$BENCH_COST_SIZE"
	log "end to end: workload -s $BENCH_WALL_SIZE faults under peakbpf with and without --stacks, $BENCH_STACKS_ROUNDS rounds"
	stk_e2e_rows "fault loop $BENCH_WALL_SIZE in 4 KiB pages" "$BENCH_STACKS_ROUNDS" 1 0 "${ON_CPU[@]}" "$WORKLOAD" -s "$BENCH_WALL_SIZE" faults
	if [ -x "$py" ]; then
		log "end to end: $py building a list of $BENCH_STACKS_PY_N strings, alone and under peakbpf with and without --stacks, $BENCH_STACKS_ROUNDS rounds"
		stk_e2e_rows "python3, a list of $BENCH_STACKS_PY_N strings" "$BENCH_STACKS_ROUNDS" 0 1 \
			"$py" -c "x = [str(i) * 8 for i in range($BENCH_STACKS_PY_N)]"
	else
		na_row stacks "python3 under --stacks" "" "$py is not installed (Debian's python3)"
	fi
	times_file stk1
	other=$(calc "(($(busy_ticks) - $b0) / $HZ - ($(child_cpu stk1) - $(child_cpu stk0))) / ($EPOCHREALTIME - $t0)")
	row stacks "other load while these rows ran (CPUs)" "$(printf '%.2f' "$other")" "" "" "$other" CPU \
		"the CPUs' busy time (/proc/stat) less these rows' own processes' (times), over their $(printf '%.0f' "$(calc "$EPOCHREALTIME - $t0")") s"
}
