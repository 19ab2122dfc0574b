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


def test_an_empty_path_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Found by the fuzz suite: `--out ''` wrote the report into the working directory.
    monkeypatch.chdir(tmp_path)
    with pytest.raises(OutputError) as info:
        check_out_dir("")
    assert str(info.value) == "--out '': empty path; name a directory ('.' for this one)"
    assert list(tmp_path.iterdir()) == []


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


def test_keep_previous_moves_only_the_report_and_keeps_one(tmp_path: Path) -> None:
    from dralab.report.outdir import keep_previous

    out = tmp_path / "r"
    assert keep_previous(out) is None                      # no directory yet
    out.mkdir()
    (out / "mine.txt").write_text("a user's file")
    assert keep_previous(out) is None                      # no report in it
    for run in ("1", "2", "3"):
        kept = keep_previous(out)
        (out / "index.html").write_text(run)
        (out / "seeds.csv").write_text(run)
    assert kept == out / "previous"
    assert (out / "previous" / "index.html").read_text() == "2"
    assert sorted(p.name for p in (out / "previous").iterdir()) == ["index.html", "seeds.csv"]
    assert (out / "mine.txt").read_text() == "a user's file"
    (out / "previous").rename(out / "elsewhere")
    (out / "previous").write_text("a file in the way")
    with pytest.raises(OutputError, match="previous is not a directory"):
        keep_previous(out)
