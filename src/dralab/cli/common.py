"""Shared CLI plumbing: options, the error contract and output.

Exit codes (documented in the README): 0 success; 1 "does not fit"/problems a
verb defines as such; 2 invalid input or usage; 3 an allocation error; 70 a bug
in dralab (reported in one line; ``DRALAB_DEBUG=1`` shows the traceback).
"""

from __future__ import annotations

import functools
import os
import sys
from collections.abc import Callable
from typing import Any, TypeVar

import click

from dralab.api.errors import DralabError
from dralab.api.features import FeatureGates

EXIT_OK = 0
EXIT_UNSCHEDULABLE = 1
EXIT_INPUT = 2
EXIT_ALLOCATION_ERROR = 3
EXIT_INTERNAL = 70

F = TypeVar("F", bound=Callable[..., Any])


def fail(message: str, code: int = EXIT_INPUT) -> None:
    click.echo(f"error: {message}", err=True)
    sys.exit(code)


def one_line_errors(func: F) -> F:
    """Turn every error into one line on stderr and a documented exit status."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return func(*args, **kwargs)
        except DralabError as exc:
            fail(str(exc).replace("\n", " "), EXIT_INPUT)
        except (KeyboardInterrupt, SystemExit, click.exceptions.Exit,
                click.ClickException):
            raise
        except Exception as exc:
            if os.environ.get("DRALAB_DEBUG"):
                raise
            fail(f"internal error: {type(exc).__name__}: {exc}".replace("\n", " "),
                 EXIT_INTERNAL)
        return None

    return wrapper  # type: ignore[return-value]


def filename_option(func: F) -> F:
    return click.option(
        "-f", "--filename", "filenames", multiple=True, required=True, metavar="FILE|DIR|-",
        help="Manifests to read: files, directories (recursive) or - for stdin. Repeatable.",
    )(func)


def output_option(func: F) -> F:
    return click.option(
        "-o", "--output", type=click.Choice(["yaml", "json"]), default="yaml",
        show_default=True, help="Output format.",
    )(func)


def feature_gates_option(func: F) -> F:
    return click.option(
        "--feature-gates", "feature_gates", default="", metavar="Gate=true,Other=false",
        help="Override Kubernetes 1.37 feature-gate defaults.",
    )(func)


def parse_gates(text: str) -> FeatureGates:
    try:
        return FeatureGates.parse(text)
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="--feature-gates") from None
