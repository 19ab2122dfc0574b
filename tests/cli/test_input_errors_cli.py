"""The one-line error contract at the CLI's edges (issue 16): usage errors, stdin,
`-f` paths that are not plain files, import messages that name the document,
duplicate-key warnings. In-process."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from dralab.cli.main import cli

ROOT = Path(__file__).parent.parent.parent
NODE_POD = ROOT / "tests" / "data" / "kubectl" / "pod-node.yaml"

# Every verb that reads manifests with -f, with the other arguments it needs.
READERS = [
    ["validate"],
    ["import"],
    ["schedule"],
    ["allocate", "--node", "n"],
    ["explain", "pod", "ml/trainer-0"],
]


def run(*args: str, stdin: bytes | str | None = None) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args), input=stdin, prog_name="dralab")
    return result.exit_code, result.stdout, result.stderr


def one_error_line(err: str) -> str:
    lines = err.splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("error: ")
    return lines[0]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["validate"], "error: Missing option '-f' / '--filename'. (see 'dralab validate -h')"),
        (["validate", "-f", "x", "--bogus"], "error: No such option '--bogus'."),
        (["schedule", "-f", "x", "-o", "xml"], "error: Invalid value for '-o' / '--output'"),
        (["allocate", "-f", "x"], "error: Missing option '--node'."),
        (["schedule", "-f", "x", "--seed", "many"], "error: Invalid value for '--seed'"),
        (["validate", "-f", "x", "--feature-gates", "Nope=true"],
         "error: Invalid value for --feature-gates"),
        (["frobnicate"], "error: No such command 'frobnicate'. (see 'dralab -h')"),
        (["explain", "pod"], "error: Missing argument 'TARGET'. (see 'dralab explain pod -h')"),
    ],
)
def test_usage_errors_are_one_line_exit_2(args: list[str], message: str) -> None:
    code, out, err = run(*args)
    assert code == 2 and out == ""
    assert one_error_line(err).startswith(message)


def test_help_and_version_still_work() -> None:
    code, out, _ = run("validate", "-h")
    assert code == 0 and out.startswith("Usage: dralab validate")
    code, out, _ = run("--version")
    assert code == 0 and "dralab" in out


@pytest.mark.parametrize("verb", READERS, ids=lambda v: v[0])
def test_non_utf8_stdin_is_exit_2_for_every_verb(verb: list[str]) -> None:
    code, _, err = run(*verb, "-f", "-", stdin=b"kind: Node\xff\n")
    assert code == 2
    assert one_error_line(err) == "error: -: not a UTF-8 text file (byte 0xff at offset 10)"


@pytest.mark.parametrize("verb", READERS, ids=lambda v: v[0])
def test_fifo_is_refused_not_read(tmp_path: Path, verb: list[str]) -> None:
    fifo = tmp_path / "pipe.yaml"
    os.mkfifo(fifo)  # no writer: opening it would block forever
    code, _, err = run(*verb, "-f", str(fifo))
    assert code == 2
    assert one_error_line(err) == (f"error: {fifo}: not a regular file or directory "
                                   "(a named pipe): refusing to read it")


def test_fifo_inside_a_directory_is_refused(tmp_path: Path) -> None:
    (tmp_path / "ok.yaml").write_text(NODE_POD.read_text())
    os.mkfifo(tmp_path / "z.yaml")
    code, _, err = run("validate", "-f", str(tmp_path))
    assert code == 2 and "z.yaml: not a regular file or directory" in one_error_line(err)


def test_character_device_is_refused() -> None:
    code, _, err = run("validate", "-f", "/dev/zero")  # would never end
    assert code == 2 and "(a character device)" in one_error_line(err)


def test_dangling_symlink_in_a_directory_is_an_error(tmp_path: Path) -> None:
    (tmp_path / "ok.yaml").write_text(NODE_POD.read_text())
    (tmp_path / "gone.yaml").symlink_to(tmp_path / "missing.yaml")
    (tmp_path / "README").symlink_to(tmp_path / "missing")  # not a manifest: ignored
    code, _, err = run("validate", "-f", str(tmp_path))
    assert code == 2
    assert one_error_line(err) == (f"error: {tmp_path / 'gone.yaml'}: dangling symbolic link "
                                   f"to {str(tmp_path / 'missing.yaml')!r}")


@pytest.fixture
def unreadable_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A sub-directory that cannot be listed, made so even for root (by patching scandir)."""
    (tmp_path / "ok.yaml").write_text(NODE_POD.read_text())
    locked = tmp_path / "locked"
    locked.mkdir()
    (locked / "hidden.yaml").write_text(NODE_POD.read_text())
    real_scandir = os.scandir

    def scandir(path: Any = ".") -> Any:
        if Path(path) == locked:
            raise PermissionError(13, "Permission denied", str(path))
        return real_scandir(path)

    monkeypatch.setattr(os, "scandir", scandir)
    yield locked


def test_unreadable_subdirectory_is_an_error(tmp_path: Path, unreadable_dir: Path) -> None:
    code, _, err = run("validate", "-f", str(tmp_path))
    assert code == 2
    assert one_error_line(err) == (f"error: {unreadable_dir}: cannot read directory: "
                                   "Permission denied")


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads every directory")
def test_unreadable_subdirectory_by_permissions(tmp_path: Path) -> None:
    (tmp_path / "ok.yaml").write_text(NODE_POD.read_text())
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0)
    try:
        code, _, err = run("validate", "-f", str(tmp_path))
    finally:
        locked.chmod(0o755)
    assert code == 2 and "cannot read directory" in one_error_line(err)


def test_symlinked_directories_are_not_followed_like_kubectl(tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "node.yaml").write_text(NODE_POD.read_text())
    tree = tmp_path / "tree"
    tree.mkdir()
    (tree / "link").symlink_to(elsewhere, target_is_directory=True)
    code, out, _ = run("validate", "-f", str(tree))
    assert code == 0 and out == "no objects found\n"


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ("apiVersion: resource.k8s.io/v1beta1\nkind: ResourceSlice\nmetadata: {name: s}\n"
         "spec: [x]\n", "error: - ResourceSlice s: spec: Expected `object`, got `array`"),
        ("apiVersion: resource.k8s.io/v1\nkind: ResourceSlice\nmetadata: {name: s}\n"
         "spec: {devices: [{name: d, capacity: {mem: {value: lots}}}]}\n",
         "error: - ResourceSlice s: spec.devices[0].capacity[...].value: "),
        ("apiVersion: v1\nkind: Node\nmetadata: {name: n, namespace: x}\n---\n"
         "apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: ns}\nspec: {containers: 1}\n",
         "error: -:2 Pod ns/p: spec.containers: Expected `array`, got `int`"),
    ],
)
def test_import_errors_name_file_document_and_object(content: str, expected: str) -> None:
    code, out, err = run("import", "-f", "-", stdin=content)
    assert code == 2 and out == ""
    assert one_error_line(err).startswith(expected)


def test_duplicate_keys_warn_in_one_line_and_pass(tmp_path: Path) -> None:
    path = tmp_path / "dup.yaml"
    path.write_text(NODE_POD.read_text().replace("  name: h100-node-01\n",
                                                 "  name: h100-node-01\n  name: h100-node-02\n"))
    code, out, err = run("validate", "-f", str(path))
    assert code == 0 and out.startswith("2 object(s) valid")
    assert err == (f"warning: {path}:1 Node h100-node-02: metadata.name: duplicate field; "
                   "the last value is used\n")
