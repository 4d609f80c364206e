#!/bin/sh
# The SPANK plugin (src/slurm) on a real Slurm of two nodes on this host (tools/slurm/cluster.sh):
# each test submits a job of known memory shape (tools/workload.c) and checks
# the plugin's figures against the truth: each step's peak within 2 % + 1 MiB
# per task of it, exact where the kernel is 6.2+. Prints skip and why where
# Slurm cannot start. ONLY="t_a t_b" runs some; KEEP=1 keeps the cluster's
# directory (logs, job files) for a look. Run by make slurm-test.
set -u

OUTPUT=${OUTPUT:-.output}
PLUGIN=$OUTPUT/slurm/peakbpf.so
WORKLOAD=$OUTPUT/workload
HERE=$(cd "$(dirname "$0")" && pwd)
CLUSTER=$HERE/../../tools/slurm/cluster.sh
MIB=1048576
FAILS=0
PASSES=0
TABLE=""

pass() { echo "  PASS     $*"; PASSES=$((PASSES + 1)); }
fail() { echo "  FAIL     $*"; FAILS=$((FAILS + 1)); }
skip_all() { echo "  SKIP     slurm tests: $*"; exit 0; }
mib() { awk -v b="$1" 'BEGIN { printf "%.1f MiB", b / 1048576 }'; }

[ -f "$PLUGIN" ] || skip_all "no $PLUGIN (Slurm's <slurm/spank.h> was missing at build: libslurm-dev)"
[ "$(id -u)" = 0 ] || skip_all "needs root to run slurmctld and slurmd"

TMP=$(mktemp -d /tmp/peakbpf-slurm.XXXXXX)
chmod 755 "$TMP"
cleanup() { "$CLUSTER" stop "$TMP/cluster"; [ -n "${KEEP:-}" ] && echo "  kept $TMP" || rm -rf "$TMP"; }
trap cleanup EXIT INT TERM
RECORDS=$TMP/records
# Two nodes (each slurmd in a network namespace of its own), else one.
NODES=2
NODES=2 "$CLUSTER" start "$TMP/cluster" \
	"optional $(realpath "$PLUGIN") default=on dir=$RECORDS" >"$TMP/start.out" 2>&1
rc=$?
if [ $rc = 77 ] && grep -q "network namespaces\|bridge" "$TMP/start.out"; then
	echo "  NOTE     one node only: $(tail -n 1 "$TMP/start.out")"
	"$CLUSTER" stop "$TMP/cluster"
	rm -rf "$TMP/cluster"
	NODES=1
	NODES=1 "$CLUSTER" start "$TMP/cluster" \
		"optional $(realpath "$PLUGIN") default=on dir=$RECORDS" >"$TMP/start.out" 2>&1
	rc=$?
fi
if [ $rc = 77 ]; then
	skip_all "$(tail -n 1 "$TMP/start.out")"
elif [ $rc != 0 ]; then
	echo "  FAIL     the cluster did not start: $(tail -n 3 "$TMP/start.out")"
	exit 1
fi
. "$TMP/cluster/env"
KMAJ=$(uname -r | cut -d. -f1)
KMIN=$(uname -r | cut -d. -f2)
EXACT_KERNEL=0
[ "$KMAJ" -gt 6 ] || { [ "$KMAJ" = 6 ] && [ "$KMIN" -ge 2 ]; } && EXACT_KERNEL=1

# job_num JOB STEP KEY: a number of STEP in the job's JSON (DIR/JOB.json).
step_num() {
	python3 -c 'import json, sys
doc = json.load(open(sys.argv[1]))
for s in doc["steps"]:
    if s["step"] == sys.argv[2]:
        v = s
        for k in sys.argv[3].split("."):
            v = v[k] if not k.isdigit() else v[int(k)]
        print("null" if v is None else (str(v).lower() if isinstance(v, bool) else v))' \
		"$RECORDS/$1.json" "$2" "$3" 2>/dev/null
}

