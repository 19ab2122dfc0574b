"""The built-in default scenario shipped with the package."""

from __future__ import annotations

from importlib import resources

import yaml

from .scenario import Scenario, parse_scenario

__all__ = ["default_scenario", "default_scenario_text"]


def default_scenario_text() -> str:
    return (resources.files("dralab") / "data" / "default-scenario.yaml").read_text("utf-8")


def default_scenario() -> Scenario:
    """The scenario ``dralab simulate`` runs without ``--scenario``."""
    return parse_scenario(yaml.safe_load(default_scenario_text()), "<built-in default scenario>")
