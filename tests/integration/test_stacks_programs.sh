# shellcheck shell=sh
# --stacks on the programs issue 35 names beside stacks_known
# (docs/stacks.md, "Tested"): the same program without frame pointers, a C++
# program of Debian's toolchain, Debian's python3 allocating through numpy,
# a process whose binary was deleted while it runs, and a ring that
# overflows. Each asserts numbers (bytes per function within STACKS_TOL, the
# lines adding up to the peak: stacks_run and stacks_expect in lib.sh).

TESTS="$TESTS t_stacks_nofp t_stacks_cxx t_stacks_numpy t_stacks_thp t_stacks_deleted t_stacks_ring_overflow
 t_stacks_attach"

# stacks_prog NAME BINARY: true if BINARY is built, else skip NAME.
stacks_prog() {
	[ -x "$2" ] && return 0
	skip "$1: $2 not built (make all${3:+; $3})"
	return 1
}

# stacks_verdict NAME DETAIL: ok or fail from stacks_bad (stacks_expect).
stacks_verdict() {
	if [ -n "$stacks_bad" ]; then
		fail "$1:$stacks_bad"
	else
		ok "$1:$stacks_seen $2"
	fi
}

# Without frame pointers the walk has the ip alone (rbp is any register
# there); the word at sp gives the frameless leaf's caller, checked to
# follow a call in the file. So touch_pages < alloc_64 and < alloc_128:
# the per-function split is kept, every caller above them (main, libc) is
# lost, and the lines still add up to the peak.
t_stacks_nofp() {
	bin=$OUTPUT/stacks_known_nofp
	stacks_prog t_stacks_nofp "$bin" || return
	out=$TMP/stacks-nofp-$$.folded
	stacks_run t_stacks_nofp "$out" "$bin" || return
	stacks_expect "$out" touch_pages:192 alloc_64:64 alloc_128:128 freed_32:0 dontneed_16:0 untouched_4g:0 main:0
	stacks_verdict t_stacks_nofp "$(mib "$(stacks_total "$out" exact)") exact, the peak $(mib "$stacks_peak")"
	rm -f "$out"
}

# C++ (tests/integration/stacks_cxx.cc): names demangled (libstdc++'s
# __cxa_demangle, src/lib/kernel/stacks_sym.c), one a template's member;
# each function's vectors at the peak, the one freed before it 0. glibc's
# memset, which writes the pages, has no frame pointer and no exported
# symbol: an offset in libc, its caller from the word at sp.
t_stacks_cxx() {
	bin=$OUTPUT/stacks_cxx
	stacks_prog t_stacks_cxx "$bin" "it needs g++: make deps" || return
	out=$TMP/stacks-cxx-$$.folded
	stacks_run t_stacks_cxx "$out" "$bin" || return
	stacks_expect "$out" 'work::fill_48()':48 'work::fill_96()':96 'work::Pool<24ul>::grow()':24 \
		'work::dropped_32()':0 main:168
	mangled=$(grep -c '_ZN4work' "$out")
	[ "$mangled" = 0 ] || stacks_bad="$stacks_bad $mangled lines with mangled names"
	stacks_verdict t_stacks_cxx "demangled, $(mib "$(stacks_total "$out" exact)") exact, the peak $(mib "$stacks_peak")"
	rm -f "$out"
}

# numpy_placed FILE: the bytes of the lines whose innermost frame is in
# numpy's _multiarray_umath module or libc (Debian's numpy has no symbols
# for its loops: module+0xOFFSET).
numpy_placed() {
	awk '{ n = split($1, fr, ";") } fr[n] ~ /^(_multiarray_umath|libc\.so)/ { s += $NF }
		END { printf "%d\n", s }' "$1"
}

