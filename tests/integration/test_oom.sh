# shellcheck shell=sh
# The OOM flight recorder in a command's run (issue 34): a forking
# allocator under a memory cgroup with a limit is OOM-killed; the run's
# record names each victim, with the rss split the kernel's own OOM report
# (dmesg: the kill line and its per-task table) shows, and the kill's
# cgroup and limit.

TESTS="$TESTS t_oom_command_memcg t_oom_none_said"

# oom_memcg NAME: makes a memory cgroup $OOM_CG with a 100 MiB limit (v1:
# memory.limit_in_bytes; v2: memory.max), or skips NAME.
oom_memcg() {
	OOM_LIMIT=$((100 * 1048576))
	if [ -f /sys/fs/cgroup/memory/memory.limit_in_bytes ]; then
		OOM_CG=/sys/fs/cgroup/memory/agent-oom-$$
		mkdir "$OOM_CG" && echo "$OOM_LIMIT" >"$OOM_CG/memory.limit_in_bytes" && return 0
	elif grep -qw memory /sys/fs/cgroup/cgroup.subtree_control 2>/dev/null; then
		OOM_CG=/sys/fs/cgroup/agent-oom-$$
		mkdir "$OOM_CG" && echo "$OOM_LIMIT" >"$OOM_CG/memory.max" && return 0
	else
		skip "$1: no memory cgroup to make here"
		return 1
	fi
	rmdir "$OOM_CG" 2>/dev/null
	skip "$1: cannot make a memory cgroup with a limit at $OOM_CG"
	return 1
}

# oom_rm: the cgroup goes, once its processes have.
oom_rm() {
	i=0
	while [ -n "$(cat "$OOM_CG/cgroup.procs" 2>/dev/null)" ] && [ "$i" -lt 50 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	rmdir "$OOM_CG" 2>/dev/null
}

t_oom_command_memcg() {
	need python3 t_oom_command_memcg || return
	oom_memcg t_oom_command_memcg || return
	# Three children of 48 MiB at once under 100 MiB: the kernel kills.
	sh -c "echo \$\$ >$OOM_CG/cgroup.procs && exec \"$PEAKBPF\" --json -q -- \
		\"$WORKLOAD\" -n 3 -s 48MiB -t 2s concurrent" >"$TMP/oom.json" 2>"$TMP/oom.err"
	rc=$?
	dmesg >"$TMP/oom.dmesg" 2>&1
	oom_rm
	if ! grep -q '"oom_kills"' "$TMP/oom.json"; then
		fail "t_oom_command_memcg: no oom_kills in the record (rc $rc): $(head -c 300 "$TMP/oom.err")"
		return
	fi
	if python3 "$here/oom_check.py" "$TMP/oom.json" "$TMP/oom.dmesg" "$OOM_LIMIT" 1 >"$TMP/oom.check"; then
		ok "t_oom_command_memcg: $(grep -c '^victim' "$TMP/oom.check") victims as dmesg shows them; $(tail -n 1 "$TMP/oom.check")"
	else
		fail "t_oom_command_memcg: $(grep -m 3 -e MISMATCH -e 'not recorded' "$TMP/oom.check" | tr '\n' ' ')"
	fi
}

# A run with no OOM kill says so in its record (victims 0, recorded true)
# and prints no OOM line.
t_oom_none_said() {
	"$PEAKBPF" --json -- "$WORKLOAD" -s 8MiB spike >"$TMP/nooom.json" 2>"$TMP/nooom.err"
	if grep -q '"oom_kills":{"recorded":true,"victims":0' "$TMP/nooom.json" &&
		! grep -q 'OOM killer' "$TMP/nooom.err"; then
		ok "t_oom_none_said: recorded, no victim, no line"
	else
		fail "t_oom_none_said: $(grep -o '"oom_kills":{[^}]*' "$TMP/nooom.json") $(grep 'OOM' "$TMP/nooom.err")"
	fi
}
