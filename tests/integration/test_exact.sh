# shellcheck shell=sh
# Exactness (the incremental per-CPU path) and who held the memory at the peak.

TESTS="$TESTS t_sum_equals_vmrss t_exact_sums_threads t_exact_sums_migrating t_holders_ladder
 t_holders_threads_one_entry t_holders_shared_per_mm t_holders_at_peak_instant"

# tree_pids PID: PID and all its descendants.
tree_pids() {
	echo "$1"
	for c in $(cat /proc/"$1"/task/*/children 2>/dev/null); do
		tree_pids "$c"
	done
}

# vmrss_bytes PID...: the sum of VmRSS (the kernel's exact figure on 6.16+).
vmrss_bytes() {
	total=0
	for p in "$@"; do
		kb=$(sed -n 's/^VmRSS:[[:space:]]*\([0-9]*\) kB/\1/p' /proc/"$p"/status 2>/dev/null)
		total=$((total + ${kb:-0} * 1024))
	done
	echo "$total"
}

# A steady tree: the sum at a window's cut equals the sum of the kernel's
# own exact VmRSS, within one page per address space.
t_sum_equals_vmrss() {
	if ! kernel_at_least 6 16; then
		skip "sum = VmRSS: VmRSS is exact only from 6.16 (this is $(uname -r))"
		return
	fi
	"$WORKLOAD" -s 32MiB -n 3 -t 4s concurrent 2>/dev/null &
	wl=$!
	sleep 1
	pids=$(tree_pids "$wl")
	before=$(vmrss_bytes $pids)
	"$PEAKBPF" -q -o "$TMP/vmrss.jsonl" -i 300ms -d 700ms -p "$wl" 2>"$TMP/vmrss.err"
	after=$(vmrss_bytes $pids)
	kill "$wl" 2>/dev/null
	wait "$wl" 2>/dev/null
	n=$(echo "$pids" | wc -w)
	sed -n 2p "$TMP/vmrss.jsonl" >"$TMP/vmrss2.json"
	cut=$(json_num "$TMP/vmrss2.json" baseline_bytes)
	exact=$(json_raw "$TMP/vmrss2.json" exact)
	d=$(abs $((${cut:-0} - after)))
	if [ "$before" = "$after" ] && [ "$d" -le $((n * 4096)) ] && [ "$exact" = true ]; then
		ok "sum = VmRSS: $n processes, tree sum $cut, VmRSS sum $after, difference $d bytes, exact"
	else
		fail "sum = VmRSS: tree sum $cut, VmRSS $before/$after ($n processes), exact $exact: $(cat "$TMP/vmrss.err")"
	fi
	echo "vmrss $cut $after $d $n" >>"$RESULTS"
}

# exact_path_here NAME: the kernel keeps every counter exact from its
# per-CPU slots (6.2+ with bpf_loop and bpf_map_lookup_percpu_elem).
exact_path_here() {
	path=$("$PEAKBPF" -q --json -- true 2>/dev/null | grep -o '"exact_path":"[^"]*"' | cut -d'"' -f4)
	[ "$path" = per-cpu-sum ] && return 0
	skip "$1: no per-CPU exact path on this kernel ($path)"
	return 1
}

# The incremental exact sum (each event takes its CPU's slot, and .count
# when a slot folds) equals a full per-CPU sum of every counter once the
# tree is quiet: 4 threads of one mm fault 32 MiB each on every CPU at
# once while peakbpf watches, then hold; the run ends while they hold and
# checks (counters.sum_check).
t_exact_sums_threads() {
	exact_path_here "exact sums, threads" || return
	"$WORKLOAD" -s 32MiB -n 4 -t "$(q 2s 6s)" late-threads 2>/dev/null &
	wl=$!
	sleep 0.3
	"$PEAKBPF" -q -o "$TMP/inc.json" -d "$(q 3s 10s)" -p "$wl" 2>"$TMP/inc.err"
	kill "$wl" 2>/dev/null
	wait "$wl" 2>/dev/null
	off=$(json_num "$TMP/inc.json" counters_off)
	mms=$(json_num "$TMP/inc.json" mms)
	takes=$(json_num "$TMP/inc.json" count_takes)
	growth=$(json_num "$TMP/inc.json" growth_bytes)
	if [ "${off:-x}" = 0 ] && [ "${mms:-0}" -ge 1 ] && [ "${takes:-0}" -gt 0 ] &&
		[ "$(abs $((${growth:-0} - 128 * MIB)))" -le $((2 * MIB)) ] &&
		[ "$(json_raw "$TMP/inc.json" exact)" = true ]; then
		ok "exact sums, threads: full per-CPU sum = incremental sum ($mms mm, $takes slot folds taken), growth $(mib "$growth")"
	else
		fail "exact sums, threads: counters_off $off, mms $mms, count_takes $takes, growth $growth: $(cat "$TMP/inc.err") $(head -c 400 "$TMP/inc.json")"
	fi
}

# The same while the threads are moved between CPUs all along (taskset):
# an event must run on the CPU whose slot changed, or a slot's change
# would wait for that CPU's next event and the check would see it.
t_exact_sums_migrating() {
	exact_path_here "exact sums, migrating" || return
	need taskset "exact sums, migrating" || return
	[ "$(nproc)" -ge 2 ] || { skip "exact sums, migrating: one CPU"; return; }
	"$WORKLOAD" -s 32MiB -n 4 -t "$(q 2s 6s)" late-threads 2>/dev/null &
	wl=$!
	(
		end=$(($(date +%s) + $(q 5 14)))
		while [ "$(date +%s)" -lt "$end" ] && kill -0 "$wl" 2>/dev/null; do
			for t in /proc/"$wl"/task/*; do
				taskset -p -c $(($(od -An -N1 -tu1 /dev/urandom) % 2)) "${t##*/}" >/dev/null 2>&1
			done
			sleep 0.01
		done
	) &
	mover=$!
	sleep 0.3
	"$PEAKBPF" -q -o "$TMP/mig.json" -d "$(q 3500ms 10s)" -p "$wl" 2>"$TMP/mig.err"
	kill "$mover" "$wl" 2>/dev/null
	wait "$mover" "$wl" 2>/dev/null
	off=$(json_num "$TMP/mig.json" counters_off)
	growth=$(json_num "$TMP/mig.json" growth_bytes)
	if [ "${off:-x}" = 0 ] && [ "$(abs $((${growth:-0} - 128 * MIB)))" -le $((2 * MIB)) ]; then
		ok "exact sums, migrating: threads moved between CPUs while faulting; full per-CPU sum = incremental sum, growth $(mib "$growth")"
	else
		fail "exact sums, migrating: counters_off $off, growth $growth: $(cat "$TMP/mig.err")"
	fi
}

