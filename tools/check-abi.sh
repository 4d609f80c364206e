#!/bin/sh
# make check-abi: libpeakbpf.so exports exactly the public API, each call
# named in the version script, whose newest node is VERSION's major.minor.
#  1. every PEAKBPF_API function of the header is exported by the .so;
#  2. every name the .so exports is listed (no wildcard) in the map;
#  3. the map's last node is PEAKBPF_<major>.<minor> of VERSION (0.x: the
#     first node is PEAKBPF_0, for the 0.1 calls).
# usage: check-abi.sh HEADER MAP LIBPEAKBPF.SO VERSION
set -u
hdr=$1 map=$2 so=$3 version=$4
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
bad=0
# A PEAKBPF_API declaration may wrap: the name is the first "peakbpf_x(".
awk '/PEAKBPF_API/ { f = 1 } f { line = line $0 } f && /\(/ { print line; f = 0; line = "" }' "$hdr" |
	grep -o 'peakbpf_[a-z0-9_]*(' | tr -d '(' | sort -u >"$tmp/header"
nm -D --defined-only "$so" | awk '$2 == "T" { print $3 }' | sed 's/@.*//' | sort -u >"$tmp/exported"
grep -o '^[[:space:]]*peakbpf_[a-z0-9_]*;' "$map" | tr -d ' \t;' | sort -u >"$tmp/listed"
if grep -q '^[[:space:]]*peakbpf_\*' "$map"; then
	echo "check-abi: $map exports a wildcard: list every call by name" >&2
	bad=1
fi
for pair in "header exported" "exported listed" "listed exported"; do
	set -- $pair
	comm -23 "$tmp/$1" "$tmp/$2" >"$tmp/missing"
	if [ -s "$tmp/missing" ]; then
		echo "check-abi: in the $1 set but not $2:" $(cat "$tmp/missing") >&2
		bad=1
	fi
done
want="PEAKBPF_$(echo "$version" | cut -d. -f1-2)"
last=$(grep -o '^PEAKBPF_[0-9.]*' "$map" | tail -n 1)
if [ "$last" != "$want" ] && ! { [ "$want" = PEAKBPF_0.1 ] && [ "$last" = PEAKBPF_0 ]; }; then
	echo "check-abi: the map's newest node is $last, but VERSION $version wants $want" >&2
	bad=1
fi
[ "$bad" = 0 ] && echo "  check-abi: ok: $(wc -l <"$tmp/listed") calls, each listed; newest node $last"
exit $bad
