#!/bin/sh
# make check-cli-api: the CLI is built on libpeakbpf's public API only.
# 1. No CLI source includes a header of the library's internals, directly
#    or through another header (the compiler's own dependency list, -MM).
# 2. Every symbol the CLI's objects take from libpeakbpf.a is a peakbpf_*
#    one (what they define themselves, the shared helpers, does not count).
# usage: check-cli-api.sh LIBPEAKBPF.A "INTERNAL HEADERS" "CLI SOURCES" CLI_OBJECT...
set -u
lib=$1 hdrs=$2 srcs=$3
shift 3
bad=0
for src in $srcs; do
	# shellcheck disable=SC2086
	deps=$(${CC:-cc} $CFLAGS -MM -MG "$src" -o - | tr -d '\\' | tr ' ' '\n' | sed '/^$/d')
	for h in $hdrs; do
		# the path, or a file of that name in another directory
		if printf '%s\n' "$deps" | grep -q -e "^$h\$" -e "/$h\$"; then
			echo "check-cli-api: $src includes $h, a header of libpeakbpf's internals" >&2
			bad=1
		fi
	done
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
nm -g --defined-only "$@" 2>/dev/null | awk 'NF == 3 { print $3 }' | sort -u >"$tmp/cli-defined"
nm -u "$@" 2>/dev/null | awk 'NF == 2 { print $2 }' | sort -u >"$tmp/cli-undefined"
nm -g --defined-only "$lib" 2>/dev/null | awk 'NF == 3 { print $3 }' | sort -u >"$tmp/lib-defined"
comm -23 "$tmp/cli-undefined" "$tmp/cli-defined" | comm -12 - "$tmp/lib-defined" | grep -v '^peakbpf_' >"$tmp/bad"
if [ -s "$tmp/bad" ]; then
	echo "check-cli-api: the CLI takes internals from $lib:" $(cat "$tmp/bad") >&2
	bad=1
fi
n=$(comm -23 "$tmp/cli-undefined" "$tmp/cli-defined" | comm -12 - "$tmp/lib-defined" | grep -c '^peakbpf_')
if [ "$bad" = 0 ]; then
	echo "  check-cli-api: ok: $(echo $srcs | wc -w) sources, $n calls into libpeakbpf, all public"
fi
exit $bad
