#!/usr/bin/env python3
"""Checks of --stacks' files for tests/integration/test_stacks_formats.sh
(docs/stacks.md, "Speedscope JSON" and "Drawn by speedscope").

  speedscope FILE SCHEMA|- PEAK FUNC:MIB...
      FILE is speedscope JSON valid against speedscope's own SCHEMA (its
      dist/release/file-format-schema.json; - : not checked), one sampled
      profile in bytes whose weights add up to PEAK, with the
      [not attributed] buckets among its samples, and each FUNC with MIB
      MiB within 64 KiB (the samples with FUNC as a frame). Prints a line.
  weights FILE FUNC...
      the bytes of the samples (JSON) or lines (folded) with FUNC as a
      frame, and the total: "FUNC=BYTES ... total=BYTES".
  bars PNG BIG SMALL TOTAL
      the flame chart in speedscope's screenshot: its rows, found down the
      left edge, and in the first row split in two wide bars, their widths;
      the left one (the heavier: the file lists it first, and the time-order
      view keeps that order) must be BIG/TOTAL of the width and the right
      one SMALL/TOTAL. Prints "row Y: LEFT px RIGHT px ratio R".
"""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from timeline_check import png_rows  # noqa: E402  the one PNG reader of the tests

MIB = 1 << 20
TOL = 64 * 1024         # as test_stacks.sh: stack pages the calls may fault
# A bar's edges: speedscope leaves a 2 px white gap after each bar and
# rounds each edge to a pixel, so a bar is within 3 px of its true width.
EDGE_PX = 3


def speedscope_samples(path):
    doc = json.load(open(path, encoding="utf-8"))
    names = [f["name"] for f in doc["shared"]["frames"]]
    prof = doc["profiles"][0]
    return doc, prof, [([names[i] for i in s], w) for s, w in zip(prof["samples"], prof["weights"])]


def folded_samples(path):
    out = []
    for line in open(path, encoding="utf-8"):
        stack, _, n = line.rstrip("\n").rpartition(" ")
        out.append((stack.split(";"), int(n)))
    return out


def samples_of(path):
    if path.endswith(".json"):
        return speedscope_samples(path)[2]
    return folded_samples(path)


def bytes_of(samples, func):
    return sum(w for stack, w in samples if func in stack)


def check_speedscope(path, schema, peak, wants):
    doc, prof, samples = speedscope_samples(path)
    if schema != "-":
        import jsonschema
        jsonschema.validate(doc, json.load(open(schema, encoding="utf-8")))
    bad = []
    if len(doc["profiles"]) != 1 or prof["type"] != "sampled" or prof["unit"] != "bytes":
        bad.append("want one sampled profile in bytes")
    total = sum(w for _, w in samples)
    if total != peak or prof["endValue"] != peak:
        bad.append("weights add up to %d (endValue %d), the peak is %d" % (total, prof["endValue"], peak))
    buckets = [s[1] for s, _ in samples if s[0] == "[not attributed]"]
    if not buckets:
        bad.append("no [not attributed] samples")
    seen = []
    for want in wants:
        func, mib = want.split(":")
        got = bytes_of(samples, func)
        seen.append("%s %.2f MiB" % (func, got / MIB))
        if abs(got - int(mib) * MIB) > TOL:
            bad.append("%s=%d (want %d MiB)" % (func, got, int(mib)))
    if bad:
        print("; ".join(bad))
        sys.exit(1)
    print("valid%s; %s; %d samples, %d frames, %d buckets; weights = the peak %d" % (
        "" if schema != "-" else " (schema not checked)", ", ".join(seen), len(samples),
        len(doc["shared"]["frames"]), len(buckets), peak))


def row_tops(rows, bpp, x, y0):
    """The first scanline of each bar down column x, from y0: where a
    coloured pixel follows a white one."""
    tops, prev_white = [], True
    for y in range(y0, len(rows)):
        p = tuple(rows[y][x * bpp:x * bpp + 3])
        white = min(p) >= 250
        if prev_white and not white:
            tops.append(y)
        prev_white = white
    return tops


def bars_of(line, bpp, w):
    """(start, width) of the bars on one scanline: runs of pixels that are
    not white (the grid's grey lines, drawn over the bars, are part of
    them)."""
    bars, start = [], None
    for x in range(w + 1):
        white = x == w or min(line[x * bpp:x * bpp + 3]) >= 250
        if not white and start is None:
            start = x
        elif white and start is not None:
            bars.append((start, x - start))
            start = None
    return bars


def check_bars(png, big, small, total):
    w, h, bpp, rows = png_rows(png)
    # The flame chart starts under the minimap and the second time axis
    # (y 0-140 at this window size): its rows begin at the first bar
    # below y 135 in the left edge's column 50.
    tops = row_tops(rows, bpp, 50, 135)
    for y in tops:
        wide = [b for b in bars_of(rows[y + 1], bpp, w) if b[1] > w // 10]
        if len(wide) == 2:
            break
    else:
        print("no row of two wide bars in %s (rows at %s)" % (png, tops[:8]))
        sys.exit(1)
    (x0, left), (x1, right) = wide
    want_l, want_r = w * big / total, w * small / total
    ratio = left / right
    line = "row %d: %d px at %d, %d px at %d (want %.1f and %.1f), ratio %.3f" % (
        y, left, x0, right, x1, want_l, want_r, ratio)
    # The ratio's own tolerance: EDGE_PX on each bar, on the smaller's width.
    ratio_tol = (big / small) * (EDGE_PX / want_r + EDGE_PX / want_l)
    if x0 > x1 or abs(left - want_l) > EDGE_PX or abs(right - want_r) > EDGE_PX or \
            abs(ratio - big / small) > ratio_tol:
        print("FAIL " + line + " (tolerance %d px a bar, %.3f on the ratio)" % (EDGE_PX, ratio_tol))
        sys.exit(1)
    print(line + " (tolerance %d px a bar, %.3f on the ratio)" % (EDGE_PX, ratio_tol))


def main(argv):
    if argv[1] == "speedscope":
        check_speedscope(argv[2], argv[3], int(argv[4]), argv[5:])
    elif argv[1] == "weights":
        s = samples_of(argv[2])
        print(" ".join("%s=%d" % (f, bytes_of(s, f)) for f in argv[3:]) +
              " total=%d" % sum(w for _, w in s))
    elif argv[1] == "bars":
        check_bars(argv[2], int(argv[3]), int(argv[4]), int(argv[5]))
    else:
        sys.exit("usage: see the docstring")


if __name__ == "__main__":
    main(sys.argv)