# Debian's python3 and numpy have no frame pointers: a 256 MiB np.ones is
# placed under the one frame of numpy's fill loop (an offset), nothing above
# it. numpy asks MADV_HUGEPAGE for large arrays: where THP is on (always or
# madvise), its faults map 2 MiB each, which --stacks places whole (stk_thp's
# fexit, or stk_rss from the anon counter's changes on 6.2+): then >= 90 %
# of the array is under numpy's or libc's frames with numpy's default too;
# where neither runs, the summary says "THP tails not placed" and the array
# is in the anon bucket (placed + the anon bucket >= 90 %). With numpy's
# hint off (_set_madvise_hugepage(False)), >= 90 % of it is placed.
t_stacks_numpy() {
	py=/usr/bin/python3
	if ! "$py" -c 'import numpy' 2>/dev/null; then
		skip "t_stacks_numpy: Debian's python3-numpy not installed (make deps)"
		return
	fi
	want=$((256 * MIB))
	prog='import numpy as np, sys, time
if sys.argv[1] == "off": np.core.multiarray._set_madvise_hugepage(False)
a = np.ones(256 << 17); time.sleep(0.2)'
	out=$TMP/stacks-numpy-$$.folded
	stacks_run t_stacks_numpy "$out" "$py" -c "$prog" off || return
	stacks_expect "$out"
	off=$(numpy_placed "$out")
	[ "$off" -ge $((want * 9 / 10)) ] || stacks_bad="$stacks_bad THP off: $off placed under numpy or libc (want >= 90 % of $want)"
	exact_off=$(stacks_total "$out" exact) peak_off=$stacks_peak
	stacks_run t_stacks_numpy "$out" "$py" -c "$prog" default || return
	bad_off=$stacks_bad
	stacks_expect "$out"
	stacks_bad="$bad_off$stacks_bad"
	on=$(numpy_placed "$out")
	anon=$(grep '^\[not attributed\];\[anon pages no user fault' "$out" | awk '{ s += $NF } END { printf "%d\n", s }')
	thp=$(sed -n 's/.*\[\(.*\)\].*/\1/p' /sys/kernel/mm/transparent_hugepage/enabled 2>/dev/null)
	if grep -q 'THP tails not placed' "$TMP/stacks.err"; then
		thp="$thp, THP tails not placed"
		[ $((on + anon)) -ge $((want * 9 / 10)) ] ||
			stacks_bad="$stacks_bad numpy's default: $on placed + $anon in the anon bucket (want >= 90 % of $want)"
	else
		[ "$on" -ge $((want * 9 / 10)) ] ||
			stacks_bad="$stacks_bad numpy's default: $on placed under numpy or libc (want >= 90 % of $want)"
	fi
	stacks_seen=" THP off: $(mib "$off") under numpy's or libc's frames ($(mib "$exact_off") exact of $(mib "$peak_off"));"
	stacks_seen="$stacks_seen numpy's default, THP $thp: $(mib "$on") under them, $(mib "$anon") in the anon bucket;"
	stacks_verdict t_stacks_numpy "the lines add up to each peak"
	rm -f "$out"
}

