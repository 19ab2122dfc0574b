"""--out is checked before a run: a directory that exists or can be made, and writable."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from dralab.report.outdir import OutputError, check_out_dir, writing


def test_new_and_existing_directories_pass_and_nothing_is_left_behind(tmp_path: Path) -> None:
    assert check_out_dir(tmp_path) == tmp_path
    assert check_out_dir(tmp_path / "a" / "b") == tmp_path / "a" / "b"
    assert not (tmp_path / "a").exists()
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(("make", "message"), [
    (lambda d: (d / "f").write_text("x") and d / "f", "--out {}: is not a directory"),
    (lambda d: (d / "f").write_text("x") and d / "f" / "g" / "h",
     "--out {}: is under {d}/f, a file"),
    (lambda d: (d / "l").symlink_to(d / "nowhere") or d / "l",
     "--out {}: is a dangling symbolic link"),
])
def test_refused(make: object, message: str, tmp_path: Path) -> None:
    out = make(tmp_path)  # type: ignore[operator]
    with pytest.raises(OutputError) as info:
        check_out_dir(out)
    assert str(info.value) == message.format(out, d=tmp_path)


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into read-only directories")
def test_read_only_directory(tmp_path: Path) -> None:
    tmp_path.chmod(0o555)
    try:
        with pytest.raises(OutputError, match="cannot write in"):
            check_out_dir(tmp_path / "r")
    finally:
        tmp_path.chmod(0o755)


def test_write_errors_become_one_line(tmp_path: Path) -> None:
    with pytest.raises(OutputError, match=r"^--out x: cannot write the report: No space"), \
            writing("x"):
        raise OSError(28, "No space left on device")
