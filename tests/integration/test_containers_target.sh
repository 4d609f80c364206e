# shellcheck shell=sh
# Containers as targets (issue 33): `peakbpf -- podman run` and `-- docker
# run` measure the container apart from its runtime; --container attaches to
# a running one by name. Real runtimes, offline images (containers.sh).

TESTS="$TESTS t_run_podman t_run_docker t_container_podman t_container_docker t_container_bad"

# ct_run_check NAME JSON EXPECTED RC WANT-RC: the record is the container's
# (exact, named), the runtime's processes are apart, the exit status is the
# container's.
ct_run_check() {
	name=$1 json=$2 expected=$3 rc=$4 want=$5
	[ "$rc" = "$want" ] && ok "$name: exit $rc, the container's" || fail "$name: exit $rc, $want expected: $(tail -n 3 "$TMP/$name.err")"
	[ -s "$json" ] || { fail "$name: no record: $(tail -n 3 "$TMP/$name.err")"; return; }
	# The cgroup is empty at the start (baseline 0): the growth has every
	# process's own binary and libraries (sh's too), which check_growth's
	# absolute tolerance, 1 MiB a process, is for; 2 % of the shape is not.
	NO_REL=1 check_growth "$name" "$json" "$expected"
	[ "$(json_raw "$json" exact)" = true ] && ok "$name: exact" || fail "$name: not exact: $(json_raw "$json" inexact_reason)"
	grep -q '"container":{"name":"container [^"]*([0-9a-f]\{12\}' "$json" &&
		ok "$name: the record names it: $(grep -o '"container":{"name":"[^"]*"' "$json")" ||
		fail "$name: the record does not name the container: $(grep -o '"container":{[^}]*}' "$json")"
	rt=$(grep -o '"runtime_processes":{[^}]*}' "$json")
	case $rt in
	*'"exact":true,"peak_bytes":'[1-9]*) ok "$name: the runtime's processes apart: $rt" ;;
	*) fail "$name: the runtime's processes: ${rt:-none}" ;;
	esac
	left=$(ls -d /sys/fs/cgroup/*/peakbpf-run-* 2>/dev/null)
	[ -z "$left" ] && ok "$name: the run's cgroups are gone" || fail "$name: left behind: $left"
}

t_run_podman() {
	name="run: peakbpf -- podman run (fork tree)"
	ct_image podman "$name" || return
	expected=$("$WORKLOAD" -x -s 48MiB -n 2 concurrent)
	# shellcheck disable=SC2086
	TMPDIR=$CT_DIR/podman/tmp "$PEAKBPF" -q -o "$TMP/runp.json" -- $CT_PODMAN run --rm --network none \
		--name "$(ct_name runp)" "$CT_IMAGE" /bin/sh -c '/bin/shape -s 48MiB -n 2 -t 300ms concurrent; exit 7' \
		2>"$TMP/$name.err"
	ct_run_check "$name" "$TMP/runp.json" "$expected" $? 7
}

t_run_docker() {
	name="run: peakbpf -- docker run (spike)"
	ct_image docker "$name" || return
	expected=$("$WORKLOAD" -x -s 64MiB spike)
	# shellcheck disable=SC2086
	"$PEAKBPF" -q -o "$TMP/rund.json" -- $CT_DOCKER run --rm --network none --name "$(ct_name rund)" \
		"$CT_IMAGE" /bin/sh -c '/bin/shape -s 64MiB -t 300ms spike; exit 5' 2>"$TMP/$name.err"
	ct_run_check "$name" "$TMP/rund.json" "$expected" $? 5
}

# ct_attach NAME RUNTIME-ENV RUNTIME-WORDS...: a container started before
# peakbpf (its children idle, then allocate), measured by --container.
ct_attach() {
	name=$1 env=$2
	shift 2
	cname=$(ct_name "att$$")
	expected=$("$WORKLOAD" -x -s 32MiB -n 2 late-children)
	# shellcheck disable=SC2068
	$@ run -d --rm --network none --name "$cname" "$CT_IMAGE" /bin/shape -s 32MiB -n 2 -t "$(q 3s 8s)" \
		late-children >"$TMP/att.id" 2>&1 || { fail "$name: the container did not start: $(cat "$TMP/att.id")"; return; }
	env "$env=$*" "$PEAKBPF" -q -o "$TMP/att.json" --container "$cname" 2>"$TMP/att.err"
	rc=$?
	if [ "$rc" != 0 ]; then
		fail "$name: exit $rc: $(cat "$TMP/att.err")"
		return
	fi
	check_growth "$name" "$TMP/att.json" "$expected"
	grep -q "\"target\":{\"name\":\"container $cname (" "$TMP/att.json" &&
		ok "$name: the record names it; the run ended when the container did" ||
		fail "$name: $(grep -o '"target":{[^}]*}' "$TMP/att.json")"
}

t_container_podman() {
	ct_image podman "container: --container (podman)" || return
	ct_attach "container: --container NAME (podman, started before)" PEAKBPF_PODMAN $CT_PODMAN
}

t_container_docker() {
	ct_image docker "container: --container (docker)" || return
	ct_attach "container: --container NAME (docker, started before)" PEAKBPF_DOCKER $CT_DOCKER
}

# No such container, no runtime, a name both runtimes have: one line each,
# a distinct exit status.
t_container_bad() {
	ct_bad() {
		want=$1 what=$2
		shift 2
		"$@" >"$TMP/ctbad.out" 2>"$TMP/ctbad.err"
		rc=$?
		[ "$rc" = "$want" ] && [ "$(wc -l <"$TMP/ctbad.err")" = 1 ] &&
			ok "container bad input: $what: exit $rc: $(cat "$TMP/ctbad.err")" ||
			fail "container bad input: $what: exit $rc ($want expected): $(cat "$TMP/ctbad.err")"
	}
	ct_bad 117 "no runtime installed" env PEAKBPF_PODMAN=/nonexistent/podman PEAKBPF_DOCKER=/nonexistent/docker \
		"$PEAKBPF" -q --container x
	ct_bad 117 "docker: named, not installed" env PEAKBPF_DOCKER=/nonexistent/docker "$PEAKBPF" -q --container docker:x
	ct_image podman "container bad input" || return
	ct_bad 120 "no such container" env PEAKBPF_PODMAN="$CT_PODMAN" PEAKBPF_DOCKER=/nonexistent/docker \
		"$PEAKBPF" -q --container "$(ct_name none)"
	ct_image docker "container bad input: a name both runtimes have" || return
	both=$(ct_name both)
	# shellcheck disable=SC2086
	ct_podman run -d --rm --network none --name "$both" "$CT_IMAGE" sleep 30 >/dev/null 2>&1
	# shellcheck disable=SC2086
	$CT_DOCKER run -d --rm --network none --name "$both" "$CT_IMAGE" sleep 30 >/dev/null 2>&1
	ct_bad 118 "a name both runtimes have" env PEAKBPF_PODMAN="$CT_PODMAN" PEAKBPF_DOCKER="$CT_DOCKER" \
		"$PEAKBPF" -q --container "$both"
	ct_podman rm -f -t 0 "$both" >/dev/null 2>&1
	# shellcheck disable=SC2086
	$CT_DOCKER rm -f "$both" >/dev/null 2>&1
}
