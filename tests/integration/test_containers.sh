# shellcheck shell=sh
# The container test infrastructure itself (containers.sh): an image imported
# offline runs the workload and peakbpf under podman and docker, the container
# is in the cgroup the runtime says, and stopping leaves nothing behind.

TESTS="$TESTS t_ct_podman_infra t_ct_docker_infra"

# ct_check_image NAME RUN...: the image's workload and peakbpf run in it.
ct_check_image() {
	name=$1
	shift
	want=$("$WORKLOAD" -x -s 16MiB spike)
	got=$("$@" /bin/shape -x -s 16MiB spike 2>"$TMP/$name.err")
	if [ "$got" != "$want" ]; then
		fail "$name: /bin/shape in the container printed '$got', not '$want': $(cat "$TMP/$name.err")"
		return 1
	fi
	if ! "$@" /bin/peakbpf --version >"$TMP/$name.ver" 2>&1; then
		fail "$name: /bin/peakbpf does not run in the container: $(cat "$TMP/$name.ver")"
		return 1
	fi
}

# ct_left_behind DIR CGROUP: what a stopped runtime left: its processes, its
# mounts, its directory, its cgroup; the shared paths it created when no
# other runtime runs here (another one may be using them).
ct_left_behind() {
	left=""
	pgrep -f "$1" >/dev/null 2>&1 && left="$left processes($(pgrep -f "$1" | tr '\n' ' '))"
	grep -q " $1" /proc/self/mounts && left="$left mounts"
	[ -e "$1" ] && left="$left $1"
	[ -n "$2" ] && [ -d "/sys/fs/cgroup/memory/$2" ] && left="$left cgroup:$2"
	if ! pgrep -x 'conmon|containerd|dockerd|containerd-shim' >/dev/null; then
		for path in $CT_CREATED; do
			case $path in /sys/fs/cgroup/*) continue ;; esac
			[ -e "$path" ] && left="$left $path"
		done
	fi
	echo "$left"
}

t_ct_podman_infra() {
	ct_image podman "containers: podman infrastructure" || return
	name=$(ct_name infra)
	# shellcheck disable=SC2086
	ct_check_image ct_podman ct_podman run --rm --network none "$CT_IMAGE" || { ct_podman_stop; return; }
	# shellcheck disable=SC2086
	cg=$(ct_podman run --rm --network none --name "$name" "$CT_IMAGE" cat /proc/self/cgroup |
		grep -E '^[0-9]+:(memory|):' | head -n 1 | cut -d: -f3)
	dir=$CT_DIR/podman
	ct_podman_stop
	left=$(ct_left_behind "$dir" "libpod_parent")
	case $cg in
	/libpod_parent/libpod-* | /machine.slice/* | */libpod-*) ;;
	*) fail "containers: podman: the container's memory cgroup is '$cg'"; return ;;
	esac
	if [ -n "$left" ]; then
		fail "containers: podman: left behind after stop:$left"
	else
		ok "containers: podman (runc, private store): workload and peakbpf run in the image, cgroup $cg, nothing left after stop"
	fi
}

t_ct_docker_infra() {
	ct_image docker "containers: docker infrastructure" || return
	name=$(ct_name infra)
	# shellcheck disable=SC2086
	ct_check_image ct_docker $CT_DOCKER run --rm --network none "$CT_IMAGE" || { ct_docker_stop; return; }
	# shellcheck disable=SC2086
	cg=$($CT_DOCKER run --rm --network none --name "$name" "$CT_IMAGE" cat /proc/self/cgroup |
		grep -E '^[0-9]+:(memory|):' | head -n 1 | cut -d: -f3)
	dir=$CT_DIR/docker
	parent=$CT_DOCKER_CGROUP
	pid=$CT_DOCKER_PID
	ct_docker_stop
	left=$(ct_left_behind "$dir" "$parent")
	kill -0 "$pid" 2>/dev/null && left="$left dockerd($pid)"
	case $cg in
	"/$parent/"*) ;;
	*) fail "containers: docker: the container's memory cgroup is '$cg', not under /$parent"; return ;;
	esac
	if [ -n "$left" ]; then
		fail "containers: docker: left behind after stop:$left"
	else
		ok "containers: docker (own dockerd, data root, socket): workload and peakbpf run in the image, cgroup $cg, nothing left after stop"
	fi
}
