# shellcheck shell=sh
# Sources and provenance: CAP_BPF + CAP_PERFMON only, no capabilities at all,
# each fallback's own figure, the cgroup source for real, other_sources.

TESTS="$TESTS t_caps_bpf_perfmon_only t_cgroup_v1_self_join t_unprivileged_user_limits t_no_caps_fallback t_each_fallback
 t_proc_misses_spike t_cgroup_v1_real t_cgroup_removed_when_killed t_other_sources_diverge"

BPF_CAPS="--inh-caps=-all,+bpf,+perfmon --ambient-caps=-all,+bpf,+perfmon --bounding-set=-all,+bpf,+perfmon"
NO_CAPS="--inh-caps=-all --ambient-caps=-all --bounding-set=-all"

# other_num FILE SOURCE KEY: KEY of SOURCE's figure in other_sources.
other_num() {
	head -n 1 "$1" | grep -o "{\"source\":\"$2\"[^}]*}" | head -n 1 |
		grep -o "\"$3\":-\{0,1\}[0-9][0-9.e+-]*" | cut -d: -f2
}

# As in a container granted only CAP_BPF + CAP_PERFMON: bpf, and the shapes hold.
t_caps_bpf_perfmon_only() {
	need setpriv "CAP_BPF+CAP_PERFMON only" || return
	for shape in concurrent exec daemon threads; do
		expected=$("$WORKLOAD" -x -s 64MiB -n 3 "$shape")
		# Before 5.11 maps count against RLIMIT_MEMLOCK, which these
		# capabilities alone cannot raise: a container sets it (ulimit -l).
		sh -c "ulimit -l unlimited 2>/dev/null; exec setpriv $BPF_CAPS \"\$@\"" sh \
			"$PEAKBPF" -q -o "$TMP/caps-$shape.json" -- \
			"$WORKLOAD" -s 64MiB -n 3 "$shape" 2>"$TMP/caps.err"
		src=$(json_raw "$TMP/caps-$shape.json" source)
		priv=$(json_raw "$TMP/caps-$shape.json" privileges)
		if [ "$src" != '"bpf"' ] || [ "$priv" != '"CAP_BPF+CAP_PERFMON"' ]; then
			fail "CAP_BPF+CAP_PERFMON only, $shape: source $src, privileges $priv: $(cat "$TMP/caps.err")"
			continue
		fi
		check_growth "CAP_BPF+CAP_PERFMON only: $shape" "$TMP/caps-$shape.json" "$expected"
	done
}

# A user (not root) running peakbpf with CAP_BPF+CAP_PERFMON, as a setcap
# binary would: it measures its own processes, not another user's, and
# cannot size the kernel maps without bound. The workload must outlive
# peakbpf's BPF load (seconds under TCG): -p of a zombie is refused.
t_unprivileged_user_limits() {
	need setpriv "unprivileged user" || return
	as_nobody="setpriv --reuid=65534 --regid=65534 --clear-groups $BPF_CAPS"
	sleep 30 &
	roots=$!
	# shellcheck disable=SC2086 # as_nobody is words
	sh -c "ulimit -l unlimited 2>/dev/null; exec $as_nobody \"\$@\"" sh \
		"$PEAKBPF" -q -d 100ms -p "$roots" 2>"$TMP/nobody1.err"
	rc1=$?
	# shellcheck disable=SC2086
	sh -c "ulimit -l unlimited 2>/dev/null; exec $as_nobody \"\$@\"" sh \
		sh -c "\"\$0\" -s 8MiB -t $(q 1s 8s) spike & w=\$! i=0
			while [ \$i -lt 200 ] && case \$(readlink /proc/\$w/exe) in */workload) false ;; esac; do
				sleep 0.02; i=\$((i + 1)); done
			grep -s '^Uid' /proc/\$w/status >&2; ls -ln /proc/\$w/stat >&2
			exec \"\$1\" -q --json -p \$w -d 200ms" \
		"$WORKLOAD" "$PEAKBPF" >"$TMP/nobody2.json" 2>"$TMP/nobody2.err"
	rc2=$?
	# shellcheck disable=SC2086
	sh -c "ulimit -l unlimited 2>/dev/null; exec $as_nobody \"\$@\"" sh \
		"$PEAKBPF" -q --max-tracked 100000 -- true 2>"$TMP/nobody3.err"
	rc3=$?
	kill "$roots" 2>/dev/null
	wait "$roots" 2>/dev/null
	src=$(json_raw "$TMP/nobody2.json" source)
	if [ "$rc1" = 123 ] && grep -q "not your process" "$TMP/nobody1.err" && [ "$rc2" = 0 ] &&
		[ "$src" = '"bpf"' ] && [ "$rc3" = 125 ] && grep -q "at most 65536" "$TMP/nobody3.err"; then
		ok "unprivileged user: root's process refused, own process measured (bpf), --max-tracked capped"
	else
		fail "unprivileged user: exits $rc1/$rc2/$rc3, source $src: $(cat "$TMP/nobody1.err" "$TMP/nobody2.err" "$TMP/nobody3.err")"
	fi
}

