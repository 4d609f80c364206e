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
