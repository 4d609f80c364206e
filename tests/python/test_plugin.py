# SPDX-License-Identifier: MIT
"""The pytest plugin through pytester: pass, fail with its message, the
report, the JSON file, the default limit, and an inexact figure."""
import json
import os
import subprocess
import sys

import pytest

from conftest import needs_bpf

TESTS = """
import pytest

@pytest.mark.peak_memory("512 MiB")
def test_small():
    b = b"x" * (64 << 20)

@pytest.mark.peak_memory("64 MiB")
def test_big():
    b = b"x" * (128 << 20)

def test_unmarked():
    b = b"x" * (96 << 20)
"""


def test_plugin_is_registered(pytester):
    r = pytester.runpytest_subprocess("--help")
    r.stdout.fnmatch_lines(["*--peak-memory-limit=SIZE*", "*--peak-memory-report*", "*--peak-memory-json=FILE*"])


def test_pass_and_fail(pytester):
    needs_bpf()
    pytester.makepyfile(TESTS)
    r = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    r.assert_outcomes(passed=2, failed=1)
    r.stdout.re_match_lines([r".*peak growth 128\.\d MiB exceeded the 64\.0 MiB limit \(bpf, exact\); "
                             r"held by: \d+ python\S* 1\d\d\.\d MiB.*"])


def test_report_and_json(pytester):
    needs_bpf()
    pytester.makepyfile(TESTS)
    out = pytester.path / "peak.jsonl"
    r = pytester.runpytest_subprocess("--peak-memory-report", "--peak-memory-json", str(out))
    r.assert_outcomes(passed=2, failed=1)
    r.stdout.fnmatch_lines(["*peak memory (peakbpf)*",
                            "6?.? MiB* (bpf, exact) limit 512.0 MiB  test_report_and_json.py::test_small",
                            "9?.? MiB* (bpf, exact)  test_report_and_json.py::test_unmarked"])
    records = [json.loads(line) for line in out.read_text().splitlines()]
    assert [r["nodeid"].split("::")[1] for r in records] == ["test_small", "test_big", "test_unmarked"]
    big = records[1]
    assert big["outcome"] == "failed" and big["limit_bytes"] == 64 << 20
    assert big["measurement"]["source"] == "bpf" and big["measurement"]["exact"]
    assert big["measurement"]["growth_bytes"] > 128 << 20


def test_default_limit(pytester):
    needs_bpf()
    pytester.makepyfile(TESTS)
    r = pytester.runpytest_subprocess("--peak-memory-limit", "80 MiB")
    # The marks override the default: only the unmarked test is over it.
    r.assert_outcomes(passed=1, failed=2)
    r.stdout.re_match_lines([r".*peak growth 9\d\.\d MiB exceeded the 80\.0 MiB limit \(bpf, exact\).*"])


def test_not_measured_by_default(pytester):
    pytester.makepyfile("def test_x():\n    import peakbpf\n    assert peakbpf._session is None\n")
    pytester.runpytest_subprocess().assert_outcomes(passed=1)


INEXACT = """
import time, pytest

@pytest.mark.peak_memory("64 MiB")
def test_over():
    b = b"x" * (256 << 20)
    time.sleep(0.4)

@pytest.mark.peak_memory("1 GiB")
def test_under():
    b = b"x" * (16 << 20)
    time.sleep(0.3)
"""


def test_inexact_figure_is_never_judged_silently(pytester):
    pytester.makepyfile(INEXACT)
    nocaps = ["setpriv", "--inh-caps=-all", "--ambient-caps=-all", "--bounding-set=-all"]
    r = subprocess.run(nocaps + [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-rw",
                                 str(pytester.path)], capture_output=True, text=True)
    out = r.stdout
    print(out)
    assert "1 failed, 1 passed" in out
    # What it was, and how far off it could be.
    assert "exceeded the 64.0 MiB limit (proc, not exact, error unknown: " in out
    assert "within the 1.0 GiB limit (proc, not exact, error unknown: " in out
    assert "how far off it could be is unknown" in out


UNIQUE = """
import pytest

@pytest.mark.peak_memory("64 MiB", measure="unique")
def test_unique():
    b = b"x" * (8 << 20)
"""


def test_marker_measure_unique(pytester):
    pytester.makepyfile(UNIQUE)
    r = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-rw")
    # Not judged, and a warning says why: never a silent pass on no figure.
    r.assert_outcomes(passed=1, warnings=1)
    r.stdout.fnmatch_lines(["*limit 64.0 MiB not judged: nothing measured (unavailable: unique memory*"])
    pytester.makepyfile(UNIQUE.replace('"unique"', '"pss"'))
    r = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    assert r.ret != 0
    assert "measure='pss'" in r.stderr.str() + r.stdout.str()


