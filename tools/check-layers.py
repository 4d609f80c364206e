#!/usr/bin/env python3
"""make check-layers: every project header an object includes (its -MMD
dependency list) belongs to its own folder or to a layer its folder may use.

The rules are the table under "## Layers" in docs/design.md: one row a
folder, whose third column names, in backquotes, the folders (or single
headers) it may use. "May use" is transitive: a layer may include what the
layers it uses include. Headers outside src/, bpf/ and include/ are
generated ones (the skeleton) and are named by their file name. A header
named *_internal.h is its folder's alone.

Within a folder, files call each other one way only: the symbols each
object takes from the folder's other objects (nm) make a graph, which has
no circle (docs/design.md, Layers). --draw prints that graph, folder by
folder, each file with the files it calls.

usage: check-layers.py [--draw] DESIGN.md OBJECT.d...
"""
import collections
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from layers import read_rows  # noqa: E402  one reader of the Layers table


def read_rules(path):
    """folder -> what it may use: the rows layers.py reads for the build."""
    return dict(read_rows(path))


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


def symbols(objs):
    """obj -> (defined, undefined) global symbols, from one run of nm."""
    out = subprocess.run(["nm", "-P", "-A"] + objs, capture_output=True, text=True, check=True).stdout
    syms = {o: (set(), set()) for o in objs}
    for line in out.splitlines():
        f = line.split()
        if len(f) < 3:
            continue
        obj = f[0].rstrip(":")
        if obj not in syms:
            continue
        if f[2] == "U":
            syms[obj][1].add(f[1])
        elif f[2] in "TDBRVW":
            syms[obj][0].add(f[1])
    return syms


def calls(objs):
    """folder -> {file: set of files of the folder whose symbols it takes}."""
    syms = symbols([o for o in objs if os.path.exists(o)])
    by_folder = collections.defaultdict(list)
    for o in syms:
        by_folder[os.path.dirname(o)].append(o)
    graph = {}
    for folder, members in by_folder.items():
        graph[folder] = {a: {b for b in members if b != a and syms[a][1] & syms[b][0]}
                         for a in members}
    return graph


def circles(edges):
    """The strongly connected parts of more than one file (Tarjan)."""
    index, low, stack, on, out = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(edges[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            part = []
            while True:
                w = stack.pop()
                on.discard(w)
                part.append(w)
                if w == v:
                    break
            if len(part) > 1:
                out.append(sorted(part))
    for v in sorted(edges):
        if v not in index:
            visit(v)
    return out


def name(obj):
    return os.path.basename(obj)[:-2] + ".c"


def main():
    draw = len(sys.argv) > 1 and sys.argv[1] == "--draw"
    if draw:
        del sys.argv[1]
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
    graph = calls([d[:-2] + ".o" for d in sys.argv[2:]])
    for folder in sorted(graph):
        edges = graph[folder]
        if draw:
            print(folder.split("/", 1)[1] + "/")
            for a in sorted(edges, key=name):
                print(f"  {name(a):22} -> {', '.join(sorted(map(name, edges[a]))) or '-'}")
        for part in circles(edges):
            print(f"check-layers: {folder.split('/', 1)[1]}/: {', '.join(map(name, part))} call each "
                  f"other in a circle: cut them by concept, each calling down (docs/design.md, Layers)",
                  file=sys.stderr)
            bad += 1
    if bad:
        sys.exit(1)
    print(f"  check-layers: ok: {n} sources in {len(rules)} layers, no circle of calls in a folder")


main()
