# shellcheck shell=sh
# A helper expected and not used is said on stderr (issue 36): a misspelt
# PEAKBPF_* variable fell back to a sampled figure, labelled only in the
# summary. serve_start, serve_stop, AS_NOBODY are test_serve.sh's.

TESTS="$TESTS t_env_misspelt_helper"

# nobody with a helper running: PEAKBPF_HELPR=SOCK (misspelt) falls back
# to proc and says so on stderr, naming the variable; PEAKBPF_HELPER=SOCK
# goes through the helper and says nothing of it.
t_env_misspelt_helper() {
	name="env: a misspelt PEAKBPF_HELPER"
	serve_start "$name" || return
	# A subshell, not env -u: busybox's env, in the kernel-matrix VMs, runs
	# its own setpriv applet, which has no --reuid.
	# shellcheck disable=SC2086
	(unset PEAKBPF_HELPER; PEAKBPF_HELPR="$SOCK" exec $AS_NOBODY "$PEAKBPF" -q --json -- "$WORKLOAD" \
		-s 8MiB spike) >"$TMP/envm.json" 2>"$TMP/envm.err"
	rc1=$?
	# shellcheck disable=SC2086
	PEAKBPF_HELPER="$SOCK" $AS_NOBODY "$PEAKBPF" -q --json -- "$WORKLOAD" -s 8MiB spike \
		>"$TMP/envr.json" 2>"$TMP/envr.err"
	rc2=$?
	serve_stop
	warn=$(grep "^peakbpf: warning: PEAKBPF_HELPR is not one of peakbpf's variables" "$TMP/envm.err")
	if [ "$rc1" = 0 ] && [ "$rc2" = 0 ] && [ -n "$warn" ] &&
		[ "$(json_raw "$TMP/envm.json" source)" != '"bpf"' ] &&
		[ "$(json_raw "$TMP/envr.json" bpf_load)" = '"helper"' ] && ! grep -q warning "$TMP/envr.err"; then
		ok "$name: said: $warn; spelt right: through the helper, nothing said"
	else
		fail "$name: exits $rc1/$rc2: $(cat "$TMP/envm.err" "$TMP/envr.err")"
	fi
}
