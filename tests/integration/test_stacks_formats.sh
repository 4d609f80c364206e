# shellcheck shell=sh
# --stacks' second format and the flame graphs drawn from both (issue 35,
# docs/stacks.md "Speedscope JSON" and "Drawn by speedscope"): the JSON of
# stacks_known (tests/integration/stacks_known.c) is valid against
# speedscope's own schema, in bytes, its weights add up to the peak with
# the buckets among them, each function with its bytes; a name of a format
# not written is refused before the run; and speedscope itself, in
# headless chromium, draws both the folded file and the JSON with
# alloc_128's bar twice alloc_64's (stacks_formats_check.py reads the PNG);
# and --timeline's page names the stacks at its peak marker.

TESTS="$TESTS t_stacks_speedscope t_stacks_bad_format t_stacks_flamegraph_pixels t_stacks_timeline_link"

SSF_KNOWN=${STACKS_KNOWN:-$OUTPUT/stacks_known}
# shellcheck disable=SC2154 # here: run.sh's
SSF_CHECK=$here/stacks_formats_check.py
# Installed by tools/install-deps.sh (npm, pinned), outside the tree.
SPEEDSCOPE_DIR=${SPEEDSCOPE_DIR:-/usr/local/lib/peakbpf-test-node/node_modules/speedscope/dist/release}

# ssf_run EXT: stacks_known under --stacks $TMP/ssf.EXT, once for the
# tests of this file; its record in $TMP/ssf-EXT.json. 0; 1 with ssf_why
# when it cannot run here (skip); 2 with ssf_why when it failed.
ssf_run() {
	[ -s "$TMP/ssf.$1" ] && return 0
	ssf_why="$SSF_KNOWN not built (make all)"
	[ -x "$SSF_KNOWN" ] || return 1
	ssf_why="--stacks is x86-64's only in this version (exceptions:page_fault_user)"
	[ "$(uname -m)" = x86_64 ] || return 1
	"$PEAKBPF" --stacks "$TMP/ssf.$1" -o "$TMP/ssf-$1.json" -- "$SSF_KNOWN" 2>"$TMP/ssf-$1.err"
	ssf_rc=$?
	ssf_why=$(grep -m 1 -- '--stacks: this kernel' "$TMP/ssf-$1.err")
	[ "$ssf_rc" != 0 ] && [ -n "$ssf_why" ] && return 1
	[ "$ssf_rc" = 0 ] && [ -s "$TMP/ssf.$1" ] && return 0
	ssf_why="rc $ssf_rc: $(grep -m 2 'stacks' "$TMP/ssf-$1.err" | tr '\n' ' ')"
	rm -f "$TMP/ssf.$1"
	return 2
}

# ssf_need NAME EXT...: the runs, or skip/fail NAME saying why (false).
ssf_need() {
	n=$1
	shift
	for e in "$@"; do
		ssf_run "$e"
		case $? in
		1) skip "$n: $ssf_why"; return 1 ;;
		2) fail "$n: $ssf_why"; return 1 ;;
		esac
	done
}

t_stacks_speedscope() {
	need python3 "t_stacks_speedscope: the JSON check" || return
	ssf_need t_stacks_speedscope json || return
	schema=$SPEEDSCOPE_DIR/file-format-schema.json
	if [ ! -f "$schema" ]; then
		skip "t_stacks_speedscope: the schema check: no speedscope in $SPEEDSCOPE_DIR (tools/install-deps.sh installs it)"
		schema=-
	elif ! python3 -c 'import jsonschema' 2>/dev/null; then
		skip "t_stacks_speedscope: the schema check: python3-jsonschema not installed"
		schema=-
	fi
	peak=$(json_num "$TMP/ssf-json.json" peak_bytes)
	if out=$(python3 "$SSF_CHECK" speedscope "$TMP/ssf.json" "$schema" "$peak" \
		alloc_64:64 alloc_128:128 freed_32:0 dontneed_16:0 untouched_4g:0 2>&1); then
		ok "t_stacks_speedscope: $out"
	else
		fail "t_stacks_speedscope: $(echo "$out" | tail -n 3 | tr '\n' ' ')"
	fi
}

