"""``dralab fleet``: generate the Nodes, ResourceSlices and DeviceClasses of a Fleet spec."""

from __future__ import annotations

import click

from dralab.api.io import dumps, to_list
from dralab.fleet import default_fleet, generate, load_fleet
from dralab.fleet.nvlink import warn_groups

from .common import EXIT_INPUT, AsciiInt, fail, one_line_errors, output_option


@click.command("fleet")
@click.option("-f", "--filename", "filename", metavar="FILE|-",
              help="The Fleet spec (kind: Fleet, apiVersion: dralab.dev/v1alpha1).")
@click.option("--default", "use_default", is_flag=True,
              help="Use the built-in demo fleet (H100, A100 with DynamicMIG, L4).")
@click.option("--seed", type=AsciiInt(), default=None, metavar="N",
              help="Seed for UUIDs and slice-name suffixes (default: the spec's seed).")
@output_option
@one_line_errors
def fleet_cmd(filename: str | None, use_default: bool, seed: int | None, output: str) -> None:
    """Print the objects the drivers would publish for a fleet, as a v1 List.

    The same spec and seed always give the same output. Exit 2 on a bad spec
    (one line naming file and field path) or bad usage.
    """
    if use_default == (filename is not None):
        fail("give exactly one of -f FILE and --default", EXIT_INPUT)
    # filename is not None here; "" is a file name (an error), never stdin.
    fleet = default_fleet() if use_default or filename is None else load_fleet(filename)
    warn_groups(fleet, filename or "")
    objects = generate(fleet, seed).objects()
    click.echo(dumps(to_list(objects), output), nl=False)
