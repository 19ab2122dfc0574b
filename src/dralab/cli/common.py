"""Shared CLI plumbing: options, the error contract and output.

Exit codes (documented in the README): 0 success; 1 "does not fit"/problems a
verb defines as such; 2 invalid input or usage, and every live-cluster problem (no
kubeconfig or context, unreachable server, TLS, expired credentials, forbidden, a
missing API group or CRD: ``dralab.live.ClusterError``, an input error, since the
cluster is the verb's input); 3 an allocation error; 70 a bug
in dralab (reported in one line; ``DRALAB_DEBUG=1`` shows the traceback), and
running out of memory or stack (``error: out of memory ...``); 128+N killed by
signal N (SIGTERM 143, SIGHUP 129: worker processes killed, no output left half
written; see ``main``).

The error path itself must not fail: under a memory limit the handler of a
MemoryError has almost nothing to allocate with, so that message is preformatted
bytes written straight to file descriptor 2, after the exception (and the big
objects its frames hold) is released.

Every error and warning is one line on stderr (``error: ...``, ``warning: ...``),
cut and escaped by ``one_line`` so that hostile input cannot flood or spoof the
terminal.
"""

from __future__ import annotations

import atexit
import contextlib
import contextvars
import functools
import os
import shutil
import signal
import stat
import sys
import tempfile
import warnings
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any, TextIO, TypeVar

import click

from dralab.api.errors import DralabError, DralabWarning, InputError, ObjectError, one_line
from dralab.api.features import FeatureGates
from dralab.api.io import Document, read_documents
from dralab.report.outdir import check_out_dir

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


# Preformatted: printing them must not need memory the process may not have left.
OUT_OF_MEMORY = (b"error: out of memory (MemoryError): the input needs more memory than "
                 b"this process may use; raise the limit (ulimit -v) or split the input\n")
TOO_DEEP = (b"error: internal error: RecursionError: a structure nested too deeply for "
            b"the interpreter's stack\n")
_LAST_RESORT = b"error: internal error (the error message itself could not be formatted)\n"


def _write_stderr(data: bytes) -> None:
    """Write to file descriptor 2 without Python's buffers; never raises."""
    with contextlib.suppress(BaseException):
        sys.stderr.flush()
    with contextlib.suppress(BaseException):
        os.write(2, data)


def _debug() -> bool:
    try:
        return bool(os.environ.get("DRALAB_DEBUG"))
    except BaseException:  # even reading the environment may fail here
        return False


def _report(exc: Exception, code: int) -> None:
    """``error: MESSAGE`` (``internal error: TYPE: ...`` for exit 70) and exit ``code``;
    if formatting or printing fails (no memory, a ``__str__`` that raises), a fixed
    line instead, with the same code."""
    try:
        text = str(exc) if code != EXIT_INTERNAL else \
            f"internal error: {type(exc).__name__}: {exc}"
        fail(text, code)
    except SystemExit:
        raise
    except BaseException:  # the error path never raises
        _write_stderr(_LAST_RESORT if code == EXIT_INTERNAL else
                      b"error: invalid input (the message could not be formatted)\n")
        sys.exit(code)


# The documents the running verb read through ``read_inputs``: an ObjectError found deep
# in a run (a count past a limit) names its object, and the error path adds the file and
# document from here. One list per verb call (``one_line_errors`` sets it).
_INPUTS: contextvars.ContextVar[list[Document] | None] = contextvars.ContextVar(
    "dralab_inputs", default=None)


def read_inputs(filenames: Iterable[str]) -> list[Document]:
    """``read_documents``, remembered for the error path of the running verb."""
    docs = read_documents(list(filenames))
    remember_inputs(docs)
    return docs


def remember_inputs(docs: Iterable[Document]) -> None:
    """Documents read otherwise (a live cluster's), remembered as ``read_inputs`` does."""
    seen = _INPUTS.get()
    if seen is not None:
        seen.extend(docs)


def _named(exc: ObjectError) -> DralabError:
    """``exc`` with ``FILE[:DOC]`` in front when one input document holds its object."""
    for doc in _INPUTS.get() or ():
        data: dict[str, Any] = doc.data if isinstance(doc.data, dict) else {}
        raw_meta = data.get("metadata")
        meta: dict[str, Any] = raw_meta if isinstance(raw_meta, dict) else {}
        # An object written without a namespace is in "default" (cluster-scoped kinds
        # compare equal the same way).
        if (data.get("kind"), meta.get("name"), meta.get("namespace") or "default") == (
                exc.kind, exc.name, exc.namespace or "default"):
            return InputError(f"{doc.where} {exc}")
    return exc


