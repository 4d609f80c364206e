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

TESTS="$TESTS t_writers_refuse_symlinks t_failed_run_keeps_output"

# Every file root writes refuses a symlink planted by another user in a
# directory all may write (1777): -o (alone and with -r), --timeline,
# every --export-*, plot -o, merge --timeline, and
# --record DIR through a symlinked DIR. The root-only file behind each
# link is untouched, and each command fails saying so.
t_writers_refuse_symlinks() {
	need setpriv "writers and symlinks" || return
	pub=$(mktemp -d) && priv=$(mktemp -d) || { fail "writers and symlinks: mktemp"; return; }
	chmod 1777 "$pub"
	chmod 700 "$priv"
	echo secret >"$priv/victim"
	chmod 600 "$priv/victim"
	mkdir "$priv/recdir"
	for w in o o-r timeline.json csv md json bmf gab om plot.svg merge.json; do
		setpriv --reuid=65534 --regid=65534 --clear-groups ln -s "$priv/victim" "$pub/l-$w"
	done
	setpriv --reuid=65534 --regid=65534 --clear-groups ln -s "$priv/recdir" "$pub/l-rec"
	"$PEAKBPF" -q --timeline "$TMP/good.json" --record "$TMP/rec" -- "$WORKLOAD" -s 4MiB -t 50ms spike \
		>/dev/null 2>&1
	res=""
	run() { "$@" >/dev/null 2>>"$TMP/links.err"; res="$res $?"; }
	run "$PEAKBPF" -q -o "$pub/l-o" -- true
	run "$PEAKBPF" -q -r 2 -o "$pub/l-o-r" -- true
	run "$PEAKBPF" -q --timeline "$pub/l-timeline.json" -- true
	run "$PEAKBPF" -q -r 2 --export-csv "$pub/l-csv" -- true
	run "$PEAKBPF" -q -r 2 --export-markdown "$pub/l-md" -- true
	run "$PEAKBPF" -q -r 2 --export-json "$pub/l-json" -- true
	run "$PEAKBPF" -q -r 2 --export-bmf "$pub/l-bmf" -- true
	run "$PEAKBPF" -q -r 2 --export-gab "$pub/l-gab" -- true
	run "$PEAKBPF" -q -r 2 --export-openmetrics "$pub/l-om" -- true
	run "$PEAKBPF" plot -o "$pub/l-plot.svg" "$TMP/good.json"
	run "$PEAKBPF" merge --timeline "$pub/l-merge.json" "$TMP/rec"
	run "$PEAKBPF" -q --record "$pub/l-rec" -- true
	victim=$(cat "$priv/victim")
	left=$(ls "$priv/recdir" | wc -l)
	rm -rf "$pub" "$priv"
	case "$res" in *" 0"*) zero=yes ;; *) zero=no ;; esac
	if [ "$victim" = secret ] && [ "$left" = 0 ] && [ "$zero" = no ] &&
		[ "$(grep -c 'Too many levels of symbolic links\|not a symlink' "$TMP/links.err")" -ge 12 ]; then
		ok "writers and symlinks: 12 writers refused a planted symlink (exits$res), the root file behind is intact"
	else
		fail "writers and symlinks: exits$res, victim '$victim', files in the record dir $left: $(cat "$TMP/links.err")"
	fi
}

# A run that fails (exit 127: no such command) leaves the -o and
# --timeline files as they were; new ones are 0600.
t_failed_run_keeps_output() {
	echo before >"$TMP/keep.json"
	echo before >"$TMP/keep-tl.json"
	"$PEAKBPF" -q -o "$TMP/keep.json" --timeline "$TMP/keep-tl.json" -- /nonexistent/cmd 2>/dev/null
	rc=$?
	rm -f "$TMP/new.json"
	"$PEAKBPF" -q -o "$TMP/new.json" -- true 2>/dev/null
	mode=$(stat -c %a "$TMP/new.json" 2>/dev/null)
	if [ "$rc" = 127 ] && [ "$(cat "$TMP/keep.json")" = before ] &&
		[ "$(cat "$TMP/keep-tl.json")" = before ] && [ "$mode" = 600 ]; then
		ok "a failed run (exit 127) leaves -o and --timeline as they were; a new file is 0600"
	else
		fail "failed run: exit $rc, -o now '$(head -c 80 "$TMP/keep.json")', --timeline now '$(head -c 80 "$TMP/keep-tl.json")', new mode $mode"
	fi
}

