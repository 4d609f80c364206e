#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# What --stacks costs (docs/stacks.md): over 256 MiB of 4 KiB faults by
# idle-plus-faulter, with and without --stacks in alternating rounds, from
# the kernel's BPF statistics (bpfstat's snap-stacks, read just before and
# just after the fault loop) and the workload's own fault-loop time:
#   - stk_fault's ns per run (every user fault on the machine: the
#     untracked ones stop at its filter), against the floor (the empty
#     tp_btf program on rss_stat, attached by bpfstat) in the same window,
#     and at most per tracked fault (all its time over the loop's faults);
#   - handle_rss_stat's ns per event, with and without (its path is not
#     touched: the two should agree);
#   - the fault loop's time, with against without.
# Medians over REPS rounds (default 9), as ratios side by side: a
# measurement for docs/stacks.md, not a test. Root.
#
#   make all bench-tools && tools/bench/stacks-cost.sh
set -u
OUT=${OUTPUT:-.output}
W=$OUT/workload
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
coproc BS { exec "$OUT/bench/bpfstat" 2>"$TMP/bs.err"; }
read -r -t 20 -u "${BS[0]}" r
[ "$r" = ready ] || { echo "bpfstat: $r $(cat "$TMP/bs.err")" >&2; exit 1; }
cmd() { echo "$*" >&"${BS[1]}"; read -r -t 20 -u "${BS[0]}" r; echo "$r"; }
cmd attach >/dev/null
one() {  # LABEL [ARGS]: "LABEL LOOP_NS FLOOR_NS/EV TRACKER_NS/EV STK_NS/RUN STK_RUNS"
	local label=$1 pid a b
	shift
	: >"$TMP/w.err"
	"$OUT/peakbpf" -q --no-helper "$@" -- "$W" -s 256MiB -n 1 -t 1500ms idle-plus-faulter 2>"$TMP/w.err" &
	pid=$!
	until grep -q ready "$TMP/w.err"; do sleep 0.05; done
	sleep 0.2
	a=$(cmd snap-stacks $pid)
	until grep -q "done" "$TMP/w.err"; do sleep 0.05; done
	b=$(cmd snap-stacks $pid)
	wait $pid
	echo "$label $(grep -o 'elapsed_ns=[0-9]*' "$TMP/w.err" | cut -d= -f2) $a $b" |
		awk '{ d = 9; printf "%s %d %.1f %.1f %.1f %d\n", $1, $2,
			($(4+d) - $4) / (($(5+d) - $5) + 1e-9), ($(6+d) - $6) / (($(7+d) - $7) + 1e-9),
			($(8+d) - $8) / (($(9+d) - $9) + 1e-9), $(9+d) - $9 }'
}
for _ in $(seq 1 "${REPS:-9}"); do
	one off >>"$TMP/runs"
	one stacks --stacks "$TMP/s.folded" >>"$TMP/runs"
	tail -n 2 "$TMP/runs"
done		# no pipe: a subshell would not have the coprocess
cmd detach >/dev/null
echo quit >&"${BS[1]}"
awk -v LOOP=$((256 * 1048576 / $(getconf PAGESIZE))) 'function med(k, c,   m, i, j, t) { m = n[k]; for (i = 1; i <= m; i++) a[i] = v[k, c, i]
	for (i = 1; i <= m; i++) for (j = i + 1; j <= m; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
	return m % 2 ? a[(m + 1) / 2] : (a[m / 2] + a[m / 2 + 1]) / 2 }
{ n[$1]++; for (c = 2; c <= 6; c++) v[$1, c, n[$1]] = $c }
END {
	printf "fault loop (256 MiB, 4 KiB faults), median of %d rounds each:\n", n["off"]
	printf "  without --stacks %.3f s, with %.3f s: x%.2f\n", med("off", 2) / 1e9, med("stacks", 2) / 1e9, med("stacks", 2) / med("off", 2)
	printf "  handle_rss_stat: %.0f ns per event without, %.0f with; floor %.0f / %.0f ns\n", med("off", 4), med("stacks", 4), med("off", 3), med("stacks", 3)
	printf "  stk_fault: %.0f ns per run (%d runs: every user fault on the machine, the untracked ones stop at the filter), x%.1f the floor in the same runs\n", med("stacks", 5), med("stacks", 6), med("stacks", 5) / med("stacks", 3)
	printf "  per tracked fault at most %.0f ns: all its runs time over the loop faults (%d)\n", med("stacks", 5) * med("stacks", 6) / LOOP, LOOP
}' "$TMP/runs"
