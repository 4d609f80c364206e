#!/bin/sh
# The Python package as users get it, and its tests:
#  1. pip install --no-build-isolation ./python into a venv made from
#     Debian's python3 (--system-site-packages: Debian's pytest), then
#     pytest tests/python in it, against the build tree's libpeakbpf
#     ($PEAKBPF_LIBRARY);
#  2. make install into a temporary PREFIX, then Debian's python3 itself
#     imports peakbpf from there, finds the installed libpeakbpf with no
#     environment, and pytest autoloads the plugin (entry point peakbpf);
#  3. a plain pip install ./python with no network (the package's own
#     stdlib-only build backend: nothing for build isolation to fetch);
#  4. make install (DESTDIR, PYTHON a venv's) names every file it writes,
#     puts the package where that python imports from, and make uninstall
#     removes them all;
#  5. a fresh clone: make python-install (README's one command) for a venv
#     of Debian's python3, then import peakbpf and measure a block.
# Needs python3-pytest and python3-venv (tools/install-deps.sh).
set -u
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
OUTPUT=${OUTPUT:-$top/.output}
PYTHON=${PYTHON:-/usr/bin/python3}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
PASSED=0 FAILED=0
ok() { PASSED=$((PASSED + 1)); echo "ok   - $*"; }
fail() { FAILED=$((FAILED + 1)); echo "FAIL - $*"; }

"$PYTHON" -m venv --system-site-packages "$TMP/venv" || { fail "venv"; exit 1; }
# From a copy, so that nothing is written into the source tree.
cp -r "$top/python" "$TMP/src"
if "$TMP/venv/bin/python" -m pip install -q --no-index --no-build-isolation "$TMP/src" \
	>"$TMP/pip.log" 2>&1; then
	ok "pip install --no-build-isolation ./python into a venv"
else
	fail "pip install: $(tail -n 5 "$TMP/pip.log")"
fi
cd "$TMP" || exit 1     # not the source tree: the installed package is tested
PEAKBPF_LIBRARY=$OUTPUT/libpeakbpf.so.0 WORKLOAD=$OUTPUT/workload PEAKBPF_COST_FILE=$TMP/cost \
	"$TMP/venv/bin/python" -m pytest -p no:cacheprovider -q -rs -s "$here" >"$TMP/pytest.log" 2>&1
rc=$?
grep -E 'growth|per-block|no capabilities|held by|GIL' "$TMP/pytest.log" | sed 's/^/    /'
summary=$(tail -n 1 "$TMP/pytest.log")
if [ "$rc" = 0 ]; then ok "pytest tests/python: $summary"; else fail "pytest: $(tail -n 40 "$TMP/pytest.log")"; fi
[ -f "$TMP/cost" ] && echo "    per-block cost of measure(): $(cat "$TMP/cost")"

# 2. Debian's python3 after make install, nothing in the environment.
prefix=$TMP/prefix
if make -C "$top" --no-print-directory -s OUTPUT="$OUTPUT" PREFIX="$prefix" install >"$TMP/install.log" 2>&1; then
	site=$(ls -d "$prefix"/lib/python3*/dist-packages)
	if env -u PEAKBPF_LIBRARY PYTHONPATH="$site" "$PYTHON" -c '
import peakbpf, importlib.metadata as md
with peakbpf.measure() as m:
    b = b"x" * (32 << 20); del b
eps = [e.value for e in md.entry_points(group="pytest11") if e.name == "peakbpf"]
assert eps == ["peakbpf.pytest_plugin"], eps
assert m.growth_bytes is not None and m.source != "unavailable", m.describe()
print(m.describe())' >"$TMP/installed.out" 2>&1; then
		ok "Debian's python3 after make install: $(cat "$TMP/installed.out")"
	else
		fail "installed package: $(cat "$TMP/installed.out")"
	fi
	printf 'import pytest\n@pytest.mark.peak_memory("8 MiB")\ndef test_x():\n    b = b"x" * (64 << 20)\n' >"$TMP/test_x.py"
	env -u PEAKBPF_LIBRARY PYTHONPATH="$site" "$PYTHON" -m pytest -p no:cacheprovider -q "$TMP/test_x.py" \
		>"$TMP/plugin.out" 2>&1
	if grep -q 'exceeded the 8.0 MiB limit' "$TMP/plugin.out"; then
		ok "Debian's pytest autoloads the installed plugin: $(grep -o 'peak growth.*limit[^;]*' "$TMP/plugin.out" | head -n 1)"
	else
		fail "installed plugin: $(tail -n 20 "$TMP/plugin.out")"
	fi
else
	fail "make install PREFIX=$prefix: $(tail -n 5 "$TMP/install.log")"