# A transparent huge page's fault maps 2 MiB (docs/stacks.md): stacks_known
# thp's alloc_thp_64 (64 MiB at a 2 MiB boundary, MADV_HUGEPAGE: 32 faults)
# gets its 64 MiB where the kernel gave it huge pages (AnonHugePages, which
# stacks_known prints from /proc/self/smaps_rollup) and --stacks places them:
# by fexit on do_huge_pmd_anonymous_page (stk_thp), or where the kernel
# refuses fexit by the anon counter's changes (stk_rss, 6.2+); alloc_64
# (4 KiB pages) its 64 MiB. Where neither can run, the output must say so
# ("THP tails not placed") with one page of each huge page placed and the
# rest in the anon bucket: checked, then skip, since the placing could not run.
t_stacks_thp() {
	stacks_prog t_stacks_thp "$STACKS_KNOWN" || return
	thp=$(sed -n 's/.*\[\(.*\)\].*/\1/p' /sys/kernel/mm/transparent_hugepage/enabled 2>/dev/null)
	case $thp in
	always | madvise) ;;
	*)
		skip "t_stacks_thp: transparent huge pages '${thp:-not in this kernel}' (/sys/kernel/mm/transparent_hugepage/enabled)"
		return
		;;
	esac
	out=$TMP/stacks-thp-$$.folded
	stacks_run t_stacks_thp "$out" "$STACKS_KNOWN" thp || return
	huge=$(sed -n 's/^stacks_known: AnonHugePages: *\([0-9]*\) kB$/\1/p' "$TMP/stacks.err")
	if [ "${huge:-0}" -lt $((64 * 1024)) ]; then
		skip "t_stacks_thp: the kernel gave ${huge:-no} kB of huge pages of the 65536 asked (AnonHugePages of /proc/PID/smaps_rollup)"
		rm -f "$out"
		return
	fi
	anon=$(grep '^\[not attributed\];\[anon pages no user fault' "$out" | awk '{ s += $NF } END { printf "%d\n", s }')
	if grep -q 'THP tails not placed' "$TMP/stacks.err"; then
		# One page of each of the 32 huge pages placed, the rest in the anon bucket.
		stacks_expect "$out" alloc_64:64
		got=$(stacks_bytes "$out" alloc_thp_64)
		[ "$got" -le $((32 * 4096 + STACKS_TOL)) ] || stacks_bad="$stacks_bad alloc_thp_64=$got with THP tails not placed"
		[ "$anon" -ge $((63 * MIB)) ] || stacks_bad="$stacks_bad the anon bucket $anon (want >= 63 MiB)"
		if [ -n "$stacks_bad" ]; then
			fail "t_stacks_thp:$stacks_bad"
		else
			skip "t_stacks_thp: $(grep -m 1 -o 'THP tails not placed: [^;]*' "$TMP/stacks.err") (said: alloc_thp_64 $(mib "$got"), $(mib "$anon") in the anon bucket, the lines add up to the peak)"
		fi
		rm -f "$out"
		return
	fi
	stacks_expect "$out" alloc_64:64 alloc_thp_64:64
	how="fexit on do_huge_pmd_anonymous_page"
	grep -q 'huge pages placed from the anon counter' "$TMP/stacks.err" && how="the anon counter's changes (no fexit)"
	stacks_verdict t_stacks_thp "placed by $how, ${huge} kB AnonHugePages, $(mib "$anon") in the anon bucket, the lines add up to the peak $(mib "$stacks_peak")"
	rm -f "$out"
}

# A binary deleted while it runs (stacks_known unlink: it deletes itself
# and runs on from /proc/self/exe, so its comm is "exe"). As root, its
# frames are named from the mapped file itself (/proc/PID/map_files, kept
# open); without CAP_SYS_ADMIN and CAP_CHECKPOINT_RESTORE (capsh --drop),
# one of which map_files needs, they are offsets in "name (deleted)", and
# the frameless leaf's caller is lost (the word at sp cannot be checked
# against the file). Either way no crash, exit 0, lines adding up to the peak.
t_stacks_deleted() {
	stacks_prog t_stacks_deleted "$STACKS_KNOWN" || return
	bin=$TMP/stacks_known_deleted
	out=$TMP/stacks-deleted-$$.folded
	cp "$STACKS_KNOWN" "$bin" || { fail "t_stacks_deleted: cp"; return; }
	stacks_run t_stacks_deleted "$out" "$bin" unlink || return
	[ ! -e "$bin" ] || { fail "t_stacks_deleted: $bin still there"; return; }
	stacks_expect "$out" alloc_64:64 alloc_128:128 freed_32:0 dontneed_16:0 untouched_4g:0
	detail="named from map_files;"
	if command -v capsh >/dev/null 2>&1; then
		# peakbpf itself without CAP_SYS_ADMIN and CAP_CHECKPOINT_RESTORE (map_files needs one).
		cp "$STACKS_KNOWN" "$bin"
		bad_root=$stacks_bad seen_root=$stacks_seen real=$PEAKBPF
		PEAKBPF=$TMP/peakbpf-no-sys-admin
		cat >"$PEAKBPF" <<EOF
#!/bin/sh
exec capsh --drop=cap_sys_admin,cap_checkpoint_restore -- -c 'exec "\$0" "\$@"' "$real" "\$@"
EOF
		chmod +x "$PEAKBPF"
		stacks_run t_stacks_deleted "$out" "$bin" unlink
		rc=$?
		PEAKBPF=$real
		[ "$rc" = 0 ] || return
		stacks_expect "$out" alloc_64:0 alloc_128:0
		offs=$(awk '$1 ~ /;stacks_known_deleted_\(deleted\)\+0x/ { s += $NF } END { printf "%d\n", s }' "$out")
		[ "$offs" -ge $((192 * MIB)) ] ||
			stacks_bad="$stacks_bad without the capabilities: $offs under stacks_known_deleted_(deleted)+0x.. (want >= 192 MiB)"
		stacks_bad="$bad_root$stacks_bad" stacks_seen="$seen_root"
		detail="$detail without those capabilities $(mib "$offs") under offsets in stacks_known_deleted (deleted);"
	else
		detail="$detail (capsh not installed: the offsets case not run);"
	fi
	stacks_verdict t_stacks_deleted "$detail lines add up to the peak"
	rm -f "$out" "$bin"
}

