"""CSV cells a spreadsheet would run as formulas are neutralised; numbers stay numbers."""

from __future__ import annotations

import csv
import io

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from dralab.report.csvtext import FORMULA_TRIGGERS, csv_text, spreadsheet_safe
from dralab.report.tables import pods_csv

from .fixtures import tiny_mode


@pytest.mark.parametrize(("cell", "written"), [
    ("=HYPERLINK(\"http://x\")", "'=HYPERLINK(\"http://x\")"),
    ("+cmd|' /C calc'!A0", "'+cmd|' /C calc'!A0"),
    ("-2+3", "'-2+3"),
    ("@SUM(A1)", "'@SUM(A1)"),
    ("\tx", "'\tx"),
    ("\rx", "'\rx"),
    ("-1.5", "-1.5"),              # a negative number is a number
    ("+3", "+3"),
    ("-2e-05", "-2e-05"),
    ("-.5", "-.5"),
    (-7, -7),
    (-0.25, -0.25),
    ("plain", "plain"),
    ("", ""),
    ("a=b", "a=b"),               # only the first character matters
])
def test_spreadsheet_safe(cell: str | int | float, written: str | int | float) -> None:
    assert spreadsheet_safe(cell) == written


@example(["\r0", "a\rb", -1.5])     # a bare carriage return would split the row
@given(st.lists(st.one_of(st.text(max_size=12), st.integers(), st.floats(allow_nan=False)),
                min_size=1, max_size=6))
def test_every_written_text_cell_is_safe_and_numbers_round_trip(
        row: list[str | int | float]) -> None:
    text = csv_text([f"c{i}" for i in range(len(row))], [row])
    (head, back) = list(csv.reader(io.StringIO(text, newline="")))
    assert len(head) == len(row)
    for original, cell in zip(row, back, strict=True):
        if isinstance(original, str):
            assert cell in (original, "'" + original)
            if cell.startswith(FORMULA_TRIGGERS):
                float(cell)  # only numbers may start so
        else:
            assert float(cell) == float(original)


def test_report_csv_neutralises_names_from_the_input() -> None:
    from dataclasses import replace

    from dralab.sim.results import SimulationResult

    mode = tiny_mode()
    hostile = tuple(replace(p, kind="=1+1", node="@evil") for p in mode.pods)
    result = SimulationResult(scenario="s", seed=0, duration=60.0,
                              modes=(replace(mode, pods=hostile),))
    rows = list(csv.DictReader(io.StringIO(pods_csv(result))))
    assert rows and all(r["kind"] == "'=1+1" for r in rows)
    assert all(r["node"] in ("'@evil", "") for r in rows)
