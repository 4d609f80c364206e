# shellcheck shell=sh
# --compare-sampler: what a periodic sampler would have reported.

TESTS="$TESTS t_compare_sampler_spike t_compare_sampler_needs_bpf"

# sampler_field FILE INTERVAL_S KEY: KEY of the given interval's entry.
sampler_field() {
	head -n 1 "$1" | grep -o "{\"interval_s\":$2,[^}]*}" | grep -o "\"$3\":[0-9.e+-]*" | cut -d: -f2
}

# A 256 MiB spike held 5 ms in a process that lives about 1 s: the model
# says a 100 ms sampler rarely gets within 5 % of the peak (only while the
# spike's top lasts), a 1 ms one always does, and a real /proc sampler's
# reading falls inside the modelled range.
t_compare_sampler_spike() {
	"$PEAKBPF" -q -o "$TMP/cs.json" --compare-sampler 100ms,1ms -- \
		"$WORKLOAD" -s 256MiB -t 5ms blip 2>"$TMP/cs.err"
	rc=$?
	fill=$(sed -n 's/.*fill_ns=\([0-9]*\).*/\1/p' "$TMP/cs.err")
	held=$(sed -n 's/.*held_ns=\([0-9]*\).*/\1/p' "$TMP/cs.err")
	p100=$(sampler_field "$TMP/cs.json" 0.1 p_within_5pct)
	p1=$(sampler_field "$TMP/cs.json" 0.001 p_within_5pct)
	worst100=$(sampler_field "$TMP/cs.json" 0.1 worst_bytes)
	within=$(json_raw "$TMP/cs.json" within_computed_range)
	# The top 5 % lasts the hold plus the last 5 % of the fill.
	limit=$(awk -v h="${held:-0}" -v f="${fill:-0}" 'BEGIN { printf "%.4f", (h + f / 20 + 2e6) / 1e8 }')
	if [ "$rc" = 0 ] && [ -n "$p100" ] && [ "$p1" = 1 ] && [ "$within" = true ] &&
		awk -v p="$p100" -v l="$limit" 'BEGIN { exit !(p <= l && p < 1) }'; then
		ok "compare-sampler: 100 ms within 5 % in $p100 of phases (limit $limit; worst $(mib "$worst100")), 1 ms always; real sampler inside the model's range"
	else
		fail "compare-sampler: exit $rc, p(100ms) $p100 (limit $limit), p(1ms) $p1, real within $within: $(cat "$TMP/cs.err")"
	fi
}

t_compare_sampler_needs_bpf() {
	expect_error "--compare-sampler with --source proc" 125 "needs the bpf source" \
		"$PEAKBPF" -s proc --compare-sampler 100ms -- true
	expect_error "--compare-sampler bad list" 125 "compare-sampler" \
		"$PEAKBPF" --compare-sampler 100ms,,1s -- true
}
