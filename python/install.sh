#!/bin/sh
# make install's part for Python: the package into DIR (a dist-packages
# directory of Debian's python3), told where libpeakbpf is installed, with
# the metadata that lets pytest find its plugin (entry point pytest11).
# Usage: python/install.sh DIR LIBRARY VERSION
set -eu
dir=$1 library=$2 version=$3
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$dir/peakbpf" "$dir/peakbpf-$version.dist-info"
for f in "$here"/peakbpf/*.py; do
	install -m 0644 "$f" "$dir/peakbpf/"
done
printf '# Written by make install.\nLIBRARY = "%s"\n' "$library" >"$dir/peakbpf/_config.py"
meta=$dir/peakbpf-$version.dist-info
printf 'Metadata-Version: 2.1\nName: peakbpf\nVersion: %s\nSummary: The exact peak memory of a process tree, measured in the kernel\n' \
	"$version" >"$meta/METADATA"
printf '[pytest11]\npeakbpf = peakbpf.pytest_plugin\n' >"$meta/entry_points.txt"
printf 'make\n' >"$meta/INSTALLER"
: >"$meta/RECORD"