def _nocaps_pytest(pytester, *args):
    nocaps = ["setpriv", "--inh-caps=-all", "--ambient-caps=-all", "--bounding-set=-all"]
    r = subprocess.run(nocaps + [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-rf"]
                       + list(args) + [str(pytester.path)], capture_output=True, text=True,
                       env=dict(os.environ, COLUMNS="250"))
    print(r.stdout)
    return r.stdout


def test_strict_fails_a_sampled_figure(pytester):
    # issue 26: a 128 MiB test under a 64 MiB limit passed on a proc figure
    # of 4.0 KiB, with a warning only. Strict mode fails it, and the short
    # summary line says why (Debian's pytest 7.2 showed no reason there).
    pytester.makepyfile(INEXACT)
    records = pytester.path / "records.jsonl"
    out = _nocaps_pytest(pytester, "--peak-memory-strict", "--peak-memory-json", str(records))
    assert "2 failed" in out
    # A cgroup beside the figure is the shared one (the library attaches):
    # marked not comparable in every record, never the figure itself.
    for line in records.read_text().splitlines():
        m = json.loads(line)["measurement"]
        assert not m["source"].startswith("cgroup")
        for o in m["other_sources"]:
            if o["source"].startswith("cgroup"):
                assert o["comparable"] is False and o["not_comparable"]
    assert "FAILED test_strict_fails_a_sampled_figure.py::test_under - Failed: strict: " in out
    assert "only an exact bpf figure passes" in out


def test_strict_from_ini_and_marker(pytester):
    pytester.makepyfile(INEXACT)
    pytester.makeini("[pytest]\npeak_memory_strict = true\n")
    assert "2 failed" in _nocaps_pytest(pytester)
    pytester.makeini("[pytest]\n")
    pytester.makepyfile(INEXACT.replace('"1 GiB")', '"1 GiB", strict=True)'))
    out = _nocaps_pytest(pytester)
    assert "1 failed, 1 passed" not in out and "2 failed" in out
    # strict=False on the marker wins over the command line.
    pytester.makepyfile(INEXACT.replace('"1 GiB")', '"1 GiB", strict=False)'))
    assert "1 failed, 1 passed" in _nocaps_pytest(pytester, "--peak-memory-strict")


def test_failure_reason_in_short_summary(pytester, monkeypatch):
    needs_bpf()
    monkeypatch.setenv("COLUMNS", "250")    # the summary line is cut to the terminal's width
    pytester.makepyfile(TESTS)
    r = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-rf")
    r.stdout.re_match_lines([r"FAILED .*::test_big - Failed: peak growth 128\.\d MiB exceeded the 64\.0 MiB limit.*"])



def test_a_lost_window_is_never_passed():
    import peakbpf
    from peakbpf.pytest_plugin import verdict
    m = peakbpf.Measurement()
    m._started = 0.0
    w = {"source": "bpf", "exact": True, "error_bound_bytes": 0, "peak_bytes": 3 << 20,
         "baseline_bytes": 1 << 20}
    m._fold(w)
    m._fold({"source": "bpf", "exact": False, "peak_bytes": None, "inexact_reason": "helper gone"})
    m._fold(dict(w, peak_bytes=2 << 20))
    m._finish()
    assert m.windows_not_measured == [2] and not m.exact and m.error_bound_bytes is None
    assert m.inexact_reason.startswith("window 2 of 3 not measured (helper gone)")
    failed, msg = verdict(m, 32 << 20)
    assert failed and "cannot be judged: window 2 of 3 not measured" in msg
    assert m.to_dict()["windows_not_measured"] == [2]


def test_from_a_checkout(tmp_path):
    """From a checkout on PYTHONPATH (no entry point: the package is not
    installed) the plugin does not load by itself (issue 36): pytest then
    warns of the unknown peak_memory mark, and the one line docs/python.md
    gives (pytest_plugins in conftest.py) turns the plugin on."""
    needs_bpf()
    top = os.path.join(os.path.dirname(__file__), "..", "..", "python")
    (tmp_path / "test_big.py").write_text(TESTS)
    env = dict(os.environ, PYTHONPATH=os.path.abspath(top), PYTEST_DISABLE_PLUGIN_AUTOLOAD="1")
    run = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_big.py"]
    r = subprocess.run(run, cwd=tmp_path, capture_output=True, text=True, env=env)
    assert r.returncode == 0, r.stdout + r.stderr          # every test passes: no limit applied
    assert "Unknown pytest.mark.peak_memory" in r.stdout, r.stdout
    (tmp_path / "conftest.py").write_text('pytest_plugins = ["peakbpf.pytest_plugin"]\n')
    r = subprocess.run(run, cwd=tmp_path, capture_output=True, text=True, env=env)
    assert r.returncode == 1 and "1 failed, 2 passed" in r.stdout, r.stdout + r.stderr
    assert "exceeded the 64.0 MiB limit" in r.stdout, r.stdout
