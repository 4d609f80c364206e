# SPDX-License-Identifier: MIT
"""Sizes as people write them ("512 MiB", "1.5G", 4096) and as peakbpf prints them."""
import re

_UNITS = {"": 1, "b": 1,
          "k": 1 << 10, "kb": 1 << 10, "kib": 1 << 10,
          "m": 1 << 20, "mb": 1 << 20, "mib": 1 << 20,
          "g": 1 << 30, "gb": 1 << 30, "gib": 1 << 30,
          "t": 1 << 40, "tb": 1 << 40, "tib": 1 << 40}
_SIZE = re.compile(r"^\s*([0-9]+(?:\.[0-9]+)?)\s*([a-zA-Z]*)\s*$")


def parse_size(value):
    """Bytes from an int or a string such as "512 MiB", "1.5G", "4096".
    Units are binary (K = KiB = 1024). Raises ValueError naming the form."""
    if isinstance(value, bool):
        raise ValueError("a size, not a bool: write e.g. \"512 MiB\"")
    if isinstance(value, int):
        if value < 0:
            raise ValueError("a size cannot be negative: %d" % value)
        return value
    m = _SIZE.match(str(value))
    if not m or m.group(2).lower() not in _UNITS:
        raise ValueError("cannot read %r as a size: write e.g. \"512 MiB\", \"1.5 GiB\" or 4096" % (value,))
    return int(float(m.group(1)) * _UNITS[m.group(2).lower()])


def format_bytes(n):
    """'612.0 MiB', '4.0 KiB', '100 B' (the CLI's style)."""
    if n is None:
        return "unknown"
    n = int(n)
    for unit, size in (("TiB", 1 << 40), ("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if abs(n) >= size:
            return "%.1f %s" % (n / size, unit)
    return "%d B" % n
