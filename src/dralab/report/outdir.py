"""The report directory (``--out``): checked before a run starts, written after it ends.

A run may take minutes; finding only then that ``--out`` names a file, sits under
a file or cannot be written wastes all of it and ends in a traceback-shaped
error. ``check_out_dir`` answers before any work: the directory exists and
takes a new file, or the nearest existing ancestor is a directory that takes a
new sub-directory. It creates nothing that stays (the probe is removed), so a
run refused later for bad input leaves no empty directory behind.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

from dralab.api.errors import InputError

__all__ = ["PREVIOUS", "REPORT_FILES", "OutputError", "check_out_dir", "keep_previous",
           "writing"]

# What a simulation report directory holds (``writer.write_report``).
REPORT_FILES = ("index.html", "metrics.json", "summary.csv", "samples.csv", "pods.csv",
                "seeds.csv", "timings.json", "pools.csv", "computedomains.txt", "nvlink.txt",
                "nvlink-samples.csv")
PREVIOUS = "previous"


class OutputError(InputError):
    """The report directory cannot be used; one line naming the option and path."""


def _nearest_existing(path: Path) -> Path:
    for candidate in (path, *path.parents):
        if candidate.exists() or candidate.is_symlink():
            return candidate
    return Path(".")


def check_out_dir(path: str | os.PathLike[str], option: str = "--out") -> Path:
    """``path`` as a Path if a report can be written there; OutputError otherwise.

    Refused: an empty path, an existing file (or a dangling link) at ``path``, a
    file among its ancestors, and a directory where a new file or sub-directory
    cannot be created (read-only, no permission). Leaves the file system as it
    found it.
    """
    if not os.fspath(path):
        # Path("") is "." : an unset variable (--out "$DIR") would spread the report
        # among whatever the working directory holds.
        raise OutputError(f"{option} '': empty path; name a directory ('.' for this one)")
    out = Path(path)
    where = f"{option} {os.fspath(path)}"
    try:
        existing = _nearest_existing(out)
    except OSError as exc:  # a name too long, a loop of links: not a usable directory
        raise OutputError(f"{where}: {exc.strerror or exc}") from None
    if not existing.is_dir():
        what = "is not a directory" if existing == out else f"is under {existing}, a file"
        if existing == out and existing.is_symlink() and not existing.exists():
            what = "is a dangling symbolic link"
        raise OutputError(f"{where}: {what}")
    try:
        if existing == out:
            fd, probe = tempfile.mkstemp(dir=out, prefix=".dralab-probe-")
            os.close(fd)
            os.unlink(probe)
        else:
            os.rmdir(tempfile.mkdtemp(dir=existing, prefix=".dralab-probe-"))
    except OSError as exc:
        raise OutputError(f"{where}: cannot write in {existing}: "
                          f"{exc.strerror or exc}") from None
    return out


@contextlib.contextmanager
def writing(path: str | os.PathLike[str], option: str = "--out") -> Iterator[None]:
    """Turn an OSError while writing the report into one OutputError line (the
    directory was checked before the run, but disks fill and permissions change)."""
    try:
        yield
    except OSError as exc:
        raise OutputError(f"{option} {os.fspath(path)}: cannot write the report: "
                          f"{exc.strerror or exc}") from None


def keep_previous(path: str | os.PathLike[str]) -> Path | None:
    """Move the report already in ``path`` (if its ``index.html`` is there) into
    ``path/previous/``, replacing the one kept there before; return where it went, or
    None when there was none. Only the report's own files move (``REPORT_FILES``); the
    rest of the directory is left alone. A user who runs ``simulate`` twice keeps the
    last report to compare with, and only that one, so the directory does not grow.
    """
    out = Path(path)
    if not (out / "index.html").is_file():
        return None
    keep = out / PREVIOUS
    if keep.is_dir():
        for name in REPORT_FILES:
            with contextlib.suppress(FileNotFoundError):
                (keep / name).unlink()
    elif keep.exists() or keep.is_symlink():
        raise OutputError(f"--out {os.fspath(path)}: {keep} is not a directory; the "
                          f"previous report cannot be kept there (move it away)")
    keep.mkdir(exist_ok=True)
    for name in REPORT_FILES:
        if (out / name).is_file():
            os.replace(out / name, keep / name)
    return keep
