# shellcheck shell=sh
# cgroup v2 for real: the kernel-matrix VMs' /init mounts cgroup2 at
# /sys/fs/cgroup with +memory in its cgroup.subtree_control, and nothing
# there holds the v1 memory controller. Sourced by tests/integration/run.sh
# through EXTRA_TESTS (tests/vm/run.sh); uses its lib.sh helpers.
#
# What the kernels give (src/lib/sources/source_cgroup.c): memory.peak since 5.19; a
# write to an open memory.peak resets the peak seen through that fd since
# 6.12 ("mm, memcg: cg2 memory{.swap,}.peak write handlers"); before, a
# window's figure is the peak since the cgroup was created, and says so.

TESTS="$TESTS t_cgroup_v2_command t_cgroup_v2_clone_into t_cgroup_v2_windows"

CG2_ROOT=${PEAKBPF_CGROUP_ROOT:-/sys/fs/cgroup}

cg2_kernel_at_least() {
	v=$(uname -r | sed 's/^\([0-9]*\)\.\([0-9]*\).*/\1 \2/')
	# shellcheck disable=SC2086 # "MAJOR MINOR": two words
	set -- $v "$1" "$2"
	[ "$1" -gt "$3" ] || { [ "$1" -eq "$3" ] && [ "$2" -ge "$4" ]; }
}

# cgroup2_memory NAME: cgroup2 with the memory controller is mounted here.
cgroup2_memory() {
	if grep -q " $CG2_ROOT cgroup2 " /proc/mounts &&
		grep -qw memory "$CG2_ROOT/cgroup.subtree_control" 2>/dev/null; then
		return 0
	fi
	skip "$1: no cgroup2 with the memory controller delegated at $CG2_ROOT"
	return 1
}

# cg2_left: how many peakbpf-PID cgroups are there.
cg2_left() {
	n=0
	for d in "$CG2_ROOT"/peakbpf-*; do
		[ -d "$d" ] && n=$((n + 1))
	done
	echo "$n"
}

# The command runs in a cgroup of its own whose memory.peak is the figure,
# and that cgroup is gone afterwards. Before 5.19, --source cgroup cannot
# work: peakbpf says why, fails, and leaves no cgroup behind.
t_cgroup_v2_command() {
	cgroup2_memory "cgroup v2" || return
	"$PEAKBPF" -q -s cgroup -o "$TMP/cg2.json" -- "$WORKLOAD" -s 32MiB spike 2>"$TMP/cg2.err"
	rc=$?
	if ! cg2_kernel_at_least 5 19; then
		left=$(cg2_left)
		if [ "$rc" = 125 ] && grep -q 'no memory.peak in .*(kernel before 5.19)' "$TMP/cg2.err" &&
			[ "$left" = 0 ] && [ ! -s "$TMP/cg2.json" ]; then
			ok "cgroup v2 before 5.19: --source cgroup fails (exit 125: $(cat "$TMP/cg2.err")), no cgroup left"
		else
			fail "cgroup v2 before 5.19: exit $rc (want 125), $left peakbpf-* cgroups left: $(cat "$TMP/cg2.err")"
		fi
		return
	fi
	src=$(json_raw "$TMP/cg2.json" source)
	excl=$(json_raw "$TMP/cg2.json" exclusive)
	path=$(json_raw "$TMP/cg2.json" cgroup | tr -d '"')
	peak=$(json_num "$TMP/cg2.json" peak_bytes)
	err=$((${peak:-0} - 32 * MIB))
	# The cgroup is charged all 32 MiB the workload writes, plus the page
	# cache and kernel memory of its processes: at most 4 MiB here.
	if [ "$rc" = 0 ] && [ "$src" = '"cgroup-v2"' ] && [ "$excl" = true ] && [ -n "$path" ] &&
		[ ! -e "$path" ] && [ "$err" -ge 0 ] && [ "$err" -le $((4 * MIB)) ]; then
		ok "cgroup v2: own cgroup $path, peak $(mib "$peak") for 32 MiB, exclusive, removed afterwards"
	else
		fail "cgroup v2: exit $rc, source $src, exclusive $excl, path $path (exists: $([ -e "$path" ] && echo yes || echo no)), peak $peak: $(cat "$TMP/cg2.err")"
	fi
	echo "cgroup-v2 ${peak:-0} $((32 * MIB)) $(abs "$err") 1" >>"$RESULTS"
}

