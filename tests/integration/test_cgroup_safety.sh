# shellcheck shell=sh
# The cgroup root and peakbpf's own cgroups, for real (issue 13): an unsafe
# cgroup root refused with exit 121, and the stale-cgroup scan, which goes by
# the marker in a cgroup's name (creator pid, start time, PID namespace):
# a SIGKILLed peakbpf's cgroup goes at the next run, a live peer's stays,
# also across PID namespaces. cgroup v1 memory here, cgroup v2 in the
# kernel-matrix VMs; POSIX sh for busybox.

TESTS="$TESTS t_cgroup_root_symlink t_cgroup_root_not_roots t_cgroup_stale_removed \
 t_cgroup_live_peer_kept t_cgroup_peer_other_pidns"

EXIT_CGROUP_ROOT_UNSAFE=121

# cgs_home NAME: sets CGS_ROOT (where hierarchies are mounted) and CGS_HOME
# (this shell's memory cgroup, where peakbpf makes its own), or skips NAME.
cgs_home() {
	if grep -q " /sys/fs/cgroup cgroup2 " /proc/mounts &&
		grep -qw memory /sys/fs/cgroup/cgroup.controllers 2>/dev/null; then
		CGS_ROOT=/sys/fs/cgroup
		rel=$(sed -n 's/^0:://p' /proc/self/cgroup)
		CGS_HOME=/sys/fs/cgroup${rel%/}
	elif grep -q " /sys/fs/cgroup/memory cgroup " /proc/mounts; then
		CGS_ROOT=/sys/fs/cgroup
		rel=$(sed -n 's/^[0-9]*:\([^:]*,\)\{0,1\}memory\(,[^:]*\)\{0,1\}://p' /proc/self/cgroup)
		CGS_HOME=/sys/fs/cgroup/memory${rel%/}
	else
		skip "$1: no memory cgroup hierarchy at /sys/fs/cgroup"
		return 1
	fi
	[ -d "$CGS_HOME" ] && return 0
	skip "$1: this shell's memory cgroup $CGS_HOME is not visible"
	return 1
}

# cgs_source NAME: true when the cgroup source runs here; otherwise skip
# test NAME with its error (before 5.19 there is no memory.peak: a peer
# would fail as soon as it started, and nothing is left to tell apart).
cgs_source() {
	"$PEAKBPF" -q -s cgroup -o "$TMP/cgprobe.json" -- true 2>"$TMP/cgprobe.err" && return 0
	skip "$1: the cgroup source does not run here: $(cat "$TMP/cgprobe.err")"
	return 1
}

# cgs_own PID: the cgroup peakbpf PID made (peakbpf-PID-*), waited for up
# to 20 s (qemu's TCG is slow) while PID runs; empty when none appeared.
cgs_own() {
	i=0
	while [ "$i" -lt 200 ] && kill -0 "$1" 2>/dev/null; do
		for d in "$CGS_HOME/peakbpf-$1"-*; do
			[ -d "$d" ] && echo "$d" && return 0
		done
		sleep 0.1
		i=$((i + 1))
	done
}

# cgs_no_procs DIR: the cgroup DIR has no process (cgroupfs files have
# size 0 whatever they hold: read it).
cgs_no_procs() {
	[ -z "$(cat "$1/cgroup.procs" 2>/dev/null)" ]
}