# sacct_field JOB FIELD: the job's (not a step's) field, once in the database.
sacct_field() {
	n=0
	while [ $n -lt 25 ]; do
		v=$(timeout 10 sacct -n -P -X -j "$1" -o "$2" 2>/dev/null | head -n 1)
		[ -n "$v" ] && { echo "$v"; return; }
		sleep 0.2; n=$((n + 1))
	done
}
sacct_step_maxrss() {
	v=$(timeout 10 sacct -n -P --noconvert -j "$1.$2" -o MaxRSS 2>/dev/null | head -n 1)
	[ -n "$v" ] && mib "$v" || echo "not sampled"
}
# job_named NAME: the last job of that name, once sacct knows it.
job_named() {
	n=0
	while [ $n -lt 25 ]; do
		v=$(timeout 10 sacct -n -X -P -o JobID --name="$1" 2>/dev/null | tail -n 1)
		[ -n "$v" ] && { echo "$v"; return; }
		sleep 0.2; n=$((n + 1))
	done
}

# check_step NAME JOB STEP TRUTH TASKS: the step's peak is within 2 % + 1 MiB
# a task of TRUTH, and not below it (the tasks' own base RSS is what is over).
check_step() {
	name=$1 job=$2 step=$3 truth=$4 tasks=$5
	peak=$(step_num "$job" "$step" nodes.0.peak_bytes)
	exact=$(step_num "$job" "$step" nodes.0.exact)
	if [ -z "$peak" ] || [ "$peak" = null ]; then
		fail "$name: step $step of job $job not measured: $(cat "$RECORDS/$job.json" 2>&1)"
		return 1
	fi
	tol=$(awk -v t="$truth" -v n="$tasks" 'BEGIN { printf "%d", t * 0.02 + n * 1048576 }')
	if [ "$peak" -lt "$truth" ] || [ "$peak" -gt $((truth + tol)) ]; then
		fail "$name: step $step peak $(mib "$peak") not within [$(mib "$truth"), +$(mib "$tol")]"
		return 1
	fi
	if [ $EXACT_KERNEL = 1 ] && [ "$exact" != true ]; then
		fail "$name: step $step not exact on $(uname -r)"
		return 1
	fi
	maxrss=$(sacct_step_maxrss "$job" "$step")
	TABLE="$TABLE
| $name | $job.$step | $(mib "$truth") | $(mib "$peak") ($exact) | ${maxrss:-?} |"
	return 0
}

sync_dir() { rm -rf "$TMP/sync"; mkdir -p "$TMP/sync"; chmod 777 "$TMP/sync"; echo "$TMP/sync"; }

# A 3-task srun whose tasks hold 64 MiB one after another: the step's peak is
# one block (and the three bases), not three.
t_srun_apart() {
	timeout 120 srun --peakbpf -J apart -n 3 --export=ALL,WORKLOAD_SYNC_DIR="$(sync_dir)" \
		"$WORKLOAD" -s 64MiB -t 500ms rank-apart >"$TMP/apart.out" 2>&1
	job=$(job_named apart)
	check_step "3 tasks apart" "$job" 0 $((64 * MIB)) 3 || return
	grep -q "^peakbpf: step 0 on .*: peak .* (exact, bpf)" "$TMP/apart.out" ||
		{ fail "srun apart: no peakbpf line in the step's stderr: $(cat "$TMP/apart.out")"; return; }
	ac=$(sacct_field "$job" AdminComment)
	case "$ac" in
	"peakbpf: step 0 "*"--mem="*) ;;
	*) fail "srun apart: AdminComment is '$ac'"; return ;;
	esac
	pass "srun -n 3 apart: peak $(mib "$(step_num "$job" 0 nodes.0.peak_bytes)") (one block of 64 MiB), AdminComment '$ac'"
}

# The same tasks holding their blocks together: three blocks.
t_srun_together() {
	timeout 120 srun --peakbpf=quiet -J together -n 3 --export=ALL,WORKLOAD_SYNC_DIR="$(sync_dir)" \
		"$WORKLOAD" -s 64MiB -t 500ms rank-together >"$TMP/together.out" 2>&1
	job=$(job_named together)
	check_step "3 tasks together" "$job" 0 $((3 * 64 * MIB)) 3 || return
	if grep -q "^peakbpf:" "$TMP/together.out"; then
		fail "srun --peakbpf=quiet printed a line"; return
	fi
	pass "srun -n 3 together: peak $(mib "$(step_num "$job" 0 nodes.0.peak_bytes)") (three blocks), quiet"
}

