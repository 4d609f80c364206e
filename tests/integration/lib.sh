# shellcheck shell=sh
# Helpers for the integration tests: POSIX sh, so the same tests run on this
# machine and inside the kernel-matrix VMs' busybox.

PASSED=0
FAILED=0
SKIPPED=0
MIB=1048576

# QUICK=1: the kernel-matrix VMs (tests/vm/run.sh), where qemu's TCG makes
# everything about 10x slower and peakbpf takes 1-3 s to load its BPF
# programs. It may only change sizes, counts and waits, never what is
# checked: q HOST QUICK prints the value for this run.
QUICK=${QUICK:-0}
q() { if [ "$QUICK" = 1 ]; then echo "$2"; else echo "$1"; fi; }

ok() { PASSED=$((PASSED + 1)); echo "ok   - $*"; }
fail() { FAILED=$((FAILED + 1)); echo "FAIL - $*"; }
skip() { SKIPPED=$((SKIPPED + 1)); echo "skip - $*"; }

# json_num FILE KEY: the first numeric value of "KEY" in the file's first
# line (the primary figure comes before other_sources in a record).
json_num() {
	head -n 1 "$1" | grep -o "\"$2\":-\{0,1\}[0-9][0-9.e+-]*" | head -n 1 | cut -d: -f2
}
# json_raw FILE KEY: the first raw value (a string with quotes, true, false, null).
json_raw() {
	head -n 1 "$1" | grep -o "\"$2\":\(\"[^\"]*\"\|true\|false\|null\|-\{0,1\}[0-9.]*\)" |
		head -n 1 | cut -d: -f2-
}

# need TOOL NAME: true when TOOL is installed; otherwise skip test NAME, saying so.
need() {
	command -v "$1" >/dev/null 2>&1 && return 0
	skip "$2: $1 not installed"
	return 1
}

# page_size: the page size, from getconf, or where busybox has none (the
# kernel-matrix VMs) from peakbpf's own record.
page_size() {
	getconf PAGESIZE 2>/dev/null ||
		"$PEAKBPF" -q --json -- true 2>/dev/null | grep -o '"page_size":[0-9]*' | cut -d: -f2
}

# wait_attached PID: wait (up to 30 s) until the peakbpf of PID has its BPF
# programs attached (a bpf_link among its fds); its walk of the tree follows
# at once. A fixed sleep was too short on a loaded machine, where loading
# takes seconds. False if it never did (it exited, or /proc cannot tell).
wait_attached() {
	i=0
	while [ "$i" -lt 300 ] && kill -0 "$1" 2>/dev/null; do
		ls -l "/proc/$1/fd" 2>/dev/null | grep -q 'bpf_link' && return 0
		sleep 0.1
		i=$((i + 1))
	done
	return 1
}

# kernel_at_least MAJOR MINOR: this kernel is MAJOR.MINOR or later.
kernel_at_least() {
	v=$(uname -r | sed 's/^\([0-9]*\)\.\([0-9]*\).*/\1 \2/')
	set -- $v "$1" "$2"
	[ "$1" -gt "$3" ] || { [ "$1" -eq "$3" ] && [ "$2" -ge "$4" ]; }
}
abs() { if [ "$1" -lt 0 ]; then echo $((-$1)); else echo "$1"; fi; }

mib() { awk -v b="$1" 'BEGIN { printf "%.2f MiB", b / 1048576 }'; }

