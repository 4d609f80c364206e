#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The node agent's cost (issue 34, step 4; docs/performance.md, "The node
# agent's cost"): make bench's agent rows, or make bench-agent alone. Prints
# one table and writes it as $OUTPUT/bench/agent.txt. Every figure is measured
# in this run; one that could not be is "n/a" with the reason.
#
#   tools/bench/agent-cost.sh
#
# Needs root, the built .output/peakbpf, .output/workload and
# .output/bench/bpfstat, curl, and cgroup v1's memory hierarchy or cgroup v2.
#
# How each figure is measured:
#  [1] wall: `peakbpf agent` (every process of the node tracked, its own BPF,
#      a loopback port and a temp spool) started before the arm and stopped
#      after it, against the same with no agent; rounds whose order
#      alternates, each round's (agent - alone) / alone. The fault loop
#      (workload faults) runs on one CPU, as make bench's; the build is
#      make -j2 of bench.mk's bench-build-subset into a scratch OUTPUT, one
#      untimed build first. This shell's clock around each command.
#  [2] CPU per scrape: the agent's on-CPU time, every thread's
#      /proc/PID/task/*/schedstat (ns), around N curl scrapes one after
#      another, divided by N; with few cgroups and with AC_CGROUPS cgroups
#      of one sleeping process each under a test parent. RSS: VmHWM.
#  [3] per event: bpfstat holds the kernel's BPF run-time statistics on and
#      its empty rss_stat program (the floor) attached after the agent's;
#      around a fault loop in one of the test cgroups, cgsum_rss's ns per
#      run ÷ the floor's, with 10 cgroups and with AC_CGROUPS.
set -u
export LC_ALL=C

OUTPUT=${OUTPUT:-.output}
OUT=$OUTPUT/bench
PEAKBPF=$OUTPUT/peakbpf
WORKLOAD=$OUTPUT/workload
BPFSTAT=$OUT/bpfstat
: "${AC_SIZE:=256MiB}" "${AC_ROUNDS:=5}" "${AC_BUILD_ROUNDS:=4}" "${AC_BUILD_SET:=cli}"
: "${AC_CGROUPS:=1000}" "${AC_SCRAPES:=100}" "${AC_EV_REPS:=3}"
# The agent's --max-series: above the test cgroups and the host's own, so
# every test cgroup has series (at most 4096, the default: the kernel's slots).
AC_MAX_SERIES=$((AC_CGROUPS + 500))

die() { echo "agent-cost: $*" >&2; exit 1; }
log() { printf '  %s\n' "$*" >&2; }
calc() { awk "BEGIN { printf \"%.6f\", $* }"; }
stats() {  # "median min max"
	printf '%s\n' "$@" | sort -g | awk '{ a[NR] = $1 } END {
		m = NR % 2 ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2
		printf "%.9g %.9g %.9g", m, a[1], a[NR] }'
}
verdict() { awk -v v="$1" -v t="$2" 'BEGIN { print (v <= t) ? "met" : "not met" }'; }

[ "$(id -u)" = 0 ] || die "needs root (BPF programs, cgroups); try: sudo make bench-agent"
for f in "$PEAKBPF" "$WORKLOAD" "$BPFSTAT"; do
	[ -x "$f" ] || die "$f is missing; build it with: make bench-tools all"
done
type -P curl >/dev/null || die "curl is not installed (apt-get install curl)"
if [ -d /sys/fs/cgroup/memory ]; then CGROOT=/sys/fs/cgroup/memory; else CGROOT=/sys/fs/cgroup; fi
mkdir -p "$OUT" || die "cannot create $OUT"
TMP=$(mktemp -d /tmp/peakbpf-agentcost.XXXXXX) || die "mktemp failed"
CGP=$CGROOT/peakbpf-agentcost-$$
PORT=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])') ||
	die "no free loopback port"
URL=http://127.0.0.1:$PORT/metrics
FAULT_CPU=$(taskset -cp $$ 2>/dev/null | grep -o '[0-9]*$')
if [ -n "$FAULT_CPU" ]; then ON_CPU=(taskset -c "$FAULT_CPU"); else ON_CPU=(); fi
AG_PID="" BS_PID="" SLEEPERS=() NCG=0

