# shellcheck shell=sh
# The tree's unique memory (issue 17): each page once, beside summed RSS.
# Where the kernel has the memcg statistic tracepoints (6.13+) and the tree
# has a cgroup of its own, the "unique" figure is bpf-memcg and exact;
# elsewhere it is not measured, says why, and nothing claims exactness.
# The fork shapes print their cgroup's mapped pages while every child
# holds (workload: cgroup anon_bytes=... file_mapped_bytes=...).

TESTS="$TESTS t_unique_fork_share t_unique_fork_write t_unique_shared t_unique_fork_exec
 t_unique_measure t_unique_attach_label t_unique_trees"

# unique_val FILE KEY: KEY of the record's "unique" object (raw: null, true, 123, "...").
unique_val() {
	head -n 1 "$1" | grep -o '"unique":{[^}]*}' |
		grep -o "\"$2\":\(\"[^\"]*\"\|true\|false\|null\|-\{0,1\}[0-9.]*\)" | cut -d: -f2-
}

# Whether peakbpf can hook the tree cgroup's mapped pages here (its BTF
# names the hook): the memcg statistic tracepoint (6.13+), or the memcg
# statistic function rmap calls (5.12 to 6.12; before 5.12 BPF has no
# atomics with a result, which the peak needs).
memcg_tp() {
	case $(uname -r) in 4.* | 5.[0-9].* | 5.1[01].*) return 1 ;; esac
	for f in btf_trace_mod_memcg_lruvec_state __lruvec_stat_mod_folio __mod_lruvec_page_state \
		__mod_lruvec_state; do
		grep -q "$f" /sys/kernel/btf/vmlinux 2>/dev/null && return 0
	done
	return 1
}

# unique_run NAME SHAPE SIZE [PEAKBPF-ARGS]: measure; the record in $TMP/NAME.json,
# the summary and the workload's cgroup line in $TMP/NAME.err. Sets
# u_src, u_exact, u_peak, summed, cg_anon (the workload's cgroup anon +
# file_mapped, empty when it found none). Returns 1 (after a skip or a
# fail) when there is no measured unique figure to check.
unique_run() {
	name=$1 shape=$2 size=$3
	shift 3
	if ! "$PEAKBPF" -o "$TMP/$name.json" "$@" -- "$WORKLOAD" -s "$size" -n 3 -t "$(q 500ms 1500ms)" \
		"$shape" 2>"$TMP/$name.err"; then
		fail "$name: peakbpf failed: $(cat "$TMP/$name.err")"
		return 1
	fi
	u_src=$(unique_val "$TMP/$name.json" source)
	u_exact=$(unique_val "$TMP/$name.json" exact)
	u_peak=$(unique_val "$TMP/$name.json" peak_bytes)
	summed=$(json_num "$TMP/$name.json" peak_bytes)
	cg_anon=$(sed -n 's/.*cgroup anon_bytes=\([0-9]*\) file_mapped_bytes=\([0-9]*\).*/\1 \2/p' \
		"$TMP/$name.err" | awk '{ print $1 + $2 }')
	if memcg_tp; then
		if [ "$u_src" = '"bpf-memcg"' ] && [ "$u_exact" = true ]; then
			echo "unique-table $shape summed=$summed unique=$u_peak cgroup_mapped=${cg_anon:-?}" >>"$RESULTS"
			return 0
		fi
		if [ "$(json_raw "$TMP/$name.json" exclusive)" != true ]; then
			skip "$name: the tree has no cgroup of its own here"
			return 1
		fi
		fail "$name: a memcg hook here ($(uname -r)), own cgroup, but unique is $u_src exact $u_exact: $(cat "$TMP/$name.json")"
		return 1
	fi
	# No tracepoint (before 6.13): labelled, never a number, never exact.
	u_why=$(unique_val "$TMP/$name.json" inexact_reason)
	if [ "$u_src" = '"unavailable"' ] && [ "$u_exact" = false ] && [ "$u_peak" = null ] &&
		{ echo "$u_why" | grep -q '6.13\|5.12' || echo "$u_why" | grep -q 'cgroup of its own'; }; then
		ok "$name: no memcg statistic tracepoint here: unique not measured, labelled: $u_why"
	else
		fail "$name: no tracepoint, but unique is $u_src exact $u_exact peak $u_peak ($u_why)"
	fi
	return 1
}

