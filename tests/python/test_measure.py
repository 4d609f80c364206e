# SPDX-License-Identifier: MIT
"""peakbpf.measure() on known shapes, native code holding the GIL,
multiprocessing, nested blocks, the per-block cost, and the fallbacks."""
import ctypes
import json
import multiprocessing
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile
import time

import pytest

import peakbpf
from conftest import MIB, build_so, needs_bpf, within

SHAPES = [
    ("spike", ["-s", "64MiB", "-t", "5ms", "spike"]),
    ("concurrent", ["-s", "64MiB", "-n", "4", "concurrent"]),
    ("chain", ["-s", "32MiB", "-n", "4", "chain"]),
    ("threads", ["-s", "64MiB", "-n", "4", "threads"]),
    ("sequential", ["-s", "64MiB", "-n", "4", "-t", "20ms", "sequential"]),
]


@pytest.mark.parametrize("name,args", SHAPES, ids=[s[0] for s in SHAPES])
def test_shape(workload, name, args):
    needs_bpf()
    expected = int(subprocess.run([workload, "-x"] + args, check=True,
                                  capture_output=True, text=True).stdout)
    with peakbpf.measure() as m:
        subprocess.run([workload] + args, check=True, stderr=subprocess.DEVNULL)
    procs = len(m.holders)
    print("%s: growth %.1f MiB, expected %.1f MiB %s" % (name, m.growth_bytes / MIB, expected / MIB,
                                                        m.judgement()))
    assert m.source == "bpf" and m.exact and m.error_bound_bytes == 0
    assert within(m.growth_bytes, expected, procs), m.describe()


TOUCH = r"""
#include <string.h>
#include <sys/mman.h>
#include <time.h>
/* Touch n bytes, hold them ms milliseconds, free them: all with the GIL held. */
int touch(size_t n, int ms)
{
	struct timespec t = { ms / 1000, (ms % 1000) * 1000000L };
	char *p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return -1;
	memset(p, 1, n);
	nanosleep(&t, NULL);
	munmap(p, n);
	return 0;
}
"""


def test_native_code_holding_the_gil(cc, tmp_path):
    needs_bpf()
    lib = ctypes.PyDLL(build_so(cc, tmp_path, TOUCH))  # PyDLL: the GIL stays held
    lib.touch.argtypes = [ctypes.c_size_t, ctypes.c_int]
    with peakbpf.measure() as m:
        assert lib.touch(256 * MIB, 5) == 0
    print("256 MiB for 5 ms under the GIL:", m.describe())
    assert m.exact and within(m.growth_bytes, 256 * MIB, 1), m.describe()
    d = m.to_dict()
    assert 0 <= d["peak_after_s"] <= d["duration_s"] and d["holders"][0]["pid"] == os.getpid()


def _child_alloc(n):
    b = b"x" * n
    time.sleep(0.05)
    del b


@pytest.mark.parametrize("method", ["fork", "spawn", "forkserver"])
def test_multiprocessing(method):
    needs_bpf()
    ctx = multiprocessing.get_context(method)
    with peakbpf.measure() as m:
        p = ctx.Process(target=_child_alloc, args=(256 * MIB,))
        p.start()
        p.join()
    assert p.exitcode == 0
    print("%s: %s; held by %s" % (method, m.describe(), [(h["pid"], h["comm"]) for h in m.holders]))
    # The child's 256 MiB, plus a new interpreter (spawn, forkserver) or
    # the copy of this one's pages (fork): never less, and not far more.
    assert m.exact
    assert 256 * MIB <= m.growth_bytes <= 256 * MIB + 160 * MIB, m.describe()
    assert any(h["pid"] != os.getpid() and h["bytes"] >= 256 * MIB for h in m.holders)


def test_nested_blocks():
    needs_bpf()
    with peakbpf.measure() as outer:
        with peakbpf.measure() as a:
            b = b"x" * (128 * MIB)
            del b
        with peakbpf.measure() as c:
            b = b"x" * (64 * MIB)
            del b
    assert a.exact and c.exact and outer.exact
    assert within(a.growth_bytes, 128 * MIB, 1) and within(c.growth_bytes, 64 * MIB, 1)
    # The outer block's peak is the largest over the windows it spans.
    assert outer.peak_bytes == max(a.peak_bytes, c.peak_bytes, outer.peak_bytes)
    assert outer.peak_bytes >= a.peak_bytes and outer.windows == 5
    assert outer.growth_bytes >= a.growth_bytes


