# SPDX-License-Identifier: MIT
"""pytest plugin (entry point "peakbpf"): a peak memory limit per test.

    @pytest.mark.peak_memory("512 MiB")
    def test_load(): ...

fails the test when the peak growth of its process tree (the test process
and every descendant, while the test function runs) passed the limit:
"peak growth 612.0 MiB exceeded the 512.0 MiB limit (bpf, exact); held by:
...". A figure that is not exact is never judged silently: the message and
a warning say what it was and how far off it could be; a limit that could
not be judged at all (nothing measured) is a warning, not a pass in silence.

A figure measured in only some of the test's windows (the others lost, e.g.
the helper went away) is never passed: the test fails and says which.

Strict mode fails a test whose figure is not exact or not from the bpf
source (a sampler can miss a spike entirely), with the reason:
--peak-memory-strict, the ini option peak_memory_strict = true, or
@pytest.mark.peak_memory("512 MiB", strict=True).

Options: --peak-memory-limit SIZE (every test without a marker),
--peak-memory-report (each measured test's peak at the end),
--peak-memory-json FILE (one report per measured test),
--peak-memory-strict. Tests are measured only when a limit, the report or
the JSON file asks for it.
"""
import json
import warnings

import pytest

import peakbpf
from peakbpf import format_bytes, parse_size

_KEY = "_peakbpf_measurement"


class PeakMemoryWarning(pytest.PytestWarning):
    """A limit judged on an inexact figure, or not judged at all."""


def pytest_addoption(parser):
    g = parser.getgroup("peakbpf", "peak memory of each test's process tree (peakbpf)")
    g.addoption("--peak-memory-limit", metavar="SIZE", default=None,
                help="fail every test whose peak growth passes SIZE (e.g. \"512 MiB\"); "
                     "@pytest.mark.peak_memory overrides it")
    g.addoption("--peak-memory-report", action="store_true", default=False,
                help="print each measured test's peak growth at the end")
    g.addoption("--peak-memory-json", metavar="FILE", default=None,
                help="write one JSON report per measured test to FILE")
    g.addoption("--peak-memory-strict", action="store_true", default=None,
                help="fail a test with a limit whose figure is not exact or not from the bpf source")
    parser.addini("peak_memory_strict", type="bool", default=False,
                  help="as --peak-memory-strict")


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "peak_memory(limit, measure=\"rss\", strict=False): fail the test when its process tree's "
                   "peak memory growth passes limit (bytes or \"512 MiB\"), measured by peakbpf; "
                   "measure=\"unique\" asks for each page once (not measured in-process: the "
                   "library has no cgroup of the tree's own); strict=True fails it unless the "
                   "figure is exact and from the bpf source")
    config._peakbpf_results = []
    default = config.getoption("--peak-memory-limit")
    config._peakbpf_default = parse_size(default) if default else None


def _measure(item):
    mark = item.get_closest_marker("peak_memory")
    m = mark.kwargs.get("measure", "rss") if mark is not None else "rss"
    if m not in ("rss", "unique"):
        raise pytest.UsageError("%s: @pytest.mark.peak_memory(measure=%r): use \"rss\" or \"unique\""
                                % (item.nodeid, m))
    return m


def _limit(item):
    mark = item.get_closest_marker("peak_memory")
    if mark is not None:
        if len(mark.args) != 1:
            raise pytest.UsageError("%s: @pytest.mark.peak_memory takes one limit, e.g. "
                                    "@pytest.mark.peak_memory(\"512 MiB\")" % item.nodeid)
        return parse_size(mark.args[0])
    return item.config._peakbpf_default


def _strict(item):
    mark = item.get_closest_marker("peak_memory")
    if mark is not None and "strict" in mark.kwargs:
        return bool(mark.kwargs["strict"])
    opt = item.config.getoption("--peak-memory-strict")
    return bool(opt) if opt is not None else bool(item.config.getini("peak_memory_strict"))


def _wanted(item):
    c = item.config
    return (_limit(item) is not None or c.getoption("--peak-memory-report")
            or c.getoption("--peak-memory-json"))


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item):
    if not _wanted(item):
        yield
        return
    m = peakbpf.measure(measure=_measure(item))
    with m:
        yield
    setattr(item, _KEY, m)


def _held_by(m, n=3):
    if not m.holders:
        return ""
    parts = ["%d %s %s" % (h["pid"], h["comm"], format_bytes(h["bytes"])) for h in m.holders[:n]]
    return "; held by: " + ", ".join(parts)


