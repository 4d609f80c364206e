# shellcheck shell=sh
# Command mode: peakbpf -- CMD, every workload shape and the exit paths.

TESTS="$TESTS t_spike t_sequential t_concurrent t_chain t_threads t_exec
 t_vfork_exec t_daemon t_storm t_shared t_file t_exit_status t_killed
 t_not_found t_not_executable t_bad_option t_forward_sigterm t_map_full t_output_errors t_output_file t_user
 t_no_privileges t_nothing_left_loaded"

t_spike() { run_shape spike -s 64MiB -t 5ms spike; }
# One child's memory, not the sum of all of them.
t_sequential() { run_shape sequential -s 64MiB -n 4 -t 20ms sequential; }
t_concurrent() { run_shape concurrent -s 64MiB -n "$(q 4 2)" concurrent; }
t_chain() { run_shape chain -s 64MiB -n "$(q 4 2)" chain; }
# Threads share one mm: counted once.
t_threads() { run_shape threads -s 64MiB -n "$(q 4 2)" threads; }
# The old image leaves the sum at exec.
t_exec() { run_shape exec -s 64MiB exec; }
t_vfork_exec() { run_shape vfork_exec -s 64MiB vfork-exec; }
# Reparented to init, still in the tree by fork lineage.
t_daemon() { run_shape daemon -s 64MiB -t 200ms daemon; }
t_shared() { run_shape shared -s 64MiB -n "$(q 4 2)" shared; }
t_file() { run_shape file -s 64MiB file; }

# Thousands of short-lived children: no drops, and the maps end empty.
t_storm() {
	children=$(q 3000 300)
	NO_REL=1 run_shape storm -n "$children" storm
	j=$TMP/storm.json
	[ -f "$j" ] || return
	drops=$(json_num "$j" drops) missed=$(json_num "$j" missed_events)
	mms=$(json_num "$j" mms_left) procs=$(json_num "$j" processes_left)
	tracked=$(json_num "$j" processes_tracked)
	if [ "$drops" = 0 ] && [ "$missed" = 0 ] && [ "$mms" = 0 ] && [ "$procs" = 0 ] &&
		[ "$tracked" -ge "$children" ]; then
		ok "storm: $tracked processes tracked, 0 drops, 0 missed, maps empty at the end"
	else
		fail "storm: tracked $tracked drops $drops missed $missed mms_left $mms processes_left $procs"
	fi
}

t_exit_status() {
	"$PEAKBPF" -q -o "$TMP/st.json" -- sh -c 'exit 3'
	rc=$?
	code=$(json_num "$TMP/st.json" exit_code)
	if [ "$rc" = 3 ] && [ "$code" = 3 ]; then
		ok "exit status 3 passes through"
	else
		fail "exit status: peakbpf $rc, record exit_code $code, want 3"
	fi
}

t_killed() {
	"$PEAKBPF" -q -o "$TMP/kill.json" -- sh -c 'kill -KILL $$'
	rc=$?
	sig=$(json_num "$TMP/kill.json" signal)
	if [ "$rc" = 137 ] && [ "$sig" = 9 ]; then
		ok "command killed by SIGKILL: exit 137, signal 9 recorded"
	else
		fail "killed: peakbpf $rc (want 137), signal $sig (want 9)"
	fi
}

# expect_error NAME STATUS PATTERN CMD...: one line on stderr matching
# PATTERN, exit STATUS, and no record written.
expect_error() {
	name=$1 want=$2 pattern=$3
	shift 3
	rm -f "$TMP/err.json"
	"$@" >"$TMP/err.out" 2>"$TMP/err.txt"
	rc=$?
	lines=$(wc -l <"$TMP/err.txt")
	if [ "$rc" = "$want" ] && [ "$lines" = 1 ] && grep -q "$pattern" "$TMP/err.txt"; then
		ok "$name: exit $rc: $(cat "$TMP/err.txt")"
	else
		fail "$name: exit $rc (want $want), stderr: $(cat "$TMP/err.txt")"
	fi
}

t_not_found() {
	expect_error "command not found" 127 "not found" \
		"$PEAKBPF" -- /nonexistent/peakbpf-no-such-command
}

t_not_executable() {
	: >"$TMP/not-exec"
	chmod 644 "$TMP/not-exec"
	expect_error "not executable" 126 "cannot execute" "$PEAKBPF" -- "$TMP/not-exec"
}

t_bad_option() {
	expect_error "unknown option" 125 "unknown option" "$PEAKBPF" --no-such-option -- true
	expect_error "bad --max-tracked" 125 "max-tracked" "$PEAKBPF" --max-tracked 12x -- true
	expect_error "no command" 125 "no command" "$PEAKBPF"
}