# An sbatch script with two steps (no --peakbpf: the site's default=on).
t_sbatch_two_steps() {
	cat >"$TMP/two.sh" <<EOF
#!/bin/sh
srun -n 1 $WORKLOAD -s 32MiB -t 300ms spike
WORKLOAD_SYNC_DIR=$(sync_dir) srun -n 2 $WORKLOAD -s 48MiB -t 300ms rank-together
EOF
	job=$(timeout 120 sbatch --parsable -n 2 -J two -o "$TMP/two.out" -W "$TMP/two.sh")

	check_step "sbatch step 0" "$job" 0 $((32 * MIB)) 1 || return
	check_step "sbatch step 1" "$job" 1 $((96 * MIB)) 2 || return
	[ "$(step_num "$job" batch nodes.0.tasks)" = 1 ] ||
		{ fail "sbatch: the batch step was not measured"; return; }
	ac=$(sacct_field "$job" AdminComment)
	case "$ac" in
	*"step 0 "*"step 1 "*"step batch "*) ;;
	*"step batch "*"step 0 "*"step 1 "*) ;;
	*) fail "sbatch: AdminComment '$ac' lacks a step"; return ;;
	esac
	mem=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["suggestion"]["mem_bytes"])' \
		"$RECORDS/$job.json")
	[ "$mem" -ge $((96 * MIB * 110 / 100)) ] ||
		{ fail "sbatch: suggestion $(mib "$mem") below step 1's peak + 10 %"; return; }
	pass "sbatch two steps: AdminComment '$ac'"
}

# A step killed at its memory limit (jobacct_gather's OverMemoryKill, sampled
# every second): the plugin still records its peak, and that it was killed.
t_killed_by_limit() {
	timeout 120 srun --peakbpf -J oom -n 1 --mem=100M --acctg-freq=1 \
		"$WORKLOAD" -s 400MiB -t 20s steady >"$TMP/oom.out" 2>&1
	job=$(job_named oom)
	sig=$(step_num "$job" 0 killed_by_signal)
	peak=$(step_num "$job" 0 nodes.0.peak_bytes)
	if [ "$sig" = null ] || [ -z "$sig" ]; then
		fail "killed by limit: the plugin did not say so: $(cat "$TMP/oom.out")"; return
	fi
	[ "$peak" -gt $((100 * MIB)) ] ||
		{ fail "killed by limit: peak $(mib "$peak") not above the 100 MiB limit"; return; }
	grep -q "^peakbpf: step 0 .*killed by signal $sig" "$TMP/oom.out" ||
		{ fail "killed by limit: no line: $(cat "$TMP/oom.out")"; return; }
	TABLE="$TABLE
| killed at --mem=100M | $job.0 | up to 400 MiB | $(mib "$peak") (killed, signal $sig) | $(sacct_step_maxrss "$job" 0) |"
	pass "killed at its 100 MiB limit: peak $(mib "$peak"), signal $sig, $(grep -o 'at [0-9]*% of its [^;]*' "$TMP/oom.out")"
}

# A node where BPF cannot load (slurmd without CAP_BPF): the job runs, and the
# plugin says which fallback measured it and that it is not exact.
t_no_bpf() {
	if ! "$CLUSTER" slurmd "$TMP/cluster" nobpf >"$TMP/nobpf.out" 2>&1; then
		echo "  SKIP     no bpf: $(tail -n 1 "$TMP/nobpf.out")"
		"$CLUSTER" slurmd "$TMP/cluster" >/dev/null 2>&1
		return
	fi
	timeout 120 srun --peakbpf -J nobpf -n 1 "$WORKLOAD" -s 64MiB -t 1s steady >"$TMP/nobpf-job.out" 2>&1
	rc=$?
	"$CLUSTER" slurmd "$TMP/cluster" >/dev/null 2>&1
	job=$(job_named nobpf)
	[ $rc = 0 ] || { fail "no bpf: the job failed ($rc): $(cat "$TMP/nobpf-job.out")"; return; }
	src=$(step_num "$job" 0 nodes.0.source)
	case "$src" in
	bpf | "" | null) fail "no bpf: source '$src': $(cat "$TMP/nobpf-job.out")"; return ;;
	esac
	grep -q "^peakbpf: step 0 .*(not exact, $src)" "$TMP/nobpf-job.out" ||
		{ fail "no bpf: the line does not say so: $(cat "$TMP/nobpf-job.out")"; return; }
	pass "no bpf on the node: the job ran; measured by $src, not exact: $(grep '^peakbpf' "$TMP/nobpf-job.out" | cut -c1-90)"
}

