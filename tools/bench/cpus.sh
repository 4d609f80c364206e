#!/bin/sh
# SPDX-License-Identifier: MIT
# The in-VM side of make bench-cpus (tools/bench/bench-cpus.sh boots the
# kernel-matrix VM once per vCPU count and runs this as /bin/sh
# /opt/test/cpus.sh: busybox sh, POSIX only). /opt/test holds peakbpf,
# workload, bpfstat (with their libraries) and this file.
#
# Measures two figures that must not grow with the CPU count (issue 11):
#  per-event cost: bpfstat's BPF run-time statistics (read bpfstat.c) of
#    peakbpf's rss_stat program while it tracks `workload idle-plus-faulter`,
#    the window being exactly the fault loop, as bench.sh's cost_tracked
#    does; and of the empty floor program over the same kind of window. Both
#    are taken first on the tracepoint (the first program after a fault runs
#    colder than the next): peakbpf's in a window where the floor was
#    attached after peakbpf started, the floor's in one where it was
#    attached before. A round is one of each: their ratio is one sample.
#  start-up: `peakbpf -q --json -- true`: the record's host.bpf_startup_ms
#    (probe, load = libbpf open + load: BTF, maps, verification; learn,
#    attach) and the run's wall time (/proc/uptime: 10 ms steps; busybox
#    date has no %N).
#  through a helper (issue 24): with `peakbpf serve` of our own running
#    (resident, the default), the wall time of `PEAKBPF_HELPER=SOCK peakbpf
#    -q -- true`, of the same with --source bpf (no cgroup of its own), of
#    `peakbpf --version` (the client's exec, dynamic linking and exit, no
#    session), of `peakbpf -q --no-helper -- true` and of true alone,
#    interleaved, a line a round; the host takes the differences of the
#    medians. These runs are timed with $EPOCHREALTIME (busybox ash has
#    it: microseconds) where the shell has it, else with /proc/uptime.
# bench-cpus.sh boots the VM with qemu's -icount: the guest's clock then
# counts instructions (2^shift ns each), so these timings are the same on a
# busy host and between runs, all but a window now and then with an
# interrupt inside a program run, which the medians over rounds leave out.
#
# Prints one "cpus round KEY=VALUE...", "cpus start KEY=VALUE..." and "cpus
# helper KEY=VALUE..." line a sample (and "cpus helper-start ready_ms=..."
# once: the helper's start until it answers), "cpus-na FIGURE: REASON" for a
# figure that could not be measured, and exits 1 if any was n/a. Nothing is
# left running: every child is bounded (timeout, the workload's own -t) and
# waited for, the helper killed at the end of its section.
set -u
cd "$(dirname "$0")" || exit 1

# Sizes: with 64 vCPUs under icount a round takes some 5 s here; the
# figures hardly vary, so a few samples make a median.
SIZE_MIB=16
PAGES=$((SIZE_MIB * 256))    # 4 KiB pages (x86-64)
ROUNDS=5
START_RUNS=5
HELPER_RUNS=11
# Bounds, in the guest's seconds (under icount not the host's, but of the
# same order):
# bpfstat lives through the whole script, the helper through its section;
# one peakbpf run, and each of the workload's waits for SIGUSR1, are
# bounded on their own.
BS_LIMIT=150
HELPER_LIMIT=150
RUN_LIMIT=60
HOLD=20s

T=$(mktemp -d /tmp/cpus.XXXXXX) || exit 1
NA=0
na() { echo "cpus-na $*"; NA=1; }
# A write to a FIFO whose reader died must fail, not kill this shell.
trap '' PIPE

# true as a program, not the shell's builtin: a name with a slash is run as
# it is, so that "true alone" is a fork and an exec as under peakbpf.
TRUE_BIN=/bin/true
[ -x "$TRUE_BIN" ] || TRUE_BIN=/usr/bin/true
# The clock of the helper's runs (see stamp below).
if [ -n "${EPOCHREALTIME:-}" ]; then CLOCK=EPOCHREALTIME; else CLOCK=uptime; fi

echo "cpus info kernel=$(uname -r) cpus=$(grep -c ^processor /proc/cpuinfo) size=${SIZE_MIB}MiB rounds=$ROUNDS start_runs=$START_RUNS helper_runs=$HELPER_RUNS clock=$CLOCK"

# Transparent huge pages as on the hosts (madvise): the workload asks for
# 4 KiB faults itself, and peakbpf's own memory should not come in 2 MiB
# pieces either (Debian's kernels default to always).
thp=/sys/kernel/mm/transparent_hugepage/enabled
[ -w "$thp" ] && echo madvise >"$thp"

