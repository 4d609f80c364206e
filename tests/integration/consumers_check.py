#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Read peakbpf's exports as their consumers do, by each consumer's
documented rules; exit 1 with the first violation.

  consumers_check.py hyperfine RESULTS.json [HYPERFINE.json]
      hyperfine's --export-json schema: results[] of command, mean, stddev,
      median, user, system, min, max (seconds), times[], exit_codes[],
      memory_usage_byte[] (hyperfine 1.16+: a run's peak memory in bytes);
      with HYPERFINE.json (hyperfine's own output for the same flags), every
      key hyperfine wrote for a result is in peakbpf's too.
  consumers_check.py bmf FILE   Bencher Metric Format
  consumers_check.py gab FILE   github-action-benchmark customSmallerIsBetter
  consumers_check.py openmetrics FILE   OpenMetrics text (prometheus_client's
      strict parser), and node_exporter's textfile collector's format
Prints what it read, one line per figure, for the test's log.
"""
import json
import math
import sys


def is_num(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def fail(msg):
    print("consumers_check: " + msg, file=sys.stderr)
    sys.exit(1)


def hyperfine(path, theirs=None):
    doc = json.load(open(path))
    if not isinstance(doc.get("results"), list) or not doc["results"]:
        fail("no results[]")
    for r in doc["results"]:
        if not isinstance(r.get("command"), str):
            fail("command is not a string: %r" % r)
        for k in ("mean", "median", "min", "max", "user", "system"):
            if not is_num(r.get(k)):
                fail("%s: %s is not a number: %r" % (r["command"], k, r.get(k)))
        if not (r["stddev"] is None or is_num(r["stddev"])):
            fail("stddev")
        n = len(r["times"])
        if not all(is_num(t) for t in r["times"]) or not r["min"] <= r["mean"] <= r["max"]:
            fail("times")
        if len(r["exit_codes"]) != n or not all(isinstance(c, int) for c in r["exit_codes"]):
            fail("exit_codes")
        mem = r.get("memory_usage_byte")
        if not isinstance(mem, list) or len(mem) != n or not all(isinstance(m, int) and m > 0 for m in mem):
            fail("memory_usage_byte: %r" % (mem,))
        if mem != r["peak_bytes"]["values"]:
            fail("memory_usage_byte %r is not the exact peaks %r" % (mem, r["peak_bytes"]["values"]))
        print("hyperfine: %s: mean %.4f s, memory_usage_byte %s" % (r["command"], r["mean"], mem))
    if theirs:
        ref = json.load(open(theirs))["results"]
        if [r["command"] for r in ref] != [r["command"] for r in doc["results"]]:
            fail("commands differ from hyperfine's: %r" % [r["command"] for r in ref])
        for mine, its in zip(doc["results"], ref):
            missing = set(its) - set(mine)
            if missing:
                fail("keys hyperfine writes that peakbpf does not: %s" % sorted(missing))
            if mine["exit_codes"] != its["exit_codes"]:
                fail("exit codes %r, hyperfine's %r" % (mine["exit_codes"], its["exit_codes"]))
        print("hyperfine: every key of hyperfine's own results is there")


def bmf(path):
    doc = json.load(open(path))
    if not isinstance(doc, dict) or not doc:
        fail("BMF is a non-empty object of benchmarks")
    for bench, measures in doc.items():
        if not bench or not isinstance(measures, dict) or not measures:
            fail("benchmark %r: an object of measures" % bench)
        for slug, m in measures.items():
            if not slug or not isinstance(m, dict) or not is_num(m.get("value")):
                fail("%s/%s: value is a number" % (bench, slug))
            for k in ("lower_value", "upper_value"):
                if k in m and not is_num(m[k]):
                    fail("%s/%s: %s" % (bench, slug, k))
            if not m.get("lower_value", m["value"]) <= m["value"] <= m.get("upper_value", m["value"]):
                fail("%s/%s: lower <= value <= upper" % (bench, slug))
            if set(m) - {"value", "lower_value", "upper_value"}:
                fail("%s/%s: unknown keys %s" % (bench, slug, set(m)))
            print("bmf: %s %s %s" % (bench, slug, m["value"]))


def gab(path):
    doc = json.load(open(path))
    if not isinstance(doc, list) or not doc:
        fail("customSmallerIsBetter is a non-empty array")
    names = set()
    for e in doc:
        if not isinstance(e.get("name"), str) or not isinstance(e.get("unit"), str) or not is_num(e.get("value")):
            fail("entry needs name, unit (strings) and value (a number): %r" % e)
        for k in ("range", "extra"):
            if k in e and not isinstance(e[k], str):
                fail("%s is a string: %r" % (k, e))
        if e["name"] in names:
            fail("name twice: %s" % e["name"])
        names.add(e["name"])
        print("gab: %s = %s %s" % (e["name"], e["value"], e["unit"]))


def openmetrics(path):
    from prometheus_client.openmetrics.parser import text_string_to_metric_families as om
    from prometheus_client.parser import text_string_to_metric_families as prom
    text = open(path).read()
    fams = list(om(text))
    if not fams:
        fail("no metric families")
    for f in fams:
        if f.type != "gauge" or not f.samples:
            fail("%s: a gauge with samples" % f.name)
        for s in f.samples:
            print("openmetrics: %s%s %s" % (s.name, dict(s.labels), s.value))
    # node_exporter's textfile collector reads the Prometheus text format.
    if sorted(f.name for f in prom(text)) != sorted(f.name for f in fams):
        fail("the Prometheus text parser reads other families")


if __name__ == "__main__":
    kind, args = sys.argv[1], sys.argv[2:]
    {"hyperfine": hyperfine, "bmf": bmf, "gab": gab, "openmetrics": openmetrics}[kind](*args)
