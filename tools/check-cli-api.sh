#!/bin/sh
# make check-cli-api: the CLI is built on libpeakbpf's public API only.
# Every symbol the CLI's objects take from libpeakbpf.a is a peakbpf_* one
# (what they define themselves, the shared helpers, does not count). That
# no CLI source includes a header of the library's internals is make
# check-layers' part (tools/check-layers.py).
# usage: check-cli-api.sh LIBPEAKBPF.A CLI_OBJECT...
set -u
lib=$1
shift
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
nm -g --defined-only "$@" 2>/dev/null | awk 'NF == 3 { print $3 }' | sort -u >"$tmp/cli-defined"
nm -u "$@" 2>/dev/null | awk 'NF == 2 { print $2 }' | sort -u >"$tmp/cli-undefined"
nm -g --defined-only "$lib" 2>/dev/null | awk 'NF == 3 { print $3 }' | sort -u >"$tmp/lib-defined"
comm -23 "$tmp/cli-undefined" "$tmp/cli-defined" | comm -12 - "$tmp/lib-defined" >"$tmp/taken"
grep -v '^peakbpf_' "$tmp/taken" >"$tmp/bad"
if [ -s "$tmp/bad" ]; then
	echo "check-cli-api: the CLI takes internals from $lib:" $(cat "$tmp/bad") >&2
	echo "check-cli-api: call them through include/peakbpf/peakbpf.h instead" >&2
	exit 1
fi
echo "  check-cli-api: ok: $# objects, $(grep -c '^peakbpf_' "$tmp/taken") calls into libpeakbpf, all public"
