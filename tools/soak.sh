#!/bin/sh
# make soak: 10,000 sessions (open, add a process, start, read a window,
# close) through one `peakbpf serve`, by 12 clients of 4 users at once (3
# each: the users' 14 tree slots hold 12 beside the reserve of 2 the fair
# limits keep for the next users' first trees, docs/helper.md); the
# helper's RSS, fds and BPF objects before and after, and the sessions'
# failures and exact figures. Needs root (it starts the helper and
# switches users with setpriv). Not part of make check: about a minute.
# Usage: tools/soak.sh [SESSIONS]   (OUTPUT=dir of the built binaries)
set -u
OUTPUT=${OUTPUT:-.output}
SESSIONS=${1:-10000}
per=$((SESSIONS / 12))
dir=$(mktemp -d) || exit 1
trap 'kill "$helper" 2>/dev/null; wait "$helper" 2>/dev/null; rm -rf "$dir"' EXIT
chmod 755 "$dir"
"$OUTPUT/peakbpf" serve --socket "$dir/sock" 2>"$dir/log" &
helper=$!
i=0
while ! "$OUTPUT/peakbpf" serve --status --socket "$dir/sock" >/dev/null 2>&1; do
	i=$((i + 1))
	[ "$i" -gt 300 ] && { echo "soak: the helper did not start: $(cat "$dir/log")"; exit 1; }
	sleep 0.1
done
fds() { ls "/proc/$helper/fd" | wc -l; }
rss() { awk '/^VmRSS:/ { print $2 }' "/proc/$helper/status"; }
bpf() {
	n=0
	for fd in /proc/"$helper"/fd/*; do
		case $(readlink "$fd" 2>/dev/null) in *bpf*) n=$((n + 1)) ;; esac
	done
	echo "$n"
}
echo "soak: $((per * 12)) sessions, 12 clients, 4 users (uids 65531-65534)"
echo "before: fds $(fds) rss_kib $(rss) bpf_objects $(bpf)"
t0=$(date +%s)
pids=""
for u in 65531 65532 65533 65534; do
	for c in 1 2 3; do
		setpriv --reuid=$u --regid=$u --clear-groups --inh-caps=-all \
			"$OUTPUT/hostile_client" soak "$dir/sock" "$per" >"$dir/out.$u.$c" 2>&1 &
		pids="$pids $!"
	done
done
mid=""
# shellcheck disable=SC2086 # pids is words
while kill -0 $pids 2>/dev/null; do
	sleep 5
	mid="$mid $(rss)"
done
# shellcheck disable=SC2086
wait $pids
t1=$(date +%s)
sleep 1
echo "after:  fds $(fds) rss_kib $(rss) bpf_objects $(bpf)  (rss_kib every 5 s:$mid)"
cat "$dir"/out.* | awk '{ s += $2; f += $4; e += $6 } END {
	printf "sessions %d failed %d exact %d\n", s, f, e }'
echo "seconds $((t1 - t0))"
"$OUTPUT/peakbpf" serve --status --socket "$dir/sock" | grep -E '^(trees|loads|trees_opened|trees_removed|stray)'
