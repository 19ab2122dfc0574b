"""Hostile selectors through the CLI: allocate ends at once (exit 3), schedule says Error."""

from __future__ import annotations

import resource
import sys
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from cputime import cpu_budget, run_with_cpu_budget
from dralab.cel import MAX_COST, compile_selector
from dralab.cli.main import cli

from .test_cel_runtime_cost import HOSTILE, LIMIT_MESSAGE

ROOT = Path(__file__).parent.parent.parent
FLEET = str(ROOT / "examples" / "fleet")
DRA_WORKLOADS = str(ROOT / "examples" / "scheduling" / "dra-workloads.yaml")
REGEX_BOMB = '"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa!".find("(a+)+$") == ""'


def claim(expression: str) -> str:
    """examples/claims/two-h100.yaml with ``expression`` as its selector."""
    request = {"name": "gpus", "exactly": {"deviceClassName": "gpu.nvidia.com", "count": 2,
                                           "selectors": [{"cel": {"expression": expression}}]}}
    return yaml.safe_dump({
        "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
        "metadata": {"name": "two-h100", "namespace": "ml"},
        "spec": {"devices": {"requests": [request]}},
    })


def run(*args: str, stdin: str) -> tuple[int, str, str, float]:
    """(exit code, stdout, stderr, CPU seconds): CPU, not wall time, so that a loaded
    machine cannot fail the bounds below; a runaway selector is stopped at 30 CPU s."""
    with cpu_budget(30) as spent:
        result = CliRunner().invoke(cli, list(args), input=stdin)
    return result.exit_code, result.stdout, result.stderr, spent.cpu


@pytest.mark.parametrize("expression", HOSTILE.values(), ids=HOSTILE.keys())
def test_allocate_stops_with_one_line(expression: str) -> None:
    code, out, err, seconds = run("allocate", "-f", FLEET, "-f", "-", "--node", "h100-node-01",
                                  stdin=claim(expression))
    assert out == ""
    assert err.count("\n") == 1
    assert seconds < 2  # CPU
    if compile_selector(expression).estimated_cost > MAX_COST:
        # Upstream's estimate already refuses it: the API server would not store it.
        assert code == 2, err
        assert err.endswith("cel.expression: Forbidden: too complex, exceeds cost limit\n")
    else:
        assert code == 3, err
        assert err.startswith("error: claim ml/two-h100: selector #0 on device ")
        assert err.endswith(f"CEL runtime error: {LIMIT_MESSAGE}\n")


def test_allocate_with_a_catastrophic_regex_finishes() -> None:
    code, out, err, seconds = run("allocate", "-f", FLEET, "-f", "-", "--node", "h100-node-01",
                                  stdin=claim(REGEX_BOMB))
    assert code == 0, err
    assert len(yaml.safe_load(out)["items"][0]["status"]["allocation"]["devices"]["results"]) == 2
    assert seconds < 2  # CPU; a backtracking regex would take hours


def test_schedule_reports_an_error_status() -> None:
    code, out, _, seconds = run("schedule", "-f", FLEET, "-f", "-", "-f", DRA_WORKLOADS,
                                stdin=claim(HOSTILE["list doubling"]))
    assert code == 1
    pair = next(i for i in yaml.safe_load(out)["items"]
                if i["kind"] == "Pod" and i["metadata"]["name"] == "pair")
    condition = pair["status"]["conditions"][0]
    assert condition["reason"] == "SchedulerError"
    assert condition["message"].endswith(f"CEL runtime error: {LIMIT_MESSAGE}")
    assert seconds < 5  # CPU


_MEMORY_LIMIT = 2 * 1024**3


def _limit_memory() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (_MEMORY_LIMIT, _MEMORY_LIMIT))


@pytest.mark.parametrize("name", ["list doubling", "deep equality"])
def test_allocate_stays_within_bounded_memory(name: str, tmp_path: Path) -> None:
    # A separate process under an address-space limit: before the bound, the first
    # of these needed 2.6 GB at 22 levels and could not finish at 25.
    manifest = tmp_path / "claim.yaml"
    manifest.write_text(claim(HOSTILE[name]))
    command = [sys.executable, "-c", "from dralab.cli.main import main; main()",
               "allocate", "-f", FLEET, "-f", str(manifest), "--node", "h100-node-01"]
    # 30 CPU s (it takes about two); the wall-clock timeout is only a safety net.
    done = run_with_cpu_budget(command, 30, preexec=_limit_memory).done
    assert done.returncode == 3, done.stderr
    assert done.stderr.endswith(f"{LIMIT_MESSAGE}\n")
