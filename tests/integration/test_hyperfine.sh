# shellcheck shell=sh
# hyperfine's habits in the harness (issue 27), and the exports that other
# tools read, each read by its consumer's rules (consumers_check.py).

TESTS="$TESTS t_hyperfine_same_flags t_command_string_exec t_show_output_and_hooks
 t_progress_bar t_ci_exports"

# The checker needs Debian's python3 (prometheus_client is Debian's).
CHECK_PY=$(command -v /usr/bin/python3 || command -v python3)
CONSUMERS="$CHECK_PY $(dirname "$0")/consumers_check.py"
[ -f "$(dirname "$0")/consumers_check.py" ] || CONSUMERS="$CHECK_PY tests/integration/consumers_check.py"

# The same flags through hyperfine and peakbpf: peakbpf's JSON reads as
# hyperfine's (its schema, every key hyperfine wrote), and each run's
# memory_usage_byte is its exact peak.
t_hyperfine_same_flags() {
	need "$CHECK_PY" t_hyperfine_same_flags || return
	flags="-r 2 -w 1 -i --prepare true --setup true --cleanup true"     # hyperfine 1.15's
	a="$WORKLOAD -s 16MiB spike" b="sh -c 'exit 3'"
	# shellcheck disable=SC2086
	"$PEAKBPF" $flags --export-json "$TMP/hf.json" "$a" "$b" >/dev/null 2>"$TMP/hf.err"
	rc=$?
	ref=""
	if command -v hyperfine >/dev/null 2>&1; then
		# shellcheck disable=SC2086
		hyperfine -N $flags --export-json "$TMP/hf-ref.json" "$a" "$b" >/dev/null 2>&1 &&
			ref="$TMP/hf-ref.json"
	fi
	if [ "$rc" = 0 ] && $CONSUMERS hyperfine "$TMP/hf.json" $ref >"$TMP/hf.check" 2>&1 &&
		grep -q '"exit_codes":\[3,3\]' "$TMP/hf.json"; then
		ok "hyperfine's flags and schema${ref:+ (checked against hyperfine's own JSON)}: $(head -n 1 "$TMP/hf.check")"
	else
		fail "hyperfine's flags: rc $rc: $(cat "$TMP/hf.err" "$TMP/hf.check")"
	fi
}

# A command string without shell syntax runs without the shell: its peak
# is the program's alone, as with "--"; with shell syntax the shell's own
# memory is in it (about 1.7 MiB of dash on the host; the VMs' busybox sh
# adds a few pages only, so there the shell's part is not checked).
t_command_string_exec() {
	"$PEAKBPF" -q -r 3 --export-json "$TMP/ce1.json" "$WORKLOAD -s 16MiB spike" >/dev/null 2>&1
	"$PEAKBPF" -q -r 3 --export-json "$TMP/ce2.json" -- "$WORKLOAD" -s 16MiB spike >/dev/null 2>&1
	"$PEAKBPF" -q -r 3 --export-json "$TMP/ce3.json" "$WORKLOAD -s 16MiB spike; true" >/dev/null 2>&1
	direct=$(peak_field "$TMP/ce1.json" median) argv=$(peak_field "$TMP/ce2.json" median)
	shell=$(peak_field "$TMP/ce3.json" median)
	if [ -n "$direct" ] && [ -n "$argv" ] && [ -n "$shell" ] &&
		[ "$(abs $((direct - argv)))" -le $((256 * 1024)) ] &&
		{ [ "$QUICK" = 1 ] || [ $((shell - direct)) -ge $((64 * 1024)) ]; }; then
		ok "a plain command string is exec'd: $(mib "$direct") (argv form $(mib "$argv")); through sh $(mib "$shell")"
	else
		fail "command string exec: direct '$direct', argv '$argv', shell '$shell'"
	fi
}

