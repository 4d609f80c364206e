#!/bin/sh
# make check-cli-api: the CLI is built on libpeakbpf's public API only.
# Every symbol the CLI's objects take from libpeakbpf.a is a peakbpf_* one,
# and every symbol they take from the helper's archive (peakbpf serve, a
# library of its own) is one its header declares (what the CLI's objects
# define themselves, the shared helpers, does not count). That no CLI
# source includes a header of the library's internals is make
# check-layers' part (tools/check-layers.py).
# usage: check-cli-api.sh LIBPEAKBPF.A HELPER.A HELPER_HEADER CLI_OBJECT...
set -u
lib=$1
helper=$2
header=$3
shift 3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
nm -g --defined-only "$@" 2>/dev/null | awk 'NF == 3 { print $3 }' | sort -u >"$tmp/cli-defined"
nm -u "$@" 2>/dev/null | awk 'NF == 2 { print $2 }' | sort -u >"$tmp/cli-undefined"
comm -23 "$tmp/cli-undefined" "$tmp/cli-defined" >"$tmp/needed"
nm -g --defined-only "$lib" 2>/dev/null | awk 'NF == 3 { print $3 }' | sort -u >"$tmp/lib-defined"
nm -g --defined-only "$helper" 2>/dev/null | awk 'NF == 3 { print $3 }' | sort -u >"$tmp/helper-defined"
comm -12 "$tmp/needed" "$tmp/lib-defined" >"$tmp/taken"
comm -12 "$tmp/needed" "$tmp/helper-defined" >"$tmp/from-helper"
grep -v '^peakbpf_' "$tmp/taken" >"$tmp/bad"
# The helper's header's functions: a name before "(" at the start of a
# declaration's line.
sed -n 's/^[a-z].*[ *]\([a-z_][a-z0-9_]*\)(.*/\1/p' "$header" | sort -u >"$tmp/helper-api"
comm -23 "$tmp/from-helper" "$tmp/helper-api" >"$tmp/bad-helper"
if [ -s "$tmp/bad" ]; then
	echo "check-cli-api: the CLI takes internals from $lib:" $(cat "$tmp/bad") >&2
	echo "check-cli-api: call them through include/peakbpf/peakbpf.h instead" >&2
	exit 1
fi
if [ -s "$tmp/bad-helper" ]; then
	echo "check-cli-api: the CLI takes from $helper what $header does not declare:" $(cat "$tmp/bad-helper") >&2
	exit 1
fi
echo "  check-cli-api: ok: $# objects, $(grep -c '^peakbpf_' "$tmp/taken") calls into libpeakbpf, all public;" \
	"$(wc -l <"$tmp/from-helper") into the helper ($(tr '\n' ' ' <"$tmp/from-helper" | sed 's/ $//')), through $header"
