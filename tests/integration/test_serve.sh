# shellcheck shell=sh
# peakbpf serve: the privileged helper, started here as root on a socket of
# its own; its clients run as nobody with no capabilities at all.

TESTS="$TESTS t_serve_nobody_exact t_serve_refuses_root_pid t_serve_client_killed
 t_serve_two_trees t_serve_limits t_serve_socket_activation t_serve_resident_default
 t_serve_pidns_holders"

AS_NOBODY="setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all"

# serve_start NAME [ARG...]: a helper on $SOCK (in a directory nobody can
# reach), with ARGs; false, with NAME skipped or failed, if it cannot run.
serve_start() {
	need setpriv "$1" || return 1
	SERVE_DIR=$(mktemp -d) || { fail "$1: mktemp"; return 1; }
	chmod 755 "$SERVE_DIR"
	SOCK=$SERVE_DIR/peakbpf.sock
	name=$1
	shift
	"$PEAKBPF" serve --socket "$SOCK" -v "$@" 2>"$TMP/serve.log" &
	SERVE_PID=$!
	i=0
	while ! "$PEAKBPF" serve --status --socket "$SOCK" >/dev/null 2>&1; do
		i=$((i + 1))
		if [ "$i" -gt "$(q 100 600)" ] || ! kill -0 "$SERVE_PID" 2>/dev/null; then
			fail "$name: the helper did not start: $(cat "$TMP/serve.log")"
			serve_stop
			return 1
		fi
		sleep 0.1
	done
}

# wait_socket PATH: until a socket is bound there (10 s at most).
wait_socket() {
	i=0
	while [ ! -S "$1" ] && [ "$i" -lt 100 ]; do
		sleep 0.1
		i=$((i + 1))
	done
}

serve_stop() {
	kill "$SERVE_PID" 2>/dev/null
	wait "$SERVE_PID" 2>/dev/null
	rm -rf "$SERVE_DIR"
}

