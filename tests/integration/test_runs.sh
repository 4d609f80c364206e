# shellcheck shell=sh
# The harness: repeated runs, the budget gate, comparisons, exports,
# sweeps with a fit, --wait-descendants.

TESTS="$TESTS t_runs_five t_runs_compare t_budget_exceeded t_budget_within
 t_budget_failing_command t_exports_parse t_sweep_slope t_wait_descendants
 t_runs_one_load t_runs_unique_reused"

# peak_field FILE KEY: KEY inside the first result's peak_bytes object.
peak_field() {
	grep -o '"peak_bytes":{[^}]*}' "$1" | head -n 1 | grep -o "\"$2\":[^,]*" | head -n 1 | cut -d: -f2
}

# 5 runs: 5 values, each exact, and the median is the middle one.
t_runs_five() {
	"$PEAKBPF" -q -r 5 -w 1 -o "$TMP/five.json" -- "$WORKLOAD" -s 64MiB -t 5ms spike \
		>/dev/null 2>"$TMP/five.err"
	rc=$?
	# Exact where the kernel keeps every counter exact (6.2+), said so elsewhere.
	want_exact=false
	"$PEAKBPF" -q --json -- true 2>/dev/null | grep -q '"exact_path":"per-cpu-sum"' && want_exact=true
	values=$(grep -o '"peak_bytes":{[^}]*}' "$TMP/five.json" | grep -o '"values":\[[^]]*\]' |
		sed 's/.*\[//; s/\]//' | tr , '\n')
	n=$(echo "$values" | grep -c '^[0-9][0-9]*$')
	middle=$(echo "$values" | sort -n | sed -n 3p)
	median=$(peak_field "$TMP/five.json" median)
	codes=$(grep -o '"exit_codes":\[[^]]*\]' "$TMP/five.json" | head -n 1)
	if [ "$rc" = 0 ] && [ "$n" = 5 ] && [ "$median" = "$middle" ] &&
		[ "$codes" = '"exit_codes":[0,0,0,0,0]' ] && [ "$(peak_field "$TMP/five.json" exact)" = "$want_exact" ]; then
		ok "5 runs: 5 values, median $(mib "$median") is the middle one, exit codes kept"
	else
		fail "5 runs: rc $rc, $n values, median $median, middle $middle, $codes: $(cat "$TMP/five.err")"
	fi
}

# Two commands side by side: the ratio of 128 to 64 MiB is about 2.
t_runs_compare() {
	"$PEAKBPF" -q -r 2 -o "$TMP/cmp.json" -c "$WORKLOAD -s 64MiB spike" -c "$WORKLOAD -s 128MiB spike" \
		>/dev/null 2>"$TMP/cmp.err"
	rc=$?
	ratio=$(grep -o '"ratio_to_first":{"peak":[0-9.]*' "$TMP/cmp.json" | sed -n 2p | cut -d: -f3)
	if [ "$rc" = 0 ] && awk -v r="${ratio:-0}" 'BEGIN { exit !(r > 1.9 && r < 2.05) }'; then
		ok "two commands compared: peak ratio $ratio"
	else
		fail "two commands: rc $rc, ratio '$ratio': $(cat "$TMP/cmp.err")"
	fi
}

t_budget_exceeded() {
	size=$(q 256MiB 64MiB) max=$(q 100MiB 32MiB)
	"$PEAKBPF" -q --max "$max" -- "$WORKLOAD" -s "$size" -t 5ms spike >/dev/null 2>"$TMP/over.err"
	rc=$?
	if [ "$rc" = 122 ] && grep -q "^peakbpf: peak [0-9.]* MiB exceeded the budget $(echo "$max" |
		sed 's/MiB/.0 MiB/') (+[0-9.]* %)" "$TMP/over.err"; then
		ok "budget: $size under --max $max exits 122: $(cat "$TMP/over.err")"
	else
		fail "budget exceeded: rc $rc (want 122): $(cat "$TMP/over.err")"
	fi
}

t_budget_within() {
	size=$(q 256MiB 64MiB)
	"$PEAKBPF" -q --max 1GiB -r 2 -- "$WORKLOAD" -s "$size" -t 5ms spike >/dev/null 2>"$TMP/within.err"
	rc=$?
	if [ "$rc" = 0 ]; then
		ok "budget: $size under --max 1GiB (max of 2 runs) exits 0"
	else
		fail "budget within: rc $rc (want 0): $(cat "$TMP/within.err")"
	fi
}

