#!/usr/bin/env python3
"""make check-layers: every project header an object includes (its -MMD
dependency list) belongs to its own folder or to a layer its folder may use.

The rules are the table under "## Layers" in docs/design.md: one row a
folder, whose third column names, in backquotes, the folders (or single
headers) it may use. "May use" is transitive: a layer may include what the
layers it uses include. Headers outside src/, bpf/ and include/ are
generated ones (the skeleton) and are named by their file name. A header
named *_internal.h is its folder's alone.

usage: check-layers.py DESIGN.md OBJECT.d...
"""
import os
import re
import sys


def read_rules(path):
    rules = {}
    in_layers = False
    for line in open(path, encoding="utf-8"):
        if line.startswith("## "):
            in_layers = line.strip() == "## Layers"
            continue
        if not in_layers or not line.startswith("| `"):
            continue
        cols = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cols) < 3:
            continue
        folder = re.findall(r"`([^`]+)`", cols[0])[0]
        rules[folder] = re.findall(r"`([^`]+)`", cols[2])
    return rules


def closure(rules, folder):
    seen, todo = set(), list(rules.get(folder, []))
    while todo:
        u = todo.pop()
        if u in seen:
            continue
        seen.add(u)
        todo.extend(rules.get(u, []))
    return seen


def deps(dfile):
    """The source and the headers of the first rule of a .d file."""
    lines = open(dfile, encoding="utf-8").read().replace("\\\n", " ").splitlines()
    words = lines[0].split(":", 1)[1].split()
    return words[0], [os.path.normpath(w) for w in words[1:]]


def allowed(header, own, uses):
    d = os.path.dirname(header) + "/"
    if d == own:
        return True
    if header.endswith("_internal.h"):
        return False            # its folder's own, whoever may use the folder
    if header in uses:
        return True
    if not header.startswith(("src/", "bpf/", "include/")):
        return os.path.basename(header) in uses
    return any(d == u or (u in ("bpf/", "include/") and d.startswith(u)) for u in uses)


def main():
    rules = read_rules(sys.argv[1])
    if not rules:
        sys.exit("check-layers: no table under '## Layers' in " + sys.argv[1])
    bad = n = 0
    for dfile in sys.argv[2:]:
        if not os.path.exists(dfile):
            continue
        src, headers = deps(dfile)
        own = os.path.dirname(src) + "/"
        if own not in rules:
            print(f"check-layers: {src}: its folder {own} is not in the table of "
                  f"docs/design.md; add a row saying what it may use", file=sys.stderr)
            bad += 1
            continue
        uses = closure(rules, own)
        n += 1
        for h in headers:
            if not allowed(h, own, uses):
                print(f"check-layers: {src} includes {h}, which {own} may not use "
                      f"(docs/design.md, Layers)", file=sys.stderr)
                bad += 1
    if bad:
        sys.exit(1)
    print(f"  check-layers: ok: {n} sources in {len(rules)} layers")


main()