# within_tol A B: |A - B| <= 4 MiB + 2 % of B
within_tol() {
	d=$(abs $(($1 - $2)))
	[ "$d" -le $((4 * MIB + $2 / 50)) ]
}

# A parent touches S and forks 3 idle children: summed RSS counts S four
# times; the cgroup, and unique, once.
# 200 MiB in the VMs too (issue 26): within 2 % of it on every kernel
# with a hook (6.1 and 6.12 through fentry, 6.13+ the tracepoint).
t_unique_fork_share() {
	s=200
	unique_run unique-fork-share fork-share "${s}MiB" || return
	if [ -z "$cg_anon" ]; then
		fail "unique fork-share: the workload found no memory.stat to compare with"
		return
	fi
	if within_tol "$u_peak" "$cg_anon" && within_tol "$summed" $((4 * s * MIB)) &&
		[ "$(abs $((u_peak - s * MIB)))" -le $((s * MIB / 50)) ] &&
		grep -q "summed RSS counts [0-9]* pages more than the tree's unique memory, which peaked at .*: mostly anon and shmem pages mapped by several of the tree's processes" \
			"$TMP/unique-fork-share.err"; then
		ok "unique fork-share: unique $(mib "$u_peak"), cgroup mapped $(mib "$cg_anon"), summed $(mib "$summed"); the line says so"
	else
		fail "unique fork-share: unique $(mib "$u_peak"), cgroup mapped $(mib "$cg_anon"), summed $(mib "$summed"): $(cat "$TMP/unique-fork-share.err")"
	fi
}

# Children write every inherited page: each a copy of its own, so unique
# approaches summed RSS, and no line claims shared pages.
t_unique_fork_write() {
	s=$(q 200 64)
	unique_run unique-fork-write fork-write "${s}MiB" || return
	if within_tol "$u_peak" "$cg_anon" && within_tol "$u_peak" "$summed" &&
		! grep -q "pages more than the tree's unique memory" "$TMP/unique-fork-write.err"; then
		ok "unique fork-write: unique $(mib "$u_peak"), summed $(mib "$summed"), cgroup mapped $(mib "$cg_anon")"
	else
		fail "unique fork-write: unique $(mib "$u_peak"), summed $(mib "$summed"), cgroup mapped $(mib "$cg_anon")"
	fi
}

# A MAP_SHARED region three children map: summed RSS counts it three
# times, unique once.
t_unique_shared() {
	s=$(q 200 64)
	unique_run unique-shared shared "${s}MiB" || return
	if within_tol "$u_peak" $((s * MIB)) && within_tol "$summed" $((3 * s * MIB)) &&
		{ [ -z "$cg_anon" ] || within_tol "$u_peak" "$cg_anon"; }; then
		ok "unique shared (MAP_SHARED): unique $(mib "$u_peak"), summed $(mib "$summed"), cgroup mapped $(mib "${cg_anon:-0}"), S $s MiB"
	else
		fail "unique shared (MAP_SHARED): unique $(mib "$u_peak"), summed $(mib "$summed"), S $s MiB"
	fi
}

# Children exec at once: what they inherited leaves with the old mm; the
# cgroup holds S (and the children's small new images) while they idle.
t_unique_fork_exec() {
	s=$(q 200 64)
	unique_run unique-fork-exec fork-exec "${s}MiB" || return
	if within_tol "$u_peak" "$cg_anon" && within_tol "$u_peak" $((s * MIB)); then
		ok "unique fork-exec: unique $(mib "$u_peak"), cgroup mapped $(mib "$cg_anon"), summed $(mib "$summed") (before the execs)"
	else
		fail "unique fork-exec: unique $(mib "$u_peak"), cgroup mapped $(mib "$cg_anon"), summed $(mib "$summed")"
	fi
}

