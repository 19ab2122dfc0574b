"""``dralab allocate``: allocate devices for claims on one node, as kube-scheduler would."""

from __future__ import annotations

import click

from dralab.allocator import Allocated, AllocationError, allocate
from dralab.allocator.nodes import named_nodes
from dralab.api.core import Node
from dralab.api.io import dumps, load_documents, read_documents, to_list
from dralab.api.resource import ResourceClaim
from dralab.validation.check import validate_documents

from .common import (
    EXIT_ALLOCATION_ERROR,
    EXIT_INPUT,
    EXIT_UNSCHEDULABLE,
    fail,
    feature_gates_option,
    filename_option,
    one_line_errors,
    output_option,
    parse_gates,
)
from .kinds import ALLOCATE, use_kinds, warn_unused

# How many known node names an unknown --node error lists.
_NODES_SHOWN = 5


def _unknown_node(node_name: str, named: frozenset[str]) -> str:
    shown = sorted(named)[:_NODES_SHOWN]
    more = ", ..." if len(named) > _NODES_SHOWN else ""
    return (f"--node {node_name}: no Node and no ResourceSlice in the input names this node "
            f"(named: {', '.join(shown)}{more})")


@click.command("allocate")
@filename_option
@click.option("--node", "node_name", required=True, metavar="NAME",
              help="The candidate node. A Node object of that name in the input lends its "
                   "labels; otherwise a bare node of that name is used.")
@feature_gates_option
@output_option
@one_line_errors
def allocate_cmd(filenames: tuple[str, ...], node_name: str, feature_gates: str,
                 output: str) -> None:
    """Allocate devices for all unallocated ResourceClaims together, as for one pod.

    Inputs: DeviceClass, ResourceSlice, DeviceTaintRule, ResourceClaim and Node
    objects, read as a cluster's stored state. Claims that already have
    status.allocation are in use. Prints a v1 List of the newly allocated
    claims (exit 0); exit 1 with the explanation on stderr when they do not
    fit; exit 3 on an allocation error; exit 2 on bad input, when there is no
    claim to allocate, or when nothing in the input names --node.
    """
    gates = parse_gates(feature_gates)
    docs = use_kinds(read_documents(filenames), ALLOCATE)
    # Stored objects keep fields written while their gate was on; the
    # allocator decides what they mean with the gates given here.
    problems = validate_documents(docs, gates, stored=True)
    if problems:
        for problem in problems:
            click.echo(f"error: {problem}", err=True)
        raise SystemExit(EXIT_INPUT)
    objects = load_documents(docs)
    warn_unused(docs, ALLOCATE)
    pending = [o for o in objects if isinstance(o, ResourceClaim) and not o.allocated]
    if not pending:
        fail("nothing to allocate: the input has no ResourceClaim without status.allocation")
    named = named_nodes(objects)
    # An input that names no node at all (cluster-wide slices only) allows a bare node.
    if named and node_name not in named:
        fail(_unknown_node(node_name, named))
    node = next((o for o in objects if isinstance(o, Node) and o.name == node_name), None)
    outcome = allocate(pending, node or node_name, objects, gates)
    if isinstance(outcome, Allocated):
        click.echo(dumps(to_list(outcome.claims), output), nl=False)
        return
    if isinstance(outcome, AllocationError):
        click.echo(f"error: {outcome.message}", err=True)
        raise SystemExit(EXIT_ALLOCATION_ERROR)
    click.echo(f"unschedulable on node {node_name}: {outcome.reason}", err=True)
    for line in outcome.explanations:
        click.echo(f"  {line}", err=True)
    raise SystemExit(EXIT_UNSCHEDULABLE)
