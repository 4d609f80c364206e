#!/usr/bin/env python3
"""Check a run record's OOM victims against the kernel's own OOM report.

Usage: oom_check.py RECORD.json DMESG.txt LIMIT_BYTES MIN_VICTIMS

For every victim the record lists, the kernel log must have its "Killed
process PID (comm) ... anon-rss:AkB, file-rss:FkB, shmem-rss:SkB" line with
the same three figures, and its row in the per-task table before that line
(rss_anon, rss_file, rss_shmem in pages) must agree too. At the first kill,
the tree's processes in that table (the record's PIDs: its victims and its
holders) sum to no more than the record's peak, and the peak is no more
than the limit plus the file pages the table shows (a binary's page cache
may be charged to another cgroup). Prints what it compared."""
import json
import re
import sys

KILL = re.compile(r"Killed process (\d+) \((.*?)\) total-vm:\d+kB, anon-rss:(\d+)kB, "
                  r"file-rss:(\d+)kB, shmem-rss:(\d+)kB")
ROW = re.compile(r"\[\s*(\d+)\]\s+\d+\s+(\d+)\s+\d+\s+(\d+)\s+(\d+)\s+(\d+)\s+(\d+)\s+\d+\s+\d+\s+-?\d+\s+(\S+)")


def tables(lines):
    """Each kill line's pid -> (its kill figures, the task table before it)."""
    out, table = {}, {}
    for line in lines:
        if "Tasks state (memory values in pages)" in line:
            table = {}
            continue
        m = ROW.search(line)
        if m:
            tgid = int(m.group(2))
            table[tgid] = tuple(int(m.group(i)) for i in (3, 4, 5, 6))   # rss, anon, file, shmem
            continue
        m = KILL.search(line)
        if m:
            out[int(m.group(1))] = (tuple(int(m.group(i)) * 1024 for i in (3, 4, 5)), dict(table))
    return out


def main():
    rec = json.loads(open(sys.argv[1]).readline())
    kills = tables(open(sys.argv[2], errors="replace").read().splitlines())
    limit, want = int(sys.argv[3]), int(sys.argv[4])
    page = rec["host"]["page_size"]
    oom = rec["oom_kills"]
    bad = []
    if not oom["recorded"]:
        print("not recorded: %s" % oom.get("why_not"))
        return 1
    if oom["victims"] < want:
        bad.append("%d victims recorded, expected at least %d" % (oom["victims"], want))
    tree = {h["pid"] for h in rec.get("processes", [])} | {rec["command"]["pid"]} | {v["pid"] for v in oom["listed"]}
    first = None
    for v in oom["listed"]:
        pid, rss = v["pid"], v["rss"]
        if pid not in kills:
            bad.append("victim %d: no kill line in the kernel log" % pid)
            continue
        (anon, file_, shmem), table = kills[pid]
        if first is None:
            first = table
        got = (rss["anon_bytes"], rss["file_bytes"], rss["shmem_bytes"])
        print("victim %d %s: record anon/file/shmem %s, kernel's kill line %s" %
              (pid, v["comm"], got, (anon, file_, shmem)))
        if got != (anon, file_, shmem):
            bad.append("victim %d: record %s != kill line %s" % (pid, got, (anon, file_, shmem)))
        row = table.get(pid)
        if row is None or tuple(x * page for x in row[1:]) != got:
            bad.append("victim %d: record %s != its task table row %s pages" % (pid, got, row))
        k = v["kill"]
        if not k or k["constraint"] != "memcg" or k["limit_bytes"] != limit:
            bad.append("victim %d: kill context %s, expected a memcg OOM at limit %d" % (pid, k, limit))
    if first is not None:
        tree_pages = sum(r[0] for t, r in first.items() if t in tree)
        file_pages = sum(r[2] for t, r in first.items() if t in tree)
        peak = rec["peak_bytes"]
        print("at the first kill the tree's table rows sum to %d bytes; the record's peak %d; limit %d"
              % (tree_pages * page, peak, limit))
        if tree_pages * page > peak:
            bad.append("the table's tree sum %d exceeds the peak %d" % (tree_pages * page, peak))
        if peak > limit + file_pages * page:
            bad.append("the peak %d exceeds the limit %d + file pages %d" % (peak, limit, file_pages * page))
    for b in bad:
        print("MISMATCH: " + b)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