# ---------------------------------------------------------------- bpfstat
# Its stdin and stdout are FIFOs opened here write-only and read-only, so
# that when it exits (or its timeout ends it) a read here sees EOF.
mkfifo "$T/bs.in" "$T/bs.out" "$T/wl" || exit 1
timeout "$BS_LIMIT" ./bpfstat <"$T/bs.in" >"$T/bs.out" 2>"$T/bs.err" &
BS_PID=$!
exec 3>"$T/bs.in" 4<"$T/bs.out"
bs() {  # COMMAND: one line to bpfstat, its answer in BS_REPLY
	if ! echo "$*" >&3 2>/dev/null; then
		BS_REPLY="error: bpfstat is gone: $(cat "$T/bs.err")"
	elif ! read -r BS_REPLY <&4; then
		BS_REPLY="error: bpfstat did not answer: $(cat "$T/bs.err")"
	fi
	case $BS_REPLY in error*) return 1 ;; esac
}

# ---------------------------------------------------------------- per-event
# The workload's stderr is a FIFO read with the read builtin: nothing in
# this shell forks while a window is open, so the rss_stat events in it are
# the workload's.
WL_LAST=""
wait_wl() {  # WORD: read the workload's lines (fd 5) until one has WORD
	while read -r line <&5; do
		WL_LAST=$line
		case $line in *"$1"*) return 0 ;; esac
	done
	return 1
}
# One window, POS first (the floor attached after peakbpf started) or
# second (before): appends "POS SNAP1 SNAP2" to $T/snaps, or says why not
# in WHY.
window() {
	pos=$1 wpid="" s1="" s2="" WHY="" WL_LAST=""
	if [ "$pos" = second ] && ! bs attach; then
		WHY=$BS_REPLY
		return 1
	fi
	timeout "$RUN_LIMIT" ./peakbpf -q -o "$T/t.json" -- ./workload -n 1 -s "${SIZE_MIB}MiB" -t "$HOLD" \
		idle-plus-faulter 2>"$T/wl" 3>&- 4>&- &
	pb=$!
	exec 5<"$T/wl"
	if ! wait_wl ready; then
		WHY="the workload never said ready: ${WL_LAST:-no output}"
	elif ! { read -r wpid _ <"/proc/$pb/task/$pb/children"; [ -n "$wpid" ]; }; then
		# (the file has no newline: read fails, and sets wpid all the same)
		WHY="no workload under peakbpf (pid $pb)"
	elif [ "$pos" = first ] && ! bs attach; then
		WHY=$BS_REPLY
	elif ! bs "snap $pb"; then
		WHY=$BS_REPLY
	else
		s1=$BS_REPLY
		kill -USR1 "$wpid"
		if ! wait_wl "done"; then
			WHY="the fault loop did not end: ${WL_LAST:-no output}"
		elif ! bs "snap $pb"; then
			WHY=$BS_REPLY
		else
			s2=$BS_REPLY
		fi
	fi
	if [ -z "$WHY" ]; then
		kill -USR1 "$wpid"    # the workload's second wait: let it exit
	else
		kill "$pb" ${wpid:+"$wpid"} 2>/dev/null
	fi
	bs detach
	# EOF comes once peakbpf and the workload have both exited.
	while read -r _ <&5; do :; done
	exec 5<&-
	wait "$pb"
	rc=$?
	[ -n "$WHY" ] || [ $rc = 0 ] || WHY="peakbpf exited $rc"
	# shellcheck disable=SC2086 # the snap line's fields
	[ -n "$WHY" ] || { set -- $s2; [ $# = 8 ] && [ "$6" -ge 1 ]; } ||
		WHY="bpfstat's snap did not find peakbpf's program: $s2"
	[ -z "$WHY" ] || return 1
	echo "$pos $s1 $s2" >>"$T/snaps"
}

# One round: a window at each place, in the order R (0 or 1) says, then one
# line with the round's figures. A line of $T/snaps: POS, then twice "snap
# F_NS F_CNT P_NS P_CNT P_PROGS R_NS R_CNT". Per place on the tracepoint:
# peakbpf's program at the first place runs in "first" windows, the
# floor's in "second" ones, and the other way round at the second place.
# Events beyond the workload's own (a fault a page, an unmap batch a 512
# pages) are counted, not taken out: nothing else runs in the VM.
round() {
	if [ "$1" = 0 ]; then order="first second"; else order="second first"; fi
	: >"$T/snaps"
	for pos in $order; do
		window "$pos" || return 1
	done
	out=$(awk -v pages=$PAGES '{
		k = $1
		fns[k] = $11 - $3; fcnt[k] = $12 - $4; pns[k] = $13 - $5; pcnt[k] = $14 - $6
	} END {
		if (!pcnt["first"] || !fcnt["second"] || !pcnt["second"] || !fcnt["first"]) {
			print "a program ran no events in its window"
			exit 1
		}
		p = pns["first"] / pcnt["first"]; f = fns["second"] / fcnt["second"]
		p2 = pns["second"] / pcnt["second"]; f2 = fns["first"] / fcnt["first"]
		printf "cpus round peakbpf_ns=%.1f floor_ns=%.1f ratio=%.4f", p, f, p / f
		printf " second_peakbpf_ns=%.1f second_floor_ns=%.1f second_ratio=%.4f", p2, f2, p2 / f2
		printf " other_events=%d\n", pcnt["first"] - int(pages * (1 + 1 / 512))
	}' "$T/snaps") || { WHY=$out; return 1; }
	echo "$out"
}

read -r BS_REPLY <&4 || BS_REPLY="error: bpfstat did not start: $(cat "$T/bs.err")"
if [ "$BS_REPLY" != ready ]; then
	na "per_event: $BS_REPLY"
else
	r=0
	while [ $r -lt $ROUNDS ]; do
		round $((r % 2)) || { na "per_event: $WHY"; break; }
		r=$((r + 1))
	done
fi
echo quit >&3 2>/dev/null
exec 3>&- 4<&-
wait "$BS_PID"

# ---------------------------------------------------------------- start-up
# One line a run: its wall time and the record's steps, "probe":1.2,...
# turned into probe_ms=1.2 ...
i=0
while [ $i -lt $START_RUNS ]; do
	read -r u0 _ </proc/uptime
	if ! timeout "$RUN_LIMIT" ./peakbpf -q --json -- true >"$T/s.json" 2>"$T/s.err"; then
		na "startup: peakbpf -q --json -- true failed: $(head -n 1 "$T/s.err")"
		break
	fi
	read -r u1 _ </proc/uptime
	steps=$(sed -n '/"bpf_startup_ms":{/{s/.*"bpf_startup_ms":{\([^}]*\)}.*/\1/;s/"\([a-z]*\)":/\1_ms=/g;s/,/ /g;p;}' "$T/s.json")
	[ -n "$steps" ] || { na "startup: no host.bpf_startup_ms in the record"; break; }
	echo "cpus start total_ms=$(awk -v a="$u0" -v b="$u1" 'BEGIN { print (b - a) * 1000 }') $steps"
	i=$((i + 1))
done

# ---------------------------------------------------------------- helper
# After the other sections: the helper's programs stay attached while it
# runs, and every rss_stat event in the VM pays their untracked cost.
stamp() {  # VAR: the time now, in seconds, in VAR
	# No $(...): a command substitution forks, inside the timed interval.
	if [ "$CLOCK" = EPOCHREALTIME ]; then
		eval "$1=\$EPOCHREALTIME"
	else
		read -r "$1" _ </proc/uptime
	fi
}
ms() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", (b - a) * 1000 }'; }
HELPER_PID=""
# helper_start: `peakbpf serve` on a socket of our own, resident (the
# default); returns once `serve --status` answers, and prints the time that
# took (its BPF load) as a sample.
helper_start() {
	stamp h0
	timeout "$HELPER_LIMIT" ./peakbpf serve --socket "$T/helper.sock" 2>"$T/helper.log" &
	HELPER_PID=$!
	j=0
	while [ $j -lt $((RUN_LIMIT * 10)) ]; do
		if ./peakbpf serve --status --socket "$T/helper.sock" >/dev/null 2>&1; then
			stamp h1
			# shellcheck disable=SC2154 # h0 and h1 are set by stamp
			echo "cpus helper-start ready_ms=$(ms "$h0" "$h1")"
			return 0
		fi
		kill -0 "$HELPER_PID" 2>/dev/null || break
		sleep 0.1
		j=$((j + 1))
	done
	WHY="peakbpf serve did not answer on its socket: $(head -n 1 "$T/helper.log")"
	return 1
}
# helper_cpu VAR: the helper's CPU time so far, every thread's, in µs, from
# /proc/PID/task/*/schedstat (ns on the CPU): what a session costs the
# helper, apart from how the VM schedules the two processes' wake-ups
# (wall time under TCG waits for the round robin of the vCPUs). The
# serve process is HELPER_PID itself or, where timeout forks, its child.
helper_cpu() {
	hp=$HELPER_PID
	grep -q serve "/proc/$hp/cmdline" 2>/dev/null ||
		read -r hp _ <"/proc/$HELPER_PID/task/$HELPER_PID/children" 2>/dev/null
	eval "$1=$(cat /proc/"$hp"/task/*/schedstat 2>/dev/null | awk '{ n += $1 } END { printf "%.1f", n / 1000 }')"
}
helper_stop() {
	[ -n "$HELPER_PID" ] || return 0
	kill "$HELPER_PID" 2>/dev/null
	wait "$HELPER_PID"
	HELPER_PID=""
}
# timed VAR CMD...: CMD's wall time in ms in VAR (bounded by timeout, as
# true alone is, so that the difference is peakbpf's); fails if CMD does.
timed() {
	v=$1
	shift
	stamp c0
	timeout "$RUN_LIMIT" "$@" >/dev/null 2>"$T/h.err" || return 1
	stamp c1
	# shellcheck disable=SC2154 # c0 and c1 are set by stamp
	eval "$v=$(ms "$c0" "$c1")"
}
# cgroup_cycle VAR: the kernel's part of a tree's own cgroup, in ms in VAR
# (empty where no cgroup2 memory controller is delegated at the root): a
# memory cgroup made, a shell moved into it that execs true, and the
# cgroup removed, as a command's own cgroup is; the helper row's cgroup
# part apart from peakbpf's code.
cgroup_cycle() {
	eval "$1="
	grep -qw memory /sys/fs/cgroup/cgroup.subtree_control 2>/dev/null || return 0
	stamp g0
	mkdir /sys/fs/cgroup/bench-cycle 2>/dev/null || return 0
	sh -c 'echo $$ >/sys/fs/cgroup/bench-cycle/cgroup.procs && exec true'
	rmdir /sys/fs/cgroup/bench-cycle 2>/dev/null
	stamp g1
	# shellcheck disable=SC2154 # g0 and g1 are set by stamp
	eval "$1=$(ms "$g0" "$g1")"
}
# helper_runs: first a --json run to see that the session went through the
# helper (host.bpf_load "helper"), then HELPER_RUNS rounds of the five runs.
# PEAKBPF_HELPER is exported for all of them (an assignment before a
# function call need not reach its commands' environment): true ignores it,
# and --no-helper passes the helper over.
helper_runs() {
	WHY=""
	export PEAKBPF_HELPER="$T/helper.sock"
	if ! timeout "$RUN_LIMIT" ./peakbpf -q --json -- "$TRUE_BIN" >"$T/h.json" 2>"$T/h.err"; then
		WHY="PEAKBPF_HELPER=SOCK peakbpf -q --json -- true failed: $(head -n 1 "$T/h.err")"
		return 1
	fi
	via=$(sed -n 's/.*"bpf_load":"\([a-z]*\)".*/\1/p' "$T/h.json")
	if [ "$via" != helper ]; then
		WHY="the session did not go through the helper (host.bpf_load: ${via:-none}): $(head -n 1 "$T/h.err")"
		return 1
	fi
	i=0
	while [ $i -lt $HELPER_RUNS ]; do
		timed tt "$TRUE_BIN" || { WHY="true failed"; return 1; }
		helper_cpu u0
		timed th ./peakbpf -q -- "$TRUE_BIN" ||
			{ WHY="PEAKBPF_HELPER=SOCK peakbpf -q -- true failed: $(head -n 1 "$T/h.err")"; return 1; }
		helper_cpu u1
		timed tb ./peakbpf -q --source bpf -- "$TRUE_BIN" ||
			{ WHY="PEAKBPF_HELPER=SOCK peakbpf -q --source bpf -- true failed: $(head -n 1 "$T/h.err")"; return 1; }
		timed tv ./peakbpf --version || { WHY="peakbpf --version failed: $(head -n 1 "$T/h.err")"; return 1; }
		cgroup_cycle tc
		timed ts ./peakbpf -q --no-helper -- "$TRUE_BIN" ||
			{ WHY="peakbpf -q --no-helper -- true failed: $(head -n 1 "$T/h.err")"; return 1; }
		# shellcheck disable=SC2154 # set by timed
		# shellcheck disable=SC2154 # u0 and u1 are set by helper_cpu
		echo "cpus helper true_ms=$tt helper_ms=$th helper_bpf_ms=$tb version_ms=$tv standalone_ms=$ts" \
			"helper_cpu_us=$(awk -v a="$u0" -v b="$u1" 'BEGIN { printf "%.1f", b - a }')" \
			"${tc:+cgroup_ms=$tc}"
		i=$((i + 1))
	done
}
if ! helper_start; then
	na "helper: $WHY"
elif ! helper_runs; then
	na "helper: $WHY"
fi
helper_stop
unset PEAKBPF_HELPER
rm -rf "$T"
exit $NA
