#!/bin/sh
# Kernel-matrix side of the integration suite: run by tools/vm/vmtest.sh
# inside each VM (make vmtest, tools/vm/vm.mk) as /bin/sh /opt/test/run.sh.
# /opt/test holds peakbpf, workload, unique_trees, stacks_known(_nofp), stacks_cxx, integration/, this
# file, test_cgroup_v2.sh, and the host tools the suite uses when the host
# had them: dash, setpriv (util-linux), bpftool, curl (the agent's tests).
#
# Runs tests/integration/run.sh with QUICK=1 (sizes, counts and waits fit
# for qemu's TCG) and the VM-only tests of test_cgroup_v2.sh.
set -u
here=$(cd "$(dirname "$0")" && pwd)

# Host tools ahead of busybox. busybox sh runs its own applets before
# looking at PATH, and its setpriv has no --bounding-set: the suite runs
# under dash, as /bin/sh on Debian, where PATH decides. A tool that does not
# run here (a wrapper script, a missing library) is left out, so that the
# tests needing it say skip.
bin=/tmp/vm-bin
mkdir -p "$bin"
tool_runs() {
	case $1 in
	dash) "$here/dash" -c 'exit 0' ;;
	setpriv) "$here/setpriv" --help ;;
	bpftool) "$here/bpftool" version ;;
	curl) "$here/curl" --version ;;
	esac >/dev/null 2>&1
}
for t in dash setpriv bpftool curl; do
	if [ -x "$here/$t" ] && tool_runs "$t"; then
		ln -sf "$here/$t" "$bin/$t"
	else
		echo "vm: no working $t from the host: the tests that need it skip"
	fi
done
# busybox's setpriv would run (and fail on --bounding-set) in its place.
if [ ! -e "$bin/setpriv" ]; then
	for d in /bin /sbin /usr/bin /usr/sbin; do
		[ "$(readlink "$d/setpriv" 2>/dev/null)" = /bin/busybox ] && rm -f "$d/setpriv"
	done
fi
shell="sh"
if [ -e "$bin/dash" ]; then
	ln -sf "$here/dash" "$bin/sh"
	shell=$bin/dash
fi
export PATH="$bin:$PATH"

# Transparent huge pages as on the hosts the suite is tuned on (madvise):
# Debian's kernels default to "always", where a 2 MiB fault changes rss by
# 512 pages at once, and the tests' expected sizes and fold counts assume
# 4 KiB faults.
thp=/sys/kernel/mm/transparent_hugepage/enabled
[ -w "$thp" ] && echo madvise >"$thp"

export QUICK="${QUICK:-1}"
export OUTPUT="$here" PEAKBPF="$here/peakbpf" WORKLOAD="$here/workload"
export EXTRA_TESTS="$here/test_cgroup_v2.sh"
# make vmtest VMTEST_ONLY="t_a t_b" ships the names in the file "only".
[ -s "$here/only" ] && ONLY=$(cat "$here/only") && export ONLY
# shellcheck disable=SC3045 # ulimit -l: busybox sh and dash have it
echo "vm: $(uname -r), QUICK=$QUICK, shell $shell, thp $(cat "$thp" 2>/dev/null), memlock $(ulimit -l) KiB"
exec "$shell" "$here/integration/run.sh"
