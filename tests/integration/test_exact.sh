# shellcheck shell=sh
# Exactness (the per-CPU path and its gate) and who held the memory.

TESTS="$TESTS t_sum_equals_vmrss t_gate_near_peak_only t_holders_ladder
 t_holders_threads_one_entry t_holders_shared_per_mm"

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

kernel_at_least() {
	v=$(uname -r | sed 's/^\([0-9]*\)\.\([0-9]*\).*/\1 \2/')
	set -- $v "$1" "$2"
	[ "$1" -gt "$3" ] || { [ "$1" -eq "$3" ] && [ "$2" -ge "$4" ]; }
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

# The exact per-CPU path runs while the tree is at its peak and is skipped
# far below it: phases of 64, 256 and 128 MiB (the last far below 256).
t_gate_near_peak_only() {
	path=$("$PEAKBPF" -q --json -- true 2>/dev/null | grep -o '"exact_path":"[^"]*"' | cut -d'"' -f4)
	if [ "$path" != per-cpu-sum ]; then
		skip "gate: no per-CPU exact path on this kernel ($path)"
		return
	fi
	if grep -q '\[always\]' /sys/kernel/mm/transparent_hugepage/enabled 2>/dev/null; then
		skip "gate: transparent huge pages are [always] here; the expected counts assume 4 KiB faults"
		return
	fi
	"$PEAKBPF" -q -o "$TMP/gate.json" -- "$WORKLOAD" -s 64MiB -t 200ms phases 2>/dev/null
	exact=$(json_num "$TMP/gate.json" exact_reads)
	cheap=$(json_num "$TMP/gate.json" cheap_reads)
	# Faults that raise the peak: phase 1's 64 MiB, phase 2's 192 MiB above
	# 64. Far below it: phase 2's first 64 MiB and all of phase 3's 128.
	near=$((4 * 64 * MIB / 4096))
	far=$((3 * 64 * MIB / 4096))
	if [ "$exact" -ge $((near * 9 / 10)) ] && [ "$exact" -le $((near * 11 / 10)) ] &&
		[ "$cheap" -ge $((far * 9 / 10)) ] && [ "$(json_raw "$TMP/gate.json" exact)" = true ]; then
		ok "gate: $exact exact reads near the peak (want ~$near), $cheap cheap far below (want >= 90 % of $far)"
	else
		fail "gate: exact_reads $exact (want $near +- 10 %), cheap_reads $cheap (want >= 90 % of $far)"
	fi
}

# holder_bytes FILE: the bytes of each listed process, largest first.
holder_bytes() {
	head -n 1 "$1" | grep -o '"processes":\[[^]]*\]' | grep -o '"bytes":[0-9]*' | cut -d: -f2
}

# holders_supported NAME: the kernel can name who held the peak (the
# snapshot walks the tree's mms with bpf_for_each_map_elem, 5.13+).
holders_supported() {
	kernel_at_least 5 13 && return 0
	skip "$1: who held the peak needs bpf_for_each_map_elem (5.13+; this is $(uname -r))"
	return 1
}

# Children of 64, 128 and 256 MiB at once: each is named with its size
# (the snapshot is within one step, 1/64 of the peak, of the peak).
t_holders_ladder() {
	holders_supported "holders: ladder" || return
	"$PEAKBPF" -q -o "$TMP/ladder.json" -- "$WORKLOAD" -s 64MiB -n 3 ladder 2>/dev/null
	step=$(($(json_num "$TMP/ladder.json" peak_bytes) / 64 + MIB))
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
	holders_supported "holders: threads" || return
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
	holders_supported "holders: shared" || return
	"$PEAKBPF" -q -o "$TMP/shr.json" -- "$WORKLOAD" -s 32MiB -n 3 shared 2>/dev/null
	# Within one step of the peak (1/64 of it, at least 1 MiB) of 32 MiB each.
	least=$((32 * MIB - $(json_num "$TMP/shr.json" peak_bytes) / 64 - MIB))
	set -- $(holder_bytes "$TMP/shr.json")
	if [ "$#" = 4 ] && [ "$1" -ge "$least" ] && [ "$2" -ge "$least" ] &&
		[ "$3" -ge "$least" ] && grep -q 'count once per address space' "$TMP/shr.json"; then
		ok "holders: each of 3 children maps the shared 32 MiB and is listed with it; the record says so"
	else
		fail "holders: shared: bytes $*"
	fi
}
