# SPDX-License-Identifier: MIT
"""Sizes as people write them ("512 MiB", "1.5G", 4096) and as peakbpf prints them."""
import re
from fractions import Fraction

# The CLI's grammar (src/units.h; both are tested against
# tests/unit/size_table.txt): K/M/G/T and KiB/MiB/GiB/TiB are powers of
# 1024, KB/MB/GB/TB powers of 1000; any case; blanks before the unit.
_UNITS = {"": 1, "b": 1}
for _i, _letter in enumerate("kmgt", 1):
    _UNITS[_letter] = _UNITS[_letter + "ib"] = 1024 ** _i
    _UNITS[_letter + "b"] = 1000 ** _i
_SIZE = re.compile(r"^([0-9]+(?:\.[0-9]+)?)(?:[ \t]*([a-zA-Z]+))?$")


def parse_size(value):
    """Bytes from an int or a string such as "512 MiB", "1.5G", "4096".
    K/M/G/T and KiB... are powers of 1024, KB/MB/GB/TB powers of 1000.
    Raises ValueError naming the form."""
    if isinstance(value, bool):
        raise ValueError("a size, not a bool: write e.g. \"512 MiB\"")
    if isinstance(value, int):
        if value < 0:
            raise ValueError("a size cannot be negative: %d" % value)
        return value
    m = _SIZE.match(str(value))
    if not m or (m.group(2) or "").lower() not in _UNITS:
        raise ValueError("cannot read %r as a size: write e.g. \"512 MiB\" (or 512M: powers of 1024), "
                         "\"500 MB\" (powers of 1000) or 4096" % (value,))
    exact = Fraction(m.group(1)) * _UNITS[(m.group(2) or "").lower()]
    return int(exact + Fraction(1, 2))      # to the nearest byte, halves up, as the CLI


def format_bytes(n):
    """'612.0 MiB', '4.0 KiB', '100 B' (the CLI's style)."""
    if n is None:
        return "unknown"
    n = int(n)
    for unit, size in (("TiB", 1 << 40), ("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if abs(n) >= size:
            return "%.1f %s" % (n / size, unit)
    return "%d B" % n
