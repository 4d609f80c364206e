# shellcheck shell=bash
# SPDX-License-Identifier: MIT
# The start-up and build targets of issue 37 as ratios to what they are
# compared with, timed side by side by hyperfine, sourced by bench.sh.
#
# Start-up: each round is one hyperfine run of all these commands, each run
# HF_RUNS times after a warm-up, without a shell (-N):
#   true                              the floor: fork + exec + wait
#   /usr/bin/time -f %M true          GNU time: its added time is the unit
#   peakbpf -q -- true                through a resident helper of our own
#   peakbpf -q --source bpf -- true   the same, no cgroup of its own
#   peakbpf -q -r N -- true           through the helper, N runs
#   peakbpf -q --no-helper -- true    standalone: its own load
#   peakbpf -q --no-helper -r N -- true
# From each round's medians: GNU time's added time g = time - true, and
#   helper     = (helper - true) / g                  target <= 1.5
#   standalone = (standalone - true) / g              target <= 5
#   -r, per run after the first = ((-r N - -r 1) / (N - 1) - true) / g
#                                                     target <= 1
# (each run of -r N runs true once, so true is taken out of every run as
# it is out of the one-run rows). A target's figure is the median of the
# rounds' ratios, its spread their min-max.
# The -r rows are timed a second way, by this shell (EPOCHREALTIME around
# each command, the three commands interleaved), with the same formula.
#
# Build: `make -j2` of a fixed subset of this project (bench.mk's
# bench-build-subset) into a scratch OUTPUT, alone and under
# `peakbpf -q --no-helper --` (its start-up included), in rounds whose
# order alternates; each round's overhead (under - alone) / alone.
#
# Sets RT_* for the targets table: RT_HELPER, RT_STANDALONE, RT_RUNS_ALONE,
# RT_RUNS_HELPER, RT_BUILD (median) with RT_*_SPREAD ("min–max"), empty when
# not measured; RT_RSS (MiB).

HYPERFINE=$(type -P hyperfine)
RT_N=${BENCH_R_N:-21}   # -r N: make bench twenty runs after the first, bench-short ten

