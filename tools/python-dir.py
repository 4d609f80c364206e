#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Where make install puts the Python package, for the interpreter that runs
this (make's PYTHON): print the directory, then "looks" or "does-not-look"
(whether that interpreter imports from it with no PYTHONPATH).

Usage: python-dir.py PREFIX [default]
  - a venv's interpreter: its own site-packages (PREFIX does not apply);
  - an interpreter that looks under PREFIX/lib (Debian's python3:
    /usr/lib/python3/dist-packages for /usr, /usr/local/lib/python3.X/
    dist-packages for /usr/local): that directory;
  - otherwise, when PREFIX is make's default ("default"): the interpreter's
    own site-packages (a pyenv or /opt python), so that it finds the package;
  - otherwise PREFIX/lib/python3.X/site-packages (dist-packages where the
    interpreter names them so), which it does not look in: say so.
"""
import os
import sys
import sysconfig

prefix = os.path.normpath(sys.argv[1])
default = len(sys.argv) > 2 and sys.argv[2] == "default"
own = sysconfig.get_paths()["purelib"]
looked = [os.path.normpath(p) for p in sys.path if p.endswith("-packages")]
if sys.prefix != sys.base_prefix:
    where = own
else:
    under = [p for p in looked if p.startswith(prefix + "/lib/")]
    if under:
        where = under[0]
    elif default:
        where = own
    else:
        kind = "dist-packages" if own.endswith("dist-packages") else "site-packages"
        where = "%s/lib/python%d.%d/%s" % (prefix, sys.version_info[0], sys.version_info[1], kind)
print(where)
print("looks" if os.path.normpath(where) in looked else "does-not-look")
