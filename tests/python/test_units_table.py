# SPDX-License-Identifier: MIT
"""peakbpf.parse_size reads every size as the CLI does: the shared table
tests/unit/size_table.txt (the C unit test reads it too)."""
import os

import pytest

from peakbpf import parse_size

TABLE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "unit", "size_table.txt")


def rows():
    with open(TABLE) as f:
        for line in f:
            line = line.rstrip("\n")
            if line and not line.startswith("#") and "\t" in line:
                yield tuple(line.split("\t", 1))


@pytest.mark.parametrize("text,want", list(rows()))
def test_size_table(text, want):
    if want == "error":
        with pytest.raises(ValueError):
            parse_size(text)
    else:
        assert parse_size(text) == int(want)


def test_table_is_there():
    assert len(list(rows())) >= 30
