#!/bin/sh
# What the SPANK plugin costs, on the cluster of tools/slurm/cluster.sh (two
# nodes in network namespaces where it can, else one): prints a table.
#   OUTPUT=.output tools/slurm/bench.sh [ROUNDS]       (make slurm-bench)
# - a step's start-up: srun -n 1 true, wall time, --peakbpf=off and on in
#   alternate pairs (medians), and the plugin's own start_cost_ns (open,
#   add the tasks, start: the time the tasks are held before exec);
# - slurmstepd's CPU for a 5 s step, off and on, one node and two (two:
#   the record thread that cuts 100 windows a second);
# - a node that runs no job: slurmd's CPU over 10 s with the plugin in
#   plugstack.conf.
set -u
OUTPUT=${OUTPUT:-.output}
ROUNDS=${1:-9}
HERE=$(cd "$(dirname "$0")" && pwd)
PLUGIN=$(realpath "$OUTPUT/slurm/peakbpf.so")
[ -f "$PLUGIN" ] || { echo "slurm-bench: no $OUTPUT/slurm/peakbpf.so: make all (needs libslurm-dev)" >&2; exit 1; }
TMP=$(mktemp -d /tmp/peakbpf-slurm-bench.XXXXXX)
chmod 755 "$TMP"
trap '"$HERE/cluster.sh" stop "$TMP/c"; rm -rf "$TMP"' EXIT INT TERM
NODES=2 "$HERE/cluster.sh" start "$TMP/c" "optional $PLUGIN default=off dir=$TMP/rec" >"$TMP/start" 2>&1 ||
	{ "$HERE/cluster.sh" stop "$TMP/c"; rm -rf "$TMP/c"
	  NODES=1 "$HERE/cluster.sh" start "$TMP/c" "optional $PLUGIN default=off dir=$TMP/rec" >"$TMP/start" 2>&1; } ||
	{ echo "slurm-bench: the cluster did not start: $(tail -n 2 "$TMP/start")" >&2; exit 1; }
. "$TMP/c/env"
NODES=$(cat "$TMP/c/nodes")

median() { sort -n | awk '{ v[NR] = $1 } END { if (NR) print v[int((NR + 1) / 2)]; else print "-" }'; }
now_ms() { date +%s%N | cut -c1-13; }

for _ in $(seq "$ROUNDS"); do
	for mode in off on; do
		t0=$(now_ms)
		srun -N 1 -n 1 --peakbpf=$mode true 2>/dev/null
		echo $(( $(now_ms) - t0 )) >>"$TMP/wall.$mode"
	done
done
cost=$(cat "$TMP"/rec/*/*.json 2>/dev/null | grep -o '"start_cost_ns":[0-9]*' |
	cut -d: -f2 | awk '{ print int($1 / 1000000) }' | median)

# slurmstepd's CPU (utime + stime, clock ticks) or own peak memory (VmHWM,
# KiB) when its task ends: the task's parent is the step's slurmstepd.
# shellcheck disable=SC2016
step_cpu() {	# NODES_OF_STEP MODE
	srun -N "$1" -n "$1" --peakbpf="$2" sh -c \
		'sleep 5; awk "{ print \$14 + \$15 }" /proc/$PPID/stat' 2>/dev/null | median
}
# shellcheck disable=SC2016
step_hwm() {	# MODE
	srun -N 1 -n 1 --peakbpf="$1" sh -c 'awk "/^VmHWM/ { print \$2 }" /proc/$PPID/status' 2>/dev/null
}
hz=$(getconf CLK_TCK)
cpu1_off=$(step_cpu 1 off); cpu1_on=$(step_cpu 1 on)
cpu2_off=-; cpu2_on=-
if [ "$NODES" -ge 2 ]; then cpu2_off=$(step_cpu 2 off); cpu2_on=$(step_cpu 2 on); fi

idle() {
	pid=$(cat "$TMP"/c/slurmd.*.pid | head -n 1)
	a=$(awk '{ print $14 + $15 }' "/proc/$pid/stat"); sleep 10
	b=$(awk '{ print $14 + $15 }' "/proc/$pid/stat"); echo $((b - a))
}

echo "| what | --peakbpf=off | --peakbpf (on) |"
echo "|---|---|---|"
echo "| srun -n 1 true, wall (median of $ROUNDS, ms) | $(median <"$TMP/wall.off") | $(median <"$TMP/wall.on") |"
echo "| the plugin's start-up in slurmstepd (open, add, start; median, ms) | - | $cost |"
echo "| slurmstepd CPU, a 5 s step on 1 node (1/$hz s) | $cpu1_off | $cpu1_on |"
echo "| slurmstepd CPU, a 5 s step on 2 nodes, per node (1/$hz s) | $cpu2_off | $cpu2_on |"
echo "| slurmstepd's own peak memory, a 1-task step (VmHWM, KiB) | $(step_hwm off) | $(step_hwm on) |"
echo "| slurmd CPU over 10 s, no job (1/$hz s) | - | $(idle) |"
