# shellcheck shell=sh
# A setuid child of a client's tree (issue 36): its memory counts in the
# tree's sum, nothing else of it reaches a client that could not ptrace it
# (serve_readable.c). serve_start, serve_stop, AS_NOBODY are test_serve.sh's.

TESTS="$TESTS t_serve_setuid_child"

# setuid_run NAME PROG: nobody measures PROG --help through the helper, with
# a timeline, in $SETUID_DIR: NAME.json, NAME.csv, NAME.err.
setuid_run() {
	$AS_NOBODY "$PEAKBPF" -o "$SETUID_DIR/$1.json" --helper="$SOCK" --timeline "$SETUID_DIR/$1.csv" \
		-- "$2" --help >/dev/null 2>"$SETUID_DIR/$1.err"
}

# nobody runs /usr/bin/passwd --help (setuid root: its exec makes it
# non-dumpable, its euid root): the figure counts it (peak > 0, exact),
# but neither the processes at the peak nor the timeline's lines name it.
# A copy without the setuid bit, run the same way, is listed and drawn.
t_serve_setuid_child() {
	name="serve: a setuid child"
	passwd=/usr/bin/passwd
	[ -u "$passwd" ] || { skip "$name: $passwd is not setuid here"; return; }
	serve_start "$name" || return
	SETUID_DIR=$(mktemp -d) || { fail "$name: mktemp"; serve_stop; return; }
	chmod 777 "$SETUID_DIR"
	cp "$passwd" "$SETUID_DIR/pwcopy" && chmod 755 "$SETUID_DIR/pwcopy"
	setuid_run suid "$passwd"
	rc1=$?
	setuid_run plain "$SETUID_DIR/pwcopy"
	rc2=$?
	serve_stop
	d=$SETUID_DIR
	peak=$(json_num "$d/suid.json" peak_bytes)
	procs=$(grep -o '"processes":\[[^]]*\]' "$d/suid.json" | head -n 1)
	plain=$(grep -o '"processes":\[[^]]*\]' "$d/plain.json" | head -n 1)
	said="setuid: exact $(json_raw "$d/suid.json" exact), peak $peak, $procs, timeline: $(head -n 1 "$d/suid.csv"); copy: $plain, timeline: $(head -n 1 "$d/plain.csv")"
	if [ "$rc1" = 0 ] && [ "$rc2" = 0 ] && [ "${peak:-0}" -gt 0 ] &&
		[ "$(json_raw "$d/suid.json" exact)" = true ] && ! echo "$procs" | grep -q passwd &&
		! head -n 1 "$d/suid.csv" | grep -q passwd && echo "$plain" | grep -q '"comm":"pwcopy"' &&
		head -n 1 "$d/plain.csv" | grep -q pwcopy; then
		ok "$name: counted, not shown: $said"
	else
		fail "$name: exits $rc1/$rc2: $said; $(cat "$d/suid.err")"
	fi
	rm -rf "$SETUID_DIR"
}
