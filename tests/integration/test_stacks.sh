# shellcheck shell=sh
# --stacks (issue 35, docs/stacks.md): the resident pages at the peak by the
# user stack of the fault that brought each in. stacks_known's functions map
# and touch known amounts (tests/integration/stacks_known.c): each gets its
# bytes at the peak, within STACKS_TOL (stack pages the calls themselves may
# fault); the freed, the madvised and the untouched regions 0; and the
# folded lines (exact stacks + named buckets) add up to the peak figure.

# By kernel (docs/stacks.md, "Kernels"): from 6.2 the split is exact and the
# lines add up to the peak; on 6.1 the peak lags by the tracker's bound, the
# summary says so, and the lines add up to within it; before 6.1 --stacks is
# refused in one line (t_stacks_kernel), and the other tests skip saying so.

TESTS="$TESTS t_stacks_known t_stacks_fork t_stacks_exec t_stacks_unwritable t_stacks_kernel"

STACKS_KNOWN=${STACKS_KNOWN:-$OUTPUT/stacks_known}
# STACKS_TOL and stacks_bytes: lib.sh's (test_stacks_programs.sh's too).

# stacks_check NAME ARG EXPECT...: run stacks_known ARG under --stacks; each
# EXPECT is FUNC:MiB at the peak; and the lines must add up to the peak.
stacks_check() {
	name=$1 arg=$2
	shift 2
	if [ ! -x "$STACKS_KNOWN" ]; then
		skip "$name: $STACKS_KNOWN not built (make all)"
		return
	fi
	out=$TMP/stacks-$$.folded
	# stacks_run (lib.sh): x86-64 only, the refusal before 6.1 a skip, a
	# failed run a failure.
	if [ "$arg" = exec ]; then
		stacks_run "$name" "$out" sh -c "\"$STACKS_KNOWN\"; true" || return
	else
		# shellcheck disable=SC2086 # ARG is one word or none
		stacks_run "$name" "$out" "$STACKS_KNOWN" $arg || return
	fi
	peak=$(json_num "$TMP/stacks.json" peak_bytes)
	total=$(awk '{ s += $NF } END { printf "%d\n", s }' "$out")
	bad="" seen=""
	for want in "$@"; do
		f=${want%%:*}
		expect=$((${want#*:} * MIB))
		got=$(stacks_bytes "$out" "$f")
		seen="$seen $f $(mib "$got"),"
		[ "$(abs $((got - expect)))" -le "$STACKS_TOL" ] || bad="$bad $f=$got (want $expect)"
	done
	# The summary's own lines (the run's report says "not exact" of other sources).
	inexact=$(sed -n '/stacks at the peak/,$p' "$TMP/stacks.err" | grep -c '^  not exact: ')
	if kernel_at_least 6 2; then
		[ "$total" = "$peak" ] || bad="$bad lines add up to $total, the peak is $peak"
		[ "$inexact" = 0 ] || bad="$bad the summary says not exact on $(uname -r)"
		sum="= the peak $(mib "$peak")"
	else
		# Before 6.2 the peak lags by at most its bound; the placed pages
		# do not, so the lines may add up to more, within it.
		bound=$(json_num "$TMP/stacks.json" error_bound_bytes)
		[ -n "$bound" ] && [ "$total" -ge "$peak" ] && [ "$total" -le $((peak + bound)) ] ||
			bad="$bad lines add up to $total, not in [the peak $peak, + the bound ${bound:-none}]"
		sed -n '/stacks at the peak/,$p' "$TMP/stacks.err" | grep -q '^  not exact: .*(bound [0-9]' ||
			bad="$bad the summary does not say not exact with the bound"
		sum="= $(mib "$total"), in [the peak $(mib "$peak"), + the bound $(mib "${bound:-0}")], said not exact"
	fi
	exact=$(awk '!/^\[not attributed\]/ { s += $NF } END { printf "%d\n", s }' "$out")
	if [ -n "$bad" ]; then
		fail "$name:$bad"
	else
		ok "$name:$seen $(mib "$exact") exact + buckets $sum"
	fi
	rm -f "$out"
}

t_stacks_known() {
	stacks_check t_stacks_known "" alloc_64:64 alloc_128:128 freed_32:0 dontneed_16:0 untouched_4g:0
}

# After a fork the child's copies keep the parent's stacks (and count in
# both, as summed RSS counts them); the child's own 32 MiB are its own.
t_stacks_fork() {
	stacks_check t_stacks_fork fork alloc_64:128 alloc_128:256 child_32:32 freed_32:0 untouched_4g:0
}

# A forked child of the root that execs: its pages are its new image's,
# named from its own maps; the shell's copy it was forked with went at exec.
t_stacks_exec() {
	stacks_check t_stacks_exec exec alloc_64:64 alloc_128:128 freed_32:0 untouched_4g:0
}

# A stacks file that cannot be written: one line, 116, and the command not run.
t_stacks_unwritable() {
	marker=$TMP/stacks-ran-$$
	"$PEAKBPF" --stacks "$TMP/no-such-dir-$$/x.folded" -- sh -c ": >$marker" 2>"$TMP/stacks-bad.err"
	rc=$?
	lines=$(wc -l <"$TMP/stacks-bad.err")
	if [ "$rc" = 116 ] && [ "$lines" = 1 ] && [ ! -e "$marker" ] &&
		grep -q -- '--stacks: cannot write' "$TMP/stacks-bad.err"; then
		ok "t_stacks_unwritable: 116 before the run: $(cat "$TMP/stacks-bad.err")"
	else
		fail "t_stacks_unwritable: rc $rc, $lines lines, ran: $([ -e "$marker" ] && echo yes || echo no): $(head -c 300 "$TMP/stacks-bad.err")"
	fi
	rm -f "$marker"
}

# What --stacks says of this kernel. Before 6.1 (no bpf_get_current_task_btf
# before 5.11, no bpf_find_vma before 5.17, no mmap:exit_mmap tracepoint
# before 6.1): one line naming what it lacks, exit 125, no file left, and
# the command not run. From 6.1 it runs and writes the stacks.
t_stacks_kernel() {
	marker=$TMP/stacks-kernel-ran-$$ out=$TMP/stacks-kernel-$$.folded
	if [ "$(uname -m)" != x86_64 ]; then
		skip "t_stacks_kernel: --stacks is x86-64's only in this version (exceptions:page_fault_user)"
		return
	fi
	rm -f "$marker" "$out"
	"$PEAKBPF" --stacks "$out" -- sh -c ": >$marker" 2>"$TMP/stacks-kernel.err"
	rc=$?
	said=$(grep -m 1 -- '--stacks:' "$TMP/stacks-kernel.err")
	if kernel_at_least 6 1; then
		if [ "$rc" = 0 ] && [ -e "$marker" ] && [ -s "$out" ] && [ -z "$said" ]; then
			ok "t_stacks_kernel: $(uname -r) runs --stacks: $(grep -m 1 'stacks at the peak' "$TMP/stacks-kernel.err")"
		else
			fail "t_stacks_kernel: $(uname -r): rc $rc, ran: $([ -e "$marker" ] && echo yes || echo no), file: $([ -s "$out" ] && echo yes || echo no): $(head -c 300 "$TMP/stacks-kernel.err")"
		fi
		rm -f "$marker" "$out"
		return
	fi
	lines=$(wc -l <"$TMP/stacks-kernel.err")
	want="the mmap:exit_mmap tracepoint (6.1)"
	kernel_at_least 5 17 || want="bpf_find_vma (5.17), $want"
	kernel_at_least 5 11 || want="bpf_get_current_task_btf (5.11), $want"
	case $said in
	*"lacks $want: --stacks needs x86-64 and Linux 6.1 or later"*) named=1 ;;
	*) named=0 ;;
	esac
	if [ "$rc" = 125 ] && [ "$lines" = 1 ] && [ "$named" = 1 ] && [ ! -e "$marker" ] && [ ! -e "$out" ]; then
		ok "t_stacks_kernel: refused before the run, 125: $said"
	else
		fail "t_stacks_kernel: $(uname -r): rc $rc (want 125), $lines lines (want 1), ran: $([ -e "$marker" ] && echo yes || echo no), file left: $([ -e "$out" ] && echo yes || echo no), want \"lacks $want\": $(head -c 400 "$TMP/stacks-kernel.err")"
	fi
	rm -f "$marker" "$out"
}
