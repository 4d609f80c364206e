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

# unit_unshare SERVICE: unshare's options for the namespaces the unit asks:
# a mount namespace whose mounts are slaves of the host's (PrivateMounts=,
# and every Protect*/Private* option that mounts), a network one
# (PrivateNetwork=), IPC (PrivateIPC=), UTS (ProtectHostname=).
unit_unshare() {
	opts="-m --propagation slave"
	[ "$(unit_key "$1" PrivateNetwork)" = yes ] && opts="$opts --net"
	[ "$(unit_key "$1" PrivateIPC)" = yes ] && opts="$opts --ipc"
	[ "$(unit_key "$1" ProtectHostname)" = yes ] && opts="$opts --uts"
	echo "$opts"
}

# A nobody client gets an exact figure from the helper under the unit's
# capability set, which has no CAP_KILL (issue 23: pidfd_send_signal(0)
# needed it to see the process alive, and every run failed), in the unit's
# namespaces and mounts (unit_ns.sh: what it cannot make, it lists).
# There, unique memory is measured (issue 36: a cgroup fd's mount, seen
# from the helper's own mount namespace, was not found, and every
# HP_UNIQUE was refused): nobody's HP_UNIQUE of a cgroup it owns, and
# root's session through the helper, its unique figure exact and ~S.
t_serve_as_unit() {
	need systemd-socket-activate "serve as its unit" || return
	need setpriv "serve as its unit" || return
	need unshare "serve as its unit" || return
	svc=$UNIT_DIR/peakbpf.service.in
	sock=$UNIT_DIR/peakbpf.socket
	[ -r "$svc" ] && [ -r "$sock" ] || { skip "serve as its unit: no unit files in $UNIT_DIR"; return; }
	exec_start=$(unit_key "$svc" ExecStart | sed "s|@BINDIR@|$(dirname "$PEAKBPF")|")
	opts=$(unit_setpriv "$svc")
	ns=$(unit_unshare "$svc")
	SERVE_DIR=$(mktemp -d) || { fail "serve as its unit: mktemp"; return; }
	chmod 755 "$SERVE_DIR"
	SOCK=$SERVE_DIR/peakbpf.sock
	stage=/dev/shm/pkb-helper2-unit.$$
	# Without CAP_SYS_RESOURCE (some sandboxes) the unit's limits cannot go
	# above the hard ones: the hard ones then, as a unit's would be capped.
	# shellcheck disable=SC2086,SC2154,SC3045 # opts, ns and exec_start are words; here is run.sh's; ulimit -n, -l: dash and busybox have them
	(ulimit -n "$(unit_key "$svc" LimitNOFILE)" 2>/dev/null || ulimit -n "$(ulimit -Hn)"
	 ulimit -l unlimited 2>/dev/null; umask "$(unit_key "$svc" UMask)"
	 exec systemd-socket-activate --seqpacket -l "$SOCK" unshare $ns sh "$here/unit_ns.sh" "$svc" "$stage" \
		setpriv $opts $exec_start -v) 2>"$TMP/unit.log" &
	SERVE_PID=$!
	wait_socket "$SOCK"
	chmod "$(unit_key "$sock" SocketMode)" "$SOCK"
	# shellcheck disable=SC2086
	$AS_NOBODY "$PEAKBPF" -q --json --helper="$SOCK" -- "$WORKLOAD" -s 64MiB -n 2 -t 200ms concurrent \
		>"$TMP/unit.json" 2>"$TMP/unit.err"
	rc=$?
	helper=$SERVE_PID       # systemd-socket-activate execs it, as do unshare, sh, setpriv
	bnd=$(grep '^CapBnd' "/proc/$helper/status" 2>/dev/null | cut -f2)
	same_mnt=$([ "$(readlink "/proc/$helper/ns/mnt")" = "$(readlink /proc/self/ns/mnt)" ] && echo yes)
	ro=$(unit_mounts "$helper")
	unit_unique
	serve_stop
	rmdir "$stage" 2>/dev/null
	exact=$(json_raw "$TMP/unit.json" exact)
	pid=$(grep -o '"processes":\[{"pid":[0-9]*' "$TMP/unit.json" | grep -o '[0-9]*$')
	where="$opts; $ns; CapBnd $bnd; $ro"
	case $ro in
	"/ ro, /tmp tmpfs, /sys/fs/cgroup ro, /dev block devices 0"*", /proc/kallsyms mode 0") ro_ok=yes ;;
	*) ro_ok="" ;;
	esac
	if [ -n "$same_mnt" ] || [ -z "$ro_ok" ]; then
		fail "serve as its unit: the helper is not in the unit's mount namespace ($where): $(cat "$TMP/unit.log")"
	elif [ "$rc" != 0 ] || [ "$exact" != true ] || [ "$(json_raw "$TMP/unit.json" source)" != '"bpf"' ]; then
		fail "serve as its unit ($where): exit $rc, exact $exact: $(cat "$TMP/unit.err" "$TMP/unit.log")"
	elif [ "${pid:-0}" = 0 ]; then
		fail "serve as its unit ($where): the tree's processes have no PIDs: $(head -c 600 "$TMP/unit.json")"
	elif [ -n "$uu_bad" ]; then
		fail "serve as its unit ($where): unique memory: $uu_bad: $(cat "$TMP/unit.log")"
	else
		check_growth "serve as its unit ($where): exact; unique: $uu_said" "$TMP/unit.json" $((128 * MIB))
	fi
}