TESTS="$TESTS t_serve_status_own"

# A user's --status tells it of its own connections and trees only (it
# told everyone how many every user had open); root's tells all.
t_serve_status_own() {
	serve_start "serve: status of one's own" || return
	setpriv --reuid=65533 --regid=65533 --clear-groups --inh-caps=-all \
		"$PEAKBPF" -q --helper="$SOCK" -- sleep 3 >/dev/null 2>&1 &
	other=$!
	wait_trees 1
	# shellcheck disable=SC2086
	$AS_NOBODY "$PEAKBPF" serve --status --socket "$SOCK" >"$TMP/st-nobody.txt" 2>&1
	"$PEAKBPF" serve --status --socket "$SOCK" >"$TMP/st-root.txt" 2>&1
	wait "$other"
	serve_stop
	if grep -q '^scope own$' "$TMP/st-nobody.txt" && grep -q '^trees 0$' "$TMP/st-nobody.txt" &&
		grep -q '^clients 1$' "$TMP/st-nobody.txt" && ! grep -q '^tree \|^trees_opened' "$TMP/st-nobody.txt" &&
		grep -q '^scope all$' "$TMP/st-root.txt" && grep -q '^trees 1$' "$TMP/st-root.txt" &&
		grep -q '^tree uid 65533 ' "$TMP/st-root.txt"; then
		ok "serve: --status: nobody sees its own connection only, root sees uid 65533's tree"
	else
		fail "serve: --status: nobody saw: $(tr '\n' ' ' <"$TMP/st-nobody.txt"); root saw: $(tr '\n' ' ' <"$TMP/st-root.txt")"
	fi
}

TESTS="$TESTS t_add_pid_authorised"

# peakbpf_add_pid applies the CLI's rule: a program given CAP_BPF and
# CAP_PERFMON (here the Python package, as nobody) is refused root's
# process and may measure its own (it measured root's before).
t_add_pid_authorised() {
	need setpriv "peakbpf_add_pid authorised" || return
	# shellcheck disable=SC2154 # here is run.sh's
	lib=$(dirname "$PEAKBPF")/libpeakbpf.so.0 pydir=$here/../../python
	[ -x /usr/bin/python3 ] && [ -r "$lib" ] && [ -d "$pydir/peakbpf" ] ||
		{ skip "peakbpf_add_pid authorised: needs /usr/bin/python3, $lib and $pydir"; return; }
	sleep 30 &
	roots=$!
	# shellcheck disable=SC2016 # $! is the inner shell's
	setpriv --reuid=65534 --regid=65534 --clear-groups $BPF_CAPS sh -c 'ulimit -l unlimited 2>/dev/null
		sleep 20 & own=$!
		PEAKBPF_LIBRARY="$1" /usr/bin/python3 -c "
import sys
sys.path.insert(0, sys.argv[1])
from peakbpf import _lib
for pid in sys.argv[2:]:
    s = _lib.Session(pid=int(pid))
    print(pid, s.source, s.error)
" "$2" "$3" "$own"; kill "$own"' sh "$lib" "$pydir" "$roots" >"$TMP/addpid.txt" 2>&1
	kill "$roots" 2>/dev/null
	wait "$roots" 2>/dev/null
	if [ "$(sed -n 1p "$TMP/addpid.txt" | cut -d' ' -f2-)" = "unavailable cannot measure process $roots: Operation not permitted" ] &&
		[ "$(sed -n 2p "$TMP/addpid.txt" | cut -d' ' -f2-)" = "bpf None" ]; then
		ok "peakbpf_add_pid: with CAP_BPF+CAP_PERFMON, nobody is refused root's process and measures its own"
	else
		fail "peakbpf_add_pid authorised: $(cat "$TMP/addpid.txt")"
	fi
}