# rt_medians JSON: the median of each command, in ms, in the order run.
rt_medians() {
	python3 -c 'import json, sys
print(" ".join("%.6f" % (r["median"] * 1e3) for r in json.load(open(sys.argv[1]))["results"]))' "$1"
}
# words_last "w w w": the last word.
words_last() { local w; read -r -a w <<<"$1"; echo "${w[-1]}"; }
# rt_stats "v v v": "median min max" of the words (stats, bench.sh).
rt_stats() {
	# shellcheck disable=SC2086 # one word a ratio
	stats $1
}
# rt_row SEC NAME KEY TARGET UNIT FMT NOTE: a row from the rounds' ratios
# in RTV[KEY], its verdict on their median; sets RTM[KEY], RTS[KEY].
declare -A RTV RTM RTS
rt_row() {
	local sec=$1 name=$2 key=$3 tgt=$4 unit=$5 fmt=$6 note=$7 m lo hi n u
	u=${unit//%/%%}
	n=$(wc -w <<<"${RTV[$key]:-}")
	if [ "$n" -eq 0 ]; then
		na_row "$sec" "$name" "${tgt:+≤ $tgt $unit}" "no round measured it"
		return 1
	fi
	read -r m lo hi <<<"$(rt_stats "${RTV[$key]}")"
	RTM[$key]=$m RTS[$key]=$(printf "$fmt–$fmt" "$lo" "$hi")
	row "$sec" "$name: median of $n rounds" "$(printf "$fmt $u ($fmt–$fmt)" "$m" "$lo" "$hi")" \
		"${tgt:+≤ $tgt $unit}" "$([ -n "$tgt" ] && verdict "$m" "$tgt")" "$m" "$unit" "$note"
}

# One start-up round: hyperfine, then the ratios into RTV; the medians of
# each command in RT_MS (for the rows in ms).
RT_CMDS=(true gnu_time helper helper_bpf helper_r standalone standalone_r)
declare -A RT_MS
rt_startup_round() {
	local json=$TMP/hf.$1.json sock=$2 med a g h hb hr s sr
	PEAKBPF_HELPER=$sock "$HYPERFINE" -N --style none -w 1 -r "$HF_RUNS" --export-json "$json" \
		"$TRUE_BIN" "$GNU_TIME -f %M $TRUE_BIN" \
		"$PEAKBPF -q -- $TRUE_BIN" "$PEAKBPF -q --source bpf -- $TRUE_BIN" \
		"$PEAKBPF -q -r $RT_N -- $TRUE_BIN" \
		"$PEAKBPF -q --no-helper -- $TRUE_BIN" "$PEAKBPF -q --no-helper -r $RT_N -- $TRUE_BIN" \
		>/dev/null 2>"$TMP/hf.err" || return 1
	med=$(rt_medians "$json") || return 1
	read -r a g h hb hr s sr <<<"$med"
	local i=0 c
	for c in $med; do RT_MS[${RT_CMDS[$i]}]+="$c "; i=$((i + 1)); done
	g=$(calc "$g - $a")
	RTV[gnu]+="$g "
	RTV[helper]+="$(calc "($h - $a) / $g") "
	RTV[helper_bpf]+="$(calc "($hb - $a) / $g") "
	RTV[helper_r]+="$(calc "(($hr - $h) / ($RT_N - 1) - $a) / $g") "
	RTV[standalone]+="$(calc "($s - $a) / $g") "
	RTV[standalone_r]+="$(calc "(($sr - $s) / ($RT_N - 1) - $a) / $g") "
	# the same per-run figures in ms, for the cross-check below
	RTV[helper_r_ms]+="$(calc "($hr - $h) / ($RT_N - 1) - $a") "
	RTV[standalone_r_ms]+="$(calc "($sr - $s) / ($RT_N - 1) - $a") "
}

# The second way of timing -r (standalone): this shell's clock around each
# of true, one run and -r N, interleaved, ROUNDS times; each triple's
# (-r N - one run) / (N - 1) - true, and their median (a pair run back to
# back shares the machine's load of the moment). Sets RT_SHELL_R (ms per
# run after the first, true taken out).
rt_runs_shell() {
	local i t0 a one many per=()
	for ((i = 0; i < $1; i++)); do
		t0=$EPOCHREALTIME; "$TRUE_BIN"; a=$(calc "($EPOCHREALTIME - $t0) * 1000")
		t0=$EPOCHREALTIME
		"$PEAKBPF" -q --no-helper -- "$TRUE_BIN" >/dev/null 2>&1 || return 1
		one=$(calc "($EPOCHREALTIME - $t0) * 1000")
		t0=$EPOCHREALTIME
		"$PEAKBPF" -q --no-helper -r "$RT_N" -- "$TRUE_BIN" >/dev/null 2>&1 || return 1
		many=$(calc "($EPOCHREALTIME - $t0) * 1000")
		per+=("$(calc "($many - $one) / ($RT_N - 1) - $a")")
	done
	read -r RT_SHELL_R _ <<<"$(stats "${per[@]}")"
}

ratios_startup() {
	local r sock=$TMP/helper.sock via why="" ms k
	RT_HELPER="" RT_STANDALONE="" RT_RUNS_ALONE="" RT_RUNS_HELPER="" RT_RSS="" RT_SHELL_R=""
	if [ -z "$HYPERFINE" ]; then
		why="hyperfine is not installed (tools/install-deps.sh installs it)"
	elif [ ! -x "$GNU_TIME" ]; then
		why="GNU time is not at $GNU_TIME (apt-get install time)"
	elif ! helper_start; then
		why="peakbpf serve did not start: $(head -n 1 "$TMP/helper.log")"
	else
		PEAKBPF_HELPER=$sock "$PEAKBPF" -q --json -- "$TRUE_BIN" >"$TMP/h.json" 2>/dev/null
		via=$(sed -n 's/.*"bpf_load":"\([a-z]*\)".*/\1/p' "$TMP/h.json")
		[ "$via" = helper ] || why="a run did not go through the helper (bpf_load: ${via:-none})"
	fi
	if [ -z "$why" ]; then
		for ((r = 0; r < HF_ROUNDS; r++)); do
			rt_startup_round "$r" "$sock" || { why="hyperfine failed: $(tail -n 1 "$TMP/hf.err")"; break; }
			log "start-up round $((r + 1)): GNU time adds $(printf '%.2f' "$(words_last "${RTV[gnu]}")") ms, peakbpf through the helper $(printf '%.2f' "$(words_last "${RTV[helper]}")") ×, standalone $(printf '%.2f' "$(words_last "${RTV[standalone]}")") ×"
		done
	fi
	helper_stop
	if [ -n "$why" ]; then
		for k in "start-up through a running helper" "-r $RT_N, per run after the first" "standalone start-up"; do
			na_row startup "$k (× GNU time's added time)" "" "$why"
		done
		failed "start-up ratios"
		return
	fi
	# The commands' medians (ms), median over the rounds, for scale.
	for k in "${RT_CMDS[@]}"; do
		read -r ms _ <<<"$(rt_stats "${RT_MS[$k]}")"
		RT_MS[$k.m]=$ms
	done
	row startup "hyperfine medians (ms, median of $HF_ROUNDS rounds of $HF_RUNS runs each)" \
		"$(printf 'true %.2f, GNU time %.2f, helper %.2f, standalone %.2f' "${RT_MS[true.m]}" \
			"${RT_MS[gnu_time.m]}" "${RT_MS[helper.m]}" "${RT_MS[standalone.m]}")" "" "" "${RT_MS[true.m]}" ms \
		"hyperfine -N; -r $RT_N: helper $(printf '%.1f' "${RT_MS[helper_r.m]}"), standalone $(printf '%.1f' "${RT_MS[standalone_r.m]}") ms; the ratios below are each round's own"
	rt_row startup "GNU time's added time (ms), the unit" gnu "" ms '%.2f' \
		"/usr/bin/time -f %M true − true, in the same round" || true
	rt_row startup "through a running helper: peakbpf -q -- true (× GNU time's added time)" helper 1.5 "×" '%.2f' \
		"(peakbpf − true) ÷ (GNU time − true), each round's medians; peakbpf serve of its own, resident (bpf_load \"helper\")" &&
		RT_HELPER=${RTM[helper]} RT_HELPER_SPREAD=${RTS[helper]}
	rt_row startup "  the same with --source bpf, no cgroup of its own (×)" helper_bpf "" "×" '%.2f' \
		"the helper's round trips alone; the difference to the row above is the tree's own cgroup" || true
	rt_row startup "standalone: peakbpf -q --no-helper -- true (× GNU time's added time)" standalone 5 "×" '%.2f' \
		"its own BPF load; the steps of that load are the rows above" &&
		RT_STANDALONE=${RTM[standalone]} RT_STANDALONE_SPREAD=${RTS[standalone]}
	rt_row startup "-r $RT_N --no-helper, per run after the first (× GNU time's added time)" standalone_r 1 "×" '%.2f' \
		"((-r $RT_N − one run) ÷ $((RT_N - 1)) − true) ÷ GNU time's added; one load, a tree of it (and its own cgroup) per run" &&
		RT_RUNS_ALONE=${RTM[standalone_r]} RT_RUNS_ALONE_SPREAD=${RTS[standalone_r]}
	rt_row startup "-r $RT_N through the helper, per run after the first (× GNU time's added time)" helper_r 1 "×" '%.2f' \
		"the same through the helper: a session per run" &&
		RT_RUNS_HELPER=${RTM[helper_r]} RT_RUNS_HELPER_SPREAD=${RTS[helper_r]}
	rt_row startup "  -r $RT_N --no-helper per run after the first, by hyperfine (ms)" standalone_r_ms "" ms '%.2f' \
		"the row above in ms, for the cross-check below" || true
	if rt_runs_shell "$HF_ROUNDS"; then
		local hm lo hi
		read -r hm lo hi <<<"$(rt_stats "${RTV[standalone_r_ms]}")"
		row startup "  the same timed by this shell (ms)" "$(printf '%.2f ms' "$RT_SHELL_R")" "" \
			"$(awk -v s="$RT_SHELL_R" -v lo="$lo" -v hi="$hi" 'BEGIN {
				print (s >= lo - 0.5 && s <= hi + 0.5) ? "agrees" : "differs" }')" "$RT_SHELL_R" ms \
			"EPOCHREALTIME around true, one run and -r $RT_N, $HF_ROUNDS times interleaved, the median of each triple's figure; agrees: within the min–max of hyperfine's rounds (± 0.5 ms); hyperfine's median $(printf '%.2f' "$hm") ms"
	else
		na_row startup "  -r $RT_N timed by this shell" "" "a run failed"
		failed "-r timed by the shell"
	fi
	# Own peak RSS, standalone: GNU time's %M, once a round.
	local kib rss=()
	for ((r = 0; r < HF_ROUNDS; r++)); do
		kib=$("$GNU_TIME" -f %M "$PEAKBPF" -q --no-helper -- "$TRUE_BIN" 2>&1 >/dev/null | tail -n 1)
		[ "$kib" -gt 0 ] 2>/dev/null && rss+=("$(calc "$kib / 1024")")
	done
	if [ ${#rss[@]} -gt 0 ]; then
		RTV[rss]="${rss[*]}"
		rt_row startup "standalone own peak RSS (MiB)" rss 10 MiB '%.2f' \
			"GNU time %M (ru_maxrss) of peakbpf -q --no-helper -- true, once a round" &&
			RT_RSS=${RTM[rss]} RT_RSS_SPREAD=${RTS[rss]}
	fi
}

# The build row: alone and under peakbpf, in rounds of alternating order.
ratios_build() {
	local r json a b c set=$1 dir=$TMP/build why="" first second nobj sock=$TMP/helper.sock
	RT_BUILD=""
	local mk=(make -s -j2 OUTPUT="$dir" BENCH_BUILD_SET="$set" bench-build-subset)
	local alone="${mk[*]}" under="$PEAKBPF -q -- ${mk[*]}" standalone="$PEAKBPF -q --no-helper -- ${mk[*]}"
	[ -n "$HYPERFINE" ] || why="hyperfine is not installed (tools/install-deps.sh installs it)"
	[ -n "$why" ] || helper_start || why="peakbpf serve did not start: $(head -n 1 "$TMP/helper.log")"
	# make bench: a warm build first (the compiler and headers in the page
	# cache), untimed; bench-short alternates the order instead
	[ -n "$why" ] || [ "$BUILD_WARM" = 0 ] || env -u MAKEFLAGS -u MAKELEVEL -u MFLAGS "${mk[@]}" >/dev/null 2>"$TMP/build.err" ||
		why="make ${mk[*]} failed: $(tail -n 1 "$TMP/build.err")"
	# the third arm, standalone (its own load in the build's time): make bench only
	local third=()
	[ "$MODE" = full ] && third=("$standalone")
	for ((r = 0; r < BUILD_ROUNDS; r++)); do
		[ -z "$why" ] || break
		json=$TMP/build.$r.json
		if ((r % 2)); then first=$under second=$alone; else first=$alone second=$under; fi
		PEAKBPF_HELPER=$sock env -u MAKEFLAGS -u MAKELEVEL -u MFLAGS "$HYPERFINE" -N --style none -r 1 \
			--prepare "rm -rf $dir" --export-json "$json" "$first" "$second" \
			"${third[@]}" >/dev/null 2>"$TMP/build.err" ||
			{ why="hyperfine failed: $(tail -n 1 "$TMP/build.err")"; break; }
		read -r a b c <<<"$(rt_medians "$json")"
		((r % 2)) && read -r b a <<<"$a $b"
		RTV[build]+="$(calc "($b - $a) / $a * 100") "
		RTV[build_s]+="$(calc "$a / 1000") "
		[ -n "$c" ] && RTV[build_alone]+="$(calc "($c - $a) / $a * 100") "
		log "build round $((r + 1)): alone $(printf '%.2f' "$(calc "$a / 1000")") s, under peakbpf $(printf '%.2f' "$(calc "$b / 1000")") s${c:+, standalone $(printf '%.2f' "$(calc "$c / 1000")") s}"
	done
	helper_stop
	nobj=$(find "$dir" -name '*.o' 2>/dev/null | wc -l)
	rm -rf "$dir"
	if [ -n "$why" ]; then
		na_row wall "make -j2 of the build subset under peakbpf" "≤ 2 %" "$why"
		failed "build"
		return
	fi
	rt_row wall "make -j2 of the build subset, alone (s)" build_s "" s '%.2f' \
		"bench.mk's bench-build-subset ($set: $nobj objects, compiler runs) into a scratch OUTPUT$([ "$BUILD_WARM" = 0 ] || echo ", after one untimed build")" || true
	rt_row wall "make -j2 of the build subset under peakbpf (% over alone)" build 2 "%" '%+.2f' \
		"peakbpf -q -- make … through a resident helper (the default path), its session included; each round one build of each, the order alternating" &&
		RT_BUILD=${RTM[build]} RT_BUILD_SPREAD=${RTS[build]}
	[ -z "${RTV[build_alone]:-}" ] || rt_row wall "  the same standalone, --no-helper (% over alone)" build_alone "" "%" '%+.2f' \
		"its own BPF load in the build's time; run third in each round" || true
}
