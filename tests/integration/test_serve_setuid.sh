# shellcheck shell=sh
# A setuid child of a client's tree (issue 36): its memory counts in the
# tree's sum, nothing else of it reaches a client that could not ptrace it
# (serve_readable.c). serve_start, serve_stop, AS_NOBODY are test_serve.sh's.

TESTS="$TESTS t_serve_setuid_child t_serve_short_children"

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

# Ten short children (pwcopy --help, ~2 ms each), each reaped by the shell
# before the helper's next drain of the ring (SERVE_DRAIN_MS), one after
# another in the mm the slab gave the last: the kernel judges each change
# as it is made (bpf/tracker_event.bpf.h, reader_verdict), so the
# timeline's lines are nobody's own short children, each named (the
# identity of one gone since is given as the record judged it); none is
# "?". The setuid passwd, run the same way, gets no line; a process that
# made itself non-dumpable gets none of what it took after. Before the
# verdicts most lines were "?" and some children were left out.
t_serve_short_children() {
	name="serve: short children judged as they ran"
	passwd=/usr/bin/passwd
	serve_start "$name" || return
	d=$(mktemp -d) || { fail "$name: mktemp"; serve_stop; return; }
	chmod 777 "$d"
	# The copy: of passwd where it is a program of its own (the same as
	# the setuid run), else of true, named as it (the VMs' are busybox's
	# applets: the name picks the applet).
	if [ -x "$passwd" ] && [ ! -L "$passwd" ]; then src=$passwd; else src=/bin/true; fi
	kid=$(basename "$src")
	cp "$src" "$d/$kid" && chmod 755 "$d/$kid"
	# shellcheck disable=SC2016 # $0 is sh -c's: expanded by that shell
	loop='for i in 1 2 3 4 5 6 7 8 9 10; do "$0" --help >/dev/null; done'
	$AS_NOBODY "$PEAKBPF" -q -o "$d/plain.json" --helper="$SOCK" --timeline "$d/plain.csv" \
		-- sh -c "$loop" "$d/$kid" 2>"$d/plain.err"
	rc1=$?
	rc2=0
	slabels="not run: $passwd is not setuid here"
	if [ -u "$passwd" ]; then
		$AS_NOBODY "$PEAKBPF" -q -o "$d/suid.json" --helper="$SOCK" --timeline "$d/suid.csv" \
			-- sh -c "$loop" "$passwd" 2>"$d/suid.err"
		rc2=$?
		slabels="exact $(json_raw "$d/suid.json" exact), lines: $(head -n 1 "$d/suid.csv" |
			tr ',' '\n' | grep '^max_bytes ' | tr '\n' ' ')"
	fi
	# A process that makes itself non-dumpable (workload -U, at its
	# start) before it takes 32 MiB: its line, if any, stops at what it held
	# before.
	$AS_NOBODY "$PEAKBPF" -q -o "$d/undump.json" --helper="$SOCK" --timeline "$d/undump.csv" \
		-- "$WORKLOAD" -U -s 32MiB -t 50ms spike >/dev/null 2>"$d/undump.err"
	rc3=$?
	serve_stop
	umax=$(awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) if ($i ~ /^max_bytes .* workload$/) c = i; next }
		c && $c != "" && $c + 0 > m { m = $c + 0 } END { print c ? m + 0 : "none" }' "$d/undump.csv")
	upeak=$(json_num "$d/undump.json" peak_bytes)
	labels=$(head -n 1 "$d/plain.csv" | tr ',' '\n' | grep '^max_bytes ')
	n=$(echo "$labels" | grep -c .)
	named=$(echo "$labels" | grep -c " $kid\$")
	unnamed=$(echo "$labels" | grep -c ' ?$')
	said="copy of $src: exact $(json_raw "$d/plain.json" exact), $n lines, $named named $kid, $unnamed \"?\"; setuid: $slabels; not dumpable: peak ${upeak:-?}, its line's max $umax"
	if [ "$rc1" = 0 ] && [ "$rc2" = 0 ] && [ "$rc3" = 0 ] && [ "$n" -ge 2 ] && [ "$named" -ge 1 ] &&
		[ "$unnamed" = 0 ] && [ "${upeak:-0}" -gt 33554432 ] && { [ "$umax" = none ] || [ "$umax" -lt 16777216 ]; } &&
		{ [ ! -u "$passwd" ] || ! echo "$slabels" | grep -q 'passwd\| ?\|exact false'; }; then
		ok "$name: $said"
	else
		fail "$name: exits $rc1/$rc2: $said; $(cat "$d"/*.err)"
	fi
	rm -rf "$d"
}
