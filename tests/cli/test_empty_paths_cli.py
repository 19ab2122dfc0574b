"""An empty path (an unset shell variable: --out "$DIR") is an input error naming '', never
the working directory, stdin or the built-in scenario in its place (found by the fuzz
suite: --out '' wrote the report into the working directory, --scenario '' ran the
built-in scenario, fleet -f '' read stdin, --trace-dir '' read the working directory)."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from dralab.cli.main import cli

ROOT = Path(__file__).resolve().parents[2]
SCENARIO = str(ROOT / "examples" / "scenarios" / "mig-notebooks.yaml")


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
