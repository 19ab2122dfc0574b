"""Outputs go only where asked: never onto an input, into an input directory or above an
input (every verb that writes), and nothing outside ``--out`` (matplotlib's cache)."""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from dralab.cli.common import check_output_location
from dralab.cli.main import cli

ROOT = Path(__file__).resolve().parents[2]
MANIFESTS = ROOT / "examples" / "migrate" / "manifests"
SCENARIO = ROOT / "examples" / "scenarios" / "mig-notebooks.yaml"
DRALAB = [sys.executable, "-c", "from dralab.cli.main import main; main()"]


def _tree(top: Path) -> dict[str, str]:
    return {str(p.relative_to(top)): hashlib.sha256(p.read_bytes()).hexdigest() if p.is_file()
            else "dir" for p in sorted(top.rglob("*"))}


def _run(args: list[str]) -> tuple[int, str]:
    result = CliRunner().invoke(cli, args)
    return result.exit_code, result.stderr


@pytest.fixture
def inputs(tmp_path: Path) -> Path:
    src = tmp_path / "in"
    shutil.copytree(MANIFESTS, src)
    return src


def _assert_refused(code: int, err: str, option: str, needle: str) -> None:
    assert code == 2, err
    assert err.count("\n") == 1 and err.startswith(f"error: {option} "), err
    assert needle in err, err


@pytest.mark.parametrize(("where", "needle"), [
    ("in", "is the input"),
    ("in/out", "is inside the input directory"),
    ("in/sub/deeper", "is inside the input directory"),
    (".", "contains the input"),
])
def test_migrate_convert_output_dir(tmp_path: Path, inputs: Path, where: str,
                                    needle: str) -> None:
    before = _tree(tmp_path)
    code, err = _run(["migrate", "convert", "-f", str(inputs),
                      "-o", str(tmp_path / where)])
    _assert_refused(code, err, "-o/--output-dir", needle)
    assert str(inputs) in err
    assert _tree(tmp_path) == before


@pytest.mark.parametrize(("verb", "option"), [
    (["migrate", "convert", "-f", "{in}"], "-o/--output-dir"),
    (["migrate", "plan", "-f", "{dump}", "--duration", "30m"], "--out"),
])
@pytest.mark.parametrize(("where", "needle"), [
    ("", "'': empty path; name a directory"),           # wrote into the working directory
    ("/dev/null", "/dev/null: is not a directory"),      # was exit 70, FileExistsError
    ("/proc/dralab-out", "/proc/dralab-out: cannot write in /proc"),  # exit 70 before
    ("{other}", "{other}: is not a directory"),           # a file that is no input
])
def test_migrate_output_that_is_no_directory(tmp_path: Path, inputs: Path, verb: list[str],
                                             option: str, where: str, needle: str) -> None:
    other = tmp_path / "notes.txt"
    other.write_text("mine\n")
    dump = ROOT / "examples" / "migrate" / "cluster-dump.yaml"
    args = [a.replace("{in}", str(inputs)).replace("{dump}", str(dump)) for a in verb]
    flag = "-o" if option.startswith("-o") else "--out"
    code, err = _run([*args, flag, where.replace("{other}", str(other))])
    _assert_refused(code, err, option, needle.replace("{other}", str(other)))
    assert other.read_text() == "mine\n"


def test_migrate_convert_output_is_an_input_file(tmp_path: Path, inputs: Path) -> None:
    """Was exit 70, FileExistsError."""
    one = next(p for p in sorted(inputs.rglob("*.yaml")))
    before = _tree(tmp_path)
    code, err = _run(["migrate", "convert", "-f", str(one), "-o", str(one)])
    _assert_refused(code, err, "-o/--output-dir", f"is the input {one}")
    assert _tree(tmp_path) == before


def test_migrate_convert_through_a_link_is_still_inside(tmp_path: Path, inputs: Path) -> None:
    (tmp_path / "alias").symlink_to(inputs, target_is_directory=True)
    code, err = _run(["migrate", "convert", "-f", str(inputs),
                      "-o", str(tmp_path / "alias" / "out")])
    _assert_refused(code, err, "-o/--output-dir", "is inside the input directory")


def test_migrate_convert_apart_from_the_inputs_is_fine(tmp_path: Path, inputs: Path) -> None:
    code, err = _run(["migrate", "convert", "-f", str(inputs), "-o", str(tmp_path / "out")])
    assert code in (0, 1), err
    assert (tmp_path / "out" / "migration-summary.txt").is_file()


def test_migrate_plan_out(tmp_path: Path) -> None:
    dump = tmp_path / "dump"
    dump.mkdir()
    shutil.copy(ROOT / "examples" / "migrate" / "cluster-dump.yaml", dump)
    code, err = _run(["migrate", "plan", "-f", str(dump), "--out", str(dump / "pilot")])
    _assert_refused(code, err, "--out", "is inside the input directory")
    assert sorted(p.name for p in dump.iterdir()) == ["cluster-dump.yaml"]


