"""``dralab explain``: why a pod (or a claim's pod) landed where it did, or did not."""

from __future__ import annotations

import click

from dralab.scheduler import explain_claim, explain_pod

from .common import (
    EXIT_UNSCHEDULABLE,
    feature_gates_option,
    filename_option,
    one_line_errors,
    parse_gates,
)
from .schedule import config_option, load_config, load_inputs, seed_option


@click.group("explain")
def explain_cmd() -> None:
    """Explain scheduling decisions, node by node."""


@explain_cmd.command("pod")
@click.argument("name", metavar="NAMESPACE/NAME")
@filename_option
@config_option
@feature_gates_option
@seed_option
@one_line_errors
def explain_pod_cmd(name: str, filenames: tuple[str, ...], config_path: str | None,
                    feature_gates: str, seed: int) -> None:
    """Schedule everything as `dralab schedule` does, then show for pod NAMESPACE/NAME
    which plugin rejected it on each node and why, and the nearest node with what
    blocks it there; for a placed pod, the feasible nodes and their scores.
    Exit 0 if the pod was placed, 1 if not, 2 on invalid input or an unknown pod."""
    gates = parse_gates(feature_gates)
    objects = load_inputs(filenames, gates)
    explanation = explain_pod(objects, name, load_config(config_path), gates, seed)
    click.echo(explanation.render(), nl=False)
    if explanation.node is None:
        raise SystemExit(EXIT_UNSCHEDULABLE)


@explain_cmd.command("claim")
@click.argument("name", metavar="NAMESPACE/NAME")
@filename_option
@config_option
@feature_gates_option
@seed_option
@one_line_errors
def explain_claim_cmd(name: str, filenames: tuple[str, ...], config_path: str | None,
                      feature_gates: str, seed: int) -> None:
    """Show ResourceClaim NAMESPACE/NAME after scheduling (allocation, reservedFor) and
    explain each pod that uses it. Exit 0 if it is allocated, 1 if not, 2 on invalid
    input or an unknown claim."""
    gates = parse_gates(feature_gates)
    objects = load_inputs(filenames, gates)
    explanation = explain_claim(objects, name, load_config(config_path), gates, seed)
    click.echo(explanation.render(), nl=False)
    if explanation.allocated is None or not explanation.allocated.allocated:
        raise SystemExit(EXIT_UNSCHEDULABLE)