# No capabilities: auto falls back, says why, and labels the figure.
t_no_caps_fallback() {
	need setpriv "no capabilities" || return
	# shellcheck disable=SC2086
	setpriv $NO_CAPS "$PEAKBPF" -o "$TMP/nocaps.json" -- "$WORKLOAD" -s 64MiB -t 300ms steady \
		2>"$TMP/nocaps.err"
	rc=$?
	src=$(json_raw "$TMP/nocaps.json" source)
	exact=$(json_raw "$TMP/nocaps.json" exact)
	if [ "$rc" = 0 ] && [ "$src" != '"bpf"' ] && [ -n "$src" ] && [ "$exact" = false ] &&
		grep -q "notice: the exact bpf source cannot be used here" "$TMP/nocaps.err" &&
		[ "$(grep -c "CAP_BPF and CAP_PERFMON missing" "$TMP/nocaps.err")" = 1 ] &&
		grep -q '"not_used":\["bpf: CAP_BPF' "$TMP/nocaps.json"; then
		ok "no capabilities: fell back to $src (exact false), the reason (CAP_BPF) said once"
	else
		fail "no capabilities: exit $rc, source $src, exact $exact: $(cat "$TMP/nocaps.err")"
	fi
}

# Each fallback named with --source gives its own labelled figure for 64 MiB.
t_each_fallback() {
	for src in cgroup proc rusage; do
		"$PEAKBPF" -q -s "$src" --sample-interval 10ms -o "$TMP/fb-$src.json" -- \
			"$WORKLOAD" -s 64MiB -t 500ms steady 2>"$TMP/fb.err"
		if [ "$src" = cgroup ] && grep -q "no memory.peak" "$TMP/fb.err"; then
			skip "--source cgroup: $(cat "$TMP/fb.err")"
			continue
		fi
		got=$(json_raw "$TMP/fb-$src.json" source)
		peak=$(json_num "$TMP/fb-$src.json" peak_bytes)
		exact=$(json_raw "$TMP/fb-$src.json" exact)
		case "$got" in "\"$src"*) ;; *)
			fail "--source $src: record says source $got: $(cat "$TMP/fb.err")"
			continue ;;
		esac
		# cgroup adds page cache and kernel memory; the others add the binary.
		if [ "$exact" = false ] && [ "${peak:-0}" -ge $((64 * MIB)) ] &&
			[ "$peak" -le $((64 * MIB + 16 * MIB)) ]; then
			ok "--source $src: $got $(mib "$peak") for a 64 MiB hold, exact false"
		else
			fail "--source $src: peak $peak exact $exact"
		fi
	done
}

# A 256 MiB spike held 5 ms between two quiet stretches: bpf catches it;
# a /proc sampler whose samples fall outside it (every 10 s: one at the
# start, one at the end) misses it, deterministically. How often a 100 ms
# sampler would miss it is what --compare-sampler computes.
t_proc_misses_spike() {
	cmd="sleep 0.3; $WORKLOAD -s 256MiB -t 5ms spike 2>/dev/null; sleep 0.3"
	"$PEAKBPF" -q -o "$TMP/blip-bpf.json" -- sh -c "$cmd" 2>/dev/null
	"$PEAKBPF" -q -s proc --sample-interval 10s -o "$TMP/blip-proc.json" -- sh -c "$cmd" 2>/dev/null
	bpf=$(json_num "$TMP/blip-bpf.json" peak_bytes)
	proc=$(json_num "$TMP/blip-proc.json" peak_bytes)
	if [ "${bpf:-0}" -ge $((256 * MIB)) ] && [ "${proc:-0}" -lt $((128 * MIB)) ]; then
		ok "5 ms spike: bpf $(mib "$bpf"), proc sampler every 10 s $(mib "$proc")"
	else
		fail "5 ms spike: bpf $bpf (want >= 256 MiB), proc $proc (want < 128 MiB)"
	fi
}

cgroup_v1() {
	[ -d /sys/fs/cgroup/memory ] && [ -f /sys/fs/cgroup/memory/memory.max_usage_in_bytes ] && return 0
	skip "$1: no cgroup v1 memory controller here (v2 is tested in the kernel-matrix VMs)"
	return 1
}

# json_str FILE KEY: the first string value of KEY, unquoted.
json_str() { json_raw "$1" "$2" | tr -d '"'; }

# The command lands in a cgroup of its own, which is gone afterwards.
t_cgroup_v1_real() {
	cgroup_v1 "cgroup v1" || return
	"$PEAKBPF" -q -s cgroup -o "$TMP/cg.json" -- "$WORKLOAD" -s 64MiB -t 300ms steady 2>"$TMP/cg.err"
	src=$(json_str "$TMP/cg.json" source)
	excl=$(json_raw "$TMP/cg.json" exclusive)
	path=$(json_str "$TMP/cg.json" cgroup)
	peak=$(json_num "$TMP/cg.json" peak_bytes)
	if [ "$src" = cgroup-v1 ] && [ "$excl" = true ] && [ -n "$path" ] && [ ! -e "$path" ] &&
		[ "${peak:-0}" -ge $((64 * MIB)) ] && [ "$peak" -le $((72 * MIB)) ]; then
		ok "cgroup v1: own cgroup $(basename "$path"), $(mib "$peak") for 64 MiB, removed afterwards"
	else
		fail "cgroup v1: source $src exclusive $excl path $path (exists: $([ -e "$path" ] && echo yes)) peak $peak: $(cat "$TMP/cg.err")"
	fi
}