fi
# 3. Offline: a plain pip install (build isolation on) with no network at
# all: the package's own backend needs nothing from an index.
"$PYTHON" -m venv "$TMP/venv2" || fail "venv2"
cp -r "$top/python" "$TMP/src2"
net=""
[ "$(id -u)" = 0 ] && command -v unshare >/dev/null 2>&1 && unshare -n true 2>/dev/null && net="unshare -n"
idx=--no-index          # without unshare: no index, at least
[ -n "$net" ] && idx=""
# shellcheck disable=SC2086
if $net "$TMP/venv2/bin/python" -m pip install -q $idx "$TMP/src2" \
	>"$TMP/pip2.log" 2>&1 && "$TMP/venv2/bin/python" -c 'import peakbpf, importlib.metadata as md; assert [e.value for e in md.entry_points(group="pytest11") if e.name == "peakbpf"] == ["peakbpf.pytest_plugin"]'; then
	ok "plain pip install ./python, ${net:+with no network (unshare -n)}${idx}: build isolation needs nothing"
else
	fail "plain pip install: $(tail -n 5 "$TMP/pip2.log")"
fi

# 4. make install lists what it writes and make uninstall removes exactly
# that; with PYTHON a venv's interpreter, the package goes where it imports.
dest=$TMP/dest
if make -C "$top" --no-print-directory -s OUTPUT="$OUTPUT" DESTDIR="$dest" PYTHON="$TMP/venv2/bin/python" \
	install >"$TMP/inst.log" 2>&1; then
	listed=$(grep -c '^  INSTALL  ' "$TMP/inst.log")
	missing=$(sed -n 's/^  INSTALL  \([^ ]*\).*/\1/p' "$TMP/inst.log" | while read -r f; do
		[ -e "$f" ] || [ -L "$f" ] || echo "$f"; done)
	unlisted=$(find "$dest" -type f -o -type l | while read -r f; do
		grep -q "INSTALL  $f\|INSTALL  ${f%/peakbpf/*}/peakbpf \|INSTALL  ${f%/peakbpf/*}/peakbpf (" "$TMP/inst.log" ||
		case $f in */peakbpf/*|*/peakbpf-*.dist-info/*) ;; *) echo "$f" ;; esac; done)
	venv_site=$("$TMP/venv2/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
	make -C "$top" --no-print-directory -s OUTPUT="$OUTPUT" DESTDIR="$dest" PYTHON="$TMP/venv2/bin/python" \
		uninstall >"$TMP/uninst.log" 2>&1
	left=$(find "$dest" -type f -o -type l)
	if [ -z "$missing" ] && [ -z "$unlisted" ] && [ -z "$left" ] && [ -d "$dest$venv_site" ] &&
		grep -q "INSTALL  $dest$venv_site/peakbpf " "$TMP/inst.log"; then
		ok "make install listed its $listed files (the Python package in the venv's $venv_site); make uninstall left none"
	else
		fail "install/uninstall: missing '$missing', unlisted '$unlisted', left '$left': $(cat "$TMP/inst.log")"
	fi
else
	fail "make install DESTDIR: $(tail -n 5 "$TMP/inst.log")"
fi
# 5. README's one command from a fresh clone (issue 36: neither README
# command installed the package): make python-install, for a venv of
# Debian's python3 and a PREFIX of its own, builds libpeakbpf and installs
# it with the package; that python then imports peakbpf with nothing set
# and measures a block. The clone is of this checkout's HEAD.
if command -v git >/dev/null 2>&1 && git -C "$top" rev-parse HEAD >/dev/null 2>&1; then
	clone=$TMP/clone
	"$PYTHON" -m venv "$TMP/venv3" || fail "venv3"
	if git clone -q "$top" "$clone" >"$TMP/clone.log" 2>&1 &&
		make -C "$clone" --no-print-directory -s -j2 PREFIX="$TMP/prefix3" PYTHON="$TMP/venv3/bin/python" 			python-install >"$TMP/pyinst.log" 2>&1 &&
		out=$(cd "$TMP" && env -u PEAKBPF_LIBRARY "$TMP/venv3/bin/python" -c 'import peakbpf
with peakbpf.measure() as m:
    b = b"x" * (32 << 20)
print(m.source, m.exact, m.peak_bytes)' 2>&1) && case $out in "bpf True "* | proc*) true ;; *) false ;; esac; then
		ok "a fresh clone: make python-install, then import peakbpf and a block measured: $out"
	else
		fail "fresh clone, make python-install: ${out:-} $(tail -n 5 "$TMP/clone.log" "$TMP/pyinst.log")"
	fi
fi
echo "python: $PASSED passed, $FAILED failed"
[ "$FAILED" = 0 ]
