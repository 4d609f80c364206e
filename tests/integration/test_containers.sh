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
	# The cgroup, if this run made it (podman's libpod_parent may be
	# another run's, made before this one).
	case " $CT_CREATED " in
	*" /sys/fs/cgroup/memory/$2 "*) [ -d "/sys/fs/cgroup/memory/$2" ] && left="$left cgroup:$2" ;;
	esac
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

# peakbpf inside a container with CAP_BPF + CAP_PERFMON (issue 33): the
# runtime's default seccomp profile refuses bpf() (podman's, docker's before
# 23.0) and peakbpf says which option fixes it; with the profile that
# contrib/seccomp/peakbpf-seccomp makes from the runtime's default it is exact.
TESTS="$TESTS t_ct_seccomp_profile t_ct_podman_seccomp t_ct_docker_seccomp"
CT_SECCOMP_GEN=${CT_SECCOMP_GEN:-$here/../../contrib/seccomp/peakbpf-seccomp}

# ct_profile NAME: $CT_DIR/peakbpf-seccomp.json from the runtime's default
# (podman's file, containers-common), or skip NAME saying why.
ct_profile() {
	need python3 "$1" || return 1
	[ -f "$CT_DIR/peakbpf-seccomp.json" ] && return 0
	if ! "$CT_SECCOMP_GEN" >"$CT_DIR/peakbpf-seccomp.json" 2>"$CT_DIR/seccomp.err"; then
		skip "$1: $(cat "$CT_DIR/seccomp.err")"
		rm -f "$CT_DIR/peakbpf-seccomp.json"
		return 1
	fi
}

# ct_measure NAME OUT RUN...: peakbpf in the container (RUN... is the
# runtime's run up to the image), a 64 MiB spike; the record in OUT.
ct_measure() {
	name=$1 out=$2
	shift 2
	mkdir -p "$CT_DIR/out"
	rm -f "$CT_DIR/out/$out"
	"$@" /bin/peakbpf -q -o "/out/$out" -- /bin/shape -s 64MiB -t 300ms spike \
		>"$TMP/$name.$out.log" 2>&1
}

# ct_check_refused NAME JSON OPTION: a fallback (not bpf, not exact) whose
# reason names OPTION and not the locked-memory limit.
ct_check_refused() {
	src=$(json_raw "$2" source) exact=$(json_raw "$2" exact)
	if [ ! -s "$2" ]; then
		fail "$1: no record: $(cat "$TMP/$1."*.log 2>/dev/null | tail -n 3)"
	elif [ "$src" = '"bpf"' ] || [ "$exact" != false ]; then
		fail "$1: source $src exact $exact, not a fallback: $(head -c 600 "$2")"
	elif ! grep -q "seccomp filter refuses bpf().*$3" "$2"; then
		fail "$1: the reason does not name $3: $(grep -o '"not_used":[^]]*' "$2")"
	elif grep -q 'locked-memory' "$2"; then
		fail "$1: the reason still speaks of the locked-memory limit: $(grep -o '"not_used":[^]]*' "$2")"
	else
		ok "$1: source $src, not exact; not used: $(grep -o 'bpf: a seccomp filter[^"]*' "$2" | cut -c1-90)..."
	fi
}

# ct_check_exact NAME JSON: source bpf, exact, the spike's growth.
ct_check_exact() {
	src=$(json_raw "$2" source) exact=$(json_raw "$2" exact)
	if [ "$src" = '"bpf"' ] && [ "$exact" = true ]; then
		check_growth "$1" "$2" "$("$WORKLOAD" -x -s 64MiB spike)"
	else
		fail "$1: source $src exact $exact: $(grep -o '"not_used":[^]]*' "$2") $(tail -n 2 "$TMP/$1."*.log)"
	fi
}