def test_decorator():
    needs_bpf()

    @peakbpf.measure()
    def work(n):
        return len(b"y" * n)

    assert work(32 * MIB) == 32 * MIB
    assert within(work.last_measurement.growth_bytes, 32 * MIB, 1)


def test_pid(tmp_path):
    needs_bpf()
    code = "import sys, time; sys.stdin.readline(); b = b'x' * (64 << 20); time.sleep(0.05)"
    child = subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE)
    try:
        with peakbpf.measure(pid=child.pid) as m:
            child.stdin.write(b"go\n")
            child.stdin.flush()
            child.wait()
    finally:
        child.kill()
        child.wait()
    assert m.exact and within(m.growth_bytes, 64 * MIB, 1), m.describe()
    assert m.holders[0]["pid"] == child.pid
    with peakbpf.measure(pid=0x3ffffff0) as gone:
        pass
    assert gone.source == "unavailable" and gone.growth_bytes is None and "PID" in gone.inexact_reason


def _memory_hierarchy():
    for line in open("/proc/self/mountinfo"):
        f = line.split()
        rest = f[f.index("-") + 1:]
        if rest[0] == "cgroup" and "memory" in rest[2].split(","):
            return f[4]
    for line in open("/proc/self/mountinfo"):
        f = line.split()
        if f[f.index("-") + 1] == "cgroup2":
            return f[4]
    return None


def test_cgroup(workload):
    """measure(cgroup=PATH): a process inside at the start, one moved in."""
    needs_bpf()
    root = _memory_hierarchy()
    if root is None:
        pytest.skip("no memory cgroup hierarchy")
    cg = os.path.join(root, "pbcg-py-%d" % os.getpid())
    os.mkdir(cg)
    enter = 'echo $$ > "$0/cgroup.procs" && exec "$@"'
    idle = subprocess.Popen(["sh", "-c", enter, cg, "sleep", "30"])
    try:
        time.sleep(0.2)
        with peakbpf.measure(cgroup=cg) as m:
            subprocess.run(["sh", "-c", enter, cg, workload, "-s", "64MiB", "-t", "100ms", "spike"],
                           stderr=subprocess.DEVNULL, check=True)
    finally:
        idle.kill()
        idle.wait()
        time.sleep(0.1)
        os.rmdir(cg)
    if m.source == "unavailable" and "refused the BPF programs" in (m.inexact_reason or ""):
        pytest.skip(m.inexact_reason)
    assert m.exact and within(m.growth_bytes, 64 * MIB, 1), m.describe()
    assert {h["comm"] for h in m.holders} >= {"workload", "sleep"}, m.holders


def test_hundred_blocks_one_load(tmp_path):
    needs_bpf()
    with peakbpf.measure():
        pass
    assert peakbpf.session_info()["loads"] == 1
    costs = []
    for _ in range(100):
        t = time.perf_counter()
        with peakbpf.measure() as m:
            pass
        costs.append(time.perf_counter() - t)
        assert m.source == "bpf" and m.growth_bytes is not None
    assert peakbpf.session_info()["loads"] == 1
    costs.sort()
    median, p90 = costs[50] * 1e3, costs[90] * 1e3
    print("per-block cost over 100 blocks: median %.3f ms, p90 %.3f ms, max %.3f ms"
          % (median, p90, costs[-1] * 1e3))
    out = os.environ.get("PEAKBPF_COST_FILE")
    if out:
        with open(out, "w") as f:
            f.write("median %.3f ms, p90 %.3f ms\n" % (median, p90))
    assert median <= 1.0


NOCAPS = ["setpriv", "--inh-caps=-all", "--ambient-caps=-all", "--bounding-set=-all"]
SCRIPT = """
import json, peakbpf
with peakbpf.measure() as m:
    b = b"x" * (64 << 20)
    import time; time.sleep(0.3)
    del b
print(json.dumps(m.to_dict()))
"""