# --measure unique: the headline is the unique figure, summed RSS the first
# of the others; where unique is not measured, the headline stays summed
# RSS and not_used says why.
t_unique_measure() {
	s=$(q 64 32)
	out=$TMP/unique-measure.json
	if ! "$PEAKBPF" -q -o "$out" --measure unique -- "$WORKLOAD" -s "${s}MiB" -n 3 fork-share 2>/dev/null; then
		fail "--measure unique: peakbpf failed"
		return
	fi
	src=$(json_raw "$out" source)
	first_other=$(head -n 1 "$out" | grep -o '"other_sources":\[{"source":"[^"]*"' | cut -d'"' -f6)
	if [ "$src" = '"bpf-memcg"' ] && [ "$first_other" = bpf ]; then
		ok "--measure unique: headline bpf-memcg $(mib "$(json_num "$out" peak_bytes)"), summed RSS beside it"
	elif [ "$src" = '"bpf"' ] && grep -q '"--measure unique: not measured' "$out"; then
		ok "--measure unique where unique is not measured: headline summed RSS, not_used says why"
	else
		fail "--measure unique: headline $src, first other $first_other: $(cat "$out")"
	fi
	"$PEAKBPF" -q --measure pss -- true 2>"$TMP/unique-bad.err"
	rc=$?
	if [ "$rc" = 125 ] && grep -q "measure.*rss, unique" "$TMP/unique-bad.err"; then
		ok "--measure pss: exit 125, $(cat "$TMP/unique-bad.err")"
	else
		fail "--measure pss: exit $rc: $(cat "$TMP/unique-bad.err")"
	fi
}

# Attach mode: no cgroup of the tree's own: unique not measured, and says so.
t_unique_attach_label() {
	"$WORKLOAD" -s 8MiB -t "$(q 1s 3s)" steady &
	pid=$!
	"$PEAKBPF" -q --json -p "$pid" -d "$(q 300ms 1s)" >"$TMP/unique-attach.json" 2>/dev/null
	wait "$pid"
	src=$(unique_val "$TMP/unique-attach.json" source)
	peak=$(unique_val "$TMP/unique-attach.json" peak_bytes)
	u_why=$(unique_val "$TMP/unique-attach.json" inexact_reason)
	if [ "$src" = '"unavailable"' ] && [ "$peak" = null ] && echo "$u_why" | grep -q "attach mode"; then
		ok "unique in attach mode: not measured: $u_why"
	else
		fail "unique in attach mode: $src $peak $u_why"
	fi
}

# Two trees of one load at once (peakbpf serve's clients; unique_trees.c,
# on the library's internals): each its own cgroup and fork-share workload
# of its own size, run together; each figure exact, its own S (not the two
# summed), and its cgroup's mapped pages. Then the load's table refuses a
# fifth cgroup of a full group, and a cgroup measured already, with reasons.
t_unique_trees() {
	bin=$OUTPUT/unique_trees
	[ -x "$bin" ] || { skip "unique trees: $bin not built (make all)"; return; }
	a=$(q 48 24) b=$(q 96 48)
	"$bin" "$WORKLOAD" "$a" "$b" "$(q 1500ms 1500ms)" >"$TMP/unique-trees.out" 2>"$TMP/unique-trees.err"
	rc=$?
	out=$(cat "$TMP/unique-trees.out")
	if [ "$rc" = 77 ]; then
		if memcg_tp; then
			fail "unique trees: a memcg hook here ($(uname -r)), but: $out"
		elif echo "$out" | grep -q "not measured: .*\(6.13\|5.12\)"; then
			ok "unique trees: no memcg hook here: $out"
		else
			skip "unique trees: $out"
		fi
		return
	fi
	# The trees' figures against their cgroups' mapped pages, smaller first.
	u=$(sed -n 's/^tree [0-9]*: unique \([0-9]*\) exact 1 .*/\1/p' "$TMP/unique-trees.out" | sort -n | tr '\n' ' ')
	cg=$(sed -n 's/.*cgroup anon_bytes=\([0-9]*\) file_mapped_bytes=\([0-9]*\).*/\1 \2/p' "$TMP/unique-trees.err" |
		awk '{ print $1 + $2 }' | sort -n | tr '\n' ' ')
	set -- $u $cg
	if [ "$rc" = 0 ] && [ $# = 4 ] && within_tol "$1" "$3" && within_tol "$2" "$4" &&
		grep -q "refused (group full): .*no free way" "$TMP/unique-trees.out" &&
		grep -q "refused (measured): another tree" "$TMP/unique-trees.out" &&
		grep -q "^takeover: " "$TMP/unique-trees.out"; then
		ok "unique trees: two trees of one load at once, S $a and $b MiB: unique $(mib "$1") and $(mib "$2"), cgroups mapped $(mib "$3") and $(mib "$4"); a full group and a measured cgroup refused, a late destroy harmless"
	else
		fail "unique trees: exit $rc: $out $(cat "$TMP/unique-trees.err")"
	fi
}