# Over budget, but failing: the command's own status wins.
t_budget_failing_command() {
	"$PEAKBPF" -q --max 1KiB -- sh -c 'exit 3' 2>"$TMP/fails.err"
	rc=$?
	"$PEAKBPF" -q --max 1KiB -r 2 -c 'exit 4' 2>"$TMP/fails.err"
	rc2=$?
	if [ "$rc" = 3 ] && [ "$rc2" = 4 ]; then
		ok "budget: a failing command keeps its own status (3, and 4 with runs)"
	else
		fail "budget, failing command: rc $rc (want 3), $rc2 (want 4): $(cat "$TMP/fails.err")"
	fi
}

# JSON parses, every CSV row has the header's fields, the Markdown table is
# well-formed (each row as many cells as the header, the separator row).
t_exports_parse() {
	"$PEAKBPF" -q -r 2 -o "$TMP/ex.json" --export-csv "$TMP/ex.csv" --export-markdown "$TMP/ex.md" \
		-c "$WORKLOAD -s 16MiB spike" -c "$WORKLOAD -s 32MiB spike" >/dev/null 2>"$TMP/ex.err"
	rc=$?
	why=""
	lines_valid "$TMP/ex.json" || why="$why json"
	if command -v python3 >/dev/null 2>&1; then
		python3 -c 'import csv,sys
rows = list(csv.reader(open(sys.argv[1])))
assert len(rows) == 3 and all(len(r) == len(rows[0]) for r in rows), rows
assert rows[1][rows[0].index("exact")] == "true"' "$TMP/ex.csv" || why="$why csv"
	else
		[ "$(awk -F, '{ print NF }' "$TMP/ex.csv" | sort -u | wc -l)" = 1 ] || why="$why csv"
	fi
	[ "$(wc -l <"$TMP/ex.md")" = 4 ] || why="$why md-rows"
	[ "$(awk '{ n = gsub(/\|/, "|"); print n }' "$TMP/ex.md" | sort -u | wc -l)" = 1 ] || why="$why md-cells"
	sed -n 2p "$TMP/ex.md" | grep -q '^|:---|---:|' || why="$why md-separator"
	if [ "$rc" = 0 ] && [ -z "$why" ]; then
		ok "exports: JSON parses, CSV has 3 rows of equal fields, Markdown table well-formed"
	else
		fail "exports: rc $rc, bad:$why: $(cat "$TMP/ex.err")"
	fi
}

# A sweep over the size recovers the workload's known slope within 2 %.
t_sweep_slope() {
	lo=$("$WORKLOAD" -x -s 16MiB spike) hi=$("$WORKLOAD" -x -s 64MiB spike)
	"$PEAKBPF" -q -P n 16 64 16 --fit n --headroom 0.2 -o "$TMP/fit.json" -- \
		"$WORKLOAD" -s '{n}MiB' -t 5ms spike >/dev/null 2>"$TMP/fit.err"
	rc=$?
	slope=$(grep -o '"coefficients":{[^}]*}' "$TMP/fit.json" | head -n 1 | grep -o '"n":[0-9.e+]*' | cut -d: -f2)
	true_slope=$(((hi - lo) / 48))
	if [ "$rc" = 0 ] && awk -v s="${slope:-0}" -v t="$true_slope" 'BEGIN { d = s - t; if (d < 0) d = -d; exit !(d <= t * 0.02) }'; then
		ok "sweep: fitted slope $slope B per n, true $true_slope (within 2 %)"
	else
		fail "sweep: rc $rc, slope '$slope', true $true_slope: $(cat "$TMP/fit.err")"
	fi
}

