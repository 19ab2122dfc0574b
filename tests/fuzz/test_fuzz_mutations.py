"""Mutated real inputs through every verb: the CLI contract holds for each case
(``harness.Outcome.violations``: exit 0-3 within the time and memory bound, one-line
errors, inputs unchanged, nothing written outside --out)."""

from __future__ import annotations

from hypothesis import given

from . import cases
from .budget import fuzz
from .harness import Case, check


@fuzz("manifests")
@given(case=cases.manifest_cases())
def test_manifests(case: Case) -> None:
    check(case)


@fuzz("fleet")
@given(case=cases.fleet_cases())
def test_fleet_specs(case: Case) -> None:
    check(case)


@fuzz("autoscale")
@given(case=cases.autoscale_cases())
def test_autoscale(case: Case) -> None:
    check(case)


@fuzz("migrate")
@given(case=cases.migrate_cases())
def test_migrate(case: Case) -> None:
    check(case)


@fuzz("config")
@given(case=cases.config_cases())
def test_scheduler_configs(case: Case) -> None:
    check(case)


@fuzz("scenario")
@given(case=cases.scenario_cases())
def test_scenarios(case: Case) -> None:
    check(case)


@fuzz("trace")
@given(case=cases.trace_cases())
def test_traces(case: Case) -> None:
    check(case)


@fuzz("argv")
@given(case=cases.argv_cases())
def test_command_lines(case: Case) -> None:
    check(case)
