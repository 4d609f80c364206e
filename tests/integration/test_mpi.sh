# shellcheck shell=sh
# --record and peakbpf merge: a real Open MPI job on this host (ranks that
# peak apart, ranks that peak together), a rank killed mid-run, records of
# "two hosts" with clock offsets, and the bad inputs.

TESTS="$TESTS t_mpi_apart t_mpi_together t_record_node t_record_killed t_merge_two_hosts t_merge_bad_inputs"

MPI_RANKS=3
MPI_BLOCK=$((64 * MIB))

# mpi_job SHAPE DIR: mpirun -np 3 peakbpf --record DIR -- workload SHAPE.
# The ranks meet through files (WORKLOAD_SYNC_DIR): apart, each holds its
# block only after the one before freed its own; together, all hold at
# once. No timing: the three peakbpf start-ups may be seconds apart here.
mpi_job() {
	shape=$1 dir=$2
	rm -rf "$dir" "$TMP/mpi-sync"
	mkdir -p "$TMP/mpi-sync"
	mpirun --allow-run-as-root --oversubscribe -np $MPI_RANKS -x WORKLOAD_SYNC_DIR="$TMP/mpi-sync" \
		"$PEAKBPF" -q --record "$dir" -- "$WORKLOAD" -s $MPI_BLOCK -t "$(q 500ms 2s)" "$shape" \
		>"$TMP/mpi.out" 2>&1
}

# merge_num FILE KEY: the first number of KEY in peakbpf merge --json output.
merge_num() {
	grep -o "\"$2\":[0-9]*" "$1" | head -n 1 | cut -d: -f2
}

# The true peak of the sum, from the ranks' own peaks: each rank is its base
# RSS, plus its block while it holds it (private, every page written; the
# workload is static, so the base does not move). Together: the sum of the
# peaks. Apart: one rank's peak plus the others' bases = the sum of peaks
# minus (ranks - 1) blocks. TOL per rank covers a base that moves by a few
# pages (its stack); the interval's width is checked without it.
mpi_check() {
	name=$1 json=$2 truth=$3
	lower=$(merge_num "$json" lower_bytes)
	upper=$(merge_num "$json" upper_bytes)
	sum=$(merge_num "$json" sum_of_peaks_bytes)
	tol=$((MPI_RANKS * 64 * 1024))
	width_max=$(awk -v t="$truth" -v n=$MPI_RANKS 'BEGIN { printf "%d", t * 0.02 + n * 1048576 }')
	if [ -z "$lower" ] || [ -z "$upper" ]; then
		fail "$name: no interval: $(cat "$json")"
		return 1
	fi
	if [ "$lower" -gt $((truth + tol)) ] || [ "$upper" -lt $((truth - tol)) ]; then
		fail "$name: [$(mib "$lower"), $(mib "$upper")] misses the truth $(mib "$truth")"
		return 1
	fi
	if [ $((upper - lower)) -gt "$width_max" ]; then
		fail "$name: [$(mib "$lower"), $(mib "$upper")] is wider than 2 % of $(mib "$truth") + 1 MiB a rank"
		return 1
	fi
	echo "$name: peak of the sum [$(mib "$lower"), $(mib "$upper")], truth $(mib "$truth"), sum of peaks $(mib "$sum")"
	return 0
}

mpi_ready() {
	need mpirun "$1" || return 1
	if ! mpirun --allow-run-as-root --oversubscribe -np 1 true >/dev/null 2>&1; then
		skip "$1: mpirun cannot start a rank here"
		return 1
	fi
	return 0
}

# mpi_merged NAME SHAPE JSON: run the job of SHAPE and merge its records
# into JSON; false (the test failed, or skipped) when it could not.
mpi_merged() {
	mpi_ready "$1" || return 1
	mpi_job "$2" "$TMP/mpi-$2"
	"$PEAKBPF" merge --json "$TMP/mpi-$2" >"$3" 2>"$TMP/merge.err" && return 0
	fail "$1: merge failed: $(cat "$TMP/merge.err") $(cat "$TMP/mpi.out")"
	return 1
}

