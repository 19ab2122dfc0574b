"""Shared CLI plumbing: options, the error contract and output.

Exit codes (documented in the README): 0 success; 1 "does not fit"/problems a
verb defines as such; 2 invalid input or usage; 3 an allocation error; 70 a bug
in dralab (reported in one line; ``DRALAB_DEBUG=1`` shows the traceback).

Every error and warning is one line on stderr (``error: ...``, ``warning: ...``),
cut and escaped by ``one_line`` so that hostile input cannot flood or spoof the
terminal.
"""

from __future__ import annotations

import contextlib
import functools
import os
import sys
import warnings
from collections.abc import Callable, Iterator
from typing import Any, TextIO, TypeVar

import click

from dralab.api.errors import DralabError, DralabWarning, InputError, one_line
from dralab.api.features import FeatureGates

EXIT_OK = 0
EXIT_UNSCHEDULABLE = 1
EXIT_INPUT = 2
EXIT_ALLOCATION_ERROR = 3
EXIT_INTERNAL = 70

F = TypeVar("F", bound=Callable[..., Any])


def fail(message: str, code: int = EXIT_INPUT) -> None:
    """Print ``error: MESSAGE`` (one line, cut and escaped) and exit with ``code``."""
    click.echo(f"error: {one_line(message)}", err=True)
    sys.exit(code)


def _show_warning(message: Warning | str, category: type[Warning], filename: str,
                  lineno: int, file: TextIO | None = None, line: str | None = None) -> None:
    if issubclass(category, DralabWarning):
        click.echo(f"warning: {one_line(str(message))}", err=True)
    else:  # a library's warning: still one line, with its category
        click.echo(f"warning: {category.__name__}: {one_line(str(message))}", err=True)


@contextlib.contextmanager
def _warnings_as_lines() -> Iterator[None]:
    with warnings.catch_warnings():
        warnings.simplefilter("always", DralabWarning)
        warnings.showwarning = _show_warning
        yield


def one_line_errors(func: F) -> F:
    """Turn every error into one line on stderr and a documented exit status.

    Warnings raised meanwhile (e.g. duplicate keys in an input) become
    ``warning: ...`` lines on stderr.
    """

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            with _warnings_as_lines():
                return func(*args, **kwargs)
        except DralabError as exc:
            fail(str(exc), EXIT_INPUT)
        except (KeyboardInterrupt, SystemExit, click.exceptions.Exit,
                click.ClickException):
            raise
        except Exception as exc:
            if os.environ.get("DRALAB_DEBUG"):
                raise
            fail(f"internal error: {type(exc).__name__}: {exc}", EXIT_INTERNAL)
        return None

    return wrapper  # type: ignore[return-value]


@contextlib.contextmanager
def errors_naming(path: str | None, kind: type[InputError] = InputError) -> Iterator[None]:
    """Prefix ``kind`` errors raised inside with ``path``: e.g. a ``--config`` file's."""
    try:
        yield
    except kind as exc:
        text = str(exc)
        if path is None or text.startswith(f"{path}:") or text.startswith(f"{path} "):
            raise
        raise InputError(f"{path}: {text}") from None


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