# check_growth NAME JSON EXPECTED: |growth - expected| <= 2 MiB + 1 MiB per
# process alive at the peak, and <= 2 % of expected (unless NO_REL=1: for
# shapes whose added memory is far smaller than their processes' own base
# RSS, where 2 % of it is below one process's binary).
check_growth() {
	name=$1 json=$2 expected=$3
	growth=$(json_num "$json" growth_bytes)
	procs=$(json_num "$json" processes_at_peak)
	if [ -z "$growth" ] || [ -z "$procs" ]; then
		fail "$name: no growth in the record: $(cat "$json")"
		return
	fi
	err=$(abs $((growth - expected)))
	tol_abs=$((2 * MIB + procs * MIB))
	tol_rel=$((expected / 50))
	[ "${NO_REL:-0}" = 1 ] && tol_rel=$tol_abs
	detail="growth $(mib "$growth"), true $(mib "$expected"), error $(mib "$err"), $procs procs"
	if [ "$err" -le "$tol_abs" ] && [ "$err" -le "$tol_rel" ]; then
		ok "$name: $detail"
	else
		fail "$name: $detail (tolerance $(mib "$tol_abs") and $(mib "$tol_rel"))"
	fi
	bound=$(json_raw "$json" error_bound_bytes)
	check_bound "$name" "$json" "$growth" "$expected" "$procs"
	echo "$name $growth $expected $err $procs $bound" >>"$RESULTS"
}

# check_bound NAME JSON GROWTH EXPECTED PROCS: the stated interval holds
# the truth. The growth counts each process's own binary, libraries and
# stack, which the workload's expected growth leaves out (under 1 MiB a
# process, 2 MiB in all more: check_growth's tolerance); so the true added
# peak lies in [growth - that, growth + error_bound_bytes]. Exact: bound 0.
check_bound() {
	exact=$(json_raw "$2" exact) b=$(json_raw "$2" error_bound_bytes)
	if [ "$exact" = true ]; then
		[ "$b" = 0 ] && return
		fail "$1: exact with error_bound_bytes $b"
		return
	fi
	case $b in
	'' | null)
		fail "$1: not exact and no bound: $(json_raw "$2" inexact_reason)"
		return ;;
	esac
	base=$((2 * MIB + $5 * MIB))
	if [ "$4" -le $(($3 + b)) ] && [ "$4" -ge $(($3 - base)) ]; then
		ok "$1: true $(mib "$4") in [growth - binaries, growth + bound] = [$(mib $(($3 - base))), $(mib $(($3 + b)))]"
	else
		fail "$1: true $(mib "$4") not in [$(mib $(($3 - base))), $(mib $(($3 + b)))] (bound $(mib "$b"))"
	fi
}

# run_shape NAME WORKLOAD-ARGS...: measure a workload shape, check its growth.
run_shape() {
	name=$1
	shift
	expected=$("$WORKLOAD" -x "$@") || { fail "$name: workload -x $*"; return; }
	if "$PEAKBPF" -q -o "$TMP/$name.json" -- "$WORKLOAD" "$@" 2>"$TMP/$name.err"; then
		check_growth "$name" "$TMP/$name.json" "$expected"
	else
		fail "$name: peakbpf exited $?: $(cat "$TMP/$name.err")"
	fi
}

# progs_left: how many peakbpf BPF programs are loaded, after giving the
# kernel up to 3 s to free those of processes that just died (it frees them
# asynchronously). Prints "busy" when another peakbpf is running here.
progs_left() {
	if pgrep -x peakbpf >/dev/null 2>&1; then
		echo busy
		return
	fi
	i=0
	while :; do
		n=$(bpftool prog show 2>/dev/null | grep -c 'handle_rss_stat\|handle_fork\|handle_exec\|handle_exit')
		if [ "$n" = 0 ] || [ "$i" -ge 30 ]; then
			echo "$n"
			return
		fi
		i=$((i + 1))
		sleep 0.1
	done
}

# --stacks (docs/stacks.md): test_stacks.sh's and test_stacks_programs.sh's.
# STACKS_TOL: the stack pages a call itself may fault, beside the bytes a
# function touches.
STACKS_TOL=$((64 * 1024))

# stacks_bytes FILE FUNC: the bytes of the folded lines with FUNC as a frame.
stacks_bytes() {
	awk -v f="$2" '{ n = split($0, a, " "); split(a[1], fr, ";");
		for (i in fr) if (fr[i] == f) { s += a[n]; break } } END { printf "%d\n", s }' "$1"
}

