"""`dralab replay`: the JSON contract, table and CSV, the report, exit codes.

Runs use the hidden --limit-nodes/--limit-pods knobs (60 nodes, 200 pods) so
each invocation takes about a second.
"""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

from click.testing import CliRunner, Result

from dralab.cli.main import cli

SMALL = ["--limit-nodes", "60", "--limit-pods", "200", "--workers", "1"]
LEVELS = [90, 95, 100, 110, 130]
ROW_KEYS = {"policy", "arrived_pct", "unalloc_gpu_pct_mean", "unalloc_gpu_pct_sd", "seeds"}


def invoke(*args: str) -> Result:
    return CliRunner().invoke(cli, ["replay", "alibaba-2023", *args])


def test_json_has_exactly_the_contract_keys() -> None:
    result = invoke("--policy", "FGD,BestFit", "--seeds", "2", "-o", "json", *SMALL)
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    assert set(doc) == {"workload", "results"} and doc["workload"] == "default"
    assert all(set(row) == ROW_KEYS for row in doc["results"])
    assert [(r["policy"], r["arrived_pct"]) for r in doc["results"]] == [
        (p, x) for p in ("FGD", "BestFit") for x in LEVELS]
    assert all(r["seeds"] == 2 for r in doc["results"])
    at100 = {r["policy"]: r["unalloc_gpu_pct_mean"] for r in doc["results"]
             if r["arrived_pct"] == 100}
    assert 0 <= at100["FGD"] <= 100 and 0 <= at100["BestFit"] <= 100


def test_default_table_lists_every_policy_by_level() -> None:
    result = invoke("--seeds", "2", *SMALL)
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0].startswith("default: unallocated GPU %")
    assert lines[1].split() == ["policy", *(t for x in LEVELS for t in (str(x), "%"))]
    names = [line.split()[0] for line in lines[2:]]
    assert names == ["Random", "DotProd", "GpuClustering", "GpuPacking", "BestFit", "FGD",
                     "FGD-FS"]
    assert all(line.count("±") == 5 for line in lines[2:])


def test_csv_and_report(tmp_path: Path) -> None:
    out = tmp_path / "report"
    result = invoke("--policy", "FGD", "--seeds", "2", "-o", "csv", "--out", str(out),
                    "--limit-nodes", "60", "--limit-pods", "200")   # default: process pool
    assert result.exit_code == 0, result.output
    rows = list(csv.DictReader(io.StringIO(result.stdout)))
    assert [int(r["arrived_pct"]) for r in rows] == LEVELS
    assert {r["workload"] for r in rows} == {"default"}
    doc = json.loads((out / "results.json").read_text())
    assert set(doc) == {"workload", "results"}
    page = (out / "index.html").read_text()
    # Three inline plots, the paper's reference next to ours, nothing external.
    assert page.count("<svg") == 3 and "paper 100 %" in page and "4.77 ± 0.11" in page
    assert "http://" not in page.replace("http://www.w3.org", "")
    curves = list(csv.DictReader(io.StringIO((out / "curves.csv").read_text())))
    assert len(curves) == 131 and "frag_amount_median" in curves[0]


def test_bad_input_exits_2_in_one_line(tmp_path: Path) -> None:
    for args, word in ((["--workload", "nope"], "nope"), (["--policy", "FGD,Tetris"], "Tetris"),
                       (["--trace-dir", str(tmp_path / "missing")], "missing")):
        result = invoke(*args, *SMALL)
        assert result.exit_code == 2, (args, result.output)
        assert result.stderr.count("\n") == 1 and word in result.stderr
    result = CliRunner().invoke(cli, ["replay", "philly"])
    assert result.exit_code == 2
