# shellcheck shell=sh
# -r as a person at a terminal sees it (issue 36), through tmux: one
# progress line and hyperfine's Summary; Ctrl-C leaves the run it cut out.

TESTS="$TESTS t_runs_terminal t_runs_ctrl_c"

# term_run NAME SECONDS CMD: CMD in a tmux terminal of its own ($TERM_SOCK),
# NAME's screen after SECONDS in $TMP/NAME.screen.
term_start() {
	TERM_SOCK=pkb-helper2-$$-$1
	tmux -L "$TERM_SOCK" new-session -d -s t -x 200 -y 60 "$2" 2>/dev/null
}
term_stop() { tmux -L "$TERM_SOCK" kill-server 2>/dev/null; }

# Two commands, 3 runs each, stderr on the terminal: no line per run, the
# Summary's ratios at the end; through a pipe, a line per run.
t_runs_terminal() {
	name="runs: on a terminal"
	need tmux "$name" || return
	cmd="$PEAKBPF -r 3 'sleep 0.05' '$WORKLOAD -s 16MiB spike'"
	term_start tty "cd $PWD; $cmd; echo rc=\$? >$TMP/tty.rc; sleep 60"
	i=0
	while [ ! -s "$TMP/tty.rc" ] && [ "$i" -lt 200 ]; do sleep 0.1; i=$((i + 1)); done
	tmux -L "$TERM_SOCK" capture-pane -p -t t >"$TMP/tty.screen"
	term_stop
	sh -c "$cmd" >/dev/null 2>"$TMP/pipe.err"
	lines=$(grep -c '^peakbpf: \[[12]/2\] run [123]/3: peak' "$TMP/tty.screen")
	piped=$(grep -c '^peakbpf: \[[12]/2\] run [123]/3: peak' "$TMP/pipe.err")
	if [ "$(cat "$TMP/tty.rc")" = rc=0 ] && [ "$lines" = 0 ] && [ "$piped" = 6 ] &&
		grep -q '^Summary$' "$TMP/tty.screen" &&
		grep -q "^  'sleep 0.05' peaked lowest$" "$TMP/tty.screen" &&
		grep -q "^ *[0-9.]* ± [0-9.]* times lower than '.*spike'$" "$TMP/tty.screen" &&
		grep -q "ran fastest$" "$TMP/tty.screen"; then
		ok "$name: no line per run, then: $(sed -n '/^Summary$/,$p' "$TMP/tty.screen" | grep . | tr '\n' '|'); through a pipe $piped lines"
	else
		fail "$name: $(cat "$TMP/tty.rc"), $lines lines on the terminal, $piped through a pipe: $(grep . "$TMP/tty.screen" | tail -n 12)"
	fi
}

# Ctrl-C (the terminal's SIGINT to the foreground group) in run N of -r 50:
# exit 130, the statistics of the N-1 whole runs only (no run shorter than
# the command's 0.2 s), and stderr says the run was left out.
t_runs_ctrl_c() {
	name="runs: Ctrl-C"
	need tmux "$name" || return
	term_start int "cd $PWD; $PEAKBPF -r 50 'sleep 0.2' --export-json $TMP/int.json 2>$TMP/int.err; echo rc=\$? >$TMP/int.rc; sleep 60"
	sleep 1.5
	tmux -L "$TERM_SOCK" send-keys -t t C-c
	i=0
	while [ ! -s "$TMP/int.rc" ] && [ "$i" -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
	term_stop
	said=$(grep 'interrupted during run' "$TMP/int.err")
	cut=$(echo "$said" | sed -n 's/.*during run \([0-9]*\) .*/\1/p')
	got=$(python3 -c 'import json, sys
r = json.load(open(sys.argv[1]))["results"][0]
print(len(r["times"]), min(r["times"]), max(r["exit_codes"]))' "$TMP/int.json" 2>/dev/null)
	n=${got%% *} rest=${got#* } min=${rest%% *} code=${got##* }
	if [ "$(cat "$TMP/int.rc")" = rc=130 ] && [ -n "$cut" ] && [ "$n" = $((cut - 1)) ] && [ "$code" = 0 ] &&
		awk -v m="$min" 'BEGIN { exit !(m >= 0.2) }' && echo "$said" | grep -q "left out"; then
		ok "$name: exit 130, $n runs counted (min $min s, every exit 0): $said"
	else
		fail "$name: $(cat "$TMP/int.rc"), runs '$got', said '$said': $(tail -n 5 "$TMP/int.err")"
	fi
}
