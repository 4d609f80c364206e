# shellcheck shell=sh
# Attach mode (-p) and windows (-i, SIGUSR1).

TESTS="$TESTS t_attach_later_spike t_attach_existing_children t_attach_leader_exited t_attach_phases
 t_interval_steady t_attach_pidns t_sigkill_keeps_windows t_command_windows
 t_attach_bad_pids t_attach_storm"

# wait_for FILE PATTERN: until a line matching PATTERN is in FILE (10 s at most).
wait_for() {
	i=0
	while ! grep -q "$2" "$1" 2>/dev/null; do
		i=$((i + 1))
		[ "$i" -gt 100 ] && return 1
		sleep 0.1
	done
}

# lines_valid FILE: every line is one JSON object (python3 checks, when here).
lines_valid() {
	if command -v python3 >/dev/null 2>&1; then
		python3 -c 'import json,sys
for l in open(sys.argv[1]): json.loads(l)' "$1"
	else
		! grep -v '^{.*}$' "$1" >/dev/null
	fi
}

# A sleeping process that later forks a child that spikes: the spike counts.
t_attach_later_spike() {
	sh -c "sleep $(q 1 8); $WORKLOAD -s 64MiB -t 5ms spike 2>/dev/null" &
	target=$!
	sleep 0.3
	"$PEAKBPF" -q -o "$TMP/later.json" -p "$target" 2>"$TMP/later.err"
	rc=$?
	wait "$target"
	if [ "$rc" = 0 ]; then
		check_growth "attach: later spike" "$TMP/later.json" $((64 * MIB))
	else
		fail "attach: later spike: peakbpf exited $rc: $(cat "$TMP/later.err")"
	fi
}

# Children that exist at attach time and allocate later are counted.
t_attach_existing_children() {
	# The children idle T before they allocate: in the VMs 8 s, past a
	# start-up that TCG on a busy host slows to 5 s (two loads on 5.10).
	"$WORKLOAD" -s 64MiB -n 2 -t "$(q 1s 8s)" late-children 2>/dev/null &
	target=$!
	sleep 0.3
	"$PEAKBPF" -q -o "$TMP/kids.json" -p "$target" 2>"$TMP/kids.err"
	rc=$?
	wait "$target"
	if [ "$rc" = 0 ]; then
		check_growth "attach: existing children" "$TMP/kids.json" $((128 * MIB))
	else
		fail "attach: existing children: peakbpf exited $rc: $(cat "$TMP/kids.err")"
	fi
}

# Attached while children are born and exit all the time, so some exit
# during the attach walk (issue 13: such a process once left a stale mm
# entry): when the tree has ended, no mm and no process is left in the maps.
t_attach_storm() {
	"$WORKLOAD" -n "$(q 8000 4000)" storm 2>/dev/null &
	target=$!
	sleep 0.3
	"$PEAKBPF" -q -o "$TMP/astorm.json" -p "$target" 2>"$TMP/astorm.err"
	rc=$?
	wait "$target"
	j=$TMP/astorm.json
	if [ "$rc" = 125 ] && grep -q "no such process" "$TMP/astorm.err"; then
		skip "attach storm: the storm ended before peakbpf had loaded (a slow VM)"
		return
	fi
	if [ "$rc" != 0 ] || [ ! -s "$j" ]; then
		fail "attach storm: peakbpf exited $rc: $(cat "$TMP/astorm.err")"
		return
	fi
	mms=$(json_num "$j" mms_left) procs=$(json_num "$j" processes_left)
	tracked=$(json_num "$j" processes_tracked) drops=$(json_num "$j" drops)
	if [ "$mms" = 0 ] && [ "$procs" = 0 ] && [ "$drops" = 0 ] && [ "${tracked:-0}" -gt 8 ]; then
		ok "attach storm: $tracked processes tracked while exiting, 0 drops, maps empty at the end"
	else
		fail "attach storm: tracked $tracked drops $drops mms_left $mms processes_left $procs"
	fi
}

