# shellcheck shell=sh
# peakbpf serve: the privileged helper, started here as root on a socket of
# its own; its clients run as nobody with no capabilities at all.

TESTS="$TESTS t_serve_nobody_exact t_serve_refuses_root_pid t_serve_client_killed
 t_serve_socket_activation"

AS_NOBODY="setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all"

# serve_start NAME: a helper on $SOCK (in a directory nobody can reach);
# false, with NAME skipped or failed, if it cannot run.
serve_start() {
	need setpriv "$1" || return 1
	SERVE_DIR=$(mktemp -d) || { fail "$1: mktemp"; return 1; }
	chmod 755 "$SERVE_DIR"
	SOCK=$SERVE_DIR/peakbpf.sock
	"$PEAKBPF" serve --socket "$SOCK" -v 2>"$TMP/serve.log" &
	SERVE_PID=$!
	i=0
	while ! "$PEAKBPF" serve --status --socket "$SOCK" >/dev/null 2>&1; do
		i=$((i + 1))
		if [ "$i" -gt "$(q 100 600)" ] || ! kill -0 "$SERVE_PID" 2>/dev/null; then
			fail "$1: the helper did not start: $(cat "$TMP/serve.log")"
			serve_stop
			return 1
		fi
		sleep 0.1
	done
}

serve_stop() {
	kill "$SERVE_PID" 2>/dev/null
	wait "$SERVE_PID" 2>/dev/null
	rm -rf "$SERVE_DIR"
}

# serve_maps: BPF maps the helper holds open now (each tree's own).
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

# A client SIGKILLed mid-window leaves nothing in the helper: no tree, and
# none of its maps held any more (they were freed with its tracker).
t_serve_client_killed() {
	serve_start "serve: client killed" || return
	# shellcheck disable=SC2086
	$AS_NOBODY "$PEAKBPF" -q --helper="$SOCK" -- "$WORKLOAD" -s 32MiB -t "$(q 2s 6s)" spike \
		2>"$TMP/serve3.err" &
	client=$!
	i=0 mms=0
	while [ "${mms:-0}" = 0 ] && [ "$i" -lt "$(q 100 600)" ]; do
		sleep 0.05
		mms=$("$PEAKBPF" serve --status --socket "$SOCK" 2>/dev/null |
			grep "^tree uid 65534" | sed 's/.*mm_entries \([0-9]*\).*/\1/')
		i=$((i + 1))
	done
	maps_during=$(serve_maps)
	kill -KILL "$client"
	wait "$client" 2>/dev/null
	i=0
	while [ "$(status_num trees)" != 0 ] && [ "$i" -lt 100 ]; do
		sleep 0.05
		i=$((i + 1))
	done
	trees=$(status_num trees)
	removed=$(status_num trees_removed)
	maps_after=$(serve_maps)
	serve_stop
	if [ "${mms:-0}" -gt 0 ] && [ "$maps_during" -gt 0 ] && [ "$trees" = 0 ] && [ "$removed" = 1 ] &&
		[ "$maps_after" = 0 ]; then
		ok "serve: client killed mid-window: its tree ($mms mms, $maps_during maps) removed, 0 maps left"
	else
		fail "serve: client killed: mms $mms, maps $maps_during then $maps_after, trees $trees, removed $removed: $(cat "$TMP/serve3.err" "$TMP/serve.log")"
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
	i=0
	while [ ! -S "$SOCK" ] && [ "$i" -lt 100 ]; do
		sleep 0.1
		i=$((i + 1))
	done
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
