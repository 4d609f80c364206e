# shellcheck shell=sh
# Real containers for the integration tests (issue 33), sourced by run.sh
# after lib.sh. No registry is reachable: images are imported offline from a
# rootfs made of busybox-static, the workload (as /bin/shape) and peakbpf with
# the libraries it links. Each runtime keeps everything it writes under
# $CT_DIR and the test's own names, and what it must put elsewhere (runc's
# /run/runc, containerd's /run/containerd/s, dockerd's /run/docker and
# /etc/docker/key.json, the cgroups of the containers' parents) is removed
# after if this run created it.
#
#   ct_podman_ready NAME   podman usable? Sets CT_PODMAN (words: podman with
#                          private storage, runc, cgroupfs) and exports
#                          CONTAINERS_CONF; otherwise prints "skip - NAME: why".
#   ct_docker_start NAME   start a dockerd of this run (own data root, exec
#                          root, pidfile, socket, cgroup parent); sets
#                          CT_DOCKER (words: docker -H unix://SOCK) and
#                          CT_DOCKER_CGROUP; otherwise skips NAME.
#   ct_docker_stop         stop it: containers, daemon, containerd, cgroups.
#   ct_image podman|docker NAME
#                          import the image once per runtime; sets CT_IMAGE.
#   ct_name SUFFIX         a container name unique to this run.
#   ct_cleanup             everything above (run.sh's EXIT trap calls it).
# In the image: /bin/sh and busybox's applets, /bin/shape (the workload),
# /bin/peakbpf (with its libraries). Use --network none: no network is set up.
# Words are used unquoted ($CT_PODMAN run ...): the paths have no spaces.

CT_DIR=""
CT_PODMAN=""
CT_PODMAN_WHY=""
CT_PODMAN_IMAGE=""
CT_DOCKER=""
CT_DOCKER_PID=""
CT_DOCKER_IMAGE=""
CT_DOCKER_CGROUP=""
# shellcheck disable=SC2034 # read by the tests that source this file
CT_IMAGE=""
CT_CREATED=""

ct_name() { echo "peakbpf-ct-$$-$1"; }

# ct_dir: the private directory of this run's containers (once).
ct_dir() {
	[ -n "$CT_DIR" ] && return 0
	CT_DIR=$(mktemp -d "${TMPDIR:-/tmp}/peakbpf-ct.$$.XXXXXX") || return 1
}

# ct_note PATH: remember PATH to remove at cleanup if it does not exist now
# (a path outside $CT_DIR the runtime creates; removed only if empty, or for a
# file only if this run created it).
ct_note() {
	[ -e "$1" ] || CT_CREATED="$CT_CREATED $1"
}

# ct_rootfs WHY-VAR: the image's rootfs, built once; false and WHY-VAR set
# when busybox-static or the binaries are missing.
ct_rootfs() {
	ct_dir || { eval "$1='cannot make a temporary directory'"; return 1; }
	[ -d "$CT_DIR/rootfs/bin" ] && return 0
	bb=$(command -v busybox) || { eval "$1='busybox (busybox-static) not installed'"; return 1; }
	if ldd "$bb" >/dev/null 2>&1; then
		eval "$1='$bb is not static (install busybox-static)'"
		return 1
	fi
	r=$CT_DIR/rootfs
	mkdir -p "$r/bin" "$r/tmp" "$r/etc" "$r/proc" "$r/sys" "$r/dev" || return 1
	chmod 1777 "$r/tmp"
	cp "$bb" "$r/bin/busybox" || return 1
	# The applets the tests use (all ~400 would take seconds of ln).
	for a in sh cat echo true false sleep ls grep head tail cut tr wc sed awk \
		env id kill ps mkdir rm touch mount dd; do
		ln -s busybox "$r/bin/$a"
	done
	echo "root:x:0:0:root:/:/bin/sh" >"$r/etc/passwd"
	echo "nobody:x:65534:65534:nobody:/:/bin/sh" >>"$r/etc/passwd"
	echo "root:x:0:" >"$r/etc/group"
	cp "$WORKLOAD" "$r/bin/shape" || return 1
	cp "$PEAKBPF" "$r/bin/peakbpf" || return 1
	# The libraries peakbpf and the workload link, at the same paths.
	for lib in $(ldd "$PEAKBPF" "$WORKLOAD" 2>/dev/null | grep -o '/[^ ]*'); do
		[ -e "$lib" ] || continue
		mkdir -p "$r$(dirname "$lib")"
		cp -L "$lib" "$r$lib" || return 1
	done
}