# A ring that overflows ($PEAKBPF_STACKS_RING: one page, src/lib/kernel/
# stacks.c): not exact, said; no stack lines; the anon pages in the
# lost-events bucket, the file pages in theirs, the lines adding up to the
# peak; the exit status the command's (0): the peak figure is unaffected.
t_stacks_ring_overflow() {
	stacks_prog t_stacks_ring_overflow "$STACKS_KNOWN" || return
	out=$TMP/stacks-ring-$$.folded
	export PEAKBPF_STACKS_RING=4096
	stacks_run t_stacks_ring_overflow "$out" "$STACKS_KNOWN"
	rc=$?
	unset PEAKBPF_STACKS_RING
	[ "$rc" = 0 ] || return
	stacks_expect "$out"
	stacks_seen=""
	lost=$(grep '^\[not attributed\];\[anon pages while events were lost' "$out" | awk '{ print $NF }')
	placed=$(stacks_total "$out" exact)
	said=$(grep -o 'not exact: [0-9]* events lost' "$TMP/stacks.err")
	[ "${lost:-0}" -ge $((192 * MIB)) ] || stacks_bad="$stacks_bad lost bucket ${lost:-none} (want >= 192 MiB)"
	[ "$placed" = 0 ] || stacks_bad="$stacks_bad $placed bytes in stack lines"
	[ -n "$said" ] || stacks_bad="$stacks_bad the summary does not say not exact: $(grep 'stacks at' "$TMP/stacks.err")"
	stacks_verdict t_stacks_ring_overflow "exit 0, $said, $(mib "${lost:-0}") in the lost bucket, lines add up to the peak $(mib "$stacks_peak")"
	rm -f "$out"
}