def one_line_errors(func: F) -> F:
    """Turn every error into one line on stderr and a documented exit status.

    Warnings raised meanwhile (e.g. duplicate keys in an input) become
    ``warning: ...`` lines on stderr. MemoryError and RecursionError get
    preformatted lines (``OUT_OF_MEMORY``, ``TOO_DEEP``) and exit 70, written once
    the exception is gone, so that its frames' objects are freed first.
    """

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        exhausted = b""
        token = _INPUTS.set([])
        try:
            with _warnings_as_lines():
                return func(*args, **kwargs)
        except ObjectError as exc:
            _report(_named(exc), EXIT_INPUT)
        except DralabError as exc:
            _report(exc, EXIT_INPUT)
        except (KeyboardInterrupt, SystemExit, click.exceptions.Exit,
                click.ClickException):
            raise
        except MemoryError:
            if _debug():
                raise
            exhausted = OUT_OF_MEMORY
        except RecursionError:
            if _debug():
                raise
            exhausted = TOO_DEEP
        except Exception as exc:
            if _debug():
                raise
            _report(exc, EXIT_INTERNAL)
        finally:
            _INPUTS.reset(token)
        if exhausted:
            # Outside the handler: the exception, its traceback and every frame holding
            # the input are released by now.
            _write_stderr(exhausted)
            sys.exit(EXIT_INTERNAL)
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


class _AsciiInteger:
    """An integer option written in ASCII digits (an optional sign, then ``0-9``):
    ``int()``, and so click's INT, also reads ``'٣'``, ``'３'`` and ``'1_000'``."""

    name = "integer"

    def convert(self, value: Any, param: click.Parameter | None,
                ctx: click.Context | None) -> Any:
        if isinstance(value, str):
            text = value.strip()
            digits = text[1:] if text[:1] in "+-" else text
            if not (digits.isascii() and digits.isdigit()):
                # click's own wording for a value that is not an integer
                raise click.BadParameter(f"{value!r} is not a valid integer.", ctx, param)
        return super().convert(value, param, ctx)  # type: ignore[misc]


class AsciiInt(_AsciiInteger, click.types.IntParamType):
    """``type=int`` for options, ASCII digits only."""


class AsciiIntRange(_AsciiInteger, click.IntRange):
    """``click.IntRange``, ASCII digits only."""


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


# --- where outputs may go ----------------------------------------------------------------

