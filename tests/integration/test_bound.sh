# shellcheck shell=sh
# The stated bound before 6.2 (per-thread rss caches; docs/design.md, "The
# bound before 6.2"), on the two shapes that lag the most: children mapping
# one shared region with fault-around, and threads of one process. From
# 6.2 the same runs must be exact with bound 0.

TESTS="$TESTS t_bound_shared t_bound_threads"

# bound_shape NAME WORKLOAD-ARGS...: the true added peak lies in [growth -
# binaries, growth + bound] (check_growth); print how far below the truth
# the figure was (true - growth, which the binaries' own RSS may hide) and
# the bound's ratio to it, into RESULTS as "NAME-bound below bound ratio".
bound_shape() {
	name=$1
	shift
	run_shape "$name" "$@"
	j=$TMP/$name.json
	[ -f "$j" ] || return
	growth=$(json_num "$j" growth_bytes) b=$(json_raw "$j" error_bound_bytes)
	expected=$("$WORKLOAD" -x "$@")
	below=$((expected - growth))
	if [ "$(json_raw "$j" exact)" = true ]; then
		[ "$b" = 0 ] && ok "$name: exact, bound 0 ($(uname -r))" ||
			fail "$name: exact but error_bound_bytes $b"
		return
	fi
	ratio=$(awk -v b="$b" -v d="$below" 'BEGIN { if (d > 0) printf "%.1f", b / d; else print "inf" }')
	echo "$name-bound $below $b $ratio" >>"$RESULTS"
	echo "info - $name: figure $(mib "$below") below the truth (binaries' own RSS included), bound $(mib "$b"), ratio $ratio"
}

t_bound_shared() { bound_shape bound_shared -s 32MiB -n 3 shared; }
t_bound_threads() { bound_shape bound_threads -s 32MiB -n 4 threads; }

# Issue 38's shapes: the bound against a page-table walk at a quiet point.
TESTS="$TESTS t_bound_chain100 t_bound_chain250 t_bound_sleepers t_bound_threads2000"
TESTS="$TESTS t_bound_fork_share t_bound_fork_write t_bound_thread_spike"

# desc_pids PID: PID and every process below it, from one read of
# /proc/*/stat (a chain 250 deep walked one process at a time takes
# seconds under TCG). The parent is the 2nd field after the last ')'.
desc_pids() {
	cat /proc/[0-9]*/stat 2>/dev/null | awk -v root="$1" '
		{ pid = $1; line = $0; sub(/.*\) /, "", line); split(line, f, " ");
		  kids[f[2]] = kids[f[2]] " " pid }
		END { q[1] = root; n = 1; for (i = 1; i <= n; i++) { print q[i];
			m = split(kids[q[i]], c, " "); for (j = 1; j <= m; j++) q[++n] = c[j] } }'
}

# rss_walk PID...: the processes' summed Rss from smaps_rollup (a walk of
# their page tables: no per-thread cache in it), in bytes.
rss_walk() {
	set -- $(for p in "$@"; do echo /proc/"$p"/smaps_rollup; done)
	cat "$@" 2>/dev/null | awk '/^Rss:/ { s += $2 } END { printf "%d\n", s * 1024 }'
}

# bound_quiet NAME WORKLOAD-ARGS...: run the workload under peakbpf and walk
# the tree's page tables (its processes' Rss) again and again until it
# ends; the largest walk is the truth at the quiet point, where the
# workload holds everything (in these shapes the tree only grows until it
# releases, so no walk can read more than the true peak). The figure +
# bound must hold it, and the bound be within 4 x the real error (truth -
# figure) or 1 % of the figure, whichever is larger (issue 38). Into
# RESULTS: "bound-NAME figure truth error bound".
bound_quiet() {
	name=$1
	shift
	j=$TMP/$name.json
	"$PEAKBPF" -q -o "$j" -- "$WORKLOAD" "$@" 2>"$TMP/$name.err" &
	pb=$!
	truth=0 walks=0 tries=0
	while [ $tries -lt 240 ] && kill -0 "$pb" 2>/dev/null; do
		sleep 0.25
		tries=$((tries + 1))
		wl=$(cat /proc/"$pb"/task/*/children 2>/dev/null | awk '{ print $1; exit }')
		[ -n "$wl" ] || continue
		now=$(rss_walk $(desc_pids "$wl"))
		walks=$((walks + 1))
		[ "${now:-0}" -gt "$truth" ] && truth=$now
	done
	wait "$pb"
	rc=$?
	if [ "$rc" != 0 ] || [ ! -s "$j" ]; then
		fail "$name: peakbpf exited $rc: $(cat "$TMP/$name.err")"
		return
	fi
	if [ "$truth" = 0 ]; then
		fail "$name: no walk of the tree's page tables ($walks tries)"
		return
	fi
	fig=$(json_num "$j" peak_bytes) b=$(json_raw "$j" error_bound_bytes)
	if [ "$(json_raw "$j" exact)" = true ]; then
		if [ "$b" = 0 ] && [ "$fig" -ge "$truth" ]; then
			ok "$name: exact, bound 0, figure $(mib "$fig") >= walk $(mib "$truth") ($(uname -r))"
		else
			fail "$name: exact, figure $(mib "$fig"), walk $(mib "$truth"), bound $b"
		fi
		return
	fi
	case $b in '' | null) fail "$name: no bound: $(json_raw "$j" inexact_reason)"; return ;; esac
	err=$((truth - fig))
	[ "$err" -gt 0 ] || err=0
	goal=$((4 * err))
	[ "$goal" -ge $((fig / 100)) ] || goal=$((fig / 100))
	echo "bound-$name $fig $truth $err $b" >>"$RESULTS"
	what="figure $(mib "$fig"), walk $(mib "$truth"), error $(mib "$err"), bound $(mib "$b")"
	if [ $((fig + b)) -lt "$truth" ]; then
		fail "$name: bound does not cover the walk: $what"
		echo "info - $name: $(cat "$j")"
	elif [ "$b" -gt "$goal" ]; then
		fail "$name: bound above max(4 x error, 1 % of figure) = $(mib "$goal"): $what"
	else
		ok "$name: $what (goal $(mib "$goal"))"
	fi
}

# Sizes for qemu's TCG under QUICK: each process or thread holds one page
# of its own (its binary's and libraries' pages are most of the shape), and
# each hold is long enough for two walks (a walk of 250 processes takes ~1 s
# there).
t_bound_chain100() { bound_quiet chain100 -s 4KiB -n 100 -t "$(q 3s 4s)" chain; }
t_bound_chain250() { bound_quiet chain250 -s 4KiB -n 250 -t "$(q 3s 6s)" chain; }
t_bound_sleepers() { bound_quiet sleepers -s 4KiB -n 300 -t "$(q 3s 6s)" concurrent; }
t_bound_threads2000() { bound_quiet threads2000 -s 4KiB -n 2000 -t "$(q 3s 4s)" threads; }
t_bound_fork_share() { bound_quiet fork_share -s "$(q 256MiB 16MiB)" -n "$(q 4 2)" -t "$(q 2s 4s)" fork-share; }
t_bound_fork_write() { bound_quiet fork_write -s "$(q 256MiB 16MiB)" -n "$(q 4 2)" -t "$(q 2s 4s)" fork-write; }
t_bound_thread_spike() { bound_quiet thread_spike -s "$(q 256MiB 32MiB)" -n "$(q 16 8)" -t "$(q 2s 3s)" thread-spike; }