# -p: --stacks attached to a running stacks_known ("attach"), which maps
# alloc_64's 64 MiB, waits until peakbpf's fault program is loaded (and
# a moment for the attach), then maps alloc_128's 128 MiB. The 128 MiB are
# placed under alloc_128; alloc_64's pages, resident before the attach,
# are in the anon bucket (no fault of theirs was seen), and the summary
# says so; the lines add up to the peak.
t_stacks_attach() {
	stacks_prog t_stacks_attach "$STACKS_KNOWN" || return
	go=$TMP/stacks-attach-go.$$
	out=$TMP/stacks-attach-$$.folded
	rm -f "$go"
	"$STACKS_KNOWN" attach "$go" 2>"$TMP/stacks-attach.prog" &
	prog=$!
	i=0
	until grep -q ready "$TMP/stacks-attach.prog" 2>/dev/null || [ "$i" -ge 300 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	(
		i=0
		until bpftool prog show 2>/dev/null | grep -q stk_fault || [ "$i" -ge "$(q 100 600)" ]; do
			sleep 0.1
			i=$((i + 1))
		done
		sleep "$(q 0.5 3)"
		touch "$go"
	) &
	trigger=$!
	stacks_run t_stacks_attach "$out" -p "$prog"
	rc=$?
	touch "$go"
	# A refused run (before 6.1) leaves the trigger waiting for stk_fault.
	kill "$trigger" 2>/dev/null
	wait "$trigger" 2>/dev/null
	wait "$prog"
	[ "$rc" = 0 ] || { rm -f "$go"; return; }
	stacks_expect "$out" alloc_128:128 alloc_64:0
	anon=$(awk '/^\[not attributed\];\[anon pages no user fault/ { s += $NF } END { printf "%d\n", s }' "$out")
	[ "$anon" -ge $((64 * MIB)) ] || stacks_bad="$stacks_bad the anon bucket holds $anon (want >= 64 MiB: alloc_64's)"
	grep -q 'attached to running processes: the pages their 1 address space held before' "$TMP/stacks.err" ||
		stacks_bad="$stacks_bad the summary does not say the attached process's pages are in the buckets: $(sed -n '/stacks at the peak/,$p' "$TMP/stacks.err" | head -n 8 | tr '\n' ' ')"
	stacks_verdict t_stacks_attach "anon bucket $(mib "$anon") (alloc_64's, resident before the attach); lines add up to the peak"
	rm -f "$go" "$out"
}

# Windows (-i): each window's stacks at its own peak, under the window's
# frame (folded) or as its own profile (speedscope JSON). stacks_known
# "windows" maps alloc_128's 128 MiB, unmaps them, maps alloc_64's 64 MiB
# and holds until a window has closed (SIGUSR1 here, so that which pages
# each window holds does not hang on timing): window 1, the run's peak,
# alloc_128 128 MiB and alloc_64 0 (its pages gone before the close: a cut
# at the run's end would show alloc_64's), window 2 alloc_64 64 MiB and
# alloc_128 0; each window's lines add up to its own peak.
stacks_windows_run() {
	sw_out=$1 go=$TMP/stacks-windows-go.$$
	rm -f "$go" "$sw_out"
	"$PEAKBPF" --stacks "$sw_out" -i 1h -o "$TMP/stacks.json" -- "$STACKS_KNOWN" windows "$go" 2>"$TMP/stacks.err" &
	pb=$!
	i=0
	until grep -q "phase 1" "$TMP/stacks.err" 2>/dev/null || ! kill -0 "$pb" 2>/dev/null || [ "$i" -ge 300 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	sleep "$(q 0.2 1)"
	kill -USR1 "$pb" 2>/dev/null
	sleep "$(q 0.3 2)"
	touch "$go"
	wait "$pb"
	rc=$?
	rm -f "$go"
	stacks_ran t_stacks_windows "$sw_out" "$rc"
}

t_stacks_windows() {
	stacks_prog t_stacks_windows "$STACKS_KNOWN" || return
	if [ "$(uname -m)" != x86_64 ]; then
		skip "t_stacks_windows: --stacks is x86-64's only in this version"
		return
	fi
	out=$TMP/stacks-windows-$$.folded
	stacks_windows_run "$out" || return
	bad="" seen=""
	for w in 1 2; do
		grep "^\[window $w: " "$out" | sed 's/^[^;]*;//' >"$out.$w"
		sed -n "${w}p" "$TMP/stacks.json" >"$TMP/stacks-w$w.json"
		peak=$(json_num "$TMP/stacks-w$w.json" peak_bytes)
		total=$(stacks_total "$out.$w")
		seen="$seen window $w: alloc_64 $(mib "$(stacks_bytes "$out.$w" alloc_64)"), alloc_128 $(mib "$(stacks_bytes "$out.$w" alloc_128)"), lines $(mib "$total") of the peak $(mib "${peak:-0}");"
		if [ "$(json_raw "$TMP/stacks-w$w.json" exact)" = true ]; then
			[ "$total" = "$peak" ] || bad="$bad window $w's lines add up to $total, its peak is $peak;"
		else
			bound=$(json_num "$TMP/stacks-w$w.json" error_bound_bytes)
			[ -n "$bound" ] && [ "$total" -ge "$peak" ] && [ "$total" -le $((peak + bound)) ] ||
				bad="$bad window $w's lines add up to $total, not in [its peak $peak, + ${bound:-none}];"
		fi
	done
	for want in 1:alloc_128:128 1:alloc_64:0 2:alloc_64:64 2:alloc_128:0; do
		w=${want%%:*} f=${want#*:} f=${f%:*}
		got=$(stacks_bytes "$out.$w" "$f")
		[ "$(abs $((got - ${want##*:} * MIB)))" -le "$STACKS_TOL" ] || bad="$bad window $w: $f $got;"
	done
	grep -q "window 1 of 2, the run's peak" "$TMP/stacks.err" ||
		bad="$bad the summary does not name the run's peak window: $(grep -m 1 'window' "$TMP/stacks.err")"
	[ "$(grep -c '^\[window [12]: ' "$out")" = "$(wc -l <"$out")" ] || bad="$bad a line under no window's frame;"
	# The same as speedscope JSON: a profile a window, the run's peak's (the
	# first) shown first. Its writer is userspace: the VMs (no python3) skip it.
	if ! command -v python3 >/dev/null; then
		if [ -z "$bad" ]; then
			ok "t_stacks_windows:$seen (the speedscope half: no python3 here, run on the host)"
		else
			fail "t_stacks_windows:$bad ($seen)"
		fi
		rm -f "$out" "$out.1" "$out.2" "$TMP/stacks-w1.json" "$TMP/stacks-w2.json"
		return
	fi
	stacks_windows_run "$out.json" || return
	json=$(python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
frames = [f["name"] for f in d["shared"]["frames"]]
out = [str(d["activeProfileIndex"])]
for p in d["profiles"]:
    b = {}
    for s, w in zip(p["samples"], p["weights"]):
        for f in set(frames[i] for i in s):
            b[f] = b.get(f, 0) + w
    out.append("%s:%d:%d:%d" % (p["name"].split(":")[0].split()[-1], sum(p["weights"]), b.get("alloc_64", 0), b.get("alloc_128", 0)))
print(" ".join(out))' "$out.json" 2>&1)
	set -- $json
	[ "$1" = 0 ] && [ "$#" = 3 ] || bad="$bad speedscope: $json;"
	for p in "$2" "$3"; do
		n=${p%%:*} r=${p#*:}
		peak=$(sed -n "${n}p" "$TMP/stacks.json" | grep -o '"peak_bytes":[0-9]*' | head -n 1 | cut -d: -f2)
		sum=${r%%:*} r=${r#*:} a64=${r%%:*} a128=${r#*:}
		[ "$sum" = "$peak" ] || [ "$(json_raw "$TMP/stacks-w$n.json" exact)" != true ] ||
			bad="$bad speedscope window $n: weights $sum, peak $peak;"
		case $n in
		1) want64=0 want128=128 ;;
		*) want64=64 want128=0 ;;
		esac
		[ "$(abs $((a64 - want64 * MIB)))" -le "$STACKS_TOL" ] && [ "$(abs $((a128 - want128 * MIB)))" -le "$STACKS_TOL" ] ||
			bad="$bad speedscope window $n: alloc_64 $a64 alloc_128 $a128;"
	done
	if [ -z "$bad" ]; then
		ok "t_stacks_windows:$seen speedscope: 2 profiles, the first (the run's peak) shown first"
	else
		fail "t_stacks_windows:$bad ($seen)"
	fi
	rm -f "$out" "$out.1" "$out.2" "$out.json" "$TMP/stacks-w1.json" "$TMP/stacks-w2.json"
}
