# shellcheck shell=sh
# What no local user can do to or through the helper (issue 23): each test
# is one finding of that issue, reproduced and refused. serve_start and
# AS_NOBODY are test_serve.sh's; BPF_CAPS is test_sources.sh's.

TESTS="$TESTS t_serve_ptrace_rule"

# The ptrace rule is the kernel's: nobody may not measure a process of uid
# nobody and gid 0, nor one of uid nobody holding CAP_SYS_ADMIN (gdb -p
# refuses both), through the helper or as a binary with CAP_BPF+CAP_PERFMON;
# its own plain process it may (the control).
t_serve_ptrace_rule() {
	serve_start "serve: the ptrace rule" || return
	setpriv --reuid=65534 --regid=0 --clear-groups sleep 30 &
	gid0=$!
	setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=+sys_admin \
		--ambient-caps=+sys_admin sleep 30 &
	capped=$!
	setpriv --reuid=65534 --regid=65534 --clear-groups sleep 30 &
	plain=$!
	sleep 0.2
	res=""
	for pid in $gid0 $capped $plain; do
		# shellcheck disable=SC2086 # AS_NOBODY, BPF_CAPS are words
		$AS_NOBODY "$PEAKBPF" -q --helper="$SOCK" -p "$pid" -d 100ms >/dev/null 2>>"$TMP/ptr.err"
		res="$res helper:$?"
		# shellcheck disable=SC2086
		sh -c "ulimit -l unlimited 2>/dev/null; exec setpriv --reuid=65534 --regid=65534 \
			--clear-groups $BPF_CAPS \"\$@\"" sh "$PEAKBPF" -q -s bpf -p "$pid" -d 100ms \
			>/dev/null 2>>"$TMP/ptr.err"
		res="$res caps:$?"
	done
	kill "$gid0" "$capped" "$plain" 2>/dev/null
	wait "$gid0" "$capped" "$plain" 2>/dev/null
	serve_stop
	if [ "$res" = " helper:123 caps:123 helper:123 caps:123 helper:0 caps:0" ] &&
		[ "$(grep -c 'not yours\|not your process' "$TMP/ptr.err")" = 4 ]; then
		ok "serve: the ptrace rule: gid 0 and CAP_SYS_ADMIN processes of nobody refused (helper and caps), its own plain one measured"
	else
		fail "serve: the ptrace rule: exits$res (want 123 123 123 123 0 0): $(cat "$TMP/ptr.err")"
	fi
}