def verdict(m, limit, strict=False):
    """(failed, message) for a Measurement against limit; message is None
    when it passed on an exact figure. strict: a figure not exact, or not
    from the bpf source, fails."""
    if m.growth_bytes is None:
        msg = ("peak memory limit %s not judged: nothing measured (%s: %s)"
               % (format_bytes(limit), m.source, m.inexact_reason))
        return (True, "strict: " + msg) if strict else (False, msg)
    over = m.growth_bytes > limit
    near = m.error_bound_bytes is None or m.growth_bytes + m.error_bound_bytes > limit
    if over:
        msg = "peak growth %s exceeded the %s limit %s%s" % (
            format_bytes(m.growth_bytes), format_bytes(limit), m.judgement(), _held_by(m))
        return True, msg
    if getattr(m, "windows_not_measured", None):
        # The peak may lie in a window that has no figure.
        return True, ("peak memory limit %s cannot be judged: %s" % (format_bytes(limit), m.inexact_reason))
    if m.exact and m.source == "bpf":
        return False, None
    if strict:
        what = "not exact" if not m.exact else "not from the bpf source"
        return True, ("strict: peak growth %s is %s %s: only an exact bpf figure passes"
                      % (format_bytes(m.growth_bytes), what, m.judgement()))
    if m.exact:
        return False, None
    how = ("it could be %s higher" % format_bytes(m.error_bound_bytes)
           if m.error_bound_bytes is not None else "how far off it could be is unknown")
    return False, ("peak growth %s within the %s limit %s, but the figure is not exact: %s%s"
                   % (format_bytes(m.growth_bytes), format_bytes(limit), m.judgement(), how,
                      " and could pass the limit" if near else ""))


def _failure(item, msg):
    """A failure report whose crash line is msg, so the short summary shows
    it ("FAILED test_x.py::test_y - Failed: ..."): pytest 7.2 leaves the
    crash line of a pytest.fail(pytrace=False) empty, so it is set here."""
    try:
        pytest.fail(msg, pytrace=False)
    except pytest.fail.Exception:
        longrepr = item.repr_failure(pytest.ExceptionInfo.from_current())
    if getattr(longrepr, "reprcrash", False) is None:
        try:
            from _pytest._code.code import ReprFileLocation
            longrepr.reprcrash = ReprFileLocation(str(item.path), (item.location[1] or 0) + 1,
                                                  "Failed: " + msg)
        except (ImportError, AttributeError, TypeError):
            pass    # another pytest: its own summary line
    return longrepr


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    if call.when != "call":
        return
    rep = outcome.get_result()
    m = getattr(item, _KEY, None)
    if m is None:
        return
    limit = _limit(item)
    failed, msg = verdict(m, limit, _strict(item)) if limit is not None else (False, None)
    if failed and rep.passed:
        rep.outcome = "failed"
        rep.longrepr = _failure(item, msg)
    elif msg:
        warnings.warn_explicit(PeakMemoryWarning(msg), category=None,
                               filename=str(item.path), lineno=item.location[1] or 0)
    item.config._peakbpf_results.append({
        "nodeid": item.nodeid, "limit_bytes": limit, "outcome": rep.outcome,
        "verdict": msg, "measurement": m.to_dict()})


def pytest_terminal_summary(terminalreporter, config):
    results = config._peakbpf_results
    if config.getoption("--peak-memory-report") and results:
        tr = terminalreporter
        tr.section("peak memory (peakbpf)")
        for r in results:
            m = r["measurement"]
            limit = " limit %s" % format_bytes(r["limit_bytes"]) if r["limit_bytes"] is not None else ""
            tr.write_line("%-12s %s%s  %s" % (_describe(m), _judgement(m), limit, r["nodeid"]))


def _describe(d):
    return format_bytes(d["growth_bytes"]) if d["growth_bytes"] is not None else "unmeasured"


def _judgement(d):
    if d["exact"]:
        return "(%s, exact)" % d["source"]
    if d["growth_bytes"] is None:
        return "(%s: %s)" % (d["source"], d["inexact_reason"])
    if d["error_bound_bytes"] is not None:
        return "(%s, ± %s)" % (d["source"], format_bytes(d["error_bound_bytes"]))
    return "(%s, not exact, error unknown)" % d["source"]


def pytest_sessionfinish(session):
    path = session.config.getoption("--peak-memory-json")
    if not path:
        return
    with open(path, "w") as f:
        for r in session.config._peakbpf_results:
            f.write(json.dumps(r, sort_keys=True) + "\n")
