"""Entry point of the ``dralab`` command."""

from __future__ import annotations

import click

from dralab import __version__

from .allocate import allocate_cmd
from .explain import explain_cmd
from .fleet import fleet_cmd
from .importcmd import import_cmd
from .replay import replay_cmd
from .schedule import schedule_cmd
from .simulate import simulate_cmd
from .sweep import sweep_cmd
from .validate import validate_cmd


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="dralab")
def cli() -> None:
    """dralab: DRA scheduling engine and simulator for GPU clusters."""


cli.add_command(validate_cmd)
cli.add_command(allocate_cmd)
cli.add_command(fleet_cmd)
cli.add_command(import_cmd)
cli.add_command(simulate_cmd)
cli.add_command(schedule_cmd)
cli.add_command(explain_cmd)
cli.add_command(replay_cmd)
cli.add_command(sweep_cmd)


def main() -> None:
    cli(prog_name="dralab")
