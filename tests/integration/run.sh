#!/bin/sh
# Integration tests: load the real BPF programs into this kernel and measure
# real workloads with known memory shapes. Needs root (or CAP_BPF +
# CAP_PERFMON) and a kernel with BTF; otherwise every test says "skip".
# Usage: tests/integration/run.sh   (OUTPUT=dir of the built binaries,
#        ONLY="t_name ..." to run some tests only)
set -u
here=$(cd "$(dirname "$0")" && pwd)
OUTPUT=${OUTPUT:-$here/../../.output}
PEAKBPF=${PEAKBPF:-$OUTPUT/peakbpf}
WORKLOAD=${WORKLOAD:-$OUTPUT/workload}
TMP=$(mktemp -d)
RESULTS=${RESULTS:-$TMP/results.txt}
# ct_cleanup (containers.sh): the containers, dockerd and podman store of
# this run; hugetlb_restore (test_hugetlb.sh): vm.nr_hugepages as it was;
# on a signal too, so that no daemon outlives an interrupted run.
trap 'ct_cleanup; hugetlb_restore; rm -rf "$TMP"' EXIT
trap 'exit 1' INT TERM HUP
# A helper running on this machine (peakbpf serve at the default socket) is
# used by default (issue 24): tests measure here unless they start their own.
PEAKBPF_HELPER=${PEAKBPF_HELPER:-$TMP/no-helper.sock}
export PEAKBPF_HELPER
. "$here/lib.sh"
. "$here/containers.sh"
TESTS=""
. "$here/test_command.sh"
. "$here/test_attach.sh"
. "$here/test_sources.sh"
. "$here/test_cgroup_safety.sh"
. "$here/test_exact.sh"
. "$here/test_sampler.sh"
. "$here/test_runs.sh"
. "$here/test_runs_terminal.sh"
. "$here/test_hyperfine.sh"
. "$here/test_timeline.sh"
. "$here/test_outputs.sh"
. "$here/test_timeline_legend.sh"
. "$here/test_serve.sh"
. "$here/test_serve_security.sh"
. "$here/test_serve_unit.sh"
. "$here/test_serve_hostile.sh"
. "$here/test_serve_fair.sh"
. "$here/test_serve_setuid.sh"
. "$here/test_env.sh"
. "$here/test_serve_record.sh"
. "$here/test_unique.sh"
. "$here/test_serve_unique.sh"
. "$here/test_bound.sh"
. "$here/test_mpi.sh"
. "$here/test_honest.sh"
. "$here/test_cgroups.sh"
. "$here/test_containers.sh"
. "$here/test_gap.sh"
. "$here/test_containers_target.sh"
. "$here/test_hugetlb.sh"
. "$here/test_oom.sh"
. "$here/test_agent.sh"
. "$here/test_stacks_programs.sh"
. "$here/test_stacks.sh"
. "$here/test_stacks_formats.sh"
# More test files, from another runner (tests/vm/run.sh: the VM-only ones).
for extra in ${EXTRA_TESTS:-}; do
	. "$extra"
done

# ONLY="t_a t_b": run just these tests (while working on them; CI runs all).
[ -n "${ONLY:-}" ] && TESTS=$ONLY

echo "integration: $(uname -r), $(nproc 2>/dev/null || echo '?') CPUs"
# Why the whole suite cannot run: a name of its own, since tests use "why"
# for their own reasons (a test that left its why set once made every test
# after it skip with that reason: "dockerd not installed" in the VMs).
suite_why=""
[ "$(id -u)" = 0 ] || suite_why="not root"
[ -r /sys/kernel/btf/vmlinux ] || suite_why="kernel has no BTF"
[ -x "$PEAKBPF" ] && [ -x "$WORKLOAD" ] || suite_why="binaries not built (make all)"

# Tests of userspace logic alone: the helper's protocol, limits and hostile
# clients, output formats and writers, option handling, the merge. The
# kernel matrix adds nothing to them but minutes of TCG (make check stays
# under 35 minutes), so the VMs (QUICK=1) skip them unless ONLY names them;
# the host runs them all. What differs by kernel (loading, tracking, the
# helper's BPF side: t_serve_nobody_exact, t_serve_unique_*, ...) stays.
HOST_ONLY="t_serve_client_killed t_serve_two_trees t_serve_limits t_serve_socket_activation
	t_serve_refuses_root_pid t_serve_ptrace_rule t_writers_refuse_symlinks t_failed_run_keeps_output
	t_serve_status_own t_add_pid_authorised t_serve_linger t_serve_hostile t_serve_accept_emfile
	t_serve_killed_restarted t_serve_fair t_serve_record_timeline t_serve_record_sampler
	t_serve_record_python t_serve_record_nodrain t_serve_record_version t_runs_compare
	t_budget_exceeded t_budget_within t_budget_failing_command t_exports_parse t_sweep_slope
	t_runs_terminal t_runs_ctrl_c t_output_modes t_output_full_disk t_output_node_exporter
	t_timeline_json t_timeline_plots t_timeline_plot_cmd t_timeline_errors t_timeline_legend
	t_merge_two_hosts t_merge_bad_inputs t_env_misspelt_helper t_hyperfine_same_flags
	t_command_string_exec t_show_output_and_hooks t_progress_bar t_ci_exports
	t_honest_helper_unreachable t_stacks_speedscope t_stacks_bad_format t_stacks_flamegraph_pixels
	t_stacks_timeline_link"
host_only() {
	[ "$QUICK" = 1 ] && [ -z "${ONLY:-}" ] || return 1
	for h in $HOST_ONLY; do [ "$h" = "$1" ] && return 0; done
	return 1
}

# Seconds per test (whole seconds: busybox's date has no %N), so that the
# slow ones show in CI's log; the ten slowest are printed at the end.
TIMES=$TMP/times.txt
for t in $TESTS; do
	if [ -n "$suite_why" ]; then
		skip "$t: $suite_why"
	elif host_only "$t"; then
		skip "$t: userspace logic, the same on every kernel: run on the host (make integration)"
	else
		run_t0=$(date +%s)
		"$t"
		echo "$(($(date +%s) - run_t0)) $t" >>"$TIMES"
	fi
done
echo "shape errors (name growth true error procs [bound]):"
[ -f "$RESULTS" ] && sed 's/^/  /' "$RESULTS"
if [ -f "$TIMES" ]; then
	echo "slowest tests (s): $(sort -rn "$TIMES" | head -n 10 | tr '\n' ' ')"
	echo "all tests: $(awk '{ s += $1 } END { print s }' "$TIMES") s"
fi
echo "$PASSED passed, $FAILED failed, $SKIPPED skipped"
[ "$FAILED" = 0 ]