# The command is made in its own cgroup (clone3 with CLONE_INTO_CGROUP,
# 5.7+): nobody moves it, so no RCU grace period is waited for
# (docs/performance.md); the record says how it came in, and the command
# sees the cgroup from its first instruction. Through a helper too.
t_cgroup_v2_clone_into() {
	cgroup2_memory "cgroup v2 clone3" || return
	if ! cg2_kernel_at_least 5 19; then
		skip "cgroup v2 clone3: no memory.peak before 5.19, so the command gets no cgroup of its own"
		return
	fi
	for via in here helper; do
		if [ "$via" = helper ]; then
			"$PEAKBPF" serve --socket "$TMP/cl.sock" 2>"$TMP/cl.log" &
			hp=$!
			i=0
			while [ ! -S "$TMP/cl.sock" ] && [ "$i" -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
		fi
		PEAKBPF_HELPER=$TMP/cl.sock "$PEAKBPF" -q -o "$TMP/cl.json" -- sh -c 'cat /proc/self/cgroup' \
			>"$TMP/cl.out" 2>"$TMP/cl.err"
		[ "$via" = helper ] && { kill "$hp" 2>/dev/null; wait "$hp" 2>/dev/null; }
		path=$(grep -o '"cgroup":"[^"]*"' "$TMP/cl.json" | head -n 1 | cut -d'"' -f4)
		entry=$(grep -o '"cgroup_entry":"[^"]*"' "$TMP/cl.json" | head -n 1 | cut -d'"' -f4)
		load=$(grep -o '"bpf_load":"[^"]*"' "$TMP/cl.json" | head -n 1 | cut -d'"' -f4)
		want=loaded
		[ "$via" = helper ] && want=helper
		if [ "$entry" = clone3 ] && [ "$load" = "$want" ] && [ -n "$path" ] &&
			grep -q "^0::.*/$(basename "$path")\$" "$TMP/cl.out"; then
			ok "cgroup v2 ($via): the command made in $(basename "$path") by clone3, seen there at once"
		else
			fail "cgroup v2 ($via): cgroup_entry $entry (want clone3), bpf_load $load, path $path, the command saw $(cat "$TMP/cl.out"): $(cat "$TMP/cl.err")"
		fi
	done
}

# Windows (-i) over a 32 MiB spike, then a quiet second: from 6.12 each
# window's peak starts afresh, so a window after the spike is small; before,
# every window reports the peak since the cgroup was created, and says so.
t_cgroup_v2_windows() {
	cgroup2_memory "cgroup v2 windows" || return
	if ! cg2_kernel_at_least 5 19; then
		skip "cgroup v2 windows: no memory.peak before 5.19 (this is $(uname -r))"
		return
	fi
	"$PEAKBPF" -q -s cgroup -i 250ms -o "$TMP/cg2w.jsonl" -- \
		sh -c "$WORKLOAD -s 32MiB -t 5ms spike 2>/dev/null; sleep $(q 1 1.5)" 2>"$TMP/cg2w.err"
	rc=$?
	grep '"record":"window"' "$TMP/cg2w.jsonl" >"$TMP/cg2w.windows"
	n=$(wc -l <"$TMP/cg2w.windows")
	max=0
	while read -r line; do
		echo "$line" >"$TMP/cg2w.one"
		p=$(json_num "$TMP/cg2w.one" peak_bytes)
		[ "${p:-0}" -gt "$max" ] && max=$p
	done <"$TMP/cg2w.windows"
	tail -n 1 "$TMP/cg2w.windows" >"$TMP/cg2w.last"
	last=$(json_num "$TMP/cg2w.last" peak_bytes)
	since_created=$(grep -c 'peak since the cgroup was created' "$TMP/cg2w.last")
	if [ "$rc" != 0 ] || [ "$n" -lt 3 ] || [ "$max" -lt $((32 * MIB)) ]; then
		fail "cgroup v2 windows: exit $rc, $n windows (want >= 3), largest peak $max (want >= 32 MiB): $(cat "$TMP/cg2w.err")"
	elif cg2_kernel_at_least 6 12; then
		if [ "${last:-$max}" -lt $((4 * MIB)) ] && [ "$since_created" = 0 ]; then
			ok "cgroup v2 windows (6.12+): the spike's window $(mib "$max"), the last window reset to $(mib "$last") ($n windows)"
		else
			fail "cgroup v2 windows (6.12+): last window $last after a $max spike (want < 4 MiB, reset per fd), since-created label $since_created"
		fi
	elif [ "${last:-0}" -ge $((32 * MIB)) ] && [ "$since_created" = 1 ]; then
		ok "cgroup v2 windows (before 6.12): no per-window reset; the last window reports the all-time $(mib "$last") and says so"
	else
		fail "cgroup v2 windows (before 6.12): last window $last (want the all-time >= 32 MiB), since-created label $since_created"
	fi
}