# The command joins its cgroup itself, before exec, by writing 0 to the
# cgroup's tasks file (no RCU grace period: docs/performance.md); peakbpf
# moves nobody. Its first look at /proc/self/cgroup already shows the
# tree's cgroup, through a helper too.
t_cgroup_v1_self_join() {
	cgroup_v1 "cgroup self-join" || return
	need strace "cgroup self-join" || return
	strace -f -y -qq -e trace=write -o "$TMP/join.st" "$PEAKBPF" -q --no-helper -o "$TMP/join.json" \
		-- sh -c 'grep memory: /proc/self/cgroup' >"$TMP/join.out" 2>"$TMP/join.err"
	own=$(json_str "$TMP/join.json" cgroup)
	if grep -q "tasks>, \"0\", 1) = 1" "$TMP/join.st" && ! grep -q 'cgroup.procs>, "[0-9]' "$TMP/join.st" &&
		grep -q '"cgroup_entry":"self"' "$TMP/join.json" &&
		[ -n "$own" ] && grep -q "memory:.*/$(basename "$own")\$" "$TMP/join.out"; then
		ok "cgroup self-join: the command wrote 0 to tasks, in $(basename "$own") from its first instruction"
	else
		fail "cgroup self-join: own $own, command saw $(cat "$TMP/join.out"); writes: $(grep -E 'tasks|procs' "$TMP/join.st" | head -3) $(cat "$TMP/join.err")"
	fi
	PEAKBPF_HELPER=$TMP/join.sock "$PEAKBPF" serve --socket "$TMP/join.sock" 2>"$TMP/join.log" &
	hp=$!
	i=0
	while [ ! -S "$TMP/join.sock" ] && [ "$i" -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
	PEAKBPF_HELPER=$TMP/join.sock "$PEAKBPF" -q -o "$TMP/joinh.json" \
		-- sh -c 'grep memory: /proc/self/cgroup' >"$TMP/joinh.out" 2>"$TMP/joinh.err"
	kill "$hp" 2>/dev/null
	wait "$hp" 2>/dev/null
	own=$(json_str "$TMP/joinh.json" cgroup)
	via=$(json_str "$TMP/joinh.json" bpf_load)
	if [ "$via" = helper ] && [ -n "$own" ] && grep -q '"cgroup_entry":"self"' "$TMP/joinh.json" &&
		grep -q "memory:.*/$(basename "$own")\$" "$TMP/joinh.out"; then
		ok "cgroup self-join through the helper: the command in $(basename "$own")"
	else
		fail "cgroup self-join through the helper: bpf_load $via, own $own, saw $(cat "$TMP/joinh.out") $(cat "$TMP/joinh.err")"
	fi
}

# Killed command, and a descendant still running: the cgroup is still removed.
t_cgroup_removed_when_killed() {
	cgroup_v1 "cgroup removed when killed" || return
	"$PEAKBPF" -q -s cgroup -o "$TMP/cgk.json" -- sh -c \
		"$WORKLOAD -s 16MiB -t 2s steady 2>/dev/null & sleep 0.5; kill -KILL \$\$" 2>"$TMP/cgk.err"
	rc=$?
	path=$(json_str "$TMP/cgk.json" cgroup)
	if [ "$rc" = 137 ] && [ -n "$path" ] && [ ! -e "$path" ]; then
		ok "cgroup removed after the command was killed with a descendant still running"
	else
		fail "cgroup after kill: exit $rc, path $path exists: $([ -e "$path" ] && echo yes): $(cat "$TMP/cgk.err")"
	fi
	pkill -f "$WORKLOAD -s 16MiB -t 2s steady" 2>/dev/null
}

# Writing a file fills page cache: the cgroup's figure exceeds bpf's RSS.
t_other_sources_diverge() {
	cgroup_v1 "other_sources" || return
	"$PEAKBPF" -q -o "$TMP/div.json" -- sh -c \
		"dd if=/dev/zero of=$TMP/big bs=1M count=128 2>/dev/null; rm -f $TMP/big" 2>/dev/null
	bpf=$(json_num "$TMP/div.json" peak_bytes)
	cg=$(other_num "$TMP/div.json" cgroup-v1 peak_bytes)
	if [ "$(json_str "$TMP/div.json" source)" = bpf ] && [ -n "$cg" ] &&
		[ "$cg" -ge $((bpf + 100 * MIB)) ]; then
		ok "other_sources: bpf $(mib "$bpf"), cgroup-v1 $(mib "$cg") (page cache of a 128 MiB write)"
	else
		fail "other_sources: bpf $bpf, cgroup-v1 $cg: $(cat "$TMP/div.json")"
	fi
}