t_mpi_apart() {
	mpi_merged "mpi apart" rank-apart "$TMP/apart.json" || return
	sum=$(merge_num "$TMP/apart.json" sum_of_peaks_bytes)
	truth=$((sum - (MPI_RANKS - 1) * MPI_BLOCK))
	mpi_check "mpi apart" "$TMP/apart.json" "$truth" || return
	upper=$(merge_num "$TMP/apart.json" upper_bytes)
	# The sum of peaks counts every block at once: clearly above the peak.
	if [ "$sum" -ge $((upper + (MPI_RANKS - 1) * MPI_BLOCK * 9 / 10)) ]; then
		ok "mpi apart: 3 ranks peak one after another: [$(mib "$(merge_num "$TMP/apart.json" lower_bytes)"), $(mib "$upper")] holds $(mib "$truth"); the sum of peaks $(mib "$sum") is $(mib $((sum - upper))) more"
	else
		fail "mpi apart: the sum of peaks $(mib "$sum") is not clearly above the upper bound $(mib "$upper")"
	fi
}

t_mpi_together() {
	mpi_merged "mpi together" rank-together "$TMP/together.json" || return
	truth=$(merge_num "$TMP/together.json" sum_of_peaks_bytes)
	mpi_check "mpi together" "$TMP/together.json" "$truth" || return
	# The job's timeline: its largest bucket is the upper bound (one host).
	if ! "$PEAKBPF" merge --timeline "$TMP/job.csv" "$TMP/mpi-rank-together" >/dev/null 2>"$TMP/merge.err"; then
		fail "mpi together: merge --timeline: $(cat "$TMP/merge.err")"
		return
	fi
	top=$(awk -F, '$1 == "bucket" && $5 > m { m = $5 } END { printf "%d", m }' "$TMP/job.csv")
	if [ "$top" = "$(merge_num "$TMP/together.json" upper_bytes)" ]; then
		ok "mpi together: 3 ranks peak at once: the interval holds the sum of peaks $(mib "$truth"); the job's timeline peaks there too"
	else
		fail "mpi together: the job's timeline peaks at $top, the upper bound is $(merge_num "$TMP/together.json" upper_bytes)"
	fi
}

# Node-level: one peakbpf attached (-p) to a node's three running "ranks",
# each holding 32 MiB: one record, whose peak is the node's sum.
t_record_node() {
	dir=$TMP/node
	rm -rf "$dir"
	pids=""
	for _ in 1 2 3; do
		"$WORKLOAD" -s 32MiB -t "$(q 3s 8s)" steady 2>/dev/null &
		pids="$pids${pids:+,}$!"
	done
	sleep "$(q 0.5 2)"      # every block touched before the attach
	"$PEAKBPF" -q --record "$dir" -p "$pids" -d "$(q 1s 2s)" 2>"$TMP/node.err"
	rc=$?
	wait
	if [ $rc != 0 ] || ! "$PEAKBPF" merge --json "$dir" >"$TMP/node.json" 2>>"$TMP/node.err"; then
		fail "record node: $(cat "$TMP/node.err")"
		return
	fi
	lower=$(merge_num "$TMP/node.json" lower_bytes)
	upper=$(merge_num "$TMP/node.json" upper_bytes)
	if [ "$lower" -ge $((96 * MIB)) ] && [ $((upper - lower)) -le $((3 * MIB)) ]; then
		ok "record node: one peakbpf attached to 3 ranks of 32 MiB: [$(mib "$lower"), $(mib "$upper")]"
	else
		fail "record node: [$lower, $upper] for 3 x 32 MiB"
	fi
}

