# shellcheck shell=sh
# hugetlb pages beside RSS (issue 33): a process holding 256 MiB of
# MAP_HUGETLB pages was "peak 1.3 MiB (bpf, exact)" and nothing said that
# RSS leaves them out. vm.nr_hugepages is set for the test and restored.

TESTS="$TESTS t_hugetlb"
HUGETLB_OLD=""

# hugetlb_restore: vm.nr_hugepages as it was (run.sh's EXIT trap too).
hugetlb_restore() {
	[ -n "$HUGETLB_OLD" ] && echo "$HUGETLB_OLD" >/proc/sys/vm/nr_hugepages
	HUGETLB_OLD=""
}

# hugetlb_val FILE KEY: KEY of the record's "hugetlb" object (raw).
hugetlb_val() {
	head -n 1 "$1" | grep -o '"hugetlb":{[^}]*}' |
		grep -o "\"$2\":\(\"[^\"]*\"\|true\|false\|null\|-\{0,1\}[0-9.]*\)" | cut -d: -f2-
}

t_hugetlb() {
	n="hugetlb: MAP_HUGETLB shape"
	f=/proc/sys/vm/nr_hugepages
	[ -w "$f" ] || { skip "$n: $f not writable"; return; }
	mib=$(q 256 64)
	want=$((mib / 2))       # 2 MiB pages
	grep -q '^Hugepagesize: *2048 kB' /proc/meminfo || { skip "$n: default huge page size is not 2 MiB"; return; }
	old=$(cat "$f")
	HUGETLB_OLD=$old
	echo $((old + want)) >"$f" 2>/dev/null
	got=$(awk '/^HugePages_Free:/ { print $2 }' /proc/meminfo)
	if [ "${got:-0}" -lt "$want" ]; then
		hugetlb_restore
		skip "$n: only ${got:-0} of $want huge pages could be reserved"
		return
	fi
	"$PEAKBPF" -o "$TMP/huge.json" -- "$WORKLOAD" -s "${mib}MiB" -t "$(q 1s 2s)" hugetlb \
		2>"$TMP/huge.err"
	rc=$?
	hugetlb_restore
	if [ "$rc" != 0 ]; then
		fail "$n: peakbpf exited $rc: $(cat "$TMP/huge.err")"
		return
	fi
	NO_REL=1 check_growth "$n: RSS (hugetlb is not in it)" "$TMP/huge.json" 0
	hb=$(hugetlb_val "$TMP/huge.json" peak_bytes)
	mb=$(hugetlb_val "$TMP/huge.json" member_peak_bytes)
	if [ "$hb" = $((mib * MIB)) ] && [ "$mb" = $((mib * MIB)) ] &&
		[ "$(hugetlb_val "$TMP/huge.json" exact)" = false ] &&
		grep -q "hugetlb: $mib.0 MiB at most in the tree (proc, not exact: sampled.*(.* workload) — not in RSS" \
			"$TMP/huge.err"; then
		ok "$n: hugetlb $(mib "$hb") in the tree, $(mib "$mb") the most one process held (sampled, not exact); the summary says RSS leaves it out"
	else
		fail "$n: hugetlb ${hb:-?} member ${mb:-?} for $((mib * MIB)): $(grep -o '"hugetlb":{[^}]*}' "$TMP/huge.json") $(grep hugetlb "$TMP/huge.err")"
	fi
	# Restored: no huge pages (as before, if there were none) is 0, exactly.
	if [ "$old" = 0 ] && [ "$(cat /proc/sys/vm/nr_overcommit_hugepages)" = 0 ] &&
		! grep -qv '^0$' /sys/kernel/mm/hugepages/*/nr_hugepages 2>/dev/null; then
		"$PEAKBPF" -o "$TMP/huge0.json" -- true 2>"$TMP/huge0.err"
		if [ "$(hugetlb_val "$TMP/huge0.json" source)" = '"sysfs"' ] &&
			[ "$(hugetlb_val "$TMP/huge0.json" peak_bytes)" = 0 ] &&
			[ "$(hugetlb_val "$TMP/huge0.json" exact)" = true ] && ! grep -q hugetlb "$TMP/huge0.err"; then
			ok "$n: no huge pages on the machine: hugetlb 0, exact (sysfs)"
		else
			fail "$n: no huge pages: $(grep -o '"hugetlb":{[^}]*}' "$TMP/huge0.json")"
		fi
	fi
}