# The harness hides the commands' output unless --show-output, as
# hyperfine; hooks run in hyperfine's order; -N execs without a shell.
t_show_output_and_hooks() {
	log=$TMP/hooks.log
	: >"$log"
	echo=""         # a program, not the shell's builtin: -N execs it
	for d in /bin /usr/bin; do [ -x "$d/echo" ] && echo=$d/echo && break; done
	[ -n "$echo" ] || { skip "t_show_output_and_hooks: no echo program to exec"; return; }
	"$PEAKBPF" -q -r 2 --setup "echo setup >>$log" --prepare "echo prepare >>$log" \
		--conclude "echo conclude >>$log" --cleanup "echo cleanup >>$log" 'echo hidden-words' \
		>"$TMP/so1.out" 2>&1
	rc1=$?
	"$PEAKBPF" -q -r 1 -N --show-output "$echo \"two words\" \$HOME;" >"$TMP/so2.out" 2>&1
	rc2=$?
	order=$(tr '\n' ' ' <"$log")
	if [ "$rc1" = 0 ] && [ "$rc2" = 0 ] && ! grep -q hidden-words "$TMP/so1.out" &&
		grep -qx 'two words \$HOME;' "$TMP/so2.out" &&
		[ "$order" = "setup prepare conclude prepare conclude cleanup " ]; then
		ok "output hidden without --show-output; -N execs 'echo \"two words\" \$HOME;' literally; hooks: $order"
	else
		fail "show-output/hooks: rc $rc1 $rc2, order '$order': $(cat "$TMP/so1.out" "$TMP/so2.out")"
	fi
}

# On a terminal a bar is redrawn in place, every second during a long
# run; elsewhere a line per run and per warm-up.
t_progress_bar() {
	need script t_progress_bar || return
	script -qec "$PEAKBPF -r 2 -w 1 'sleep 0.05'" /dev/null >"$TMP/bar.out" 2>&1
	script -qec "$PEAKBPF 'sleep 2.6'" /dev/null >"$TMP/bar-long.out" 2>&1
	"$PEAKBPF" -r 2 -w 1 'sleep 0.05' >/dev/null 2>"$TMP/lines.err"
	if grep -q "$(printf '\r\033\\[K')peakbpf: \[1/1\] run 2/2 \[#*\.*\]" "$TMP/bar.out" &&
		grep -q "run 1/1 \[\.*\] 0 %; this run 2 s" "$TMP/bar-long.out" &&
		grep -q '^peakbpf: \[1/1\] warm-up 1/1: peak [0-9.]* [KM]iB' "$TMP/lines.err" &&
		[ "$(grep -c '^peakbpf: \[1/1\] run [12]/2' "$TMP/lines.err")" = 2 ]; then
		ok "progress: a bar on a terminal, ticking during a long run; warm-up and run lines elsewhere"
	else
		fail "progress: $(od -c "$TMP/bar.out" | head -n 5) / $(cat "$TMP/lines.err")"
	fi
}

# BMF, customSmallerIsBetter and OpenMetrics, read by their consumers'
# rules; the peak in each is the harness's own figure.
t_ci_exports() {
	need "$CHECK_PY" t_ci_exports || return
	"$PEAKBPF" -q -r 2 --export-bmf "$TMP/e.bmf" --export-gab "$TMP/e.gab" \
		--export-openmetrics "$TMP/e.prom" --export-json "$TMP/e.json" \
		"$WORKLOAD -s 16MiB spike" "$WORKLOAD -s 32MiB spike" >/dev/null 2>"$TMP/e.err"
	rc=$?
	mean=$(peak_field "$TMP/e.json" mean)
	why=""
	$CONSUMERS bmf "$TMP/e.bmf" >"$TMP/e.c1" 2>&1 || why="$why bmf"
	$CONSUMERS gab "$TMP/e.gab" >"$TMP/e.c2" 2>&1 || why="$why gab"
	if "$CHECK_PY" -c 'import prometheus_client' 2>/dev/null; then
		$CONSUMERS openmetrics "$TMP/e.prom" >"$TMP/e.c3" 2>&1 || why="$why openmetrics"
	else
		skip "t_ci_exports: OpenMetrics not parsed: python3-prometheus-client not installed"
	fi
	grep -q "peak-memory $mean\$" "$TMP/e.c1" || why="$why bmf-value"
	grep -q "(peak memory) = $mean bytes" "$TMP/e.c2" || why="$why gab-value"
	if [ "$rc" = 0 ] && [ -n "$mean" ] && [ -z "$why" ]; then
		ok "BMF, customSmallerIsBetter, OpenMetrics read by their consumers' rules; peak mean $(mib "$mean")"
	else
		fail "CI exports: rc $rc, bad:$why: $(cat "$TMP/e.err" "$TMP/e.c1" "$TMP/e.c2" "$TMP/e.c3" 2>/dev/null)"
	fi
}
