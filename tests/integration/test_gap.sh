# shellcheck shell=sh
# Why summed RSS and the tree's unique memory differ (issue 33): the
# explanation names the real cause for shared memory, and the tree's own
# cgroup is flagged when it disagrees with the tree's figures.

TESTS="$TESTS t_gap_memfd_share t_gap_cgroup_disagrees"

# gap_val FILE KEY: KEY of the record's unique.summed_excess (raw).
gap_val() {
	head -n 1 "$1" | grep -o '"summed_excess":{[^}]*}' |
		grep -o "\"$2\":\(\"[^\"]*\"\|null\|-\{0,1\}[0-9.]*\)" | cut -d: -f2-
}

# A 256 MiB memfd written by the parent and mapped by it and its child:
# the tree's own shmem, charged to its cgroup, mapped twice. The line said
# "mostly pages charged to another cgroup, file pages already cached".
t_gap_memfd_share() {
	n="gap: memfd 256 MiB shared by parent and child"
	size=$(q 256MiB 64MiB)
	expected=$("$WORKLOAD" -x -s "$size" -n 1 memfd-share)
	if ! "$PEAKBPF" -o "$TMP/gap1.json" -- "$WORKLOAD" -s "$size" -n 1 -t "$(q 500ms 1500ms)" \
		memfd-share 2>"$TMP/gap1.err"; then
		fail "$n: peakbpf failed: $(cat "$TMP/gap1.err")"
		return
	fi
	check_growth "$n" "$TMP/gap1.json" "$expected"
	if ! memcg_tp || [ "$(unique_val "$TMP/gap1.json" source)" != '"bpf-memcg"' ]; then
		skip "$n: unique memory not measured here ($(unique_val "$TMP/gap1.json" inexact_reason))"
		return
	fi
	half=$((expected / 2))
	several=$(gap_val "$TMP/gap1.json" mapped_by_several_bytes)
	elsewhere=$(gap_val "$TMP/gap1.json" charged_elsewhere_bytes)
	cache=$(gap_val "$TMP/gap1.json" page_cache_bytes)
	dominant=$(gap_val "$TMP/gap1.json" dominant)
	err=$(abs $((${several:-0} - half)))
	if [ -n "$several" ] && [ "$err" -le $((3 * MIB)) ] && [ "${elsewhere:-1}" = 0 ] &&
		[ "${cache:-$half}" -le $((4 * MIB)) ] &&
		[ "$dominant" = "\"anon and shmem pages mapped by several of the tree's processes\"" ] &&
		grep -q "mostly anon and shmem pages mapped by several of the tree's processes" "$TMP/gap1.err"; then
		ok "$n: mapped by several $(mib "$several") (true $(mib "$half")), elsewhere 0, page cache $(mib "$cache")"
	else
		fail "$n: several ${several:-?} (true $half) elsewhere ${elsewhere:-?} cache ${cache:-?} dominant $dominant: $(grep 'summed RSS counts' "$TMP/gap1.err")"
	fi
}

# A command writing 128 MiB to a file: its cgroup holds the page cache,
# which the tree's figures do not count: the also: line says it disagrees;
# a spike (anon only) agrees with them.
t_gap_cgroup_disagrees() {
	n="gap: cgroup line against the tree's figures"
	mb=$(q 128 32)
	"$PEAKBPF" -o "$TMP/gap2.json" -- dd if=/dev/zero of="$TMP/gap2.dat" bs=1M count="$mb" \
		2>"$TMP/gap2.err" >/dev/null
	rc=$?
	rm -f "$TMP/gap2.dat"
	if [ "$rc" != 0 ]; then
		fail "$n: peakbpf -- dd exited $rc: $(cat "$TMP/gap2.err")"
		return
	fi
	if ! grep -q '"exclusive":true' "$TMP/gap2.json"; then
		skip "$n: the tree has no cgroup of its own here"
		return
	fi
	d=$(grep -o '"disagrees_with":"[^"]*","disagreement_bytes":-\{0,1\}[0-9]*' "$TMP/gap2.json")
	by=${d##*:}
	if [ -n "$d" ] && [ "$by" -ge $(((mb - 8) * MIB)) ] &&
		grep -q "also: .*the tree's own cgroup.*\[disagrees: .* more than the tree's .*page cache" "$TMP/gap2.err"; then
		ok "$n: dd of $mb MiB: flagged ($d)"
	else
		fail "$n: dd of $mb MiB: not flagged or wrong (${d:-no disagreement}): $(grep 'also:' "$TMP/gap2.err")"
	fi
	"$PEAKBPF" -o "$TMP/gap3.json" -- "$WORKLOAD" -s "$(q 64MiB 16MiB)" -t 200ms spike 2>"$TMP/gap3.err"
	if grep -q 'disagree' "$TMP/gap3.json" "$TMP/gap3.err"; then
		fail "$n: a spike: flagged: $(grep 'also:' "$TMP/gap3.err")"
	else
		ok "$n: a spike: the cgroup line agrees with the tree's figures"
	fi
}
