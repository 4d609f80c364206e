# SPDX-License-Identifier: MIT
"""The package's own build backend (PEP 517), in the standard library alone,
so that `pip install ./python` needs no network: pip's isolated build
environment has nothing to fetch (pyproject.toml: requires = []).

The package is pure Python (it binds libpeakbpf with ctypes), so a wheel is
a zip of peakbpf/*.py and its .dist-info: METADATA, WHEEL, the pytest11
entry point, RECORD.
"""
import base64
import hashlib
import os
import re
import tarfile
import zipfile

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TAG = "py3-none-any"


def _project():
    """name, version, summary, requires-python from pyproject.toml's [project]."""
    text = open(os.path.join(HERE, "pyproject.toml")).read()
    project = text.split("[project]", 1)[1].split("\n[", 1)[0]

    def field(key):
        m = re.search(r'^%s\s*=\s*"([^"]*)"' % re.escape(key), project, re.M)
        return m.group(1) if m else ""
    return field("name"), field("version"), field("description"), field("requires-python")


def _metadata():
    name, version, summary, requires = _project()
    readme = open(os.path.join(HERE, "README.md")).read()
    return ("Metadata-Version: 2.1\nName: %s\nVersion: %s\nSummary: %s\nLicense: MIT\n"
            "Requires-Python: %s\nDescription-Content-Type: text/markdown\n\n%s"
            % (name, version, summary, requires, readme))


def _dist_info_files():
    name, version = _project()[:2]
    info = "%s-%s.dist-info" % (name, version)
    return info, {
        info + "/METADATA": _metadata().encode(),
        info + "/WHEEL": ("Wheel-Version: 1.0\nGenerator: peakbpf_build\nRoot-Is-Purelib: true\n"
                          "Tag: %s\n" % TAG).encode(),
        info + "/entry_points.txt": b"[pytest11]\npeakbpf = peakbpf.pytest_plugin\n",
    }


def _write_wheel(directory, files):
    """files: {archive name: bytes}; RECORD is added. Returns the wheel's name."""
    name, version = _project()[:2]
    info, meta = _dist_info_files()
    files = dict(files, **meta)
    wheel = "%s-%s-%s.whl" % (name, version, TAG)
    record = []
    with zipfile.ZipFile(os.path.join(directory, wheel), "w", zipfile.ZIP_DEFLATED) as z:
        for arc in sorted(files):
            data = files[arc]
            z.writestr(arc, data)
            digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
            record.append("%s,sha256=%s,%d" % (arc, digest, len(data)))
        record.append(info + "/RECORD,,")
        z.writestr(info + "/RECORD", "\n".join(record) + "\n")
    return wheel


def _package_files():
    pkg = os.path.join(HERE, "peakbpf")
    return {"peakbpf/" + f: open(os.path.join(pkg, f), "rb").read()
            for f in sorted(os.listdir(pkg)) if f.endswith(".py") and f != "_config.py"}


def get_requires_for_build_wheel(config_settings=None):
    return []


def get_requires_for_build_sdist(config_settings=None):
    return []


def get_requires_for_build_editable(config_settings=None):
    return []


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    return _write_wheel(wheel_directory, _package_files())


def build_editable(wheel_directory, config_settings=None, metadata_directory=None):
    return _write_wheel(wheel_directory, {"peakbpf_editable.pth": (HERE + "\n").encode()})


def build_sdist(sdist_directory, config_settings=None):
    name, version = _project()[:2]
    base = "%s-%s" % (name, version)
    path = os.path.join(sdist_directory, base + ".tar.gz")
    with tarfile.open(path, "w:gz") as t:
        for rel in ["pyproject.toml", "README.md", "_build/peakbpf_build.py"] + \
                [k for k in _package_files()]:
            t.add(os.path.join(HERE, rel), arcname=base + "/" + rel)
        info = tarfile.TarInfo(base + "/PKG-INFO")
        data = _metadata().encode()
        info.size = len(data)
        import io
        t.addfile(info, io.BytesIO(data))
    return base + ".tar.gz"
