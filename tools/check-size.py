#!/usr/bin/env python3
"""make check-size: no file over 600 lines and no function over 80 in the
given C sources (src/ and bpf/): past that, a file or a function holds more
than one concern, and is split by concern (docs/design.md, Layers).

A function is counted from the first line of its signature to the "}" in
column 0 that closes its body (whose "{" is in column 0, the kernel style
this tree uses).

A file that is one concept and honestly needs more is a named exception:
a row of the table headed "file over 600 lines" in docs/design.md (Layers),
its path in backquotes and the reason beside it. A row whose file is no
longer over the limit fails too, so that the table stays true.

usage: check-size.py [--exceptions DESIGN.md] FILE...
"""
import re
import sys

MAX_FILE, MAX_FUNC = 600, 80


def functions(lines):
    """(name, first line, length) of each function body in the file."""
    start = None
    for i, line in enumerate(lines):
        if line.startswith("{") and start is None:
            start = i
            # the signature counts too: back to the line that begins it
            while start > 0 and lines[start - 1].strip() and \
                    not lines[start - 1].rstrip().endswith((";", "*/", "}")) and \
                    not lines[start - 1].startswith("#"):
                start -= 1
            head = " ".join(lines[max(0, i - 3):i])
            m = re.findall(r"(\w+)\s*\(", head)
            name = m[0] if m else "?"
            # a function's name is the last identifier before its "(" list
            for cand in m:
                if cand not in ("if", "while", "for", "switch", "sizeof", "SEC", "BPF_PROG"):
                    name = cand
                    break
        elif line.startswith("}") and start is not None:
            if not re.match(r"^}\s*\w*\s*;", line) or line.strip() == "}":
                yield name, start + 1, i - start + 1
            start = None


def exceptions(design):
    """path -> reason, from the table headed "file over 600 lines"."""
    rows, in_table = {}, False
    for line in open(design, encoding="utf-8"):
        if line.startswith("| file over 600 lines"):
            in_table = True
            continue
        if in_table and not line.startswith("|"):
            break
        m = re.match(r"^\|\s*`([^`]+)`\s*\|\s*(.*?)\s*\|\s*$", line) if in_table else None
        if m and m.group(2):
            rows[m.group(1)] = m.group(2)
    return rows


def main():
    bad = 0
    args = sys.argv[1:]
    allowed = {}
    if args[:1] == ["--exceptions"]:
        allowed = exceptions(args[1])
        args = args[2:]
    for path in args:
        lines = open(path, encoding="utf-8").read().splitlines()
        if path in allowed:
            if len(lines) <= MAX_FILE:
                print(f"check-size: {path}: {len(lines)} lines, listed over {MAX_FILE} in "
                      f"docs/design.md: remove its row", file=sys.stderr)
                bad += 1
        elif len(lines) > MAX_FILE:
            print(f"check-size: {path}: {len(lines)} lines (at most {MAX_FILE}): split it by concern",
                  file=sys.stderr)
            bad += 1
        if not path.endswith(".c"):
            continue
        for name, first, n in functions(lines):
            if n > MAX_FUNC:
                print(f"check-size: {path}:{first}: {name} is {n} lines (at most {MAX_FUNC})",
                      file=sys.stderr)
                bad += 1
    if bad:
        sys.exit(1)
    listed = f" but {len(allowed)} named in docs/design.md" if allowed else ""
    print(f"  check-size: ok: {len(args)} files, none over {MAX_FILE} lines{listed}, "
          f"no function over {MAX_FUNC}")


main()