# Three phases (64, 256, 128 MiB) marked by SIGUSR1 to peakbpf in the gap
# between phases: each window reports its own phase's peak.
# A process whose main thread called pthread_exit: its leader has no mm,
# the worker's is the process's. It was once measured as 0 B, exact.
t_attach_leader_exited() {
	"$WORKLOAD" -s 64MiB -t "$(q 1s 8s)" leader-exit 2>/dev/null &   # idles T first: as above
	target=$!
	sleep 0.3
	"$PEAKBPF" -q -o "$TMP/lexit.json" -p "$target" 2>"$TMP/lexit.err"
	rc=$?
	wait "$target"
	if [ "$rc" = 0 ]; then
		check_growth "attach: leader exited" "$TMP/lexit.json" $((64 * MIB))
	else
		fail "attach: leader exited: peakbpf exited $rc: $(cat "$TMP/lexit.err")"
	fi
}

t_attach_phases() {
	"$WORKLOAD" -s 64MiB -t 30s phases 2>"$TMP/phases.log" &
	wl=$!
	wait_for "$TMP/phases.log" "phase 1" || { fail "phases: workload did not start"; kill "$wl"; return; }
	"$PEAKBPF" -q -o "$TMP/phases.jsonl" -p "$wl" 2>"$TMP/phases.err" &
	pb=$!
	wait_attached "$pb"
	sleep "$(q 0.3 1)"   # its walk is done: the 64 MiB are in the first window
	for k in 1 2; do
		kill -USR1 "$wl"                # phase k ends: its block is freed
		wait_for "$TMP/phases.log" "gap $k" || break
		kill -USR1 "$pb"                # the window of phase k closes in the gap
		wait_for "$TMP/phases.log" "phase $((k + 1))" || break
		sleep 0.3
	done
	kill -USR1 "$wl"
	wait "$wl"
	wait "$pb"
	n=$(grep -c '"record":"window"' "$TMP/phases.jsonl")
	if [ "$n" != 3 ] || ! lines_valid "$TMP/phases.jsonl"; then
		fail "phases: want 3 valid window records, got $n: $(cat "$TMP/phases.err")"
		return
	fi
	k=0
	for want in 64 256 128; do
		k=$((k + 1))
		sed -n "${k}p" "$TMP/phases.jsonl" >"$TMP/phase$k.json"
		peak=$(json_num "$TMP/phase$k.json" peak_bytes)
		err=$(abs $((peak - want * MIB)))
		if [ "$err" -le $((2 * MIB)) ]; then
			ok "phases: window $k peak $(mib "$peak"), phase $want MiB, error $(mib "$err")"
		else
			fail "phases: window $k peak $(mib "$peak"), phase $want MiB"
		fi
		echo "phase$k $peak $((want * MIB)) $err 1" >>"$RESULTS"
	done
}

# A steady process cut into windows: each window's peak is its baseline.
t_interval_steady() {
	"$WORKLOAD" -s 64MiB -t "$(q 3s 6s)" steady 2>/dev/null &
	wl=$!
	sleep 0.5
	"$PEAKBPF" -q -o "$TMP/steady.jsonl" -i 200ms -d 1500ms -p "$wl" 2>"$TMP/steady.err"
	rc=$?
	kill "$wl" 2>/dev/null
	wait "$wl" 2>/dev/null
	n=$(grep -c '"record":"window"' "$TMP/steady.jsonl")
	if [ "$rc" != 0 ] || [ "$n" -lt 6 ]; then
		fail "interval: exit $rc, $n windows (want >= 6): $(cat "$TMP/steady.err")"
		return
	fi
	worst=0
	grep '"record":"window"' "$TMP/steady.jsonl" | while read -r line; do
		echo "$line" >"$TMP/w.json"
		g=$(json_num "$TMP/w.json" growth_bytes)
		echo "$g"
	done >"$TMP/growths"
	worst=$(sort -n "$TMP/growths" | tail -n 1)
	if [ "$worst" -le $((64 * 1024)) ]; then
		ok "interval: $n windows on a steady 64 MiB process, largest growth $worst bytes"
	else
		fail "interval: a window grew $worst bytes on a steady process"
	fi
}