def test_simulate_out_above_the_scenario(tmp_path: Path) -> None:
    scenario = tmp_path / "s" / "scenario.yaml"
    scenario.parent.mkdir()
    shutil.copy(SCENARIO, scenario)
    code, err = _run(["simulate", "--quiet", "--scenario", str(scenario),
                      "--out", str(scenario.parent)])
    _assert_refused(code, err, "--out", f"contains the input {scenario}")
    code, err = _run(["simulate", "--quiet", "--scenario", str(scenario),
                      "--out", str(scenario)])
    assert code == 2 and err.count("\n") == 1, err  # a file: check_out_dir's own refusal


def test_simulate_out_inside_the_kueue_directory(tmp_path: Path) -> None:
    # spec.queueing.kueue names a directory of Kueue objects beside the scenario: a report
    # written into it would be read back as Kueue objects by the next run.
    queued = ROOT / "examples" / "scenarios" / "queues-dra-autoscaling.yaml"
    text = queued.read_text().replace("kueue: queues-dra-autoscaling/kueue.yaml",
                                      "kueue: queues-dra-autoscaling")
    assert "kueue: queues-dra-autoscaling}" in text
    (tmp_path / queued.name).write_text(text)
    shutil.copytree(queued.with_suffix(""), tmp_path / queued.stem)
    kueue = tmp_path / queued.stem
    code, err = _run(["simulate", "--quiet", "--scenario", str(tmp_path / queued.name),
                      "--out", str(kueue / "report")])
    _assert_refused(code, err, "--out", "is inside the input directory")
    assert not (kueue / "report").exists()


def test_sweep_scenarios_out_above_a_scenario(tmp_path: Path) -> None:
    scenario = tmp_path / "scenario.yaml"
    shutil.copy(SCENARIO, scenario)
    code, err = _run(["sweep", "scenarios", "-f", str(scenario), "--workers", "1",
                      "--seeds", "1", "--out", str(tmp_path)])
    _assert_refused(code, err, "--out", "contains the input")


@pytest.mark.parametrize("verb", [["replay", "alibaba-2023"], ["sweep", "alibaba-2023"]])
def test_trace_out_inside_the_trace_dir(tmp_path: Path, verb: list[str]) -> None:
    trace = tmp_path / "trace"
    trace.mkdir()
    code, err = _run([*verb, "--trace-dir", str(trace), "--workers", "1",
                      "--out", str(trace / "report")])
    _assert_refused(code, err, "--out", f"is inside the input directory {trace}")
    assert list(trace.iterdir()) == []


def test_the_rule_on_paths(tmp_path: Path) -> None:
    (tmp_path / "a" / "b").mkdir(parents=True)
    (tmp_path / "a" / "b" / "x.yaml").write_text("")
    ok = [tmp_path / "out", tmp_path / "a" / "sibling", tmp_path / "a" / "b" / "x.yaml.d"]
    for out in ok:
        check_output_location("--out", out, [tmp_path / "a" / "b" / "x.yaml", "-"])
    from dralab.api.errors import InputError

    for out in (tmp_path, tmp_path / "a", tmp_path / "a" / "b",
                tmp_path / "a" / "b" / "x.yaml", tmp_path / "a" / "b" / "." / "x.yaml"):
        with pytest.raises(InputError, match=r"^--out "):
            check_output_location("--out", out, [tmp_path / "a" / "b" / "x.yaml"])


def test_simulate_writes_nothing_outside_out(tmp_path: Path) -> None:
    """matplotlib's config and font cache go to a private temporary directory that is
    gone when dralab exits: HOME and TMPDIR stay empty."""
    home, tmp, out = tmp_path / "home", tmp_path / "tmp", tmp_path / "out"
    home.mkdir()
    tmp.mkdir()
    env = {k: v for k, v in os.environ.items() if k not in ("MPLCONFIGDIR", "XDG_CACHE_HOME",
                                                            "XDG_CONFIG_HOME")}
    env.update({"HOME": str(home), "TMPDIR": str(tmp)})
    done = subprocess.run([*DRALAB, "simulate", "--quiet", "--scenario", str(SCENARIO),
                           "--out", str(out)], env=env, cwd=tmp_path, capture_output=True,
                          text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    assert (out / "index.html").is_file()
    assert list(home.iterdir()) == [] and list(tmp.iterdir()) == []
    assert sorted(p.name for p in tmp_path.iterdir()) == ["home", "out", "tmp"]


def test_a_users_mplconfigdir_is_kept(tmp_path: Path) -> None:
    mine = tmp_path / "mpl"
    mine.mkdir()
    env = {**os.environ, "MPLCONFIGDIR": str(mine), "HOME": str(tmp_path)}
    done = subprocess.run([*DRALAB, "simulate", "--quiet", "--scenario", str(SCENARIO),
                           "--out", str(tmp_path / "out")], env=env, capture_output=True,
                          text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    assert any(mine.iterdir()), "matplotlib wrote nothing in the user's MPLCONFIGDIR"
