# shellcheck shell=sh
# The helper run exactly as its systemd unit runs it (systemd/peakbpf.service.in
# and peakbpf.socket, read here, not copied): ExecStart, User, the capability
# bounding set, NoNewPrivileges, its limits and umask, on the socket the
# socket unit would pass. PID 1 need not be systemd: systemd-socket-activate
# passes the socket, setpriv sets the rest.

TESTS="$TESTS t_serve_as_unit"

UNIT_DIR=${UNIT_DIR:-$(cd "$(dirname "$PEAKBPF")/../systemd" 2>/dev/null && pwd)}

# unit_key FILE KEY: the value of KEY= in a unit file (the last one).
unit_key() {
	sed -n "s/^$2=//p" "$1" | tail -n 1
}

# unit_setpriv SERVICE: setpriv's options for the service's User,
# CapabilityBoundingSet and NoNewPrivileges.
unit_setpriv() {
	caps=$(unit_key "$1" CapabilityBoundingSet | tr 'A-Z ' 'a-z\n' | sed -n 's/^cap_/+/p' | paste -sd, -)
	opts="--inh-caps=-all --ambient-caps=-all --bounding-set=-all${caps:+,$caps}"
	user=$(unit_key "$1" User)
	[ -n "$user" ] && opts="$opts --reuid=$user --regid=$user --init-groups"
	[ "$(unit_key "$1" NoNewPrivileges)" = yes ] && opts="$opts --no-new-privs"
	echo "$opts"
}

# A nobody client gets an exact figure from the helper under the unit's
# capability set, which has no CAP_KILL (issue 23: pidfd_send_signal(0)
# needed it to see the process alive, and every run failed).
t_serve_as_unit() {
	need systemd-socket-activate "serve as its unit" || return
	need setpriv "serve as its unit" || return
	svc=$UNIT_DIR/peakbpf.service.in
	sock=$UNIT_DIR/peakbpf.socket
	[ -r "$svc" ] && [ -r "$sock" ] || { skip "serve as its unit: no unit files in $UNIT_DIR"; return; }
	exec_start=$(unit_key "$svc" ExecStart | sed "s|@BINDIR@|$(dirname "$PEAKBPF")|")
	opts=$(unit_setpriv "$svc")
	SERVE_DIR=$(mktemp -d) || { fail "serve as its unit: mktemp"; return; }
	chmod 755 "$SERVE_DIR"
	SOCK=$SERVE_DIR/peakbpf.sock
	# shellcheck disable=SC2086,SC3045 # opts and exec_start are words; ulimit -n, -l: dash and busybox have them
	(ulimit -n "$(unit_key "$svc" LimitNOFILE)"; ulimit -l unlimited; umask "$(unit_key "$svc" UMask)"
	 exec systemd-socket-activate --seqpacket -l "$SOCK" setpriv $opts $exec_start -v) \
		2>"$TMP/unit.log" &
	SERVE_PID=$!
	wait_socket "$SOCK"
	chmod "$(unit_key "$sock" SocketMode)" "$SOCK"
	# shellcheck disable=SC2086
	$AS_NOBODY "$PEAKBPF" -q --json --helper="$SOCK" -- "$WORKLOAD" -s 64MiB -n 2 -t 200ms concurrent \
		>"$TMP/unit.json" 2>"$TMP/unit.err"
	rc=$?
	bnd=$(grep '^CapBnd' "/proc/$SERVE_PID/status" 2>/dev/null | cut -f2)
	serve_stop
	exact=$(json_raw "$TMP/unit.json" exact)
	if [ "$rc" = 0 ] && [ "$exact" = true ] && [ "$(json_raw "$TMP/unit.json" source)" = '"bpf"' ]; then
		check_growth "serve as its unit ($opts; CapBnd $bnd): exact" "$TMP/unit.json" $((128 * MIB))
	else
		fail "serve as its unit ($opts): exit $rc, exact $exact: $(cat "$TMP/unit.err" "$TMP/unit.log")"
	fi
}
