# shellcheck shell=sh
# --stacks (issue 35, docs/stacks.md): the resident pages at the peak by the
# user stack of the fault that brought each in. stacks_known's functions map
# and touch known amounts (tests/integration/stacks_known.c): each gets its
# bytes at the peak, within STACKS_TOL (stack pages the calls themselves may
# fault); the freed, the madvised and the untouched regions 0; and the
# folded lines (exact stacks + named buckets) add up to the peak figure.

TESTS="$TESTS t_stacks_known t_stacks_fork t_stacks_exec t_stacks_unwritable"

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
	if [ "$(uname -m)" != x86_64 ]; then
		skip "$name: --stacks is x86-64's only in this version (exceptions:page_fault_user)"
		return
	fi
	out=$TMP/stacks-$$.folded
	if [ "$arg" = exec ]; then
		"$PEAKBPF" --stacks "$out" -o "$TMP/stacks.json" -- sh -c "\"$STACKS_KNOWN\"; true" 2>"$TMP/stacks.err"
	else
		"$PEAKBPF" --stacks "$out" -o "$TMP/stacks.json" -- "$STACKS_KNOWN" $arg 2>"$TMP/stacks.err"
	fi
	rc=$?
	if [ "$rc" != 0 ] && grep -q -- '--stacks: this kernel' "$TMP/stacks.err"; then
		skip "$name: $(grep -m 1 -- '--stacks: this kernel' "$TMP/stacks.err")"
		return
	fi
	if [ "$rc" != 0 ] || [ ! -s "$out" ]; then
		fail "$name: rc $rc: $(grep -m 2 'stacks' "$TMP/stacks.err" | tr '\n' ' ')"
		return
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
	[ "$total" = "$peak" ] || bad="$bad lines add up to $total, the peak is $peak"
	exact=$(awk '!/^\[not attributed\]/ { s += $NF } END { printf "%d\n", s }' "$out")
	if [ -n "$bad" ]; then
		fail "$name:$bad"
	else
		ok "$name:$seen $(mib "$exact") exact + buckets = the peak $(mib "$peak")"
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
