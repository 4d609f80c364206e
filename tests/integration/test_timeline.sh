# shellcheck shell=sh
# --timeline and peakbpf plot: the tree sum over time, from a real run.

TESTS="$TESTS t_timeline_json t_timeline_holders t_timeline_plots t_timeline_chromium t_timeline_layout
 t_timeline_plot_cmd t_timeline_errors"

CHECK="$here/timeline_check.py"

# inexact NAME RECORD: skip NAME when the run was not exact (before 6.2 rss
# reaches the counters in per-thread batches: the record of changes and
# the peak need not meet to the page). True when skipped.
inexact() {
	[ "$(tail -n 1 "$2" | grep -o '"exact":[a-z]*' | head -n 1 | cut -d: -f2)" = true ] && return 1
	skip "$1: the run is not exact here ($(json_raw "$2" inexact_reason))"
	return 0
}

# attr FILE NAME: the first numeric value of NAME="..." in FILE.
attr() {
	grep -o "$2=\"[0-9.]*\"" "$1" | head -n 1 | cut -d'"' -f2
}

# A 64 MiB spike held 5 ms (workload spike), windows every 250 ms: the
# trace event file follows the format, its plotted maximum and its peak
# instant are the record's peak to the page, and each closed window is an
# instant.
t_timeline_json() {
	if ! "$PEAKBPF" -q -o "$TMP/tl.json" -i 250ms --timeline "$TMP/tl-trace.json" -- \
		"$WORKLOAD" -s 64MiB -t 5ms spike 2>"$TMP/tl.err"; then
		fail "timeline json: peakbpf failed: $(cat "$TMP/tl.err")"
		return
	fi
	inexact "timeline json" "$TMP/tl.json" && return
	need python3 "timeline json: the trace event check" || return
	peak=$(tail -n 1 "$TMP/tl.json" | grep -o '"peak_bytes":[0-9]*' | head -n 1 | cut -d: -f2)
	windows=$(grep -c '"record":"window"' "$TMP/tl.json")
	page=$(page_size)
	if ! out=$(python3 "$CHECK" json "$TMP/tl-trace.json" 2>&1); then
		fail "timeline json: not a valid trace: $out"
		return
	fi
	set -- $out
	if [ "$(($1 / page))" = "$((peak / page))" ] && [ "$2" = "$peak" ] && [ "$3" = "$windows" ]; then
		ok "timeline json: trace events valid, ts monotonic per track; plotted max $(mib "$1") = reported peak $(mib "$peak"); $3 window instants"
	else
		fail "timeline json: plotted max $1, peak instant $2, reported peak $peak; $3 window instants of $windows"
	fi
}

# The holders' lines, on the ladder (children of 256, 128 and 64 MiB at
# once): in the trace and the CSV, each holder the record lists at the peak
# has a line labelled with its PID and comm that reaches its own peak
# exactly; the tree's line is still the reported peak to the page, and the
# trace with its new tracks still follows the format.
t_timeline_holders() {
	need python3 "timeline holders: the trace and CSV check" || return
	page=$(page_size)
	bad=""
	for f in tl-ladder.json tl-ladder.csv; do
		if ! "$PEAKBPF" -q -o "$TMP/tl-ladder-rec.json" --timeline "$TMP/$f" -- \
			"$WORKLOAD" -s 64MiB -n 3 -t 200ms ladder 2>"$TMP/tl.err"; then
			fail "timeline holders: peakbpf failed: $(cat "$TMP/tl.err")"
			return
		fi
		inexact "timeline holders" "$TMP/tl-ladder-rec.json" && return
		peak=$(json_num "$TMP/tl-ladder-rec.json" peak_bytes)
		case $f in
		*.json)
			out=$(python3 "$CHECK" json "$TMP/$f" 2>&1) || { bad="$bad trace: $out"; continue; }
			set -- $out
			[ "$(($1 / page))" = "$((peak / page))" ] && [ "$2" = "$peak" ] ||
				bad="$bad tree line $1, peak instant $2, reported $peak;"
			lines=$(python3 "$CHECK" holders-json "$TMP/$f" "$TMP/tl-ladder-rec.json" 2>&1) ||
				bad="$bad json: $lines" ;;
		*)
			out=$(python3 "$CHECK" holders-csv "$TMP/$f" "$TMP/tl-ladder-rec.json" 2>&1) ||
				bad="$bad csv: $out" ;;
		esac
	done
	if [ -z "$bad" ]; then
		ok "timeline holders: ladder: lines for $lines reach their own peaks (trace and CSV); tree line = reported peak $(mib "$peak")"
	else
		fail "timeline holders:$bad"
	fi
}