# A name that promises a format not written (an SVG, a pprof profile):
# one line naming the formats, 125, nothing run and no file left.
t_stacks_bad_format() {
	bad=""
	for name in flame.svg flame.HTML s.pb.gz s.pprof; do
		marker=$TMP/ssf-ran-$$
		"$PEAKBPF" --stacks "$TMP/$name" -- sh -c ": >$marker" 2>"$TMP/ssf-bad.err"
		rc=$?
		lines=$(wc -l <"$TMP/ssf-bad.err")
		if [ "$rc" != 125 ] || [ "$lines" != 1 ] || [ -e "$marker" ] || [ -e "$TMP/$name" ] ||
			! grep -q -- "--stacks: '$TMP/$name': the name says the format" "$TMP/ssf-bad.err"; then
			bad="$bad $name: rc $rc, $lines lines, $(head -c 200 "$TMP/ssf-bad.err");"
		fi
		rm -f "$marker" "$TMP/$name"
	done
	if [ -n "$bad" ]; then
		fail "t_stacks_bad_format:$bad"
	else
		ok "t_stacks_bad_format: .svg, .HTML, .pb.gz, .pprof: 125 before the run: $(cat "$TMP/ssf-bad.err")"
	fi
}

# ssf_shot FILE PNG: speedscope's page with FILE (served from $ssf_www on
# $ssf_port) in headless chromium, as a 1200x700 PNG.
ssf_shot() {
	url=http://127.0.0.1:$ssf_port
	timeout 60 chromium --headless --no-sandbox --disable-gpu --enable-unsafe-swiftshader \
		--use-angle=swiftshader --no-first-run --user-data-dir="$TMP/ssf-chromium" --hide-scrollbars \
		--window-size=1200,700 --virtual-time-budget=5000 --screenshot="$2" \
		"$url/index.html#profileURL=$url/$1" >"$TMP/ssf-chromium.log" 2>&1
}

# ssf_serve: speedscope's page and the two files over http on a free port
# (the server says which; file:// would not let the page fetch the file).
ssf_serve() {
	ssf_www=$TMP/ssf-www ssf_http=""
	rm -rf "$ssf_www"
	mkdir -p "$ssf_www" && cp -r "$SPEEDSCOPE_DIR/." "$ssf_www/" &&
		cp "$TMP/ssf.folded" "$TMP/ssf.json" "$ssf_www/" || return 1
	(cd "$ssf_www" && exec python3 -u -m http.server 0 --bind 127.0.0.1) >"$TMP/ssf-http.log" 2>&1 &
	ssf_http=$!
	for _ in 1 2 3 4 5 6 7 8 9 10; do
		ssf_port=$(sed -n 's/.* port \([0-9]*\) .*/\1/p' "$TMP/ssf-http.log")
		[ -n "$ssf_port" ] && return 0
		sleep 0.5
	done
	return 1
}

