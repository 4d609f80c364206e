# shellcheck shell=sh
# Honest on every path (issue 26): the headline is the tree's or says it is
# not, a run with a lost window is not exact and passes no budget, and what
# has no address space is refused.

TESTS="$TESTS t_honest_nonroot_headline t_honest_attach_headline t_honest_helper_unreachable
 t_honest_lost_window_budget t_honest_no_address_space t_honest_unique_cause_cached"

HONEST_NOBODY="setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all"

# A user without BPF and without the helper: the shared cgroup's all-time
# peak (the container's) was the headline of `true`, and --max failed it.
t_honest_nonroot_headline() {
	need setpriv "honest: non-root headline" || return
	# shellcheck disable=SC2086 # HONEST_NOBODY is words
	PEAKBPF_HELPER=/nonexistent/peakbpf.sock $HONEST_NOBODY "$PEAKBPF" --json --max 100MiB -- true \
		>"$TMP/honest1.json" 2>"$TMP/honest1.err"
	rc=$?
	src=$(json_raw "$TMP/honest1.json" source)
	case $src in
	'"cgroup-v1"' | '"cgroup-v2"')
		if grep -q '"exclusive":true' "$TMP/honest1.json"; then
			ok "honest: non-root: the tree's own cgroup is the headline (exclusive), exit $rc"
		else
			fail "honest: non-root: a shared cgroup is the headline: $(cat "$TMP/honest1.json")"
		fi
		return ;;
	esac
	shared=$(grep -c '"exclusive":false' "$TMP/honest1.json")
	marked=$(grep -o '"comparable":false' "$TMP/honest1.json" | wc -l)
	proc=none
	[ "$src" = '"proc"' ] && proc=$(json_num "$TMP/honest1.json" peak_bytes)
	if [ "$rc" = 0 ] && { [ "$src" = '"proc"' ] || [ "$src" = '"rusage"' ]; } &&
		{ [ "$shared" = 0 ] || [ "$marked" -ge 1 ]; }; then
		ok "honest: non-root 'true': headline $src (proc figure: ${proc:-not measured} B), shared cgroup not comparable ($marked), --max passes"
	else
		fail "honest: non-root 'true': exit $rc, headline $src, shared $shared marked $marked: $(cat "$TMP/honest1.err" "$TMP/honest1.json")"
	fi
}

# Attach mode as a user without BPF: the cgroup is never the tree's.
t_honest_attach_headline() {
	need setpriv "honest: attach headline" || return
	# shellcheck disable=SC2086
	$HONEST_NOBODY "$WORKLOAD" -s 16MiB -t 3s steady >/dev/null &
	wl=$!
	sleep 0.3
	# shellcheck disable=SC2086
	PEAKBPF_HELPER=/nonexistent/peakbpf.sock $HONEST_NOBODY "$PEAKBPF" -q --json -p "$wl" -d 500ms \
		>"$TMP/honest2.json" 2>"$TMP/honest2.err"
	rc=$?
	kill "$wl" 2>/dev/null
	wait "$wl" 2>/dev/null
	src=$(json_raw "$TMP/honest2.json" source)
	peak=$(json_num "$TMP/honest2.json" peak_bytes)
	cg=$(grep -o '"source":"cgroup-v[12]"' "$TMP/honest2.json" | wc -l)
	marked=$(grep -o '"comparable":false' "$TMP/honest2.json" | wc -l)
	if [ "$rc" = 0 ] && [ "$src" = '"proc"' ] && [ "${peak:-0}" -ge $((16 * MIB)) ] && [ "$cg" = "$marked" ]; then
		ok "honest: attach as nobody: headline proc $(mib "$peak"); $cg cgroup figure(s), each not comparable"
	else
		fail "honest: attach as nobody: exit $rc, headline $src, peak $peak, cgroup $cg marked $marked: $(cat "$TMP/honest2.err" "$TMP/honest2.json")"
	fi
}

# --helper named but not there: an error, not a silent fallback.
t_honest_helper_unreachable() {
	need setpriv "honest: helper unreachable" || return
	# shellcheck disable=SC2086
	$HONEST_NOBODY "$PEAKBPF" -q --helper=/nonexistent.sock -- true >/dev/null 2>"$TMP/honest3.err"
	rc=$?
	if [ "$rc" = 123 ] && grep -q "cannot reach the helper at /nonexistent.sock" "$TMP/honest3.err"; then
		ok "honest: --helper=/nonexistent.sock: exit 123, says why"
	else
		fail "honest: --helper unreachable: exit $rc: $(cat "$TMP/honest3.err")"
	fi
}

