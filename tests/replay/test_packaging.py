"""The trace ships as package data: a wheel holds it, and an installed copy finds its own.

Builds a real wheel from a copy of the project (pip, with build isolation: the
build backend comes from the configured package index), unpacks it into a
directory outside the checkout and runs the loader there in a fresh interpreter.
Skipped when no wheel can be built (no index reachable).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

import dralab
from cputime import run_with_cpu_budget
from dralab.replay.trace import WORKLOADS, default_trace_dir, load_nodes, workload_file

ROOT = Path(__file__).resolve().parents[2]
TRACE_FILES = {workload_file(w) for w in WORKLOADS} | {
    "openb_node_list_gpu_node.csv", "openb_node_list_all_node.csv", "README.md"}


def test_default_trace_is_the_package_copy() -> None:
    here = default_trace_dir()
    assert here == Path(dralab.__file__).resolve().parent / "data" / "alibaba-gpu-2023"
    assert {p.name for p in here.iterdir()} == TRACE_FILES
    # The attribution travels with the data.
    readme = (here / "README.md").read_text(encoding="utf-8")
    assert "alibaba/clusterdata" in readme and "Beware of Fragmentation" in readme
    assert len(load_nodes()) == 1213


def test_no_second_copy_at_the_repository_root() -> None:
    # One copy only: the package's. A stale top-level copy would hide a broken default.
    assert not (ROOT / "data" / "alibaba-gpu-2023").exists()


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if not (ROOT / "pyproject.toml").is_file():
        pytest.skip("not run from a source checkout")
    project = tmp_path_factory.mktemp("project")
    # Build from a copy: an in-tree build would leave build/ and *.egg-info in the checkout.
    shutil.copy2(ROOT / "pyproject.toml", project)
    shutil.copy2(ROOT / "README.md", project)
    shutil.copytree(ROOT / "src", project / "src",
                    ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
    out = tmp_path_factory.mktemp("wheel")
    # Bounded by CPU time (60 s; a build takes a few): the wall-clock timeout is only the
    # safety net for a pip blocked on an index, ten times that, and then the test skips.
    try:
        done = run_with_cpu_budget(
            [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(out),
             str(project)], 60).done
    except subprocess.TimeoutExpired:
        pytest.skip("could not build a wheel: pip blocked past the safety timeout")
    found = sorted(out.glob("dralab-*.whl"))
    if done.returncode != 0 or not found:
        pytest.skip(f"could not build a wheel: {done.stderr.strip().splitlines()[-1:]}")
    return found[0]


def test_wheel_holds_the_trace_and_its_attribution(wheel: Path) -> None:
    with zipfile.ZipFile(wheel) as zf:
        names = set(zf.namelist())
    shipped = {n.rsplit("/", 1)[1] for n in names
               if n.startswith("dralab/data/alibaba-gpu-2023/")}
    assert shipped == TRACE_FILES


def test_installed_copy_resolves_its_own_trace(wheel: Path, tmp_path: Path) -> None:
    site = tmp_path / "site"
    with zipfile.ZipFile(wheel) as zf:
        zf.extractall(site)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    env = {k: v for k, v in os.environ.items() if k not in ("DRALAB_TRACE_DIR", "PYTHONPATH")}
    env["PYTHONPATH"] = str(site)  # ahead of any editable install of the checkout
    script = ("import dralab, dralab.replay.trace as t; "
              "print(dralab.__file__); print(t.default_trace_dir()); "
              "print(len(t.load_nodes())); print(len(t.load_pods('default')))")
    # 30 CPU s (it takes about two); the wall-clock timeout is only a safety net.
    done = run_with_cpu_budget([sys.executable, "-c", script], 30, cwd=elsewhere, env=env).done
    assert done.returncode == 0, done.stderr
    module, trace, nodes, pods = done.stdout.split()
    assert Path(module).is_relative_to(site)
    assert Path(trace) == site / "dralab" / "data" / "alibaba-gpu-2023"
    assert (nodes, pods) == ("1213", "8152")