# A step on two nodes whose tasks peak apart, then together: the nodes'
# records merged, as peakbpf merge does, bound the peak of the sum across
# nodes, where [largest node, sum of nodes] would be twice as wide apart.
two_nodes() {
	name=$1 shape=$2 truth=$3
	if [ "$NODES" -lt 2 ]; then
		echo "  SKIP     $name: one node only (no network namespaces here)"
		return 1
	fi
	timeout 120 srun --peakbpf=quiet -J "$shape-2n" -N 2 -n 2 --export=ALL,WORKLOAD_SYNC_DIR="$(sync_dir)" \
		"$WORKLOAD" -s 64MiB -t 500ms "$shape" >"$TMP/$shape-2n.out" 2>&1
	job=$(job_named "$shape-2n")
	lower=$(step_num "$job" 0 peak_of_sum.lower_bytes)
	upper=$(step_num "$job" 0 peak_of_sum.upper_bytes)
	sum=$(step_num "$job" 0 sum_of_peaks_bytes)
	from=$(step_num "$job" 0 peak_of_sum.from)
	if [ -z "$upper" ] || [ "$upper" = null ] || [ "$lower" = null ]; then
		fail "$name: no interval: $(cat "$RECORDS/$job.json" "$TMP/$shape-2n.out" 2>&1)"
		return 1
	fi
	tol=$(awk -v t="$truth" 'BEGIN { printf "%d", t * 0.02 + 2 * 1048576 }')
	# lower is a value the job held: within 2 % + 1 MiB a task of the truth.
	# upper cannot be below the truth, and is below the sum of the nodes'
	# peaks only where the records tell the nodes apart: when one node's
	# task grows in the same 10 ms window in which the other's frees (apart,
	# the second starts within a few ms), it counts both (docs/slurm.md).
	if [ "$lower" -lt "$truth" ] || [ "$lower" -gt $((truth + tol)) ] || [ "$upper" -lt "$lower" ]; then
		fail "$name: [$(mib "$lower"), $(mib "$upper")]: lower not within [$(mib "$truth"), +$(mib "$tol")] ($from)"
		return 1
	fi
	if [ "$upper" -gt $((truth + tol)) ] && [ "$upper" -ge "$sum" ] && [ "$sum" -gt $((truth + tol)) ]; then
		fail "$name: [$(mib "$lower"), $(mib "$upper")]: the records did not narrow the sum of peaks $(mib "$sum")"
		return 1
	fi
	TABLE="$TABLE
| $name | $job.0 (2 nodes) | $(mib "$truth") | [$(mib "$lower"), $(mib "$upper")]; sum of peaks $(mib "$sum") | $(sacct_step_maxrss "$job" 0) |"
	pass "$name: [$(mib "$lower"), $(mib "$upper")] from $from; the sum of the nodes' peaks says $(mib "$sum")"
}
t_two_nodes_apart() { two_nodes "2 nodes apart" rank-apart $((64 * MIB)); }
t_two_nodes_together() { two_nodes "2 nodes together" rank-together $((128 * MIB)); }

# sbatch --peakbpf: the batch step and the srun inside it (which gets the
# option from the environment) each print their line in the job's output.
t_sbatch_print() {
	job=$(timeout 120 sbatch --parsable --peakbpf -J print -o "$TMP/print.out" -W \
		--wrap "srun $WORKLOAD -s 16MiB -t 100ms spike")
	check_step "sbatch --peakbpf" "$job" 0 $((16 * MIB)) 1 || return
	grep -q "^peakbpf: step 0 on .*(exact, bpf)" "$TMP/print.out" &&
		grep -q "^peakbpf: step batch on " "$TMP/print.out" ||
		{ fail "sbatch --peakbpf: the lines are not in the job's output: $(cat "$TMP/print.out")"; return; }
	pass "sbatch --peakbpf: the batch step's line and its srun's, in the job's output"
}