# The helper dies at 0.7 s of a run closing a window every 500 ms: the
# windows after it have no figure. The run was called exact and passed
# --max on window 1's 3 MiB; now it is not exact and the budget refuses it.
t_honest_lost_window_budget() {
	need setpriv "honest: lost window" || return
	serve_start "honest: lost window" || return
	# shellcheck disable=SC2086
	$HONEST_NOBODY "$PEAKBPF" --json -i 500ms --max 32MiB --helper="$SOCK" -- \
		"$WORKLOAD" -n 1 -s 64MiB -t "$(q 1500ms 4s)" late-children >"$TMP/honest4.json" 2>"$TMP/honest4.err" &
	client=$!
	wait_trees 1
	sleep "$(q 0.7 2)"
	kill "$SERVE_PID"
	wait "$SERVE_PID" 2>/dev/null
	wait "$client"
	rc=$?
	rm -rf "$SERVE_DIR"
	run=$(grep '"record":"run"' "$TMP/honest4.json")
	if [ "$rc" = 125 ] && echo "$run" | grep -q '"exact":false' &&
		echo "$run" | grep -q '"windows_not_measured":"' &&
		grep -q "budget 32.0 MiB cannot be checked" "$TMP/honest4.err"; then
		ok "honest: helper killed mid-run: windows $(echo "$run" | grep -o '"windows_not_measured":"[^"]*"' | head -n 1 | cut -d'"' -f4) not measured, run not exact, --max refuses (exit 125)"
	else
		fail "honest: lost window: exit $rc: $(cat "$TMP/honest4.err") $run"
	fi
}

# -p of a kernel thread or of a zombie: nothing to measure, an error.
t_honest_no_address_space() {
	"$PEAKBPF" -q -p 2 -d 200ms >/dev/null 2>"$TMP/honest5.err"
	rc_k=$?
	sh -c 'sleep 0.05 & exec sleep 60' &   # killed below; outlives peakbpf's load
	parent=$!
	sleep 0.5
	# Its child, exited and not reaped (from /proc: busybox ps has no --ppid).
	zombie=""
	for st in /proc/[0-9]*/stat; do
		# shellcheck disable=SC2046 # "PID (sleep) Z PPID ...": words
		set -- $(cat "$st" 2>/dev/null)
		[ "${4:-}" = "$parent" ] && [ "${3:-}" = Z ] && zombie=$1
	done
	"$PEAKBPF" -q -p "${zombie:-0}" -d 200ms >/dev/null 2>"$TMP/honest5z.err"
	rc_z=$?
	kill "$parent" 2>/dev/null
	wait "$parent" 2>/dev/null
	if [ "$rc_k" = 125 ] && grep -q "kernel thread" "$TMP/honest5.err" &&
		[ "$rc_z" = 125 ] && grep -q "zombie" "$TMP/honest5z.err"; then
		ok "honest: -p 2 (kthreadd) and -p of a zombie: exit 125, no address space"
	else
		fail "honest: no address space: kthread exit $rc_k, zombie $zombie exit $rc_z: $(cat "$TMP/honest5.err" "$TMP/honest5z.err")"
	fi
}

# One process, no fork, mapping files another cgroup has cached (python3's
# modules, read here first): summed RSS's excess over unique memory is
# those pages, never "fork-shared" (the line said so for import numpy).
t_honest_unique_cause_cached() {
	py=/usr/bin/python3
	[ -x "$py" ] || py=$(command -v python3) || { skip "honest: unique cause: no python3"; return; }
	code='import json, email.mime.text, http.client, decimal, asyncio, xml.dom.minidom'
	"$py" -c "$code"    # cached, and charged to this cgroup
	"$PEAKBPF" --json -o "$TMP/honest6.json" -- "$py" -c "$code" 2>"$TMP/honest6.err"
	u=$(grep -o '"summed_excess":{[^}]*}' "$TMP/honest6.json")
	if [ -z "$u" ] && grep -q '"unique":{"source":"unavailable"' "$TMP/honest6.json"; then
		skip "honest: unique cause: unique memory not measured here ($(grep -o '"unique":{[^}]*}' "$TMP/honest6.json" | grep -o '"inexact_reason":"[^"]*"'))"
		return
	fi
	if echo "$u" | grep -q '"mapped_by_several_bytes":0,' &&
		echo "$u" | grep -q '"dominant":"file pages cached by another cgroup or mapped by several"' &&
		! grep -q "fork-shared" "$TMP/honest6.err" &&
		{ ! grep -q "pages more than" "$TMP/honest6.err" ||
			grep -q "mostly file pages cached by another cgroup" "$TMP/honest6.err"; }; then
		ok "honest: one python3 process: summed RSS's excess is file pages cached elsewhere: $u"
	else
		fail "honest: unique cause: $u: $(cat "$TMP/honest6.err")"
	fi
}