# stacks_total FILE [exact]: the bytes of all its lines; with "exact", of
# those not in a [not attributed] bucket.
stacks_total() {
	awk -v e="${2:-}" 'e == "" || !/^\[not attributed\]/ { s += $NF } END { printf "%d\n", s }' "$1"
}

# stacks_run NAME OUT CMD...: CMD under peakbpf --stacks OUT -o
# $TMP/stacks.json (stderr in $TMP/stacks.err); CMD "-p PID": attached to
# PID until it exits. True when it ran and wrote
# OUT, with stacks_peak the run's peak_bytes; else it said skip (not x86-64,
# a kernel that refuses) or fail, and is false.
stacks_run() {
	name=$1 out=$2
	shift 2
	if [ "$(uname -m)" != x86_64 ]; then
		skip "$name: --stacks is x86-64's only in this version (exceptions:page_fault_user)"
		return 1
	fi
	if [ "$1" = -p ]; then
		"$PEAKBPF" --stacks "$out" -o "$TMP/stacks.json" -p "$2" 2>"$TMP/stacks.err"
	else
		"$PEAKBPF" --stacks "$out" -o "$TMP/stacks.json" -- "$@" 2>"$TMP/stacks.err"
	fi
	stacks_ran "$name" "$out" $? || return 1
	stacks_peak=$(json_num "$TMP/stacks.json" peak_bytes)
}

# stacks_ran NAME OUT RC: true when peakbpf --stacks OUT exited RC 0 and
# wrote OUT; else skip (refused before 6.1, as expected) or fail, false.
stacks_ran() {
	if [ "$3" != 0 ] && grep -q -- '--stacks: this kernel' "$TMP/stacks.err"; then
		# expected before 6.1 only (t_stacks_kernel asserts the refusal)
		if kernel_at_least 6 1; then
			fail "$1: refused on $(uname -r), which has what --stacks needs: $(grep -m 1 -- '--stacks:' "$TMP/stacks.err")"
		else
			skip "$1: refused before 6.1: $(grep -m 1 -- '--stacks: this kernel' "$TMP/stacks.err")"
		fi
		return 1
	fi
	[ "$3" = 0 ] && [ -s "$2" ] && return 0
	fail "$1: rc $3: $(grep -m 2 'stacks' "$TMP/stacks.err" | tr '\n' ' ')"
	return 1
}

# stacks_expect OUT FUNC:MiB...: each FUNC's bytes in OUT (FUNC is up to the
# last colon: C++ names have colons) within STACKS_TOL of its MiB, and OUT's
# lines adding up to stacks_peak; to within the run's error_bound_bytes above
# it when the figure is not exact (before 6.2 the peak lags by its bound, the
# placed pages do not: docs/stacks.md). Sets stacks_bad (what did not hold,
# empty if all did) and stacks_seen (what each got).
stacks_expect() {
	out=$1
	shift
	stacks_bad="" stacks_seen=""
	for want in "$@"; do
		f=${want%:*}
		expect=$((${want##*:} * MIB))
		got=$(stacks_bytes "$out" "$f")
		stacks_seen="$stacks_seen $f $(mib "$got"),"
		[ "$(abs $((got - expect)))" -le "$STACKS_TOL" ] || stacks_bad="$stacks_bad $f=$got (want $expect)"
	done
	total=$(stacks_total "$out")
	if [ "$(json_raw "$TMP/stacks.json" exact)" = true ]; then
		[ "$total" = "$stacks_peak" ] || stacks_bad="$stacks_bad lines add up to $total, the peak is $stacks_peak"
		return
	fi
	bound=$(json_num "$TMP/stacks.json" error_bound_bytes)
	[ -n "$bound" ] && [ "$total" -ge "$stacks_peak" ] && [ "$total" -le $((stacks_peak + bound)) ] ||
		stacks_bad="$stacks_bad lines add up to $total, not in [the peak $stacks_peak, + the bound ${bound:-none}]"
}