# cgs_empty DIR: wait until the cgroup DIR has no process (at most 10 s).
cgs_empty() {
	i=0
	while ! cgs_no_procs "$1" && [ "$i" -lt 100 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	cgs_no_procs "$1"
}

# A symlink as the cgroup root, by option and by environment, in auto mode
# too: refused with exit 121, nothing measured.
t_cgroup_root_symlink() {
	cgs_home "symlinked cgroup root" || return
	rm -f "$TMP/cglink"
	ln -s "$CGS_ROOT" "$TMP/cglink"
	"$PEAKBPF" -q -s cgroup --cgroup-root "$TMP/cglink" -- true 2>"$TMP/cgl.err"
	rc1=$?
	PEAKBPF_CGROUP_ROOT=$TMP/cglink "$PEAKBPF" -q -- true 2>"$TMP/cgl2.err"
	rc2=$?
	if [ "$rc1" = "$EXIT_CGROUP_ROOT_UNSAFE" ] && [ "$rc2" = "$EXIT_CGROUP_ROOT_UNSAFE" ] &&
		grep -q "is a symbolic link: name the directory itself" "$TMP/cgl.err" &&
		grep -q "is a symbolic link" "$TMP/cgl2.err"; then
		ok "symlinked cgroup root refused (exit 121, option and environment): $(cat "$TMP/cgl.err")"
	else
		fail "symlinked cgroup root: exits $rc1, $rc2 (want 121): $(cat "$TMP/cgl.err" "$TMP/cgl2.err")"
	fi
	rm -f "$TMP/cglink"
}

# As root, a cgroup root another user owns, or one others can write, is
# refused (exit 121) before anything is made in it.
t_cgroup_root_not_roots() {
	if [ "$(id -u)" != 0 ]; then
		skip "cgroup root not root's: the rule is for euid 0"
		return
	fi
	rm -rf "$TMP/cgown" "$TMP/cgww"
	mkdir "$TMP/cgown" "$TMP/cgww"
	chown 65534 "$TMP/cgown"
	chmod 777 "$TMP/cgww"
	"$PEAKBPF" -q -s cgroup --cgroup-root "$TMP/cgown" -- true 2>"$TMP/cgo.err"
	rc1=$?
	"$PEAKBPF" -q --cgroup-root "$TMP/cgww" -- true 2>"$TMP/cgw.err"
	rc2=$?
	left=0
	for d in "$TMP"/cgown/* "$TMP"/cgww/*; do
		[ -e "$d" ] && left=$((left + 1))
	done
	if [ "$rc1" = "$EXIT_CGROUP_ROOT_UNSAFE" ] && [ "$rc2" = "$EXIT_CGROUP_ROOT_UNSAFE" ] &&
		grep -q "owned by uid 65534, not root" "$TMP/cgo.err" &&
		grep -q "writable by others" "$TMP/cgw.err" && [ "$left" = 0 ]; then
		ok "cgroup root of uid 65534 and a world-writable one refused as root (exit 121): $(cat "$TMP/cgo.err")"
	else
		fail "cgroup root not root's: exits $rc1, $rc2 (want 121), $left entries made: $(cat "$TMP/cgo.err" "$TMP/cgw.err")"
	fi
	rm -rf "$TMP/cgown" "$TMP/cgww"
}

# A peakbpf SIGKILLed mid-run leaves its cgroup; once its command is gone
# too, the next run removes it.
t_cgroup_stale_removed() {
	cgs_home "stale cgroup" || return
	"$PEAKBPF" -q -s cgroup -o "$TMP/cgs.json" -- sleep 60 2>"$TMP/cgs.err" &
	pid=$!
	dir=$(cgs_own "$pid")
	if [ -z "$dir" ]; then
		kill -9 "$pid" 2>/dev/null
		wait "$pid" 2>/dev/null
		skip "stale cgroup: peakbpf made no cgroup of its own here: $(cat "$TMP/cgs.err")"
		return
	fi
	kill -9 "$pid"
	wait "$pid" 2>/dev/null
	# shellcheck disable=SC2046 # the command's pids, one word each
	kill -9 $(cat "$dir/cgroup.procs") 2>/dev/null
	cgs_empty "$dir"
	before=$([ -d "$dir" ] && echo kept || echo gone)
	"$PEAKBPF" -q -s cgroup -o "$TMP/cgs2.json" -- true 2>"$TMP/cgs2.err"
	rc=$?
	if [ "$before" = kept ] && [ "$rc" = 0 ] && [ ! -d "$dir" ]; then
		ok "stale cgroup $(basename "$dir") of a SIGKILLed peakbpf removed by the next run"
	else
		fail "stale cgroup $dir: $before after SIGKILL, exit $rc, exists after the next run: $([ -d "$dir" ] && echo yes || echo no): $(cat "$TMP/cgs2.err")"
	fi
}

# peer CMD...: a peakbpf whose command leaves its cgroup for home at once,
# so that the cgroup is empty while the peer runs (only the marker says it
# is alive); PEER and PEER_DIR are set, or PEER_DIR is empty. The command
# lives until cgs_peer_end (at most 30 s).
cgs_peer() {
	rm -f "$TMP/peer.go"
	"$@" "$PEAKBPF" -q -s cgroup -o "$TMP/peer.json" -- \
		sh -c "echo \$\$ > $CGS_HOME/cgroup.procs && i=0 &&
			while [ ! -e $TMP/peer.go ] && [ \$i -lt 300 ]; do sleep 0.1; i=\$((i + 1)); done" \
		2>"$TMP/peer.err" &
	PEER=$!
	PEER_DIR=""
	i=0
	while [ -z "$PEER_DIR" ] && [ "$i" -lt 200 ] && kill -0 "$PEER" 2>/dev/null; do
		for d in "$CGS_HOME"/peakbpf-*-*-*; do
			[ -d "$d" ] && cgs_no_procs "$d" &&
				! grep -q "^$(basename "$d")\$" "$TMP/cgs.before" && PEER_DIR=$d
		done
		[ -n "$PEER_DIR" ] || sleep 0.1
		i=$((i + 1))
	done
}

# cgs_peer_end: let the peer's command end; PEER_RC is the peer's status.
cgs_peer_end() {
	touch "$TMP/peer.go"
	wait "$PEER"
	PEER_RC=$?
}

cgs_snapshot() {
	for d in "$CGS_HOME"/peakbpf-*; do
		[ -d "$d" ] && basename "$d"
	done >"$TMP/cgs.before"
}

# A live, concurrent peakbpf's empty cgroup is left alone by another run.
t_cgroup_live_peer_kept() {
	cgs_home "live peer's cgroup" || return
	cgs_source "live peer's cgroup" || return
	cgs_snapshot
	cgs_peer
	if [ -z "$PEER_DIR" ]; then
		kill "$PEER" 2>/dev/null
		wait "$PEER" 2>/dev/null
		skip "live peer's cgroup: the peer made no empty cgroup: $(cat "$TMP/peer.err")"
		return
	fi
	"$PEAKBPF" -q -s cgroup -o "$TMP/cgp.json" -- true 2>"$TMP/cgp.err"
	rc=$?
	kept=$([ -d "$PEER_DIR" ] && echo kept || echo removed)
	cgs_peer_end
	prc=$PEER_RC
	if [ "$rc" = 0 ] && [ "$kept" = kept ] && [ "$prc" = 0 ] && [ ! -d "$PEER_DIR" ]; then
		ok "a live peer's empty cgroup $(basename "$PEER_DIR") is left alone; the peer removes it itself"
	else
		fail "live peer: run exit $rc, peer's cgroup $kept, peer exit $prc, left after: $([ -d "$PEER_DIR" ] && echo yes || echo no): $(cat "$TMP/cgp.err" "$TMP/peer.err")"
	fi
}

# Across PID namespaces (unshare -p -f --mount-proc): a peakbpf in a new
# namespace leaves a live peer of the parent namespace alone, and one in the
# parent namespace leaves a live peer of a child namespace alone, though the
# pid in each name means another process, or none, on the other side.
t_cgroup_peer_other_pidns() {
	cgs_home "peer in another PID namespace" || return
	cgs_source "peer in another PID namespace" || return
	if ! unshare -p -f --mount-proc true 2>/dev/null; then
		skip "peer in another PID namespace: unshare -p -f --mount-proc does not work here"
		return
	fi
	res=""
	for side in parent child; do
		cgs_snapshot
		if [ "$side" = parent ]; then
			cgs_peer
			unshare -p -f --mount-proc "$PEAKBPF" -q -s cgroup -o "$TMP/cgn.json" -- true 2>"$TMP/cgn.err"
		else
			cgs_peer unshare -p -f --mount-proc
			"$PEAKBPF" -q -s cgroup -o "$TMP/cgn.json" -- true 2>"$TMP/cgn.err"
		fi
		rc=$?
		if [ -z "$PEER_DIR" ]; then
			kill "$PEER" 2>/dev/null
			wait "$PEER" 2>/dev/null
			res="$res $side:no-peer($(cat "$TMP/peer.err"))"
			continue
		fi
		kept=$([ -d "$PEER_DIR" ] && echo kept || echo removed)
		cgs_peer_end
		prc=$PEER_RC
		res="$res $side:$kept,exit=$rc,peer=$prc,$(basename "$PEER_DIR")"
		[ "$kept" = kept ] && [ "$rc" = 0 ] && [ "$prc" = 0 ] && [ ! -d "$PEER_DIR" ] ||
			res="$res(FAILED: $(cat "$TMP/cgn.err" "$TMP/peer.err"))"
	done
	case "$res" in
	*FAILED*) fail "peer in another PID namespace:$res" ;;
	*no-peer*) skip "peer in another PID namespace: a peer made no empty cgroup:$res" ;;
	*) ok "a live peer's cgroup kept across PID namespaces:$res" ;;
	esac
}