# A rank's peakbpf killed mid-run (SIGKILL): every window it closed is in its
# file; merge uses them. A cut last line (a kill in the middle of a write)
# is left out with a warning.
t_record_killed() {
	dir=$TMP/killed
	rm -rf "$dir"
	"$PEAKBPF" -q --record "$dir" -- "$WORKLOAD" -s 16MiB -t "$(q 2s 6s)" steady &
	pid=$!
	tries=0
	while [ $tries -lt 300 ] && [ "$(cat "$dir"/*.jsonl 2>/dev/null | wc -l)" -lt 20 ]; do
		sleep 0.1
		tries=$((tries + 1))
	done
	kill -KILL $pid
	wait $pid 2>/dev/null
	sleep "$(q 2 6)"        # the workload holds on alone, then exits
	f=$(ls "$dir"/*.jsonl)
	lines=$(wc -l <"$f")
	if grep -q '"kind":"end"' "$f" || [ "$lines" -lt 20 ]; then
		fail "record killed: $lines lines, or an end line after SIGKILL"
		return
	fi
	if ! "$PEAKBPF" merge --json "$f" >"$TMP/killed.json" 2>"$TMP/killed.err"; then
		fail "record killed: merge failed: $(cat "$TMP/killed.err")"
		return
	fi
	printf '{"w":999,"start_ns":17' >>"$f"
	if ! "$PEAKBPF" merge "$f" >/dev/null 2>"$TMP/cut.err" || ! grep -q "last line is cut" "$TMP/cut.err"; then
		fail "record killed: a cut last line: $(cat "$TMP/cut.err")"
		return
	fi
	peak=$(merge_num "$TMP/killed.json" peak_bytes)
	windows=$(merge_num "$TMP/killed.json" windows)
	if [ "$windows" = $((lines - 1)) ] && [ "$peak" -ge $((16 * MIB)) ]; then
		ok "record killed: $windows whole windows read back, peak $(mib "$peak"); a cut last line warned: $(cat "$TMP/cut.err")"
	else
		fail "record killed: $windows windows of $((lines - 1)) lines, peak $peak"
	fi
}

# record_file FILE HOST PID RANK JOB MAXERR_US OFFSET_MS PEAK_FROM_MS: a
# synthetic record of a rank on HOST whose clock is OFFSET_MS ahead; 10 ms
# windows over 0-1000 ms of its clock; 10 MiB, except 100 MiB over true
# [PEAK_FROM, PEAK_FROM + 100) ms.
record_file() {
	awk -v host="$2" -v pid="$3" -v rank="$4" -v job="$5" -v err="$6" -v off="$7" -v from="$8" '
	function val(t) { return (t >= from && t < from + 100) ? 104857600 : 10485760 }
	BEGIN {
		t0 = 1700000000; ms = 1000000     # seconds: awk prints integers up to 2^31
		printf "{\"kind\":\"peakbpf-record\",\"format\":1,\"version\":\"t\",\"host\":\"%s\",\"pid\":%d,", host, pid
		printf "\"start_ns\":%d000000000,\"interval_ns\":10000000,\"clock\":{\"clock_known\":true,", t0
		printf "\"synced\":true,\"maxerror_us\":%d,\"esterror_us\":1,\"clock_status\":0},", err
		printf "\"job\":{\"job_id\":\"%s\",\"rank\":%d,\"size\":2},\"command\":[\"app\"]}\n", job, rank
		for (w = 0; w < 100; w++) {
			s = w * 10; e = s + 10        # on this host clock, ms
			peak = 0; lo = -1
			for (t = s - off; t < e - off; t++) {
				v = val(t); if (v > peak) peak = v; if (lo < 0 || v < lo) lo = v
			}
			printf "{\"w\":%d,\"start_ns\":%d%03d000000,\"len_ns\":%d,\"peak\":%d,\"peak_ns\":null,", w + 1, t0 + int(s / 1000), s % 1000, 10 * ms + 200000, peak
			printf "\"min\":%d,\"end\":%d,\"exact\":true,\"source\":\"bpf\"}\n", lo, val(e - off)
		}
		printf "{\"kind\":\"end\",\"windows\":100}\n"
	}' >"$1"
}

# Two hosts, A's peak over true [300, 400) ms and B's over [350, 450): the
# truth is 200 MiB. B's clock is 7 ms ahead. With errors that cover the
# offset the interval holds the truth; larger errors widen it. Apart
# (B's over [450, 550): truth 110 MiB), errors past the gap reach the
# sum of peaks, still holding the truth.
t_merge_two_hosts() {
	d=$TMP/two
	mkdir -p "$d"
	res=""
	for case in "5000 350 200" "20000 350 200" "5000 450 110" "80000 450 110"; do
		# shellcheck disable=SC2086 # the case is words
		set -- $case
		record_file "$d/a.1.jsonl" a 1 0 j "$1" 0 300
		record_file "$d/b.1.jsonl" b 1 1 j "$1" 7 "$2"
		if ! "$PEAKBPF" merge --json "$d/a.1.jsonl" "$d/b.1.jsonl" >"$d/m.json" 2>"$d/err"; then
			fail "merge two hosts: $(cat "$d/err")"
			return
		fi
		lo=$(($(merge_num "$d/m.json" lower_bytes) / MIB))
		hi=$(($(merge_num "$d/m.json" upper_bytes) / MIB))
		if [ "$lo" -gt "$3" ] || [ "$hi" -lt "$3" ]; then
			fail "merge two hosts: errors $1 us, B from $2 ms: [$lo, $hi] MiB misses the truth $3 MiB"
			return
		fi
		res="$res [$lo,$hi]"
	done
	# shellcheck disable=SC2086 # the intervals are words
	set -- $res
	if [ "$1" = "[200,200]" ] && [ "$3" = "[110,110]" ] && [ "$4" = "[110,200]" ]; then
		ok "merge two hosts (B 7 ms ahead; errors 5/20 ms, peaks overlapping; 5/80 ms, apart), MiB:$res"
	else
		fail "merge two hosts: intervals$res (expected [200,200] first, [110,110] third, [110,200] last)"
	fi
}

# expect_rc NAME STATUS TEXT ARGS...: merge exits STATUS with TEXT on stderr.
expect_rc() {
	name=$1 want=$2 text=$3
	shift 3
	"$PEAKBPF" merge "$@" >/dev/null 2>"$TMP/bad.err"
	rc=$?
	if [ $rc = "$want" ] && grep -q "$text" "$TMP/bad.err" && [ "$(wc -l <"$TMP/bad.err")" = 1 ]; then
		echo "  $name: exit $rc: $(cat "$TMP/bad.err")"
		return 0
	fi
	fail "merge bad inputs: $name: exit $rc (want $want): $(cat "$TMP/bad.err")"
	return 1
}

t_merge_bad_inputs() {
	d=$TMP/bad
	mkdir -p "$d"
	record_file "$d/a.1.jsonl" a 1 0 j 100 0 300
	record_file "$d/b.1.jsonl" b 1 1 j 100 0 300
	record_file "$d/other.jsonl" c 1 1 k 100 0 300
	record_file "$d/gap.jsonl" c 1 3 j 100 0 300
	echo '{"kind":"window"}' >"$d/not.jsonl"
	head -n 1 "$d/a.1.jsonl" | sed 's/"size":2/"size":1/' >"$d/empty.jsonl"
	expect_rc "different jobs" 4 "different jobs" "$d/a.1.jsonl" "$d/other.jsonl" &&
		expect_rc "missing rank" 5 "rank 1 of 4 has no rank file" "$d/a.1.jsonl" "$d/gap.jsonl" &&
		expect_rc "duplicate host and PID" 6 "host a PID 1 twice" "$d/a.1.jsonl" "$d/b.1.jsonl" "$d/a.1.jsonl" &&
		expect_rc "not a rank file" 3 "not a peakbpf rank file" "$d/not.jsonl" &&
		expect_rc "no window" 3 "no rank file has a window" "$d/empty.jsonl" &&
		expect_rc "no rank file given" 125 "no rank file given" &&
		expect_rc "unknown option" 125 "unknown option" --nope "$d/a.1.jsonl" &&
		ok "merge bad inputs: different jobs (4), a missing rank (5), a duplicate (6), not a record or no window (3), usage (125)"
}
