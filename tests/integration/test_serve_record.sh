# shellcheck shell=sh
# The record of the sum through the helper (issue 24): --timeline,
# --compare-sampler and the library's timeline as nobody, with no
# capability, through a helper on a socket of its own; and a client that
# records and never asks for its changes. Uses test_serve.sh's serve_start,
# serve_stop and AS_NOBODY, test_timeline.sh's CHECK and test_sampler.sh's
# sampler_field.

TESTS="$TESTS t_serve_record_timeline t_serve_record_sampler t_serve_record_python
 t_serve_record_nodrain t_serve_record_version"

# record_dir: a directory nobody may write its files in ($RECDIR).
record_dir() {
	RECDIR=$(mktemp -d) || return 1
	chmod 777 "$RECDIR"
}

# via_helper NAME RECORD: the run went through the helper, with no note
# that it was passed over.
via_helper() {
	grep -q '"bpf_load":"helper"' "$2" && ! grep -q 'helper: not used' "$2" && return 0
	fail "$1: not through the helper: $(cat "$2")"
	return 1
}

# As nobody: a 64 MiB spike held 5 ms, windows every 250 ms, and the ladder
# (children of 256, 128 and 64 MiB at once). The trace's plotted maximum
# and its peak instant are the exact figure to the page; each window is an
# instant; the ladder's holders have lines labelled "PID COMM" (the helper
# names them, HP_MM_IDENTITY) that reach their own peaks exactly.
t_serve_record_timeline() {
	name="serve: --timeline through the helper"
	need python3 "$name" || return
	serve_start "$name" || return
	record_dir || { serve_stop; fail "$name: mktemp"; return; }
	# shellcheck disable=SC2086 # AS_NOBODY is words
	$AS_NOBODY "$PEAKBPF" -q -o "$RECDIR/spike.json" -i 250ms --helper="$SOCK" \
		--timeline "$RECDIR/spike-trace.json" -- "$WORKLOAD" -s 64MiB -t 5ms spike 2>"$TMP/srt.err"
	rc1=$?
	# shellcheck disable=SC2086
	$AS_NOBODY "$PEAKBPF" -q -o "$RECDIR/ladder.json" --helper="$SOCK" \
		--timeline "$RECDIR/ladder.csv" -- "$WORKLOAD" -s 64MiB -n 3 -t 200ms ladder 2>>"$TMP/srt.err"
	rc2=$?
	serve_stop
	if [ "$rc1" != 0 ] || [ "$rc2" != 0 ]; then
		fail "$name: exit $rc1/$rc2: $(cat "$TMP/srt.err" "$TMP/serve.log")"
	elif via_helper "$name" "$RECDIR/spike.json" && via_helper "$name" "$RECDIR/ladder.json" &&
		! inexact "$name" "$RECDIR/spike.json"; then
		serve_timeline_check "$name"
	fi
	rm -rf "$RECDIR"
}

serve_timeline_check() {
	peak=$(tail -n 1 "$RECDIR/spike.json" | grep -o '"peak_bytes":[0-9]*' | head -n 1 | cut -d: -f2)
	windows=$(grep -c '"record":"window"' "$RECDIR/spike.json")
	page=$(page_size)
	if ! out=$(python3 "$CHECK" json "$RECDIR/spike-trace.json" 2>&1); then
		fail "$1: not a valid trace: $out"
		return
	fi
	# shellcheck disable=SC2086 # the check's fields, as words
	set -- "$1" $out
	if ! lines=$(python3 "$CHECK" holders-csv "$RECDIR/ladder.csv" "$RECDIR/ladder.json" 2>&1); then
		fail "$1: ladder's lines: $lines"
	elif [ "$(($2 / page))" = "$((peak / page))" ] && [ "$3" = "$peak" ] && [ "$4" = "$windows" ] &&
		[ "$windows" -ge 1 ]; then
		ok "$1: as nobody, the 5 ms spike's plotted max $(mib "$2") = exact peak $(mib "$peak"), $4 window instants; ladder lines for $lines reach their own peaks"
	else
		fail "$1: plotted max $2, peak instant $3, exact peak $peak; $4 window instants of $windows"
	fi
}

