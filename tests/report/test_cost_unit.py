"""spec.autoscaling.currency: the unit of pricePerHour, carried to every cost the report
shows (tables, terminal, verdict); "pricePerHour units" when the scenario names none."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

import dralab
from dralab.report import render_summary_table, write_report
from dralab.report.spread import seed_runs
from dralab.sim.results import SimulationResult


def _scenario(**autoscaling: Any) -> dralab.Scenario:
    pool = {"name": "h100", "count": 0, "namePrefix": "h100-",
            "gpu": {"model": "h100-80gb", "count": 8},
            "autoscaling": {"min": 0, "max": 2, "pricePerHour": 10, "provisioningDelay": "5m"}}
    spec: dict[str, Any] = {
        "duration": "1h", "compare": ["dra"], "sampleInterval": "5m",
        "fleet": {"spec": {"pools": [pool]}},
        "workload": [{"name": "train", "arrivals": ["0s"], "cpu": "8", "memory": "32Gi",
                      "duration": {"distribution": "fixed", "mean": "30m"},
                      "devices": {"type": "gpu", "count": 8}}]}
    if autoscaling:
        spec["autoscaling"] = autoscaling
    return dralab.scenario(spec)


def test_the_currency_names_every_cost(tmp_path: Path) -> None:
    result = dralab.simulate(_scenario(currency="EUR"))
    auto = result.modes[0].autoscaling
    assert auto is not None and auto.currency == "EUR" and auto.cost_unit == "EUR"
    data = result.to_json()
    assert data["modes"][0]["autoscaling"]["currency"] == "EUR"
    assert SimulationResult.from_json(json.loads(json.dumps(data))).to_json() == data
    page = write_report(result, tmp_path).read_text()
    assert "Total cost (EUR)" in page and "Cost of autoscaled pools (EUR)" in page
    console = Console(width=160, record=True, color_system=None)
    console.print(render_summary_table(result, seed_runs([result])))
    assert "Cost of autoscaled pools (EUR)" in console.export_text()


def test_without_a_currency_costs_say_what_they_are_in(tmp_path: Path) -> None:
    result = dralab.simulate(_scenario())
    auto = result.modes[0].autoscaling
    assert auto is not None and auto.cost_unit == "pricePerHour units"
    # Runs without it keep their metrics.json: no currency key.
    assert "currency" not in result.to_json()["modes"][0]["autoscaling"]
    assert "Total cost (pricePerHour units)" in write_report(result, tmp_path).read_text()


@pytest.mark.parametrize("bad", ["US$ per node and hour!", 5, "x" * 17])
def test_a_bad_currency_names_the_field(bad: object) -> None:
    with pytest.raises(dralab.DralabError, match=r"spec\.autoscaling\.currency"):
        _scenario(currency=bad)