# SIGTERM to peakbpf reaches the command; the result is still written.
t_forward_sigterm() {
	"$PEAKBPF" -q -o "$TMP/term.json" -- "$WORKLOAD" -s 16MiB -t 20s steady 2>/dev/null &
	pb=$!
	wait_attached "$pb"
	sleep "$(q 1 3)"     # the command has touched its 16 MiB
	kill -TERM "$pb"
	wait "$pb"
	rc=$?
	sig=$(json_num "$TMP/term.json" signal)
	peak=$(json_num "$TMP/term.json" peak_bytes)
	if [ "$rc" = 143 ] && [ "$sig" = 15 ] && [ "${peak:-0}" -ge $((16 * MIB)) ]; then
		ok "SIGTERM forwarded: exit 143, peak $(mib "$peak") still reported"
	else
		fail "SIGTERM: exit $rc (want 143), signal $sig, peak $peak"
	fi
}

# A map too small for the tree: drops are counted and the run is not exact.
t_map_full() {
	"$PEAKBPF" -q -o "$TMP/full.json" --max-tracked 16 -- "$WORKLOAD" -s 1MiB -n 24 concurrent 2>/dev/null
	drops=$(json_num "$TMP/full.json" drops)
	exact=$(json_raw "$TMP/full.json" exact)
	bound=$(json_raw "$TMP/full.json" error_bound_bytes)
	if [ "${drops:-0}" -gt 0 ] && [ "$exact" = false ] && [ "$bound" = null ]; then
		ok "map full: $drops drops reported, exact false, error bound unknown"
	else
		fail "map full: drops $drops exact $exact bound $bound"
	fi
}

# Without privileges, --source bpf is an error, not a silent fallback.
t_no_privileges() {
	need setpriv "no privileges" || return
	expect_error "--source bpf without privileges" 125 "CAP_BPF" \
		setpriv --inh-caps=-all --ambient-caps=-all --bounding-set=-all "$PEAKBPF" -s bpf -- true
}

# No peakbpf program may stay loaded after any of the runs above.
t_nothing_left_loaded() {
	need bpftool "nothing left loaded" || return
	left=$(progs_left)
	if [ "$left" = busy ]; then
		skip "nothing left loaded: another peakbpf is running on this machine"
	elif [ "$left" = 0 ]; then
		ok "no peakbpf BPF program left loaded"
	else
		fail "$left peakbpf BPF programs still loaded"
	fi
}

# A record that cannot be written fails the run (125), naming the
# command's own status, on stdout as with -o.
t_output_errors() {
	if [ ! -w /dev/full ]; then
		skip "output errors: no /dev/full here"
		return
	fi
	"$PEAKBPF" -q --json -- sh -c 'exit 3' >/dev/full 2>"$TMP/full1.err"
	rc1=$?
	"$PEAKBPF" -q -o /dev/full -- sh -c 'exit 3' 2>"$TMP/full2.err"
	rc2=$?
	if [ "$rc1" = 125 ] && [ "$rc2" = 125 ] && grep -q "cannot write.*exit status was 3" "$TMP/full1.err" &&
		grep -q "cannot write /dev/full" "$TMP/full2.err"; then
		ok "output errors: stdout and -o on a full device exit 125: $(cat "$TMP/full1.err")"
	else
		fail "output errors: exit $rc1 / $rc2: $(cat "$TMP/full1.err" "$TMP/full2.err")"
	fi
}

# -o: created 0600 (it holds the command line), refused through a
# symbolic link, and what was there is kept until a record is written.
t_output_file() {
	printf 'before\n' >"$TMP/keep.json"
	"$PEAKBPF" -q -o "$TMP/keep.json" -p 999999999 2>/dev/null
	kept=$(cat "$TMP/keep.json")
	ln -s "$TMP/keep.json" "$TMP/link.json"
	"$PEAKBPF" -q -o "$TMP/link.json" -- true 2>"$TMP/link.err"
	rc=$?
	"$PEAKBPF" -q -o "$TMP/new.json" -- true 2>/dev/null
	mode=$(stat -c %a "$TMP/new.json" 2>/dev/null)
	if [ "$kept" = before ] && [ "$rc" = 125 ] && grep -q "symbolic link" "$TMP/link.err" &&
		[ "$mode" = 600 ] && grep -q '"record":"run"' "$TMP/new.json"; then
		ok "-o: mode 600, symbolic link refused, old content kept when nothing was measured"
	else
		fail "-o: kept '$kept', link exit $rc ($(cat "$TMP/link.err")), mode $mode"
	fi
}

# --user: the command runs as that user, measured as ever; a user that
# does not exist is an error before anything runs.
t_user() {
	id=$("$PEAKBPF" -q -o "$TMP/user.json" --user 65534:65534 -- id -u 2>"$TMP/user.err")
	rc=$?
	"$PEAKBPF" -q --user no-such-user-here -- true 2>"$TMP/nouser.err"
	rc2=$?
	src=$(json_raw "$TMP/user.json" source)
	if [ "$rc" = 0 ] && [ "$id" = 65534 ] && [ "$src" = '"bpf"' ] && [ "$rc2" = 125 ] &&
		grep -q "no such user" "$TMP/nouser.err"; then
		ok "--user 65534:65534: the command ran as uid $id, measured by $src; an unknown user is refused"
	else
		fail "--user: exit $rc, uid '$id', source $src, unknown user exit $rc2: $(cat "$TMP/user.err" "$TMP/nouser.err")"
	fi
}