# salloc --peakbpf: the srun inside the allocation measures and prints.
t_salloc() {
	timeout 120 salloc --peakbpf -J salloc -n 1 srun "$WORKLOAD" -s 16MiB -t 100ms spike \
		>"$TMP/salloc.out" 2>&1
	job=$(job_named salloc)
	check_step "salloc --peakbpf" "$job" 0 $((16 * MIB)) 1 || return
	grep -q "^peakbpf: step 0 on .*(exact, bpf)" "$TMP/salloc.out" ||
		{ fail "salloc --peakbpf: no line: $(cat "$TMP/salloc.out")"; return; }
	pass "salloc --peakbpf: its srun's step measured, the line printed"
}

# A directory the plugin cannot write: the job still runs and exits 0, the
# line still says the peak, and slurmd's log says why there is no file.
t_unwritable_dir() {
	cp "$TMP/cluster/plugstack.conf" "$TMP/plugstack.saved"
	echo "optional $(realpath "$PLUGIN") default=on dir=/proc/peakbpf-cannot-be-made" \
		>"$TMP/cluster/plugstack.conf"
	timeout 60 srun --peakbpf -J baddir -n 1 "$WORKLOAD" -s 16MiB -t 100ms spike >"$TMP/baddir.out" 2>&1
	rc=$?
	cp "$TMP/plugstack.saved" "$TMP/cluster/plugstack.conf"
	[ $rc = 0 ] || { fail "unwritable dir: the job failed ($rc): $(cat "$TMP/baddir.out")"; return; }
	grep -q "^peakbpf: step 0 on .*peak" "$TMP/baddir.out" ||
		{ fail "unwritable dir: no line: $(cat "$TMP/baddir.out")"; return; }
	grep -q "peakbpf: writing the job's record under /proc/peakbpf-cannot-be-made" "$TMP"/cluster/log/slurmd.*.log ||
		{ fail "unwritable dir: slurmd's log does not say why"; return; }
	pass "a directory it cannot write: the job ran (exit 0), printed its peak, and the log says why no file"
}

# helper=SOCKET with peakbpf serve running: a one-node step goes through it
# (its one load serves every step), exact all the same, and starts faster.
t_helper() {
	PEAKBPF=$OUTPUT/peakbpf
	[ -x "$PEAKBPF" ] || { echo "  SKIP     helper: no $PEAKBPF"; return; }
	"$PEAKBPF" serve --socket "$TMP/helper.sock" 2>"$TMP/helper.log" &
	helper=$!
	n=0
	while [ ! -S "$TMP/helper.sock" ] && [ $n -lt 50 ]; do sleep 0.1; n=$((n + 1)); done
	cp "$TMP/cluster/plugstack.conf" "$TMP/plugstack.saved"
	echo "optional $(realpath "$PLUGIN") default=on dir=$RECORDS helper=$TMP/helper.sock" \
		>"$TMP/cluster/plugstack.conf"
	# the first step the helper serves loads its programs; the next do not
	timeout 60 srun -J helper0 -n 1 true >/dev/null 2>&1
	timeout 120 srun --peakbpf -J helper -n 3 --export=ALL,WORKLOAD_SYNC_DIR="$(sync_dir)" \
		"$WORKLOAD" -s 64MiB -t 500ms rank-together >"$TMP/helper.out" 2>&1
	cp "$TMP/plugstack.saved" "$TMP/cluster/plugstack.conf"
	kill "$helper"
	wait "$helper" 2>/dev/null
	job=$(job_named helper)
	check_step "3 tasks together, helper" "$job" 0 $((3 * 64 * MIB)) 3 || return
	file=$RECORDS/$job/0.$(step_num "$job" 0 nodes.0.node).json
	grep -q '"scope":"[^"]*via helper ' "$file" ||
		{ fail "helper: the step was not measured through the helper: $(head -c 600 "$file")"; return; }
	cost=$(grep -o '"start_cost_ns":[0-9]*' "$file" | cut -d: -f2)
	first=$(grep -o '"start_cost_ns":[0-9]*' "$RECORDS/$(job_named helper0)"/0.*.json | cut -d: -f2)
	pass "helper: exact through peakbpf serve; start-up $((first / 1000000)) ms for its first step, $((cost / 1000000)) ms for the next"
}