# unit_mounts PID: what the unit's mounts look like from process PID: /'s
# and /sys/fs/cgroup's first option, /tmp's type, the block devices in its
# /dev, /proc/kallsyms's mode.
unit_mounts() {
	mi=/proc/$1/mountinfo
	root=$(awk '$5 == "/" { split($6, o, ","); print o[1] }' "$mi" | tail -n 1)
	tmp=$(awk '$5 == "/tmp" { for (i = 7; $i != "-"; i++); print $(i + 1) }' "$mi" | tail -n 1)
	cg=$(awk '$5 == "/sys/fs/cgroup" { split($6, o, ","); print o[1] }' "$mi" | tail -n 1)
	# /dev's block devices by its mount, as the helper's mount table has it
	# (the top mount at /dev: PrivateDevices' tmpfs holds none): a look through
	# /proc/PID/root/dev counted the host's 10 in whole make check runs, never
	# alone, with the tmpfs on top in the table.
	dev=$(awk '$5 == "/dev" { for (i = 7; $i != "-"; i++); print $(i + 1) }' "$mi" | tail -n 1)
	case $dev in
	tmpfs) blk=$(find "/proc/$1/root/dev/" -maxdepth 1 -type b 2>/dev/null | wc -l)
	       [ "$blk" = 0 ] || blk="0 (tmpfs; $blk seen through /proc/$1/root)" ;;
	*) blk="of the host ($dev)" ;;
	esac
	ks=$(stat -L -c %a "/proc/$1/root/proc/kallsyms" 2>/dev/null)
	echo "/ $root, /tmp $tmp, /sys/fs/cgroup $cg, /dev block devices $blk, /proc/kallsyms mode $ks"
}

# unit_unique: unique memory through the helper on $SOCK (t_serve_as_unit's):
# uu_said what was measured, uu_bad what was wrong (empty: nothing).
unit_unique() {
	uu_said="" uu_bad=""
	if ! memcg_tp; then
		uu_said="(no memcg hook here)"
		return
	fi
	if [ -x "$HOSTILE" ] && cg=$(mem_cgroup_make "pkb-helper2-unit.$$"); then
		chown 65534:65534 "$cg"
		own=$($AS_NOBODY "$HOSTILE" unique "$SOCK" "fd:$cg" 2>&1 | tr '\n' ' ')
		rmdir "$cg"
		case $own in
		*"unique err 0 why  window err 0 measured 1"*) uu_said="nobody's HP_UNIQUE measured" ;;
		*) uu_bad="nobody's HP_UNIQUE: $own" ;;
		esac
	fi
	"$WORKLOAD" -s 1MiB spike >/dev/null 2>&1      # its file pages warm: t_serve_unique_exact
	PEAKBPF_HELPER=$SOCK "$PEAKBPF" -q -o "$TMP/unit-u.json" -- "$WORKLOAD" -s 64MiB -n 3 -t 500ms \
		fork-share 2>"$TMP/unit-u.err"
	src=$(unique_val "$TMP/unit-u.json" source) ex=$(unique_val "$TMP/unit-u.json" exact)
	peak=$(unique_val "$TMP/unit-u.json" peak_bytes)
	if [ "$src" = '"bpf-memcg"' ] && [ "$ex" = true ] &&
		[ "$(abs $((${peak:-0} - 64 * MIB)))" -le $((64 * MIB / 50)) ]; then
		uu_said="$uu_said; root's unique $(mib "$peak") exact (S 64 MiB)"
	else
		uu_bad="$uu_bad; root's unique: $src exact $ex peak $peak: $(head -c 600 "$TMP/unit-u.json") $(cat "$TMP/unit-u.err")"
	fi
}