# serve_maps: BPF maps the helper holds open now (its one load's).
serve_maps() {
	n=0
	for fd in /proc/"$SERVE_PID"/fd/*; do
		case $(readlink "$fd" 2>/dev/null) in
		*bpf-map*) n=$((n + 1)) ;;
		esac
	done
	echo "$n"
}

# status_num KEY: a number from peakbpf serve --status.
status_num() {
	"$PEAKBPF" serve --status --socket "$SOCK" 2>/dev/null | grep "^$1 " | head -n 1 | cut -d' ' -f2
}

# stray_entries: map entries of no open tree, "mm M task T thread H".
stray_entries() {
	"$PEAKBPF" serve --status --socket "$SOCK" 2>/dev/null | sed -n 's/^stray_entries //p'
}

# wait_trees N: until the helper has N trees open (false if it never does).
wait_trees() {
	i=0
	while [ "$(status_num trees)" != "$1" ]; do
		i=$((i + 1))
		[ "$i" -gt "$(q 200 600)" ] && return 1
		sleep 0.05
	done
}

# tree_mms SLOT: the mm entries the helper's status lists for tree SLOT.
tree_mms() {
	"$PEAKBPF" serve --status --socket "$SOCK" 2>/dev/null |
		sed -n "s/^tree .* mm_entries \([0-9]*\) .* slot $1\$/\1/p"
}

# nobody, without a capability, measures its own workload exactly through
# the helper: the record says bpf, exact, and names the helper.
t_serve_nobody_exact() {
	serve_start "serve: nobody measures" || return
	expected=$("$WORKLOAD" -x -s 64MiB -n 2 concurrent)
	# shellcheck disable=SC2086 # AS_NOBODY is words
	$AS_NOBODY "$PEAKBPF" -q --json --helper="$SOCK" -- "$WORKLOAD" -s 64MiB -n 2 -t 200ms concurrent \
		>"$TMP/serve1.json" 2>"$TMP/serve1.err"
	rc=$?
	serve_stop
	src=$(json_raw "$TMP/serve1.json" source)
	exact=$(json_raw "$TMP/serve1.json" exact)
	if [ "$rc" = 0 ] && [ "$src" = '"bpf"' ] && grep -q '"privileges":"none"' "$TMP/serve1.json" &&
		grep -q "via helper $SOCK" "$TMP/serve1.json" && { [ "$exact" = true ] ||
		! grep -q '"rss_counters":"percpu"' "$TMP/serve1.json"; }; then
		check_growth "serve: nobody measures its own tree, exact: $exact" "$TMP/serve1.json" "$expected"
	else
		fail "serve: nobody measures: exit $rc, source $src, exact $exact: $(cat "$TMP/serve1.err" "$TMP/serve1.json")"
	fi
}

# A root-owned PID is refused by the helper, which says why; exit 123. So
# is nobody's own process once it is not dumpable (ptrace would refuse it).
t_serve_refuses_root_pid() {
	serve_start "serve: root's PID refused" || return
	sleep 30 &
	victim=$!
	# shellcheck disable=SC2086
	$AS_NOBODY "$PEAKBPF" -q --helper="$SOCK" -p "$victim" -d 100ms 2>"$TMP/serve2.err"
	rc=$?
	# shellcheck disable=SC2086
	$AS_NOBODY sh -c "\"\$0\" -U -s 1MiB -t 5s spike 2>/dev/null & sleep 0.3;
		\"\$1\" -q --helper=\"\$2\" -p \$! -d 100ms; rc=\$?; kill \$!; exit \$rc" \
		"$WORKLOAD" "$PEAKBPF" "$SOCK" 2>"$TMP/serve2b.err"
	rc_undumpable=$?
	trees=$(status_num trees)
	kill "$victim"
	wait "$victim" 2>/dev/null
	serve_stop
	if [ "$rc" = 123 ] && grep -q "is not yours: the helper measures only processes you could trace" \
		"$TMP/serve2.err" && [ "$rc_undumpable" = 123 ] && grep -q "is not yours" "$TMP/serve2b.err" &&
		[ "$trees" = 0 ]; then
		ok "serve: root's PID and nobody's undumpable one refused by the helper (exit 123, trees left $trees)"
	else
		fail "serve: root's PID: exit $rc / undumpable $rc_undumpable, trees $trees: $(cat "$TMP/serve2.err" "$TMP/serve2b.err")"
	fi
}

# A client SIGKILLed mid-window leaves nothing in the helper while another
# client's tree, in the same load, stays open and measures on: the killed
# tree's entries are gone from every map (no entry of a tree not open), the
# other's stay, and its figure is still right. The killed client came
# first: the other then moves in the helper's list of clients, and the
# status queries after the kill connect into the place it left (its host
# facts, which its figure reads, must not move with it: 0ed64b4).
t_serve_client_killed() {
	serve_start "serve: client killed" --unload-idle || return
	expected=$("$WORKLOAD" -x -s 48MiB -n 2 concurrent)
	# shellcheck disable=SC2086
	$AS_NOBODY "$PEAKBPF" -q --helper="$SOCK" -- "$WORKLOAD" -s 32MiB -t "$(q 4s 15s)" spike \
		2>"$TMP/serve3.err" &
	client=$!
	wait_trees 1
	# shellcheck disable=SC2086
	$AS_NOBODY "$PEAKBPF" -q --json --helper="$SOCK" -- "$WORKLOAD" -s 48MiB -n 2 -t "$(q 3s 10s)" \
		concurrent >"$TMP/serve3k.json" 2>"$TMP/serve3k.err" &
	keeper=$!
	i=0 mms=0 kept_before=0
	while { [ "${mms:-0}" = 0 ] || [ "${kept_before:-0}" = 0 ]; } && [ "$i" -lt "$(q 100 600)" ]; do
		sleep 0.05
		mms=$(tree_mms 0)
		kept_before=$(tree_mms 1)
		i=$((i + 1))
	done
	maps_during=$(serve_maps)
	kill -KILL "$client"
	wait "$client" 2>/dev/null
	wait_trees 1
	trees=$(status_num trees)
	removed=$(status_num trees_removed)
	stray=$(stray_entries)
	kept_mms=$(tree_mms 1)
	maps_kept=$(serve_maps)
	wait "$keeper"
	rc=$?
	wait_trees 0
	maps_after=$(serve_maps)
	loaded=$(status_num loaded)
	serve_stop
	if [ "${mms:-0}" -gt 0 ] && [ "$maps_during" -gt 0 ] && [ "$trees" = 1 ] && [ "$removed" = 1 ] &&
		[ "$stray" = "mm 0 task 0 thread 0" ] && [ "${kept_mms:-0}" -gt 0 ] &&
		[ "$maps_kept" = "$maps_during" ] && [ "$rc" = 0 ] && [ "$maps_after" = 0 ] && [ "$loaded" = 0 ]; then
		ok "serve: client killed mid-window: its tree ($mms mms) cleared from the shared maps ($stray left), the other's ($kept_mms mms) kept; 0 maps after the last"
		check_growth "serve: the other tree, measured on through the kill (it moved in the client list)" \
			"$TMP/serve3k.json" "$expected"
	else
		fail "serve: client killed: mms $mms, kept $kept_mms, stray '$stray', maps $maps_during/$maps_kept then $maps_after, trees $trees, removed $removed, loaded $loaded, other exit $rc: $(cat "$TMP/serve3.err" "$TMP/serve3k.err" "$TMP/serve.log")"
	fi
}

# Each tree's figure against its own shape; the records and the helper's
# log go to the output when one is off.
two_trees_growth() {
	before=$FAILED
	check_growth "serve: tree A (concurrent, 2 x 64 MiB)" "$TMP/serve5a.json" "$exp_a"
	check_growth "serve: tree B (sequential, 3 x 80 MiB)" "$TMP/serve5b.json" "$exp_b"
	[ "$FAILED" = "$before" ] || cat "$TMP/serve5a.json" "$TMP/serve5b.json" "$TMP/serve.log"
}

# Two nobody clients measure different shapes at once through one helper:
# one BPF load serves both trees, and each figure is exact and its own.
t_serve_two_trees() {
	serve_start "serve: two trees, one load" || return
	exp_a=$("$WORKLOAD" -x -s 64MiB -n 2 concurrent)
	exp_b=$("$WORKLOAD" -x -s 80MiB -n 3 sequential)
	# shellcheck disable=SC2086
	$AS_NOBODY "$PEAKBPF" -q --json --helper="$SOCK" -- "$WORKLOAD" -s 64MiB -n 2 -t "$(q 2s 8s)" \
		concurrent >"$TMP/serve5a.json" 2>"$TMP/serve5a.err" &
	a=$!
	wait_trees 1
	# shellcheck disable=SC2086
	$AS_NOBODY "$PEAKBPF" -q --json --helper="$SOCK" -- "$WORKLOAD" -s 80MiB -n 3 -t "$(q 300ms 1s)" \
		sequential >"$TMP/serve5b.json" 2>"$TMP/serve5b.err" &
	b=$!
	wait_trees 2
	both=$(status_num trees)
	wait "$b"
	rc_b=$?
	wait "$a"
	rc_a=$?
	loads=$(status_num loads)
	opened=$(status_num trees_opened)
	serve_stop
	if [ "$rc_a" = 0 ] && [ "$rc_b" = 0 ] && [ "$both" = 2 ] && [ "$loads" = 1 ] && [ "$opened" = 2 ] &&
		[ "$(json_raw "$TMP/serve5a.json" exact)" = true ] && [ "$(json_raw "$TMP/serve5b.json" exact)" = true ]; then
		ok "serve: two trees open at once, $opened trees, $loads BPF load"
		two_trees_growth
	elif [ "$rc_a" = 0 ] && [ "$rc_b" = 0 ] && [ "$both" = 2 ] && [ "$loads" = 1 ] &&
		! grep -q '"rss_counters":"percpu"' "$TMP/serve5a.json"; then
		ok "serve: two trees open at once, $loads BPF load (counters not percpu: bounded, not exact)"
		two_trees_growth
	else
		fail "serve: two trees: exits $rc_a/$rc_b, trees at once $both, loads $loads, opened $opened: $(cat "$TMP/serve5a.err" "$TMP/serve5b.err" "$TMP/serve5a.json" "$TMP/serve5b.json" "$TMP/serve.log")"
	fi
}

# Per-client limits: a user other than root has at most 4 trees open at
# once (the 5th is refused with the reason, and root is not held to it),
# and a tree holds at most its --max-tracked processes in the shared maps
# (the record says what was lost and how to raise it).
t_serve_limits() {
	serve_start "serve: per-client limits" || return
	pids=""
	for i in 1 2 3 4; do
		# shellcheck disable=SC2086
		$AS_NOBODY "$PEAKBPF" -q --helper="$SOCK" -- "$WORKLOAD" -s 1MiB -t "$(q 3s 12s)" spike \
			>/dev/null 2>&1 &
		pids="$pids $!"
	done
	wait_trees 4
	four=$(status_num trees)
	# shellcheck disable=SC2086
	$AS_NOBODY "$PEAKBPF" --helper="$SOCK" -- true >/dev/null 2>"$TMP/serve6.err"
	"$PEAKBPF" -q --json --helper="$SOCK" -- "$WORKLOAD" -s 8MiB -t 10ms spike >"$TMP/serve6r.json" 2>/dev/null
	rc_root=$?
	# shellcheck disable=SC2086
	kill $pids 2>/dev/null
	for p in $pids; do wait "$p" 2>/dev/null; done
	wait_trees 0
	# shellcheck disable=SC2086
	$AS_NOBODY "$PEAKBPF" -q --json --helper="$SOCK" --max-tracked 16 -- "$WORKLOAD" -s 2MiB -n 24 \
		concurrent >"$TMP/serve6c.json" 2>/dev/null
	rc_cap=$?
	stray=$(stray_entries)
	serve_stop
	lost=$(json_num "$TMP/serve6c.json" drop_process_map_full)
	if [ "$four" = 4 ] && grep -q "at most 4 trees at once per user" "$TMP/serve6.err" &&
		[ "$rc_root" = 0 ] && [ "$(json_raw "$TMP/serve6r.json" source)" = '"bpf"' ] &&
		[ "$rc_cap" = 0 ] && [ "$(json_raw "$TMP/serve6c.json" exact)" = false ] &&
		grep -q 'raise --max-tracked' "$TMP/serve6c.json" && [ "${lost:-0}" -gt 0 ] &&
		[ "$stray" = "mm 0 task 0 thread 0" ]; then
		ok "serve: per-client limits: a 5th tree of one user refused with the reason, root's served; --max-tracked 16 caps a tree ($lost processes not entered, not exact, says so)"
	else
		fail "serve: limits: trees $four, root exit $rc_root, cap exit $rc_cap, lost '$lost', stray '$stray': $(cat "$TMP/serve6.err") $(head -c 800 "$TMP/serve6c.json")"
	fi
}

# Socket activation, as peakbpf.socket does it (sd_listen_fds(3): fd 3,
# LISTEN_PID, LISTEN_FDS): the helper serves on the socket it is given.
t_serve_socket_activation() {
	need systemd-socket-activate "serve: socket activation" || return
	need setpriv "serve: socket activation" || return
	SERVE_DIR=$(mktemp -d) || { fail "serve: socket activation: mktemp"; return; }
	chmod 755 "$SERVE_DIR"
	SOCK=$SERVE_DIR/peakbpf.sock
	systemd-socket-activate --seqpacket -l "$SOCK" "$PEAKBPF" serve -v 2>"$TMP/serve4.log" &
	SERVE_PID=$!
	wait_socket "$SOCK"
	chmod 666 "$SOCK"       # SocketMode=0666 in peakbpf.socket
	# shellcheck disable=SC2086
	$AS_NOBODY "$PEAKBPF" -q --json --helper="$SOCK" -- "$WORKLOAD" -s 64MiB -t 50ms spike \
		>"$TMP/serve4.json" 2>"$TMP/serve4.err"
	rc=$?
	serve_stop
	if [ "$rc" = 0 ] && [ "$(json_raw "$TMP/serve4.json" source)" = '"bpf"' ] &&
		grep -q "serving on the socket systemd passed" "$TMP/serve4.log"; then
		check_growth "serve: socket activation" "$TMP/serve4.json" $((64 * MIB))
	else
		fail "serve: socket activation: exit $rc: $(cat "$TMP/serve4.err" "$TMP/serve4.log")"
	fi
}

# A helper keeps its one load while no tree is open (issue 24), and root's
# peakbpf uses it by default whenever its socket answers: the record says
# "helper", the figure is exact and names its holders by their PIDs;
# --no-helper loads here; --timeline goes through it too (the helper serves
# the record of the sum), with no note. Three sessions: still one load.
t_serve_resident_default() {
	serve_start "serve: resident, used by default" || return
	PEAKBPF_HELPER=$SOCK "$PEAKBPF" -q --json -- "$WORKLOAD" -s 48MiB -t 5ms spike >"$TMP/res1.json" 2>"$TMP/res.err"
	rc1=$?
	PEAKBPF_HELPER=$SOCK "$PEAKBPF" -q --json -- "$WORKLOAD" -s 48MiB -t 5ms spike >"$TMP/res2.json" 2>>"$TMP/res.err"
	rc2=$?
	maps=$(serve_maps)
	loaded=$(status_num loaded)
	loads=$(status_num loads)
	PEAKBPF_HELPER=$SOCK "$PEAKBPF" -q --json --no-helper -- true >"$TMP/res3.json" 2>>"$TMP/res.err"
	PEAKBPF_HELPER=$SOCK "$PEAKBPF" -q --json --timeline "$TMP/res.json" -- true >"$TMP/res4.json" 2>>"$TMP/res.err"
	loads4=$(status_num loads)
	serve_stop
	wl_pid=$(grep -o '"processes":\[{"pid":[0-9]*' "$TMP/res2.json" | grep -o '[0-9]*$')
	cmd_pid=$(grep -o '"command":{"argv":[^]]*\],"pid":[0-9]*' "$TMP/res2.json" | grep -o '[0-9]*$')
	via1=$(grep -o '"bpf_load":"[a-z]*"' "$TMP/res1.json")
	via3=$(grep -o '"bpf_load":"[a-z]*"' "$TMP/res3.json")
	via4=$(grep -o '"bpf_load":"[a-z]*"' "$TMP/res4.json")
	# Unique memory through it too (HP_UNIQUE): measured where the kernel
	# has a memcg hook (test_unique.sh's memcg_tp), else not, saying why.
	usrc=$(unique_val "$TMP/res2.json" source)
	uok=yes
	if memcg_tp && [ "$usrc" != '"bpf-memcg"' ]; then
		uok="no: $usrc"
	fi
	if [ "$uok" = yes ] && [ "$rc1" = 0 ] && [ "$rc2" = 0 ] && [ "$via1" = '"bpf_load":"helper"' ] &&
		grep -q '"bpf_load":"helper"' "$TMP/res2.json" && [ "$loaded" = 1 ] && [ "$loads" = 1 ] &&
		[ "${maps:-0}" -gt 0 ] && [ "${wl_pid:-0}" -gt 0 ] && [ "$wl_pid" = "$cmd_pid" ] &&
		[ "$via3" = '"bpf_load":"loaded"' ] && [ "$via4" = '"bpf_load":"helper"' ] &&
		[ "$loads4" = 1 ] && [ -s "$TMP/res.json" ] && ! grep -q 'helper: not used' "$TMP/res4.json"; then
		ok "serve: resident ($maps maps, $loads load for 3 sessions), root uses it by default, --timeline and unique memory ($usrc) too; --no-helper loads here"
		check_growth "serve: root through the default helper" "$TMP/res2.json" $((48 << 20))
	else
		fail "serve: resident: unique $uok, rc $rc1/$rc2, $via1, $via3, $via4, loaded $loaded, loads $loads, maps $maps, holder pid '$wl_pid' (command $cmd_pid): $(cat "$TMP/res.err" "$TMP/res4.json" "$TMP/serve.log")"
	fi
}

# A client in a PID namespace of its own (a container): the helper gives
# the holders by the client's PIDs (issue 24). The record's command PID is
# the client's own numbering; the holder at the peak is the command. Before:
# the helper's numbering, another number.
t_serve_pidns_holders() {
	need unshare "serve: holders in the client's PID namespace" || return
	unshare --pid --fork --mount-proc true 2>/dev/null ||
		{ skip "serve: holders in the client's PID namespace: unshare --pid cannot run here"; return; }
	serve_start "serve: holders in the client's PID namespace" || return
	PEAKBPF_HELPER=$SOCK unshare --pid --fork --mount-proc "$PEAKBPF" -q --json -- \
		"$WORKLOAD" -s 64MiB -t 5ms spike >"$TMP/ns.json" 2>"$TMP/ns.err"
	rc=$?
	serve_stop
	holder=$(grep -o '"processes":\[{"pid":[0-9]*' "$TMP/ns.json" | grep -o '[0-9]*$')
	cmd=$(grep -o '"command":{"argv":[^]]*\],"pid":[0-9]*' "$TMP/ns.json" | grep -o '[0-9]*$')
	if [ "$rc" = 0 ] && grep -q '"bpf_load":"helper"' "$TMP/ns.json" && [ -n "$cmd" ] &&
		[ "$holder" = "$cmd" ] && [ "$cmd" -lt 100 ]; then
		ok "serve: a client in its own PID namespace sees the holder as its PID $holder"
		check_growth "serve: the client in its own PID namespace" "$TMP/ns.json" $((64 << 20))
	else
		fail "serve: PID namespace: rc $rc, holder '$holder', command '$cmd': $(cat "$TMP/ns.err" "$TMP/ns.json" "$TMP/serve.log")"
	fi
}
