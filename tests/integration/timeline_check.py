#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Checks of peakbpf --timeline's files for tests/integration/test_timeline.sh.

  timeline_check.py json FILE        the trace event format: required keys,
                                     ts monotonic per track; prints the
                                     largest counter max, the peak instant's
                                     bytes and the number of window instants
  timeline_check.py holders-json TRACE RECORD
  timeline_check.py holders-csv CSV RECORD
                                     the record's holders at the peak have
                                     lines labelled "PID COMM" that reach
                                     their own peaks (see holders_json)
  timeline_check.py red PNG          the centroid of the peak marker's red
                                     pixels in a screenshot: "x y count"
  timeline_check.py drag PAGE OUT    OUT: PAGE with a script that drags across
                                     the peak marker (+-30 px: zoom in) and
                                     records script errors
  timeline_check.py zoomed DOM       from the DOM Chromium dumped after the
                                     drag: "band_top marker_cy ticks errors"
"""
import json
import re
import struct
import sys
import zlib


def check_json(path):
    with open(path) as f:
        doc = json.load(f)
    events = doc["traceEvents"]
    assert doc["displayTimeUnit"] in ("ms", "ns")
    facts = doc["otherData"]["peakbpf_timeline"]
    for key in ("bucket_ns", "buckets", "end_s", "peak_bytes", "peak_s"):
        assert key in facts, key
    last = {}
    top = -1
    peak = None
    windows = 0
    for e in events:
        for key in ("name", "ph", "pid", "tid"):
            assert key in e, (key, e)
        if e["ph"] == "M":
            assert "name" in e["args"], e
            continue
        assert isinstance(e["ts"], (int, float)), e
        track = (e["pid"], e["tid"], e["name"] if e["ph"] == "C" else "")
        assert e["ts"] >= last.get(track, -1), ("ts goes back", e)
        last[track] = e["ts"]
        if e["ph"] == "C":
            assert set(e["args"]) == {"max", "min"}, e
            assert e["args"]["min"] <= e["args"]["max"], e
            top = max(top, e["args"]["max"])
        elif e["ph"] == "i":
            assert e["s"] in ("g", "p", "t"), e
            if e["name"] == "peak":
                peak = e["args"]["bytes"]
            else:
                windows += 1
        else:
            raise AssertionError("unexpected ph: %r" % e)
    print(top, peak, windows)


def want_holders(record):
    """The record's holders at the peak, largest own peak first, top 5."""
    with open(record) as f:
        rec = json.loads(f.read().splitlines()[-1])
    return sorted(rec["processes"], key=lambda p: -p["own_peak_bytes"])[:5]


def holders_json(trace, record):
    """Each holder at the record's peak has a line in the trace: a process
    named "holder K: PID COMM" (largest own peak first) whose rss counter
    reaches its own_peak_bytes. Prints "N PID:COMM..." or raises."""
    with open(trace) as f:
        doc = json.load(f)
    names, tops = {}, {}
    for e in doc["traceEvents"]:
        if e["ph"] == "M" and e["name"] == "process_name" and e["pid"] > 1:
            names[e["pid"]] = e["args"]["name"]
        if e["ph"] == "C" and e["pid"] > 1:
            assert e["name"] == "rss", e
            tops[e["pid"]] = max(tops.get(e["pid"], -1), e["args"]["max"])
    facts = doc["otherData"]["peakbpf_timeline"]["holders"]
    want = want_holders(record)
    assert len(facts) == len(names) >= len(want), (facts, names, want)
    labels = []
    for k, p in enumerate(want):
        label = "%d %s" % (p["pid"], p["comm"])
        assert names.get(2 + k) == "holder %d: %s" % (k + 1, label), (k, names, label)
        assert tops[2 + k] == p["own_peak_bytes"], (label, tops[2 + k], p)
        assert facts[k]["own_peak_bytes"] == p["own_peak_bytes"], (facts[k], p)
        labels.append(label.replace(" ", ":"))
    print(len(labels), " ".join(labels))


def holders_csv(path, record):
    """The same in a .csv: a column "max_bytes PID COMM" per holder whose
    largest value is its own peak."""
    with open(path) as f:
        rows = [line.rstrip("\n").split(",") for line in f]
    cols = {}
    for i, name in enumerate(rows[0][6:], 6):
        vals = [int(r[i]) for r in rows[1:] if r[0] == "bucket" and len(r) > i and r[i]]
        cols[name[len("max_bytes "):]] = max(vals)
    want = want_holders(record)
    for p in want:
        label = ("%d %s" % (p["pid"], p["comm"])).replace(",", "_")
        assert cols.get(label) == p["own_peak_bytes"], (label, cols, p)
    print(len(want))


def png_rows(path):
    with open(path, "rb") as f:
        data = f.read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat = 8, b""
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            w, h, depth, ctype = struct.unpack(">IIBB", body[:10])
        elif kind == b"IDAT":
            idat += body
        pos += 12 + n
    assert depth == 8 and ctype in (2, 6), "want 8-bit RGB or RGBA"
    bpp = 3 if ctype == 2 else 4
    raw = zlib.decompress(idat)
    stride = w * bpp
    prev = bytearray(stride)
    rows = []
    for y in range(h):
        ftype = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b = prev[i]
            c = prev[i - bpp] if i >= bpp else 0
            if ftype == 1:
                line[i] = (line[i] + a) & 255
            elif ftype == 2:
                line[i] = (line[i] + b) & 255
            elif ftype == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif ftype == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                pred = a if pa <= pb and pa <= pc else (b if pb <= pc else c)
                line[i] = (line[i] + pred) & 255
        rows.append(line)
        prev = line
    return w, h, bpp, rows


