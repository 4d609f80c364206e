# shellcheck shell=sh
# What peakbpf's files look like to others (issue 36): exports, timelines
# and plots readable by all (0644 less the umask), the -o record the
# caller's (0600); a full disk leaves no empty -o or timeline behind.

TESTS="$TESTS t_output_modes t_output_full_disk"

# Under umask 022, as root: every export, the timeline and a plot 0644,
# -o 0600. Debian's node_exporter reads a textfile as user prometheus:
# 0600 gave node_textfile_scrape_error 1.
t_output_modes() {
	name="outputs: modes"
	d=$(mktemp -d) || { fail "$name: mktemp"; return; }
	# shellcheck disable=SC2086 # the exports are words
	(umask 022
	 "$PEAKBPF" -q -r 2 "$WORKLOAD -s 1MiB spike" --export-openmetrics "$d/a.prom" --export-csv "$d/a.csv" \
		--export-json "$d/a.json" --export-markdown "$d/a.md" >/dev/null 2>"$d/r.err"
	 "$PEAKBPF" -q -o "$d/o.json" --timeline "$d/t.csv" -- "$WORKLOAD" -s 4MiB spike >/dev/null 2>&1
	 "$PEAKBPF" plot -o "$d/p.svg" "$d/t.csv" >/dev/null 2>&1)
	modes=$(cd "$d" && stat -c '%n %a' a.prom a.csv a.json a.md t.csv p.svg o.json 2>&1 | tr '\n' ' ')
	rm -rf "$d"
	if [ "$modes" = "a.prom 644 a.csv 644 a.json 644 a.md 644 t.csv 644 p.svg 644 o.json 600 " ]; then
		ok "$name: $modes"
	else
		fail "$name: $modes"
	fi
}

# A tmpfs of 64 KiB, full: -o and --timeline there fail with exit 125
# and the reason, and leave no file (before: a 0-byte -o).
t_output_full_disk() {
	name="outputs: a full disk"
	mnt=$TMP/full-helper2.$$
	mkdir -p "$mnt" && mount -t tmpfs -o size=64k tmpfs "$mnt" 2>/dev/null ||
		{ skip "$name: cannot mount a tmpfs here"; rmdir "$mnt" 2>/dev/null; return; }
	dd if=/dev/zero of="$mnt/fill" bs=4k 2>/dev/null
	"$PEAKBPF" -q -o "$mnt/out.json" -- "$WORKLOAD" -s 1MiB spike >/dev/null 2>"$TMP/full.err"
	rc=$?
	"$PEAKBPF" -q --timeline "$mnt/t.csv" -- "$WORKLOAD" -s 1MiB spike >/dev/null 2>"$TMP/full2.err"
	rc2=$?
	left=$(ls "$mnt" | tr '\n' ' ')
	umount "$mnt"
	rmdir "$mnt"
	if [ "$rc" = 125 ] && [ "$rc2" = 125 ] && [ "$left" = "fill " ] &&
		grep -q "No space left on device" "$TMP/full.err"; then
		ok "$name: exits $rc/$rc2, nothing left but the filler: $(head -n 1 "$TMP/full.err")"
	else
		fail "$name: exits $rc/$rc2, left: $left; $(cat "$TMP/full.err" "$TMP/full2.err")"
	fi
}

TESTS="$TESTS t_output_node_exporter"

# Debian's node_exporter, as user prometheus, on a loopback port, reads two
# --export-openmetrics files of one textfile directory: a summed-RSS series
# and a unique one of the same command. Both are served (the measure label
# tells them apart), node_textfile_scrape_error is 0, and the two files'
# TYPE, UNIT and HELP lines are the same (a HELP that differs for a name
# makes it drop a file; a 0600 file it cannot read at all).
t_output_node_exporter() {
	name="outputs: node_exporter reads two exports"
	ne=$(command -v prometheus-node-exporter || command -v node_exporter)
	[ -n "$ne" ] || { skip "$name: no prometheus-node-exporter"; return; }
	need curl "$name" || return
	id prometheus >/dev/null 2>&1 && who=prometheus || who=nobody
	d=$(mktemp -d) || { fail "$name: mktemp"; return; }
	chmod 755 "$d"
	(umask 022
	 "$PEAKBPF" -q -r 2 'sleep 0.01' --export-openmetrics "$d/rss.prom" >/dev/null 2>&1
	 "$PEAKBPF" -q -r 2 --measure unique 'sleep 0.01' --export-openmetrics "$d/unique.prom" >/dev/null 2>&1)
	port=$((19100 + $$ % 700))
	setpriv --reuid="$who" --regid="$who" --clear-groups "$ne" --collector.disable-defaults \
		--collector.textfile --collector.textfile.directory="$d" \
		--web.listen-address="127.0.0.1:$port" >"$TMP/ne.log" 2>&1 &
	nep=$!
	i=0
	while ! curl -s "http://127.0.0.1:$port/metrics" >"$TMP/ne.txt" 2>/dev/null && [ "$i" -lt 50 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	kill "$nep" 2>/dev/null
	wait "$nep" 2>/dev/null
	grep '^#' "$d/rss.prom" >"$TMP/ne-r.h"
	grep '^#' "$d/unique.prom" >"$TMP/ne-u.h"
	same=$(cmp -s "$TMP/ne-r.h" "$TMP/ne-u.h" && echo yes)
	err=$(sed -n 's/^node_textfile_scrape_error \([0-9]*\)$/\1/p' "$TMP/ne.txt")
	rss=$(grep -c '^peakbpf_peak_bytes{.*measure="rss"' "$TMP/ne.txt")
	uniq=$(grep -c '^peakbpf_peak_bytes{.*measure="unique"' "$TMP/ne.txt")
	modes=$(stat -c %a "$d/rss.prom" "$d/unique.prom" | tr '\n' ' ')
	rm -rf "$d"
	if [ "$err" = 0 ] && [ "$rss" = 4 ] && [ "$uniq" = 4 ] && [ "$same" = yes ] &&
		! grep -qi "level=error" "$TMP/ne.log"; then
		ok "$name (as $who, 127.0.0.1:$port, files $modes): node_textfile_scrape_error 0, 4 rss + 4 unique series, the same TYPE/UNIT/HELP"
	else
		fail "$name: scrape error '$err', rss $rss, unique $uniq, same headers '$same', modes $modes: $(grep -i 'error' "$TMP/ne.log" | head -n 3)"
	fi
}
