"""Entry point of the ``dralab`` command."""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Sequence
from typing import Any

import click

from dralab._version import __version__
from dralab.api.errors import one_line

from .admit import admit_cmd
from .allocate import allocate_cmd
from .autoscale import autoscale_cmd
from .common import (
    EXIT_INPUT,
    EXIT_INTERNAL,
    OUT_OF_MEMORY,
    TOO_DEEP,
    exit_on_signals,
)
from .explain import explain_cmd
from .fleet import fleet_cmd
from .importcmd import import_cmd
from .migrate import migrate_cmd
from .replay import replay_cmd
from .schedule import schedule_cmd
from .simulate import simulate_cmd
from .snapshot import snapshot_cmd
from .sweep import sweep_cmd
from .validate import validate_cmd


class _OneLineErrors(click.Group):
    """A group whose usage errors are one line, ``error: ...``, and exit 2.

    Click prints usage errors as four lines (usage, a hint, a blank line, the
    error); dralab's contract is one line per error, so the hint goes in
    parentheses at its end.
    """

    def main(self, args: Sequence[str] | None = None, prog_name: str | None = None,
             complete_var: str | None = None, standalone_mode: bool = True,
             **extra: Any) -> Any:
        if not standalone_mode:
            return super().main(args, prog_name, complete_var, False, **extra)
        try:
            result = super().main(args, prog_name, complete_var, False, **extra)
        except click.exceptions.NoArgsIsHelpError as exc:
            exc.show()  # a bare `dralab`: the help, as click prints it
            sys.exit(exc.exit_code)
        except click.ClickException as exc:
            message = exc.format_message()
            ctx = getattr(exc, "ctx", None)
            if ctx is not None:
                message += f" (see '{ctx.command_path} -h')"
            click.echo(f"error: {one_line(message)}", err=True)
            sys.exit(EXIT_INPUT)
        except click.Abort:
            click.echo("Aborted!", err=True)
            sys.exit(1)
        # Without standalone mode click returns the exit code of --help/--version
        # (an Exit) or what the command returned (None).
        sys.exit(result if isinstance(result, int) else 0)


@click.group(cls=_OneLineErrors, context_settings={"help_option_names": ["-h", "--help"]})
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
cli.add_command(admit_cmd)
cli.add_command(migrate_cmd)
cli.add_command(autoscale_cmd)
cli.add_command(snapshot_cmd)

# kubectl runs a plugin named kubectl-dralab for `kubectl dralab ...`, with the
# user's environment (KUBECONFIG, the current context): the same commands, named so.
KUBECTL_PLUGIN_NAME = "kubectl dralab"


def main(prog_name: str = "dralab") -> None:
    """The ``dralab`` command: SIGTERM and SIGHUP end it in order (exit 128 + N, no
    worker process or half-written output left); running out of memory or stack
    outside a verb is one line and exit 70, like inside one."""
    exit_on_signals()
    failed = b""
    try:
        cli(prog_name=prog_name)
    except MemoryError:
        failed = OUT_OF_MEMORY
    except RecursionError:
        failed = TOO_DEEP
    if failed:
        # Outside the handler, so that the exception's frames are freed before printing.
        with contextlib.suppress(BaseException):
            sys.stderr.flush()
        with contextlib.suppress(BaseException):
            os.write(2, failed)
        sys.exit(EXIT_INTERNAL)


def kubectl_main() -> None:
    """``kubectl-dralab``: ``kubectl dralab explain pod NAME -n NS`` with the current
    context; help and usage lines read ``kubectl dralab``."""
    main(KUBECTL_PLUGIN_NAME)
