# shellcheck shell=bash
# SPDX-License-Identifier: MIT
# The other ways to measure (issue 24), sourced by bench.sh after its own
# start-up rows ([3]): a resident helper of the bench's own (helper_start,
# helper_stop: ratios.sh times runs through it) and the Python package's
# block.
#
# Sets PATHS_PY_BLOCK (ms; empty when not measured) for the targets table.

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