# peakbpf-seccomp changes the bpf() rules and nothing else: every other
# rule, the default action and the architectures are the default's; run
# on its own output it gives the same profile; bad input is one line and
# exit 2. No runtime needed: the runtime's default where there is one,
# else a small profile of the same format.
t_ct_seccomp_profile() {
	n="containers: peakbpf-seccomp"
	need python3 "$n" || return
	ct_dir || { fail "$n: no temporary directory"; return; }
	in=/usr/share/containers/seccomp.json
	if [ ! -f "$in" ]; then
		in=$CT_DIR/small.json
		printf '%s\n' '{"defaultAction":"SCMP_ACT_ERRNO","syscalls":[{"names":["read","write"],"action":"SCMP_ACT_ALLOW"},{"names":["bpf","setns"],"action":"SCMP_ACT_ALLOW","includes":{"caps":["CAP_SYS_ADMIN"]}},{"names":["bpf","setns"],"action":"SCMP_ACT_ERRNO","errnoRet":1,"excludes":{"caps":["CAP_SYS_ADMIN"]}}]}' >"$in"
	fi
	"$CT_SECCOMP_GEN" "$in" >"$CT_DIR/p1.json" && "$CT_SECCOMP_GEN" "$CT_DIR/p1.json" >"$CT_DIR/p2.json" ||
		{ fail "$n: it failed on $in"; return; }
	diff=$(python3 -c 'import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
strip = lambda r: dict(r, names=[x for x in r["names"] if x != "bpf"])
rest = lambda p: [strip(r) for r in p["syscalls"] if [x for x in r["names"] if x != "bpf"]]
top = lambda p: {k: v for k, v in p.items() if k != "syscalls"}
ours = [r for r in b["syscalls"] if "peakbpf" in r.get("comment", "")]
print("same" if rest(a) == rest(b) and top(a) == top(b) and
      [(r["action"], r.get("includes"), r.get("excludes")) for r in ours] ==
      [("SCMP_ACT_ALLOW", {"caps": ["CAP_BPF"]}, None),
       ("SCMP_ACT_ERRNO", None, {"caps": ["CAP_BPF", "CAP_SYS_ADMIN"]})] else "differs")' \
		"$in" "$CT_DIR/p1.json")
	echo '{"no": "syscalls"}' >"$CT_DIR/bad.json"
	"$CT_SECCOMP_GEN" "$CT_DIR/bad.json" >/dev/null 2>"$CT_DIR/bad.err"
	rc=$?
	if [ "$diff" = same ] && cmp -s "$CT_DIR/p1.json" "$CT_DIR/p2.json" && [ "$rc" = 2 ] &&
		[ "$(wc -l <"$CT_DIR/bad.err")" = 1 ]; then
		ok "$n: from $in: only bpf()'s rules differ (allowed with CAP_BPF, EPERM without it or CAP_SYS_ADMIN); idempotent; bad input: exit 2, $(cat "$CT_DIR/bad.err")"
	else
		fail "$n: from $in: rules $diff, idempotent $(cmp -s "$CT_DIR/p1.json" "$CT_DIR/p2.json" && echo yes || echo no), bad input exit $rc: $(cat "$CT_DIR/bad.err")"
	fi
}

t_ct_podman_seccomp() {
	n="containers: podman seccomp"
	ct_image podman "$n" || return
	ct_profile "$n" || return
	run="ct_podman run --rm --network none --cap-drop=all --cap-add=bpf,perfmon -v $CT_DIR/out:/out"
	# shellcheck disable=SC2086 # run is words
	ct_measure ct_podman_default default.json $run "$CT_IMAGE"
	ct_check_refused "$n: default profile, CAP_BPF+CAP_PERFMON" "$CT_DIR/out/default.json" \
		"--security-opt seccomp=FILE"
	# shellcheck disable=SC2086
	ct_measure ct_podman_shipped shipped.json $run \
		--security-opt "seccomp=$CT_DIR/peakbpf-seccomp.json" "$CT_IMAGE"
	ct_check_exact "$n: peakbpf-seccomp's profile, CAP_BPF+CAP_PERFMON" "$CT_DIR/out/shipped.json"
	# The profile still refuses bpf() to a container without CAP_BPF.
	# shellcheck disable=SC2086
	if ct_podman run --rm --network none --cap-drop=all --cap-add=perfmon -v "$CT_DIR/out:/out" \
		--security-opt "seccomp=$CT_DIR/peakbpf-seccomp.json" "$CT_IMAGE" \
		/bin/peakbpf --source bpf -q -- true >"$TMP/ct_podman_nobpf.log" 2>&1; then
		fail "$n: peakbpf-seccomp's profile without CAP_BPF: peakbpf --source bpf succeeded"
	else
		ok "$n: peakbpf-seccomp's profile without CAP_BPF: refused ($(head -c 80 "$TMP/ct_podman_nobpf.log")...)"
	fi
	ct_podman_stop
}

# docker before 23.0 (Debian 12's 20.10) knows no capability after
# CAP_AUDIT_READ: --cap-add BPF is refused, so CAP_BPF cannot be given and
# CAP_SYS_ADMIN is the way there (its default profile then allows bpf()).
t_ct_docker_seccomp() {
	n="containers: docker seccomp"
	ct_image docker "$n" || return
	ct_profile "$n" || { ct_docker_stop; return; }
	run="$CT_DOCKER run --rm --network none --cap-drop=all -v $CT_DIR/out:/out"
	# shellcheck disable=SC2086
	if $run --cap-add BPF --cap-add PERFMON "$CT_IMAGE" true >"$TMP/ct_docker_caps.log" 2>&1; then
		# shellcheck disable=SC2086
		ct_measure ct_docker_default default.json $run --cap-add BPF --cap-add PERFMON "$CT_IMAGE"
		if [ "$(json_raw "$CT_DIR/out/default.json" source)" = '"bpf"' ]; then
			ct_check_exact "$n: default profile (allows bpf() with CAP_BPF)" "$CT_DIR/out/default.json"
		else
			ct_check_refused "$n: default profile, CAP_BPF+CAP_PERFMON" "$CT_DIR/out/default.json" \
				"--security-opt seccomp=FILE"
		fi
		# shellcheck disable=SC2086
		ct_measure ct_docker_shipped shipped.json $run --cap-add BPF --cap-add PERFMON \
			--security-opt "seccomp=$CT_DIR/peakbpf-seccomp.json" "$CT_IMAGE"
		ct_check_exact "$n: peakbpf-seccomp's profile, CAP_BPF+CAP_PERFMON" "$CT_DIR/out/shipped.json"
	else
		v=$($CT_DOCKER version --format '{{.Server.Version}}' 2>/dev/null)
		skip "$n: CAP_BPF+CAP_PERFMON: dockerd $v cannot grant them ($(grep -o 'unknown capability[^"]*"[A-Z_]*"' "$TMP/ct_docker_caps.log" | head -n 1)); docker 23.0 can"
		# shellcheck disable=SC2086
		ct_measure ct_docker_admin default.json $run --cap-add SYS_ADMIN "$CT_IMAGE"
		ct_check_exact "$n: default profile, CAP_SYS_ADMIN (docker $v)" "$CT_DIR/out/default.json"
		# shellcheck disable=SC2086
		ct_measure ct_docker_shipped shipped.json $run --cap-add SYS_ADMIN \
			--security-opt "seccomp=$CT_DIR/peakbpf-seccomp.json" "$CT_IMAGE"
		ct_check_exact "$n: peakbpf-seccomp's profile, CAP_SYS_ADMIN (docker $v)" "$CT_DIR/out/shipped.json"
		# The diagnosis in docker's runc too: a profile that refuses bpf()
		# even with CAP_SYS_ADMIN (the shipped one, its bpf rules dropped).
		python3 -c 'import json, sys
p = json.load(open(sys.argv[1]))
for r in p["syscalls"]:
    r["names"] = [x for x in r["names"] if x != "bpf" or r["action"] != "SCMP_ACT_ALLOW"]
p["syscalls"] = [r for r in p["syscalls"] if r["names"]]
json.dump(p, open(sys.argv[2], "w"))' "$CT_DIR/peakbpf-seccomp.json" "$CT_DIR/nobpf.json"
		# shellcheck disable=SC2086
		ct_measure ct_docker_nobpf nobpf.json $run --cap-add SYS_ADMIN \
			--security-opt "seccomp=$CT_DIR/nobpf.json" "$CT_IMAGE"
		ct_check_refused "$n: a profile refusing bpf(), CAP_SYS_ADMIN" "$CT_DIR/out/nobpf.json" \
			"--security-opt seccomp=FILE"
	fi
	ct_docker_stop
}