# The plots --timeline draws: the plotted maximum is the reported peak, to
# the page, and the page fetches nothing.
t_timeline_plots() {
	page=$(page_size)
	bad=""
	for f in tl-run.svg tl-run.html; do
		if ! "$PEAKBPF" -q -o "$TMP/tl-run.json" --timeline "$TMP/$f" -- \
			"$WORKLOAD" -s 64MiB -t 5ms spike 2>"$TMP/tl.err"; then
			fail "timeline plots: peakbpf failed: $(cat "$TMP/tl.err")"
			return
		fi
		inexact "timeline plots" "$TMP/tl-run.json" && return
		peak=$(json_num "$TMP/tl-run.json" peak_bytes)
		m=$(attr "$TMP/$f" data-plotted-max-bytes)
		p=$(attr "$TMP/$f" data-peak-bytes)
		[ "$((${m:-0} / page))" = "$((peak / page))" ] && [ "$p" = "$peak" ] || bad="$bad $f: $m/$p/$peak"
	done
	if [ -z "$bad" ] && grep -q '<script>' "$TMP/tl-run.html" && ! grep -q 'src=\|href=' "$TMP/tl-run.html"; then
		ok "timeline plots: svg and html: plotted max = marked peak = reported peak $(mib "$peak"); the page fetches nothing"
	else
		fail "timeline plots (plotted/marked/reported):$bad"
	fi
}

# peakbpf plot draws a saved timeline (.json or .csv) as the run drew it:
# the plotted maximum is the reported peak, to the page.
t_timeline_plot_cmd() {
	[ -f "$TMP/tl-trace.json" ] || { skip "timeline plot: no trace from t_timeline_json"; return; }
	inexact "timeline plot" "$TMP/tl.json" && return
	peak=$(tail -n 1 "$TMP/tl.json" | grep -o '"peak_bytes":[0-9]*' | head -n 1 | cut -d: -f2)
	page=$(page_size)
	"$PEAKBPF" plot "$TMP/tl-trace.json" -o "$TMP/tl.html" &&
		"$PEAKBPF" plot "$TMP/tl-trace.json" -o "$TMP/tl.csv" &&
		"$PEAKBPF" plot "$TMP/tl.csv" -o "$TMP/tl-csv.svg" || { fail "timeline plot: peakbpf plot failed"; return; }
	bad=""
	holders=$(grep -c '"trace_pid":' "$TMP/tl-trace.json")
	for f in tl.html tl-csv.svg; do
		m=$(attr "$TMP/$f" data-plotted-max-bytes)
		[ "$((${m:-0} / page))" = "$((peak / page))" ] || bad="$bad $f:$m"
		# The holders' lines are kept too (a line per holder of the trace).
		[ "$(grep -o '<path id="holder-[0-9]*"' "$TMP/$f" | wc -l)" = "$holders" ] || bad="$bad $f:lines"
	done
	if [ -z "$bad" ] && [ "$holders" -gt 0 ]; then
		ok "timeline plot: html from json, svg from csv: plotted max = reported peak $(mib "$peak"), $holders holder line(s) kept"
	else
		fail "timeline plot: reported peak $peak, plotted:$bad"
	fi
	expect_error "plot of a file that is not a timeline" 125 "not a timeline written by peakbpf" \
		"$PEAKBPF" plot "$TMP/tl.json" -o "$TMP/x.svg"
	expect_error "plot without -o" 125 "no output" "$PEAKBPF" plot "$TMP/tl-trace.json"
}

# The page in a real browser: headless Chromium takes a screenshot, and the
# peak marker's red pixels are where the page puts the marker.
t_timeline_chromium() {
	[ -f "$TMP/tl-run.html" ] || { skip "timeline chromium: no page from t_timeline_plots"; return; }
	need chromium "timeline chromium (Debian's chromium package)" || return
	need python3 "timeline chromium: the pixel check" || return
	rm -rf "$TMP/chromium-profile" "$TMP/tl.png"
	timeout 60 chromium --headless --no-sandbox --disable-gpu --no-first-run \
		--disable-background-networking --disable-component-update --disable-sync \
		--user-data-dir="$TMP/chromium-profile" --hide-scrollbars --window-size=960,480 \
		--screenshot="$TMP/tl.png" "file://$TMP/tl-run.html" >"$TMP/chromium.log" 2>&1
	if [ ! -s "$TMP/tl.png" ]; then
		skip "timeline chromium: Chromium cannot start here: $(tail -n 1 "$TMP/chromium.log")"
		return
	fi
	cx=$(grep -o '<circle id="peak-marker" cx="[0-9.]*" cy="[0-9.]*"' "$TMP/tl-run.html" | cut -d'"' -f4)
	cy=$(grep -o '<circle id="peak-marker" cx="[0-9.]*" cy="[0-9.]*"' "$TMP/tl-run.html" | cut -d'"' -f6)
	# The data's bottom edge: the legend's own red dot is below it.
	bottom=$(grep -o '<rect x="80" y="[0-9]*" width="860" height="[0-9]*"' "$TMP/tl-run.html" | head -n 1 |
		awk -F'"' '{ print $4 + $8 }')
	set -- $(python3 "$CHECK" red "$TMP/tl.png" "$bottom")
	if [ "${3:-0}" -ge 40 ] && awk -v x="$1" -v y="$2" -v cx="$cx" -v cy="$cy" \
		'BEGIN { dx = x - cx; dy = y - cy; exit !(dx * dx + dy * dy <= 4) }'; then
		ok "timeline chromium: the peak marker is drawn at ($1, $2), the page puts it at ($cx, $cy) ($3 red pixels)"
	else
		fail "timeline chromium: red pixels at ($1, $2) ($3 of them), marker at ($cx, $cy)"
	fi
	# Zoom: drag across the peak; the columns, now narrower, still reach
	# the peak (each keeps its min and max), and the time axis follows.
	python3 "$CHECK" drag "$TMP/tl-run.html" "$TMP/tl-drag.html"
	timeout 60 chromium --headless --no-sandbox --disable-gpu --no-first-run \
		--disable-background-networking --disable-component-update --disable-sync \
		--user-data-dir="$TMP/chromium-profile" --dump-dom "file://$TMP/tl-drag.html" \
		>"$TMP/tl-dom.html" 2>"$TMP/chromium.log"
	set -- $(python3 "$CHECK" zoomed "$TMP/tl-dom.html" 2>&1)
	if [ "$4" = none ] && awk -v t="$1" -v c="$2" 'BEGIN { exit !(t - c <= 0.5 && c - t <= 0.5) }' &&
		[ "${3%%,*}" != 0s ]; then
		ok "timeline chromium: zoomed in on the peak, the plot still reaches it (top $1, marker $2), time axis $3"
	else
		fail "timeline chromium: zoom: top $1, marker $2, ticks $3, script errors: $4"
	fi
}

