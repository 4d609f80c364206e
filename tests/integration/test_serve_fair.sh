# shellcheck shell=sh
# The helper's fair limits (issue 36): four users holding every connection
# and tree they can get lock no one out. serve_start, serve_stop, AS_NOBODY
# are test_serve.sh's; HOSTILE test_serve_hostile.sh's; status_num
# test_serve.sh's.

TESTS="$TESTS t_serve_fair"

# as_uid UID CMD...: CMD as UID, no capabilities.
as_uid() {
	u=$1
	shift
	setpriv --reuid="$u" --regid="$u" --clear-groups --inh-caps=-all "$@"
}

# fair_ok NAME FILE: FILE (a --json record) measured through the helper, exact.
fair_ok() {
	[ "$(json_raw "$2" bpf_load)" = '"helper"' ] && [ "$(json_raw "$2" exact)" = true ] &&
		[ "$(json_raw "$2" source)" = '"bpf"' ]
}

# Users 65531-65534 each take every tree (hostile_client trees) and then
# every connection (hold) they can. Meanwhile a fifth user and root are
# measured through the helper, exact; a sixth user who could load BPF
# itself (CAP_BPF, CAP_PERFMON), refused by the helper for its share, is
# measured here with a note instead of failing (exit 123). No holder got
# more trees than its share; the held connections, idle, end after
# SERVE_IDLE_MS (5 s).
t_serve_fair() {
	name="serve fair"
	[ -x "$HOSTILE" ] || { skip "$name: $HOSTILE not built (make all)"; return; }
	serve_start "$name" || return
	holders="" secs=14
	for u in 65534 65533 65532 65531; do
		as_uid "$u" "$HOSTILE" trees "$SOCK" "$secs" >"$TMP/fair-trees.$u" 2>&1 &
		holders="$holders $!"
	done
	sleep 2
	for u in 65534 65533 65532 65531; do
		as_uid "$u" "$HOSTILE" hold "$SOCK" "$secs" 2>/dev/null &
		holders="$holders $!"
	done
	sleep 1
	held=$(status_num clients)
	as_uid 65530 "$PEAKBPF" -q --json --helper="$SOCK" -- "$WORKLOAD" -s 32MiB -t 100ms spike \
		>"$TMP/fair5.json" 2>"$TMP/fair5.err"
	rc5=$?
	"$PEAKBPF" -q --json --helper="$SOCK" -- "$WORKLOAD" -s 32MiB -t 100ms spike \
		>"$TMP/fair0.json" 2>"$TMP/fair0.err"
	rc0=$?
	# A sixth user with BPF of its own: its share taken first.
	as_uid 65529 "$HOSTILE" trees "$SOCK" "$secs" >"$TMP/fair-trees.65529" 2>&1 &
	holders="$holders $!"
	sleep 1
	setpriv --reuid=65529 --regid=65529 --clear-groups --inh-caps=+bpf,+perfmon \
		--ambient-caps=+bpf,+perfmon "$PEAKBPF" -q --json --helper="$SOCK" -- "$WORKLOAD" -s 32MiB \
		-t 100ms spike >"$TMP/fair6.json" 2>"$TMP/fair6.err"
	rc6=$?
	# The held connections measure nothing: ended once idle.
	sleep 5
	idle=$(status_num clients)
	# shellcheck disable=SC2086 # holders is words
	kill $holders 2>/dev/null
	# shellcheck disable=SC2086
	wait $holders 2>/dev/null
	serve_stop
	got=$(cat "$TMP"/fair-trees.655* | tr '\n' ';')
	most=$(cat "$TMP"/fair-trees.655* | sed -n 's/^trees \([0-9]*\).*/\1/p' | sort -n | tail -n 1)
	said="$held connections open, $idle once the idle ones ended; holders: $got"
	if [ "$rc5" = 0 ] && fair_ok 5 "$TMP/fair5.json" && [ "$rc0" = 0 ] && fair_ok 0 "$TMP/fair0.json" &&
		[ "$rc6" = 0 ] && [ "$(json_raw "$TMP/fair6.json" bpf_load)" != '"helper"' ] &&
		[ "$(json_raw "$TMP/fair6.json" exact)" = true ] &&
		grep -q 'helper: .*loaded here instead' "$TMP/fair6.json" &&
		grep -q '^peakbpf: warning: --helper was given and the helper was not used' "$TMP/fair6.err" &&
		[ "${most:-9}" -le 4 ] && [ "${held:-0}" -ge 64 ] && [ "${idle:-99}" -le 15 ]; then
		ok "$name: a fifth user and root measured through the helper, exact; a sixth with BPF of its own measured here ($(grep -o 'helper: [^"]*loaded here instead' "$TMP/fair6.json")); $said"
	else
		fail "$name: exits $rc5/$rc0/$rc6: $(cat "$TMP/fair5.err" "$TMP/fair0.err" "$TMP/fair6.err" | tr "\n" " "; head -c 400 "$TMP/fair6.json"); $said"
	fi
}
