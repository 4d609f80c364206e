# shellcheck shell=bash
# SPDX-License-Identifier: MIT
# The start-up of the other ways to measure (issue 24), sourced by bench.sh
# after its own start-up rows ([3]): through a running helper, many runs of
# one process on one BPF load (-r 20), and the Python package's block.
# Each figure is a difference of medians of interleaved runs, as [3]'s.
#
# Sets PATHS_HELPER_ADDED, PATHS_RUN_ADDED, PATHS_PY_BLOCK (ms; empty when
# not measured) for the targets table.

# time_ms CMD...: wall time of one run of CMD from this shell, ms.
time_ms() {
	local t0=$EPOCHREALTIME
	"$@" >/dev/null 2>"$TMP/paths.err" || return 1
	calc "($EPOCHREALTIME - $t0) * 1000"
}

# A helper of our own, resident (the default), on a socket of our own.
helper_start() {
	local i
	"$PEAKBPF" serve --socket "$TMP/helper.sock" 2>"$TMP/helper.log" &
	HELPER_PID=$!
	for ((i = 0; i < 100; i++)); do
		"$PEAKBPF" serve --status --socket "$TMP/helper.sock" >/dev/null 2>&1 && return 0
		kill -0 "$HELPER_PID" 2>/dev/null || break
		sleep 0.1
	done
	return 1
}
helper_stop() {
	[ -n "${HELPER_PID:-}" ] || return 0
	kill "$HELPER_PID" 2>/dev/null
	wait "$HELPER_PID" 2>/dev/null
	HELPER_PID=""
}