def red_centroid(path, below=None):
    """The red pixels' centre, above row `below` (the legend, which shows
    the marker too, is under the data)."""
    w, h, bpp, rows = png_rows(path)
    sx = sy = n = 0
    for y, line in enumerate(rows[:int(below)] if below else rows):
        for x in range(w):
            r, g, b = line[x * bpp:x * bpp + 3]
            if r > 180 and g < 80 and b < 80:
                sx += x
                sy += y
                n += 1
    if n == 0:
        print("none none 0")
    else:
        print("%.1f %.1f %d" % (sx / n, sy / n, n))


def drag_page(path, out):
    with open(path) as f:
        page = f.read()
    cx = float(re.search(r'<circle id="peak-marker" cx="([\d.]+)"', page).group(1))
    catch = ('<script>window.onerror=function(m,u,l){document.documentElement'
             '.setAttribute("data-err",m+" line "+l);};</script>\n')
    drag = ("<script>(function(){var s=document.getElementById('plot');"
            "function ev(t,x){s.dispatchEvent(new MouseEvent(t,{clientX:x,clientY:100,"
            "bubbles:true}));}ev('mousedown',%.1f);ev('mousemove',%.1f);"
            "ev('mouseup',%.1f);})();</script>" % (cx - 30, cx + 30, cx + 30))
    page = page.replace("<script>\n", catch + "<script>\n", 1)
    page = page.replace("</body>", drag + "</body>")
    with open(out, "w") as f:
        f.write(page)


def zoomed(path):
    with open(path) as f:
        dom = f.read()
    band = re.search(r'<path id="band"[^>]* d="([^"]*)"', dom).group(1)
    top = min(float(m.group(1)) for m in re.finditer(r"M[\d.]+ ([\d.]+)V", band))
    cy = float(re.search(r'<circle id="peak-marker"[^>]* cy="([\d.]+)"', dom).group(1))
    ticks = re.search(r'<g id="xticks"[^>]*>(.*?)</g>', dom).group(1)
    ticks = ",".join(re.findall(r">([^<]+)</text>", ticks)).replace(" ", "")
    err = re.search(r'data-err="([^"]*)"', dom)
    print("%.1f %.1f %s %s" % (top, cy, ticks, "none" if not err else err.group(1).replace(" ", "_")))


# What each variant of a page hides (CSS), for the pixel checks: the
# legend's pixels are where hiding it changes the screenshot, the data's
# where hiding the data does.
HIDE = {
    "full": "",
    "nolegend": "#legend{display:none}",
    "nodata": "#area,#band,#peak-marker,#peak-label,[id^=holder-]{display:none}",
    # The checker's own check: the legend moved over the data must be seen.
    "overlaid": "#legend{transform:translate(0,-250px)}",
    "overlaid-nolegend": "#legend{display:none}",
    "overlaid-nodata": "#legend{transform:translate(0,-250px)}"
                       "#area,#band,#peak-marker,#peak-label,[id^=holder-]{display:none}",
}


def variant(path, kind, out):
    """The page with HIDE[kind] and a script that records, in the DOM, whether
    the page is wider than the window (a horizontal scrollbar)."""
    with open(path) as f:
        page = f.read()
    style = "<style>%s</style>\n" % HIDE[kind]
    probe = ("<script>window.addEventListener('load',function(){var d=document.documentElement;"
             "d.setAttribute('data-hscroll',d.scrollWidth>d.clientWidth?'yes':'no');"
             "d.setAttribute('data-width',d.clientWidth);});</script>")
    page = page.replace("</head>", style + "</head>", 1).replace("</body>", probe + "</body>")
    with open(out, "w") as f:
        f.write(page)


def changed(a, b):
    """The pixels where screenshots a and b differ, as a set of (x, y)."""
    wa, ha, bpp, ra = png_rows(a)
    wb, hb, bppb, rb = png_rows(b)
    assert (wa, ha, bpp) == (wb, hb, bppb), "screenshots of different sizes"
    out = set()
    for y in range(ha):
        if ra[y] == rb[y]:
            continue
        for x in range(wa):
            if ra[y][x * bpp:x * bpp + 3] != rb[y][x * bpp:x * bpp + 3]:
                out.add((x, y))
    return out


def overlap(full, nolegend, nodata):
    """How many legend pixels are also data pixels: "legend N data M both K"."""
    legend = changed(full, nolegend)
    data = changed(full, nodata)
    print("legend %d data %d both %d" % (len(legend), len(data), len(legend & data)))


if __name__ == "__main__":
    if sys.argv[1] == "variant":
        variant(sys.argv[2], sys.argv[3], sys.argv[4])
        sys.exit(0)
    if sys.argv[1] == "overlap":
        overlap(*sys.argv[2:5])
        sys.exit(0)
    if sys.argv[1] == "drag":
        drag_page(sys.argv[2], sys.argv[3])
    else:
        if sys.argv[1] in ("holders-json", "holders-csv"):
            (holders_json if sys.argv[1] == "holders-json" else holders_csv)(sys.argv[2], sys.argv[3])
        else:
            {"json": check_json, "red": red_centroid, "zoomed": zoomed}[sys.argv[1]](*sys.argv[2:])