# ct_podman_ready NAME: podman with private storage, or skip NAME saying why.
ct_podman_ready() {
	if [ -n "$CT_PODMAN" ]; then return 0; fi
	if [ -z "$CT_PODMAN_WHY" ]; then
		for tool in podman runc conmon; do
			command -v "$tool" >/dev/null 2>&1 || { CT_PODMAN_WHY="$tool not installed"; break; }
		done
	fi
	[ -z "$CT_PODMAN_WHY" ] && { ct_dir || CT_PODMAN_WHY="no temporary directory"; }
	if [ -z "$CT_PODMAN_WHY" ]; then
		p=$CT_DIR/podman
		mkdir -p "$p/root" "$p/runroot" "$p/tmp" "$p/net"
		# default_ulimits = []: crun and runc set RLIMIT_NOFILE from the
		# default, refused without CAP_SYS_RESOURCE. runc: crun refuses a
		# cgroup2 mount with a controller beside the v1 hierarchies ("hybrid
		# mode"). lock_type file: the locks under tmpdir, not the host's
		# /dev/shm/libpod_lock. The rest keeps every file under $p.
		cat >"$p/containers.conf" <<-EOF
			[containers]
			default_ulimits = []
			[engine]
			cgroup_manager = "cgroupfs"
			events_logger = "file"
			events_logfile_path = "$p/tmp/events.log"
			image_copy_tmp_dir = "$p/tmp"
			lock_type = "file"
			runtime = "runc"
			[network]
			network_config_dir = "$p/net"
		EOF
		CONTAINERS_CONF=$p/containers.conf
		export CONTAINERS_CONF
		ct_note /run/runc
		ct_note /var/lib/containers
		for h in /sys/fs/cgroup/*/ /sys/fs/cgroup/; do
			[ -f "${h}cgroup.procs" ] && ct_note "${h}libpod_parent"
		done
		CT_PODMAN="podman --root $p/root --runroot $p/runroot --tmpdir $p/tmp --storage-driver vfs --cgroup-manager cgroupfs --runtime runc --events-backend file"
		# shellcheck disable=SC2086
		if ! $CT_PODMAN info >"$p/info.out" 2>&1; then
			CT_PODMAN_WHY="podman info failed: $(tail -n 1 "$p/info.out")"
			CT_PODMAN=""
		fi
	fi
	[ -z "$CT_PODMAN_WHY" ] && return 0
	skip "$1: $CT_PODMAN_WHY"
	return 1
}

# ct_podman ARGS...: podman of this run (TMPDIR too under its directory).
ct_podman() {
	# shellcheck disable=SC2086
	TMPDIR=$CT_DIR/podman/tmp $CT_PODMAN "$@"
}

# ct_docker_start NAME: a dockerd of this run, or skip NAME saying why.
ct_docker_start() {
	[ -n "$CT_DOCKER" ] && return 0
	why=""
	for tool in dockerd docker containerd runc; do
		command -v "$tool" >/dev/null 2>&1 || { why="$tool not installed"; break; }
	done
	[ -z "$why" ] && { ct_dir || why="no temporary directory"; }
	if [ -n "$why" ]; then
		skip "$1: $why"
		return 1
	fi
	d=$CT_DIR/docker
	mkdir -p "$d/data" "$d/exec"
	echo '{}' >"$d/daemon.json"
	for path in /run/containerd/s /run/containerd /run/docker/plugins /run/docker \
		/etc/docker/key.json /etc/docker; do
		ct_note "$path"
	done
	CT_DOCKER_CGROUP=peakbpf-ct-$$
	for h in /sys/fs/cgroup/*/ /sys/fs/cgroup/; do
		[ -f "${h}cgroup.procs" ] && ct_note "$h$CT_DOCKER_CGROUP"
	done
	dockerd --config-file "$d/daemon.json" --data-root "$d/data" --exec-root "$d/exec" \
		--pidfile "$d/dockerd.pid" -H "unix://$d/docker.sock" --iptables=false \
		--ip6tables=false --bridge=none --storage-driver vfs \
		--cgroup-parent "/$CT_DOCKER_CGROUP" >"$d/dockerd.log" 2>&1 &
	CT_DOCKER_PID=$!
	CT_DOCKER="docker -H unix://$d/docker.sock"
	i=0
	# shellcheck disable=SC2086
	while ! $CT_DOCKER version >/dev/null 2>&1; do
		i=$((i + 1))
		if [ "$i" -ge 300 ] || ! kill -0 "$CT_DOCKER_PID" 2>/dev/null; then
			why="dockerd did not start: $(tail -n 1 "$d/dockerd.log")"
			ct_docker_stop
			skip "$1: $why"
			return 1
		fi
		sleep 0.1
	done
}

