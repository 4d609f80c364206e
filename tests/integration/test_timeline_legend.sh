# shellcheck shell=sh
# The timeline's legend names only what is drawn, and with -r says which
# run it draws (issue 36: it named dashed window lines and a dark band
# that were not drawn).

TESTS="$TESTS t_timeline_legend"

# legend_check SVG: "ROWS; band B; dashes D" (ROWS: the legend's entries
# on the left, by their first word; B, D: whether the band has a visible
# stroke, whether a window's dashed line is drawn).
legend_check() {
	python3 - "$1" <<'PY'
import re, sys
s = open(sys.argv[1]).read()
legend = re.search(r'<g id="legend".*?</g>', s, re.S).group(0)
rows = [t.split(":")[0] for t in re.findall(r'<text[^>]*>([^<]*)</text>', legend) if ":" in t]
band = re.search(r'<path id="band"[^>]* d="([^"]*)"', s).group(1)
visible = any(abs(float(a) - float(b)) >= 1 for a, b in re.findall(r'M[\d.]+ ([\d.]+)V([\d.]+)', band))
dashes = bool(re.search(r'<g id="marks"[^>]*><line', s))
print("%s; band %s; dashes %s" % (",".join(rows), visible, dashes))
PY
}

# -r 3 of a steady shape: no window, so no dashed-line entry; the title
# says "run 3 of 3". One run with -i 100ms: windows, so the entry is
# there. The band's entry is there exactly when its stroke is visible.
t_timeline_legend() {
	name="timeline: the legend"
	need python3 "$name" || return
	"$PEAKBPF" -q -r 3 --timeline "$TMP/leg-r.svg" -- "$WORKLOAD" -s 16MiB -t 300ms steady >/dev/null 2>&1
	"$PEAKBPF" -q -i 100ms --timeline "$TMP/leg-i.svg" -- "$WORKLOAD" -s 16MiB -t 400ms steady >/dev/null 2>&1
	r=$(legend_check "$TMP/leg-r.svg") i=$(legend_check "$TMP/leg-i.svg")
	title=$(grep -o 'font-size="14" fill="#000">[^<]*' "$TMP/leg-r.svg" | cut -d'>' -f2)
	bad=""
	for x in "$r" "$i"; do
		case $x in *"band True"*) case $x in *"dark band"*) ;; *) bad="$bad band-unnamed" ;; esac ;;
		*"band False"*) case $x in *"dark band"*) bad="$bad band-named" ;; esac ;; esac
		case $x in *"dashes True"*) case $x in *"dashed lines"*) ;; *) bad="$bad dashes-unnamed" ;; esac ;;
		*"dashes False"*) case $x in *"dashed lines"*) bad="$bad dashes-named" ;; esac ;; esac
	done
	case $r in *"dashes False"*) ;; *) bad="$bad r-has-windows" ;; esac
	case $i in *"dashes True"*) ;; *) bad="$bad i-has-no-windows" ;; esac
	case $title in *"(run 3 of 3: each run rewrites this timeline)") ;; *) bad="$bad title" ;; esac
	if [ -z "$bad" ]; then
		ok "$name: -r 3: $r, title '$title'; -i 100ms: $i"
	else
		fail "$name:$bad: -r 3: $r, title '$title'; -i 100ms: $i"
	fi
}
