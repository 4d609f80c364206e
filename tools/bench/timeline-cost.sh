#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# What recording the timeline costs per rss_stat event: handle_rss_stat's run
# time per event from the kernel's BPF statistics (bpfstat's snap PID, read
# just before and just after 256 MiB of faults by idle-plus-faulter), with
# and without --timeline, for each peakbpf binary given (e.g. main's and a
# branch's). Prints one line per run: "LABEL EVENTS RUN_NS NS_PER_EVENT",
# then the median and pooled ns per event of each label. Root; REPS runs
# each (default 12). A measurement for docs/timeline.md, not a test.
#
#   make OUTPUT=DIR all bench-tools
#   OUTPUT=DIR tools/bench/timeline-cost.sh main=/path/to/old/peakbpf branch=DIR/peakbpf
set -u
OUT=${OUTPUT:-.output}
W=$OUT/workload
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
coproc BS { exec "$OUT/bench/bpfstat" 2>"$TMP/bs.err"; }
read -r -t 20 -u "${BS[0]}" r
[ "$r" = ready ] || { echo "bpfstat: $r $(cat "$TMP/bs.err")" >&2; exit 1; }
snap() { echo "snap $1" >&"${BS[1]}"; read -r -t 20 -u "${BS[0]}" r; echo "$r"; }
one() {  # LABEL BINARY [ARGS]
	local label=$1 bin=$2 pid a_ns a_cnt
	shift 2
	: >"$TMP/w.err"
	"$bin" -q -o "$TMP/rec.json" "$@" -- "$W" -s 256MiB -n 1 -t 1500ms idle-plus-faulter 2>"$TMP/w.err" &
	pid=$!
	until grep -q ready "$TMP/w.err"; do sleep 0.05; done
	sleep 0.2
	# shellcheck disable=SC2046 # "snap F_NS F_CNT P_NS P_CNT ...": words wanted
	set -- $(snap $pid)
	a_ns=$4 a_cnt=$5
	until grep -q "done" "$TMP/w.err"; do sleep 0.05; done
	# shellcheck disable=SC2046
	set -- $(snap $pid)
	wait $pid
	echo "$label $(($5 - a_cnt)) $(($4 - a_ns)) $((($4 - a_ns) / ($5 - a_cnt + 1)))"
}
for _ in $(seq 1 "${REPS:-12}"); do
	for spec in "$@"; do
		one "${spec%%=*}-off" "${spec#*=}" >>"$TMP/runs"
		one "${spec%%=*}-timeline" "${spec#*=}" --timeline "$TMP/t.json" >>"$TMP/runs"
		tail -n 2 "$TMP/runs"
	done
done		# no pipe: a subshell would not have the coprocess
echo quit >&"${BS[1]}"
awk '{ n[$1]++; ev[$1] += $2; ns[$1] += $3; v[$1, n[$1]] = $3 / ($2 ? $2 : 1) }
END { for (k in n) { m = n[k]; for (i = 1; i <= m; i++) a[i] = v[k, i]
	for (i = 1; i <= m; i++) for (j = i + 1; j <= m; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
	printf "%s: median %.0f ns, pooled %.0f ns per event (%d runs)\n", k, (m % 2 ? a[(m + 1) / 2] : (a[m / 2] + a[m / 2 + 1]) / 2), ns[k] / ev[k], m } }' "$TMP/runs" | sort