# ct_docker_stop: remove the containers, stop dockerd (it stops its
# containerd), wait for both, remove their files and cgroups.
ct_docker_stop() {
	[ -n "$CT_DOCKER_PID" ] || return 0
	if [ -n "$CT_DOCKER" ]; then
		# shellcheck disable=SC2086
		ids=$($CT_DOCKER ps -aq 2>/dev/null)
		# shellcheck disable=SC2086
		[ -n "$ids" ] && $CT_DOCKER rm -f $ids >/dev/null 2>&1
	fi
	kill "$CT_DOCKER_PID" 2>/dev/null
	i=0
	while kill -0 "$CT_DOCKER_PID" 2>/dev/null && [ "$i" -lt 150 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	kill -9 "$CT_DOCKER_PID" 2>/dev/null
	wait "$CT_DOCKER_PID" 2>/dev/null
	# Its containerd, if dockerd died before stopping it.
	cpid=$(cat "$CT_DIR/docker/exec/containerd/containerd.pid" 2>/dev/null)
	if [ -n "$cpid" ] && grep -q containerd "/proc/$cpid/comm" 2>/dev/null; then
		kill "$cpid" 2>/dev/null
		sleep 0.5
		kill -9 "$cpid" 2>/dev/null
	fi
	CT_DOCKER_PID=""
	CT_DOCKER=""
	CT_DOCKER_IMAGE=""
	ct_rmcg "$CT_DOCKER_CGROUP"
	ct_remove_created
	ct_remove_overlapped
	rm -rf "$CT_DIR/docker"
}

# ct_rmcg NAME: remove the cgroup NAME (and the empty ones below it) from
# every hierarchy, if this run created it.
ct_rmcg() {
	[ -n "$1" ] || return 0
	for h in /sys/fs/cgroup/*/ /sys/fs/cgroup/; do
		case " $CT_CREATED " in *" $h$1 "*) ;; *) continue ;; esac
		[ -d "$h$1" ] || continue
		find "$h$1" -depth -type d -exec rmdir {} \; 2>/dev/null
	done
}

# ct_remove_overlapped: the runtimes' empty directories an overlapping run
# made and could not remove while this one used them (nor this one, which
# did not make them), once no runtime runs here: empty, they hold nothing.
ct_remove_overlapped() {
	pgrep -x 'conmon|podman|runc|dockerd|containerd|containerd-shim' >/dev/null 2>&1 && return 0
	for path in /run/containerd/s /run/containerd /run/docker/plugins /run/docker /run/runc; do
		[ -d "$path" ] && rmdir "$path" 2>/dev/null
	done
	return 0
}

# ct_remove_created: the paths outside $CT_DIR this run made, if still empty
# (directories) or for files at all; the longest (deepest) first.
ct_remove_created() {
	for path in $(for c in $CT_CREATED; do echo "${#c} $c"; done | sort -rn | cut -d' ' -f2); do
		case $path in
		/sys/fs/cgroup/*) ;;
		*) if [ -d "$path" ]; then rmdir "$path" 2>/dev/null; else rm -f "$path"; fi ;;
		esac
	done
}

# ct_image podman|docker NAME: the test image in that runtime's store, or
# skip NAME saying why; sets CT_IMAGE.
ct_image() {
	why=""
	ct_rootfs why || { skip "$2: $why"; return 1; }
	case $1 in
	podman)
		ct_podman_ready "$2" || return 1
		if [ -z "$CT_PODMAN_IMAGE" ]; then
			ct_note /var/lib/containers/cache
			ct_note /var/lib/containers/cache/blob-info-cache-v1.boltdb
			if tar -C "$CT_DIR/rootfs" -c . | ct_podman import - peakbpf-test:latest \
				>"$CT_DIR/import.out" 2>&1; then
				CT_PODMAN_IMAGE=localhost/peakbpf-test:latest
			else
				skip "$2: podman import: $(tail -n 1 "$CT_DIR/import.out")"
				return 1
			fi
		fi
		CT_IMAGE=$CT_PODMAN_IMAGE ;;
	docker)
		ct_docker_start "$2" || return 1
		if [ -z "$CT_DOCKER_IMAGE" ]; then
			# shellcheck disable=SC2086
			if tar -C "$CT_DIR/rootfs" -c . | $CT_DOCKER import - peakbpf-test:latest \
				>"$CT_DIR/import.out" 2>&1; then
				CT_DOCKER_IMAGE=peakbpf-test:latest
			else
				skip "$2: docker import: $(tail -n 1 "$CT_DIR/import.out")"
				return 1
			fi
		fi
		CT_IMAGE=$CT_DOCKER_IMAGE ;;
	*)
		fail "ct_image: no runtime '$1' (podman or docker)"
		return 1 ;;
	esac
}

# ct_podman_stop: remove the containers and the private store.
ct_podman_stop() {
	[ -n "$CT_PODMAN" ] || return 0
	ct_podman rm -af -t 0 >/dev/null 2>&1
	ct_podman rmi -af >/dev/null 2>&1
	CT_PODMAN=""
	CT_PODMAN_IMAGE=""
	ct_rmcg libpod_parent
	# Made by a run that overlapped this one and stopped first (it could
	# not remove it while this one used it): empty, and no podman runs.
	if ! pgrep -x 'conmon|podman' >/dev/null 2>&1; then
		for h in /sys/fs/cgroup/*/libpod_parent /sys/fs/cgroup/libpod_parent; do
			[ -d "$h" ] && find "$h" -depth -type d -exec rmdir {} \; 2>/dev/null
		done
	fi
	ct_remove_created
	ct_remove_overlapped
	rm -rf "$CT_DIR/podman"
}

ct_cleanup() {
	ct_docker_stop
	ct_podman_stop
	[ -n "$CT_DIR" ] && rm -rf "$CT_DIR"
	CT_DIR=""
}