# dir= writable by job users (an admin's choice: mode 1777), and a user
# (nobody) plants links for the next jobs: JOB as a link to a directory of
# root's, JOB.json.tmp and JOB.json as links to a file of root's, a JOB
# directory of its own. Each job still runs and prints its peak; root's
# file and directory are untouched; the plugin refused the JOB it did not
# own (slurmd's log says why) and replaced the links it could.
t_planted_links() {
	mkdir -p "$RECORDS"
	chmod 1777 "$RECORDS"
	victim=$TMP/victim.txt vdir=$TMP/victim.d
	echo precious >"$victim"
	mkdir -p "$vdir"
	last=$(timeout 10 sacct -n -X -P -o JobID 2>/dev/null | sed 's/[^0-9].*//' | sort -n | tail -n 1)
	a=$((last + 1)) b=$((last + 2))
	as_nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; }
	as_nobody ln -s "$vdir" "$RECORDS/$a"
	as_nobody ln -s "$victim" "$RECORDS/$a.json.tmp"
	as_nobody ln -s "$victim" "$RECORDS/$b.json"
	as_nobody ln -s "$victim" "$RECORDS/$b.json.tmp"
	timeout 60 srun --peakbpf -J planted-a -n 1 "$WORKLOAD" -s 8MiB -t 100ms spike >"$TMP/pa.out" 2>&1
	rca=$?
	timeout 60 srun --peakbpf -J planted-b -n 1 "$WORKLOAD" -s 8MiB -t 100ms spike >"$TMP/pb.out" 2>&1
	rcb=$?
	chmod 755 "$RECORDS"
	ja=$(job_named planted-a) jb=$(job_named planted-b)
	said="jobs $ja/$jb (planted for $a/$b), exits $rca/$rcb, victim '$(cat "$victim")', victim dir: '$(ls "$vdir")'"
	if [ "$rca" != 0 ] || [ "$rcb" != 0 ] || [ "$(cat "$victim")" != precious ] || [ -n "$(ls "$vdir")" ]; then
		fail "planted links: $said"
	elif [ "$ja" = "$a" ] && ! grep -q "writing the job's record under $RECORDS: Not a directory" \
		"$TMP"/cluster/log/slurmd.*.log; then
		fail "planted links: slurmd's log does not say why job $ja has no record: $said"
	elif [ "$jb" = "$b" ] && { [ -L "$RECORDS/$b.json" ] || ! grep -q '"steps"' "$RECORDS/$b.json"; }; then
		fail "planted links: job $jb's JSON is not its own: $said"
	else
		pass "planted links: root's file and directory untouched, job $ja refused its planted JOB, job $jb's links replaced: $said"
	fi
	rm -rf "$RECORDS/$a" "$RECORDS/$a.json.tmp"
}

# --peakbpf=off: nothing measured, nothing written.
t_off() {
	timeout 60 srun --peakbpf=off -J off -n 1 "$WORKLOAD" -s 8MiB -t 100ms spike >"$TMP/off.out" 2>&1
	job=$(job_named off)
	[ ! -e "$RECORDS/$job.json" ] && ! grep -q "^peakbpf" "$TMP/off.out" ||
		{ fail "--peakbpf=off measured job $job"; return; }
	timeout 60 srun --peakbpf=bogus -n 1 true >"$TMP/bogus.out" 2>&1 &&
		{ fail "--peakbpf=bogus was accepted"; return; }
	grep -q "use --peakbpf, --peakbpf=quiet or --peakbpf=off" "$TMP/bogus.out" ||
		{ fail "--peakbpf=bogus: $(cat "$TMP/bogus.out")"; return; }
	pass "--peakbpf=off measures nothing; --peakbpf=bogus is refused at submission"
}

ALL="t_srun_apart t_srun_together t_sbatch_two_steps t_sbatch_print t_salloc t_killed_by_limit t_two_nodes_apart
	t_two_nodes_together t_helper t_off t_unwritable_dir t_no_bpf t_planted_links"
for t in ${ONLY:-$ALL}; do
	$t
done
echo "  slurm: the plugin against sacct's MaxRSS (sampled every 30 s; 1 s for the killed job):"
echo "| job | step | truth (blocks) | peakbpf (exact) | sacct MaxRSS |"
echo "|---|---|---|---|---|$TABLE"
echo "  slurm: $PASSES passed, $FAILS failed"
[ $FAILS = 0 ]
