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
