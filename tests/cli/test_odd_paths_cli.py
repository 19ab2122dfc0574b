"""Odd paths in every path option are input errors in one line (exit 2), found by the fuzz
suite: an empty path (an unset shell variable: --out "$DIR") names '' and never stands for
the working directory, stdin or the built-in scenario (--out '' wrote the report into the
working directory, --scenario '' ran the built-in scenario, fleet -f '' read stdin,
--trace-dir '' read the working directory); a name too long for the file system is
refused, not exit 70 (--out and --trace-dir)."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from dralab.cli.main import cli

ROOT = Path(__file__).resolve().parents[2]
SCENARIO = str(ROOT / "examples" / "scenarios" / "mig-notebooks.yaml")
CLUSTER = str(ROOT / "examples" / "scheduling" / "cluster.yaml")


@pytest.mark.parametrize(("args", "message"), [
    (["validate", "-f", ""], "error: '': no such file or directory"),
    (["fleet", "-f", ""], "error: '': no such file or directory"),
    (["simulate", "--scenario", "", "--out", "o"], "error: '': no such file or directory"),
    (["sweep", "scenarios", "-f", ""], "error: '': no such file or directory"),
    (["simulate", "--scenario", SCENARIO, "--out", ""],
     "error: --out '': empty path; name a directory ('.' for this one)"),
    (["replay", "alibaba-2023", "--trace-dir", ""],
     "error: trace directory '': empty path; pass --trace-dir DIR"),
    (["sweep", "alibaba-2023", "--trace-dir", ""],
     "error: trace directory '': empty path; pass --trace-dir DIR"),
    (["replay", "alibaba-2023", "--out", ""],
     "error: --out '': empty path; name a directory ('.' for this one)"),
])
def test_an_empty_path_is_an_input_error(args: list[str], message: str, tmp_path: Path,
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(cli, args, input="apiVersion: v1\n")
    assert (result.exit_code, result.stderr) == (2, message + "\n")
    assert list(tmp_path.iterdir()) == []


LONG = "a" * 5000


@pytest.mark.parametrize("args", [
    ["validate", "-f", LONG], ["fleet", "-f", LONG], ["simulate", "--scenario", LONG],
    ["schedule", "-f", CLUSTER, "--config", LONG], ["sweep", "scenarios", "-f", LONG],
    ["simulate", "--scenario", SCENARIO, "--out", LONG],
    ["simulate", "--scenario", SCENARIO, "--out", f"{LONG}/report"],
    ["replay", "alibaba-2023", "--trace-dir", LONG],
    ["replay", "alibaba-2023", "--out", LONG],
    ["sweep", "alibaba-2023", "--trace-dir", f"{LONG}/trace"],
    ["sweep", "scenarios", "-f", SCENARIO, "--out", LONG],
], ids=lambda args: " ".join(a if a != LONG else "LONG" for a in args)[:60])
def test_a_name_too_long_is_an_input_error(args: list[str], tmp_path: Path,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 2, result.output
    assert result.stderr.startswith("error: ") and result.stderr.count("\n") == 1
    assert list(tmp_path.iterdir()) == []
