#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The CLI's documentation cannot drift from what it parses (make check-man).

Every option in the option tables of the CLI's sources ({ "name", ..._argument,
and the letters of their getopt strings) appears in man/peakbpf.1 and in the
--help of the command that parses it; every subcommand of main.c's table has a
man section and its own help (peakbpf help CMD prints CMD --help); every exit
status of src/*.h (EXIT_* and MERGE_*) is in the man page's EXIT STATUS.
The options block of docs/cli.md names every option of peakbpf's own too.
Usage: check-man.py PEAKBPF MAN
"""
import glob
import re
import subprocess
import sys

peakbpf, man_path = sys.argv[1], sys.argv[2]
man = open(man_path).read()
# The sources whose options each help covers ("" is peakbpf's own).
HELPS = {"": ["src/cli/cli.c", "src/cli/harness/runs_cli.h"], "merge": ["src/cli/merge_cli.c"],
         "plot": ["src/cli/plot.c"], "serve": ["src/helper/serve.c"],
         "agent": ["src/agent/agent_opts.c"], "oom": ["src/agent/agent_oom_cli.c"]}
problems = []
cli_md = open("docs/cli.md").read()
cli_md = cli_md[cli_md.find("## Options"):]


def run(*args):
    p = subprocess.run([peakbpf, *args], capture_output=True, text=True)
    return p.returncode, p.stdout


def in_man(word):
    """--name (or -x) in roff, not as a prefix of a longer option."""
    roff = re.escape(word.replace("-", "\\-"))
    return re.search(roff + r"(?![a-z]|\\-[a-z])", man) is not None


def in_help(word, text):
    return re.search(re.escape(word) + r"(?![a-z-]*[a-z])", text) is not None


subcommands = re.findall(r'\{ "([a-z]+)", [a-z_]+_main \}', open("src/cli/main.c").read())
if not subcommands:
    problems.append("no subcommand table found in src/main.c")
for cmd, sources in HELPS.items():
    text = "".join(open(f).read() for f in sources)
    longs = set(re.findall(r'\{ "([a-z][a-z-]*)", (?:no|required|optional)_argument', text))
    shorts = set()
    for s in re.findall(r'getopt_long\([^"]*"([^"]*)"', text) + re.findall(r'SHORT_OPTIONS "([^"]*)"', text):
        shorts |= set(c for c in s if c.isalpha())
    rc, help_text = run(*([cmd] if cmd else []), "--help")
    if rc != 0:
        problems.append("peakbpf %s --help exits %d" % (cmd, rc))
    for o in sorted(longs):
        if not cmd and not in_help("--" + o, cli_md):
            problems.append("docs/cli.md's options lack --%s" % o)
        if not in_man("--" + o):
            problems.append("man/peakbpf.1 lacks --%s (%s)" % (o, cmd or "peakbpf"))
        if not in_help("--" + o, help_text):
            problems.append("peakbpf %s--help lacks --%s" % (cmd + " " if cmd else "", o))
    for c in sorted(shorts):
        if not in_man("-" + c):
            problems.append("man/peakbpf.1 lacks -%s (%s)" % (c, cmd or "peakbpf"))
        if not in_help("-" + c, help_text):
            problems.append("peakbpf %s--help lacks -%s" % (cmd + " " if cmd else "", c))
    print("check-man: %-6s %2d long and %2d short options in peakbpf(1) and --help"
          % (cmd or "peakbpf", len(longs), len(shorts)))
for cmd in subcommands:
    if cmd == "help":
        continue
    if not re.search(r"^\.SH .*%s" % cmd.upper(), man, re.M) and not re.search(r"^\.SS .*%s" % cmd, man, re.M):
        problems.append("man/peakbpf.1 has no section for peakbpf %s" % cmd)
    rc1, a = run("help", cmd)
    rc2, b = run(cmd, "--help")
    if rc1 or rc2 or a != b or not a:
        problems.append("peakbpf help %s (exit %d) is not peakbpf %s --help (exit %d)" % (cmd, rc1, cmd, rc2))
rc, a = run("help")
if rc or a != run("--help")[1]:
    problems.append("peakbpf help is not peakbpf --help")
if run("help", "nope")[0] != 125:
    problems.append("peakbpf help nope does not exit 125")
status = man[man.find(".SH EXIT STATUS"):]
status = status[:status.find("\n.SH", 1)]
codes = set()
for h in glob.glob("src/**/*.h", recursive=True):
    text = open(h).read()
    for v in re.findall(r"^#define EXIT_[A-Z_]+\s+(\d+)", text, re.M) + \
            re.findall(r"^\s*MERGE_[A-Z_]+ = (\d+),", text, re.M):
        codes.add(int(v))
for v in sorted(codes):
    if not re.search(r"(?<![0-9.])%d(?![0-9])" % v, status):
        problems.append("man/peakbpf.1's EXIT STATUS lacks %d" % v)
print("check-man: subcommands %s; exit statuses %s" % (", ".join(subcommands), sorted(codes)))
for p in problems:
    print("check-man: " + p, file=sys.stderr)
sys.exit(1 if problems else 0)