# shot PAGE WIDTH OUT: a screenshot of PAGE in a window WIDTH px wide.
shot() {
	timeout 60 chromium --headless --no-sandbox --disable-gpu --no-first-run \
		--disable-background-networking --disable-component-update --disable-sync \
		--user-data-dir="$TMP/chromium-profile" --window-size="$2,1000" --screenshot="$3" \
		"file://$1" >"$TMP/chromium.log" 2>&1
}

# The page as a person reads it, at 800 and 1600 px: from the pixels, no
# legend pixel is a data pixel (the legend's are where hiding it changes
# the screenshot, the data's where hiding the data does; the checker sees
# the legend moved over the data), and the page is never wider than the
# window (no horizontal scrollbar).
t_timeline_layout() {
	need chromium "timeline layout (Debian's chromium package)" || return
	need python3 "timeline layout: the pixel check" || return
	"$PEAKBPF" -q -i 300ms --timeline "$TMP/lay.html" -- "$WORKLOAD" -s 16MiB -n 3 -t 200ms ladder \
		2>"$TMP/lay.err" || { fail "timeline layout: peakbpf: $(cat "$TMP/lay.err")"; return; }
	rm -rf "$TMP/chromium-profile"
	res=""
	for kind in full nolegend nodata overlaid overlaid-nolegend overlaid-nodata; do
		python3 "$CHECK" variant "$TMP/lay.html" "$kind" "$TMP/lay-$kind.html"
	done
	for w in 800 1600; do
		for kind in full nolegend nodata; do
			shot "$TMP/lay-$kind.html" "$w" "$TMP/lay-$w-$kind.png"
		done
		if [ ! -s "$TMP/lay-$w-full.png" ]; then
			skip "timeline layout: Chromium cannot start here: $(tail -n 1 "$TMP/chromium.log")"
			return
		fi
		set -- $(python3 "$CHECK" overlap "$TMP/lay-$w-full.png" "$TMP/lay-$w-nolegend.png" \
			"$TMP/lay-$w-nodata.png")
		hs=$(timeout 60 chromium --headless --no-sandbox --disable-gpu --no-first-run \
			--user-data-dir="$TMP/chromium-profile" --window-size="$w,1000" --dump-dom \
			"file://$TMP/lay-full.html" 2>/dev/null | grep -o 'data-hscroll="[a-z]*"' | cut -d'"' -f2)
		res="$res $w px: legend $2 px, data $4 px, both $6, scrollbar ${hs:-unknown};"
		[ "${2:-0}" -gt 1000 ] && [ "${4:-0}" -gt 1000 ] && [ "$6" = 0 ] && [ "$hs" = no ] ||
			{ fail "timeline layout:$res"; return; }
	done
	for kind in overlaid overlaid-nolegend overlaid-nodata; do
		shot "$TMP/lay-$kind.html" 800 "$TMP/lay-800-$kind.png"
	done
	set -- $(python3 "$CHECK" overlap "$TMP/lay-800-overlaid.png" "$TMP/lay-800-overlaid-nolegend.png" \
		"$TMP/lay-800-overlaid-nodata.png")
	if [ "${6:-0}" -gt 100 ]; then
		ok "timeline layout:$res the legend moved over the data is seen ($6 px)"
	else
		fail "timeline layout: the check misses a legend over the data ($*)"
	fi
}

t_timeline_errors() {
	expect_error "--timeline with an unknown extension" 125 "extension names the format" \
		"$PEAKBPF" --timeline "$TMP/t.txt" -- true
	expect_error "--timeline with --source proc" 125 "needs the bpf source" \
		"$PEAKBPF" -s proc --timeline "$TMP/t.svg" -- true
	expect_error "--timeline to an unwritable place" 125 "cannot write" \
		"$PEAKBPF" --timeline /nonexistent/t.svg -- true
}