def test_fallback_without_capabilities():
    r = subprocess.run(NOCAPS + [sys.executable, "-c", SCRIPT], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    d = json.loads(r.stdout)
    print("no capabilities:", d["source"], d["growth_bytes"], d["inexact_reason"], d["not_used"])
    assert d["source"] not in ("bpf", "unavailable") and not d["exact"]
    assert d["inexact_reason"] and any("CAP_BPF" in n for n in d["not_used"])


def test_missing_library_is_unavailable():
    """A missing libpeakbpf: measure() still never raises (issue 36: it
    raised LibraryError): the block runs, its source is "unavailable" and
    the reason says where the package looked and the fix; session_info()
    raises LibraryError."""
    env = dict(os.environ, PEAKBPF_LIBRARY="/nonexistent/libpeakbpf.so.0")
    r = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, env=env)
    assert r.returncode == 0, r.stderr
    d = json.loads(r.stdout)
    assert d["source"] == "unavailable" and not d["exact"] and d["peak_bytes"] is None, d
    assert "PEAKBPF_LIBRARY" in d["inexact_reason"] and "make install" in d["inexact_reason"], d
    r = subprocess.run([sys.executable, "-c", "import peakbpf; peakbpf.session_info()"],
                       capture_output=True, text=True, env=env)
    assert r.returncode == 1 and "peakbpf.LibraryError" in r.stderr, r.stderr


def test_public_names():
    """The module's public names are its API, not what it imports."""
    public = {n for n in dir(peakbpf) if not n.startswith(("_", "@"))}   # @: pytest's rewriting
    assert public - {"pytest_plugin"} == set(peakbpf.__all__), public


def test_repr_says_growth_and_peak():
    needs_bpf()
    with peakbpf.measure() as m:
        b = bytearray(16 * MIB)
        b[::4096] = b"x" * len(b[::4096])
        del b
    r = repr(m)
    assert r.startswith("<peakbpf.Measurement growth ") and ", peak " in r and "(bpf" in r, r


def test_holder_own_peak_is_not_carried_over():
    """A holder's own peak in a later block of the same session may be an
    earlier block's: it is then own_peak_since_load_bytes, and
    own_peak_bytes is None (not known for this block)."""
    needs_bpf()
    script = """
import json, peakbpf
with peakbpf.measure() as first:
    b = bytearray(96 << 20); b[::4096] = b"x" * len(b[::4096]); del b
with peakbpf.measure() as second:
    c = bytearray(4 << 20); c[::4096] = b"x" * len(c[::4096]); del c
print(json.dumps([first.holders, second.holders]))
"""
    r = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    first, second = json.loads(r.stdout)
    assert first[0]["own_peak_bytes"] >= 96 * MIB
    me = second[0]
    print("second block's holder: %s" % me)
    assert me["own_peak_bytes"] is None and me["own_peak_since_load_bytes"] >= 96 * MIB, r.stdout


def test_sizes():
    assert peakbpf.parse_size("512 MiB") == 512 * MIB
    assert peakbpf.parse_size("1.5G") == 1536 * MIB
    assert peakbpf.parse_size(4096) == 4096
    assert peakbpf.format_bytes(612 * MIB) == "612.0 MiB"
    with pytest.raises(ValueError, match="512 MiB"):
        peakbpf.parse_size("lots")


def test_timeline_from_measure(tmp_path, workload):
    """measure(timeline=...) writes the block's timeline: its peak is the
    block's peak, the phase mark and the window are in it, and the ladder's
    children have labelled lines that reach their own peaks."""
    needs_bpf()
    out = tmp_path / "t.json"
    with peakbpf.measure(timeline=out) as m:
        subprocess.run([workload, "-s", "32MiB", "-t", "5ms", "spike"], check=True,
                       stderr=subprocess.DEVNULL)
        assert m.mark("ladder")
        subprocess.run([workload, "-s", "16MiB", "-n", "3", "-t", "50ms", "ladder"], check=True,
                       stderr=subprocess.DEVNULL)
    assert m.timeline == os.fspath(out) and m.timeline_error is None and m.timeline_drops == 0
    doc = json.loads(out.read_text())
    facts = doc["otherData"]["peakbpf_timeline"]
    events = doc["traceEvents"]
    tree = max(e["args"]["max"] for e in events if e["ph"] == "C" and e["pid"] == 1)
    print("timeline: peak %d, tree line max %d, holders %s" % (m.peak_bytes, tree, facts["holders"]))
    assert facts["peak_bytes"] == m.peak_bytes == tree
    names = [e["name"] for e in events if e["ph"] == "i"]
    assert "ladder" in names and "window 1" in names and "peak" in names
    own = sorted(h["own_peak_bytes"] for h in facts["holders"])
    # The ladder's children: 64, 32 and 16 MiB (and a few pages of their own).
    for size in (16, 32, 64):
        assert any(size * MIB <= b <= size * MIB + 2 * MIB for b in own), (size, own)
    assert all(h["comm"] for h in facts["holders"])