# --compare-sampler as nobody through the helper, on a 32 MiB spike held
# 5 ms: a 1 ms sampler always gets within 5 %, the real /proc sampler's
# reading is inside the modelled range, and no change was lost.
t_serve_record_sampler() {
	name="serve: --compare-sampler through the helper"
	serve_start "$name" || return
	record_dir || { serve_stop; fail "$name: mktemp"; return; }
	# shellcheck disable=SC2086
	$AS_NOBODY "$PEAKBPF" -q -o "$RECDIR/cs.json" --helper="$SOCK" --compare-sampler 100ms,1ms -- \
		"$WORKLOAD" -s 32MiB -t 5ms flash 2>"$TMP/srs.err"
	rc=$?
	serve_stop
	p1=$(sampler_field "$RECDIR/cs.json" 0.001 p_within_5pct)
	p100=$(sampler_field "$RECDIR/cs.json" 0.1 p_within_5pct)
	within=$(json_raw "$RECDIR/cs.json" within_computed_range)
	drops=$(json_num "$RECDIR/cs.json" record_drops)
	if [ "$rc" != 0 ]; then
		fail "$name: exit $rc: $(cat "$TMP/srs.err" "$TMP/serve.log")"
	elif ! via_helper "$name" "$RECDIR/cs.json" || inexact "$name" "$RECDIR/cs.json"; then
		:
	elif [ "$p1" = 1 ] && [ "$within" = true ] && [ "$drops" = 0 ] && [ -n "$p100" ]; then
		ok "$name: as nobody, 1 ms within 5 % always, 100 ms in $p100 of phases; the real sampler inside the model's range; 0 changes dropped"
	else
		fail "$name: p(1ms) $p1, p(100ms) $p100, within $within, drops $drops: $(cat "$RECDIR/cs.json")"
	fi
	rm -rf "$RECDIR"
}

# The Python package's timeline (libpeakbpf's, polled by a thread) as
# nobody through the helper: a 96 MiB bytearray filled in a block, a mark
# between; the session is the helper's bpf source, exact, the timeline's
# maximum is the block's peak to the byte, the mark is in it, none dropped.
t_serve_record_python() {
	name="serve: Python's timeline through the helper"
	need python3 "$name" || return
	[ -e "$OUTPUT/libpeakbpf.so.0" ] || { skip "$name: $OUTPUT/libpeakbpf.so.0 not built"; return; }
	serve_start "$name" || return
	record_dir || { serve_stop; fail "$name: mktemp"; return; }
	cat >"$RECDIR/tl.py" <<'PY'
import sys
import peakbpf
with peakbpf.measure(timeline=sys.argv[1]) as m:
    b = bytearray(96 << 20)
    for i in range(0, len(b), 4096):
        b[i] = 1
    m.mark("filled")
    del b
print(m.source, m.exact, m.peak_bytes, m.timeline_error, m.timeline_drops)
PY
	# shellcheck disable=SC2086,SC2154 # AS_NOBODY is words; run.sh sets here
	out=$($AS_NOBODY env PYTHONPATH="$here/../../python" PEAKBPF_LIBRARY="$OUTPUT/libpeakbpf.so.0" \
		PEAKBPF_HELPER="$SOCK" python3 "$RECDIR/tl.py" "$RECDIR/py.csv" 2>&1)
	rc=$?
	serve_stop
	# shellcheck disable=SC2086 # the script's fields, as words
	set -- $out
	tl_max=$(awk -F, '$1 == "bucket" && $5 > m { m = $5 } END { print m + 0 }' "$RECDIR/py.csv" 2>/dev/null)
	if [ "$rc" = 0 ] && [ "$1" = bpf ] && [ "$2" = True ] && [ "$3" = "$tl_max" ] && [ "$4" = None ] &&
		[ "$5" = 0 ] && grep -q '^mark,.*,filled' "$RECDIR/py.csv"; then
		ok "$name: as nobody, exact, the timeline's maximum = the block's peak $(mib "$3"), its mark in it, 0 dropped"
	elif [ "$rc" = 0 ] && [ "$1" = bpf ] && [ "$2" = False ]; then
		skip "$name: the run is not exact here"
	else
		fail "$name: exit $rc: $out; timeline max $tl_max: $(cat "$TMP/serve.log")"
	fi
	rm -rf "$RECDIR"
}