# holder_bytes FILE: the bytes of each listed process, largest first.
holder_bytes() {
	head -n 1 "$1" | grep -o '"processes":\[[^]]*\]' | grep -o '"bytes":[0-9]*' | cut -d: -f2
}

# Children of 64, 128 and 256 MiB at once: each is named with its size, and
# its own binary and stack (under 2 MiB).
t_holders_ladder() {
	"$PEAKBPF" -q -o "$TMP/ladder.json" -- "$WORKLOAD" -s 64MiB -n 3 ladder 2>/dev/null
	step=$((2 * MIB))
	set -- $(holder_bytes "$TMP/ladder.json")
	n=$(head -n 1 "$TMP/ladder.json" | grep -o '"processes":\[[^]]*\]' | grep -o '"pid"' | wc -l)
	if [ "$n" = 4 ] && [ "$(abs $(($1 - 256 * MIB)))" -le "$step" ] &&
		[ "$(abs $(($2 - 128 * MIB)))" -le "$step" ] && [ "$(abs $(($3 - 64 * MIB)))" -le "$step" ]; then
		ok "holders: ladder children listed as $(mib "$1"), $(mib "$2"), $(mib "$3") (+ the parent)"
	else
		fail "holders: ladder: $n listed, bytes $*: $(head -c 600 "$TMP/ladder.json")"
	fi
}

t_holders_threads_one_entry() {
	"$PEAKBPF" -q -o "$TMP/thr.json" -- "$WORKLOAD" -s 32MiB -n 8 threads 2>/dev/null
	n=$(head -n 1 "$TMP/thr.json" | grep -o '"processes":\[[^]]*\]' | grep -o '"pid"' | wc -l)
	set -- $(holder_bytes "$TMP/thr.json")
	if [ "$n" = 1 ] && [ "${1:-0}" -ge $((248 * MIB)) ]; then
		ok "holders: 8 threads are one entry of $(mib "$1")"
	else
		fail "holders: threads: $n entries, bytes $*"
	fi
}

# Shared pages count once per mm that maps them, and the record says so.
t_holders_shared_per_mm() {
	"$PEAKBPF" -q -o "$TMP/shr.json" -- "$WORKLOAD" -s 32MiB -n 3 shared 2>/dev/null
	# Before 6.2 each thread may hold up to 64 faults unseen (per-thread
	# caches): a quarter MiB below.
	least=$((32 * MIB - 256 * 1024))
	set -- $(holder_bytes "$TMP/shr.json")
	if [ "$#" = 4 ] && [ "$1" -ge "$least" ] && [ "$2" -ge "$least" ] &&
		[ "$3" -ge "$least" ] && grep -q 'count once per address space' "$TMP/shr.json"; then
		ok "holders: each of 3 children maps the shared 32 MiB and is listed with it; the record says so"
	else
		fail "holders: shared: bytes $*"
	fi
}

# Three children peak at different moments (workload staggered): 4S, S and
# nothing at the tree's peak, S, 2S and S later. The holders are those of
# the peak instant, each within its own binary and stack (2 MiB), and
# together they make the peak.
t_holders_at_peak_instant() {
	"$PEAKBPF" -q -o "$TMP/stag.json" -- "$WORKLOAD" -s 32MiB -t "$(q 300ms 2s)" staggered 2>/dev/null
	set -- $(holder_bytes "$TMP/stag.json")
	peak=$(json_num "$TMP/stag.json" peak_bytes)
	held=$(json_num "$TMP/stag.json" holders_bytes)
	if [ "$#" -ge 3 ] && [ "$(abs $(($1 - 128 * MIB)))" -le $((2 * MIB)) ] &&
		[ "$(abs $(($2 - 32 * MIB)))" -le $((2 * MIB)) ] && [ "$3" -le $((2 * MIB)) ] &&
		[ "$(abs $((${held:-0} - ${peak:-1})))" -le $((4 * 4096)) ]; then
		ok "holders at the peak instant: $(mib "$1"), $(mib "$2"), $(mib "$3") (later 32, 64, 32 MiB); they hold $(mib "$held") of the peak $(mib "$peak")"
	else
		fail "holders at the peak instant: bytes $*, held $held, peak $peak: $(head -c 600 "$TMP/stag.json")"
	fi
}
