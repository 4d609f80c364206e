#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""make check-deploy: the agent's deployment files parse, and agree with it.

Every metric the Grafana dashboard and the scrape config name is one the
agent serves (its families, read from src/agent/agent_metrics.c); the
DaemonSet grants the capabilities docs/agent.md lists and no more, shares
the host's PID namespace, mounts the cgroup hierarchy read-only, and serves
on the port the container image exposes; the scrape config passes
`promtool check config` where promtool is installed.
Usage: check-deploy.py src/agent/agent_metrics.c deploy
"""
import json
import os
import re
import shutil
import subprocess
import sys

import yaml

metrics_c, deploy = sys.argv[1], sys.argv[2]
served = set(re.findall(r'\{ "(peakbpf_[a-z_]+)", (?:GAUGE|COUNTER)', open(metrics_c).read()))
problems = []
if len(served) < 10:
    problems.append("found only %d metric families in %s" % (len(served), metrics_c))


def named(text):
    return set(re.findall(r"\bpeakbpf_[a-z_]+\b", text))


dash = json.load(open(os.path.join(deploy, "grafana/peakbpf-agent.json")))
exprs = [t["expr"] for p in dash["panels"] for t in p.get("targets", [])]
exprs += [v["query"] for v in dash.get("templating", {}).get("list", [])]
for m in sorted(set().union(*map(named, exprs)) - served):
    problems.append("the dashboard names %s, which the agent does not serve" % m)
if "peakbpf_cgroup_rss_peak_bytes" not in set().union(*map(named, exprs)):
    problems.append("the dashboard does not show the peak")

ds = yaml.safe_load(open(os.path.join(deploy, "kubernetes/daemonset.yaml")))
spec = ds["spec"]["template"]["spec"]
c = spec["containers"][0]
caps = set(c["securityContext"]["capabilities"]["add"])
if ds["kind"] != "DaemonSet" or not spec.get("hostPID"):
    problems.append("the DaemonSet must share the host's PID namespace (hostPID: true)")
if caps != {"BPF", "PERFMON", "SYS_RESOURCE", "DAC_READ_SEARCH"}:
    problems.append("the DaemonSet's capabilities %s are not BPF, PERFMON, SYS_RESOURCE, DAC_READ_SEARCH" % sorted(caps))
if c["securityContext"].get("privileged") or c["securityContext"].get("allowPrivilegeEscalation"):
    problems.append("the DaemonSet must not be privileged")
mounts = {m["mountPath"]: m for m in c["volumeMounts"]}
if not mounts.get("/sys/fs/cgroup", {}).get("readOnly"):
    problems.append("the DaemonSet must mount /sys/fs/cgroup read-only")
port = c["ports"][0]["containerPort"]
if ("EXPOSE %d" % port) not in open(os.path.join(deploy, "Containerfile")).read():
    problems.append("the image does not expose the DaemonSet's port %d" % port)

scrape = os.path.join(deploy, "prometheus/scrape.yml")
jobs = yaml.safe_load(open(scrape))["scrape_configs"]
jobs += yaml.safe_load(open(os.path.join(deploy, "kubernetes/scrape.yml")))["scrape_configs"]
for job in jobs:
    if not job.get("params", {}).get("scraper"):
        problems.append("scrape job %s names no scraper (docs/agent.md: what two scrapers see)" % job["job_name"])
if shutil.which("promtool"):
    r = subprocess.run(["promtool", "check", "config", scrape], capture_output=True, text=True)
    if r.returncode:
        problems.append("promtool check config: " + (r.stdout + r.stderr).strip().splitlines()[-1])

for p in problems:
    print("check-deploy: " + p)
if not problems:
    print("check-deploy: ok: %d metrics the dashboard names, all served; the DaemonSet's %d capabilities; "
          "the scrape config%s" % (len(set().union(*map(named, exprs))), len(caps),
                                   " passes promtool" if shutil.which("promtool") else ""))
sys.exit(1 if problems else 0)