# A client that records and never asks for its changes, while its child
# faults and frees 32 MiB for 6 s (millions of changes): its queue in the
# helper stops at its bound (HP_QUEUE_MAX) and counts drops for its tree
# alone; the helper's RSS stays within the queues' and the ring's bounds;
# meanwhile another nobody's run through the same helper is exact, its
# timeline's maximum is its peak, and it lost no change.
t_serve_record_nodrain() {
	name="serve: a recording client that never drains"
	[ -x "$HOSTILE" ] || { skip "$name: $HOSTILE not built (make all; the VMs ship none)"; return; }
	serve_start "$name" || return
	record_dir || { serve_stop; fail "$name: mktemp"; return; }
	rss0=$(helper_rss_kib)
	# shellcheck disable=SC2086
	$AS_NOBODY "$HOSTILE" nodrain "$SOCK" 6 >"$TMP/nd.out" 2>&1 &
	nd=$!
	sleep 2
	# shellcheck disable=SC2086
	$AS_NOBODY "$PEAKBPF" -q -o "$RECDIR/nd.json" --helper="$SOCK" --compare-sampler 10ms \
		--timeline "$RECDIR/nd.csv" -- "$WORKLOAD" -s 64MiB -n 2 -t 200ms concurrent 2>"$TMP/nd.err"
	rc=$?
	wait "$nd"
	ndrc=$?
	hwm=$(awk '/^VmHWM:/ { print $2 }' "/proc/$SERVE_PID/status")
	serve_stop
	drops=$(sed -n 's/.*drops \([0-9]*\).*/\1/p' "$TMP/nd.out")
	peak=$(json_num "$RECDIR/nd.json" peak_bytes)
	tl_max=$(awk -F, '$1 == "bucket" && $5 > m { m = $5 } END { print m + 0 }' "$RECDIR/nd.csv")
	other_drops=$(json_num "$RECDIR/nd.json" record_drops)
	grew=$((hwm - rss0))
	# Two queues of 2.5 MiB, the ring's 2 MiB mapped twice, and slack.
	if [ "$rc" != 0 ] || [ "$ndrc" != 0 ]; then
		fail "$name: exit $rc, the non-drainer's $ndrc: $(cat "$TMP/nd.err" "$TMP/nd.out" "$TMP/serve.log")"
	elif ! via_helper "$name" "$RECDIR/nd.json" || inexact "$name" "$RECDIR/nd.json"; then
		:
	elif [ "${drops:-0}" -gt 0 ] && [ "$tl_max" = "$peak" ] && [ "$other_drops" = 0 ] &&
		[ "$grew" -lt $((14 * 1024)) ]; then
		ok "$name: its tree dropped $drops changes past its queue, the helper's RSS grew $grew KiB at most; the other client exact, timeline max = peak $(mib "$peak"), 0 dropped"
		check_growth "$name: the other client" "$RECDIR/nd.json" $((128 << 20))
	else
		fail "$name: non-drainer: $(cat "$TMP/nd.out"); other: timeline max $tl_max, peak $peak, drops $other_drops; helper RSS $rss0 -> HWM $hwm KiB"
	fi
	rm -rf "$RECDIR"
}

# Another protocol version is told so in words: a version 2 request (its
# size) gets a reply of its size and version, with the reason in its why.
t_serve_record_version() {
	name="serve: a client of protocol version 2"
	[ -x "$HOSTILE" ] || { skip "$name: $HOSTILE not built (make all; the VMs ship none)"; return; }
	serve_start "$name" || return
	# shellcheck disable=SC2086
	out=$($AS_NOBODY "$HOSTILE" oldversion "$SOCK" 1 2>&1)
	rc=$?
	serve_stop
	case $out in
	*"version 2 err -93 why the helper speaks protocol version 4"*)
		[ "$rc" = 0 ] && { ok "$name: told in its own format: ${out#*why }"; return; } ;;
	esac
	fail "$name: exit $rc: $out"
}
