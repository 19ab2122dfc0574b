"""The error path never fails: out of memory, out of stack, an exception that cannot be
printed, an environment that cannot be read. Each ends in one ``error:`` line and its
documented exit status, never a traceback."""

from __future__ import annotations

import os
import resource
import signal
import sys
from pathlib import Path
from typing import Any, NoReturn

import pytest

from dralab.api.errors import InputError
from dralab.cli import common
from dralab.cli.common import EXIT_INPUT, EXIT_INTERNAL, OUT_OF_MEMORY, TOO_DEEP, one_line_errors
from dralab.cli.main import main

# Address space the child may add to what it has after fork: far less than the input needs.
HEADROOM = 96 << 20
SAFETY_SECONDS = 300  # a hung child is killed by this alarm: a safety limit, not a budget


def _vm_size() -> int:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmSize:"):
                return int(line.split()[1]) * 1024
    raise AssertionError("no VmSize in /proc/self/status")


def _run_bounded(argv: list[str], tmp_path: Path) -> tuple[int, str]:
    """``dralab ARGV`` through ``main`` in a forked child whose address space is bounded
    to its size at fork plus ``HEADROOM``; its exit status and stderr (file descriptor 2)."""
    err_path, out_path = tmp_path / "stderr", tmp_path / "stdout"
    pid = os.fork()
    if pid == 0:  # the child: never returns
        code = 99
        try:
            signal.signal(signal.SIGALRM, signal.SIG_DFL)
            signal.alarm(SAFETY_SECONDS)
            err = os.open(err_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            out = os.open(out_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            os.dup2(out, 1)
            os.dup2(err, 2)
            os.environ.pop("DRALAB_DEBUG", None)
            sys.argv = ["dralab", *argv]
            _, hard = resource.getrlimit(resource.RLIMIT_AS)
            resource.setrlimit(resource.RLIMIT_AS, (_vm_size() + HEADROOM, hard))
            try:
                main()
                code = 0
            except SystemExit as exc:
                code = exc.code if isinstance(exc.code, int) else 98
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    assert os.WIFEXITED(status), f"the child was killed by signal {os.WTERMSIG(status)}"
    return os.WEXITSTATUS(status), err_path.read_text(errors="replace")


@pytest.fixture(scope="module")
def huge_json(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A JSON list of pods far bigger, once parsed, than ``HEADROOM``."""
    path = tmp_path_factory.mktemp("huge") / "pods.json"
    pod = ('{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p%d", '
           '"labels": {"a": "b", "c": "d"}}, "spec": {"containers": [{"name": "c", '
           '"image": "x", "resources": {"limits": {"cpu": "1"}}}]}}')
    with open(path, "w") as fh:
        fh.write("[")
        fh.write(",".join(pod % n for n in range(300_000)))
        fh.write("]")
    return path


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/self/status")
@pytest.mark.parametrize("verb", ["validate", "schedule"])
def test_out_of_memory_is_one_line_exit_70(tmp_path: Path, huge_json: Path, verb: str) -> None:
    code, err = _run_bounded([verb, "-f", str(huge_json)], tmp_path)
    assert (code, err) == (EXIT_INTERNAL, OUT_OF_MEMORY.decode()), err[-2000:]


def test_the_same_input_with_memory_is_fine(tmp_path: Path) -> None:
    """The child itself is sound: with the input small, the same path succeeds."""
    small = tmp_path / "pod.json"
    small.write_text('{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, '
                     '"spec": {"containers": [{"name": "c", "image": "x"}]}}')
    code, err = _run_bounded(["validate", "-f", str(small)], tmp_path)
    assert code == 0, err


def _invoke(exc: BaseException) -> int:
    """The exit status of a verb raising ``exc`` under ``one_line_errors``."""
    @one_line_errors
    def verb() -> None:
        raise exc

    with pytest.raises(SystemExit) as raised:
        verb()
    code = raised.value.code
    assert isinstance(code, int)
    return code


class _Unprintable(Exception):
    def __str__(self) -> str:
        raise MemoryError


class _UnprintableInput(InputError):
    def __str__(self) -> str:
        raise RuntimeError("broken __str__")


@pytest.mark.parametrize(("exc", "code", "line"), [
    (MemoryError(), EXIT_INTERNAL, OUT_OF_MEMORY.decode()),
    (RecursionError("maximum recursion depth exceeded"), EXIT_INTERNAL, TOO_DEEP.decode()),
    (_Unprintable(), EXIT_INTERNAL,
     "error: internal error (the error message itself could not be formatted)\n"),
    (_UnprintableInput(), EXIT_INPUT,
     "error: invalid input (the message could not be formatted)\n"),
    (ValueError("boom"), EXIT_INTERNAL, "error: internal error: ValueError: boom\n"),
], ids=["memory", "recursion", "unprintable", "unprintable-input", "plain"])
def test_error_path_never_raises(capfd: pytest.CaptureFixture[str], exc: BaseException,
                                 code: int, line: str) -> None:
    got = _invoke(exc)
    out, err = capfd.readouterr()
    assert (got, out, err) == (code, "", line)


class _BrokenEnviron(dict[str, str]):
    def get(self, key: str, default: Any = None) -> Any:
        raise MemoryError


def test_environment_that_cannot_be_read(monkeypatch: pytest.MonkeyPatch,
                                         capfd: pytest.CaptureFixture[str]) -> None:
    """The reported failure: reading DRALAB_DEBUG inside the handler raised again."""
    monkeypatch.setattr(os, "environ", _BrokenEnviron())
    got = _invoke(MemoryError())
    assert (got, capfd.readouterr().err) == (EXIT_INTERNAL, OUT_OF_MEMORY.decode())
    got = _invoke(KeyError("x"))
    assert (got, capfd.readouterr().err) == \
        (EXIT_INTERNAL, "error: internal error: KeyError: 'x'\n")


def test_debug_still_shows_the_traceback(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DRALAB_DEBUG", "1")

    @one_line_errors
    def verb() -> None:
        raise MemoryError

    with pytest.raises(MemoryError):
        verb()


def test_memory_error_outside_a_verb(monkeypatch: pytest.MonkeyPatch,
                                     capfd: pytest.CaptureFixture[str]) -> None:
    """Click's own parsing (before any verb) is covered by ``main`` the same way."""
    def exhausted(*args: object, **kwargs: object) -> NoReturn:
        raise MemoryError

    from dralab.cli import main as main_module

    monkeypatch.setattr(main_module, "cli", exhausted)
    monkeypatch.setattr(common, "exit_on_signals", lambda: None)
    monkeypatch.setattr(main_module, "exit_on_signals", lambda: None)
    with pytest.raises(SystemExit) as raised:
        main_module.main()
    assert raised.value.code == EXIT_INTERNAL
    assert capfd.readouterr().err == OUT_OF_MEMORY.decode()