t_stacks_flamegraph_pixels() {
	need chromium "t_stacks_flamegraph_pixels (Debian's chromium package)" || return
	need python3 "t_stacks_flamegraph_pixels: the server and the pixel check" || return
	if [ ! -f "$SPEEDSCOPE_DIR/index.html" ]; then
		skip "t_stacks_flamegraph_pixels: no speedscope in $SPEEDSCOPE_DIR (tools/install-deps.sh installs it from npm)"
		return
	fi
	ssf_need t_stacks_flamegraph_pixels folded json || return
	if ! ssf_serve; then
		fail "t_stacks_flamegraph_pixels: the http server did not start: $(tail -n 1 "$TMP/ssf-http.log" 2>&1)"
		[ -n "$ssf_http" ] && kill "$ssf_http" 2>/dev/null
		return
	fi
	for f in ssf.folded ssf.json; do
		rm -f "$TMP/$f.png"
		ssf_shot "$f" "$TMP/$f.png"
		if [ ! -s "$TMP/$f.png" ]; then
			skip "t_stacks_flamegraph_pixels: $f: Chromium cannot start here: $(tail -n 1 "$TMP/ssf-chromium.log")"
			continue
		fi
		# alloc_128's and alloc_64's bytes in the file itself: twice within
		# 64 KiB each (as t_stacks_known), and the bars drawn to those widths.
		# shellcheck disable=SC2046 # three words: FUNC=BYTES FUNC=BYTES total=BYTES
		set -- $(python3 "$SSF_CHECK" weights "$TMP/$f" alloc_128 alloc_64)
		big=${1#*=} small=${2#*=} total=${3#*=}
		if [ "$(abs $((big - 2 * small)))" -gt $((3 * 64 * 1024)) ]; then
			fail "t_stacks_flamegraph_pixels: $f: alloc_128 $big is not twice alloc_64 $small"
		elif out=$(python3 "$SSF_CHECK" bars "$TMP/$f.png" "$big" "$small" "$total" 2>&1); then
			ok "t_stacks_flamegraph_pixels: $f in speedscope: alloc_128 and alloc_64: $out"
		else
			fail "t_stacks_flamegraph_pixels: $f in speedscope: $out"
		fi
	done
	kill "$ssf_http" 2>/dev/null
	wait "$ssf_http" 2>/dev/null
}

# --stacks with --timeline: the stacks are the peak's (a drain after the
# window's close once moved the cut past it: every page was gone), and the
# page links the file and shows the top stacks with their bytes, in the
# peak marker's hover too.
t_stacks_timeline_link() {
	need python3 "t_stacks_timeline_link: the JSON check" || return
	if [ ! -x "$SSF_KNOWN" ] || [ "$(uname -m)" != x86_64 ]; then
		skip "t_stacks_timeline_link: no $SSF_KNOWN (make all), or not x86-64"
		return
	fi
	s=$TMP/ssf-tl.json page=$TMP/ssf-tl.html
	"$PEAKBPF" -q --stacks "$s" --timeline "$page" -o "$TMP/ssf-tl-rec.json" -- "$SSF_KNOWN" 2>"$TMP/ssf-tl.err"
	rc=$?
	if [ "$rc" != 0 ] && grep -q -- '--stacks: this kernel' "$TMP/ssf-tl.err"; then
		skip "t_stacks_timeline_link: $(grep -m 1 -- '--stacks: this kernel' "$TMP/ssf-tl.err")"
		return
	fi
	peak=$(json_num "$TMP/ssf-tl-rec.json" peak_bytes)
	bad=""
	out=$(python3 "$SSF_CHECK" speedscope "$s" - "$peak" alloc_64:64 alloc_128:128 2>&1) || bad=" $out;"
	abs=$(cd "$TMP" && pwd -P)/ssf-tl.json
	grep -q "speedscope JSON in <a href=\"file://$abs\">$abs</a>" "$page" || bad="$bad no link to $abs;"
	line=$(grep -m 1 'stacks_known\[[0-9]*\] touch_pages &lt; alloc_128' "$page")
	case $line in
	*"128.0 MiB  stacks_known"*) ;;
	*) bad="$bad no alloc_128 line with 128.0 MiB in the page ($line);" ;;
	esac
	grep -q '<circle id="peak-marker"[^>]*><title>speedscope JSON in ' "$page" || bad="$bad no hover on the marker;"
	if [ "$rc" != 0 ] || [ -n "$bad" ]; then
		fail "t_stacks_timeline_link: rc $rc:$bad"
	else
		ok "t_stacks_timeline_link: the page links $abs and shows:$(echo "$line" | sed 's/&lt;/</g')"
	fi
}