# A child left running after the command exits: counted with --wait-descendants.
t_wait_descendants() {
	cmd="(sleep $(q 0.3 2); $WORKLOAD -s 64MiB -t 5ms spike) >/dev/null 2>&1 & exit 0"
	"$PEAKBPF" -q -o "$TMP/nowait.json" -- sh -c "$cmd" 2>/dev/null
	"$PEAKBPF" -q -o "$TMP/wait.json" --wait-descendants -- sh -c "$cmd" 2>"$TMP/wait.err"
	rc=$?
	without=$(json_num "$TMP/nowait.json" growth_bytes)
	with=$(json_num "$TMP/wait.json" growth_bytes)
	alive=$(json_num "$TMP/wait.json" descendants_alive_at_exit)
	sleep "$(q 0.5 3)"      # the first run's orphan ends
	if [ "$rc" = 0 ] && [ "${with:-0}" -ge $((64 * MIB)) ] && [ "${without:-0}" -lt $((64 * MIB)) ] &&
		[ "$alive" = 0 ]; then
		ok "--wait-descendants: $(mib "$with") with, $(mib "$without") without"
	else
		fail "--wait-descendants: rc $rc, with '$with', without '$without', alive '$alive': $(cat "$TMP/wait.err")"
	fi
}

# One BPF load serves every run of a process (issue 24): each run's command
# lists the BPF programs its parent, peakbpf, holds; three runs list the
# same program ids (before: each run loaded anew, new ids every run). And
# each run is still its own, exact tree.
t_runs_one_load() {
	rm -f "$TMP/ids"
	"$PEAKBPF" -q -r 3 -o "$TMP/oneload.json" -- sh -c 'for f in /proc/$PPID/fdinfo/*; do
		sed -n "s/^prog_id:[[:space:]]*//p" "$f" 2>/dev/null; done | sort -un | tr "\n" " " >>"$0"
		echo >>"$0"' "$TMP/ids" 2>"$TMP/oneload.err"
	rc=$?
	lines=$(grep -c . "$TMP/ids" 2>/dev/null)
	distinct=$(sort -u "$TMP/ids" 2>/dev/null | grep -c .)
	"$PEAKBPF" -q -r 3 -o "$TMP/oneload2.json" -- "$WORKLOAD" -s 32MiB -t 5ms spike >/dev/null 2>>"$TMP/oneload.err"
	rc2=$?
	values=$(grep -o '"values":\[[^]]*\]' "$TMP/oneload2.json" | head -n 1 | sed 's/.*\[//; s/\]//' | tr , '\n')
	low=$(echo "$values" | awk -v w=$((32 << 20)) '$1 < w { n++ } END { print n + 0 }')
	if [ "$rc" = 0 ] && [ "$lines" = 3 ] && [ "$distinct" = 1 ] && [ -n "$(head -n 1 "$TMP/ids" | tr -d ' ')" ] &&
		[ "$rc2" = 0 ] && [ "$(echo "$values" | grep -c .)" = 3 ] && [ "$low" = 0 ]; then
		ok "3 runs, one load: the same BPF programs ($(head -n 1 "$TMP/ids" | wc -w)) in every run; 32 MiB seen in each"
	else
		fail "one load: rc $rc/$rc2, $lines runs listed, $distinct distinct sets, values $(echo $values), $low below 32 MiB: $(cat "$TMP/ids" "$TMP/oneload.err")"
	fi
}

# The unique program of the one load follows each run's own cgroup: every
# run's unique figure is its 64 MiB spike, exact (were the cgroup id left
# at the first run's, later runs would read 0).
t_runs_unique_reused() {
	"$PEAKBPF" -q --json -- true 2>/dev/null | grep -q '"source":"bpf-memcg"' ||
		{ skip "unique memory over runs: no memcg statistic tracepoint (6.13+) or no cgroup of its own"; return; }
	"$PEAKBPF" -q -r 3 --measure unique -o "$TMP/ureuse.json" -- "$WORKLOAD" -s 64MiB -t 5ms spike \
		>/dev/null 2>"$TMP/ureuse.err"
	rc=$?
	fig=$(grep -o '"peak_bytes":{[^}]*}' "$TMP/ureuse.json" | head -n 1)
	values=$(echo "$fig" | grep -o '"values":\[[^]]*\]' | sed 's/.*\[//; s/\]//' | tr , '\n')
	off=$(echo "$values" | awk -v w=$((64 << 20)) '$1 < w || $1 > w + 8388608 { n++ } END { print n + 0 }')
	if [ "$rc" = 0 ] && [ "$(echo "$values" | grep -c .)" = 3 ] && [ "$off" = 0 ] &&
		echo "$fig" | grep -q '"source":"bpf-memcg","exact":true'; then
		ok "unique memory, 3 runs of one load: $(echo $values) (bpf-memcg, exact)"
	else
		fail "unique over runs: rc $rc, $off values off 64 MiB: $fig: $(cat "$TMP/ureuse.err")"
	fi
}
