#!/bin/sh
# Install what peakbpf needs to build and test from Debian's packages.
# Idempotent: prints nothing and installs nothing when all is there.
set -eu
# The Slurm packages: the SPANK plugin's header (libslurm-dev) and the
# single-node cluster of make slurm-test (tools/slurm/cluster.sh starts the
# daemons itself, on their own sockets, ports and directories: beside any
# munged, mariadbd or slurmd the packages' own units may start under systemd).
# The container tests (tests/integration/containers.sh): podman with runc and
# conmon, docker.io with containerd (the tests start their own dockerd), and
# busybox-static for the image's rootfs (no registry is needed).
# libelf-dev is libbpf's, and --stacks' too: it names frames from the ELF
# files (src/lib/kernel/stacks_sym.c). --stacks' speedscope JSON is checked
# against speedscope's own schema (python3-jsonschema) and drawn by
# speedscope itself in chromium (tests/integration/test_stacks_formats.sh):
# speedscope, from npm's registry, pinned, into $SPEEDSCOPE_PREFIX (a
# directory of its own, outside the tree and outside npm's global one).

# g++ and python3-numpy: --stacks on the programs of
# tests/integration/test_stacks_programs.sh (a C++ program of Debian's
# toolchain, numpy's allocations under Debian's python3).
pkgs="clang llvm libclang-rt-14-dev libbpf-dev bpftool libelf-dev zlib1g-dev libcmocka-dev
      pkg-config make gcc g++ libc6-dev python3-pytest python3-venv python3-pip chromium
      openmpi-bin hyperfine time python3-prometheus-client python3-numpy systemd util-linux
      munge mariadb-server slurmctld slurmd slurmdbd slurm-client libslurm-dev libcap2-bin
      podman runc conmon docker.io containerd busybox-static
      tmux libmicrohttpd-dev curl prometheus prometheus-node-exporter python3-yaml
      python3-jsonschema"

SPEEDSCOPE_VERSION=1.25.0
SPEEDSCOPE_PREFIX=${SPEEDSCOPE_PREFIX:-/usr/local/lib/peakbpf-test-node}

# speedscope at its pinned version, unless it is there.
speedscope() {
	grep -qs "\"version\": \"$SPEEDSCOPE_VERSION\"" "$SPEEDSCOPE_PREFIX/node_modules/speedscope/package.json" &&
		return 0
	if [ "$(id -u)" != 0 ]; then
		echo "install-deps: no speedscope $SPEEDSCOPE_VERSION in $SPEEDSCOPE_PREFIX (run as root to" \
			"install it): its tests will skip" >&2
		return 0
	fi
	echo "install-deps: installing speedscope@$SPEEDSCOPE_VERSION (npm) into $SPEEDSCOPE_PREFIX" >&2
	mkdir -p "$SPEEDSCOPE_PREFIX"
	npm install --prefix "$SPEEDSCOPE_PREFIX" --no-audit --no-fund --no-save --loglevel=error \
		"speedscope@$SPEEDSCOPE_VERSION" >/dev/null ||
		echo "install-deps: npm could not install speedscope: its tests will skip, saying so" >&2
}

missing=""
for p in $pkgs; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' ||
		missing="$missing $p"
done
# npm: Debian's package, unless an npm is there (a Node.js of another
# packaging ships its own, and Debian's npm would conflict with it).
command -v npm >/dev/null 2>&1 || missing="$missing npm"
if [ -z "$missing" ]; then
	speedscope
	exit 0
fi

if [ "$(id -u)" != 0 ]; then
	echo "install-deps: missing packages:$missing" >&2
	echo "install-deps: run as root, or: sudo apt-get install$missing" >&2
	exit 1
fi
echo "install-deps: installing$missing" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq >/dev/null
# shellcheck disable=SC2086
apt-get install -y -qq --no-install-recommends $missing >/dev/null
speedscope
