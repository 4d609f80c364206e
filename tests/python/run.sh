#!/bin/sh
# The Python package as users get it, and its tests:
#  1. pip install --no-build-isolation ./python into a venv made from
#     Debian's python3 (--system-site-packages: Debian's pytest), then
#     pytest tests/python in it, against the build tree's libpeakbpf
#     ($PEAKBPF_LIBRARY);
#  2. make install into a temporary PREFIX, then Debian's python3 itself
#     imports peakbpf from there, finds the installed libpeakbpf with no
#     environment, and pytest autoloads the plugin (entry point peakbpf).
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
# From a copy: setuptools builds in the source directory.
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
echo "python: $PASSED passed, $FAILED failed"
[ "$FAILED" = 0 ]