# In a PID namespace, -p takes and reports that namespace's PIDs.
t_attach_pidns() {
	need unshare "pid namespace" || return
	# The workload outlives peakbpf's start-up: under TCG on 5.10-6.12 that
	# is two loads (the cgroup targets' programs refused, then the load
	# without them), past 1.5 s.
	unshare --pid --fork --mount-proc sh -c "
		$WORKLOAD -s 64MiB -t $(q 2s 10s) steady 2>/dev/null &
		sleep 0.5
		echo \$! >$TMP/nspid
		$PEAKBPF -q -o $TMP/ns.json -p \$! -d 1s" 2>"$TMP/ns.err"
	rc=$?
	nspid=$(cat "$TMP/nspid" 2>/dev/null)
	got=$(sed -n 's/.*"attached":\[\([0-9]*\)\].*/\1/p' "$TMP/ns.json" 2>/dev/null)
	peak=$(json_num "$TMP/ns.json" peak_bytes)
	if [ "$rc" = 0 ] && [ -n "$nspid" ] && [ "$got" = "$nspid" ] && [ "$nspid" -lt 100 ] &&
		[ "${peak:-0}" -ge $((64 * MIB)) ] && [ "$peak" -le $((67 * MIB)) ]; then
		ok "pid namespace: -p $nspid (namespace PID) measured $(mib "$peak"), reported as $got"
	else
		fail "pid namespace: exit $rc, ns pid $nspid, reported $got, peak $peak: $(cat "$TMP/ns.err")"
	fi
}

# SIGKILL to peakbpf: every closed window is valid JSON, nothing stays loaded.
t_sigkill_keeps_windows() {
	"$WORKLOAD" -s 16MiB -t 30s steady 2>/dev/null &     # killed after 3 windows, or 20 s
	wl=$!
	"$PEAKBPF" -q -o "$TMP/killed.jsonl" -i 200ms -p "$wl" 2>/dev/null &
	pb=$!
	i=0
	# cat: a file peakbpf has not made yet counts 0 windows, not "".
	# shellcheck disable=SC2002
	while [ "$(cat "$TMP/killed.jsonl" 2>/dev/null | grep -c window)" -lt 3 ] && [ "$i" -lt 200 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	kill -KILL "$pb"
	wait "$pb" 2>/dev/null
	kill "$wl"
	wait "$wl" 2>/dev/null
	n=$(grep -c '"record":"window"' "$TMP/killed.jsonl")
	left=0
	command -v bpftool >/dev/null 2>&1 && left=$(progs_left)
	[ "$left" = busy ] && left=0    # another peakbpf's: t_nothing_left_loaded says so
	if [ "$n" -ge 3 ] && lines_valid "$TMP/killed.jsonl" && [ "$left" = 0 ]; then
		ok "SIGKILL mid-run: $n closed windows readable, no program left loaded"
	else
		fail "SIGKILL mid-run: $n windows, valid: $(lines_valid "$TMP/killed.jsonl" && echo yes), $left programs left"
	fi
}

# Windows in command mode: window lines, then the run's line.
t_command_windows() {
	"$PEAKBPF" -q -o "$TMP/cw.jsonl" -i 300ms -- "$WORKLOAD" -s 32MiB -t 1s steady 2>/dev/null
	rc=$?
	n=$(grep -c '"record":"window"' "$TMP/cw.jsonl")
	last=$(tail -n 1 "$TMP/cw.jsonl" | grep -c '"record":"run"')
	if [ "$rc" = 0 ] && [ "$n" -ge 3 ] && [ "$last" = 1 ] && lines_valid "$TMP/cw.jsonl"; then
		ok "command mode windows: $n window records and a final run record"
	else
		fail "command mode windows: exit $rc, $n windows, run record last: $last"
	fi
}

t_attach_bad_pids() {
	sh -c 'exit 0' &
	gone=$!
	wait "$gone"
	expect_error "-p of an exited process" 125 "no such process" "$PEAKBPF" -p "$gone"
	expect_error "-p 0" 125 "positive" "$PEAKBPF" -p 0
	expect_error "-p -5" 125 "positive" "$PEAKBPF" -p -5
	expect_error "-p abc" 125 "positive" "$PEAKBPF" -p abc
	expect_error "-p duplicate" 125 "twice" "$PEAKBPF" -p "$$,$$"
	expect_error "-p peakbpf itself" 125 "peakbpf itself" sh -c "exec $PEAKBPF -p \$\$"
	expect_error "-p with a command" 125 "do not go together" "$PEAKBPF" -p "$$" -- true
}
