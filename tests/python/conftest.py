# SPDX-License-Identifier: MIT
"""The Python package's tests: run by tests/python/run.sh, as root, with
$PEAKBPF_LIBRARY and $WORKLOAD pointing into the build tree."""
import os
import shutil
import subprocess

import pytest

pytest_plugins = ["pytester"]

MIB = 1 << 20


@pytest.fixture(scope="session")
def workload():
    path = os.environ.get("WORKLOAD")
    if not path or not os.access(path, os.X_OK):
        pytest.skip("no workload binary: set WORKLOAD (make all builds .output/workload)")
    return path


def needs_bpf():
    if os.geteuid() != 0 or not os.path.exists("/sys/kernel/btf/vmlinux"):
        pytest.skip("the bpf source needs root and a kernel with BTF")


def within(growth, expected, procs):
    """The integration tests' tolerance: 2 MiB + 1 MiB per process at the
    peak, and 2 % of the expected growth."""
    err = abs(growth - expected)
    return err <= 2 * MIB + procs * MIB and err <= max(expected // 50, 2 * MIB)


@pytest.fixture(scope="session")
def cc():
    path = shutil.which("cc") or shutil.which("gcc")
    if not path:
        pytest.skip("no C compiler")
    return path


def build_so(cc, tmp_path, source):
    c = tmp_path / "touch.c"
    c.write_text(source)
    so = tmp_path / "libtouch.so"
    subprocess.run([cc, "-O2", "-shared", "-fPIC", "-o", str(so), str(c)], check=True)
    return str(so)