# paths_helper: `peakbpf -q -- true` through a running helper vs true alone;
# and with --source bpf (no cgroup of its own), which shows what making,
# entering and removing the tree's cgroup adds.
paths_helper() {
	local i d a=() h=() hb=() via am hm hbm lo hi
	PATHS_HELPER_ADDED=""
	if ! helper_start; then
		na_row startup "through a running helper" "≤ 5 ms" "peakbpf serve did not start: $(head -n 1 "$TMP/helper.log")"
		failed "helper start-up"
		helper_stop
		return
	fi
	PEAKBPF_HELPER=$TMP/helper.sock "$PEAKBPF" -q --json -- "$TRUE_BIN" >"$TMP/h.json" 2>/dev/null
	via=$(sed -n 's/.*"bpf_load":"\([a-z]*\)".*/\1/p' "$TMP/h.json")
	for ((i = 0; i < BENCH_START_RUNS; i++)); do
		d=$(time_ms "$TRUE_BIN") && a+=("$d")
		d=$(PEAKBPF_HELPER=$TMP/helper.sock time_ms "$PEAKBPF" -q -- "$TRUE_BIN") && h+=("$d")
		d=$(PEAKBPF_HELPER=$TMP/helper.sock time_ms "$PEAKBPF" -q --source bpf -- "$TRUE_BIN") && hb+=("$d")
	done
	helper_stop
	if [ "$via" != helper ] || [ ${#h[@]} -lt 3 ] || [ ${#hb[@]} -lt 3 ]; then
		na_row startup "through a running helper" "≤ 5 ms" "the runs did not go through the helper (bpf_load: ${via:-none}): $(head -n 1 "$TMP/paths.err")"
		failed "helper start-up"
		return
	fi
	read -r am _ <<<"$(stats "${a[@]}")"
	read -r hm lo hi <<<"$(stats "${h[@]}")"
	PATHS_HELPER_ADDED=$(calc "$hm - $am")
	row startup "through a running helper: peakbpf -q -- true (ms, median of ${#h[@]})" \
		"$(printf '%.2f ms (%.2f–%.2f)' "$hm" "$lo" "$hi")" "" "" "$hm" ms \
		"peakbpf serve of its own, resident; the record says bpf_load \"helper\""
	row startup "  added by peakbpf through the helper (difference of medians)" \
		"$(printf '%.2f ms' "$PATHS_HELPER_ADDED")" "≤ 5 ms" "$(verdict "$PATHS_HELPER_ADDED" 5)" \
		"$PATHS_HELPER_ADDED" ms "round trips (open, add, start, close) and the other sources: the tree's cgroup (below)"
	read -r hbm lo hi <<<"$(stats "${hb[@]}")"
	row startup "  the same with --source bpf: no cgroup of its own (ms added)" \
		"$(printf '%.2f ms' "$(calc "$hbm - $am")")" "" "" "$(calc "$hbm - $am")" ms \
		"the helper's round trips alone; the difference to the row above is the cgroup source (mkdir, moving the command in, rmdir)"
}

# paths_runs: -r 20 against one run, both loaded here (--no-helper): what a
# run after the first adds, now that every run takes a tree of one load.
paths_runs() {
	local i d one=() many=() a=() om mm am
	PATHS_RUN_ADDED=""
	for ((i = 0; i < (BENCH_START_RUNS + 1) / 2; i++)); do
		d=$(time_ms "$TRUE_BIN") && a+=("$d")
		d=$(time_ms "$PEAKBPF" -q --no-helper -- "$TRUE_BIN") && one+=("$d")
		d=$(time_ms "$PEAKBPF" -q --no-helper -r 20 -- "$TRUE_BIN") && many+=("$d")
	done
	if [ ${#many[@]} -lt 2 ] || [ ${#one[@]} -lt 2 ]; then
		na_row startup "-r 20 -- true, per run after the first" "≤ 2 ms" "a run failed: $(head -n 1 "$TMP/paths.err")"
		failed "-r 20"
		return
	fi
	read -r om _ <<<"$(stats "${one[@]}")"
	read -r mm lo hi <<<"$(stats "${many[@]}")"
	read -r am _ <<<"$(stats "${a[@]}")"
	PATHS_RUN_ADDED=$(calc "($mm - $om) / 19 - $am")
	row startup "peakbpf -q -r 20 -- true (ms, median of ${#many[@]})" \
		"$(printf '%.1f ms (%.1f–%.1f)' "$mm" "$lo" "$hi")" "" "" "$mm" ms "loaded here (--no-helper): one BPF load, a tree of it per run"
	row startup "  added per run after the first (ms)" "$(printf '%.2f ms' "$PATHS_RUN_ADDED")" "≤ 2 ms" \
		"$(verdict "$PATHS_RUN_ADDED" 2)" "$PATHS_RUN_ADDED" ms \
		"(median of -r 20 − median of one run) / 19 − true alone; each run still makes its own cgroup"
}

# paths_python: one `with peakbpf.measure(): pass` block, the session open
# (the package keeps one per process), loaded here.
paths_python() {
	local out
	PATHS_PY_BLOCK=""
	if ! command -v python3 >/dev/null || [ ! -e "$OUTPUT/libpeakbpf.so.0" ]; then
		na_row startup "Python measure() block" "≤ 1 ms" "python3 or $OUTPUT/libpeakbpf.so.0 missing (make lib)"
		return
	fi
	out=$(PEAKBPF_LIBRARY=$OUTPUT/libpeakbpf.so.0 PYTHONPATH=python python3 - 2>&1 <<'EOF'
import time
import peakbpf
with peakbpf.measure():
    pass
costs = []
for _ in range(200):
    t = time.perf_counter()
    with peakbpf.measure() as m:
        pass
    costs.append((time.perf_counter() - t) * 1e3)
costs.sort()
print("%s %.4f %.4f %.4f" % (m.source, costs[100], costs[0], costs[180]))
EOF
)
	read -r src med lo p90 <<<"$out"
	if [ "$src" != bpf ] || [ -z "${med:-}" ]; then
		na_row startup "Python measure() block" "≤ 1 ms" "not measured with bpf: $(echo "$out" | tail -n 1)"
		return
	fi
	PATHS_PY_BLOCK=$med
	row startup "Python: one measure() block (ms, median of 200)" "$(printf '%.3f ms (min %.3f, p90 %.3f)' "$med" "$lo" "$p90")" \
		"≤ 1 ms" "$(verdict "$med" 1)" "$med" ms "with peakbpf.measure(): pass; the package's session stays open, a block closes two windows"
}
