# shellcheck shell=bash
# SPDX-License-Identifier: MIT
# What bench.sh and tools/bench/stacks-cost.sh share: arithmetic, the rows
# of the result table, and bpfstat (the bench's BPF side, a coprocess:
# BPFSTAT its path, TMP for its errors).

log() { printf '  %s\n' "$*" >&2; }
# calc EXPR: floating-point arithmetic via awk.
calc() { awk "BEGIN { printf \"%.6f\", $* }"; }
# stats N...: "median min max" of the numbers.
stats() {
	printf '%s\n' "$@" | sort -g | awk '{ a[NR] = $1 } END {
		m = NR % 2 ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2
		printf "%.9g %.9g %.9g", m, a[1], a[NR] }'
}

# Other load during a run, in CPUs: the busy time of all CPUs (/proc/stat:
# user nice system irq softirq steal) minus the CPU time of the run's own
# processes (the shell's children times), divided by the run's wall time.
# shellcheck disable=SC2034 # the includers divide by it
HZ=$(getconf CLK_TCK)
busy_ticks() { local u n sy irq sirq st; read -r _ u n sy _ _ irq sirq st _ </proc/stat; echo $((u + n + sy + irq + sirq + st)); }
# times must run in this shell, not in a $(...) subshell (whose children times are 0).
times_file() { times >"$TMP/times.$1"; }
child_cpu() { awk 'NR == 2 { split($1, a, "m"); split($2, b, "m"); print a[1] * 60 + a[2] + b[1] * 60 + b[2] }' "$TMP/times.$1"; }

# Rows of the result table: section, measurement, figure, target, result, note;
# VALUE/UNIT are the figure as a number for the JSON.
R_SEC=() R_NAME=() R_FIG=() R_TGT=() R_RES=() R_VAL=() R_UNIT=() R_NOTE=()
row() {
	R_SEC+=("$1") R_NAME+=("$2") R_FIG+=("$3") R_TGT+=("$4") R_RES+=("$5")
	R_VAL+=("$6") R_UNIT+=("$7") R_NOTE+=("$8")
}
na_row() { row "$1" "$2" "n/a" "$3" "n/a" null "" "$4"; }
# A measurement that should have worked and did not: n/a in the table, and
# the bench exits 1 at the end, so CI notices (targets not met do not fail it).
FAILURES=()
failed() { FAILURES+=("$1"); }

# bpfstat: bs_start [-n], then bs CMD (its answer in BS_REPLY), bs_stop.
BS_PID=""
bs_start() {  # [-n]: as bpfstat's
	coproc BS { exec "$BPFSTAT" "$@" 2>"$TMP/bpfstat.err"; }
	# bash set BS_PID; keep the fds, which it unsets when the coprocess ends
	BS_IN=${BS[1]} BS_OUT=${BS[0]}
	read -r -t 20 -u "$BS_OUT" BS_REPLY || BS_REPLY="error: bpfstat did not answer"
	[ "$BS_REPLY" = ready ] || { log "bpfstat: $BS_REPLY $(cat "$TMP/bpfstat.err" 2>/dev/null)"; BS_PID=""; return 1; }
}
bs() {
	echo "$*" >&"$BS_IN"
	read -r -t 20 -u "$BS_OUT" BS_REPLY || BS_REPLY="error: bpfstat did not answer"
	case $BS_REPLY in error*) log "bpfstat $*: $BS_REPLY"; return 1 ;; esac
}
bs_stop() {
	[ -n "$BS_PID" ] || return 0
	echo quit >&"$BS_IN"
	wait "$BS_PID" 2>/dev/null
	BS_PID=""
}
