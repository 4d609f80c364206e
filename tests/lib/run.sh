#!/bin/sh
# libpeakbpf as a user gets it: `make install` into a DESTDIR, then the
# example built with `pkg-config --cflags --libs libpeakbpf` only, run as
# root on workload shapes, one window each in one session. Also the static
# library, and a named source that cannot be used (no capabilities).
set -u
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
OUTPUT=${OUTPUT:-$top/.output}
WORKLOAD=$OUTPUT/workload
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
PASSED=0 FAILED=0 SKIPPED=0
ok() { PASSED=$((PASSED + 1)); echo "ok   - $*"; }
fail() { FAILED=$((FAILED + 1)); echo "FAIL - $*"; }
skip() { SKIPPED=$((SKIPPED + 1)); echo "skip - $*"; }

dest=$TMP/root prefix=/usr/local
if ! make -C "$top" --no-print-directory -s OUTPUT="$OUTPUT" DESTDIR="$dest" PREFIX=$prefix install >"$TMP/install.log" 2>&1; then
	fail "make install DESTDIR: $(tail -n 3 "$TMP/install.log")"
	echo "$PASSED passed, $FAILED failed, $SKIPPED skipped"
	exit 1
fi
for f in bin/peakbpf lib/libpeakbpf.a lib/libpeakbpf.so.0 lib/libpeakbpf.so include/peakbpf/peakbpf.h \
	lib/pkgconfig/libpeakbpf.pc share/man/man1/peakbpf.1 share/man/man3/libpeakbpf.3; do
	[ -e "$dest$prefix/$f" ] || fail "install: $prefix/$f missing"
done
soname=$(readelf -d "$dest$prefix/lib/libpeakbpf.so" | sed -n 's/.*SONAME.*\[\(.*\)\]/\1/p')
[ "$soname" = libpeakbpf.so.0 ] && ok "install: every file, soname $soname" || fail "soname '$soname'"

# pkg-config, pointed at the DESTDIR tree as a packager would.
export PKG_CONFIG_PATH=$dest$prefix/lib/pkgconfig PKG_CONFIG_SYSROOT_DIR=$dest
flags=$(pkg-config --cflags --libs libpeakbpf) || fail "pkg-config libpeakbpf"
# shellcheck disable=SC2086
if cc -Wall -Wextra -Werror -o "$TMP/example" "$here/example.c" $flags 2>"$TMP/cc.log"; then
	ok "example built with: cc example.c $flags"
else
	fail "example: $(head -n 5 "$TMP/cc.log")"
fi
# shellcheck disable=SC2086
if cc -Wall -Wextra -Werror -o "$TMP/example-static" "$here/example.c" \
	$(pkg-config --cflags libpeakbpf) "$dest$prefix/lib/libpeakbpf.a" $(pkg-config --libs --static libbpf) -pthread \
	2>"$TMP/cc.log"; then
	ok "example linked with the static library"
else
	fail "static example: $(head -n 5 "$TMP/cc.log")"
fi
export LD_LIBRARY_PATH=$dest$prefix/lib
# The API's edges, under ASan/UBSan.
# shellcheck disable=SC2086
if cc -Wall -Wextra -Werror -g -fsanitize=address,undefined -fno-sanitize-recover=all -o "$TMP/api" \
	"$here/api.c" $flags -pthread 2>"$TMP/cc.log" && ASAN_OPTIONS=detect_leaks=1 "$TMP/api" >"$TMP/api.out" 2>&1; then
	ok "$(tail -n 1 "$TMP/api.out") (ASan/UBSan)"
else
	fail "api: $(tail -n 5 "$TMP/api.out" "$TMP/cc.log" 2>/dev/null)"
fi

if [ "$(id -u)" != 0 ] || [ ! -r /sys/kernel/btf/vmlinux ]; then
	skip "shapes: needs root and BTF"
else
	# Window after window in one session: each line is checked by example.
	if "$TMP/example" -S bpf "$WORKLOAD" "-s 64MiB -t 5ms spike" "-s 64MiB -n 4 concurrent" \
		"-s 32MiB -n 4 chain" "-s 64MiB -n 4 threads" "-s 64MiB -n 4 -t 20ms sequential" \
		"-s 64MiB exec" >"$TMP/shapes.out" 2>&1; then
		ok "shapes, 6 windows in one session (bpf, exact, within tolerance)"
	else
		fail "shapes: $(cat "$TMP/shapes.out")"
	fi
	sed 's/^/    /' "$TMP/shapes.out"
	grep -c '(bpf, exact)' "$TMP/shapes.out" | grep -qx 6 || fail "shapes: not every window bpf and exact"
	if "$TMP/example-static" -S bpf -j "$WORKLOAD" "-s 64MiB -t 5ms spike" >"$TMP/json.out" 2>&1 &&
		grep -q '"record":"window","window":2,.*"source":"bpf","exact":true' "$TMP/json.out"; then
		ok "static example: the window's JSON through peakbpf_figure_json"
	else
		fail "static example json: $(cat "$TMP/json.out")"
	fi
	if command -v setpriv >/dev/null; then
		nocaps="setpriv --inh-caps=-all --ambient-caps=-all --bounding-set=-all"
		$nocaps "$TMP/example" -S bpf "$WORKLOAD" "-s 16MiB spike" >"$TMP/nocap.out" 2>&1
		rc=$?
		if [ "$rc" = 2 ] && grep -q 'CAP_BPF and CAP_PERFMON missing' "$TMP/nocap.out"; then
			ok "named bpf source without capabilities: $(cat "$TMP/nocap.out")"
		else
			fail "no capabilities, -S bpf: exit $rc: $(cat "$TMP/nocap.out")"
		fi
		$nocaps "$TMP/example" "$WORKLOAD" "-s 16MiB -t 300ms spike" >"$TMP/fallback.out" 2>&1
		rc=$?
		if [ "$rc" = 0 ] && ! grep -q '(bpf' "$TMP/fallback.out" && grep -q 'not exact' "$TMP/fallback.out"; then
			ok "auto without capabilities: a labelled fallback: $(grep window "$TMP/fallback.out")"
		else
			fail "no capabilities, auto: exit $rc: $(cat "$TMP/fallback.out")"
		fi
	fi
fi
echo "lib: $PASSED passed, $FAILED failed, $SKIPPED skipped"
[ "$FAILED" = 0 ]