def _identity(path: Path) -> tuple[int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_dev, st.st_ino


def _chain(path: Path) -> list[Path]:
    """``path`` and its ancestors, absolute and with links resolved as far as they exist."""
    real = Path(os.path.realpath(os.path.abspath(path)))
    return [real, *real.parents]


def _contains(outer: Path, inner: Path) -> bool:
    """Whether ``inner`` is ``outer`` or under it: by resolved path, and by device and
    inode for what exists (a bind mount or a second name of one directory)."""
    chain = _chain(inner)
    top = Path(os.path.realpath(os.path.abspath(outer)))
    if top in chain:
        return True
    ident = _identity(top)
    return ident is not None and any(_identity(p) == ident for p in chain)


def check_output_location(option: str, out: str | os.PathLike[str],
                          inputs: Iterable[str | os.PathLike[str]]) -> None:
    """InputError unless the output ``out`` (of ``option``) is apart from every input.

    Refused, naming the option and the input: ``out`` is an input file or directory,
    lies inside an input directory (the next run would read the outputs back), or
    contains an input (a directory above it: writing there may replace it). ``-``
    (stdin) is no location. Creates nothing.
    """
    shown = os.fspath(out)
    if not shown:  # Path("") is ".": outdir's own refusal, before "contains the input"
        check_out_dir(out, option)
    for given in inputs:
        name = os.fspath(given)
        if name == "-" or not name:
            continue
        src = Path(name)
        if _contains(src, Path(shown)):
            if _contains(Path(shown), src):
                raise InputError(f"{option} {shown}: is the input {name}; "
                                 "write the output somewhere else")
            raise InputError(f"{option} {shown}: is inside the input directory {name}; "
                             "write the output apart from the inputs")
        if _contains(Path(shown), src):
            raise InputError(f"{option} {shown}: contains the input {name}; "
                             "write the output apart from the inputs")


def check_output_dir(option: str, out: str | os.PathLike[str],
                     inputs: Iterable[str | os.PathLike[str]]) -> None:
    """The whole check of an output directory before any work: apart from every input
    (``check_output_location``), then usable as a directory (``check_out_dir``)."""
    check_output_location(option, out, inputs)
    check_out_dir(out, option)


# --- signals and temporary files --------------------------------------------------------

# Signals that end a run in order (workers killed, temporary files removed) with exit
# status 128 + N, as a shell reports a process killed by signal N.
TERMINATING = (signal.SIGTERM, signal.SIGHUP)


class Terminated(SystemExit):
    """SIGTERM or SIGHUP: exit ``128 + N`` once ``finally`` blocks and pools are done."""


_TERMINATING: dict[str, int] = {"raised": 0}
# How soon a dropped Terminated is raised again (see ``_swallowed``).
_RETRY_SECONDS = 0.01


def _terminate(signum: int, frame: object) -> None:
    if _TERMINATING["raised"]:  # a second signal during the orderly exit: die at once
        signal.signal(signum, signal.SIG_DFL)
        os.kill(os.getpid(), signum)
        return
    _TERMINATING["raised"] = signum
    raise Terminated(128 + signum)


def _raise_again(signum: int, frame: object) -> None:
    raise Terminated(128 + _TERMINATING["raised"])


def _swallowed(unraisable: Any, previous: Callable[[Any], object]) -> None:
    """``sys.unraisablehook``: Python drops exceptions raised where they cannot
    propagate (an at-fork hook, ``__del__``, a weakref callback). If the signal's
    ``Terminated`` was one of them, raise it again a moment later (SIGALRM), from
    wherever the main thread is then: the run still ends in order."""
    if not isinstance(unraisable.exc_value, Terminated):
        previous(unraisable)
        return
    signal.signal(signal.SIGALRM, _raise_again)
    signal.setitimer(signal.ITIMER_REAL, _RETRY_SECONDS)


def exit_on_signals() -> None:
    """Turn SIGTERM and SIGHUP into ``Terminated`` (exit ``128 + N``): ``finally``
    blocks run, worker pools kill their workers, temporary files go. A second signal
    meanwhile kills at once (the workers die with dralab all the same). For the
    command-line entry point only (a library must not take over its host's signals)."""
    installed = False
    for sig in TERMINATING:
        if signal.getsignal(sig) is signal.SIG_DFL:
            signal.signal(sig, _terminate)
            installed = True
    if installed:
        sys.unraisablehook = functools.partial(_swallowed, previous=sys.unraisablehook)


@contextlib.contextmanager
def signals_deferred() -> Iterator[None]:
    """Hold SIGTERM, SIGHUP and SIGINT while outputs are written: a signal meanwhile
    takes effect once they are all written, so they are never left half done."""
    held = {*TERMINATING, signal.SIGINT}
    try:
        previous = signal.pthread_sigmask(signal.SIG_BLOCK, held)
    except (AttributeError, ValueError, OSError):  # not POSIX, or not the main thread
        yield
        return
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)


_PRIVATE_DIRS: list[str] = []


def _remove_private_dirs() -> None:
    while _PRIVATE_DIRS:
        shutil.rmtree(_PRIVATE_DIRS.pop(), ignore_errors=True)


def private_matplotlib_dir() -> None:
    """Point matplotlib's configuration and font cache (``MPLCONFIGDIR``) at a private
    temporary directory removed when dralab exits, so that a run writes nothing under
    ``$HOME``. Kept as it is when the user set ``MPLCONFIGDIR``. Call before matplotlib
    is imported (it reads the variable once)."""
    if os.environ.get("MPLCONFIGDIR") or "matplotlib" in sys.modules:
        return
    try:
        path = tempfile.mkdtemp(prefix="dralab-mpl-")
    except OSError:
        return  # no temporary directory: matplotlib falls back to one of its own
    if not _PRIVATE_DIRS:
        atexit.register(_remove_private_dirs)
    _PRIVATE_DIRS.append(path)
    os.chmod(path, stat.S_IRWXU)
    os.environ["MPLCONFIGDIR"] = path