rm_cgroups() {
	local i
	[ ${#SLEEPERS[@]} -eq 0 ] || { kill "${SLEEPERS[@]}" 2>/dev/null; wait "${SLEEPERS[@]}" 2>/dev/null; }
	SLEEPERS=()
	for ((i = NCG - 1; i >= 0; i--)); do rmdir "$CGP/cg-$i" 2>/dev/null; done
	NCG=0
}
# shellcheck disable=SC2317 # run by the trap
cleanup() {
	rm_cgroups
	[ -d "$CGP" ] && rmdir "$CGP" 2>/dev/null
	agent_stop
	[ -n "$BS_PID" ] && kill "$BS_PID" 2>/dev/null
	rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

agent_start() {
	local i
	mkdir -p "$TMP/spool" || return 1
	"$PEAKBPF" agent --listen "127.0.0.1:$PORT" --spool "$TMP/spool" \
		--max-series "$AC_MAX_SERIES" >"$TMP/agent.log" 2>&1 &
	AG_PID=$!
	for ((i = 0; i < 200; i++)); do
		curl -fs -o /dev/null "$URL" && return 0
		kill -0 "$AG_PID" 2>/dev/null || break
		sleep 0.1
	done
	log "the agent did not answer: $(head -n 1 "$TMP/agent.log")"
	agent_stop
	return 1
}
agent_stop() {
	[ -n "$AG_PID" ] || return 0
	kill "$AG_PID" 2>/dev/null
	wait "$AG_PID" 2>/dev/null
	AG_PID=""
}
# cg_to N: make cgroups until there are N, one sleeping process in each.
cg_to() {
	local d
	mkdir -p "$CGP" || return 1
	while [ "$NCG" -lt "$1" ]; do
		d=$CGP/cg-$NCG
		mkdir "$d" || return 1
		NCG=$((NCG + 1))
		sleep 3600 &
		SLEEPERS+=($!)
		echo $! >"$d/cgroup.procs" || return 1
	done
}
oncpu_ns() {  # every thread's on-CPU time of PID, ns
	awk '{ s += $1 } END { printf "%d", s }' /proc/"$1"/task/*/schedstat
}

# Rows: name, figure, target, result, note.
ROWS=()
row() { ROWS+=("$(printf '%s\t%s\t%s\t%s\t%s' "$@")"); }
na() { row "$1" "n/a" "$2" "n/a" "$3"; }
FAILED=0

# timed CMD...: seconds by this shell's clock.
timed() {
	local t0=$EPOCHREALTIME
	"$@" >/dev/null 2>>"$TMP/cmd.err" || return 1
	calc "$EPOCHREALTIME - $t0"
}
# shellcheck disable=SC2317 # run by ab
fault_loop() { "${ON_CPU[@]}" "$WORKLOAD" -s "$AC_SIZE" faults; }
build() {
	rm -rf "$TMP/build"
	env -u MAKEFLAGS -u MAKELEVEL -u MFLAGS make -s -j2 OUTPUT="$TMP/build" \
		BENCH_BUILD_SET="$AC_BUILD_SET" bench-build-subset
}
# ab KEY ROUNDS CMD...: alternating rounds alone/with the agent; the % of
# each round in AB[KEY], the alone seconds in AB[KEY.s].
declare -A AB
ab() {
	local key=$1 rounds=$2 r a b
	shift 2
	for ((r = 0; r < rounds; r++)); do
		if ((r % 2)); then
			agent_start || return 1
			b=$(timed "$@") || return 1
			agent_stop
			a=$(timed "$@") || return 1
		else
			a=$(timed "$@") || return 1
			agent_start || return 1
			b=$(timed "$@") || return 1
			agent_stop
		fi
		AB[$key]+="$(calc "($b - $a) / $a * 100") "
		AB[$key.s]+="$a "
		log "$key round $((r + 1)): alone $(printf '%.2f' "$a") s, with the agent $(printf '%.2f' "$b") s"
	done
}
ab_rows() {  # KEY NAME TARGET NOTE
	local m lo hi n sm
	n=$(wc -w <<<"${AB[$1]:-}")
	# shellcheck disable=SC2086 # one word a round
	read -r m lo hi <<<"$(stats ${AB[$1]})"
	# shellcheck disable=SC2086
	read -r sm _ <<<"$(stats ${AB[$1.s]})"
	row "$2 (% over alone), median of $n rounds" "$(printf '%+.2f %% (%+.2f–%+.2f)' "$m" "$lo" "$hi")" \
		"≤ $3 %" "$(verdict "$m" "$3")" "$4; alone $(printf '%.2f' "$sm") s (median)"
}

# ---------------------------------------------------------------- [1] wall
log "agent cost: wall, $AC_ROUNDS rounds of workload -s $AC_SIZE faults (CPU ${FAULT_CPU:-any})"
if ab fault "$AC_ROUNDS" fault_loop; then
	ab_rows fault "fault loop (workload -s $AC_SIZE faults) with peakbpf agent" 10 \
		"every process of the node tracked; order alternating"
else
	na "fault loop with peakbpf agent" "≤ 10 %" "a run failed: $(tail -n 1 "$TMP/cmd.err" 2>/dev/null)"
	FAILED=1
fi
if [ "$AC_BUILD_ROUNDS" -gt 0 ]; then
	log "agent cost: build, $AC_BUILD_ROUNDS rounds of make -j2 bench-build-subset ($AC_BUILD_SET), one untimed first"
	if build >/dev/null 2>>"$TMP/cmd.err" && ab build "$AC_BUILD_ROUNDS" build; then
		ab_rows build "make -j2 of the build subset ($AC_BUILD_SET) with peakbpf agent" 2 \
			"bench.mk's bench-build-subset into a scratch OUTPUT, after one untimed build"
	else
		na "make -j2 of the build subset with peakbpf agent" "≤ 2 %" \
			"a build failed: $(tail -n 1 "$TMP/cmd.err" 2>/dev/null)"
		FAILED=1
	fi
	rm -rf "$TMP/build"
fi

# ------------------------------------------------- [2] scrapes, [3] per event
# scrape_cost NAME: the agent's CPU per scrape over AC_SCRAPES scrapes.
scrape_cost() {
	local i t0 t1 w0 w1
	curl -fs -o /dev/null "$URL" || return 1
	t0=$(oncpu_ns "$AG_PID") w0=$EPOCHREALTIME
	for ((i = 0; i < AC_SCRAPES; i++)); do curl -fs -o /dev/null "$URL" || return 1; done
	t1=$(oncpu_ns "$AG_PID") w1=$EPOCHREALTIME
	row "agent CPU per scrape, $1 (ms)" "$(calc "($t1 - $t0) / $AC_SCRAPES / 1e6" | xargs printf '%.3f ms')" "" "" \
		"schedstat of every thread around $AC_SCRAPES curl scrapes; $(calc "($w1 - $w0) * 1000 / $AC_SCRAPES" | xargs printf '%.1f') ms wall each; $(curl -fs "$URL" | grep -c '^peakbpf_cgroup_rss_peak_bytes{') cgroups with series (--max-series $AC_MAX_SERIES)"
}
# per_event NCG: the ratio of cgsum_rss's ns per run to the floor's, the
# median of AC_EV_REPS fault loops in cg-0; in EV[NCG].
declare -A EV
per_event() {
	local n=$1 r s1 s2 rs=() f c t
	for ((r = 0; r < AC_EV_REPS; r++)); do
		echo "snap-agent $AG_PID" >&"${BS[1]}"; read -r -t 20 -u "${BS[0]}" s1 || return 1
		sh -c 'echo $$ >"$0/cgroup.procs" && exec "$@"' "$CGP/cg-0" "${ON_CPU[@]}" \
			"$WORKLOAD" -s "$AC_SIZE" faults >/dev/null 2>>"$TMP/cmd.err" || return 1
		echo "snap-agent $AG_PID" >&"${BS[1]}"; read -r -t 20 -u "${BS[0]}" s2 || return 1
		# shellcheck disable=SC2086 # the fields of two snap lines
		set -- $s1 $s2
		if [ "$1" != snap-agent ] || [ "$9" -lt 1 ] || [ "$((${16} - $7))" -le 0 ]; then
			log "snap: $s1 / $s2"
			return 1
		fi
		f=$(calc "(${11} - $2) / (${12} - $3)") t=$(calc "(${13} - $4) / (${14} - $5)")
		c=$(calc "(${16} - $7) / (${17} - $8)")
		rs+=("$(calc "$c / $f")")
		log "per event, $n cgroups: floor $(printf '%.1f' "$f") ns, cgsum_rss $(printf '%.1f' "$c") ns, tracker $(printf '%.1f' "$t") ns ($((${17} - $8)) runs)"
		EV[$n.c]+="$c " EV[$n.f]+="$f "
	done
	EV[$n]=$(stats "${rs[@]}")
}
ev_row() {
	local m lo hi cm fm
	read -r m lo hi <<<"${EV[$1]}"
	# shellcheck disable=SC2086
	read -r cm _ <<<"$(stats ${EV[$1.c]})"
	# shellcheck disable=SC2086
	read -r fm _ <<<"$(stats ${EV[$1.f]})"
	row "cgsum_rss per event, $1 cgroups (× the empty program)" "$(printf '%.2f × (%.2f–%.2f)' "$m" "$lo" "$hi")" "" "" \
		"median of $AC_EV_REPS fault loops of $AC_SIZE in one test cgroup; cgsum_rss $(printf '%.1f' "$cm") ns, floor $(printf '%.1f' "$fm") ns (medians); floor attached after the agent"
}

log "agent cost: scrapes and per event, 10 and $AC_CGROUPS cgroups under $CGP"
coproc BS { exec "$BPFSTAT" 2>"$TMP/bpfstat.err"; }
read -r -t 20 -u "${BS[0]}" reply || reply="no answer"
if [ "$reply" != ready ]; then
	na "agent CPU per scrape, RSS, per event" "" "bpfstat: $reply $(head -n 1 "$TMP/bpfstat.err")"
	FAILED=1
elif ! agent_start; then
	na "agent CPU per scrape, RSS, per event" "" "the agent did not start: $(head -n 1 "$TMP/agent.log")"
	FAILED=1
else
	echo attach >&"${BS[1]}"; read -r -t 20 -u "${BS[0]}" reply
	if ! cg_to 10; then
		na "cgroups" "" "could not make 10 cgroups under $CGP"
		FAILED=1
	else
		sleep 1.5   # the agent's series follow within a second
		scrape_cost "10 test cgroups" || { na "agent CPU per scrape" "" "a scrape failed"; FAILED=1; }
		if per_event 10; then ev_row 10; else na "cgsum_rss per event, 10 cgroups" "" "a window failed"; FAILED=1; fi
		if cg_to "$AC_CGROUPS"; then
			sleep 1.5
			scrape_cost "$AC_CGROUPS test cgroups" || { na "agent CPU per scrape" "" "a scrape failed"; FAILED=1; }
			row "agent RSS (VmHWM) with $AC_CGROUPS cgroups" \
				"$(awk '/^VmHWM/ { printf "%.2f MiB", $2 / 1024 }' "/proc/$AG_PID/status")" "" "" \
				"its peak since it started; VmRSS now $(awk '/^VmRSS/ { printf "%.2f MiB", $2 / 1024 }' "/proc/$AG_PID/status")"
			if per_event "$AC_CGROUPS"; then
				ev_row "$AC_CGROUPS"
				read -r m10 _ <<<"${EV[10]}"
				read -r mN _ <<<"${EV[$AC_CGROUPS]}"
				g=$(calc "($mN / $m10 - 1) * 100")
				# shellcheck disable=SC2086 # one word a loop
				ns=$(calc "($(stats ${EV[$AC_CGROUPS.c]} | cut -d' ' -f1) / $(stats ${EV[10.c]} | cut -d' ' -f1) - 1) * 100")
				row "cgsum_rss per event, $AC_CGROUPS vs 10 cgroups (the ratio's change)" "$(printf '%+.1f %%' "$g")" "≤ 10 %" \
					"$(verdict "$g" 10)" "O(1): one lookup of the address space's chain whatever the number of cgroups; its ns alone $(printf '%+.1f %%' "$ns") (the floor moves with its JIT position, docs/performance.md \"Attach order\")"
			else
				na "cgsum_rss per event, $AC_CGROUPS cgroups" "" "a window failed"
				FAILED=1
			fi
		else
			na "$AC_CGROUPS cgroups" "" "could not make them under $CGP"
			FAILED=1
		fi
		n=$NCG
		rm_cgroups
		rmdir "$CGP" 2>/dev/null
		sleep 2.5   # the agent drops removed cgroups' series within a second
		left=$(curl -fs "$URL" | grep -c "peakbpf-agentcost-$$")
		[ -d "$CGP" ] && left="$left, the test parent"
		row "left behind after removing the $n cgroups" "$left series" "0" \
			"$([ "$left" = 0 ] && echo met || echo "not met")" "the agent's scrape 2.5 s after rmdir; the test parent removed"
	fi
	agent_stop
fi
echo quit >&"${BS[1]}"
wait "$BS_PID" 2>/dev/null
BS_PID=""

# ---------------------------------------------------------------- the table
{
	printf 'peakbpf agent cost (tools/bench/agent-cost.sh), %s, kernel %s, load %s\n' \
		"$(date -u '+%Y-%m-%d %H:%M UTC')" "$(uname -r)" "$(cut -d' ' -f1-3 /proc/loadavg)"
	printf '%s\n' "${ROWS[@]}" | awk -F'\t' '{ printf "%-72s %-26s %-8s %-8s %s\n", $1, $2, $3, $4, $5 }'
} | tee "$OUT/agent.txt"
exit "$FAILED"
