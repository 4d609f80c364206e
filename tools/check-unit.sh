#!/bin/sh
# make check-unit: the systemd units as `make install` writes them pass
# `systemd-analyze verify`, and the service's exposure (`systemd-analyze
# security --offline=true`) is rated OK or better. PID 1 need not be systemd.
# Usage: tools/check-unit.sh BINDIR   (the directory ExecStart's peakbpf is in)
set -u
bindir=$1
if ! command -v systemd-analyze >/dev/null 2>&1; then
	echo "check-unit: skip: systemd-analyze not installed (apt-get install systemd)"
	exit 0
fi
dir=$(mktemp -d) || exit 1
trap 'rm -rf "$dir"' EXIT
sed "s|@BINDIR@|$bindir|" systemd/peakbpf.service.in >"$dir/peakbpf.service"
sed "s|@BINDIR@|$bindir|" systemd/peakbpf-agent.service.in >"$dir/peakbpf-agent.service"
cp systemd/peakbpf.socket "$dir/"
if ! (cd "$dir" && systemd-analyze verify --man=no ./peakbpf.service ./peakbpf.socket ./peakbpf-agent.service) \
	>"$dir/verify" 2>&1 || [ -s "$dir/verify" ]; then
	echo "check-unit: systemd-analyze verify: $(cat "$dir/verify")"
	exit 1
fi
# The helper and the agent (issue 34), each rated OK or better.
for unit in peakbpf.service peakbpf-agent.service; do
	rating=$(cd "$dir" && systemd-analyze security --offline=true "./$unit" 2>&1 | tail -n 1)
	case $rating in
	*" SAFE"* | *" OK"*)
		echo "check-unit: ok: $unit verify clean; ${rating#→ }" ;;
	*)
		echo "check-unit: $unit's exposure is no longer OK: $rating (systemd-analyze security --offline=true)"
		exit 1 ;;
	esac
done