def test_timeline_html_and_errors(tmp_path):
    needs_bpf()
    with peakbpf.measure(timeline=tmp_path / "t.html") as m:
        b = bytearray(48 * MIB)
        del b
    assert m.timeline and "id=\"peak-marker\"" in open(m.timeline).read()
    with peakbpf.measure(timeline=tmp_path / "t.txt") as m:
        pass
    assert m.timeline is None and "cannot write" in m.timeline_error
    assert not m.mark("after the block")


HELPER_SCRIPT = """
import json, peakbpf
with peakbpf.measure() as m:
    b = b"x" * (128 << 20)
    import time; time.sleep(0.2)
    del b
print(json.dumps(m.to_dict()))
"""


def test_helper_as_nobody():
    """nobody, with no capability, gets the bpf source through peakbpf serve
    (started here on a socket of its own): libpeakbpf finds it by
    $PEAKBPF_HELPER, the figure says bpf and names the helper."""
    needs_bpf()
    lib = os.environ.get("PEAKBPF_LIBRARY", "")
    binary = os.path.join(os.path.dirname(lib), "peakbpf")
    if not shutil.which("setpriv") or not os.access(binary, os.X_OK):
        pytest.skip("needs setpriv and the peakbpf binary beside $PEAKBPF_LIBRARY")
    # Where nobody can read: the package, the library, the socket (pytest's
    # tmp_path is under a directory only root may enter).
    tmp_path = pathlib.Path(tempfile.mkdtemp())
    os.chmod(tmp_path, 0o755)
    shutil.copytree(os.path.dirname(peakbpf.__file__), tmp_path / "peakbpf")
    shutil.copy(lib, tmp_path / "libpeakbpf.so.0")
    sock = str(tmp_path / "peakbpf.sock")
    helper = subprocess.Popen([binary, "serve", "--socket", sock], stderr=subprocess.DEVNULL)
    try:
        for _ in range(100):
            if subprocess.run([binary, "serve", "--status", "--socket", sock],
                              capture_output=True).returncode == 0:
                break
            time.sleep(0.1)
        env = dict(os.environ, PEAKBPF_HELPER=sock, PYTHONPATH=str(tmp_path),
                   PEAKBPF_LIBRARY=str(tmp_path / "libpeakbpf.so.0"))
        r = subprocess.run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
                            "--inh-caps=-all", sys._base_executable, "-c", HELPER_SCRIPT],
                           capture_output=True, text=True, env=env, cwd=str(tmp_path))
    finally:
        helper.terminate()
        helper.wait()
        shutil.rmtree(tmp_path)
    assert r.returncode == 0, r.stderr
    d = json.loads(r.stdout)
    print("as nobody through the helper: growth %.1f MiB %s" % (d["growth_bytes"] / MIB, d["source"]))
    assert d["source"] == "bpf" and d["exact"], d
    assert "via helper " + sock in d["scope"], d
    assert within(d["growth_bytes"], 128 * MIB, 1), d


def test_measure_unique_is_labelled():
    """measure="unique" needs a cgroup of the tree's own, which only the CLI
    makes: the block is not measured, and says why in the library's words."""
    with peakbpf.measure(measure="unique") as m:
        b = b"x" * (8 << 20)
    del b
    assert m.growth_bytes is None and m.peak_bytes is None and not m.exact
    assert m.source == "unavailable" and "--measure unique" in m.inexact_reason
    assert "not measured" in m.describe()
    with pytest.raises(ValueError, match="rss"):
        peakbpf.measure(measure="pss")


def test_kernel_thread_is_refused():
    # issue 26: -p 2 (kthreadd) read "peak 0 B (bpf, exact)"; the library
    # refuses what has no address space, and the block says why.
    needs_bpf()
    with peakbpf.measure(pid=2) as m:
        pass
    assert m.source == "unavailable" and m.growth_bytes is None
    assert "no address space" in m.inexact_reason
